"""A log segment, after ``LogSegment``: a ``.log`` of batches plus its sparse indexes.

The segment owns reading (``translate_offset``, ``find_offset_by_timestamp``), the
recovery scan that rebuilds its indexes from the ``.log`` alone (:func:`rebuild_indexes`,
``LogSegment.recover``), and, in the append engine, appending.

Invariants (as in Kafka): every offset in the segment is >= its base offset and fits
int32 relative to it; index positions are batch starts; the time index grows only.
Not thread-safe.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..constants import (
    INDEX_FILE_SUFFIX,
    INT32_MAX,
    LOG_FILE_SUFFIX,
    MAGIC_V2,
    NO_TIMESTAMP,
    TIME_INDEX_FILE_SUFFIX,
    TXN_INDEX_FILE_SUFFIX,
)
from ..errors import CorruptRecordError, UnreadableError
from ..format.records import FileRecords
from .files import offset_from_file_name
from .offset_index import OffsetIndex, OffsetPosition
from .time_index import TimeIndex, TimestampOffset

DEFAULT_INDEX_INTERVAL_BYTES = 4096


def open_view(path) -> memoryview:
    """A read-only view of a whole file: a memory map, or empty bytes for an empty file.

    Raises:
        UnreadableError: the file cannot be opened or mapped.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=path) from e
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return memoryview(b"")
        mm = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        if hasattr(mm, "madvise") and hasattr(mmap, "MADV_SEQUENTIAL"):
            mm.madvise(mmap.MADV_SEQUENTIAL)
        return memoryview(mm)
    except (OSError, ValueError) as e:
        raise UnreadableError(getattr(e, "strerror", None) or str(e), file=path) from e
    finally:
        os.close(fd)


class LogSegment:
    """A segment of a partition directory, opened read-only.

    Attributes:
        directory: the partition directory.
        base_offset: the segment's base offset (from its file name).
        log_path, index_path, time_index_path, txn_index_path: its files (may be absent).
    """

    def __init__(self, directory, base_offset: int, *, log_path=None):
        from .files import filename_prefix_from_offset

        self.directory = Path(directory)
        self.base_offset = base_offset
        prefix = filename_prefix_from_offset(base_offset)
        self.log_path = Path(log_path) if log_path else self.directory / (prefix + LOG_FILE_SUFFIX)
        self.index_path = self.directory / (prefix + INDEX_FILE_SUFFIX)
        self.time_index_path = self.directory / (prefix + TIME_INDEX_FILE_SUFFIX)
        self.txn_index_path = self.directory / (prefix + TXN_INDEX_FILE_SUFFIX)
        self._view: memoryview | None = None
        self._offset_index: OffsetIndex | None = None
        self._time_index: TimeIndex | None = None

    @classmethod
    def open(cls, log_path) -> LogSegment:
        """Open the segment whose ``.log`` is ``log_path`` (any suffix's sibling works).

        Raises:
            NotAKafkaFileError: the name is not a 20-digit base offset.
        """
        p = Path(log_path)
        base = offset_from_file_name(p)
        log = p if p.suffix == LOG_FILE_SUFFIX else p.with_suffix(LOG_FILE_SUFFIX)
        return cls(p.parent, base, log_path=log)

    # -- the .log -------------------------------------------------------------------------

    @property
    def view(self) -> memoryview:
        if self._view is None:
            self._view = open_view(self.log_path)
        return self._view

    @property
    def size(self) -> int:
        """Bytes in the .log."""
        if self._view is not None:
            return len(self._view)
        try:
            return self.log_path.stat().st_size
        except OSError as e:
            raise UnreadableError(e.strerror or str(e), file=self.log_path) from e

    def records(self, start: int = 0, end: int | None = None) -> FileRecords:
        """The batches from byte ``start`` to ``end`` of the .log."""
        return FileRecords(self.view, start, end, file=self.log_path)

    # -- indexes --------------------------------------------------------------------------

    @property
    def offset_index(self) -> OffsetIndex | None:
        """The loaded offset index, or None when the file is missing."""
        if self._offset_index is None and self.index_path.exists():
            self._offset_index = OffsetIndex.load(self.index_path, self.base_offset)
        return self._offset_index

    @property
    def time_index(self) -> TimeIndex | None:
        """The loaded time index, or None when the file is missing."""
        if self._time_index is None and self.time_index_path.exists():
            self._time_index = TimeIndex.load(self.time_index_path, self.base_offset)
        return self._time_index

    # -- the read path (LogSegment.translateOffset / findOffsetByTimestamp) --------------

    def translate_offset(self, offset: int, starting_position: int = 0):
        """The first batch whose last offset is >= ``offset``, found by an index lookup then
        a forward scan (LogSegment.translateOffset). Returns the batch or None.

        Each lookup scans at most the bytes between two index entries plus one batch.
        """
        idx = self.offset_index
        pos = starting_position
        if idx is not None:
            pos = max(pos, idx.lookup(offset).position)
        for batch in self.records(pos).batches():
            if batch.last_offset >= offset:
                return batch
        return None

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: int | None = None):
        """The first record with timestamp >= ``timestamp`` (LogSegment.findOffsetByTimestamp):
        time index lookup, offset index lookup, then a scan. Returns
        ``(timestamp, offset)`` of that record, or None when the segment has none."""
        start = self.base_offset if starting_offset is None else starting_offset
        pos = 0
        tidx, oidx = self.time_index, self.offset_index
        if tidx is not None and oidx is not None:
            ts_off = tidx.lookup(timestamp)
            pos = oidx.lookup(max(ts_off.offset, start)).position
        for batch in self.records(pos).batches():
            if batch.max_timestamp >= timestamp:
                for rec in batch.records():
                    if rec.timestamp >= timestamp and rec.offset >= start:
                        return rec.timestamp, rec.offset
        return None

    def close(self) -> None:
        if self._view is not None:
            obj = self._view.obj
            self._view.release()
            self._view = None
            if isinstance(obj, mmap.mmap):
                try:
                    obj.close()
                except BufferError:  # batches still reference it; the GC closes it
                    pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return f"LogSegment({str(self.log_path)!r}, base_offset={self.base_offset})"


@dataclass
class RebuiltIndexes:
    """What LogSegment.recover computes from a ``.log`` alone.

    Attributes:
        valid_bytes: bytes of the longest valid prefix (the .log is truncated there).
        batches: whole valid batches in that prefix.
        offset_entries: the offset index, as ``OffsetPosition`` s.
        time_entries: the time index, final entry for the largest timestamp included.
        max_timestamp: the largest batch max timestamp (-1 when none).
        offset_of_max_timestamp: last offset of the first batch holding it (-1 when none).
        last_offset: last offset of the last valid batch (None when none).
        error: why the scan stopped before the end (None: end reached or partial tail).
        epochs: ``(partitionLeaderEpoch, baseOffset)`` where the epoch grows (v2 batches).
    """

    valid_bytes: int = 0
    batches: int = 0
    offset_entries: list[OffsetPosition] = field(default_factory=list)
    time_entries: list[TimestampOffset] = field(default_factory=list)
    max_timestamp: int = NO_TIMESTAMP
    offset_of_max_timestamp: int = -1
    last_offset: int | None = None
    error: CorruptRecordError | None = None
    epochs: list[tuple[int, int]] = field(default_factory=list)

    def offset_index_bytes(self, base_offset: int) -> bytes:
        pack = OffsetIndex.ENTRY.pack
        return b"".join(pack(e.offset - base_offset, e.position) for e in self.offset_entries)

    def time_index_bytes(self, base_offset: int) -> bytes:
        pack = TimeIndex.ENTRY.pack
        return b"".join(pack(e.timestamp, e.offset - base_offset) for e in self.time_entries)


def rebuild_indexes(view, base_offset: int,
                    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES, *,
                    strict: bool = True, previous_last_offset: int | None = None,
                    file=None) -> RebuiltIndexes:
    """Scan a segment's ``.log`` as ``LogSegment.recover`` does and compute its indexes.

    For each whole batch: check its CRC (CRC-32C for v2, CRC-32 for v0/v1) and that its
    last offset fits int32 relative to ``base_offset``; track the largest batch max
    timestamp and the last offset of the first batch holding it; append an offset-index
    entry ``(batch.lastOffset, position)`` and a time-index entry when more than
    ``index_interval_bytes`` were scanned since the last entry; stop at the first invalid
    batch. Finally append the time-index entry for the largest timestamp.

    With ``strict`` (kafkalog's documented extension, on by default), a batch is also
    invalid when its magic is not 0-2, its last offset is below its base offset, or its
    base offset is not above the previous batch's last offset (``previous_last_offset``
    carries that across segments). ``strict=False`` is the broker's exact rule.

    Returns:
        :class:`RebuiltIndexes`. Never raises for bad bytes: the error is in ``.error``.
    """
    out = RebuiltIndexes()
    fr = FileRecords(view, 0, None, file=file)
    valid = 0
    last_index_entry = 0
    max_ts = NO_TIMESTAMP
    off_of_max = -1
    prev_last = previous_last_offset
    latest_epoch = -1
    offset_entries = out.offset_entries
    time_entries = out.time_entries
    last_time = NO_TIMESTAMP
    for batch in fr.batches():
        try:
            batch.ensure_valid(file)
            last = batch.last_offset
            if not 0 <= last - base_offset <= INT32_MAX:
                raise CorruptRecordError(
                    f"offset {last} cannot be stored relative to base offset {base_offset}",
                    file=file, position=batch.position)
            if strict:
                magic = batch.magic
                if magic > MAGIC_V2:
                    raise CorruptRecordError(f"unknown magic {magic}", file=file,
                                             position=batch.position)
                first = batch.base_offset
                if last < first:
                    raise CorruptRecordError(
                        f"last offset {last} is below base offset {first}", file=file,
                        position=batch.position)
                if prev_last is not None and first <= prev_last:
                    raise CorruptRecordError(
                        f"offsets go backwards: batch base offset {first} follows offset "
                        f"{prev_last}", file=file, position=batch.position)
        except CorruptRecordError as e:
            out.error = e
            break
        bmax = batch.max_timestamp
        if bmax > max_ts:
            max_ts = bmax
            off_of_max = last
        if valid - last_index_entry > index_interval_bytes:
            offset_entries.append(OffsetPosition(last, valid))
            if max_ts > last_time:
                time_entries.append(TimestampOffset(max_ts, off_of_max))
                last_time = max_ts
            last_index_entry = valid
        valid += batch.size
        out.batches += 1
        prev_last = last
        if batch.magic >= MAGIC_V2:
            epoch = batch.partition_leader_epoch
            if epoch >= 0 and epoch > latest_epoch:
                out.epochs.append((epoch, batch.base_offset))
                latest_epoch = epoch
    if out.error is None and fr.stop_error is not None:
        out.error = fr.stop_error
    if max_ts > last_time:
        time_entries.append(TimestampOffset(max_ts, off_of_max))
    out.valid_bytes = valid
    out.max_timestamp = max_ts
    out.offset_of_max_timestamp = off_of_max
    out.last_offset = prev_last if out.batches else None
    return out
