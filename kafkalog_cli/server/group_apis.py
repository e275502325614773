"""The consumer-group request handlers, after ``KafkaApis`` (FindCoordinator, JoinGroup,
SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, ListGroups, DescribeGroups,
DeleteGroups, OffsetDelete) over the coordinator of :mod:`.groups`.

Handlers take a parsed :class:`~kafkalog_cli.protocol.wire.Request` and return a response
body; JoinGroup and SyncGroup await the group.
"""

from __future__ import annotations

import time

from ..errors import AppendError
from ..protocol.apis import ApiKeys
from ..protocol.errors import INVALID_REQUEST_MESSAGE, Errors
from .catalog import LogDirCatalog
from .groups import GroupConfig, GroupCoordinator, _join_error
from .handlers import ApiHandlers
from .security.acls import AclOperation, ResourceType

_READ, _DESCRIBE, _DELETE = AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE
_GROUP, _TOPIC = ResourceType.GROUP, ResourceType.TOPIC
_GROUP_DENIED = int(Errors.GROUP_AUTHORIZATION_FAILED)
MIN_INT32 = -(2**31)

#: FindCoordinatorRequest.CoordinatorType: GROUP (0), TRANSACTION (1); SHARE (2) has no
#: coordinator here
COORDINATOR_GROUP = 0
COORDINATOR_TRANSACTION = 1


def coordinator_write_error(error: Errors) -> Errors:
    """The error a group or transaction request gets when its write to the coordinator's
    log fails (``GroupCoordinatorService`` / ``CoordinatorRuntime``'s
    ``normalizeException``): the partition's storage failing -> NOT_COORDINATOR, one not
    available -> COORDINATOR_NOT_AVAILABLE, anything else -> UNKNOWN_SERVER_ERROR."""
    if error in (Errors.KAFKA_STORAGE_ERROR, Errors.NOT_LEADER_OR_FOLLOWER):
        return Errors.NOT_COORDINATOR
    if error in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_ENOUGH_REPLICAS,
                 Errors.REQUEST_TIMED_OUT):
        return Errors.COORDINATOR_NOT_AVAILABLE
    return Errors.UNKNOWN_SERVER_ERROR


def group_config(catalog: LogDirCatalog) -> GroupConfig:
    """The coordinator's settings from the broker configs (``--config group.*``)."""
    c = catalog.broker_configs
    return GroupConfig(
        initial_rebalance_delay_ms=c.int_value("group.initial.rebalance.delay.ms"),
        min_session_timeout_ms=c.int_value("group.min.session.timeout.ms"),
        max_session_timeout_ms=c.int_value("group.max.session.timeout.ms"),
        max_size=c.int_value("group.max.size"),
        offset_metadata_max_bytes=c.int_value("offset.metadata.max.bytes"),
        offsets_retention_ms=c.int_value("offsets.retention.minutes") * 60_000,
        offsets_retention_check_interval_ms=c.int_value("offsets.retention.check.interval.ms"))


class GroupApis(ApiHandlers):
    """The group handlers of one node; ``options`` is the server's ServerOptions."""

    def __init__(self, catalog: LogDirCatalog, options,
                 coordinator: GroupCoordinator | None = None, auth=None):
        super().__init__(catalog, options, auth)
        self.groups = coordinator or GroupCoordinator(group_config(catalog))

    #: handlers that await the group (JoinGroup / SyncGroup)
    AWAITING = frozenset({ApiKeys.JOIN_GROUP, ApiKeys.SYNC_GROUP})

    def handle_find_coordinator(self, req) -> dict:
        v = req.api_version
        body = req.body
        keys = body["coordinatorKeys"] if v >= 4 else [body["key"]]
        node = self.options.node_id
        host, port = self.endpoint(req)
        out = []
        for key in keys:
            # a found coordinator's errorMessage: "" (the message field's default)
            c = {"key": key, "nodeId": node, "host": host, "port": port, "errorCode": 0,
                 "errorMessage": ""}
            key_type = body.get("keyType", COORDINATOR_GROUP)
            denied = None
            if key_type == COORDINATOR_GROUP and not self.auth.authorize(
                    req, _DESCRIBE, _GROUP, key):
                denied = Errors.GROUP_AUTHORIZATION_FAILED, "Group authorization failed."
            elif key_type == COORDINATOR_TRANSACTION and not self.auth.authorize(
                    req, _DESCRIBE, ResourceType.TRANSACTIONAL_ID, key):
                denied = (Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                          "Transactional Id authorization failed.")
            if denied is not None:
                # KafkaApis.getCoordinator: Node.noNode; below v4 the error's message
                c.update(nodeId=-1, host="", port=-1, errorCode=int(denied[0]),
                         errorMessage=denied[1] if v < 4 else "")
            elif key_type not in (COORDINATOR_GROUP, COORDINATOR_TRANSACTION):
                # KafkaApis.getCoordinator: a share key before v6, or a node without a
                # share coordinator (this one: no share groups)
                c.update(nodeId=-1, host="", port=-1, errorCode=int(Errors.INVALID_REQUEST))
            elif not key:
                c.update(nodeId=-1, host="", port=-1, errorCode=int(Errors.INVALID_REQUEST),
                         errorMessage="the group id is empty")
            out.append(c)
        if v >= 4:
            return {"throttleTimeMs": 0, "coordinators": out}
        c = out[0]
        # FindCoordinatorResponse.prepareOldResponse: the error's own message, "NONE" too
        message = c["errorMessage"] if c["errorCode"] else Errors.NONE.name
        if c["errorCode"] == Errors.INVALID_REQUEST and not message:
            message = INVALID_REQUEST_MESSAGE
        return {"throttleTimeMs": 0, "errorCode": c["errorCode"],
                "errorMessage": message, "nodeId": c["nodeId"], "host": c["host"],
                "port": c["port"]}

    async def handle_join_group(self, req) -> dict:
        if not self.auth.authorize(req, _READ, _GROUP, req.body["groupId"]):
            return _join_error(Errors.GROUP_AUTHORIZATION_FAILED, "", req.api_version)
        res = await self.groups.join(req.body, req.api_version, req.client_id,
                                     req.client_host)
        if req.api_version < 7 and res["protocolName"] is None:
            res["protocolName"] = ""  # not nullable before v7
        return res

    async def handle_sync_group(self, req) -> dict:
        body = req.body
        mandatory = req.api_version < 5 or (body.get("protocolType") is not None and
                                            body.get("protocolName") is not None)
        if mandatory and not self.auth.authorize(req, _READ, _GROUP, body["groupId"]):
            # after the v5 protocol check (INCONSISTENT_GROUP_PROTOCOL), as KafkaApis
            return {"throttleTimeMs": 0, "errorCode": _GROUP_DENIED, "protocolType": None,
                    "protocolName": None, "assignment": b""}
        return await self.groups.sync(body, req.api_version)

    def handle_heartbeat(self, req) -> dict:
        if not self.auth.authorize(req, _READ, _GROUP, req.body["groupId"]):
            return {"throttleTimeMs": 0, "errorCode": _GROUP_DENIED}
        return {"throttleTimeMs": 0, "errorCode": int(self.groups.heartbeat(req.body))}

    def handle_leave_group(self, req) -> dict:
        """LeaveGroupRequest.normalizedData: v0-2's one member id as a member; the v0-2
        response carries the member's error as the group's (LeaveGroupResponse)."""
        body = req.body
        if not self.auth.authorize(req, _READ, _GROUP, body["groupId"]):
            return {"throttleTimeMs": 0, "errorCode": _GROUP_DENIED, "members": []}
        if req.api_version < 3:
            members = [{"memberId": body["memberId"], "groupInstanceId": None}]
        else:
            members = body["members"]
        error, errors = self.groups.leave(
            body["groupId"], [(m["memberId"], m.get("groupInstanceId")) for m in members])
        if req.api_version < 3:
            if error is Errors.NONE and errors:
                error = errors[0]
            return {"throttleTimeMs": 0, "errorCode": int(error)}
        return {"throttleTimeMs": 0, "errorCode": int(error), "members": [
            {"memberId": m["memberId"], "groupInstanceId": m.get("groupInstanceId"),
             "errorCode": int(e)} for m, e in zip(members, errors, strict=False)]}

    def handle_offset_commit(self, req) -> dict:
        """KafkaApis.handleOffsetCommitRequest: READ on the group (else every partition
        GROUP_AUTHORIZATION_FAILED), READ on each topic (TOPIC_AUTHORIZATION_FAILED), the
        topic's existence, then the coordinator's checks - which are skipped when no
        partition is left."""
        body = req.body
        if not self.auth.authorize(req, _READ, _GROUP, body["groupId"]):
            return {"throttleTimeMs": 0, "topics": [
                {"name": t["name"], "partitions": [
                    {"partitionIndex": p["partitionIndex"], "errorCode": _GROUP_DENIED}
                    for p in t["partitions"]]} for t in body["topics"]]}
        readable = self.auth.filter_by_authorized(req, _READ, _TOPIC,
                                                  [t["name"] for t in body["topics"]])
        valid = any(t["name"] in readable and self.catalog.exists(t["name"], p["partitionIndex"])
                    for t in body["topics"] for p in t["partitions"])
        error = self.groups.commit_check(body, req.api_version) if valid else Errors.NONE
        limit = self.groups.config.offset_metadata_max_bytes
        now = int(time.time() * 1000)
        topics, accepted, commits = [], [], []
        for t in body["topics"]:
            parts = []
            topics.append({"name": t["name"], "partitions": parts})
            for p in t["partitions"]:
                idx = p["partitionIndex"]
                if t["name"] not in readable:
                    e = Errors.TOPIC_AUTHORIZATION_FAILED
                elif not self.catalog.exists(t["name"], idx):
                    e = Errors.UNKNOWN_TOPIC_OR_PARTITION
                elif error is Errors.NONE and len(p["committedMetadata"] or "") > limit:
                    e = Errors.OFFSET_METADATA_TOO_LARGE
                else:
                    e = error
                parts.append({"partitionIndex": idx, "errorCode": int(e)})
                if e is Errors.NONE:
                    accepted.append(parts[-1])
                    commits.append((t["name"], idx, p["committedOffset"],
                                    p.get("committedLeaderEpoch", -1), p["committedMetadata"]))
        try:  # the request's records in one write, as the coordinator runtime appends them
            self.groups.store_offsets(body["groupId"], commits, now)
        except AppendError as ae:
            for part in accepted:
                part["errorCode"] = int(coordinator_write_error(ae.error))
        return {"throttleTimeMs": 0, "topics": topics}

    def handle_offset_fetch(self, req) -> dict:
        v = req.api_version
        body = req.body
        if v < 8:
            if not self.auth.authorize(req, _DESCRIBE, _GROUP, body["groupId"]):
                return {"throttleTimeMs": 0, "topics": [], "errorCode": _GROUP_DENIED}
            topics = self._offsets_of(req, body["groupId"], body["topics"])
            return {"throttleTimeMs": 0, "topics": topics, "errorCode": 0}
        out = []
        for g in body["groups"]:
            if not self.auth.authorize(req, _DESCRIBE, _GROUP, g["groupId"]):
                out.append({"groupId": g["groupId"], "topics": [], "errorCode": _GROUP_DENIED})
                continue
            out.append({"groupId": g["groupId"], "errorCode": 0,
                        "topics": self._offsets_of(req, g["groupId"], g["topics"])})
        return {"throttleTimeMs": 0, "groups": out}

    def _offsets_of(self, req, group_id: str, requested: list | None) -> list[dict]:
        """The committed offsets; -1 and "" where none was committed; ``None``: all. Only
        the topics the principal may DESCRIBE: the others are left out of "all" and
        answered TOPIC_AUTHORIZATION_FAILED, after the rest, when named."""
        committed = self.groups.committed(group_id)
        denied = []
        if requested is None:
            by_topic: dict[str, list[int]] = {}
            for name, idx in sorted(committed):
                by_topic.setdefault(name, []).append(idx)
            allowed = self.auth.filter_by_authorized(req, _DESCRIBE, _TOPIC, by_topic)
            requested = [{"name": n, "partitionIndexes": ps} for n, ps in by_topic.items()
                         if n in allowed]
        elif self.auth.enabled:
            allowed = self.auth.filter_by_authorized(req, _DESCRIBE, _TOPIC,
                                                     [t["name"] for t in requested])
            denied = [{"name": t["name"], "partitions": [
                {"partitionIndex": i, "committedOffset": -1, "committedLeaderEpoch": -1,
                 "metadata": "", "errorCode": int(Errors.TOPIC_AUTHORIZATION_FAILED)}
                for i in t["partitionIndexes"]]} for t in requested if t["name"] not in allowed]
            requested = [t for t in requested if t["name"] in allowed]
        out = []
        for t in requested:
            parts = []
            for idx in t["partitionIndexes"]:
                offset, epoch, meta = committed.get((t["name"], idx), (-1, -1, ""))
                parts.append({"partitionIndex": idx, "committedOffset": offset,
                              "committedLeaderEpoch": epoch, "metadata": meta,
                              "errorCode": 0})
            out.append({"name": t["name"], "partitions": parts})
        return out + denied

    # -- ListGroups / DescribeGroups / DeleteGroups / OffsetDelete ----------------------

    def handle_list_groups(self, req) -> dict:
        """KafkaApis.handleListGroupsRequest: every group (v4+ filtered by state, v5+ by
        type), with its protocol type, state and type."""
        body = req.body
        groups = self.groups.list_groups(body.get("statesFilter") or [],
                                         body.get("typesFilter") or [])
        if not self.auth.authorize_cluster(req, _DESCRIBE, log_if_denied=False):
            # without DESCRIBE on the cluster: the groups the principal may describe
            groups = [g for g in groups if self.auth.authorize(
                req, _DESCRIBE, _GROUP, g["groupId"], log_if_denied=False)]
        return {"throttleTimeMs": 0, "errorCode": 0, "groups": groups}

    def handle_describe_groups(self, req) -> dict:
        """KafkaApis.handleDescribeGroupsRequest: each group (unknown ones Dead), with the
        group's authorized operations when asked (v3+; all of them, no authorizer)."""
        body = req.body
        ops = req.api_version >= 3 and body.get("includeAuthorizedOperations", False)
        denied, out = [], []
        for gid in body["groups"]:
            if not self.auth.authorize(req, _DESCRIBE, _GROUP, gid):
                # DescribeGroupsResponse.groupError, before the described groups
                denied.append({"errorCode": _GROUP_DENIED, "groupId": gid, "groupState": "",
                               "protocolType": "", "protocolData": "", "members": [],
                               "authorizedOperations": MIN_INT32})
                continue
            g = self.groups.describe_group(gid)
            g["authorizedOperations"] = self.auth.authorized_operations(
                req, _GROUP, gid) if ops and g["errorCode"] == 0 else MIN_INT32
            if req.api_version >= 6 and g["errorCode"] == 0 and \
                    gid not in self.groups.groups:
                # v6 (KIP-1043): an unknown group is GROUP_ID_NOT_FOUND, not a Dead one
                g.update(errorCode=int(Errors.GROUP_ID_NOT_FOUND),
                         errorMessage=f"Group {gid} not found.", authorizedOperations=MIN_INT32)
            out.append(g)
        return {"throttleTimeMs": 0, "groups": denied + out}

    def handle_delete_groups(self, req) -> dict:
        """KafkaApis.handleDeleteGroupsRequest: each distinct group id once."""
        ids = list(dict.fromkeys(req.body["groupsNames"]))
        allowed = self.auth.filter_by_authorized(req, _DELETE, _GROUP, ids)
        results = [{"groupId": g, "errorCode": int(e)} for g, e in
                   self.groups.delete_groups([g for g in ids if g in allowed])]
        return {"throttleTimeMs": 0, "results": results + [
            {"groupId": g, "errorCode": _GROUP_DENIED} for g in ids if g not in allowed]}

    def handle_offset_delete(self, req) -> dict:
        """KafkaApis.handleOffsetDeleteRequest: partitions of unknown topics or partitions
        get UNKNOWN_TOPIC_OR_PARTITION; the rest go to the coordinator, whose group-level
        error (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP) replaces the whole answer."""
        body = req.body
        gid = body["groupId"]
        if not self.auth.authorize(req, _DELETE, _GROUP, gid):
            return {"errorCode": _GROUP_DENIED, "throttleTimeMs": 0, "topics": []}
        if not gid:
            return {"errorCode": int(Errors.INVALID_GROUP_ID), "throttleTimeMs": 0,
                    "topics": []}
        readable = self.auth.filter_by_authorized(req, _READ, _TOPIC,
                                                  [t["name"] for t in body["topics"]])
        unknown: dict[str, list[tuple[int, Errors]]] = {}
        valid: list[tuple[str, list[int]]] = []
        for t in body["topics"]:
            name = t["name"]
            idxs = [p["partitionIndex"] for p in t["partitions"]]
            if name not in readable:
                unknown.setdefault(name, []).extend(
                    (i, Errors.TOPIC_AUTHORIZATION_FAILED) for i in idxs)
                continue
            ok = [i for i in idxs if self.catalog.exists(name, i)]
            bad = [i for i in idxs if i not in ok]
            if bad:
                unknown.setdefault(name, []).extend(
                    (i, Errors.UNKNOWN_TOPIC_OR_PARTITION) for i in bad)
            if ok:
                valid.append((name, ok))
        error, results = self.groups.delete_offsets(gid, valid)
        if error is not Errors.NONE:
            return {"errorCode": int(error), "throttleTimeMs": 0, "topics": []}
        by_topic: dict[str, list[dict]] = {}
        for name, parts in list(unknown.items()) + results:
            by_topic.setdefault(name, []).extend(
                {"partitionIndex": i, "errorCode": int(e)} for i, e in parts)
        return {"errorCode": 0, "throttleTimeMs": 0,
                "topics": [{"name": n, "partitions": ps} for n, ps in by_topic.items()]}
