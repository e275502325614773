"""Decoding keys and values framed in Schema Registry's wire format (:mod:`.wire`) with
the schemas of a source (the offline :class:`~.store.SchemaStore` and/or a live
registry), as the Confluent console consumers print them.

One decoder per topic read: :meth:`RecordDecoder.decode` returns a
:class:`SchemaDecoded` for a record (its key and value, each a :class:`DecodedField` or
left as bytes), never raises: what cannot be decoded (not framed, an unknown id, a schema
of another type than the one insisted on, bytes that do not decode) keeps its bytes and
says why in ``warnings``. Schemas are parsed once per id.

Modes (``--key-decoder`` / ``--value-decoder``): ``schema-registry`` (the type comes with
the id), or ``avro`` / ``protobuf`` / ``json-schema`` (the id's schema must be of that
type).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ..errors import InvalidArgumentError, SchemaDecodeError, SchemaRegistryError
from .records import AVRO, JSON, PROTOBUF
from .wire import read_message_indexes, split_frame

SCHEMA_REGISTRY = "schema-registry"
#: ``--key-decoder`` / ``--value-decoder`` values
DECODERS = (SCHEMA_REGISTRY, "avro", "protobuf", "json-schema")
#: schemaType -> the ``valueEncoding`` label of a decoded value
ENCODING_OF_TYPE = {AVRO: "avro", PROTOBUF: "protobuf", JSON: "json-schema"}
TYPE_OF_ENCODING = {v: k for k, v in ENCODING_OF_TYPE.items()}
_ID = struct.Struct(">i").unpack_from
#: references followed at most this deep (a cycle in a hostile ``_schemas``)
MAX_REFERENCE_DEPTH = 32


def check_decoder(name: str | None, option: str = "--value-decoder") -> None:
    """Raises InvalidArgumentError for a name not in :data:`DECODERS`."""
    if name is not None and name not in DECODERS:
        raise InvalidArgumentError(f"{option} {name!r}: expected one of "
                                   f"{', '.join(DECODERS)}")


_ORJSON_DUMPS = None


def _dumps(value) -> bytes:
    """Compact UTF-8 JSON (orjson; the json module for integers beyond 64 bits)."""
    global _ORJSON_DUMPS
    if _ORJSON_DUMPS is None:
        import orjson

        _ORJSON_DUMPS = orjson.dumps
    try:
        return _ORJSON_DUMPS(value)
    except TypeError:  # an integer beyond 64 bits
        import json

        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


class FieldMeta:
    """What a decoded key or value is labelled with, one per schema id and side:
    ``schema_id``, ``subject`` (None when not known), ``encoding`` (``avro``,
    ``protobuf``, ``json-schema``), and ``suffix``, the JSON text of the labels as
    ``read -o json`` writes them after the value (``,"valueEncoding":...``)."""

    __slots__ = ("schema_id", "subject", "encoding", "suffix", "head")

    def __init__(self, schema_id: int, subject: str | None, encoding: str, side: str):
        import json

        self.schema_id, self.subject, self.encoding = schema_id, subject, encoding
        #: the UTF-8 JSON before the value (``"value":``) and after it (its labels)
        self.head = f'"{side}":'.encode()
        self.suffix = (f',"{side}Encoding":"{encoding}","{side}SchemaId":{schema_id}'
                       + ("" if subject is None else
                          f',"{side}Subject":{json.dumps(subject, ensure_ascii=False)}')
                       ).encode()


class DecodedField:
    """A decoded key or value: ``datum`` its JSON value (Avro's JSON encoding, Protobuf's
    JSON mapping, the JSON document: what the console consumer prints), ``jsonb`` that
    as compact UTF-8 JSON (made on first use; ``json`` as text), and ``meta``
    (:class:`FieldMeta`: ``schema_id``, ``subject``, ``encoding``)."""

    __slots__ = ("datum", "meta", "_jsonb")

    def __init__(self, datum, meta: FieldMeta):
        self.datum, self.meta, self._jsonb = datum, meta, None

    @property
    def jsonb(self) -> bytes:
        if self._jsonb is None:
            self._jsonb = _dumps(self.datum)
        return self._jsonb

    @property
    def json(self) -> str:
        return self.jsonb.decode()

    schema_id = property(lambda self: self.meta.schema_id)
    subject = property(lambda self: self.meta.subject)
    encoding = property(lambda self: self.meta.encoding)

    @property
    def value(self):
        """The JSON value (:attr:`datum`)."""
        return self.datum

    def __repr__(self) -> str:
        return f"DecodedField({self.datum!r}, id={self.schema_id}, {self.encoding})"


class SchemaDecoded:
    """A record's key and value as decoded through Schema Registry (the ``decoded`` of a
    :class:`~kafkalog_cli.ops.read.ConsumerRecord`). ``key`` / ``value`` are None when
    that side was not decoded (no decoder asked, a null, or a failure: ``warnings`` says
    why and ``key_failed`` / ``value_failed`` are set)."""

    __slots__ = ("key", "value", "warnings", "key_failed", "value_failed")

    def __init__(self, key: DecodedField | None = None, value: DecodedField | None = None):
        self.key, self.value = key, value
        self.warnings: list | tuple = ()
        self.key_failed = self.value_failed = False

    def console(self, key: bytes | None, value: bytes | None):
        """``(key, value)`` bytes as the console consumer prints them: the decoded JSON,
        else the raw bytes."""
        return (key if self.key is None else self.key.jsonb,
                value if self.value is None else self.value.jsonb)

    def __repr__(self) -> str:
        return f"SchemaDecoded(key={self.key!r}, value={self.value!r}, {self.warnings!r})"


class RecordDecoder:
    """Decodes the keys and values of one topic's records (see the module docstring).

    Args:
        source: the schemas (a :class:`~.store.SchemaStore`, a
            :class:`~.rest.RestSchemaSource` or a :class:`~.rest.ChainedSource`).
        topic: the topic, for the subjects of TopicNameStrategy (``<topic>-key``,
            ``<topic>-value``) named first when an id is under several.
        key_decoder / value_decoder: a mode of :data:`DECODERS`, or None (left as bytes).
    """

    def __init__(self, source, topic: str, *, key_decoder: str | None = None,
                 value_decoder: str | None = None):
        check_decoder(key_decoder, "--key-decoder")
        check_decoder(value_decoder, "--value-decoder")
        self.source = source
        self.topic = topic
        self.key_decoder = key_decoder
        self.value_decoder = value_decoder
        self._codecs: dict = {}
        self._subjects: dict = {}
        self._metas: dict = {}
        #: {schema id: records} of ids the source does not have
        self.missing: dict[int, int] = {}
        #: records left as bytes for another reason, and the first such reason
        self.failed = 0
        self.first_failure: str | None = None

    # -- schemas -----------------------------------------------------------------------

    def codec(self, schema_id: int):
        """The codec (:class:`~.avro.AvroCodec`, :class:`~.protobuf.ProtobufCodec`,
        :class:`~.json_schema.JsonSchemaCodec`) of ``schema_id``, parsed once.

        Raises:
            SchemaDecodeError: the id is unknown, a reference missing, or the schema
                does not parse.
        """
        c = self._codecs.get(schema_id)
        if c is None:
            sv = self.source.by_id(schema_id)
            try:
                c = codec_for(self.source, sv, schema_id)
            except (SchemaDecodeError, ValueError) as e:
                c = SchemaDecodeError(str(e))
                c.missing = sv is None
            self._codecs[schema_id] = c
        if isinstance(c, SchemaDecodeError):
            if getattr(c, "missing", False):
                self.missing[schema_id] = self.missing.get(schema_id, 0) + 1
            raise c
        return c

    def subject_of(self, schema_id: int, is_key: bool) -> str | None:
        key = (schema_id, is_key)
        if key not in self._subjects:
            subjects = self.source.subjects_of(schema_id)
            own = f"{self.topic}-{'key' if is_key else 'value'}"
            self._subjects[key] = own if own in subjects else (subjects[0] if subjects
                                                               else None)
        return self._subjects[key]

    # -- records -----------------------------------------------------------------------

    def _meta(self, schema_id: int, is_key: bool, kind: str) -> FieldMeta:
        key = (schema_id, is_key)
        m = self._metas.get(key)
        if m is None:
            m = self._metas[key] = FieldMeta(schema_id, self.subject_of(schema_id, is_key),
                                             kind, "key" if is_key else "value")
        return m

    def decode_field(self, data: bytes, mode: str, is_key: bool) -> DecodedField:
        """One framed key or value.

        Raises:
            SchemaDecodeError, or the codecs' errors (EOFError, ...): the caller keeps the
                bytes and warns.
        """
        if len(data) > 4 and not data[0]:
            schema_id, pos = _ID(data, 1)[0], 5
        else:
            schema_id, pos = split_frame(data)  # raises, naming why
        codec = self._codecs.get(schema_id)
        if codec is None or codec.__class__ is SchemaDecodeError:
            codec = self.codec(schema_id)
        kind = codec.kind
        if mode != SCHEMA_REGISTRY and kind != mode:
            raise SchemaDecodeError(f"schema id {schema_id} is a {kind} schema, not {mode}")
        if kind == "avro":
            datum = codec.decode_json_value(data[pos:])
        elif kind == "protobuf":
            indexes, pos = read_message_indexes(data, pos)
            datum = codec.to_json_value(codec.decode(data[pos:], indexes))
        else:
            datum = codec.decode(data[pos:])
        m = self._metas.get((schema_id, is_key)) or self._meta(schema_id, is_key, kind)
        return DecodedField(datum, m)

    def decode(self, key: bytes | None, value: bytes | None) -> SchemaDecoded:
        """A record's key and value (see :class:`SchemaDecoded`).

        Raises:
            SchemaRegistryError: only a live registry that cannot be asked; what does not
                decode is a warning.
        """
        d = SchemaDecoded()
        if self.value_decoder is not None and value is not None:
            try:
                d.value = self.decode_field(value, self.value_decoder, False)
            except SchemaRegistryError:
                raise  # a live registry that fails: not this record's fault, stop
            except Exception as e:  # noqa: BLE001 - any decoder failure keeps the bytes
                self._failed(d, e, False)
        if self.key_decoder is not None and key is not None:
            try:
                d.key = self.decode_field(key, self.key_decoder, True)
            except SchemaRegistryError:
                raise
            except Exception as e:  # noqa: BLE001
                self._failed(d, e, True)
        return d

    def _failed(self, d: SchemaDecoded, e: Exception, is_key: bool) -> None:
        why = _why(e)
        if not d.warnings:
            d.warnings = []
        d.warnings.append(f"{'key' if is_key else 'value'}: {why}")
        if is_key:
            d.key_failed = True
        else:
            d.value_failed = True
        if not getattr(e, "missing", False):
            self.failed += 1
            if self.first_failure is None:
                self.first_failure = why

    def problems(self) -> list[str]:
        """One line per schema id not found (and the records left as bytes for it), one
        for the records that did not decode for other reasons."""
        out = [f"schema id {sid} not found in {self.source.source}: {n} record"
               f"{'s' if n != 1 else ''} of {self.topic} kept as bytes"
               for sid, n in sorted(self.missing.items())]
        if self.failed:
            what = "keys or values" if self.failed != 1 else "key or value"
            out.append(f"{self.failed} {what} of {self.topic} did not decode and were kept as bytes (the first: "
                       f"{self.first_failure})")
        return out


def _why(e: Exception) -> str:
    text = str(e) or type(e).__name__
    if isinstance(e, SchemaDecodeError):
        return text
    return f"does not decode: {text}"


# -- schemas and their references --------------------------------------------------------

def _resolve_references(source, sv, depth: int = 0, seen=None) -> list:
    """The referenced SchemaValues of ``sv``, transitively, dependencies first, as
    ``[(reference name, SchemaValue)]``.

    Raises:
        SchemaDecodeError: a reference the source does not have, or a chain deeper than
            :data:`MAX_REFERENCE_DEPTH`.
    """
    if depth > MAX_REFERENCE_DEPTH:
        raise SchemaDecodeError(f"references nested deeper than {MAX_REFERENCE_DEPTH}")
    seen = set() if seen is None else seen
    out = []
    for ref in sv.references:
        key = (ref.subject, ref.version)
        if key in seen:
            continue
        seen.add(key)
        target = source.version(ref.subject, ref.version)
        if target is None:
            raise SchemaDecodeError(f"reference {ref.name} (subject {ref.subject} version "
                                    f"{ref.version}) not found")
        out.extend(_resolve_references(source, target, depth + 1, seen))
        out.append((ref.name, target))
    return out


def codec_for(source, sv, schema_id: int | None = None):
    """The codec of a registered schema ``sv`` (its references looked up in ``source``).

    Raises:
        SchemaDecodeError: ``sv`` is None (the id is not found), a reference is missing,
            the schema type is unknown or the schema does not parse.
    """
    if sv is None:
        raise SchemaDecodeError(f"schema id {schema_id} not found in {source.source}")
    refs = _resolve_references(source, sv)
    st = sv.schema_type
    try:
        if st == AVRO:
            from .avro import AvroCodec

            return AvroCodec(sv.schema, [r.schema for _, r in refs])
        if st == PROTOBUF:
            from .protobuf import ProtobufCodec

            return ProtobufCodec(sv.schema, {name: r.schema for name, r in refs})
        if st == JSON:
            from .json_schema import JsonSchemaCodec

            return JsonSchemaCodec(sv.schema, {name: r.schema for name, r in refs})
    except ImportError as e:
        raise SchemaDecodeError(f"{e.name} is not installed; install it with: pip install "
                                "'kafkalog[schema-registry]'") from None
    except ValueError as e:
        raise SchemaDecodeError(f"schema id {sv.id}: {e}") from None
    raise SchemaDecodeError(f"schema id {sv.id} has an unknown schemaType {st!r}")


@dataclass
class SchemaRegistryOptions:
    """What a reading command is asked to decode through Schema Registry, and with which
    schemas (the options ``--key-decoder``, ``--value-decoder``, ``--schemas``,
    ``--schema-registry``, ``--schema-registry-property``).

    Attributes:
        key_decoder / value_decoder: a mode of :data:`DECODERS`, or None.
        schemas: the ``_schemas`` partition (or a log directory holding one); None: the
            one beside the partition read.
        url / properties: a live registry's URL and its basic-auth properties.
    """

    key_decoder: str | None = None
    value_decoder: str | None = None
    schemas: str | None = None
    url: str | None = None
    properties: dict = field(default_factory=dict)
    _sources: dict = field(default_factory=dict, repr=False)

    def __bool__(self) -> bool:
        return bool(self.key_decoder or self.value_decoder)

    def check(self) -> None:
        """Raises InvalidArgumentError: an unknown mode, or schema sources without a
        decoder."""
        check_decoder(self.key_decoder, "--key-decoder")
        check_decoder(self.value_decoder, "--value-decoder")
        if not self and (self.schemas or self.url or self.properties):
            raise InvalidArgumentError("--schemas, --schema-registry and "
                                       "--schema-registry-property need --key-decoder or "
                                       "--value-decoder")

    @classmethod
    def from_properties(cls, props, **kwargs) -> SchemaRegistryOptions:
        """With ``props`` given as ``NAME=VALUE`` strings.

        Raises:
            InvalidArgumentError: a string without ``=``.
        """
        out = {}
        for p in props or ():
            if "=" not in p:
                raise InvalidArgumentError(f"--schema-registry-property {p!r}: expected "
                                           "NAME=VALUE")
            k, v = p.split("=", 1)
            out[k.strip()] = v
        opts = cls(properties=out, **kwargs)
        opts.check()
        return opts

    def source(self, near):
        """The schema source for a partition directory ``near`` (loaded once per
        ``_schemas`` partition; see :func:`~.store.open_schema_source`)."""
        from ..storage.location import as_path
        from .store import open_schema_source

        key = None if self.schemas is not None else str(as_path(near).parent)
        if key not in self._sources:
            self._sources[key] = open_schema_source(
                near, schemas=self.schemas, url=self.url, properties=self.properties)
        return self._sources[key]

    def decoder(self, topic: str, near) -> RecordDecoder | None:
        """A :class:`RecordDecoder` for ``topic``'s partition directory ``near``, or None
        when nothing is to be decoded."""
        if not self:
            return None
        return RecordDecoder(self.source(near), topic, key_decoder=self.key_decoder,
                             value_decoder=self.value_decoder)

    def replay_problems(self) -> list[str]:
        """What the ``_schemas`` replays skipped, one line each."""
        return [p for s in self._sources.values() for p in s.problems]
