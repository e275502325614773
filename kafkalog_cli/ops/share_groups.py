"""``kafkalog share-groups``: ``kafka-share-groups.sh`` (Kafka 4.4.0's ShareGroupCommand)
answered from a broker's log directories, without the broker.

The share groups are the coordinator's state replayed from ``__consumer_offsets``
(:class:`~kafkalog_cli.ops.groups.Coordinator`); their share-partitions' state from
``__share_group_state`` (ShareCoordinatorShard). The admin calls the tool makes are
answered from them:

* ListGroups for type share, in the admin client's order (as ``groups --list``);
* ShareGroupDescribe: state, group epoch, assignment epoch, members (their assignment's
  topic ids named through the partitions' ``partition.metadata``);
* DescribeShareGroupOffsets for all the group's partitions
  (GroupCoordinatorService.describeShareGroupAllOffsets): the initialized
  share-partitions of its ShareGroupStatePartitionMetadata record, each with the start
  offset and leader epoch of ``__share_group_state`` (ReadShareGroupStateSummary) and its
  lag, ``log end offset - start offset - deliveryCompleteCount``
  (computeShareGroupLagAndBuildResponse); no start offset (-1, or no state) shows ``-``
  for all three, an unknown delivery complete count (-1) or a partition not in these
  directories ``-`` for the lag.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..decoders.group_state import DEAD, SHARE
from ..errors import InvalidArgumentError
from .groups import Coordinator, GroupsResult


@dataclass
class ShareOffsetRow:
    """One row of ``--describe --offsets`` (SharePartitionOffsetInformation)."""

    topic: str
    partition: int
    start_offset: int | None
    leader_epoch: int | None
    lag: int | None

    def to_dict(self) -> dict:
        return {"topic": self.topic, "partition": self.partition,
                "startOffset": self.start_offset, "leaderEpoch": self.leader_epoch,
                "lag": self.lag}


@dataclass
class ShareMember:
    """One member (ShareMemberDescription)."""

    consumer_id: str
    host: str
    client_id: str
    member_epoch: int
    assignment: list[tuple[str, int]]

    def to_dict(self) -> dict:
        return {"consumerId": self.consumer_id, "host": self.host, "clientId": self.client_id,
                "memberEpoch": self.member_epoch,
                "assignment": [{"topic": t, "partition": p} for t, p in self.assignment]}


@dataclass
class ShareGroupDescription:
    """A share group as ShareGroupDescription holds it, with its offset rows. ``type`` is
    the group's type when a group of another type has the id (the tool's "is not a share
    group"), None when there is no group (``state`` Dead)."""

    group_id: str
    type: str | None
    state: str
    group_epoch: int = -1
    assignment_epoch: int = -1
    members: list[ShareMember] = field(default_factory=list)
    offsets: list[ShareOffsetRow] = field(default_factory=list)

    @property
    def exists(self) -> bool:
        return self.type == SHARE

    def to_dict(self) -> dict:
        return {"groupId": self.group_id, "type": self.type, "state": self.state,
                "groupEpoch": self.group_epoch, "assignmentEpoch": self.assignment_epoch,
                "members": [m.to_dict() for m in self.members],
                "offsets": [r.to_dict() for r in self.offsets]}


@dataclass
class ShareGroupsResult(GroupsResult):
    """``share-groups --list`` / ``--describe``: the groups asked for (``--list``: the
    admin client's order; ``--describe``: sorted by group id, the tool's TreeMap), as
    :class:`GroupsResult` holds them."""

    def to_dict(self) -> dict:
        groups = ([{"groupId": g.group_id, "state": g.state} for g in self.groups]
                  if not self.describe else [g.to_dict() for g in self.groups])
        return {"logDirs": self.log_dirs, "coordinatorId": self.coordinator_id,
                "groups": groups, "ok": self.ok, "problems": self.problems}


def describe_share_group(c: Coordinator, group_id: str) -> ShareGroupDescription:
    """ShareGroupDescribe and DescribeShareGroupOffsets of one group (see the module
    docstring)."""
    g = c.state.groups.get(group_id)
    if g is None:
        return ShareGroupDescription(group_id, None, DEAD)
    if g.type != SHARE:
        return ShareGroupDescription(group_id, g.type, g.state)
    desc = ShareGroupDescription(group_id, SHARE, g.state,
                                 g.epoch if g.epoch is not None else 0,
                                 g.assignment_epoch if g.assignment_epoch is not None else 0)
    for m in g.ordered_members():
        assigned = []
        for tid, parts in m.assignment:
            name = c.topic_name(tid, True)
            if name is not None:
                assigned.extend((name, p) for p in parts)
        desc.members.append(ShareMember(m.member_id, m.client_host, m.client_id,
                                        m.member_epoch or 0, assigned))
    for tid, (name, parts) in g.share_initialized.items():
        for p in parts:
            desc.offsets.append(_offset_row(c, group_id, tid, name, p))
    desc.offsets.sort(key=lambda r: (r.topic, r.partition))
    return desc


def _offset_row(c: Coordinator, group_id: str, tid: str, name: str, p: int) -> ShareOffsetRow:
    sp = c.state.share_partitions.get((group_id, tid, p))
    if sp is None or sp.start_offset == -1:
        return ShareOffsetRow(name, p, None, None, None)
    leo = c.log_end_offset(name, p)
    lag = None
    if sp.delivery_complete_count != -1 and leo is not None:
        lag = leo - sp.start_offset - sp.delivery_complete_count
    return ShareOffsetRow(name, p, sp.start_offset,
                          None if sp.leader_epoch < 0 else sp.leader_epoch, lag)


def share_groups(paths, *, group_ids: list[str] | None = None, all_groups: bool = False,
                 describe: bool = True, now_ms: int | None = None,
                 retention_ms: int | None = None) -> ShareGroupsResult:
    """``kafka-share-groups.sh --list`` (``describe=False``) or ``--describe`` of the
    groups named or of every share group, from the coordinator state of
    :meth:`Coordinator.load` (``now_ms`` / ``retention_ms``: its expiration pass, which
    leaves share groups alone but decides which other groups exist).

    Raises:
        InvalidArgumentError: neither groups nor ``all_groups`` for a describe.
        CoordinatorLoadError / CorruptRecordError / NotAKafkaFileError: unreadable input.
    """
    c = Coordinator.load(paths, now_ms=now_ms, retention_ms=retention_ms)
    try:
        listed = c.listed_group_ids(types=(SHARE,))
        if not describe:
            found = [describe_share_group(c, g) for g in listed]
        else:
            if all_groups:
                ids = listed
            elif group_ids:
                ids = list(dict.fromkeys(group_ids))
            else:
                raise InvalidArgumentError("give --group G (repeatable) or --all-groups")
            found = [describe_share_group(c, g) for g in sorted(set(ids))]
        return ShareGroupsResult([str(d) for d in c.dirs.log_dirs], c.dirs.node_id, found,
                                 describe, list(c.dirs.problems))
    finally:
        c.close()


__all__ = ["ShareGroupDescription", "ShareGroupsResult", "ShareMember", "ShareOffsetRow",
           "describe_share_group", "share_groups"]
