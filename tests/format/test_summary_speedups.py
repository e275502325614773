"""``record_batch.record_runs_summary`` (the log validator's fold over a batch's records)
in the compiled core (``_speedups.summarize_block``) against the pure-Python loop, in one
process (:func:`compiled.load_pure_python`): same runs, same errors, on batches built by
hand (``raw_record`` / ``raw_batch``, independent of kafkalog's builder), mutated, streamed
in pieces and compressed as Kafka's Java producer frames them. The Python loop is the
reference (it decodes the records as ``iter_records`` does); skipped when the core is not
in use.
"""

from __future__ import annotations

import struct

import crc32c
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafkalog_testkit import raw_batch, raw_record

from kafkalog_cli.constants import DECODE_CHUNK_BYTES
from kafkalog_cli.format import compiled, record_batch
from kafkalog_cli.format.record_batch import HEADER

pytestmark = pytest.mark.skipif(not compiled.SPEEDUPS, reason="the compiled core is not in use")

P_BATCH = compiled.load_pure_python("record_batch") if compiled.SPEEDUPS else None
SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def summary(mod, buf: bytes, max_bytes: int = 1 << 24):
    """``("ok", runs)`` or ``("err", class name, message)``."""
    batch = mod.RecordBatch((memoryview(buf), 0) + HEADER.unpack_from(buf))
    try:
        return ("ok", list(mod.record_runs_summary(batch, max_bytes)))
    except Exception as e:  # noqa: BLE001 - any exception must match
        return ("err", type(e).__name__, str(e))


def both(buf: bytes, max_bytes: int = 1 << 24):
    c, p = summary(record_batch, buf, max_bytes), summary(P_BATCH, buf, max_bytes)
    assert c == p
    return c


def zstd_java(buf: bytes) -> bytes:
    """``buf`` (an uncompressed batch) with its records block zstd-compressed as Kafka's
    producer writes it (a zstd-jni stream: no content size in the frame)."""
    o = zstandard.ZstdCompressor(level=3, write_content_size=False).compressobj()
    block = o.compress(buf[61:]) + o.flush()
    head = bytearray(buf[:61])
    struct.pack_into(">i", head, 8, 49 + len(block))
    struct.pack_into(">h", head, 21, struct.unpack_from(">h", head, 21)[0] | 4)
    out = head + block
    struct.pack_into(">I", out, 17, crc32c.crc32c(bytes(out[21:])))
    return bytes(out)


@st.composite
def batches(draw):
    """A batch of 1-6 records: null keys or not, offset deltas in order or not,
    timestamps anywhere in int64 (their sum wraps as a Java long), headers."""
    recs = []
    for i in range(draw(st.integers(1, 6))):
        key = draw(st.none() | st.binary(max_size=8))
        headers = draw(st.lists(st.tuples(st.binary(max_size=4),
                                          st.none() | st.binary(max_size=4)), max_size=2))
        ts_delta = draw(st.integers(-(2**63), 2**63 - 1) | st.integers(-3, 3))
        off_delta = draw(st.just(i) | st.integers(-(2**31), 2**31 - 1))
        recs.append(raw_record(off_delta, ts_delta, key, draw(st.binary(max_size=40)),
                               headers))
    base_ts = draw(st.integers(-(2**63), 2**63 - 1) | st.integers(-2, 2000))
    attrs = draw(st.sampled_from([0, 8]))  # CreateTime, LogAppendTime
    # past INT64_MAX - INT32_MAX the offsets are checked (the Python loop's path)
    return raw_batch(draw(st.sampled_from([0, 7, 2**62, 2**63 - 3])), recs, base_ts=base_ts,
                     max_ts=draw(st.integers(-2, 5000)), attrs=attrs)


@SETTINGS
@given(st.data(), batches())
def test_summaries_and_errors_are_the_python_loops(data, buf):
    fits = struct.unpack_from(">q", buf)[0] <= 2**62  # no offset past int64
    assert (both(buf)[0] == "ok") >= fits
    assert (both(zstd_java(buf))[0] == "ok") >= fits
    # a mutated records block (the CRC is not checked here): same runs or same error
    b = bytearray(buf)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(61, len(b) - 1))
        b[i] = data.draw(st.sampled_from([0, 1, 0x7F, 0x80, 0xFF, b[i] ^ 0x40]))
    both(bytes(b))
    both(bytes(b[:data.draw(st.integers(61, len(b)))]))


def test_values_of_a_batch():
    recs = [raw_record(0, 5, b"k", b"a"), raw_record(1, -3, b"k", b"b"),
            raw_record(2, 9, None, b"c"), raw_record(3, 9, b"k", b"d")]
    # min 1000 - 3, max 1000 + 9 at its first record (index 2), a null key, in order
    assert both(raw_batch(0, recs)) == ("ok", [(4, 997, 1009, 2, False, True)])
    recs[1] = raw_record(7, -3, b"k", b"b")
    assert both(raw_batch(0, recs)) == ("ok", [(4, 997, 1009, 2, False, False)])


def test_a_block_of_many_pieces():
    """A block over DECODE_CHUNK_BYTES comes in runs: each run's offsets are checked from
    its first record's index in the batch, a record out of place in a later run shows."""
    value = b"v" * 1000
    n = 3 * DECODE_CHUNK_BYTES // 1000
    recs = [raw_record(i, i % 17, b"k", value) for i in range(n)]
    ok = both(raw_batch(0, recs))
    assert ok[0] == "ok" and len(ok[1]) > 2
    assert all(r[4] and r[5] for r in ok[1]) and sum(r[0] for r in ok[1]) == n
    recs[n - 5] = raw_record(n - 4, 0, None, value)
    runs = both(zstd_java(raw_batch(0, recs)))[1]
    assert not runs[-1][4] and not runs[-1][5] and all(r[4] and r[5] for r in runs[:-1])


def test_a_batch_of_no_records():
    assert both(raw_batch(0, [])) == ("ok", [])
    # bytes after a declared count of 0: the decoder's error
    assert both(raw_batch(0, [raw_record(0, 0, b"k", b"v")], count=0))[0] == "err"


def test_the_decompressed_bound():
    recs = [raw_record(i, 0, b"k", b"x" * 100) for i in range(5000)]
    assert both(zstd_java(raw_batch(0, recs)), max_bytes=100_000)[1] == \
        "DecompressedSizeError"
