"""The request dispatch, after ``KafkaApis`` (``handle``: the handler of each API key),
with the handlers it keeps itself - ApiVersions, Metadata
(``handleTopicMetadataRequest``, with auto-creation) and FindCoordinator's internal
topics (``AutoTopicCreationManager``) - the partition directories made and removed off the
event loop (``LogManager``'s part, for CreateTopics / CreatePartitions / DeleteTopics), and
:class:`ServerOptions`, the node's settings.

Each ``handle_*`` takes a parsed :class:`~kafkalog_cli.protocol.wire.Request` and returns a
:class:`~.handlers.Reply` (a response body, maybe at another version), a response body
dict, :data:`~.handlers.NO_RESPONSE`, or raises :class:`CloseConnection`. Produce is in
:mod:`.produce_apis`, Fetch and ListOffsets in :mod:`.fetch_apis`, the admin APIs in
:mod:`.admin` (with CreateTopics and DeleteTopics), the group APIs in
:mod:`.group_apis`, InitProducerId and the transaction APIs in :mod:`.txn_apis`;
:meth:`KafkaApis.handle` dispatches to all. Handlers run on the event-loop thread;
Produce awaits the validation of its batches on worker threads (:mod:`.workers`), Fetch
the delayed fetch of ``minBytes``/``maxWaitMs``, JoinGroup / SyncGroup the group,
DeleteRecords its checkpoint write, CreateTopics, CreatePartitions and DeleteTopics the
partition directories made or removed on the files thread, Metadata its auto-creation.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass

from ..errors import InvalidArgumentError
from ..protocol.apis import ApiKeys, api_versions_table
from ..protocol.errors import Errors
from ..protocol.wire import Request
from ..schema.flexible import ZERO_UUID
from ..storage.files import validate_topic_name
from .admin import AdminApis
from .catalog import LogDirCatalog, Topic, is_internal, remove_partition_dir
from .classic_group import GroupStore
from .coordinator_log import OFFSETS_TOPIC, TRANSACTION_TOPIC, CoordinatorTopic
from .describe_apis import DescribeApis, partition_states
from .fetch_apis import FetchApis
from .group_apis import GroupApis, group_config
from .group_log import GroupLogStore, load_groups, restore
from .groups import GroupCoordinator
from .handlers import SLICE_S, Reply, TimeSlices, endpoint_of
from .metrics import BrokerTopicStats
from .produce_apis import ProduceApis
from .security.acls import CLUSTER_NAME, AclOperation, ResourceType
from .security.server_security import ServerSecurity
from .transactions import TransactionCoordinator
from .txn_apis import TxnApis
from .workers import WorkerPool

log = logging.getLogger("kafkalog.serve")
#: the longest a stop waits for the files thread's job (a batch of partitions being made)
FILES_STOP_WAIT_S = 30.0

_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


@dataclass
class ServerOptions:
    host: str = "127.0.0.1"
    port: int = 9092
    node_id: int = 0
    auto_create_topics: bool = False
    num_partitions: int = 1
    #: serve without writing a byte: writes get READ_ONLY_ERROR (see storage_adapter)
    read_only: bool = False


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
        #: a Fetch took :attr:`_appended` (to wait for data) since it was made
        self._appended_taken = False
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
                               self.make_partitions, self.remove_partitions,
                               lambda topic: self.groups.on_topic_deleted(topic))
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
        #: Produce (server/produce_apis.py)
        self.produce = ProduceApis(catalog, options, self.stats, self.txn, self.workers,
                                   self._notify_append, self.auth)
        self.handlers = {
            ApiKeys.METADATA: self.handle_metadata,
            ApiKeys.API_VERSIONS: self.handle_api_versions,
        }
        self.handlers.update(self.produce.handlers())
        #: Fetch and ListOffsets (server/fetch_apis.py)
        self.reads = FetchApis(catalog, options, self.stats, self._append_event, self.auth)
        self.handlers.update(self.reads.handlers())
        self.handlers.update(self.admin.handlers())
        self.handlers.update(DescribeApis(catalog, options, self.auth).handlers())
        self.handlers.update(self.group_apis.handlers())
        self.handlers.update(self.txn_apis.handlers())
        self.handlers.update(security.handlers())
        self.handlers[ApiKeys.FIND_COORDINATOR] = self._find_coordinator
        self._awaiting = _AWAITING | AdminApis.AWAITING | GroupApis.AWAITING | \
            FetchApis.AWAITING | ProduceApis.AWAITING

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
                    await self.admin.create_topic(ct.name, ct.num_partitions, ct.overrides())
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

    def _append_event(self) -> asyncio.Event:
        """The event the next append sets (a Fetch waiting for data awaits it)."""
        self._appended_taken = True
        return self._appended

    def _notify_append(self) -> None:
        # an event no Fetch took has no waiter: kept, not replaced, on every append
        if self._appended_taken:
            self._appended.set()
            self._appended = asyncio.Event()
            self._appended_taken = False

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
            if t is None and name not in self.catalog.creating and not self.admin.collides(name):
                t = await self.admin.create_topic(name, self.options.num_partitions, None)
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
                            not is_internal(name) and not self.admin.collides(name):
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

#: handlers that await (Metadata's auto-creation; the Produce, Fetch, admin and group
#: handlers name theirs)
_AWAITING = frozenset({ApiKeys.METADATA})


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
