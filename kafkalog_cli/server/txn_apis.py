"""The transaction request handlers, after ``KafkaApis`` (InitProducerId - an idempotent
producer's too -, AddPartitionsToTxn v0-3, AddOffsetsToTxn, EndTxn, TxnOffsetCommit,
DescribeTransactions, ListTransactions) over :mod:`.transactions` and the group
coordinator.

Each handler takes a parsed :class:`~kafkalog_cli.protocol.wire.Request` and returns a
response body. ``--read-only``: every transactional request gets
``TRANSACTIONAL_ID_AUTHORIZATION_FAILED`` (a broker's answer without WRITE on the id);
Describe/ListTransactions answer from the loaded state.
"""

from __future__ import annotations

import time

import re2

from ..errors import AppendError
from ..protocol.errors import Errors
from ..protocol.wire import Request
from .catalog import LogDirCatalog, is_internal
from .classic_group import OffsetAndMetadata
from .coordinator_log import OFFSETS_TOPIC, CoordinatorTopic
from .group_apis import coordinator_write_error
from .group_log import offset_key, offset_value
from .groups import GroupCoordinator
from .handlers import ApiHandlers, Reply
from .security.acls import AclOperation, ResourceType
from .transactions import TransactionCoordinator, fenced_for

_AUTH = Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


#: RE2 without its error log on stderr (a refused pattern is answered, not logged)
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


class TxnApis(ApiHandlers):
    """The transaction handlers of one node."""

    def __init__(self, catalog: LogDirCatalog, options, coordinator: TransactionCoordinator,
                 groups: GroupCoordinator, offsets_topic: CoordinatorTopic, auth=None):
        super().__init__(catalog, options, auth)
        self.txn = coordinator
        self.groups = groups
        self.offsets_topic = offsets_topic

    def handle_init_producer_id(self, req: Request) -> Reply:
        """``KafkaApis.handleInitProducerIdRequest``: WRITE on the transactional id, or -
        idempotent - IDEMPOTENT_WRITE on the cluster or WRITE on some topic
        (``authorizeByResourceType``)."""
        txn_id = req.body["transactionalId"]
        if txn_id is not None:
            if not self.auth.authorize(req, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                                       txn_id):
                return Reply({"throttleTimeMs": 0, "errorCode": int(
                    Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED), "producerId": -1,
                    "producerEpoch": -1})
        elif not self.auth.authorize_cluster(req, AclOperation.IDEMPOTENT_WRITE,
                                             log_if_denied=False) and \
                not self.auth.authorize_by_resource_type(req, AclOperation.WRITE,
                                                         ResourceType.TOPIC):
            return Reply({"throttleTimeMs": 0, "errorCode": int(
                Errors.CLUSTER_AUTHORIZATION_FAILED), "producerId": -1, "producerEpoch": -1})
        if self.options.read_only and req.body["transactionalId"] is None:
            # an idempotent producer writes: as a broker answers a client without the
            # IdempotentWrite / Write permission
            return Reply({"throttleTimeMs": 0,
                          "errorCode": int(Errors.CLUSTER_AUTHORIZATION_FAILED),
                          "producerId": -1, "producerEpoch": -1})
        if req.body["transactionalId"] is not None:
            return Reply(self.init_producer_id(req.body, req.api_version))
        # TransactionCoordinator.handleInitProducerId with a null transactionalId: always a
        # new producer id, epoch 0
        return Reply({"throttleTimeMs": 0, "errorCode": 0,
                      "producerId": self.catalog.allocate_producer_id(), "producerEpoch": 0})

    def init_producer_id(self, body: dict, version: int) -> dict:
        """handleInitProducerIdRequest with a transactional id."""
        if self.options.read_only:
            error, pid, epoch = _AUTH, -1, -1
        else:
            expected = None
            if version >= 3 and body.get("producerId", -1) != -1:
                expected = (body["producerId"], body["producerEpoch"])
            error, pid, epoch = self.txn.init_producer_id(
                body["transactionalId"], body["transactionTimeoutMs"], expected)
        return {"throttleTimeMs": 0, "errorCode": int(fenced_for(version, 4, error)),
                "producerId": pid, "producerEpoch": epoch}

    def handle_add_partitions_to_txn(self, req) -> dict:
        """v0-3: WRITE on the transactional id (else every partition
        TRANSACTIONAL_ID_AUTHORIZATION_FAILED); topics not writable (internal ones
        excepted) -> TOPIC_AUTHORIZATION_FAILED, unknown partitions ->
        UNKNOWN_TOPIC_OR_PARTITION, and then the others OPERATION_NOT_ATTEMPTED (nothing
        added); else the coordinator's answer for all."""
        body = req.body
        v = req.api_version
        topics = body["v3AndBelowTopics"]
        wanted = [(t["name"], p) for t in topics for p in t["partitions"]]
        txn_id = body["v3AndBelowTransactionalId"]
        writable = self.auth.filter_by_authorized(
            req, AclOperation.WRITE, ResourceType.TOPIC,
            [t for t, _ in wanted if not is_internal(t)])
        denied = {tp for tp in wanted if tp[0] not in writable and not is_internal(tp[0])}
        missing = {tp for tp in wanted if self.catalog.partition(*tp) is None}
        if not self.auth.authorize(req, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                                   txn_id):
            errors = dict.fromkeys(wanted, _AUTH)
        elif self.options.read_only:
            errors = dict.fromkeys(wanted, _AUTH)
        elif missing or denied:
            errors = {tp: (Errors.TOPIC_AUTHORIZATION_FAILED if tp in denied else
                           self.catalog.partition_error(*tp) if tp in missing
                           else Errors.OPERATION_NOT_ATTEMPTED) for tp in wanted}
        else:
            e = self.txn.add_partitions(body["v3AndBelowTransactionalId"],
                                        body["v3AndBelowProducerId"],
                                        body["v3AndBelowProducerEpoch"], set(wanted))
            errors = dict.fromkeys(wanted, fenced_for(v, 2, e))
        by_topic: dict[str, list[dict]] = {}
        for (t, p), e in errors.items():
            by_topic.setdefault(t, []).append({"partitionIndex": p,
                                               "partitionErrorCode": int(e)})
        return {"throttleTimeMs": 0, "resultsByTopicV3AndBelow": [
            {"name": t, "resultsByPartition": ps} for t, ps in by_topic.items()]}

    def handle_add_offsets_to_txn(self, req) -> dict:
        """WRITE on the transactional id, then READ on the group, then the coordinator."""
        if not self.auth.authorize(req, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                                   req.body["transactionalId"]):
            return {"throttleTimeMs": 0, "errorCode": int(_AUTH)}
        if not self.auth.authorize(req, AclOperation.READ, ResourceType.GROUP,
                                   req.body["groupId"]):
            return {"throttleTimeMs": 0, "errorCode": int(Errors.GROUP_AUTHORIZATION_FAILED)}
        return self._producer_request(req, self.txn.add_offsets, "groupId")

    def handle_end_txn(self, req) -> dict:
        """WRITE on the transactional id, then the coordinator."""
        if not self.auth.authorize(req, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                                   req.body["transactionalId"]):
            return {"throttleTimeMs": 0, "errorCode": int(_AUTH), "producerId": -1,
                    "producerEpoch": -1}
        return self._producer_request(req, self.txn.end_txn, "committed")

    def _producer_request(self, req, coordinator_call, argument: str) -> dict:
        """AddOffsetsToTxn and EndTxn: the transaction coordinator's answer to
        (transactionalId, producerId, producerEpoch, the request's ``argument`` field)
        as the error code, PRODUCER_FENCED before v2 as INVALID_PRODUCER_EPOCH
        (:func:`fenced_for`); refused by a read-only server."""
        body = req.body
        if self.options.read_only:
            e = _AUTH
        else:
            e = coordinator_call(body["transactionalId"], body["producerId"],
                                 body["producerEpoch"], body[argument])
        return {"throttleTimeMs": 0, "errorCode": int(fenced_for(req.api_version, 2, e))}

    def handle_txn_offset_commit(self, req) -> dict:
        """handleTxnOffsetCommitRequest: unknown partitions -> UNKNOWN_TOPIC_OR_PARTITION;
        the rest: the transaction must hold the group's ``__consumer_offsets`` partition
        (AddOffsetsToTxn), then the group's checks, then one transactional batch of
        OffsetCommit records, pending in the group until the transaction's marker."""
        body = req.body
        v = req.api_version
        gid = body["groupId"]
        denied = None
        if not self.auth.authorize(req, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                                   body["transactionalId"]):
            denied = _AUTH
        elif not self.auth.authorize(req, AclOperation.READ, ResourceType.GROUP, gid):
            denied = Errors.GROUP_AUTHORIZATION_FAILED
        if denied is not None:  # TxnOffsetCommitRequest.getErrorResponse
            return {"throttleTimeMs": 0, "topics": [
                {"name": t["name"], "partitions": [
                    {"partitionIndex": p["partitionIndex"], "errorCode": int(denied)}
                    for p in t["partitions"]]} for t in body["topics"]]}
        readable = self.auth.filter_by_authorized(req, AclOperation.READ, ResourceType.TOPIC,
                                                  [t["name"] for t in body["topics"]])
        if self.options.read_only:
            error = _AUTH
        else:
            error = self.txn.verify(body["transactionalId"], body["producerId"],
                                    body["producerEpoch"],
                                    (OFFSETS_TOPIC, self.offsets_topic.partition_for(gid)))
            if error is Errors.NONE:
                error = self.groups.txn_commit_check(body, v)
        limit = self.groups.config.offset_metadata_max_bytes
        now = int(time.time() * 1000)
        results: dict[tuple[str, int], Errors] = {}
        taken: dict[tuple[str, int], OffsetAndMetadata] = {}
        for t in body["topics"]:
            for p in t["partitions"]:
                tp = (t["name"], p["partitionIndex"])
                if t["name"] not in readable:
                    results[tp] = Errors.TOPIC_AUTHORIZATION_FAILED
                elif not self.catalog.exists(*tp):
                    results[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                elif error is not Errors.NONE:
                    results[tp] = error
                elif len(p["committedMetadata"] or "") > limit:
                    results[tp] = Errors.OFFSET_METADATA_TOO_LARGE
                else:
                    results[tp] = Errors.NONE
                    taken[tp] = OffsetAndMetadata(p["committedOffset"],
                                                  p.get("committedLeaderEpoch", -1),
                                                  p["committedMetadata"] or "", now)
        if taken:
            try:
                self.offsets_topic.append(
                    gid, [(offset_key(gid, t, p), offset_value(o, self.catalog.topic_id_of(t)))
                          for (t, p), o in taken.items()], producer_id=body["producerId"],
                    producer_epoch=body["producerEpoch"], transactional=True)
            except AppendError as e:
                failed = e.error if e.error in (Errors.INVALID_PRODUCER_EPOCH,
                                                Errors.INVALID_TXN_STATE) \
                    else coordinator_write_error(e.error)
                results.update(dict.fromkeys(taken, failed))
            else:
                self.groups.store_txn_offsets(body["producerId"], gid, taken)
        by_topic: dict[str, list[dict]] = {}
        for (t, p), e in results.items():
            by_topic.setdefault(t, []).append({"partitionIndex": p, "errorCode": int(e)})
        return {"throttleTimeMs": 0, "topics": [{"name": t, "partitions": ps}
                                                for t, ps in by_topic.items()]}

    def handle_describe_transactions(self, req) -> dict:
        """DESCRIBE on each transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
        only the partitions of topics the principal may DESCRIBE."""
        out = []
        for tid in req.body["transactionalIds"]:
            if not self.auth.authorize(req, AclOperation.DESCRIBE,
                                       ResourceType.TRANSACTIONAL_ID, tid):
                # a TransactionState with only the error and the id set (defaults: 0, "")
                out.append({"errorCode": int(_AUTH), "transactionalId": tid,
                            "transactionState": "", "transactionTimeoutMs": 0,
                            "transactionStartTimeMs": 0, "producerId": 0,
                            "producerEpoch": 0, "topics": []})
                continue
            state = self.txn.describe(tid)
            if self.auth.enabled:
                state["topics"] = [t for t in state["topics"] if self.auth.authorize(
                    req, AclOperation.DESCRIBE, ResourceType.TOPIC, t["topic"])]
            out.append(state)
        return {"throttleTimeMs": 0, "transactionStates": out}

    def handle_list_transactions(self, req) -> dict:
        """Only the transactional ids the principal may DESCRIBE."""
        body = req.body
        pattern = None
        if body.get("transactionalIdPattern"):
            # the broker compiles it with RE2/J: RE2 here too (google-re2), its syntax and
            # its linear time, whatever pattern a client sends (Python's re backtracks:
            # "(a+)+$" would hold the event loop for minutes)
            try:
                pattern = re2.compile(body["transactionalIdPattern"], options=_RE2_OPTIONS)
            except re2.error:
                return {"throttleTimeMs": 0, "errorCode": int(Errors.INVALID_REGULAR_EXPRESSION),
                        "unknownStateFilters": [], "transactionStates": []}
        unknown, states = self.txn.list(body["stateFilters"], body["producerIdFilters"],
                                        body.get("durationFilter", -1), pattern)
        if self.auth.enabled:
            states = [s for s in states if self.auth.authorize(
                req, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, s["transactionalId"])]
        return {"throttleTimeMs": 0, "errorCode": 0, "unknownStateFilters": unknown,
                "transactionStates": states}
