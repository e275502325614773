"""The committed fixtures are exactly what fixtures/generate.py writes (never stale)."""

from __future__ import annotations

import subprocess
import sys


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_regenerating_gives_identical_files(tmp_path, repo_root, fixtures_root):
    out = tmp_path / "logs"
    subprocess.run([sys.executable, str(repo_root / "fixtures" / "generate.py"), "--out",
                    str(out)], check=True, cwd=tmp_path)
    fresh, committed = _files(out), _files(fixtures_root)
    assert sorted(fresh) == sorted(committed)
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert not stale, f"run python fixtures/generate.py: stale {stale}"


def test_generate_is_rerunnable(tmp_path, repo_root):
    out = tmp_path / "logs"
    for _ in range(2):
        subprocess.run([sys.executable, str(repo_root / "fixtures" / "generate.py"), "--out",
                        str(out)], check=True)
    assert (out / "meta.properties").is_file()
    assert (out / "multi-0" / "00000000000000000088.log").is_file()
