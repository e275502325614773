"""The operator's habits: kafka-dump-log.sh's --files, one rule for finding partitions
under a path in every command, read refusing properties it does not support, -h, and the
exit statuses decided in one place."""

from __future__ import annotations

import json
import shutil

import pytest
from kafkalog_testkit import run_cli_inprocess as cli

SEG0 = f"{0:020d}"


def test_dump_segment_files_as_kafka_dump_log_takes_them(fixtures_root):
    p = fixtures_root / "plain-0"
    log, idx, tix = (str(p / f"{SEG0}{s}") for s in (".log", ".index", ".timeindex"))
    want = cli("dump-segment", log, idx, tix, "-o", "kafka")
    assert want.returncode == 0 and want.stdout.count("Dumping ") == 3
    for args in (["--files", f"{log},{idx},{tix}"], ["--files", log, "--files", f"{idx},{tix}"],
                 [log, "--files", f"{idx},{tix}"]):
        r = cli("dump-segment", *args, "-o", "kafka")
        assert (r.returncode, r.stdout) == (0, want.stdout), args
    r = cli("dump-segment")
    assert r.returncode == 2 and "--files" in r.stderr


def _two_brokers(tmp_path, fixtures_root):
    """A directory holding two log directories (as a backup of two brokers)."""
    root = tmp_path / "backups"
    for broker, parts in (("b1/kafka-logs", ["plain-0", "multi-0"]),
                          ("b2/kafka-logs", ["headers-0", "corrupt-index-order-0"])):
        d = root / broker
        d.mkdir(parents=True)
        shutil.copy(fixtures_root / "meta.properties", d)
        for p in parts:
            shutil.copytree(fixtures_root / p, d / p)
    return root


def test_every_command_finds_partitions_under_a_directory_of_log_dirs(tmp_path,
                                                                     fixtures_root):
    root = _two_brokers(tmp_path, fixtures_root)
    want = {"plain-0", "multi-0", "headers-0", "corrupt-index-order-0"}
    r = cli("describe", str(root), "-o", "json")
    got = {p["partitionDir"].split("/")[-1] for d in json.loads(r.stdout)["logDirs"]
           for t in d["topics"] for p in t["partitions"]}
    assert got == want
    r = cli("verify-index", str(root), "-o", "json")
    assert r.returncode == 1  # corrupt-index-order-0
    assert {s["file"].split("/")[-2] for s in json.loads(r.stdout)["segments"]} == want
    r = cli("audit", str(root), "--engine", "local", "-o", "json")
    assert r.returncode == 1
    assert {p["partitionDir"].split("/")[-1] for p in json.loads(r.stdout)["partitions"]} \
        == want
    r = cli("recover", str(root), "-o", "json")
    assert {p["partitionDir"].split("/")[-1] for p in json.loads(r.stdout)["partitions"]} \
        == want
    r = cli("dump-segment", str(root), "-o", "json")
    assert {e["file"].split("/")[-2] for e in map(json.loads, r.stdout.splitlines())
            if e["type"] == "file"} == want


def test_a_directory_without_kafka_data_is_refused_by_every_command(tmp_path):
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    for cmd in ("describe", "verify-index", "recover", "dump-segment"):
        r = cli(cmd, str(tmp_path / "empty"))
        assert r.returncode == 3, (cmd, r.stderr)
        assert str(tmp_path / "empty") in r.stderr


@pytest.mark.parametrize("prop,message", [
    ("print.keys=true", "unknown --property 'print.keys'"),
    ("key.deserializer=org.apache.kafka.common.serialization.LongDeserializer",
     "--property key.deserializer is not supported"),
])
def test_read_refuses_properties_it_does_not_support(fixtures_root, prop, message):
    r = cli("read", str(fixtures_root / "plain-0"), "--property", prop)
    assert r.returncode == 2 and message in r.stderr and r.stdout == ""


@pytest.mark.parametrize("command", ["dump-segment", "read", "produce", "serve", "describe"])
def test_h_is_help(command):
    r = cli(command, "-h")
    assert r.returncode == 0 and "Usage:" in r.stdout
    assert r.stdout == cli(command, "--help").stdout


def test_exit_statuses_come_from_one_mapping():
    from kafkalog_cli.cli.exit_codes import for_error, for_result
    from kafkalog_cli.errors import (
        CorruptRecordError,
        FencedLeaderEpochError,
        IllegalStateError,
        InputError,
        InvalidArgumentError,
        LogDirLockedError,
        ProduceError,
        RecordTooLargeError,
        RejectedRecordError,
        UnreadableError,
    )
    from kafkalog_cli.ops.produce import ProduceResult

    assert for_error(InvalidArgumentError("x")) == 2
    # unreadable or not-Kafka input 3; damaged Kafka data 1, whichever command meets it
    assert for_error(UnreadableError("x")) == 3 and for_error(CorruptRecordError("x")) == 1
    assert for_error(OSError("x")) == 3 and for_error(KeyboardInterrupt()) == 130
    for refused in (InputError("x", source="f"), LogDirLockedError("d"),
                    FencedLeaderEpochError("x"), RecordTooLargeError("x"),
                    RejectedRecordError("x"), IllegalStateError("x")):
        assert for_error(refused) == 1, refused
        assert for_error(ProduceError(refused, ProduceResult("d", "t"))) == 1
    assert for_error(ProduceError(UnreadableError("x"), ProduceResult("d", "t"))) == 3

    class R:
        ok, unreadable = True, False

    assert for_result(R()) == 0
    R.ok = False
    assert for_result(R()) == 1
    R.unreadable = True
    assert for_result(R()) == 3
