"""``copy``: partitions copied into a log directory exactly as their broker wrote them.

Every batch is written as it is (offsets, producer ids and epochs, sequences,
transaction markers, timestamps, compression): each ``.log`` of a partition copied whole
is byte-identical to its source. The rest is what a broker has for those batches: the
indexes, ``.txnindex`` and producer snapshots the append engine builds (or the source's
own where they verify, see :func:`~kafkalog_cli.storage.copy.copy_partition`),
``leader-epoch-checkpoint``, ``partition.metadata``, and the log directory's
checkpoints. The writing is storage's (:mod:`kafkalog_cli.storage.copy`, through
``UnifiedLog``); this module picks the partitions, the offset range, the names and the
topic ids, and reports.

Selection (``start``/``end``, offsets inclusive, or timestamps as ``offsetsForTimes``
finds them) takes whole batches: a batch overlapping the range is copied whole, and the
copy's log start offset is the start asked for (records below it are not served).
``rename`` writes topic OLD as NEW with a new topic id (the id of NEW's partitions
already in the target, when there are).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..constants import META_PROPERTIES_FILE_NAME
from ..errors import InvalidArgumentError, KafkalogError
from ..storage.files import TopicPartition, find_partition_dirs, validate_topic_name
from ..storage.location import as_path, require_local

#: the KRaft metadata log: its snapshots and quorum-state are the controller's, not a
#: partition a broker loads from its log directories
METADATA_TOPIC = "__cluster_metadata"


@dataclass
class PartitionCopyResult:
    """One partition copied: its source and names, and what storage wrote (``copied``,
    a :class:`~kafkalog_cli.storage.copy.CopiedPartition`: offsets absolute, sizes in
    bytes); ``problems`` what could not be used or copied, one line each."""

    source: str
    topic: str
    partition: int
    source_topic: str
    copied: object
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        """The JSON object (docs/json.md, ``copy.json``)."""
        c = self.copied
        return {"source": self.source, "partitionDir": str(c.directory),
                "topic": self.topic, "partition": self.partition,
                "sourceTopic": self.source_topic, "topicId": c.topic_id,
                "segments": c.segments, "batches": c.batches, "bytes": c.bytes,
                "firstOffset": c.first_offset, "lastOffset": c.last_offset,
                "logStartOffset": c.log_start_offset, "logEndOffset": c.log_end_offset,
                "keptFiles": c.kept, "problems": self.problems, "ok": self.ok}


@dataclass
class CopyResult:
    """What ``copy`` wrote into ``log_dir``; ``skipped`` the partitions it left out
    (``partitionDir`` and ``reason``)."""

    log_dir: str
    partitions: list[PartitionCopyResult] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.partitions)

    def to_dict(self) -> dict:
        return {"logDir": self.log_dir, "ok": self.ok,
                "partitions": [p.to_dict() for p in self.partitions],
                "skipped": self.skipped}


def parse_renames(specs) -> dict[str, str]:
    """``OLD:NEW`` strings as ``{old: new}``.

    Raises:
        InvalidArgumentError: not ``OLD:NEW``, an illegal topic name, or a topic renamed
            twice.
    """
    out: dict[str, str] = {}
    for spec in specs or ():
        old, sep, new = spec.partition(":")
        if not sep or not old or not new:
            raise InvalidArgumentError(f"invalid --rename {spec!r}: expected OLD:NEW")
        validate_topic_name(new)
        if old in out:
            raise InvalidArgumentError(f"--rename names topic {old} twice")
        out[old] = new
    return out


def copy(paths, to, *, start_offset: int | None = None, end_offset: int | None = None,
         start_timestamp: int | None = None, end_timestamp: int | None = None,
         rename=None, index_interval_bytes: int | None = None) -> CopyResult:
    """Copy every partition under ``paths`` (partition directories, log directories, or
    directories holding log directories; local or URIs) into the log directory ``to``
    (local; created with the sources' ``meta.properties`` cluster and node ids when
    new), under its lock, each partition atomically (storage/copy.py).

    ``start_offset`` / ``end_offset``: the batches overlapping ``[start, end]`` (inclusive);
    ``start_timestamp`` / ``end_timestamp`` (ms): the same range found by timestamp, from
    the first record whose timestamp is >= start to the last before the first record
    whose timestamp is > end (``offsetsForTimes``). ``rename``: ``{old topic: new}`` (or
    ``OLD:NEW`` strings). ``index_interval_bytes``: of the indexes rebuilt (default 4096).
    ``__cluster_metadata`` is left out (``skipped``).

    Raises:
        InvalidArgumentError: conflicting options, a bad --rename, a topic-partition found
            twice among the sources, or topic ids that disagree (a broker refuses a log
            directory whose partitions of one topic have different ids).
        RefusedError: a target partition exists already; LogDirLockedError: ``to`` is
            held by a broker or another kafkalog.
        CorruptRecordError: a source batch fails its CRC check (that partition is not
            written; the ones before it are).
        NotAKafkaFileError / UnreadableError: a source is not Kafka's or cannot be read.
    """
    from ..storage.log import Log
    from ..storage.log_manager import LogManager, topic_id_on_disk

    if start_offset is not None and start_timestamp is not None:
        raise InvalidArgumentError("give --start-offset or --start-timestamp, not both")
    if end_offset is not None and end_timestamp is not None:
        raise InvalidArgumentError("give --end-offset or --end-timestamp, not both")
    if start_offset is not None and end_offset is not None and end_offset < start_offset:
        raise InvalidArgumentError("--end-offset must not be below --start-offset")
    renames = rename if isinstance(rename, dict) else parse_renames(rename)
    target = require_local(to, "copy")
    result = CopyResult(str(target))
    sources = _sources(paths, result)
    unknown = set(renames) - {tp.topic for tp, _, _ in sources}
    if unknown:
        raise InvalidArgumentError(f"--rename names topic(s) not among the sources: "
                                   f"{', '.join(sorted(unknown))}")
    cluster_id, node_id = _identity(sources)
    with LogManager.open(target, cluster_id=cluster_id, node_id=node_id) as manager:
        ids = _topic_ids(sources, renames, manager, topic_id_on_disk)
        for tp, _, d in sources:
            new_topic = renames.get(tp.topic, tp.topic)
            src = Log.open(d)
            try:
                start, end = _range(src, start_offset, end_offset, start_timestamp,
                                    end_timestamp)
                result.partitions.append(_copy_one(manager, src, tp, new_topic,
                                                   ids[new_topic], start, end,
                                                   index_interval_bytes))
            finally:
                src.close()
    return result


def _sources(paths, result: CopyResult) -> list[tuple[TopicPartition, object, object]]:
    """``(topic-partition, log dir, partition dir)`` of every source partition, each once;
    ``__cluster_metadata`` goes to ``result.skipped``."""
    from ..storage.files import parse_partition_dir_name

    seen: dict[TopicPartition, str] = {}
    out = []
    for p in paths:
        for log_dir, d in find_partition_dirs(as_path(p), live_only=True):
            tp = parse_partition_dir_name(d.name)
            if tp is None:
                raise InvalidArgumentError(f"{d}: a partition directory's name must be "
                                           "<topic>-<partition>")
            if tp.topic == METADATA_TOPIC:
                result.skipped.append({"partitionDir": str(d), "reason": (
                    "the KRaft metadata log (its snapshots and quorum-state are the "
                    "controller's) is not copied")})
                continue
            if tp in seen:
                if seen[tp] == str(d):
                    continue
                raise InvalidArgumentError(
                    f"{tp} is in more than one of the sources ({seen[tp]}, {d}): copy one "
                    "of them (or --rename one)")
            seen[tp] = str(d)
            out.append((tp, log_dir, d))
    return out


def _identity(sources) -> tuple[str | None, int]:
    """The cluster id and node id for a new target's meta.properties: the sources' log
    directories', when they all say the same (else a new cluster id, node 1)."""
    from ..storage.dir_files import read_meta_properties

    found = set()
    for _, log_dir, _ in sources:
        try:
            meta = read_meta_properties(log_dir, validate=True) \
                if (as_path(log_dir) / META_PROPERTIES_FILE_NAME).exists() else None
        except KafkalogError:
            meta = None
        if meta is None:
            continue
        node = meta.get("node.id", meta.get("broker.id"))
        found.add((meta.get("cluster.id"), None if node is None else int(node)))
    if len(found) == 1:
        cluster, node = found.pop()
        return cluster, 1 if node is None else node
    return None, 1


def _topic_ids(sources, renames: dict, manager, topic_id_on_disk) -> dict[str, str]:
    """The topic id of each target topic: a renamed topic's is the one its partitions in
    the target already have, else a new one; a topic kept under its name keeps its
    source id (partition.metadata), which must agree with the target's and between the
    sources.

    Raises:
        InvalidArgumentError: ids that disagree.
    """
    from ..storage.dir_files import read_partition_metadata

    ids: dict[str, str] = {}
    for tp, _, d in sources:
        new = renames.get(tp.topic, tp.topic)
        if new != tp.topic:
            ids.setdefault(new, manager.topic_id_for(new))
            continue
        meta = read_partition_metadata(d)
        tid = meta.get("topic_id") if meta else None
        if tid is None:
            continue
        if ids.setdefault(new, tid) != tid:
            raise InvalidArgumentError(
                f"the sources' partitions of topic {new} have different topic ids "
                f"({ids[new]}, {tid} in {d}): a broker refuses such a log directory "
                "(InconsistentTopicIdException)")
    for topic, tid in list(ids.items()):
        on_disk = topic_id_on_disk(manager.log_dir, topic)
        if on_disk is not None and on_disk != tid:
            raise InvalidArgumentError(
                f"topic {topic} in {manager.log_dir} has topic id {on_disk}, the source's "
                f"is {tid}: a broker refuses such a log directory "
                "(InconsistentTopicIdException); --rename it")
    for tp, _, _ in sources:
        new = renames.get(tp.topic, tp.topic)
        if new not in ids:
            ids[new] = manager.topic_id_for(new)
    return ids


def _range(src, start_offset, end_offset, start_ts, end_ts) -> tuple[int | None, int | None]:
    """The inclusive offset range of one partition for the options (None: open)."""
    start, end = start_offset, end_offset
    if start_ts is not None:
        found = src.fetch_offset_by_timestamp(start_ts)
        start = src.log_end_offset if found is None else found.offset
    if end_ts is not None:
        found = src.fetch_offset_by_timestamp(end_ts + 1)
        end = None if found is None else found.offset - 1
    return start, end


def _copy_one(manager, src, tp: TopicPartition, new_topic: str, topic_id: str, start, end,
              index_interval_bytes) -> PartitionCopyResult:
    from ..storage.copy import copy_partition

    done = copy_partition(manager, src, new_topic, tp.partition, topic_id=topic_id,
                          start_offset=start, end_offset=end,
                          index_interval_bytes=index_interval_bytes,
                          keep_indexes=_indexes_hold)
    return PartitionCopyResult(source=str(src.directory), topic=new_topic,
                               partition=tp.partition, source_topic=tp.topic, copied=done,
                               problems=list(src.problems) + done.problems)


def _indexes_hold(segment) -> bool:
    """Whether a source segment's own indexes are kept for its copy: they agree with its
    log in every entry (verify-index: no problem, no warning) and are trimmed, as a
    broker leaves a closed segment's (a preallocated tail is rebuilt instead)."""
    from ..storage.offset_index import OffsetIndex
    from ..storage.time_index import TimeIndex
    from .verify import verify_segment

    v = verify_segment(segment)
    if not v.ok or v.warnings:
        return False
    for path, entries, index in ((segment.index_path, v.index_entries, OffsetIndex),
                                 (segment.time_index_path, v.time_index_entries, TimeIndex)):
        if not path.exists() or path.stat().st_size != entries * index.ENTRY.size:
            return False
    return True
