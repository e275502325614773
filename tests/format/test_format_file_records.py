"""FileRecords iteration as FileLogInputStream.nextBatch: partial tails, tiny sizes."""

from __future__ import annotations

import struct

import pytest

from kafkalog_cli.errors import CorruptRecordError, InvalidRecordError
from kafkalog_cli.format.builder import build_batch, build_legacy_message, set_base_offset
from kafkalog_cli.format.legacy import LegacyRecordBatch
from kafkalog_cli.format.record_batch import RecordBatch
from kafkalog_cli.format.records import FileRecords, batch_at


def _log(n=3) -> tuple[bytes, list[int]]:
    out = bytearray()
    starts = []
    for i in range(n):
        b = bytearray(build_batch([(1000 + i, b"k%d" % i, b"v" * (10 + i), ())]))
        set_base_offset(b, i)
        starts.append(len(out))
        out += b
    return bytes(out), starts


def test_whole_batches():
    data, starts = _log()
    fr = FileRecords(data)
    batches = list(fr.batches())
    assert [b.position for b in batches] == starts
    assert [b.base_offset for b in batches] == [0, 1, 2]
    assert all(isinstance(b, RecordBatch) and b.is_valid for b in batches)
    assert fr.valid_end == len(data) and fr.invalid_bytes == 0 and fr.stop_error is None


@pytest.mark.parametrize("cut", [1, 12, 16, 17, 40, 61, 70])
def test_partial_tail_stops_at_last_whole_batch(cut):
    data, starts = _log()
    last = starts[-1]
    fr = FileRecords(data[:last + cut])
    assert [b.position for b in fr.batches()] == starts[:-1]
    assert fr.valid_end == last
    assert fr.invalid_bytes == cut
    assert fr.stop_error is None  # a partial batch is not an error (nextBatch returns null)


def test_size_below_v0_overhead_sets_stop_error():
    data, starts = _log()
    bad = bytearray(data)
    struct.pack_into(">i", bad, starts[1] + 8, 13)  # batchLength 13 < RECORD_OVERHEAD_V0 (14)
    fr = FileRecords(bytes(bad), file="x.log")
    assert [b.position for b in fr.batches()] == [0]
    assert fr.valid_end == starts[1]
    assert isinstance(fr.stop_error, CorruptRecordError)
    assert "size 13 smaller than minimum record overhead (14)" in fr.stop_error.message
    assert fr.stop_error.position == starts[1]
    assert fr.stop_error.file == "x.log"


def test_zero_filled_tail_sets_stop_error():
    data, _ = _log()
    fr = FileRecords(data + bytes(100))
    assert len(list(fr.batches())) == 3
    assert fr.valid_end == len(data)
    assert fr.invalid_bytes == 100
    assert fr.stop_error is not None and "size 0" in fr.stop_error.message


def test_v2_batch_smaller_than_61_bytes():
    data, starts = _log(2)
    bad = bytearray(data)
    struct.pack_into(">i", bad, starts[1] + 8, 30)  # >= 14, magic 2, but < 61 - 12
    fr = FileRecords(bytes(bad))
    assert len(list(fr.batches())) == 1
    assert fr.valid_end == starts[1]
    assert "smaller than the minimum allowed overhead 61" in fr.stop_error.message


def test_fewer_than_17_bytes_left_is_not_a_batch():
    data, _ = _log(1)
    fr = FileRecords(data + b"\x00" * 16)
    assert len(list(fr.batches())) == 1
    assert fr.valid_end == len(data) and fr.invalid_bytes == 16


def test_start_and_end_bounds():
    data, starts = _log(3)
    fr = FileRecords(data, starts[1], starts[2] + 5)
    assert [b.base_offset for b in fr.batches()] == [1]
    assert fr.valid_end == starts[2]
    assert batch_at(data, starts[2]).base_offset == 2
    assert batch_at(data, starts[2] + 1) is None or not batch_at(data, starts[2] + 1).is_valid


def test_crc_mismatch_is_reported_not_raised():
    data, starts = _log(2)
    bad = bytearray(data)
    bad[starts[1] + 70] ^= 0x40
    b0, b1 = FileRecords(bytes(bad)).batches()
    assert b0.is_valid and not b1.is_valid
    with pytest.raises(CorruptRecordError, match="Record is corrupt"):
        b1.ensure_valid()


def test_legacy_entries_and_overrunning_key_length():
    m0 = build_legacy_message(5, b"k", b"v", magic=0)
    m1 = build_legacy_message(6, None, b"w", magic=1, timestamp=77)
    fr = FileRecords(m0 + m1)
    e0, e1 = fr.batches()
    assert isinstance(e0, LegacyRecordBatch)
    assert (e0.offset, e0.magic, e0.timestamp, e0.key, e0.value) == (5, 0, -1, b"k", b"v")
    assert (e1.offset, e1.magic, e1.timestamp, e1.key, e1.value) == (6, 1, 77, None, b"w")
    # a key length running past the buffer does not end the framing (FileLogInputStream
    # reads only offset, size and magic); reading the key fails, as LegacyRecord.key() does
    bad = bytearray(m1)
    struct.pack_into(">i", bad, 12 + 4 + 2 + 8, 1000)
    fr = FileRecords(bytes(bad))
    (e,) = fr.batches()
    assert fr.stop_error is None and fr.valid_end == len(bad)
    assert not e.is_valid  # the CRC was not fixed
    with pytest.raises(CorruptRecordError, match="key of 1000 bytes"):
        e.key  # noqa: B018


def test_records_count_mismatch_is_invalid_record():
    raw = bytearray(build_batch([(1, b"a", b"b", ()), (2, b"c", b"d", ())]))
    struct.pack_into(">i", raw, 57, 3)  # recordsCount 3, only 2 records in the block
    (b,) = FileRecords(bytes(raw)).batches()
    with pytest.raises(InvalidRecordError):
        b.records()


@pytest.mark.parametrize("base_seq,expected", [
    (-1, [-1, -1, -1]),
    (-2, [-1, -1, -1]),          # DefaultRecord: baseSequence >= 0 ? increment : NO_SEQUENCE
    (-(2 ** 31), [-1, -1, -1]),
    (0, [0, 1, 2]),
    (2 ** 31 - 2, [2 ** 31 - 2, 2 ** 31 - 1, 0]),  # incrementSequence wraps to 0
])
def test_record_sequence_follows_default_record(base_seq, expected):
    from kafkalog_testkit import raw_batch, raw_record

    data = raw_batch(0, [raw_record(i, 0, b"k", b"v") for i in range(3)], base_seq=base_seq)
    (b,) = FileRecords(data).batches()
    assert [b.record_sequence(i) for i in range(3)] == expected


@pytest.mark.parametrize("byte", [0x80, 0xFE, 0xFF])
def test_negative_magic_is_a_legacy_batch(byte):
    """FileLogInputStream reads the magic as a signed byte: 0x80..0xFF are below
    MAGIC_VALUE_V2, so the batch is a legacy one (whose CRC-32 then fails), never a v2
    RecordBatch; scan_batches agrees."""
    from kafkalog_testkit import raw_batch, raw_record

    from kafkalog_cli.format.records import scan_batches

    good = raw_batch(0, [raw_record(0, 0, b"k", b"v")])
    bad = bytearray(raw_batch(1, [raw_record(0, 0, b"k", b"v")], base_ts=1000))
    bad[16] = byte
    data = good + bytes(bad)
    fr = FileRecords(data)
    batches = list(fr.batches())
    assert isinstance(batches[0], RecordBatch)
    assert all(not isinstance(b, RecordBatch) for b in batches[1:])
    if len(batches) == 2:  # parsed as a v0/v1 message (v1 layout, as LegacyRecord)
        b = batches[1]
        assert isinstance(b, LegacyRecordBatch) and b.magic == byte - 256
        assert (b.position, b.last_offset, b.is_valid) == (len(good), 1, False)
    else:
        assert fr.stop_error is not None and fr.valid_end == len(good)
    scan = scan_batches(data)
    assert (scan.batches, scan.records) == (len(batches), 1)
    assert scan.invalid == [b.position for b in batches if not b.is_valid]


def test_header_keys_decode_as_java_strings():
    """Header keys are Utils.utf8 (new String(bytes, UTF_8)): a surrogate's three bytes
    are one U+FFFD, not three."""
    from kafkalog_testkit import raw_batch, raw_record

    data = raw_batch(0, [raw_record(0, 0, b"k", b"v", [(b"h\xed\xa0\x80", b"x")])])
    (b,) = FileRecords(data).batches()
    (r,) = b.records()
    assert r.headers[0][0] == "h\ufffd"
