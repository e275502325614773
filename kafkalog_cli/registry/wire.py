"""Confluent's wire format: the frame every Schema Registry serializer writes before the
payload (``AbstractKafkaSchemaSerDe``: a zero magic byte, the schema id as a big-endian
int32, then the payload; Protobuf adds the message-index list of
``MessageIndexes.writeTo``).

    byte 0       MAGIC_BYTE (0)
    bytes 1-4    schema id, int32 big-endian
    Protobuf:    the path to the message type in its file: a zigzag varint count N, then N
                 zigzag varint indexes (the first message of the file, the most common,
                 is written as a single 0: N = 0 stands for the path [0])
    then         the Avro binary / Protobuf / JSON payload
"""

from __future__ import annotations

import struct

from ..errors import SchemaDecodeError

#: ``AbstractKafkaSchemaSerDe.MAGIC_BYTE``
MAGIC_BYTE = 0
#: magic byte + int32 id
HEADER_SIZE = 5
#: a Protobuf message-index list longer than this is refused (a path deeper than any
#: real nesting; kafkalog's bound, against a count that claims billions)
MAX_MESSAGE_INDEXES = 256

_ID = struct.Struct(">bi")




def split_frame(data: bytes) -> tuple[int, int]:
    """``(schema id, payload start)`` of a framed ``data``.

    Raises:
        SchemaDecodeError: shorter than 5 bytes, or a magic byte other than 0
            (``Unknown magic byte!``, as ``AbstractKafkaSchemaDeserializer`` says).
    """
    if len(data) < HEADER_SIZE:
        raise SchemaDecodeError(f"not in Schema Registry's wire format: {len(data)} bytes, "
                         f"shorter than the {HEADER_SIZE}-byte header")
    magic, schema_id = _ID.unpack_from(data)
    if magic != MAGIC_BYTE:
        raise SchemaDecodeError(f"not in Schema Registry's wire format: unknown magic byte "
                         f"{magic & 0xFF}")
    return schema_id, HEADER_SIZE


def frame(schema_id: int, payload: bytes, message_indexes: list[int] | None = None) -> bytes:
    """``payload`` framed with ``schema_id`` (and, for Protobuf, ``message_indexes``:
    ``[0]`` is written as the single byte 0, as ``MessageIndexes.toByteArray``)."""
    head = _ID.pack(MAGIC_BYTE, schema_id)
    if message_indexes is None:
        return head + payload
    if message_indexes == [0]:
        return head + b"\x00" + payload
    out = bytearray(head)
    _zigzag_varint(out, len(message_indexes))
    for i in message_indexes:
        _zigzag_varint(out, i)
    return bytes(out) + payload


def read_message_indexes(data: bytes, pos: int) -> tuple[list[int], int]:
    """The Protobuf message-index list at ``pos`` and the position after it
    (``MessageIndexes.readFrom``: a count of 0 is the path ``[0]``).

    Raises:
        SchemaDecodeError: a truncated or overlong varint, a negative or too large count
            (over :data:`MAX_MESSAGE_INDEXES`), a negative index.
    """
    n, pos = _read_zigzag(data, pos)
    if n == 0:
        return [0], pos
    if n < 0 or n > MAX_MESSAGE_INDEXES:
        raise SchemaDecodeError(f"invalid Protobuf message-index count {n}")
    out = []
    for _ in range(n):
        i, pos = _read_zigzag(data, pos)
        if i < 0:
            raise SchemaDecodeError(f"invalid Protobuf message index {i}")
        out.append(i)
    return out, pos


def _read_zigzag(data: bytes, pos: int) -> tuple[int, int]:
    """A zigzag-encoded varint of at most 5 bytes (``ByteUtils.readVarint``)."""
    value = shift = 0
    end = len(data)
    while True:
        if pos >= end:
            raise SchemaDecodeError("truncated Protobuf message-index list")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift > 28:
            raise SchemaDecodeError("overlong varint in the Protobuf message-index list")
    value &= 0xFFFFFFFF
    return (value >> 1) ^ -(value & 1), pos


def _zigzag_varint(out: bytearray, v: int) -> None:
    u = ((v << 1) ^ (v >> 31)) & 0xFFFFFFFF
    while u & ~0x7F:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
