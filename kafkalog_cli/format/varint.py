"""Zigzag varints as Kafka's ``ByteUtils`` reads and writes them (struct-free twins of
:mod:`kafkalog_cli.schema.primitives`).

The hot decoders inline the one-byte case and call :func:`read_varint` for the rest.
"""

from __future__ import annotations

from ..errors import InvalidRecordError
from ..schema.primitives import encode_unsigned_varint, zigzag


def read_varint(data, pos: int, max_bytes: int = 5) -> tuple[int, int]:
    """Read a zigzag varint (``max_bytes`` 5) or varlong (10) at ``pos``.

    Returns:
        (value, position after it).

    Raises:
        InvalidRecordError: the encoding is longer than ``max_bytes`` or runs off the data.
    """
    value = 0
    shift = 0
    end = len(data)
    for _ in range(max_bytes):
        if pos >= end:
            raise InvalidRecordError("varint runs past the end of the record data")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            # Java keeps only the low 32 (64) bits of the last byte's shift
            value &= 0xFFFFFFFF if max_bytes == 5 else 0xFFFFFFFFFFFFFFFF
            return (value >> 1) ^ -(value & 1), pos
        shift += 7
    kind = "Varint" if max_bytes == 5 else "Varlong"
    raise InvalidRecordError(
        f"{kind} is too long, the most significant bit in the {max_bytes}th byte is set")


def read_varlong(data, pos: int) -> tuple[int, int]:
    """Read a zigzag varlong at ``pos``; see :func:`read_varint`."""
    return read_varint(data, pos, 10)


def varint_bytes(value: int, bits: int = 32) -> bytes:
    """``value`` zigzag-encoded (ByteUtils.writeVarint for ``bits`` 32, writeVarlong for
    64): the one varint writer (the record builder keeps a table of the small ones)."""
    return encode_unsigned_varint(zigzag(value, bits))


def write_varint(value: int, out: bytearray, bits: int = 32) -> None:
    """Append ``value`` zigzag-encoded to ``out`` (bits 32 for varint, 64 for varlong)."""
    out += varint_bytes(value, bits)


def size_of_varint(value: int, bits: int = 32) -> int:
    """Bytes :func:`write_varint` uses for ``value`` (ByteUtils.sizeOfVarint)."""
    v = zigzag(value, bits)
    n = 1
    while v >= 0x80:
        v >>= 7
        n += 1
    return n
