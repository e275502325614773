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

import zlib

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
