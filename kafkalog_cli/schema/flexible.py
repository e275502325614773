"""Kafka's protocol primitive types (``org.apache.kafka.common.protocol.types``) as construct
declarations, each declared once and reused by every generated-message schema.

    int8 / int16 / int32 / int64  => big-endian signed          (Readable.readByte/Short/Int/Long)
    uint16 / uint32               => big-endian unsigned        (readUnsignedShort / Int)
    float64                       => IEEE 754 big-endian double (readDouble)
    bool                          => one byte, non-zero = true
    uuid                          => 16 bytes, shown as Uuid.toString: base64url, no padding
    unsigned varint               => LEB128, 1..5 bytes         (ByteUtils.readUnsignedVarint)

    String                => int16 length (-1 = null when nullable), UTF-8 bytes
    CompactString         => unsigned varint length+1 (0 = null when nullable), UTF-8 bytes
    Bytes                 => int32 length (-1 = null), bytes
    CompactBytes          => unsigned varint length+1 (0 = null), bytes
    Array[T]              => int32 count (-1 = null), T...
    CompactArray[T]       => unsigned varint count+1 (0 = null), T...

    TaggedFields =>                              (flexible versions only, closes every struct)
      NumTaggedFields => UnsignedVarint
      [Tag => UnsignedVarint, Size => UnsignedVarint, Data => Size bytes]

Strings decode as Java's ``new String(bytes, UTF_8)`` does (``schema.utf8.java_utf8``):
malformed UTF-8 is replaced, as many U+FFFD as the JDK gives, never an error. A null where the field is not nullable raises
``construct.ValidationError`` ("non-nullable field was serialized as null"), as Kafka's
generated readers raise RuntimeException.
"""

from __future__ import annotations

import base64
import io
import struct

import construct as c

from .deferred import DeferredBytes
from .primitives import encode_unsigned_varint
from .utf8 import java_utf8

# -- errors as Kafka's generated readers word them ------------------------------------------


class KafkaReadError(c.ValidationError):
    """A parse failure that also carries the message Kafka's generated reader (and its
    ``ByteBufferAccessor``) throws for the same bytes, in :attr:`java`: the text
    DumpLogSegments prints after ``due to:``. A ``{field}`` in it is filled with the name
    of the field being read by the enclosing message struct (:attr:`field`).
    """

    def __init__(self, message: str, java: str, *, path=None):
        super().__init__(message, path=path)
        self.java_template = java
        self.field: str | None = None
        self.in_element = False  # raised reading an element of an array of strings/bytes

    @property
    def java(self) -> str:
        return self.java_template.replace("{field}", self.field or "?")


def java_message(exc: BaseException) -> str:
    """What ``getMessage()`` of the exception Kafka's generated reader throws at the same
    point gives: the :class:`KafkaReadError` text, ``"null"`` for a read past the end
    (a ``BufferUnderflowException``, which has no message), else kafkalog's own text."""
    if isinstance(exc, KafkaReadError):
        return exc.java
    if isinstance(exc, c.StreamError):
        return "null"
    if isinstance(exc, c.ConstructError):
        return str(exc).split("\n", 1)[-1] if str(exc).startswith("Error in path") else str(exc)
    return str(exc)


#: The key of a parse's or build's context holding how many more array elements (and
#: tagged fields) it may read or write (absent: no bound); see :func:`count_elements`.
ELEMENTS_LEFT = "_elementsLeft"
#: The context key holding the bound itself (for the error message).
ELEMENTS_BOUND = "_elementsBound"
#: The prefix of the :class:`KafkaReadError` raised when that count runs out (the
#: whole message: ``"<prefix> N"``, N the bound), so a caller can tell it from bad bytes.
TOO_MANY_ELEMENTS = "more array elements and tagged fields than the bound of"


def count_elements(context, n: int, path) -> None:
    """Charge ``n`` array elements (or tagged fields) to the bound in ``context`` (see
    :data:`ELEMENTS_LEFT`), before any of them is read or written, so a count of millions
    costs nothing when it does not fit.

    Raises:
        KafkaReadError: the bound is exceeded (its message starts with
            :data:`TOO_MANY_ELEMENTS`).
    """
    left = context.get(ELEMENTS_LEFT) if context else None
    if left is None:
        return
    left -= n
    context[ELEMENTS_LEFT] = left
    if left < 0:
        bound = context.get(ELEMENTS_BOUND, "?")
        message = f"{TOO_MANY_ELEMENTS} {bound}"
        raise KafkaReadError(message, message, path=path)


def element_context(bound: int | None) -> dict:
    """A parse or build context counting elements against ``bound`` (None: no bound)."""
    return {} if bound is None else {ELEMENTS_LEFT: bound, ELEMENTS_BOUND: bound}


def elements_used(context: dict) -> int:
    """The elements a parse or build with :func:`element_context` has counted."""
    return context.get(ELEMENTS_BOUND, 0) - context.get(ELEMENTS_LEFT, 0)


def _byte_array_error(what: str, size: int, remaining: int, path) -> KafkaReadError:
    """ByteBufferAccessor.readArray's refusal (strings, bytes, unknown tagged fields)."""
    return KafkaReadError(f"{what} of {size} bytes runs past the end ({remaining} left)",
                          f"Error reading byte array of {size} byte(s): only {remaining} "
                          "byte(s) available", path=path)


# -- fixed-size numbers ---------------------------------------------------------------------

int8 = c.Int8sb
int16 = c.Int16sb
int32 = c.Int32sb
int64 = c.Int64sb
uint16 = c.Int16ub
uint32 = c.Int32ub
float64 = c.Float64b
boolean = c.Flag


class UnsignedVarint(c.Construct):
    """Kafka's unsigned varint (LEB128, at most 5 bytes, value < 2**32).

    :raises construct.ValidationError: when the fifth byte still has its continuation bit.
    """

    def _parse(self, stream, context, path):
        value = 0
        for i in range(5):
            b = c.stream_read(stream, 1, path)[0]
            value |= (b & 0x7F) << (7 * i)
            if b < 0x80:
                return value
        # ByteUtils.readUnsignedVarint: the 5th (signed) byte shifted by 28, as an int
        converted = ((value & 0x0FFFFFFF) | ((b - 256) << 28)) & 0xFFFFFFFF
        raise KafkaReadError("Varint is too long, the most significant bit in the 5th byte "
                             "is set", "Varint is too long, the most significant bit in the "
                             f"5th byte is set, converted value: {converted:x}", path=path)

    def _build(self, obj, stream, context, path):
        if not 0 <= obj < 1 << 32:
            raise c.IntegerError(f"{obj} does not fit an unsigned varint", path=path)
        _write(stream, encode_unsigned_varint(obj), path)
        return obj

    def _sizeof(self, context, path):
        raise c.SizeofError("unsigned varint has variable size", path=path)


def _write(stream, data: bytes, path) -> None:
    c.stream_write(stream, data, len(data), path)


unsigned_varint = UnsignedVarint()

# -- uuid -------------------------------------------------------------------------------------

#: Uuid.ZERO_UUID in its string form.
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"


def uuid_to_string(raw: bytes) -> str:
    """Uuid.toString: the 16 bytes in base64url without padding (22 characters)."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def uuid_from_string(text: str) -> bytes:
    """Uuid.fromString: 22 base64url characters back to 16 bytes.

    :raises ValueError: when ``text`` does not decode to exactly 16 bytes.
    """
    raw = base64.urlsafe_b64decode(text + "==")
    if len(raw) != 16:
        raise ValueError(f"Input string with prohibited length: {text!r}")
    return raw


class _Uuid(c.Construct):
    def _parse(self, stream, context, path):
        return uuid_to_string(c.stream_read(stream, 16, path))

    def _build(self, obj, stream, context, path):
        c.stream_write(stream, uuid_from_string(obj), 16, path)
        return obj

    def _sizeof(self, context, path):
        return 16


#: 16 bytes <-> Kafka's Uuid string form.
uuid = _Uuid()

# -- length-prefixed strings and bytes ---------------------------------------------------------

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class _LengthPrefixed(c.Construct):
    """Shared body of the string and bytes types.

    :param compact: unsigned varint length+1 (flexible) instead of int16/int32.
    :param wide: int32 length (bytes) instead of int16 (strings); ignored when compact.
    :param text: decode UTF-8 to str.
    :param nullable: null (length -1 / 0) allowed; parses to None.
    """

    def __init__(self, *, compact: bool, wide: bool, text: bool, nullable: bool):
        super().__init__()
        self.compact, self.wide, self.text, self.nullable = compact, wide, text, nullable

    def _parse(self, stream, context, path):
        if self.compact:
            n = unsigned_varint._parse(stream, context, path) - 1
        elif self.wide:
            n = _I32.unpack(c.stream_read(stream, 4, path))[0]
        else:
            n = _I16.unpack(c.stream_read(stream, 2, path))[0]
        what = "string" if self.text else "bytes"
        if n < 0:
            if n == -1 and self.nullable:
                return None
            java = "non-nullable field {field} was serialized as null"
            if n == -1:
                raise KafkaReadError(f"non-nullable {what} field was serialized as null",
                                     java, path=path)
            if self.nullable:  # Kafka reads any negative length of a nullable field as null
                java = f"{what} field had negative length {n}"
            raise KafkaReadError(f"{what} field had negative length {n}", java, path=path)
        if self.text and n > 0x7FFF:
            raise KafkaReadError(f"string field had invalid length {n}",
                                 f"string field {{field}} had invalid length {n}", path=path)
        remaining = _remaining(stream)
        if remaining is not None and n > remaining:
            raise _byte_array_error(what, n, remaining, path)
        data = c.stream_read(stream, n, path)
        return java_utf8(data) if self.text else data

    def _build(self, obj, stream, context, path):
        if obj is None:
            if not self.nullable:
                raise c.ValidationError("null value for a non-nullable field", path=path)
            data, n = b"", -1
        elif isinstance(obj, DeferredBytes):
            n = len(obj)
            defer = getattr(stream, "defer", None)
            if defer is None:
                data = bytes(obj)
            else:
                _write(stream, self._prefix(n), path)
                defer(obj)
                return obj
        else:
            data = obj.encode("utf-8") if self.text else bytes(obj)
            n = len(data)
            if not self.compact and not self.wide and n > 0x7FFF:
                raise c.ValidationError(f"string of {n} bytes is longer than 32767", path=path)
        _write(stream, self._prefix(n) + data, path)
        return obj

    def _prefix(self, n: int) -> bytes:
        if self.compact:
            return encode_unsigned_varint(n + 1)
        return _I32.pack(n) if self.wide else _I16.pack(n)

    def _sizeof(self, context, path):
        raise c.SizeofError("variable size", path=path)


string = _LengthPrefixed(compact=False, wide=False, text=True, nullable=False)
nullable_string = _LengthPrefixed(compact=False, wide=False, text=True, nullable=True)
compact_string = _LengthPrefixed(compact=True, wide=False, text=True, nullable=False)
compact_nullable_string = _LengthPrefixed(compact=True, wide=False, text=True, nullable=True)
bytes_ = _LengthPrefixed(compact=False, wide=True, text=False, nullable=False)
nullable_bytes = _LengthPrefixed(compact=False, wide=True, text=False, nullable=True)
compact_bytes = _LengthPrefixed(compact=True, wide=True, text=False, nullable=False)
compact_nullable_bytes = _LengthPrefixed(compact=True, wide=True, text=False, nullable=True)

# -- arrays -----------------------------------------------------------------------------------


class KafkaArray(c.Subconstruct):
    """A count-prefixed array of ``subcon``: int32 count, or unsigned varint count+1 when
    ``compact``; null (-1 / 0) parses to None when ``nullable``.

    :raises construct.ValidationError: a null count for a non-nullable array, or a count
        larger than the bytes left could hold.
    """

    def __init__(self, subcon, *, compact: bool, nullable: bool):
        super().__init__(subcon)
        self.compact, self.nullable = compact, nullable

    def _parse(self, stream, context, path):
        if self.compact:
            n = unsigned_varint._parse(stream, context, path) - 1
        else:
            n = _I32.unpack(c.stream_read(stream, 4, path))[0]
        if n < 0:
            if n == -1 and self.nullable:
                return None
            raise KafkaReadError(f"non-nullable array field had count {n}",
                                 "non-nullable field {field} was serialized as null"
                                 if n == -1 or not self.nullable
                                 else f"array field had count {n}", path=path)
        # each element takes at least one byte: refuse counts the data cannot hold
        remaining = _remaining(stream)
        if remaining is not None and n > remaining:
            raise KafkaReadError(f"array count {n} exceeds the {remaining} bytes left",
                                 f"Tried to allocate a collection of size {n}, but there are "
                                 f"only {remaining} bytes remaining.", path=path)
        count_elements(context, n, path)
        parse = self.subcon._parsereport
        try:
            return [parse(stream, context, path) for _ in range(n)]
        except KafkaReadError as e:
            if e.field is None:  # Kafka names it "<field> element"
                e.in_element = True
            raise

    def _build(self, obj, stream, context, path):
        if obj is None:
            if not self.nullable:
                raise c.ValidationError("null value for a non-nullable array", path=path)
            n = -1
        else:
            n = len(obj)
            count_elements(context, n, path)
        prefix = encode_unsigned_varint(n + 1) if self.compact else _I32.pack(n)
        _write(stream, prefix, path)
        if obj is not None:
            for item in obj:
                self.subcon._build(item, stream, context, path)
        return obj

    def _sizeof(self, context, path):
        raise c.SizeofError("variable size", path=path)


def _remaining(stream) -> int | None:
    try:
        pos = stream.tell()
        end = stream.seek(0, 2)
        stream.seek(pos)
        return end - pos
    except (OSError, AttributeError):
        return None


def array(subcon) -> KafkaArray:
    """Array[T]: int32 count then the elements."""
    return KafkaArray(subcon, compact=False, nullable=False)


def nullable_array(subcon) -> KafkaArray:
    return KafkaArray(subcon, compact=False, nullable=True)


def compact_array(subcon) -> KafkaArray:
    """CompactArray[T]: unsigned varint count+1 then the elements."""
    return KafkaArray(subcon, compact=True, nullable=False)


def compact_nullable_array(subcon) -> KafkaArray:
    return KafkaArray(subcon, compact=True, nullable=True)


class NullableStruct(c.Subconstruct):
    """A nullable struct field: int8 marker (-1 = null, else present) then the struct; in
    a tagged field, an unsigned varint marker (0 = null, 1 = present), as Kafka's
    generated code reads (``readUnsignedVarint() <= 0``) and writes a tagged struct.

    :param tagged: the struct is the value of a tagged field.
    """

    def __init__(self, subcon, *, tagged: bool = False):
        super().__init__(subcon)
        self.tagged = tagged

    def _parse(self, stream, context, path):
        if self.tagged:
            if unsigned_varint._parse(stream, context, path) == 0:
                return None
        elif c.stream_read(stream, 1, path)[0] >= 0x80:  # negative int8
            return None
        return self.subcon._parsereport(stream, context, path)

    def _build(self, obj, stream, context, path):
        if obj is None:
            c.stream_write(stream, b"\x00" if self.tagged else b"\xff", 1, path)
            return obj
        c.stream_write(stream, b"\x01", 1, path)
        self.subcon._build(obj, stream, context, path)
        return obj

    def _sizeof(self, context, path):
        raise c.SizeofError("variable size", path=path)


# -- tagged fields ----------------------------------------------------------------------------

#: Key under which :class:`TaggedFields` keeps tags it has no declaration for.
UNKNOWN_TAGS = "_unknownTaggedFields"


class TaggedFields(c.Construct):
    """The tagged-field section that ends every struct in a flexible version.

    Parses into a dict ``{name: value}`` of the known tags present, plus, when any tag is
    not declared, ``UNKNOWN_TAGS: [(tag, raw bytes), ...]`` (Kafka's RawTaggedField).
    Builds from the same shape, writing tags in ascending order; known names that are
    absent from the dict are not written.

    :param known: ``{tag: (name, construct)}``.
    :raises construct.ValidationError: a known tag's data does not parse.
    """

    def __init__(self, known: dict[int, tuple[str, c.Construct]] | None = None):
        super().__init__()
        self.known = dict(known or {})

    def _parse(self, stream, context, path):
        out = {}
        count = unsigned_varint._parse(stream, context, path)
        count_elements(context, count, path)
        for _ in range(count):
            tag = unsigned_varint._parse(stream, context, path)
            size = unsigned_varint._parse(stream, context, path)
            spec = self.known.get(tag)
            remaining = _remaining(stream)
            if spec is None and remaining is not None and size > remaining:
                raise _byte_array_error("tagged field", size, remaining, path)
            data = c.stream_read(stream, size, path)
            if spec is None:
                out.setdefault(UNKNOWN_TAGS, []).append((tag, data))
            else:
                name, subcon = spec
                try:
                    # the parse's context: its arrays count against the same bound
                    out[name] = subcon._parsereport(io.BytesIO(data), context, path)
                except c.ConstructError as e:
                    raise c.ValidationError(f"tagged field {tag} ({name}): {e}",
                                            path=path) from None
        return out

    def _build(self, obj, stream, context, path):
        entries = []
        for tag, (name, subcon) in self.known.items():
            if name in obj:
                sub = io.BytesIO()
                subcon._build(obj[name], sub, context, path)
                entries.append((tag, sub.getvalue()))
        entries.extend(obj.get(UNKNOWN_TAGS, ()))
        count_elements(context, len(entries), path)
        entries.sort(key=lambda e: e[0])
        out = bytearray(encode_unsigned_varint(len(entries)))
        for tag, data in entries:
            out += encode_unsigned_varint(tag)
            out += encode_unsigned_varint(len(data))
            out += data
        _write(stream, bytes(out), path)
        return obj

    def _sizeof(self, context, path):
        raise c.SizeofError("variable size", path=path)


#: A tagged-field section with no declared tags (every tag kept raw).
empty_tagged_fields = TaggedFields()

# -- type table ---------------------------------------------------------------------------------

#: Fixed-size types by Kafka's JSON type name.
FIXED_TYPES: dict[str, c.Construct] = {
    "bool": boolean,
    "int8": int8,
    "int16": int16,
    "uint16": uint16,
    "int32": int32,
    "uint32": uint32,
    "int64": int64,
    "float64": float64,
    "uuid": uuid,
}


def variable_type(name: str, *, flexible: bool, nullable: bool) -> c.Construct:
    """The construct for Kafka's ``string`` / ``bytes`` / ``records`` type in the given
    encoding (compact when ``flexible``)."""
    if name == "string":
        table = ((string, nullable_string), (compact_string, compact_nullable_string))
    elif name in ("bytes", "records"):
        table = ((bytes_, nullable_bytes), (compact_bytes, compact_nullable_bytes))
    else:
        raise KeyError(name)
    return table[flexible][nullable]


def array_of(subcon, *, flexible: bool, nullable: bool) -> KafkaArray:
    """Array or compact array of ``subcon``."""
    return KafkaArray(subcon, compact=flexible, nullable=nullable)
