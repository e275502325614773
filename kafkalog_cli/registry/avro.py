"""Avro payloads, with fastavro: decoding to Avro's JSON encoding (what
kafka-avro-console-consumer prints: ``AvroMessageFormatter`` writes the record with Avro's
``JsonEncoder``), decoding with schema resolution (a writer's schema read as the subject's
newest), and encoding from the JSON encoding (what kafka-avro-console-producer reads).

The JSON encoding (the Avro specification's): a union is ``null`` or ``{"<branch>":
value}`` (the branch's full name for a record, enum or fixed, else its type name),
``bytes`` and ``fixed`` are strings of the code points 0-255 (ISO-8859-1). Logical types
print as their underlying type (the console consumer's deserializer converts none:
``avro.use.logical.type.converters`` is false), so schemas are read with their
``logicalType`` attributes set aside; the Arrow types (:mod:`.arrow`) keep them.

A union holding both ``int`` and ``long`` (or ``float`` and ``double``) is printed with
the first of them: fastavro returns a plain number and not the branch it read.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable

from ..errors import SchemaDecodeError

#: primitive type names
PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")




#: the most items of zero-byte types (``null``, a ``fixed`` of size 0, a record of such
#: fields) one datum's arrays may hold: their count is not bounded by the payload's size
#: (a 10-byte payload can claim 2^62 nulls, which fastavro would build as a list), so a
#: payload claiming more is refused before fastavro reads it
MAX_ZERO_WIDTH_ITEMS = 1_000_000
#: the deepest nesting of a recursive schema's values decoded: fastavro's compiled reader
#: recurses in C and overflows the stack past a few thousand levels (a 100 KB payload of
#: a linked list crashed the process), and the JSON written of a value (orjson) stops at
#: 255 levels of arrays and objects
MAX_NESTING = 200


def _zero_width(schema, named: dict, seen: frozenset = frozenset()) -> bool:
    """Whether values of ``schema`` (fastavro's parsed form) always take zero bytes."""
    if isinstance(schema, str):
        if schema == "null":
            return True
        if schema in PRIMITIVES or schema in seen or schema not in named:
            return False
        return _zero_width(named[schema], named, seen | {schema})
    if isinstance(schema, list):
        return False  # a union's branch index takes at least one byte
    t = schema.get("type")
    if t == "fixed":
        return schema.get("size") == 0
    if t == "record" or t == "error":
        name = schema.get("name")
        inner = seen | {name} if name else seen
        return all(_zero_width(f["type"], named, inner) for f in schema.get("fields", ()))
    if isinstance(t, (str, list, dict)) and t not in ("array", "map", "enum"):
        return _zero_width(t, named, seen)
    return False


def _children(s) -> list:
    """The schemas directly inside ``s`` (fastavro's parsed form); a name has none."""
    if isinstance(s, list):
        return s
    if not isinstance(s, dict):
        return []
    t = s.get("type")
    if t == "array":
        return [s["items"]]
    if t == "map":
        return [s["values"]]
    if t in ("record", "error"):
        return [f["type"] for f in s.get("fields", ())]
    return [t] if isinstance(t, (list, dict, str)) and t not in PRIMITIVES else []


def _names_in(schema, named: dict) -> set[str]:
    """The named types ``schema``'s own definition uses (not looking inside them)."""
    out, stack = set(), _children(schema)
    while stack:
        s = stack.pop()
        if isinstance(s, str):
            if s in named:
                out.add(s)
        elif isinstance(s, dict) and s.get("type") in ("record", "error", "enum", "fixed") \
                and "name" in s:
            out.add(s["name"])  # a named type defined here: its own entry in ``named``
        else:
            stack.extend(_children(s))
    return out


def is_recursive(schema, named: dict) -> bool:
    """Whether a named type of ``schema`` contains itself (a linked list, a tree): the
    nesting of its values is then bounded only by the payload's size."""
    uses = {n: _names_in(named[n], named) for n in named}
    state: dict[str, int] = {}  # 1: on the path, 2: done
    for root in [*_names_in(schema, named), *(
            [schema["name"]] if isinstance(schema, dict) and schema.get("name") in named
            else [])]:
        stack = [(root, iter(uses.get(root, ())))]
        state[root] = state.get(root, 1) if state.get(root) == 2 else 1
        if state[root] == 2:
            continue
        while stack:
            name, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[name] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return True
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(uses.get(nxt, ()))))
    return False


def needs_count_guard(schema, named: dict) -> bool:
    """Whether ``schema`` holds an array of zero-byte items anywhere, or is recursive
    (checked by :func:`check_item_counts` before each decode: the counts, and the
    nesting within :data:`MAX_NESTING`)."""
    if is_recursive(schema, named):
        return True
    stack, seen = [schema], set()
    while stack:
        s = stack.pop()
        if isinstance(s, str):
            if s in named and s not in seen:
                seen.add(s)
                stack.append(named[s])
            continue
        if isinstance(s, dict) and s.get("type") == "array" and _zero_width(s["items"], named):
            return True
        stack.extend(_children(s))
    return False


class _Cursor:
    __slots__ = ("buf", "pos", "items")

    def __init__(self, buf):
        self.buf, self.pos, self.items = buf, 0, 0

    def long(self) -> int:
        shift = result = 0
        buf, pos = self.buf, self.pos
        while True:
            if pos >= len(buf) or shift > 63:
                raise EOFError("Avro varint runs past the payload")
            b = buf[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
        self.pos = pos
        return (result >> 1) ^ -(result & 1)

    def skip(self, n: int) -> None:
        if n < 0 or self.pos + n > len(self.buf):
            raise EOFError("Avro value runs past the payload")
        self.pos += n


def check_item_counts(payload: bytes, schema, named: dict) -> None:
    """Walk an Avro binary ``payload`` as ``schema`` writes it, counting the items of
    zero-byte types its arrays claim, before fastavro builds them.

    Raises:
        ValueError: more than :data:`MAX_ZERO_WIDTH_ITEMS` such items.
        EOFError: the payload ends inside a value.
    """
    cur = _Cursor(memoryview(payload))
    limit = sys.getrecursionlimit()
    if limit < MAX_NESTING * 5:  # Python frames only (3.11+): no C stack is at stake
        sys.setrecursionlimit(MAX_NESTING * 5)
    try:
        _walk(cur, schema, named, 0)
    finally:
        sys.setrecursionlimit(limit)


_FIXED_WIDTH = {"null": 0, "boolean": 1, "float": 4, "double": 8}


def _walk(cur: _Cursor, s, named: dict, depth: int) -> None:
    if depth > MAX_NESTING * 4:  # a record, its field's union and the named reference
        raise ValueError(f"Avro value nested more than {MAX_NESTING} deep")
    if isinstance(s, str):
        if s in _FIXED_WIDTH:
            cur.skip(_FIXED_WIDTH[s])
        elif s in ("int", "long"):
            cur.long()
        elif s in ("bytes", "string"):
            cur.skip(cur.long())
        else:
            _walk(cur, named[s], named, depth + 1)
        return
    if isinstance(s, list):
        i = cur.long()
        if not 0 <= i < len(s):
            raise ValueError(f"Avro union index {i} out of range")
        _walk(cur, s[i], named, depth + 1)
        return
    t = s["type"]
    if t in ("record", "error"):
        for f in s["fields"]:
            _walk(cur, f["type"], named, depth + 1)
    elif t == "enum":
        cur.long()
    elif t == "fixed":
        cur.skip(s["size"])
    elif t in ("array", "map"):
        inner = s["items"] if t == "array" else s["values"]
        zero = t == "array" and _zero_width(inner, named)
        while True:
            n = cur.long()
            if n == 0:
                return
            if n < 0:
                n = -n
                cur.long()  # the block's size in bytes
            if zero:
                cur.items += n
                if cur.items > MAX_ZERO_WIDTH_ITEMS:
                    raise ValueError(
                        f"an Avro array claims {cur.items} items of a zero-byte type "
                        f"(more than {MAX_ZERO_WIDTH_ITEMS:,})")
                continue
            for _ in range(n):
                if t == "map":
                    cur.skip(cur.long())
                _walk(cur, inner, named, depth + 1)
    else:
        _walk(cur, t, named, depth + 1)


def strip_logical_types(obj):
    """A copy of a schema's JSON with every ``logicalType`` attribute removed."""
    if isinstance(obj, dict):
        return {k: strip_logical_types(v) for k, v in obj.items() if k != "logicalType"}
    if isinstance(obj, list):
        return [strip_logical_types(v) for v in obj]
    return obj


def parse(schema_text: str, named: dict, *, logical: bool = False):
    """fastavro's parsed schema of ``schema_text`` (Avro JSON), resolving names against
    ``named`` (fastavro's named-schemas dict: the referenced schemas parsed first, which
    this call adds its own named types to). ``logical`` keeps the logical types.

    Raises:
        SchemaDecodeError: not JSON, or not a schema fastavro parses.
    """
    import fastavro

    try:
        obj = json.loads(schema_text)
    except ValueError as e:
        raise SchemaDecodeError(f"the Avro schema is not JSON: {e}") from None
    except RecursionError:
        raise SchemaDecodeError("the Avro schema is not JSON: arrays or objects nested "
                                "too deeply") from None
    try:
        if not logical:
            obj = strip_logical_types(obj)
        return fastavro.parse_schema(obj, named_schemas=named)
    except RecursionError:   # a walk per level: ~500 nested unions exhaust the stack
        raise SchemaDecodeError("the Avro schema does not parse: types nested too "
                                "deeply") from None
    except Exception as e:  # noqa: BLE001 - fastavro raises several kinds
        raise SchemaDecodeError(f"the Avro schema does not parse: {e}") from None


# -- the JSON encoding of a decoded datum --------------------------------------------------

def _type_of(schema):
    if isinstance(schema, str):
        return schema
    if isinstance(schema, list):
        return "union"
    return schema["type"]


def json_converter(schema, named: dict) -> Callable | None:
    """A function turning what ``schemaless_reader(..., return_named_type=True)`` returns
    for ``schema`` into Avro's JSON encoding (mutating records and maps in place), or None
    when it is that already (no union, bytes or fixed inside)."""
    return _JsonConverters(named).of(schema)


class _JsonConverters:
    def __init__(self, named: dict):
        self.named = named
        self.done: dict = {}

    def of(self, schema):
        t = _type_of(schema)
        if t in ("bytes", "fixed"):
            return _latin1
        if t in PRIMITIVES or t == "enum":
            return None
        if t == "array":
            c = self.of(schema["items"])
            return None if c is None else (lambda v: [c(x) for x in v])
        if t == "map":
            c = self.of(schema["values"])
            return None if c is None else (lambda v: {k: c(x) for k, x in v.items()})
        if t == "union":
            return self.union(schema)
        if t == "record" or t == "error":
            return self.record(schema)
        # a named type used by name
        target = self.named.get(t)
        if target is None:
            return None
        return self.of(target)

    def record(self, schema):
        name = schema["name"]
        if name in self.done:  # a recursive record: convert through the table, lazily
            return lambda v: self.done[name](v) if self.done[name] else v
        self.done[name] = None
        convs = [(f["name"], c) for f in schema["fields"]
                 if (c := self.of(f["type"])) is not None]
        if not convs:
            self.done[name] = _identity
            return None

        def conv(d):
            for n, c in convs:
                d[n] = c(d[n])
            return d
        self.done[name] = conv
        return conv

    def union(self, branches):
        others = [b for b in branches if _type_of(b) != "null"]
        if len(others) == 1 and len(branches) == 2:  # ["null", T]: the common case
            t = _type_of(others[0])
            if t in PRIMITIVES and t != "bytes":
                return lambda v: None if v is None else {t: v}
        names = {}
        by_python: dict = {}
        for b in branches:
            t = _type_of(b)
            if t == "null":
                continue
            if t in PRIMITIVES:
                key = {"boolean": bool, "int": int, "long": int, "float": float,
                       "double": float, "bytes": bytes, "string": str}[t]
                by_python.setdefault(key, (t, self.of(b)))
            elif t in ("array", "map"):
                by_python.setdefault(list if t == "array" else dict, (t, self.of(b)))
            else:
                full = b["name"] if isinstance(b, dict) else t
                names[full] = self.of(b if isinstance(b, dict) else self.named.get(t, b))

        def conv(v):
            if v is None:
                return None
            if type(v) is tuple:  # a named type: (full name, value)
                name, inner = v
                c = names.get(name)
                return {name: inner if c is None else c(inner)}
            t, c = by_python.get(type(v), (None, None))
            if t is None:  # an int where only long/double branches take it, ...
                t, c = _fallback(by_python, v)
            return {t: v if c is None else c(v)}
        return conv


def _fallback(by_python: dict, v):
    if isinstance(v, bool):
        return by_python.get(bool, ("boolean", None))
    if isinstance(v, int) and float in by_python:
        return by_python[float]
    return (type(v).__name__, None)


def _latin1(v):
    if type(v) is tuple:
        v = v[1]
    return v.decode("latin-1")


def _identity(v):
    return v


class AvroCodec:
    """One registered Avro schema, ready to decode and encode payloads.

    Attributes:
        schema: fastavro's parsed schema (logical types set aside).
        logical_schema: the same with its logical types (for Arrow types).
        named / logical_named: the named types it and its references define.
    """

    kind = "avro"

    def __init__(self, schema_text: str, references: list[str] = ()):
        self.named: dict = {}
        self.logical_named: dict = {}
        for ref in references:
            parse(ref, self.named)
            parse(ref, self.logical_named, logical=True)
        self.text = schema_text
        self.schema = parse(schema_text, self.named)
        self.logical_schema = parse(schema_text, self.logical_named, logical=True)
        self._conv = json_converter(self.schema, self.named)
        from fastavro import schemaless_reader

        self._read = schemaless_reader
        #: the writer's named types, for :func:`check_item_counts` (None: no array of
        #: zero-byte items, nothing to check)
        self._guard = self.named if needs_count_guard(self.schema, self.named) else None

    def decode(self, payload, reader=None):
        """The datum of an Avro binary ``payload`` (fastavro's Python shape, unions of
        named types as ``(name, value)``), read as ``reader``'s schema (an
        :class:`AvroCodec`) when given. Bytes after the datum are ignored, as Avro's
        ``BinaryDecoder`` in the Confluent deserializer ignores them.

        Raises:
            ValueError / EOFError / others of fastavro: bytes that do not decode, or an
                array claiming more than :data:`MAX_ZERO_WIDTH_ITEMS` zero-byte items;
                the caller turns any exception into a warning.
        """
        if self._guard is not None:
            check_item_counts(payload, self.schema, self._guard)
        return self._read(io.BytesIO(payload), self.schema,
                          None if reader is None else reader.schema, return_named_type=True)

    def decode_json_value(self, payload):
        """An Avro binary ``payload`` in Avro's JSON encoding, as Python objects
        (:meth:`decode`, then :meth:`to_json_value`): the decoder's fast path.

        Raises:
            as :meth:`decode`.
        """
        if self._guard is not None:
            check_item_counts(payload, self.schema, self._guard)
        datum = self._read(io.BytesIO(payload), self.schema, None, return_named_type=True)
        return datum if self._conv is None else self._conv(datum)

    def to_json_value(self, datum):
        """``datum`` (from :meth:`decode`) in Avro's JSON encoding, as Python objects."""
        return datum if self._conv is None else self._conv(datum)

    def encode_json(self, text: str) -> bytes:
        """The Avro binary of one datum in Avro's JSON encoding (``text``), as
        kafka-avro-console-producer reads its input.

        Raises:
            ValueError: the text does not match the schema (fastavro's message).
        """
        from fastavro import json_reader, schemaless_writer

        try:
            datum = next(iter(json_reader(io.StringIO(text), self.schema)))
        except StopIteration:
            raise ValueError("no JSON value") from None
        except Exception as e:  # noqa: BLE001 - fastavro's parse errors vary
            raise ValueError(f"does not match the Avro schema: {e}") from None
        out = io.BytesIO()
        try:
            schemaless_writer(out, self.schema, datum)
        except Exception as e:  # noqa: BLE001
            raise ValueError(f"does not match the Avro schema: {e}") from None
        return out.getvalue()
