"""Log retention, after ``UnifiedLog.deleteOldSegments`` (Kafka 4.4): which segments of a
partition's log the broker deletes, and deleting them as it does.

:func:`plan_deletions` is the decision alone (no file is touched, the clock is passed
in): the three passes ``deleteLogStartOffsetBreachedSegments``,
``deleteRetentionSizeBreachedSegments`` and ``deleteRetentionMsBreachedSegments``, each
over the segments the previous one left, each through ``deletableSegments`` (oldest
first, stopping at the first segment its predicate keeps; never a segment reaching past
the high watermark; never an empty last segment; the whole log deleted only after a roll,
so it always has a segment).

:func:`delete_old_segments` acts on a :class:`~.log.UnifiedLog`, as ``deleteSegments`` /
``LocalLog.removeAndDeleteSegments`` / ``LocalLog.deleteSegmentFiles`` do: roll when every
segment goes, raise the log start offset (``maybeIncrementLogStartOffset``: the leader
epoch cache truncated from the start, the producer state told), rename each segment's
files with the ``.deleted`` suffix and drop the segments from the log, rename the producer
snapshots at their base offsets (``removeAndMarkSnapshotForDeletion``). The renamed files
are removed later (:func:`remove_deleted_files`, after ``file.delete.delay.ms``), so a
read in flight keeps its open file; files a stop left renamed are removed when the log is
next opened (:func:`remove_leftover_deleted_files`, as ``LogLoader`` does).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ..constants import DELETED_FILE_SUFFIX

#: SegmentDeletionReason's kinds, by the method whose predicate chose the segment
LOG_START_OFFSET_BREACH = "logStartOffsetBreach"   # deleteLogStartOffsetBreachedSegments
RETENTION_SIZE_BREACH = "retentionSizeBreach"      # deleteRetentionSizeBreachedSegments
RETENTION_MS_BREACH = "retentionMsBreach"          # deleteRetentionMsBreachedSegments

#: Kafka's topic defaults (TopicConfig / LogConfig) for the keys retention reads
DEFAULT_RETENTION_MS = 604800000
DEFAULT_RETENTION_BYTES = -1
DEFAULT_FILE_DELETE_DELAY_MS = 60000


class SegmentStat(NamedTuple):
    """What retention reads of one segment.

    Attributes:
        base_offset: absolute offset.
        size: bytes in its ``.log`` (``LogSegment.size``).
        largest_timestamp: ms; ``LogSegment.largestTimestamp``: the largest record
            timestamp (maxTimestampSoFar), else the ``.log``'s last-modified time.
    """

    base_offset: int
    size: int
    largest_timestamp: int


@dataclass(frozen=True)
class RetentionConfig:
    """The topic configs ``deleteOldSegments`` reads (``LogConfig``).

    Attributes:
        retention_ms: ``retention.ms`` (-1: unlimited).
        retention_bytes: ``retention.bytes`` (-1: unlimited).
        delete: ``cleanup.policy`` holds ``delete`` (``LogConfig.delete``).
        compact: ``cleanup.policy`` holds ``compact``.
        file_delete_delay_ms: ``file.delete.delay.ms``.
    """

    retention_ms: int = DEFAULT_RETENTION_MS
    retention_bytes: int = DEFAULT_RETENTION_BYTES
    delete: bool = True
    compact: bool = False
    file_delete_delay_ms: int = DEFAULT_FILE_DELETE_DELAY_MS

    @classmethod
    def of(cls, config) -> RetentionConfig:
        """From a :class:`~.config.LogConfig` (its ``extra`` holds the retention keys as
        given: strings or ints; absent keys take Kafka's defaults).

        Raises:
            ValueError: a value is not an integer.
        """
        extra = getattr(config, "extra", None) or {}
        policy = [p.strip().lower() for p in str(extra.get("cleanup.policy", "delete")).split(",")]
        return cls(retention_ms=int(extra.get("retention.ms", DEFAULT_RETENTION_MS)),
                   retention_bytes=int(extra.get("retention.bytes", DEFAULT_RETENTION_BYTES)),
                   delete="delete" in policy, compact="compact" in policy,
                   file_delete_delay_ms=int(extra.get("file.delete.delay.ms",
                                                      DEFAULT_FILE_DELETE_DELAY_MS)))

    @property
    def retention_task_applies(self) -> bool:
        """Whether the broker runs ``deleteOldSegments`` on the log at all: the retention
        thread (``LogManager.cleanupLogs``) takes the logs whose policy does not hold
        ``compact``, the log cleaner's deletion pass (``LogCleanerManager.deletableLogs``)
        those holding both; a ``compact``-only log is never trimmed."""
        return self.delete or not self.compact


class SegmentDeletion(NamedTuple):
    """One segment ``deleteOldSegments`` deletes: its base offset, size (bytes) and the
    reason (:data:`LOG_START_OFFSET_BREACH`, :data:`RETENTION_SIZE_BREACH`,
    :data:`RETENTION_MS_BREACH`)."""

    base_offset: int
    size: int
    reason: str


@dataclass
class RetentionPlan:
    """What ``deleteOldSegments`` does to a log.

    Attributes:
        deletions: the segments deleted, oldest first.
        roll_at: the base offset of the segment rolled first because every segment was
            to go (the log end offset; ``deleteSegments``' ``roll()``), else None.
        log_start_offset: the log start offset after (never below the one before).
    """

    deletions: list[SegmentDeletion] = field(default_factory=list)
    roll_at: int | None = None
    log_start_offset: int = 0


def plan_deletions(segments, *, log_end_offset: int, high_watermark: int,
                   log_start_offset: int, config: RetentionConfig, now: int) -> RetentionPlan:
    """``UnifiedLog.deleteOldSegments`` as a decision: the log-start-offset pass always,
    then (``cleanup.policy`` holding ``delete``) the retention.bytes and retention.ms
    passes, each over what the one before left.

    Args:
        segments: the log's segments in base-offset order, each with ``base_offset``,
            ``size`` (bytes) and ``largest_timestamp`` (ms; read only by the time pass,
            and only up to its first kept segment: it may be a lazy property).
        log_end_offset / high_watermark / log_start_offset: absolute offsets.
        config: the topic's :class:`RetentionConfig`.
        now: ms, the clock at the start of the time pass (``time.milliseconds``).

    Returns:
        a :class:`RetentionPlan`.
    """
    segs = list(segments)
    plan = RetentionPlan(log_start_offset=log_start_offset)

    def start_offset_breached(seg, nxt) -> bool:
        # deleteLogStartOffsetBreachedSegments
        return nxt is not None and nxt.base_offset <= plan.log_start_offset

    passes = [(LOG_START_OFFSET_BREACH, start_offset_breached)]
    if config.delete:
        passes += [(RETENTION_SIZE_BREACH, None), (RETENTION_MS_BREACH, None)]
    for reason, predicate in passes:
        if reason == RETENTION_SIZE_BREACH:
            predicate = _size_predicate(segs, config.retention_bytes)
        elif reason == RETENTION_MS_BREACH:
            predicate = _time_predicate(config.retention_ms, now)
        if predicate is None:
            continue
        deletable = _deletable_segments(segs, predicate, log_end_offset, high_watermark)
        if deletable:
            segs = _delete_segments(segs, deletable, reason, log_end_offset, now, plan)
    return plan


def _size_predicate(segs, retention_bytes: int):
    """deleteRetentionSizeBreachedSegments' predicate (None: the log is within the limit
    or it is unlimited): delete while the bytes over the limit cover the whole segment."""
    size = sum(s.size for s in segs)   # UnifiedLog.size: every segment's
    if retention_bytes < 0 or size < retention_bytes:
        return None
    diff = size - retention_bytes

    def breached(seg, nxt) -> bool:
        nonlocal diff
        if diff - seg.size >= 0:
            diff -= seg.size
            return True
        return False

    return breached


def _time_predicate(retention_ms: int, now: int):
    """deleteRetentionMsBreachedSegments' predicate (None: unlimited)."""
    if retention_ms < 0:
        return None
    return lambda seg, nxt: now - seg.largest_timestamp > retention_ms


def _deletable_segments(segs, predicate, log_end_offset: int, high_watermark: int) -> list:
    """UnifiedLog.deletableSegments without tiered storage: the oldest segments while the
    predicate holds, none reaching past the high watermark (a segment's upper bound is
    the next one's base offset, the active one's the log end offset), never an empty last
    segment."""
    out = []
    for i, seg in enumerate(segs):
        nxt = segs[i + 1] if i + 1 < len(segs) else None
        last_and_empty = nxt is None and seg.size == 0
        upper = nxt.base_offset if nxt is not None else log_end_offset
        if high_watermark >= upper and predicate(seg, nxt) and not last_and_empty:
            out.append(seg)
        else:
            break
    return out


def _delete_segments(segs, deletable, reason: str, log_end_offset: int, now: int,
                     plan: RetentionPlan) -> list:
    """UnifiedLog.deleteSegments on the planned log: roll first when every segment goes
    (the new, empty segment at the log end offset stays), raise the log start offset to
    the next remaining segment's base offset; returns the segments left."""
    segs = list(segs)
    to_delete = list(deletable)
    replaced = False
    if len(segs) == len(to_delete):
        plan.roll_at = log_end_offset
        segs.append(SegmentStat(log_end_offset, 0, now))
        if to_delete[-1].base_offset == log_end_offset:
            # an empty active segment deleted and recreated by the roll: it stays
            to_delete.pop()
            replaced = True
    if to_delete:
        nxt = segs[len(to_delete)]
        plan.log_start_offset = max(plan.log_start_offset, nxt.base_offset)
        plan.deletions += [SegmentDeletion(s.base_offset, s.size, reason) for s in to_delete]
    left = segs[len(to_delete):]
    return left[-1:] if replaced else left


# -- the action on a log -------------------------------------------------------------------

class SegmentView:
    """A :class:`SegmentStat` of a :class:`~.segment.LogSegment` (read-only or active): its
    size now, its largest timestamp read only when asked (the time index's last entry,
    or the active segment's running maximum; the time pass reads it up to its first kept
    segment).

    Raises (constructing):
        NotRegularFileError / UnreadableError: the ``.log`` cannot be sized.
    """

    __slots__ = ("segment", "base_offset", "size", "_ts")

    def __init__(self, segment):
        self.segment = segment
        self.base_offset = segment.base_offset
        self.size = segment.size
        self._ts = None

    @property
    def largest_timestamp(self) -> int:
        if self._ts is None:
            self._ts = segment_largest_timestamp(self.segment)
        return self._ts


def segment_largest_timestamp(segment) -> int:
    """LogSegment.largestTimestamp (ms): the active segment's maxTimestampSoFar, a rolled
    one's time index last entry; when that is unknown (no entry, or -1), the ``.log``'s
    last-modified time (0 when it cannot be read)."""
    ts = getattr(segment, "max_timestamp_so_far", None)
    if ts is None:
        try:
            ts = segment.largest_timestamp_in_index()
        except Exception:  # an unreadable index: the file time, as a missing entry
            ts = None
    if ts is not None and ts >= 0:
        return ts
    try:
        return int(os.lstat(segment.log_path).st_mtime * 1000)
    except OSError:
        return 0


@dataclass
class RetentionResult:
    """What :func:`delete_old_segments` did.

    Attributes:
        plan: the :class:`RetentionPlan` carried out.
        renamed: the files renamed with the ``.deleted`` suffix, to remove after
            ``file.delete.delay.ms`` (:func:`remove_deleted_files`).
        file_delete_delay_ms: the topic's ``file.delete.delay.ms``.
    """

    plan: RetentionPlan
    renamed: list[Path] = field(default_factory=list)
    file_delete_delay_ms: int = DEFAULT_FILE_DELETE_DELAY_MS
    #: the segments removed from the log, still open (a read in flight may hold their
    #: memory maps): :func:`remove_deleted_files` closes them
    segments: list = field(default_factory=list)

    @property
    def deleted(self) -> int:
        return len(self.plan.deletions)


def delete_old_segments(log, *, now: int | None = None, high_watermark: int | None = None,
                        config: RetentionConfig | None = None) -> RetentionResult:
    """UnifiedLog.deleteOldSegments on ``log`` (a :class:`~.log.UnifiedLog`): the
    :func:`plan_deletions` of its segments, carried out as ``deleteSegments`` does (see
    the module docstring). The log start offset reaches ``log-start-offset-checkpoint``
    with the log manager's next checkpoint (the caller's); the renamed files are the
    result's, to remove with :func:`remove_deleted_files` after the delay.

    Args:
        now: ms (default the log's clock).
        high_watermark: absolute offset (default the log end offset: a single replica).
        config: default :meth:`RetentionConfig.of` the log's config.

    Raises:
        OSError: a rename failed (the segments renamed before it are gone from the log).
    """
    config = config or RetentionConfig.of(log.config)
    now = log.clock.milliseconds() if now is None else now
    hw = log.log_end_offset if high_watermark is None else high_watermark
    plan = plan_deletions([SegmentView(s) for s in log.segments],
                          log_end_offset=log.log_end_offset, high_watermark=hw,
                          log_start_offset=log.log_start_offset, config=config, now=now)
    result = RetentionResult(plan, file_delete_delay_ms=config.file_delete_delay_ms)
    if not plan.deletions:
        return result
    if plan.roll_at is not None:
        log.roll(plan.roll_at)
    gone = {d.base_offset for d in plan.deletions}
    # the log start offset first, so no read is sent to a segment being removed
    log.maybe_increment_log_start_offset(plan.log_start_offset)
    doomed = [s for s in log.segments if s.base_offset in gone]
    log.segments = [s for s in log.segments if s.base_offset not in gone]
    result.segments = doomed
    for seg in doomed:
        result.renamed += _rename_segment_files(seg)
    ps = log.producer_state
    if ps is not None and ps.directory is not None:
        from .producer_state import snapshot_path

        for seg in doomed:  # removeAndMarkSnapshotForDeletion(segment.baseOffset)
            renamed = _rename_deleted(snapshot_path(ps.directory, seg.base_offset))
            if renamed is not None:
                result.renamed.append(renamed)
    return result


def _rename_segment_files(segment) -> list[Path]:
    """LogSegment.changeFileSuffixes("", ".deleted") for the files that exist."""
    out = []
    for p in (segment.log_path, segment.index_path, segment.time_index_path,
              segment.txn_index_path):
        renamed = _rename_deleted(p)
        if renamed is not None:
            out.append(renamed)
    return out


def _rename_deleted(path: Path) -> Path | None:
    """``path`` renamed ``<name>.deleted`` in its directory (a link is renamed, never
    followed); None when it does not exist."""
    target = path.with_name(path.name + DELETED_FILE_SUFFIX)
    try:
        os.rename(path, target)
    except FileNotFoundError:
        return None
    return target


def remove_deleted_files(paths, segments=()) -> int:
    """LogSegment.deleteIfExists / SnapshotFile.deleteIfExists for files renamed by
    :func:`delete_old_segments` (the scheduled ``delete-file`` task): ``segments`` closed,
    then each ``*.deleted`` path unlinked (a link itself, never its target); missing ones
    are skipped. Returns how many were removed.

    Raises:
        OSError: one could not be removed (the others are removed first).
    """
    for seg in segments:
        seg.close()
    removed = 0
    error = None
    for p in paths:
        p = Path(p)
        if not p.name.endswith(DELETED_FILE_SUFFIX):
            continue
        try:
            os.unlink(p)
            removed += 1
        except FileNotFoundError:
            pass
        except OSError as e:
            error = error or e
    if error is not None:
        raise error
    return removed


def remove_leftover_deleted_files(partition_dir) -> list[Path]:
    """LogLoader.removeTempFilesAndCollectSwapFiles' first step: the ``*.deleted`` files
    of a partition directory (not ``*.checkpoint.deleted``), left by a stop before
    ``file.delete.delay.ms`` passed, are removed when the log is opened. Only regular
    files and links directly in the directory are touched. Returns the paths removed."""
    out = []
    try:
        entries = list(os.scandir(partition_dir))
    except OSError:
        return out
    for e in entries:
        name = e.name
        if not name.endswith(DELETED_FILE_SUFFIX) or name.endswith(".checkpoint.deleted"):
            continue
        if e.is_dir(follow_symlinks=False):
            continue
        try:
            os.unlink(e.path)
        except OSError:
            continue
        out.append(Path(e.path))
    return out
