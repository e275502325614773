"""A corrupt ``leader-epoch-checkpoint``, ``partition.metadata``, offset checkpoint,
``meta.properties`` or ``quorum-state`` (issue 16, case 6): read-only commands report it
naming the file and line, without a traceback; recover rebuilds it (and undo puts the
old bytes back); produce refuses only the partition concerned.

The files are first written by ``produce`` (the engine that writes them as the broker
does); which bytes are corrupt is taken from Kafka's readers (see
tests/storage/test_storage_dir_files.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kafkalog_testkit import run_cli, run_cli_inprocess

from kafkalog_cli.storage.checkpoints import read_leader_epoch_checkpoint, read_offset_checkpoint
from kafkalog_cli.storage.dir_files import (
    log_dir_file_problems,
    partition_file_problems,
    read_partition_metadata,
)

BAD_EPOCHS = b"0\n1\n\xff\xfe 0\n"           # not UTF-8, line 3
BAD_METADATA = b"version: \ntopic_id: x\n"   # an empty version, line 1


def _log_dir(tmp_path: Path) -> Path:
    """``t-0`` and ``t-1`` with 3 records each, written by produce."""
    log_dir = tmp_path / "logs"
    data = tmp_path / "in.txt"
    data.write_text("a\nb\nc\n")
    for p in ("0", "1"):
        r = run_cli_inprocess("produce", "--log-dir", str(log_dir), "--topic", "t",
                              "--partition", p, "--leader-epoch", "3", str(data))
        assert r.returncode == 0, r.stderr
    return log_dir


def _corrupt(log_dir: Path) -> dict[str, bytes]:
    t0 = log_dir / "t-0"
    good = {"epochs": (t0 / "leader-epoch-checkpoint").read_bytes(),
            "metadata": (t0 / "partition.metadata").read_bytes()}
    (t0 / "leader-epoch-checkpoint").write_bytes(BAD_EPOCHS)
    (t0 / "partition.metadata").write_bytes(BAD_METADATA)
    return good


def _no_traceback(r) -> None:
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout


def test_describe_names_the_files_and_lines(tmp_path):
    log_dir = _log_dir(tmp_path)
    _corrupt(log_dir)
    (log_dir / "log-start-offset-checkpoint").write_bytes(b"0\n1\nt 0 x\n")
    r = run_cli_inprocess("describe", str(log_dir), "-o", "json")
    _no_traceback(r)
    assert r.returncode == 1
    (d,) = json.loads(r.stdout)["logDirs"]
    assert d["errors"] == [f"{log_dir}/log-start-offset-checkpoint line 3: Malformed line in "
                           "checkpoint file: 't 0 x' ('x' is not a long)"]
    parts = {p["partition"]: p for p in d["topics"][0]["partitions"]}
    errors0 = parts[0]["errors"]
    assert f"{log_dir}/t-0/leader-epoch-checkpoint line 3: not UTF-8 text (byte 0xff at " \
        "byte 4)" in errors0
    assert any(e.startswith(f"{log_dir}/t-0/partition.metadata line 1: ") for e in errors0)
    # the sibling's own files are fine (only the log dir's checkpoint is listed)
    assert parts[1]["errors"] == d["errors"] and parts[1]["leaderEpochs"] == \
        [{"epoch": 3, "startOffset": 0}]
    r = run_cli_inprocess("describe", str(log_dir))
    _no_traceback(r)
    assert r.returncode == 1 and "leader-epoch-checkpoint line 3" in r.stdout


def test_describe_checks_meta_properties_and_quorum_state(tmp_path):
    log_dir = _log_dir(tmp_path)
    (log_dir / "meta.properties").write_text("version=1\ncluster.id=c\nnode.id=x\n")
    md = log_dir / "__cluster_metadata-0"
    md.mkdir()
    (md / "quorum-state").write_bytes(b'{"data_version": 9}')
    r = run_cli_inprocess("describe", str(log_dir), "-o", "json")
    _no_traceback(r)
    assert r.returncode == 1
    d = json.loads(r.stdout)["logDirs"][0]
    assert d["errors"] == [f"{log_dir}/meta.properties line 3: Unable to read node.id as a "
                           "base-10 number."]
    md_part = next(p for t in d["topics"] for p in t["partitions"] if t["topic"] ==
                   "__cluster_metadata")
    assert any(e.startswith(f"{md}/quorum-state line 1: data_version (9)")
               for e in md_part["errors"])


def test_audit_reports_them_as_problems(tmp_path):
    log_dir = _log_dir(tmp_path)
    _corrupt(log_dir)
    (log_dir / "replication-offset-checkpoint").write_bytes(b"0\n3\nt 0 3\n")
    r = run_cli_inprocess("audit", str(log_dir), "-o", "json", "--engine", "local")
    _no_traceback(r)
    assert r.returncode == 1
    rows = {p["partition"]: p for p in json.loads(r.stdout)["partitions"]}
    hw = (f"{log_dir}/replication-offset-checkpoint: Expected [3] entries in checkpoint "
          "file, but found only [1]")
    assert rows[1]["problems"] == [hw]
    assert rows[0]["problems"][0] == hw and len(rows[0]["problems"]) == 3
    assert "t-0/leader-epoch-checkpoint line 3" in rows[0]["problems"][1]
    assert "t-0/partition.metadata line 1" in rows[0]["problems"][2]


def test_read_says_it_could_not_use_the_log_start_offset_checkpoint(tmp_path):
    log_dir = _log_dir(tmp_path)
    _corrupt(log_dir)
    (log_dir / "log-start-offset-checkpoint").write_bytes(b"0\n1\nt 0 \xff\n")
    r = run_cli_inprocess("read", str(log_dir), "--topic", "t", "--partition", "0")
    _no_traceback(r)
    # every record read (the broker resets the log start to the first segment's base)
    assert r.stdout.split() == ["a", "b", "c"]
    assert r.returncode == 1
    assert f"{log_dir}/log-start-offset-checkpoint line 3: not UTF-8" in r.stderr


@pytest.mark.parametrize("command", [
    ["verify-index", "{p}"], ["dump-segment", "{p}"], ["read", "{p}", "-o", "json"]])
def test_commands_that_do_not_read_them_are_not_disturbed(tmp_path, command):
    """verify-index and dump-segment read segment files only (DumpLogSegments skips
    other files), read the log start checkpoint only: their verdict is unchanged."""
    log_dir = _log_dir(tmp_path)
    args = [a.format(p=log_dir / "t-0") for a in command]
    clean = run_cli_inprocess(*args)
    _corrupt(log_dir)
    r = run_cli_inprocess(*args)
    _no_traceback(r)
    assert (r.returncode, r.stdout) == (clean.returncode, clean.stdout)


def test_export_warns_and_goes_on(tmp_path):
    log_dir = _log_dir(tmp_path)
    _corrupt(log_dir)
    (log_dir / "log-start-offset-checkpoint").write_bytes(b"0\n1\nt 0 x\n")
    out = tmp_path / "out"
    # a subprocess: the warning goes through logging, which pytest captures in-process
    r = run_cli("export", str(log_dir), "--to", str(out), "--format", "jsonl",
                          "--engine", "local", "--starting-offsets",
                          '{"t": {"0": 1, "1": 0}}', "-o", "json")
    _no_traceback(r)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["records"] == 5
    assert f"{log_dir}/log-start-offset-checkpoint line 3" in r.stderr


def test_recover_rebuilds_them_and_undo_restores_the_old_bytes(tmp_path):
    log_dir = _log_dir(tmp_path)
    good = _corrupt(log_dir)
    (log_dir / "log-start-offset-checkpoint").write_bytes(b"0\n1\nt 0 x\n")
    corrupt_lso = (log_dir / "log-start-offset-checkpoint").read_bytes()
    t0 = log_dir / "t-0"
    dry = run_cli_inprocess("recover", str(log_dir), "-o", "json")
    _no_traceback(dry)
    assert dry.returncode == 1
    r = run_cli_inprocess("recover", str(log_dir), "--truncate", "-o", "json")
    _no_traceback(r)
    assert r.returncode == 0, r.stderr
    # the epochs the batches carry (3, from offset 0), the id of the topic's partition 1
    assert read_leader_epoch_checkpoint(t0 / "leader-epoch-checkpoint") == [(3, 0)]
    assert (t0 / "leader-epoch-checkpoint").read_bytes() == good["epochs"]
    assert (t0 / "partition.metadata").read_bytes() == good["metadata"]
    assert read_partition_metadata(t0) == read_partition_metadata(log_dir / "t-1")
    # the log start offsets the broker resets to: the first segments' base offsets
    assert read_offset_checkpoint(log_dir / "log-start-offset-checkpoint") is not None
    assert partition_file_problems(t0) == [] and log_dir_file_problems(log_dir) == []
    res = json.loads(r.stdout)
    for p in res["partitions"]:
        u = run_cli_inprocess("recover", "--undo", p["quarantine"])
        assert u.returncode == 0, u.stdout + u.stderr
    assert (t0 / "leader-epoch-checkpoint").read_bytes() == BAD_EPOCHS
    assert (t0 / "partition.metadata").read_bytes() == BAD_METADATA
    # once every partition is undone, the log dir's checkpoint is the old bytes again
    assert (log_dir / "log-start-offset-checkpoint").read_bytes() == corrupt_lso


def test_recover_removes_a_partition_metadata_no_sibling_can_rebuild(tmp_path):
    log_dir = _log_dir(tmp_path)
    _corrupt(log_dir)
    (log_dir / "t-1" / "partition.metadata").unlink()
    r = run_cli_inprocess("recover", str(log_dir / "t-0"), "--truncate", "-o", "json")
    assert r.returncode == 0, r.stderr
    assert not (log_dir / "t-0" / "partition.metadata").exists()
    notes = json.loads(r.stdout)["partitions"][0]["notes"]
    assert any("partition.metadata line 1" in n and "removed" in n for n in notes)


def test_produce_refuses_only_the_partition_concerned(tmp_path):
    log_dir = _log_dir(tmp_path)
    _corrupt(log_dir)
    (log_dir / "recovery-point-offset-checkpoint").write_bytes(b"0\n5\n")
    before = {p: p.read_bytes() for p in (log_dir / "t-0").iterdir()}
    data = tmp_path / "more.txt"
    data.write_text("d\n")
    # subprocesses: the warning goes through logging, which pytest captures in-process
    r = run_cli("produce", "--log-dir", str(log_dir), "--topic", "t", "--partition", "0",
                str(data))
    _no_traceback(r)
    assert r.returncode == 1  # a damaged Kafka file refuses the run (exit_codes)
    assert f"error: {log_dir}/t-0/partition.metadata line 1: " in r.stderr
    # one line about the log dir's checkpoint, which the broker would reset and rewrite
    assert "recovery-point-offset-checkpoint: Expected [5] entries" in r.stderr
    assert {p: p.read_bytes() for p in (log_dir / "t-0").iterdir()} == before
    r = run_cli("produce", "--log-dir", str(log_dir), "--topic", "t", "--partition", "1",
                str(data), "-o", "json")
    _no_traceback(r)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["partitions"][0]["logEndOffset"] == 4
    assert read_offset_checkpoint(log_dir / "recovery-point-offset-checkpoint") is not None
