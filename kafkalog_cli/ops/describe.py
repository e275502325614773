"""``describe``: what a log directory holds, from batch headers alone.

For each log directory: ``meta.properties`` (cluster id, node or broker id, directory id),
the clean-shutdown marker, whether the ``.lock`` is held right now, the log-directory
checkpoints; for each partition directory: segments, bytes, batches, records, log start
and end offsets, timestamps, codecs, recovery point and its lag, high watermark, leader
epochs, producer snapshots, topic id and invalid trailing bytes; for a KRaft
``__cluster_metadata`` partition also its metadata snapshots (``<end offset>-<epoch>
.checkpoint`` files) and the ``quorum-state`` file.

Offsets follow the broker (``LogLoader`` / ``UnifiedLog``):

* log start offset = ``max(log-start-offset-checkpoint entry (0 when absent), base
  offset of the first segment)``: the broker checkpoints only starts that moved past the
  first segment's base offset, and it never reads the first batch to find the start;
* log end offset = next offset after the last batch of the last segment, or that
  segment's base offset when it holds no batch (``LogSegment.readNextOffset``);
* recovery point from ``recovery-point-offset-checkpoint``, lag = end - recovery point;
  high watermark from ``replication-offset-checkpoint``.

Records are counted from batch headers (``recordsCount`` of v2 batches, one per
uncompressed v0/v1 message); only a compressed v0/v1 wrapper, whose count is hidden
inside, is decompressed. Control records are counted as records. The records of Kafka's
internal topics are also replayed as their coordinator loads them
(:mod:`kafkalog_cli.decoders.summary`): groups by protocol (classic, consumer, share,
streams) and committed offsets of ``__consumer_offsets``, share-partitions of
``__share_group_state``, transactional ids of ``__transaction_state``, remote log segments
of ``__remote_log_metadata``. The read never writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..constants import (
    CLEANER_OFFSET_CHECKPOINT,
    CODEC_NAMES,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    LEADER_EPOCH_CHECKPOINT,
    LOG_FILE_SUFFIX,
    LOG_START_OFFSET_CHECKPOINT,
    MAGIC_V2,
    NO_TIMESTAMP,
    PRODUCER_SNAPSHOT_FILE_SUFFIX,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    TXN_INDEX_ENTRY_SIZE,
    TXN_INDEX_FILE_SUFFIX,
)
from ..errors import KafkalogError, NotAKafkaFileError, UnreadableError
from ..format.record_batch import RecordBatch
from ..format.records import FileRecords
from ..storage.checkpoints import java_int, read_leader_epoch_checkpoint, read_offset_checkpoint
from ..storage.dir_files import (
    QUORUM_STATE_FILE_NAME,
    read_clean_shutdown,
    read_meta_properties,
    read_partition_metadata,
    read_quorum_state,
)
from ..storage.files import (
    LOG_DIR,
    PARTITION,
    TopicPartition,
    check_exists,
    classify_dir,
    find_log_dirs,
    is_segment_file_name,
    is_snapshot_checkpoint_name,
    offset_prefix,
    parse_partition_dir_name,
    partition_dir_kind,
    partition_dirs_of,
    partition_log_bytes,
)
from ..storage.location import as_path, children, stat_regular
from ..storage.lock import is_locked
from ..storage.segment import open_view, release_view

CLUSTER_METADATA_TOPIC = "__cluster_metadata"


@dataclass
class MetadataSnapshots:
    """The KRaft metadata snapshots of a ``__cluster_metadata`` partition directory:
    complete ``<end offset>-<epoch>.checkpoint`` files (``.checkpoint.part`` and
    ``.checkpoint.deleted`` leftovers are not counted). The latest is the greatest
    (end offset, epoch), as KRaft's ``Snapshots`` orders them; its end offset is the
    offset after the last record it covers."""

    count: int = 0
    bytes: int = 0
    latest_end_offset: int | None = None
    latest_epoch: int | None = None

    def to_dict(self) -> dict:
        return {"count": self.count, "bytes": self.bytes,
                "latestEndOffset": self.latest_end_offset, "latestEpoch": self.latest_epoch}


@dataclass
class PartitionInfo:
    """One partition directory, summarised. Offsets absolute, timestamps in ms (None when
    the partition has no batch)."""

    path: str
    topic: str
    partition: int
    state: str | None = None  # None (live), "delete", "future" or "stray"
    topic_id: str | None = None
    segments: int = 0
    bytes: int = 0
    batches: int = 0
    records: int = 0
    control_batches: int = 0
    transactional_batches: int = 0
    first_offset: int | None = None
    log_start_offset: int = 0
    log_end_offset: int = 0
    first_timestamp: int | None = None
    last_timestamp: int | None = None
    max_timestamp: int | None = None
    codecs: list[str] = field(default_factory=list)
    magics: list[int] = field(default_factory=list)
    recovery_point: int | None = None
    high_watermark: int | None = None
    cleaner_checkpoint: int | None = None
    leader_epochs: list[tuple[int, int]] = field(default_factory=list)
    producer_snapshots: int = 0
    aborted_transactions: int = 0
    invalid_bytes: int = 0
    metadata_snapshots: MetadataSnapshots | None = None  # __cluster_metadata only
    quorum_state: dict | None = None  # quorum-state's JSON, as written
    #: an internal topic's state replayed from its records (decoders.summary): groups and
    #: committed offsets, share-partitions, transactional ids or remote log segments
    internal_topic: dict | None = None
    errors: list[str] = field(default_factory=list)
    #: ``.log`` files holding no whole batch from their first byte (not Kafka logs)
    not_kafka_files: list[str] = field(default_factory=list)

    @property
    def recovery_point_lag(self) -> int | None:
        if self.recovery_point is None:
            return None
        return self.log_end_offset - self.recovery_point

    def to_dict(self) -> dict:
        return {
            "partition": self.partition, "partitionDir": self.path, "state": self.state,
            "topicId": self.topic_id, "segments": self.segments, "bytes": self.bytes,
            "batches": self.batches, "records": self.records,
            "controlBatches": self.control_batches,
            "transactionalBatches": self.transactional_batches,
            "firstOffset": self.first_offset, "logStartOffset": self.log_start_offset,
            "logEndOffset": self.log_end_offset, "firstTimestamp": self.first_timestamp,
            "lastTimestamp": self.last_timestamp, "maxTimestamp": self.max_timestamp,
            "codecs": self.codecs, "magics": self.magics,
            "recoveryPoint": self.recovery_point, "recoveryPointLag": self.recovery_point_lag,
            "highWatermark": self.high_watermark, "cleanerCheckpoint": self.cleaner_checkpoint,
            "leaderEpochs": [{"epoch": e, "startOffset": o} for e, o in self.leader_epochs],
            "producerSnapshots": self.producer_snapshots,
            "abortedTransactions": self.aborted_transactions,
            "invalidBytes": self.invalid_bytes,
            "metadataSnapshots": (None if self.metadata_snapshots is None
                                  else self.metadata_snapshots.to_dict()),
            "quorumState": self.quorum_state, "internalTopic": self.internal_topic,
            "errors": self.errors,
        }


@dataclass
class TopicInfo:
    topic: str
    partitions: list[PartitionInfo] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"topic": self.topic, "partitions": [p.to_dict() for p in self.partitions]}


@dataclass
class LogDirInfo:
    """One log directory: its metadata files and its partitions grouped by topic."""

    path: str
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: str | None = None
    meta_version: int | None = None
    clean_shutdown: bool = False
    broker_epoch: int | None = None
    locked: bool = False
    topics: list[TopicInfo] = field(default_factory=list)
    #: problems of the log directory's own files (meta.properties, the offset
    #: checkpoints), each naming the file and line; also listed in each partition's errors
    errors: list[str] = field(default_factory=list)

    @property
    def partitions(self) -> list[PartitionInfo]:
        return [p for t in self.topics for p in t.partitions]

    def to_dict(self) -> dict:
        return {
            "logDir": self.path, "clusterId": self.cluster_id, "nodeId": self.node_id,
            "directoryId": self.directory_id, "metaVersion": self.meta_version,
            "cleanShutdown": self.clean_shutdown, "brokerEpoch": self.broker_epoch,
            "locked": self.locked, "errors": self.errors,
            "topics": [t.to_dict() for t in self.topics],
        }


@dataclass
class DescribeResult:
    log_dirs: list[LogDirInfo] = field(default_factory=list)

    @property
    def partitions(self) -> list[PartitionInfo]:
        return [p for d in self.log_dirs for p in d.partitions]

    @property
    def ok(self) -> bool:
        return not any(d.errors for d in self.log_dirs) and \
            not any(p.errors or p.invalid_bytes for p in self.partitions)

    @property
    def unreadable(self) -> bool:
        """A ``.log`` is not a Kafka log (exit 3, as dump-segment and read say)."""
        return any(p.not_kafka_files for p in self.partitions)

    def to_dict(self) -> dict:
        return {"logDirs": [d.to_dict() for d in self.log_dirs]}


# -- one partition ---------------------------------------------------------------------------

def _legacy_count(batch) -> int:
    if not batch.attributes & COMPRESSION_CODEC_MASK:
        return 1
    return sum(1 for _ in batch.iter_inner())  # streamed: no list of inner messages


def _first_timestamp(batch) -> int:
    """The first record's timestamp from the header when it holds it (a CreateTime v2
    batch without delete horizon: baseTimestamp), else decode the first record."""
    if batch.magic < MAGIC_V2:
        if batch.attributes & COMPRESSION_CODEC_MASK:
            return next(batch.iter_inner()).timestamp
        return batch.timestamp
    attrs = batch.attributes
    if attrs & TIMESTAMP_TYPE_MASK:
        return batch.max_timestamp
    if attrs & DELETE_HORIZON_FLAG_MASK:
        rec = next(iter(batch.iter_records()), None)  # the first record only
        return NO_TIMESTAMP if rec is None else rec.timestamp
    return batch.base_timestamp


def scan_segment_headers(view, info: PartitionInfo, file=None) -> int | None:
    """Add one ``.log``'s batches to ``info``; return the segment's next offset (None when
    it holds no batch)."""
    fr = FileRecords(view, 0, None, file=file)
    batches = records = ctrl = txn = 0
    codec_mask = 0
    magic_mask = 0
    odd_magics: set[int] = set()  # magics outside 0..2 (a corrupt or future batch)
    max_ts = NO_TIMESTAMP if info.max_timestamp is None else info.max_timestamp
    first = None
    last = None
    for b in fr.batches():
        if first is None:
            first = b
        last = b
        batches += 1
        if type(b) is RecordBatch:
            attrs = b[7]
            records += b[14]
            codec_mask |= 1 << (attrs & COMPRESSION_CODEC_MASK)
            if b[5] == 2:
                magic_mask |= 4
            else:
                odd_magics.add(b[5])
            if attrs & CONTROL_FLAG_MASK:
                ctrl += 1
            if attrs & TRANSACTIONAL_FLAG_MASK:
                txn += 1
            if b[10] > max_ts:
                max_ts = b[10]
        else:
            try:
                records += _legacy_count(b)
            except KafkalogError as e:
                info.errors.append(str(KafkalogError(e.message, file=file, position=b[1])))
            codec_mask |= 1 << (b[6] & COMPRESSION_CODEC_MASK)
            if 0 <= b[5] < 2:
                magic_mask |= 1 << b[5]
            else:
                odd_magics.add(b[5])
            if b[7] > max_ts:
                max_ts = b[7]
    info.batches += batches
    info.records += records
    info.control_batches += ctrl
    info.transactional_batches += txn
    info.invalid_bytes += fr.invalid_bytes
    if first is None and fr.invalid_bytes:
        why = f" ({fr.stop_error.message})" if fr.stop_error is not None else ""
        info.not_kafka_files.append(str(file))
        info.errors.append(str(KafkalogError(
            f"no whole record batch: {fr.invalid_bytes} bytes are truncated or not a "
            f"Kafka log{why}", file=file, position=0)))
        return None
    if fr.stop_error is not None:
        info.errors.append(str(fr.stop_error))
    if first is None:
        return None
    if info.first_offset is None:
        try:
            info.first_offset = first.base_offset
            info.first_timestamp = _first_timestamp(first)
        except KafkalogError as e:
            info.errors.append(str(KafkalogError(e.message, file=file, position=first[1])))
    codecs = set(info.codecs)
    for i in range(8):
        if codec_mask & (1 << i):
            codecs.add(CODEC_NAMES[i] if i < len(CODEC_NAMES) else f"unknown({i})")
    info.codecs = sorted(codecs, key=lambda c: CODEC_NAMES.index(c) if c in CODEC_NAMES else 9)
    info.magics = sorted(set(info.magics) | {m for m in range(3) if magic_mask & (1 << m)}
                         | odd_magics)
    info.max_timestamp = max_ts
    info.last_timestamp = last.max_timestamp
    return last.next_offset


def replay_records(view, summary, file=None) -> None:
    """Feed every data record of one ``.log`` to an internal topic's ``summary``
    (:func:`~kafkalog_cli.decoders.summary.summary_for_topic`), in offset order; batches
    whose records do not read are skipped from there (the header scan reports them).
    Records are streamed (``iter_records``): a batch of any size costs a piece of it."""
    for b in FileRecords(view, 0, None, file=file).batches():
        if b.is_control:
            continue
        try:
            for r in b.iter_records():
                summary.add(r[2], r[3])
        except KafkalogError:
            continue


def describe_partition(directory, *, log_start_checkpoint: dict | None = None,
                       recovery_checkpoint: dict | None = None,
                       replication_checkpoint: dict | None = None,
                       cleaner_checkpoint: dict | None = None) -> PartitionInfo:
    """Summarise one partition directory. The checkpoint dicts are the log directory's
    (``{TopicPartition: offset}``), read once per log directory by the caller.

    Raises:
        UnreadableError: the directory cannot be listed.
    """
    d = as_path(directory)
    tp = parse_partition_dir_name(d.name)
    refused = tp is None
    if refused:
        tp = TopicPartition(d.name, -1)
    info = PartitionInfo(path=str(d), topic=tp.topic, partition=tp.partition)
    if refused:
        # LogManager.loadLog -> UnifiedLog.parseTopicPartitionName refuses such a
        # directory (and takes the log directory offline)
        info.errors.append(f"{d}: the directory name is not in the form of <topic>-<partition>"
                           " (a broker refuses to load it)")
    info.state = partition_dir_kind(d.name)
    try:
        kids = children(d)
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=d) from e
    names = list(kids)
    bases = sorted(int(n[:20]) for n in names
                   if n.endswith(LOG_FILE_SUFFIX) and is_segment_file_name(n))
    info.segments = len(bases)
    info.producer_snapshots = sum(1 for n in names if offset_prefix(
        n, PRODUCER_SNAPSHOT_FILE_SUFFIX) is not None)
    for n in names:
        if n.endswith(TXN_INDEX_FILE_SUFFIX) and is_segment_file_name(n):
            try:
                info.aborted_transactions += stat_regular(kids[n]).st_size // \
                    TXN_INDEX_ENTRY_SIZE
            except OSError:
                pass
            except KafkalogError as e:   # a FIFO, a device...
                info.errors.append(str(e))
    next_offset = None
    summary = None
    if tp.topic.startswith("__"):  # Kafka's internal topics; the decoders load only for them
        from ..decoders.summary import summary_for_topic

        summary = summary_for_topic(tp.topic)
    for base in bases:
        path = kids[f"{base:020d}{LOG_FILE_SUFFIX}"]
        try:
            size = stat_regular(path).st_size   # a FIFO or a device: an error, not empty
            info.bytes += size
            if size == 0:
                seg_next = None
            else:
                view = open_view(path)
                try:
                    seg_next = scan_segment_headers(view, info, file=path)
                    if summary is not None:
                        replay_records(view, summary, file=path)
                finally:
                    release_view(view)
        except KafkalogError as e:
            info.errors.append(str(e))
            seg_next = None
        if base == bases[-1]:
            next_offset = seg_next if seg_next is not None else base
    info.log_end_offset = next_offset if next_offset is not None else (
        bases[-1] if bases else 0)
    first_base = bases[0] if bases else info.log_end_offset
    ckpt = (log_start_checkpoint or {}).get(tp)
    info.log_start_offset = max(ckpt or 0, first_base)
    info.recovery_point = (recovery_checkpoint or {}).get(tp)
    info.high_watermark = (replication_checkpoint or {}).get(tp)
    info.cleaner_checkpoint = (cleaner_checkpoint or {}).get(tp)
    if LEADER_EPOCH_CHECKPOINT in names:
        try:
            info.leader_epochs = read_leader_epoch_checkpoint(d / LEADER_EPOCH_CHECKPOINT) or []
        except KafkalogError as e:
            info.errors.append(str(e))
    if "partition.metadata" in names:
        try:
            meta = read_partition_metadata(d) or {}
            info.topic_id = meta.get("topic_id")
        except KafkalogError as e:
            info.errors.append(str(e))
    if summary is not None:
        info.internal_topic = summary.to_dict()
    if tp.topic == CLUSTER_METADATA_TOPIC:
        info.metadata_snapshots = metadata_snapshots(d, kids, info.errors)
        if QUORUM_STATE_FILE_NAME in names:
            try:
                info.quorum_state = read_quorum_state(d / QUORUM_STATE_FILE_NAME)
            except KafkalogError as e:
                info.errors.append(str(e))
    return info


def metadata_snapshots(directory, kids: dict | None = None,
                       errors: list[str] | None = None) -> MetadataSnapshots:
    """Count the KRaft snapshot files of a ``__cluster_metadata`` partition directory
    (names only; sizes from ``stat``). ``kids`` (:func:`~kafkalog_cli.storage.location
    .children` of the directory) saves a second listing; ``errors`` (a list) gets a line
    for each that is not a regular file."""
    if kids is None:
        kids = children(as_path(directory))
    snaps = MetadataSnapshots()
    latest = None
    for n in kids:
        if not is_snapshot_checkpoint_name(n):
            continue
        snaps.count += 1
        try:
            snaps.bytes += stat_regular(kids[n]).st_size
        except OSError:
            pass
        except KafkalogError as e:   # a FIFO, a device...
            if errors is not None:
                errors.append(str(e))
        key = (int(n[:20]), int(n[21:31]))
        if latest is None or key > latest:
            latest = key
    if latest is not None:
        snaps.latest_end_offset, snaps.latest_epoch = latest
    return snaps


# -- log directories ---------------------------------------------------------------------

def _checkpoint(log_dir: Path, name: str, errors: list[str]) -> dict:
    try:
        return read_offset_checkpoint(log_dir / name) or {}
    except KafkalogError as e:
        errors.append(str(e))
        return {}


def describe_log_dir(log_dir, partition_dirs: list[Path] | None = None, *,
                     advance=None) -> LogDirInfo:
    """Summarise a log directory (all its partition directories, or only
    ``partition_dirs``); ``advance(bytes)``, if given, after each partition."""

    d = as_path(log_dir)
    info = LogDirInfo(path=str(d))
    errs: list[str] = []
    try:
        meta = read_meta_properties(d, validate=True)
    except KafkalogError as e:
        errs.append(str(e))
        try:
            meta = read_meta_properties(d)   # what it holds, if it can be read at all
        except KafkalogError:
            meta = None
    if meta:
        info.cluster_id = meta.get("cluster.id")
        nid = meta.get("node.id", meta.get("broker.id"))
        info.node_id = java_int(nid.strip()) if nid is not None else None
        info.directory_id = meta.get("directory.id")
        v = meta.get("version")
        info.meta_version = java_int(v.strip()) if v is not None else None
    try:
        cs = read_clean_shutdown(d)
    except KafkalogError as e:   # a FIFO, a device, too large
        errs.append(str(e))
        cs = None
    info.clean_shutdown = cs is not None
    if cs:
        info.broker_epoch = cs.get("brokerEpoch")
    try:
        info.locked = is_locked(d)
    except KafkalogError as e:   # a .lock that is a FIFO, a device...
        errs.append(str(e))
    lso = _checkpoint(d, LOG_START_OFFSET_CHECKPOINT, errs)
    rp = _checkpoint(d, RECOVERY_POINT_CHECKPOINT, errs)
    hw = _checkpoint(d, REPLICATION_OFFSET_CHECKPOINT, errs)
    cl = _checkpoint(d, CLEANER_OFFSET_CHECKPOINT, errs)
    parts = partition_dirs_of(d) if partition_dirs is None else partition_dirs
    topics: dict[str, TopicInfo] = {}
    for p in parts:
        pi = describe_partition(p, log_start_checkpoint=lso, recovery_checkpoint=rp,
                                replication_checkpoint=hw, cleaner_checkpoint=cl)
        if advance is not None:
            advance(pi.bytes)
        pi.errors[:0] = errs
        topics.setdefault(pi.topic, TopicInfo(pi.topic)).partitions.append(pi)
    info.errors = errs
    for t in topics.values():
        t.partitions.sort(key=lambda p: (p.partition, p.state or ""))
    info.topics = [topics[k] for k in sorted(topics)]
    return info


def describe(paths, *, progress=None) -> DescribeResult:
    """Describe each path: a log directory, a partition directory (described within its
    parent log directory), or a directory holding log directories (searched recursively).
    ``progress(done_bytes, total_bytes)``, if given, is called after each partition.

    Raises:
        UnreadableError: a path is missing or unreadable.
        NotAKafkaFileError: a path holds no log or partition directory.
    """
    result = DescribeResult()
    groups: dict[Path, list[Path] | None] = {}
    for raw in paths:
        p = check_exists(raw)
        if not p.is_dir():
            raise NotAKafkaFileError("not a log directory or partition directory", file=p)
        kind = classify_dir(p)
        if kind == PARTITION:
            parent = p.parent
            if parent in groups and groups[parent] is None:
                continue
            lst = groups.setdefault(parent, [])
            if p not in lst:
                lst.append(p)
        elif kind == LOG_DIR:
            groups[p] = None
        else:
            found = find_log_dirs(p)
            if not found:
                raise NotAKafkaFileError(
                    "no log directory here (no meta.properties, no <topic>-<partition> "
                    "directories with segments)", file=p)
            for ld in found:
                groups[ld] = None
    advance = None
    if progress is not None:
        total = sum(partition_log_bytes(p) for ld, parts in groups.items()
                    for p in (parts if parts is not None else partition_dirs_of(ld)))
        done = 0

        def advance(n: int) -> None:
            nonlocal done
            done += n
            progress(done, total)

    for ld, parts in groups.items():
        result.log_dirs.append(describe_log_dir(ld, parts, advance=advance))
    return result
