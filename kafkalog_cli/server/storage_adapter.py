"""The server's side of the append engine: a served partition is a
:class:`~kafkalog_cli.storage.log.UnifiedLog`; this module maps what the engine raises to
the Kafka error a ProduceResponse carries, as ``ReplicaManager.appendToLocalLog`` does.

* ``ServedPartition.append_as_leader(batch_bytes)`` takes exactly one RecordBatch v2 as the
  client sent it (``ProduceRequest.validateRecords`` has already checked: one batch, magic
  2) and appends it through ``UnifiedLog.append_as_leader`` (validation, offsets, roll,
  indexes, producer state, epoch cache). On a duplicate (same producer id, epoch and
  sequence range as one of the producer's last 5 batches) nothing is written and the
  original batch's offsets come back. Failures raise :class:`AppendError` with the code.
  The same in two steps: :meth:`ServedPartition.validate` (``UnifiedLog.validate_append``:
  the CPU-heavy part, which changes nothing and may run on a worker thread) then
  :meth:`ServedPartition.append_validated` (the write).
* the read view the Fetch/ListOffsets path uses: ``segments`` (the log's segments, the last
  one active), ``log_start_offset``, ``log_end_offset``, ``leader_epoch``, ``epochs``.

Everything but :meth:`ServedPartition.validate` runs on the server's event-loop thread: no
locking; ``append_lock`` lets the server keep one validation per partition at a time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from ..constants import LEADER_EPOCH_CHECKPOINT
from ..errors import (
    AppendError,
    CorruptRecordError,
    IllegalStateError,
    InvalidProducerEpochError,
    InvalidRecordError,
    InvalidTimestampError,
    InvalidTxnStateError,
    KafkalogError,
    OffsetOverflowError,
    OutOfOrderSequenceError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    TransactionCoordinatorFencedError,
)
from ..protocol.errors import Errors
from ..storage.checkpoints import read_leader_epoch_checkpoint
from ..storage.log import Log, UnifiedLog
from ..storage.segment import LogSegment

log = logging.getLogger("kafkalog.serve")


@dataclass(frozen=True)
class AppendInfo:
    """What an append returns (the fields of ``LogAppendInfo`` a ProduceResponse carries).

    Attributes:
        base_offset: offset of the batch's first record.
        last_offset: offset of its last record.
        log_append_time: the broker time under LogAppendTime, else -1 (for a duplicate:
            the original batch's timestamp, as ``UnifiedLog.append`` reports it).
        log_start_offset: the partition's log start offset after the append.
        record_count: ``LogAppendInfo.numMessages`` (last - first offset + 1), for the
            MessagesInPerSec meter: a duplicate counts its records too, as on a broker.
        duplicate: nothing was written (a retried batch was recognised).
    """

    base_offset: int
    last_offset: int
    log_append_time: int
    log_start_offset: int
    record_count: int = 0
    duplicate: bool = False


def append_error(exc: BaseException) -> AppendError:
    """The Kafka error of an engine exception (``Errors.forException`` of what the broker
    throws for the same condition)."""
    msg = str(exc)
    record_errors = getattr(exc, "record_errors", ())
    if isinstance(exc, RecordTooLargeError):
        return AppendError(Errors.MESSAGE_TOO_LARGE, msg)
    if isinstance(exc, RecordBatchTooLargeError):
        return AppendError(Errors.RECORD_LIST_TOO_LARGE, msg)
    if isinstance(exc, InvalidTimestampError):
        # LogValidator.processRecordErrors
        return AppendError(Errors.INVALID_TIMESTAMP, msg, record_errors=record_errors,
                           error_message="One or more records have been rejected due to "
                                         "invalid timestamp" if record_errors else None)
    if isinstance(exc, InvalidRecordError):
        text = None
        if record_errors:
            shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')"
                              for i, m in record_errors[:3])
            text = (f"One or more records have been rejected due to {len(record_errors)} "
                    f"record errors in total, and only showing the first three errors at "
                    f"most: [{shown}]")
        return AppendError(Errors.INVALID_RECORD, msg, record_errors=record_errors,
                           error_message=text)
    if isinstance(exc, CorruptRecordError):  # CRC mismatch, undecodable records or codec
        return AppendError(Errors.CORRUPT_MESSAGE, msg)
    if isinstance(exc, OutOfOrderSequenceError):
        return AppendError(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, msg)
    if isinstance(exc, InvalidProducerEpochError):
        return AppendError(Errors.INVALID_PRODUCER_EPOCH, msg)
    if isinstance(exc, InvalidTxnStateError):
        return AppendError(Errors.INVALID_TXN_STATE, msg)
    if isinstance(exc, TransactionCoordinatorFencedError):
        return AppendError(Errors.TRANSACTION_COORDINATOR_FENCED, msg)
    if isinstance(exc, OSError):  # the broker takes the log dir offline
        return AppendError(Errors.KAFKA_STORAGE_ERROR, msg)
    if isinstance(exc, (OffsetOverflowError, IllegalStateError, KafkalogError)):
        return AppendError(Errors.UNKNOWN_SERVER_ERROR, msg)
    return AppendError(Errors.UNKNOWN_SERVER_ERROR, f"{type(exc).__name__}: {msg}")


class PartitionView(Protocol):
    """What the read path (``reads``) needs of a partition."""

    log: Log  # its read side: read, fetch_offset_by_timestamp, collect_aborted_transactions
    segments: list[LogSegment]
    log_start_offset: int
    log_end_offset: int
    leader_epoch: int
    epochs: list[tuple[int, int]]  # leader-epoch-checkpoint entries (epoch, start offset)


class _LogView:
    """The partition's directory and segments, as its ``log`` has them (what
    :class:`ServedPartition` and :class:`ReadOnlyPartition` both hand the read path)."""

    __slots__ = ()
    log: Log

    @property
    def directory(self):
        return self.log.directory

    @property
    def segments(self) -> list[LogSegment]:
        return self.log.segments


class ServedPartition(_LogView):
    """One partition being served: its :class:`UnifiedLog` (owned by the catalog's
    LogManager, which closes it) and the leader epoch this node stamps on appends (the
    latest epoch in ``leader-epoch-checkpoint``, 0 for a new partition)."""

    __slots__ = ("log", "leader_epoch", "append_lock")

    def __init__(self, log: UnifiedLog):
        self.log = log
        self.leader_epoch = log.leader_epoch_cache.latest_epoch or 0
        if log.leader_epoch_cache.latest_epoch is None:
            # Partition.makeLeader: maybeAssignEpochStartOffset(leaderEpoch, logEndOffset),
            # so even an empty partition answers ListOffsets EARLIEST with its epoch
            log.leader_epoch_cache.assign(self.leader_epoch, log.log_end_offset)
        #: an ``asyncio.Lock`` the server holds from validation to write (set by it)
        self.append_lock = None

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def epochs(self) -> list[tuple[int, int]]:
        return self.log.leader_epoch_cache.epochs

    def append_as_leader(self, batch_bytes) -> AppendInfo:
        """Partition.appendRecordsToLeader -> UnifiedLog.appendAsLeader: :meth:`validate`
        then :meth:`append_validated`.

        Raises:
            AppendError: with the Kafka error code.
        """
        return self.append_validated(self.validate(batch_bytes))

    def validate(self, batch_bytes):
        """``UnifiedLog.validate_append`` at the node's leader epoch: the validated batch
        with offsets from the current log end offset. Changes nothing; thread-safe as long
        as nothing appends to this partition meanwhile.

        Raises:
            AppendError: with the Kafka error code.
        """
        try:
            return self.log.validate_append(batch_bytes, leader_epoch=self.leader_epoch)
        except Exception as e:
            raise self._failed(e) from e

    def is_stale(self, validated) -> bool:
        """The log was appended to (or closed) since ``validated`` was computed."""
        return self.log.closed or validated.first_offset != self.log.log_end_offset

    def append_validated(self, validated) -> AppendInfo:
        """Write a :meth:`validate` result (producer state, roll, segment, indexes).

        Raises:
            AppendError: with the Kafka error code.
        """
        lg = self.log
        try:
            info = lg.append_validated(validated, leader_epoch=self.leader_epoch)
        except Exception as e:
            raise self._failed(e) from e
        count = info.last_offset - info.first_offset + 1
        if info.duplicate:
            # UnifiedLog.append: the duplicate's offsets and its timestamp as the append time
            return AppendInfo(info.first_offset, info.last_offset, info.max_timestamp,
                              lg.log_start_offset, count, duplicate=True)
        return AppendInfo(info.first_offset, info.last_offset, info.log_append_time,
                          lg.log_start_offset, count)

    def _failed(self, e: Exception) -> AppendError:
        err = append_error(e)
        if err.error in (Errors.UNKNOWN_SERVER_ERROR, Errors.KAFKA_STORAGE_ERROR):
            log.error("append to %s failed: %s", self.log.directory.name, e, exc_info=True)
        return err


#: What a read-only server answers a write: a broker's answer to a client allowed to
#: read a topic but not to write it (Produce, CreateTopics, DeleteTopics without the
#: WRITE / CREATE / DELETE ACL), so clients fail at once instead of retrying.
READ_ONLY_ERROR = Errors.TOPIC_AUTHORIZATION_FAILED
READ_ONLY_MESSAGE = "kafkalog serve --read-only: this server writes nothing"


class ReadOnlyPartition(_LogView):
    """A partition served by ``kafkalog serve --read-only``: the read view of
    :class:`ServedPartition` over the files as they are (:class:`~kafkalog_cli.storage.
    log.Log`, opened read-only), nothing opened for writing. The log end offset is the
    offset after the last whole batch (``readNextOffset``), the log start offset
    ``max(log-start-offset-checkpoint, first segment's base offset)``, the epochs those of
    ``leader-epoch-checkpoint`` (LogLoader's, without truncating anything)."""

    __slots__ = ("log", "leader_epoch", "log_start_offset", "log_end_offset", "epochs")

    def __init__(self, directory, log_start_checkpoint: int | None = None):
        self.log = Log.open(directory)
        segs = self.log.segments
        end = self.log.log_end_offset
        first = segs[0].base_offset if segs else 0
        self.log_end_offset = end
        self.log_start_offset = min(max(log_start_checkpoint or 0, first), end)
        epochs = read_leader_epoch_checkpoint(self.log.directory / LEADER_EPOCH_CHECKPOINT)
        self.epochs = [(e, o) for e, o in (epochs or []) if o <= end]
        self.leader_epoch = self.epochs[-1][0] if self.epochs else 0

    def append_as_leader(self, batch_bytes) -> AppendInfo:
        """Refused: nothing is written.

        Raises:
            AppendError: :data:`READ_ONLY_ERROR`.
        """
        raise AppendError(READ_ONLY_ERROR, READ_ONLY_MESSAGE)

    def close(self) -> None:
        self.log.close()
