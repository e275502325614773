"""``kafkalog delete-records``: ``kafka-delete-records.sh --offset-json-file`` (Kafka 4.4.0's
DeleteRecordsCommand) carried out on a broker's log directories, without the broker.

The file is the tool's: ``{"partitions": [{"topic": "t", "partition": 0, "offset": 5}],
"version": 1}`` (offset -1: the high watermark); the same partition twice is refused, as
the tool refuses it. Each partition then goes as ``Partition.deleteRecordsOnLeader`` /
``UnifiedLog.maybeIncrementLogStartOffset`` take it:

* an internal topic is refused (INVALID_TOPIC_EXCEPTION), a partition not in the
  directories too (UNKNOWN_TOPIC_OR_PARTITION), a topic whose ``cleanup.policy`` is
  ``compact`` without ``delete`` too (POLICY_VIOLATION, "Records of partition t-0 can not
  be deleted due to the configured policy"; the topic's configs as
  :meth:`~kafkalog_cli.ops.logdirs.BrokerLogDirs.topic_configs` reads them from the KRaft
  metadata log and ``kafkalog-serve.json``); an offset below -1, or above the high
  watermark (the log end offset of the replica), is OFFSET_OUT_OF_RANGE with the broker's
  own text ("Cannot increment the log start offset to 12 of partition t-0 since it is
  larger than the high watermark 10");
* else the log start offset becomes the offset when it is higher (the low watermark is
  the log start offset after it), ``log-start-offset-checkpoint`` gets the partition's
  entry (written atomically; the broker keeps an entry only while the start is above the
  first segment's base offset), ``leader-epoch-checkpoint`` is truncated from the start
  (LeaderEpochFileCache.truncateFromStart), and the segments wholly below the new start
  (those whose next segment starts at or below it; never the active one) are deleted as
  the broker's retention (``deleteLogStartOffsetBreachedSegments``) deletes them, with
  their indexes and their producer snapshot.

The tool prints the partitions in the order of the admin client's map of futures: a
``HashMap`` before Kafka 4.x's PartitionLeaderStrategy, whose order kafkalog keeps; Kafka
4.4.0's ``Collectors.toUnmodifiableMap`` orders them anew in each JVM (ImmutableCollections'
random SALT), so the lines of two runs of the tool itself may come in another order.

Nothing is lost: every file removed or rewritten and the checkpoint entry go through a
quarantine session of the partition directory (:mod:`kafkalog_cli.recovery.quarantine`),
so ``kafkalog recover --undo SESSION`` puts them back. The log directory's ``.lock`` is
held throughout (a running broker holds it: refused).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..constants import LEADER_EPOCH_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT
from ..errors import InvalidArgumentError, KafkalogError, UnreadableError
from ..javaorder import hash_map_order, topic_partition_hash
from ..storage.files import TopicPartition
from ..storage.location import read_bytes_if_exists
from .logdirs import BrokerLogDirs, is_internal

#: a delete-records JSON file larger than this is refused (the tool reads it whole)
MAX_OFFSET_JSON_BYTES = 16 << 20
_ERRORS = {
    "OFFSET_OUT_OF_RANGE": ("org.apache.kafka.common.errors.OffsetOutOfRangeException",
                            "The requested offset is not within the range of offsets "
                            "maintained by the server."),
    "UNKNOWN_TOPIC_OR_PARTITION": (
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException",
        "This server does not host this topic-partition."),
    "POLICY_VIOLATION": ("org.apache.kafka.common.errors.PolicyViolationException",
                         "Request parameters do not satisfy the configured policy."),
    "INVALID_TOPIC_EXCEPTION": ("org.apache.kafka.common.errors.InvalidTopicException",
                                "The request attempted to perform an operation on an invalid "
                                "topic."),
}


def parse_offset_json(text: str, source: str = "offset json") -> list[tuple[str, int, int]]:
    """DeleteRecordsCommand.parseOffsetJsonStringWithoutDedup and its duplicate check:
    ``[(topic, partition, offset)]`` in the file's order.

    Raises:
        InvalidArgumentError: the tool's refusals (not JSON, version not 1, no
            ``partitions``, a duplicate partition) and malformed entries.
    """
    try:
        js = json.loads(text)
    except ValueError:
        raise InvalidArgumentError(f"{source}: The input string is not a valid JSON") from None
    if not isinstance(js, dict):
        raise InvalidArgumentError(f"{source}: The input string is not a valid JSON object")
    version = js.get("version", 1)
    if version != 1:
        raise InvalidArgumentError(f"{source}: Not supported version field value {version}")
    parts = js.get("partitions")
    if not isinstance(parts, list):
        raise InvalidArgumentError(f"{source}: Missing partitions field")
    out = []
    for i, p in enumerate(parts):
        try:
            t, n, o = p["topic"], p["partition"], p["offset"]
        except (TypeError, KeyError) as e:
            raise InvalidArgumentError(f"{source}: partitions[{i}]: missing {e}") from None
        if not isinstance(t, str) or type(n) is not int or type(o) is not int:
            raise InvalidArgumentError(f"{source}: partitions[{i}]: topic must be a string, "
                                       "partition and offset integers")
        out.append((t, n, o))
    seen, dups = set(), []
    for t, n, _ in out:
        if (t, n) in seen and f"{t}-{n}" not in dups:
            dups.append(f"{t}-{n}")
        seen.add((t, n))
    if dups:
        raise InvalidArgumentError(f"{source}: Offset json file contains duplicate topic "
                                   f"partitions: {','.join(dups)}")
    return out


@dataclass
class PartitionDeletion:
    """One partition's answer: ``low_watermark`` (the log start offset after it), or
    ``error`` (the Errors name) with the broker's ``message``; the segment files removed
    and the quarantine session holding them."""

    topic: str
    partition: int
    requested: int
    low_watermark: int | None = None
    error: str | None = None
    message: str | None = None
    removed: list[str] = field(default_factory=list)
    quarantine: str | None = None

    def tool_line(self) -> str:
        """The tool's line for it (``partition: t-0\\tlow_watermark: 5``, or the error as
        ``ExecutionException.getMessage`` prints it)."""
        if self.error is None:
            return f"partition: {self.topic}-{self.partition}\tlow_watermark: {self.low_watermark}"
        cls, text = _ERRORS[self.error]
        return f"partition: {self.topic}-{self.partition}\terror: {cls}: {text}"

    def to_dict(self) -> dict:
        return {"topic": self.topic, "partition": self.partition,
                "offset": self.requested, "lowWatermark": self.low_watermark,
                "error": self.error, "message": self.message, "removed": self.removed,
                "quarantine": self.quarantine}


@dataclass
class DeleteRecordsResult:
    """``delete-records``: the partitions in the order the tool prints them."""

    partitions: list[PartitionDeletion]
    dry_run: bool = False

    @property
    def ok(self) -> bool:
        return all(p.error is None for p in self.partitions)

    def to_dict(self) -> dict:
        return {"dryRun": self.dry_run, "partitions": [p.to_dict() for p in self.partitions],
                "ok": self.ok}


def delete_records(paths, offset_json: str, *, dry_run: bool = False, quarantine=None
                   ) -> DeleteRecordsResult:
    """Carry out the deletions of the ``offset_json`` file on ``paths`` (see the module
    docstring). ``dry_run``: answer, change nothing. ``quarantine``: a directory for the
    sessions (default: in each partition directory).

    Raises:
        InvalidArgumentError: the file is refused (see :func:`parse_offset_json`), or is
            larger than :data:`MAX_OFFSET_JSON_BYTES` (read no further, whatever its size
            claims).
        NotRegularFileError: the file is a FIFO, a device, a socket or a directory.
        UnreadableError: it cannot be read.
        LogDirLockedError: a broker (or another kafkalog) holds a log directory's lock.
        UnsafePathError: a file to change is a symbolic link.
    """
    from ..storage.files import check_exists

    src = check_exists(offset_json)
    raw = read_bytes_if_exists(src, limit=MAX_OFFSET_JSON_BYTES, too_large=lambda n: (
        InvalidArgumentError(f"{src}: larger than {MAX_OFFSET_JSON_BYTES} bytes")))
    if raw is None:   # removed since check_exists
        raise UnreadableError("No such file or directory", file=src)
    wanted = parse_offset_json(raw.decode("utf-8", errors="replace"), str(src))
    dirs = BrokerLogDirs.open(paths)
    try:
        order = hash_map_order([(t, p) for t, p, _ in wanted],
                               lambda tp: topic_partition_hash(*tp))
        by_tp = {(t, p): o for t, p, o in wanted}
        answers = [_check(dirs, t, p, by_tp[(t, p)]) for t, p in order]
        if not dry_run:
            _apply(dirs, [a for a in answers if a.error is None], quarantine)
        return DeleteRecordsResult(answers, dry_run)
    finally:
        dirs.close()


def _check(dirs: BrokerLogDirs, topic: str, partition: int, offset: int) -> PartitionDeletion:
    """ReplicaManager.deleteRecords / Partition.deleteRecordsOnLeader's checks."""
    a = PartitionDeletion(topic, partition, offset)
    tp = f"{topic}-{partition}"
    if is_internal(topic):
        a.error, a.message = "INVALID_TOPIC_EXCEPTION", f"Cannot delete records of internal topic {tp}"
        return a
    pd = dirs.get(topic, partition)
    if pd is None:
        a.error, a.message = ("UNKNOWN_TOPIC_OR_PARTITION",
                              f"{tp} is not in these log directories")
        return a
    from ..server.configs import records_deletable, records_not_deletable_message

    if not records_deletable(dirs.topic_configs(topic)["cleanup.policy"]):
        a.error, a.message = ("POLICY_VIOLATION",
                              records_not_deletable_message(topic, partition))
        return a
    hw = pd.log_end_offset
    target = hw if offset == -1 else offset
    if target < 0:
        a.error, a.message = ("OFFSET_OUT_OF_RANGE",
                              f"The offset {target} for partition {tp} is not valid")
        return a
    if target > hw:
        a.error, a.message = ("OFFSET_OUT_OF_RANGE",
                              f"Cannot increment the log start offset to {target} of partition "
                              f"{tp} since it is larger than the high watermark {hw}")
        return a
    a.low_watermark = max(pd.log_start_offset, target)
    return a


def _apply(dirs: BrokerLogDirs, answers: list[PartitionDeletion], quarantine) -> None:
    """Write the changes, one log directory at a time under its lock."""
    from ..recovery.quarantine import Session, write_durably
    from ..storage.checkpoints import format_offset_checkpoint, read_offset_checkpoint
    from ..storage.location import require_local
    from ..storage.lock import LogDirLock

    by_dir: dict[Path, list[PartitionDeletion]] = {}
    for a in answers:
        pd = dirs.get(a.topic, a.partition)
        if a.low_watermark > pd.log_start_offset:
            by_dir.setdefault(pd.log_dir, []).append(a)
    for log_dir, items in by_dir.items():
        require_local(log_dir, "delete-records")
        with LogDirLock(log_dir):
            path = log_dir / LOG_START_OFFSET_CHECKPOINT
            try:
                entries = read_offset_checkpoint(path) or {}
            except KafkalogError:
                entries = {}  # LogManager.loadLogs treats it as empty; rewritten here
            sessions = []
            for a in items:
                pd = dirs.get(a.topic, a.partition)
                pd.close()
                s = Session.open(pd.directory, quarantine)
                sessions.append(s)
                a.quarantine = str(s.path)
                first_base = _delete_segments(pd.directory, a.low_watermark, s, a)
                _truncate_epochs(pd.directory, a.low_watermark, s)
                key = TopicPartition(a.topic, a.partition)
                new = a.low_watermark if a.low_watermark > first_base else None
                s.checkpoint(path, str(key), entries.get(key), new)
                if new is None:
                    entries.pop(key, None)
                else:
                    entries[key] = new
            write_durably(path, format_offset_checkpoint(entries).encode())
            for s in sessions:
                s.complete()
                s.close()


def _delete_segments(directory: Path, start: int, session, a: PartitionDeletion) -> int:
    """Remove (into ``session``) the segments whose next segment starts at or below
    ``start``, with their index files and producer snapshot; returns the base offset of
    the first segment left."""
    from ..storage.files import segment_bases

    bases = segment_bases(directory, (".log",))
    keep_from = 0
    for i in range(len(bases) - 1):
        if bases[i + 1] <= start:
            keep_from = i + 1
    for base in bases[:keep_from]:
        for suffix in (".log", ".index", ".timeindex", ".txnindex", ".snapshot"):
            f = directory / f"{base:020d}{suffix}"
            if f.exists() or f.is_symlink():
                session.remove(f, f"below the log start offset {start} (DeleteRecords)")
                a.removed.append(f.name)
    return bases[keep_from] if bases else start


def _truncate_epochs(directory: Path, start: int, session) -> None:
    from ..storage.checkpoints import read_leader_epoch_checkpoint
    from ..storage.leader_epoch import LeaderEpochCache

    path = directory / LEADER_EPOCH_CHECKPOINT
    if not path.exists():
        return
    cache = LeaderEpochCache(read_leader_epoch_checkpoint(path) or [])
    if cache.truncate_from_start(start):
        session.write(path, cache.text().encode(), "truncated from the new log start offset")
