"""``kafkalog dump-segment``: Kafka's exact lines, the JSON Lines contract, options.

Expected Kafka lines are written by hand from DumpLogSegments.scala's format strings
(printBatchLevel, dumpLog, dumpIndex); CRCs and sizes come from the file bytes through
crc32c / zlib / struct, not from kafkalog."""

from __future__ import annotations

import base64
import gzip
import json
import shutil
import struct
import zlib

import crc32c
import pytest
from typer.testing import CliRunner

from kafkalog_cli.cli.app import app

T0 = 1_700_000_000_000
SEG0 = "00000000000000000000"


def _v2_batches(path):
    """(position, size, stored crc, computed crc) of each v2 batch, by struct."""
    data = path.read_bytes()
    out, pos = [], 0
    while pos + 61 <= len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        size = length + 12
        (crc,) = struct.unpack_from(">I", data, pos + 17)
        out.append((pos, size, crc, crc32c.crc32c(data[pos + 21:pos + size])))
        pos += size
    return out


def test_kafka_lines_transactions(cli, fixtures_root):
    path = f"fixtures/logs/txn-0/{SEG0}.log"
    b = _v2_batches(fixtures_root / "txn-0" / f"{SEG0}.log")
    assert all(stored == computed for _, _, stored, computed in b)

    def head(base, last, count, bseq, lseq, txn, ctrl, pos, ts, size, crc):
        return (f"baseOffset: {base} lastOffset: {last} count: {count} baseSequence: {bseq} "
                f"lastSequence: {lseq} producerId: 5000 producerEpoch: 0 "
                f"partitionLeaderEpoch: 2 isTransactional: {txn} isControl: {ctrl} "
                f"deleteHorizonMs: OptionalLong.empty position: {pos} CreateTime: {ts} "
                f"size: {size} magic: 2 compresscodec: none crc: {crc} isvalid: true")

    def rec(off, ts, k, v, seq, tail):
        return (f"| offset: {off} CreateTime: {ts} keySize: {k} valueSize: {v} "
                f"sequence: {seq} headerKeys: []{tail}")

    expected = [
        f"Dumping {path}",
        "Log starting offset: 0",
        head(0, 2, 3, 0, 2, "true", "false", b[0][0], T0 + 2, b[0][1], b[0][2]),
        rec(0, T0, 4, 11, 0, " key: t1-0 payload: committed 0"),
        rec(1, T0 + 1, 4, 11, 1, " key: t1-1 payload: committed 1"),
        rec(2, T0 + 2, 4, 11, 2, " key: t1-2 payload: committed 2"),
        head(3, 3, 1, -1, -1, "true", "true", b[1][0], T0 + 5, b[1][1], b[1][2]),
        rec(3, T0 + 5, 4, 6, -1, " endTxnMarker: COMMIT coordinatorEpoch: 4"),
        head(4, 5, 2, 3, 4, "true", "false", b[2][0], T0 + 11, b[2][1], b[2][2]),
        rec(4, T0 + 10, 4, 9, 3, " key: t2-0 payload: aborted 0"),
        rec(5, T0 + 11, 4, 9, 4, " key: t2-1 payload: aborted 1"),
        head(6, 6, 1, -1, -1, "true", "true", b[3][0], T0 + 15, b[3][1], b[3][2]),
        rec(6, T0 + 15, 4, 6, -1, " endTxnMarker: ABORT coordinatorEpoch: 4"),
    ]
    r = cli("dump-segment", path, "--print-data-log", "--output", "kafka")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == expected
    assert r.stderr == ""


def _legacy_entries(data: bytes):
    """(offset, position, size, crc, magic, attrs, timestamp, key, value) by struct/zlib."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        off, size = struct.unpack_from(">qi", data, pos)
        crc, magic, attrs = struct.unpack_from(">IBB", data, pos + 12)
        assert zlib.crc32(data[pos + 16:pos + 12 + size]) == crc
        p = pos + 18
        ts = None
        if magic == 1:
            (ts,) = struct.unpack_from(">q", data, p)
            p += 8
        fields = []
        for _ in range(2):
            (n,) = struct.unpack_from(">i", data, p)
            p += 4
            fields.append(None if n < 0 else data[p:p + n])
            p += max(n, 0)
        out.append((off, pos, size + 12, crc, magic, attrs, ts, *fields))
        pos += 12 + size
    return out


def test_kafka_lines_legacy_v1(cli, fixtures_root):
    path = f"fixtures/logs/legacy-v1-0/{SEG0}.log"
    entries = _legacy_entries((fixtures_root / "legacy-v1-0" / f"{SEG0}.log").read_bytes())
    plain0, plain1, gz = entries[0], entries[1], entries[2]
    inner = _legacy_entries(gzip.decompress(gz[8]))
    r = cli("dump-segment", path, "--print-data-log", "-o", "kafka")
    lines = r.stdout.splitlines()
    assert lines[2] == (f"offset: 0 position: 0 CreateTime: {T0} size: {plain0[2]} magic: 1 "
                        f"compresscodec: none crc: {plain0[3]} isvalid: true")
    # Kafka 4's tools/DumpLogSegments.java (the Scala tool printed a stray '}' after crc)
    assert lines[3] == (f"| offset: 0 CreateTime: {T0} keySize: 2 valueSize: 10 isValid: true "
                        f"crc: {plain0[3]} key: k0 payload: v1 message")
    assert lines[5] == (f"| offset: 1 CreateTime: {T0 + 1} keySize: -1 valueSize: 11 "
                        f"isValid: true crc: {plain1[3]} payload: v1 null key")
    # the gzip wrapper: offset = last inner offset, timestamp = max inner timestamp
    assert lines[6] == (f"offset: 4 position: {gz[1]} CreateTime: {T0 + 5} size: {gz[2]} "
                        f"magic: 1 compresscodec: gzip crc: {gz[3]} isvalid: true")
    assert lines[7:10] == [
        f"| offset: 2 CreateTime: {T0 + 5} keySize: 4 valueSize: 12 isValid: true "
        f"crc: {inner[0][3]} key: gz-a payload: gzip inner a",
        f"| offset: 3 CreateTime: {T0 + 3} keySize: 4 valueSize: 12 isValid: true "
        f"crc: {inner[1][3]} key: gz-b payload: gzip inner b",
        f"| offset: 4 CreateTime: {T0 + 4} keySize: -1 valueSize: 12 isValid: true "
        f"crc: {inner[2][3]} payload: gzip inner c",
    ]
    assert "LogAppendTime: 1700000000050" in r.stdout


def test_kafka_lines_legacy_v0(cli):
    r = cli("dump-segment", f"fixtures/logs/legacy-v0-0/{SEG0}.log", "--deep-iteration",
            "-o", "kafka")
    lines = r.stdout.splitlines()
    assert lines[2].startswith("offset: 0 position: 0 NoTimestampType: -1 size: 38 magic: 0 "
                               "compresscodec: none crc: ")
    assert lines[3].startswith("| offset: 0 NoTimestampType: -1 keySize: 2 valueSize: 10 "
                               "isValid: true crc: ")
    assert lines[3].split("crc: ")[1].isdigit()  # Kafka 4 prints no stray '}' after it


def test_invalid_bytes_line(cli):
    r = cli("dump-segment", "fixtures/logs/corrupt-truncated-0", "-o", "kafka")
    assert r.stdout.splitlines()[-1] == f"Found 901 invalid bytes at the end of {SEG0}.log"
    # and one line on stderr naming the file and the byte position
    assert r.stderr.strip().splitlines() == [
        f"error: fixtures/logs/corrupt-truncated-0/{SEG0}.log at byte 5005: 901 invalid bytes "
        "at the end of the log"]
    assert r.returncode == 1


def test_crc_mismatch_shown(cli, fixtures_root):
    """A batch failing its CRC check is printed (isvalid: false) and is a finding: one
    line on stderr naming the file and the batch's position, exit 1 (as audit)."""
    b = _v2_batches(fixtures_root / "corrupt-crc-0" / f"{SEG0}.log")
    bad = [pos for pos, _, stored, computed in b if stored != computed]
    assert len(bad) == 1
    r = cli("dump-segment", "fixtures/logs/corrupt-crc-0", "-o", "kafka")
    assert r.returncode == 1
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("baseOffset")]
    assert [ln.endswith("isvalid: false") for ln in lines] == [False, False, True, False,
                                                                False, False]
    assert r.stderr.strip().splitlines() == [
        f"error: fixtures/logs/corrupt-crc-0/{SEG0}.log at byte {bad[0]}: record batch "
        "fails its CRC check (isvalid: false)"]
    for output in ("json", "text"):
        r = cli("dump-segment", "fixtures/logs/corrupt-crc-0", "-o", output)
        assert r.returncode == 1 and f"at byte {bad[0]}" in r.stderr


def test_crc_mismatches_counted_per_file(cli, fixtures_root, tmp_path):
    """Several bad batches in one file: one line naming the first, counting the rest."""
    data = bytearray((fixtures_root / "plain-0" / f"{SEG0}.log").read_bytes())
    b = _v2_batches(fixtures_root / "plain-0" / f"{SEG0}.log")
    assert len(b) >= 2
    for pos, size, _, _ in b:
        data[pos + size - 1] ^= 0xFF  # the last byte of each batch, inside the CRC's range
    d = tmp_path / "p-0"
    d.mkdir()
    (d / f"{SEG0}.log").write_bytes(bytes(data))
    r = cli("dump-segment", str(d), "-o", "kafka")
    assert r.returncode == 1
    assert r.stdout.count("isvalid: false") == len(b)
    assert r.stderr.strip().splitlines() == [
        f"error: {d / f'{SEG0}.log'} at byte 0: record batch fails its CRC check "
        f"(isvalid: false), and {len(b) - 1} more after it"]


def _json_lines(text):
    return [json.loads(ln) for ln in text.splitlines()]


BATCH_KEYS = {"type": str, "file": str, "position": int, "baseOffset": int, "lastOffset": int,
              "magic": int, "crc": int, "isValid": bool, "size": int, "compresscodec": str,
              "timestampType": str, "baseTimestamp": int, "maxTimestamp": int,
              "producerId": int, "producerEpoch": int, "baseSequence": int,
              "lastSequence": int, "partitionLeaderEpoch": int, "isTransactional": bool,
              "isControl": bool}
RECORD_KEYS = {"type": str, "offset": int, "timestamp": int, "keySize": int,
               "valueSize": int, "sequence": int, "headerKeys": list}


@pytest.mark.parametrize("part", ["plain-0", "gzip-0", "snappy-0", "lz4-0", "zstd-0",
                                  "legacy-v0-0", "legacy-v1-0", "idempotent-0"])
def test_json_contract(cli, part):
    r = cli("dump-segment", f"fixtures/logs/{part}", "--deep-iteration", "-o", "json")
    assert r.returncode == 0, r.stderr
    evs = _json_lines(r.stdout)
    batches = [e for e in evs if e["type"] == "batch"]
    records = [e for e in evs if e["type"] == "record"]
    assert batches and records
    for b in batches:
        for k, t in BATCH_KEYS.items():
            assert isinstance(b[k], t), k
        assert b["count"] is None or isinstance(b["count"], int)
        assert b["deleteHorizonMs"] is None or isinstance(b["deleteHorizonMs"], int)
        assert b["compresscodec"] in ("none", "gzip", "snappy", "lz4", "zstd")
        assert b["timestampType"] in ("CreateTime", "LogAppendTime", "NoTimestampType")
        if b["magic"] < 2:
            assert b["count"] is None and b["baseOffset"] <= b["lastOffset"]
    for rec in records:
        for k, t in RECORD_KEYS.items():
            assert isinstance(rec[k], t), k
        assert "value" not in rec and "key" not in rec  # only with --print-data-log
    codec = part.split("-")[0]
    if codec in ("gzip", "snappy", "lz4", "zstd"):
        assert {b["compresscodec"] for b in batches} == {codec}


def test_json_legacy_wrapper_offsets(cli):
    evs = _json_lines(cli("dump-segment", "fixtures/logs/legacy-v1-0", "-o", "json").stdout)
    gz = [e for e in evs if e["type"] == "batch" and e["compresscodec"] == "gzip"][0]
    assert (gz["baseOffset"], gz["lastOffset"], gz["magic"]) == (2, 4, 1)


def test_json_data_and_encodings(cli, fixtures_root):
    base = ["dump-segment", "fixtures/logs/nulls-0", "--print-data-log", "-o", "json"]
    recs = [e for e in _json_lines(cli(*base).stdout) if e["type"] == "record"]
    assert [(r["key"], r["value"]) for r in recs[:4]] == [
        (None, "null key"), ("null value", None), (None, None), ("", "")]
    assert [(r["keySize"], r["valueSize"]) for r in recs[:4]] == [(-1, 8), (10, -1), (-1, -1),
                                                                  (0, 0)]
    # not UTF-8: utf8 falls back to base64 and says so
    last = recs[4]
    assert base64.b64decode(last["key"]) == b"\xff\xfe"
    assert (last["keyEncoding"], last["valueEncoding"]) == ("base64", "base64")
    hexed = [e for e in _json_lines(cli(*base, "--data-encoding", "hex").stdout)
             if e["type"] == "record"]
    assert hexed[0]["value"] == b"null key".hex() and hexed[0]["key"] is None
    # every encoded field names its encoding (so produce --format jsonl reads it back)
    assert hexed[4]["keyEncoding"] == "hex" and hexed[4]["key"] == "fffe"
    b64 = [e for e in _json_lines(cli(*base, "--data-encoding", "base64").stdout)
           if e["type"] == "record"]
    assert base64.b64decode(b64[1]["key"]) == b"null value"


def test_json_headers(cli):
    recs = [e for e in _json_lines(cli("dump-segment", "fixtures/logs/headers-0",
                                       "--print-data-log", "-o", "json").stdout)
            if e["type"] == "record"]
    assert recs[0]["headerKeys"] == ["trace-id", "empty"]
    assert recs[0]["headers"] == [{"key": "trace-id", "value": "abc123"},
                                  {"key": "empty", "value": ""}]
    assert recs[1]["headers"] == [{"key": "null-value", "value": None}]
    assert recs[2]["headerKeys"] == ["dup", "dup", "utf8-\u00e9"]
    h = recs[3]["headers"][0]
    assert h["valueEncoding"] == "base64" and base64.b64decode(h["value"]) == bytes(
        range(250, 256))


def test_json_control_records(cli):
    recs = [e for e in _json_lines(cli("dump-segment", "fixtures/logs/txn-0",
                                       "--deep-iteration", "-o", "json").stdout)
            if e["type"] == "record" and "controlType" in e]
    assert [(r["controlType"], r["coordinatorEpoch"]) for r in recs] == [("COMMIT", 4),
                                                                        ("ABORT", 4)]


def test_json_invalid_bytes_and_index_entries(cli, fixtures_root):
    evs = _json_lines(cli("dump-segment", "fixtures/logs/corrupt-zero-tail-0", "-o",
                          "json").stdout)
    inv = evs[-1]
    assert inv["type"] == "invalidBytes" and inv["bytes"] == 1000
    assert isinstance(inv["position"], int)
    d = "fixtures/logs/multi-0"
    evs = _json_lines(cli("dump-segment", f"{d}/{SEG0}.index", f"{d}/{SEG0}.timeindex",
                          "-o", "json").stdout)
    idx = [e for e in evs if e["type"] == "indexEntry"]
    tix = [e for e in evs if e["type"] == "timeIndexEntry"]
    raw = (fixtures_root / "multi-0" / f"{SEG0}.index").read_bytes()
    assert [(e["offset"], e["position"]) for e in idx] == \
        [struct.unpack_from(">ii", raw, i) for i in range(0, len(raw), 8)]
    assert set(idx[0]) == {"type", "offset", "position"}
    assert set(tix[0]) == {"type", "timestamp", "offset"}


def test_skip_record_metadata(cli):
    r = cli("dump-segment", "fixtures/logs/plain-0", "--print-data-log",
            "--skip-record-metadata", "-o", "kafka")
    recs = [ln for ln in r.stdout.splitlines() if ln.startswith("|")]
    assert recs[0] == "| key: key-0 payload: value-0"
    assert all("offset:" not in ln for ln in recs)


def test_print_data_log_implies_deep_iteration(cli):
    shallow = cli("dump-segment", "fixtures/logs/plain-0", "-o", "kafka").stdout
    assert not [ln for ln in shallow.splitlines() if ln.startswith("|")]
    deep = cli("dump-segment", "fixtures/logs/plain-0", "--print-data-log", "-o", "kafka")
    assert len([ln for ln in deep.stdout.splitlines() if ln.startswith("|")]) == 8


def test_max_bytes_cli(cli):
    r = cli("dump-segment", f"fixtures/logs/multi-0/{SEG0}.log", "--max-bytes", "2500",
            "-o", "kafka")
    assert len([ln for ln in r.stdout.splitlines() if ln.startswith("baseOffset")]) == 2
    assert "invalid bytes" not in r.stdout and r.returncode == 0


def test_kafka_index_lines(cli, fixtures_root):
    d = "fixtures/logs/multi-0"
    r = cli("dump-segment", f"{d}/00000000000000000088.index", "-o", "kafka")
    raw = (fixtures_root / "multi-0" / "00000000000000000088.index").read_bytes()
    expected = [f"Dumping {d}/00000000000000000088.index"] + [
        f"offset: {88 + rel} position: {pos}"
        for rel, pos in (struct.unpack_from(">ii", raw, i) for i in range(0, len(raw), 8))]
    assert r.stdout.splitlines() == expected
    r = cli("dump-segment", f"{d}/00000000000000000088.timeindex", "-o", "kafka")
    traw = (fixtures_root / "multi-0" / "00000000000000000088.timeindex").read_bytes()
    assert r.stdout.splitlines()[1:] == [
        f"timestamp: {ts} offset: {88 + rel}"
        for ts, rel in (struct.unpack_from(">qi", traw, i) for i in range(0, len(traw), 12))]


def test_index_sanity_check_cli(cli):
    p = f"fixtures/logs/multi-0/{SEG0}.index"
    r = cli("dump-segment", p, "--index-sanity-check", "-o", "kafka")
    assert r.stdout.splitlines() == [f"Dumping {p}", f"{p} passed sanity check."]
    empty = f"fixtures/logs/plain-0/{SEG0}.index"
    r = cli("dump-segment", empty, "--index-sanity-check", "-o", "kafka")
    assert r.stdout.splitlines() == [f"Dumping {empty}", f"{empty} is empty."]
    bad = f"fixtures/logs/corrupt-index-length-0/{SEG0}.index"
    r = cli("dump-segment", bad, "--index-sanity-check", "-o", "kafka")
    assert "passed sanity check" not in r.stdout
    assert "neither positive nor a multiple of 8" in r.stderr
    # OffsetIndex.sanityCheck throws: Kafka's tool exits 1, a finding here
    assert r.returncode == 1 and r.stderr.count("\n") == 1
    assert cli("dump-segment", p, "--index-sanity-check", "-o", "kafka").returncode == 0


def test_verify_index_only_mismatches_on_stderr(cli, repo_root, tmp_path):
    d = tmp_path / "t-0"
    d.mkdir()
    shutil.copy(repo_root / f"fixtures/logs/multi-0/{SEG0}.log", d / f"{SEG0}.log")
    rel, pos = struct.unpack(">ii", (repo_root / f"fixtures/logs/multi-0/{SEG0}.index")
                             .read_bytes()[:8])
    (d / f"{SEG0}.index").write_bytes(struct.pack(">ii", rel + 1, pos))  # a batch's start
    p = str(d / f"{SEG0}.index")
    r = cli("dump-segment", p, "--verify-index-only", "-o", "kafka")
    assert r.stdout.splitlines() == [f"Dumping {p}"]  # no entries printed
    assert r.stderr.splitlines() == [
        f"Mismatches in :{p}",
        f"  Index offset: {rel + 1}, log offset: {rel}",
    ]
    # reported and exit 0, as Kafka's tool does (it reports indexes older brokers wrote
    # too); verify-index is what judges the index: a finding there
    assert r.returncode == 0
    assert cli("verify-index", p).returncode == 1
    # an entry at which no whole batch starts: Kafka's tool dies there (exit 1)
    p = f"fixtures/logs/corrupt-index-position-0/{SEG0}.index"
    r = cli("dump-segment", p, "--verify-index-only", "-o", "kafka")
    assert r.stdout.splitlines() == [f"Dumping {p}"]
    assert r.stderr == (f"{p}: the entry for offset 11 points at position 2003 of the .log: "
                        "no whole batch starts there (NoSuchElementException)\n")
    assert r.returncode == 1
    t = f"fixtures/logs/corrupt-timeindex-0/{SEG0}.timeindex"
    r = cli("dump-segment", t, "--verify-index-only", "-o", "kafka")
    assert r.stderr.splitlines() == [
        f"Found timestamp mismatch in :{repo_root / t}",
        f"  Index timestamp: {T0 + 903005}, log timestamp: {T0 + 903004}",
    ]
    assert r.returncode == 0  # the tool's report, its status
    good = cli("dump-segment", f"fixtures/logs/multi-0/{SEG0}.index", "--verify-index-only",
               "-o", "kafka")
    assert good.stderr == "" and good.returncode == 0


def test_cli_runner_text_output(monkeypatch):
    monkeypatch.chdir(__import__("kafkalog_testkit").REPO)
    res = CliRunner().invoke(app, ["dump-segment", "fixtures/logs/plain-0", "-o", "text"])
    assert res.exit_code == 0
    assert "0..2" in res.stdout and "magic 2" in res.stdout


# -- producer snapshots, transaction indexes, unknown files (DumpLogSegments.main) --------

# ProducerSnapshot v1 entries as stored: producerId, epoch, lastSequence, lastOffset,
# offsetDelta, timestamp, coordinatorEpoch, currentTxnFirstOffset
SNAPSHOT_ENTRIES = [
    (5000, 3, 9, 41, 4, T0 + 123, 7, -1),   # idempotent, last batch seqs 5..9
    (6000, 0, -1, -1, 0, T0 + 999, 2, 30),  # no batch (lastOffset -1), txn open at 30
    (7000, 1, 1, 50, 3, T0 + 1000, 0, 45),  # sequence wrapped: 2147483646, ..., 1
]


def _snapshot_bytes(entries):
    body = struct.pack(">i", len(entries)) + b"".join(
        struct.pack(">qhiqiqiq", *e) for e in entries)
    return struct.pack(">hI", 1, crc32c.crc32c(body)) + body


def test_kafka_lines_producer_snapshot(cli, tmp_path):
    """dumpProducerIdSnapshot's lines: entry fields, then the batch metadata when the
    entry has a batch (firstSequence = decrementSequence(lastSequence, offsetDelta),
    wrapping at Integer.MAX_VALUE); an entry without one keeps the trailing space."""
    p = tmp_path / "00000000000000000052.snapshot"
    p.write_bytes(_snapshot_bytes(SNAPSHOT_ENTRIES))
    r = cli("dump-segment", str(p), "-o", "kafka")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert r.stdout.split("\n") == [
        f"Dumping {p}",
        "producerId: 5000 producerEpoch: 3 coordinatorEpoch: 7 currentTxnFirstOffset: "
        f"OptionalLong.empty lastTimestamp: {T0 + 123} firstSequence: 5 lastSequence: 9 "
        f"lastOffset: 41 offsetDelta: 4 timestamp: {T0 + 123}",
        "producerId: 6000 producerEpoch: 0 coordinatorEpoch: 2 currentTxnFirstOffset: "
        f"OptionalLong[30] lastTimestamp: {T0 + 999} ",
        "producerId: 7000 producerEpoch: 1 coordinatorEpoch: 0 currentTxnFirstOffset: "
        f"OptionalLong[45] lastTimestamp: {T0 + 1000} firstSequence: 2147483646 "
        f"lastSequence: 1 lastOffset: 50 offsetDelta: 3 timestamp: {T0 + 1000}",
        ""]
    r = cli("dump-segment", str(p), "-o", "json")
    objs = _json_lines(r.stdout)
    assert objs[0] == {"type": "file", "file": str(p), "kind": "producer_snapshot"}
    assert objs[1] == {"type": "producerSnapshotEntry", "file": str(p), "producerId": 5000,
                       "producerEpoch": 3, "coordinatorEpoch": 7,
                       "currentTxnFirstOffset": None, "lastTimestamp": T0 + 123,
                       "firstSequence": 5, "lastSequence": 9, "lastOffset": 41,
                       "offsetDelta": 4, "timestamp": T0 + 123}
    assert objs[2]["currentTxnFirstOffset"] == 30 and objs[2]["lastOffset"] is None
    assert objs[2]["firstSequence"] is None
    assert objs[3]["firstSequence"] == 2147483646
    r = cli("dump-segment", str(p), "-o", "text")
    assert r.returncode == 0 and "producer 7000 epoch 1" in r.stdout


def test_corrupt_producer_snapshot_message_on_stderr(cli, tmp_path):
    data = bytearray(_snapshot_bytes(SNAPSHOT_ENTRIES))
    data[20] ^= 0x01
    stored = struct.unpack_from(">I", data, 2)[0]
    computed = crc32c.crc32c(bytes(data[6:]))
    p = tmp_path / "00000000000000000052.snapshot"
    p.write_bytes(bytes(data))
    r = cli("dump-segment", str(p), "-o", "kafka")
    assert r.returncode == 1  # a damaged file: a finding (Kafka's tool goes on, exit 0)
    assert r.stdout == f"Dumping {p}\n"
    # Kafka 4.4.0's message (its tool prints it alone), after the file's name
    assert r.stderr == (f"{p}: Snapshot is corrupt (CRC is no longer valid). Stored crc: "
                        f"{stored}. Computed crc: {computed}\n")
    # what Kafka 4.4.0's tool printed for these files (run by hand)
    for data, message in [
            (struct.pack(">hIi", 2, 0, 0), "Snapshot contained an unknown file version 2"),
            (b"abc", "Snapshot contained an unknown file version 24930"),
            (b"a", "null"),
            (b"", "null"),
            (struct.pack(">hI", 1, 0) + b"xy", "null"),
            (struct.pack(">hIi", 1, 0, -5),
             "non-nullable field producerEntries was serialized as null"),
            (struct.pack(">hIi", 1, 0, 5),
             "Tried to allocate a collection of size 5, but there are only 0 bytes remaining."),
            (struct.pack(">hIi", 1, 0, 3) + b"x" * 50, "null")]:
        p.write_bytes(data)
        r = cli("dump-segment", str(p), "-o", "kafka")
        assert r.stderr == f"{p}: Snapshot failed schema validation: {message}\n"
        assert r.returncode == 1


def test_kafka_lines_txn_index(cli, tmp_path):
    """dumpTxnIndex's lines, one per 34-byte AbortedTxn; a partial entry at the end is not
    one (TransactionIndex reads whole entries only)."""
    p = tmp_path / f"{SEG0}.txnindex"
    p.write_bytes(struct.pack(">hqqqq", 0, 5000, 4, 6, 4)
                  + struct.pack(">hqqqq", 0, 7000, 10, 12, 8) + b"\x00" * 5)
    r = cli("dump-segment", str(p), "-o", "kafka")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.splitlines() == [
        f"Dumping {p}",
        "version: 0 producerId: 5000 firstOffset: 4 lastOffset: 6 lastStableOffset: 4",
        "version: 0 producerId: 7000 firstOffset: 10 lastOffset: 12 lastStableOffset: 8"]
    objs = _json_lines(cli("dump-segment", str(p), "-o", "json").stdout)
    assert objs[2] == {"type": "txnIndexEntry", "file": str(p), "version": 0,
                       "producerId": 7000, "firstOffset": 10, "lastOffset": 12,
                       "lastStableOffset": 8}
    # an entry of a version Kafka does not know: TransactionIndex refuses the file
    p.write_bytes(struct.pack(">hqqqq", 0, 5000, 4, 6, 4) + struct.pack(">hqqqq", 1, 1, 2, 3, 4))
    r = cli("dump-segment", str(p), "-o", "kafka")
    assert r.stdout.splitlines() == [f"Dumping {p}"]
    assert r.stderr == (f"Unexpected aborted transaction version 1 in transaction index "
                        f"{p.absolute()}, current version is 0\n")
    assert r.returncode == 1  # TransactionIndex throws: Kafka's tool exits 1


def test_unknown_file_is_ignored_and_the_dump_goes_on(cli, tmp_path):
    """Kafka's tool: ``Dumping F``, then ``Ignoring unknown file F`` on stderr, and the
    next file; not an error (exit 0)."""
    other = tmp_path / "leader-epoch-checkpoint"
    other.write_text("0\n1\n0 0\n")
    deleted = tmp_path / f"{SEG0}.log.deleted"
    deleted.write_bytes(b"\x00" * 10)
    log = "fixtures/logs/plain-0/00000000000000000000.log"
    r = cli("dump-segment", str(other), log, str(deleted), "-o", "kafka")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[:3] == [f"Dumping {other}", f"Dumping {log}", "Log starting offset: 0"]
    assert lines[-1] == f"Dumping {deleted}"
    assert r.stderr.splitlines() == [f"Ignoring unknown file {other}",
                                     f"Ignoring unknown file {deleted}"]
    r = cli("dump-segment", str(other), "-o", "json")
    assert r.returncode == 0
    assert _json_lines(r.stdout) == [{"type": "file", "file": str(other), "kind": "unknown"}]
    assert r.stderr == f"Ignoring unknown file {other}\n"


def test_non_consecutive_offsets_on_stderr(cli, tmp_path):
    """--deep-iteration reports offsets that do not follow each other as Kafka's tool
    does (stderr, exit 0); the records themselves are printed as usual."""
    from kafkalog_testkit import raw_batch, raw_record

    d = tmp_path / "__consumer_offsets-39"
    d.mkdir()
    log = d / f"{SEG0}.log"
    log.write_bytes(raw_batch(4, [raw_record(0, 0, b"k", None)])
                    + raw_batch(16, [raw_record(0, 0, b"k", b"v"), raw_record(1, 0, b"k", b"v")]))
    expected = [f"Non-consecutive offsets in {log.absolute()}", "  -1 is followed by 4",
                "  4 is followed by 16"]
    for output in ("kafka", "json"):
        r = cli("dump-segment", str(log), "--deep-iteration", "--no-decode", "-o", output)
        assert r.returncode == 0, r.stderr
        assert r.stderr.splitlines() == expected
    r = cli("dump-segment", str(log), "-o", "kafka")
    assert r.returncode == 0 and r.stderr == ""


def test_corrupt_records_are_a_finding(cli, tmp_path):
    """A batch whose CRC is valid but whose records do not match its count: Kafka's tool
    throws (exit 1); dump-segment prints one line naming the file and the batch's byte
    position, dumps the rest, and exits 1 in every output."""
    from kafkalog_testkit import raw_batch, raw_record

    d = tmp_path / "cnt-0"
    d.mkdir()
    good = raw_batch(0, [raw_record(0, 0, b"k", b"v")])
    bad = raw_batch(1, [raw_record(0, 0, b"k", b"v")], count=2, last_delta=1)
    log = d / f"{SEG0}.log"
    log.write_bytes(good + bad + raw_batch(3, [raw_record(0, 0, b"k", b"v")]))
    line = f"{log} at byte {len(good)}: Incorrect declared batch size, premature EOF reached"
    for output in ("kafka", "json", "text"):
        r = cli("dump-segment", str(log), "--deep-iteration", "-o", output)
        assert r.returncode == 1, (output, r.stderr)
        assert line in r.stderr and "Traceback" not in r.stderr
    r = cli("dump-segment", str(log), "--deep-iteration", "-o", "kafka")
    assert r.stderr.splitlines() == [line, f"Non-consecutive offsets in {log.absolute()}",
                                     "  0 is followed by 3"]
    assert "| offset: 3 " in r.stdout  # the dump went on
    # without deep iteration no record is read: nothing to report
    assert cli("dump-segment", str(log), "-o", "kafka").returncode == 0


def test_kafka_lines_of_internal_records_kafka_cannot_parse(cli, tmp_path):
    """--output kafka prints what DumpLogSegments' parsers print when the serde throws:
    for __consumer_offsets the key 'Unknown record type N at offset X, skipping.' or
    'Error at offset X, skipping. <message>' and no payload; for __cluster_metadata the
    payload 'Error at X, skipping. <message>'. JSON keeps the raw bytes. A coordinator
    record without a key makes Kafka's parser throw: one line on stderr, exit 1."""
    from kafkalog_testkit import raw_batch, raw_record

    def s(x):
        return struct.pack(">h", len(x)) + x

    commit_key = struct.pack(">h", 1) + s(b"g") + s(b"t") + struct.pack(">i", 0)
    recs = [raw_record(0, 0, struct.pack(">h", 99) + b"xx", b"\x00\x01abc"),
            raw_record(1, 0, commit_key, struct.pack(">h", 77) + b"zzzz"),
            raw_record(2, 0, commit_key, struct.pack(">h", 1) + b"\x00"),
            raw_record(3, 0, commit_key, None)]
    d = tmp_path / "__consumer_offsets-0"
    d.mkdir()
    log = d / f"{SEG0}.log"
    log.write_bytes(raw_batch(0, recs))
    r = cli("dump-segment", str(log), "--print-data-log", "-o", "kafka")
    assert r.returncode == 0 and r.stderr == ""
    tails = [ln.split("headerKeys: [] ", 1)[1] for ln in r.stdout.splitlines()[3:]]
    assert tails == [
        "key: Unknown record type 99 at offset 0, skipping.",
        "key: Error at offset 1, skipping. Found an unknown record version 77 for 1 type",
        "key: Error at offset 2, skipping. Could not read record with version 1 from value's "
        "buffer due to: null.",
        'key: {"type":"1","data":{"group":"g","topic":"t","partition":0}} payload: <DELETE>',
    ]
    objs = [o for o in _json_lines(cli("dump-segment", str(log), "--print-data-log", "-o",
                                       "json").stdout) if o["type"] == "record"]
    assert objs[0]["key"] == {"raw": base64.b64encode(struct.pack(">h", 99) + b"xx").decode()}
    assert objs[1]["value"] == {"raw": base64.b64encode(b"\x00\x4dzzzz").decode()}
    assert objs[0]["decodeFailure"] == "Unknown record type 99 at offset 0, skipping."
    assert "kafkaText" not in objs[0]
    # a record without a key
    log.write_bytes(raw_batch(0, [raw_record(0, 0, None, b"x")]))
    r = cli("dump-segment", str(log), "--print-data-log", "-o", "kafka")
    assert r.returncode == 1
    assert r.stdout.splitlines()[-1].endswith("headerKeys: []")
    assert r.stderr.splitlines() == [
        f"{log} at byte 0: Failed to decode message at offset 0 using the specified decoder "
        "(message had a missing key)"]

    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    log = d / f"{SEG0}.log"
    log.write_bytes(raw_batch(0, [raw_record(0, 0, None, bytes([1, 99, 0]) + b"abc"),
                                  raw_record(1, 0, None, bytes([1, 12, 0, 1]) + b"\x00" * 3)]))
    r = cli("dump-segment", str(log), "--print-data-log", "-o", "kafka")
    assert r.returncode == 0 and r.stderr == ""
    tails = [ln.split("headerKeys: [] ", 1)[1] for ln in r.stdout.splitlines()[3:]]
    assert tails == [
        "payload: Error at 0, skipping. org.apache.kafka.common.errors."
        "UnsupportedVersionException: Unknown metadata id 99",
        'payload: {"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"",'
        '"featureLevel":0}}']


def test_kafka_lines_replace_bad_utf8_as_java_does(cli, tmp_path):
    """StringDecoder is new String(bytes, UTF_8): ED A0 80 (a surrogate) is one U+FFFD."""
    from kafkalog_testkit import raw_batch, raw_record

    d = tmp_path / "utf-0"
    d.mkdir()
    (d / f"{SEG0}.log").write_bytes(raw_batch(0, [raw_record(
        0, 0, b"k\xed\xa0\x80", b"a\xed\xa0\x80b", [(b"h\xc0\xaf", b"v")])]))
    r = cli("dump-segment", str(d), "--print-data-log", "-o", "kafka")
    assert r.stdout.splitlines()[-1].endswith(
        "headerKeys: [h\ufffd\ufffd] key: k\ufffd payload: a\ufffdb")


def test_time_index_offsets_not_found_name_the_file(cli, tmp_path, fixtures_root):
    """Kafka 4.4.0's TimeIndexDumpErrors names the file ('... not found in :F'), as its
    tool printed for this file (run by hand): offset 2 is inside the batch 0..3, offset
    5000 past the log."""
    d = tmp_path / "ti-0"
    d.mkdir()
    shutil.copy(fixtures_root / "multi-0" / f"{SEG0}.log", d)
    t = d / f"{SEG0}.timeindex"
    t.write_bytes(struct.pack(">qi", T0, 2) + struct.pack(">qi", T0 + 1, 5000))
    r = cli("dump-segment", str(t), "-o", "kafka")
    assert r.stderr.splitlines() == [
        f"The following indexed offsets are not found in :{t.absolute()}",
        "Indexed offset: 2, found log offset: 3",
        "Indexed offset: 5000, found log offset: -1"]
    assert r.returncode == 0  # Kafka's tool reports it and exits 0 (verify-index: a finding)
    assert cli("verify-index", str(d)).returncode == 1


def _on_a_terminal(*args: str) -> bytes:
    """What ``kafkalog ARGS`` writes to a terminal (a pty: stdout and stderr both)."""
    import os
    import pty
    import sys

    pid, fd = pty.fork()
    if pid == 0:  # the child: this checkout's CLI, on the pty
        from kafkalog_testkit import REPO

        os.environ["PYTHONPATH"] = str(REPO)
        os.execv(sys.executable, [sys.executable, "-m", "kafkalog_cli", *args])
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out


def test_kafka_text_on_a_terminal_warns_once_and_keeps_the_bytes(cli, tmp_path):
    """-o kafka on a terminal: Kafka's bytes unchanged (a control byte in a value reaches
    the terminal as it is), and one warning line on stderr; piped, no warning."""
    from kafkalog_testkit import raw_batch, raw_record

    d = tmp_path / "ctl-0"
    d.mkdir()
    (d / f"{SEG0}.log").write_bytes(raw_batch(0, [raw_record(0, 0, b"k", b"a\x1b[2Jb")]))
    out = _on_a_terminal("dump-segment", str(d), "--print-data-log", "-o", "kafka")
    assert out.count(b"warning: -o kafka writes the records' bytes raw") == 1
    assert b"payload: a\x1b[2Jb" in out
    r = cli("dump-segment", str(d), "--print-data-log", "-o", "kafka")
    assert "warning" not in r.stderr and "payload: a\x1b[2Jb" in r.stdout


@pytest.mark.kafka
def test_reports_after_the_last_file_as_kafkas_tool(kafka_bench, cli, tmp_path, fixtures_root):
    """Several files in one dump: the index mismatches, time-index errors and
    non-consecutive offsets come after the last file, in the order of Kafka 4.4.0's
    DumpLogSegments (its HashMaps of absolute paths): stdout and stderr equal the tool's."""
    from kafka_testkit import kafka_tool

    logs = tmp_path / "logs"
    for p in ("multi-0", "corrupt-index-order-0", "corrupt-timeindex-0"):
        shutil.copytree(fixtures_root / p, logs / p)
    files = [str(p) for p in sorted((logs / "multi-0").glob("*.log"))]
    files += [str(logs / "corrupt-index-order-0" / f"{SEG0}.index"),
              str(logs / "corrupt-timeindex-0" / f"{SEG0}.timeindex")]
    kafka = kafka_tool("org.apache.kafka.tools.DumpLogSegments", "--deep-iteration",
                       "--files", ",".join(files))
    assert kafka.exit == 0, kafka.stderr
    ours = cli("dump-segment", "--deep-iteration", "-o", "kafka", "--files", ",".join(files))
    assert ours.stdout == kafka.stdout
    assert ours.stderr == kafka.stderr
    assert kafka.stderr.index("Found timestamp mismatch in :") < \
        kafka.stderr.index("Non-consecutive offsets in ")
