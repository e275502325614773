"""``kafkalog retention``: what the broker's next log retention pass
(``LogManager.cleanupLogs`` -> ``UnifiedLog.deleteOldSegments``) would delete in a broker's
log directories, read-only: per partition, the segments and why (log start offset,
``retention.bytes``, ``retention.ms`` breach) and the log start offset after, from
:func:`kafkalog_cli.storage.retention.plan_deletions`, the decision ``kafkalog serve``
carries out.

Each topic's configs are the broker's as the log directory holds them
(:meth:`~kafkalog_cli.ops.logdirs.BrokerLogDirs.topic_configs`: its overrides and the
dynamic broker configs; ``server.properties`` is not in the log directory, so static broker
defaults such as ``log.retention.hours`` are Kafka's). The high watermark is the one in
``replication-offset-checkpoint`` (bounded by the log end offset), else the log end offset.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..constants import REPLICATION_OFFSET_CHECKPOINT
from ..errors import KafkalogError
from ..storage.files import TopicPartition
from ..storage.retention import RetentionConfig, SegmentView, plan_deletions
from .logdirs import BrokerLogDirs


@dataclass
class PartitionRetention:
    """One partition's pass: offsets absolute; ``segments`` ``[(base offset, bytes,
    reason)]`` the pass deletes; ``skipped``: why the broker runs no pass on it."""

    topic: str
    partition: int
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    new_log_start_offset: int
    roll: bool = False
    segments: list[tuple[int, int, str]] = field(default_factory=list)
    skipped: str | None = None

    def to_dict(self) -> dict:
        return {"topic": self.topic, "partition": self.partition,
                "logStartOffset": self.log_start_offset, "logEndOffset": self.log_end_offset,
                "highWatermark": self.high_watermark,
                "newLogStartOffset": self.new_log_start_offset, "roll": self.roll,
                "segments": [{"baseOffset": b, "sizeInBytes": s, "reason": r}
                             for b, s, r in self.segments],
                "skipped": self.skipped}


@dataclass
class RetentionReport:
    """``retention``: every partition of the directories, sorted; ``now`` (ms) the clock
    the time rule used; ``problems``: what could not be read (one line each)."""

    now: int
    partitions: list[PartitionRetention] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def deleted_segments(self) -> int:
        return sum(len(p.segments) for p in self.partitions)

    @property
    def deleted_bytes(self) -> int:
        return sum(s for p in self.partitions for _, s, _ in p.segments)

    def to_dict(self) -> dict:
        return {"now": self.now, "partitions": [p.to_dict() for p in self.partitions],
                "deletedSegments": self.deleted_segments, "deletedBytes": self.deleted_bytes,
                "problems": self.problems, "ok": self.ok}


def plan_retention(paths, *, now: int | None = None, topic: str | None = None
                   ) -> RetentionReport:
    """The report of the module docstring for ``paths`` (log directories). ``now``: ms
    (default the wall clock); ``topic``: only this topic. Writes nothing.

    Raises:
        NotAKafkaFileError / UnreadableError: a path holds no log directory.
    """
    import time

    report = RetentionReport(int(time.time() * 1000) if now is None else now)
    dirs = BrokerLogDirs.open(paths)
    try:
        hws = _high_watermarks(dirs, report.problems)
        for t in dirs.topics():
            if topic is not None and t != topic:
                continue
            config = RetentionConfig.of(_Extra(dirs.topic_configs(t)))
            for p in dirs.partitions_of(t):
                try:
                    report.partitions.append(
                        _partition(dirs.get(t, p), config, hws, report.now))
                except (KafkalogError, OSError) as e:
                    report.problems.append(f"{t}-{p}: {e}")
        report.problems[:0] = dirs.problems
        return report
    finally:
        dirs.close()


class _Extra:
    """A topic's effective configs where :meth:`RetentionConfig.of` reads a LogConfig's."""

    def __init__(self, configs: dict):
        self.extra = configs


def _high_watermarks(dirs: BrokerLogDirs, problems: list[str]) -> dict:
    from ..storage.checkpoints import read_offset_checkpoint

    out: dict = {}
    for ld in dirs.log_dirs:
        try:
            entries = read_offset_checkpoint(ld / REPLICATION_OFFSET_CHECKPOINT) or {}
        except KafkalogError as e:
            problems.append(str(e))
            continue
        for tp, hw in entries.items():
            out[(ld, tp)] = hw
    return out


def _partition(pd, config: RetentionConfig, hws: dict, now: int) -> PartitionRetention:
    leo, lso = pd.log_end_offset, pd.log_start_offset
    hw = min(hws.get((pd.log_dir, TopicPartition(pd.topic, pd.partition)), leo), leo)
    out = PartitionRetention(pd.topic, pd.partition, lso, leo, hw, lso)
    if not config.retention_task_applies:
        out.skipped = "cleanup.policy=compact: no retention pass (the log cleaner's log)"
        return out
    plan = plan_deletions([SegmentView(s) for s in pd.log.segments], log_end_offset=leo,
                          high_watermark=hw, log_start_offset=lso, config=config, now=now)
    out.new_log_start_offset = plan.log_start_offset
    out.roll = plan.roll_at is not None
    out.segments = [(d.base_offset, d.size, d.reason) for d in plan.deletions]
    return out
