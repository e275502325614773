"""Fetch and ListOffsets over the segment read path (``LogSegment.translate_offset`` for
offsets, the time index for timestamps), after ``LocalLog.read``, ``LogSegment.read`` and
``UnifiedLog.fetchOffsetByTimestamp``.

A single node is its own ISR: the high watermark is the log end offset. The last stable
offset is the log end offset too: the server writes no transactional data (it does not
serve the transaction APIs), so only a directory written by a broker with a transaction
still open at its end would differ (documented in docs/serve.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UnreadableError
from ..format.records import FileRecords
from ..protocol.errors import Errors
from ..storage.txn_index import TransactionIndex
from .storage_adapter import PartitionView

EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5

#: ReplicaManager.timestampMinSupportedVersion: the first ListOffsets version of each
#: special timestamp
_TIMESTAMP_MIN_VERSION = {EARLIEST_TIMESTAMP: 1, LATEST_TIMESTAMP: 1, MAX_TIMESTAMP: 7,
                          EARLIEST_LOCAL_TIMESTAMP: 8, LATEST_TIERED_TIMESTAMP: 9}


def timestamp_unsupported(timestamp: int, version: int) -> bool:
    """ReplicaManager.isListOffsetsTimestampUnsupported: a negative timestamp that is not a
    special one of this request version (answered ``UNSUPPORTED_VERSION``)."""
    return timestamp < 0 and version < _TIMESTAMP_MIN_VERSION.get(timestamp, 1 << 15)


@dataclass
class ReadResult:
    """One partition's part of a FetchResponse."""

    error: Errors = Errors.NONE
    records: bytes = b""
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    aborted: list | None = None
    first_offset: int = -1


def read(part: PartitionView, fetch_offset: int, max_bytes: int, min_one_message: bool,
         read_committed: bool) -> ReadResult:
    """LocalLog.read at the high watermark (= the log end offset)."""
    leo = part.log_end_offset
    lso = part.log_start_offset
    if fetch_offset < lso or fetch_offset > leo:
        # createLogReadResult(e): unknown offsets, empty records
        return ReadResult(Errors.OFFSET_OUT_OF_RANGE)
    out = ReadResult(high_watermark=leo, last_stable_offset=leo, log_start_offset=lso,
                     aborted=[] if read_committed else None)
    if fetch_offset == leo:
        return out
    segments = part.segments
    i = 0
    for j, seg in enumerate(segments):
        if seg.base_offset <= fetch_offset:
            i = j
        else:
            break
    for seg in segments[i:]:
        batch = seg.translate_offset(fetch_offset)
        if batch is None:
            continue
        start = batch.position
        size = batch.size
        adjusted = max(max_bytes, size) if min_one_message else max_bytes
        if adjusted <= 0:
            return out
        view = seg.view
        fetch_size = min(len(view) - start, adjusted)
        out.records = bytes(view[start:start + fetch_size])
        out.first_offset = batch.base_offset
        if read_committed:
            out.aborted = _aborted(part, segments, seg, fetch_offset,
                                   _upper_bound(out.records, leo))
        return out
    return out


def _upper_bound(records: bytes, leo: int) -> int:
    fr = FileRecords(records)
    nxt = None
    for b in fr.batches():
        nxt = b.next_offset
    if fr.invalid_bytes or nxt is None:
        return nxt if nxt is not None else leo
    return nxt


def _aborted(part, segments, seg, fetch_offset: int, upper: int) -> list[dict]:
    """LocalLog.collectAbortedTransactions from the segment read: each segment's
    ``TransactionIndex.collectAbortedTxns``, going on to the next segments until the
    search is complete (an aborted transaction is indexed in the segment of its ABORT
    marker, which may come after the records fetched). The active segment's index is the
    one in memory (entries not yet flushed included)."""
    out = []
    for s in segments[segments.index(seg):]:
        idx = getattr(s, "txn_index", None)
        if idx is None:
            try:
                idx = TransactionIndex.load(s.txn_index_path, s.base_offset)
            except UnreadableError:
                continue
        found, complete = idx.collect_aborted(fetch_offset, upper)
        out += [{"producerId": t.producer_id, "firstOffset": t.first_offset} for t in found]
        if complete:
            break
    return out


def offset_for_timestamp(part: PartitionView, timestamp: int) -> tuple[int, int, int] | None:
    """``(timestamp, offset, leaderEpoch)`` as Partition.fetchOffsetForTimestamp returns it
    for a consumer (READ_UNCOMMITTED/COMMITTED: bounded by the high watermark), or None
    when no record qualifies."""
    leo = part.log_end_offset
    epochs = part.epochs
    if timestamp == LATEST_TIMESTAMP:
        return -1, leo, part.leader_epoch
    if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
        # without remote storage the earliest local offset is the log start offset, and
        # its epoch the earliest cached one when it starts at or below it
        start = part.log_start_offset
        epoch = epochs[0][0] if epochs and epochs[0][1] <= start else -1
        return -1, start, epoch
    if timestamp == LATEST_TIERED_TIMESTAMP:
        # no remote storage: nothing is tiered
        return -1, -1, -1
    if timestamp == MAX_TIMESTAMP:
        best = None
        for seg in part.segments:
            for b in seg.records().batches():
                if best is None or b.max_timestamp > best.max_timestamp:
                    best = b
        if best is None or best.max_timestamp < 0:
            return None
        off = next((r.offset for r in best.iter_records() if r.timestamp == best.max_timestamp),
                   best.last_offset)
        epoch = best.partition_leader_epoch
        return best.max_timestamp, off, epoch if epoch >= 0 else -1
    if timestamp < 0:
        return None
    for seg in part.segments:
        found = seg.find_offset_by_timestamp(timestamp, part.log_start_offset)
        if found is None:
            continue
        ts, off = found
        if off >= leo:
            return None
        batch = seg.translate_offset(off)
        epoch = batch.partition_leader_epoch if batch is not None else -1
        return ts, off, epoch if epoch >= 0 else -1
    return None
