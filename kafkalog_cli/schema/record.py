"""Record (inside a v2 batch), after ``org.apache.kafka.common.record.DefaultRecord``.

    Record =>
      Length => Varint                (bytes after this field)
      Attributes => Int8              (unused, 0)
      TimestampDelta => Varlong       (relative to the batch's BaseTimestamp)
      OffsetDelta => Varint           (relative to the batch's BaseOffset)
      KeyLength => Varint             (-1 = null key)
      Key => Bytes
      ValueLength => Varint           (-1 = null value)
      Value => Bytes
      Headers => [Header]             (count as a Varint)

    Header =>
      HeaderKeyLength => Varint       (>= 0; a null header key is invalid)
      HeaderKey => String             (UTF-8)
      HeaderValueLength => Varint     (-1 = null value)
      HeaderValue => Bytes

The body must be consumed exactly: DefaultRecord.readFrom rejects a record whose fields
do not end at Length ("Invalid record size").
"""

from __future__ import annotations

import construct as c

from .primitives import NullableVarBytes, varint, varlong

Header = c.Struct(
    "key" / c.PascalString(varint, "utf8"),
    "value" / NullableVarBytes,
)

RecordBody = c.Struct(
    "attributes" / c.Int8sb,
    "timestamp_delta" / varlong,
    "offset_delta" / varint,
    "key" / NullableVarBytes,
    "value" / NullableVarBytes,
    "headers" / c.PrefixedArray(varint, Header),
    c.Terminated,
)

Record = c.Prefixed(varint, RecordBody)

#: The records of an uncompressed batch (or of a decompressed block).
Records = c.GreedyRange(Record)
