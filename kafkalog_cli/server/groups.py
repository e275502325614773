"""A consumer-group coordinator for one node, in memory, after the classic
``GroupCoordinator`` (JoinGroup / SyncGroup / Heartbeat / LeaveGroup / OffsetCommit /
OffsetFetch; the "classic" protocol, not KIP-848).

What it keeps of the broker's state machine: the states Empty, PreparingRebalance,
CompletingRebalance and Stable; a JoinGroup waits until every known member has rejoined
(or the largest rebalance timeout passes, which drops the members that did not); the
protocol is chosen by the members' votes; the leader's SyncGroup hands out the
assignments; v4+ joins without a member id get ``MEMBER_ID_REQUIRED`` and a new id;
heartbeats answer ``REBALANCE_IN_PROGRESS`` during a rebalance and ``ILLEGAL_GENERATION``
/ ``UNKNOWN_MEMBER_ID`` as the broker's do; each member has a session timer on the event
loop (restarted by heartbeats, commits and each join / sync answer) that drops a member
not heard from within its session timeout; members that do not sync within the rebalance
timeout are dropped too.

What it leaves out (docs/serve.md): nothing is persisted - groups and committed offsets
live in this process only and are not written to ``__consumer_offsets``; no static
membership (``groupInstanceId`` is accepted and ignored), no initial rebalance delay
(``group.initial.rebalance.delay.ms`` is 0), no offset retention or expiry, no
DescribeGroups / ListGroups / DeleteGroups, no transactional offset commits.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field

from ..protocol.errors import Errors

#: group.min.session.timeout.ms / group.max.session.timeout.ms (broker defaults)
MIN_SESSION_TIMEOUT_MS = 6000
MAX_SESSION_TIMEOUT_MS = 1_800_000
#: offset.metadata.max.bytes
MAX_METADATA_SIZE = 4096

EMPTY, PREPARING, COMPLETING, STABLE = ("Empty", "PreparingRebalance", "CompletingRebalance",
                                        "Stable")


@dataclass
class Member:
    member_id: str
    client_id: str
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    session_timeout_ms: int
    rebalance_timeout_ms: int
    assignment: bytes = b""
    join: asyncio.Future | None = None
    sync: asyncio.Future | None = None
    #: the session deadline (Kafka's heartbeat key), rescheduled by each heartbeat
    session_timer: asyncio.TimerHandle | None = None

    def metadata(self, protocol: str) -> bytes:
        return next(m for n, m in self.protocols if n == protocol)

    def cancel_session(self) -> None:
        if self.session_timer is not None:
            self.session_timer.cancel()
            self.session_timer = None


@dataclass
class Group:
    group_id: str
    state: str = EMPTY
    generation: int = 0
    protocol_type: str | None = None
    protocol: str | None = None
    leader: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    pending: set[str] = field(default_factory=set)  # ids handed out by MEMBER_ID_REQUIRED
    #: (topic, partition) -> (offset, leader epoch, metadata)
    offsets: dict[tuple[str, int], tuple[int, int, str]] = field(default_factory=dict)
    timer: asyncio.TimerHandle | None = None
    #: members of this generation that have not sent SyncGroup yet, and their deadline
    pending_sync: set[str] = field(default_factory=set)
    sync_timer: asyncio.TimerHandle | None = None

    def protocols(self) -> set[str]:
        """The protocols every member supports."""
        sets = [{n for n, _ in m.protocols} for m in self.members.values()]
        return set.intersection(*sets) if sets else set()


class GroupCoordinator:
    def __init__(self):
        self.groups: dict[str, Group] = {}

    # -- JoinGroup ----------------------------------------------------------------------

    async def join(self, body: dict, version: int, client_id: str) -> dict:
        gid = body["groupId"]
        member_id = body["memberId"]
        protocols = [(p["name"], bytes(p["metadata"])) for p in body["protocols"]]
        ptype = body["protocolType"]
        session = body["sessionTimeoutMs"]
        rebalance = body.get("rebalanceTimeoutMs", -1)
        if rebalance < 0:
            rebalance = session  # v0: no rebalance timeout, the session timeout is used

        def error(e: Errors, mid: str = member_id) -> dict:
            return {"throttleTimeMs": 0, "errorCode": int(e), "generationId": -1,
                    "protocolName": "" if version < 7 else None, "leader": "",
                    "memberId": mid, "members": []}

        if not gid:
            return error(Errors.INVALID_GROUP_ID)
        if not MIN_SESSION_TIMEOUT_MS <= session <= MAX_SESSION_TIMEOUT_MS:
            return error(Errors.INVALID_SESSION_TIMEOUT)
        group = self.groups.get(gid)
        if group is None:
            if member_id:
                return error(Errors.UNKNOWN_MEMBER_ID)
            group = self.groups[gid] = Group(gid)
        if not ptype or not protocols or (group.members and (
                ptype != group.protocol_type
                or not group.protocols() & {n for n, _ in protocols})):
            return error(Errors.INCONSISTENT_GROUP_PROTOCOL)
        if not member_id:
            member_id = f"{client_id}-{uuid.uuid4()}"
            if version >= 4:
                # KIP-394: hand out the id, the member joins again with it
                group.pending.add(member_id)
                return error(Errors.MEMBER_ID_REQUIRED, member_id)
        elif member_id not in group.members and member_id not in group.pending:
            return error(Errors.UNKNOWN_MEMBER_ID)
        member = group.members.get(member_id)
        if member is not None and member.protocols == protocols and (
                group.state == COMPLETING
                or group.state == STABLE and member_id != group.leader):
            # classicGroupJoinExistingMember: a member rejoining with the same metadata
            # (it missed the JoinGroup answer) gets the current generation; in Stable the
            # leader's join always rebalances (it may see a change the metadata does not)
            return self._join_response(group, member)
        group.pending.discard(member_id)
        if member is None:
            member = group.members[member_id] = Member(member_id, client_id, ptype, protocols,
                                                       session, rebalance)
            if group.protocol_type is None:
                group.protocol_type = ptype
        else:
            member.protocols, member.session_timeout_ms = protocols, session
            member.rebalance_timeout_ms = rebalance
            if member.join is not None and not member.join.done():
                # a second join of the same member while waiting: the older one loses
                member.join.set_result(error(Errors.UNKNOWN_MEMBER_ID))
        member.join = asyncio.get_running_loop().create_future()
        if group.state != PREPARING:
            self._prepare_rebalance(group)
        fut = member.join
        self._maybe_complete_join(group)
        return await fut

    def _prepare_rebalance(self, group: Group) -> None:
        if group.state == COMPLETING:
            # members waiting in SyncGroup must rejoin
            for m in group.members.values():
                if m.sync is not None:
                    self._reschedule_session(group, m)
                _resolve(m, "sync", {"errorCode": int(Errors.REBALANCE_IN_PROGRESS)})
        self._remove_sync_expiration(group)
        group.state = PREPARING
        timeout = max((m.rebalance_timeout_ms for m in group.members.values()), default=0)
        if group.timer is not None:
            group.timer.cancel()
        group.timer = asyncio.get_running_loop().call_later(
            timeout / 1000, self._complete_join, group)

    def _maybe_complete_join(self, group: Group) -> None:
        if group.state == PREPARING and all(m.join is not None for m in
                                            group.members.values()):
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        """onCompleteJoin: drop the members that did not rejoin, new generation, vote a
        protocol, answer every waiting join (the leader gets the members' metadata)."""
        if group.state != PREPARING:
            return
        if group.timer is not None:
            group.timer.cancel()
            group.timer = None
        for mid in [mid for mid, m in group.members.items() if m.join is None]:
            group.members.pop(mid).cancel_session()
        group.generation += 1
        if not group.members:
            group.state, group.protocol, group.protocol_type, group.leader = \
                EMPTY, None, None, None
            return
        group.state = COMPLETING
        if group.leader not in group.members:
            group.leader = next(iter(group.members))
        candidates = group.protocols()
        votes: dict[str, int] = {}
        for m in group.members.values():
            choice = next(n for n, _ in m.protocols if n in candidates)
            votes[choice] = votes.get(choice, 0) + 1
        group.protocol = max(votes, key=votes.get)
        for m in group.members.values():
            _resolve(m, "join", self._join_response(group, m))
            self._reschedule_session(group, m)
        # schedulePendingSync: the members that do not sync within the rebalance timeout
        # are removed (expirePendingSync)
        group.pending_sync = set(group.members)
        timeout = max(m.rebalance_timeout_ms for m in group.members.values())
        group.sync_timer = asyncio.get_running_loop().call_later(
            timeout / 1000, self._expire_pending_sync, group, group.generation)

    @staticmethod
    def _join_response(group: Group, member: Member) -> dict:
        """The current generation as a JoinGroup answer (the leader gets the members)."""
        members = [{"memberId": m.member_id, "groupInstanceId": None,
                    "metadata": m.metadata(group.protocol)}
                   for m in group.members.values()] if member.member_id == group.leader else []
        return {"throttleTimeMs": 0, "errorCode": 0, "generationId": group.generation,
                "protocolType": group.protocol_type, "protocolName": group.protocol,
                "leader": group.leader, "memberId": member.member_id, "members": members}

    def _remove_sync_expiration(self, group: Group) -> None:
        group.pending_sync.clear()
        if group.sync_timer is not None:
            group.sync_timer.cancel()
            group.sync_timer = None

    def _expire_pending_sync(self, group: Group, generation: int) -> None:
        """GroupMetadataManager.expirePendingSync: drop the members of this generation that
        never sent SyncGroup and rebalance (the followers waiting for a leader that did not
        sync get ``REBALANCE_IN_PROGRESS``)."""
        group.sync_timer = None
        if generation != group.generation or group.state not in (COMPLETING, STABLE):
            return
        if not group.pending_sync:
            return
        for mid in list(group.pending_sync):
            member = group.members.pop(mid, None)
            if member is not None:
                member.cancel_session()
                _resolve(member, "sync", {"errorCode": int(Errors.UNKNOWN_MEMBER_ID)})
        group.pending_sync.clear()
        self._membership_changed(group)

    def _synced(self, group: Group, member_id: str) -> None:
        """removePendingSyncMember: the deadline is lifted once every member synced."""
        group.pending_sync.discard(member_id)
        if not group.pending_sync and group.sync_timer is not None:
            group.sync_timer.cancel()
            group.sync_timer = None

    # -- SyncGroup ----------------------------------------------------------------------

    async def sync(self, body: dict, version: int) -> dict:
        def reply(e: Errors, assignment: bytes = b"", group: Group | None = None) -> dict:
            return {"throttleTimeMs": 0, "errorCode": int(e),
                    "protocolType": group.protocol_type if group else None,
                    "protocolName": group.protocol if group else None,
                    "assignment": assignment}

        group = self.groups.get(body["groupId"])
        member = group.members.get(body["memberId"]) if group else None
        if member is None:
            return reply(Errors.UNKNOWN_MEMBER_ID)
        if body["generationId"] != group.generation:
            return reply(Errors.ILLEGAL_GENERATION)
        if version >= 5 and (
                body.get("protocolType") not in (None, group.protocol_type)
                or body.get("protocolName") not in (None, group.protocol)):
            return reply(Errors.INCONSISTENT_GROUP_PROTOCOL)
        if group.state == PREPARING:
            return reply(Errors.REBALANCE_IN_PROGRESS)
        self._synced(group, member.member_id)
        if group.state == STABLE:
            return reply(Errors.NONE, member.assignment, group)
        # CompletingRebalance
        if member.member_id == group.leader:
            given = {a["memberId"]: bytes(a["assignment"]) for a in body["assignments"]}
            for m in group.members.values():
                m.assignment = given.get(m.member_id, b"")
            group.state = STABLE
            for m in group.members.values():
                if m.sync is not None:
                    # setAndPropagateAssignment: the session restarts with the assignment
                    self._reschedule_session(group, m)
                _resolve(m, "sync", reply(Errors.NONE, m.assignment, group))
            self._reschedule_session(group, member)
            return reply(Errors.NONE, member.assignment, group)
        member.sync = asyncio.get_running_loop().create_future()
        result = await member.sync
        if result["errorCode"]:
            return reply(Errors(result["errorCode"]))
        return result

    # -- Heartbeat / LeaveGroup ---------------------------------------------------------

    def heartbeat(self, body: dict) -> Errors:
        group = self.groups.get(body["groupId"])
        member = group.members.get(body["memberId"]) if group else None
        if member is None:
            return Errors.UNKNOWN_MEMBER_ID
        if group.state == PREPARING:
            self._reschedule_session(group, member)
            return Errors.REBALANCE_IN_PROGRESS
        if body["generationId"] != group.generation:
            return Errors.ILLEGAL_GENERATION
        self._reschedule_session(group, member)
        return Errors.NONE

    def leave(self, group_id: str, member_ids: list[str]) -> list[Errors]:
        group = self.groups.get(group_id)
        out = []
        for mid in member_ids:
            member = group.members.pop(mid, None) if group else None
            if member is None:
                out.append(Errors.UNKNOWN_MEMBER_ID)
                continue
            member.cancel_session()
            _resolve(member, "join", {"errorCode": int(Errors.UNKNOWN_MEMBER_ID)})
            _resolve(member, "sync", {"errorCode": int(Errors.UNKNOWN_MEMBER_ID)})
            out.append(Errors.NONE)
        if group is not None and any(e is Errors.NONE for e in out):
            self._membership_changed(group)
        return out

    def _membership_changed(self, group: Group) -> None:
        if group.state == EMPTY:
            return
        if group.state != PREPARING:
            self._prepare_rebalance(group)
        if not group.members or all(m.join is not None for m in group.members.values()):
            self._complete_join(group)

    def _reschedule_session(self, group: Group, member: Member) -> None:
        """rescheduleClassicGroupMemberHeartbeat: the member is expired unless it is heard
        from again within its session timeout."""
        member.cancel_session()
        member.session_timer = asyncio.get_running_loop().call_later(
            member.session_timeout_ms / 1000, self._expire_session, group, member.member_id)

    def _expire_session(self, group: Group, member_id: str) -> None:
        """expireClassicGroupMemberHeartbeat: a member awaiting a JoinGroup or SyncGroup
        answer satisfies its heartbeats; any other is removed and the group rebalances
        (the survivors learn it from ``REBALANCE_IN_PROGRESS`` on their next heartbeat)."""
        member = group.members.get(member_id)
        if member is None:
            return
        member.session_timer = None
        if member.join is not None or member.sync is not None:
            return
        del group.members[member_id]
        self._membership_changed(group)

    # -- offsets ------------------------------------------------------------------------

    def commit_check(self, body: dict, version: int) -> Errors:
        """The group-level check of an OffsetCommit (``GroupCoordinator.handleCommitOffsets``):
        a commit with generation -1 and no member id is a standalone commit, allowed while
        the group has no members."""
        gid = body["groupId"]
        if not gid:
            return Errors.INVALID_GROUP_ID
        generation = body.get("generationIdOrMemberEpoch", -1) if version >= 1 else -1
        member_id = body.get("memberId", "") if version >= 1 else ""
        group = self.groups.get(gid)
        if group is None:
            if generation < 0:
                self.groups[gid] = Group(gid)
                return Errors.NONE
            return Errors.ILLEGAL_GENERATION
        # ClassicGroup.validateOffsetCommit: member, then generation, then state. A commit
        # of the current generation is accepted in PreparingRebalance (a consumer commits
        # its revoked partitions before rejoining); CompletingRebalance is refused.
        if generation < 0 and group.state == EMPTY:
            return Errors.NONE
        member = group.members.get(member_id)
        if member is None:
            return Errors.UNKNOWN_MEMBER_ID
        if generation != group.generation:
            return Errors.ILLEGAL_GENERATION
        if group.state == COMPLETING:
            return Errors.REBALANCE_IN_PROGRESS
        # OffsetMetadataManager.commitOffset: a commit keeps the session (Stable, Preparing)
        self._reschedule_session(group, member)
        return Errors.NONE

    def store_offset(self, group_id: str, topic: str, partition: int, offset: int,
                     leader_epoch: int, metadata: str | None) -> None:
        self.groups[group_id].offsets[(topic, partition)] = (offset, leader_epoch,
                                                              metadata or "")

    def committed(self, group_id: str) -> dict[tuple[str, int], tuple[int, int, str]]:
        group = self.groups.get(group_id)
        return group.offsets if group else {}


def _resolve(member: Member, which: str, result: dict) -> None:
    fut = getattr(member, which)
    if fut is not None and not fut.done():
        fut.set_result(result)
    setattr(member, which, None)
