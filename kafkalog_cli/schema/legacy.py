"""Message format v0 and v1 (read only), after ``LegacyRecord`` and
``AbstractLegacyRecordBatch``.

    LogEntry =>
      Offset => Int64                 (absolute; for a compressed wrapper in v1: the last
                                       inner offset)
      MessageSize => Int32
      Message =>
        CRC => Uint32                 (CRC-32 (IEEE) over Magic..end)
        Magic => Int8                 (0 or 1)
        Attributes => Int8            (bits 0-2 codec, bit 3 timestampType in v1)
        Timestamp => Int64            (v1 only)
        Key => Bytes                  (Int32 length, -1 = null)
        Value => Bytes                (Int32 length, -1 = null; a compressed wrapper's
                                       value is the compressed inner message set)

Inner messages of a compressed wrapper carry absolute offsets in v0 and relative offsets
0..n-1 in v1 (the absolute offset of inner i is wrapper offset - (n-1) + i).
"""

from __future__ import annotations

import struct
import zlib

from . import declared_lazily


def _declare() -> dict:
    """The construct declarations (on first use: :func:`~kafkalog_cli.schema.declared_lazily`)."""
    import construct as c

    from .primitives import NullableInt32Bytes

    LegacyMessageBody = c.Struct(
        "magic" / c.Int8sb,
        "attributes" / c.Int8sb,
        "timestamp" / c.If(c.this.magic >= 1, c.Int64sb),
        "key" / NullableInt32Bytes,
        "value" / NullableInt32Bytes,
    )

    LegacyLogEntry = c.Struct(
        "offset" / c.Int64sb,
        "message_size" / c.Int32sb,
        "message" / c.FixedSized(c.this.message_size, c.Struct(
            "crc" / c.Int32ub,
            "body" / c.RawCopy(LegacyMessageBody),
            c.Check(lambda ctx: zlib.crc32(ctx.body.data) == ctx.crc),
        )),
    )

    #: A whole v0/v1 message set.
    LegacyMessageSet = c.GreedyRange(LegacyLogEntry)

    return {"LegacyMessageBody": LegacyMessageBody, "LegacyLogEntry": LegacyLogEntry,
            "LegacyMessageSet": LegacyMessageSet}


__getattr__ = declared_lazily(globals(), ("LegacyMessageBody", "LegacyLogEntry",
                                          "LegacyMessageSet"), _declare)

# Byte offsets in a log entry, each the previous one plus the size of the field before it,
# in the order of the declarations above (Records.LOG_OVERHEAD, then LegacyRecord's
# CRC_OFFSET, MAGIC_OFFSET, ATTRIBUTES_OFFSET, TIMESTAMP_OFFSET; a test checks them against
# the declarations' sizes):
_INT8, _INT32, _INT64 = (struct.calcsize(">" + code) for code in "biq")
#: Offset => Int64, MessageSize => Int32 (Records.LOG_OVERHEAD); every format starts so
LOG_OVERHEAD = _INT64 + _INT32                                          # 12
CRC_OFFSET = LOG_OVERHEAD                                               # 12
MAGIC_OFFSET = CRC_OFFSET + _INT32                                      # 16
ATTRIBUTES_OFFSET = MAGIC_OFFSET + _INT8                                # 17
TIMESTAMP_OFFSET = ATTRIBUTES_OFFSET + _INT8                            # 18 (v1)
#: Records.HEADER_SIZE_UP_TO_MAGIC: the bytes an iterator needs to see the magic
HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + _INT8                          # 17
#: LegacyRecord.RECORD_OVERHEAD_V0 / _V1: crc, magic, attributes, [timestamp,] key and
#: value lengths (the smallest MessageSize)
RECORD_OVERHEAD_V0 = (TIMESTAMP_OFFSET - CRC_OFFSET) + 2 * _INT32       # 14
RECORD_OVERHEAD_V1 = RECORD_OVERHEAD_V0 + _INT64                        # 22
