"""The admin request handlers: DescribeConfigs, AlterConfigs, IncrementalAlterConfigs
(TOPIC, BROKER and GROUP resources), CreatePartitions, DescribeCluster, DescribeLogDirs
and DeleteRecords - after
``KafkaApis``, ``ConfigHelper`` and ``ConfigAdminManager`` on the broker side and, for
what a KRaft broker forwards, the controller's ``ControllerApis``,
``ConfigurationControlManager`` and ``ReplicationControlManager`` (one node is both here).

Topic and broker configs are resolved and described by :mod:`.configs`; changes are
persisted and applied to the logs by :class:`~kafkalog_cli.server.catalog.LogDirCatalog`.
Handlers take a parsed :class:`~kafkalog_cli.protocol.wire.Request` and return a response
body; only DeleteRecords awaits (it writes ``log-start-offset-checkpoint`` on a worker
thread before answering).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import Counter

from ..errors import ApiError, InvalidArgumentError, InvalidConfigError, OffsetOutOfRangeError
from ..protocol.apis import ApiKeys
from ..protocol.errors import INVALID_REQUEST_MESSAGE, Errors
from . import configs as cfgs
from .catalog import LogDirCatalog, is_internal, partition_count
from .handlers import ApiHandlers, TimeSlices, partition_answers
from .security.acls import CLUSTER_NAME, AclOperation, ResourceType
from .security.config import is_security_config
from .storage_adapter import READ_ONLY_ERROR, READ_ONLY_MESSAGE

log = logging.getLogger("kafkalog.serve")

# ConfigResource.Type ids
RESOURCE_TOPIC, RESOURCE_BROKER, RESOURCE_BROKER_LOGGER, RESOURCE_CLIENT_METRICS, \
    RESOURCE_GROUP = 2, 4, 8, 16, 32
#: Errors' default messages (``ApiError(error)``'s message)
_DEFAULT_MESSAGES = {Errors.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
                     Errors.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
                     Errors.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed."}
#: AlterConfigOp.OpType ids
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
_OP_NAMES = {APPEND: "APPEND", SUBTRACT: "SUBTRACT"}
#: DescribeClusterRequest.EndpointType: BROKER (this node); CONTROLLER (2) is not it
ENDPOINT_BROKER, ENDPOINT_CONTROLLER = 1, 2
#: DeleteRecordsRequest.HIGH_WATERMARK / DeleteRecordsResponse.INVALID_LOW_WATERMARK
HIGH_WATERMARK = INVALID_LOW_WATERMARK = -1
#: ``serve --read-only`` refuses config changes as a broker refuses a client without the
#: ALTER_CONFIGS ACL on the resource (topic: READ_ONLY_ERROR, as for other writes)
#: QuorumController.MAX_RECORDS_PER_USER_OP: the records one admin request may create (a
#: TopicRecord, a PartitionRecord per partition, a ConfigRecord per config); more fail the
#: whole request with POLICY_VIOLATION (EventHandlerExceptionInfo, BoundedListTooLongException)
MAX_RECORDS_PER_USER_OP = 10_000
EXCESSIVE_BATCH_MESSAGE = "Unable to perform excessively large batch operation."

_READ_ONLY_ALTER = {RESOURCE_TOPIC: READ_ONLY_ERROR,
                    RESOURCE_BROKER: Errors.CLUSTER_AUTHORIZATION_FAILED,
                    RESOURCE_GROUP: Errors.GROUP_AUTHORIZATION_FAILED}


class AdminApis(ApiHandlers):
    """The admin handlers of one node over ``catalog``; ``options`` is the server's
    :class:`~kafkalog_cli.server.kafka_apis.ServerOptions`; ``metadata_lock``: held while
    partitions are made (one admin change at a time, shared with CreateTopics and
    DeleteTopics)."""

    def __init__(self, catalog: LogDirCatalog, options, auth=None,
                 metadata_lock: asyncio.Lock | None = None, make_partitions=None):
        super().__init__(catalog, options, auth)
        self.metadata_lock = metadata_lock or asyncio.Lock()
        #: ``await make_partitions(topic, partitions)`` (KafkaApis.make_partitions)
        self.make_partitions = make_partitions
        catalog.broker_configs.static.update({
            "num.partitions": str(options.num_partitions),
            "auto.create.topics.enable": "true" if options.auto_create_topics else "false"})

    #: handlers that await
    AWAITING = frozenset({ApiKeys.DELETE_RECORDS, ApiKeys.CREATE_PARTITIONS})

    # -- DescribeConfigs ------------------------------------------------------------------

    def handle_describe_configs(self, req) -> dict:
        """ConfigHelper.describeConfigs: TOPIC (every topic config, its source and
        synonyms), BROKER (``"<node id>"``: the broker configs this server knows; ``""``:
        the cluster-wide dynamic ones) and GROUP (the KIP-848 group configs, for any group
        name); other types -> INVALID_REQUEST."""
        body = req.body
        synonyms = body.get("includeSynonyms", False)
        layers = self.catalog.broker_configs
        results = []
        denied = []  # ConfigHelper: the unauthorized resources answered after the others
        for r in body["resources"]:
            rtype, rname = r["resourceType"], r["resourceName"]
            # ConfigHelper.describeConfigs: a described resource's errorMessage is "" (and
            # so is an unknown topic's, as the pinned broker answers)
            res = {"errorCode": 0, "errorMessage": "", "resourceType": rtype,
                   "resourceName": rname, "configs": []}
            error = self._config_authorization(req, AclOperation.DESCRIBE_CONFIGS, rtype, rname)
            if error is not None:
                res.update(errorCode=int(error), errorMessage=_DEFAULT_MESSAGES[error])
                denied.append(res)
                continue
            results.append(res)
            keys = r["configurationKeys"]
            try:
                if rtype == RESOURCE_TOPIC:
                    # ConfigHelper: Topic.validate, an empty name too (INVALID_TOPIC_EXCEPTION)
                    _validate_topic_name(rname, empty_allowed=True)
                    t = self.catalog.topics.get(rname)
                    if t is None:
                        raise ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "")
                    res["configs"] = cfgs.describe_topic(layers, t.overrides, keys, synonyms)
                elif rtype == RESOURCE_BROKER:
                    if rname:
                        self._check_node_id(rname, "Broker id must be an integer, but it is: ",
                                            "Unexpected broker id, expected {} or empty "
                                            "string, but received {}")
                    res["configs"] = cfgs.describe_broker(layers, per_broker=bool(rname),
                                                          keys=keys, include_synonyms=synonyms)
                elif rtype == RESOURCE_GROUP:
                    if not rname:
                        raise ApiError(Errors.INVALID_REQUEST, "Group name must not be empty")
                    res["configs"] = cfgs.describe_group(
                        self.catalog.group_configs.get(rname, {}), keys, synonyms)
                else:
                    # an InvalidRequestException with INVALID_REQUEST's default message
                    raise ApiError(Errors.INVALID_REQUEST, INVALID_REQUEST_MESSAGE)
            except ApiError as e:
                res["errorCode"], res["errorMessage"] = int(e.error), e.message
        return {"throttleTimeMs": 0, "results": results + denied}

    def _config_authorization(self, req, op: AclOperation, rtype: int, rname: str):
        """The error of a config resource the principal may not ``op`` (DESCRIBE_CONFIGS /
        ALTER_CONFIGS on the cluster for BROKER, on the topic or group), else None."""
        if not self.auth.enabled:
            return None
        if rtype in (RESOURCE_BROKER, RESOURCE_BROKER_LOGGER, RESOURCE_CLIENT_METRICS):
            ok = self.auth.authorize_cluster(req, op)
            return None if ok else Errors.CLUSTER_AUTHORIZATION_FAILED
        if rtype == RESOURCE_TOPIC:
            ok = self.auth.authorize(req, op, ResourceType.TOPIC, rname)
            return None if ok else Errors.TOPIC_AUTHORIZATION_FAILED
        if rtype == RESOURCE_GROUP:
            ok = self.auth.authorize(req, op, ResourceType.GROUP, rname)
            return None if ok else Errors.GROUP_AUTHORIZATION_FAILED
        return None

    def _check_node_id(self, name: str, not_int: str, other: str) -> None:
        try:
            node = int(name)
        except ValueError:
            raise ApiError(Errors.INVALID_REQUEST, not_int + name) from None
        if node != self.options.node_id:
            raise ApiError(Errors.INVALID_REQUEST, other.format(self.options.node_id, name))

    # -- AlterConfigs / IncrementalAlterConfigs --------------------------------------------

    def handle_alter_configs(self, req) -> dict:
        """Legacy AlterConfigs: each resource's configs replace all its overrides (the
        keys left out are deleted), ConfigAdminManager.preprocess then
        ConfigurationControlManager.legacyAlterConfigResource."""
        return self._alter(req, incremental=False)

    def handle_incremental_alter_configs(self, req) -> dict:
        """IncrementalAlterConfigs: SET / DELETE / APPEND / SUBTRACT per key
        (ConfigurationControlManager.incrementalAlterConfigResource)."""
        return self._alter(req, incremental=True)

    def _alter(self, req, *, incremental: bool) -> dict:
        body = req.body
        validate_only = body["validateOnly"]
        seen: dict[tuple[int, str], int] = {}
        for r in body["resources"]:
            key = (r["resourceType"], r["resourceName"])
            seen[key] = seen.get(key, 0) + 1
        responses = []
        for r in body["resources"]:
            rtype, rname = r["resourceType"], r["resourceName"]
            res = {"errorCode": 0, "errorMessage": None, "resourceType": rtype,
                   "resourceName": rname}
            responses.append(res)
            try:
                if seen[(rtype, rname)] > 1:
                    raise ApiError(Errors.INVALID_REQUEST,
                                     "Each resource must appear at most once.")
                self._alter_resource(req, r, incremental, validate_only)
            except ApiError as e:
                res["errorCode"], res["errorMessage"] = int(e.error), e.message
        return {"throttleTimeMs": 0, "responses": responses}

    def _alter_resource(self, req, r: dict, incremental: bool, validate_only: bool) -> None:
        """One resource of an (Incremental)AlterConfigs.

        Raises:
            ApiError: what the broker's preprocess or the controller refuses.
        """
        rtype, rname, changes = r["resourceType"], r["resourceName"], r["configs"]
        names = [c["name"] for c in changes]
        if len(set(names)) != len(names):
            raise ApiError(Errors.INVALID_REQUEST, "Error due to duplicate config keys")
        nulls = [c["name"] for c in changes
                 if c["value"] is None and not (incremental and c["configOperation"] == DELETE)]
        if nulls:
            raise ApiError(Errors.INVALID_REQUEST,
                             "Null value not supported for : " + ", ".join(nulls))
        if incremental:
            bad = [c["configOperation"] for c in changes
                   if c["configOperation"] not in (SET, DELETE, APPEND, SUBTRACT)]
            if bad:
                # AlterConfigOp.OpType.forId throws IllegalArgumentException, which the
                # broker answers as UNKNOWN_SERVER_ERROR without a message
                raise ApiError(Errors.UNKNOWN_SERVER_ERROR)
        # after ConfigAdminManager.preprocess, the controller's authorizeAlterResource
        error = self._config_authorization(req, AclOperation.ALTER_CONFIGS, rtype, rname)
        if error is not None:
            raise ApiError(error, _DEFAULT_MESSAGES[error])
        if self.options.read_only and rtype in _READ_ONLY_ALTER:
            raise ApiError(_READ_ONLY_ALTER[rtype], READ_ONLY_MESSAGE)
        if rtype == RESOURCE_BROKER:
            self._alter_broker(rname, changes, incremental, validate_only)
        elif rtype == RESOURCE_TOPIC:
            self._alter_topic(rname, changes, incremental, validate_only)
        elif rtype == RESOURCE_GROUP:
            self._alter_group(rname, changes, incremental, validate_only)
        else:
            raise ApiError(Errors.INVALID_REQUEST, f"Unknown resource type {rtype}")

    def _alter_topic(self, name: str, changes: list[dict], incremental: bool,
                     validate_only: bool) -> None:
        """ControllerConfigurationValidator.validate (name, LogConfig.validate), then the
        topic must exist; then the overrides are replaced and applied."""
        _validate_topic_name(name)
        topic = self.catalog.topics.get(name)
        current = dict(topic.overrides) if topic else {}
        if incremental:
            new = dict(current)
            for c in changes:
                _apply_op(new, c, cfgs.TOPIC_CONFIGS.get(c["name"], (None, 0)))
        else:
            new = {c["name"]: c["value"] for c in changes}
        try:
            new = cfgs.validate_topic_configs(new, self.catalog.broker_configs.topic_defaults())
        except InvalidConfigError as e:
            raise ApiError(Errors.INVALID_CONFIG, e.message) from None
        if topic is None:
            raise ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                             f"The topic '{name}' does not exist.")
        if not validate_only and new != current:
            self.catalog.set_topic_configs(topic, new)
            log.info("topic %s configs: %s", name, new)

    def _alter_group(self, name: str, changes: list[dict], incremental: bool,
                     validate_only: bool) -> None:
        """ControllerConfigurationValidator: the group name, then GroupConfig.validate over
        the group's resulting configs (INVALID_CONFIG); the group need not exist."""
        if not name:
            raise ApiError(Errors.INVALID_REQUEST, "Default group resource is not allowed.")
        current = dict(self.catalog.group_configs.get(name, {}))
        if incremental:
            new = dict(current)
            for c in changes:
                _apply_op(new, c, (None, cfgs.INT))
        else:
            new = {c["name"]: c["value"] for c in changes}
        try:
            new = cfgs.validate_group_configs(new)
        except InvalidConfigError as e:
            raise ApiError(Errors.INVALID_CONFIG, e.message) from None
        if not validate_only and new != current:
            self.catalog.set_group_configs(name, new)
            log.info("group %s configs: %s", name, new)

    def _alter_broker(self, name: str, changes: list[dict], incremental: bool,
                      validate_only: bool) -> None:
        """ConfigAdminManager.validateBrokerConfigChange: this node's id or ``""``; only
        dynamic configs; values checked (errors are INVALID_REQUEST, KAFKA-13609)."""
        per_broker = bool(name)
        if per_broker:
            self._check_node_id(name, "Node id must be an integer, but it is: ",
                                "Unexpected broker id, expected {}, but received {}")
        layers = self.catalog.broker_configs
        current = dict(layers.dynamic_broker if per_broker else layers.dynamic_default)
        if incremental:
            new = dict(current)
            for c in changes:
                spec = cfgs.BROKER_CONFIGS.get(c["name"])
                _apply_op(new, c, (spec.default, spec.type) if spec else (None, 0))
        else:
            new = {c["name"]: c["value"] for c in changes}
        # the security configs (listener-prefixed too: a broker reconfigures keystores
        # dynamically) are static here: none is stored in kafkalog-serve.json
        fixed = sorted(n for n in new if n in cfgs.BROKER_CONFIGS
                       and not cfgs.BROKER_CONFIGS[n].dynamic or is_security_config(n))
        if fixed:
            raise ApiError(Errors.INVALID_REQUEST, "Cannot update these configs "
                             f"dynamically: [{', '.join(fixed)}]")
        try:
            new = {n: cfgs.validate_broker(n, v) for n, v in new.items()}
        except InvalidConfigError as e:
            raise ApiError(Errors.INVALID_REQUEST, e.message) from None
        if not validate_only and new != current:
            self.catalog.set_broker_configs(per_broker, new)
            log.info("dynamic broker configs (%s): %s", name or "cluster default", new)

    # -- CreatePartitions -----------------------------------------------------------------

    async def handle_create_partitions(self, req) -> dict:
        """ControllerApis.createPartitions / ReplicationControlManager.createPartitions:
        a topic named twice -> INVALID_REQUEST; then per topic its checks, and the new
        partitions' directories through the engine (unless ``validateOnly``), one at a
        time in time slices, under :attr:`metadata_lock`."""
        async with self.metadata_lock:
            return await self._create_partitions_of(req)

    async def _create_partitions_of(self, req) -> dict:
        body = req.body
        names = [t["name"] for t in body["topics"]]
        counts = Counter(names)
        results = []
        for dup in dict.fromkeys(n for n in names if counts[n] > 1):
            results.append({"name": dup, "errorCode": int(Errors.INVALID_REQUEST),
                            "errorMessage": "Duplicate topic name."})
        alterable = self.auth.filter_by_authorized(
            req, AclOperation.ALTER, ResourceType.TOPIC,
            [n for n in counts if counts[n] == 1])
        checked = []
        for t in body["topics"]:
            if counts[t["name"]] > 1:
                continue
            res = {"name": t["name"], "errorCode": 0, "errorMessage": None}
            results.append(res)
            if t["name"] not in alterable:  # ControllerApis.createPartitions
                res["errorCode"] = int(Errors.TOPIC_AUTHORIZATION_FAILED)
                continue
            try:
                checked.append((t, self._create_partitions(t)))
            except ApiError as e:
                res["errorCode"], res["errorMessage"] = int(e.error), e.message
        if sum(n for _, n in checked) > MAX_RECORDS_PER_USER_OP:
            # a PartitionRecord per new partition overflows the controller's BoundedList:
            # the whole request fails (CreatePartitionsRequest.getErrorResponse)
            return {"throttleTimeMs": 0, "results": [
                {"name": n, "errorCode": int(Errors.POLICY_VIOLATION),
                 "errorMessage": EXCESSIVE_BATCH_MESSAGE} for n in dict.fromkeys(names)]}
        if not body["validateOnly"]:
            for t, _ in checked:
                topic = self.catalog.topics[t["name"]]
                have = partition_count(topic)
                await self.make_partitions(topic, range(have, t["count"]))
                log.info("topic %s: %d -> %d partitions", topic.name, have, t["count"])
        return {"throttleTimeMs": 0, "results": results}

    def _create_partitions(self, t: dict) -> int:
        """One topic of CreatePartitions: its checks. Returns how many partitions it
        would add."""
        if self.options.read_only:  # ControllerApis: unauthorized after the duplicates
            raise ApiError(READ_ONLY_ERROR, READ_ONLY_MESSAGE)
        topic = self.catalog.topics.get(t["name"])
        if topic is None:
            raise ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION)  # the default: no message
        have, count = partition_count(topic), t["count"]
        if count == have:
            raise ApiError(Errors.INVALID_PARTITIONS,
                             f"Topic already has {have} partition(s).")
        if count < have:
            raise ApiError(Errors.INVALID_PARTITIONS, f"The topic {t['name']} currently has "
                             f"{have} partition(s); {count} would not be an increase.")
        additional = count - have
        assignments = t["assignments"]
        if assignments is not None:
            if len(assignments) != additional:
                raise ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "Attempted to add "
                                 f"{additional} additional partition(s), but only "
                                 f"{len(assignments)} assignment(s) were specified.")
            for a in assignments:
                self._check_assignment(a["brokerIds"])
        return additional

    def _check_assignment(self, broker_ids: list[int]) -> None:
        """ReplicationControlManager.validateManualPartitionAssignment (replication factor
        1, this node the only broker)."""
        if not broker_ids:
            raise ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition "
                             "assignment includes an empty replica list.")
        prev = None
        for b in sorted(broker_ids):
            if b != self.options.node_id:
                raise ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition "
                                 f"assignment includes broker {b}, but no such broker is "
                                 "registered.")
            if b == prev:
                raise ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition "
                                 f"assignment includes the broker {b} more than once.")
            prev = b
        if len(broker_ids) != 1:
            raise ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition "
                             f"assignment includes a partition with {len(broker_ids)} "
                             "replica(s), but this is not consistent with previous "
                             "partitions, which have 1 replica(s).")

    # -- DescribeCluster ------------------------------------------------------------------

    def handle_describe_cluster(self, req) -> dict:
        """AuthHelper.computeDescribeClusterResponse for a broker endpoint: this node, the
        cluster id, itself as the controller id (a KRaft broker names a random alive
        broker), all cluster operations when asked (no authorizer)."""
        v, body = req.api_version, req.body
        endpoint = body.get("endpointType", ENDPOINT_BROKER)
        if endpoint not in (ENDPOINT_BROKER, ENDPOINT_CONTROLLER):
            return {"throttleTimeMs": 0, "errorCode": int(
                Errors.INVALID_REQUEST if v == 0 else Errors.UNSUPPORTED_ENDPOINT_TYPE),
                "errorMessage": f"Unsupported endpoint type {endpoint}", "clusterId": "",
                "brokers": []}
        if endpoint != ENDPOINT_BROKER:
            return {"throttleTimeMs": 0, "errorCode": int(
                Errors.INVALID_REQUEST if v == 0 else Errors.MISMATCHED_ENDPOINT_TYPE),
                "errorMessage": "The request was sent to an endpoint of type BROKER, but we "
                                "wanted an endpoint of type CONTROLLER",
                "clusterId": "", "brokers": []}
        node = self.options.node_id
        host, port = self.endpoint(req)
        # AuthHelper.computeDescribeClusterResponse: the operations when asked, 0 without
        # DESCRIBE on the cluster
        ops = -2147483648
        if body["includeClusterAuthorizedOperations"]:
            ops = (self.auth.authorized_operations(req, ResourceType.CLUSTER, CLUSTER_NAME)
                   if self.auth.authorize_cluster(req, AclOperation.DESCRIBE) else 0)
        return {"throttleTimeMs": 0, "errorCode": 0, "errorMessage": None,
                "endpointType": ENDPOINT_BROKER, "clusterId": self.catalog.cluster_id,
                "controllerId": node,
                "brokers": [{"brokerId": node, "host": host, "port": port, "rack": None}],
                "clusterAuthorizedOperations": ops}

    # -- DescribeLogDirs ------------------------------------------------------------------

    def handle_describe_log_dirs(self, req) -> dict:
        """ReplicaManager.describeLogDirs for the one log directory: its absolute path, the
        file system's total and usable bytes (v4+), and per partition asked for (``topics``
        null: all) the bytes of its segments (``UnifiedLog.size``) and offset lag 0 (the
        high watermark is the log end offset); partitions not served are left out."""
        wanted = req.body["topics"]
        d = self.catalog.log_dir.absolute()
        if not self.auth.authorize_cluster(req, AclOperation.DESCRIBE):
            return {"throttleTimeMs": 0, "errorCode": int(Errors.CLUSTER_AUTHORIZATION_FAILED),
                    "results": []}
        result = {"errorCode": 0, "logDir": str(d), "topics": []}
        try:
            st = os.statvfs(d)
            result["totalBytes"] = st.f_blocks * st.f_frsize
            result["usableBytes"] = st.f_bavail * st.f_frsize
        except OSError as e:
            log.warning("describe log dirs: %s: %s", d, e)
            result.update(errorCode=int(Errors.KAFKA_STORAGE_ERROR))
            return {"throttleTimeMs": 0, "errorCode": 0, "results": [result]}
        asked = None if wanted is None else {(w["topic"], p) for w in wanted
                                             for p in w["partitions"]}
        for name, topic in sorted(self.catalog.topics.items()):
            parts = [{"partitionIndex": p,
                      "partitionSize": sum(s.size for s in part.segments),
                      "offsetLag": 0, "isFutureKey": False}
                     for p, part in sorted(topic.partitions.items())
                     if asked is None or (name, p) in asked]
            if parts:
                result["topics"].append({"name": name, "partitions": parts})
        return {"throttleTimeMs": 0, "errorCode": 0, "results": [result]}

    # -- DeleteRecords --------------------------------------------------------------------

    async def handle_delete_records(self, req) -> dict:
        """ReplicaManager.deleteRecords / Partition.deleteRecordsOnLeader: per partition,
        the log start offset moves up to the offset (-1: the high watermark), then
        ``log-start-offset-checkpoint`` is written before the answer (a broker writes it
        within ``log.checkpoint.interval.ms``; writing it first means an acknowledged
        deletion survives a crash). ``lowWatermark`` is the log start offset after it."""
        topics = []
        moved = False
        deletable = self.auth.filter_by_authorized(req, AclOperation.DELETE, ResourceType.TOPIC,
                                                   [t["name"] for t in req.body["topics"]])
        slices = TimeSlices()
        for name, p, parts in partition_answers(req.body["topics"], topics):
            idx = p["partitionIndex"]
            res = {"partitionIndex": idx, "lowWatermark": INVALID_LOW_WATERMARK,
                   "errorCode": 0}
            parts.append(res)
            if name not in deletable:
                res["errorCode"] = int(Errors.TOPIC_AUTHORIZATION_FAILED)
                continue
            try:
                res["lowWatermark"], changed = self._delete_records(name, idx, p["offset"])
                moved = moved or changed
            except ApiError as e:
                res["errorCode"] = int(e.error)
                log.debug("delete records of %s-%d: %s %s", name, idx, e.error.name,
                          e.message)
            await slices.pause()
        if moved:
            await asyncio.to_thread(self.catalog.prepare_checkpoint())
        return {"throttleTimeMs": 0, "topics": topics}

    def _delete_records(self, name: str, idx: int, offset: int) -> tuple[int, bool]:
        if self.options.read_only:  # KafkaApis: the DELETE authorization comes first
            raise ApiError(READ_ONLY_ERROR, READ_ONLY_MESSAGE)
        part = self.catalog.partition(name, idx)
        if part is None:  # unknown, or offline (KAFKA_STORAGE_ERROR)
            raise ApiError(self.catalog.partition_error(name, idx))
        if is_internal(name):
            raise ApiError(Errors.INVALID_TOPIC_EXCEPTION,
                             f"Cannot delete records of internal topic {name}")
        policy = self.catalog.effective_configs(self.catalog.topics[name])["cleanup.policy"]
        if not cfgs.records_deletable(policy):
            raise ApiError(Errors.POLICY_VIOLATION, cfgs.records_not_deletable_message(name, idx))
        lg = part.log
        target = lg.log_end_offset if offset == HIGH_WATERMARK else offset
        if target < 0:
            raise ApiError(Errors.OFFSET_OUT_OF_RANGE,
                             f"The offset {target} for partition {name}-{idx} is not valid")
        try:
            changed = lg.maybe_increment_log_start_offset(target)
        except OffsetOutOfRangeError as e:
            raise ApiError(Errors.OFFSET_OUT_OF_RANGE, e.message) from None
        if changed:
            log.info("%s-%d: log start offset %d (DeleteRecords)", name, idx,
                     lg.log_start_offset)
        return lg.log_start_offset, changed


def _validate_topic_name(name: str, empty_allowed: bool = False) -> None:
    """Topic.validate (ControllerConfigurationValidator.validateTopicName).

    Raises:
        ApiError: INVALID_REQUEST for an empty name (unless ``empty_allowed``: then
            Topic.validate's own), INVALID_TOPIC_EXCEPTION otherwise.
    """
    if not name and not empty_allowed:
        raise ApiError(Errors.INVALID_REQUEST, "Default topic resource is not allowed.")
    from ..storage.files import validate_topic_name

    try:
        validate_topic_name(name)
    except InvalidArgumentError as e:
        raise ApiError(Errors.INVALID_TOPIC_EXCEPTION, e.message) from None


def _apply_op(values: dict[str, str], change: dict, spec: tuple) -> None:
    """One IncrementalAlterConfigs op on ``values`` (ConfigurationControlManager):
    APPEND / SUBTRACT only for LIST configs, starting from the current value or the
    default.

    Raises:
        ApiError: APPEND / SUBTRACT on a config that is not a LIST.
    """
    name, op, value = change["name"], change["configOperation"], change["value"]
    if op == SET:
        values[name] = value
    elif op == DELETE:
        values.pop(name, None)
    else:
        default, ctype = spec
        if ctype != cfgs.LIST:
            raise ApiError(Errors.INVALID_CONFIG, f"Can't {_OP_NAMES[op]} to key {name} "
                             "because its type is not LIST.")
        current = values.get(name, default)
        parts = [p for p in (current or "").split(",") if p]
        for v in value.split(","):
            if op == APPEND and v not in parts:
                parts.append(v)
            elif op == SUBTRACT and v in parts:
                parts.remove(v)
        values[name] = ",".join(parts)
