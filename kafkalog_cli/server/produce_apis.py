"""The Produce handler, after ``KafkaApis.handleProduceRequest`` and the parts of
``ReplicaManager.appendRecords`` (``handleProduceAppend``, the transaction verification of
KIP-890 part 1, ``processFailedRecord``) and ``Partition.appendRecordsToLeader`` a single
node needs, with ``ProduceRequest.validateRecords`` and
``RequestUtils.hasTransactionalRecords``.

:meth:`ProduceApis.handle_produce` takes a parsed
:class:`~kafkalog_cli.protocol.wire.Request` and returns a
:class:`~.handlers.Reply`, :data:`~.handlers.NO_RESPONSE` (acks=0), or raises
:class:`~kafkalog_cli.errors.CloseConnection`. It awaits the validation of its batches on
worker threads (:mod:`.workers`) unless a batch is small and uncompressed
(:func:`_validates_inline`); the appends run on the event-loop thread.
"""

from __future__ import annotations

import asyncio
import logging
import struct

from ..constants import (
    CODEC_ZSTD,
    COMPRESSION_CODEC_MASK,
    DECODE_CHUNK_BYTES,
    MAGIC_V0,
    MAGIC_V2,
    TRANSACTIONAL_FLAG_MASK,
)
from ..errors import AppendError, CloseConnection, CorruptRecordError
from ..format.compiled import SPEEDUPS
from ..format.records import FileRecords
from ..protocol.apis import ApiKeys
from ..protocol.errors import Errors
from ..protocol.wire import Request
from ..schema.legacy import HEADER_SIZE_UP_TO_MAGIC
from ..schema.legacy import RECORD_OVERHEAD_V0 as LEGACY_RECORD_OVERHEAD_V0
from ..schema.record_batch import (
    ATTRIBUTES_OFFSET,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    PRODUCER_EPOCH_OFFSET,
    PRODUCER_ID_OFFSET,
)
from .catalog import is_internal
from .handlers import NO_RESPONSE, ApiHandlers, Reply
from .metrics import BrokerTopicStats
from .security.acls import AclOperation, ResourceType
from .storage_adapter import READ_ONLY_ERROR
from .transactions import TransactionCoordinator
from .workers import WorkerPool

log = logging.getLogger("kafkalog.serve")

ADMIN_CLIENT_ID = "__admin_client"
_INT32 = struct.Struct(">i")
_INT8 = struct.Struct(">b")
_INT16 = struct.Struct(">h")
_INT64 = struct.Struct(">q")


def _partition_error(index: int, error: Errors) -> dict:
    # new PartitionResponse(error): INVALID_OFFSET, NO_TIMESTAMP, INVALID_OFFSET
    return {"index": index, "errorCode": int(error), "baseOffset": -1, "logAppendTimeMs": -1,
            "logStartOffset": -1}


class ProduceApis(ApiHandlers):
    """The Produce handler of one node over ``catalog``; ``options`` is the server's
    :class:`~kafkalog_cli.server.kafka_apis.ServerOptions`; ``stats`` the broker's topic
    meters; ``txn`` the transaction coordinator that verifies a transactional batch's
    partition; ``workers`` the pool validating batches off the event loop (owned by
    ``KafkaApis``); ``on_append()`` is called once a request appended anything (it wakes
    the delayed fetches)."""

    #: handlers that await
    AWAITING = frozenset({ApiKeys.PRODUCE})

    def __init__(self, catalog, options, stats: BrokerTopicStats,
                 txn: TransactionCoordinator, workers: WorkerPool, on_append, auth=None):
        super().__init__(catalog, options, auth)
        self.stats = stats
        self.txn = txn
        self.workers = workers
        self._notify_append = on_append

    async def handle_produce(self, req: Request):
        """KafkaApis.handleProduceRequest -> ReplicaManager.appendRecords, in Kafka's order:
        the transactional check over every partition first (a whole-request error), then
        per topic-partition (the request is keyed by it: a partition named twice gets one
        append, of its last valid batch, and one response entry) existence and
        ``ProduceRequest.validateRecords``, then the appends. Each batch is validated on a
        worker thread unless its work is small (:func:`_validates_inline`: up to 64 KiB,
        and compressed only with the compiled core, a decompressed bound of at most the
        default max.message.bytes and no re-compression)."""
        body = req.body
        v = req.api_version
        acks = body["acks"]
        ids = self._name_produce_topics(body) if v >= 13 else None
        try:
            has_transactional = _has_transactional_records(body["topicData"])
        except CorruptRecordError as e:
            # an exception out of handleProduceRequest: RequestHandlerHelper.handleError
            return self._produce_error_response(req, Errors.CORRUPT_MESSAGE, e.message)
        if has_transactional and (body["transactionalId"] is None or not self.auth.authorize(
                req, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, body["transactionalId"])):
            # ApiError.fromThrowable leaves out a message equal to the error's default one
            return self._produce_error_response(req, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        writable = self.auth.filter_by_authorized(req, AclOperation.WRITE, ResourceType.TOPIC,
                                                  [td["name"] for td in body["topicData"]])
        slots: dict[tuple[str, int], dict] = {}  # response entries, first-seen order
        missing: dict[tuple[str, int], Errors] = {}  # unauthorizedTopicResponses (no WRITE,
        # --read-only), nonExistingTopicResponses (or offline)
        invalid: dict[tuple[str, int], Errors] = {}  # invalidRequestResponses
        authorized: dict[tuple[str, int], tuple] = {}  # authorizedRequestInfo
        for td in body["topicData"]:
            name = td["name"]
            for pd in td["partitionData"]:
                idx = pd["index"]
                tp = (name, idx)
                slots.setdefault(tp, {"index": idx})
                if ids is not None and name not in self.catalog.topics:
                    missing[tp] = Errors.UNKNOWN_TOPIC_ID
                    continue
                if name not in writable:
                    missing[tp] = Errors.TOPIC_AUTHORIZATION_FAILED
                    continue
                if self.options.read_only:  # no WRITE on any topic: nothing is validated
                    missing[tp] = READ_ONLY_ERROR
                    continue
                part = self.catalog.partition(name, idx)
                if part is None:
                    missing[tp] = self.catalog.partition_error(name, idx)
                    continue
                records = pd["records"]
                error, batch = _validate_records(v, records)
                if error is not Errors.NONE:
                    invalid[tp] = error
                    continue
                if batch.size != len(records):
                    records = records[:batch.size]  # trimInvalidBytes
                authorized[tp] = (records, part)
        # ReplicaManager.handleProduceAppend: the producers of the transactional batches
        txn_parts = {tp for tp, (records, _) in authorized.items()
                     if _is_transactional_batch(records)}
        if len({_producer_of(authorized[tp][0]) for tp in txn_parts}) > 1:
            return self._produce_error_response(
                req, Errors.INVALID_PRODUCER_ID_MAPPING,
                "Transactional records contained more than one producer ID")
        pending = []
        for tp, (records, part) in authorized.items():
            slot = slots[tp]
            if tp in txn_parts and body["transactionalId"] is not None and (
                    error := self.txn.verify(body["transactionalId"], *_producer_of(records),
                                             tp)) is not Errors.NONE:
                # the partition must be in the producer's transaction (the coordinator's
                # verification, KIP-890 part 1), asked before appendRecords checks the acks
                error, message = _verification_error(error, v)
                slot.update(_partition_error(tp[1], error))
                if message is not None:
                    slot["errorMessage"] = message
            elif acks not in (-1, 0, 1):
                slot.update(_partition_error(tp[1], Errors.INVALID_REQUIRED_ACKS))
            else:
                pending.append((tp[0], slot, records, part))
        internal_allowed = req.client_id == ADMIN_CLIENT_ID
        appended = False
        for name, slot, records, part in pending:
            self.stats.mark(name, "TotalProduceRequestsPerSec")
            if is_internal(name) and not internal_allowed:
                slot.update(_partition_error(slot["index"], Errors.INVALID_TOPIC_EXCEPTION))
                continue
            topic = self.catalog.topics.get(name)
            if topic is None:  # deleted while an earlier partition was being validated
                slot.update(_partition_error(slot["index"], Errors.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            # acks=-1 and min.insync.replicas: Partition.appendRecordsToLeader compares the
            # ISR with effectiveMinIsr, min.insync.replicas capped at the replica count
            # (KAFKA-15583, Kafka 3.7): one replica, so the ISR {this node} always suffices
            try:
                info = await self._append(part, records)
            except AppendError as e:
                slot.update(_partition_error(slot["index"], e.error))
                if e.failed_record:
                    # ReplicaManager.processFailedRecord
                    slot["logStartOffset"] = part.log_start_offset
                    self.stats.mark(name, "FailedProduceRequestsPerSec")
                if e.record_errors:
                    slot["recordErrors"] = [{"batchIndex": i, "batchIndexErrorMessage": m}
                                            for i, m in e.record_errors]
                if e.error_message is not None:
                    slot["errorMessage"] = e.error_message
                log.debug("produce to %s-%d failed: %s %s", name, slot["index"], e.error.name, e)
                continue
            appended = appended or not info.duplicate
            self.stats.mark(name, "BytesInPerSec", len(records))
            # LogAppendInfo.numMessages: a duplicate's records count too
            self.stats.mark(name, "MessagesInPerSec", info.record_count)
            slot.update({"errorCode": 0, "baseOffset": info.base_offset,
                         "logAppendTimeMs": info.log_append_time,
                         "logStartOffset": info.log_start_offset})
        if appended:
            self._notify_append()
        # sendResponseCallback: responseStatus ++ nonExisting ++ invalidRequest responses
        for tp, error in (*missing.items(), *invalid.items()):
            slots[tp] = _partition_error(tp[1], error)
        if acks == 0:
            errors = [(n, p, Errors(s["errorCode"]).name) for (n, p), s in slots.items()
                      if s["errorCode"]]
            if errors:
                raise CloseConnection(
                    f"error during produce request with correlation id {req.correlation_id} "
                    f"from client id {req.client_id} with ack=0: " +
                    ", ".join(f"{n}-{p}: {e}" for n, p, e in errors))
            return NO_RESPONSE
        return Reply({"responses": _by_topic(slots, ids), "throttleTimeMs": 0})

    def _name_produce_topics(self, body: dict) -> dict[str, str]:
        """Produce v13+ names topics by id (KIP-516): each ``topicData`` entry gets the
        name of its id (an unknown id a name no topic can have); returns name -> id."""
        ids = {}
        for td in body["topicData"]:
            topic = self.catalog.by_id.get(td["topicId"])
            td["name"] = topic.name if topic is not None else "\0" + td["topicId"]
            ids[td["name"]] = td["topicId"]
        return ids

    def _produce_error_response(self, req: Request, error: Errors, message: str | None = None):
        """ProduceRequest.getErrorResponse: every topic-partition of the request (once)
        with ``error`` and nothing appended; for acks=0 the connection is closed instead
        (RequestHandlerHelper.sendErrorOrCloseConnection)."""
        body = req.body
        if body["acks"] == 0:
            raise CloseConnection(f"{error.name} for produce request with correlation id "
                                  f"{req.correlation_id} from client id {req.client_id} "
                                  "with ack=0")
        slots = {}
        ids = self._name_produce_topics(body) if req.api_version >= 13 else None
        for td in body["topicData"]:
            for pd in td["partitionData"]:
                slots[(td["name"], pd["index"])] = {
                    **_partition_error(pd["index"], error), "recordErrors": [],
                    "errorMessage": message}
        return Reply({"responses": _by_topic(slots, ids), "throttleTimeMs": 0})

    async def _append(self, part, records):
        """Validate ``records`` for ``part`` (on a worker thread unless
        :func:`_validates_inline`), then append on this thread. One validation per
        partition at a time; a validation made stale by another writer is redone.

        Raises:
            AppendError: with the Kafka error code.
        """
        lock = part.append_lock
        inline = _validates_inline(records, part.log.config)
        if inline and (lock is None or not lock.locked()):
            # nothing to wait for: validated and written without yielding
            return part.append_validated(part.validate(records))
        if lock is None:
            lock = part.append_lock = asyncio.Lock()
        async with lock:
            while True:
                if inline:
                    validated = part.validate(records)
                else:
                    validated = await self.workers.run(part.validate, records)
                if not part.is_stale(validated):
                    return part.append_validated(validated)
                if part.log.closed:  # deleted meanwhile
                    raise AppendError(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                      "This server does not host this topic-partition.")


#: a batch at most this large is validated on the event loop: its work is bounded by its
#: size (and, compressed, by :data:`INLINE_DECOMPRESSED_BYTES`), a few ms at most, and a
#: hand-over to a worker thread (a queue, a thread switch, the GIL, a wake-up of the loop)
#: costs more than validating the batch a producer sends (batch.size 16 KiB)
INLINE_VALIDATION_BYTES = 64 * 1024
#: a compressed batch is validated inline when its topic's max.message.bytes (the bound on
#: its decompressed records, see storage.validator) is at most this - Kafka's default,
#: DECODE_CHUNK_BYTES + 12: records that arrive as one piece, walked in C at once (~4 ms
#: for the worst, 95,000 records of 11 bytes; a larger block is cut into pieces in
#: Python, ~15 times slower) - its records are written as sent (no re-compression:
#: compression.type ``producer`` or the same codec) and the compiled core is in use (the
#: pure-Python walk takes ~7 times as long)
INLINE_DECOMPRESSED_BYTES = DECODE_CHUNK_BYTES + 12 if SPEEDUPS else 0


def _validates_inline(records, config) -> bool:
    """Validate ``records`` (one Produce partition's bytes) for a topic of ``config``
    (its LogConfig) on the event loop rather than on a worker thread."""
    if len(records) > INLINE_VALIDATION_BYTES:
        return False
    codec = records[ATTRIBUTES_OFFSET + 1] & COMPRESSION_CODEC_MASK
    return codec == 0 or (config.max_message_bytes <= INLINE_DECOMPRESSED_BYTES
                          and config.target_codec(codec) == codec)


def _by_topic(slots: dict[tuple[str, int], dict],
              ids: dict[str, str] | None = None) -> list[dict]:
    """ProduceResponse's topics from entries keyed by topic-partition (one per topic),
    named by their ids (``ids``: name -> id) from v13 on."""
    topics: dict[str, list[dict]] = {}
    for (name, _), slot in slots.items():
        topics.setdefault(name, []).append(slot)
    if ids is not None:
        return [{"topicId": ids[n], "partitionResponses": out} for n, out in topics.items()]
    return [{"name": n, "partitionResponses": out} for n, out in topics.items()]


def _has_transactional_records(topic_data: list[dict]) -> bool:
    """RequestUtils.hasTransactionalRecords: is the first batch of some partition's records
    transactional. Like ``RequestUtils.flag`` it stops at the first one found, so records
    after it are not read (a corrupt batch there is left to ``validateRecords``).

    Raises:
        CorruptRecordError: see :func:`_first_batch_is_transactional`, for a partition
            read before any transactional batch was found.
    """
    return any(_first_batch_is_transactional(pd["records"]) for td in topic_data
               for pd in td["partitionData"])


def _is_transactional_batch(records) -> bool:
    """A validated v2 batch (``validateRecords`` passed): ``hasProducerId &&
    isTransactional``, as handleProduceAppend filters them."""
    return bool(records[ATTRIBUTES_OFFSET + 1] & TRANSACTIONAL_FLAG_MASK) and \
        _producer_of(records)[0] >= 0


#: the coordinator's verification errors ReplicaManager.handleProduceAppend words as
#: NOT_ENOUGH_REPLICAS (a retriable error old clients retry without a metadata refresh)
_RETRIABLE_VERIFICATION = frozenset({
    Errors.CONCURRENT_TRANSACTIONS, Errors.NETWORK_EXCEPTION,
    Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_COORDINATOR})


def _verification_error(error: Errors, version: int) -> tuple[Errors, str | None]:
    """A verification error as Produce answers it (``AddPartitionsToTxnManager`` then
    ``handleProduceAppend``'s postVerificationCallback): a partition not in the transaction
    is TRANSACTION_ABORTABLE for Produce v11+ (KIP-890), INVALID_TXN_STATE with "Partition
    was not added to the transaction" below; retriable coordinator errors become
    NOT_ENOUGH_REPLICAS and UNKNOWN_PRODUCER_ID OUT_OF_ORDER_SEQUENCE_NUMBER, each with
    "Unable to verify the partition has been added to the transaction. Underlying error:
    <ERROR>"; others as they are, without a message."""
    if error is Errors.INVALID_TXN_STATE:
        if version >= 11:
            return Errors.TRANSACTION_ABORTABLE, None
        return error, "Partition was not added to the transaction"
    unable = ("Unable to verify the partition has been added to the transaction. "
              f"Underlying error: {error.name}")
    if error in _RETRIABLE_VERIFICATION:
        return Errors.NOT_ENOUGH_REPLICAS, unable
    if error is Errors.UNKNOWN_PRODUCER_ID:
        return Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, unable
    return error, None


def _first_batch_is_transactional(records) -> bool:
    """RequestUtils.hasTransactionalRecords for one partition: is the first batch of its
    records transactional, reading them as ``MemoryRecords.batchIterator`` does
    (``ByteBufferLogInputStream.nextBatch``: a partial batch is no batch).

    Raises:
        CorruptRecordError: a size below the v0 record overhead (14 bytes) or a magic
            outside 0..2, with Kafka's message.
    """
    if records is None or len(records) < LOG_OVERHEAD:
        return False
    (size,) = _INT32.unpack_from(records, LENGTH_OFFSET)
    if size < LEGACY_RECORD_OVERHEAD_V0:
        raise CorruptRecordError(f"Record size {size} is less than the minimum record overhead "
                                 f"({LEGACY_RECORD_OVERHEAD_V0})")
    if len(records) < HEADER_SIZE_UP_TO_MAGIC:
        return False
    (magic,) = _INT8.unpack_from(records, MAGIC_OFFSET)
    if not MAGIC_V0 <= magic <= MAGIC_V2:
        raise CorruptRecordError(f"Invalid magic found in record: {magic}")
    if len(records) < LOG_OVERHEAD + size or magic < MAGIC_V2:
        return False
    # the low byte of the int16 attributes holds the codec and transactional bits
    return bool(records[ATTRIBUTES_OFFSET + 1] & TRANSACTIONAL_FLAG_MASK)


def _producer_of(records) -> tuple[int, int]:
    """The producer id and epoch of the first batch (a v2 batch: validated already)."""
    return (_INT64.unpack_from(records, PRODUCER_ID_OFFSET)[0],
            _INT16.unpack_from(records, PRODUCER_EPOCH_OFFSET)[0])


def _validate_records(version: int, records) -> tuple[Errors, object]:
    """ProduceRequest.validateRecords (v3+): exactly one batch, magic 2, no zstd before v7.

    Iterates as ``MemoryRecords.batches()`` does: a partial batch at the end is not a batch
    (trimmed later, as ``UnifiedLog.trimInvalidBytes``), a size below the minimum overhead
    is a CorruptRecordException.
    """
    if not records:
        return Errors.INVALID_RECORD, None
    fr = FileRecords(records)
    it = fr.batches()
    first = next(it, None)
    if first is None:
        return (Errors.CORRUPT_MESSAGE if fr.stop_error else Errors.INVALID_RECORD), None
    if first.magic != MAGIC_V2:
        return Errors.INVALID_RECORD, None
    if version < 7 and first.attributes & COMPRESSION_CODEC_MASK == CODEC_ZSTD:
        return Errors.UNSUPPORTED_COMPRESSION_TYPE, None
    if next(it, None) is not None:
        return Errors.INVALID_RECORD, None
    if fr.stop_error is not None:
        return Errors.CORRUPT_MESSAGE, None
    return Errors.NONE, first
