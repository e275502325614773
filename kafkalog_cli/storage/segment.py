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
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from ..constants import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    INT32_MAX,
    LOG_FILE_SUFFIX,
    NO_TIMESTAMP,
)
from ..errors import (
    CorruptRecordError,
    CrcMismatchError,
    IllegalStateError,
    KafkalogError,
    NotAKafkaFileError,
    OffsetOverflowError,
    UnreadableError,
    UnsafePathError,
)
from ..format.record_batch import RecordBatch
from ..format.records import FileRecords
from ..schema.deferred import DeferredBytes
from .fileio import nonzero_length, open_for_write
from .files import (
    SEGMENT_SUFFIXES,
    check_exists,
    find_partition_dirs,
    index_file,
    log_file,
    offset_from_file_name,
    segment_bases,
    time_index_file,
    txn_index_file,
)
from .location import RemotePath, as_path, open_regular, stat_regular

if TYPE_CHECKING:  # imported where used: a .log's read loads no index module (issue 28)
    from .offset_index import OffsetIndex, OffsetPosition
    from .recovery_scan import ScanResult
    from .time_index import TimeIndex, TimestampOffset
    from .txn_index import TransactionIndex

DEFAULT_INDEX_INTERVAL_BYTES = 4096


def open_view(path) -> memoryview:
    """A read-only view of a whole regular file: a memory map, or empty bytes for an empty
    file.
    The one place a segment's bytes are opened: a local path is mapped as it is; a remote
    one (:class:`~kafkalog_cli.storage.location.RemotePath`) is fetched whole, in ranged
    requests, into an unlinked temporary file that is mapped (commands that read a whole
    file; :meth:`LogSegment.records` fetches only the ranges a read goes through).

    Raises:
        NotRegularFileError: a FIFO, a device (a link to ``/dev/zero``), a socket or a
            directory (:func:`~.location.open_regular`).
        UnreadableError: the file cannot be opened or mapped (or fetched).
    """
    if isinstance(path, RemotePath):
        from .ranged import RangedFile

        rf = RangedFile(path)
        try:
            view = memoryview(rf.whole().obj) if rf.size else memoryview(b"")
        finally:
            rf.close()   # the map stays valid (and the file's space held) until released
        return view
    try:
        f = open_regular(path)   # a FIFO or a device: refused, never waited on
    except FileNotFoundError as e:
        raise UnreadableError(e.strerror or str(e), file=path) from e
    with f:
        try:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                return memoryview(b"")
            mm = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ)
            if hasattr(mm, "madvise") and hasattr(mmap, "MADV_SEQUENTIAL"):
                mm.madvise(mmap.MADV_SEQUENTIAL)
            return memoryview(mm)
        except (OSError, ValueError) as e:
            raise UnreadableError(getattr(e, "strerror", None) or str(e), file=path) from e


def release_view(view: memoryview) -> None:
    """Release a view from :func:`open_view` and close its memory map (left to the GC
    when batches still reference it)."""
    obj = view.obj
    view.release()
    if isinstance(obj, mmap.mmap):
        try:
            obj.close()
        except BufferError:  # a batch still references it; the GC closes it
            pass


def resolve_segments(paths) -> Iterator[tuple[LogSegment, str | None]]:
    """Yield ``(segment, only)`` for every segment under ``paths``: a segment file, or
    every segment of the partitions under a directory (:func:`~.files
    .find_partition_dirs`, the rule every command follows); ``only`` is the suffix when a
    single file of the segment was named (``.log``, ``.index``, ``.timeindex``), else
    None.

    Raises:
        UnreadableError: a path is missing or unreadable.
        NotAKafkaFileError: a path is neither a segment file nor a directory holding
            partition or log directories.
    """
    for raw in paths:
        p = check_exists(raw)
        if p.is_file():
            suffix = p.suffix
            if suffix not in SEGMENT_SUFFIXES:
                raise NotAKafkaFileError(
                    "not a Kafka segment file (expected .log, .index or .timeindex)", file=p)
            base = offset_from_file_name(p)
            yield LogSegment(p.parent, base), suffix
            continue
        for _, d in find_partition_dirs(p):
            for b in segment_bases(d):
                yield LogSegment(d, b), None


class TimestampAndOffset(NamedTuple):
    """A record found by timestamp (FileRecords.TimestampAndOffset, without the leader
    epoch: :meth:`LogSegment.translate_offset` gives the batch holding it): its timestamp
    (ms) and offset (absolute)."""

    timestamp: int
    offset: int


class FetchDataInfo(NamedTuple):
    """What a read by offset returns (FetchDataInfo): ``records``, whole batches (the last
    may be cut by the size bound, as the broker's are) as a :class:`FileSlice` of a local
    segment (``bytes`` of a remote one); ``first_offset``, the base offset of the first
    batch (absolute); ``segment``, the segment read; ``position``, the byte position of
    that batch in the segment (with ``segment.base_offset``, the fetch offset's
    ``LogOffsetMetadata``)."""

    records: bytes | FileSlice
    first_offset: int
    segment: LogSegment
    position: int = 0


class LogOffsetMetadata(NamedTuple):
    """LogOffsetMetadata: an offset, the base offset of the segment holding it and its
    byte position there (the batch holding the offset, or the segment's size for the log
    end offset), as a delayed fetch compares positions without reading."""

    message_offset: int
    segment_base_offset: int
    position: int


class FileSlice(DeferredBytes):
    """FileRecords.slice: ``size`` bytes of a segment's ``.log`` from byte ``position``,
    not read into memory: the server sends them straight from the file
    (``FileRecords.writeTo``: ``os.sendfile`` on a plain socket, else :meth:`read` in
    chunks); ``bytes(slice)`` reads them (``os.pread``). The ``.log`` is held open by the
    slice (the segment's :meth:`LogSegment.transfer_file`), so a segment deleted or
    closed meanwhile is still read from the file it had (as the broker's channel)."""

    __slots__ = ("file", "position", "size", "segment")

    def __init__(self, segment: LogSegment, position: int, size: int):
        self.segment = segment
        self.file = segment.transfer_file()
        self.position = position
        self.size = size

    def __len__(self) -> int:
        return self.size

    def fileno(self) -> int:
        return self.file.fileno()

    def read(self, offset: int, n: int) -> bytes:
        """``n`` bytes from ``offset`` within the slice (fewer at its end).

        Raises:
            UnreadableError: the file is shorter than the slice (or unreadable).
        """
        n = max(0, min(n, self.size - offset))
        try:
            data = os.pread(self.file.fileno(), n, self.position + offset)
        except OSError as e:
            raise UnreadableError(e.strerror or str(e), file=self.segment.log_path) from e
        if len(data) != n:
            raise UnreadableError(f"the file ends inside a fetched range ({len(data)} of {n} "
                                  "bytes)", file=self.segment.log_path,
                                  position=self.position + offset)
        return data

    def __bytes__(self) -> bytes:
        return self.read(0, self.size)

    def batches(self):
        """The batches of the slice (headers read from the segment's memory map)."""
        return self.segment.records(self.position, self.position + self.size).batches()

    def __repr__(self) -> str:
        return f"FileSlice({str(self.segment.log_path)!r}, {self.position}, {self.size})"


def iter_records_of(batch, file, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES):
    """``batch.iter_records()``, lazily (a batch of any size costs memory for a piece of
    it, and stopping early decodes no further); a record-level error (a count the
    records do not match, a codec that does not decompress, ...) names ``file`` and the
    batch's byte position (a position inside decompressed bytes means nothing in the
    file)."""
    try:
        yield from batch.iter_records(max_bytes)
    except KafkalogError as e:
        e.file = str(file) if e.file is None else e.file   # a Path or a RemotePath
        e.position = batch.position
        raise


class LogSegment:
    """A segment of a partition directory, opened read-only.

    Attributes:
        directory: the partition directory.
        base_offset: the segment's base offset (from its file name).
        log_path, index_path, time_index_path, txn_index_path: its files (may be absent).
    """

    def __init__(self, directory, base_offset: int, *, log_path=None):
        self.directory = as_path(directory)
        self.base_offset = base_offset
        self.log_path = (as_path(log_path) if log_path
                         else log_file(self.directory, base_offset))
        self.index_path = index_file(self.directory, base_offset)
        self.time_index_path = time_index_file(self.directory, base_offset)
        self.txn_index_path = txn_index_file(self.directory, base_offset)
        self._view: memoryview | None = None
        self._ranged = None   # a remote .log's RangedFile, when read by ranges
        self._transfer = None  # the .log open for FileSlices (transfer_file)
        self._offset_index: OffsetIndex | None = None
        self._time_index: TimeIndex | None = None

    @classmethod
    def open(cls, log_path) -> LogSegment:
        """Open the segment whose ``.log`` is ``log_path`` (any suffix's sibling works).

        Raises:
            NotAKafkaFileError: the name is not a 20-digit base offset.
        """
        p = as_path(log_path)
        base = offset_from_file_name(p)
        log = p if p.suffix == LOG_FILE_SUFFIX else p.with_suffix(LOG_FILE_SUFFIX)
        return cls(p.parent, base, log_path=log)

    # -- the .log -------------------------------------------------------------------------

    @property
    def view(self) -> memoryview:
        """The whole .log (:func:`open_view`; a remote one is fetched whole: readers of
        part of a segment use :meth:`records`)."""
        if self._view is None:
            if self._ranged is not None:
                self._view = self._ranged.whole()
            else:
                self._view = open_view(self.log_path)
        return self._view

    @property
    def size(self) -> int:
        """Bytes in the .log.

        Raises:
            NotRegularFileError: the ``.log`` is not a regular file.
            UnreadableError: it cannot be read (missing included).
        """
        if self._view is not None:
            return len(self._view)
        if isinstance(self.log_path, RemotePath):
            return self._ranged_file().size   # its open learnt the size: no second request
        try:
            # a FIFO or a link to /dev/zero is not an empty segment
            return stat_regular(self.log_path).st_size
        except OSError as e:
            raise UnreadableError(e.strerror or str(e), file=self.log_path) from e

    def records(self, start: int = 0, end: int | None = None, *, whole_range: bool = False):
        """The batches from byte ``start`` to ``end`` of the .log: a
        :class:`~kafkalog_cli.format.records.FileRecords` over the memory map, or, for a
        remote .log not fetched whole, a :class:`~kafkalog_cli.storage.ranged.RangedRecords`
        (the same batches, positions and ``valid_end``/``stop_error``) that fetches only
        the ranges it goes through: small windows first (a seek), unless ``whole_range``
        says the caller reads all of ``[start, end)``."""
        if self._view is None and isinstance(self.log_path, RemotePath):
            return self._ranged_file().records(start, end, file=self.log_path,
                                               whole_range=whole_range)
        return FileRecords(self.view, start, end, file=self.log_path)

    def salvage_records(self, start: int = 0, end: int | None = None, *,
                        after_offset: int | None = None):
        """The batches from byte ``start`` to ``end`` of the .log read past damage
        (``--skip-corrupt``): a :class:`~kafkalog_cli.format.salvage.SalvagedRecords`
        over the whole .log (a remote one is fetched whole), whose ``skipped`` lists the
        byte ranges passed over. ``after_offset``: the last offset read before ``start``
        (for the plausibility of a batch found by the scan)."""
        from ..format.salvage import SalvagedRecords

        return SalvagedRecords(self.view, start, end, base_offset=self.base_offset,
                               file=self.log_path, after_offset=after_offset)

    def transfer_file(self):
        """The ``.log`` open read-only for :class:`FileSlice` s (``FileRecords``'
        channel): opened once, shared by every slice; :meth:`close` drops the segment's
        reference, and the file closes when the last slice using it is gone.

        Raises:
            UnreadableError: the file cannot be opened.
        """
        f = self._transfer
        if f is None:
            try:
                f = self._transfer = open(os.open(self.log_path, os.O_RDONLY), "rb",
                                          buffering=0)
            except OSError as e:
                raise UnreadableError(e.strerror or str(e), file=self.log_path) from e
        return f

    def _ranged_file(self):
        if self._ranged is None:
            from .ranged import RangedFile

            self._ranged = RangedFile(self.log_path)
        return self._ranged

    # -- indexes --------------------------------------------------------------------------

    @property
    def offset_index(self) -> OffsetIndex | None:
        """The loaded offset index, or None when the file is missing."""
        if self._offset_index is None and self.index_path.exists():
            from .offset_index import OffsetIndex

            self._offset_index = OffsetIndex.load(self.index_path, self.base_offset)
        return self._offset_index

    @property
    def time_index(self) -> TimeIndex | None:
        """The loaded time index, or None when the file is missing."""
        if self._time_index is None and self.time_index_path.exists():
            from .time_index import TimeIndex

            self._time_index = TimeIndex.load(self.time_index_path, self.base_offset)
        return self._time_index

    @cached_property
    def txn_index(self) -> TransactionIndex:
        """The segment's transaction index, loaded from its ``.txnindex`` (empty when the
        file is absent).

        Raises:
            UnreadableError: the file exists but cannot be read.
        """
        from .txn_index import TransactionIndex

        return TransactionIndex.load(self.txn_index_path, self.base_offset)

    # -- the read path (LogSegment.translateOffset / findOffsetByTimestamp / read) ----------

    def usable_indexes(self) -> tuple[OffsetIndex | None, TimeIndex | None]:
        """The offset and time indexes as the read path uses them: a preallocated
        zero-filled tail dropped (in memory only), each None when its file is missing or
        does not load. (The indexes are hints: every position taken from them is checked,
        see :meth:`index_position`.)"""
        out = []
        for getter in ("offset_index", "time_index"):
            try:
                idx = getattr(self, getter)
            except KafkalogError:
                idx = None
            if idx is not None and idx.zero_tail:
                idx.truncate_to_entries(idx.entries - idx.zero_tail)
                idx.zero_tail = 0
            out.append(idx)
        return out[0], out[1]

    def index_position(self, offset: int) -> int:
        """The offset index's position for ``offset`` (absolute): its largest entry at or
        below it (``OffsetIndex.lookup``), or 0 when the index is missing or that entry
        does not land on the start of a batch holding offsets <= ``offset`` (a stale index
        is not trusted: the scan then starts at the segment's start)."""
        oidx = self.usable_indexes()[0]
        if oidx is None or oidx.entries == 0:
            return 0
        pos = oidx.lookup(offset).position
        # the start, or an entry outside the log (a corrupt entry's negative position:
        # LogSegment.translateOffset clamps its lookup with max(position, 0))
        if pos <= 0 or pos >= self.size:
            return 0
        for b in self.records(pos).batches():
            if b.__class__ is RecordBatch:
                return pos if b[2] <= offset else 0
            return pos
        return 0

    def read_next_offset(self) -> int | None:
        """LogSegment.readNextOffset: the offset after the segment's last batch, scanning
        from the last offset-index entry (from the start when that entry is not usable);
        None when the segment holds no batch."""
        if not self.size:
            return None
        oidx = self.usable_indexes()[0]
        pos = 0
        if oidx is not None and oidx.entries:
            pos = self.index_position(oidx.entry(oidx.entries - 1).offset)
        for start in ((pos, 0) if pos else (0,)):
            last = None
            for b in self.records(start, whole_range=True).batches():
                last = b
            if last is not None:
                return last.next_offset
        return None

    def largest_timestamp_in_index(self) -> int | None:
        """The largest timestamp the time index records (its last entry: a rolled
        segment's largest timestamp, ``LogSegment.largestTimestamp``), None when unknown."""
        tidx = self.usable_indexes()[1]
        if tidx is None or tidx.entries == 0:
            return None
        return tidx.last_entry.timestamp

    def batches_from(self, offset: int, *, check_crcs: bool = False):
        """The :class:`~kafkalog_cli.format.records.FileRecords` of the batches from the
        one holding ``offset`` (absolute) to the end of the segment, the start found
        through the offset index (:meth:`index_position`): iterate its ``batches()``,
        skipping those whose last offset is below ``offset``."""
        pos = self.index_position(offset) if offset > self.base_offset else 0
        return self.records(pos)

    def translate_offset(self, offset: int, starting_position: int = 0):
        """The first batch whose last offset is >= ``offset``, found by an index lookup then
        a forward scan (LogSegment.translateOffset). Returns the batch or None.

        Each lookup scans at most the bytes between two index entries plus one batch.
        """
        pos = starting_position
        if offset > self.base_offset:
            pos = max(pos, self.index_position(offset))
        for batch in self.records(pos).batches():
            if batch.last_offset >= offset:
                return batch
        return None

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: int | None = None
                                 ) -> TimestampAndOffset | None:
        """LogSegment.findOffsetByTimestamp: the first record (in offset order, control
        records included) whose timestamp is >= ``timestamp`` (ms) and offset >=
        ``starting_offset`` (default the base offset): the time index gives the largest
        entry at or below ``timestamp``, the offset index the position for it, then a
        forward scan decodes only the batches whose max timestamp reaches ``timestamp``.
        None when the segment holds no such record.

        Raises:
            CorruptRecordError: a batch to decode does not (naming the file and the
                batch's byte position).
        """
        start = self.base_offset if starting_offset is None else starting_offset
        if not self.size:
            return None
        tidx = self.usable_indexes()[1]
        target = start
        if tidx is not None and tidx.entries:
            target = max(tidx.lookup(timestamp).offset, start)
        pos = self.index_position(target) if target > self.base_offset else 0
        for b in self.records(pos).batches():
            if b.max_timestamp >= timestamp and b.last_offset >= start:
                for r in iter_records_of(b, self.log_path):
                    if r[1] >= timestamp and r[0] >= start:
                        return TimestampAndOffset(r[1], r[0])
        return None

    def read(self, start_offset: int, max_size: int, *, max_position: int | None = None,
             min_one_message: bool = False) -> FetchDataInfo | None:
        """LogSegment.read: the bytes of whole batches from the one holding
        ``start_offset`` (absolute): at most ``max_size`` bytes, or the first batch whole
        when ``min_one_message`` and it is larger; never past ``max_position`` (bytes in
        the ``.log``, default its end). None when no batch holds ``start_offset`` or
        beyond; a :class:`FetchDataInfo` with no records when ``max_size`` is 0."""
        batch = self.translate_offset(start_offset)
        if batch is None:
            return None
        start = batch.position
        adjusted = max(max_size, batch.size) if min_one_message else max_size
        if adjusted <= 0:
            return FetchDataInfo(b"", batch.base_offset, self, start)
        size = self.size
        end = size if max_position is None else min(max_position, size)
        fetch_size = max(0, min(end - start, adjusted))
        if isinstance(self.log_path, RemotePath):
            records = self.read_bytes(start, start + fetch_size)
        else:
            records = FileSlice(self, start, fetch_size)
        return FetchDataInfo(records, batch.base_offset, self, start)

    def read_bytes(self, start: int, end: int) -> bytes:
        """The bytes ``[start, end)`` of the .log (positions in bytes; a remote .log not
        fetched whole fetches just that range)."""
        if self._view is None and isinstance(self.log_path, RemotePath):
            rf = self._ranged_file()
            rf.ensure(start, end)
            return bytes(rf.view[start:end])
        return bytes(self.view[start:end])

    def close(self) -> None:
        """Release the ``.log``'s memory map (see :func:`release_view`) and the
        segment's reference to its :meth:`transfer_file`."""
        self._transfer = None
        self._release_view()

    def _release_view(self) -> None:
        if self._ranged is not None:
            self._ranged.close()
            self._ranged = None
            self._view = None
        if self._view is not None:
            view, self._view = self._view, None
            release_view(view)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return f"LogSegment({str(self.log_path)!r}, base_offset={self.base_offset})"


@dataclass
class RebuiltIndexes:
    """What LogSegment.recover computes from a ``.log`` alone (a view of
    :class:`~.recovery_scan.ScanResult` in index entries and exceptions).

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
        scan: the :class:`~.recovery_scan.ScanResult` behind it (None when built by hand).
        base_offset: the base offset it was scanned with (``offset_index_bytes`` and
            ``time_index_bytes`` for it return the scan's packed bytes, unless the entry
            lists were changed in length).
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
    scan: ScanResult | None = field(default=None, repr=False, compare=False)
    base_offset: int | None = field(default=None, repr=False, compare=False)

    def offset_index_bytes(self, base_offset: int) -> bytes:
        """The ``.index`` of :attr:`offset_entries` relative to ``base_offset``."""
        from .offset_index import OffsetIndex

        packed = self._scanned("offset_index", base_offset, OffsetIndex, self.offset_entries)
        if packed is not None:
            return packed
        pack = OffsetIndex.ENTRY.pack
        return b"".join(pack(e.offset - base_offset, e.position) for e in self.offset_entries)

    def time_index_bytes(self, base_offset: int) -> bytes:
        """The ``.timeindex`` of :attr:`time_entries` relative to ``base_offset``."""
        from .time_index import TimeIndex

        packed = self._scanned("time_index", base_offset, TimeIndex, self.time_entries)
        if packed is not None:
            return packed
        pack = TimeIndex.ENTRY.pack
        return b"".join(pack(e.timestamp, e.offset - base_offset) for e in self.time_entries)

    def _scanned(self, name: str, base_offset: int, index, entries) -> bytes | None:
        """The scan's packed bytes of index ``name`` while they still describe
        ``entries`` (same base offset, same number of entries), else None."""
        s = self.scan
        if s is None or base_offset != self.base_offset:
            return None
        packed = getattr(s, name)
        return packed if len(packed) == index.ENTRY.size * len(entries) else None


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
    base offset is below ``base_offset`` or not above the previous batch's last offset
    (``previous_last_offset`` carries that across segments). ``strict=False`` is the
    broker's exact rule.

    This is :func:`~.recovery_scan.scan_log` (the one implementation of the recovery
    scan, also ``kafkalog recover``'s) with its result as index entries and an exception.

    Returns:
        :class:`RebuiltIndexes`. Never raises for bad bytes: the error is in ``.error``.
    """
    from .offset_index import OffsetIndex, OffsetPosition
    from .recovery_scan import scan_log
    from .time_index import TimeIndex, TimestampOffset

    s = scan_log(view, base_offset, index_interval_bytes, strict=strict,
                 previous_last_offset=previous_last_offset)
    error = None
    if s.reason:
        if s.crc is not None:
            error = CrcMismatchError(*s.crc, file=file, position=s.valid_bytes)
        else:
            error = CorruptRecordError(s.reason, file=file, position=s.valid_bytes)
    return RebuiltIndexes(
        valid_bytes=s.valid_bytes, batches=s.batches,
        offset_entries=[OffsetPosition(base_offset + rel, position)
                        for rel, position in OffsetIndex.ENTRY.iter_unpack(s.offset_index)],
        time_entries=[TimestampOffset(ts, base_offset + rel)
                      for ts, rel in TimeIndex.ENTRY.iter_unpack(s.time_index)],
        max_timestamp=s.max_timestamp, offset_of_max_timestamp=s.offset_of_max_timestamp,
        last_offset=s.last_offset, error=error, epochs=s.epochs, scan=s,
        base_offset=base_offset)


# -- the append side -------------------------------------------------------------------------

class WritableLogSegment(LogSegment):
    """A segment being appended to, after ``LogSegment.append`` / ``flush`` /
    ``onBecomeInactiveSegment`` / ``close`` (Kafka 4.x, per-batch indexing of KAFKA-806).

    For each batch appended: the largest timestamp so far (and the last offset of the
    first batch holding it) is updated; then, when more than ``index.interval.bytes`` were
    appended since the last index entry, the offset index gets ``(batch last offset, batch
    start position)`` and the time index ``(max timestamp so far, its offset)`` if it grew;
    then the batch size is counted. This is exactly what :func:`rebuild_indexes` computes
    from the ``.log`` alone, so appending and recovery give byte-identical index files.

    While active, the ``.index``/``.timeindex`` files are preallocated to
    ``segment.index.bytes`` (rounded down to whole entries, zero-filled, sparse); entries
    are kept in memory and written by :meth:`flush`. :meth:`close` (or
    :meth:`on_become_inactive` at roll) appends the final time-index entry for the largest
    timestamp, trims both files to their entries and fsyncs. ``preallocate=true`` grows the
    ``.log`` to ``segment.bytes`` at creation and trims it on close, as FileRecords does.

    Attributes:
        config: the topic's LogConfig.
        created_ms: when this object was created (the clock), for segment.ms.
        roll_jitter_ms: this segment's jitter.
        rolling_based_timestamp: max timestamp of its first batch (None while empty).
        max_timestamp_so_far / offset_of_max_timestamp_so_far: for the time index.
        bytes_since_last_index_entry: bytes appended since the last offset-index entry.
        txn_index: its :class:`~.txn_index.TransactionIndex`.
        last_offset: the last offset appended (None while empty).
    """

    def __init__(self, directory, base_offset: int, config, clock, *, roll_jitter_ms: int = 0,
                 fsync: bool = True):
        super().__init__(directory, base_offset)
        self.config = config
        self.clock = clock
        self.fsync = fsync
        self.created_ms = clock.milliseconds()
        self.roll_jitter_ms = roll_jitter_ms
        self.rolling_based_timestamp: int | None = None
        self.max_timestamp_so_far = NO_TIMESTAMP
        self.offset_of_max_timestamp_so_far = base_offset
        self.bytes_since_last_index_entry = 0
        self.last_offset: int | None = None
        self._size = 0
        self._fd: int | None = None
        from .offset_index import OffsetIndex
        from .time_index import TimeIndex
        from .txn_index import TransactionIndex

        self._offset_index = OffsetIndex(self.index_path, base_offset, config.segment_index_bytes)
        self._time_index = TimeIndex(self.time_index_path, base_offset, config.segment_index_bytes)
        self.txn_index = TransactionIndex(self.txn_index_path, base_offset)
        # the roll rule's per-segment constants, fixed while the segment is active (as
        # LogSegment holds its rollJitterMs and its indexes' maxEntries): computed once,
        # not per append (see :meth:`should_roll`)
        self._roll_offset_index_max = self._offset_index.max_entries
        self._roll_time_index_max = self._time_index.max_entries - 1  # one slot kept
        self._active = True
        self._unflushed_log = False
        #: the ``.index`` / ``.timeindex`` descriptors :meth:`write_index_entries` keeps
        #: open while the segment is active (as the broker keeps its indexes mapped)
        self._index_fds: dict = {}

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    def create(cls, directory, base_offset: int, config, clock, *, roll_jitter_ms: int = 0,
               fsync: bool = True) -> WritableLogSegment:
        """A new empty segment: ``.log`` created (grown to segment.bytes with
        ``preallocate``), ``.index``/``.timeindex`` preallocated to segment.index.bytes.
        Existing files of that base offset are replaced (as LocalLog.roll does)."""
        seg = cls(directory, base_offset, config, clock, roll_jitter_ms=roll_jitter_ms,
                  fsync=fsync)
        for p in (seg.log_path, seg.index_path, seg.time_index_path, seg.txn_index_path):
            if p.exists():
                p.unlink()
        seg._fd = open_for_write(seg.log_path, os.O_RDWR | os.O_CREAT)
        if config.preallocate:
            os.ftruncate(seg._fd, config.segment_bytes)
        seg._offset_index.write(preallocate=True, fsync=False)
        seg._time_index.write(preallocate=True, fsync=False)
        return seg

    @classmethod
    def open_for_append(cls, directory, base_offset: int, config, clock, *,
                        roll_jitter_ms: int = 0, fsync: bool = True,
                        previous_last_offset: int | None = None) -> WritableLogSegment:
        """Reopen the last segment of a log: its indexes are rebuilt from the ``.log`` with
        :func:`rebuild_indexes` (the broker's recovery scan) and the append state
        (bytes since the last index entry, largest timestamp) restored from it, so later
        appends index exactly as one uninterrupted session would. (A restarted broker
        instead trusts the files after a clean shutdown and restarts its byte counter at
        0; kafkalog prefers the files recovery would produce.)

        Raises:
            CorruptRecordError: the ``.log`` holds invalid bytes (a torn or corrupt tail);
                nothing is changed - run recovery first.
            UnreadableError: the file cannot be read.
        """
        seg = cls(directory, base_offset, config, clock, roll_jitter_ms=roll_jitter_ms,
                  fsync=fsync)
        try:
            fd = open_for_write(seg.log_path, os.O_RDWR | os.O_CREAT)
        except UnsafePathError:
            raise
        except OSError as e:
            raise UnreadableError(e.strerror or str(e), file=seg.log_path) from e
        seg._fd = fd
        size = os.fstat(fd).st_size
        view = open_view(seg.log_path) if size else memoryview(b"")
        try:
            rebuilt = rebuild_indexes(view, base_offset, config.index_interval_bytes,
                                      previous_last_offset=previous_last_offset,
                                      file=seg.log_path)
            first_ts = None
            for batch in FileRecords(view, 0, None).batches():
                first_ts = batch.max_timestamp
                break
        finally:
            release_view(view)
        valid = rebuilt.valid_bytes
        if valid != size:
            if config.preallocate and not any(_nonzero_tail(seg.log_path, valid)):
                pass  # a preallocated, zero-filled tail
            else:
                os.close(fd)
                seg._fd = None
                err = rebuilt.error or CorruptRecordError(
                    f"{size - valid} bytes after the last whole batch (a torn write)")
                raise CorruptRecordError(
                    f"cannot append: the segment holds invalid bytes from position {valid} "
                    f"({err.message}); run recovery first", file=seg.log_path, position=valid)
        seg._size = valid
        if config.preallocate:
            os.ftruncate(fd, max(size, config.segment_bytes))
        seg.rolling_based_timestamp = first_ts
        seg.last_offset = rebuilt.last_offset
        oidx, tidx = seg._offset_index, seg._time_index
        for e in rebuilt.offset_entries:
            oidx._append_raw(e.offset - base_offset, e.position)
        time_entries = list(rebuilt.time_entries)
        if time_entries and (not rebuilt.offset_entries or
                             time_entries[-1].offset > rebuilt.offset_entries[-1].offset):
            time_entries.pop()  # the entry recovery appends at the end, re-added on close
        for e in time_entries:
            tidx._append_raw(e.timestamp, e.offset - base_offset)
        oidx._flushed = tidx._flushed = 0
        if rebuilt.batches:
            seg.max_timestamp_so_far = rebuilt.max_timestamp
            if rebuilt.max_timestamp != NO_TIMESTAMP:
                seg.offset_of_max_timestamp_so_far = rebuilt.offset_of_max_timestamp
        last_pos = rebuilt.offset_entries[-1].position if rebuilt.offset_entries else 0
        seg.bytes_since_last_index_entry = valid - last_pos
        oidx.write(preallocate=True, fsync=False)
        tidx.write(preallocate=True, fsync=False)
        from .txn_index import TransactionIndex

        seg.txn_index = TransactionIndex.load(seg.txn_index_path, base_offset)
        return seg

    # -- state ------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """Bytes of batches in the ``.log`` (LogSegment.size)."""
        return self._size

    @property
    def view(self) -> memoryview:
        """A fresh read-only view of the batches written so far."""
        if self._view is not None and len(self._view) != self._size:
            self._release_view()
        if self._view is None:
            v = open_view(self.log_path)
            self._view = v[:self._size] if len(v) > self._size else v
        return self._view

    @property
    def next_offset(self) -> int:
        return self.base_offset if self.last_offset is None else self.last_offset + 1

    def can_convert_to_relative_offset(self, offset: int) -> bool:
        return 0 <= offset - self.base_offset <= INT32_MAX

    # -- appending --------------------------------------------------------------------------

    def should_roll(self, max_segment_bytes: int, max_segment_ms: int, messages_size: int,
                    max_timestamp: int, max_offset: int, now: int) -> bool:
        """LogSegment.shouldRoll for an append of ``messages_size`` bytes whose max timestamp
        is ``max_timestamp`` (ms, -1 none) and last offset ``max_offset`` (absolute), at
        ``now`` (ms): the same decision as :func:`~.roll.should_roll` on
        :meth:`UnifiedLog.roll_params`, read from the segment's own state in place (the
        per-append path: no ``RollParams`` object, no reasons list; ``segment.bytes`` and
        ``segment.ms`` are the log's current config, as UnifiedLog.maybeRoll passes them)."""
        size = self._size
        if size > max_segment_bytes - messages_size:
            return True
        if size > 0:
            ts = self.rolling_based_timestamp
            waited = max_timestamp - ts if ts is not None and ts >= 0 else now - self.created_ms
            if waited > max_segment_ms - self.roll_jitter_ms:
                return True
        if (self._offset_index.entries >= self._roll_offset_index_max
                or self._time_index.entries >= self._roll_time_index_max):
            return True
        return not 0 <= max_offset - self.base_offset <= INT32_MAX

    def append(self, records, largest_offset: int, *, batches: list | None = None) -> None:
        """LogSegment.append (Kafka 4.x): write ``records`` (whole batches, offsets
        assigned) at the end of the ``.log`` and index each batch.

        Args:
            records: bytes of one or more batches.
            largest_offset: the last offset in ``records``.
            batches: optional ``[(size, last_offset, max_timestamp)]`` per batch when the
                caller knows them (skips re-reading the headers).

        Raises:
            OffsetOverflowError: ``largest_offset`` does not fit relative to the base offset
                (LogSegmentOffsetOverflowException); nothing is written.
            IllegalStateError: the segment is closed.
        """
        n = len(records)
        if n == 0:
            return
        if self._fd is None:
            raise IllegalStateError("append to a closed segment", file=self.log_path)
        if not self.can_convert_to_relative_offset(largest_offset):
            raise OffsetOverflowError(self.base_offset, largest_offset, file=self.log_path)
        if batches is None:
            batches = _batch_summaries(records)
        position = self._size
        if position == 0:
            self.rolling_based_timestamp = batches[0][2]
        _write_fully(self._fd, records, position)
        self._size = position + n
        self._unflushed_log = True
        interval = self.config.index_interval_bytes
        for size, last, max_ts in batches:
            if max_ts > self.max_timestamp_so_far:
                self.max_timestamp_so_far = max_ts
                self.offset_of_max_timestamp_so_far = last
            if self.bytes_since_last_index_entry > interval:
                self._offset_index.append(last, position)
                self._time_index.maybe_append(self.max_timestamp_so_far,
                                              self.offset_of_max_timestamp_so_far)
                self.bytes_since_last_index_entry = 0
            position += size
            self.bytes_since_last_index_entry += size
        self.last_offset = largest_offset

    def write_index_entries(self) -> None:
        """Write the index entries appended since the last write into the preallocated
        ``.index`` / ``.timeindex`` (no fsync, no resize): what the broker's memory-mapped
        indexes hold in the page cache after each append; the two files stay open until
        the segment becomes inactive, is closed or abandoned (an open and a close per
        append cost more than the write). :meth:`flush` and :meth:`close` still write,
        trim and fsync as before."""
        for idx in (self._offset_index, self._time_index):
            if idx._flushed >= idx.entries:
                continue
            size = idx.ENTRY.size
            start = idx._flushed * size
            fd = self._index_fds.get(idx)
            if fd is None:
                fd = self._index_fds[idx] = open_for_write(idx.path, os.O_WRONLY | os.O_CREAT)
            try:
                os.pwrite(fd, idx._buf[start:idx.entries * size], start)
            except BaseException:
                self._close_index_fds()
                raise
            idx._flushed = idx.entries

    def _close_index_fds(self) -> None:
        fds, self._index_fds = self._index_fds, {}
        for fd in fds.values():
            os.close(fd)

    def update_txn_index(self, completed, last_stable_offset: int) -> None:
        """LogSegment.updateTxnIndex: record an aborted transaction."""
        if completed.is_aborted:
            from ..schema.txn_index import AbortedTxn

            self.txn_index.append(AbortedTxn(completed.producer_id, completed.first_offset,
                                             completed.last_offset, last_stable_offset))

    # -- flushing and closing ---------------------------------------------------------------

    def flush(self) -> None:
        """LogSegment.flush: fsync the ``.log``, write and fsync the indexes (still
        preallocated while active) and the transaction index."""
        if self._fd is not None and self._unflushed_log:
            if self.fsync:
                os.fsync(self._fd)
            self._unflushed_log = False
        self._offset_index.write(preallocate=self._active, fsync=self.fsync)
        self._time_index.write(preallocate=self._active, fsync=self.fsync)
        self.txn_index.flush(fsync=self.fsync)

    def on_become_inactive(self) -> None:
        """LogSegment.onBecomeInactiveSegment: the final time-index entry, indexes and
        ``.log`` trimmed to their valid size, then flushed (the broker flushes rolled
        segments asynchronously; kafkalog does it at once)."""
        self._close_index_fds()
        self._time_index.maybe_append(self.max_timestamp_so_far,
                                      self.offset_of_max_timestamp_so_far, skip_full_check=True)
        self._active = False
        if self._fd is not None and self.config.preallocate:
            os.ftruncate(self._fd, self._size)
        self._unflushed_log = True
        self.flush()

    def close(self) -> None:
        """LogSegment.close: as :meth:`on_become_inactive`, then release the files."""
        if self._fd is not None:
            self.on_become_inactive()
            os.close(self._fd)
            self._fd = None
        self._close_index_fds()
        LogSegment.close(self)

    def abandon(self) -> None:
        """Release the file descriptors without writing anything more."""
        self._close_index_fds()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        LogSegment.close(self)

    def __repr__(self) -> str:
        return (f"WritableLogSegment({str(self.log_path)!r}, base_offset={self.base_offset}, "
                f"size={self._size})")


def _batch_summaries(records) -> list[tuple[int, int, int]]:
    """``[(size, last offset, max timestamp)]`` of whole batches in ``records``."""
    return [(b.size, b.last_offset, b.max_timestamp) for b in FileRecords(records).batches()]


def _write_fully(fd: int, data, position: int) -> None:
    mv = memoryview(data)
    while mv:
        n = os.pwrite(fd, mv, position)
        mv = mv[n:]
        position += n


def _nonzero_tail(path, start: int):
    with open_regular(path) as f:
        f.seek(start)
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                return
            yield nonzero_length(chunk) != 0
