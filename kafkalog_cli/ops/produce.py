"""``kafkalog produce``: input records -> v2 batches -> :class:`~kafkalog_cli.storage.log.
UnifiedLog` appends, as a producer and the broker's produce path would write them.

Pipeline: :mod:`kafkalog_cli.inputs` yields chunks of records; :class:`_Batcher` groups
them per partition into batches of at most ``batch_size`` records / ``batch_bytes`` bytes
(estimated as the Java producer does: key + value + headers + per-record overhead) and
builds each with :mod:`kafkalog_cli.format.builder` (compressed with the chosen codec, as
the Java client compresses); each batch is appended with ``append_as_leader`` (validation,
offsets, roll, indexes, producer state). Idempotent batches carry the producer id/epoch and
sequences continued from the partition's producer state; transactional ones end with a
COMMIT or ABORT marker.

Failure: a malformed input line stops the run, and the error names it. The records
before it are written (as kafka-console-producer has sent them by then), every batch
complete (indexes, checkpoints, snapshot and clean-shutdown marker written by the normal
close); with ``atomic`` the whole input is read and checked first, so a malformed line
writes nothing. Nothing is created (no log directory, no partition) before a first
record was read. A batch the broker refuses (over max.message.bytes, a timestamp out of
range, ...) stops the run too: the batches before it stand, its records are dropped. An
open transaction is aborted (an ABORT marker) so consumers are not blocked. Ctrl-C closes
as a refused batch does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from pathlib import Path

from .. import inputs
from ..constants import (
    CODEC_IDS,
    CODEC_NONE,
    INT32_MAX,
    INT64_MAX,
    LEADER_EPOCH_CHECKPOINT,
    NO_TIMESTAMP,
)
from ..errors import (
    FencedLeaderEpochError,
    IllegalStateError,
    InputError,
    InvalidArgumentError,
    KafkalogError,
    ProduceError,
    UnreadableError,
)
from ..format import compression
from ..format.builder import assemble_batch, encode_columns, encode_values
from ..inputs import ENCODINGS, ColumnsChunk, LineReaderConfig, ValuesChunk
from ..storage.checkpoints import read_leader_epoch_checkpoint
from ..storage.clock import SYSTEM, Clock
from ..storage.config import LogConfig, topic_config
from ..storage.dir_files import kafka_string_to_uuid, uuid_to_kafka_string
from ..storage.files import validate_topic_name
from ..storage.log import UnifiedLog
from ..storage.log_manager import LogManager, topic_id_on_disk
from ..storage.validator import RecordsSummary

_PARTITION_OF = itemgetter(5)  # InputRecord.partition
#: DefaultRecord overhead estimate per record (AbstractRecords.estimateSizeInBytes)
_RECORD_OVERHEAD = 21


@dataclass
class ProduceOptions:
    """What ``kafkalog produce`` is asked to do.

    Attributes:
        topic / partition: the target (``partition`` for records without their own).
        input_format: ``lines`` | ``jsonl`` | ``raw``; None: by file name, ``jsonl`` for
            *.jsonl / *.ndjson, else (and for stdin) ``lines``.
        parse_key / key_separator: for lines.
        line_reader: kafka-console-producer's ``--property`` settings for lines
            (:class:`~kafkalog_cli.inputs.LineReaderConfig`; None: ``parse_key`` and
            ``key_separator`` alone).
        value_encoding: ``utf8`` | ``base64`` | ``hex``: jsonl strings without their own
            ``keyEncoding`` / ``valueEncoding``.
        keep_partition: jsonl: write a record to the partition its ``partition`` field
            names (else ``partition``, and the field is ignored).
        atomic: read and check the whole input before writing anything (stdin is spooled
            to a temporary file outside the log directory).
        batch_size: records per batch (None: only ``batch_bytes`` limits).
        batch_bytes: estimated bytes per batch (the Java producer's batch.size, 16384).
        compression: ``none`` | ``gzip`` | ``snappy`` | ``lz4`` | ``zstd``.
        compression_level: the codec's level (None: Kafka's default).
        config: the topic's LogConfig.
        timestamp: ms for every record without one (None: the clock at batch time).
        producer_id / producer_epoch: idempotent producer (None: none).
        transactional: write transactional batches, then ``end_txn``.
        end_txn: ``commit`` | ``abort`` | ``none`` (leave the transaction open).
        coordinator_epoch: written in the marker.
        leader_epoch: partitionLeaderEpoch stamped on batches (leader-epoch-checkpoint);
            None: each partition's latest cached epoch (0 for a new partition). An epoch
            below a partition's latest is refused.
        topic_id / cluster_id / node_id: for partition.metadata / a new meta.properties.
    """

    topic: str
    partition: int = 0
    input_format: str | None = None
    parse_key: bool = False
    key_separator: str = "\t"
    line_reader: LineReaderConfig | None = None
    value_encoding: str = "utf8"
    keep_partition: bool = False
    atomic: bool = False
    batch_size: int | None = None
    batch_bytes: int = 16384
    compression: str = "none"
    compression_level: int | None = None
    config: LogConfig = field(default_factory=LogConfig)
    timestamp: int | None = None
    producer_id: int | None = None
    producer_epoch: int = 0
    transactional: bool = False
    end_txn: str = "commit"
    coordinator_epoch: int = 0
    leader_epoch: int | None = None
    topic_id: str | None = None
    cluster_id: str | None = None
    node_id: int = 1
    #: Schema Registry serializers (``avro``, ``protobuf``, ``json-schema``): the input
    #: is JSON, serialized with the schema file given (registered in the log
    #: directory's ``_schemas``) or the subject's latest schema
    key_serializer: str | None = None
    value_serializer: str | None = None
    key_subject: str | None = None
    value_subject: str | None = None
    key_schema: str | None = None
    value_schema: str | None = None

    @classmethod
    def assemble(cls, topic: str, *, properties=(), parse_key: bool = False,
                 key_separator: str = "\t", config_file=None, config_overrides=(),
                 **options) -> ProduceOptions:
        """The options of a produce from what its user gives: kafka-console-producer's
        reader ``--property`` settings over ``parse_key`` / ``key_separator``
        (:meth:`~kafkalog_cli.inputs.LineReaderConfig.from_properties`), the topic's
        LogConfig from a server.properties-style ``config_file`` and ``--config
        key=value`` ``config_overrides`` (:func:`~kafkalog_cli.storage.config
        .topic_config`); ``options`` are the other fields.

        Raises:
            InvalidArgumentError: an unknown reader property or bad separators.
            UnknownConfigError / InvalidConfigError: an unknown config key or a bad value.
            UnreadableError: ``config_file`` cannot be read.
        """
        line_reader = LineReaderConfig.from_properties(
            list(properties), parse_key=parse_key, key_separator=key_separator)
        return cls(topic, parse_key=line_reader.parse_key,
                   key_separator=line_reader.key_separator, line_reader=line_reader,
                   config=topic_config(config_file, list(config_overrides)), **options)

    def check(self) -> None:
        """Raises InvalidArgumentError for inconsistent options (called before anything is
        created on disk)."""
        validate_topic_name(self.topic)
        if self.topic_id is not None:
            _check_topic_id(self.topic_id)
        if self.input_format not in (None, "lines", "jsonl", "raw"):
            raise InvalidArgumentError(f"unknown input format {self.input_format!r}")
        if self.compression not in CODEC_IDS:
            raise InvalidArgumentError(f"unknown compression {self.compression!r}")
        if self.batch_size is not None and self.batch_size < 1:
            raise InvalidArgumentError("--batch-size must be at least 1")
        if self.batch_bytes < 1:
            raise InvalidArgumentError("--batch-bytes must be at least 1")
        if not 0 <= self.partition <= INT32_MAX:
            raise InvalidArgumentError(f"--partition must be 0..{INT32_MAX} (an int32)")
        if self.timestamp is not None and not -1 <= self.timestamp <= INT64_MAX:
            raise InvalidArgumentError(f"--timestamp must be -1..{INT64_MAX} (an int64)")
        if self.leader_epoch is not None and not 0 <= self.leader_epoch <= INT32_MAX:
            raise InvalidArgumentError(f"--leader-epoch must be 0..{INT32_MAX} (an int32)")
        if self.transactional and self.producer_id is None:
            raise InvalidArgumentError("--transactional needs --producer-id")
        if self.producer_id is not None and not 0 <= self.producer_id <= INT64_MAX:
            raise InvalidArgumentError(f"--producer-id must be 0..{INT64_MAX} (an int64)")
        if not 0 <= self.producer_epoch <= 32767:
            raise InvalidArgumentError("--producer-epoch must be 0..32767")
        if self.end_txn not in ("commit", "abort", "none"):
            raise InvalidArgumentError("--end-txn must be commit, abort or none")
        if self.value_encoding not in ENCODINGS:
            raise InvalidArgumentError(f"--value-encoding must be {', '.join(ENCODINGS)}")
        if not self.key_separator:
            raise InvalidArgumentError("--key-separator must not be empty")
        for side in ("key", "value"):
            ser = getattr(self, f"{side}_serializer")
            if ser is None and (getattr(self, f"{side}_subject") is not None
                                or getattr(self, f"{side}_schema") is not None):
                raise InvalidArgumentError(f"--{side}-subject and --{side}-schema need "
                                           f"--{side}-serializer")
            if ser is not None and ser not in ("avro", "protobuf", "json-schema"):
                raise InvalidArgumentError(f"--{side}-serializer must be avro, protobuf or "
                                           "json-schema")

    def subject(self, side: str) -> str:
        """The subject of ``side`` (``key``/``value``): given, else TopicNameStrategy's
        ``<topic>-<side>``."""
        return getattr(self, f"{side}_subject") or f"{self.topic}-{side}"


def _check_topic_id(s: str) -> None:
    """A topic id as Kafka's Uuid.fromString reads it: 22 URL-safe base64 characters of 16
    bytes."""
    try:
        u = kafka_string_to_uuid(s)
        ok = uuid_to_kafka_string(u) == s
    except (ValueError, InvalidArgumentError):  # binascii.Error: bad base64
        ok = False
    if not ok:
        raise InvalidArgumentError(f"--topic-id {s!r} is not a Kafka UUID (22 characters of "
                                   "URL-safe base64, e.g. from kafka-storage random-uuid)")
    if u.int in (0, 1):
        # Uuid.RESERVED: ZERO_UUID (no id) and ONE_UUID (METADATA_TOPIC_ID, KRaft's
        # __cluster_metadata); never a topic's id
        raise InvalidArgumentError(f"--topic-id {s} is a UUID Kafka reserves "
                                   "(Uuid.ZERO_UUID / METADATA_TOPIC_ID), not a topic id")


@dataclass(kw_only=True)
class AppendCounts:
    """What a produce appended (offsets absolute, sizes in bytes): the counters of one
    partition's result and of a run's, which sums them."""

    records: int = 0
    batches: int = 0
    bytes: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    segments_rolled: int = 0
    markers: int = 0


@dataclass
class PartitionResult(AppendCounts):
    """What was appended to one partition."""

    partition: int
    log_end_offset: int = 0
    duplicates: int = 0

    def to_dict(self) -> dict:
        return {"partition": self.partition, "records": self.records,
                "batches": self.batches, "bytes": self.bytes,
                "firstOffset": self.first_offset, "lastOffset": self.last_offset,
                "logEndOffset": self.log_end_offset, "segmentsRolled": self.segments_rolled,
                "duplicates": self.duplicates, "markers": self.markers}


@dataclass
class ProduceResult(AppendCounts):
    """The summary of a run (the partitions' counts summed); ``error`` is set when it
    stopped early (what is counted was written completely). ``elapsed_s`` in seconds."""

    log_dir: str
    topic: str
    elapsed_s: float = 0.0
    clean_shutdown: bool = True
    dropped_records: int = 0
    error: str | None = None
    partitions: dict[int, PartitionResult] = field(default_factory=dict)
    #: the schemas of the serializers: ``{"side", "subject", "id", "version",
    #: "registered"}`` (registered: written to ``_schemas`` by this run)
    schemas: list[dict] = field(default_factory=list)

    @property
    def records_per_second(self) -> float:
        return self.records / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict:
        """The JSON object (docs/json.md, ``produce.json``)."""
        return {
            "logDir": self.log_dir, "topic": self.topic, "ok": self.ok,
            "records": self.records, "batches": self.batches, "bytes": self.bytes,
            "firstOffset": self.first_offset, "lastOffset": self.last_offset,
            "segmentsRolled": self.segments_rolled, "markers": self.markers,
            "elapsedMs": round(self.elapsed_s * 1000, 3),
            "recordsPerSecond": round(self.records_per_second, 1),
            "cleanShutdown": self.clean_shutdown, "droppedRecords": self.dropped_records,
            "error": self.error,
            "partitions": [p.to_dict() for _, p in sorted(self.partitions.items())],
            "schemas": self.schemas,
        }


_HEADER_ESTIMATES: dict = {(): 0}


def _header_estimate(h) -> int:
    return sum(len(hk) + (len(hv) if hv is not None else 0) for hk, hv in h)


def _header_estimates(hdrs) -> list[int]:
    """The producer's size estimate of each record's headers (name length in characters
    plus value bytes, as before), looked up by content for repeated headers."""
    try:
        out = list(map(_HEADER_ESTIMATES.get, hdrs))
    except TypeError:  # unhashable (list) headers
        return [_header_estimate(h) for h in hdrs]
    if None in out:
        if len(_HEADER_ESTIMATES) > 4096:
            _HEADER_ESTIMATES.clear()
            _HEADER_ESTIMATES[()] = 0
        for i, e in enumerate(out):
            if e is None:
                out[i] = _HEADER_ESTIMATES[hdrs[i]] = _header_estimate(hdrs[i])
    return out


def _field_sizes(col) -> list[int]:
    """Byte counts of a key or value column, 0 for null."""
    try:
        return list(map(len, col))
    except TypeError:  # a null
        return [0 if x is None else len(x) for x in col]


class _ColumnsView:
    """A ColumnsChunk as :meth:`_Batcher._split` slices it: ``view[a:b]`` is the span."""

    __slots__ = ("chunk",)

    def __init__(self, chunk: ColumnsChunk):
        self.chunk = chunk

    def __len__(self) -> int:
        return len(self.chunk)

    def __getitem__(self, span: slice):
        return self.chunk, span


class _PendingColumns:
    """The pending batch of the columnar path: spans of chunks, concatenated column by
    column (``len`` counts records)."""

    __slots__ = ("timestamps", "keys", "values", "headers")

    def __init__(self):
        self.values: list = []
        self.timestamps: list | None = None
        self.keys: list | None = None
        self.headers: list | None = None

    def __len__(self) -> int:
        return len(self.values)

    def extend(self, item) -> None:
        chunk, span = item
        before = len(self.values)
        self.values += chunk.values[span]
        for name in ("timestamps", "keys", "headers"):
            col = getattr(chunk, name)
            mine = getattr(self, name)
            if col is None:
                if mine is not None:
                    mine += [() if name == "headers" else None] * (len(self.values) - before)
                continue
            if mine is None:
                mine = [() if name == "headers" else None] * before
                setattr(self, name, mine)
            mine += col[span]


class _Batcher:
    """Accumulates one partition's records and appends them batch by batch: each batch
    is built, compressed, assembled (producer sequence, CRC) and appended before the next
    one is started, so a batch is "written" exactly when its append returns."""

    def __init__(self, log: UnifiedLog, opts: ProduceOptions, result: PartitionResult,
                 clock: Clock):
        self.log = log
        self.opts = opts
        self.result = result
        self.clock = clock
        self.codec = CODEC_IDS[opts.compression]
        self.max_records = opts.batch_size or 2**31 - 1
        self.max_bytes = opts.batch_bytes
        self.pending: list = []
        self.pending_bytes = 0
        self.pending_values = False
        self.txn_open = False
        self.failed = False  # an append raised: nothing more may be appended
        self.failed_records = 0  # records of the batch whose append raised
        self.created = False  # this run created the partition directory
        self.leader_epoch = _leader_epoch_for(log, opts)

    def _pending_for(self, *, columns: bool, values: bool) -> None:
        """Flush a pending batch of another kind (values, records, columns) and start
        the kind asked for."""
        pending = self.pending
        if pending and (isinstance(pending, _PendingColumns) != columns
                        or self.pending_values != values):
            self.flush()
        self.pending_values = values
        if not self.pending:
            self.pending = _PendingColumns() if columns else []

    def _split(self, items: list, acc: list, flush: Callable[[], None]) -> None:
        """Greedy batching as the Java producer's accumulator: ``items`` go into the
        pending batch while it holds fewer than ``batch_size`` records and the estimated
        bytes stay within ``batch_bytes`` (a record larger than that goes alone);
        ``acc`` are the running sums of the items' estimated sizes (``acc[0] == 0``)."""
        from bisect import bisect_right

        max_records, max_bytes = self.max_records, self.max_bytes
        start, n = 0, len(items)
        while start < n:
            pending = self.pending
            hi = min(n, start + max_records - len(pending))
            end = bisect_right(acc, max_bytes - self.pending_bytes + acc[start], start,
                               hi + 1) - 1
            if end <= start:
                if pending:
                    flush()
                    continue
                end = start + 1  # a record larger than batch_bytes goes alone
            pending.extend(items[start:end])
            self.pending_bytes += acc[end] - acc[start]
            start = end
            if end < n or len(pending) >= max_records:
                flush()

    def add_values(self, values: list) -> None:
        """Plain values (a ValuesChunk): batch boundaries found with C-level sums."""
        from itertools import accumulate

        self._pending_for(columns=False, values=True)
        acc = list(accumulate(map(_RECORD_OVERHEAD.__add__, map(len, values)), initial=0))
        self._split(values, acc, self.flush_values)

    def flush_values(self) -> None:
        vals = self.pending
        self.pending = []
        self.pending_bytes = 0
        if vals:
            self.append_values(vals)

    def add_columns(self, chunk: ColumnsChunk) -> None:
        """Records as columns (a ColumnsChunk without partitions of its own): sized,
        batched and encoded column by column, with no tuple per record."""
        from itertools import accumulate

        if not chunk:
            return
        self._pending_for(columns=True, values=False)
        sizes = _field_sizes(chunk.values)
        if chunk.keys is not None:
            sizes = list(map(int.__add__, sizes, _field_sizes(chunk.keys)))
        if chunk.headers is not None and any(chunk.headers):
            sizes = list(map(int.__add__, sizes, _header_estimates(chunk.headers)))
        acc = list(accumulate(map(_RECORD_OVERHEAD.__add__, sizes), initial=0))
        self._split(_ColumnsView(chunk), acc, self.flush)

    def add(self, recs: list) -> None:
        from itertools import accumulate

        if not recs:
            return
        self._pending_for(columns=False, values=False)
        _, _, keys, vals, hdrs, _ = zip(*recs, strict=True)
        sizes = [_RECORD_OVERHEAD + (0 if k is None else len(k)) + (0 if v is None else len(v))
                 for k, v in zip(keys, vals, strict=True)]
        if any(hdrs):
            sizes = list(map(int.__add__, sizes, _header_estimates(hdrs)))
        self._split(recs, list(accumulate(sizes, initial=0)), self.flush)

    def flush(self) -> None:
        if self.pending_values:
            self.flush_values()
            return
        recs = self.pending
        if not recs:
            return
        self.pending = _PendingColumns() if isinstance(recs, _PendingColumns) else []
        self.pending_bytes = 0
        if isinstance(recs, _PendingColumns):
            self.append_columns(recs.timestamps, recs.keys, recs.values, recs.headers)
        else:
            self.append(recs)

    def append_values(self, values: list) -> None:
        now = self.clock.milliseconds()
        ts = self.opts.timestamp if self.opts.timestamp is not None else now
        self._append_block(encode_values(values), len(values), ts, ts,
                           RecordsSummary(ts, ts, 0, False))

    def append(self, recs: list) -> None:
        _, tss, keys, vals, hdrs, _ = zip(*recs, strict=True)
        self.append_columns(tss, keys, vals, hdrs)

    def append_columns(self, tss, keys, vals, hdrs) -> None:
        """Append one batch of records given as columns: timestamps (None entries: the
        default; the column None: all default), keys (None: all null), values, headers
        (None: none)."""
        opts = self.opts
        now = self.clock.milliseconds()
        default_ts = opts.timestamp if opts.timestamp is not None else now
        n = len(vals)
        if tss is None:
            tss = [default_ts] * n
        elif None in tss:
            tss = [default_ts if t is None else t for t in tss]
        if keys is not None and keys.count(None) == n:
            keys = None
        if hdrs is not None and not any(hdrs):
            hdrs = None
        ts = tss[0]
        if ts < 0 and max(tss) - ts > INT64_MAX:
            # --timestamp -1 next to a record at Long.MAX: the delta overflows the varlong
            raise InvalidArgumentError(
                f"a batch cannot hold timestamps {ts} and {max(tss)}: their difference "
                "does not fit the batch's 64-bit timestamp delta")
        if keys is None and hdrs is None and tss.count(ts) == n:
            block = encode_values(vals)
            summary = RecordsSummary(ts, ts, 0, False)
            max_ts = ts
        else:
            block, n, max_ts, at = encode_columns(tss, keys, vals, hdrs, ts)
            summary = RecordsSummary(min(tss), max_ts, max(at, 0),
                                     keys is not None and None not in keys)
        self._append_block(block, n, ts, max_ts, summary)

    def _append_block(self, block: bytes, n: int, base_ts: int, max_ts: int,
                      summary: RecordsSummary) -> None:
        if self.codec != CODEC_NONE:
            # inline: a worker thread compressing while the next batches are built was
            # measured slower here (GIL hand-offs per batch; benchmarks/results/produce.md)
            block = compression.compress(self.codec, block, level=self.opts.compression_level)
        self._append_compressed(block, n, base_ts, max_ts, summary)

    def _append_compressed(self, block: bytes, n: int, base_ts: int, max_ts: int,
                           summary: RecordsSummary) -> None:
        if self.failed:
            raise IllegalStateError("append after a failed append")
        opts = self.opts
        pid, epoch, seq = -1, -1, -1
        attrs = self.codec
        if opts.producer_id is not None:
            pid, epoch = opts.producer_id, opts.producer_epoch
            seq = self.log.producer_state.next_sequence(pid, epoch)
            if opts.transactional:
                attrs |= 0x10
        batch = assemble_batch(block, base_offset=0, partition_leader_epoch=-1,
                               attributes=attrs, last_offset_delta=n - 1,
                               base_timestamp=base_ts, max_timestamp=max_ts, producer_id=pid,
                               producer_epoch=epoch, base_sequence=seq, records_count=n)
        try:
            info = self.log.append_as_leader(batch, leader_epoch=self.leader_epoch,
                                             summary=summary)
        except BaseException:
            self.failed = True
            self.failed_records = n
            raise
        self._count(info)
        if opts.transactional:
            self.txn_open = True

    def _count(self, info) -> None:
        res = self.result
        if info.duplicate:
            res.duplicates += 1
            return
        res.records += info.records
        res.batches += 1
        res.bytes += info.size
        if res.first_offset is None:
            res.first_offset = info.first_offset
        res.last_offset = info.last_offset
        if info.rolled:
            res.segments_rolled += 1

    def end_txn(self, commit: bool) -> None:
        if not self.txn_open:
            return
        info = self.log.append_end_txn_marker(
            producer_id=self.opts.producer_id, producer_epoch=self.opts.producer_epoch,
            commit=commit, coordinator_epoch=self.opts.coordinator_epoch,
            leader_epoch=self.leader_epoch)
        self.result.markers += 1
        self.result.bytes += info.size
        self.result.last_offset = info.last_offset
        if info.rolled:
            self.result.segments_rolled += 1
        self.txn_open = False


def iter_inputs(files: list, opts: ProduceOptions, stdin=None) -> Iterator[list]:
    """Chunks of records from ``files`` (paths; ``-`` or none: ``stdin``). With
    ``opts.atomic`` the whole input is read and checked first (stdin spooled to a
    temporary file), so a malformed line raises before the first chunk is yielded.

    Raises:
        InputError: a malformed line or record, naming it.
        UnreadableError: an input file cannot be opened.
    """
    if not opts.atomic:
        yield from _iter_inputs(files, opts, stdin)
        return
    import shutil
    import sys
    import tempfile

    with tempfile.TemporaryFile(prefix="kafkalog-produce-") as spool:
        if not files or "-" in map(str, files):
            shutil.copyfileobj(stdin if stdin is not None else sys.stdin.buffer, spool)
        for _ in _iter_inputs(files, opts, _Rewound(spool)):
            pass
        yield from _iter_inputs(files, opts, _Rewound(spool))


class _Rewound:
    """A spooled stdin, read again from its start."""

    def __init__(self, f):
        f.seek(0)
        self.read = f.read


def _iter_inputs(files: list, opts: ProduceOptions, stdin=None) -> Iterator[list]:
    sources = files or ["-"]
    for f in sources:
        name = "<stdin>" if str(f) == "-" else str(f)
        fmt = opts.input_format  # an explicit --format wins over the file name
        if fmt is None:
            fmt = "lines" if name == "<stdin>" else inputs.format_for(name, "lines")
        if str(f) == "-":
            import sys

            stream = stdin if stdin is not None else sys.stdin.buffer
            yield from _from_stream(stream, name, fmt, opts)
            continue
        try:
            fh = open(f, "rb")
        except OSError as e:
            raise UnreadableError(e.strerror or str(e), file=f) from e
        with fh:
            yield from _from_stream(fh, name, fmt, opts)


def _from_stream(stream, name: str, fmt: str, opts: ProduceOptions):
    # a record over max.message.bytes is refused: its input is not read further than
    # that (a 300 MB line is not held; inputs.line_limit)
    limit = opts.config.max_message_bytes
    if fmt == "raw":
        yield inputs.read_raw(stream, name, limit)
    elif fmt == "jsonl":
        json_fields = frozenset(side for side in ("key", "value")
                                if getattr(opts, f"{side}_serializer"))
        yield from inputs.jsonl_records(stream, name, value_encoding=opts.value_encoding,
                                        keep_partition=opts.keep_partition,
                                        json_fields=json_fields,
                                        max_message_bytes=limit)
    else:
        cfg = opts.line_reader or LineReaderConfig(parse_key=opts.parse_key,
                                                   key_separator=opts.key_separator)
        yield from inputs.console_lines_records(stream, name, cfg, max_message_bytes=limit)


@dataclass(frozen=True)
class BatchBoundary:
    """A chunk of :func:`produce` that ends the batch each partition is building: the
    records after it start new batches, as the Java producer's ``flush()`` does. With it
    (and ``batch_size``/``batch_bytes`` large enough) a caller lays out every batch."""


@dataclass(frozen=True)
class EndTransaction:
    """A chunk of :func:`produce` (``opts.transactional``) that ends the transaction of
    each partition with one open: its pending batch is appended, then a COMMIT (``commit``)
    or ABORT marker, as the Java producer's ``commitTransaction`` /
    ``abortTransaction`` end it; the records after it open the next transaction, with the
    same producer id and epoch and the sequences going on (transaction.version 1, as
    ``kafkalog serve`` does)."""

    commit: bool = True


_CONTROL_CHUNKS = (BatchBoundary, EndTransaction)


def produce(log_dir, opts: ProduceOptions, chunks: Iterable[list], *,
            clock: Clock | None = None, fsync: bool = True,
            progress: Callable[[int], None] | None = None) -> ProduceResult:
    """Append every record of ``chunks`` (lists of :class:`~kafkalog_cli.inputs.
    InputRecord`, or the control chunks :class:`BatchBoundary` and
    :class:`EndTransaction`) to ``<log_dir>/<topic>-<partition>``.

    Returns:
        the :class:`ProduceResult`.

    Raises:
        ProduceError: input or append failed part-way (``.result`` has what was written).
        LogDirLockedError: a broker or another kafkalog holds the log directory.
        InvalidArgumentError / InvalidConfigError: bad options.
    """
    from ..storage.location import require_local

    log_dir = require_local(log_dir, "produce")
    opts.check()
    _check_topic_id_on_disk(Path(log_dir), opts)
    _check_leader_epoch_on_disk(Path(log_dir), opts)
    clock = clock or SYSTEM
    result = ProduceResult(str(log_dir), opts.topic)
    start = time.perf_counter()
    serializers = _serializers(Path(log_dir), opts, result)
    if serializers:
        chunks = _serialized(chunks, serializers)
    chunks = iter(chunks)
    try:
        # nothing is created before a record was read: a bad first line (or no input)
        # leaves the log directory as it was
        first = next((c for c in chunks if c and not isinstance(c, _CONTROL_CHUNKS)), None)
    except BaseException as e:
        result.elapsed_s = time.perf_counter() - start
        if isinstance(e, KafkalogError):
            result.error = str(e)
            raise ProduceError(e, result) from e
        raise
    if first is None:
        result.elapsed_s = time.perf_counter() - start
        return result
    manager = LogManager.open(Path(log_dir), cluster_id=opts.cluster_id, node_id=opts.node_id,
                              clock=clock, fsync=fsync)
    batchers: dict[int, _Batcher] = {}

    def batcher(p: int) -> _Batcher:
        b = batchers.get(p)
        if b is None:
            new = not (manager.log_dir / f"{opts.topic}-{p}").exists()
            log = manager.get_or_create_log(opts.topic, p, opts.config, topic_id=opts.topic_id)
            pr = result.partitions[p] = PartitionResult(p)
            b = batchers[p] = _Batcher(log, opts, pr, clock)
            b.created = new
        return b

    failure: BaseException | None = None
    try:
        if serializers:
            _append_registrations(manager, serializers, clock)
        batcher(opts.partition)  # the partition named, first (as the checkpoints list it)
        done = 0
        for chunk in chain((first,), chunks):
            if isinstance(chunk, _CONTROL_CHUNKS):
                for b in batchers.values():
                    b.flush()
                    if isinstance(chunk, EndTransaction):
                        b.end_txn(chunk.commit)
                continue
            if isinstance(chunk, ValuesChunk):
                batcher(opts.partition).add_values(chunk)
            elif isinstance(chunk, ColumnsChunk) and (
                    chunk.partitions is None or chunk.partitions.count(None) == len(chunk)):
                batcher(opts.partition).add_columns(chunk)
            elif list(map(_PARTITION_OF, chunk := _records(chunk))).count(None) != len(chunk):
                groups: dict[int, list] = {}
                for r in chunk:
                    groups.setdefault(opts.partition if r[5] is None else r[5], []).append(r)
                for p, recs in groups.items():
                    batcher(p).add(recs)
            elif chunk:
                batcher(opts.partition).add(chunk)
            done += len(chunk)
            if progress:
                progress(done)
        for b in batchers.values():
            b.flush()
        if opts.transactional and opts.end_txn != "none":
            for b in batchers.values():
                b.end_txn(opts.end_txn == "commit")
    except BaseException as e:  # includes KeyboardInterrupt: close cleanly, then re-raise
        failure = e
        if isinstance(e, InputError):
            # a malformed line: the records before it are written, as
            # kafka-console-producer has sent them by then
            for b in batchers.values():
                try:
                    b.flush()
                except KafkalogError:
                    break
        for b in batchers.values():
            # the batch being assembled is dropped, and so is one whose append failed
            result.dropped_records += len(b.pending) + b.failed_records
            b.pending = []
        if opts.transactional:
            for b in batchers.values():
                try:
                    b.end_txn(False)
                except KafkalogError:
                    pass
        _remove_untouched(manager, batchers, result, opts.topic)
    finally:
        for b in batchers.values():
            b.result.log_end_offset = b.log.log_end_offset
            b.result.segments_rolled = b.log.rolled_segments
        manager.close()
        result.clean_shutdown = manager.writes_clean_shutdown
        result.elapsed_s = time.perf_counter() - start
        _totals(result)
    if failure is not None:
        if isinstance(failure, KafkalogError):
            result.error = str(failure)
            raise ProduceError(failure, result) from failure
        if isinstance(failure, KeyboardInterrupt):
            # Ctrl-C: closed as after a bad line; the caller may report what was written
            result.error = "interrupted"
            failure.result = result
        raise failure
    return result


# -- Schema Registry serializers -----------------------------------------------------------

def _serializers(log_dir: Path, opts: ProduceOptions, result: ProduceResult) -> dict:
    """``{side: Serializer}`` of the serializers asked for, their schemas registered in
    memory against the log directory's ``_schemas`` (written by
    :func:`_append_registrations` once a first record was read).

    Raises:
        InvalidArgumentError: a schema that does not parse, a subject refusing it.
        CorruptRecordError: a ``_schemas`` partition that does not read.
    """
    sides = [s for s in ("key", "value") if getattr(opts, f"{s}_serializer")]
    if not sides:
        return {}
    from ..registry.serialize import make_serializer, read_schema_file
    from ..registry.store import SCHEMAS_TOPIC, SchemaStore, load_store

    part = log_dir / f"{SCHEMAS_TOPIC}-0"
    store = load_store(part) if part.is_dir() else SchemaStore(source=str(part))
    out = {}
    for side in sides:
        path = getattr(opts, f"{side}_schema")
        text = None if path is None else read_schema_file(path)
        ser = make_serializer(store, getattr(opts, f"{side}_serializer"), opts.subject(side),
                              text)
        out[side] = ser
        reg = ser.registration
        result.schemas.append({"side": side, "subject": reg.schema.subject, "id": reg.id,
                               "version": reg.version, "registered": reg.new})
    return out


def _serialized(chunks: Iterable[list], serializers: dict) -> Iterator[list]:
    """``chunks`` with keys and values serialized (a null stays null).

    Raises:
        InputError: a record that does not fit its schema, naming its line.
    """
    kser, vser = serializers.get("key"), serializers.get("value")
    for chunk in chunks:
        out = []
        for r in _records(chunk) if not isinstance(chunk, ValuesChunk) else [
                inputs.InputRecord(chunk.first_line + i, None, None, v, (), None)
                for i, v in enumerate(chunk)]:
            key, value = r[2], r[3]
            try:
                if kser is not None and key is not None:
                    key = _serialize(kser, key, "key")
                if vser is not None and value is not None:
                    value = _serialize(vser, value, "value")
            except ValueError as e:
                yield out
                raise InputError(str(e), source="input", line=r[0]) from None
            out.append(r._replace(key=key, value=value))
        yield out


def _serialize(ser, data: bytes, side: str) -> bytes:
    try:
        return ser.serialize(data)
    except ValueError as e:
        raise ValueError(f"{side} {e}") from None


def _append_registrations(manager: LogManager, serializers: dict, clock: Clock) -> None:
    """Write the serializers' new ``_schemas`` records, one batch each as the registry's
    KafkaStore producer sends them, to ``_schemas-0`` (created compacted, as the
    registry creates its topic)."""
    records = [rec for ser in serializers.values() for rec in ser.registration.records]
    if not records:
        return
    from ..registry.store import SCHEMAS_TOPIC

    config = topic_config(None, ["cleanup.policy=compact"])
    log = manager.get_or_create_log(SCHEMAS_TOPIC, 0, config)
    b = _Batcher(log, ProduceOptions(SCHEMAS_TOPIC, config=config), PartitionResult(0),
                 clock)
    for i, (key, value) in enumerate(records):
        b.append([inputs.InputRecord(i + 1, None, key, value, (), None)])


def _records(chunk) -> list:
    """A chunk as a list of InputRecords (a ColumnsChunk with partitions of its own)."""
    return chunk.records() if isinstance(chunk, ColumnsChunk) else chunk


def _leader_epoch_for(log: UnifiedLog, opts: ProduceOptions) -> int:
    """The epoch to stamp on ``log``'s batches: ``--leader-epoch``, or the partition's latest
    cached epoch (0 for a new one). A leader's epoch only grows (each election bumps it), so
    a leader never stamps an epoch below the latest in its LeaderEpochFileCache; assigning
    one would drop the later entries from leader-epoch-checkpoint.

    Raises:
        FencedLeaderEpochError: ``--leader-epoch`` is below the latest epoch (found only
            once the partition is opened: the run stopped, as for a refused batch).
    """
    latest = log.leader_epoch_cache.latest_epoch
    if opts.leader_epoch is None:
        return 0 if latest is None else latest
    if latest is not None and opts.leader_epoch < latest:
        raise FencedLeaderEpochError(_epoch_message(opts.leader_epoch, latest,
                                                    log.topic_partition))
    return opts.leader_epoch


def _epoch_message(epoch: int, latest: int, tp) -> str:
    return (f"--leader-epoch {epoch} is below the latest leader epoch {latest} of {tp} "
            "(leader-epoch-checkpoint): a leader never writes an epoch lower than its latest; "
            "omit --leader-epoch to continue with it")


def _check_leader_epoch_on_disk(log_dir: Path, opts: ProduceOptions) -> None:
    """Before anything is written: an explicit ``--leader-epoch`` must not be below the
    latest epoch of the partition ``--partition`` names (see :func:`_leader_epoch_for`).

    Raises:
        InvalidArgumentError: it is (exit 2).
    """
    if opts.leader_epoch is None:
        return
    d = log_dir / f"{opts.topic}-{opts.partition}"
    epochs = read_leader_epoch_checkpoint(d / LEADER_EPOCH_CHECKPOINT) if d.is_dir() else None
    if epochs and opts.leader_epoch < epochs[-1][0]:
        raise InvalidArgumentError(_epoch_message(opts.leader_epoch, epochs[-1][0], d.name))


def _check_topic_id_on_disk(log_dir: Path, opts: ProduceOptions) -> None:
    """Before anything is written: every partition of a topic carries the topic's id in
    partition.metadata (a broker refuses a log whose id differs, InconsistentTopicIdException),
    so an explicit ``--topic-id`` must match the existing partitions' id.

    Raises:
        InvalidArgumentError: it differs, or the existing partitions disagree.
    """
    existing = topic_id_on_disk(log_dir, opts.topic)
    if opts.topic_id is not None and existing is not None and existing != opts.topic_id:
        raise InvalidArgumentError(
            f"--topic-id {opts.topic_id} differs from the topic id {existing} of the existing "
            f"partitions of {opts.topic} in {log_dir}: a broker would refuse the partition "
            "(InconsistentTopicIdException); omit --topic-id to reuse it")


def _remove_untouched(manager: LogManager, batchers: dict, result: ProduceResult,
                      topic: str) -> None:
    """After a failure: delete the partition directories this run created and appended
    nothing to (e.g. the first batch was over max.message.bytes), so a refused run leaves
    no empty segment behind."""
    for p, b in list(batchers.items()):
        if not b.created or b.log.log_end_offset != 0:
            continue
        try:
            manager.delete_log(topic, p)
        except OSError:
            continue  # left behind: an empty, valid partition
        del batchers[p]
        del result.partitions[p]


def _totals(result: ProduceResult) -> None:
    parts = result.partitions.values()
    result.records = sum(p.records for p in parts)
    result.batches = sum(p.batches for p in parts)
    result.bytes = sum(p.bytes for p in parts)
    result.markers = sum(p.markers for p in parts)
    result.segments_rolled = sum(p.segments_rolled for p in parts)
    firsts = [p.first_offset for p in parts if p.first_offset is not None]
    lasts = [p.last_offset for p in parts if p.last_offset is not None]
    result.first_offset = min(firsts) if firsts else None
    result.last_offset = max(lasts) if lasts else None


__all__ = ["ProduceOptions", "ProduceResult", "PartitionResult", "AppendCounts",
           "ProduceError", "produce", "iter_inputs", "NO_TIMESTAMP"]
