"""What one node tells of its partitions' logs and of the cluster it is, beyond Metadata:
OffsetForLeaderEpoch (the leader-epoch cache), DescribeProducers (the producer state),
DescribeTopicPartitions (Metadata's partitions, paged), ListPartitionReassignments and
DescribeClientQuotas (a single node has neither, and says so) - after
``KafkaApis.handleOffsetForLeaderEpochRequest`` / ``ReplicaManager.lastOffsetForLeaderEpoch``
/ ``Partition.lastOffsetForLeaderEpoch``, ``KafkaApis.handleDescribeProducersRequest`` /
``UnifiedLog.activeProducers``, ``DescribeTopicPartitionsRequestHandler`` /
``KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse``,
``ReplicationControlManager.listPartitionReassignments`` and ``ClientQuotasImage.describe``.

Each checks what KafkaApis checks with an authorizer: OffsetForLeaderEpoch CLUSTER_ACTION
on the cluster or DESCRIBE on each topic, DescribeProducers READ on each topic,
DescribeTopicPartitions DESCRIBE on each topic (the others left out of "all" and
answered TOPIC_AUTHORIZATION_FAILED when named), ListPartitionReassignments DESCRIBE and
DescribeClientQuotas DESCRIBE_CONFIGS on the cluster.

Handlers take a parsed :class:`~kafkalog_cli.protocol.wire.Request` and return a
response body; none awaits.
"""

from __future__ import annotations

from ..errors import InvalidArgumentError
from ..javaorder import hash_map_order
from ..protocol.errors import Errors
from ..schema.flexible import ZERO_UUID
from ..storage.files import validate_topic_name
from ..storage.leader_epoch import LeaderEpochCache
from .catalog import Topic, is_internal
from .handlers import ApiHandlers
from .security.acls import AclOperation, ResourceType

#: AclOperation codes a topic supports (READ..ALTER_CONFIGS), as a 32-bit field: what the
#: broker reports without an authorizer (AuthHelper.authorizedOperations)
TOPIC_AUTHORIZED_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
#: max.request.partition.size.limit's default: the most partitions one
#: DescribeTopicPartitions answer holds
MAX_REQUEST_PARTITION_SIZE_LIMIT = 2000
#: Errors.UNKNOWN_TOPIC_OR_PARTITION's default message
UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."
#: ClientQuotaFilterComponent's entity types and match types
_QUOTA_ENTITY_TYPES = ("ip", "user", "client-id")
_MATCH_EXACT, _MATCH_DEFAULT, _MATCH_SPECIFIED = 0, 1, 2


def partition_states(topic: Topic, node_id: int, start: int = 0,
                     stop: int | None = None) -> list[dict]:
    """The partitions ``[start, stop)`` of ``topic`` as the metadata cache describes them
    (``MetadataResponsePartition`` / ``DescribeTopicPartitionsResponsePartition`` fields):
    a served one led by ``node_id``; an offline one (its log does not load here) with no
    leader, ``LEADER_NOT_AVAILABLE`` and this node in ``offlineReplicas``."""
    out = []
    for p in sorted(topic.partitions.keys() | topic.offline.keys()):
        if p < start or (stop is not None and p >= stop):
            continue
        part = topic.partitions.get(p)
        if part is None:  # its log dir is offline here: no leader (KRaftMetadataCache)
            out.append({"errorCode": int(Errors.LEADER_NOT_AVAILABLE), "partitionIndex": p,
                        "leaderId": -1, "leaderEpoch": -1, "replicaNodes": [node_id],
                        "isrNodes": [node_id], "offlineReplicas": [node_id]})
        else:
            out.append({"errorCode": 0, "partitionIndex": p, "leaderId": node_id,
                        "leaderEpoch": part.leader_epoch, "replicaNodes": [node_id],
                        "isrNodes": [node_id], "offlineReplicas": []})
    return out


def end_offset_for_epoch(part, epoch: int) -> tuple[int, int]:
    """``UnifiedLog.endOffsetForEpoch`` of a served partition: ``(leader epoch, end
    offset)`` from its leader-epoch cache, ``(-1, -1)`` when the cache does not know."""
    return LeaderEpochCache(part.epochs).end_offset_for(epoch, part.log_end_offset)


class DescribeApis(ApiHandlers):
    """The handlers of this module over ``catalog``; ``options`` is the server's
    :class:`~kafkalog_cli.server.kafka_apis.ServerOptions`."""

    # -- OffsetForLeaderEpoch --------------------------------------------------------------

    def handle_offset_for_leader_epoch(self, req) -> dict:
        """The end offset of each requested leader epoch (a consumer's truncation check
        after a leader change, KIP-320), with ``currentLeaderEpoch`` fenced as a fetch is."""
        topics = []
        allowed = None
        if self.auth.enabled and not self.auth.authorize_cluster(req, AclOperation.CLUSTER_ACTION,
                                                                 log_if_denied=False):
            allowed = self.auth.filter_by_authorized(req, AclOperation.DESCRIBE,
                                                     ResourceType.TOPIC,
                                                     [t["topic"] for t in req.body["topics"]])
        for t in req.body["topics"]:
            parts = []
            for p in t["partitions"]:
                idx = p["partition"]
                res = {"errorCode": 0, "partition": idx, "leaderEpoch": -1, "endOffset": -1}
                parts.append(res)
                part = self.catalog.partition(t["topic"], idx)
                current = p.get("currentLeaderEpoch", -1)
                if allowed is not None and t["topic"] not in allowed:
                    res["errorCode"] = int(Errors.TOPIC_AUTHORIZATION_FAILED)
                elif part is None:
                    res["errorCode"] = int(self.catalog.partition_error(t["topic"], idx))
                elif current != -1 and current != part.leader_epoch:
                    res["errorCode"] = int(Errors.FENCED_LEADER_EPOCH if current <
                                           part.leader_epoch else Errors.UNKNOWN_LEADER_EPOCH)
                else:
                    epoch, end = end_offset_for_epoch(part, p["leaderEpoch"])
                    if end != -1:
                        res["leaderEpoch"], res["endOffset"] = epoch, end
            topics.append({"topic": t["topic"], "partitions": parts})
        return {"throttleTimeMs": 0, "topics": topics}

    # -- DescribeProducers -----------------------------------------------------------------

    def handle_describe_producers(self, req) -> dict:
        """The active producers of each requested partition (``kafka-transactions.sh
        describe-producers``): the producer state as this node holds it."""
        topics = []
        for t in req.body["topics"]:
            name = t["name"]
            error, message = Errors.NONE, None
            if not self.auth.authorize(req, AclOperation.READ, ResourceType.TOPIC, name):
                error = Errors.TOPIC_AUTHORIZATION_FAILED
            else:
                try:
                    validate_topic_name(name)
                except InvalidArgumentError as e:
                    error, message = Errors.INVALID_TOPIC_EXCEPTION, e.message
                else:
                    if name not in self.catalog.topics:
                        # new ApiError(error): the error's default message
                        error, message = (Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                          UNKNOWN_TOPIC_MESSAGE)
            parts = []
            for idx in t["partitionIndexes"]:
                res = {"partitionIndex": idx, "errorCode": int(error), "errorMessage": message,
                       "activeProducers": []}
                parts.append(res)
                if error:
                    continue
                part = self.catalog.partition(name, idx)
                if part is None:
                    res["errorCode"] = int(self.catalog.partition_error(name, idx))
                else:
                    res["activeProducers"] = _active_producers(part)
            topics.append({"name": name, "partitions": parts})
        return {"throttleTimeMs": 0, "topics": topics}

    # -- DescribeTopicPartitions -----------------------------------------------------------

    def handle_describe_topic_partitions(self, req) -> dict:
        """Metadata's topics and partitions in name order, at most
        ``responsePartitionLimit`` partitions an answer, continued from ``cursor``."""
        body = req.body
        cursor = body.get("cursor")
        after = cursor["topicName"] if cursor else ""
        fetch_all = not body["topics"]
        names = set(self.catalog.topics) if fetch_all else {t["name"] for t in body["topics"]}
        names = {n for n in names if n >= after}
        problem = None
        if not fetch_all and cursor is not None and cursor["topicName"] not in names:
            problem = ("DescribeTopicPartitionsRequest topic list should contain the cursor "
                       f"topic: {cursor['topicName']}")
        elif cursor is not None and cursor["partitionIndex"] < 0:
            problem = "DescribeTopicPartitionsRequest cursor partition must be valid"
        # (an InvalidRequestException: its message is not in the answer)
        if problem is not None:
            # InvalidRequestException: DescribeTopicPartitionsRequest.getErrorResponse
            return {"throttleTimeMs": 0, "nextCursor": None, "topics": [
                {"errorCode": int(Errors.INVALID_REQUEST), "name": t["name"],
                 "topicId": ZERO_UUID, "isInternal": False, "partitions": [],
                 "topicAuthorizedOperations": -2**31} for t in body["topics"]]}
        limit = max(min(MAX_REQUEST_PARTITION_SIZE_LIMIT, body["responsePartitionLimit"]), 1)
        denied = []
        if self.auth.enabled:
            allowed = self.auth.filter_by_authorized(req, AclOperation.DESCRIBE,
                                                     ResourceType.TOPIC, sorted(names))
            denied = [] if fetch_all else [
                {"errorCode": int(Errors.TOPIC_AUTHORIZATION_FAILED), "name": n,
                 "topicId": ZERO_UUID, "isInternal": False, "partitions": [],
                 "topicAuthorizedOperations": -2**31} for n in sorted(names - allowed)]
            names = allowed
        topics, next_cursor = self._describe_topics(req, sorted(names), cursor, limit,
                                                    fetch_all)
        return {"throttleTimeMs": 0, "topics": topics + denied, "nextCursor": next_cursor}

    def _describe_topics(self, req, names, cursor, remaining, fetch_all):
        topics = []
        node = self.options.node_id
        for name in names:
            if remaining == 0:
                # the cursor points at the start of the next topic, known or not
                return topics, {"topicName": name, "partitionIndex": 0}
            topic = self.catalog.topics.get(name)
            if topic is None:
                if not fetch_all:
                    topics.append(_unknown_topic(name))
                continue
            start = cursor["partitionIndex"] if cursor and cursor["topicName"] == name else 0
            count = max(topic.partitions.keys() | topic.offline.keys(), default=-1) + 1
            upper = min(count, start + remaining)
            parts = partition_states(topic, node, start, upper)
            for p in parts:
                p["eligibleLeaderReplicas"], p["lastKnownElr"] = [], []
            topics.append({"errorCode": 0, "name": name, "topicId": topic.topic_id,
                           "isInternal": is_internal(name), "partitions": parts,
                           "topicAuthorizedOperations": self.auth.authorized_operations(
                               req, ResourceType.TOPIC, name)})
            if upper < count:
                return topics, {"topicName": name, "partitionIndex": upper}
            remaining -= len(parts)
        return topics, None

    # -- ListPartitionReassignments, DescribeClientQuotas ----------------------------------

    def handle_list_partition_reassignments(self, req) -> dict:
        """No reassignment is ever under way on one node: an empty list, whatever the
        topics asked (the controller leaves out unknown ones)."""
        if not self.auth.authorize_cluster(req, AclOperation.DESCRIBE):
            return {"throttleTimeMs": 0, "errorCode": int(Errors.CLUSTER_AUTHORIZATION_FAILED),
                    "errorMessage": None, "topics": []}
        return {"throttleTimeMs": 0, "errorCode": 0, "errorMessage": None, "topics": []}

    def handle_describe_client_quotas(self, req) -> dict:
        """The filter checked as ``ClientQuotasImage.describe`` checks it; no entity has a
        quota here (serve enforces none), so a valid filter matches nothing."""
        if not self.auth.authorize_cluster(req, AclOperation.DESCRIBE_CONFIGS):
            return {"throttleTimeMs": 0, "errorCode": int(Errors.CLUSTER_AUTHORIZATION_FAILED),
                    "errorMessage": None, "entries": None}
        problem = _quota_filter_problem(req.body["components"])
        if problem is not None:
            error, message = problem
            return {"throttleTimeMs": 0, "errorCode": int(error), "errorMessage": message,
                    "entries": None}
        return {"throttleTimeMs": 0, "errorCode": 0, "errorMessage": "", "entries": []}


def _unknown_topic(name: str) -> dict:
    try:
        validate_topic_name(name)
        error = Errors.UNKNOWN_TOPIC_OR_PARTITION
    except InvalidArgumentError:
        error = Errors.INVALID_TOPIC_EXCEPTION
    return {"errorCode": int(error), "name": name, "topicId": ZERO_UUID,
            "isInternal": is_internal(name), "partitions": [],
            "topicAuthorizedOperations": TOPIC_AUTHORIZED_OPERATIONS}


def _active_producers(part) -> list[dict]:
    """``UnifiedLog.activeProducers``: the producer state's entries in the order of
    its ``HashMap<Long, ProducerStateEntry>``."""
    state = part.producer_state()
    by_id = state.producers
    order = hash_map_order(by_id, lambda pid: (pid ^ (pid >> 32)) & 0xFFFFFFFF)
    return [{"producerId": pid, "producerEpoch": e.producer_epoch, "lastSequence": e.last_seq,
             "lastTimestamp": e.last_timestamp, "coordinatorEpoch": e.coordinator_epoch,
             "currentTxnStartOffset": -1 if e.current_txn_first_offset is None
             else e.current_txn_first_offset}
            for pid in order for e in (by_id[pid],)]


def _quota_filter_problem(components: list[dict]):
    """``(error, message)`` for a filter ``ClientQuotasImage.describe`` refuses, else None."""
    exact: dict = {}
    typed: set = set()
    for c in components:
        kind = c["entityType"]
        if not kind:
            return Errors.INVALID_REQUEST, "Invalid empty entity type."
        if kind in exact or kind in typed:
            return (Errors.INVALID_REQUEST,
                    f"Entity type {kind} cannot appear more than once in the filter.")
        if kind not in _QUOTA_ENTITY_TYPES:
            return Errors.UNSUPPORTED_VERSION, f"Unsupported entity type {kind}"
        match = c["matchType"]
        if match == _MATCH_EXACT:
            if c["match"] is None:
                return (Errors.INVALID_REQUEST,
                        "Request specified MATCH_TYPE_EXACT, but set match string to null.")
            exact[kind] = c["match"]
        elif match in (_MATCH_DEFAULT, _MATCH_SPECIFIED):
            if c["match"] is not None:
                which = "DEFAULT" if match == _MATCH_DEFAULT else "SPECIFIED"
                return (Errors.INVALID_REQUEST, f"Request specified MATCH_TYPE_{which}, but "
                        "also specified a match string.")
            (exact.__setitem__(kind, None) if match == _MATCH_DEFAULT else typed.add(kind))
        else:
            return Errors.INVALID_REQUEST, f"Unknown match type {match}"
    named = exact.keys() | typed
    if "ip" in named and ("user" in named or "client-id" in named):
        return (Errors.INVALID_REQUEST, "Invalid entity filter component combination. IP "
                "filter component should not be used with user or clientId filter component.")
    return None
