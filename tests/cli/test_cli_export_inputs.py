"""``export`` of several log directories: one topic-partition found in two of them (two
brokers' replicas, a backup beside its source) is refused before anything is written; its
rows would otherwise be merged into one ``topic=/partition=`` directory, every offset
twice (issue 30's audit: main exported both, exit 0)."""

from __future__ import annotations

import shutil

from kafkalog_testkit import run_cli_inprocess as cli


def test_the_same_partition_in_two_log_dirs_is_refused(tmp_path, fixtures_root):
    a, b = tmp_path / "broker-1", tmp_path / "broker-2"
    for d in (a, b):
        shutil.copytree(fixtures_root / "headers-0", d / "headers-0")
    shutil.copytree(fixtures_root / "multi-0", b / "multi-0")
    out = tmp_path / "out"
    r = cli("export", str(a), str(b), "--to", str(out), "--engine", "local")
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1
    assert "headers-0 is in more than one log directory" in r.stderr
    assert str(a / "headers-0") in r.stderr and str(b / "headers-0") in r.stderr
    assert not out.exists()
    # distinct partitions of two directories are exported together; the same directory
    # named twice is one input
    r = cli("export", str(a), str(b / "multi-0"), "--to", str(out), "--engine", "local",
            "--format", "jsonl")
    assert r.returncode == 0, r.stderr
    assert {p.name for p in out.iterdir() if p.is_dir()} == {"topic=headers", "topic=multi"}
    r = cli("export", str(a), str(a), "--to", str(tmp_path / "o2"), "--engine", "local")
    assert r.returncode == 0, r.stderr
