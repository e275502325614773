"""Log compaction, after Kafka's ``LogCleaner.Cleaner`` (the cleaning of one log),
``LogCleanerManager`` (which offsets may be cleaned, ``cleaner-offset-checkpoint``),
``MemoryRecords.filterTo`` with the cleaner's ``RecordFilter`` (what a cleaned batch keeps)
and ``LocalLog.replaceSegments`` (the ``.cleaned`` / ``.swap`` file protocol).

A clean of a ``cleanup.policy=compact`` log:

1. :func:`cleanable_offsets`: the dirty section starts at the cleaner checkpoint (the log
   start offset without one) and ends at the first uncleanable offset, the least of the
   last stable offset, the active segment's base offset and the base offset of the first
   dirty segment whose largest timestamp is within ``min.compaction.lag.ms`` of now;
   a log is cleaned when its dirty ratio is above ``min.cleanable.dirty.ratio`` or a dirty
   segment's first batch is older than ``max.compaction.lag.ms`` (:func:`is_cleanable`).
2. :meth:`Cleaner.build_offset_map`: key -> its last offset over the dirty section
   (records of aborted transactions left out), at most :attr:`OffsetMap.max_size` keys
   (``log.cleaner.dedupe.buffer.size`` / 24 bytes an entry x
   ``log.cleaner.io.buffer.load.factor``, as ``SkimpyOffsetMap``, which stores a key's MD5
   as this map does, and never more than fit in that many bytes here); when full, only the prefix it covers is cleaned this round
   (``latestOffset + 1`` is the new checkpoint).
3. The segments from the log start to that offset, grouped by
   :func:`group_segments_by_size`, are each rewritten into one ``.cleaned`` segment
   (:meth:`Cleaner.clean_segments`): a record stays when no later offset of its key is in
   the map (a record past the map's latest offset always stays, a keyless record never);
   a tombstone stays until the batch's delete horizon (KIP-534: the first clean stamps
   ``now + delete.retention.ms`` into the batch, the next clean after it drops them); the
   records of aborted transactions go, their ABORT markers stay (and their ``.txnindex``
   entry) until those records are gone and the horizon has passed, a COMMIT marker stays
   until the horizon once its transaction's records are gone. A batch keeps its base
   offset, last offset, producer id/epoch, base sequence, partition leader epoch,
   timestamp type and codec; one left empty stays as an empty batch when it is its
   producer's last (its sequence numbers) or ends at the high watermark (Kafka 4.4.0's
   rule; the 2024 source kept the last batch of the cleaning round instead).
4. :func:`replace_segments` swaps the cleaned segment in: ``.cleaned`` -> ``.swap``, the
   old segments' files -> ``.deleted``, ``.swap`` -> the segment's names. A crash at any
   point is finished by the log recovery (``LogLoader``: ``.cleaned`` files removed,
   ``.swap`` files completed; :mod:`kafkalog_cli.recovery.planner`).

Legacy (v0/v1) batches are copied whole (kafkalog never writes them; the broker would
rewrite them).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
from dataclasses import dataclass, field

from ..constants import (
    CLEANED_FILE_SUFFIX,
    CLEANER_OFFSET_CHECKPOINT,
    CODEC_NONE,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    MAGIC_V2,
    SWAP_FILE_SUFFIX,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from ..errors import CorruptRecordError, KafkalogError, LogCleaningAbortedError
from .checkpoints import format_offset_checkpoint, read_offset_checkpoint, write_atomically
from .fileio import create_fresh, fsync_dir
from .files import TopicPartition
from .retention import segment_largest_timestamp
from .segment import LogSegment, open_view, rebuild_indexes, release_view

log = logging.getLogger("kafkalog.cleaner")

#: log.cleaner.dedupe.buffer.size's default (bytes, shared by the cleaner threads)
DEFAULT_DEDUPE_BUFFER_SIZE = 134217728
#: log.cleaner.io.buffer.load.factor's default
DEFAULT_LOAD_FACTOR = 0.9
#: delete.retention.ms's default (ms)
DEFAULT_DELETE_RETENTION_MS = 86400000
#: SkimpyOffsetMap's bytes per entry: an MD5 (16) and an offset (8)
BYTES_PER_ENTRY = 24
#: what CPython holds per entry of :class:`OffsetMap`'s dict (a 16-byte digest, an int and
#: the dict's slot: 127 bytes at 1M entries by tracemalloc), with room for the dict's
#: growth, so that a full map stays within ``log.cleaner.dedupe.buffer.size``
PY_BYTES_PER_ENTRY = 160

#: batch retention (RecordFilter.BatchRetention)
DELETE, RETAIN_EMPTY, DELETE_EMPTY = "DELETE", "RETAIN_EMPTY", "DELETE_EMPTY"
_ABORT, _COMMIT = 0, 1
_INT_MAX = 2**31 - 1


class OffsetMap:
    """SkimpyOffsetMap: the MD5 of a key -> the last offset seen for it, at most
    :attr:`max_size` entries: Kafka's ``memory`` / 24 slots x ``load_factor``, or fewer
    when that many would not fit in ``memory`` bytes here (CPython holds an entry in
    ~127 bytes, not 24; :data:`PY_BYTES_PER_ENTRY`). The map's memory is bounded by the
    configured ``log.cleaner.dedupe.buffer.size`` as the broker's is; a dirty section with
    more keys than :attr:`max_size` is cleaned over more rounds than on a broker (each
    round a prefix, as ``Cleaner.doClean`` cleans when its map is full).

    Attributes:
        latest_offset: the last offset the map accounts for (-1: none), as
            ``OffsetMap.latestOffset``.
    """

    def __init__(self, memory: int = DEFAULT_DEDUPE_BUFFER_SIZE,
                 load_factor: float = DEFAULT_LOAD_FACTOR):
        self.slots = min(memory, _INT_MAX) // BYTES_PER_ENTRY
        self.max_size = min(int(self.slots * load_factor),
                            min(memory, _INT_MAX) // PY_BYTES_PER_ENTRY)
        self._map: dict[bytes, int] = {}
        self.latest_offset = -1

    def put(self, key: bytes, offset: int) -> None:
        self._map[hashlib.md5(key).digest()] = offset
        self.latest_offset = offset

    def get(self, key: bytes) -> int:
        """The key's offset, -1 when absent."""
        return self._map.get(hashlib.md5(key).digest(), -1)

    def update_latest_offset(self, offset: int) -> None:
        self.latest_offset = offset

    @property
    def size(self) -> int:
        return len(self._map)

    def clear(self) -> None:
        self._map.clear()
        self.latest_offset = -1


@dataclass
class CleanerStats:
    """CleanerStats: what one clean read and kept (counts; bytes)."""

    map_messages_read: int = 0
    messages_read: int = 0
    bytes_read: int = 0
    messages_written: int = 0
    bytes_written: int = 0
    invalid_messages_read: int = 0
    segments_cleaned: int = 0


@dataclass
class _AbortedTxnState:
    txn: object
    last_observed_batch_offset: int | None = None


@dataclass
class CleanedTransactionMetadata:
    """The transactions a clean walks through (``CleanedTransactionMetadata``): which
    batches are aborted, which markers may go, and the aborted transactions whose ABORT
    marker stays (appended to :attr:`cleaned_index`)."""

    aborted: list = field(default_factory=list)
    ongoing_committed: set = field(default_factory=set)
    ongoing_aborted: dict = field(default_factory=dict)
    cleaned_index: list | None = None

    def add_aborted_transactions(self, txns) -> None:
        self.aborted.extend(txns)
        self.aborted.sort(key=lambda t: t.first_offset, reverse=True)

    def _consume_up_to(self, offset: int) -> None:
        while self.aborted and self.aborted[-1].first_offset <= offset:
            t = self.aborted.pop()
            self.ongoing_aborted.setdefault(t.producer_id, _AbortedTxnState(t))

    def on_control_batch_read(self, batch, control_type: int | None) -> bool:
        """True when the control batch may be discarded."""
        self._consume_up_to(batch.last_offset)
        if control_type is None:  # an empty control batch: cleaned before
            return True
        pid = batch.producer_id
        if control_type == _ABORT:
            state = self.ongoing_aborted.pop(pid, None)
            if state is not None and state.last_observed_batch_offset is not None:
                if self.cleaned_index is not None:
                    self.cleaned_index.append(state.txn)
                return False
            return True
        if control_type == _COMMIT:
            if pid in self.ongoing_committed:
                self.ongoing_committed.discard(pid)
                return False
            return True
        return False

    def on_batch_read(self, batch) -> bool:
        """True when the (data) batch belongs to an aborted transaction."""
        self._consume_up_to(batch.last_offset)
        if batch.is_transactional:
            state = self.ongoing_aborted.get(batch.producer_id)
            if state is not None:
                state.last_observed_batch_offset = batch.last_offset
                return True
            self.ongoing_committed.add(batch.producer_id)
        return False


# -- which offsets may be cleaned (LogCleanerManager) -------------------------------------------

@dataclass(frozen=True)
class LogToClean:
    """LogToClean: the dirty section ``[first_dirty_offset, first_uncleanable_offset)``
    (absolute offsets) and the bytes behind the ratio."""

    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int
    force_update_checkpoint: bool = False
    #: max.compaction.lag.ms has passed for a dirty record: cleaned whatever the ratio
    need_compaction_now: bool = False

    @property
    def cleanable_ratio(self) -> float:
        total = self.clean_bytes + self.cleanable_bytes
        return self.cleanable_bytes / total if total else 0.0


def cleanable_offsets(segments: list, *, log_start_offset: int, log_end_offset: int,
                      last_stable_offset: int, last_clean_offset: int | None, now: int,
                      min_compaction_lag_ms: int = 0) -> LogToClean:
    """LogCleanerManager.cleanableOffsets + calculateCleanableBytes over ``segments`` (the
    log's, the active one last; :class:`LogSegment` s). ``last_clean_offset`` is the
    cleaner checkpoint's (None: none); one below the log start or above the log end offset
    is reset to the log start offset (``force_update_checkpoint``). ``now`` in ms."""
    force = False
    first_dirty = log_start_offset if last_clean_offset is None else last_clean_offset
    if first_dirty < log_start_offset or first_dirty > log_end_offset:
        first_dirty, force = log_start_offset, True
    active = segments[-1]
    candidates = [last_stable_offset, active.base_offset]
    lag = max(min_compaction_lag_ms, 0)
    if lag > 0:
        for i, s in enumerate(segments[:-1]):
            if segments[i + 1].base_offset <= first_dirty:
                continue
            if segment_largest_timestamp(s) > now - lag:
                candidates.append(s.base_offset)
                break
    uncleanable = max(first_dirty, min(candidates))
    # calculateCleanableBytes: the first uncleanable segment (the floor segment of the
    # uncleanable offset, the active one at the latest) and its base offset
    nexts = [s.base_offset for s in segments[1:]] + [2**63 - 1]
    first_uncleanable = active.base_offset
    for s, nxt in zip(segments[:-1], nexts, strict=False):
        if nxt > uncleanable:
            first_uncleanable = s.base_offset
            break
    lo = min(first_dirty, first_uncleanable)
    clean_bytes = cleanable = 0
    for s, nxt in zip(segments, nexts, strict=True):
        if s.base_offset >= max(first_dirty, first_uncleanable):
            break
        size = s.size
        if s.base_offset < first_dirty:
            clean_bytes += size
        if s.base_offset < first_uncleanable and nxt > lo:
            cleanable += size
    return LogToClean(first_dirty, first_uncleanable, clean_bytes, cleanable, force)


def max_compaction_delay(segments: list, first_dirty_offset: int, now: int,
                         max_compaction_lag_ms: int) -> int:
    """LogCleanerManager.maxCompactionDelay (ms): how long past ``max.compaction.lag.ms``
    the earliest first-batch timestamp (> 0) of the dirty rolled segments is; > 0 means
    the log is cleaned whatever its dirty ratio (``needCompactionNow``)."""
    until = now - max(max_compaction_lag_ms, 0)
    earliest = None
    for i, s in enumerate(segments[:-1]):
        if segments[i + 1].base_offset <= first_dirty_offset:
            continue
        ts = _first_batch_timestamp(s)
        if ts is not None and ts > 0 and (earliest is None or ts < earliest):
            earliest = ts
    return until - earliest if earliest is not None and earliest < until else 0


def _first_batch_timestamp(seg) -> int | None:
    """LogSegment.getFirstBatchTimestamp: the first batch's max timestamp."""
    for b in seg.records().batches():
        return b.max_timestamp
    return None


def group_segments_by_size(segments: list, max_size: int, max_index_size: int,
                           first_uncleanable_offset: int) -> list[list]:
    """Cleaner.groupSegmentsBySize: consecutive segments whose ``.log`` bytes total at
    most ``max_size`` (segment.bytes), each index's bytes at most ``max_index_size``
    (segment.index.bytes), and whose offsets fit an int32 relative to the group's base."""
    groups = []
    segs = list(segments)
    while segs:
        group = [segs.pop(0)]
        log_size = group[0].size
        index_size = _file_size(group[0].index_path)
        time_size = _file_size(group[0].time_index_path)
        while segs:
            nxt = segs[0]
            last = (segs[1].base_offset - 1 if len(segs) > 1 else first_uncleanable_offset - 1)
            if not (log_size + nxt.size <= max_size
                    and index_size + _file_size(nxt.index_path) <= max_index_size
                    and time_size + _file_size(nxt.time_index_path) <= max_index_size
                    and (nxt.size == 0 or last - group[0].base_offset <= _INT_MAX)):
                break
            group.append(segs.pop(0))
            log_size += nxt.size
            index_size += _file_size(nxt.index_path)
            time_size += _file_size(nxt.time_index_path)
        groups.append(group)
    return groups


def _file_size(path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


# -- the cleaner-offset-checkpoint ------------------------------------------------------------

def read_cleaner_checkpoint(log_dir) -> dict[TopicPartition, int]:
    """``cleaner-offset-checkpoint``'s entries (empty when absent or unreadable, as
    ``LogCleanerManager`` treats a corrupt one: cleaning starts over from the log start)."""
    try:
        return read_offset_checkpoint(os.path.join(log_dir, CLEANER_OFFSET_CHECKPOINT)) or {}
    except KafkalogError as e:
        log.warning("%s; cleaning starts from the log start offsets", e)
        return {}


def update_cleaner_checkpoint(log_dir, tp: TopicPartition, offset: int | None, *,
                              fsync: bool = True) -> None:
    """Set (None: remove) ``tp``'s entry of ``cleaner-offset-checkpoint`` (written
    atomically, the other entries kept: ``LogCleanerManager.updateCheckpoints``)."""
    entries = dict(read_cleaner_checkpoint(log_dir))
    if offset is None:
        entries.pop(tp, None)
    else:
        entries[tp] = offset
    write_atomically(os.path.join(log_dir, CLEANER_OFFSET_CHECKPOINT),
                     format_offset_checkpoint(entries), fsync=fsync)


# -- the clean (Cleaner) ------------------------------------------------------------------------

@dataclass
class CleanConfig:
    """The topic configs a clean reads (sizes in bytes, times in ms)."""

    segment_bytes: int = 1073741824
    segment_index_bytes: int = 10485760
    index_interval_bytes: int = 4096
    delete_retention_ms: int = DEFAULT_DELETE_RETENTION_MS


def _control_type(batch) -> int | None:
    for r in batch.iter_records():
        k = r.key
        return int.from_bytes(k[2:4], "big", signed=True) if k and len(k) >= 4 else -1
    return None


class Cleaner:
    """Cleaner: cleans one log at a time with one :class:`OffsetMap`.

    Args:
        dedupe_buffer_size: the map's memory (bytes, ``log.cleaner.dedupe.buffer.size``
            divided by the cleaner threads).
        load_factor: ``log.cleaner.io.buffer.load.factor``.
        fsync: fsync the cleaned files before the swap (off in tests only).
    """

    def __init__(self, dedupe_buffer_size: int = DEFAULT_DEDUPE_BUFFER_SIZE,
                 load_factor: float = DEFAULT_LOAD_FACTOR, *, fsync: bool = True):
        self.offset_map = OffsetMap(dedupe_buffer_size, load_factor)
        self.fsync = fsync
        #: called before each batch (LogCleaner.checkDone): raises
        #: LogCleaningAbortedError to stop the clean
        self.check_done = None

    def build_offset_map(self, segments: list, start: int, end: int, aborted: list,
                         stats: CleanerStats | None = None) -> bool:
        """Cleaner.buildOffsetMap over the ``segments`` holding ``[start, end)``
        (absolute offsets; rolled segments in order), ``aborted`` the aborted
        transactions of that range. Returns True when the map filled up (it covers a
        prefix of the range then)."""
        m = self.offset_map
        m.clear()
        dirty = [s for i, s in enumerate(segments)
                 if s.base_offset < end and (i + 1 == len(segments)
                                             or segments[i + 1].base_offset > start)]
        txns = CleanedTransactionMetadata()
        txns.add_aborted_transactions(aborted)
        for i, seg in enumerate(dirty):
            nxt = dirty[i + 1].base_offset if i + 1 < len(dirty) else end
            if self._map_segment(seg, start, nxt, txns, stats):
                return True
        return False

    def _map_segment(self, seg, start: int, next_base: int, txns, stats) -> bool:
        m = self.offset_map
        check = self.check_done
        pos = seg.index_position(start) if start > seg.base_offset else 0
        fr = seg.records(pos)
        for b in fr.batches():
            if check is not None:
                check()
            if b.base_offset >= next_base:
                break
            if b.magic >= MAGIC_V2 and b.is_control:
                txns.on_control_batch_read(b, _control_type(b))
            elif not (b.magic >= MAGIC_V2 and txns.on_batch_read(b)):
                for r in b.iter_records():
                    if r.key is not None and r.offset >= start:
                        if m.size >= m.max_size:
                            return True
                        m.put(r.key, r.offset)
                    if stats is not None:
                        stats.map_messages_read += 1
            if b.last_offset >= start:
                m.update_latest_offset(b.last_offset)
        else:
            _ensure_whole(seg, fr)
        m.update_latest_offset(next_base - 1)
        return False

    def clean(self, segments: list, to_clean: LogToClean, *, config: CleanConfig, now: int,
              aborted_between, last_records_of_active_producers: dict, replace,
              high_watermark: int) -> tuple[int, CleanerStats]:
        """Cleaner.doClean: map the dirty section, then clean the groups of segments from
        the log start to the map's end, each swapped in with ``replace(group, cleaned)``
        (``group``: the old :class:`LogSegment` s; ``cleaned``: the ``.cleaned``
        segment's base offset; returns False when the log changed meanwhile: the clean
        stops with LogCleaningAbortedError, the checkpoint is not moved). ``segments``: the log's rolled segments (read-side objects, not
        written to by anyone else meanwhile); ``aborted_between(start, end)``: the log's
        aborted transactions overlapping a range (``collectAbortedTransactions``);
        ``last_records_of_active_producers``: producer id -> ``(last data offset or
        None, producer epoch)``; ``high_watermark``: the log's (its end offset on one
        node; Kafka 4.4.0 keeps a batch left empty when it ends there). ``now`` in ms.

        Returns:
            (the offset cleaning reached: the next checkpoint, stats).

        Raises:
            LogCleaningAbortedError: ``check_done`` or ``replace`` stopped the clean (the
                groups swapped in before stay; the ``.cleaned`` files are removed).
            CorruptRecordError: a rolled segment holds bytes that are not a batch.
        """
        stats = CleanerStats()
        start, upper = to_clean.first_dirty_offset, to_clean.first_uncleanable_offset
        self.build_offset_map(segments, start, upper, aborted_between(start, upper), stats)
        end = self.offset_map.latest_offset + 1
        to_rewrite = [s for s in segments if s.base_offset < end]
        txns = CleanedTransactionMetadata()
        for group in group_segments_by_size(to_rewrite, config.segment_bytes,
                                            config.segment_index_bytes, upper):
            base = self.clean_segments(group, segments, txns, config=config, now=now,
                                       aborted_between=aborted_between,
                                       last_records=last_records_of_active_producers,
                                       high_watermark=high_watermark, stats=stats)
            if not replace(group, base):
                delete_cleaned(group[0].directory, base)
                raise LogCleaningAbortedError(
                    f"segments {[s.base_offset for s in group]} changed during the clean",
                    file=group[0].directory)
            stats.segments_cleaned += len(group)
        return end, stats

    def clean_segments(self, group: list, segments: list, txns, *, config: CleanConfig,
                       now: int, aborted_between, last_records: dict, high_watermark: int,
                       stats: CleanerStats) -> int:
        """Cleaner.cleanSegments up to the swap: the group's retained batches written to
        ``<base>.log.cleaned`` with its ``.index``/``.timeindex``/``.txnindex`` (also
        ``.cleaned``), fsynced, its mtime the group's last segment's. Returns the base
        offset."""
        d = group[0].directory
        base = group[0].base_offset
        names = _names(base)
        retained_txns: list = []
        txns.cleaned_index = retained_txns
        log_path = os.path.join(d, names[0] + CLEANED_FILE_SUFFIX)
        try:
            with _create(log_path) as out:
                for seg in group:
                    i = segments.index(seg)
                    nxt = (segments[i + 1].base_offset if i + 1 < len(segments)
                           else seg.read_next_offset() or seg.base_offset)
                    txns.add_aborted_transactions(aborted_between(seg.base_offset, nxt))
                    self._clean_into(seg, out, txns, config=config, now=now,
                                     last_records=last_records,
                                     high_watermark=high_watermark,
                                     stats=stats)
                out.flush()
                if self.fsync:
                    os.fsync(out.fileno())
            self._write_indexes(d, base, names, config, retained_txns)
            mtime = os.stat(group[-1].log_path).st_mtime_ns
            os.utime(log_path, ns=(mtime, mtime))
        except BaseException:
            delete_cleaned(d, base)
            raise
        return base

    def _write_indexes(self, d, base: int, names, config: CleanConfig, txns: list) -> None:
        log_path = os.path.join(d, names[0] + CLEANED_FILE_SUFFIX)
        view = open_view(log_path) if os.path.getsize(log_path) else memoryview(b"")
        try:
            rebuilt = rebuild_indexes(view, base, config.index_interval_bytes, file=log_path)
            offset_bytes = rebuilt.offset_index_bytes(base)
            time_bytes = rebuilt.time_index_bytes(base)
        finally:
            if len(view):
                release_view(view)
        blobs = [offset_bytes, time_bytes]
        if txns:
            blobs.append(b"".join(t.to_bytes() for t in txns))
        for name, data in zip(names[1:], blobs, strict=False):
            with _create(os.path.join(d, name + CLEANED_FILE_SUFFIX)) as f:
                f.write(data)
                f.flush()
                if self.fsync:
                    os.fsync(f.fileno())

    def _clean_into(self, seg, out, txns, *, config: CleanConfig, now: int,
                    last_records: dict, high_watermark: int, stats: CleanerStats) -> None:
        """Cleaner.cleanInto: each batch of ``seg`` through the cleaner's RecordFilter
        (``MemoryRecords.filterTo``), what stays written to ``out``."""
        m = self.offset_map
        check = self.check_done
        fr = seg.records()
        for b in fr.batches():
            if check is not None:
                check()
            stats.bytes_read += b.size
            raw = b.raw()
            if b.magic < MAGIC_V2:
                out.write(raw)
                stats.bytes_written += len(raw)
                continue
            control = b.is_control
            ctype = _control_type(b) if control else None
            can_discard = (txns.on_control_batch_read(b, ctype) if control
                           else txns.on_batch_read(b))
            if control:
                horizon = b.delete_horizon_ms
                discard_records = can_discard and horizon is not None and horizon <= now
            else:
                discard_records = can_discard
            retention = _batch_retention(b, last_records, high_watermark, discard_records)
            if retention == DELETE:
                continue
            retained, tombstones, whole = [], False, True
            for r in b.iter_records():
                stats.messages_read += 1
                if discard_records:
                    keep = False
                elif control:
                    keep = True
                else:
                    keep = _should_retain_record(m, b, r, now, stats)
                if keep:
                    retained.append(r)
                    tombstones = tombstones or r.value is None
                else:
                    whole = False
            if retained:
                need_horizon = ((tombstones or (can_discard and control))
                                and b.delete_horizon_ms is None)
                if whole and not need_horizon:
                    data = raw
                else:
                    horizon = (now + config.delete_retention_ms if need_horizon
                               else b.delete_horizon_ms)
                    data = rebuild_batch(b, retained, horizon)
            elif retention == RETAIN_EMPTY:
                data = empty_batch(b)
            else:
                continue
            out.write(data)
            stats.messages_written += len(retained)
            stats.bytes_written += len(data)
        _ensure_whole(seg, fr)


def _ensure_whole(seg, fr) -> None:
    """A rolled segment must be whole batches to its end (the cleaner would drop what
    follows bytes that are not one: Kafka's cleaner fails the log instead).

    Raises:
        CorruptRecordError: naming the file and the position of the first bad byte.
    """
    if fr.invalid_bytes:
        why = f" ({fr.stop_error.message})" if getattr(fr, "stop_error", None) else ""
        raise CorruptRecordError(f"{fr.invalid_bytes} bytes that are not a whole batch{why}; "
                                 "the log is not cleaned (run kafkalog recover)",
                                 file=seg.log_path, position=fr.valid_end)


def _batch_retention(b, last_records: dict, high_watermark: int,
                     discard_records: bool) -> str:
    """The cleaner's RecordFilter.checkBatchRetention (Kafka 4.4.0's: a batch left empty
    stays when it is its producer's last, or the log's last below the high watermark)."""
    if b.producer_id >= 0:
        last = last_records.get(b.producer_id)
        if last is not None:
            last_data_offset, epoch = last
            if (b.last_offset == last_data_offset if last_data_offset is not None
                    else b.is_control and b.producer_epoch == epoch):
                return RETAIN_EMPTY
    if b.next_offset == high_watermark:
        return RETAIN_EMPTY
    return DELETE if discard_records else DELETE_EMPTY


def _should_retain_record(m: OffsetMap, b, r, now: int, stats: CleanerStats) -> bool:
    """Cleaner.shouldRetainRecord for a v2 data record."""
    if r.offset > m.latest_offset:
        return True
    if r.key is None:
        stats.invalid_messages_read += 1
        return False
    if r.offset < m.get(r.key):
        return False
    if r.value is not None:
        return True
    horizon = b.delete_horizon_ms
    return horizon is None or now < horizon


def rebuild_batch(b, records: list, delete_horizon_ms: int | None) -> bytes:
    """MemoryRecords.buildRetainedRecordsInto: a v2 batch of ``records`` (kept from ``b``,
    offsets unchanged) with ``b``'s base offset, last offset, producer id/epoch, base
    sequence, partition leader epoch, timestamp type, transactional/control flags and
    codec (default level); baseTimestamp is the delete horizon when one is given."""
    from ..format import compression
    from ..format.builder import assemble_batch, encode_records

    log_append = bool(b.attributes & TIMESTAMP_TYPE_MASK)
    rows = [((b.max_timestamp if log_append else r.timestamp), r.key, r.value, r.headers, r.offset)
            for r in records]
    base_ts = delete_horizon_ms if delete_horizon_ms is not None else rows[0][0]
    base = b.base_offset
    pieces, run = [], []
    for row in rows:
        if run and row[4] != run[-1][4] + 1:
            pieces.append(encode_records([x[:4] for x in run], base_ts, run[0][4] - base)[0])
            run = []
        run.append(row)
    pieces.append(encode_records([x[:4] for x in run], base_ts, run[0][4] - base)[0])
    block = b"".join(pieces)
    codec = b.compression
    if codec != CODEC_NONE:
        comp = compression.Compressor(codec)
        block = comp.compress(block) + comp.flush()
    attributes = codec | (b.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK
                                          | CONTROL_FLAG_MASK))
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_FLAG_MASK
    max_ts = b.max_timestamp if log_append else max(row[0] for row in rows)
    return assemble_batch(block, base_offset=base, partition_leader_epoch=b.partition_leader_epoch,
                          attributes=attributes, last_offset_delta=b.last_offset - base,
                          base_timestamp=base_ts, max_timestamp=max_ts,
                          producer_id=b.producer_id, producer_epoch=b.producer_epoch,
                          base_sequence=b.base_sequence, records_count=len(rows))


def empty_batch(b) -> bytes:
    """DefaultRecordBatch.writeEmptyHeader: ``b``'s header with no records (no codec, its
    max timestamp as both timestamps), kept for its producer's sequence and epoch."""
    from ..format.builder import assemble_batch

    attributes = b.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK)
    return assemble_batch(b"", base_offset=b.base_offset,
                          partition_leader_epoch=b.partition_leader_epoch, attributes=attributes,
                          last_offset_delta=b.last_offset - b.base_offset,
                          base_timestamp=b.max_timestamp, max_timestamp=b.max_timestamp,
                          producer_id=b.producer_id, producer_epoch=b.producer_epoch,
                          base_sequence=b.base_sequence, records_count=0)


# -- the swap (LocalLog.replaceSegments) ---------------------------------------------------------

def _names(base: int) -> tuple[str, str, str, str]:
    p = f"{base:020d}"
    return p + ".log", p + ".index", p + ".timeindex", p + ".txnindex"


def delete_cleaned(directory, base: int) -> None:
    """Remove a ``.cleaned`` segment's files (an abandoned clean)."""
    for name in _names(base):
        try:
            os.unlink(os.path.join(directory, name + CLEANED_FILE_SUFFIX))
        except FileNotFoundError:
            pass


def replace_segments(directory, cleaned_base: int, old: list, *, fsync: bool = True,
                     crash_after: str | None = None) -> list[str]:
    """LocalLog.replaceSegments for one cleaned segment, on disk: its ``.cleaned`` files
    renamed ``.swap``, the ``old`` segments' files renamed ``.deleted``, the ``.swap``
    files renamed to the segment's names, then the producer snapshots at the other old
    segments' base offsets renamed ``.deleted`` (``UnifiedLog.replaceSegments``), each
    step's directory entry fsynced. Returns the
    ``.deleted`` paths (the caller removes them once no reader needs them: Kafka's
    ``file.delete.delay.ms``). ``crash_after`` (tests): stop after the named step
    (``"swap"``, ``"deleted"``) as a crash would.

    The caller holds the log (no append, read or retention in between) and puts the new
    :class:`LogSegment` in place of ``old`` in its segment list.
    """
    d = str(directory)
    names = _names(cleaned_base)
    present = [n for n in names if os.path.exists(os.path.join(d, n + CLEANED_FILE_SUFFIX))]
    for n in present:
        os.replace(os.path.join(d, n + CLEANED_FILE_SUFFIX), os.path.join(d, n + SWAP_FILE_SUFFIX))
    _fsync_dir(d, fsync)
    if crash_after == "swap":
        return []
    deleted = []
    for seg in old:
        for n in _names(seg.base_offset):
            src = os.path.join(d, n)
            if os.path.exists(src):
                os.replace(src, src + ".deleted")
                deleted.append(src + ".deleted")
    _fsync_dir(d, fsync)
    if crash_after == "deleted":
        return deleted
    for n in present:
        os.replace(os.path.join(d, n + SWAP_FILE_SUFFIX), os.path.join(d, n))
    # UnifiedLog.replaceSegments then deleteProducerSnapshots: the producer snapshots at
    # the base offsets of the segments gone
    for seg in old:
        if seg.base_offset != cleaned_base:
            src = os.path.join(d, f"{seg.base_offset:020d}.snapshot")
            if os.path.exists(src):
                os.replace(src, src + ".deleted")
                deleted.append(src + ".deleted")
    _fsync_dir(d, fsync)
    return deleted


def _fsync_dir(d: str, fsync: bool) -> None:
    if fsync:
        fsync_dir(d)


def _create(path: str):
    """A ``.cleaned`` file opened for writing, created anew (a file or link planted at
    its name is unlinked first, never written through: :func:`~.fileio.create_fresh`)."""
    return open(create_fresh(path), "wb")


# -- one log, start to end ------------------------------------------------------------------------

@dataclass
class CleanSnapshot:
    """What a clean needs from a log, taken while it is held (:func:`prepare_clean`):
    read-side copies of its rolled segments and its producers' last records."""

    directory: object
    segments: list
    to_clean: LogToClean
    last_records: dict
    #: the active segment's aborted transactions (its index is in memory)
    active_aborted: list = field(default_factory=list)
    #: the high watermark (the log end offset of a single node)
    high_watermark: int = 0

    def aborted_between(self, start: int, end: int) -> list:
        """LocalLog.collectAbortedTransactions over ``[start, end)``: the rolled
        segments' ``.txnindex`` files from the floor segment of ``start`` on, then the
        active segment's (an aborted transaction is indexed with its ABORT marker, which
        may lie past ``end``)."""
        from .log import Log

        snap = Log(self.directory)
        snap.segments = self.segments
        found = snap.collect_aborted_transactions(start, end)
        seen = {(t.producer_id, t.first_offset) for t in found}
        found += [t for t in self.active_aborted
                  if t.last_offset >= start and t.first_offset < end
                  and (t.producer_id, t.first_offset) not in seen]
        return found


def prepare_clean(log, *, last_clean_offset: int | None, now: int,
                  min_compaction_lag_ms: int = 0,
                  max_compaction_lag_ms: int = 2**63 - 1) -> CleanSnapshot | None:
    """On the thread that owns ``log`` (a :class:`~.log.UnifiedLog`): its cleanable
    section (:func:`cleanable_offsets`; the last stable offset is the producer state's
    first unstable offset, else the log end offset: the high watermark of a single node)
    and a snapshot to clean from. None when it has a single segment."""
    segs = log.segments
    if len(segs) < 2:
        return None
    ps = log.producer_state
    fuo = ps.first_unstable_offset if ps is not None else None
    lso = log.log_end_offset if fuo is None else fuo
    to_clean = cleanable_offsets(segs, log_start_offset=log.log_start_offset,
                                 log_end_offset=log.log_end_offset, last_stable_offset=lso,
                                 last_clean_offset=last_clean_offset, now=now,
                                 min_compaction_lag_ms=min_compaction_lag_ms)
    if max_compaction_lag_ms < now:  # else no timestamp can be past the lag
        delay = max_compaction_delay(segs, to_clean.first_dirty_offset, now,
                                     max_compaction_lag_ms)
        if delay > 0:
            to_clean = dataclasses.replace(to_clean, need_compaction_now=True)
    last = {}
    if ps is not None:
        for pid, e in ps.producers.items():
            off = e.last_data_offset
            last[pid] = (off if off >= 0 else None, e.producer_epoch)
    rolled = [LogSegment(log.directory, s.base_offset) for s in segs[:-1]]
    try:
        active_aborted = list(segs[-1].txn_index.iter_entries())
    except KafkalogError:
        active_aborted = []
    return CleanSnapshot(log.directory, rolled, to_clean, last, active_aborted,
                         log.log_end_offset)


def is_cleanable(tc: LogToClean, min_cleanable_ratio: float) -> bool:
    """grabFilthiestCompactedLog's filter: cleanable bytes, and a dirty ratio above
    ``min.cleanable.dirty.ratio`` or ``max.compaction.lag.ms`` passed."""
    return tc.cleanable_bytes > 0 and (tc.need_compaction_now
                                       or tc.cleanable_ratio > min_cleanable_ratio)


def swap_in(log, group: list, cleaned_base: int, *, fsync: bool = True) -> list[str] | None:
    """On the thread that owns ``log``: replace ``group`` (segments by base offset) with
    the cleaned segment, on disk (:func:`replace_segments`) and in ``log.segments``.
    Returns the ``.deleted`` paths to remove, or None (nothing changed) when the group is
    no longer a run of rolled segments of the log (retention or a truncation took some)."""
    bases = [s.base_offset for s in log.segments]
    want = [s.base_offset for s in group]
    try:
        i = bases.index(want[0])
    except ValueError:
        return None
    if bases[i:i + len(want)] != want or i + len(want) >= len(bases):
        return None
    deleted = replace_segments(log.directory, cleaned_base, group, fsync=fsync)
    old = log.segments[i:i + len(want)]
    log.segments[i:i + len(want)] = [LogSegment(log.directory, cleaned_base)]
    for s in old:
        s.close()
    return deleted


def clean_log(log, cleaner: Cleaner, config: CleanConfig, *, now: int,
              min_compaction_lag_ms: int = 0, max_compaction_lag_ms: int = 2**63 - 1,
              min_cleanable_ratio: float = 0.0,
              fsync: bool = True) -> tuple[int, CleanerStats] | None:
    """Clean ``log`` (a :class:`~.log.UnifiedLog` no one else uses meanwhile) once, from
    its ``cleaner-offset-checkpoint`` entry, when its dirty ratio is above
    ``min_cleanable_ratio`` and it has cleanable bytes; the checkpoint is updated to
    where the clean reached. Returns (that offset, stats), or None (nothing to clean)."""
    tp = log.topic_partition
    log_dir = log.directory.parent
    snap = prepare_clean(log, last_clean_offset=read_cleaner_checkpoint(log_dir).get(tp),
                         now=now, min_compaction_lag_ms=min_compaction_lag_ms,
                         max_compaction_lag_ms=max_compaction_lag_ms)
    if snap is None:
        return None
    tc = snap.to_clean
    if not is_cleanable(tc, min_cleanable_ratio):
        if tc.force_update_checkpoint:
            update_cleaner_checkpoint(log_dir, tp, tc.first_dirty_offset, fsync=fsync)
        return None

    def replace(group, base):
        deleted = swap_in(log, group, base, fsync=fsync)
        for p in deleted or ():
            os.unlink(p)
        return deleted is not None

    end, stats = cleaner.clean(snap.segments, tc, config=config, now=now,
                               aborted_between=snap.aborted_between,
                               last_records_of_active_producers=snap.last_records,
                               replace=replace, high_watermark=snap.high_watermark)
    update_cleaner_checkpoint(log_dir, tp, end, fsync=fsync)
    return end, stats


__all__ = ["CleanSnapshot", "clean_log", "is_cleanable", "max_compaction_delay",
           "prepare_clean", "swap_in", "CleanConfig", "Cleaner", "CleanerStats", "LogToClean", "OffsetMap",
           "cleanable_offsets", "delete_cleaned", "group_segments_by_size",
           "read_cleaner_checkpoint", "replace_segments", "update_cleaner_checkpoint"]
