"""Registering a schema in a ``_schemas`` partition as Schema Registry would
(``KafkaSchemaRegistry.register``), for ``produce --value-serializer``:

* the subject must be in ``READWRITE`` mode (its own ``MODE`` record, else the global
  one; none: READWRITE), as ``checkRegisterMode`` requires for a schema without an id;
* a schema already registered under the subject (not deleted) keeps its id and version
  and nothing is written;
* else the id of the same schema registered under any subject of the context is reused,
  or the next id is taken (the largest id of the context + 1: ``IncrementalIdGenerator``);
  the version is the subject's largest (deleted ones included) + 1;
* soft-deleted earlier versions of the subject holding the same id are hard-deleted
  (a tombstone), as the registry does, unless another schema references them.

"The same schema" is the same type, the same text after kafkalog's normalisation (JSON
schemas re-written compact with their keys in order; a .proto text with its lines'
trailing spaces cut) and the same references. The registry compares its own canonical
form (Avro Java's ``Schema.toString()``, Wire's .proto formatting), so a schema it
registered with other spacing is registered once more, under a new id. Compatibility
is not checked (as a subject in IMPORT mode): kafkalog writes what it is given.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..errors import InvalidArgumentError
from .records import (
    JSON,
    PROTOBUF,
    SchemaReference,
    SchemaValue,
    context_of,
    schema_key_bytes,
    schema_value_bytes,
)


def normalized(schema_type: str, text: str) -> str:
    """The schema text kafkalog registers (see the module docstring).

    Raises:
        InvalidArgumentError: an Avro or JSON Schema text that is not JSON.
    """
    if schema_type == PROTOBUF:
        return "\n".join(line.rstrip() for line in text.strip().splitlines()) + "\n"
    try:
        obj = json.loads(text)
    except ValueError as e:
        what = "JSON Schema" if schema_type == JSON else "Avro schema"
        raise InvalidArgumentError(f"the {what} is not JSON: {e}") from None
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Registration:
    """The outcome of :func:`register`: the schema's ``id`` and ``version`` under the
    subject, and the ``_schemas`` records to append (``[(key, value or None)]``; empty
    when it was registered already)."""

    id: int
    version: int
    records: list
    schema: SchemaValue

    @property
    def new(self) -> bool:
        return bool(self.records)


def _same(a: SchemaValue, schema_type: str, text: str, refs) -> bool:
    return a.schema_type == schema_type and a.schema == text and a.references == refs


def register(store, subject: str, schema_type: str, text: str,
             references: tuple[SchemaReference, ...] = ()) -> Registration:
    """Register ``text`` (already :func:`normalized`) under ``subject`` in ``store`` (a
    :class:`~.store.SchemaStore`, updated with the records returned).

    Raises:
        InvalidArgumentError: the subject is not in READWRITE mode.
    """
    mode = store.modes.get(subject) or store.modes.get(None) or "READWRITE"
    if mode != "READWRITE":
        raise InvalidArgumentError(f"Subject {subject} in context {context_of(subject)} is "
                                   f"not in read-write mode ({mode}): the registry would "
                                   "refuse to register a schema")
    versions = store.versions(subject, include_deleted=True)
    for sv in reversed(versions):
        if not sv.deleted and _same(sv, schema_type, text, references):
            return Registration(sv.id, sv.version, [], sv)
    ctx = context_of(subject)
    schema_id = None
    for s in store.schemas.values():
        if context_of(s.subject) == ctx and _same(s, schema_type, text, references):
            schema_id = s.id
            break
    if schema_id is None:
        schema_id = store.max_id(ctx) + 1
    version = max((sv.version for sv in versions), default=0) + 1
    records = []
    referenced = {(r.subject, r.version) for s in store.schemas.values() for r in s.references}
    for sv in versions:
        if sv.deleted and sv.id == schema_id and (subject, sv.version) not in referenced:
            records.append((schema_key_bytes(subject, sv.version), None))
    value = SchemaValue(subject, version, schema_id, text, schema_type, tuple(references))
    records.append((schema_key_bytes(subject, version), schema_value_bytes(value)))
    offset = store.end_offset
    for i, (k, v) in enumerate(records):
        store.apply(k, v, offset + i)
    return Registration(schema_id, version, records, value)
