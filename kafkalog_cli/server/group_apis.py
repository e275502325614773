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
from ..protocol.errors import Errors
from .catalog import LogDirCatalog
from .groups import GROUP_AUTHORIZED_OPERATIONS, MIN_INT32, GroupConfig, GroupCoordinator
from .handlers import ApiHandlers

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
        offset_metadata_max_bytes=c.int_value("offset.metadata.max.bytes"))


class GroupApis(ApiHandlers):
    """The group handlers of one node; ``options`` is the server's ServerOptions."""

    def __init__(self, catalog: LogDirCatalog, options,
                 coordinator: GroupCoordinator | None = None):
        super().__init__(catalog, options)
        self.groups = coordinator or GroupCoordinator(group_config(catalog))

    #: handlers that await the group (JoinGroup / SyncGroup)
    AWAITING = frozenset({ApiKeys.JOIN_GROUP, ApiKeys.SYNC_GROUP})

    def handle_find_coordinator(self, req) -> dict:
        v = req.api_version
        body = req.body
        keys = body["coordinatorKeys"] if v >= 4 else [body["key"]]
        node = self.options.node_id
        out = []
        for key in keys:
            # a found coordinator's errorMessage: "" (the message field's default)
            c = {"key": key, "nodeId": node, "host": self.options.host,
                 "port": self.options.port, "errorCode": 0, "errorMessage": ""}
            if body.get("keyType", COORDINATOR_GROUP) not in (COORDINATOR_GROUP,
                                                               COORDINATOR_TRANSACTION):
                c.update(nodeId=-1, host="", port=-1,
                         errorCode=int(Errors.COORDINATOR_NOT_AVAILABLE),
                         errorMessage="this server has no share coordinator")
            elif not key:
                c.update(nodeId=-1, host="", port=-1, errorCode=int(Errors.INVALID_REQUEST),
                         errorMessage="the group id is empty")
            out.append(c)
        if v >= 4:
            return {"throttleTimeMs": 0, "coordinators": out}
        c = out[0]
        # FindCoordinatorResponse.prepareOldResponse: the error's own message, "NONE" too
        message = c["errorMessage"] if c["errorCode"] else Errors.NONE.name
        return {"throttleTimeMs": 0, "errorCode": c["errorCode"],
                "errorMessage": message, "nodeId": c["nodeId"], "host": c["host"],
                "port": c["port"]}

    async def handle_join_group(self, req) -> dict:
        res = await self.groups.join(req.body, req.api_version, req.client_id,
                                     req.client_host)
        if req.api_version < 7 and res["protocolName"] is None:
            res["protocolName"] = ""  # not nullable before v7
        return res

    async def handle_sync_group(self, req) -> dict:
        return await self.groups.sync(req.body, req.api_version)

    def handle_heartbeat(self, req) -> dict:
        return {"throttleTimeMs": 0, "errorCode": int(self.groups.heartbeat(req.body))}

    def handle_leave_group(self, req) -> dict:
        """LeaveGroupRequest.normalizedData: v0-2's one member id as a member; the v0-2
        response carries the member's error as the group's (LeaveGroupResponse)."""
        body = req.body
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
        body = req.body
        error = self.groups.commit_check(body, req.api_version)
        limit = self.groups.config.offset_metadata_max_bytes
        now = int(time.time() * 1000)
        topics = []
        for t in body["topics"]:
            parts = []
            topics.append({"name": t["name"], "partitions": parts})
            for p in t["partitions"]:
                idx = p["partitionIndex"]
                e = error
                if e is Errors.NONE:
                    if not self.catalog.exists(t["name"], idx):
                        e = Errors.UNKNOWN_TOPIC_OR_PARTITION
                    elif len(p["committedMetadata"] or "") > limit:
                        e = Errors.OFFSET_METADATA_TOO_LARGE
                    else:
                        try:
                            self.groups.store_offset(body["groupId"], t["name"], idx,
                                                     p["committedOffset"],
                                                     p.get("committedLeaderEpoch", -1),
                                                     p["committedMetadata"], now)
                        except AppendError as ae:
                            e = coordinator_write_error(ae.error)
                parts.append({"partitionIndex": idx, "errorCode": int(e)})
        return {"throttleTimeMs": 0, "topics": topics}

    def handle_offset_fetch(self, req) -> dict:
        v = req.api_version
        body = req.body
        if v < 8:
            topics = self._offsets_of(body["groupId"], body["topics"])
            return {"throttleTimeMs": 0, "topics": topics, "errorCode": 0}
        return {"throttleTimeMs": 0, "groups": [
            {"groupId": g["groupId"], "topics": self._offsets_of(g["groupId"], g["topics"]),
             "errorCode": 0} for g in body["groups"]]}

    def _offsets_of(self, group_id: str, requested: list | None) -> list[dict]:
        """The committed offsets; -1 and "" where none was committed; ``None``: all."""
        committed = self.groups.committed(group_id)
        if requested is None:
            by_topic: dict[str, list[int]] = {}
            for name, idx in sorted(committed):
                by_topic.setdefault(name, []).append(idx)
            requested = [{"name": n, "partitionIndexes": ps} for n, ps in by_topic.items()]
        out = []
        for t in requested:
            parts = []
            for idx in t["partitionIndexes"]:
                offset, epoch, meta = committed.get((t["name"], idx), (-1, -1, ""))
                parts.append({"partitionIndex": idx, "committedOffset": offset,
                              "committedLeaderEpoch": epoch, "metadata": meta,
                              "errorCode": 0})
            out.append({"name": t["name"], "partitions": parts})
        return out

    # -- ListGroups / DescribeGroups / DeleteGroups / OffsetDelete ----------------------

    def handle_list_groups(self, req) -> dict:
        """KafkaApis.handleListGroupsRequest: every group (v4+ filtered by state, v5+ by
        type), with its protocol type, state and type."""
        body = req.body
        return {"throttleTimeMs": 0, "errorCode": 0, "groups": self.groups.list_groups(
            body.get("statesFilter") or [], body.get("typesFilter") or [])}

    def handle_describe_groups(self, req) -> dict:
        """KafkaApis.handleDescribeGroupsRequest: each group (unknown ones Dead), with the
        group's authorized operations when asked (v3+; all of them, no authorizer)."""
        body = req.body
        ops = req.api_version >= 3 and body.get("includeAuthorizedOperations", False)
        out = []
        for gid in body["groups"]:
            g = self.groups.describe_group(gid)
            g["authorizedOperations"] = GROUP_AUTHORIZED_OPERATIONS if ops else MIN_INT32
            out.append(g)
        return {"throttleTimeMs": 0, "groups": out}

    def handle_delete_groups(self, req) -> dict:
        """KafkaApis.handleDeleteGroupsRequest: each distinct group id once."""
        ids = list(dict.fromkeys(req.body["groupsNames"]))
        return {"throttleTimeMs": 0, "results": [
            {"groupId": g, "errorCode": int(e)} for g, e in self.groups.delete_groups(ids)]}

    def handle_offset_delete(self, req) -> dict:
        """KafkaApis.handleOffsetDeleteRequest: partitions of unknown topics or partitions
        get UNKNOWN_TOPIC_OR_PARTITION; the rest go to the coordinator, whose group-level
        error (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP) replaces the whole answer."""
        body = req.body
        gid = body["groupId"]
        if not gid:
            return {"errorCode": int(Errors.INVALID_GROUP_ID), "throttleTimeMs": 0,
                    "topics": []}
        unknown: dict[str, list[tuple[int, Errors]]] = {}
        valid: list[tuple[str, list[int]]] = []
        for t in body["topics"]:
            name = t["name"]
            idxs = [p["partitionIndex"] for p in t["partitions"]]
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
