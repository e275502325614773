"""Kafka generated messages declared once, compiled per version into construct schemas.

A declaration reads like Kafka's message JSON (``clients/src/main/resources/common/message``
and friends)::

    OffsetCommitValue = Message("OffsetCommitValue", valid="0-4", flexible="4+", fields=[
        Field("offset", "int64", "0+"),
        Field("leaderEpoch", "int32", "3+", default=-1),
        ...
    ])

Field keywords follow the JSON keys: ``versions``, ``nullable`` (nullableVersions),
``tagged`` (taggedVersions) with ``tag``, ``default``, and ``fields`` for the struct an
``[]StructName`` or ``StructName`` type names. Field names are Kafka's camelCase names
(``FieldSpec.camelCaseName``), so decoded dicts carry the keys Kafka's JSON converters write.

Encoding rules (Kafka's ``MessageDataGenerator``), for a version ``v``:

* a field exists when ``v`` is in its versions; tagged fields live in the tagged section;
* in a flexible version strings, bytes and arrays are compact and every struct (the
  message and each nested struct) ends with a tagged-field section;
* nullable variable-length fields use length -1 (compact: 0) for null; a nullable struct
  has an int8 marker (-1 = null).

:meth:`Message.struct` turns (declaration, version) into a construct, cached per version.
It parses into a plain dict in declaration order: absent tagged fields take their
default, tags without a declaration are kept raw under ``flexible.UNKNOWN_TAGS``.
:meth:`Message.to_json` gives the shape Kafka's ``<Name>JsonConverter.write`` produces:
bytes as standard base64, uuids in ``Uuid.toString`` form, tagged fields only when they
differ from their default.
"""

from __future__ import annotations

import base64
import functools
import io
from collections.abc import Iterable, Sequence
from typing import Any

import construct as c

from . import flexible as fx

#: Highest version an open range ("3+") reaches.
MAX_VERSION = 0x7FFF


class Versions:
    """A version range as Kafka writes it: ``"0+"``, ``"1-3"``, ``"2"`` or ``"none"``."""

    __slots__ = ("low", "high")

    def __init__(self, text: str | None):
        text = (text or "none").strip()
        if text == "none":
            self.low, self.high = 1, 0
        elif text.endswith("+"):
            self.low, self.high = int(text[:-1]), MAX_VERSION
        elif "-" in text:
            lo, hi = text.split("-")
            self.low, self.high = int(lo), int(hi)
        else:
            self.low = self.high = int(text)

    def __contains__(self, version: int) -> bool:
        return self.low <= version <= self.high

    @property
    def empty(self) -> bool:
        return self.low > self.high

    def __repr__(self) -> str:
        if self.empty:
            return "none"
        if self.high == MAX_VERSION:
            return f"{self.low}+"
        return f"{self.low}" if self.low == self.high else f"{self.low}-{self.high}"


_UNSET = object()
_INT_TYPES = {"int8", "int16", "uint16", "int32", "uint32", "int64"}


class Field:
    """One field of a message or struct, as in Kafka's JSON.

    :param name: camelCase name (the JSON converter's key).
    :param type: ``bool``, ``int8``..``int64``, ``uint16``, ``uint32``, ``float64``,
        ``uuid``, ``string``, ``bytes``, ``records``, ``[]<type>``, or a struct name.
    :param versions: where the field exists; defaults to ``tagged`` when only that is set.
    :param nullable: nullableVersions.
    :param tagged: taggedVersions; requires ``tag``.
    :param default: Kafka's default (``None`` for "null"); the type's zero otherwise.
    :param fields: the struct's fields when ``type`` names a struct.
    """

    __slots__ = ("name", "type", "versions", "nullable", "tagged", "tag", "fields",
                 "element", "is_array", "is_struct", "_default")

    def __init__(self, name: str, type: str, versions: str | None = None, *,
                 nullable: str | None = None, tagged: str | None = None,
                 tag: int | None = None, default: Any = _UNSET,
                 fields: Sequence[Field] = ()):
        self.name = name
        self.type = type
        if versions is None:
            versions = tagged if tagged is not None else "0+"
        self.versions = Versions(versions)
        self.nullable = Versions(nullable)
        self.tagged = Versions(tagged)
        if not self.tagged.empty and tag is None:
            raise ValueError(f"field {name}: taggedVersions without a tag")
        self.tag = tag
        self.fields = tuple(fields)
        self.is_array = type.startswith("[]")
        self.element = type[2:] if self.is_array else type
        self.is_struct = bool(self.fields)
        if not self.is_struct and self.element not in fx.FIXED_TYPES and \
                self.element not in ("string", "bytes", "records"):
            raise ValueError(f"field {name}: struct type {type} without fields")
        self._default = default

    def default(self, version: int) -> Any:
        """The value the field takes when absent (a fresh object for arrays/structs)."""
        d = self._default
        if d is None or d == "null":
            return None
        if self.is_array:
            return []
        if self.is_struct:
            return {f.name: f.default(version) for f in self.fields if version in f.versions}
        t = self.element
        if d is _UNSET:
            if t in _INT_TYPES:
                return 0
            return {"bool": False, "float64": 0.0, "uuid": fx.ZERO_UUID, "string": "",
                    "bytes": b"", "records": b""}[t]
        if t in _INT_TYPES:
            return int(d, 0) if isinstance(d, str) else int(d)
        if t == "bool":
            return d if isinstance(d, bool) else str(d).lower() == "true"
        if t == "float64":
            return float(d)
        return d

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.type!r}, {self.versions!r})"


def _element_construct(field: Field, version: int, flexible: bool, nullable: bool,
                       tagged: bool = False):
    """The construct of one value of ``field``'s (element) type."""
    if field.is_struct:
        sub = compile_struct(field.fields, version, flexible)
        if not field.is_array and nullable:
            return fx.NullableStruct(sub, tagged=tagged)
        return sub
    t = field.element
    fixed = fx.FIXED_TYPES.get(t)
    if fixed is not None:
        return fixed
    # array elements are never null; only the field itself may be
    return fx.variable_type(t, flexible=flexible, nullable=nullable and not field.is_array)


def field_construct(field: Field, version: int, flexible: bool):
    """The construct of ``field`` at ``version`` (compact encodings when ``flexible``; a
    tagged field's value as the tagged section holds it)."""
    nullable = version in field.nullable
    elem = _element_construct(field, version, flexible, nullable,
                              tagged=flexible and version in field.tagged)
    if field.is_array:
        return fx.array_of(elem, flexible=flexible, nullable=nullable)
    return elem


class MessageStruct(c.Construct):
    """A message or nested struct at one version: its regular fields in order, then (in a
    flexible version) the tagged-field section. Parses into a dict in declaration order,
    absent tagged fields at their default; builds from that shape (missing fields at
    their default)."""

    def __init__(self, fields: Sequence[Field], version: int, flexible: bool):
        super().__init__()
        self.version = version
        self.flexible = flexible
        present = [f for f in fields if version in f.versions]
        self.order = [f.name for f in present]
        self.regular = [(f, field_construct(f, version, flexible)) for f in present
                        if not (flexible and version in f.tagged)]
        self.tagged_fields = [f for f in present if flexible and version in f.tagged]
        self.tags = None
        if flexible:
            self.tags = fx.TaggedFields({
                f.tag: (f.name, field_construct(f, version, True)) for f in self.tagged_fields})

    def _parse(self, stream, context, path):
        values = {}
        for f, sub in self.regular:
            try:
                values[f.name] = sub._parsereport(stream, context, path)
            except fx.KafkaReadError as e:
                if e.field is None:  # the innermost struct names the field, as Kafka does
                    e.field = f"{f.name} element" if e.in_element else f.name
                raise
        if self.tags is None:
            return values
        tagged = self.tags._parse(stream, context, path)
        if self.tagged_fields:
            for f in self.tagged_fields:
                if f.name not in tagged:
                    tagged[f.name] = f.default(self.version)
            values.update(tagged)
            values = {name: values[name] for name in self.order} | (
                {fx.UNKNOWN_TAGS: tagged[fx.UNKNOWN_TAGS]} if fx.UNKNOWN_TAGS in tagged else {})
        elif tagged:
            values[fx.UNKNOWN_TAGS] = tagged[fx.UNKNOWN_TAGS]
        return values

    def _build(self, obj, stream, context, path):
        for f, sub in self.regular:
            value = obj[f.name] if f.name in obj else f.default(self.version)
            sub._build(value, stream, context, path)
        if self.tags is not None:
            tagged = {f.name: obj[f.name] for f in self.tagged_fields
                      if f.name in obj and obj[f.name] != f.default(self.version)}
            if fx.UNKNOWN_TAGS in obj:
                tagged[fx.UNKNOWN_TAGS] = obj[fx.UNKNOWN_TAGS]
            self.tags._build(tagged, stream, context, path)
        return obj

    def _sizeof(self, context, path):
        raise c.SizeofError("variable size", path=path)


def compile_struct(fields: Sequence[Field], version: int, flexible: bool) -> MessageStruct:
    return MessageStruct(fields, version, flexible)


class Message:
    """A generated message declaration (one JSON file of Kafka's).

    :param name: Kafka's message name, e.g. ``"OffsetCommitValue"``.
    :param valid: validVersions, e.g. ``"0-4"``.
    :param flexible: flexibleVersions, e.g. ``"4+"`` or ``"none"``.
    :param fields: the top-level fields.
    :param api_key: the JSON's ``apiKey``: the record type of metadata records
        (``MetadataRecordType``) and of coordinator keys and values
        (``CoordinatorRecordType``), else None.
    :param kind: the JSON's ``type``: ``"metadata"``, ``"coordinator-key"``,
        ``"coordinator-value"`` or ``"data"`` (None: not said).
    :param earlier: the same message as earlier Kafka trees laid it out at the same
        version numbers, newest first (KIP-932 and KIP-1071 records changed
        incompatibly while "in development"; brokers of those trees wrote them).
        Decoders try them, in order, when this layout does not read the bytes.
    :param layout: where this layout comes from (for an ``earlier`` one: which Kafka
        tree wrote it), shown when a decoder falls back to it.
    """

    def __init__(self, name: str, *, valid: str, flexible: str = "none",
                 fields: Iterable[Field] = (), api_key: int | None = None,
                 kind: str | None = None, earlier: Iterable[Message] = (),
                 layout: str | None = None):
        self.name = name
        self.valid = Versions(valid)
        self.flexible = Versions(flexible)
        self.fields = tuple(fields)
        self.api_key = api_key
        self.kind = kind
        self.earlier = tuple(earlier)
        self.layout = layout
        self._structs: dict[int, MessageStruct] = {}

    @functools.cached_property
    def has_float64(self) -> bool:
        """A ``float64`` field anywhere in the message (its text needs Java's doubles)."""
        def walk(fields) -> bool:
            return any(f.element == "float64" or (f.is_struct and walk(f.fields))
                       for f in fields)
        return walk(self.fields)

    @property
    def layouts(self) -> tuple[Message, ...]:
        """This layout, then the :attr:`earlier` ones, in the order decoders try them."""
        return (self, *self.earlier)

    @property
    def versions(self) -> range:
        """Every valid version, lowest first."""
        return range(self.valid.low, self.valid.high + 1)

    def struct(self, version: int) -> MessageStruct:
        """The construct for ``version`` (compiled once, then cached).

        :raises KeyError: ``version`` is not a valid version of this message.
        """
        s = self._structs.get(version)
        if s is None:
            if version not in self.valid:
                raise KeyError(f"{self.name} has no version {version} (valid: {self.valid})")
            s = self._structs[version] = MessageStruct(
                self.fields, version, version in self.flexible)
        return s

    def parse(self, data, version: int, *, offset: int = 0,
              context: dict | None = None) -> tuple[dict, int]:
        """Parse ``data[offset:]`` at ``version``. ``context``: see
        :func:`~.flexible.element_context` (a bound on the array elements read).

        Returns:
            (the message as a dict, the position in ``data`` after it).

        Raises:
            KeyError: unknown version.
            construct.ConstructError: the bytes do not hold the message (or hold more
                elements than ``context`` allows).
        """
        stream = io.BytesIO(data)
        stream.seek(offset)
        obj = self.struct(version)._parsereport(stream, {} if context is None else context,
                                                "(parsing)")
        return obj, stream.tell()

    def parse_layouts(self, data, version: int, *, offset: int = 0) -> tuple[Message, dict, int]:
        """Parse ``data[offset:]`` at ``version`` with this layout or, when it does not read
        the bytes to their end, with the first :attr:`earlier` layout that does.

        Returns:
            (the layout that read it, the message as a dict, the position after it): a
            layout reading to the end of ``data`` if one does, else the first that read
            without error (the caller decides what the bytes after it mean).

        Raises:
            the first layout's parse error (one of :data:`PARSE_ERRORS`), or KeyError
            when no layout has ``version``.
        """
        if not self.earlier:  # the common case: one layout
            if version not in self.valid:
                raise KeyError(f"{self.name} has no version {version} (valid: {self.valid})")
            obj, end = self.parse(data, version, offset=offset)
            return self, obj, end
        first_error: BaseException | None = None
        partial = None
        for layout in self.layouts:
            if version not in layout.valid:
                continue
            try:
                obj, end = layout.parse(data, version, offset=offset)
            except PARSE_ERRORS as e:
                if first_error is None:
                    first_error = e
                continue
            if end == len(data):
                return layout, obj, end
            if partial is None and first_error is None:
                partial = (layout, obj, end)
        if partial is not None:
            return partial
        if first_error is not None:
            raise first_error
        raise KeyError(f"{self.name} has no version {version} (valid: {self.valid})")

    def build(self, obj: dict, version: int) -> bytes:
        """Serialize ``obj`` (the :meth:`parse` shape) at ``version``."""
        return self.struct(version).build(obj)

    def build_into(self, obj: dict, version: int, stream, context: dict | None = None) -> None:
        """Serialize ``obj`` at ``version`` into ``stream`` (a
        :class:`~.flexible.SplicedStream` keeps :class:`~.flexible.DeferredBytes` values
        apart). ``context``: see :func:`~.flexible.element_context` (a bound on the array
        elements written).

        Raises:
            construct.ConstructError: ``obj`` does not fit the declaration (or holds more
                elements than ``context`` allows: nothing usable is written).
        """
        self.struct(version)._build(obj, stream, {} if context is None else context,
                                    "(building)")

    def to_json(self, obj: dict, version: int, unknown_tags: list | None = None) -> dict:
        """The dict Kafka's ``<name>JsonConverter.write(message, version)`` produces.

        :param unknown_tags: when given, receives ``(path, tag, raw bytes)`` for every tag
            that had no declaration (Kafka's JSON drops them).
        """
        return _to_json(self.fields, obj, version, unknown_tags, self.name)

    def __repr__(self) -> str:
        return f"Message({self.name!r}, valid={self.valid!r}, flexible={self.flexible!r})"


def _b64(data) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def _to_json(fields, obj, version, unknown_tags, path) -> dict:
    out = {}
    for f in fields:
        if version not in f.versions:
            continue
        value = obj.get(f.name)
        if version in f.tagged and value == f.default(version):
            continue
        out[f.name] = _json_value(f, value, version, unknown_tags, f"{path}.{f.name}")
    if unknown_tags is not None and fx.UNKNOWN_TAGS in obj:
        unknown_tags.extend((path, tag, data) for tag, data in obj[fx.UNKNOWN_TAGS])
    return out


def _json_value(f: Field, value, version, unknown_tags, path):
    if value is None:
        return None
    if f.is_array:
        if f.is_struct:
            return [_to_json(f.fields, v, version, unknown_tags, f"{path}[{i}]")
                    for i, v in enumerate(value)]
        if f.element in ("bytes", "records"):
            return [_b64(v) for v in value]
        return list(value)
    if f.is_struct:
        return _to_json(f.fields, value, version, unknown_tags, path)
    if f.element in ("bytes", "records"):
        return _b64(value)
    return value


#: What a message that fails to parse raises (construct errors, bad UTF-8 never: replaced).
PARSE_ERRORS = (c.ConstructError, ValueError, KeyError, IndexError, OverflowError)


_DEFAULTS = {"null": None, "true": True, "false": False, '""': ""}


def fields(table: str, **structs: Sequence[Field]) -> list[Field]:
    """Fields declared as a table, one a line, the way Kafka's protocol documentation
    lists a message (``Field => Type``)::

        name  type  versions  [nullable=V] [tagged=V tag=N] [default=D]

    with the words of :class:`Field`: ``type`` a primitive, ``[]<type>`` or a struct name
    (a struct's fields follow on the lines indented under it); versions as ``0+``,
    ``1-3``, ``5``; ``default`` ``null``, ``true``, ``false``, ``""`` or an integer
    (``0x7FFFFFFF`` included). A struct used in several places (Kafka's commonStructs)
    is declared once and passed by its type name in ``structs``: a line naming that
    type with nothing indented under it takes those fields. Lines starting with ``#``
    are comments.

    Raises:
        ValueError: a line that is not ``name type versions [attributes]``, an attribute
            not listed above, or a struct type with no fields.
    """
    root: list = []  # (words, children) of each line, children the lines under it
    stack: list[tuple[int, list]] = [(-1, root)]  # (indent, where lines at it go)
    for line in table.splitlines():
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        while indent <= stack[-1][0]:
            stack.pop()
        words = text.split()
        if len(words) < 3:
            raise ValueError(f"field declaration {text!r}: expected name, type, versions")
        children: list = []
        stack[-1][1].append((words, children))
        stack.append((indent, children))

    def build(entries) -> list[Field]:
        out = []
        for words, children in entries:
            name, type_, versions, *attrs = words
            kw: dict[str, Any] = {}
            for attr in attrs:
                key, sep, value = attr.partition("=")
                if not sep or key not in ("nullable", "tagged", "tag", "default"):
                    raise ValueError(f"field {name}: unknown attribute {attr!r}")
                if key == "tag":
                    kw[key] = int(value)
                elif key == "default":
                    kw[key] = _DEFAULTS[value] if value in _DEFAULTS else int(value, 0)
                else:
                    kw[key] = value
            element = type_[2:] if type_.startswith("[]") else type_
            sub = build(children) if children else structs.get(element, ())
            out.append(Field(name, type_, versions, fields=sub, **kw))
        return out

    return build(root)


def registry(*messages: Message) -> dict[str, Message]:
    """``{name: message}`` of the given declarations."""
    return {m.name: m for m in messages}
