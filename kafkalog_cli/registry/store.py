"""The schema store: Schema Registry's state replayed from its ``_schemas`` topic, as its
``KafkaStoreReaderThread`` and ``KafkaStoreMessageHandler`` apply each record to the
``InMemoryCache`` (the lookup cache every registry instance serves from).

Per record, in offset order (control records skipped, as a read_uncommitted consumer):

* a key that does not parse is skipped (``Failed to deserialize the schema or config key
  at offset N``), and so is a value that does not;
* ``NOOP``: nothing (the registry writes it to find the topic's end);
* ``SCHEMA`` with a value: validated first - an id already held by a different schema in
  the same context is refused (``Found a schema with duplicate ID``, a follower ignores
  the record) - then stored under (subject, version); registered or soft-deleted
  (``deleted: true``), the id keeps pointing to it (a soft-deleted schema is still found
  by id);
* ``SCHEMA`` tombstone (a null value): the hard delete of that version, which leaves
  the id's index (``schemaTombstoned``); the id stays found through any other
  subject-version holding it;
* ``DELETE_SUBJECT`` ``{"subject","version"}``: versions 1..version soft-deleted;
* ``CLEAR_SUBJECT`` ``{"subject"}``: the subject's soft-deleted versions dropped;
* ``CONFIG`` / ``MODE``: the subject's (or, with no subject, the global) config or mode;
  a tombstone removes it; ``CONTEXT`` / ``ASSOC`` are kept and not used.

Lookups: a schema by id (the default context ``.``, as a deserializer asks
``/schemas/ids/{id}``), a subject's version or latest version, the subjects holding an
id. Ids are allocated as ``IncrementalIdGenerator`` does (the largest id seen + 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..constants import CONTROL_FLAG_MASK, DEFAULT_MAX_DECOMPRESSED_BYTES
from ..errors import KafkalogError, NotAKafkaFileError, SchemaDecodeError
from ..format.record_batch import RecordBatch
from ..storage.files import OTHER, PARTITION, check_exists, classify_dir
from ..storage.location import as_path
from ..storage.log import Log
from ..storage.segment import iter_records_of
from .records import (
    SchemaValue,
    context_of,
    parse_key,
    parse_schema_value,
    parse_value,
)

#: ``kafkastore.topic``'s default
SCHEMAS_TOPIC = "_schemas"
DEFAULT_CONTEXT = "."


@dataclass
class SchemaStore:
    """Schema Registry's lookup cache, filled by :meth:`apply`.

    Attributes:
        schemas: ``{(subject, version): SchemaValue}`` (soft-deleted ones included).
        ids: ``{context: {id: {subject: version}}}`` (``guidToSubjectVersions``).
        configs / modes: ``{subject or None: value}`` (None: the global one).
        problems: records the replay skipped, one line each.
        source: where it was read from (a partition directory), for messages.
        records: how many records were applied.
    """

    schemas: dict = field(default_factory=dict)
    ids: dict = field(default_factory=dict)
    configs: dict = field(default_factory=dict)
    modes: dict = field(default_factory=dict)
    others: dict = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    source: str = ""
    records: int = 0
    #: the next offset of ``_schemas`` after the last record applied
    end_offset: int = 0
    _max_ids: dict = field(default_factory=dict)

    # -- replay --------------------------------------------------------------------------

    def apply(self, key: bytes | None, value: bytes | None, offset: int = -1) -> None:
        """Apply one ``_schemas`` record (``KafkaStoreReaderThread.doWork``); what cannot
        be applied adds a line to :attr:`problems`."""
        self.records += 1
        self.end_offset = max(self.end_offset, offset + 1)
        if key is None:
            self._problem(offset, "a record without a key")
            return
        try:
            k = parse_key(key)
        except SchemaDecodeError as e:
            self._problem(offset, f"Failed to deserialize the schema or config key ({e})")
            return
        kt = k["keytype"]
        if kt == "NOOP":
            return
        try:
            if kt == "SCHEMA":
                sv = None if value is None else parse_schema_value(value, offset)
                self._schema_update(k["subject"], k["version"], sv, offset)
                return
            v = None if value is None else parse_value(value, kt)
        except SchemaDecodeError as e:
            self._problem(offset, f"Failed to deserialize a schema or config update ({e})")
            return
        subject = k.get("subject")
        if kt in ("CONFIG", "MODE"):
            table = self.configs if kt == "CONFIG" else self.modes
            if v is None:
                table.pop(subject, None)
            else:
                table[subject] = v if kt == "CONFIG" else v.get("mode")
        elif v is None:
            pass  # ignore non-schema tombstone
        elif kt == "DELETE_SUBJECT":
            self._delete_subject(v, offset)
        elif kt == "CLEAR_SUBJECT":
            self._clear_subject(v.get("subject") or subject)
        else:
            self.others[(kt, subject)] = v

    def _problem(self, offset: int, text: str) -> None:
        where = f"{self.source}: " if self.source else ""
        self.problems.append(f"{where}offset {offset}: {text}, skipped")

    def _schema_update(self, subject: str, version: int, sv: SchemaValue | None,
                       offset: int) -> None:
        key = (subject, version)
        if sv is None:
            old = self.schemas.pop(key, None)
            if old is not None:
                self._tombstoned(subject, version, old)
            return
        ctx = context_of(sv.subject)
        holder = self.key_by_id(sv.id, ctx)
        if holder is not None:
            other = self.schemas.get(holder)
            if other is not None and other.schema != sv.schema:
                self._problem(offset, f"Found a schema with duplicate ID {sv.id} (subject "
                                      f"{subject} version {version})")
                return
        self.schemas[key] = sv
        self._max_ids[ctx] = max(self._max_ids.get(ctx, 0), sv.id)
        self.ids.setdefault(ctx, {}).setdefault(sv.id, {})[subject] = version

    def _tombstoned(self, subject: str, version: int, old: SchemaValue) -> None:
        guids = self.ids.get(context_of(subject), {})
        sv = guids.get(old.id)
        if sv is None:
            return
        if sv.get(subject) == version:
            del sv[subject]
        if not sv:
            del guids[old.id]

    def _delete_subject(self, v: dict, offset: int) -> None:
        subject, upto = v.get("subject"), v.get("version")
        if not isinstance(subject, str) or isinstance(upto, bool) or not isinstance(upto, int):
            self._problem(offset, "a DELETE_SUBJECT value without subject and version")
            return
        for (s, ver), sv in self.schemas.items():
            if s == subject and ver <= upto:
                sv.deleted = True

    def _clear_subject(self, subject: str | None) -> None:
        for key in [k for k, sv in self.schemas.items()
                    if sv.deleted and (subject is None or k[0] == subject)]:
            sv = self.schemas.pop(key)
            self._tombstoned(key[0], key[1], sv)

    # -- lookups -------------------------------------------------------------------------

    def key_by_id(self, schema_id: int, context: str = DEFAULT_CONTEXT
                  ) -> tuple[str, int] | None:
        """``(subject, version)`` of a subject-version holding ``schema_id`` in
        ``context`` (``schemaKeyById``), or None."""
        sv = self.ids.get(context, {}).get(schema_id)
        if not sv:
            return None
        subject, version = next(iter(sv.items()))
        return subject, version

    def by_id(self, schema_id: int, context: str = DEFAULT_CONTEXT) -> SchemaValue | None:
        """The schema of ``schema_id`` (soft-deleted included), or None."""
        key = self.key_by_id(schema_id, context)
        return None if key is None else self.schemas.get(key)

    def subjects_of(self, schema_id: int, context: str = DEFAULT_CONTEXT) -> list[str]:
        """The subjects holding ``schema_id``, sorted."""
        return sorted(self.ids.get(context, {}).get(schema_id, {}))

    def version(self, subject: str, version: int | None) -> SchemaValue | None:
        """``subject``'s ``version`` (None or -1: the latest not deleted), or None."""
        if version is None or version == -1:
            return self.latest(subject)
        return self.schemas.get((subject, version))

    def versions(self, subject: str, include_deleted: bool = False) -> list[SchemaValue]:
        """``subject``'s versions in version order."""
        return sorted((sv for (s, _), sv in self.schemas.items()
                       if s == subject and (include_deleted or not sv.deleted)),
                      key=lambda sv: sv.version)

    def latest(self, subject: str) -> SchemaValue | None:
        """The newest version of ``subject`` not deleted, or None."""
        vs = self.versions(subject)
        return vs[-1] if vs else None

    def subjects(self, include_deleted: bool = False) -> list[str]:
        return sorted({s for (s, _), sv in self.schemas.items()
                       if include_deleted or not sv.deleted})

    def max_id(self, context: str = DEFAULT_CONTEXT) -> int:
        """The largest id registered in ``context`` (0: none)."""
        return self._max_ids.get(context, 0)

    def __len__(self) -> int:
        return len(self.schemas)


def find_schemas_partition(path, topic: str = SCHEMAS_TOPIC):
    """The ``_schemas`` partition for ``path``: ``path`` itself when it is a partition
    directory, else ``<path>/<topic>-0`` of a log directory; None when the log directory
    has none.

    Raises:
        NotAKafkaFileError / UnreadableError: ``path`` is missing or neither.
    """
    p = check_exists(path)
    kind = classify_dir(p)
    if kind == PARTITION:
        return p
    if kind == OTHER:
        raise NotAKafkaFileError("neither a _schemas partition directory nor a log "
                                 "directory", file=p)
    d = p / f"{topic}-0"
    return d if d.is_dir() else None


def load_store(partition_dir, *, check_crcs: bool = True,
               max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> SchemaStore:
    """Replay a ``_schemas`` partition directory into a :class:`SchemaStore`, from its
    log start offset to its end. Records it cannot apply, and bytes after a segment's
    last whole batch, are listed in :attr:`SchemaStore.problems`.

    Raises:
        CrcMismatchError / CorruptRecordError: a batch that fails its CRC or does not
            decode (the file and byte position named).
        NotAKafkaFileError / UnreadableError: not a partition directory.
    """
    log = Log.open(partition_dir)
    store = SchemaStore(source=str(log.directory))
    try:
        problems: list[str] = []
        for seg, b in log.batches_from(log.log_start_offset, check_crcs=check_crcs,
                                       problems=problems):
            if type(b) is RecordBatch and b[7] & CONTROL_FLAG_MASK:
                continue
            for r in iter_records_of(b, seg.log_path, max_decompressed_bytes):
                key, value = r[2], r[3]
                store.apply(None if key is None else bytes(key),
                            None if value is None else bytes(value), r[0])
        store.problems[:0] = problems + [p for p in log.problems if p not in problems]
    except KafkalogError:
        raise
    finally:
        log.close()
    return store


def open_schema_source(near=None, *, schemas=None, url: str | None = None,
                       properties: dict[str, str] | None = None, check_crcs: bool = True):
    """The schemas a reader decodes with: the ``_schemas`` partition ``schemas`` names (a
    partition directory, or a log directory holding ``_schemas-0``), else the one of the
    log directory holding the partition directory ``near``; and/or a live registry at
    ``url`` (asked after the offline store, for what it does not hold).

    Raises:
        InvalidArgumentError: neither a ``_schemas`` partition nor ``url``; a bad URL or
            property.
        NotAKafkaFileError / UnreadableError / CorruptRecordError: ``schemas`` is not a
            readable partition.
    """
    from ..errors import InvalidArgumentError

    part = None
    if schemas is not None:
        part = find_schemas_partition(schemas)
        if part is None:
            raise InvalidArgumentError(f"--schemas {schemas}: no {SCHEMAS_TOPIC}-0 partition "
                                       "directory in this log directory")
    elif near is not None:
        d = as_path(near)
        for cand in (d / f"{SCHEMAS_TOPIC}-0", d.parent / f"{SCHEMAS_TOPIC}-0"):
            if cand.is_dir():
                part = cand
                break
    sources = []
    if part is not None:
        sources.append(load_store(part, check_crcs=check_crcs))
    if url:
        from .rest import RestSchemaSource

        sources.append(RestSchemaSource(url, properties))
    if not sources:
        raise InvalidArgumentError(
            f"no {SCHEMAS_TOPIC} partition beside {near} to decode with: name one with "
            "--schemas PATH, or a live registry with --schema-registry URL")
    if len(sources) == 1:
        return sources[0]
    from .rest import ChainedSource

    return ChainedSource(sources)
