"""The one seam between ``kafkalog serve`` and the storage engine.

The server appends through :class:`PartitionAppender` only, and reads through the segment
read path (:class:`~kafkalog_cli.storage.segment.LogSegment`) of the partition's
:class:`PartitionView`. Phase 2 replaces :class:`StandInPartitionLog` (below) by the
append engine's log; the server does not change. The contract:

* ``append_as_leader(batch_bytes)`` takes exactly one RecordBatch v2 as the client sent it
  (``ProduceRequest.validateRecords`` has already checked: one batch, magic 2), validates
  it as ``UnifiedLog.appendAsLeader`` does (CRC, sizes, producer state), assigns offsets
  from the log end offset, writes it, and returns :class:`AppendInfo`. On a duplicate
  (same producer id, epoch and sequence range as one of the producer's last 5 batches) it
  writes nothing and returns the original batch's offsets. Failures raise an
  :class:`AppendError` subclass carrying the Kafka error code.
* the view: ``segments`` (LogSegment-like, base-offset order, the last one active and
  readable up to ``log_end_offset``), ``log_start_offset``, ``log_end_offset``,
  ``leader_epoch``; ``close()`` leaves the directory as a clean broker shutdown does.

Everything runs on the server's event-loop thread: implementations need no locking.
"""

from __future__ import annotations

import os
import struct
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..constants import (
    INT32_MAX,
    LEADER_EPOCH_CHECKPOINT,
    LOG_OVERHEAD,
    MAGIC_V2,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
)
from ..format.builder import set_base_offset, set_partition_leader_epoch
from ..format.records import HEADER, crc32c, increment_sequence
from ..protocol.errors import Errors
from ..storage.checkpoints import (
    format_leader_epoch_checkpoint,
    read_leader_epoch_checkpoint,
    write_atomically,
)
from ..storage.files import filename_prefix_from_offset
from ..storage.log import Log
from ..storage.offset_index import OffsetIndex
from ..storage.segment import LogSegment, rebuild_indexes
from ..storage.time_index import TimeIndex

# -- the contract ----------------------------------------------------------------------------


@dataclass(frozen=True)
class AppendInfo:
    """What an append returns (the fields of ``LogAppendInfo`` a ProduceResponse carries).

    Attributes:
        base_offset: offset of the batch's first record.
        last_offset: offset of its last record.
        log_append_time: the broker time under LogAppendTime, else -1 (for a duplicate:
            the original batch's timestamp, as ``UnifiedLog.append`` reports it).
        log_start_offset: the partition's log start offset after the append.
        record_count: records appended (0 for a duplicate), for the metrics.
    """

    base_offset: int
    last_offset: int
    log_append_time: int
    log_start_offset: int
    record_count: int = 0


class AppendError(Exception):
    """An append the broker refuses; ``error`` is the Kafka error code to answer."""

    error: Errors = Errors.UNKNOWN_SERVER_ERROR


class CorruptMessageError(AppendError):
    """CorruptRecordException: the CRC does not match, or the batch is malformed."""

    error = Errors.CORRUPT_MESSAGE


class MessageTooLargeError(AppendError):
    """RecordTooLargeException: the batch is larger than max.message.bytes."""

    error = Errors.MESSAGE_TOO_LARGE


class RecordListTooLargeError(AppendError):
    """RecordBatchTooLargeException: the batch is larger than segment.bytes."""

    error = Errors.RECORD_LIST_TOO_LARGE


class InvalidTimestampError(AppendError):
    error = Errors.INVALID_TIMESTAMP


class InvalidRecordError(AppendError):
    """InvalidRecordException: offsets, counts or sequences the format forbids."""

    error = Errors.INVALID_RECORD


class OutOfOrderSequenceError(AppendError):
    error = Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


class InvalidProducerEpochError(AppendError):
    error = Errors.INVALID_PRODUCER_EPOCH


class PartitionAppender(Protocol):
    def append_as_leader(self, batch_bytes: bytes) -> AppendInfo: ...


class PartitionView(Protocol):
    segments: list[LogSegment]
    log_start_offset: int
    log_end_offset: int
    leader_epoch: int
    epochs: list[tuple[int, int]]  # leader-epoch-checkpoint entries (epoch, start offset)

    def close(self) -> None: ...


@dataclass(frozen=True)
class AppendConfig:
    """The topic configs an append obeys (names as Kafka's topic configs)."""

    max_message_bytes: int = 1048588          # max.message.bytes
    segment_bytes: int = 1073741824           # segment.bytes
    segment_index_bytes: int = 10485760       # segment.index.bytes
    index_interval_bytes: int = 4096          # index.interval.bytes
    log_append_time: bool = False             # message.timestamp.type=LogAppendTime
    timestamp_before_max_ms: int = 2**63 - 1  # message.timestamp.before.max.ms
    timestamp_after_max_ms: int = 2**63 - 1   # message.timestamp.after.max.ms


class UnrecoveredLogError(Exception):
    """The active segment ends in bytes that are not whole valid batches."""


# -- the stand-in ----------------------------------------------------------------------------
#
# STAND-IN for the append engine (branch engine: storage/log.py, storage/producer_state.py).
# It is deliberately small: offsets from the log end offset, one pwrite per batch, index
# entries as LogSegment.append makes them, in-memory producer state for this session only
# (no .snapshot files, no transactions). Phase 2 deletes this class.

_NUM_BATCHES_TO_RETAIN = 5  # ProducerStateEntry.NUM_BATCHES_TO_RETAIN


@dataclass
class _BatchMeta:
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


class _ProducerEntry:
    __slots__ = ("epoch", "batches")

    def __init__(self, epoch: int):
        self.epoch = epoch
        self.batches: list[_BatchMeta] = []

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class StandInPartitionLog:
    """A partition directory opened for serving: read view + :meth:`append_as_leader`.

    Opening rebuilds the active segment's indexes from its ``.log`` (as LogSegment.recover
    does) and refuses a tail of invalid bytes (:class:`UnrecoveredLogError`): that needs
    ``kafkalog recover`` first.
    """

    def __init__(self, directory, config: AppendConfig | None = None, *,
                 log_start_offset: int | None = None, leader_epoch: int | None = None):
        self.directory = Path(directory)
        self.config = config or AppendConfig()
        log = Log.open(self.directory)
        self.segments: list[LogSegment] = log.segments
        if not self.segments:
            start = log_start_offset or 0
            self._create_segment(start)
        first = self.segments[0].base_offset
        self.log_start_offset = max(first, log_start_offset or 0)
        self.epochs = read_leader_epoch_checkpoint(
            self.directory / LEADER_EPOCH_CHECKPOINT) or []
        if leader_epoch is None:
            leader_epoch = max([e for e, _ in self.epochs] + [0])
        self.leader_epoch = leader_epoch
        self._producers: OrderedDict[int, _ProducerEntry] = OrderedDict()
        self._open_active()

    # -- opening -----------------------------------------------------------------------

    def _create_segment(self, base: int) -> LogSegment:
        prefix = self.directory / filename_prefix_from_offset(base)
        for suffix in (".log", ".index", ".timeindex"):
            fd = os.open(f"{prefix}{suffix}", os.O_WRONLY | os.O_CREAT, 0o644)
            os.close(fd)
        seg = LogSegment(self.directory, base)
        self.segments.append(seg)
        return seg

    def _open_active(self) -> None:
        seg = self.segments[-1]
        view = seg.view
        size = len(view)
        r = rebuild_indexes(view, seg.base_offset, self.config.index_interval_bytes,
                            strict=False, file=seg.log_path)
        seg.close()
        if r.valid_bytes != size:
            raise UnrecoveredLogError(
                f"{seg.log_path}: {size - r.valid_bytes} bytes after the last valid batch "
                f"({r.error or 'partial batch'}); run kafkalog recover before serving")
        self._size = size
        if r.last_offset is not None:
            self.log_end_offset = r.last_offset + 1
        elif len(self.segments) > 1:
            self.log_end_offset = seg.base_offset
        else:
            self.log_end_offset = max(seg.base_offset, self.log_start_offset)
        oidx = OffsetIndex(seg.index_path, seg.base_offset, self.config.segment_index_bytes)
        for e in r.offset_entries:
            oidx.append(e.offset, e.position)
        tidx = TimeIndex(seg.time_index_path, seg.base_offset, self.config.segment_index_bytes)
        for e in r.time_entries:
            tidx.maybe_append(e.timestamp, e.offset, skip_full_check=True)
        oidx.write(fsync=False)
        tidx.write(fsync=False)
        seg._offset_index, seg._time_index = oidx, tidx
        last_entry_pos = r.offset_entries[-1].position if r.offset_entries else 0
        self._bytes_since_index = r.valid_bytes - last_entry_pos if r.batches else 0
        self._max_ts = r.max_timestamp
        self._offset_of_max_ts = r.offset_of_max_timestamp
        self._fd = os.open(seg.log_path, os.O_WRONLY)

    @property
    def active(self) -> LogSegment:
        return self.segments[-1]

    # -- appending ---------------------------------------------------------------------

    def append_as_leader(self, batch_bytes: bytes) -> AppendInfo:
        cfg = self.config
        n = len(batch_bytes)
        if n < RECORD_BATCH_OVERHEAD:
            raise CorruptMessageError(f"Record batch of {n} bytes is smaller than the minimum "
                                      f"allowed overhead {RECORD_BATCH_OVERHEAD}")
        (_, length, _, magic, crc, attributes, last_delta, _, max_ts, producer_id,
         producer_epoch, base_seq, count) = HEADER.unpack_from(batch_bytes, 0)
        if magic != MAGIC_V2:
            raise InvalidRecordError(f"Unsupported magic {magic}")
        if length + LOG_OVERHEAD != n:
            raise CorruptMessageError(f"Record batch size {length + LOG_OVERHEAD} does not "
                                      f"match the {n} bytes received")
        if n > cfg.max_message_bytes:
            raise MessageTooLargeError(f"The record batch size in the append is {n} bytes "
                                       f"which exceeds the maximum configured value of "
                                       f"{cfg.max_message_bytes}.")
        if crc32c(memoryview(batch_bytes)[21:]) != crc:
            raise CorruptMessageError(f"Record is corrupt (stored crc = {crc})")
        if n > cfg.segment_bytes:
            raise RecordListTooLargeError(f"Message batch size is {n} bytes which exceeds the "
                                          f"maximum configured segment size of "
                                          f"{cfg.segment_bytes}.")
        if attributes & 0x20:
            raise InvalidRecordError("Clients are not allowed to write control records")
        if last_delta < 0 or count != last_delta + 1:
            raise InvalidRecordError(f"Inconsistent batch offset range and record count "
                                     f"(lastOffsetDelta {last_delta}, count {count})")
        has_pid = producer_id >= 0
        if has_pid and base_seq < 0:
            raise InvalidRecordError(f"Invalid sequence number {base_seq} in record batch "
                                     f"with producerId {producer_id}")
        now = int(time.time() * 1000)
        if not cfg.log_append_time and max_ts != NO_TIMESTAMP:
            if max_ts < now - cfg.timestamp_before_max_ms or \
                    max_ts > now + cfg.timestamp_after_max_ms:
                raise InvalidTimestampError(f"Timestamp {max_ts} of the batch is out of range")
        entry = None
        if has_pid:
            entry = self._producers.get(producer_id)
            last_seq = increment_sequence(base_seq, last_delta)
            if entry is not None:
                if producer_epoch < entry.epoch:
                    raise InvalidProducerEpochError(
                        f"Epoch of producer {producer_id} at offset {self.log_end_offset} is "
                        f"{producer_epoch}, which is smaller than the last seen epoch "
                        f"{entry.epoch}")
                if producer_epoch == entry.epoch:
                    for b in entry.batches:
                        if b.first_seq == base_seq and b.last_seq == last_seq:
                            return AppendInfo(b.first_offset, b.last_offset, b.timestamp,
                                              self.log_start_offset, 0)
                    if entry.batches and not _in_sequence(entry.last_seq, base_seq):
                        raise OutOfOrderSequenceError(
                            f"Out of order sequence number for producer {producer_id} at "
                            f"offset {self.log_end_offset}: {base_seq} (incoming seq. "
                            f"number), {entry.last_seq} (current end sequence number)")
                elif base_seq != 0:
                    raise OutOfOrderSequenceError(
                        f"Invalid sequence number for new epoch of producer {producer_id} at "
                        f"offset {self.log_end_offset}: {producer_epoch} (request epoch), "
                        f"{base_seq} (seq. number), {entry.epoch} (current producer epoch)")
        # -- accepted: assign offsets and write ---------------------------------------------
        batch = bytearray(batch_bytes)
        base = self.log_end_offset
        last = base + last_delta
        set_base_offset(batch, base)
        set_partition_leader_epoch(batch, self.leader_epoch)
        log_append_time = NO_TIMESTAMP
        if cfg.log_append_time:
            log_append_time = max_ts = now
            # setMaxTimestamp(LOG_APPEND_TIME, now): attributes and maxTimestamp, new CRC
            struct.pack_into(">h", batch, 21, attributes | TIMESTAMP_TYPE_MASK)
            struct.pack_into(">q", batch, 35, now)
            struct.pack_into(">I", batch, 17, crc32c(memoryview(batch)[21:]))
        self._maybe_roll(n, last)
        self._write(batch, base, last, max_ts)
        self.log_end_offset = last + 1
        if has_pid:
            if entry is None or entry.epoch != producer_epoch:
                entry = _ProducerEntry(producer_epoch)
                self._producers[producer_id] = entry
            entry.batches.append(_BatchMeta(base_seq, increment_sequence(base_seq, last_delta),
                                            base, last, max_ts))
            del entry.batches[:-_NUM_BATCHES_TO_RETAIN]
        return AppendInfo(base, last, log_append_time, self.log_start_offset, count)

    def _write(self, batch: bytearray, base: int, last: int, max_ts: int) -> None:
        seg = self.active
        pos = self._size
        os.pwrite(self._fd, batch, pos)
        # LogSegment.append: index when more than index.interval.bytes since the last entry
        if max_ts > self._max_ts:
            self._max_ts, self._offset_of_max_ts = max_ts, last
        if self._bytes_since_index > self.config.index_interval_bytes:
            seg._offset_index.append(last, pos)
            seg._time_index.maybe_append(self._max_ts, self._offset_of_max_ts)
            seg._offset_index.write(fsync=False)
            seg._time_index.write(fsync=False)
            self._bytes_since_index = 0
        self._bytes_since_index += len(batch)
        self._size = pos + len(batch)
        seg.close()  # drop the stale map: the next read maps the grown file
        if not self.epochs or self.epochs[-1][0] < self.leader_epoch:
            self.epochs.append((self.leader_epoch, base))
            write_atomically(self.directory / LEADER_EPOCH_CHECKPOINT,
                             format_leader_epoch_checkpoint(self.epochs), fsync=False)

    def _maybe_roll(self, size: int, last: int) -> None:
        seg = self.active
        if self._size == 0:
            return
        if (self._size + size > self.config.segment_bytes
                or last - seg.base_offset > INT32_MAX
                or seg._offset_index.is_full or seg._time_index.is_full):
            self._seal_active()
            new = self._create_segment(self.log_end_offset)
            new._offset_index = OffsetIndex(new.index_path, new.base_offset,
                                            self.config.segment_index_bytes)
            new._time_index = TimeIndex(new.time_index_path, new.base_offset,
                                        self.config.segment_index_bytes)
            self._size = 0
            self._bytes_since_index = 0
            self._max_ts, self._offset_of_max_ts = NO_TIMESTAMP, -1
            self._fd = os.open(new.log_path, os.O_WRONLY)

    def _seal_active(self) -> None:
        """onBecomeInactiveSegment / close: the final time-index entry, trimmed indexes."""
        seg = self.active
        if self._max_ts != NO_TIMESTAMP:
            seg._time_index.maybe_append(self._max_ts, self._offset_of_max_ts,
                                         skip_full_check=True)
        seg._offset_index.write(fsync=True)
        seg._time_index.write(fsync=True)
        os.fsync(self._fd)
        os.close(self._fd)
        self._fd = None

    def flush(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            self._seal_active()
        for s in self.segments:
            s.close()
