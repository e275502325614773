"""The transaction coordinator of one node, after Kafka's ``TransactionCoordinator``,
``TransactionMetadata``, ``TransactionStateManager`` and (done in-line)
``TransactionMarkerChannelManager``, for the classic transaction protocol (TV0/TV1: the
client adds partitions with AddPartitionsToTxn; KIP-890's TV2 is not finalised, so clients
do not use it).

State per transactional id (``TransactionMetadata``): producer id, producer epoch and the
last one, timeout, state, partitions, start and last-update times. Every transition is
first written to ``__transaction_state`` (partition ``Utils.abs(id.hashCode()) %
transaction.state.log.num.partitions``) as a TransactionLog record - key version 0,
value version 0 (what a broker writes before ``transaction.version`` 1) - and applied in
memory only once written (``appendTransactionToLog``):

    Empty (0) -> Ongoing (1) -> PrepareCommit (2) / PrepareAbort (3)
      -> CompleteCommit (4) / CompleteAbort (5) -> Ongoing / Empty ...

Markers: ending a transaction writes PrepareCommit/PrepareAbort, then a COMMIT/ABORT
control batch to every partition of the transaction through the append engine (which
updates the producer state, the ``.txnindex`` for aborts and so the last stable offset;
a ``__consumer_offsets`` partition's marker also settles the transaction's offsets in the
group coordinator), then CompleteCommit/CompleteAbort. The markers are written before
EndTxn is answered (a broker answers after PrepareX and sends them asynchronously; clients
see the same outcome, never ``CONCURRENT_TRANSACTIONS`` for a finished one).

Fencing: InitProducerId for an id whose transaction is Ongoing bumps the epoch
(PrepareEpochFence), aborts the transaction with markers at the new epoch and answers
``CONCURRENT_TRANSACTIONS``; the retry gets epoch + 1 again. The old producer's writes
then fail (INVALID_PRODUCER_EPOCH from the log, PRODUCER_FENCED from the coordinator).
A transaction Ongoing for longer than its timeout is fenced and aborted the same way
(:meth:`TransactionCoordinator.abort_timed_out`, every
``transaction.abort.timed.out.transaction.cleanup.interval.ms``).

Loading (:meth:`TransactionCoordinator.load`): the last record of each id wins; a
transaction left in PrepareCommit/PrepareAbort by a crash gets its markers and its
Complete record at once (as the broker completes them after loading); an Ongoing one stays
until its producer is fenced or it times out.

Everything runs on the server's event loop.
"""

from __future__ import annotations

import logging
import struct
import time
from dataclasses import dataclass, replace

from ..decoders.txn_messages import TransactionLogKey, TransactionLogValue
from ..errors import AppendError, CoordinatorLoadError, KafkalogError
from ..protocol.errors import Errors
from .catalog import LogDirCatalog
from .coordinator_log import OFFSETS_TOPIC, CoordinatorTopic, write_marker
from .groups import GroupCoordinator

log = logging.getLogger("kafkalog.serve")

_INT16 = struct.Struct(">h")
EMPTY, ONGOING, PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT, DEAD, \
    PREPARE_EPOCH_FENCE = range(8)
#: TransactionState.stateName, by id
STATE_NAMES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit",
               "CompleteAbort", "Dead", "PrepareEpochFence")
TRANSACTION_LOG_VALUE_VERSION = 0
NO_PRODUCER_EPOCH = -1
#: TransactionMetadata.isEpochExhausted: Short.MaxValue - 1
MAX_EPOCH = 32766


@dataclass
class TxnMetadata:
    """TransactionMetadata (times in epoch ms; partitions as ``(topic, partition)``)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    timeout_ms: int
    state: int
    partitions: frozenset = frozenset()
    start_ms: int = -1
    last_update_ms: int = -1


def txn_key(transactional_id: str) -> bytes:
    return _INT16.pack(0) + TransactionLogKey.build({"transactionalId": transactional_id}, 0)


def txn_value(m: TxnMetadata) -> bytes:
    """TransactionLog.valueToBytes at version 0: partitions null for Empty, grouped by
    topic otherwise."""
    if m.state == EMPTY:
        parts = None
    else:
        by_topic: dict[str, list[int]] = {}
        for t, p in sorted(m.partitions):
            by_topic.setdefault(t, []).append(p)
        parts = [{"topic": t, "partitionIds": ps} for t, ps in by_topic.items()]
    return _INT16.pack(TRANSACTION_LOG_VALUE_VERSION) + TransactionLogValue.build(
        {"producerId": m.producer_id, "producerEpoch": m.producer_epoch,
         "transactionTimeoutMs": m.timeout_ms, "transactionStatus": m.state,
         "transactionPartitions": parts, "transactionLastUpdateTimestampMs": m.last_update_ms,
         "transactionStartTimestampMs": m.start_ms}, TRANSACTION_LOG_VALUE_VERSION)


def fenced_for(version: int, first_version: int, error: Errors) -> Errors:
    """KafkaApis: clients older than ``first_version`` know PRODUCER_FENCED as
    INVALID_PRODUCER_EPOCH."""
    if error is Errors.PRODUCER_FENCED and version < first_version:
        return Errors.INVALID_PRODUCER_EPOCH
    return error


class TransactionCoordinator:
    """Transactions of one node (see the module docstring).

    ``txn_topic`` / ``offsets_topic``: the internal topics; ``groups``: the group
    coordinator (transactional offsets); ``allocate_producer_id``: the node's producer id
    allocator; ``max_timeout_ms``: ``transaction.max.timeout.ms``; ``clock``: epoch ms.
    """

    def __init__(self, catalog: LogDirCatalog, txn_topic: CoordinatorTopic,
                 offsets_topic: CoordinatorTopic, groups: GroupCoordinator,
                 allocate_producer_id, *, max_timeout_ms: int = 900_000,
                 on_append=None, clock=None):
        self.catalog = catalog
        self.txn_topic = txn_topic
        self.offsets_topic = offsets_topic
        self.groups = groups
        self.allocate_producer_id = allocate_producer_id
        self.max_timeout_ms = max_timeout_ms
        self.on_append = on_append
        self.clock = clock or (lambda: int(time.time() * 1000))
        self.txns: dict[str, TxnMetadata] = {}

    # -- the log -----------------------------------------------------------------------------

    def _write(self, new: TxnMetadata) -> Errors:
        """appendTransactionToLog: write ``new``, then make it the id's state."""
        try:
            self.txn_topic.append(new.transactional_id,
                                  [(txn_key(new.transactional_id), txn_value(new))])
        except AppendError as e:
            log.error("transaction %s: writing %s failed: %s", new.transactional_id,
                      self.txn_topic.name, e)
            if e.error in (Errors.KAFKA_STORAGE_ERROR, Errors.NOT_LEADER_OR_FOLLOWER):
                return Errors.NOT_COORDINATOR
            return Errors.COORDINATOR_NOT_AVAILABLE
        self.txns[new.transactional_id] = new
        return Errors.NONE

    # -- InitProducerId ----------------------------------------------------------------------

    def init_producer_id(self, transactional_id: str, timeout_ms: int,
                         expected: tuple[int, int] | None = None) -> tuple[Errors, int, int]:
        """TransactionCoordinator.handleInitProducerId for a transactional id (a null one is
        the caller's: a new producer id, epoch 0). ``expected``: the (producer id, epoch) a
        v3+ client sends when it already has one (KIP-360), else None. Returns (error,
        producer id, epoch)."""
        fail = (-1, -1)
        if transactional_id == "":
            return (Errors.INVALID_REQUEST, *fail)
        if not 0 < timeout_ms <= self.max_timeout_ms:
            return (Errors.INVALID_TRANSACTION_TIMEOUT, *fail)
        now = self.clock()
        m = self.txns.get(transactional_id)
        if m is None:
            m = TxnMetadata(transactional_id, self.allocate_producer_id(), NO_PRODUCER_EPOCH,
                            NO_PRODUCER_EPOCH, timeout_ms, EMPTY, last_update_ms=now)
        if expected is not None and m.producer_epoch != NO_PRODUCER_EPOCH and \
                expected[0] != m.producer_id:
            return (Errors.PRODUCER_FENCED, *fail)
        if m.state in (PREPARE_COMMIT, PREPARE_ABORT):
            return (Errors.CONCURRENT_TRANSACTIONS, *fail)
        if m.state == ONGOING:
            # prepareFenceProducerEpoch, then endTransaction(ABORT, isFromClient = false)
            fenced = replace(m, producer_epoch=min(m.producer_epoch + 1, MAX_EPOCH))
            error = self._end(fenced, commit=False)
            return (error if error is not Errors.NONE else Errors.CONCURRENT_TRANSACTIONS,
                    *fail)
        # Empty, CompleteCommit, CompleteAbort
        if m.producer_epoch >= MAX_EPOCH and (expected is None or
                                               expected[1] == m.producer_epoch):
            # prepareProducerIdRotation
            new = replace(m, producer_id=self.allocate_producer_id(), producer_epoch=0,
                          last_producer_epoch=NO_PRODUCER_EPOCH, timeout_ms=timeout_ms,
                          state=EMPTY, partitions=frozenset(), start_ms=-1,
                          last_update_ms=now)
        else:
            # prepareIncrementProducerEpoch
            if expected is None or m.producer_epoch == NO_PRODUCER_EPOCH or \
                    expected[1] == m.producer_epoch:
                epoch = m.producer_epoch + 1
                last = NO_PRODUCER_EPOCH if expected is None else m.producer_epoch
            elif expected[1] == m.last_producer_epoch:  # a retry of the last bump
                epoch, last = m.producer_epoch, m.last_producer_epoch
            else:
                return (Errors.PRODUCER_FENCED, *fail)
            new = replace(m, producer_epoch=epoch, last_producer_epoch=last,
                          timeout_ms=timeout_ms, state=EMPTY, partitions=frozenset(),
                          start_ms=-1, last_update_ms=now)
        error = self._write(new)
        if error is not Errors.NONE:
            return (error, *fail)
        log.info("initialized transactional id %s with producer id %d and epoch %d on "
                 "partition %s-%d", transactional_id, new.producer_id, new.producer_epoch,
                 self.txn_topic.name, self.txn_topic.partition_for(transactional_id))
        return Errors.NONE, new.producer_id, new.producer_epoch

    # -- AddPartitionsToTxn / AddOffsetsToTxn ------------------------------------------------

    def _check_producer(self, transactional_id: str, producer_id: int,
                        producer_epoch: int) -> tuple[Errors, TxnMetadata | None]:
        if not transactional_id:
            return Errors.INVALID_REQUEST, None
        m = self.txns.get(transactional_id)
        if m is None or m.producer_id != producer_id:
            return Errors.INVALID_PRODUCER_ID_MAPPING, None
        if m.producer_epoch != producer_epoch:
            return Errors.PRODUCER_FENCED, None
        if m.state in (PREPARE_COMMIT, PREPARE_ABORT):
            return Errors.CONCURRENT_TRANSACTIONS, None
        return Errors.NONE, m

    def add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       partitions: set[tuple[str, int]]) -> Errors:
        """handleAddPartitionsToTransaction: the partitions join the transaction (state
        Ongoing, start time set when it begins)."""
        error, m = self._check_producer(transactional_id, producer_id, producer_epoch)
        if error is not Errors.NONE:
            return error
        if m.state == ONGOING and partitions <= m.partitions:
            return Errors.NONE
        now = self.clock()
        new = replace(m, state=ONGOING, partitions=m.partitions | frozenset(partitions),
                      start_ms=m.start_ms if m.state == ONGOING else now,
                      last_update_ms=now)
        return self._write(new)

    def add_offsets(self, transactional_id: str, producer_id: int, producer_epoch: int,
                    group_id: str) -> Errors:
        """handleAddOffsetsToTxn: the group's ``__consumer_offsets`` partition joins."""
        if not group_id:
            return Errors.INVALID_GROUP_ID
        error, _ = self._check_producer(transactional_id, producer_id, producer_epoch)
        if error is not Errors.NONE:
            return error
        self.offsets_topic.ensure()
        return self.add_partitions(transactional_id, producer_id, producer_epoch,
                                   {(OFFSETS_TOPIC, self.offsets_topic.partition_for(group_id))})

    def verify(self, transactional_id: str, producer_id: int, producer_epoch: int,
               tp: tuple[str, int]) -> Errors:
        """handleVerifyPartitionsInTransaction (KIP-890 part 1, what a broker asks before
        appending a transactional batch): the partition must be in the producer's ongoing
        transaction. PRODUCER_FENCED comes back as INVALID_PRODUCER_EPOCH, as
        ``AddPartitionsToTxnManager`` converts it for the produce path."""
        error, m = self._check_producer(transactional_id, producer_id, producer_epoch)
        if error is Errors.PRODUCER_FENCED:
            return Errors.INVALID_PRODUCER_EPOCH
        if error is not Errors.NONE:
            return error
        if m.state != ONGOING or tp not in m.partitions:
            return Errors.INVALID_TXN_STATE
        return Errors.NONE

    # -- EndTxn --------------------------------------------------------------------------

    def end_txn(self, transactional_id: str, producer_id: int, producer_epoch: int,
                commit: bool) -> Errors:
        """handleEndTransaction from a client (TV1 rules)."""
        if not transactional_id:
            return Errors.INVALID_REQUEST
        m = self.txns.get(transactional_id)
        if m is None or m.producer_id != producer_id:
            return Errors.INVALID_PRODUCER_ID_MAPPING
        if m.producer_epoch != producer_epoch:
            return Errors.PRODUCER_FENCED
        if m.state == ONGOING:
            return self._end(m, commit)
        if m.state == COMPLETE_COMMIT:
            return Errors.NONE if commit else Errors.INVALID_TXN_STATE
        if m.state == COMPLETE_ABORT:
            return Errors.INVALID_TXN_STATE if commit else Errors.NONE
        if m.state == PREPARE_COMMIT:
            return Errors.CONCURRENT_TRANSACTIONS if commit else Errors.INVALID_TXN_STATE
        if m.state == PREPARE_ABORT:
            return Errors.INVALID_TXN_STATE if commit else Errors.CONCURRENT_TRANSACTIONS
        return Errors.INVALID_TXN_STATE  # Empty

    def _end(self, m: TxnMetadata, commit: bool) -> Errors:
        """PrepareCommit/PrepareAbort written, the markers, then CompleteCommit/Abort."""
        now = self.clock()
        prepared = replace(m, state=PREPARE_COMMIT if commit else PREPARE_ABORT,
                           last_update_ms=now)
        error = self._write(prepared)
        if error is not Errors.NONE:
            return error
        return self._complete(prepared)

    def _complete(self, m: TxnMetadata) -> Errors:
        """Write the markers of a PrepareCommit/PrepareAbort transaction, then its
        Complete record (TransactionMarkerChannelManager + completeSendMarkersForTxnId)."""
        commit = m.state == PREPARE_COMMIT
        for topic, p in sorted(m.partitions):
            self._write_marker(m, topic, p, commit)
        done = replace(m, state=COMPLETE_COMMIT if commit else COMPLETE_ABORT,
                       partitions=frozenset(), last_update_ms=self.clock())
        error = self._write(done)
        if error is Errors.NONE:
            log.info("transaction %s (producer id %d, epoch %d) %s in %d partitions",
                     m.transactional_id, m.producer_id, m.producer_epoch,
                     "committed" if commit else "aborted", len(m.partitions))
        return error

    def _write_marker(self, m: TxnMetadata, topic: str, p: int, commit: bool) -> None:
        """One partition's marker; a partition that is gone (deleted, offline) is skipped,
        as the marker channel drops markers for partitions without a leader."""
        part = self.catalog.partition(topic, p)
        if part is None:
            log.warning("transaction %s: no marker for %s-%d (not served)",
                        m.transactional_id, topic, p)
            return
        try:
            write_marker(part.log, producer_id=m.producer_id, producer_epoch=m.producer_epoch,
                         commit=commit, leader_epoch=part.leader_epoch)
        except AppendError as e:
            log.error("transaction %s: the %s marker for %s-%d failed: %s",
                      m.transactional_id, "COMMIT" if commit else "ABORT", topic, p, e)
            return
        if topic == OFFSETS_TOPIC:
            self.groups.complete_txn(m.producer_id, commit)
        if self.on_append is not None:
            self.on_append()

    # -- timeouts ----------------------------------------------------------------------------

    def abort_timed_out(self) -> int:
        """abortTimedOutTransactions: every Ongoing transaction older than its timeout is
        fenced (epoch + 1) and aborted. Returns how many."""
        now = self.clock()
        n = 0
        for m in list(self.txns.values()):
            if m.state == ONGOING and m.start_ms + m.timeout_ms < now:
                log.info("aborting transaction %s (producer id %d): timed out after %d ms",
                         m.transactional_id, m.producer_id, m.timeout_ms)
                fenced = replace(m, producer_epoch=min(m.producer_epoch + 1, MAX_EPOCH))
                self._end(fenced, commit=False)
                n += 1
        return n

    # -- loading -----------------------------------------------------------------------------

    def load(self, *, complete: bool = True) -> int:
        """Replay ``__transaction_state`` and (``complete``; not when serving read-only)
        complete the transactions a crash left prepared. Returns the number of
        transactional ids.

        Raises:
            CoordinatorLoadError: a partition that is offline or holds a record that does
                not parse.
        """
        topic = self.txn_topic
        for p, why in topic.offline().items():
            raise CoordinatorLoadError(
                f"{topic.name}-{p} is offline ({why}): its transactions cannot be loaded",
                file=self.catalog.log_dir / f"{topic.name}-{p}")
        txns: dict[str, TxnMetadata | None] = {}
        try:
            for p, batch, records in topic.scan():
                if getattr(batch, "is_control", False):
                    continue
                for r in records:
                    try:
                        txns.update([_parse(r.key, r.value)])
                    except Exception as e:
                        raise CoordinatorLoadError(
                            f"{topic.name}-{p}: the record at offset {r.offset} does not "
                            f"load: {e}", file=self.catalog.log_dir / f"{topic.name}-{p}"
                        ) from None
        except CoordinatorLoadError:
            raise
        except KafkalogError as e:
            raise CoordinatorLoadError(f"{topic.name}: {e}",
                                       file=getattr(e, "file", None)) from None
        self.txns = {k: v for k, v in txns.items() if v is not None}
        for m in list(self.txns.values()) if complete else ():
            if m.state in (PREPARE_COMMIT, PREPARE_ABORT):
                log.info("completing transaction %s left in %s", m.transactional_id,
                         STATE_NAMES[m.state])
                self._complete(m)
        return len(self.txns)

    # -- DescribeTransactions / ListTransactions -----------------------------------------------

    def describe(self, transactional_id: str) -> dict:
        """handleDescribeTransactions for one id (an error entry keeps the message class's
        defaults: 0 for the numbers, as the broker answers)."""
        out = {"errorCode": 0, "transactionalId": transactional_id, "transactionState": "",
               "transactionTimeoutMs": 0, "transactionStartTimeMs": 0, "producerId": 0,
               "producerEpoch": 0, "topics": []}
        if not transactional_id:
            return out | {"errorCode": int(Errors.INVALID_REQUEST)}
        m = self.txns.get(transactional_id)
        if m is None or m.state == DEAD:
            return out | {"errorCode": int(Errors.TRANSACTIONAL_ID_NOT_FOUND)}
        by_topic: dict[str, list[int]] = {}
        for t, p in sorted(m.partitions):
            by_topic.setdefault(t, []).append(p)
        return out | {"transactionState": STATE_NAMES[m.state],
                      "transactionTimeoutMs": m.timeout_ms,
                      "transactionStartTimeMs": m.start_ms, "producerId": m.producer_id,
                      "producerEpoch": m.producer_epoch,
                      "topics": [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]}

    def list(self, states: list[str], producer_ids: list[int], duration_ms: int = -1
             ) -> tuple[list[str], list[dict]]:
        """listTransactionStates: (unknown state filters, matching transactions)."""
        known = set(STATE_NAMES)
        unknown = [s for s in states if s not in known]
        wanted = {s for s in states if s in known}
        now = self.clock()
        out = []
        for m in self.txns.values():
            if wanted and STATE_NAMES[m.state] not in wanted:
                continue
            if producer_ids and m.producer_id not in producer_ids:
                continue
            if duration_ms >= 0 and (m.state != ONGOING or now - m.start_ms < duration_ms):
                continue
            out.append({"transactionalId": m.transactional_id, "producerId": m.producer_id,
                        "transactionState": STATE_NAMES[m.state]})
        return unknown, out


def _parse(key: bytes | None, value: bytes | None) -> tuple[str, TxnMetadata | None]:
    """TransactionLog.readTxnRecordKey / readTxnRecordValue."""
    if key is None:
        raise ValueError("a record without a key")
    (kv,) = _INT16.unpack_from(key, 0)
    if kv != 0:
        raise ValueError(f"unknown key version {kv}")
    tid = TransactionLogKey.parse(key, 0, offset=2)[0]["transactionalId"]
    if value is None:
        return tid, None
    (vv,) = _INT16.unpack_from(value, 0)
    v = TransactionLogValue.parse(value, vv, offset=2)[0]
    parts = frozenset((t["topic"], p) for t in (v["transactionPartitions"] or [])
                      for p in t["partitionIds"])
    state = v["transactionStatus"]
    return tid, TxnMetadata(tid, v["producerId"], v["producerEpoch"], NO_PRODUCER_EPOCH,
                            v["transactionTimeoutMs"], state,
                            parts if state != EMPTY else frozenset(),
                            v["transactionStartTimestampMs"],
                            v["transactionLastUpdateTimestampMs"])


__all__ = ["TransactionCoordinator", "TxnMetadata", "fenced_for", "txn_key", "txn_value"]
