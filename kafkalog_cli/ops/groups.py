"""``kafkalog groups``: ``kafka-consumer-groups.sh`` answered from a broker's log
directories, without the broker.

The group coordinator's state is replayed from ``__consumer_offsets`` (and
``__share_group_state``) by :class:`~kafkalog_cli.decoders.group_state.GroupLogReplay`,
as a broker loading those partitions would hold it; the admin calls the tool makes are
answered from it and from the partitions beside it:

* ``ListGroups`` (``ListGroupsOptions.forConsumerGroups``: classic groups of protocol type
  "" or "consumer", and consumer groups), in the order the admin client returns them (the
  coordinator shards in their ``ConcurrentHashMap`` order, each shard's groups in its
  ``TimelineHashMap`` order, then the admin client's ``HashMap`` of group ids);
* ``DescribeGroups`` / ``ConsumerGroupDescribe``: state, members, assignments (classic
  members' ConsumerProtocolAssignment bytes; consumer members' topic ids named through
  the partitions' ``partition.metadata``), assignor, epochs;
* ``ListConsumerGroupOffsets``: the committed offsets;
* ``ListOffsets`` LATEST: the partition's log end offset in these directories (the high
  watermark of a single replica once the broker is up); None (printed ``-``) when the
  partition is not there.

``--reset-offsets`` computes the tool's plan (GroupOffsetsResetter) from the same answers
and, with ``execute``, appends the OffsetCommit records the coordinator writes for an
AlterConsumerGroupOffsets to the group's ``__consumer_offsets`` partition
(``Utils.abs(groupId.hashCode()) % partitions``) through the append engine, under the log
directory's lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..decoders.group_state import (
    CLASSIC,
    CONSUMER,
    DEAD,
    EMPTY,
    OFFSETS_RETENTION_MINUTES_DEFAULT,
    Group,
    GroupLogReplay,
)
from ..errors import InvalidArgumentError
from ..javaorder import concurrent_hash_map_order, hash_map_order, topic_partition_hash
from .logdirs import BrokerLogDirs

OFFSETS_TOPIC = "__consumer_offsets"
SHARE_STATE_TOPIC = "__share_group_state"
#: GroupCoordinatorConfig.CONSUMER_GROUP_ASSIGNORS_DEFAULT's first: the default assignor
DEFAULT_CONSUMER_ASSIGNOR = "uniform"
#: ListGroupsOptions.forConsumerGroups().protocolTypes
CONSUMER_PROTOCOL_TYPES = ("", "consumer")
#: GroupState values valid for consumer groups (GroupState.groupStatesForType(CONSUMER)
#: plus the classic states), as the tool parses --state
VALID_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty",
                "Assigning", "Reconciling")


#: offsets.retention.minutes' default, in ms (GroupCoordinatorConfig.offsetsRetentionMs)
OFFSETS_RETENTION_MS_DEFAULT = OFFSETS_RETENTION_MINUTES_DEFAULT * 60_000
#: the broker configs ``kafkalog groups --config`` takes
GROUP_CONFIGS = ("offsets.retention.minutes",)


def _now(now_ms: int | None) -> int:
    import time

    return int(time.time() * 1000) if now_ms is None else now_ms


def parse_group_configs(items) -> int:
    """``--config KEY=VALUE`` items -> ``offsets.retention.minutes`` in ms (its default
    when not given). The value is checked as the broker's ConfigDef checks it (an int of
    at least 1).

    Raises:
        InvalidArgumentError: not KEY=VALUE, a key other than :data:`GROUP_CONFIGS`, a bad
            value (Kafka's ConfigException text).
    """
    retention = OFFSETS_RETENTION_MS_DEFAULT
    for item in items or []:
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep:
            raise InvalidArgumentError(f"--config must be KEY=VALUE, got {item!r}")
        if key not in GROUP_CONFIGS:
            raise InvalidArgumentError(f"--config {key}: not a config kafkalog groups uses "
                                       f"(it takes {', '.join(GROUP_CONFIGS)})")
        try:
            minutes = int(value)
        except ValueError:
            raise InvalidArgumentError(f"Invalid value {value} for configuration {key}: Not a "
                                       "number of type INT") from None
        if not -2**31 <= minutes < 2**31:
            raise InvalidArgumentError(f"Invalid value {value} for configuration {key}: Not a "
                                       "number of type INT")
        if minutes < 1:
            raise InvalidArgumentError(f"Invalid value {value} for configuration {key}: Value "
                                       "must be at least 1")
        retention = minutes * 60_000
    return retention


def tp_hash(tp: tuple[str, int]) -> int:
    return topic_partition_hash(*tp)


# -- the coordinator's state ---------------------------------------------------------------

@dataclass
class Coordinator:
    """What ``kafkalog groups`` reads: the log directories and the replayed state."""

    dirs: BrokerLogDirs
    state: GroupLogReplay
    #: the __consumer_offsets partitions on disk, in the coordinator runtime's order
    shards: list[int]

    @classmethod
    def load(cls, paths, *, now_ms: int | None = None,
             retention_ms: int | None = None) -> Coordinator:
        """Replay ``__consumer_offsets`` and ``__share_group_state`` of ``paths``, then the
        coordinator's expiration pass at ``now_ms`` (ms since the epoch; default: the
        current time) with ``retention_ms`` (``offsets.retention.minutes`` in ms; default
        7 days).

        Raises:
            CoordinatorLoadError: a record does not parse (naming partition and offset).
            NotAKafkaFileError / UnreadableError: a path holds no log directory.
            CorruptRecordError: a batch does not decode.
        """
        dirs = BrokerLogDirs.open(paths)
        state = GroupLogReplay()
        shards = dirs.partitions_of(OFFSETS_TOPIC)
        for p in shards:
            _replay_partition(dirs, OFFSETS_TOPIC, p, state)
        for p in dirs.partitions_of(SHARE_STATE_TOPIC):
            _replay_partition(dirs, SHARE_STATE_TOPIC, p, state)
        state.expire(_now(now_ms), OFFSETS_RETENTION_MS_DEFAULT
                     if retention_ms is None else retention_ms)
        order = concurrent_hash_map_order([(OFFSETS_TOPIC, p) for p in shards], tp_hash)
        return cls(dirs, state, [p for _, p in order])

    def listed_group_ids(self, types: tuple[str, ...] | None = None) -> list[str]:
        """ListGroups for consumer groups (or the groups of ``types``), in the admin
        client's order."""
        keep = _is_consumer_group if types is None else (lambda g: g.type in types)
        ids = [g for g in self.state.group_ids_in_coordinator_order(self.shards)
               if keep(self.state.groups[g])]
        return hash_map_order(ids)

    def log_end_offset(self, topic: str, partition: int) -> int | None:
        pd = self.dirs.get(topic, partition)
        return None if pd is None else pd.log_end_offset

    def log_start_offset(self, topic: str, partition: int) -> int | None:
        pd = self.dirs.get(topic, partition)
        return None if pd is None else pd.log_start_offset

    def topic_name(self, topic_id_or_name: str, by_id: bool) -> str | None:
        return self.dirs.topic_ids.get(topic_id_or_name) if by_id else topic_id_or_name

    def close(self) -> None:
        self.dirs.close()


def _replay_partition(dirs: BrokerLogDirs, topic: str, p: int, state: GroupLogReplay) -> None:
    pd = dirs.get(topic, p)
    log = pd.log
    where = f"{topic}-{p}"
    problems: list[str] = []  # bytes after a segment's last whole batch, named
    for _seg, batch in log.batches_from(pd.log_start_offset, problems=problems):
        if topic == SHARE_STATE_TOPIC:
            if not batch.is_control:
                for r in batch.records():
                    if r.key is not None:
                        state.replay_share_state(r.key, r.value, r.offset, where)
            continue
        state.replay_batch(p, batch, where=where)
    dirs.problems.extend(problems)


def _is_consumer_group(g: Group) -> bool:
    """ListGroupsOptions.forConsumerGroups: types classic and consumer, protocol types ""
    and "consumer" (a consumer group's is "consumer")."""
    if g.type == CONSUMER:
        return True
    return g.type == CLASSIC and g.protocol_type in CONSUMER_PROTOCOL_TYPES


# -- results -------------------------------------------------------------------------------

@dataclass
class OffsetRow:
    """One row of ``--describe --offsets`` (PartitionAssignmentState)."""

    group: str
    topic: str | None
    partition: int | None
    offset: int | None
    log_end_offset: int | None
    leader_epoch: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None

    @property
    def lag(self) -> int | None:
        """``logEndOffset - offset`` when both are known (ConsumerGroupService.getLag)."""
        if self.offset is None or self.offset == -1 or self.log_end_offset is None:
            return None
        return self.log_end_offset - self.offset

    def to_dict(self) -> dict:
        return {"topic": self.topic, "partition": self.partition,
                "leaderEpoch": self.leader_epoch, "currentOffset": self.offset,
                "logEndOffset": self.log_end_offset, "lag": self.lag,
                "consumerId": self.consumer_id, "host": self.host, "clientId": self.client_id}


@dataclass
class MemberRow:
    """One member of ``--describe --members`` (MemberAssignmentState)."""

    group: str
    consumer_id: str
    host: str
    client_id: str
    group_instance_id: str
    assignment: list[tuple[str, int]]
    target_assignment: list[tuple[str, int]]
    member_epoch: int | None
    target_epoch: int | None
    upgraded: bool | None

    def to_dict(self) -> dict:
        return {"consumerId": self.consumer_id, "groupInstanceId": self.group_instance_id or None,
                "host": self.host, "clientId": self.client_id,
                "assignment": [{"topic": t, "partition": p} for t, p in self.assignment],
                "targetAssignment": [{"topic": t, "partition": p}
                                     for t, p in self.target_assignment],
                "memberEpoch": self.member_epoch, "targetAssignmentEpoch": self.target_epoch,
                "upgraded": self.upgraded}


@dataclass
class GroupDescription:
    """One group as ConsumerGroupDescription holds it, with its offset rows and members.
    ``state`` is ``Dead`` for a group the coordinator does not have, or has with another
    type than classic or consumer (``type`` then names it: ``kafkalog share-groups``
    describes share groups)."""

    group_id: str
    type: str | None
    state: str
    protocol_type: str
    assignment_strategy: str
    group_epoch: int | None
    target_assignment_epoch: int | None
    members: list[MemberRow] = field(default_factory=list)
    offsets: list[OffsetRow] = field(default_factory=list)

    @property
    def exists(self) -> bool:
        return self.state != DEAD

    def to_dict(self) -> dict:
        out = {"groupId": self.group_id, "type": self.type, "state": self.state,
               "protocolType": self.protocol_type,
               "assignmentStrategy": self.assignment_strategy or None,
               "groupEpoch": self.group_epoch,
               "targetAssignmentEpoch": self.target_assignment_epoch,
               "members": [m.to_dict() for m in self.members],
               "offsets": [r.to_dict() for r in self.offsets]}
        return out


@dataclass
class GroupsResult:
    """``groups --list`` / ``--describe``: the groups asked for, sorted as the tool
    prints them (``--list``: the admin client's order; ``--describe``: by group id)."""

    log_dirs: list[str]
    coordinator_id: int
    groups: list[GroupDescription]
    describe: bool
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and all(g.exists for g in self.groups)

    def to_dict(self) -> dict:
        if not self.describe:
            return {"logDirs": self.log_dirs, "coordinatorId": self.coordinator_id,
                    "groups": [{"groupId": g.group_id, "type": g.type, "state": g.state,
                                "protocolType": g.protocol_type} for g in self.groups],
                    "ok": self.ok, "problems": self.problems}
        return {"logDirs": self.log_dirs, "coordinatorId": self.coordinator_id,
                "groups": [g.to_dict() for g in self.groups], "ok": self.ok,
                "problems": self.problems}


# -- describing ----------------------------------------------------------------------------

def describe_group(c: Coordinator, group_id: str, topics: set[str] | None = None
                   ) -> GroupDescription:
    """ConsumerGroupCommand's view of one group: ConsumerGroupDescription, its
    committed offsets (ListConsumerGroupOffsets) and the rows of
    ``collectGroupOffsets`` / ``collectGroupMembers``. ``topics`` keeps only the rows
    and assignments of those topics (kafkalog's ``--topic``)."""
    g = c.state.groups.get(group_id)
    if g is None or g.type not in (CLASSIC, CONSUMER):
        # no group, or one of another type: ConsumerGroupDescribe's GROUP_ID_NOT_FOUND
        # ("Group G is not a consumer group." for a share or streams group)
        return GroupDescription(group_id, None if g is None else g.type, DEAD, "", "",
                                None, None)
    by_id = g.type != CLASSIC
    keep = (lambda t: True) if topics is None else (lambda t: t in topics)
    members = []
    for m in g.ordered_members():
        assigned = _named(c, m.assignment, by_id, keep)
        target = _named(c, m.target or [], by_id, keep) if by_id else []
        members.append(MemberRow(
            group_id, m.member_id, m.client_host, m.client_id, m.group_instance_id or "",
            assigned, target, None if g.type == CLASSIC else m.member_epoch,
            None if g.type == CLASSIC else g.assignment_epoch,
            None if g.type == CLASSIC else not m.classic_protocol))
    if g.type == CLASSIC:
        strategy = g.protocol or ""
        epoch = target_epoch = None
    else:
        strategy = g.preferred_assignor() or DEFAULT_CONSUMER_ASSIGNOR
        epoch = g.epoch if g.epoch is not None else 0
        target_epoch = g.assignment_epoch if g.assignment_epoch is not None else -1
    desc = GroupDescription(group_id, g.type, g.state,
                            "consumer" if g.type == CONSUMER else g.protocol_type,
                            strategy, epoch, target_epoch, members)
    desc.offsets = _offset_rows(c, desc, {tp: o for tp, o in c.state.committed(group_id).items()
                                          if keep(tp[0])})
    return desc


def _named(c: Coordinator, assignment, by_id: bool, keep) -> list[tuple[str, int]]:
    out = []
    for t, parts in assignment:
        name = c.topic_name(t, by_id)
        if name is None or not keep(name):
            continue  # a topic id the metadata image does not know: left out, as Kafka does
        out.extend((name, p) for p in parts)
    return out


def _offset_rows(c: Coordinator, desc: GroupDescription, committed: dict) -> list[OffsetRow]:
    """ConsumerGroupService.collectGroupsOffsets: members with partitions (most first,
    stable), each one's partitions sorted; then the committed partitions no member has,
    sorted, with ``-`` for the consumer."""
    rows: list[OffsetRow] = []
    assigned: set = set()
    with_parts = sorted((m for m in desc.members if m.assignment),
                        key=lambda m: -len(set(m.assignment)))
    for m in with_parts:
        tps = set(m.assignment)
        assigned |= tps
        rows.extend(_rows_for(c, desc.group_id, sorted(tps), committed, m.consumer_id,
                              m.host, m.client_id))
    rest = sorted(tp for tp in committed if tp not in assigned)
    rows.extend(_rows_for(c, desc.group_id, rest, committed, None, None, None))
    return rows


def _rows_for(c: Coordinator, group: str, tps, committed: dict, consumer: str | None,
              host: str | None, client: str | None) -> list[OffsetRow]:
    out = []
    for t, p in tps:
        off = committed.get((t, p))
        out.append(OffsetRow(group, t, p, None if off is None else off.offset,
                             c.log_end_offset(t, p),
                             None if off is None or off.leader_epoch < 0 else off.leader_epoch,
                             consumer, host, client))
    return out


def groups(paths, *, group_ids: list[str] | None = None, all_groups: bool = False,
           describe: bool = True, topics: list[str] | None = None,
           states: list[str] | None = None, types: list[str] | None = None,
           now_ms: int | None = None, retention_ms: int | None = None) -> GroupsResult:
    """``kafka-consumer-groups.sh --list`` (``describe=False``) or ``--describe`` of the
    groups named (``group_ids``) or of every listed group (``all_groups``), as a broker
    answers at ``now_ms`` (default: now) once its expiration pass with ``retention_ms``
    has run (:meth:`Coordinator.load`).

    ``states`` / ``types`` filter ``--list`` as ListGroupsOptions.inGroupStates /
    withTypes do.

    Raises:
        InvalidArgumentError: neither groups nor ``all_groups`` for a describe; a state or
            type the tool does not know.
        CoordinatorLoadError / CorruptRecordError / NotAKafkaFileError: unreadable input.
    """
    states = _parse_states(states)
    types = _parse_types(types)
    c = Coordinator.load(paths, now_ms=now_ms, retention_ms=retention_ms)
    try:
        if not describe:
            ids = [g for g in c.listed_group_ids()
                   if (not types or c.state.groups[g].type in types)
                   and (not states or c.state.groups[g].state.lower() in states)]
            found = [describe_group(c, g) for g in ids]
        else:
            if all_groups:
                ids = c.listed_group_ids()
            elif group_ids:
                ids = list(dict.fromkeys(group_ids))
            else:
                raise InvalidArgumentError("give --group G (repeatable) or --all-groups")
            keep = set(topics) if topics else None
            found = [describe_group(c, g, keep) for g in sorted(set(ids))]
        return GroupsResult([str(d) for d in c.dirs.log_dirs], c.dirs.node_id, found,
                            describe, list(c.dirs.problems))
    finally:
        c.close()


def _parse_states(states) -> set[str] | None:
    if not states:
        return None
    out = set()
    for s in states:
        for part in s.split(","):
            part = part.strip()
            if not part:
                continue
            match = [v for v in VALID_STATES if v.lower() == part.lower()]
            if not match:
                raise InvalidArgumentError(
                    f"Invalid state list '{s}'. Valid states are: {', '.join(VALID_STATES)}")
            out.add(match[0].lower())
    return out or None


def _parse_types(types) -> set[str] | None:
    if not types:
        return None
    out = set()
    for s in types:
        for part in s.lower().split(","):
            part = part.strip()
            if not part:
                continue
            if part not in (CLASSIC, CONSUMER):
                raise InvalidArgumentError(
                    f"Invalid types list '{s}'. Valid types are: classic, consumer")
            out.add(part)
    return out or None


__all__ = ["Coordinator", "GroupDescription", "GroupsResult", "MemberRow", "OffsetRow",
           "describe_group", "groups", "parse_group_configs"]


# -- --reset-offsets -----------------------------------------------------------------------

#: the reset specifications, as the tool names them
STRATEGIES = ("to-earliest", "to-latest", "to-offset", "to-datetime", "by-duration",
              "shift-by", "to-current", "from-file")
#: the largest --from-file CSV read
MAX_RESET_FILE_BYTES = 64 << 20
INACTIVE = (EMPTY, DEAD)


@dataclass
class ResetResult:
    """``groups --reset-offsets``: the plan per group (``{group: [(topic, partition,
    new offset)]}`` in the order the tool prints it), the lines the tool prints on stdout
    before it (warnings, refusals), whether the plan was written and the
    ``__consumer_offsets`` offsets of the records appended."""

    plan: dict[str, list[tuple[str, int, int]]]
    messages: list[str]
    executed: bool
    refused: list[str] = field(default_factory=list)
    appended: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.refused

    def to_dict(self) -> dict:
        return {"executed": self.executed,
                "groups": [{"groupId": g,
                            "offsets": [{"topic": t, "partition": p, "offset": o}
                                        for t, p, o in rows],
                            **({"appended": {"partition": self.appended[g][0],
                                             "offset": self.appended[g][1]}}
                               if g in self.appended else {})}
                           for g, rows in self.plan.items()],
                "refused": self.refused, "messages": self.messages, "ok": self.ok}


def reset_offsets(paths, *, group_ids: list[str] | None = None, all_groups: bool = False,
                  topics: list[str] | None = None, all_topics: bool = False,
                  strategy: str, value=None, execute: bool = False, force: bool = False,
                  now_ms: int | None = None, retention_ms: int | None = None) -> ResetResult:
    """ConsumerGroupService.resetOffsets offline.

    ``strategy`` is one of :data:`STRATEGIES`; ``value`` its argument (``to-offset``,
    ``shift-by``: an int; ``to-datetime``: epoch ms or ISO-8601; ``by-duration``: an
    ISO-8601 duration ``PnDTnHnMnS``; ``from-file``: the path of the tool's CSV, see
    :func:`parse_reset_plan`; it needs no scope). ``topics``: ``topic`` (all its partitions) or
    ``topic:p,p``. A group with members (not Empty) is refused, as the tool refuses a
    group that is not inactive, unless ``force``. With ``execute`` the plan is appended
    as OffsetCommit records (see the module docstring). ``now_ms`` is the time of the
    expiration pass (:meth:`Coordinator.load`), of ``by-duration`` and of the commits.

    Raises:
        InvalidArgumentError: no scope, an unknown strategy, a partition that does not
            exist, a shift of a partition without a committed offset (the tool's texts).
        LogDirLockedError: (``execute``) a broker holds the log directory's lock.
        RefusedError: (``execute``) the group's ``__consumer_offsets`` partition is not in
            these log directories.
    """
    if strategy not in STRATEGIES:
        raise InvalidArgumentError(f"unknown reset specification {strategy!r}")
    if not all_topics and not topics and strategy != "from-file":
        raise InvalidArgumentError("One of the reset scopes should be defined: --all-topics, "
                                   "--topic.")
    file_plan = (parse_reset_plan(_read_reset_file(value), group_ids or [])
                 if strategy == "from-file" else None)
    now = _now(now_ms)
    c = Coordinator.load(paths, now_ms=now, retention_ms=retention_ms)
    try:
        ids = c.listed_group_ids() if all_groups else list(dict.fromkeys(group_ids or []))
        if not ids:
            raise InvalidArgumentError("give --group G (repeatable) or --all-groups")
        messages: list[str] = []
        refused: list[str] = []
        plans: dict[str, dict[tuple[str, int], int]] = {}
        for gid in ids:
            desc = describe_group(c, gid)
            if desc.state not in INACTIVE and not force:
                messages.append(f"\nError: Assignments can only be reset if the group '{gid}' "
                                f"is inactive, but the current state is {desc.state}.")
                refused.append(gid)
                plans[gid] = {}
                continue
            committed = {tp: o.offset for tp, o in c.state.committed(gid).items()}
            if file_plan is not None:  # GroupOffsetsResetter.resetFromFile
                if gid not in file_plan:
                    messages.append(f"\nError: No reset plan for group {gid} found.")
                    plans[gid] = {}
                    continue
                committed, scope = file_plan[gid], list(file_plan[gid])
            else:
                scope = sorted(committed) if all_topics else _parse_scope(c, topics)
            _check_partitions(c, scope)
            plans[gid] = _plan(c, scope, committed, strategy, value, now, messages)
        plan = {g: [(t, p, plans[g][(t, p)])
                    for t, p in hash_map_order(list(plans[g]), tp_hash)]
                for g in hash_map_order(list(plans))}
        result = ResetResult(plan, messages, execute, refused)
        if execute:
            for gid, rows in plan.items():
                if rows:
                    result.appended[gid] = _append_commits(c, gid, rows, now)
        return result
    finally:
        c.close()


def _parse_scope(c: Coordinator, topics) -> list[tuple[str, int]]:
    """GroupOffsetsResetter.parseTopicPartitionsToReset: ``t:p,p`` as given, then every
    partition of each plain ``t``."""
    named, whole = [], []
    for arg in topics:
        if ":" in arg:
            parts = arg.split(":")
            if len(parts) != 2:
                raise InvalidArgumentError(f"Invalid topic arg '{arg}', expected topic name "
                                           "and partitions")
            t, ps = parts
            for p in ps.split(","):
                try:
                    named.append((t, int(p)))
                except ValueError:
                    raise InvalidArgumentError(f"Invalid partition '{p}' specified in topic "
                                               f"arg '{arg}''") from None
        else:
            whole.append(arg)
    for t in whole:
        ps = c.dirs.partitions_of(t)
        if not ps:
            raise InvalidArgumentError(f"This server does not host this topic-partition: "
                                       f"topic {t} has no partition in these log directories")
        named.extend((t, p) for p in ps)
    return named


def _check_partitions(c: Coordinator, scope) -> None:
    """GroupOffsetsResetter.checkAllTopicPartitionsValid."""
    missing = [f"{t}-{p}" for t, p in scope if c.dirs.get(t, p) is None]
    if missing:
        raise InvalidArgumentError(f'The partitions "{",".join(missing)}" do not exist')


def _plan(c: Coordinator, scope, committed: dict, strategy: str, value, now: int,
          messages: list[str]) -> dict[tuple[str, int], int]:
    def start(tp):
        return c.log_start_offset(*tp)

    def end(tp):
        return c.log_end_offset(*tp)

    def clamp(tp, offset):  # checkOffsetsRange
        if offset > end(tp):
            return end(tp)
        return max(offset, start(tp))

    if strategy == "to-earliest":
        return {tp: start(tp) for tp in scope}
    if strategy == "to-latest":
        return {tp: end(tp) for tp in scope}
    if strategy == "to-offset":
        return {tp: clamp(tp, int(value)) for tp in scope}
    if strategy == "shift-by":
        out = {}
        for tp in scope:
            if tp not in committed:
                raise InvalidArgumentError(f"Cannot shift offset for partition {tp[0]}-{tp[1]} "
                                           "since there is no current committed offset")
            out[tp] = clamp(tp, committed[tp] + int(value))
        return out
    if strategy == "from-file":  # the file's offsets, within the log (checkOffsetsRange)
        return {tp: clamp(tp, committed[tp]) for tp in scope}
    if strategy == "to-current":
        return {tp: committed[tp] if tp in committed else end(tp) for tp in scope}
    ts = _timestamp(strategy, value, now)
    out = {}
    empty = []
    for tp in scope:
        pd = c.dirs.get(*tp)
        found = pd.log.fetch_offset_by_timestamp(ts, pd.log_start_offset)
        if found is None or found.offset >= pd.log_end_offset:
            empty.append(tp)
        else:
            out[tp] = found.offset
    for t, p in hash_map_order(empty, tp_hash):
        messages.append(f"\nWarn: Partition {p} from topic {t} is empty. Falling back to "
                        "latest known offset.")
    for tp in empty:
        out[tp] = end(tp)
    return out


def _read_reset_file(path) -> str:
    from ..errors import UnreadableError
    from ..storage.files import check_exists
    from ..storage.location import read_bytes_if_exists

    src = check_exists(path)
    raw = read_bytes_if_exists(src, limit=MAX_RESET_FILE_BYTES, too_large=lambda n: (
        InvalidArgumentError(f"{src}: larger than {MAX_RESET_FILE_BYTES} bytes")))
    if raw is None:
        raise UnreadableError("No such file or directory", file=src)
    return raw.decode("utf-8", errors="replace")


def parse_reset_plan(text: str, group_ids: list[str]) -> dict[str, dict[tuple[str, int], int]]:
    """GroupOffsetsResetter.parseResetPlan: the lines of ``--export``'s CSV (Jackson's CSV:
    quotes as ``--export`` writes them). With one group given and a first line of three
    columns, ``topic,partition,offset`` lines of that group; else
    ``group,topic,partition,offset`` lines. Returns ``{group: {(topic, partition):
    offset}}``, the last line of a partition winning.

    Raises:
        InvalidArgumentError: a line that is not such a record (naming its line number).
    """
    import csv

    lines = text.split("\n")
    while lines and lines[-1] == "":
        lines.pop()  # Java's split drops the trailing empty strings
    rows = list(csv.reader(lines))
    no_group = len(group_ids) == 1 and bool(rows) and len(rows[0]) == 3
    plan: dict[str, dict[tuple[str, int], int]] = {}
    for n, row in enumerate(rows, 1):
        if not row and not lines[n - 1].strip():
            continue
        try:
            if no_group:
                (t, p, o), g = row, group_ids[0]
            else:
                g, t, p, o = row
            plan.setdefault(g, {})[(t, int(p))] = int(o)
        except ValueError:
            want = "topic,partition,offset" if no_group else "group,topic,partition,offset"
            raise InvalidArgumentError(f"--from-file line {n}: not a {want} record: "
                                       f"{lines[n - 1][:200]!r}") from None
    return plan


def _timestamp(strategy: str, value, now: int) -> int:
    if strategy == "to-datetime":
        from .read import parse_timestamp

        return parse_timestamp(str(value))
    return now - parse_duration_ms(str(value))


def parse_duration_ms(text: str) -> int:
    """``java.time.Duration.parse``: ``[-]PnDTnHnMn.nS`` (days, hours, minutes, seconds
    with a fraction), in ms.

    Raises:
        InvalidArgumentError: not such a duration.
    """
    import re

    m = re.fullmatch(r"([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?"
                     r"(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?", text.strip(), re.IGNORECASE)
    if not m or text.strip().upper().endswith("T") or not any(m.group(i) for i in range(2, 6)):
        raise InvalidArgumentError(f"Text cannot be parsed to a Duration: {text}")
    sign = -1 if m.group(1) == "-" else 1
    d, h, mi, s = (int(m.group(i) or 0) for i in range(2, 6))
    frac = (m.group(6) or "").ljust(3, "0")[:3]
    ms = (((d * 24 + h) * 60 + mi) * 60 + s) * 1000
    if frac:
        ms += (-1 if m.group(5) and m.group(5).startswith("-") else 1) * int(frac)
    return sign * ms


def _append_commits(c: Coordinator, gid: str, rows, now: int) -> tuple[int, int]:
    """Write the plan of ``gid`` as the coordinator does for an AlterConsumerGroupOffsets:
    one batch of OffsetCommit records (value version 4, leader epoch -1, empty metadata,
    commit timestamp ``now``, the topic id of ``partition.metadata``) to the group's
    ``__consumer_offsets`` partition (:func:`append_coordinator_records`).

    Raises:
        RefusedError: the group's partition is not in these log directories.
        LogDirLockedError: the directory is locked.
    """
    from ..server.group_log import offset_commit_record

    ids = {name: tid for tid, name in c.dirs.topic_ids.items()}
    records = [offset_commit_record(gid, t, part, o, commit_timestamp=now,
                                    topic_id=ids.get(t)) for t, part, o in rows]
    return append_coordinator_records(c, gid, records, now)


def append_coordinator_records(c: Coordinator, gid: str, records: list[tuple[bytes, bytes | None]],
                               now: int) -> tuple[int, int]:
    """Append ``records`` (``(key, value)``; value None: a tombstone) as one batch, with
    timestamp ``now``, as the group coordinator's runtime builds it, to the
    ``__consumer_offsets`` partition of group ``gid`` (the one its records are in; for a
    new group ``Utils.abs(groupId.hashCode()) % partitions``),
    through the append engine as the coordinator's leader append, under the log
    directory's lock. Returns ``(partition, offset of the batch's first record)``.

    Raises:
        RefusedError: the group's partition is not in these log directories.
        LogDirLockedError: the directory is locked.
    """
    from ..errors import RefusedError
    from ..format.builder import build_batch
    from ..server.coordinator_log import partition_for
    from ..storage.log_manager import LogManager

    shards = c.dirs.partitions_of(OFFSETS_TOPIC)
    if not shards:
        raise RefusedError(f"no {OFFSETS_TOPIC} partition in these log directories: the "
                           "group coordinator's topic is not here")
    g = c.state.groups.get(gid)
    if g is not None:
        p = g.partition  # where its records are: the coordinator's partition for it
    else:
        # offsets.topic.num.partitions: the partitions on disk when they are all there,
        # else the default (a copy may hold a few of them only)
        contiguous = shards == list(range(len(shards)))
        p = partition_for(gid, len(shards) if contiguous else max(max(shards) + 1, 50))
    pd = c.dirs.get(OFFSETS_TOPIC, p)
    if pd is None:
        raise RefusedError(f"group {gid} lives in {OFFSETS_TOPIC}-{p}, which is not in these "
                           "log directories")
    pd.close()
    with LogManager.open(pd.log_dir, create=False) as manager:
        log = manager.get_or_create_log(OFFSETS_TOPIC, p)
        latest = log.leader_epoch_cache.latest_epoch
        # baseSequence 0, as CoordinatorRuntime's MemoryRecords.builder writes it (not
        # NO_SEQUENCE), producer id and epoch -1
        batch = build_batch([(now, k, v, ()) for k, v in records], base_sequence=0)
        info = log.append_as_leader(batch, leader_epoch=latest or 0, origin="coordinator")
    return p, info.first_offset
