"""RecordBatch v2 (magic 2), after ``org.apache.kafka.common.record.DefaultRecordBatch``.

    RecordBatch =>
      BaseOffset => Int64
      Length => Int32                 (bytes after this field)
      PartitionLeaderEpoch => Int32
      Magic => Int8                   (2)
      CRC => Uint32                   (CRC-32C over Attributes..end)
      Attributes => Int16
      LastOffsetDelta => Int32
      BaseTimestamp => Int64          (the delete horizon when bit 6 of Attributes is set)
      MaxTimestamp => Int64
      ProducerId => Int64
      ProducerEpoch => Int16
      BaseSequence => Int32
      RecordsCount => Int32
      Records => [Record]             (compressed as one block when Attributes bits 0-2 say so)

    Attributes (Int16, only the low byte is used)
      bit 15..7  unused
      bit 6      hasDeleteHorizonMs
      bit 5      isControlBatch
      bit 4      isTransactional
      bit 3      timestampType (0 CreateTime, 1 LogAppendTime)
      bit 2..0   compression codec (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)

BaseOffset, Length and PartitionLeaderEpoch lie outside the CRC, so a broker can assign
offsets and epochs without recomputing it.
"""

from __future__ import annotations

import struct

from . import declared_lazily

#: The header's fields in Kafka's order, ``(name, struct code)`` (construct's codes for
#: Int8sb, Int16sb, Int32sb, Int64sb, Int32ub): the part outside the CRC
#: (bytes 0..16), the CRC, then the part the CRC covers (bytes 21..61), before the records.
#: The construct declarations below are built from the same lists (Attributes is read as
#: Kafka's Int16; its declaration names the bits).
PREFIX_FIELDS = (("base_offset", "q"), ("length", "l"), ("partition_leader_epoch", "l"),
                 ("magic", "b"))
CRC_FIELD = ("crc", "L")
COVERED_FIELDS = (("attributes", "h"), ("last_offset_delta", "l"), ("base_timestamp", "q"),
                  ("max_timestamp", "q"), ("producer_id", "q"), ("producer_epoch", "h"),
                  ("base_sequence", "l"), ("records_count", "l"))


def _declare() -> dict:
    """The construct declarations (on first use: :func:`~kafkalog_cli.schema.declared_lazily`)."""
    import construct as c

    Attributes = c.BitStruct(
        "unused" / c.BitsInteger(9),
        "has_delete_horizon_ms" / c.Flag,   # bit 6
        "is_control_batch" / c.Flag,        # bit 5
        "is_transactional" / c.Flag,        # bit 4
        "timestamp_type" / c.BitsInteger(1),  # bit 3
        "compression" / c.BitsInteger(3),   # bits 0-2
    )
    types = {"b": c.Int8sb, "h": c.Int16sb, "l": c.Int32sb, "q": c.Int64sb, "L": c.Int32ub}

    def fields(table):
        return [name / (Attributes if name == "attributes" else types[code])
                for name, code in table]

    #: The part of the header outside the CRC (bytes 0..16).
    BatchPrefix = c.Struct(*fields(PREFIX_FIELDS))

    #: The part covered by the CRC that precedes the records (bytes 21..61).
    BatchCrcCoveredHeader = c.Struct(*fields(COVERED_FIELDS))

    #: The 61-byte header: prefix, CRC, then the covered fields.
    RecordBatchHeader = c.Struct(
        "prefix" / BatchPrefix,
        *fields((CRC_FIELD,)),
        "header" / BatchCrcCoveredHeader,
    )

    #: A whole batch with its CRC checked: parses only when CRC-32C(attributes..end) matches.
    RecordBatch = c.Struct(
        "prefix" / BatchPrefix,
        c.Check(c.this.prefix.magic == 2),
        "crc_position" / c.Tell,
        *fields((CRC_FIELD,)),
        "covered" / c.RawCopy(c.Struct(
            "header" / BatchCrcCoveredHeader,
            "records" / c.Bytes(c.this._.prefix.length - MIN_BATCH_LENGTH),
        )),
        c.Check(lambda ctx: _crc32c(ctx.covered.data) == ctx.crc),
    )
    return {"Attributes": Attributes, "BatchPrefix": BatchPrefix,
            "BatchCrcCoveredHeader": BatchCrcCoveredHeader,
            "RecordBatchHeader": RecordBatchHeader, "RecordBatch": RecordBatch}


__getattr__ = declared_lazily(globals(), ("Attributes", "BatchPrefix", "BatchCrcCoveredHeader",
                                          "RecordBatchHeader", "RecordBatch"), _declare)


def _derive_fields() -> tuple[tuple[str, str, int], ...]:
    out = []
    at = 0
    for name, code in (*PREFIX_FIELDS, CRC_FIELD, *COVERED_FIELDS):
        out.append((name, code, at))
        at += struct.calcsize(">" + code)
    return tuple(out)


#: ``(name, struct code, offset)`` of each header field in order, derived from the field
#: lists above: each offset is the previous one plus its size, as DefaultRecordBatch
#: derives each ``_OFFSET`` from the previous ``_OFFSET`` and ``_LENGTH``.
HEADER_FIELDS: tuple[tuple[str, str, int], ...] = _derive_fields()
# DefaultRecordBatch's _OFFSET constants: 0, 8, 12, 16, 17, 21, 23, 27, 35, 43, 51, 53, 57
(BASE_OFFSET_OFFSET, LENGTH_OFFSET, PARTITION_LEADER_EPOCH_OFFSET, MAGIC_OFFSET, CRC_OFFSET,
 ATTRIBUTES_OFFSET, LAST_OFFSET_DELTA_OFFSET, BASE_TIMESTAMP_OFFSET, MAX_TIMESTAMP_OFFSET,
 PRODUCER_ID_OFFSET, PRODUCER_EPOCH_OFFSET, BASE_SEQUENCE_OFFSET, RECORDS_COUNT_OFFSET) = (
    at for _, _, at in HEADER_FIELDS)
#: Records.LOG_OVERHEAD: baseOffset and length, before what ``length`` counts.
LOG_OVERHEAD = PARTITION_LEADER_EPOCH_OFFSET                         # 12
#: the header's size (DefaultRecordBatch.RECORD_BATCH_OVERHEAD): where the records start
RECORDS_OFFSET = RECORD_BATCH_OVERHEAD = (
    RECORDS_COUNT_OFFSET + struct.calcsize(">" + HEADER_FIELDS[-1][1]))  # 61
#: The smallest ``length`` of a v2 batch (a header without records).
MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD              # 49


def header_format(*names: str) -> str:
    """A ``struct`` format reading the named header fields (in header order), skipping
    the others with pad bytes and stopping after the last one named: the one layout
    every fast header reader unpacks (``format.records.HEADER``, the recovery scan's).

    Raises:
        ValueError: an unknown name, or names out of header order.
    """
    want = list(names)
    fmt = ">"
    at = 0
    for name, code, offset in HEADER_FIELDS:
        if not want:
            break
        if name != want[0]:
            continue
        if offset > at:
            fmt += f"{offset - at}x"
        fmt += code
        at = offset + struct.calcsize(">" + code)
        want.pop(0)
    if want:
        raise ValueError(f"not header fields in header order: {want}")
    return fmt


def _crc32c(data) -> int:
    """CRC-32C (:mod:`kafkalog_cli.crc`, loaded on first use)."""
    from ..crc import crc32c

    return crc32c(data)
