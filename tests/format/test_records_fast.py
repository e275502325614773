"""The optimised read path (format/records.py): decode_records, RecordBatch.records,
FileRecords.batches and scan_batches, checked against the construct schemas (the declared
truth), kafka-python's reader, and each other, on generated data and the real corpus."""

from __future__ import annotations

import mmap
import struct

import pytest
from kafkalog_testkit import corpus_log_files

from kafkalog_cli.errors import CorruptRecordError, InvalidRecordError
from kafkalog_cli.format import record_batch as R
from kafkalog_cli.format.legacy import LegacyRecordBatch
from kafkalog_cli.format.record import Record, decode_records
from kafkalog_cli.format.record_batch import HEADER, RecordBatch
from kafkalog_cli.format.records import FileRecords, scan_batches
from kafkalog_cli.format.varint import write_varint
from kafkalog_cli.schema import record as schema_record

#: the real corpus, found only at ../shared/corpus/real beside the checkout (empty: skip)
CORPUS_LOGS = corpus_log_files()

BASE_TS = 1_700_000_000_000


# -- helpers ---------------------------------------------------------------------------------

def varint(v: int, bits: int = 32) -> bytes:
    out = bytearray()
    write_varint(v, out, bits)
    return bytes(out)


def record_bytes(offset_delta=0, ts_delta=0, key=b"k", value=b"v", headers=(),
                 attributes=0, body_extra=b"", length_adjust=0) -> bytes:
    body = bytearray([attributes])
    body += varint(ts_delta, 64)
    body += varint(offset_delta)
    for blob in (key, value):
        if blob is None:
            body += varint(-1)
        else:
            body += varint(len(blob)) + blob
    body += varint(len(headers))
    for hk, hv in headers:
        body += varint(len(hk)) + hk
        body += varint(-1) if hv is None else varint(len(hv)) + hv
    body += body_extra
    return varint(len(body) + length_adjust) + bytes(body)


def build_log(nbatches, nrec, codec=0, headers=(), key=b"key-%06d", start=0,
              value_size=70, ts_step=1):
    kp = pytest.importorskip("kafka.record.default_records")
    out = bytearray()
    off = start
    for _ in range(nbatches):
        bld = kp.DefaultRecordBatchBuilder(
            magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
            producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
        for i in range(nrec):
            k = None if key is None else key % (off + i)
            bld.append(i, timestamp=BASE_TS + (off + i) * ts_step, key=k,
                       value=b"v" * value_size + b"%d" % (off + i), headers=list(headers))
        buf = bytearray(bld.build())
        buf[0:8] = off.to_bytes(8, "big")
        out += buf
        off += nrec
    return bytes(out)


def schema_decode(block: bytes, base_offset: int, base_ts: int, lat=None):
    """Records of a block through the construct schema (the declared truth)."""
    out = []
    for r in schema_record.Records.parse(block):
        out.append((base_offset + r.offset_delta,
                    lat if lat is not None else base_ts + r.timestamp_delta,
                    r.key, r.value, tuple((h.key, h.value) for h in r.headers)))
    return out


def full_scan(view):
    """Reference aggregate through FileRecords + is_valid, the per-object path."""
    fr = FileRecords(view)
    nb = nrec = legacy = 0
    invalid, first, last = [], None, None
    for b in fr.batches():
        nb += 1
        if not b.is_valid:
            invalid.append(b.position)
        if isinstance(b, RecordBatch):
            nrec += b.records_count
        else:
            legacy += 1
        if first is None:
            first = b.base_offset
        last = b.last_offset
    return dict(batches=nb, records=nrec, legacy=legacy, invalid=invalid, first_offset=first,
                last_offset=last, valid_end=fr.valid_end, invalid_bytes=fr.invalid_bytes,
                stop_error=None if fr.stop_error is None else str(fr.stop_error))


def fast_scan(view):
    s = scan_batches(view)
    return dict(batches=s.batches, records=s.records, legacy=s.legacy, invalid=s.invalid,
                first_offset=s.first_offset, last_offset=s.last_offset,
                valid_end=s.valid_end, invalid_bytes=s.invalid_bytes,
                stop_error=None if s.stop_error is None else str(s.stop_error))


# -- decode_records ----------------------------------------------------------------------------

@pytest.mark.parametrize("rec", [
    dict(),
    dict(key=None, value=None),
    dict(key=b"", value=b""),
    dict(offset_delta=63, ts_delta=-64),           # one-byte varint extremes
    dict(offset_delta=64, ts_delta=-65),           # first two-byte values
    dict(offset_delta=8191, ts_delta=-8192),       # two-byte extremes (the table's range)
    dict(offset_delta=8192, ts_delta=2**40),       # three+ bytes: read_varint path
    dict(offset_delta=2**31 - 1, ts_delta=-(2**63)),
    dict(value=b"x" * 63), dict(value=b"x" * 64), dict(value=b"x" * 8191),
    dict(value=b"x" * 8192), dict(value=b"x" * 70000),
    dict(headers=[(b"a", b"1"), (b"", None), ("ünï".encode(), b"")]),
    dict(headers=[(b"h%d" % i, b"v" * i) for i in range(70)]),  # 2-byte header count
    dict(headers=[(b"k" * 200, b"v" * 9000)]),
])
def test_decode_matches_schema(rec):
    block = record_bytes(**rec) * 3
    got = decode_records(block, 3, 1000, BASE_TS)
    assert got == schema_decode(block, 1000, BASE_TS)
    for r in got:
        assert type(r) is Record
        assert r.key is None or type(r.key) is bytes
        assert r.value is None or type(r.value) is bytes
        assert type(r.headers) is tuple
        for hk, hv in r.headers:
            assert type(hk) is str and (hv is None or type(hv) is bytes)


def test_decode_log_append_time_and_bytes_like_inputs():
    block = record_bytes(ts_delta=5) + record_bytes(offset_delta=1, ts_delta=9)
    lat = decode_records(block, 2, 10, BASE_TS, log_append_time=42)
    assert [r.timestamp for r in lat] == [42, 42]
    assert [r.offset for r in lat] == [10, 11]
    assert all(type(r) is Record for r in lat)
    expected = decode_records(block, 2, 10, BASE_TS)
    for data in (bytearray(block), memoryview(block), memoryview(b"xx" + block)[2:]):
        got = decode_records(data, 2, 10, BASE_TS)
        assert got == expected
        assert all(type(r.key) is bytes and type(r.value) is bytes for r in got)


def test_decode_zero_records():
    assert decode_records(b"", 0, 0, 0) == []
    with pytest.raises(InvalidRecordError, match="records still remaining"):
        decode_records(record_bytes(), 0, 0, 0)


@pytest.mark.parametrize("block,count,match", [
    (record_bytes() * 2, 1, "records still remaining"),                 # count too small
    (record_bytes() * 2, 3, "premature EOF"),                           # count too large
    (record_bytes(length_adjust=-1), 1, "Invalid record size"),         # body overruns
    (record_bytes(body_extra=b"\0"), 1, "Invalid record size"),         # body not consumed
    (record_bytes(length_adjust=+5), 1, "Invalid record size"),         # length past block
    (varint(-2) + b"\0" * 8, 1, "Invalid record size"),                 # negative length
    (b"\x80\x80\x80\x80\x80\x01", 1, "Varint is too long"),             # 6-byte length
    (b"\x20\x00" + b"\xff" * 10 + b"\x01" + b"\0" * 18, 1, "Varlong is too long"),
    (b"\x0a\x00\x00\x80\x80\x80\x80\x80\x01\0\0", 1, "Varint is too long"),  # offsetDelta
    (b"\x80", 1, "premature EOF"),
])
def test_decode_malformed(block, count, match):
    with pytest.raises(InvalidRecordError, match=match):
        decode_records(block, count, 0, 0)


def test_decode_header_errors():
    body = b"\x00\x00\x00\x02k\x02v" + varint(-1)  # negative header count
    with pytest.raises(InvalidRecordError, match="invalid number of record headers"):
        decode_records(varint(len(body)) + body, 1, 0, 0)
    body = b"\x00\x00\x00\x02k\x02v\x02" + varint(-1) + b"\x00"  # negative header key size
    with pytest.raises(InvalidRecordError, match="negative header key size"):
        decode_records(varint(len(body)) + body, 1, 0, 0)
    body = b"\x00\x00\x00\x02k\x02v\x02\x04ab"  # header key runs past the record
    with pytest.raises(InvalidRecordError):
        decode_records(varint(len(body)) + body, 1, 0, 0)


def test_decode_invalid_utf8_header_key_is_replaced():
    block = record_bytes(headers=[(b"\xff\xfe", b"v")])
    (r,) = decode_records(block, 1, 0, 0)
    assert r.headers == (("\ufffd\ufffd", b"v"),)


# -- batches -------------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_records_match_kafka_python(codec):
    kp_records = pytest.importorskip("kafka.record")
    data = build_log(7, 37, codec=codec, headers=[("h", b"x"), ("n", None)])
    data += build_log(3, 1, codec=codec, key=None, start=7 * 37, value_size=9000, ts_step=-3)
    ours = []
    for b in FileRecords(data).batches():
        assert b.is_valid
        ours.extend(b.records())
    theirs = []
    mr = kp_records.MemoryRecords(data)
    while mr.has_next():
        for r in mr.next_batch():
            theirs.append((r.offset, r.timestamp, r.key, r.value,
                           tuple((k, v) for k, v in r.headers)))
    assert ours == theirs


def test_records_log_append_time_batch():
    data = bytearray(build_log(1, 5))
    attrs_pos = 21
    (attrs,) = struct.unpack_from(">h", data, attrs_pos)
    struct.pack_into(">h", data, attrs_pos, attrs | 0x08)
    struct.pack_into(">q", data, 35, 1234)  # maxTimestamp
    (b,) = FileRecords(bytes(data)).batches()
    assert [r.timestamp for r in b.records()] == [1234] * 5
    assert [r.offset for r in b.records()] == list(range(5))


def test_batch_records_from_mmap_and_bytearray(tmp_path):
    data = build_log(4, 10, headers=[("h", b"x")])
    expected = [r for b in FileRecords(data).batches() for r in b.records()]
    p = tmp_path / "seg.log"
    p.write_bytes(data)
    with open(p, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        fr = FileRecords(m)
        got = [r for b in fr.batches() for r in b.records()]
        assert got == expected
        assert all(type(r.value) is bytes for r in got)
        del fr, got
    assert [r for b in FileRecords(bytearray(data)).batches() for r in b.records()] == expected


def test_batches_fast_path_matches_header_unpack():
    data = build_log(5, 3) + b"\0" * 10  # trailing bytes, too few for a header
    fr = FileRecords(data)
    pos = 0
    for b in fr.batches():
        assert b[1] == pos
        assert tuple(b[2:]) == HEADER.unpack_from(data, pos)
        pos = b.next_position
    assert fr.valid_end == pos == len(data) - 10
    assert fr.invalid_bytes == 10 and fr.stop_error is None


# -- scan_batches -----------------------------------------------------------------------------

def legacy_log(magic, n, codec=0):
    kp = pytest.importorskip("kafka.record.legacy_records")
    bld = kp.LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 30)
    for i in range(n):
        bld.append(i, timestamp=BASE_TS + i if magic else None, key=b"k%d" % i,
                   value=b"v%d" % i)
    return bytes(bld.build())


def generated_logs():
    good = build_log(20, 3)
    corrupt = bytearray(good)
    corrupt[61 + 5] ^= 0xFF  # a record byte of the first batch: CRC mismatch
    second = len(build_log(1, 3))
    corrupt[second + 70] ^= 0x01
    undersized = bytearray(build_log(2, 1))
    struct.pack_into(">i", undersized, len(build_log(1, 1)) + 8, 20)  # size < 49, magic 2
    tiny = bytearray(build_log(1, 1) + build_log(1, 1))
    struct.pack_into(">i", tiny, len(build_log(1, 1)) + 8, 5)  # size < 14
    return {
        "empty": b"",
        "good": good,
        "partial": good[:-7],
        "short-tail": good + b"\0" * 16,
        "corrupt-crc": bytes(corrupt),
        "undersized-v2": bytes(undersized),
        "tiny-size": bytes(tiny),
        "compressed": build_log(5, 10, codec=1) + build_log(5, 10, codec=4, start=50),
        "legacy-v0": legacy_log(0, 5),
        "legacy-v1": legacy_log(1, 5),
        "legacy-v1-gzip": legacy_log(1, 5, codec=1) + legacy_log(1, 3, codec=1),
        "mixed": legacy_log(1, 3) + build_log(3, 2, start=3) + legacy_log(0, 2),
    }


@pytest.mark.parametrize("name", list(generated_logs()))
def test_scan_batches_agrees_with_file_records(name):
    data = generated_logs()[name]
    assert fast_scan(data) == full_scan(data)
    assert fast_scan(memoryview(data)) == full_scan(data)


def test_scan_batches_start_end_and_file():
    data = build_log(10, 2)
    one = len(build_log(1, 2))
    s = scan_batches(data, start=one * 2, end=one * 5 + 10, file="x.log")
    assert (s.batches, s.records, s.first_offset, s.last_offset) == (3, 6, 4, 9)
    assert s.valid_end == one * 5 and s.invalid_bytes == 10
    bad = bytearray(data)
    struct.pack_into(">i", bad, one * 3 + 8, 3)
    s = scan_batches(bytes(bad), file="x.log")
    assert s.batches == 3 and s.valid_end == one * 3
    assert isinstance(s.stop_error, CorruptRecordError)
    assert s.stop_error.file == "x.log" and s.stop_error.position == one * 3


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS_LOGS, reason="real corpus not present at ../shared/corpus/real")
def test_scan_and_decode_on_real_corpus():
    checked = 0
    for path in CORPUS_LOGS:
        with open(path, "rb") as f:
            data = f.read()
        assert fast_scan(data) == full_scan(data), path
        # Every batch decodes as the schema says; the (slow) construct oracle runs on a
        # sample of each file: the first 20 v2 batches, then every 25th.
        for i, b in enumerate(FileRecords(data).batches()):
            if not isinstance(b, RecordBatch) or not b.is_valid or (i >= 20 and i % 25):
                continue
            try:
                block = b.records_block()
            except CorruptRecordError:
                continue
            lat = b.max_timestamp if b.timestamp_type == "LogAppendTime" else None
            try:
                expected = schema_decode(block, b.base_offset, b.base_timestamp, lat)
            except Exception:  # noqa: BLE001 - the schema rejects it: so must we
                with pytest.raises(InvalidRecordError):
                    b.records()
                continue
            if len(expected) != b.records_count:
                with pytest.raises(InvalidRecordError):
                    b.records()
                continue
            assert b.records() == expected, (path, b.position)
            checked += 1
    assert checked > 0


def test_legacy_entries_still_decode():
    data = bytearray(legacy_log(1, 4, codec=1))
    data[0:8] = (3).to_bytes(8, "big")  # the wrapper carries the last inner offset
    (w,) = FileRecords(bytes(data)).batches()
    assert isinstance(w, LegacyRecordBatch)
    assert [r.offset for r in w.records()] == [0, 1, 2, 3]
    assert [r.key for r in w.records()] == [b"k0", b"k1", b"k2", b"k3"]


def test_format_import_is_light():
    # crc32c's package import costs ~25 ms (importlib.metadata): loaded on first CRC only.
    import subprocess
    import sys

    code = ("import sys; import kafkalog_cli.format.records, kafkalog_cli.format.compression; "
            "print(','.join(m for m in ('crc32c', 'zstandard', 'lz4', 'cramjam') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == ""


def test_crc32c_helper():
    assert R.crc32c(b"123456789") == 0xE3069283
    assert R.crc32c(b"56789", R.crc32c(b"1234")) == 0xE3069283


# -- compression bounds ------------------------------------------------------------------------

@pytest.mark.parametrize("size", [0, 100, 70_000, 3_000_000])
def test_lz4_decompress_grows_its_bound(size):
    from kafkalog_cli.format import compression

    raw = (b"abcdefgh" * (size // 8 + 1))[:size]
    packed = compression.compress(3, raw)
    assert compression.decompress(3, packed) == raw
    assert compression.decompress(3, memoryview(packed)) == raw
    if size:
        with pytest.raises(CorruptRecordError, match="exceeds the bound"):
            compression.decompress(3, packed, max_bytes=size - 1)
        assert compression.decompress(3, packed, max_bytes=size) == raw
        with pytest.raises(CorruptRecordError):
            compression.decompress(3, packed[:-6])
        with pytest.raises(CorruptRecordError):  # the stepped path (bound near the size)
            compression.decompress(3, packed[:-6], max_bytes=size + 10)


def test_lz4_bomb_is_bounded():
    from kafkalog_cli.format import compression

    packed = compression.compress(3, b"\0" * (8 << 20))  # ~243x
    with pytest.raises(CorruptRecordError, match="exceeds the bound"):
        compression.decompress(3, packed, max_bytes=1 << 20)
    assert len(compression.decompress(3, packed)) == 8 << 20
