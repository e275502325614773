"""``recover --salvage`` (kafkalog's extension: the broker truncates at the first invalid
batch): the plan of a salvaged segment (:func:`salvage_segment`), where salvage must stop
(:func:`unsafe_regions`), and the offsets that dropped bytes hold (:func:`offsets_in`,
the dry run's lost offsets, salvage or not).

Where ``--salvage`` must stop: a transaction open at a corrupt region.

A transaction ends with a control batch (the COMMIT or ABORT marker the coordinator
writes, ``WriteTxnMarkers``); ``ProducerStateManager`` keeps the producer's transaction
ongoing until it reads one, and ``LogSegment.updateTxnIndex`` records an aborted
transaction from its ABORT marker. When a corrupt region may have held a marker, keeping
the batches after it changes what a ``read_committed`` consumer sees: a lost ABORT
marker followed by the producer's next transaction makes the aborted records part of
that transaction, committed with it (and a lost COMMIT the reverse).

The rule (kafkalog's, the broker has no salvage): a region is *unsafe* when some
producer has a transaction ongoing where the region starts and the producer's next batch
after the region is a data batch, not a marker: its marker was in the region, or the
transaction went on through it, and the batches cannot say which. Salvage stops at an
unsafe region and truncates there, as the broker's recovery does. A producer whose next
batch after the region is a marker has its transaction ended by it (the region held
data of that transaction, or other producers' batches); one with no later batch leaves
its transaction open as the broker's truncation would.
"""

from __future__ import annotations

import struct
from pathlib import Path

from ..constants import INT64_MAX, MAGIC_V2
from ..errors import KafkalogError
from ..format.salvage import SalvagedRecords
from ..schema.record_batch import (
    LAST_OFFSET_DELTA_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MIN_BATCH_LENGTH,
    RECORD_BATCH_OVERHEAD,
)
from ..storage.recovery_scan import scan_log, walk_log
from ..storage.segment import open_view, release_view

_BASE_SIZE = struct.Struct(">qi")
_DELTA = struct.Struct(">i")


def unsafe_regions(segments: list[tuple[int, Path]]) -> dict[int, int]:
    """The unsafe regions of a partition (module docstring), read past damage as
    ``--salvage`` reads it (:class:`~kafkalog_cli.format.salvage.SalvagedRecords`).

    Args:
        segments: ``(base offset, .log path)`` of every segment, in offset order.

    Returns:
        segment base offset -> byte position of the first unsafe region in that
        segment's ``.log`` (the region's start; a segment with none is absent).
    """
    ongoing: set[int] = set()  # producer ids with a transaction ongoing
    pending: list[tuple[int, int, set[int]]] = []  # (base, position, producers open there)
    unsafe: dict[int, int] = {}
    last: int | None = None
    for base, path in segments:
        view = open_view(path)
        try:
            sr = SalvagedRecords(view, 0, base_offset=base, after_offset=last, file=path)
            seen = 0
            for b in sr.batches():
                for region in sr.skipped[seen:]:
                    if ongoing:
                        pending.append((base, region.position, set(ongoing)))
                seen = len(sr.skipped)
                last = b.last_offset
                if getattr(b, "magic", 0) < 2 or not b.is_transactional:
                    continue
                pid = b.producer_id
                for rbase, rpos, open_ in pending:
                    if pid in open_:
                        open_.discard(pid)
                        if not b.is_control and rpos < unsafe.get(rbase, rpos + 1):
                            unsafe[rbase] = rpos
                if b.is_control:
                    ongoing.discard(pid)
                else:
                    ongoing.add(pid)
            if sr.valid_end < sr.end and ongoing:  # a bad tail: salvage drops it too
                pending.append((base, sr.valid_end, set(ongoing)))
        finally:
            release_view(view)
        pending = [p for p in pending if p[2]]
    return unsafe


def salvage_segment(s, prev_last: int | None, index_interval_bytes: int, *,
                     stop_at: int | None = None) -> None:
    """``--salvage`` of a segment whose scan stopped at invalid bytes: read on past each
    corrupt region to the next batch with a valid CRC and plausible offsets
    (:class:`~kafkalog_cli.format.salvage.SalvagedRecords`, the resynchronisation of
    ``--skip-corrupt``) and keep every such batch, byte for byte, at its offsets: the
    segment's new ``.log`` is the kept batches one after the other (``s.data``; the
    offsets dropped leave a gap, as compaction leaves one), scanned again under the
    broker's rules for its indexes and derived state (``s.scan``). The report lists each
    region dropped (``dropped_regions``) and each batch kept (``kept_batches``), positions
    in the original file. A segment whose damage is only at its end is left to the
    plain truncation (nothing after it to keep). ``stop_at``: the byte position of an
    unsafe region (:func:`unsafe_regions`: a transaction open there):
    nothing from it on is kept, and when it is the segment's first region the segment is
    left to the plain truncation too."""
    view = open_view(s.view_path)
    try:
        sr = SalvagedRecords(view, 0, base_offset=s.base, after_offset=prev_last,
                             file=s.view_path)
        kept = []
        for b in sr.batches():
            kept.append((b.position, b.next_position - b.position, first_offset(b),
                         b.last_offset))
        if stop_at is not None:
            kept = [k for k in kept if k[0] < stop_at]
            skipped = [k for k in sr.skipped if k.position < stop_at]
            if not skipped:
                s.report.notes.append(TXN_STOP)
                return
        else:
            skipped = sr.skipped
        if not skipped:
            return
        data = b"".join(bytes(view[p:p + n]) for p, n, _, _ in kept)
        if stop_at is not None:
            tail = (stop_at, len(view) - stop_at, TXN_STOP)
        else:
            tail = (sr.valid_end, len(view) - sr.valid_end, sr.stop_error.message
                    if sr.stop_error is not None else "partial batch at the end") \
                if sr.valid_end < len(view) else None
    finally:
        release_view(view)
    scan = scan_log(data, s.base, index_interval_bytes, previous_last_offset=prev_last)
    if scan.invalid_bytes:  # kafkalog's stricter rules refuse a batch salvage read
        at = scan.valid_bytes
        end = 0
        for i, (_, n, _, _) in enumerate(kept):
            if end >= at:
                kept = kept[:i]
                break
            end += n
        data = data[:at]
        scan = scan_log(data, s.base, index_interval_bytes, previous_last_offset=prev_last)
    regions = [(k.position, k.size, k.reason) for k in skipped]
    if tail is not None:
        regions.append(tail)
    r = s.report
    r.dropped_regions = []
    for pos, size, reason in regions:
        before = [k for k in kept if k[0] < pos]
        after = [k for k in kept if k[0] > pos]
        lo = before[-1][3] + 1 if before else (prev_last + 1 if prev_last is not None
                                               else s.base)
        hi = after[0][2] - 1 if after else None
        if hi is None:
            found = offsets_in(s.view_path, pos, s.base, after=lo - 1)
            hi = found[1] if found else lo - 1
        r.dropped_regions.append((pos, size, reason, (lo, hi) if lo <= hi else None))
    r.kept_batches = kept
    r.valid_bytes = len(data)
    r.invalid_bytes = r.size - len(data)
    r.batches = scan.batches
    r.last_valid_offset = scan.last_offset
    s.data = data
    s.scan = scan


TXN_STOP = ("a transaction is open at this corrupt region and its producer writes data "
             "after it: its marker may be in the dropped bytes, so --salvage keeps nothing "
             "from here on (the broker's truncation)")


def offsets_in(path: Path, start: int, base: int, *, after: int | None = None,
                upto: int | None = None) -> tuple[int, int] | None:
    """``(first, last)`` offsets of the batches whose headers can be read from byte
    ``start`` of the ``.log`` at ``path`` (a shallow header walk, no CRC: what recovery
    would drop there; a last batch running past the end counts when its 61-byte v2 header
    is whole; where the walk stops at bytes that are not a batch, the whole batches with
    a valid CRC after them count too, found as ``--salvage`` finds them), kept above
    ``after`` and at or below ``upto``; None when no header there names an offset."""
    view = open_view(path)
    try:
        w = walk_log(view, start, base)
        first, last = w.first_offset, w.last_offset
        pos = w.valid_bytes
        if pos + RECORD_BATCH_OVERHEAD <= len(view) and view[pos + MAGIC_OFFSET] == MAGIC_V2:
            b_off, size = _BASE_SIZE.unpack_from(view, pos)
            delta = _DELTA.unpack_from(view, pos + LAST_OFFSET_DELTA_OFFSET)[0]
            if pos + LOG_OVERHEAD + size > len(view) and size >= MIN_BATCH_LENGTH and \
                    0 <= delta and b_off >= base and b_off + delta < INT64_MAX and \
                    (last is None or b_off > last):
                first = b_off if first is None else first
                last = b_off + delta
        nxt = _next_v2_start(path, view, pos + 1) if pos + 1 < len(view) else None
        if nxt is not None:  # e.g. a size field grown past the end: batches follow
            for b in SalvagedRecords(view, nxt, base_offset=base, after_offset=last).batches():
                if first is None:
                    first = first_offset(b)
                last = b.last_offset
    finally:
        release_view(view)
    if first is None:
        return None
    if after is not None:
        first = max(first, after + 1)
    if upto is not None:
        last = min(last, upto)
    return (first, last) if first <= last else None


#: bytes read at a time looking for the next batch header past damage
_SEEK_CHUNK = 8 << 20


def _next_v2_start(path, view, start: int) -> int | None:
    """The first position at or after ``start`` where a v2 batch could start (its magic
    byte 2 at +16), or None. Local files are searched with reads, not through the memory
    map: a zero-filled tail (a preallocated segment after a crash) of 1 GiB is read
    through the page cache instead of becoming this process's resident memory."""
    first = start + MAGIC_OFFSET
    if first >= len(view):
        return None
    if not isinstance(path, Path):  # an object-storage path: the map is of a local copy
        return start
    with open(path, "rb", buffering=0) as f:
        at = first
        while at < len(view):
            f.seek(at)
            chunk = f.read(min(_SEEK_CHUNK, len(view) - at))
            if not chunk:
                return None
            i = chunk.find(bytes([MAGIC_V2]))
            if i >= 0:
                return at + i - MAGIC_OFFSET
            at += len(chunk)
    return None


def first_offset(batch) -> int:
    try:
        return batch.base_offset
    except KafkalogError:  # a legacy wrapper whose inner offsets do not read
        return batch.last_offset
