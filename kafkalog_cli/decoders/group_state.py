"""The group coordinator's state, replayed from its records: the one home of
``GroupCoordinatorShard.replay`` (``GroupMetadataManager`` / ``OffsetMetadataManager``)
for ``__consumer_offsets`` and of ``ShareCoordinatorShard.replay`` for
``__share_group_state``. ``serve`` loads its groups from it
(:func:`kafkalog_cli.server.group_log.load_groups`); ``kafkalog groups`` describes what
it holds.

Records are fed in offset order, partition by partition (:meth:`GroupLogReplay.replay`
per record, :meth:`GroupLogReplay.replay_end_txn` per control batch); the last record of
a key wins and a tombstone removes it, as the coordinator's replay does:

* OffsetCommit (types 0 and 1): the committed offset of ``(group, topic, partition)``;
  a committed offset for a group that does not exist creates an empty classic group
  (``getOrMaybeCreateClassicGroup``). Transactional commits wait for their producer's
  marker (COMMIT materialises them unless a later plain commit's record offset is
  higher; ABORT drops them); a tombstone removes the offset and the pending ones of it.
* GroupMetadata (2): a classic group (Empty without members, else Stable, as
  ``ClassicGroup.fromRecord``); a tombstone removes the group (``removeGroup``).
* ConsumerGroup* (3-8, 16): KIP-848 consumer groups: the group epoch, members (metadata,
  current assignment, target assignment), the target assignment epoch; state as
  ``ConsumerGroup.maybeUpdateGroupState`` computes it.
* ShareGroup* (9-15) and StreamsGroup* (17-24): the group's epoch and members.
* ``__share_group_state`` ShareSnapshot / ShareUpdate: each share-partition's start
  offset, state epoch and leader epoch (a snapshot replaces, an update's start offset
  moves it when not -1).

Each ``__consumer_offsets`` partition keeps its groups in the coordinator's
``TimelineHashMap`` order (:class:`~kafkalog_cli.javaorder.BaseHashTable`), so listings
come out in the order a broker answers them. Offsets are not expired by the replay (a
broker that loads these records serves them until its first expiration pass);
:meth:`GroupLogReplay.expire` runs that pass (``GroupCoordinatorShard.cleanupGroupMetadata``)
at a given time.

Raises (from :meth:`GroupLogReplay.replay`): :class:`~kafkalog_cli.errors.
CoordinatorLoadError` for a record whose key or value does not parse.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import CoordinatorLoadError
from ..javaorder import BaseHashTable
from ..schema.flexible import java_message
from ..schema.messages import PARSE_ERRORS
from . import group_messages as gm
from . import share_messages as sm
from .coordinator import int16, key_read_version

NO_PRODUCER_ID = -1
#: MemberState.STABLE of ConsumerGroupCurrentMemberAssignmentValue.state
MEMBER_STABLE = 0
#: the group types, as GroupType.toString / ListGroups name them
CLASSIC, CONSUMER, SHARE, STREAMS = "classic", "consumer", "share", "streams"
#: GroupState names (org.apache.kafka.common.GroupState.toString)
EMPTY, STABLE, ASSIGNING, RECONCILING, DEAD = (
    "Empty", "Stable", "Assigning", "Reconciling", "Dead")
#: GroupCoordinatorConfig.OFFSETS_RETENTION_MINUTES_DEFAULT (7 days), in minutes
OFFSETS_RETENTION_MINUTES_DEFAULT = 7 * 24 * 60


@dataclass
class CommittedOffset:
    """OffsetAndMetadata of the coordinator (``OffsetAndMetadata.fromRecord``):
    ``offset``, ``leader_epoch`` (-1: none), ``metadata``, ``commit_timestamp`` and
    ``expire_timestamp`` (ms since the epoch; -1: none), ``topic_id`` (None when the
    record has none) and ``record_offset`` (its offset in ``__consumer_offsets``)."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int
    topic_id: str | None
    record_offset: int

    @classmethod
    def from_value(cls, v: dict, record_offset: int) -> CommittedOffset:
        tid = v.get("topicId")
        return cls(v["offset"], v.get("leaderEpoch", -1), v.get("metadata") or "",
                   v["commitTimestamp"], v.get("expireTimestamp", -1),
                   None if tid in (None, "AAAAAAAAAAAAAAAAAAAAAA") else tid, record_offset)

    def to_dict(self) -> dict:
        return {"offset": self.offset, "leaderEpoch": self.leader_epoch,
                "metadata": self.metadata, "commitTimestamp": self.commit_timestamp,
                "expireTimestamp": self.expire_timestamp}


@dataclass
class Member:
    """A group member as the describe APIs return it: ``assignment`` / ``target`` are
    ``[(topic id or name, [partitions])]`` as the records hold them (names for classic
    members, topic ids for the others); ``member_epoch`` None for classic members."""

    member_id: str
    client_id: str = ""
    client_host: str = ""
    group_instance_id: str | None = None
    rack_id: str | None = None
    subscribed_topics: list[str] = field(default_factory=list)
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    member_epoch: int | None = None
    state: int = MEMBER_STABLE
    assignment: list[tuple[str, list[int]]] = field(default_factory=list)
    target: list[tuple[str, list[int]]] | None = None
    classic_protocol: bool = False
    session_timeout_ms: int = -1
    rebalance_timeout_ms: int = -1


@dataclass
class Group:
    """One group of the coordinator: its ``type`` (classic, consumer, share, streams),
    its members in the coordinator's order, and for classic groups the protocol fields
    of its GroupMetadata record; ``epoch`` / ``assignment_epoch`` for the others (None
    when no record set them)."""

    group_id: str
    type: str
    protocol_type: str = ""
    protocol: str | None = None
    generation: int = 0
    leader: str | None = None
    current_state_timestamp: int = -1
    epoch: int | None = None
    assignment_epoch: int | None = None
    members: dict[str, Member] = field(default_factory=dict)
    member_order: BaseHashTable | None = None
    partition: int = 0
    #: a classic group's ``subscribedTopics`` (``computeSubscribedTopics``; None: unknown)
    subscribed_topics: set[str] | None = None
    #: a consumer group's resolved regular expressions (regex -> topics)
    resolved_regexes: dict[str, list[str]] = field(default_factory=dict)
    #: a share group's initialized share-partitions (ShareGroupStatePartitionMetadata's
    #: ``initializedTopics``): topic id -> (topic name, partitions)
    share_initialized: dict[str, tuple[str, list[int]]] = field(default_factory=dict)

    def ordered_members(self) -> list[Member]:
        """Members in the order the coordinator's describe lists them (a classic group's
        ``HashMap``, as its GroupMetadata record lists them; the others'
        ``TimelineHashMap``)."""
        if self.member_order is None:
            return list(self.members.values())
        return [self.members[m] for m in self.member_order if m in self.members]

    @property
    def state(self) -> str:
        """GroupState: a classic group is Empty or Stable (as loaded); a consumer group's
        ``maybeUpdateGroupState`` (Empty, Assigning while the group epoch is ahead of the
        target assignment, Reconciling while a member is not at the target's epoch in
        state STABLE, else Stable); share and streams groups Empty or Stable."""
        if not self.members:
            return EMPTY
        if self.type == CONSUMER:
            target = self.assignment_epoch if self.assignment_epoch is not None else -1
            if (self.epoch or 0) > target:
                return ASSIGNING
            for m in self.members.values():
                if m.state != MEMBER_STABLE or m.member_epoch != target:
                    return RECONCILING
        return STABLE

    def preferred_assignor(self) -> str | None:
        """ConsumerGroup.preferredServerAssignor: the server assignor most members name
        (None when none does; describe then shows the coordinator's default)."""
        counts: dict[str, int] = {}
        for m in self.members.values():
            if m.server_assignor:
                counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
        if not counts:
            return None
        return max(counts.items(), key=lambda kv: kv[1])[0]

    # -- offset expiration ----------------------------------------------------------------

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """Group.isSubscribedToTopic: a classic group's ``subscribedTopics`` (when unknown:
        whether it uses the consumer protocol); a consumer or share group's members'
        subscribed topic names and resolved regular expressions (ModernGroup's
        ``subscribedTopicNames``); a streams group's topology while it has members
        (kafkalog keeps no topology: every topic counts as subscribed then)."""
        if self.type == CLASSIC:
            if self.subscribed_topics is None:
                return self.protocol_type == "consumer"
            return topic in self.subscribed_topics
        if self.type == STREAMS:
            return bool(self.members)
        if any(topic in m.subscribed_topics for m in self.members.values()):
            return True
        return any(topic in topics for topics in self.resolved_regexes.values())

    def offset_expiration_base(self):
        """Group.offsetExpirationCondition as the base timestamp of the retention period
        of an offset (a function of a :class:`CommittedOffset`), or None when the group's
        offsets do not expire now. A classic group: with a protocol type, while Empty its
        ``currentStateTimestamp`` (the commit timestamp when it has none), while Stable
        with the consumer protocol and known subscriptions the commit timestamp, else
        none; without a protocol type (offsets committed by a standalone consumer) the
        commit timestamp. Consumer and streams groups: the commit timestamp."""
        def commit(o):
            return o.commit_timestamp

        if self.type != CLASSIC:
            return commit
        if not self.protocol_type:
            return commit
        if not self.members:
            if self.current_state_timestamp != -1:
                return lambda o: self.current_state_timestamp
            return commit
        if self.protocol_type == "consumer" and self.subscribed_topics is not None:
            return commit
        return None


@dataclass
class SharePartitionState:
    """One share-partition of ``__share_group_state`` (ShareCoordinatorShard's
    ShareGroupOffset): its start offset (-1: not initialized), state epoch, leader epoch,
    the state batches of its last snapshot and ``delivery_complete_count`` (the records
    past the start offset whose delivery is complete; -1: unknown)."""

    group_id: str
    topic_id: str
    partition: int
    start_offset: int
    state_epoch: int
    leader_epoch: int
    state_batches: list[dict]
    delivery_complete_count: int = -1


class GroupLogReplay:
    """The coordinators' state replayed from ``__consumer_offsets`` (and
    ``__share_group_state``) records; see the module docstring.

    Attributes:
        groups: group id -> :class:`Group` (live groups only).
        offsets: group id -> ``{(topic, partition): CommittedOffset}``.
        pending: producer id -> ``[(group, topic, partition, CommittedOffset)]``: the
            transactional commits whose marker has not come.
        share_partitions: ``(group, topic id, partition)`` -> :class:`SharePartitionState`.
        order: ``__consumer_offsets`` partition -> its groups in the coordinator's order.
    """

    def __init__(self):
        self.groups: dict[str, Group] = {}
        self.offsets: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
        self.pending: dict[int, list[tuple[str, str, int, CommittedOffset]]] = {}
        self.share_partitions: dict[tuple[str, str, int], SharePartitionState] = {}
        self.order: dict[int, BaseHashTable] = {}
        #: key bytes -> (record type, parsed key): a key is parsed once
        self._keys: dict[bytes, tuple[int, dict]] = {}
        #: kafkalog's addition: classic GroupMetadata values as read (serve restores them)
        self.classic_values: dict[str, dict | None] = {}

    # -- feeding ------------------------------------------------------------------------

    def replay(self, partition: int, record_offset: int, key, value, *,
               producer_id: int = NO_PRODUCER_ID, where: str = "") -> None:
        """Apply one ``__consumer_offsets`` record (``value`` None: a tombstone);
        ``producer_id`` is the batch's producer id for a transactional batch, else -1.

        Raises:
            CoordinatorLoadError: the key or value does not parse (naming ``where`` and
                the record's offset).
        """
        try:
            if key is None or len(key) < 2:
                raise ValueError("a record without a key")
            key = bytes(key)
            parsed = self._keys.get(key)
            if parsed is None:
                rtype = int16(key)
                types = gm.RECORD_TYPES.get(rtype)
                if types is None:
                    return  # an unknown record type: the coordinator skips it too
                k, _ = types[0].parse(key, key_read_version(types[0], rtype), offset=2)
                parsed = self._keys[key] = (rtype, k)
            rtype, k = parsed
            value_msg = gm.RECORD_TYPES[rtype][1]
            v = None
            if rtype in (0, 1) and value is not None and producer_id == NO_PRODUCER_ID:
                # the bulk of the topic: parsed when asked for, once per live key
                if len(value) < 2:
                    raise ValueError("a value shorter than its version")
                self._offset_commit(partition, k, _Raw(bytes(value), record_offset, where,
                                                       value_msg), record_offset, producer_id)
                return
            if value is not None:
                if len(value) < 2:
                    raise ValueError("a value shorter than its version")
                v, _ = value_msg.parse(value, int16(value), offset=2)
        except (ValueError, KeyError, *PARSE_ERRORS) as e:
            raise CoordinatorLoadError(
                f"{where}: the record at offset {record_offset} does not load: "
                f"{java_message(e)}") from None
        self._apply(partition, rtype, k, v, record_offset, producer_id)

    def replay_batch(self, partition: int, batch, records=None, where: str = "") -> None:
        """One ``__consumer_offsets`` batch as ``CoordinatorLoaderImpl`` feeds it: a control
        batch's COMMIT / ABORT marker ends its producer's transaction, the records of a
        transactional batch wait for it, the others apply at once. ``records``: the
        batch's records when already decoded.

        Raises:
            CoordinatorLoadError: a record does not parse.
        """
        from ..format.control import COMMIT, read_end_txn_marker

        pid = getattr(batch, "producer_id", -1)
        if getattr(batch, "is_control", False):
            marker = read_end_txn_marker(batch)
            if marker is not None:
                self.replay_end_txn(pid, marker.control_type == COMMIT)
            return
        txn_pid = pid if getattr(batch, "is_transactional", False) else NO_PRODUCER_ID
        for r in batch.records() if records is None else records:
            self.replay(partition, r.offset, r.key, r.value, producer_id=txn_pid, where=where)

    def replay_end_txn(self, producer_id: int, commit: bool) -> None:
        """OffsetMetadataManager.replayEndTransactionMarker."""
        done = self.pending.pop(producer_id, [])
        if not commit:
            return
        for g, t, p, off in done:
            cur = self.offsets.get(g, {}).get((t, p))
            if cur is not None and off.record_offset <= cur.record_offset:
                continue
            self.offsets.setdefault(g, {})[(t, p)] = off

    def replay_share_state(self, key, value, record_offset: int = -1, where: str = "") -> None:
        """Apply one ``__share_group_state`` record (ShareCoordinatorShard.replay).

        Raises:
            CoordinatorLoadError: the key or value does not parse.
        """
        try:
            rtype = int16(key)
            types = sm.RECORD_TYPES.get(rtype)
            if types is None:
                return
            key_msg, value_msg = types
            k, _ = key_msg.parse(key, key_read_version(key_msg, rtype), offset=2)
            v = None if value is None else value_msg.parse(value, int16(value), offset=2)[0]
        except (ValueError, KeyError, TypeError, *PARSE_ERRORS) as e:
            raise CoordinatorLoadError(
                f"{where}: the record at offset {record_offset} does not load: "
                f"{java_message(e)}") from None
        sp = (k["groupId"], k["topicId"], k["partition"])
        if v is None:
            self.share_partitions.pop(sp, None)
            return
        cur = self.share_partitions.get(sp)
        if rtype == 0 or cur is None:  # a snapshot: the whole state
            self.share_partitions[sp] = SharePartitionState(
                *sp, v["startOffset"], v.get("stateEpoch", 0), v.get("leaderEpoch", -1),
                list(v.get("stateBatches") or []), v.get("deliveryCompleteCount", -1))
            return
        # ShareCoordinatorShard.merge: -1 keeps the start offset and the leader epoch; the
        # delivery complete count is the update's
        if v["startOffset"] != -1:
            cur.start_offset = v["startOffset"]
        if v.get("leaderEpoch", -1) != -1:
            cur.leader_epoch = v["leaderEpoch"]
        cur.delivery_complete_count = v.get("deliveryCompleteCount", -1)
        cur.state_batches = [b for b in cur.state_batches
                             if b["lastOffset"] >= cur.start_offset] + list(
            v.get("stateBatches") or [])

    # -- results ------------------------------------------------------------------------

    def committed(self, group_id: str) -> dict[tuple[str, int], CommittedOffset]:
        """The committed offsets of ``group_id``.

        Raises:
            CoordinatorLoadError: an OffsetCommit value that does not parse.
        """
        offs = self.offsets.get(group_id, {})
        for tp, o in offs.items():
            if isinstance(o, _Raw):
                offs[tp] = o.parse()
        return offs

    def all_committed(self) -> dict[str, dict[tuple[str, int], CommittedOffset]]:
        """:meth:`committed` of every group with offsets."""
        return {g: self.committed(g) for g in list(self.offsets)}

    def group_ids_in_coordinator_order(self, partitions: list[int]) -> list[str]:
        """The live groups, ``partitions`` (shards) in the given order, each shard's in its
        ``TimelineHashMap`` order."""
        out = []
        for p in partitions:
            table = self.order.get(p)
            if table is not None:
                out.extend(g for g in table if g in self.groups)
        return out

    # -- the expiration pass ------------------------------------------------------------

    def expire(self, now_ms: int, retention_ms: int) -> list[tuple[str, str, int]]:
        """GroupCoordinatorShard.cleanupGroupMetadata at ``now_ms``: for each group
        (``OffsetMetadataManager.cleanupExpiredOffsets``) the offsets of the topics it is
        not subscribed to whose retention (``retention_ms``, ``offsets.retention.minutes``
        in ms) has passed since their base timestamp (:meth:`Group.offset_expiration_base`)
        are removed, unless a transactional commit of the partition is pending; a legacy
        ``expireTimestamp`` (OffsetCommitValue v1) wins: the offset expires once
        ``now_ms`` reaches it. A group whose offsets all expired (or which had none), with
        no open transaction, that ``shouldExpire`` (every group but share groups) and is
        Empty is deleted (``GroupMetadataManager.maybeDeleteGroup``).

        Returns the expired offsets as ``(group, topic, partition)``; the groups deleted
        are gone from :attr:`groups`.

        Raises:
            CoordinatorLoadError: an OffsetCommit value that does not parse.
        """
        pending = {(g, t, p) for entries in self.pending.values() for g, t, p, _ in entries}
        open_txn = {g for g, _, _ in pending}
        expired: list[tuple[str, str, int]] = []
        for gid, g in list(self.groups.items()):
            if g.type == SHARE:
                continue  # ShareGroup.shouldExpire: false; share groups commit no offsets
            offs = self.committed(gid) if gid in self.offsets else {}
            all_expired = True
            base = g.offset_expiration_base() if offs else None
            if offs and base is None:
                continue
            for (t, p), o in list(offs.items()):
                if g.is_subscribed_to_topic(t) or (gid, t, p) in pending:
                    all_expired = False
                    continue
                if o.expire_timestamp != -1:
                    gone = now_ms >= o.expire_timestamp
                else:
                    gone = now_ms - base(o) >= retention_ms
                if gone:
                    del offs[(t, p)]
                    expired.append((gid, t, p))
                else:
                    all_expired = False
            if not offs:
                self.offsets.pop(gid, None)
            if all_expired and gid not in open_txn and g.state == EMPTY:
                self._remove_group(g.partition, gid)
        return expired

    # -- the record types ---------------------------------------------------------------

    def _group(self, partition: int, gid: str, gtype: str, create: bool = True) -> Group | None:
        g = self.groups.get(gid)
        if g is not None and g.type == gtype:
            return g
        if not create:
            return None
        g = Group(gid, gtype, partition=partition)
        if gtype != CLASSIC:
            g.member_order = BaseHashTable()
        self.groups[gid] = g
        self.order.setdefault(partition, BaseHashTable()).add(gid)
        return g

    def _remove_group(self, partition: int, gid: str) -> None:
        if self.groups.pop(gid, None) is not None:
            table = self.order.get(partition)
            if table is not None:
                table.remove(gid)

    def _apply(self, partition: int, rtype: int, k: dict, v: dict | None,
               record_offset: int, producer_id: int) -> None:
        if rtype in (0, 1):
            self._offset_commit(partition, k, v, record_offset, producer_id)
        elif rtype == 2:
            self._group_metadata(partition, k["group"], v)
        elif rtype in (3, 11, 17):
            gtype = {3: CONSUMER, 11: SHARE, 17: STREAMS}[rtype]
            gid = k["groupId"]
            if v is None:
                g = self.groups.get(gid)
                if g is not None and g.type == gtype:
                    self._remove_group(partition, gid)
                return
            self._group(partition, gid, gtype).epoch = v["epoch"]
        elif rtype in (5, 10, 19):
            self._member_metadata(partition, rtype, k, v)
        elif rtype in (6, 12, 20):
            gtype = {6: CONSUMER, 12: SHARE, 20: STREAMS}[rtype]
            g = self._group(partition, k["groupId"], gtype, create=v is not None)
            if g is not None:
                g.assignment_epoch = -1 if v is None else v["assignmentEpoch"]
        elif rtype in (7, 13):
            gtype = CONSUMER if rtype == 7 else SHARE
            g = self._group(partition, k["groupId"], gtype, create=v is not None)
            m = None if g is None else g.members.get(k["memberId"])
            if m is not None:
                m.target = None if v is None else [
                    (tp["topicId"], list(tp["partitions"])) for tp in v["topicPartitions"]]
        elif rtype in (8, 14, 22):
            self._current_assignment(partition, rtype, k, v)
        elif rtype == 15:
            g = self._group(partition, k["groupId"], SHARE, create=v is not None)
            if g is not None:
                g.share_initialized = {} if v is None else {
                    t["topicId"]: (t["topicName"], list(t["partitions"]))
                    for t in v["initializedTopics"]}
        elif rtype == 16:
            g = self._group(partition, k["groupId"], CONSUMER, create=v is not None)
            if g is not None:
                if v is None:
                    g.resolved_regexes.pop(k["regularExpression"], None)
                else:
                    g.resolved_regexes[k["regularExpression"]] = list(v["topics"])

    def _offset_commit(self, partition: int, k: dict, v: dict | None, record_offset: int,
                       producer_id: int) -> None:
        gid, tp = k["group"], (k["topic"], k["partition"])
        if v is None:
            self.offsets.get(gid, {}).pop(tp, None)
            for entries in self.pending.values():
                entries[:] = [e for e in entries if (e[0], e[1], e[2]) != (gid, *tp)]
            return
        if gid not in self.groups:
            self._group(partition, gid, CLASSIC)
        off = v if isinstance(v, _Raw) else CommittedOffset.from_value(v, record_offset)
        if producer_id != NO_PRODUCER_ID:
            self.pending.setdefault(producer_id, []).append((gid, *tp, off))
        else:
            self.offsets.setdefault(gid, {})[tp] = off

    def _group_metadata(self, partition: int, gid: str, v: dict | None) -> None:
        self.classic_values[gid] = v
        if v is None:
            self._remove_group(partition, gid)
            return
        old = self.groups.get(gid)
        if old is not None and old.type != CLASSIC:
            self._remove_group(partition, gid)
        g = self._group(partition, gid, CLASSIC)
        g.protocol_type = v["protocolType"] or ""
        g.protocol = v.get("protocol")
        g.generation = v["generation"]
        g.leader = v.get("leader")
        g.current_state_timestamp = v.get("currentStateTimestamp", -1)
        g.members = {}
        for m in v["members"]:
            g.members[m["memberId"]] = Member(
                m["memberId"], m["clientId"], m["clientHost"], m.get("groupInstanceId"),
                assignment=_classic_assignment(g.protocol_type, m["assignment"]),
                classic_protocol=True, session_timeout_ms=m["sessionTimeout"],
                rebalance_timeout_ms=m.get("rebalanceTimeout", -1))
        g.subscribed_topics = _classic_subscribed_topics(g, v["members"])

    def _member_metadata(self, partition: int, rtype: int, k: dict, v: dict | None) -> None:
        gtype = {5: CONSUMER, 10: SHARE, 19: STREAMS}[rtype]
        g = self._group(partition, k["groupId"], gtype, create=v is not None)
        if g is None:
            return
        mid = k["memberId"]
        if v is None:
            g.members.pop(mid, None)
            g.member_order.remove(mid)
            return
        m = g.members.get(mid)
        if m is None:
            m = g.members[mid] = Member(mid, member_epoch=0)
            g.member_order.add(mid)
        m.client_id = v.get("clientId", "")
        m.client_host = v.get("clientHost", "")
        m.group_instance_id = v.get("instanceId")
        m.rack_id = v.get("rackId")
        m.subscribed_topics = list(v.get("subscribedTopicNames") or [])
        m.subscribed_topic_regex = v.get("subscribedTopicRegex") or None
        m.server_assignor = v.get("serverAssignor")
        m.classic_protocol = v.get("classicMemberMetadata") is not None
        m.rebalance_timeout_ms = v.get("rebalanceTimeoutMs", -1)

    def _current_assignment(self, partition: int, rtype: int, k: dict, v: dict | None) -> None:
        gtype = {8: CONSUMER, 14: SHARE, 22: STREAMS}[rtype]
        g = self._group(partition, k["groupId"], gtype, create=v is not None)
        if g is None:
            return
        mid = k["memberId"]
        m = g.members.get(mid)
        if m is None:
            if v is None:
                return
            m = g.members[mid] = Member(mid, member_epoch=0)
            g.member_order.add(mid)
        if v is None:  # the member leaves: epoch -1, nothing assigned
            m.member_epoch, m.assignment = -1, []
            return
        m.member_epoch = v["memberEpoch"]
        m.state = v.get("state", MEMBER_STABLE)
        m.assignment = [(tp["topicId"], list(tp["partitions"]))
                        for tp in v.get("assignedPartitions") or []
                        if "topicId" in tp]


class _Raw:
    """An OffsetCommit value not parsed yet (most are replaced by a later commit)."""

    __slots__ = ("value", "record_offset", "where", "message")

    def __init__(self, value: bytes, record_offset: int, where: str, message):
        self.value, self.record_offset, self.where = value, record_offset, where
        self.message = message

    def parse(self) -> CommittedOffset:
        try:
            v, _ = self.message.parse(self.value, int16(self.value), offset=2)
        except (ValueError, KeyError, *PARSE_ERRORS) as e:
            raise CoordinatorLoadError(f"{self.where}: the record at offset "
                                       f"{self.record_offset} does not load: "
                                       f"{java_message(e)}") from None
        return CommittedOffset.from_value(v, self.record_offset)


def _classic_assignment(protocol_type: str, data) -> list[tuple[str, list[int]]]:
    """A classic member's assignment bytes decoded as a ConsumerProtocolAssignment (for
    protocol type "consumer"; what the admin client's describe decodes), else []."""
    if protocol_type != "consumer" or not data or len(data) < 2:
        return []
    version = int16(data)
    if version < 0:
        return []
    version = min(version, gm.ConsumerProtocolAssignment.valid.high)
    try:
        obj, _ = gm.ConsumerProtocolAssignment.parse(bytes(data), version, offset=2)
    except PARSE_ERRORS:
        return []
    return [(tp["topic"], list(tp["partitions"])) for tp in obj["assignedPartitions"]]


def _classic_subscribed_topics(g: Group, members: list[dict]) -> set[str] | None:
    """ClassicGroup.computeSubscribedTopics: for protocol type "consumer", the union of the
    members' ConsumerProtocolSubscription topics (read as version 0, the prefix of every
    version) of the group's protocol; empty without members; None (unknown) for another
    protocol type, without a protocol or when a subscription does not parse."""
    if g.protocol_type != "consumer":
        return None
    if not members:
        return set()
    if g.protocol is None:
        return None
    topics: set[str] = set()
    for m in members:
        data = m.get("subscription")
        try:
            if data is None or len(data) < 2 or int16(data) < 0:
                return None
            sub, _ = gm.ConsumerProtocolSubscription.parse(bytes(data), 0, offset=2)
        except (ValueError, KeyError, TypeError, *PARSE_ERRORS):
            return None
        topics.update(sub["topics"])
    return topics
