"""man/ is what scripts/gen_man.py writes from the current CLI (fails when stale)."""

from __future__ import annotations

import subprocess
import sys


def test_man_pages_are_fresh(tmp_path, repo_root):
    subprocess.run([sys.executable, str(repo_root / "scripts" / "gen_man.py"), "--out",
                    str(tmp_path)], check=True, capture_output=True)
    fresh = {p.name: p.read_text() for p in tmp_path.glob("*.1")}
    committed = {p.name: p.read_text() for p in (repo_root / "man").glob("*.1")}
    assert sorted(fresh) == sorted(committed), "run python scripts/gen_man.py"
    stale = [n for n in fresh if fresh[n] != committed[n]]
    assert not stale, f"run python scripts/gen_man.py: stale {stale}"


def test_one_page_per_command(repo_root):
    import typer.main

    from kafkalog_cli.cli.app import app

    names = {f"kafkalog-{n}.1" for n in typer.main.get_command(app).commands}
    assert {"kafkalog-dump-segment.1", "kafkalog-verify-index.1"} <= names
    pages = {p.name for p in (repo_root / "man").glob("*.1")}
    assert pages == names | {"kafkalog.1"}
    text = (repo_root / "man" / "kafkalog-dump-segment.1").read_text()
    for opt in ("deep\\-iteration", "print\\-data\\-log", "max\\-bytes", "verify\\-index\\-only",
                "start\\-offset", "data\\-encoding"):
        assert opt in text
