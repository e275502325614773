"""A record's timestamp is ``baseTimestamp + timestampDelta`` in a Java long.

DefaultRecord.readFrom adds the two int64 fields with Java's long arithmetic, which wraps
(two's complement); the CRC covers both, so a batch whose sum leaves int64 is valid and a
Java consumer reads the wrapped value. Found by the fuzz harness: export died with
OverflowError putting the unwrapped sum in Arrow's int64 column. The expected values here
are the sum wrapped with ``struct`` (two's complement), independent of kafkalog.
"""

from __future__ import annotations

import json
import struct

import pytest
from kafkalog_testkit import raw_batch, raw_record, run_cli_inprocess, write_partition

from kafkalog_cli.format.record_batch import batch_records_into
from kafkalog_cli.format.records import FileRecords

INT64_MAX = (1 << 63) - 1


def _java_long_sum(a: int, b: int) -> int:
    return struct.unpack(">q", ((a + b) & ((1 << 64) - 1)).to_bytes(8, "big"))[0]


#: (baseTimestamp, timestampDeltas): a 10-byte delta past int64, a base at the edge with
#: small deltas (the one- and two-byte varint paths), both edges, 2^62 each
CASES = [
    (1_700_000_000_000, [0, INT64_MAX]),
    (INT64_MAX, [0, 5, 9000]),
    (-INT64_MAX - 1, [-1, 0, -9000]),
    (1 << 62, [1 << 62, 1]),
    (-(1 << 62), [-(1 << 62) - 1, 1]),
]


@pytest.mark.parametrize("base_ts, deltas", CASES)
def test_timestamps_wrap_as_java_longs(base_ts, deltas):
    batch = raw_batch(0, [raw_record(i, d, b"k", b"v") for i, d in enumerate(deltas)],
                      base_ts=base_ts)
    expected = [_java_long_sum(base_ts, d) for d in deltas]
    (b,) = FileRecords(batch).batches()
    assert b.is_valid
    assert [r.timestamp for r in b.records()] == expected
    assert [r.timestamp for r in b.iter_records()] == expected
    cols: tuple[list, ...] = ([], [], [], [])
    batch_records_into(b, *cols)
    assert cols[1] == expected


def test_read_gives_the_wrapped_timestamp_export_does_not_fail(tmp_path):
    """(export's timestamp column is in microseconds, which cannot hold every int64 of
    milliseconds: only that it exports the records is checked here.)"""
    base_ts, deltas = CASES[0]
    batch = raw_batch(0, [raw_record(i, d, b"k", b"v") for i, d in enumerate(deltas)],
                      base_ts=base_ts)
    part = write_partition(tmp_path / "logs", "t-0", batch)
    expected = [_java_long_sum(base_ts, d) for d in deltas]
    r = run_cli_inprocess("read", str(part), "-o", "json")
    assert r.returncode == 0, r.stderr
    assert [json.loads(line)["timestamp"] for line in r.stdout.splitlines()] == expected
    out = tmp_path / "out"
    r = run_cli_inprocess("export", str(tmp_path / "logs"), "--to", str(out),
                          "--format", "jsonl", "--engine", "local")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for f in sorted(out.rglob("*.json*")) if f.is_file()
            for line in f.read_text().splitlines()]
    assert [row["offset"] for row in rows] == [0, 1]
