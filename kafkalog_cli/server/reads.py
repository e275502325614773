"""Fetch and ListOffsets over the log's read side (:class:`kafkalog_cli.storage.log.Log`:
``read``, ``collect_aborted_transactions``, ``fetch_offset_by_timestamp``), after
``ReplicaManager.readFromLocalLog`` and ``Partition.fetchOffsetForTimestamp``.

A single node is its own ISR: the high watermark is the log end offset. The last stable
offset is the first offset of the oldest open transaction (the producer state's first
unstable offset), else the high watermark (``UnifiedLog.lastStableOffset``); a
read_committed fetch returns only batches below it (``LocalLog.read`` bounded by
``FetchIsolation.TXN_COMMITTED``), and ListOffsets' LATEST is it under read_committed.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..format.records import FileRecords
from ..protocol.errors import Errors
from ..storage.segment import FileSlice, LogOffsetMetadata
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
    """One partition's part of a FetchResponse. ``records``: a
    :class:`~kafkalog_cli.storage.segment.FileSlice` of the segment read (sent from the
    file), or ``b""``; ``fetch_offset_metadata``: where the fetch offset is (its segment
    and byte position, ``LogReadResult.info.fetchOffsetMetadata``), None after an error."""

    error: Errors = Errors.NONE
    records: bytes | FileSlice = b""
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    aborted: list | None = None
    first_offset: int = -1
    fetch_offset_metadata: LogOffsetMetadata | None = None


def read(part: PartitionView, fetch_offset: int, max_bytes: int, min_one_message: bool,
         read_committed: bool) -> ReadResult:
    """LocalLog.read up to the high watermark (= the log end offset), or under
    read_committed the last stable offset (the read stops at its position): the log's
    :meth:`~kafkalog_cli.storage.log.Log.read`, and under read_committed its
    :meth:`~kafkalog_cli.storage.log.Log.collect_aborted_transactions` up to the offset
    after the last whole batch returned. Nothing is read into memory but batch headers:
    the records are a range of the segment file."""
    leo = part.log_end_offset
    lso = part.log_start_offset
    if fetch_offset < lso or fetch_offset > leo:
        # createLogReadResult(e): unknown offsets, empty records
        return ReadResult(Errors.OFFSET_OUT_OF_RANGE)
    stable = last_stable_offset(part)
    out = ReadResult(high_watermark=leo, last_stable_offset=stable, log_start_offset=lso,
                     aborted=[] if read_committed else None)
    end = stable if read_committed else leo
    log = part.log
    if fetch_offset >= end:
        out.fetch_offset_metadata = log.offset_metadata(fetch_offset)
        return out
    info = log.read(fetch_offset, max_bytes, min_one_message=min_one_message,
                    max_offset=log.offset_metadata(end) if end != leo else None)
    if info is None:
        out.fetch_offset_metadata = log.offset_metadata(fetch_offset)
        return out
    out.fetch_offset_metadata = LogOffsetMetadata(fetch_offset, info.segment.base_offset,
                                                  info.position)
    if not info.records:
        return out
    out.records = info.records
    out.first_offset = info.first_offset
    if read_committed:
        out.aborted = [{"producerId": t.producer_id, "firstOffset": t.first_offset}
                       for t in log.collect_aborted_transactions(
                           fetch_offset, _upper_bound(out.records, leo),
                           from_segment=info.segment)]
    return out


def available_bytes(part: PartitionView, start: LogOffsetMetadata, read_committed: bool,
                    max_bytes: int) -> int | None:
    """DelayedFetch.tryComplete for one partition, without reading: the bytes between the
    fetch offset (``start``, from the first read) and the high watermark (read_committed:
    the last stable offset), at most ``max_bytes`` (``partitionMaxBytes``); None when the
    fetch must complete now (Case F: the end is below the fetch offset, or on a later
    segment - the log rolled or the fetch is behind)."""
    end_offset = last_stable_offset(part) if read_committed else part.log_end_offset
    if start.message_offset > end_offset:
        return None
    if start.message_offset == end_offset:
        return 0
    end = part.log.offset_metadata(end_offset)
    if end.segment_base_offset != start.segment_base_offset:
        return None
    return min(max(0, end.position - start.position), max_bytes)


def last_stable_offset(part: PartitionView) -> int:
    """UnifiedLog.lastStableOffset: the first unstable offset (the first offset of the
    oldest open transaction), else the high watermark (= the log end offset). A partition
    without producer state (``--read-only``) has its log end offset."""
    ps = getattr(part.log, "producer_state", None)
    first = ps.first_unstable_offset if ps is not None else None
    leo = part.log_end_offset
    return leo if first is None else min(first, leo)


def _upper_bound(records, leo: int) -> int:
    """The offset after the last whole batch of ``records`` (a FileSlice or bytes; the
    log end offset when there is none)."""
    fr = records.batches() if isinstance(records, FileSlice) else FileRecords(records).batches()
    nxt = None
    for b in fr:
        nxt = b.next_offset
    return leo if nxt is None else nxt


def offset_for_timestamp(part: PartitionView, timestamp: int, read_committed: bool = False
                         ) -> tuple[int, int, int] | None:
    """``(timestamp, offset, leaderEpoch)`` as Partition.fetchOffsetForTimestamp returns it
    for a consumer (READ_UNCOMMITTED: bounded by the high watermark; READ_COMMITTED: LATEST
    is the last stable offset), or None when no record qualifies."""
    leo = part.log_end_offset
    epochs = part.epochs
    if timestamp == LATEST_TIMESTAMP:
        return -1, last_stable_offset(part) if read_committed else leo, part.leader_epoch
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
        found = part.log.max_timestamp_and_offset()
    elif timestamp < 0:
        return None
    else:
        found = part.log.fetch_offset_by_timestamp(timestamp, part.log_start_offset)
        if found is not None and found.offset >= leo:
            return None
    if found is None:
        return None
    return found.timestamp, found.offset, part.log.leader_epoch_of(found.offset)
