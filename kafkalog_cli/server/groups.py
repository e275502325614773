"""The consumer-group coordinator of one node, after the classic-group handling of Kafka's
group coordinator (``GroupMetadataManager``, ``OffsetMetadataManager``,
``GroupCoordinatorConfig``): JoinGroup / SyncGroup / Heartbeat / LeaveGroup /
OffsetCommit / OffsetFetch, ListGroups / DescribeGroups / DeleteGroups / OffsetDelete; the
"classic" protocol, not KIP-848. The groups it drives are :mod:`.classic_group`'s
(``ClassicGroup``, ``ClassicGroupMember``, ``OffsetAndMetadata``, ``GroupStore``).

The state machine is Kafka's: Empty -> PreparingRebalance -> CompletingRebalance ->
Stable (-> PreparingRebalance ...), Dead once deleted. It keeps:

* the join phase: a JoinGroup waits until every member has rejoined (or the largest
  rebalance timeout passes, which drops the dynamic members that did not); a group's first
  rebalance (from Empty) waits ``group.initial.rebalance.delay.ms`` (3000 ms by default),
  extended by the same delay while new members keep arriving, up to the rebalance timeout
  (``tryCompleteInitialRebalanceElseSchedule``); the protocol is chosen by the members'
  votes; v4+ joins without a member id get ``MEMBER_ID_REQUIRED`` and a pending id;
* static membership (``group.instance.id``, KIP-345): a static member rejoining with an
  unknown member id replaces its old id (whose pending requests get
  ``FENCED_INSTANCE_ID``) and, in Stable, keeps its assignment without a rebalance unless
  the group's protocol would change; requests naming an instance id with another member
  id get ``FENCED_INSTANCE_ID``; static members that do not rejoin are kept through a
  rebalance (only their session timeout removes them); LeaveGroup by instance id;
* the sync phase: the leader's SyncGroup hands out the assignments; the members that do
  not sync within the rebalance timeout are removed (``expirePendingSync``);
* sessions: each member's timer (restarted by heartbeats, commits, join and sync answers)
  removes a member not heard from within its session timeout; a new member awaiting its
  first JoinGroup answer is removed after 5 minutes (``group.classic.new.member.join.
  timeout.ms``); a pending member id after its session timeout;
* offsets: committed offsets per group (``OffsetMetadataManager``): standalone commits
  (generation -1) create an empty "simple" group; OffsetDelete refuses partitions of
  topics a consumer group subscribes to.

The coordinator tells its :class:`~.classic_group.GroupStore` each change, where Kafka
appends a record to ``__consumer_offsets``.

Everything runs on the server's event loop (timers are ``loop.call_later`` handles).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass

from ..protocol.errors import Errors
from .classic_group import (
    CLASSIC,
    COMPLETING,
    DEAD,
    EMPTY,
    PREPARING,
    STABLE,
    Group,
    GroupStore,
    Member,
    OffsetAndMetadata,
)

log = logging.getLogger("kafkalog.serve")


@dataclass
class GroupConfig:
    """The broker configs of the classic group coordinator (GroupCoordinatorConfig)."""

    #: group.initial.rebalance.delay.ms
    initial_rebalance_delay_ms: int = 3000
    #: group.min.session.timeout.ms / group.max.session.timeout.ms
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    #: group.max.size
    max_size: int = 2**31 - 1
    #: offset.metadata.max.bytes
    offset_metadata_max_bytes: int = 4096
    #: offsets.retention.minutes, in ms / offsets.retention.check.interval.ms
    #: (:mod:`.offset_expiration`)
    offsets_retention_ms: int = 10080 * 60_000
    offsets_retention_check_interval_ms: int = 600_000
    #: group.classic.new.member.join.timeout.ms (internal)
    new_member_join_timeout_ms: int = 300_000


class GroupCoordinator:
    """The classic groups of this node. ``config``: :class:`GroupConfig`; ``store``: the
    :class:`GroupStore` told about each change."""

    def __init__(self, config: GroupConfig | None = None, store: GroupStore | None = None):
        self.config = config or GroupConfig()
        self.store = store or GroupStore()
        self.groups: dict[str, Group] = {}
        #: producer id -> group id -> the offsets of its open transaction (TxnOffsetCommit)
        self.pending_txn_offsets: dict[int, dict[str, dict[tuple[str, int],
                                                           OffsetAndMetadata]]] = {}
        #: (group id, member id) -> the member's session deadline (Kafka's heartbeat key);
        #: pending member ids have one too
        self._sessions: dict[tuple[str, str], asyncio.TimerHandle] = {}

    # -- JoinGroup --------------------------------------------------------------------------

    async def join(self, body: dict, version: int, client_id: str,
                   client_host: str = "") -> dict:
        """GroupCoordinatorService.joinGroup + classicGroupJoinToClassicGroup: the
        JoinGroupResponse body, once the join phase completes (or at once for errors,
        MEMBER_ID_REQUIRED and rejoins answered from the current generation)."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._join(fut, body, version, client_id, client_host)
        return await fut

    def _join(self, fut, body, version, client_id, client_host) -> None:
        gid, member_id = body["groupId"], body["memberId"]
        session = body["sessionTimeoutMs"]

        def fail(e: Errors, mid: str = member_id) -> None:
            fut.set_result(_join_error(e, mid, version))

        if not gid:
            return fail(Errors.INVALID_GROUP_ID)
        if not self.config.min_session_timeout_ms <= session <= \
                self.config.max_session_timeout_ms:
            return fail(Errors.INVALID_SESSION_TIMEOUT)
        unknown = member_id == ""
        group = self.groups.get(gid)
        if group is None:
            if not unknown:
                return fail(Errors.UNKNOWN_MEMBER_ID)
            group = self.groups[gid] = Group(gid)
            self.store.group_metadata(group, {})
        if not self._accept_joining_member(group, member_id):
            group.remove(member_id)
            return fail(Errors.GROUP_MAX_SIZE_REACHED, "")
        req = _JoinRequest(body, version, client_id, client_host, fut)
        if unknown:
            self._join_new_member(group, req)
        else:
            self._join_existing_member(group, req)

    def _accept_joining_member(self, group: Group, member_id: str) -> bool:
        """acceptJoiningMember: group.max.size."""
        size = self.config.max_size
        if group.state in (EMPTY, DEAD):
            return True
        if group.state == PREPARING:
            m = group.members.get(member_id)
            awaiting = sum(1 for x in group.members.values() if x.join is not None)
            return (m is not None and m.join is not None) or awaiting < size
        return member_id in group.members or len(group.members) < size

    def _join_new_member(self, group: Group, req: _JoinRequest) -> None:
        if group.state == DEAD:
            return req.fail(Errors.COORDINATOR_NOT_AVAILABLE, "")
        if not group.supports_protocols(req.protocol_type, req.protocol_names):
            return req.fail(Errors.INCONSISTENT_GROUP_PROTOCOL, "")
        new_id = f"{req.instance_id or req.client_id}-{uuid.uuid4()}"
        if req.instance_id is not None:
            existing = group.static_members.get(req.instance_id)
            if existing is not None:
                log.info("group %s: static member %s rejoins, replacing member %s",
                         group.group_id, req.instance_id, existing)
                return self._update_static_member(group, req, existing, new_id)
            return self._add_member(group, req, new_id)
        if req.version >= 4:
            # KIP-394: the member id is handed out; it joins again with it
            group.pending_join.add(new_id)
            self._schedule_session(group, new_id, req.session_timeout_ms)
            return req.fail(Errors.MEMBER_ID_REQUIRED, new_id)
        self._add_member(group, req, new_id)

    def _join_existing_member(self, group: Group, req: _JoinRequest) -> None:
        mid = req.member_id
        if group.state == DEAD:
            return req.fail(Errors.COORDINATOR_NOT_AVAILABLE)
        if not group.supports_protocols(req.protocol_type, req.protocol_names):
            return req.fail(Errors.INCONSISTENT_GROUP_PROTOCOL)
        if mid in group.pending_join:
            return self._add_member(group, req, mid)
        error = group.validate_member(mid, req.instance_id)
        if error is not Errors.NONE:
            return req.fail(error)
        member = group.members[mid]
        if group.state == PREPARING:
            return self._update_member_then_rebalance(group, member, req)
        if group.state == COMPLETING:
            if member.matches(req.protocols):
                # the member missed the JoinGroup answer: the current generation again
                members = group.join_members() if mid == group.leader else []
                return req.fut.set_result(self._join_response(group, mid, members))
            return self._update_member_then_rebalance(group, member, req)
        if group.state == STABLE:
            if mid == group.leader or not member.matches(req.protocols):
                # the leader's join always rebalances (it may see a change the metadata
                # does not); changed metadata does too
                return self._update_member_then_rebalance(group, member, req)
            return req.fut.set_result(self._join_response(group, mid, []))
        # Empty: the member must reset its generation and join again
        req.fail(Errors.UNKNOWN_MEMBER_ID)

    def _add_member(self, group: Group, req: _JoinRequest, member_id: str) -> None:
        """addMemberThenRebalanceOrCompleteJoin."""
        member = Member(member_id, req.instance_id, req.client_id, req.client_host,
                        req.rebalance_timeout_ms, req.session_timeout_ms, req.protocol_type,
                        req.protocols, is_new=True)
        if group.state == PREPARING and group.previous_state == EMPTY:
            group.new_member_added = True  # the initial rebalance may wait longer
        group.add(member)
        member.join = req.fut
        # a new member cannot heartbeat yet: its join is bounded by the new-member timeout
        self._schedule_session(group, member_id, self.config.new_member_join_timeout_ms)
        self._maybe_prepare_rebalance_or_complete_join(group)

    def _update_member_then_rebalance(self, group: Group, member: Member,
                                      req: _JoinRequest) -> None:
        """updateMemberThenRebalanceOrCompleteJoin."""
        self._update_member(member, req)
        self._maybe_prepare_rebalance_or_complete_join(group)

    @staticmethod
    def _update_member(member: Member, req: _JoinRequest) -> None:
        member.protocols = req.protocols
        member.rebalance_timeout_ms = req.rebalance_timeout_ms
        member.session_timeout_ms = req.session_timeout_ms
        if member.join is not None and not member.join.done():
            # the member's earlier join is superseded (ClassicGroup.updateMember replaces
            # the future; the old request gets no answer from the broker - here it gets
            # UNKNOWN_MEMBER_ID so its connection is not left waiting)
            member.join.set_result(_join_error(Errors.UNKNOWN_MEMBER_ID, member.member_id,
                                               req.version))
        member.join = req.fut

    def _update_static_member(self, group: Group, req: _JoinRequest, old_id: str,
                              new_id: str) -> None:
        """updateStaticMemberThenRebalanceOrCompleteJoin: the new id takes the old one's
        place (and assignment); in Stable, unless the group's protocol would change, the
        member gets the current generation without a rebalance."""
        current_leader = group.leader
        member = self._replace_static_member(group, req.instance_id, old_id, new_id)
        self._reschedule_session(group, member)
        self._update_member(member, req)
        if group.state == STABLE:
            if group.protocol == group.select_protocol():
                self.store.group_metadata(group, group.assignment())
                is_leader = member.member_id == group.leader
                if req.version >= 9:
                    response = self._join_response(
                        group, new_id, group.join_members() if is_leader else [])
                    response["skipAssignment"] = is_leader
                else:
                    response = self._join_response(group, new_id, [])
                    response["leader"] = current_leader
                _resolve(member, "join", response)
                return
            return self._maybe_prepare_rebalance_or_complete_join(group)
        if group.state == COMPLETING:
            # the leader may have assigned to the old id: rebalance
            return self._prepare_rebalance(group)
        self._maybe_complete_join_phase(group)

    def _replace_static_member(self, group: Group, instance_id: str, old_id: str,
                               new_id: str) -> Member:
        """ClassicGroup.replaceStaticMember: the old id's pending join / sync answers are
        FENCED_INSTANCE_ID."""
        old = group.members.pop(old_id)
        self._cancel_session(group, old_id)
        _resolve(old, "join", {"throttleTimeMs": 0, "errorCode": int(Errors.FENCED_INSTANCE_ID),
                               "generationId": -1, "protocolType": None,
                               "protocolName": None, "leader": "", "skipAssignment": False,
                               "memberId": old_id, "members": []})
        _resolve(old, "sync", {"errorCode": int(Errors.FENCED_INSTANCE_ID)})
        new = Member(new_id, instance_id, old.client_id, old.client_host,
                     old.rebalance_timeout_ms, old.session_timeout_ms, old.protocol_type,
                     old.protocols, assignment=old.assignment)
        group.members[new_id] = new
        if group.leader == old_id:
            group.leader = new_id
        group.static_members[instance_id] = new_id
        return new

    def _maybe_prepare_rebalance_or_complete_join(self, group: Group) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group)
        else:
            self._maybe_complete_join_phase(group)

    def _prepare_rebalance(self, group: Group) -> None:
        """prepareRebalance: members awaiting a SyncGroup answer must rejoin; a group's first
        rebalance waits the initial delay, others until every member rejoined."""
        if group.state == COMPLETING:
            for m in group.members.values():
                m.assignment = b""
            self._propagate_assignment(group, Errors.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration(group)
        initial = group.state == EMPTY
        if initial:
            delay = self.config.initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            self._schedule_join(group, delay, self._try_complete_initial_rebalance,
                                group, delay, remaining)
        group.transition(PREPARING)
        log.debug("group %s: preparing to rebalance (generation %d)", group.group_id,
                  group.generation)
        if not initial:
            if group.has_all_members_joined():
                self._complete_join(group)
            else:
                self._schedule_join(group, group.rebalance_timeout_ms(), self._complete_join,
                                    group)

    def _try_complete_initial_rebalance(self, group: Group, delay: int, remaining: int) -> None:
        """tryCompleteInitialRebalanceElseSchedule: while new members keep joining, wait
        another delay (at most the rebalance timeout in all)."""
        group.join_timer = None
        if group.state == DEAD or self.groups.get(group.group_id) is not group:
            return
        if group.new_member_added and remaining != 0:
            group.new_member_added = False
            new_delay = min(self.config.initial_rebalance_delay_ms, remaining)
            new_remaining = max(remaining - delay, 0)
            self._schedule_join(group, new_delay, self._try_complete_initial_rebalance,
                                group, new_delay, new_remaining)
        else:
            self._complete_join(group)

    def _maybe_complete_join_phase(self, group: Group) -> None:
        """maybeCompleteJoinPhase: not during the initial rebalance's delay."""
        if group.state != PREPARING or group.previous_state == EMPTY:
            return
        if group.has_all_members_joined():
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        """completeClassicGroupJoin: drop the dynamic members that did not rejoin, elect a
        leader among those that did, start the next generation and answer every join (the
        leader gets the members' metadata); the members must then sync within the
        rebalance timeout."""
        self._cancel(group, "join_timer")
        if group.state != PREPARING:
            return
        for m in [m for m in group.members.values() if m.join is None and not m.is_static]:
            group.remove(m.member_id)
            self._cancel_session(group, m.member_id)
        if group.members and not self._maybe_elect_new_joined_leader(group):
            # nobody rejoined: wait again, until the session timeouts remove the members
            self._schedule_join(group, group.rebalance_timeout_ms(), self._complete_join,
                                group)
            return
        group.init_next_generation()
        if group.state == EMPTY:
            self.store.group_metadata(group, {})
            return
        log.info("group %s: generation %d with %d members", group.group_id, group.generation,
                 len(group.members))
        members = group.join_members()
        for m in list(group.members.values()):
            response = self._join_response(
                group, m.member_id, members if m.member_id == group.leader else [])
            _resolve(m, "join", response)
            self._reschedule_session(group, m)
            m.is_new = False
            group.pending_sync.add(m.member_id)
        group.sync_timer = asyncio.get_running_loop().call_later(
            group.rebalance_timeout_ms() / 1000, self._expire_pending_sync, group,
            group.generation)

    @staticmethod
    def _maybe_elect_new_joined_leader(group: Group) -> bool:
        leader = group.members.get(group.leader) if group.leader else None
        if leader is None:
            return False
        if leader.join is not None:
            return True
        for m in group.members.values():
            if m.join is not None:
                group.leader = m.member_id
                return True
        return False

    @staticmethod
    def _join_response(group: Group, member_id: str, members: list[dict]) -> dict:
        return {"throttleTimeMs": 0, "errorCode": 0, "generationId": group.generation,
                "protocolType": group.protocol_type, "protocolName": group.protocol,
                "leader": group.leader or "", "skipAssignment": False,
                "memberId": member_id, "members": members}

    # -- SyncGroup --------------------------------------------------------------------------

    async def sync(self, body: dict, version: int) -> dict:
        """GroupCoordinatorService.syncGroup + classicGroupSyncToClassicGroup."""
        fut = asyncio.get_running_loop().create_future()
        self._sync(fut, body, version)
        result = await fut
        return _sync_response(result)

    def _sync(self, fut, body: dict, version: int) -> None:
        def fail(e: Errors) -> None:
            fut.set_result({"errorCode": int(e)})

        if version >= 5 and (body.get("protocolType") is None
                             or body.get("protocolName") is None):
            # SyncGroupRequest.areMandatoryProtocolTypeAndNamePresent
            return fail(Errors.INCONSISTENT_GROUP_PROTOCOL)
        gid, mid = body["groupId"], body["memberId"]
        if not gid:
            return fail(Errors.INVALID_GROUP_ID)
        group = self.groups.get(gid)
        if group is None or group.state == EMPTY:
            return fail(Errors.UNKNOWN_MEMBER_ID)
        if group.state == DEAD:
            return fail(Errors.COORDINATOR_NOT_AVAILABLE)
        error = group.validate_member(mid, body.get("groupInstanceId"))
        if error is not Errors.NONE:
            return fail(error)
        if body["generationId"] != group.generation:
            return fail(Errors.ILLEGAL_GENERATION)
        if _inconsistent(body.get("protocolType"), group.protocol_type) or \
                _inconsistent(body.get("protocolName"), group.protocol):
            return fail(Errors.INCONSISTENT_GROUP_PROTOCOL)
        if group.state == PREPARING:
            return fail(Errors.REBALANCE_IN_PROGRESS)
        member = group.members[mid]
        if group.state == STABLE:
            self._remove_pending_sync_member(group, mid)
            return fut.set_result({"errorCode": 0, "protocolType": group.protocol_type,
                                   "protocolName": group.protocol,
                                   "assignment": member.assignment})
        # CompletingRebalance
        member.sync = fut
        self._remove_pending_sync_member(group, mid)
        if mid == group.leader:
            given = {a["memberId"]: bytes(a["assignment"]) for a in body["assignments"]}
            # members the leader left out get an empty assignment
            assignment = {m: b"" for m in group.members} | given
            self.store.group_metadata(group, assignment)
            for m in group.members.values():
                m.assignment = assignment.get(m.member_id, b"")
            self._propagate_assignment(group, Errors.NONE)
            group.transition(STABLE)

    def _propagate_assignment(self, group: Group, error: Errors) -> None:
        """propagateAssignment: every member awaiting SyncGroup gets its assignment (or
        ``error``) and a fresh session."""
        for m in group.members.values():
            if m.sync is not None:
                _resolve(m, "sync", {
                    "errorCode": int(error),
                    "protocolType": group.protocol_type if error is Errors.NONE else None,
                    "protocolName": group.protocol if error is Errors.NONE else None,
                    "assignment": m.assignment})
                self._reschedule_session(group, m)

    def _remove_pending_sync_member(self, group: Group, member_id: str) -> None:
        group.pending_sync.discard(member_id)
        if group.state in (DEAD, EMPTY, PREPARING) or not group.pending_sync:
            self._cancel(group, "sync_timer")

    def _remove_sync_expiration(self, group: Group) -> None:
        group.pending_sync.clear()
        self._cancel(group, "sync_timer")

    def _expire_pending_sync(self, group: Group, generation: int) -> None:
        """expirePendingSync: the members of this generation that never sent SyncGroup are
        removed and the group rebalances (followers waiting for a leader that did not
        sync get REBALANCE_IN_PROGRESS)."""
        group.sync_timer = None
        if generation != group.generation or group.state not in (COMPLETING, STABLE):
            return
        if not group.pending_sync:
            return
        for mid in list(group.pending_sync):
            member = group.remove(mid)
            if member is not None:
                self._cancel_session(group, mid)
                _resolve(member, "sync", {"errorCode": int(Errors.UNKNOWN_MEMBER_ID)})
        self._prepare_rebalance(group)

    # -- Heartbeat / LeaveGroup -------------------------------------------------------------

    def heartbeat(self, body: dict) -> Errors:
        """classicGroupHeartbeatToClassicGroup: member and generation checked first; then
        Empty -> UNKNOWN_MEMBER_ID, PreparingRebalance -> REBALANCE_IN_PROGRESS (the session
        still restarts), CompletingRebalance / Stable -> NONE."""
        gid = body["groupId"]
        if not gid:
            return Errors.INVALID_GROUP_ID
        group = self.groups.get(gid)
        if group is None:
            return Errors.UNKNOWN_MEMBER_ID
        if group.state == DEAD:
            return Errors.COORDINATOR_NOT_AVAILABLE
        error = group.validate_member(body["memberId"], body.get("groupInstanceId"))
        if error is not Errors.NONE:
            return error
        if body["generationId"] != group.generation:
            return Errors.ILLEGAL_GENERATION
        if group.state == EMPTY:
            return Errors.UNKNOWN_MEMBER_ID
        self._reschedule_session(group, group.members[body["memberId"]])
        return Errors.REBALANCE_IN_PROGRESS if group.state == PREPARING else Errors.NONE

    def leave(self, group_id: str, members: list[tuple[str, str | None]]
              ) -> tuple[Errors, list[Errors]]:
        """classicGroupLeaveToClassicGroup for ``[(member id, group instance id)]``: the
        group-level error and one per member; a member id "" with an instance id removes
        that static member (the admin client's removeMembersFromConsumerGroup)."""
        if not group_id:
            return Errors.INVALID_GROUP_ID, []
        group = self.groups.get(group_id)
        if group is None:
            return Errors.NONE, [Errors.UNKNOWN_MEMBER_ID] * len(members)
        if group.state == DEAD:
            return Errors.COORDINATOR_NOT_AVAILABLE, []
        out = []
        for mid, iid in members:
            if mid == "":
                if iid is not None and iid in group.static_members:
                    self._remove_current_member(group, group.static_members[iid])
                    out.append(Errors.NONE)
                else:
                    out.append(Errors.UNKNOWN_MEMBER_ID)
            elif mid in group.pending_join:
                group.pending_join.discard(mid)
                self._cancel_session(group, mid)
                out.append(Errors.NONE)
            else:
                error = group.validate_member(mid, iid)
                if error is Errors.NONE:
                    self._remove_current_member(group, mid)
                out.append(error)
        if any(e is Errors.NONE for e in out):
            if group.state in (STABLE, COMPLETING):
                self._maybe_prepare_rebalance_or_complete_join(group)
            elif group.state == PREPARING:
                self._maybe_complete_join_phase(group)
        return Errors.NONE, out

    def _remove_current_member(self, group: Group, member_id: str) -> None:
        member = group.remove(member_id)
        if member is None:
            return
        self._cancel_session(group, member_id)
        _resolve(member, "join", _join_error(Errors.UNKNOWN_MEMBER_ID, "", 9))
        _resolve(member, "sync", {"errorCode": int(Errors.UNKNOWN_MEMBER_ID)})

    # -- sessions ---------------------------------------------------------------------------

    def _schedule_session(self, group: Group, member_id: str, timeout_ms: int) -> None:
        """(Re)start the session timer of ``member_id`` (a member or a pending id)."""
        self._cancel_session(group, member_id)
        self._sessions[(group.group_id, member_id)] = asyncio.get_running_loop().call_later(
            timeout_ms / 1000, self._expire_session, group, member_id)

    def _cancel_session(self, group: Group, member_id: str) -> None:
        handle = self._sessions.pop((group.group_id, member_id), None)
        if handle is not None:
            handle.cancel()

    def _reschedule_session(self, group: Group, member: Member) -> None:
        """rescheduleClassicGroupMemberHeartbeat: expired unless heard from again within
        the session timeout."""
        self._schedule_session(group, member.member_id, member.session_timeout_ms)

    def _expire_session(self, group: Group, member_id: str) -> None:
        """expireClassicGroupMemberHeartbeat: a pending id is dropped; a member awaiting a
        JoinGroup or SyncGroup answer satisfies its heartbeats (unless new); any other is
        removed and the group rebalances."""
        self._sessions.pop((group.group_id, member_id), None)
        if group.state == DEAD:
            return
        if member_id in group.pending_join:
            group.pending_join.discard(member_id)
            if group.state == PREPARING and group.has_all_members_joined():
                self._complete_join(group)
            return
        member = group.members.get(member_id)
        if member is None or member.has_satisfied_heartbeat():
            return
        log.info("group %s: member %s expired (session timeout)", group.group_id, member_id)
        _resolve(member, "join", _join_error(Errors.UNKNOWN_MEMBER_ID, "", 9))
        group.remove(member_id)
        _resolve(member, "sync", {"errorCode": int(Errors.UNKNOWN_MEMBER_ID)})
        if group.state in (STABLE, COMPLETING):
            self._maybe_prepare_rebalance_or_complete_join(group)
        elif group.state == PREPARING and group.has_all_members_joined():
            self._complete_join(group)

    # -- timers -----------------------------------------------------------------------------

    def _schedule_join(self, group: Group, delay_ms: int, fn, *args) -> None:
        self._cancel(group, "join_timer")
        group.join_timer = asyncio.get_running_loop().call_later(delay_ms / 1000, fn, *args)

    @staticmethod
    def _cancel(group: Group, which: str) -> None:
        handle = getattr(group, which)
        if handle is not None:
            handle.cancel()
            setattr(group, which, None)

    def load_group(self, group: Group) -> None:
        """A group loaded from ``__consumer_offsets`` (GroupMetadataManager.onLoaded): it
        joins the coordinator and each member's session timer starts (on the event loop)."""
        self.groups[group.group_id] = group
        for member in group.members.values():
            self._reschedule_session(group, member)

    # -- offsets ----------------------------------------------------------------------------

    def commit_check(self, body: dict, version: int) -> Errors:
        """OffsetMetadataManager.validateOffsetCommit for an OffsetCommit request of
        ``version``: :meth:`validate_offset_commit` with the request's generation (or
        member epoch, v1+), member id (v1+) and instance id."""
        generation = body.get("generationIdOrMemberEpoch", -1) if version >= 1 else -1
        member_id = body.get("memberId", "") if version >= 1 else ""
        return self.validate_offset_commit(
            body["groupId"], generation, member_id, body.get("groupInstanceId"),
            transactional=False, api_version=version)

    def validate_offset_commit(self, group_id: str, generation: int, member_id: str,
                               instance_id: str | None, *, transactional: bool,
                               api_version: int) -> Errors:
        """OffsetMetadataManager.validateOffsetCommit / validateTransactionalOffsetCommit
        + ClassicGroup.validateOffsetCommit(isTransactional), one check for both requests.

        A commit with generation -1 creates a simple group when none exists; with a
        generation, an unknown group is GROUP_ID_NOT_FOUND for OffsetCommit v9+ and
        ILLEGAL_GENERATION before v9 and for every TxnOffsetCommit. A Dead group is
        COORDINATOR_NOT_AVAILABLE; generation -1 is taken while the group is Empty; a
        named member (with its instance id) and generation must match. Only OffsetCommit
        (``transactional`` False) refuses an anonymous commit to a non-Empty group
        (UNKNOWN_MEMBER_ID) and a commit during CompletingRebalance
        (REBALANCE_IN_PROGRESS), and a valid one keeps the member's session (Stable,
        PreparingRebalance).

        :param api_version: the request's version (it decides only GROUP_ID_NOT_FOUND).
        :returns: Errors.NONE when the commit is taken, else the request's error. An empty
            group id is a group like any other here (the broker takes a commit to "",
            and lists group "" afterwards).
        """
        group = self.groups.get(group_id)
        if group is None:
            if generation < 0:
                self.groups[group_id] = Group(group_id)
                return Errors.NONE
            if not transactional and api_version >= 9:
                return Errors.GROUP_ID_NOT_FOUND
            return Errors.ILLEGAL_GENERATION
        if group.state == DEAD:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if generation < 0 and group.state == EMPTY:
            return Errors.NONE
        if generation >= 0 or member_id or instance_id is not None:
            error = group.validate_member(member_id, instance_id)
            if error is not Errors.NONE:
                return error
            if generation != group.generation:
                return Errors.ILLEGAL_GENERATION
        elif not transactional and group.state != EMPTY:
            return Errors.UNKNOWN_MEMBER_ID
        if transactional:
            return Errors.NONE
        if group.state == COMPLETING:
            return Errors.REBALANCE_IN_PROGRESS
        if group.state in (STABLE, PREPARING) and member_id in group.members:
            self._reschedule_session(group, group.members[member_id])
        return Errors.NONE

    def store_offsets(self, group_id: str, offsets: list[tuple[str, int, int, int, str | None]],
                      now_ms: int = -1) -> None:
        """Commit ``offsets`` ``(topic, partition, offset, leader epoch, metadata)`` of a
        group :meth:`commit_check` accepted, in one write (OffsetMetadataManager.commitOffset
        returns the records of the whole request; the runtime appends them as one batch).

        Raises:
            AppendError: the store could not write them (nothing changed).
        """
        if not offsets:
            return
        values = [(t, p, OffsetAndMetadata(o, epoch, metadata or "", now_ms))
                  for t, p, o, epoch, metadata in offsets]
        # written first: a commit the store refuses is not taken (the caller answers it)
        self.store.offsets_committed(group_id, values)
        group = self.groups[group_id]
        for t, p, value in values:
            group.offsets[(t, p)] = value

    def txn_commit_check(self, body: dict, version: int) -> Errors:
        """OffsetMetadataManager.validateTransactionalOffsetCommit for a TxnOffsetCommit
        request of ``version``: :meth:`validate_offset_commit` with the generation, member
        id and instance id it carries from v3 (taken in any state: no
        REBALANCE_IN_PROGRESS for transactional commits)."""
        v3 = version >= 3
        return self.validate_offset_commit(
            body["groupId"], body.get("generationId", -1) if v3 else -1,
            body.get("memberId", "") if v3 else "",
            body.get("groupInstanceId") if v3 else None,
            transactional=True, api_version=version)

    def store_txn_offsets(self, producer_id: int, group_id: str,
                          offsets: dict[tuple[str, int], OffsetAndMetadata]) -> None:
        """Offsets committed in the open transaction of ``producer_id`` (already written
        to the log by the caller): pending until :meth:`complete_txn`."""
        self.pending_txn_offsets.setdefault(producer_id, {}).setdefault(
            group_id, {}).update(offsets)

    def complete_txn(self, producer_id: int, commit: bool) -> None:
        """OffsetMetadataManager.replayEndTransactionMarker: the transaction's pending
        offsets become the groups' committed offsets (COMMIT) or are dropped (ABORT)."""
        pending = self.pending_txn_offsets.pop(producer_id, {})
        if not commit:
            return
        for gid, offsets in pending.items():
            group = self.groups.get(gid)
            if group is None:
                group = self.groups[gid] = Group(gid)
            group.offsets.update(offsets)

    def committed(self, group_id: str) -> dict[tuple[str, int], tuple[int, int, str]]:
        """``(topic, partition) -> (offset, leader epoch, metadata)`` of a group."""
        group = self.groups.get(group_id)
        if group is None:
            return {}
        return {tp: (o.offset, o.leader_epoch, o.metadata) for tp, o in group.offsets.items()}

    def on_topic_deleted(self, topic: str) -> None:
        """OffsetMetadataManager.onPartitionsDeleted: every group forgets the committed
        offsets of a deleted topic."""
        for group in self.groups.values():
            gone = [tp for tp in group.offsets if tp[0] == topic]
            for tp in gone:
                del group.offsets[tp]
            if gone:
                self.store.offsets_deleted(group.group_id, gone)

    # -- ListGroups / DescribeGroups / DeleteGroups / OffsetDelete --------------------------

    def list_groups(self, states: list[str], types: list[str]) -> list[dict]:
        """GroupMetadataManager.listGroups: states compared case-insensitively; types
        parsed case-insensitively (classic is the only type here)."""
        wanted_states = {s.strip().lower() for s in states}
        wanted_types = {t.lower() for t in types}
        out = []
        for g in self.groups.values():
            if wanted_states and g.state.lower() not in wanted_states:
                continue
            if wanted_types and CLASSIC not in wanted_types:
                continue
            out.append({"groupId": g.group_id, "protocolType": g.protocol_type or "",
                        "groupState": g.state, "groupType": CLASSIC})
        return out

    def describe_group(self, group_id: str) -> dict:
        """GroupMetadataManager.describeGroups for one id: an unknown group is Dead with no
        error; in Stable the protocol and each member's metadata, otherwise neither."""
        group = self.groups.get(group_id)
        if group is None:
            return {"errorCode": 0, "groupId": group_id, "groupState": DEAD, "protocolType": "",
                    "protocolData": "", "members": []}
        stable = group.state == STABLE
        return {"errorCode": 0, "groupId": group_id, "groupState": group.state,
                "protocolType": group.protocol_type or "",
                "protocolData": group.protocol if stable else "",
                "members": [m.describe(group.protocol if stable else None)
                            for m in group.members.values()]}

    def delete_groups(self, group_ids: list[str]) -> list[tuple[str, Errors]]:
        """GroupCoordinatorShard.deleteGroups: an unknown group -> GROUP_ID_NOT_FOUND, one
        with members -> NON_EMPTY_GROUP; otherwise its offsets and the group are removed."""
        out = []
        for gid in group_ids:
            group = self.groups.get(gid)
            if group is None or group.state == DEAD:
                out.append((gid, Errors.GROUP_ID_NOT_FOUND))
                continue
            if group.state in (STABLE, PREPARING, COMPLETING):
                out.append((gid, Errors.NON_EMPTY_GROUP))
                continue
            tombstones = list(group.offsets)
            for key in [k for k in self._sessions if k[0] == gid]:
                self._sessions.pop(key).cancel()
            self._cancel(group, "join_timer")
            self._cancel(group, "sync_timer")
            group.transition(DEAD)
            del self.groups[gid]
            self.store.offsets_deleted(gid, tombstones, group=True)
            log.info("deleted group %s", gid)
            out.append((gid, Errors.NONE))
        return out

    def delete_offsets(self, group_id: str, topics: list[tuple[str, list[int]]]
                       ) -> tuple[Errors, list[tuple[str, list[tuple[int, Errors]]]]]:
        """OffsetMetadataManager.deleteOffsets: the group must exist and, unless it uses
        the consumer protocol, be empty; partitions of a topic the group subscribes to get
        GROUP_SUBSCRIBED_TO_TOPIC, the others lose their committed offset."""
        group = self.groups.get(group_id)
        if group is None or group.state == DEAD:
            return Errors.GROUP_ID_NOT_FOUND, []
        if group.state in (STABLE, PREPARING, COMPLETING) and \
                not group.uses_consumer_protocol():
            return Errors.NON_EMPTY_GROUP, []
        out, tombstones = [], []
        for topic, partitions in topics:
            subscribed = (topic in group.subscribed_topics if group.subscribed_topics
                          is not None else group.uses_consumer_protocol())
            if subscribed:
                out.append((topic, [(p, Errors.GROUP_SUBSCRIBED_TO_TOPIC) for p in partitions]))
                continue
            for p in partitions:
                if group.offsets.pop((topic, p), None) is not None:
                    tombstones.append((topic, p))
            out.append((topic, [(p, Errors.NONE) for p in partitions]))
        if tombstones:
            self.store.offsets_deleted(group_id, tombstones)
        return Errors.NONE, out


class _JoinRequest:
    """A JoinGroup request's fields, and the future its answer goes to."""

    __slots__ = ("member_id", "instance_id", "client_id", "client_host", "session_timeout_ms",
                 "rebalance_timeout_ms", "protocol_type", "protocols", "protocol_names",
                 "version", "fut")

    def __init__(self, body: dict, version: int, client_id: str, client_host: str, fut):
        self.member_id = body["memberId"]
        self.instance_id = body.get("groupInstanceId")
        self.client_id = client_id
        self.client_host = client_host
        self.session_timeout_ms = body["sessionTimeoutMs"]
        rebalance = body.get("rebalanceTimeoutMs", -1)
        # v0: no rebalance timeout, the session timeout is used
        self.rebalance_timeout_ms = rebalance if rebalance >= 0 else self.session_timeout_ms
        self.protocol_type = body["protocolType"]
        self.protocols = [(p["name"], bytes(p["metadata"])) for p in body["protocols"]]
        self.protocol_names = {n for n, _ in self.protocols}
        self.version = version
        self.fut = fut

    def fail(self, error: Errors, member_id: str | None = None) -> None:
        self.fut.set_result(_join_error(
            error, self.member_id if member_id is None else member_id, self.version))


def _join_error(e: Errors, member_id: str, version: int) -> dict:
    return {"throttleTimeMs": 0, "errorCode": int(e), "generationId": -1,
            "protocolType": None, "protocolName": "" if version < 7 else None, "leader": "",
            "skipAssignment": False, "memberId": member_id, "members": []}


def _sync_response(result: dict) -> dict:
    return {"throttleTimeMs": 0, "errorCode": result["errorCode"],
            "protocolType": result.get("protocolType"),
            "protocolName": result.get("protocolName"),
            "assignment": result.get("assignment", b"")}


def _inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current


def _resolve(member: Member, which: str, result: dict) -> None:
    fut = getattr(member, which)
    if fut is not None and not fut.done():
        fut.set_result(result)
    setattr(member, which, None)
