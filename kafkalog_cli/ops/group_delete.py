"""``kafkalog groups --delete``: ``kafka-consumer-groups.sh --delete`` offline.

A broker answers DeleteGroups with GroupCoordinatorShard.deleteGroups: for each group,
``GroupMetadataManager.validateDeleteGroup`` (GROUP_ID_NOT_FOUND for a group it does not
have; NON_EMPTY_GROUP for a group that is not Empty), then
``OffsetMetadataManager.deleteAllOffsets`` (a tombstone per committed offset and per
partition with a pending transactional commit) and ``createGroupTombstoneRecords`` (a
classic group: its GroupMetadata tombstone; a consumer group (ConsumerGroup.
createGroupTombstoneRecords): its members' current then target assignments, its target
assignment metadata, its members' metadata, its resolved regular expressions, its
subscription metadata and its epoch record). kafkalog validates the same on the
replayed state (at ``now_ms``, after the expiration pass) and appends the same records,
one batch per group, to the group's ``__consumer_offsets`` partition through the append
engine under the directory's lock.

``kafkalog groups --delete-offsets`` is ``kafka-consumer-groups.sh --delete-offsets``
(OffsetDelete, OffsetMetadataManager.deleteOffsets) the same way: :func:`delete_offsets`.
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass, field

from ..decoders.group_state import CLASSIC, CONSUMER, EMPTY
from ..javaorder import hash_map_order
from .groups import Coordinator, append_coordinator_records

#: The errors of DeleteGroups and OffsetDelete: the exceptions the admin client raises
#: for them and their default messages (the responses carry no message; the tool prints
#: ``Errors.message()`` or the exception's ``toString``)
GROUP_ERRORS = {
    "INVALID_GROUP_ID": ("org.apache.kafka.common.errors.InvalidGroupIdException",
                         "The configured groupId is invalid."),
    "GROUP_ID_NOT_FOUND": ("org.apache.kafka.common.errors.GroupIdNotFoundException",
                           "The group id does not exist."),
    "NON_EMPTY_GROUP": ("org.apache.kafka.common.errors.GroupNotEmptyException",
                        "The group is not empty."),
    "GROUP_SUBSCRIBED_TO_TOPIC": (
        "org.apache.kafka.common.errors.GroupSubscribedToTopicException",
        "Deleting offsets of a topic is forbidden while the consumer group is actively "
        "subscribed to it."),
    "UNKNOWN_TOPIC_OR_PARTITION": (
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException",
        "This server does not host this topic-partition."),
}


def error_text(code: str) -> str:
    """The ``toString`` of the exception the admin client raises for ``code`` (what the
    tool prints after ``Error: `` in the STATUS column)."""
    cls, message = GROUP_ERRORS[code]
    return f"{cls}: {message}"


def error_message(code: str) -> str:
    """``Errors.message()`` of ``code``."""
    return GROUP_ERRORS[code][1]


#: Errors.NON_EMPTY_GROUP / GROUP_ID_NOT_FOUND as the admin client raises them
NOT_EMPTY = error_text("NON_EMPTY_GROUP")
NOT_FOUND = error_text("GROUP_ID_NOT_FOUND")


@dataclass
class DeleteResult:
    """``groups --delete``: the groups deleted (in the admin client's ``HashMap`` order),
    the ones refused (group -> the exception's ``toString``), the ``(partition, offset)``
    of the batch written for each deleted group."""

    deleted: list[str]
    failed: dict[str, str]
    appended: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_dict(self) -> dict:
        return {"deleted": [{"groupId": g, "partition": self.appended[g][0],
                             "offset": self.appended[g][1]} for g in self.deleted],
                "failed": [{"groupId": g, "error": e} for g, e in self.failed.items()],
                "ok": self.ok}


def _key(rtype: int, **fields) -> bytes:
    from ..decoders import group_messages as gm

    return struct.pack(">h", rtype) + gm.RECORD_TYPES[rtype][0].build(fields, 0)


def tombstones(c: Coordinator, gid: str) -> list[tuple[bytes, None]]:
    """The records deleteAllOffsets and createGroupTombstoneRecords write for ``gid``
    (see the module docstring), in the coordinator's order."""
    g = c.state.groups[gid]
    out = []
    offsets = list(c.state.committed(gid))
    pending = [(t, p) for entries in c.state.pending.values() for g2, t, p, _ in entries
               if g2 == gid and (t, p) not in offsets]
    for t, p in offsets + list(dict.fromkeys(pending)):
        out.append((_key(1, group=gid, topic=t, partition=p), None))
    if g.type == CLASSIC:
        out.append((_key(2, group=gid), None))
        return out
    for m in g.ordered_members():
        out.append((_key(8, groupId=gid, memberId=m.member_id), None))
    for m in g.ordered_members():
        out.append((_key(7, groupId=gid, memberId=m.member_id), None))
    out.append((_key(6, groupId=gid), None))
    for m in g.ordered_members():
        out.append((_key(5, groupId=gid, memberId=m.member_id), None))
    for regex in g.resolved_regexes:
        out.append((_key(16, groupId=gid, regularExpression=regex), None))
    out.append((_key(4, groupId=gid), None))
    out.append((_key(3, groupId=gid), None))
    return out


def delete_groups(paths, *, group_ids: list[str] | None = None, all_groups: bool = False,
                  now_ms: int | None = None, retention_ms: int | None = None) -> DeleteResult:
    """DeleteConsumerGroups of the groups named (or of every consumer group) on the
    replayed state at ``now_ms`` (default now), as the module docstring says.

    Raises:
        InvalidArgumentError: no group given.
        RefusedError: a group's ``__consumer_offsets`` partition is not here.
        LogDirLockedError: a broker holds the log directory's lock.
    """
    from ..errors import InvalidArgumentError

    now = int(time.time() * 1000) if now_ms is None else now_ms
    c = Coordinator.load(paths, now_ms=now, retention_ms=retention_ms)
    try:
        ids = c.listed_group_ids() if all_groups else list(dict.fromkeys(group_ids or []))
        if not ids:
            raise InvalidArgumentError("give --group G (repeatable) or --all-groups")
        deleted, failed = [], {}
        for gid in ids:
            g = c.state.groups.get(gid)
            if g is None or g.type not in (CLASSIC, CONSUMER):
                # (a share or streams group: kafkalog deletes consumer groups only)
                failed[gid] = NOT_FOUND
            elif g.state != EMPTY:
                failed[gid] = NOT_EMPTY
            else:
                deleted.append(gid)
        result = DeleteResult(hash_map_order(deleted),
                              {g: failed[g] for g in hash_map_order(list(failed))})
        for gid in deleted:
            result.appended[gid] = append_coordinator_records(c, gid, tombstones(c, gid), now)
        return result
    finally:
        c.close()


# -- --delete-offsets ----------------------------------------------------------------------

@dataclass
class DeleteOffsetsResult:
    """``groups --delete-offsets``: the group, the request's top-level error (an
    ``Errors`` name as ``DeleteConsumerGroupOffsetsResult.all()`` fails; None when it
    succeeds), each partition's error (an ``Errors`` name or None; partition -1 for a
    topic that is not in the log directories) in the order the tool prints them, and the
    ``(partition, offset)`` of the tombstones' batch in ``__consumer_offsets`` (None when
    nothing was written)."""

    group_id: str
    error: str | None
    partitions: list[tuple[str, int, str | None]]
    appended: tuple[int, int] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and all(e is None for _, _, e in self.partitions)

    def to_dict(self) -> dict:
        return {"groupId": self.group_id, "error": self.error,
                "partitions": [{"topic": t, "partition": None if p < 0 else p, "error": e}
                               for t, p, e in self.partitions],
                "appended": None if self.appended is None else
                {"partition": self.appended[0], "offset": self.appended[1]},
                "ok": self.ok}


def _java_hash_set_capacity(n: int) -> int:
    """The table size of ``new HashSet<>(collection of n)``: ``tableSizeFor(max(n / .75f
    + 1, 16))``."""
    want = max(int(n / 0.75) + 1, 16)
    cap = 1
    while cap < want:
        cap *= 2
    return cap


def _requested(c: Coordinator, topics: list[str]):
    """ConsumerGroupService.deleteOffsets' partitions: ``t:p,p`` arguments as given (a
    ``HashSet`` of the arguments, parsed as GroupOffsetsResetter does), then every
    partition of each plain topic (DescribeTopics: the partitions in these log
    directories; a topic with none fails with UNKNOWN_TOPIC_OR_PARTITION, reported as
    partition -1). Returns the ``HashSet<TopicPartition>``'s iteration order and the
    failed topics."""
    from .groups import _parse_scope, tp_hash

    with_parts = hash_map_order([t for t in topics if ":" in t])
    whole = hash_map_order([t for t in topics if ":" not in t])
    known = _parse_scope(c, with_parts)
    unknown, more = [], []
    for t in whole:
        ps = c.dirs.partitions_of(t)
        if ps:
            more.extend((t, p) for p in ps)
        else:
            unknown.append(t)
    order = hash_map_order(known + more, tp_hash, capacity=_java_hash_set_capacity(len(known)))
    return order, unknown


def delete_offsets(paths, *, group_id: str, topics: list[str], now_ms: int | None = None,
                   retention_ms: int | None = None) -> DeleteOffsetsResult:
    """``kafka-consumer-groups.sh --delete-offsets --group G --topic T[:P,P]...`` offline:
    Admin.deleteConsumerGroupOffsets answered as OffsetMetadataManager.deleteOffsets does
    on the replayed state at ``now_ms`` (after the expiration pass).

    The group is validated as ``Group.validateOffsetDelete`` does: GROUP_ID_NOT_FOUND for
    a group the coordinator does not have (or a share group), NON_EMPTY_GROUP for a classic
    group with members that does not use the consumer protocol, INVALID_GROUP_ID for an
    empty id. Then each requested partition of a topic the group is subscribed to
    (``Group.isSubscribedToTopic``) fails with GROUP_SUBSCRIBED_TO_TOPIC; the others
    succeed, and each one with a committed offset or a pending transactional one gets an
    OffsetCommit tombstone (``newOffsetCommitTombstoneRecord``), in the request's order
    (topics in the admin client's ``HashMap``, partitions in the tool's ``HashSet``
    order), appended as one batch to the group's ``__consumer_offsets`` partition through
    the append engine under the directory's lock (:func:`append_coordinator_records`).

    Raises:
        InvalidArgumentError: no topic, or a malformed ``t:p`` argument (the tool's texts).
        RefusedError: the group's ``__consumer_offsets`` partition is not here.
        LogDirLockedError: a broker holds the log directory's lock.
    """
    from ..decoders.group_state import SHARE
    from ..errors import InvalidArgumentError
    from .groups import tp_hash

    if not topics:
        raise InvalidArgumentError("Option [delete-offsets] takes the following options: "
                                   "[group], [topic]")
    now = int(time.time() * 1000) if now_ms is None else now_ms
    c = Coordinator.load(paths, now_ms=now, retention_ms=retention_ms)
    try:
        requested, unknown = _requested(c, topics)
        g = c.state.groups.get(group_id)
        error = None
        if not group_id:
            error = "INVALID_GROUP_ID"
        elif g is None or g.type == SHARE:
            error = "GROUP_ID_NOT_FOUND"
        elif g.type == CLASSIC and g.members and g.protocol_type != "consumer":
            error = "NON_EMPTY_GROUP"
        status: dict[tuple[str, int], str | None] = {(t, -1): "UNKNOWN_TOPIC_OR_PARTITION"
                                                      for t in unknown}
        records = []
        if error is not None:
            status.update({tp: error for tp in requested})
        else:
            offsets = c.state.committed(group_id)
            pending = {(t, p) for entries in c.state.pending.values()
                       for g2, t, p, _ in entries if g2 == group_id}
            for topic in hash_map_order([t for t, _ in requested]):
                subscribed = g.is_subscribed_to_topic(topic)
                for tp in (tp for tp in requested if tp[0] == topic):
                    status[tp] = "GROUP_SUBSCRIBED_TO_TOPIC" if subscribed else None
                    if not subscribed and (tp in offsets or tp in pending):
                        records.append((_key(1, group=group_id, topic=tp[0],
                                             partition=tp[1]), None))
            # all(): the first partition of the set that failed
            error = next((status[tp] for tp in requested if status[tp]), None)
        rows = hash_map_order(list(status), tp_hash)
        rows.sort(key=lambda tp: f"{tp[0]}{tp[1]}")  # the tool's sort, stable
        result = DeleteOffsetsResult(group_id, error, [(t, p, status[(t, p)]) for t, p in rows])
        if records:
            result.appended = append_coordinator_records(c, group_id, records, now)
        return result
    finally:
        c.close()
