"""``--skip-corrupt`` on read, dump-segment and export, and one exit status per kind of
finding across the commands (cli/exit_codes.py). Expected records come from
kafka-python's reader run over the undamaged file (an independent oracle)."""

from __future__ import annotations

import json
import shutil
import struct

import pytest
from kafkalog_testkit import kafka_python_batches
from kafkalog_testkit import run_cli_inprocess as cli

SEG0 = "00000000000000000000"


def _kafka_python_batches(data: bytes) -> list[tuple[int, int, list]]:
    """(position, size, [(offset, key, value)]) of each batch, by kafka-python."""
    return [(pos, size, recs) for pos, _, size, recs in kafka_python_batches(data)]


@pytest.fixture
def damaged(tmp_path, fixtures_root):
    """multi-0's first segment with two kinds of damage: batch 2's CRC fails (a record
    byte flipped), batch 6's size field runs past the end of the file; and 5000 random
    bytes between batches 10 and 11. Returns (partition dir, expected records, skipped
    ranges as (position, size) in the damaged file)."""
    import random

    src = (fixtures_root / "multi-0" / f"{SEG0}.log").read_bytes()
    batches = _kafka_python_batches(src)
    data = bytearray(src)
    p2, s2, _ = batches[2]
    data[p2 + s2 - 5] ^= 0x40
    p6, s6, _ = batches[6]
    data[p6 + 8:p6 + 12] = struct.pack(">i", 0x7000_0000)
    p11 = batches[11][0]
    junk = random.Random(30).randbytes(5000)
    data = bytes(data[:p11]) + junk + bytes(data[p11:])
    d = tmp_path / "dmg-0"
    d.mkdir()
    (d / f"{SEG0}.log").write_bytes(data)
    records = [r for i, (_, _, rs) in enumerate(batches) if i not in (2, 6) for r in rs]
    return d, records, [(p2, s2), (p6, s6), (p11, 5000)]


def test_read_skip_corrupt(damaged):
    d, records, ranges = damaged
    log = d / f"{SEG0}.log"
    # without the flag: unchanged, the read stops at the first bad batch (exit 1)
    r = cli("read", str(d), "-o", "json")
    assert r.returncode == 1
    assert [json.loads(x)["offset"] for x in r.stdout.splitlines()] == [0, 1, 2, 3, 4, 5, 6, 7]
    assert r.stderr.startswith(f"error: {log} at byte {ranges[0][0]}: Record is corrupt")
    r = cli("read", str(d), "-o", "json", "--skip-corrupt")
    assert r.returncode == 1
    objs = [json.loads(x) for x in r.stdout.splitlines()]
    got = [(o["offset"], o["key"].encode(), o["value"].encode()) for o in objs
           if "offset" in o]
    assert got == records
    skipped = [o for o in objs if o.get("type") == "invalidBytes"]
    assert [(o["position"], o["bytes"], o["skipped"]) for o in skipped] == \
        [(p, n, True) for p, n in ranges]
    lines = r.stderr.splitlines()
    assert [ln.split(": skipped ")[0] for ln in lines] == \
        [f"error: {log} at byte {p}" for p, _ in ranges]
    assert f"skipped {ranges[1][1]} bytes that are not a valid batch (a batch size of " \
        f"{0x7000_0000} runs past byte" in lines[1]
    # the console text: the same records, the same stderr lines
    r = cli("read", str(d), "--skip-corrupt", "--property", "print.offset=true")
    assert len(r.stdout.splitlines()) == len(records) and r.returncode == 1
    # a clean partition: nothing skipped, exit 0
    assert cli("read", str(d.parent.parent / "nothing"), "--skip-corrupt").returncode == 3


def test_read_skip_corrupt_clean_is_exit_0(fixtures_root):
    r = cli("read", str(fixtures_root / "multi-0"), "--skip-corrupt", "-o", "json")
    assert r.returncode == 0 and r.stderr == ""
    assert len(r.stdout.splitlines()) == 216


def test_dump_segment_skip_corrupt(damaged):
    d, records, ranges = damaged
    log = d / f"{SEG0}.log"
    r = cli("dump-segment", str(log), "-o", "json", "--skip-corrupt", "--print-data-log")
    assert r.returncode == 1
    objs = [json.loads(x) for x in r.stdout.splitlines()]
    assert [(o["offset"], o["key"].encode(), o["value"].encode()) for o in objs
            if o["type"] == "record"] == records
    assert all(o["isValid"] for o in objs if o["type"] == "batch")
    inv = [o for o in objs if o["type"] == "invalidBytes"]
    assert [(o["position"], o["bytes"], o.get("skipped")) for o in inv] == \
        [(p, n, True) for p, n in ranges]
    # in place: each skipped range comes before the batch the read resumed at
    for o in inv:
        nxt = objs[objs.index(o) + 1]
        assert nxt["type"] == "batch" and nxt["position"] == o["position"] + o["bytes"]
    # (the batches skipped leave gaps in the offsets: Kafka's report of them comes too)
    assert [ln.split(": skipped ")[0] for ln in r.stderr.splitlines()
            if ln.startswith("error:")] == [f"error: {log} at byte {p}" for p, _ in ranges]
    assert "  7 is followed by 12" in r.stderr
    # Kafka's text: the good batches only; the ranges on stderr
    r = cli("dump-segment", str(log), "-o", "kafka", "--skip-corrupt")
    assert r.stdout.count("isvalid: true") == 22 - 2 and "isvalid: false" not in r.stdout
    assert "invalid bytes" not in r.stdout and r.stderr.count("skipped") == 3
    # without the flag: as before (the CRC failure printed, then the bad size ends it)
    r = cli("dump-segment", str(log), "-o", "kafka")
    assert r.stdout.count("isvalid: false") == 1 and "Found " in r.stdout
    assert r.returncode == 1


def test_export_skip_corrupt(damaged, tmp_path):
    d, records, ranges = damaged
    out = tmp_path / "out"
    r = cli("export", str(d), "--to", str(out), "--format", "jsonl", "--engine", "local",
            "--skip-corrupt", "-o", "json")
    assert r.returncode == 1
    res = json.loads(r.stdout)
    assert [(s["position"], s["bytes"]) for s in res["skipped"]] == ranges
    assert res["corruptBatches"] == 3 and not res["ok"]
    import base64

    rows = [json.loads(x) for x in (out / "topic=dmg" / "partition=0" /
                                    "part-00000.jsonl").read_text().splitlines()]
    assert [(o["offset"], base64.b64decode(o["key"]), base64.b64decode(o["value"]))
            for o in rows] == records
    # without the flag: data loss stops it (exit 1, damaged data)
    r = cli("export", str(d), "--to", str(tmp_path / "out2"), "--format", "jsonl",
            "--engine", "local")
    assert r.returncode == 1 and "data loss" in r.stderr


# -- one exit status per kind of finding ---------------------------------------------------

def _not_kafka(tmp_path):
    d = tmp_path / "text-0"
    d.mkdir()
    (d / f"{SEG0}.log").write_bytes(b"hello, this is not a Kafka log\n" * 40)
    return d


@pytest.mark.parametrize("command", [
    ["read"], ["dump-segment"], ["verify-index"], ["audit", "-o", "json"],
    ["describe", "-o", "json"], ["export", "--format", "jsonl", "--engine", "local"]])
def test_a_log_that_is_not_kafka_exits_3_everywhere(tmp_path, command):
    """A non-empty .log holding no whole batch from its first byte: 3 from every command
    (read said 1, export 0, audit and describe 1), with one line naming the file."""
    d = _not_kafka(tmp_path)
    extra = ["--to", str(tmp_path / "out")] if command[0] == "export" else []
    r = cli(command[0], str(d), *command[1:], *extra)
    assert r.returncode == 3, (command, r.stderr)
    if command[0] not in ("audit", "describe"):
        assert f"{d / SEG0}.log at byte 0: no whole record batch" in r.stderr
    else:
        assert "no whole record batch" in r.stdout


@pytest.mark.parametrize("command", [
    ["read"], ["dump-segment"], ["audit", "-o", "json"],
    ["export", "--format", "jsonl", "--engine", "local"]])
def test_a_crc_failure_exits_1_everywhere(tmp_path, fixtures_root, command):
    """The same batch failing its CRC check: 1 from every command that checks CRCs
    (read exited 3, dump-segment 1)."""
    d = tmp_path / "corrupt-crc-0"
    shutil.copytree(fixtures_root / "corrupt-crc-0", d)
    extra = ["--to", str(tmp_path / "out")] if command[0] == "export" else []
    r = cli(command[0], str(d), *command[1:], *extra)
    assert r.returncode == 1, (command, r.stderr)
    assert "at byte 2002" in r.stderr + r.stdout
