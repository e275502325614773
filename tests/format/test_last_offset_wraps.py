"""A batch's lastOffset is ``baseOffset + lastOffsetDelta`` in a Java long.

DefaultRecordBatch.lastOffset adds the int64 base offset (outside the CRC) and the int32
delta with Java's long arithmetic, which wraps; nextOffset is lastOffset + 1, wrapped too.
DumpLogSegments prints the wrapped value (checked against the pinned tool in
tests/kafka_bench/test_dump_hostile_offsets.py: ``baseOffset: -9223372036854775808
lastOffset: 9223372036854775807`` for a delta of -1). The expected values here are the sums
wrapped with ``struct`` (two's complement), independent of kafkalog; the compiled dump run
and the pure-Python lines must print the same.
"""

from __future__ import annotations

import json
import struct

import pytest
from kafkalog_testkit import raw_batch, raw_record, run_cli_inprocess, write_partition

from kafkalog_cli.format.legacy import LegacyRecordBatch
from kafkalog_cli.format.record_batch import HEADER, RecordBatch
from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.render import dump as render_dump

INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)
INT32_MAX = (1 << 31) - 1


def _java_long(v: int) -> int:
    return struct.unpack(">q", (v & ((1 << 64) - 1)).to_bytes(8, "big"))[0]


#: (baseOffset, lastOffsetDelta): both ends of int64 with deltas that leave it, and the
#: edges that stay inside
EDGES = [
    (INT64_MIN, -1), (INT64_MIN, -INT32_MAX - 1), (INT64_MIN + 5, -7), (INT64_MIN, 0),
    (INT64_MAX, 1), (INT64_MAX, INT32_MAX), (INT64_MAX - 1, 1), (INT64_MAX, 0),
    (INT64_MAX - INT32_MAX, INT32_MAX), (INT64_MIN + INT32_MAX + 1, -INT32_MAX - 1),
]


def _tuple(base: int, delta: int) -> RecordBatch:
    """A hand-made batch tuple (as a caller outside FileRecords may build one)."""
    raw = raw_batch(base, [raw_record(0, 0, b"k", b"v")], last_delta=delta)
    return RecordBatch((memoryview(raw), 0) + HEADER.unpack_from(raw))


@pytest.mark.parametrize("base, delta", EDGES)
def test_last_and_next_offset_wrap_as_java_longs(base, delta):
    b = _tuple(base, delta)
    assert b.last_offset == _java_long(base + delta)
    assert b.next_offset == _java_long(base + delta + 1)
    assert INT64_MIN <= b.last_offset <= INT64_MAX


def test_a_legacy_entry_at_int64_max_has_next_offset_int64_min():
    entry = LegacyRecordBatch((b"", 0, INT64_MAX) + (0,) * 7)
    assert entry.next_offset == INT64_MIN


def _segment(tmp_path):
    cases = [(INT64_MIN, -1), (INT64_MIN, -INT32_MAX - 1), (INT64_MIN + 5, -7),
             (INT64_MIN + INT32_MAX + 1, -INT32_MAX - 1)]
    log = b"".join(raw_batch(base, [raw_record(0, 0, b"k", b"v")], last_delta=delta)
                   for base, delta in cases)
    part = write_partition(tmp_path, "hostile-0", log)
    return part / "00000000000000000000.log", [_java_long(b + d) for b, d in cases]


def _last_offsets(text: str) -> list[int]:
    return [int(line.split(" lastOffset: ")[1].split()[0])
            for line in text.splitlines() if line.startswith("baseOffset: ")]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled-run", "python-lines"])
def test_dump_prints_the_wrapped_last_offset(tmp_path, monkeypatch, compiled):
    """The kafka text and the JSON Lines, from the compiled run and without it (a reader
    keeps such batches: only an overflow past INT64_MAX ends iteration)."""
    log, expected = _segment(tmp_path)
    if not compiled:
        monkeypatch.setattr(render_dump, "_c", None)
    r = run_cli_inprocess("dump-segment", "-o", "kafka", "--files", str(log))
    assert r.returncode == 0, r.stderr
    assert _last_offsets(r.stdout) == expected
    r = run_cli_inprocess("dump-segment", "-o", "json", "--files", str(log))
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines()]
    assert [e["lastOffset"] for e in events if e.get("type") == "batch"] == expected


def test_a_reader_still_rejects_an_overflow_past_int64_max():
    """FileRecords' own check (kafkalog's: no offset can pass 2^63 - 1) is on the
    unwrapped sum, not the wrapped lastOffset."""
    raw = raw_batch(INT64_MAX, [raw_record(0, 0, b"k", b"v")], last_delta=1)
    fr = FileRecords(raw)
    assert list(fr.batches()) == []
    assert "overflow" in str(fr.stop_error)
