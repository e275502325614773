"""``kafkalog recover`` on the command line: exit codes, JSON == the library's result,
--undo, --quarantine, --no-quarantine; and the fast scan agrees with
``storage.segment.rebuild_indexes``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from recovery_helpers import legacy_partition, quarantined_bytes, standard_partition, tree_bytes
from typer.testing import CliRunner

from kafkalog_cli.cli.app import app
from kafkalog_cli.recovery import recover, scan_log
from kafkalog_cli.storage.segment import rebuild_indexes

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, ["recover", *map(str, args)])


def _damage(pdir: Path) -> None:
    log = sorted(pdir.glob("*.log"))[-1]
    with open(log, "ab") as f:
        f.write(b"\x00" * 100)


def test_dry_run_json_is_the_library_result_and_exits_1(tmp_path):
    pdir = standard_partition(tmp_path)
    _damage(pdir)
    before = tree_bytes(tmp_path)
    r = _run(pdir, "-o", "json")
    assert r.exit_code == 1, r.output
    assert json.loads(r.output) == recover([pdir]).to_dict()
    assert tree_bytes(tmp_path) == before  # a dry run changes nothing
    assert not (pdir / ".kafkalog-quarantine").exists()


def test_truncate_then_noop_then_undo(tmp_path):
    pdir = standard_partition(tmp_path)
    _damage(pdir)
    before = tree_bytes(tmp_path)
    r = _run(pdir, "--truncate", "-o", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    session = out["partitions"][0]["quarantine"]
    assert out["summary"]["invalidBytes"] == 100
    r = _run(pdir, "-o", "json")
    assert r.exit_code == 0 and not json.loads(r.output)["workNeeded"]
    r = _run(pdir, "-o", "text")
    assert r.exit_code == 0 and "0 of 1 partition(s) need recovery" in r.output
    r = _run("--undo", session, "-o", "json")
    assert r.exit_code == 0 and json.loads(r.output)["ok"]
    assert json.loads(r.output)["quarantineRemoved"]
    assert tree_bytes(tmp_path) == before
    # nothing left behind: the directory is as it was before the recovery, without the
    # session, the emptied .kafkalog-quarantine or the .lock (a broker deletes it too)
    assert tree_bytes(tmp_path, skip_quarantine=False) == before
    assert not (tmp_path / ".lock").exists()
    assert not (pdir / ".kafkalog-quarantine").exists()
    r = _run("--undo", session)
    from kafkalog_cli.errors import InvalidArgumentError

    assert isinstance(r.exception, InvalidArgumentError)  # exit 2: no session there now
    assert "no manifest.json" in str(r.exception)


def test_text_output_on_a_log_dir(tmp_path):
    standard_partition(tmp_path, name="a-0")
    legacy_partition(tmp_path, name="b-1")
    _damage(tmp_path / "b-1")
    r = _run(tmp_path, "-o", "text")
    assert r.exit_code == 1
    assert "a-0" in r.output and "b-1" in r.output and "would truncate" in r.output


def test_quarantine_elsewhere_and_no_quarantine(tmp_path):
    pdir = standard_partition(tmp_path / "logs")
    _damage(pdir)
    q = tmp_path / "q"
    r = _run(pdir, "--truncate", "--quarantine", q, "-o", "json")
    assert r.exit_code == 0, r.output
    assert not (pdir / ".kafkalog-quarantine").exists()
    cuts = list(q.rglob("*.cut-*"))
    # the cut is 100 zero bytes: the copy keeps none of them, the manifest its range
    assert len(cuts) == 1 and cuts[0].read_bytes() == b""
    (entry,) = [e for m in q.rglob("manifest.json") for e in json.loads(m.read_text())["entries"]
                if e["action"] == "cut"]
    assert quarantined_bytes(entry) == b"\x00" * 100
    pdir2 = standard_partition(tmp_path / "logs2")
    _damage(pdir2)
    r = _run(pdir2, "--truncate", "--no-quarantine", "-o", "json")
    assert r.exit_code == 0
    assert not list((pdir2 / ".kafkalog-quarantine").rglob("*.cut-*"))


def test_usage_and_unreadable(tmp_path):
    assert _run().exit_code == 2
    assert _run(tmp_path, "--quarantine", tmp_path, "--no-quarantine").exit_code == 2


def test_cli_exit_code_for_missing_path(tmp_path):
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, "-m", "kafkalog_cli", "recover", str(tmp_path / "x")],
                       cwd=repo, env=dict(os.environ, PYTHONPATH=str(repo)),
                       capture_output=True, text=True)
    assert p.returncode == 3 and "error:" in p.stderr


@pytest.mark.parametrize("name", ["00000000000000000060.index",
                                  "00000000000000000150.timeindex",
                                  "leader-epoch-checkpoint"])
def test_a_directory_where_a_segment_file_belongs_is_unreadable_input(tmp_path, name):
    """Refused at plan time, before any change (it used to be planned as "missing", and
    --truncate failed half-way with "Is a directory" after opening a quarantine)."""
    import subprocess
    import sys

    first = standard_partition(tmp_path, name="a-0")
    _damage(first)
    pdir = standard_partition(tmp_path, name="b-0")
    _damage(pdir)
    target = pdir / name
    if target.exists():
        target.unlink()
    target.mkdir()
    before = tree_bytes(tmp_path, skip_quarantine=False)
    repo = Path(__file__).resolve().parents[2]
    for extra in ([], ["--truncate"]):
        p = subprocess.run([sys.executable, "-m", "kafkalog_cli", "recover", str(tmp_path),
                            *extra], cwd=repo, env=dict(os.environ, PYTHONPATH=str(repo)),
                           capture_output=True, text=True)
        assert p.returncode == 3, p.stderr
        assert p.stderr.strip() == f"error: {target}: is a directory, not a regular file" \
            and not p.stdout
    assert tree_bytes(tmp_path, skip_quarantine=False) == before
    assert not list(tmp_path.rglob(".kafkalog-quarantine"))


@pytest.mark.parametrize("interval", [1, 100, 4096])
def test_fast_scan_agrees_with_rebuild_indexes(tmp_path, interval):
    for pdir in (standard_partition(tmp_path / "s"), legacy_partition(tmp_path / "l")):
        for log in sorted(pdir.glob("*.log")):
            data = log.read_bytes() + b"\x00" * 30
            base = int(log.name[:20])
            a = scan_log(data, base, interval)
            b = rebuild_indexes(memoryview(data), base, interval)
            assert a.valid_bytes == b.valid_bytes and a.batches == b.batches
            assert a.offset_index == b.offset_index_bytes(base)
            assert a.time_index == b.time_index_bytes(base)
            assert a.last_offset == b.last_offset
            assert a.epochs == b.epochs
