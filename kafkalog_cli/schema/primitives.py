"""Kafka's primitive types as construct declarations.

    varint  => zigzag-encoded signed int32, 1..5 bytes   (ByteUtils.readVarint)
    varlong => zigzag-encoded signed int64, 1..10 bytes  (ByteUtils.readVarlong)

construct's ``ZigZag`` has no length limit, while Kafka rejects a varint whose fifth byte
still has its continuation bit set ("Varint is too long"). ``KafkaVarint`` adds that cap.

The declarations (``KafkaVarint``, ``varint``, ``varlong``, ``NullableVarBytes``,
``NullableInt32Bytes``) are built on first use (see :mod:`kafkalog_cli.schema`); the
varint encoders below are plain functions.
"""

from __future__ import annotations

from . import declared_lazily


def encode_unsigned_varint(value: int) -> bytes:
    """The LEB128 bytes of ``value`` (>= 0): ByteUtils.writeUnsignedVarint, and the bytes
    of every varint kafkalog writes (zigzag-encoded first for the signed ones)."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def zigzag(value: int, bits: int = 32) -> int:
    """ByteUtils' zigzag encoding of a signed ``bits``-bit ``value`` (32: varint, 64:
    varlong), ready for :func:`encode_unsigned_varint`."""
    return ((value << 1) ^ (value >> (bits - 1))) & ((1 << bits) - 1)


def _declare() -> dict:
    """The construct declarations (on first use: :func:`~kafkalog_cli.schema.declared_lazily`)."""
    import construct as c

    class KafkaVarint(c.Construct):
        """A zigzag varint capped at ``max_bytes`` bytes, as Kafka's ByteUtils reads it.

        Parses into an int. Builds from an int in range. Size is 1..max_bytes.

        :param max_bytes: 5 for Kafka's varint (int32), 10 for its varlong (int64).
        :raises construct.ValidationError: when the encoding is longer than ``max_bytes``.
        """

        def __init__(self, max_bytes: int):
            super().__init__()
            self.max_bytes = max_bytes
            self.bits = 32 if max_bytes == 5 else 64

        def _parse(self, stream, context, path):
            value = 0
            shift = 0
            for _ in range(self.max_bytes):
                b = c.byte2int(c.stream_read(stream, 1, path))
                value |= (b & 0x7F) << shift
                if not b & 0x80:
                    value &= (1 << self.bits) - 1  # as Java's int/long shift drops the rest
                    return (value >> 1) ^ -(value & 1)
                shift += 7
            kind = "Varint" if self.max_bytes == 5 else "Varlong"
            raise c.ValidationError(
                f"{kind} is too long, the most significant bit in the {self.max_bytes}th byte is set",
                path=path)

        def _build(self, obj, stream, context, path):
            lo, hi = -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
            if not lo <= obj <= hi:
                raise c.IntegerError(f"{obj} does not fit a {self.bits}-bit varint", path=path)
            out = encode_unsigned_varint(zigzag(obj, self.bits))
            c.stream_write(stream, out, len(out), path)
            return obj

        def _sizeof(self, context, path):
            raise c.SizeofError("varint has variable size", path=path)

    KafkaVarint.__qualname__ = "KafkaVarint"  # its name at module level, where it is found
    varint = KafkaVarint(5)
    varlong = KafkaVarint(10)

    #: When building, the null branch applies only to None (else Select would pick it for any
    #: value, since Const and Computed ignore what they are given); when parsing, always.
    _only_for_none = c.Check(lambda ctx: ctx.get("data") is None)

    #: varint length (-1 = null) followed by that many bytes (DefaultRecord key/value).
    NullableVarBytes = c.Select(
        c.FocusedSeq("data", _only_for_none, "length" / c.Const(-1, varint),
                     "data" / c.Computed(None)),
        c.Prefixed(varint, c.GreedyBytes),
    )

    #: int32 length (-1 = null) followed by that many bytes (LegacyRecord key/value).
    NullableInt32Bytes = c.Select(
        c.FocusedSeq("data", _only_for_none, "length" / c.Const(-1, c.Int32sb),
                     "data" / c.Computed(None)),
        c.Prefixed(c.Int32sb, c.GreedyBytes),
    )

    return {"KafkaVarint": KafkaVarint, "varint": varint, "varlong": varlong,
            "NullableVarBytes": NullableVarBytes, "NullableInt32Bytes": NullableInt32Bytes}


__getattr__ = declared_lazily(globals(), ("KafkaVarint", "varint", "varlong",
                                          "NullableVarBytes", "NullableInt32Bytes"), _declare)
