"""The batches of a buffer, after Kafka's ``FileRecords`` / ``FileLogInputStream``: a whole
``.log`` or a slice, iterated as ``FileLogInputStream.nextBatch`` does (stops at a partial
batch at the end and records where), a batch read at a position, and the scan of a file's
batches without batch objects (``scan_batches``).

The read path's modules, the struct/memoryview twins of the construct schemas
(:mod:`kafkalog_cli.schema.record_batch`, ``record`` and ``legacy`` declare the format;
these read the same bytes 20-90x faster, measured in ``benchmarks/``, and tests assert both
give identical results on every batch of the fixtures and the real corpus):

* :mod:`.record` - :class:`Record`, a tuple ``(offset, timestamp, key, value, headers)``,
  and the record decode loop (``DefaultRecord``).
* :mod:`.record_batch` - :class:`RecordBatch`, a v2 batch, a tuple ``(view, position,
  *61-byte header)`` (``DefaultRecordBatch``).
* :mod:`.legacy` - :class:`LegacyRecordBatch`, a v0/v1 log entry with the same interface
  (``AbstractLegacyRecordBatch``).
* this module - :class:`FileRecords`, :func:`batch_at`, :func:`scan_batches`.
* :mod:`.compiled` - whether their compiled twins are in use.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..constants import INT64_MAX, MAGIC_V2
from ..errors import CorruptRecordError, InvalidArgumentError, RecordOverheadError
from ..schema.legacy import HEADER_SIZE_UP_TO_MAGIC
from ..schema.legacy import RECORD_OVERHEAD_V0 as LEGACY_RECORD_OVERHEAD_V0
from ..schema.record_batch import (
    ATTRIBUTES_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MIN_BATCH_LENGTH,
    RECORD_BATCH_OVERHEAD,
)
from .compiled import _c
from .legacy import LegacyRecordBatch, _legacy_entry
from .record import _OFFSETS_UNCHECKED_MAX, _tuple_new
from .record_batch import _OFFSET_SIZE, HEADER, RecordBatch, _load_crc32c

# -- batches of a buffer ---------------------------------------------------------------------

def offset_overflow(base_offset: int, last_offset_delta: int, file, position: int
                    ) -> CorruptRecordError:
    """The error for a batch whose next offset (``baseOffset + lastOffsetDelta + 1``) does
    not fit int64: the base offset is outside the CRC, so one edited field makes every
    offset of the batch (and the log end offset) meaningless. Kafka's Java longs would
    wrap; the batch is corrupt."""
    what = (f"baseOffset {base_offset} + lastOffsetDelta {last_offset_delta}"
            if last_offset_delta else f"offset {base_offset}")
    return CorruptRecordError(f"Record batch is corrupt: its offsets overflow int64 ({what} "
                              f"leaves no next offset below 2^63)",
                              file=None if file is None else str(file), position=position)


class FileRecords:
    """Batches of a buffer, iterated as ``FileLogInputStream.nextBatch`` does.

    ``view`` is a bytes-like object (bytes, mmap, memoryview) holding a ``.log`` or a part
    of it; ``start``/``end`` bound the iteration (byte positions in ``view``).

    After :meth:`batches` is exhausted, :attr:`valid_end` is the position after the last
    whole batch, and :attr:`stop_error` says why iteration stopped before ``end`` (None:
    a partial batch or the end was reached). Iteration never raises on bad bytes: a size
    below the minimum overhead (Kafka's ``CorruptRecordException``), or a batch whose
    offsets overflow int64 (:func:`offset_overflow`; kafkalog's check, as no offset can
    pass 2^63 - 1), ends it with ``stop_error`` set, so callers report the rest as
    invalid bytes.
    """

    __slots__ = ("view", "start", "end", "file", "valid_end", "stop_error")

    def __init__(self, view, start: int = 0, end: int | None = None, file=None):
        if start < 0:  # struct would read from the buffer's end (or raise struct.error)
            raise InvalidArgumentError(f"Invalid start position {start}: must be >= 0",
                                       file=file)
        self.view = view if isinstance(view, memoryview) else memoryview(view)
        self.start = start
        self.end = len(self.view) if end is None else min(end, len(self.view))
        self.file = file
        self.valid_end = start
        self.stop_error: CorruptRecordError | None = None

    @property
    def invalid_bytes(self) -> int:
        """Bytes after the last whole batch (valid once iteration has finished)."""
        return self.end - self.valid_end

    def batches(self) -> Iterator[RecordBatch | LegacyRecordBatch]:
        """Each whole batch from ``start`` to ``end``, shallowly (no CRC check): an
        iterator with ``close()``, whose end (exhausted, closed or dropped) sets
        :attr:`valid_end`, as a generator's ``finally`` would (the compiled core's
        iterator, or :meth:`_batches`)."""
        if _c is not None:
            return _c.BatchIterator(self, self.view, self.start, self.end)
        return self._batches()

    def _step(self, pos: int):
        """For the compiled iterator: the batch at ``pos`` that its v2 fast path did not
        take, read as :meth:`_batches` reads it, as ``(batch, next position)``; None
        where iteration ends (:attr:`stop_error` set for a bad size or offset, or a
        legacy entry that does not parse)."""
        view, end = self.view, self.end
        try:
            offset, size = _OFFSET_SIZE.unpack_from(view, pos)
            if size < LEGACY_RECORD_OVERHEAD_V0:
                self.stop_error = RecordOverheadError(
                    f"Found record size {size} smaller than minimum record overhead "
                    f"({LEGACY_RECORD_OVERHEAD_V0})", file=self.file, position=pos)
                return None
            nxt = pos + LOG_OVERHEAD + size
            if nxt > end:
                return None
            magic = view[pos + MAGIC_OFFSET]
            if magic > 127:  # a signed byte, as FileLogInputStream reads it
                magic -= 256
            if magic >= MAGIC_V2:
                if size < MIN_BATCH_LENGTH:
                    self.stop_error = CorruptRecordError(
                        f"Record batch is corrupt (the size {size + LOG_OVERHEAD} is "
                        f"smaller than the minimum allowed overhead {RECORD_BATCH_OVERHEAD})",
                        file=self.file, position=pos)
                    return None
                h = HEADER.unpack_from(view, pos)
                if h[0] + h[6] >= INT64_MAX:
                    self.stop_error = offset_overflow(h[0], h[6], self.file, pos)
                    return None
                return _tuple_new(RecordBatch, (view, pos) + h), nxt
            if offset >= INT64_MAX:
                self.stop_error = offset_overflow(offset, 0, self.file, pos)
                return None
            return _legacy_entry(view, pos, offset, size), nxt
        except CorruptRecordError as e:
            e.file = e.file or (None if self.file is None else str(self.file))
            e.position = pos if e.position is None else e.position
            self.stop_error = e
            return None

    def _batches(self) -> Iterator[RecordBatch | LegacyRecordBatch]:
        """:meth:`batches` in Python (the reference; :meth:`_step` is its slow path)."""
        view = self.view
        pos = self.start
        end = self.end
        limit = end - HEADER_SIZE_UP_TO_MAGIC
        v2_limit = end - RECORD_BATCH_OVERHEAD
        unpack = HEADER.unpack_from
        tnew = _tuple_new
        # a base offset at or below this cannot overflow with an int32 lastOffsetDelta;
        # above it, the slow path checks the sum (one compare with a local per batch)
        safe_base = _OFFSETS_UNCHECKED_MAX
        # the layout as fast locals (the loop runs once per batch)
        log_overhead, magic_v2, min_length = LOG_OVERHEAD, MAGIC_V2, MIN_BATCH_LENGTH
        try:
            while pos < limit:
                if pos <= v2_limit:
                    # Fast path: unpack the 61-byte v2 header at once; a legacy entry or a
                    # bad size falls through to the checks below, which reread the prefix.
                    h = unpack(view, pos)
                    nxt = pos + log_overhead + h[1]
                    # MAGIC_V2, 61 - 12, whole, and a base offset that cannot overflow
                    if h[3] >= magic_v2 and h[1] >= min_length and nxt <= end and \
                            h[0] <= safe_base:
                        yield tnew(RecordBatch, (view, pos) + h)
                        pos = nxt
                        continue
                # anything else, one step the slow way (None: iteration ends here)
                step = self._step(pos)
                if step is None:
                    break
                batch, nxt = step
                yield batch
                pos = nxt
        finally:
            self.valid_end = pos

    def __iter__(self):
        return self.batches()


def batch_at(view, position: int) -> RecordBatch | LegacyRecordBatch | None:
    """The whole batch starting at ``position`` of ``view``, or None when the bytes there
    are not a whole batch (used to check an index entry's position)."""
    fr = FileRecords(view, position)
    for batch in fr.batches():
        return batch
    return None


def v2_batch_at(view, position: int) -> RecordBatch:
    """The v2 batch whose 61-byte header starts at ``position`` of ``view``, read without
    any check: for positions a scan has already found to be whole v2 batches (the
    producer batches of a recovery scan)."""
    return _tuple_new(RecordBatch, (view, position) + HEADER.unpack_from(view, position))


# -- scanning without batch objects ------------------------------------------------------------

class BatchScan:
    """What :func:`scan_batches` found in ``view[start:end]``.

    Attributes:
        batches: whole batches (v2 batches and legacy entries).
        records: sum of ``recordsCount`` over the v2 batches (legacy entries are counted in
            ``legacy`` only: counting a compressed wrapper's messages needs decompression).
        legacy: whole v0/v1 entries among ``batches``.
        invalid: positions of the batches whose CRC does not match (CRC-32C for v2, CRC-32
            for legacy), in file order.
        first_offset / last_offset: base offset of the first batch and last offset of the
            last one (None without batches); as :attr:`RecordBatch.base_offset` and
            ``last_offset``.
        valid_end, stop_error: as :class:`FileRecords` after iteration.
    """

    __slots__ = ("start", "end", "batches", "records", "legacy", "invalid", "first_offset",
                 "last_offset", "valid_end", "stop_error")

    def __init__(self, start, end, batches, records, legacy, invalid, first_offset,
                 last_offset, valid_end, stop_error):
        self.start = start
        self.end = end
        self.batches = batches
        self.records = records
        self.legacy = legacy
        self.invalid = invalid
        self.first_offset = first_offset
        self.last_offset = last_offset
        self.valid_end = valid_end
        self.stop_error = stop_error

    @property
    def invalid_bytes(self) -> int:
        """Bytes after the last whole batch."""
        return self.end - self.valid_end

    def __repr__(self) -> str:
        return (f"BatchScan(batches={self.batches}, records={self.records}, "
                f"legacy={self.legacy}, invalid={len(self.invalid)}, "
                f"offsets={self.first_offset}..{self.last_offset}, valid_end={self.valid_end}, "
                f"invalid_bytes={self.invalid_bytes}, stop_error={self.stop_error!r})")


def scan_batches(view, start: int = 0, end: int | None = None, file=None) -> BatchScan:
    """Walk the batches of ``view[start:end]`` and check every CRC, without creating a
    batch object per batch: the fast path for consumers that need only the headers'
    aggregates and CRC validity (verify, summaries). Iterates exactly as
    :meth:`FileRecords.batches` does (same ``valid_end`` and ``stop_error``).

    v2 batches take a tight loop (one header unpack and one CRC-32C each); legacy entries
    and anything unusual (a partial or undersized batch at the end) go through
    :class:`FileRecords` one step at a time.
    """
    mv = view if isinstance(view, memoryview) else memoryview(view)
    end = len(mv) if end is None else min(end, len(mv))
    crc = _load_crc32c()
    safe_base = _OFFSETS_UNCHECKED_MAX  # above it, FileRecords checks the offsets
    unpack = HEADER.unpack_from
    v2_limit = end - RECORD_BATCH_OVERHEAD
    # the layout as fast locals (the loop runs once per batch)
    log_overhead, magic_v2, min_length, crc_from = (LOG_OVERHEAD, MAGIC_V2, MIN_BATCH_LENGTH,
                                                    ATTRIBUTES_OFFSET)
    pos = start
    nb = nrec = legacy = 0
    invalid: list[int] = []
    last_pos = -1
    stop_error = None
    while True:
        if _c is not None:  # the same loop, compiled
            pos, k, r, lp = _c.scan_v2(mv, pos, end, invalid)
            if k:
                nb += k
                nrec += r
                last_pos = lp
        while pos <= v2_limit:
            h = unpack(mv, pos)
            nxt = pos + log_overhead + h[1]
            # not MAGIC_V2, undersized, partial, or offsets that may pass int64
            if h[3] < magic_v2 or h[1] < min_length or nxt > end or h[0] > safe_base:
                break
            if crc(mv[pos + crc_from:nxt]) != h[4]:
                invalid.append(pos)
            nrec += h[12]
            last_pos = pos
            pos = nxt
            nb += 1
        if pos >= end - HEADER_SIZE_UP_TO_MAGIC:
            break
        fr = FileRecords(mv, pos, end, file)
        it = fr.batches()
        batch = next(it, None)
        it.close()
        if batch is None:
            stop_error = fr.stop_error
            break
        nb += 1
        if not batch.is_valid:
            invalid.append(pos)
        if batch.__class__ is RecordBatch:
            nrec += batch[14]
        else:
            legacy += 1
        last_pos = pos
        pos = batch.next_position
    first_offset = last_offset = None
    if nb:
        first_offset = batch_at(mv, start).base_offset
        last_offset = batch_at(mv, last_pos).last_offset
    return BatchScan(start, end, nb, nrec, legacy, invalid, first_offset, last_offset, pos,
                     stop_error)
