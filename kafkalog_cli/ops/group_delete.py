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
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass, field

from ..decoders.group_state import CLASSIC, CONSUMER, EMPTY
from ..javaorder import hash_map_order
from .groups import Coordinator, append_coordinator_records

#: Errors.NON_EMPTY_GROUP / GROUP_ID_NOT_FOUND as the admin client raises them (the
#: DeleteGroups response carries no message: the exceptions' default messages)
NOT_EMPTY = "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty."
NOT_FOUND = ("org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does "
             "not exist.")


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
