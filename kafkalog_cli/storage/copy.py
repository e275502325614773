"""Copying a partition into a log directory as a follower replica receives it.

A follower appends the leader's batches exactly as they were written
(``UnifiedLog.appendAsFollower``: offsets, producer ids, epochs, sequences, transaction
markers, timestamps, compression untouched) and builds everything else from them: its
segments' indexes, the producer state and its snapshots, the ``.txnindex`` of aborted
transactions, the leader epoch cache. :func:`copy_partition` does the same offline,
through :class:`~kafkalog_cli.storage.log.UnifiedLog`, with one difference a follower
does not have: it rolls where the source's segments begin, so each ``.log`` it writes
is byte-identical to the source's (same base offset, same bytes).

Where the source's own derived files are what its broker wrote and still hold for the
copy, they are taken instead of the rebuilt ones (``keep``): the indexes and
``.txnindex`` of a segment copied whole (when the caller has checked them), the producer
snapshots inside the copied range that parse, and ``leader-epoch-checkpoint`` (it can
hold an epoch no batch carries: a leader elected that wrote nothing), cut to the range.

The copy is atomic: it is written into ``<topic>-<partition>.<uuid>-delete`` beside its
final name (the name under which a broker that finds a left-over deletes it at start,
``LogManager``) and renamed into place once closed and fsynced; the log directory's
checkpoints are the :class:`~kafkalog_cli.storage.log_manager.LogManager`'s, written when it
closes.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..constants import LEADER_EPOCH_CHECKPOINT
from ..errors import CorruptRecordError, KafkalogError, RefusedError
from .checkpoints import read_leader_epoch_checkpoint
from .config import INT_MAX, LONG_MAX, LogConfig
from .fileio import create_fresh, fsync_dir
from .files import TopicPartition, log_delete_dir_name
from .log import Log, UnifiedLog
from .log_manager import LogManager
from .producer_state import list_snapshots, snapshot_path
from .segment import LogSegment

#: the roll rules a copy must not trigger: it rolls where the source's segments begin
COPY_CONFIG = dict(segment_bytes=INT_MAX, segment_ms=LONG_MAX, segment_index_bytes=INT_MAX)


@dataclass
class CopiedPartition:
    """What :func:`copy_partition` wrote (offsets absolute; sizes in bytes).

    Attributes:
        directory: the new partition directory.
        topic_id: its partition.metadata's topic id.
        segments / batches / bytes: what was appended.
        first_offset / last_offset: of the first and last batch copied (None: none).
        log_start_offset / log_end_offset: the copy's.
        kept: the source's files taken as they are (names), the rest being rebuilt.
        problems: what was not copied, one line each naming the file and byte position
            (bytes after a segment's last whole batch).
    """

    directory: Path
    topic_id: str
    segments: int = 0
    batches: int = 0
    bytes: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    log_start_offset: int = 0
    log_end_offset: int = 0
    kept: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def copy_partition(manager: LogManager, source: Log, topic: str, partition: int, *,
                   topic_id: str, start_offset: int | None = None,
                   end_offset: int | None = None, index_interval_bytes: int | None = None,
                   keep_indexes: Callable[[LogSegment], bool] | None = None
                   ) -> CopiedPartition:
    """Copy the batches of ``source`` overlapping ``[start_offset, end_offset]`` (absolute,
    inclusive; None: unbounded) into ``<topic>-<partition>`` of ``manager``'s log
    directory, whole batches only, as this module's docstring says.

    ``keep_indexes(segment)``: whether a source segment copied whole keeps its own
    ``.index``, ``.timeindex`` and ``.txnindex`` (the caller verifies them); otherwise
    they are the ones the append wrote, at ``index_interval_bytes`` (default 4096).

    The log start offset is the source's, or ``start_offset`` when above it, and never
    below the first batch copied; the log end offset is the last copied batch's last
    offset + 1 (with nothing to copy: an empty log at ``start_offset``, else at the
    source's log end offset).

    Raises:
        RefusedError: ``<topic>-<partition>`` exists in the log directory.
        CorruptRecordError / CrcMismatchError: a batch of the source fails its CRC check
            (nothing is left in the log directory).
        UnreadableError: a source file cannot be read.
    """
    tp = TopicPartition(topic, partition)
    final = manager.log_dir / str(tp)
    if final.exists() or final.is_symlink():
        raise RefusedError(f"{tp} exists already in {manager.log_dir}: copy never merges "
                           "into a partition", file=final)
    staging = manager.log_dir / log_delete_dir_name(tp)
    config = LogConfig(**COPY_CONFIG)
    if index_interval_bytes is not None:
        config = LogConfig(**COPY_CONFIG, index_interval_bytes=index_interval_bytes)
    out = CopiedPartition(final, topic_id)
    log: UnifiedLog | None = None
    whole: list[LogSegment] = []
    try:
        log = _append_segments(source, staging, config, topic_id, manager, out,
                               start_offset, end_offset, whole)
        if log is None:  # nothing in the range: an empty log where it would start
            base = source.log_end_offset if start_offset is None else start_offset
            log = UnifiedLog.open(staging, config, manager.clock, topic_id=topic_id,
                                  log_start_offset=base, fsync=manager.fsync)
        lso = max(source.log_start_offset, start_offset or 0, log.segments[0].base_offset)
        log.maybe_increment_log_start_offset(min(lso, log.log_end_offset))
        _take_leader_epochs(source, log, out)
        log.close()
        out.log_start_offset, out.log_end_offset = log.log_start_offset, log.log_end_offset
        _keep_source_files(source, staging, whole, keep_indexes, out)
        os.rename(staging, final)
        fsync_dir(manager.log_dir)
    except BaseException:
        if log is not None:
            log.abandon()
        shutil.rmtree(staging, ignore_errors=True)
        raise
    manager.add_closed_log(tp, log)
    return out


def _append_segments(source: Log, staging: Path, config, topic_id: str, manager, out,
                     start: int | None, end: int | None, whole: list):
    """Append the selected batches of every source segment, rolling where each begins;
    the source segments copied whole go to ``whole``. Returns the log (None: nothing
    selected)."""
    log = None
    for seg in source.segments:
        if end is not None and seg.base_offset > end:
            break
        if not seg.size:
            # an empty segment (the active one rolled just before a shutdown): rolled to,
            # as the broker did, when the copy has reached it
            if log is not None and end is None and seg.base_offset >= log.log_end_offset:
                log.roll(seg.base_offset)
                out.segments += 1
                whole.append(seg)
            continue
        fr = seg.records()
        first_in_seg = True
        taken = skipped = 0
        for b in fr.batches():
            last = b.last_offset
            first = _first_offset(b)
            if (start is not None and last < start) or (end is not None and first > end):
                skipped += 1
                first_in_seg = False
                continue
            if log is None:
                base = seg.base_offset if first_in_seg else first
                log = UnifiedLog.open(staging, config, manager.clock, topic_id=topic_id,
                                      log_start_offset=base, fsync=manager.fsync)
                out.segments = 1
            elif taken == 0:
                log.roll(seg.base_offset if first_in_seg else first)
                out.segments += 1
            try:
                log.append_as_follower(b[0][b.position:b.next_position])  # no copy
            except CorruptRecordError as e:  # named by the source's file and position
                raise CorruptRecordError(e.message, file=seg.log_path,
                                         position=b.position) from e
            taken += 1
            first_in_seg = False
            out.batches += 1
            out.bytes += b.size
            if out.first_offset is None:
                out.first_offset = first
            out.last_offset = last
        if fr.invalid_bytes:
            why = f" ({fr.stop_error.message})" if fr.stop_error is not None else ""
            out.problems.append(str(CorruptRecordError(
                f"{fr.invalid_bytes} bytes after the last whole batch not copied{why}",
                file=seg.log_path, position=fr.valid_end)))
        elif taken and not skipped:
            whole.append(seg)
    return log


def _first_offset(b) -> int:
    try:  # a legacy wrapper's first offset is its first inner message's
        return b.base_offset
    except KafkalogError:
        return b.last_offset


def _take_leader_epochs(source: Log, log: UnifiedLog, out: CopiedPartition) -> None:
    """The source's ``leader-epoch-checkpoint`` (what its broker wrote: an epoch with no
    batch included), cut as the broker truncates it where the copy starts later or ends
    earlier than the source; when it is absent or does not parse, the cache the appends
    rebuilt from the batches stays."""
    path = source.directory / LEADER_EPOCH_CHECKPOINT
    try:
        entries = read_leader_epoch_checkpoint(path)
    except KafkalogError as e:
        out.problems.append(f"{e}; the copy's leader epochs are rebuilt from its batches")
        return
    if not entries:
        return
    cache = log.leader_epoch_cache
    cache.epochs = list(entries)
    # cut only where the copy's range is narrower than the source's: an entry at the
    # log end offset (a leader elected that has written nothing yet) is the broker's
    if log.log_start_offset > source.log_start_offset:
        cache.truncate_from_start(log.log_start_offset)
    if log.log_end_offset < source.log_end_offset:
        cache.truncate_from_end(log.log_end_offset)
    cache.flush()
    out.kept.append(LEADER_EPOCH_CHECKPOINT)


def _keep_source_files(source: Log, staging: Path, whole: list, keep_indexes,
                       out: CopiedPartition) -> None:
    """Put the source's own derived files over the rebuilt ones where they hold for the
    copy: the indexes of segments copied whole that ``keep_indexes`` accepts, and the
    producer snapshots between the copy's first segment and its log end offset that
    parse."""
    from ..errors import CorruptSnapshotError
    from ..schema.producer_snapshot import parse_snapshot

    if keep_indexes is not None:
        for seg in whole:
            if not keep_indexes(seg):
                continue
            for path in (seg.index_path, seg.time_index_path, seg.txn_index_path):
                if path.exists():
                    _copy_file(path, staging / path.name)
                    out.kept.append(path.name)
    first_base = min((int(p.name[:20]) for p in staging.glob("*.log")), default=None)
    if first_base is None:
        return
    for off in list_snapshots(source.directory):
        if not first_base <= off <= out.log_end_offset:
            continue
        path = snapshot_path(source.directory, off)
        try:
            parse_snapshot(path.read_bytes(), file=path)
        except (CorruptSnapshotError, OSError):
            continue  # the rebuilt one (or none) stays
        _copy_file(path, staging / path.name)
        out.kept.append(path.name)


def _copy_file(src, dst: Path) -> None:
    """``src`` (a local or remote file) to ``dst`` atomically: a temp file created afresh
    (never through a link), fsynced, renamed over ``dst``."""
    tmp = dst.with_name(dst.name + ".tmp")
    fd = create_fresh(tmp)
    try:
        with src.open("rb") as f, os.fdopen(fd, "wb", closefd=False) as w:
            shutil.copyfileobj(f, w, 1 << 20)
            w.flush()
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(tmp, dst)
