"""The recovery scan of one ``.log``: ``LogSegment.recover``'s loop, plus kafkalog's checks.

The one implementation of the broker's recovery rules in kafkalog. ``kafkalog recover``
calls :func:`scan_log` directly (it is that command's hot loop);
:func:`~kafkalog_cli.storage.segment.rebuild_indexes` (the engine, the fixtures, the Spark
writer, serve) wraps it. It is written for speed: one ``struct.unpack_from`` of the batch
header and one CRC call per batch, no objects per batch, index entries kept as packed
bytes; with the compiled core (``format/_speedups.c``, ``recovery_scan``) runs of batches
that pass every check are taken in C with the same bookkeeping, the crc32c package's C
function called directly, and the Python loop checks the batch where such a run stops
(``KAFKALOG_PURE_PYTHON=1``: the Python loop alone, the reference).

What makes a batch invalid (the scan stops there and the rest of the file is cut):

* the broker's rules (``FileLogInputStream.nextBatch``, ``ensureValid``,
  ``LogSegment.ensureOffsetInRange``): a size field below 14 (a zero-filled tail has
  size 0), fewer than 17 bytes left or a batch running past the end of the file (a
  partial batch: the broker's iterator ends there and ``recover`` truncates it), a v2
  batch shorter than 61 bytes, a CRC mismatch (CRC-32C for v2 over attributes..end,
  CRC-32 for v0/v1 over magic..end), a last offset that does not fit int32 relative to
  the segment's base offset (the broker splits such a legacy segment; kafkalog cuts
  it, into quarantine, and says so); a last offset whose next offset does not fit
  int64 (the base offset is outside the CRC: kafkalog's check, where Java's longs
  would wrap);
* with ``strict`` (the default), kafkalog's stricter checks, all of which a
  broker-written log satisfies: magic in 0..2, ``lastOffset >= baseOffset`` (v2:
  ``lastOffsetDelta >= 0``) and a base offset at or above the segment's base offset and
  above the previous batch's last offset, across segments too. (The broker re-creates a
  follower's segment at the batch's base offset rather than append a batch that starts
  below it, ``Partition.appendRecordsToFollowerOrFutureReplica``.) Without ``strict``, a
  magic above 2 is read as v2 and a negative one as v0/v1, as the broker's iterator
  does (the magic is a signed byte).
"""

from __future__ import annotations

import mmap
import struct
import zlib
from dataclasses import dataclass, field

from ..constants import INT32_MAX, INT64_MAX, NO_TIMESTAMP
from ..format.compiled import _c
from ..format.records import offset_overflow
from ..schema.legacy import CRC_OFFSET as LEGACY_CRC_OFFSET
from ..schema.legacy import HEADER_SIZE_UP_TO_MAGIC, RECORD_OVERHEAD_V0
from ..schema.legacy import MAGIC_OFFSET as LEGACY_MAGIC_OFFSET
from ..schema.legacy import TIMESTAMP_OFFSET as LEGACY_TIMESTAMP_OFFSET
from ..schema.record_batch import (
    ATTRIBUTES_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MIN_BATCH_LENGTH,
    RECORD_BATCH_OVERHEAD,
    header_format,
)
from .offset_index import OffsetIndex
from .time_index import TimeIndex

_OFFSET_SIZE = struct.Struct(header_format("base_offset", "length"))
#: baseOffset, length, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
#: baseTimestamp, maxTimestamp, producerId
_V2 = struct.Struct(header_format("base_offset", "length", "partition_leader_epoch", "magic",
                                  "crc", "attributes", "last_offset_delta", "base_timestamp",
                                  "max_timestamp", "producer_id"))
#: the fields the scan needs: baseOffset, length, partitionLeaderEpoch, magic, crc,
#: lastOffsetDelta, maxTimestamp, producerId (attributes and baseTimestamp skipped)
_V2_FAST = struct.Struct(header_format("base_offset", "length", "partition_leader_epoch",
                                       "magic", "crc", "last_offset_delta", "max_timestamp",
                                       "producer_id"))
#: v0/v1 after offset+size: crc, magic, attributes, [timestamp]
_LEGACY_CRC = struct.Struct(">I")
_LEGACY_TS = struct.Struct(">q")
_OFF_ENTRY = OffsetIndex.ENTRY
_TIME_ENTRY = TimeIndex.ENTRY

#: FileLogInputStream stops when fewer than this many bytes are left (HEADER_SIZE_UP_TO_MAGIC).
_MIN_LEFT = HEADER_SIZE_UP_TO_MAGIC
_MIN_SIZE = RECORD_OVERHEAD_V0  # LegacyRecord.RECORD_OVERHEAD_V0
_MIN_V2_SIZE = MIN_BATCH_LENGTH  # DefaultRecordBatch.RECORD_BATCH_OVERHEAD - LOG_OVERHEAD
#: batches whose size field is below this are CRC-checked over a bytes copy of their
#: range, larger ones over a memoryview slice (no copy): a small copy costs less than a
#: view (measured on whole scans: 5% less CPU for 79-byte batches, 6% for 201-byte
#: ones; the view wins from ~500 bytes: 3% at 501, 6% at 971, 20% at 1971)
_COPY_BELOW = 384
#: the compiled core's run of the loop's fast path (``format/_speedups.c``,
#: ``recovery_scan``: the same checks and bookkeeping with no Python object a batch, the
#: crc32c package's C function called directly), or None: the Python loop alone
_c_scan = getattr(_c, "recovery_scan", None)


@dataclass
class ScanResult:
    """What the recovery scan of one ``.log`` found.

    Attributes:
        size: bytes in the file.
        valid_bytes: bytes of the longest valid prefix.
        batches: valid batches.
        offset_index: the rebuilt ``.index`` bytes (recovery layout).
        time_index: the rebuilt ``.timeindex`` bytes, final entry included.
        max_timestamp / offset_of_max_timestamp: of the valid prefix (-1 / -1 if none).
        first_offset: base offset of the first valid batch (None when none).
        last_offset: last offset of the last valid batch (None when none).
        error: why the scan stopped early, ending with `` at byte <valid_bytes>`` (""
            when the end or a partial tail was reached).
        reason: ``error`` without its position.
        crc: ``(stored, computed)`` when the scan stopped at a CRC mismatch, else None.
        partial: the scan stopped at a batch running past the end of the file.
        epochs: ``(epoch, baseOffset)`` for each v2 batch whose epoch is >= 0 and above
            every epoch before it in this scan (the broker's ``cache.assign`` condition,
            applied later against the cache).
        producer_batches: positions of valid v2 batches carrying a producer id (for
            the producer-state and transaction-index rebuild).
    """

    size: int = 0
    valid_bytes: int = 0
    batches: int = 0
    offset_index: bytes = b""
    time_index: bytes = b""
    max_timestamp: int = NO_TIMESTAMP
    offset_of_max_timestamp: int = -1
    first_offset: int | None = None
    last_offset: int | None = None
    error: str = ""
    reason: str = ""
    crc: tuple[int, int] | None = None
    partial: bool = False
    epochs: list[tuple[int, int]] = field(default_factory=list)
    producer_batches: list[int] = field(default_factory=list)

    @property
    def invalid_bytes(self) -> int:
        return self.size - self.valid_bytes


def _copyable(view):
    """``view``'s exporter when slicing it gives a bytes-like copy of the same bytes
    (``view`` covers all of a bytes, bytearray or mmap object), else ``view`` itself."""
    obj = view.obj
    if (obj.__class__ in (bytes, bytearray, mmap.mmap) and view.c_contiguous
            and view.itemsize == 1 and view.nbytes == len(obj)):
        return obj
    return view


def scan_log(view, base_offset: int, index_interval_bytes: int = 4096, *,
             strict: bool = True, previous_last_offset: int | None = None,
             latest_epoch: int = -1) -> ScanResult:
    """Scan ``view`` (a whole ``.log``) as ``LogSegment.recover`` does; see the module doc.

    For each whole batch: check it; track the largest batch max timestamp and the last
    offset of the first batch holding it; append an offset-index entry
    ``(lastOffset, position)`` and a time-index entry (the largest timestamp so far, if
    it grew) when more than ``index_interval_bytes`` were scanned since the last entry;
    stop at the first invalid batch. Finally append the time-index entry for the largest
    timestamp.

    ``previous_last_offset`` is the last offset of the segment before (for the
    monotonic-offset check across segments; ignored without ``strict``);
    ``latest_epoch`` the largest leader epoch seen so far (epochs at or below it are not
    reported in ``epochs``).

    Never raises for bad bytes.
    """
    mv = view if isinstance(view, memoryview) else memoryview(view)
    src = _copyable(mv)
    end = len(mv)
    out = ScanResult(size=end)
    limit = end - _MIN_LEFT
    fast_end = end - RECORD_BATCH_OVERHEAD
    # header offsets as fast locals (the loop below runs once per batch)
    log_overhead = LOG_OVERHEAD
    crc_from = ATTRIBUTES_OFFSET
    pos = 0
    # the next offset-index entry is due at the first batch starting after next_entry
    next_entry = index_interval_bytes
    max_ts = NO_TIMESTAMP
    off_of_max = -1
    last_time = NO_TIMESTAMP
    # offsets must be above the previous batch's last offset and at or above the base
    # (without strict, the fast loop's test is only a shortcut: what fails it is
    # checked again below under the broker's rules)
    prev = base_offset - 1 if previous_last_offset is None or not strict else \
        max(previous_last_offset, base_offset - 1)
    epoch_hi = latest_epoch
    oidx = bytearray()
    tidx = bytearray()
    epochs = out.epochs
    producers = out.producer_batches
    os_unpack = _OFFSET_SIZE.unpack_from
    fast_unpack = _V2_FAST.unpack_from
    from ..crc import load  # on first use, without the crc32c package's import

    crc32c = load()  # the package's C function itself: no Python frame a batch
    crc32 = zlib.crc32
    off_pack = _OFF_ENTRY.pack
    time_pack = _TIME_ENTRY.pack
    # the largest last offset: relative to the base in int32, and a next offset in int64
    max_rel = min(base_offset + INT32_MAX, INT64_MAX - 1)
    error = ""
    fast_run = _c_scan if _c_scan is not None and mv.c_contiguous else None
    # every exit from the loop is a break: the batch counted last (n) is not valid
    n = 0
    while True:
        n += 1
        if fast_run is not None and pos <= fast_end:
            # the compiled fast path takes every batch the one below would; it stops
            # where the Python loop goes on (that batch is looked at again here)
            (pos, prev, epoch_hi, max_ts, off_of_max, last_time, next_entry,
             taken) = fast_run(mv, pos, prev, max_rel, epoch_hi, max_ts, off_of_max,
                               last_time, next_entry, index_interval_bytes, base_offset,
                               oidx, tidx, epochs, producers)
            n += taken
        # the fast path: a v2 batch whose whole header is in the file and that passes
        # every check; anything else (legacy entries, the tail, every kind of invalid
        # batch) is left to the slow path, which checks it again under the broker's
        # rules
        if pos <= fast_end:
            offset, size, epoch, magic, crc, delta, bmax, pid = fast_unpack(mv, pos)
            nxt = pos + log_overhead + size
            last = offset + delta
        if not (pos <= fast_end and magic == 2 and size >= _MIN_V2_SIZE and nxt <= end
                and prev < offset <= last <= max_rel
                and crc32c(src[pos + crc_from:nxt] if size < _COPY_BELOW else
                           mv[pos + crc_from:nxt]) == crc):
            # the slow path: one batch, every check spelled out
            if pos >= limit:
                if pos < end:
                    out.partial = True
                break
            offset, size = os_unpack(mv, pos)
            if size < _MIN_SIZE:
                error = (f"Found record size {size} smaller than minimum record overhead "
                         f"({_MIN_SIZE})")
                break
            nxt = pos + LOG_OVERHEAD + size
            if nxt > end:
                out.partial = True
                break
            magic = mv[pos + MAGIC_OFFSET]
            if magic > 127:  # a signed byte, as FileLogInputStream reads it
                magic -= 256
            if magic == 2 or magic > 2 and not strict:
                if size < _MIN_V2_SIZE:
                    error = (f"Record batch is corrupt (the size {size + LOG_OVERHEAD} is "
                             f"smaller than the minimum allowed overhead "
                             f"{RECORD_BATCH_OVERHEAD})")
                    break
                offset, size, epoch, _, crc, delta, bmax, pid = fast_unpack(mv, pos)
                computed = crc32c(mv[pos + ATTRIBUTES_OFFSET:nxt])
            elif 0 <= magic < 2 or magic < 0 and not strict:
                # (LegacyRecord reads every magic but 0 with the v1 layout; ensureValid
                # checks only the v0 overhead and the CRC: a v1 message too short for its
                # key and value size fields is kept, as LogSegment.recover keeps it)
                (crc,) = _LEGACY_CRC.unpack_from(mv, pos + LEGACY_CRC_OFFSET)
                computed = crc32(mv[pos + LEGACY_MAGIC_OFFSET:nxt])
                delta = 0
                bmax = (_LEGACY_TS.unpack_from(mv, pos + LEGACY_TIMESTAMP_OFFSET)[0]
                        if magic != 0 else NO_TIMESTAMP)
                epoch = pid = -1
            else:
                error = f"unknown magic {magic}"
                break
            if computed != crc:
                error = f"Record is corrupt (stored crc = {crc}, computed crc = {computed})"
                out.crc = (crc, computed)
                break
            if delta < 0 and strict:
                error = f"last offset delta {delta} is negative"
                break
            last = offset + delta
            if last >= INT64_MAX:
                error = offset_overflow(offset, last - offset, None, pos).message
                break
            if strict:
                if offset <= prev:
                    error = (f"offsets go backwards: batch base offset {offset} follows "
                             f"offset {prev}" if offset >= base_offset else
                             f"offset {offset} cannot be stored relative to base offset "
                             f"{base_offset}")
                    break
                if last > max_rel:
                    error = (f"offset {last} cannot be stored relative to base offset "
                             f"{base_offset}")
                    break
            elif not base_offset <= last <= max_rel:
                error = (f"offset {last} cannot be stored relative to base offset "
                         f"{base_offset}")
                break
        if epoch > epoch_hi:
            epochs.append((epoch, offset))
            epoch_hi = epoch
        if pid >= 0:
            producers.append(pos)
        if bmax > max_ts:
            max_ts = bmax
            off_of_max = last
        if pos > next_entry:
            oidx += off_pack(last - base_offset, pos)
            if max_ts > last_time:
                tidx += time_pack(max_ts, off_of_max - base_offset)
                last_time = max_ts
            next_entry = pos + index_interval_bytes
        prev = last
        pos = nxt
    if max_ts > last_time:
        tidx += time_pack(max_ts, off_of_max - base_offset)
    out.valid_bytes = pos
    out.batches = batches = n - 1
    out.offset_index = bytes(oidx)
    out.time_index = bytes(tidx)
    out.max_timestamp = max_ts
    out.offset_of_max_timestamp = off_of_max
    if batches:
        out.first_offset = os_unpack(mv, 0)[0]
        out.last_offset = prev
    if error:
        out.reason = error
        out.error = f"{error} at byte {pos}"
    return out


def next_offset(scan: ScanResult, base_offset: int) -> int:
    """The segment's next offset (LogSegment.readNextOffset): last offset + 1, or the
    base offset when the segment holds no batch."""
    return base_offset if scan.last_offset is None else scan.last_offset + 1


def walk_log(view, start: int = 0, base_offset: int = 0) -> ScanResult:
    """A shallow walk of the batch headers from ``start`` (no CRC, no index): the last
    offset, the leader epochs and the producer batches of a segment recovery does not
    scan. Stops where the broker's iterator stops (a size below 14, a partial batch), and
    at a batch whose offsets overflow int64 or start below the segment's ``base_offset``
    (kafkalog's stricter checks, as :func:`scan_log`: the broker would take such a
    header's offsets, negative ones too, for the log end offset).
    ``valid_bytes`` is where it stopped; ``batches`` counts what it walked."""
    out = ScanResult(size=len(view))
    end = len(view)
    limit = end - _MIN_LEFT
    pos = start
    os_unpack = _OFFSET_SIZE.unpack_from
    v2_unpack = _V2.unpack_from
    epoch_hi = -1
    last = None
    n = 0
    while pos < limit:
        offset, size = os_unpack(view, pos)
        if size < _MIN_SIZE:
            break
        nxt = pos + LOG_OVERHEAD + size
        if nxt > end:
            break
        if offset < base_offset:
            break  # below the segment: not one of its batches (see scan_log)
        if view[pos + MAGIC_OFFSET] == 2 and size >= _MIN_V2_SIZE:
            (_, _, epoch, _, _, _, delta, _, _, pid) = v2_unpack(view, pos)
            if offset + delta >= INT64_MAX or delta < 0:
                break  # offsets past int64 or going back: not a batch (see scan_log)
            last = offset + delta
            if epoch > epoch_hi:
                out.epochs.append((epoch, offset))
                epoch_hi = epoch
            if pid >= 0:
                out.producer_batches.append(pos)
        else:
            if offset >= INT64_MAX:
                break
            last = offset
        if out.first_offset is None:
            out.first_offset = offset
        n += 1
        pos = nxt
    out.valid_bytes = pos
    out.batches = n
    out.last_offset = last
    return out
