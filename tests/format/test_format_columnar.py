"""The columnar decoders (format/records.py decode_records_into, batch_records_into) give
exactly what decode_records / RecordBatch.records() give: same values, same errors (type
and message), on the fixtures, the real corpus and generated data; and on error they
leave the caller's columns as they were."""

from __future__ import annotations

import glob
import os
from array import array

import pytest
from test_records_fast import BASE_TS, CORPUS_LOGS, build_log, record_bytes, varint

from kafkalog_cli.errors import KafkalogError
from kafkalog_cli.format.record import decode_records, decode_records_into
from kafkalog_cli.format.record_batch import batch_records_into
from kafkalog_cli.format.records import FileRecords

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
FIXTURE_LOGS = sorted(glob.glob(os.path.join(ROOT, "fixtures", "logs", "**", "*.log"),
                                recursive=True))


def rows_of(recs):
    return ([r[0] for r in recs], [r[1] for r in recs], [r[2] for r in recs],
            [r[3] for r in recs], [r[4] for r in recs])


def outcome(fn):
    try:
        return "ok", fn()
    except KafkalogError as e:
        return "error", (type(e), str(e))


def columnar(data, count, base_offset, base_ts, lat=None, headers=True, prefix=True):
    """decode_records_into on columns that already hold a row (checks it appends, and
    rolls back on error); returns the appended part."""
    cols = ([7], [8], [b"k"], [None], [()]) if prefix else ([], [], [], [], [])
    if not headers:
        cols = cols[:4]
    n = decode_records_into(data, count, base_offset, base_ts, lat, *cols)
    out = tuple(c[1 if prefix else 0:] for c in cols)
    assert n == count and all(len(c) == n for c in out)
    return out if headers else out + (None,)


def check_block(data, count, base_offset, base_ts, lat=None):
    want = outcome(lambda: rows_of(decode_records(data, count, base_offset, base_ts, lat)))
    got = outcome(lambda: columnar(data, count, base_offset, base_ts, lat))
    assert got == want
    got = outcome(lambda: columnar(data, count, base_offset, base_ts, lat, headers=False))
    if want[0] == "ok":
        assert got == ("ok", want[1][:4] + (None,))
    else:
        assert got == want
    if want[0] == "error":  # the columns are rolled back
        cols = ([7], array("q", [8]), [b"k"], [None], [()])
        with pytest.raises(want[1][0]):
            decode_records_into(data, count, base_offset, base_ts, lat, *cols)
        assert cols == ([7], array("q", [8]), [b"k"], [None], [()])
    return want


def check_batches(view):
    """batch_records_into vs records() on every batch of a buffer."""
    n = 0
    for b in FileRecords(view).batches():
        want = outcome(lambda b=b: rows_of(b.records()))
        cols = ([], array("q"), [], [], [])
        got = outcome(lambda b=b, cols=cols: (batch_records_into(b, *cols),
                                             (list(cols[0]), list(cols[1]), *cols[2:]))[1])
        assert got == want, f"batch at {b.position}"
        if want[0] == "error":
            assert cols == ([], array("q"), [], [], [])
        n += 1
    return n


# -- generated data ---------------------------------------------------------------------------

@pytest.mark.parametrize("rec", [
    dict(),
    dict(key=None, value=None),
    dict(key=b"", value=b""),
    dict(offset_delta=63, ts_delta=-64),
    dict(offset_delta=64, ts_delta=-65),
    dict(offset_delta=8191, ts_delta=-8192),
    dict(offset_delta=8192, ts_delta=2**40),
    dict(offset_delta=2**31 - 1, ts_delta=-(2**63)),
    dict(value=b"x" * 63), dict(value=b"x" * 64), dict(value=b"x" * 8192),
    dict(headers=[(b"a", b"1"), (b"", None), ("ünï".encode(), b"")]),
    dict(headers=[(b"h%d" % i, b"v" * i) for i in range(70)]),
    dict(headers=[(b"\xff\xfe", b"v")]),
])
@pytest.mark.parametrize("lat", [None, 42])
def test_same_records(rec, lat):
    block = record_bytes(**rec) * 3
    assert check_block(block, 3, 1000, BASE_TS, lat)[0] == "ok"
    assert check_block(block[:len(block) // 3], 1, 5, BASE_TS, lat)[0] == "ok"


def test_bytes_like_inputs_and_zero_records():
    block = record_bytes(ts_delta=5) + record_bytes(offset_delta=1, key=None)
    for data in (block, bytearray(block), memoryview(block), memoryview(b"xx" + block)[2:]):
        check_block(data, 2, 10, BASE_TS)
        keys: list = []
        decode_records_into(data, 2, 10, BASE_TS, None, [], [], keys, [])
        assert all(k is None or type(k) is bytes for k in keys)
    assert check_block(b"", 0, 0, 0) == ("ok", ([], [], [], [], []))
    assert check_block(record_bytes(), 0, 0, 0)[0] == "error"


@pytest.mark.parametrize("block,count", [
    (record_bytes() * 2, 1),
    (record_bytes() * 2, 3),
    (record_bytes() * 2, -1),
    (record_bytes(length_adjust=-1), 1),
    (record_bytes(body_extra=b"\0"), 1),
    (record_bytes(length_adjust=+5), 1),
    (record_bytes() + record_bytes(length_adjust=+1), 2),
    (varint(-2) + b"\0" * 8, 1),
    (b"\x80\x80\x80\x80\x80\x01", 1),
    (b"\x20\x00" + b"\xff" * 10 + b"\x01" + b"\0" * 18, 1),
    (b"\x0a\x00\x00\x80\x80\x80\x80\x80\x01\0\0", 1),
    (b"\x80", 1),
    (b"", 1),
    (record_bytes(key=b"k" * 300, length_adjust=-250), 1),
    (record_bytes() + b"\x80", 2),
])
def test_same_errors(block, count):
    assert check_block(block, count, 0, BASE_TS)[0] == "error"
    assert check_block(block, count, 0, BASE_TS, 7)[0] == "error"


def test_same_header_errors():
    for body in (b"\x00\x00\x00\x02k\x02v" + varint(-1),
                 b"\x00\x00\x00\x02k\x02v\x02" + varint(-1) + b"\x00",
                 b"\x00\x00\x00\x02k\x02v\x02\x04ab",
                 b"\x00\x00\x00\x02k\x02v\x02\x02a" + b"\x80" * 5):
        assert check_block(varint(len(body)) + body, 1, 0, 0)[0] == "error"


def test_every_truncation_and_byte_flip():
    """Every prefix of a block, and every single-byte corruption, errors (or not) alike."""
    block = (record_bytes(key=b"key", value=b"v" * 90, headers=[(b"h", b"1")])
             + record_bytes(offset_delta=1, ts_delta=300, key=None, value=b"w" * 200))
    for i in range(len(block)):
        check_block(block[:i], 2, 0, BASE_TS)
    for i in range(len(block)):
        for v in (0x00, 0x7F, 0x80, 0xFF):
            b = bytearray(block)
            b[i] = v
            check_block(bytes(b), 2, 0, BASE_TS)


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_batches_all_codecs(codec):
    if codec == 2:
        pytest.importorskip("snappy")
    log = build_log(5, 40, codec=codec, headers=[("h", b"v"), ("n", None)])
    assert check_batches(memoryview(log)) == 5
    log = build_log(3, 300, codec=codec, key=None, value_size=5000, ts_step=-7)
    assert check_batches(log) == 3


def test_batches_log_append_time_and_corrupt_records():
    log = bytearray(build_log(2, 10))
    log[21 + 1] |= 0x08  # attributes low byte: LogAppendTime
    assert check_batches(bytes(log)) == 2
    log = bytearray(build_log(2, 10))
    log[70] ^= 0x55  # inside the first batch's records block
    assert check_batches(bytes(log)) == 2
    log = bytearray(build_log(1, 10))
    log[57:61] = (11).to_bytes(4, "big")  # recordsCount one too many
    check_batches(bytes(log))
    log[57:61] = (-1).to_bytes(4, "big", signed=True)
    check_batches(bytes(log))


# -- fixtures and the real corpus -----------------------------------------------------------

@pytest.mark.parametrize("path", FIXTURE_LOGS, ids=lambda p: os.path.relpath(p, ROOT))
def test_fixture_logs(path):
    with open(path, "rb") as f:
        check_batches(f.read())


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS_LOGS, reason="real corpus absent")
def test_real_corpus():
    n = 0
    for path in CORPUS_LOGS:
        with open(path, "rb") as f:
            n += check_batches(f.read())
    assert n
