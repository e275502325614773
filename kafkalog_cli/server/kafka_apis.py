"""The request handlers, after ``KafkaApis`` (and the parts of ``ReplicaManager``,
``Partition`` and the controller a single node needs).

Each ``handle_*`` takes a parsed :class:`~kafkalog_cli.protocol.wire.Request` and returns a
:class:`Reply` (a response body, maybe at another version), a response body dict,
:data:`NO_RESPONSE`, or raises :class:`CloseConnection`. Fetch and ListOffsets are in
:mod:`.fetch_apis`, the admin APIs in :mod:`.admin`, the group APIs in
:mod:`.group_apis`; :meth:`KafkaApis.handle` dispatches to all. Handlers run on the
event-loop thread; Produce awaits the validation of its batches on worker threads
(:mod:`.workers`), Fetch the delayed fetch of ``minBytes``/``maxWaitMs``, JoinGroup /
SyncGroup the group, DeleteRecords its checkpoint write, CreateTopics, CreatePartitions
and DeleteTopics the partition directories made or removed on the files thread.
"""

from __future__ import annotations

import asyncio
import logging
import re
import struct
import time
from collections import Counter
from dataclasses import dataclass

from ..constants import (
    CODEC_ZSTD,
    COMPRESSION_CODEC_MASK,
    MAGIC_V0,
    MAGIC_V2,
    TRANSACTIONAL_FLAG_MASK,
)
from ..errors import (
    AppendError,
    CloseConnection,
    CorruptRecordError,
    InvalidArgumentError,
    InvalidConfigError,
)
from ..format.records import FileRecords
from ..protocol.apis import ApiKeys, api_versions_table
from ..protocol.errors import Errors
from ..protocol.wire import Request
from ..schema.flexible import ZERO_UUID
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
from ..storage.dir_files import random_kafka_uuid
from ..storage.files import validate_topic_name
from . import configs as cfgs
from .admin import (
    EXCESSIVE_BATCH_MESSAGE,
    MAX_RECORDS_PER_USER_OP,
    AdminApis,
)
from .catalog import METADATA_TOPIC, LogDirCatalog, Topic, is_internal, remove_partition_dir
from .coordinator_log import OFFSETS_TOPIC, TRANSACTION_TOPIC, CoordinatorTopic
from .describe_apis import DescribeApis, partition_states
from .fetch_apis import FetchApis
from .group_apis import GroupApis, group_config
from .group_log import GroupLogStore, load_groups, restore
from .groups import GroupCoordinator, GroupStore
from .handlers import SLICE_S, TimeSlices, endpoint_of
from .metrics import BrokerTopicStats
from .security.acls import CLUSTER_NAME, AclOperation, ResourceType
from .security.java_order import java_order
from .security.server_security import ServerSecurity
from .storage_adapter import READ_ONLY_ERROR, READ_ONLY_MESSAGE
from .transactions import TransactionCoordinator
from .txn_apis import TxnApis
from .workers import WorkerPool

log = logging.getLogger("kafkalog.serve")
#: the longest a stop waits for the files thread's job (a batch of partitions being made)
FILES_STOP_WAIT_S = 30.0

ADMIN_CLIENT_ID = "__admin_client"
#: ``new ApiError(TOPIC_AUTHORIZATION_FAILED)``'s message (the error's default)
TOPIC_AUTHORIZATION_FAILED_MESSAGE = "Topic authorization failed."
_INT32 = struct.Struct(">i")
_INT8 = struct.Struct(">b")
_INT16 = struct.Struct(">h")
_INT64 = struct.Struct(">q")
_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


@dataclass
class Reply:
    body: dict
    version: int | None = None


NO_RESPONSE = object()


@dataclass
class ServerOptions:
    host: str = "127.0.0.1"
    port: int = 9092
    node_id: int = 0
    auto_create_topics: bool = False
    num_partitions: int = 1
    #: serve without writing a byte: writes get READ_ONLY_ERROR (see storage_adapter)
    read_only: bool = False


def _partition_error(index: int, error: Errors) -> dict:
    # new PartitionResponse(error): INVALID_OFFSET, NO_TIMESTAMP, INVALID_OFFSET
    return {"index": index, "errorCode": int(error), "baseOffset": -1, "logAppendTimeMs": -1,
            "logStartOffset": -1}


class KafkaApis:
    def __init__(self, catalog: LogDirCatalog, options: ServerOptions,
                 stats: BrokerTopicStats | None = None, *, security=None):
        self.catalog = catalog
        self.options = options
        self.stats = stats or BrokerTopicStats()
        #: the server's security (listeners, authorizer, ACLs, SCRAM credentials); None:
        #: one of no configs (no authorizer, no SASL listener: the security APIs answered
        #: as such a broker answers them), loaded by :meth:`load`
        self._own_security = security is None
        if security is None:
            security = ServerSecurity(catalog, {}, [])
        self.security = security
        self.auth = security.auth
        self._appended = asyncio.Event()
        #: validates Produce batches off the event loop (closed by :meth:`close`)
        self.workers = WorkerPool()
        #: admin changes (topics and partitions made or deleted) one at a time, as the
        #: controller applies them; each may pause between partitions
        self.metadata_lock = asyncio.Lock()
        #: makes and removes partition directories (fsyncs) off the event loop
        self.files = WorkerPool(1, name="kafkalog-files")
        #: logs the files thread made that no request has served yet (see :meth:`close`)
        self._unserved: dict[int, tuple] = {}
        self.admin = AdminApis(catalog, options, self.auth, self.metadata_lock,
                               self.make_partitions)
        #: __consumer_offsets: the group coordinator's records (server/group_log.py)
        self.offsets_topic = CoordinatorTopic(
            catalog, OFFSETS_TOPIC, "offsets.topic.num.partitions",
            "offsets.topic.segment.bytes", on_append=lambda: self._notify_append(),
            base_sequence=0)
        store = GroupStore() if options.read_only else GroupLogStore(
            self.offsets_topic, catalog.topic_id_of)
        self.group_apis = GroupApis(catalog, options,
                                    GroupCoordinator(group_config(catalog), store), self.auth)
        #: __transaction_state and the transaction coordinator (server/transactions.py)
        self.txn_topic = CoordinatorTopic(
            catalog, TRANSACTION_TOPIC, "transaction.state.log.num.partitions",
            "transaction.state.log.segment.bytes", on_append=lambda: self._notify_append())
        self.txn = TransactionCoordinator(
            catalog, self.txn_topic, self.offsets_topic, self.group_apis.groups,
            catalog.allocate_producer_id,
            max_timeout_ms=catalog.broker_configs.int_value("transaction.max.timeout.ms"),
            on_append=lambda: self._notify_append())
        self.txn_apis = TxnApis(catalog, options, self.txn, self.group_apis.groups,
                                self.offsets_topic, self.auth)
        #: the group coordinator (server/groups.py)
        self.groups = self.group_apis.groups
        self.handlers = {
            ApiKeys.PRODUCE: self.handle_produce,
            ApiKeys.METADATA: self.handle_metadata,
            ApiKeys.API_VERSIONS: self.handle_api_versions,
            ApiKeys.CREATE_TOPICS: self.handle_create_topics,
            ApiKeys.DELETE_TOPICS: self.handle_delete_topics,
            ApiKeys.INIT_PRODUCER_ID: self.handle_init_producer_id,
        }
        #: Fetch and ListOffsets (server/fetch_apis.py)
        self.reads = FetchApis(catalog, options, self.stats, lambda: self._appended,
                               self.auth)
        self.handlers.update(self.reads.handlers())
        self.handlers.update(self.admin.handlers())
        self.handlers.update(DescribeApis(catalog, options, self.auth).handlers())
        self.handlers.update(self.group_apis.handlers())
        self.handlers.update(self.txn_apis.handlers())
        self.handlers.update(security.handlers())
        self.handlers[ApiKeys.FIND_COORDINATOR] = self._find_coordinator
        self._awaiting = _AWAITING | AdminApis.AWAITING | GroupApis.AWAITING | \
            FetchApis.AWAITING

    def load(self) -> None:
        """What the coordinators load before the node serves (``GroupMetadataManager`` /
        ``TransactionStateManager`` loading their partitions): the groups and offsets in
        ``__consumer_offsets``, then the transactions in ``__transaction_state`` (those a
        crash left prepared are completed: their markers are written). On the event loop
        (member session timers start).

        The partitions of either topic absent from the log directory are created first
        (not when serving read-only: the keys of those partitions then have no
        coordinator, :meth:`_find_coordinator`).

        Raises:
            CoordinatorLoadError: a partition of either topic that does not load.
        """
        if not self.options.read_only:
            for ct in (self.offsets_topic, self.txn_topic):
                made = ct.create_absent()
                if made:
                    log.info("created the partitions of %s absent from the log directory: %s",
                             ct.name, ", ".join(map(str, made)))
        groups, offsets, pending = load_groups(self.offsets_topic)
        n = restore(self.groups, groups, offsets, pending)
        if n:
            log.info("loaded %d groups from %s", n, OFFSETS_TOPIC)
        n = self.txn.load(complete=not self.options.read_only)
        if n:
            log.info("loaded %d transactional ids from %s", n, TRANSACTION_TOPIC)
        if self._own_security:
            self.security.load()

    def close(self) -> None:
        """Release the worker threads (a validation is abandoned). The files thread ends
        its job first (a batch of partitions being made: about
        :data:`~.handlers.SLICE_S`, up to :data:`FILES_STOP_WAIT_S`), and partitions it
        made that no request served yet (their request ended with the stop) are served
        now, so the catalog's close closes them as LogManager.shutdown closes every log
        it holds: no partition is left with preallocated index files."""
        self.workers.shutdown()
        self.files.shutdown(FILES_STOP_WAIT_S)
        for topic, p, lg in list(self._unserved.values()):
            self.catalog.serve_partition(topic, p, lg)
        self._unserved.clear()

    async def handle(self, request: Request):
        if not self.options.read_only and request.api_key in _COORDINATOR_TOPICS:
            await self._ensure_coordinator_topics(request)
        h = self.handlers[request.api_key]
        result = await h(request) if request.api_key in self._awaiting else h(request)
        return Reply(result) if isinstance(result, dict) else result

    async def make_partitions(self, topic: Topic, partitions) -> None:
        """Create ``partitions`` of ``topic`` (directories, files, fsyncs: seconds for
        many) on the files thread, in batches of about :data:`~.handlers.SLICE_S` of
        work, each partition served as its batch comes back (a topic not yet added is
        served with them): the event loop is not held by the disk. The caller holds
        :attr:`metadata_lock`."""
        todo = list(partitions)
        while todo:
            made = await self.files.run(_open_partitions, self.catalog, topic, todo,
                                        self._unserved)
            for p, lg in made:
                self.catalog.serve_partition(topic, p, lg)
                self._unserved.pop(id(lg), None)
            todo = todo[len(made):]

    async def remove_partitions(self, topic: Topic) -> None:
        """The partitions of a forgotten topic released here, their directories renamed
        and removed on the files thread (all of them in one job)."""
        dirs = [self.catalog.delete_partition(topic, p) for p in list(topic.partitions)]
        await self.files.run(_remove_partition_dirs, dirs, self.catalog.fsync)

    async def _ensure_coordinator_topics(self, request: Request) -> None:
        """AutoTopicCreationManager: the internal topic a group or transaction API writes
        (FindCoordinator: the one of its key type) is created before the API is handled,
        its 50 partitions made off the event loop (the coordinators' own fallback creates
        it at once, on the loop)."""
        topics = _COORDINATOR_TOPICS[request.api_key]
        if request.api_key == ApiKeys.FIND_COORDINATOR:
            key_type = request.body.get("keyType", 0)
            topics = {0: ("offsets",), 1: ("txn",)}.get(key_type, ())
            if topics and not self._may_find(request, key_type):
                topics = ()  # getCoordinator: no DESCRIBE on any key, no lookup
        elif request.api_key == ApiKeys.INIT_PRODUCER_ID and \
                request.body.get("transactionalId") is None:
            topics = ()  # an idempotent producer: no transaction coordinator
        for which in topics:
            ct = self.offsets_topic if which == "offsets" else self.txn_topic
            if ct.exists():
                continue
            async with self.metadata_lock:
                if not ct.exists() and ct.name not in self.catalog.creating:
                    await self._create_topic(ct.name, ct.num_partitions, ct.overrides())
                    log.info("created %s with %d partitions", ct.name, ct.num_partitions)

    def _find_coordinator(self, req: Request):
        """FindCoordinator, after the coordinator's topic is made to exist: the broker
        creates ``__consumer_offsets`` / ``__transaction_state`` on the first lookup
        (``KafkaApis.getCoordinator``), so Metadata lists them from then on (made off the
        event loop by :meth:`_ensure_coordinator_topics` first; ``ensure`` is then a
        no-op)."""
        if not self.options.read_only:
            key_type = req.body.get("keyType", 0)
            topic = {0: self.offsets_topic, 1: self.txn_topic}.get(key_type)
            if topic is not None and self._may_find(req, key_type):
                topic.ensure()
        res = self.group_apis.handle_find_coordinator(req)
        topic = {0: self.offsets_topic, 1: self.txn_topic}.get(req.body.get("keyType", 0))
        if topic is not None:
            for c in res["coordinators"] if "coordinators" in res else [res]:
                why = c["errorCode"] == 0 and topic.unavailable(
                    c["key"] if "key" in c else req.body["key"])
                if why:  # the broker: no leader for the coordinator's partition
                    c.update(nodeId=-1, host="", port=-1, errorMessage=why,
                             errorCode=int(Errors.COORDINATOR_NOT_AVAILABLE))
        return res

    def _may_find(self, req: Request, key_type: int) -> bool:
        """getCoordinator looks the coordinator up (and makes its topic) only for a key the
        principal may DESCRIBE (the group or the transactional id)."""
        if not self.auth.enabled:
            return True
        keys = req.body["coordinatorKeys"] if req.api_version >= 4 else [req.body["key"]]
        rtype = ResourceType.GROUP if key_type == 0 else ResourceType.TRANSACTIONAL_ID
        return any(self.auth.authorize(req, AclOperation.DESCRIBE, rtype, k,
                                       log_if_denied=False) for k in keys)

    def _notify_append(self) -> None:
        self._appended.set()
        self._appended = asyncio.Event()

    # -- ApiVersions --------------------------------------------------------------------

    def handle_api_versions(self, req: Request) -> Reply:
        if req.unsupported_version:
            # KIP-511: answered as v0 with UNSUPPORTED_VERSION and ApiVersions' own range
            versions = [a for a in api_versions_table() if a["apiKey"] == ApiKeys.API_VERSIONS]
            return Reply({"errorCode": int(Errors.UNSUPPORTED_VERSION), "apiKeys": versions}, 0)
        body = req.body
        cluster, node = body.get("clusterId"), body.get("nodeId", -1)
        if req.api_version >= 3 and not (
                (cluster is None) == (node == -1)  # v5 (KIP-1242): both or neither
                and _SOFTWARE.match(body["clientSoftwareName"])
                and _SOFTWARE.match(body["clientSoftwareVersion"])):
            return Reply({"errorCode": int(Errors.INVALID_REQUEST), "apiKeys": [],
                          "throttleTimeMs": 0})
        if cluster is not None and (cluster, node) != (self.catalog.cluster_id,
                                                       self.options.node_id):
            # the client found another cluster or node at this address
            return Reply({"errorCode": int(Errors.REBOOTSTRAP_REQUIRED), "apiKeys": [],
                          "throttleTimeMs": 0})
        return Reply({"errorCode": 0, "apiKeys": api_versions_table(), "throttleTimeMs": 0})

    # -- Metadata -----------------------------------------------------------------------

    def _topic_metadata(self, req: Request, topic: Topic, include_ops: bool) -> dict:
        parts = partition_states(topic, self.options.node_id)
        out = {"errorCode": 0, "name": topic.name, "topicId": topic.topic_id,
               "isInternal": is_internal(topic.name), "partitions": parts}
        if include_ops:
            out["topicAuthorizedOperations"] = self.auth.authorized_operations(
                req, ResourceType.TOPIC, topic.name)
        return out

    async def _auto_create(self, name: str) -> Topic | None:
        """Metadata's auto-creation of ``name`` (``--num-partitions`` partitions), one
        admin change at a time; None when it turned out taken meanwhile."""
        async with self.metadata_lock:
            t = self.catalog.topics.get(name)
            if t is None and name not in self.catalog.creating and not self._collides(name):
                t = await self._create_topic(name, self.options.num_partitions, None)
                log.info("auto-created topic %s with %d partitions", name,
                         self.options.num_partitions)
        return t

    async def handle_metadata(self, req: Request) -> Reply:
        """KafkaApis.handleTopicMetadataRequest: the topics asked (or all), those the
        principal may not DESCRIBE left out of "all" and answered TOPIC_AUTHORIZATION_FAILED
        when named (without their id: existence is not disclosed), unknown ones
        auto-created when allowed (CREATE on the cluster or the topic, else
        TOPIC_AUTHORIZATION_FAILED); this node advertised on the listener the request came
        in on; the authorized-operations fields when asked (v8+)."""
        v = req.api_version
        body = req.body
        include_ops = v >= 8 and body.get("includeTopicAuthorizedOperations", False)
        requested = body["topics"]
        topics = []
        if requested and v < 12 and any(r.get("name") is None or r.get("topicId", ZERO_UUID)
                                        != ZERO_UUID for r in requested):
            # KafkaApis.handleTopicMetadataRequest: topic ids are not supported (and names
            # not null) below v12: InvalidRequestException, answered by
            # MetadataRequest.getErrorResponse (a null name as "")
            return Reply({"throttleTimeMs": 0, "brokers": [], "clusterId": None,
                          "controllerId": -1, "topics": [
                              {"errorCode": int(Errors.INVALID_REQUEST),
                               "name": "" if r.get("name") is None else r["name"],
                               "topicId": r.get("topicId", ZERO_UUID), "isInternal": False,
                               "partitions": []} for r in requested]})
        auth = self.auth
        slices = TimeSlices()
        if requested is None or (v == 0 and not requested):
            names = sorted(self.catalog.topics)
            allowed = auth.filter_by_authorized(req, AclOperation.DESCRIBE, ResourceType.TOPIC,
                                                names, log_if_denied=False)
            for n in names:
                if n in allowed and (t := self.catalog.topics.get(n)) is not None:
                    topics.append(self._topic_metadata(req, t, include_ops))
                    await slices.pause()
        else:
            topics = await self._requested_metadata(req, requested, include_ops)
        node = self.options.node_id
        cluster_ops = -2**31
        if 8 <= v <= 10 and body.get("includeClusterAuthorizedOperations"):
            # v8-10: the cluster's authorized operations when asked (0 without DESCRIBE)
            cluster_ops = (auth.authorized_operations(req, ResourceType.CLUSTER, CLUSTER_NAME)
                           if auth.authorize_cluster(req, AclOperation.DESCRIBE) else 0)
        host, port = endpoint_of(req, self.options)
        return Reply({
            "throttleTimeMs": 0,
            "brokers": [{"nodeId": node, "host": host, "port": port, "rack": None}],
            "clusterId": self.catalog.cluster_id,
            "controllerId": node,
            "topics": topics,
            "clusterAuthorizedOperations": cluster_ops,
        })

    async def _requested_metadata(self, req: Request, requested: list[dict],
                                  include_ops: bool) -> list[dict]:
        """The named topics' entries, in Kafka's order: unknown topic ids, the topics the
        principal may describe (request order), those it may not create, those it may not
        describe."""
        auth = self.auth
        v = req.api_version
        body = req.body
        allow_auto = body.get("allowAutoTopicCreation", True) if v >= 4 else True
        unknown_ids, by_name = [], []
        for r in requested:
            name = r.get("name")
            if name is None:
                t = self.catalog.by_id.get(r.get("topicId", ZERO_UUID))
                if t is None:
                    unknown_ids.append({"errorCode": int(Errors.UNKNOWN_TOPIC_ID), "name": None,
                                        "topicId": r.get("topicId", ZERO_UUID), "partitions": []})
                else:
                    by_name.append((t.name, True))
            else:
                by_name.append((name, False))
        names = [n for n, _ in by_name]
        describable = auth.filter_by_authorized(req, AclOperation.DESCRIBE, ResourceType.TOPIC,
                                                dict.fromkeys(names))
        creatable = None
        auto = allow_auto and self.options.auto_create_topics
        if auto and auth.enabled:
            absent = [n for n in dict.fromkeys(names)
                      if n in describable and n not in self.catalog.topics]
            if absent and not auth.authorize_cluster(req, AclOperation.CREATE,
                                                     log_if_denied=False):
                creatable = auth.filter_by_authorized(req, AclOperation.CREATE,
                                                      ResourceType.TOPIC, absent)
        out, no_create, no_describe = [], [], []
        slices = TimeSlices()
        for name, by_id in by_name:
            await slices.pause()
            if name not in describable:
                t = self.catalog.topics.get(name)
                no_describe.append({"errorCode": int(Errors.TOPIC_AUTHORIZATION_FAILED),
                                    "name": None if by_id else name,
                                    "topicId": t.topic_id if by_id and t else ZERO_UUID,
                                    "isInternal": False, "partitions": []})
                continue
            t = self.catalog.topics.get(name)
            if t is None and creatable is not None and name not in creatable:
                no_create.append({"errorCode": int(Errors.TOPIC_AUTHORIZATION_FAILED),
                                  "name": name, "topicId": ZERO_UUID,
                                  "isInternal": is_internal(name), "partitions": []})
                continue
            if t is None:
                error = Errors.UNKNOWN_TOPIC_OR_PARTITION
                try:
                    _validate_name(name)
                except InvalidArgumentError:
                    error = Errors.INVALID_TOPIC_EXCEPTION
                else:
                    if name in self.catalog.creating:  # its partitions are being made
                        error = Errors.LEADER_NOT_AVAILABLE
                    elif auto and not self.options.read_only and \
                            not is_internal(name) and not self._collides(name):
                        # created before the answer (off the event loop): answered at
                        # once instead of LEADER_NOT_AVAILABLE and a retry
                        t = await self._auto_create(name)
                if t is None:
                    entry = {"errorCode": int(error), "name": name, "topicId": ZERO_UUID,
                             "isInternal": is_internal(name), "partitions": []}
                    if include_ops:  # the topic's authorized operations even so
                        entry["topicAuthorizedOperations"] = auth.authorized_operations(
                            req, ResourceType.TOPIC, name)
                    out.append(entry)
                    continue
            out.append(self._topic_metadata(req, t, include_ops))
        return unknown_ids + out + no_create + no_describe

    def _collides(self, name: str) -> bool:
        """Topic.hasCollision: '.' and '_' collide in metric names."""
        key = name.replace(".", "_")
        return any(t != name and t.replace(".", "_") == key for t in self.catalog.topics)

    # -- Produce ------------------------------------------------------------------------

    async def handle_produce(self, req: Request):
        """KafkaApis.handleProduceRequest -> ReplicaManager.appendRecords, in Kafka's order:
        the transactional check over every partition first (a whole-request error), then
        per topic-partition (the request is keyed by it: a partition named twice gets one
        append, of its last valid batch, and one response entry) existence and
        ``ProduceRequest.validateRecords``, then the appends. Each batch is validated on a
        worker thread unless it is small and uncompressed (:func:`_validates_inline`)."""
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
        if _validates_inline(records) and (lock is None or not lock.locked()):
            # nothing to wait for: validated and written without yielding
            return part.append_validated(part.validate(records))
        if lock is None:
            lock = part.append_lock = asyncio.Lock()
        async with lock:
            while True:
                if _validates_inline(records):
                    validated = part.validate(records)
                else:
                    validated = await self.workers.run(part.validate, records)
                if not part.is_stale(validated):
                    return part.append_validated(validated)
                if part.log.closed:  # deleted meanwhile
                    raise AppendError(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                      "This server does not host this topic-partition.")

    # -- InitProducerId -----------------------------------------------------------------

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
            return Reply(self.txn_apis.init_producer_id(req.body, req.api_version))
        # TransactionCoordinator.handleInitProducerId with a null transactionalId: always a
        # new producer id, epoch 0
        return Reply({"throttleTimeMs": 0, "errorCode": 0,
                      "producerId": self.catalog.allocate_producer_id(), "producerEpoch": 0})

    # -- CreateTopics / DeleteTopics ----------------------------------------------------

    async def handle_create_topics(self, req: Request) -> Reply:
        """ControllerApis.createTopics: the checks of every topic, then (unless
        ``validateOnly``) each topic's partitions, made one at a time in time slices (a
        topic of 10,000 partitions takes seconds of fsyncs; the other connections are
        served meanwhile), the topic served once all are. One admin change at a time, as
        the controller applies them (:attr:`metadata_lock`). First the authorization
        (``ReplicationControlManager.createTopics``): CREATE on the cluster or on each
        topic (else TOPIC_AUTHORIZATION_FAILED "Authorization failed.", answered after the
        others, as are duplicate names and ``__cluster_metadata``); the configs of a new
        topic only when the principal may DESCRIBE_CONFIGS it (else
        ``topicConfigErrorCode`` TOPIC_AUTHORIZATION_FAILED)."""
        async with self.metadata_lock:
            return await self._create_topics(req)

    def _authorize_creates(self, req: Request) -> tuple[dict, list[dict], set | None]:
        """``ReplicationControlManager.createTopics``' first checks with an authorizer: the
        request's body without the topics refused (duplicates, ``__cluster_metadata``, no
        CREATE on the cluster or the topic), their answers, and the topics whose configs
        the principal may see (None: every topic, no authorizer)."""
        body = req.body
        auth = self.auth
        if not auth.enabled:
            return body, [], None
        counts = Counter(t["name"] for t in body["topics"])
        unique = [n for n in java_order(counts) if counts[n] == 1 and n != METADATA_TOPIC]
        creatable = set(unique) if auth.authorize_cluster(
            req, AclOperation.CREATE, log_if_denied=False) else auth.filter_by_authorized(
            req, AclOperation.CREATE, ResourceType.TOPIC, unique)
        describable = auth.filter_by_authorized(
            req, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, unique, log_if_denied=False)
        refused = [_created(n, Errors.INVALID_REQUEST, "Duplicate topic name.")
                   for n in java_order(counts) if counts[n] > 1]
        for n in java_order(counts):
            if n == METADATA_TOPIC and counts[n] == 1:
                refused.append(_created(n, Errors.INVALID_REQUEST, "Creation of internal "
                                        f"topic {METADATA_TOPIC} is prohibited."))
            elif counts[n] == 1 and n not in creatable:
                refused.append(_created(n, Errors.TOPIC_AUTHORIZATION_FAILED,
                                        "Authorization failed."))
        gone = {r["name"] for r in refused}
        body = dict(body, topics=[t for t in body["topics"] if t["name"] not in gone])
        return body, refused, describable

    async def _create_topics(self, req: Request) -> Reply:
        body, refused, describable = self._authorize_creates(req)
        names = Counter(t["name"] for t in body["topics"])
        results = []
        checked = []
        answered = set()
        for t in body["topics"]:
            name = t["name"]
            if name in answered:
                continue  # the answers are keyed by name: a duplicate once
            answered.add(name)
            res = {"name": name, "topicId": ZERO_UUID, "errorCode": 0, "errorMessage": None,
                   "numPartitions": -1, "replicationFactor": -1, "configs": []}
            results.append(res)
            error, message, overrides = self._check_create(t, names)
            if error is Errors.NONE and self.options.read_only:
                error, message = READ_ONLY_ERROR, READ_ONLY_MESSAGE
            if error is not Errors.NONE:
                res["errorCode"], res["errorMessage"] = int(error), message
                continue
            n = t["numPartitions"] if t["numPartitions"] != -1 else (
                len(t["assignments"]) or self.options.num_partitions)
            checked.append((t, res, n, overrides))
        if sum(1 + n + len(o or ()) for _, _, n, o in checked) > MAX_RECORDS_PER_USER_OP:
            # a TopicRecord, a PartitionRecord per partition and a ConfigRecord per config
            # overflow the controller's BoundedList: the whole request fails
            # (CreateTopicsRequest.getErrorResponse)
            for res in results:
                res.update(errorCode=int(Errors.POLICY_VIOLATION),
                           errorMessage=EXCESSIVE_BATCH_MESSAGE, topicId=ZERO_UUID,
                           numPartitions=-1, replicationFactor=-1, configs=[])
            return Reply({"throttleTimeMs": 0, "topics": results + refused})
        for t, res, n, overrides in checked:
            name = t["name"]
            if not body.get("validateOnly"):
                topic = await self._create_topic(name, n, overrides)
                res["topicId"] = topic.topic_id
            else:  # the controller makes the topic's id before it sees validateOnly
                res["topicId"] = random_kafka_uuid()
            if describable is not None and name not in describable:
                res["topicConfigErrorCode"] = int(Errors.TOPIC_AUTHORIZATION_FAILED)
                continue
            res["numPartitions"], res["replicationFactor"] = n, 1
            res["configs"] = [
                {k: e[k] for k in ("name", "value", "readOnly", "configSource", "isSensitive")}
                for e in cfgs.describe_topic(self.catalog.broker_configs, overrides, None,
                                             False)]
        return Reply({"throttleTimeMs": 0, "topics": results + refused})

    async def _create_topic(self, name: str, n: int, overrides) -> Topic:
        """A new topic's ``n`` partitions (:meth:`make_partitions`); the topic is served
        when all are made, or - the server stopping meanwhile - with those made (a
        warning says so: a later CreatePartitions completes it). The caller holds
        :attr:`metadata_lock`."""
        topic = self.catalog.new_topic(name, overrides)
        self.catalog.creating.add(name)
        try:
            await self.make_partitions(topic, range(n))
        finally:
            self.catalog.creating.discard(name)
            if topic.partitions:
                self.catalog.add_topic(topic)
            if len(topic.partitions) < n:
                log.warning("topic %s: %d of its %d partitions made before the stop", name,
                            len(topic.partitions), n)
        return topic

    def _check_create(self, t: dict, names: Counter):
        name = t["name"]
        if names[name] > 1:
            return Errors.INVALID_REQUEST, "Duplicate topic name.", None
        try:
            _validate_name(name)
        except InvalidArgumentError as e:
            return Errors.INVALID_TOPIC_EXCEPTION, e.message, None
        if name in self.catalog.topics or name in self.catalog.creating:
            return Errors.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.", None
        if self._collides(name):
            return (Errors.INVALID_TOPIC_EXCEPTION,
                    f"Topic '{name}' collides with an existing topic.", None)
        n, rf, assignments = t["numPartitions"], t["replicationFactor"], t["assignments"]
        if assignments:
            # ReplicationControlManager.createTopic, as the pinned broker words it
            if n != -1:
                return (Errors.INVALID_REQUEST, "A manual partition assignment was specified, "
                        "but numPartitions was not set to -1.", None)
            if rf != -1:
                return (Errors.INVALID_REQUEST, "A manual partition assignment was specified, "
                        "but replication factor was not set to -1.", None)
            unknown = [b for a in assignments for b in a["brokerIds"]
                       if b != self.options.node_id]
            if unknown:
                return (Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment "
                        f"includes broker {unknown[0]}, but no such broker is registered.",
                        None)
            idxs = sorted(a["partitionIndex"] for a in assignments)
            if idxs != list(range(len(idxs))) or any(
                    a["brokerIds"] != [self.options.node_id] for a in assignments):
                return (Errors.INVALID_REPLICA_ASSIGNMENT, "Replica assignments must name "
                        f"partitions 0..n-1, each on broker {self.options.node_id} only.", None)
        elif n == 0 or n < -1:
            return (Errors.INVALID_PARTITIONS,
                    "Number of partitions was set to an invalid non-positive value.", None)
        if rf == 0 or rf < -1:
            return (Errors.INVALID_REPLICATION_FACTOR, "Replication factor must be larger "
                    "than 0, or -1 to use the default value.", None)
        if rf > 1:
            return (Errors.INVALID_REPLICATION_FACTOR,
                    f"Unable to replicate the partition {rf} time(s): The target replication "
                    f"factor of {rf} cannot be reached because only 1 broker(s) are "
                    "registered or some brokers have all their log directories cordoned.",
                    None)
        nulls = [c["name"] for c in t["configs"] if c["value"] is None]
        if nulls:  # ControllerConfigurationValidator / ConfigurationControlManager
            return (Errors.INVALID_CONFIG,
                    f"Null value not supported for topic configs: {', '.join(nulls)}", None)
        try:
            overrides = cfgs.validate_topic_configs(
                {c["name"]: c["value"] for c in t["configs"]},
                self.catalog.broker_configs.topic_defaults())
        except InvalidConfigError as e:
            return Errors.INVALID_CONFIG, e.message, None
        return Errors.NONE, None, overrides

    async def handle_delete_topics(self, req: Request) -> Reply:
        """ControllerApis.deleteTopics: each topic named stops being served at once, then
        its partition directories are renamed ``-delete`` and removed in time slices (one
        admin change at a time, :attr:`metadata_lock`). DELETE on the cluster or the topic
        is needed; a topic the principal may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED
        whether it exists or not (and, asked by id, without its name)."""
        async with self.metadata_lock:
            return await self._delete_topics(req)

    async def _delete_topics(self, req: Request) -> Reply:
        v = req.api_version
        body = req.body
        wanted = ([{"name": n, "topicId": ZERO_UUID} for n in body["topicNames"]] if v < 6
                  else body["topics"])
        describable = deletable = None
        if self.auth.enabled:
            names = []
            for w in wanted:
                if w.get("name") is not None:
                    names.append(w["name"])
                elif (t := self.catalog.by_id.get(w.get("topicId", ZERO_UUID))) is not None:
                    names.append(t.name)
            names = list(dict.fromkeys(names))
            if self.auth.authorize_cluster(req, AclOperation.DELETE, log_if_denied=False):
                describable = deletable = set(names)
            else:
                describable = self.auth.filter_by_authorized(
                    req, AclOperation.DESCRIBE, ResourceType.TOPIC, names)
                deletable = self.auth.filter_by_authorized(
                    req, AclOperation.DELETE, ResourceType.TOPIC, names)
        results = []
        for w in wanted:
            name, tid = w.get("name"), w.get("topicId", ZERO_UUID)
            res = {"name": name, "topicId": tid, "errorCode": 0, "errorMessage": None}
            results.append(res)
            if name is None and tid != ZERO_UUID:
                t = self.catalog.by_id.get(tid)
                if t is None:
                    res["errorCode"] = int(Errors.UNKNOWN_TOPIC_ID)
                    res["errorMessage"] = "This server does not host this topic ID."
                    continue
                if deletable is not None and t.name not in deletable:
                    res["errorCode"] = int(Errors.TOPIC_AUTHORIZATION_FAILED)
                    res["errorMessage"] = TOPIC_AUTHORIZATION_FAILED_MESSAGE
                    if t.name in describable:
                        res["name"] = t.name
                    continue
            else:
                if describable is not None and name is not None and name not in describable:
                    res["errorCode"] = int(Errors.TOPIC_AUTHORIZATION_FAILED)
                    res["errorMessage"] = TOPIC_AUTHORIZATION_FAILED_MESSAGE
                    continue
                t = self.catalog.topics.get(name) if name is not None else None
                if t is None:
                    res["errorCode"] = int(Errors.UNKNOWN_TOPIC_OR_PARTITION)
                    res["errorMessage"] = "This server does not host this topic-partition."
                    continue
                if deletable is not None and t.name not in deletable:
                    res["errorCode"] = int(Errors.TOPIC_AUTHORIZATION_FAILED)
                    res["errorMessage"] = TOPIC_AUTHORIZATION_FAILED_MESSAGE
                    continue
            res["name"], res["topicId"] = t.name, t.topic_id
            if self.options.read_only:
                res["errorCode"], res["errorMessage"] = int(READ_ONLY_ERROR), READ_ONLY_MESSAGE
                continue
            self.catalog.forget_topic(t)
            self.groups.on_topic_deleted(t.name)
            await self.remove_partitions(t)
            log.info("deleted topic %s", t.name)
        return Reply({"throttleTimeMs": 0, "responses": results})


def _created(name: str, error: Errors, message: str) -> dict:
    """A CreatableTopicResult refused before the controller looked at it."""
    return {"name": name, "topicId": ZERO_UUID, "errorCode": int(error), "errorMessage": message,
            "numPartitions": -1, "replicationFactor": -1, "configs": []}


#: handlers that await (Produce's validation on a worker thread, Fetch's delayed read;
#: the admin and group handlers name theirs)
_AWAITING = frozenset({ApiKeys.PRODUCE, ApiKeys.METADATA, ApiKeys.CREATE_TOPICS,
                       ApiKeys.DELETE_TOPICS})


def _open_partitions(catalog: LogDirCatalog, topic: Topic, partitions: list[int],
                     unserved: dict) -> list:
    """On the files thread: open (create) the first of ``partitions``, and the next ones
    while less than :data:`~.handlers.SLICE_S` has passed; ``[(partition, log)]``, each
    also kept in ``unserved`` (``id(log)`` -> ``(topic, partition, log)``) until served."""
    made = []
    start = time.monotonic()
    for p in partitions:
        lg = catalog.open_partition(topic, p)
        unserved[id(lg)] = (topic, p, lg)
        made.append((p, lg))
        if time.monotonic() - start >= SLICE_S:
            break
    return made


def _remove_partition_dirs(dirs: list, fsync: bool) -> None:
    for d in dirs:
        remove_partition_dir(d, fsync)


#: the APIs that write a coordinator's internal topic (FindCoordinator: by key type), which
#: :meth:`KafkaApis.handle` creates first when missing
_COORDINATOR_TOPICS = {
    ApiKeys.FIND_COORDINATOR: (), ApiKeys.JOIN_GROUP: ("offsets",),
    ApiKeys.SYNC_GROUP: ("offsets",), ApiKeys.LEAVE_GROUP: ("offsets",),
    ApiKeys.OFFSET_COMMIT: ("offsets",), ApiKeys.DELETE_GROUPS: ("offsets",),
    ApiKeys.OFFSET_DELETE: ("offsets",), ApiKeys.INIT_PRODUCER_ID: ("txn",),
    ApiKeys.ADD_PARTITIONS_TO_TXN: ("txn",), ApiKeys.ADD_OFFSETS_TO_TXN: ("txn",),
    ApiKeys.END_TXN: ("txn",), ApiKeys.TXN_OFFSET_COMMIT: ("txn",),
}


def _validate_name(name: str) -> None:
    validate_topic_name(name)


#: a batch at most this large and uncompressed is validated on the event loop: its work is
#: bounded by its size (a few ms), less than a hand-over to a worker thread costs
INLINE_VALIDATION_BYTES = 64 * 1024


def _validates_inline(records) -> bool:
    return len(records) <= INLINE_VALIDATION_BYTES and \
        records[ATTRIBUTES_OFFSET + 1] & COMPRESSION_CODEC_MASK == 0


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
