"""``recover --undo`` does not depend on the directory recovery (or undo) ran in: the
manifest stores absolute paths, old manifests with relative paths are placed by the
session's location, and a partition directory that is not there is a conflict, never
"already in place"."""

from __future__ import annotations

import json
import os
from pathlib import Path

from recovery_helpers import standard_partition, tree_bytes
from typer.testing import CliRunner

from kafkalog_cli.cli.app import app
from kafkalog_cli.recovery import recover, undo

runner = CliRunner()


def _damaged_log_dir(tmp_path: Path) -> Path:
    """``<tmp>/data/topic-0`` with a garbage tail (a cut, rewritten indexes, new derived
    files) and a recovery-point checkpoint for the log dir to rewrite."""
    log_dir = tmp_path / "data"
    log_dir.mkdir()
    pdir = standard_partition(log_dir)
    log = sorted(pdir.glob("*.log"))[-1]
    with open(log, "ab") as f:
        f.write(b"\x00" * 100)
    (log_dir / "recovery-point-offset-checkpoint").write_text("0\n1\nother 0 5\n")
    (pdir / "00000000000000000150.txnindex").write_bytes(b"")
    return pdir


def _recover_relative(tmp_path: Path, monkeypatch, **kw) -> Path:
    monkeypatch.chdir(tmp_path)
    res = recover([Path("data/topic-0")], truncate=True, **kw)
    assert res.partitions[0].applied
    return Path(res.partitions[0].quarantine)


def _entry_paths(session: Path) -> list[str]:
    m = json.loads((session / "manifest.json").read_text())
    return [e[k] for e in m["entries"] for k in ("original", "quarantine", "renamed_to")
            if e.get(k)]


def test_manifest_paths_are_absolute(tmp_path, monkeypatch):
    _damaged_log_dir(tmp_path)
    session = _recover_relative(tmp_path, monkeypatch)
    paths = _entry_paths(session)
    assert paths and all(os.path.isabs(p) for p in paths)
    actions = {e["action"] for e in
               json.loads((session / "manifest.json").read_text())["entries"]}
    assert {"cut", "rewrite", "checkpoint"} <= actions


def test_undo_from_another_directory_restores_the_original_bytes(tmp_path, monkeypatch):
    _damaged_log_dir(tmp_path)
    before = tree_bytes(tmp_path / "data")
    session = _recover_relative(tmp_path, monkeypatch)
    assert tree_bytes(tmp_path / "data") != before
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    r = runner.invoke(app, ["recover", "--undo", str(session), "-o", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["ok"] and not out["already"] and out["restored"]
    assert tree_bytes(tmp_path / "data") == before


def test_undo_of_a_manifest_with_relative_paths(tmp_path, monkeypatch):
    """Manifests written before the fix hold paths relative to the directory recovery
    ran in; undo places them by the session's location, from any directory."""
    _damaged_log_dir(tmp_path)
    before = tree_bytes(tmp_path / "data")
    session = _recover_relative(tmp_path, monkeypatch)
    m = json.loads((session / "manifest.json").read_text())
    for e in m["entries"]:
        for k in ("original", "quarantine", "renamed_to"):
            if e.get(k):
                e[k] = os.path.relpath(e[k], tmp_path)
    (session / "manifest.json").write_text(json.dumps(m))
    assert not any(os.path.isabs(p) for p in _entry_paths(session))
    monkeypatch.chdir("/")
    res = undo(session)
    assert res.ok and not res.already, res.to_dict()
    assert tree_bytes(tmp_path / "data") == before


def test_undo_with_the_partition_dir_gone_is_a_conflict_and_can_be_retried(
        tmp_path, monkeypatch):
    _damaged_log_dir(tmp_path)
    before = tree_bytes(tmp_path / "data")
    session = _recover_relative(tmp_path, monkeypatch, quarantine=Path("q"))
    assert session.is_relative_to(tmp_path / "q")
    os.rename(tmp_path / "data", tmp_path / "moved")
    res = undo(session)
    assert not res.ok and not res.restored
    assert all("does not exist" in c for c in res.conflicts)
    # nothing was journalled as undone: a later undo still applies every entry
    m = json.loads((session / "manifest.json").read_text())
    assert m["state"] != "undone" and not any(e.get("undone") for e in m["entries"])
    os.rename(tmp_path / "moved", tmp_path / "data")
    res = undo(session)
    assert res.ok and not res.already, res.to_dict()
    assert tree_bytes(tmp_path / "data") == before
