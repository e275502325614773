"""``read``: a partition as a consumer sees it, read straight from the segment files.

The reading itself is storage's (:class:`~kafkalog_cli.storage.log.Log`, shared with
``serve`` and the Spark source); this module positions the consumer and presents what
the log returns. The read path follows the broker and the consumer:

* **seek by offset** (``UnifiedLog.read`` / ``LogSegment.translateOffset``): the segment
  is the floor entry of the segment map; inside it the offset index gives the largest
  entry <= the offset and the scan runs forward from that position, so it reads at most
  one index interval plus one batch before the first record. An offset missing from the
  log (a compaction gap) gives the next record after it; an offset below the log start
  offset or above the log end offset is out of range.
* **seek by timestamp** (ListOffsets / ``offsetsForTimes``, ``UnifiedLog
  .fetchOffsetByTimestamp``): the first segment whose largest timestamp is >= T, then
  ``LogSegment.findOffsetByTimestamp`` - time index lookup, offset index lookup, scan -
  for the first record (in offset order) whose timestamp is >= T. The consumer then reads
  from that offset.
* **isolation** (the consumer's ``CompletedFetch``): control records are never returned.
  Under ``read_committed`` the records of aborted transactions are dropped and the read
  stops at the last stable offset (the first offset of the earliest transaction still
  open at the end of the log). Both come from the producer state replayed over the log
  from its start (:meth:`~kafkalog_cli.storage.log.Log.replay_producer_state`: the
  ABORT/COMMIT markers themselves, from which recovery rebuilds the ``.txnindex``), so a
  missing or stale ``.txnindex`` does not matter.
* **internal topics** (``__consumer_offsets``, ``__transaction_state``,
  ``__share_group_state``, ``__cluster_metadata``, ``__remote_log_metadata``): each record is also decoded with dump-segment's decoders
  (:mod:`kafkalog_cli.decoders`), picked by the topic name or forced with ``decode``; the
  record keeps its raw bytes and carries the :class:`~kafkalog_cli.decoders.DecodedRecord`.
* **Schema Registry** (``registry``: ``--key-decoder`` / ``--value-decoder``): keys and
  values in Confluent's wire format decoded with the schemas of the log directory's own
  ``_schemas`` topic (or a live registry), as the Confluent console consumers print them
  (:mod:`kafkalog_cli.registry`); the record carries the
  :class:`~kafkalog_cli.registry.decoder.SchemaDecoded`, and what does not decode keeps
  its bytes.

The read never writes: files are opened read-only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, NamedTuple

from ..constants import (
    CONTROL_FLAG_MASK,
    DECODER_NAMES,
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    TRANSACTIONAL_FLAG_MASK,
)
from ..errors import (
    InvalidArgumentError,
    NotAKafkaFileError,
    OffsetOutOfRangeError,
)
from ..format.record_batch import RecordBatch
from ..storage.files import (
    OTHER,
    PARTITION,
    check_exists,
    classify_dir,
    parse_partition_dir_name,
    partition_dirs_of,
)
from ..storage.log import Log
from ..storage.segment import iter_records_of
from .encoding import encode_bytes

READ_UNCOMMITTED = "read_uncommitted"
READ_COMMITTED = "read_committed"
ISOLATION_LEVELS = (READ_UNCOMMITTED, READ_COMMITTED)

#: ``decode`` values of :func:`read`: pick by topic name, never, or force one decoder
#: (dump-segment's names: ``offsets``, ``transaction-log``, ``cluster-metadata``,
#: ``remote-log-metadata``, ``share-group-state``: the keys of :data:`DECODER_TOPICS`).
DECODE_AUTO, DECODE_NONE = "auto", "none"
DECODER_TOPICS = DECODER_NAMES


class ConsumerRecord(NamedTuple):
    """A record as a consumer receives it (``ConsumerRecord``): key and value are bytes or
    None; headers a tuple of ``(str, bytes | None)``; leader_epoch None when unknown;
    ``decoded`` the internal-topic decoding of key and value
    (:class:`~kafkalog_cli.decoders.DecodedRecord`) or their Schema Registry decoding
    (:class:`~kafkalog_cli.registry.decoder.SchemaDecoded`), None when not decoded.

    A named tuple, immutable: one is made per record read, and a frozen dataclass's
    ``__init__`` (a ``object.__setattr__`` per field) cost ~1.1 us of the ~2 us a record
    of ``read -o json`` took, a tuple ~0.1 us (measured). Change one with ``_replace``."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: str
    key: bytes | None
    value: bytes | None
    headers: tuple = ()
    leader_epoch: int | None = None
    decoded: Any = None

    def to_dict(self, encoding: str = "utf8") -> dict:
        """The JSON object of ``read -o json`` (docs/json.md, ``consumer-record.json``;
        bytes as dump-segment's JSON encodes them: a field that is not UTF-8 text is
        named in ``keyEncoding``/``valueEncoding`` (a header's ``valueEncoding``), so the
        object is ``produce --format jsonl`` input that writes the same bytes). A decoded
        record has its key and value as the decoders' JSON objects instead (null for a
        missing key or a tombstone), ``keyType`` and, when something stayed raw,
        ``decodeWarnings``. A Schema Registry decoding puts the decoded JSON in ``key`` /
        ``value`` with ``keyEncoding`` / ``valueEncoding`` (``avro``, ``protobuf``,
        ``json-schema``), ``keySchemaId`` / ``valueSchemaId`` and, when known,
        ``keySubject`` / ``valueSubject``; a side that did not decode is its bytes in
        base64, with ``decodeWarnings`` (after ``headers``)."""
        o = {"topic": self.topic, "partition": self.partition, "offset": self.offset,
             "timestamp": self.timestamp, "timestampType": self.timestamp_type,
             "leaderEpoch": self.leader_epoch}
        d = self.decoded
        if d is not None and hasattr(d, "console"):  # Schema Registry's
            for name, f, data, failed in (("key", d.key, self.key, d.key_failed),
                                          ("value", d.value, self.value, d.value_failed)):
                if f is not None:
                    o[name] = f.value
                    o[name + "Encoding"] = f.encoding
                    o[name + "SchemaId"] = f.schema_id
                    if f.subject is not None:
                        o[name + "Subject"] = f.subject
                    continue
                text, label = encode_bytes(data, "base64" if failed else encoding)
                o[name] = text
                if label:
                    o[name + "Encoding"] = label
        elif d is not None:
            o["key"] = d.key
            o["value"] = None if d.tombstone else d.value
            o["keyType"] = d.key_type
            if d.warnings:
                o["decodeWarnings"] = list(d.warnings)
        else:
            for name, data in (("key", self.key), ("value", self.value)):
                text, label = encode_bytes(data, encoding)
                o[name] = text
                if label:
                    o[name + "Encoding"] = label
        hs = []
        for k, v in self.headers:
            text, label = encode_bytes(v, encoding)
            h = {"key": k, "value": text}
            if label:
                h["valueEncoding"] = label
            hs.append(h)
        o["headers"] = hs
        if d is not None and hasattr(d, "console") and d.warnings:
            o["decodeWarnings"] = list(d.warnings)
        return o


# -- opening the partition -----------------------------------------------------------------

def open_partition(path, topic: str | None = None, partition: int | None = None) -> Log:
    """The partition directory ``path`` names: ``path`` itself when it holds segments,
    else ``<path>/<topic>-<partition>`` of a log directory. With a single partition of
    ``topic`` in the log directory, ``partition`` may be omitted.

    Raises:
        InvalidArgumentError: topic/partition missing, ambiguous or contradicting the
            partition directory's name.
        NotAKafkaFileError / UnreadableError: no such partition directory, or ``path`` is
            neither a partition nor a log directory.
    """
    p = check_exists(path)
    if p.is_file():
        raise NotAKafkaFileError("expected a log directory or a partition directory", file=p)
    kind = classify_dir(p)
    if kind == OTHER:
        raise NotAKafkaFileError("neither a partition directory (no segment files) nor a log "
                                 "directory", file=p)
    if kind == PARTITION:
        tp = parse_partition_dir_name(p.name)
        if tp is not None:
            if topic is not None and topic != tp.topic:
                raise InvalidArgumentError(
                    f"--topic {topic} does not match the partition directory {p.name}")
            if partition is not None and partition != tp.partition:
                raise InvalidArgumentError(
                    f"--partition {partition} does not match the partition directory {p.name}")
        return Log.open(p)
    if topic is None:
        raise InvalidArgumentError(
            f"{p} is a log directory: name the partition with --topic and --partition")
    if partition is None:
        parts = [d for d in partition_dirs_of(p)
                 if (tp := parse_partition_dir_name(d.name)) is not None and tp.topic == topic
                 and "." not in d.name[len(topic):]]
        if len(parts) != 1:
            raise InvalidArgumentError(
                f"topic {topic} has {len(parts)} partition directories in {p}: choose one "
                "with --partition")
        return Log.open(parts[0])
    d = p / f"{topic}-{partition}"
    if not d.is_dir():
        raise NotAKafkaFileError(f"no partition directory {topic}-{partition} in this log "
                                 "directory", file=p)
    return Log.open(d)


# -- offsets and seeks (storage's: Log) ---------------------------------------------------

def log_start_offset(log: Log, problems: list[str] | None = None) -> int:
    """:attr:`Log.log_start_offset <kafkalog_cli.storage.log.Log.log_start_offset>`; what
    it could not use (a checkpoint that does not parse) is added to ``problems``."""
    lso = log.log_start_offset
    if problems is not None:
        problems.extend(p for p in log.problems if p not in problems)
    return lso


def log_end_offset(log: Log) -> int:
    """:attr:`Log.log_end_offset <kafkalog_cli.storage.log.Log.log_end_offset>`."""
    return log.log_end_offset


def offset_for_timestamp(log: Log, timestamp: int, start_offset: int | None = None
                         ) -> tuple[int, int] | None:
    """ListOffsets for ``timestamp``: ``(timestamp, offset)`` of the first record (in
    offset order, control records included, offsets >= ``start_offset``, default the log
    start offset) whose timestamp is >= ``timestamp``; None when there is none
    (:meth:`Log.fetch_offset_by_timestamp <kafkalog_cli.storage.log.Log
    .fetch_offset_by_timestamp>`)."""
    found = log.fetch_offset_by_timestamp(timestamp, start_offset)
    return None if found is None else (found.timestamp, found.offset)


# -- transactions ------------------------------------------------------------------------

@dataclass
class TxnState:
    """What a replay of the log's producer state says about transactions (the aborted
    transactions a consumer is told of, the last stable offset).

    Attributes:
        aborted: ``{producer id: [(first offset, ABORT marker offset)]}``.
        last_stable_offset: the first offset of the earliest transaction still open at the
            end of the log, or the log end offset when none is open.
        open_transactions: ``{producer id: first offset}`` still open at the end.
    """

    aborted: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    last_stable_offset: int = 0
    open_transactions: dict[int, int] = field(default_factory=dict)

    def is_aborted(self, producer_id: int, offset: int) -> bool:
        for first, last in self.aborted.get(producer_id, ()):
            if first <= offset <= last:
                return True
        return False


def scan_transactions(log: Log, end_offset: int | None = None) -> TxnState:
    """Aborted transactions and the last stable offset, from the producer state replayed
    over the whole log (:meth:`Log.replay_producer_state <kafkalog_cli.storage.log.Log
    .replay_producer_state>`: the ABORT/COMMIT markers themselves, the source recovery
    rebuilds ``.txnindex`` from, so a missing or stale ``.txnindex`` does not matter)."""
    indexes: dict = {}
    state = log.replay_producer_state(txn_indexes=indexes)
    st = TxnState()
    for t in log.collect_aborted_transactions(0, state.last_map_offset, indexes):
        st.aborted.setdefault(t.producer_id, []).append((t.first_offset, t.last_offset))
    st.open_transactions = {pid: first for first, pid in sorted(state.ongoing.items())}
    fuo = state.first_unstable_offset
    st.last_stable_offset = state.last_map_offset if fuo is None else fuo
    if end_offset is not None:
        st.last_stable_offset = min(st.last_stable_offset, end_offset)
    return st


# -- the consumer's view -----------------------------------------------------------------

def consume(log: Log, start_offset: int, *, isolation_level: str = READ_UNCOMMITTED,
            max_records: int | None = None, txn: TxnState | None = None,
            check_crcs: bool = True, problems: list | None = None,
            max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
            skipped: list | None = None) -> Iterator[ConsumerRecord]:
    """The records a consumer positioned at ``start_offset`` receives, in offset order:
    control records never; under ``read_committed`` no record of an aborted transaction
    and none at or after the last stable offset. Lazy: stops reading after
    ``max_records``, having decoded records for no more than that (and the rest of the
    piece of a batch they came in: see ``RecordBatch.iter_records``).

    ``problems`` (a list) collects the invalid bytes the read passes over (see
    :meth:`Log.batches_from <kafkalog_cli.storage.log.Log.batches_from>`);
    ``max_decompressed_bytes`` bounds one batch's decompressed records. With ``skipped``
    (a list: ``--skip-corrupt``) the read goes past damage, appending each byte range it
    passes over (:class:`~kafkalog_cli.format.salvage.SkippedBytes`).

    Raises:
        CrcMismatchError: (``check_crcs``, the consumer's ``check.crcs=true`` default) a
            batch to deliver fails its CRC; the consumer would throw too.
    """
    if isolation_level not in ISOLATION_LEVELS:
        raise InvalidArgumentError(f"unknown isolation level {isolation_level!r} (expected "
                                   f"{' or '.join(ISOLATION_LEVELS)})")
    if max_records is not None and max_records <= 0:
        return
    committed = isolation_level == READ_COMMITTED
    if committed and txn is None:
        txn = scan_transactions(log)
    lso = txn.last_stable_offset if committed else None
    tp = log.topic_partition
    topic = tp.topic if tp else log.directory.name
    part = tp.partition if tp else -1
    n = 0
    for seg, b in log.batches_from(start_offset, check_crcs=check_crcs, problems=problems,
                                   skipped=skipped):
        if lso is not None and b.base_offset >= lso:
            return
        if type(b) is RecordBatch:
            attrs = b[7]
            if attrs & CONTROL_FLAG_MASK:
                continue
            if committed and attrs & TRANSACTIONAL_FLAG_MASK and txn.is_aborted(b[11], b[2]):
                continue
            ts_type = b.timestamp_type
            epoch = b[4] if b[4] >= 0 else None
        else:
            ts_type = b.timestamp_type
            epoch = None
        records = iter_records_of(b, seg.log_path, max_decompressed_bytes)
        if skipped is not None:
            records = _salvaged(records, b, seg, skipped)
        for r in records:
            off = r[0]
            if off < start_offset:
                continue
            if lso is not None and off >= lso:
                return
            key, value, headers = r[2], r[3], r[4]
            # the decoder cuts the headers' values from the buffer it cuts the value from:
            # with a value of bytes they are bytes too (a tuple of (str, bytes | None))
            if headers and (value is None or value.__class__ is not bytes
                            or headers.__class__ is not tuple):
                headers = tuple([(k, _bytes(v)) for k, v in headers])
            if key is not None and key.__class__ is not bytes:
                key = bytes(key)
            if value is not None and value.__class__ is not bytes:
                value = bytes(value)
            yield _record(ConsumerRecord, (
                topic, part, off, r[1], ts_type, key, value, headers or (), epoch, None))
            n += 1
            if max_records is not None and n >= max_records:
                return


def _salvaged(records, batch, seg, skipped: list):
    """``records`` of ``batch`` until one does not decode; then the batch is a skipped
    range (``--skip-corrupt``) and the read goes on with the next batch."""
    from ..errors import CorruptRecordError
    from ..format.salvage import SkippedBytes

    try:
        yield from records
    except CorruptRecordError as e:
        skipped.append(SkippedBytes(str(seg.log_path), batch.position, batch.size,
                                    f"records do not decode: {e.message}"))


#: ``_record(ConsumerRecord, fields)``: a record from all ten fields, without the
#: keyword-and-defaults call of ``ConsumerRecord(...)``
_record = tuple.__new__


def _bytes(v):
    return None if v is None else bytes(v)


def decoder_for(topic: str, decode: str = DECODE_AUTO):
    """The internal-topic decoder ``read`` uses for ``topic`` under ``decode``
    (:data:`DECODE_AUTO`, :data:`DECODE_NONE` or one of dump-segment's decoder names), or
    None.

    Raises:
        InvalidArgumentError: an unknown ``decode`` value.
    """
    _check_decode(decode)
    if decode == DECODE_NONE:
        return None
    if decode == DECODE_AUTO and not topic.startswith("__"):
        return None  # not an internal topic: the decoders are not even imported
    from ..decoders import decoder_for_name, decoder_for_topic

    if decode == DECODE_AUTO:
        return decoder_for_topic(topic)
    return decoder_for_name(decode)


def _check_decode(decode: str) -> None:
    if decode not in (DECODE_AUTO, DECODE_NONE, *DECODER_TOPICS):
        raise InvalidArgumentError(f"unknown decoder {decode!r} (expected auto, none or "
                                   f"{', '.join(DECODER_TOPICS)})")


def decode_records(records: Iterator[ConsumerRecord], decoder) -> Iterator[ConsumerRecord]:
    """``records`` with ``decoded`` set by ``decoder`` (raw bytes kept)."""
    dec = decoder.decode
    for r in records:
        yield ConsumerRecord(r.topic, r.partition, r.offset, r.timestamp, r.timestamp_type,
                             r.key, r.value, r.headers, r.leader_epoch,
                             dec(r.key, r.value))


def decode_registry_records(records: Iterator[ConsumerRecord], decoder, problems: list
                            ) -> Iterator[ConsumerRecord]:
    """``records`` with ``decoded`` set by a Schema Registry
    :class:`~kafkalog_cli.registry.decoder.RecordDecoder` (raw bytes kept); when the
    records are exhausted, one line per schema id not found (and one for the records
    that did not decode otherwise) is added to ``problems``."""
    dec = decoder.decode
    try:
        for r in records:
            yield _record(ConsumerRecord, (
                r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], dec(r[5], r[6])))
    finally:
        problems.extend(decoder.problems())


# -- the command -------------------------------------------------------------------------

_EPOCH_MS = re.compile(r"^-?\d+$")


def parse_timestamp(text: str) -> int:
    """Epoch milliseconds, or ISO-8601 (``2024-05-01T12:00:00``, ``...Z``,
    ``...+02:00``, fractions allowed); without a zone the time is UTC, as Kafka's
    ``Utils.getDateTime`` reads it.

    Raises:
        InvalidArgumentError: neither form.
    """
    s = text.strip()
    if _EPOCH_MS.match(s):
        ms = int(s)
        if ms < 0:
            # ListOffsets reserves -1 (latest) and -2 (earliest); offsetsForTimes rejects
            # negative targets
            raise InvalidArgumentError(
                f"invalid timestamp {text!r}: must not be negative (use --from-beginning or "
                "--offset earliest|latest)")
        return ms
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        raise InvalidArgumentError(
            f"invalid timestamp {text!r}: expected epoch milliseconds or ISO-8601 such as "
            "2024-05-01T12:00:00.000Z") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    delta = dt - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000)


@dataclass
class ReadResult:
    """Where the read starts and what it yields.

    Attributes:
        partition_dir: the partition directory read.
        topic / partition: from its name.
        log_start_offset / log_end_offset: the log's offsets.
        start_offset: where the consumer is positioned (None: a timestamp after every
            record, nothing to read).
        found_timestamp: with ``--timestamp``, the timestamp of the record found.
        isolation_level: as given.
        last_stable_offset: under read_committed, where the read stops.
        decoder: the decoder's topic (``"__consumer_offsets"``, ...) when records are
            decoded, ``"schema-registry"`` when they are decoded through Schema
            Registry, else None.
        records: lazy iterator of :class:`ConsumerRecord`.
        problems: what the read could not use, one line each naming the file (and line
            or byte position), for stderr and exit status 1: a log-start-offset-checkpoint
            that does not parse (read as empty), and - filled as ``records`` is iterated -
            corrupt data the read passed over (bytes after a segment's last whole batch,
            e.g. a batch whose offsets overflow int64).
    """

    partition_dir: str
    topic: str
    partition: int
    log_start_offset: int
    log_end_offset: int
    start_offset: int | None
    isolation_level: str
    found_timestamp: int | None = None
    last_stable_offset: int | None = None
    decoder: str | None = None
    records: Iterator[ConsumerRecord] = field(default_factory=lambda: iter(()))
    log: Log | None = None
    #: what the read could not use, one line each (see above)
    problems: list[str] = field(default_factory=list)
    #: with ``skip_corrupt``: the byte ranges passed over, filled as ``records`` is
    #: iterated (:class:`~kafkalog_cli.format.salvage.SkippedBytes`)
    skipped: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing the read could not use, nothing skipped (valid once ``records`` is
        exhausted)."""
        return not (self.problems or self.skipped)

    @property
    def unreadable(self) -> bool:
        """A ``.log`` the read reached holds no whole batch from its first byte: not a
        Kafka log (exit 3)."""
        return self.log is not None and bool(self.log.not_kafka_files)

    def close(self) -> None:
        if self.log is not None:
            self.log.close()

    def to_dict(self) -> dict:
        return {"partitionDir": self.partition_dir, "topic": self.topic,
                "partition": self.partition, "logStartOffset": self.log_start_offset,
                "logEndOffset": self.log_end_offset, "startOffset": self.start_offset,
                "foundTimestamp": self.found_timestamp, "isolationLevel": self.isolation_level,
                "lastStableOffset": self.last_stable_offset, "decoder": self.decoder}


def read(path, *, topic: str | None = None, partition: int | None = None,
         offset: int | str | None = None, timestamp: int | str | None = None,
         from_beginning: bool = False, max_records: int | None = None,
         isolation_level: str = READ_UNCOMMITTED, decode: str = DECODE_AUTO,
         check_crcs: bool = True,
         max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
         skip_corrupt: bool = False, registry=None) -> ReadResult:
    """Position a consumer on a partition directory (see :func:`open_partition`) and
    return its records lazily.

    The start: ``offset`` (an int, or ``"earliest"``/``"latest"``), else ``timestamp``
    (epoch ms or ISO-8601, see :func:`parse_timestamp`), else the log start offset
    (``from_beginning``, also the default: offline, no record arrives later).

    ``decode``: ``"auto"`` decodes the records of Kafka's internal topics (picked by the
    topic name), ``"none"`` never decodes, ``"offsets"`` / ``"transaction-log"`` /
    ``"cluster-metadata"`` force that decoder (see :func:`decoder_for`).

    ``registry``: a :class:`~kafkalog_cli.registry.decoder.SchemaRegistryOptions`
    asking for keys and/or values to be decoded through Schema Registry (the
    internal-topic decoders then stay off); what its ``_schemas`` replay skipped and the
    schema ids not found go to ``problems``.

    ``max_decompressed_bytes``: a batch whose records decompress to more is corrupt
    (kafkalog's bound on the work of one batch; Kafka has none). Corrupt data reached
    while iterating raises; bytes after a segment's last whole batch are collected in
    ``problems`` instead. With ``skip_corrupt`` the read goes past a batch that fails
    (CRC, framing, size) to the next good one (:mod:`kafkalog_cli.format.salvage`), the
    ranges passed over collected in ``skipped``.

    Raises:
        InvalidArgumentError: conflicting options, a bad timestamp, isolation level or
            decoder.
        OffsetOutOfRangeError: ``offset`` outside [log start offset, log end offset].
        NotAKafkaFileError / UnreadableError: no such partition.
    """
    chosen = [offset is not None, timestamp is not None, from_beginning]
    if sum(chosen) > 1:
        raise InvalidArgumentError("give only one of --offset, --timestamp and "
                                   "--from-beginning")
    if isolation_level not in ISOLATION_LEVELS:
        raise InvalidArgumentError(f"unknown isolation level {isolation_level!r} (expected "
                                   f"{' or '.join(ISOLATION_LEVELS)})")
    _check_decode(decode)
    log = open_partition(path, topic, partition)
    tp = log.topic_partition
    topic_name = tp.topic if tp else log.directory.name
    rdec = None
    if registry:
        try:
            rdec = registry.decoder(topic_name, log.directory)
        except BaseException:
            log.close()
            raise
    decoder = None if rdec is not None else decoder_for(topic_name, decode)
    problems: list[str] = []
    lso = log_start_offset(log, problems)
    leo = log_end_offset(log)
    res = ReadResult(problems=problems, partition_dir=str(log.directory), topic=tp.topic if tp else log.directory.name,
                     partition=tp.partition if tp else -1, log_start_offset=lso,
                     log_end_offset=leo, start_offset=lso, isolation_level=isolation_level,
                     log=log)
    if offset is not None:
        if isinstance(offset, str):
            word = offset.strip().lower()
            if word == "earliest":
                offset = lso
            elif word == "latest":
                offset = leo
            elif _EPOCH_MS.match(word):
                offset = int(word)
            else:
                raise InvalidArgumentError(f"invalid offset {offset!r}: expected a number, "
                                           "earliest or latest")
        if offset < lso or offset > leo:
            log.close()
            raise OffsetOutOfRangeError(offset, lso, leo, file=log.directory)
        res.start_offset = offset
    elif timestamp is not None:
        ts = parse_timestamp(timestamp) if isinstance(timestamp, str) else int(timestamp)
        found = offset_for_timestamp(log, ts, lso)
        if found is None:
            res.start_offset = None
        else:
            res.found_timestamp, res.start_offset = found
    txn = None
    if isolation_level == READ_COMMITTED:
        txn = scan_transactions(log, leo)
        res.last_stable_offset = txn.last_stable_offset
        res.problems.extend(p for p in log.problems if p not in res.problems)
    if res.start_offset is not None:
        res.records = consume(log, res.start_offset, isolation_level=isolation_level,
                              max_records=max_records, txn=txn, check_crcs=check_crcs,
                              problems=res.problems,
                              max_decompressed_bytes=max_decompressed_bytes,
                              skipped=res.skipped if skip_corrupt else None)
        if decoder is not None:
            res.records = decode_records(res.records, decoder)
        elif rdec is not None:
            res.records = decode_registry_records(res.records, rdec, res.problems)
    if decoder is not None:
        res.decoder = decoder.topic
    if rdec is not None:
        res.decoder = "schema-registry"
        res.problems.extend(registry.replay_problems())
    return res
