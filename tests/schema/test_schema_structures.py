"""Construct schemas: derived offsets, parse/build round trips on hand-written bytes."""

from __future__ import annotations

import struct
import zlib

import construct as c
import crc32c
import pytest

from kafkalog_cli.schema import control, index_entries, legacy, record, record_batch
from kafkalog_cli.schema.messages import Field, fields


def test_derived_offsets_match_default_record_batch():
    # DefaultRecordBatch: CRC_OFFSET = MAGIC_OFFSET(16) + 1, ATTRIBUTES_OFFSET = CRC + 4,
    # RECORD_BATCH_OVERHEAD = RECORDS_OFFSET = 61
    assert record_batch.CRC_OFFSET == 17
    assert record_batch.ATTRIBUTES_OFFSET == 21
    assert record_batch.RECORD_BATCH_OVERHEAD == 61
    assert record_batch.RecordBatchHeader.sizeof() == 61


def test_every_header_offset_is_default_record_batchs():
    """DefaultRecordBatch's _OFFSET constants, each the previous plus its _LENGTH; the one
    struct layout every fast reader unpacks comes from the same declaration."""
    want = {"base_offset": 0, "length": 8, "partition_leader_epoch": 12, "magic": 16,
            "crc": 17, "attributes": 21, "last_offset_delta": 23, "base_timestamp": 27,
            "max_timestamp": 35, "producer_id": 43, "producer_epoch": 51,
            "base_sequence": 53, "records_count": 57}
    assert {n: at for n, _, at in record_batch.HEADER_FIELDS} == want
    assert (record_batch.LOG_OVERHEAD, record_batch.MAX_TIMESTAMP_OFFSET,
            record_batch.RECORDS_OFFSET, record_batch.MIN_BATCH_LENGTH) == (12, 35, 61, 49)
    full = struct.Struct(record_batch.header_format(*want))
    raw = _header_bytes()
    assert full.unpack(raw) == struct.unpack(">qiibIhiqqqhii", raw)
    picked = struct.Struct(record_batch.header_format("length", "crc", "max_timestamp"))
    assert picked.unpack_from(raw) == (49, 0xDEADBEEF, 1005)
    with pytest.raises(ValueError):
        record_batch.header_format("crc", "length")
    # LegacyRecord: CRC_OFFSET 0, MAGIC_OFFSET 4, ATTRIBUTES_OFFSET 5, TIMESTAMP_OFFSET 6
    # after Records.LOG_OVERHEAD; RECORD_OVERHEAD_V0 14, _V1 22; HEADER_SIZE_UP_TO_MAGIC 17
    assert (legacy.CRC_OFFSET, legacy.MAGIC_OFFSET, legacy.ATTRIBUTES_OFFSET,
            legacy.TIMESTAMP_OFFSET) == (12, 16, 17, 18)
    assert (legacy.RECORD_OVERHEAD_V0, legacy.RECORD_OVERHEAD_V1,
            legacy.HEADER_SIZE_UP_TO_MAGIC) == (14, 22, 17)


def _header_bytes(**over) -> bytes:
    f = dict(base_offset=42, length=49, epoch=3, magic=2, crc=0xDEADBEEF, attributes=0x0033,
             last_delta=4, base_ts=1000, max_ts=1005, pid=77, pepoch=2, seq=9, count=5)
    f.update(over)
    return struct.pack(">qiibIhiqqqhii", f["base_offset"], f["length"], f["epoch"], f["magic"],
                       f["crc"], f["attributes"], f["last_delta"], f["base_ts"], f["max_ts"],
                       f["pid"], f["pepoch"], f["seq"], f["count"])


def test_record_batch_header_parse_and_build():
    raw = _header_bytes()
    h = record_batch.RecordBatchHeader.parse(raw)
    assert h.prefix.base_offset == 42
    assert h.prefix.length == 49
    assert h.prefix.partition_leader_epoch == 3
    assert h.prefix.magic == 2
    assert h.crc == 0xDEADBEEF
    a = h.header.attributes
    # 0x33 = 0b0011_0011: control, transactional, codec 3 (lz4), CreateTime
    assert (a.compression, a.timestamp_type, a.is_transactional, a.is_control_batch,
            a.has_delete_horizon_ms) == (3, 0, True, True, False)
    assert (h.header.last_offset_delta, h.header.base_timestamp, h.header.max_timestamp) == \
        (4, 1000, 1005)
    assert (h.header.producer_id, h.header.producer_epoch, h.header.base_sequence,
            h.header.records_count) == (77, 2, 9, 5)
    assert record_batch.RecordBatchHeader.build(h) == raw


@pytest.mark.parametrize("attrs,expected", [
    (0x0008, dict(timestamp_type=1)),
    (0x0040, dict(has_delete_horizon_ms=True)),
    (0x0004, dict(compression=4)),
])
def test_attribute_bits(attrs, expected):
    h = record_batch.RecordBatchHeader.parse(_header_bytes(attributes=attrs))
    for k, v in expected.items():
        assert h.header.attributes[k] == v


def _batch_with_crc(records_block: bytes, count: int) -> bytes:
    body = _header_bytes(length=49 + len(records_block), count=count, last_delta=count - 1,
                         attributes=0)[21:] + records_block
    crc = crc32c.crc32c(body)
    head = struct.pack(">qiibI", 0, 49 + len(records_block), -1, 2, crc)
    return head + body


def test_record_batch_crc_checked():
    rec = bytes.fromhex("12" "00" "00" "00" "02" "61" "04" "7a7a" "00")  # one record
    raw = _batch_with_crc(rec, 1)
    parsed = record_batch.RecordBatch.parse(raw)
    assert parsed.crc == crc32c.crc32c(raw[21:])
    assert parsed.covered.value.records == rec
    bad = bytearray(raw)
    bad[-1] ^= 0xFF
    with pytest.raises(c.CheckError):
        record_batch.RecordBatch.parse(bytes(bad))
    wrong_magic = bytearray(raw)
    wrong_magic[16] = 1
    with pytest.raises(c.CheckError):
        record_batch.RecordBatch.parse(bytes(wrong_magic))


def test_record_parse_hand_written():
    # length 8, attributes 0, tsDelta 0, offsetDelta 0, key len 1 "a", value len 2 "zz",
    # 0 headers: body = 00 00 00 02 61 04 7a 7a 00 (9 bytes) -> length varint 9 = 0x12
    raw = bytes.fromhex("12" "00" "00" "00" "02" "61" "04" "7a7a" "00")
    r = record.Record.parse(raw)
    assert (r.attributes, r.timestamp_delta, r.offset_delta, r.key, r.value) == \
        (0, 0, 0, b"a", b"zz")
    assert list(r.headers) == []
    assert record.Record.build(r) == raw


def test_record_with_headers_and_nulls_round_trip():
    obj = dict(attributes=0, timestamp_delta=-5, offset_delta=300, key=None, value=b"v",
               headers=[dict(key="h1", value=None), dict(key="h\u00e9", value=b"")])
    raw = record.Record.build(obj)
    # body: 00, tsDelta -5 -> 09, offsetDelta 300 -> d804, key null 01, value 02 76,
    # 2 headers 04, "h1" 04 6831 null 01, "hé" (3 bytes) 06 68c3a9, empty 00
    body = bytes.fromhex("00" "09" "d804" "01" "0276" "04" "046831" "01" "0668c3a9" "00")
    assert raw == bytes([len(body) * 2]) + body
    back = record.Record.parse(raw)
    assert back.key is None and back.value == b"v" and back.offset_delta == 300
    assert [(h.key, h.value) for h in back.headers] == [("h1", None), ("h\u00e9", b"")]


def test_record_body_must_be_consumed_exactly():
    # declared length 10 but the fields use 9 bytes: DefaultRecord rejects it
    raw = bytes.fromhex("14" "00" "00" "00" "02" "61" "04" "7a7a" "00" "ff")
    with pytest.raises(c.ConstructError):
        record.Record.parse(raw)


def test_records_greedy():
    one = bytes.fromhex("12" "00" "00" "00" "02" "61" "04" "7a7a" "00")
    assert len(record.Records.parse(one * 3)) == 3


def test_legacy_v0_and_v1_entries():
    body0 = bytes([0, 0]) + struct.pack(">i", -1) + struct.pack(">i", 3) + b"abc"
    msg0 = struct.pack(">I", zlib.crc32(body0)) + body0
    raw0 = struct.pack(">qi", 7, len(msg0)) + msg0
    e = legacy.LegacyLogEntry.parse(raw0)
    assert e.offset == 7 and e.message_size == len(msg0)
    assert e.message.body.value.magic == 0
    assert e.message.body.value.timestamp is None
    assert e.message.body.value.key is None and e.message.body.value.value == b"abc"

    body1 = bytes([1, 8]) + struct.pack(">q", 123) + struct.pack(">i", 1) + b"k" + \
        struct.pack(">i", -1)
    msg1 = struct.pack(">I", zlib.crc32(body1)) + body1
    raw1 = struct.pack(">qi", 8, len(msg1)) + msg1
    e1 = legacy.LegacyLogEntry.parse(raw1)
    assert e1.message.body.value.timestamp == 123
    assert e1.message.body.value.attributes == 8
    assert e1.message.body.value.key == b"k" and e1.message.body.value.value is None
    assert len(legacy.LegacyMessageSet.parse(raw0 + raw1)) == 2

    bad = bytearray(raw1)
    bad[-1] ^= 1
    with pytest.raises(c.ConstructError):
        legacy.LegacyLogEntry.parse(bytes(bad))


def test_control_key_and_end_txn_marker():
    assert control.ControlRecordKey.parse(b"\x00\x00\x00\x01") == dict(version=0, type=1)
    assert control.EndTransactionMarker.build(dict(version=0, coordinator_epoch=7)) == \
        b"\x00\x00\x00\x00\x00\x07"
    assert control.control_type_name(0) == "ABORT"
    assert control.control_type_name(1) == "COMMIT"
    assert control.control_type_name(2) == "LEADER_CHANGE"
    assert control.control_type_name(99) == "UNKNOWN"


def test_index_entries():
    raw = struct.pack(">ii", 5, 4096) + struct.pack(">ii", 9, 8192)
    entries = index_entries.OffsetIndexFile.parse(raw)
    assert [(e.relative_offset, e.position) for e in entries] == [(5, 4096), (9, 8192)]
    assert index_entries.OffsetIndexFile.build(entries) == raw
    t = struct.pack(">qi", 1_700_000_000_000, 3)
    te = index_entries.TimeIndexEntry.parse(t)
    assert (te.timestamp, te.relative_offset) == (1_700_000_000_000, 3)
    assert index_entries.TimeIndexEntry.build(te) == t


def test_field_table_declares_what_field_calls_declare():
    """schema.messages.fields: one line a field (name, type, versions, attributes),
    a struct's fields indented under it, a common struct passed by its type name; the
    Fields are those the explicit declaration gives (Kafka's JSON words: nullableVersions,
    taggedVersions, tag, default)."""
    common = fields("""
        leaderId     int32  0+  default=-1
        leaderEpoch  int32  0+  default=-1
    """)
    table = fields("""
        topics            []Topic           0+
          name            string            0+  nullable=10+ default=null
          # a comment line
          maxBytes        int32             3+  default=0x7FFFFFFF
        rackId            string            11+ default=""
        currentLeader     LeaderIdAndEpoch  12+ tagged=12+ tag=1
        skip              bool              9+  default=false
    """, LeaderIdAndEpoch=common)
    explicit = [
        Field("topics", "[]Topic", "0+", fields=[
            Field("name", "string", "0+", nullable="10+", default=None),
            Field("maxBytes", "int32", "3+", default=2147483647),
        ]),
        Field("rackId", "string", "11+", default=""),
        Field("currentLeader", "LeaderIdAndEpoch", "12+", tagged="12+", tag=1,
              fields=[Field("leaderId", "int32", "0+", default=-1),
                      Field("leaderEpoch", "int32", "0+", default=-1)]),
        Field("skip", "bool", "9+", default=False),
    ]

    def shape(fs):
        return [(f.name, f.type, repr(f.versions), repr(f.nullable), repr(f.tagged), f.tag,
                 f.default(12), shape(f.fields)) for f in fs]

    assert shape(table) == shape(explicit)
    with pytest.raises(ValueError, match="unknown attribute"):
        fields("a int32 0+ nullable")
    with pytest.raises(ValueError, match="without fields"):
        fields("a SomeStruct 0+")
    with pytest.raises(ValueError, match="expected name, type, versions"):
        fields("a int32")
