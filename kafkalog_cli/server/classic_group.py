"""The classic group model, after Kafka's group coordinator: ``ClassicGroup`` (:class:`Group`),
``ClassicGroupMember`` (:class:`Member`), ``ClassicGroupState`` (the state names below),
``OffsetAndMetadata`` and the persistence hook :class:`GroupStore` - the state the
coordinator's logic (:mod:`.groups`: ``GroupMetadataManager`` / ``OffsetMetadataManager``)
changes, and that :mod:`.group_log` writes to ``__consumer_offsets`` and loads back.

The states are Kafka's: Empty -> PreparingRebalance -> CompletingRebalance -> Stable
(-> PreparingRebalance ...), Dead once deleted; :class:`Group` holds the queries and updates
``ClassicGroup`` makes of its own members (protocol votes, static members, the next
generation, the subscribed topics read from ConsumerProtocolSubscription v0).

Persistence hook: every place Kafka appends a record to ``__consumer_offsets`` calls the
:class:`GroupStore` given to the coordinator (``group_metadata`` with the assignment of a
GroupMetadata record, ``offsets_committed`` / ``offsets_deleted`` for offset records and
tombstones, the GroupMetadata tombstone with them when a group is deleted). The default
store keeps nothing; serve gives :class:`~.group_log.GroupLogStore`, which writes Kafka's
records to ``__consumer_offsets`` and loads them back at start-up (docs/serve.md).
"""

from __future__ import annotations

import asyncio
import logging
import struct
import time
from dataclasses import dataclass, field

from ..protocol.errors import Errors

log = logging.getLogger("kafkalog.serve")

EMPTY, PREPARING, COMPLETING, STABLE, DEAD = ("Empty", "PreparingRebalance",
                                              "CompletingRebalance", "Stable", "Dead")
#: ClassicGroupState.validPreviousStates of PreparingRebalance (canRebalance)
_CAN_REBALANCE = frozenset({STABLE, COMPLETING, EMPTY})
CONSUMER_PROTOCOL_TYPE = "consumer"
#: GroupType.CLASSIC.toString()
CLASSIC = "classic"


class GroupStore:
    """Where the coordinator's ``__consumer_offsets`` records would go (the default keeps
    nothing). Each method is called where Kafka appends the records, after the state they
    describe is set, with the records of one coordinator write operation: Kafka's
    CoordinatorRuntime appends those as one batch."""

    def group_metadata(self, group: Group, assignment: dict[str, bytes]) -> None:
        """A GroupMetadata record: the group, its members and ``assignment``."""

    def offsets_committed(self, group_id: str,
                          offsets: list[tuple[str, int, OffsetAndMetadata]]) -> None:
        """The OffsetCommit records ``(topic, partition, offset)`` of one commit."""

    def offsets_deleted(self, group_id: str, partitions: list[tuple[str, int]], *,
                        group: bool = False) -> None:
        """OffsetCommit tombstones of ``partitions`` ``(topic, partition)``, then the
        GroupMetadata tombstone when ``group`` (the group is deleted)."""


@dataclass(frozen=True)
class OffsetAndMetadata:
    """A committed offset (OffsetAndMetadata): absolute offset, leader epoch (-1: none),
    metadata, commit time (epoch ms)."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int


@dataclass(eq=False)
class Member:
    """ClassicGroupMember."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    #: the pending JoinGroup / SyncGroup answer (isAwaitingJoin / isAwaitingSync)
    join: asyncio.Future | None = None
    sync: asyncio.Future | None = None
    #: a member added by this join phase (it may expire while awaiting its answer)
    is_new: bool = False

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    def metadata(self, protocol: str | None) -> bytes:
        return next((m for n, m in self.protocols if n == protocol), b"")

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return protocols == self.protocols

    def vote(self, candidates: set[str]) -> str:
        return next(n for n, _ in self.protocols if n in candidates)

    def has_satisfied_heartbeat(self) -> bool:
        """A new member never does; others do while awaiting a join or sync answer."""
        return not self.is_new and (self.join is not None or self.sync is not None)

    def describe(self, protocol: str | None) -> dict:
        """DescribedGroupMember (with the metadata of ``protocol``, none when None)."""
        return {"memberId": self.member_id, "groupInstanceId": self.group_instance_id,
                "clientId": self.client_id, "clientHost": self.client_host,
                "memberMetadata": self.metadata(protocol) if protocol else b"",
                "memberAssignment": self.assignment}


@dataclass(eq=False)
class Group:
    """ClassicGroup: members in join order, static members by instance id, pending join
    and sync member ids, the current generation, and the group's committed offsets."""

    group_id: str
    state: str = EMPTY
    previous_state: str | None = None
    generation: int = 0
    protocol_type: str | None = None
    protocol: str | None = None
    leader: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)
    pending_join: set[str] = field(default_factory=set)
    pending_sync: set[str] = field(default_factory=set)
    #: a member joined the initial rebalance since the delay was last (re)scheduled
    new_member_added: bool = False
    #: topics the members subscribe to (None: unknown - not the consumer protocol)
    subscribed_topics: set[str] | None = None
    #: (topic, partition) -> committed offset
    offsets: dict[tuple[str, int], OffsetAndMetadata] = field(default_factory=dict)
    join_timer: asyncio.TimerHandle | None = None
    sync_timer: asyncio.TimerHandle | None = None
    #: ClassicGroup.currentStateTimestamp: when the group entered its state (epoch ms;
    #: None: unknown, a GroupMetadata record's -1)
    current_state_timestamp: int | None = None

    # -- ClassicGroup queries ---------------------------------------------------------------

    def transition(self, state: str, now_ms: int | None = None) -> None:
        """ClassicGroup.transitionTo: the state, and currentStateTimestamp (now)."""
        self.previous_state, self.state = self.state, state
        self.current_state_timestamp = int(time.time() * 1000) if now_ms is None else now_ms

    def can_rebalance(self) -> bool:
        return self.state in _CAN_REBALANCE

    def has_all_members_joined(self) -> bool:
        return all(m.join is not None for m in self.members.values()) and not self.pending_join

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def uses_consumer_protocol(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def candidate_protocols(self) -> set[str]:
        sets = [{n for n, _ in m.protocols} for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def supports_protocols(self, protocol_type: str, names: set[str]) -> bool:
        if self.state == EMPTY:
            return bool(protocol_type) and bool(names)
        return self.protocol_type == protocol_type and bool(
            names & self.candidate_protocols())

    def select_protocol(self) -> str:
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for m in self.members.values():
            choice = m.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return max(votes, key=votes.get)

    def validate_member(self, member_id: str, instance_id: str | None) -> Errors:
        """ClassicGroup.validateMember: UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID / NONE."""
        if instance_id is not None:
            existing = self.static_members.get(instance_id)
            if existing is None:
                return Errors.UNKNOWN_MEMBER_ID
            if existing != member_id:
                return Errors.FENCED_INSTANCE_ID
        return Errors.NONE if member_id in self.members else Errors.UNKNOWN_MEMBER_ID

    def join_members(self) -> list[dict]:
        """currentClassicGroupMembers: every member's id, instance id and metadata."""
        return [{"memberId": m.member_id, "groupInstanceId": m.group_instance_id,
                 "metadata": m.metadata(self.protocol)} for m in self.members.values()]

    # -- ClassicGroup updates ---------------------------------------------------------------

    def add(self, member: Member) -> None:
        if member.is_static:
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader is None:
            self.leader = member.member_id
        self.members[member.member_id] = member
        self.pending_join.discard(member.member_id)

    def remove(self, member_id: str) -> Member | None:
        member = self.members.pop(member_id, None)
        if member is not None and member.is_static:
            self.static_members.pop(member.group_instance_id, None)
        if self.leader == member_id:
            self.leader = next(iter(self.members), None)
        self.pending_join.discard(member_id)
        self.pending_sync.discard(member_id)
        return member

    def compute_subscribed_topics(self) -> set[str] | None:
        """ClassicGroup.computeSubscribedTopics: the topics of every member's
        ConsumerProtocolSubscription (read as its v0 prefix); None when the group does not
        use the consumer protocol or a subscription does not parse."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return set()
        if self.protocol is None:
            return None
        topics: set[str] = set()
        for m in self.members.values():
            parsed = _subscription_topics(m.metadata(self.protocol))
            if parsed is None:
                log.warning("group %s: member %s's subscription does not parse", self.group_id,
                            m.member_id)
                return None
            topics.update(parsed)
        return topics

    def init_next_generation(self) -> None:
        self.generation += 1
        if self.members:
            self.protocol = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition(COMPLETING)
        else:
            self.protocol = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition(EMPTY)
        self.pending_sync.clear()

    def assignment(self) -> dict[str, bytes]:
        return {m.member_id: m.assignment for m in self.members.values()}


_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


def _subscription_topics(data: bytes) -> list[str] | None:
    """The topics of a ConsumerProtocolSubscription (int16 version, then the v0 fields:
    int32 count, int16-length strings); None when it does not parse."""
    try:
        pos = 2
        (n,) = _I32.unpack_from(data, pos)
        pos += 4
        if n < 0 or n > len(data):
            return None
        topics = []
        for _ in range(n):
            (length,) = _I16.unpack_from(data, pos)
            pos += 2
            if length < 0 or pos + length > len(data):
                return None
            topics.append(data[pos:pos + length].decode("utf-8"))
            pos += length
        return topics
    except (struct.error, UnicodeDecodeError):
        return None
