"""The records of Schema Registry's ``_schemas`` topic (its ``KafkaStore``), as
``SchemaRegistrySerializer`` reads and writes them: JSON keys and values (Jackson).

Keys (``SchemaRegistryKey``: ``keytype`` and ``magic``, plus the subclass's fields)::

    {"keytype":"SCHEMA","subject":"orders-value","version":1,"magic":1}   SchemaKey
    {"keytype":"CONFIG","subject":"orders-value","magic":0}               ConfigKey (no subject: global)
    {"keytype":"MODE","subject":null,"magic":0}                           ModeKey
    {"keytype":"DELETE_SUBJECT","subject":"orders-value","magic":0}       DeleteSubjectKey
    {"keytype":"CLEAR_SUBJECT","subject":"orders-value","magic":0}        ClearSubjectKey
    {"keytype":"NOOP","magic":0}                                          NoopKey
    CONTEXT, ASSOC                                                        (kept, not used)

Values: ``SchemaValue`` ``{"subject","version","id","schemaType" (default AVRO),
"references":[{"name","subject","version"}],"schema","deleted"}`` (plus ``md5``,
``metadata``, ``ruleSet``, kept as read); ``DeleteSubjectValue`` ``{"subject","version"}``
(versions 1..version are soft-deleted); ``ClearSubjectValue`` ``{"subject"}``;
``ConfigValue`` (``compatibilityLevel``, ...) and ``ModeValue`` (``mode``). A null value
is a tombstone: for a SCHEMA key, the hard delete of that version.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..errors import SchemaDecodeError

KEY_TYPES = ("ASSOC", "CONFIG", "SCHEMA", "MODE", "NOOP", "DELETE_SUBJECT",
             "CLEAR_SUBJECT", "CONTEXT")
#: ``schemaType`` values (``AvroSchema.TYPE``, ``ProtobufSchema.TYPE``, ``JsonSchema.TYPE``)
AVRO, PROTOBUF, JSON = "AVRO", "PROTOBUF", "JSON"
SCHEMA_TYPES = (AVRO, PROTOBUF, JSON)
#: ``SchemaKey``'s magic byte (``validateMagicByte`` takes 0 and 1)
SCHEMA_KEY_MAGIC = 1
#: a key or value larger than this is refused (kafkalog's bound; the registry's own
#: default max schema size is far below it)
MAX_RECORD_BYTES = 64 << 20




@dataclass(frozen=True)
class SchemaReference:
    """``SchemaReference``: ``name`` (the import or type name in the referring schema),
    ``subject`` and ``version`` of the referenced schema (-1 or None: the latest)."""

    name: str
    subject: str
    version: int | None

    def to_dict(self) -> dict:
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass
class SchemaValue:
    """One version of a subject as ``_schemas`` holds it (``SchemaValue``).

    Attributes:
        subject / version / id: where it is registered and its global id.
        schema: the schema text (Avro JSON, .proto text or a base64
            FileDescriptorProto, JSON Schema JSON).
        schema_type: ``AVRO`` (when absent), ``PROTOBUF`` or ``JSON``.
        references: the schemas it imports.
        deleted: soft-deleted (still found by id, as the registry finds it).
        offset: the ``_schemas`` offset of the record it was read from.
        extra: other fields of the value (``md5``, ``metadata``, ``ruleSet``), as read.
    """

    subject: str
    version: int
    id: int
    schema: str
    schema_type: str = AVRO
    references: tuple[SchemaReference, ...] = ()
    deleted: bool = False
    offset: int = -1
    extra: dict = field(default_factory=dict)

    @property
    def context(self) -> str:
        return context_of(self.subject)


def context_of(subject: str | None) -> str:
    """The context of a (qualified) subject, ``QualifiedSubject.contextFor``:
    ``:.ctx:orders-value`` -> ``.ctx``; an unqualified subject -> ``.`` (the default)."""
    if subject and subject.startswith(":."):
        ix = subject.find(":", 2)
        return subject[1:ix] if ix >= 0 else subject[1:]
    return "."


def _loads(data: bytes, what: str):
    if len(data) > MAX_RECORD_BYTES:
        raise SchemaDecodeError(f"{what} of {len(data)} bytes is over the "
                               f"{MAX_RECORD_BYTES}-byte bound")
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise SchemaDecodeError(f"{what} is not JSON: {e}") from None


def _int(obj: dict, name: str, what: str, required: bool = True) -> int | None:
    v = obj.get(name)
    if v is None and not required:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not -2**31 <= v < 2**31:
        raise SchemaDecodeError(f"{what}: {name} {v!r} is not an int32")
    return v


def _str(obj: dict, name: str, what: str, required: bool = True) -> str | None:
    v = obj.get(name)
    if v is None and not required:
        return None
    if not isinstance(v, str):
        raise SchemaDecodeError(f"{what}: {name} {v!r} is not a string")
    return v


def parse_key(data: bytes) -> dict:
    """A ``_schemas`` key as a dict with ``keytype``, ``magic`` and the key's fields
    (``subject``, ``version``).

    Raises:
        SchemaDecodeError: not JSON, not an object, an unknown ``keytype``, a SCHEMA key
            with a magic byte other than 0 or 1 or without subject and version.
    """
    obj = _loads(data, "key")
    if not isinstance(obj, dict):
        raise SchemaDecodeError("key is not a JSON object")
    kt = obj.get("keytype")
    if kt not in KEY_TYPES:
        raise SchemaDecodeError(f"unknown schema registry key type : {kt}")
    magic = obj.get("magic", 0)
    if kt == "SCHEMA":
        if magic not in (0, 1):
            raise SchemaDecodeError(f"Can't deserialize schema for the magic byte {magic}")
        _str(obj, "subject", "SCHEMA key")
        _int(obj, "version", "SCHEMA key")
    elif kt in ("CONFIG", "MODE", "DELETE_SUBJECT", "CLEAR_SUBJECT"):
        _str(obj, "subject", f"{kt} key", required=False)
    return obj


def parse_schema_value(data: bytes, offset: int = -1) -> SchemaValue:
    """A SCHEMA record's value.

    Raises:
        SchemaDecodeError: not a JSON object, or fields of the wrong type.
    """
    obj = _loads(data, "SCHEMA value")
    if not isinstance(obj, dict):
        raise SchemaDecodeError("SCHEMA value is not a JSON object")
    what = "SCHEMA value"
    refs = []
    for r in obj.get("references") or ():
        if not isinstance(r, dict):
            raise SchemaDecodeError(f"{what}: a reference is not an object")
        refs.append(SchemaReference(_str(r, "name", what), _str(r, "subject", what),
                                    _int(r, "version", what, required=False)))
    st = obj.get("schemaType") or AVRO
    if not isinstance(st, str):
        raise SchemaDecodeError(f"{what}: schemaType {st!r} is not a string")
    deleted = obj.get("deleted", False)
    if not isinstance(deleted, bool):
        raise SchemaDecodeError(f"{what}: deleted {deleted!r} is not a boolean")
    known = {"subject", "version", "id", "schema", "schemaType", "references", "deleted"}
    return SchemaValue(
        subject=_str(obj, "subject", what), version=_int(obj, "version", what),
        id=_int(obj, "id", what), schema=_str(obj, "schema", what), schema_type=st,
        references=tuple(refs), deleted=deleted, offset=offset,
        extra={k: v for k, v in obj.items() if k not in known})


def parse_value(data: bytes, what: str) -> dict:
    """A value other than SCHEMA's, as a dict (``subject``, ``version``, ``mode``,
    ``compatibilityLevel``, ...).

    Raises:
        SchemaDecodeError: not a JSON object.
    """
    obj = _loads(data, f"{what} value")
    if not isinstance(obj, dict):
        raise SchemaDecodeError(f"{what} value is not a JSON object")
    return obj


_DUMPS = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def schema_key_bytes(subject: str, version: int) -> bytes:
    """A SCHEMA key as the registry writes it (``@JsonPropertyOrder`` keytype, subject,
    version, magic)."""
    return _DUMPS({"keytype": "SCHEMA", "subject": subject, "version": version,
                   "magic": SCHEMA_KEY_MAGIC}).encode()


def schema_value_bytes(v: SchemaValue) -> bytes:
    """A SCHEMA value as the registry writes it (Jackson: the creator's properties in
    order, empty ones left out: ``subject, version, id, schemaType, references, schema,
    deleted``)."""
    obj: dict = {"subject": v.subject, "version": v.version, "id": v.id,
                 "schemaType": v.schema_type}
    if v.references:
        obj["references"] = [r.to_dict() for r in v.references]
    obj["schema"] = v.schema
    obj["deleted"] = v.deleted
    return _DUMPS(obj).encode()


def noop_key_bytes() -> bytes:
    """The NOOP key the registry writes to find the end of the topic."""
    return b'{"keytype":"NOOP","magic":0}'
