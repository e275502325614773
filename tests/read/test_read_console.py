"""read: kafka-console-consumer's DefaultMessageFormatter lines and JSON Lines."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from kafkalog_read_testkit import write_partition

from kafkalog_cli.format.builder import build_batch, build_control_batch, build_legacy_message
from kafkalog_cli.ops.read import ConsumerRecord
from kafkalog_cli.render.read import FormatterConfig, format_record

WT = Path(__file__).resolve().parents[2]


def rec(**kw):
    base = dict(topic="t", partition=2, offset=7, timestamp=1234, timestamp_type="CreateTime",
                key=b"k", value=b"v", headers=(), leader_epoch=5)
    base.update(kw)
    return ConsumerRecord(**base)


@pytest.mark.parametrize("props,expected", [
    ([], b"v\n"),
    (["print.key=true"], b"k\tv\n"),
    (["print.timestamp=true", "print.key=true"], b"CreateTime:1234\tk\tv\n"),
    (["print.offset=true", "print.partition=true"], b"Partition:2\tOffset:7\tv\n"),
    (["print.headers=true"], b"NO_HEADERS\tv\n"),
    (["print.epoch=true", "print.delivery=true"], b"Delivery:NOT_PRESENT\tEpoch:5\tv\n"),
    (["print.key=true", "key.separator=|", "line.separator=;"], b"k|v;"),
    (["print.key=TRUE ", "print.value=false"], b"k\n"),
    (["print.value=false"], b""),
])
def test_formatter_columns(props, expected):
    assert format_record(rec(), FormatterConfig.from_properties(props)) == expected


def test_formatter_nulls_headers_and_no_timestamp():
    cfg = FormatterConfig.from_properties(["print.key=true", "print.headers=true",
                                           "print.timestamp=true", "print.epoch=true"])
    r = rec(key=None, value=None, headers=(("a", b"1"), ("b", None)),
            timestamp_type="NoTimestampType", timestamp=-1, leader_epoch=None)
    assert format_record(r, cfg) == b"NO_TIMESTAMP\tEpoch:NOT_PRESENT\ta:1,b:null\tnull\tnull\n"
    cfg = FormatterConfig.from_properties(["print.key=true", "null.literal=<nil>",
                                           "headers.separator=;"])
    assert format_record(rec(key=None), cfg) == b"<nil>\tv\n"


def test_json_encoding():
    o = rec(key=b"\xff\x00", headers=(("h", b"x"),)).to_dict()
    assert o["key"] == base64.b64encode(b"\xff\x00").decode() and o["keyEncoding"] == "base64"
    assert o["value"] == "v" and "valueEncoding" not in o
    assert o["headers"] == [{"key": "h", "value": "x"}]
    assert (o["offset"], o["timestamp"], o["timestampType"]) == (7, 1234, "CreateTime")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "kafkalog_cli", *map(str, args)], cwd=WT,
                          capture_output=True)


def test_cli_console_and_json(tmp_path):
    ld = tmp_path / "logs"
    batches = [
        build_batch([(1000, b"a", b"one", ()), (1001, None, b"two", (("h", b"x"),))],
                    base_offset=0, partition_leader_epoch=1),
        build_control_batch(1, base_offset=2, timestamp=1002, producer_id=9, producer_epoch=0),
        build_batch([(1003, b"c", b"\xfe\xff", ())], base_offset=3),
    ]
    write_partition(ld / "topic-0", batches)
    write_partition(ld / "topic-1", [build_batch([(5, b"z", b"other", ())])])
    r = _cli("read", ld, "--topic", "topic", "--partition", "0", "--property",
             "print.key=true", "--property", "print.offset=true", "--property",
             "print.timestamp=true")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (b"CreateTime:1000\tOffset:0\ta\tone\n"
                        b"CreateTime:1001\tOffset:1\tnull\ttwo\n"
                        b"CreateTime:1003\tOffset:3\tc\t\xfe\xff\n")
    assert b"Processed a total of 3 messages" in r.stderr
    r = _cli("read", ld / "topic-0", "-o", "json", "--offset", "1", "--max-records", "5")
    lines = [json.loads(x) for x in r.stdout.decode().splitlines()]
    assert [x["offset"] for x in lines] == [1, 3]
    assert lines[0]["headers"] == [{"key": "h", "value": "x"}] and lines[0]["key"] is None
    assert lines[0]["leaderEpoch"] == 1 and lines[1]["valueEncoding"] == "base64"
    r = _cli("read", ld / "topic-0", "--timestamp", "1970-01-01T00:00:01.002Z")
    assert r.stdout == b"\xfe\xff\n"  # the marker at 1002 is found, then skipped
    r = _cli("read", ld, "--topic", "topic")
    assert r.returncode == 2 and b"--partition" in r.stderr
    r = _cli("read", ld / "topic-0", "--offset", "9")
    assert r.returncode == 2 and b"out of range" in r.stderr
    r = _cli("read", ld / "topic-0", "--offset", "1", "--timestamp", "5")
    assert r.returncode == 2


def test_cli_legacy_messages(tmp_path):
    d = tmp_path / "old-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(
        build_legacy_message(0, b"k0", b"v0", magic=0)
        + build_legacy_message(1, None, b"v1", magic=1, timestamp=77))
    r = _cli("read", d, "--property", "print.timestamp=true", "--property", "print.key=true")
    assert r.stdout == b"NO_TIMESTAMP\tk0\tv0\nCreateTime:77\tnull\tv1\n"


def test_corrupt_records_name_the_file_and_position(tmp_path):
    """A batch whose records do not match its count (CRC valid): read stops with one line
    naming the segment file and the batch's byte position (exit 1, damaged data, as for a
    CRC error)."""
    from kafkalog_testkit import raw_batch, raw_record

    d = tmp_path / "cnt-0"
    d.mkdir()
    good = raw_batch(0, [raw_record(0, 0, b"k", b"v")])
    bad = raw_batch(1, [raw_record(0, 0, b"k", b"v")], count=2, last_delta=1)
    log = d / "00000000000000000000.log"
    log.write_bytes(good + bad)
    for extra in ((), ("--isolation-level", "read_committed"), ("-o", "json")):
        r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "read", str(d), *extra],
                           cwd=WT, capture_output=True, text=True)
        assert r.returncode == 1
        assert r.stderr.splitlines() == [
            f"error: {log} at byte {len(good)}: Incorrect declared batch size, premature EOF "
            "reached"], r.stderr
