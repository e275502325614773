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

import construct as c
import crc32c

Attributes = c.BitStruct(
    "unused" / c.BitsInteger(9),
    "has_delete_horizon_ms" / c.Flag,   # bit 6
    "is_control_batch" / c.Flag,        # bit 5
    "is_transactional" / c.Flag,        # bit 4
    "timestamp_type" / c.BitsInteger(1),  # bit 3
    "compression" / c.BitsInteger(3),   # bits 0-2
)

#: The part of the header outside the CRC (bytes 0..16).
BatchPrefix = c.Struct(
    "base_offset" / c.Int64sb,
    "length" / c.Int32sb,
    "partition_leader_epoch" / c.Int32sb,
    "magic" / c.Int8sb,
)

#: The part covered by the CRC that precedes the records (bytes 21..61).
BatchCrcCoveredHeader = c.Struct(
    "attributes" / Attributes,
    "last_offset_delta" / c.Int32sb,
    "base_timestamp" / c.Int64sb,
    "max_timestamp" / c.Int64sb,
    "producer_id" / c.Int64sb,
    "producer_epoch" / c.Int16sb,
    "base_sequence" / c.Int32sb,
    "records_count" / c.Int32sb,
)

#: The 61-byte header: prefix, CRC, then the covered fields.
RecordBatchHeader = c.Struct(
    "prefix" / BatchPrefix,
    "crc" / c.Int32ub,
    "header" / BatchCrcCoveredHeader,
)

#: Derived offsets, as DefaultRecordBatch derives each _OFFSET from the previous one.
CRC_OFFSET = BatchPrefix.sizeof()                              # 17
ATTRIBUTES_OFFSET = CRC_OFFSET + c.Int32ub.sizeof()            # 21
RECORD_BATCH_OVERHEAD = ATTRIBUTES_OFFSET + BatchCrcCoveredHeader.sizeof()  # 61

#: A whole batch with its CRC checked: parses only when CRC-32C(attributes..end) matches.
RecordBatch = c.Struct(
    "prefix" / BatchPrefix,
    c.Check(c.this.prefix.magic == 2),
    "crc_position" / c.Tell,
    "crc" / c.Int32ub,
    "covered" / c.RawCopy(c.Struct(
        "header" / BatchCrcCoveredHeader,
        "records" / c.Bytes(c.this._.prefix.length - (RECORD_BATCH_OVERHEAD - 12)),
    )),
    c.Check(lambda ctx: crc32c.crc32c(ctx.covered.data) == ctx.crc),
)
