"""Serializing JSON input in Schema Registry's wire format, as the Confluent console
producers do (kafka-avro-console-producer reads Avro's JSON encoding; the Protobuf one
Protobuf's JSON mapping, of the schema's first message; the JSON Schema one a JSON
document, validated): the payload is framed with the schema id (:mod:`.wire`), the
schema registered first in the log directory's ``_schemas`` (:mod:`.register`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidArgumentError, SchemaDecodeError
from .decoder import ENCODING_OF_TYPE, TYPE_OF_ENCODING, codec_for
from .records import PROTOBUF, SchemaValue
from .register import Registration, normalized, register

#: ``--value-serializer`` / ``--key-serializer`` values
SERIALIZERS = ("avro", "protobuf", "json-schema")
#: a schema file larger than this is refused
MAX_SCHEMA_FILE_BYTES = 16 << 20


def read_schema_file(path) -> str:
    """The text of a schema file (``--value-schema``), at most
    :data:`MAX_SCHEMA_FILE_BYTES`.

    Raises:
        InvalidArgumentError: unreadable, too large, or not UTF-8.
    """
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SCHEMA_FILE_BYTES + 1)
    except OSError as e:
        raise InvalidArgumentError(f"schema file {path}: {e.strerror or e}") from None
    if len(data) > MAX_SCHEMA_FILE_BYTES:
        raise InvalidArgumentError(f"schema file {path} is over {MAX_SCHEMA_FILE_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidArgumentError(f"schema file {path} is not UTF-8 text") from None


@dataclass
class Serializer:
    """One side's (key or value) serializer: the schema registered under ``subject``,
    ``serialize(json_text) -> framed bytes``."""

    registration: Registration
    codec: object
    kind: str

    @property
    def schema_id(self) -> int:
        return self.registration.id

    def serialize(self, text: bytes) -> bytes:
        """The framed payload of one JSON input.

        Raises:
            ValueError: the input does not fit the schema (the codec's message).
        """
        from .wire import frame

        try:
            s = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("is not UTF-8 JSON") from None
        payload = self.codec.encode_json(s)
        return frame(self.schema_id, payload, [0] if self.kind == "protobuf" else None)


def make_serializer(store, kind: str, subject: str, schema_text: str | None) -> Serializer:
    """Register ``schema_text`` (a ``kind`` schema: ``avro``, ``protobuf``,
    ``json-schema``) under ``subject`` in ``store`` (the ``_schemas`` records to append
    in ``.registration.records``), or, with no text, take the subject's latest version,
    as ``use.latest.version``.

    Raises:
        InvalidArgumentError: an unknown kind, no text and no such subject, a subject
            of another type, a schema that does not parse.
    """
    if kind not in SERIALIZERS:
        raise InvalidArgumentError(f"unknown serializer {kind!r} (expected "
                                   f"{', '.join(SERIALIZERS)})")
    st = TYPE_OF_ENCODING[kind]
    if schema_text is None:
        sv = store.latest(subject)
        if sv is None:
            raise InvalidArgumentError(f"subject {subject} has no schema in _schemas: give "
                                       "the schema file")
        if sv.schema_type != st:
            raise InvalidArgumentError(f"subject {subject}'s latest schema is "
                                       f"{ENCODING_OF_TYPE.get(sv.schema_type, sv.schema_type)}"
                                       f", not {kind}")
        reg = Registration(sv.id, sv.version, [], sv)
    else:
        text = normalized(st, schema_text)
        try:  # parse before registering: a schema that does not parse is not written
            codec_for(store, SchemaValue(subject, 0, 0, text, st))
        except SchemaDecodeError as e:
            raise InvalidArgumentError(f"{subject}: {e.message}") from None
        reg = register(store, subject, st, text)
    try:
        codec = codec_for(store, reg.schema, reg.id)
    except SchemaDecodeError as e:
        raise InvalidArgumentError(f"{subject}: {e.message}") from None
    return Serializer(reg, codec, "protobuf" if st == PROTOBUF else kind)
