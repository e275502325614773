"""Durable classic groups and committed offsets: the coordinator's changes written to
``__consumer_offsets`` as Kafka's records, and read back at start-up (after
``GroupCoordinatorRecordHelpers`` and ``GroupMetadataManager`` / ``OffsetMetadataManager``
replay).

Records (key: int16 record type + the key message v0; value: int16 version + the value
message; a null value is a tombstone), built with the decoders' own declarations
(:mod:`kafkalog_cli.decoders.group_messages`), at the versions a Kafka 3.x/4.x broker
writes (``MetadataVersion.offsetCommitValueVersion`` / ``groupMetadataValueVersion``):

* OffsetCommit (type 1), value version 3: ``offset``, ``leaderEpoch`` (-1: none),
  ``metadata``, ``commitTimestamp``; its tombstone for an offset deleted (OffsetDelete,
  DeleteGroups, a deleted topic);
* GroupMetadata (type 2), value version 3: protocol type, generation, protocol, leader,
  ``currentStateTimestamp`` and the members (ids, client id and host, timeouts, the
  subscription of the chosen protocol, the assignment); its tombstone for a deleted group.

Transactional offset commits (TxnOffsetCommit) are the same OffsetCommit records in a
transactional batch of the producer; they count once its COMMIT marker follows in the
partition (an ABORT drops them), as ``OffsetMetadataManager.replayEndTransactionMarker``.

Loading (:func:`load_groups`): every partition from its log start offset; the last record
of each key wins, tombstones delete. A group with members comes back Stable (its members'
session timers restarted, as ``GroupMetadataManager.onLoaded``), one without Empty; offsets
of a group with no GroupMetadata record give an empty "simple" group.
"""

from __future__ import annotations

import logging
import struct
import time

from ..decoders.group_messages import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
)
from ..decoders.group_state import GroupLogReplay
from ..errors import AppendError, CoordinatorLoadError, KafkalogError
from .classic_group import EMPTY, STABLE, Group, GroupStore, Member, OffsetAndMetadata
from .coordinator_log import CoordinatorTopic
from .groups import GroupCoordinator

log = logging.getLogger("kafkalog.serve")

_INT16 = struct.Struct(">h")
OFFSET_COMMIT_TYPE = 1
GROUP_METADATA_TYPE = 2
#: the value versions a Kafka 4.4 broker writes: OffsetCommitValue v4 without an expire
#: timestamp (GroupCoordinatorRecordHelpers.offsetCommitValueVersion; 3.x wrote v3),
#: GroupMetadataValue v3
OFFSET_COMMIT_VALUE_VERSION = 4
GROUP_METADATA_VALUE_VERSION = 3


def offset_key(group_id: str, topic: str, partition: int) -> bytes:
    return _INT16.pack(OFFSET_COMMIT_TYPE) + OffsetCommitKey.build(
        {"group": group_id, "topic": topic, "partition": partition}, 0)


def offset_value(offset: OffsetAndMetadata, topic_id: str | None = None) -> bytes:
    """The OffsetCommit value a Kafka 4.4 coordinator writes for ``offset``: version 4,
    the topic's id in the tagged ``topicId`` (KafkaApis fills a request's topic ids from
    its metadata when the request names topics; None: the zero id, left out)."""
    value = {"offset": offset.offset, "leaderEpoch": offset.leader_epoch,
             "metadata": offset.metadata, "commitTimestamp": offset.commit_timestamp_ms,
             "expireTimestamp": -1}
    if topic_id is not None:
        value["topicId"] = topic_id
    return _INT16.pack(OFFSET_COMMIT_VALUE_VERSION) + OffsetCommitValue.build(
        value, OFFSET_COMMIT_VALUE_VERSION)


def offset_commit_record(group_id: str, topic: str, partition: int, offset: int, *,
                         commit_timestamp: int, leader_epoch: int = -1, metadata: str = "",
                         topic_id: str | None = None) -> tuple[bytes, bytes]:
    """The ``(key, value)`` of the OffsetCommit record a Kafka 4.4 coordinator writes
    (GroupCoordinatorRecordHelpers.newOffsetCommitRecord): :func:`offset_value`."""
    return offset_key(group_id, topic, partition), offset_value(
        OffsetAndMetadata(offset, leader_epoch, metadata, commit_timestamp), topic_id)


def group_key(group_id: str) -> bytes:
    return _INT16.pack(GROUP_METADATA_TYPE) + GroupMetadataKey.build({"group": group_id}, 0)


def group_value(group: Group, assignment: dict[str, bytes], now_ms: int) -> bytes:
    members = [{"memberId": m.member_id, "groupInstanceId": m.group_instance_id,
                "clientId": m.client_id, "clientHost": m.client_host,
                "rebalanceTimeout": m.rebalance_timeout_ms,
                "sessionTimeout": m.session_timeout_ms,
                "subscription": m.metadata(group.protocol),
                "assignment": assignment.get(m.member_id, b"")}
               for m in group.members.values()]
    return _INT16.pack(GROUP_METADATA_VALUE_VERSION) + GroupMetadataValue.build(
        {"protocolType": group.protocol_type or "", "generation": group.generation,
         "protocol": group.protocol, "leader": group.leader if group.members else None,
         "currentStateTimestamp": now_ms, "members": members},
        GROUP_METADATA_VALUE_VERSION)


class GroupLogStore(GroupStore):
    """A :class:`~.classic_group.GroupStore` writing the records of each coordinator write to
    ``__consumer_offsets`` (``topic``) at once, as one batch, in the partition of the
    group id."""

    def __init__(self, topic: CoordinatorTopic, topic_ids=lambda name: None):
        self.topic = topic
        #: a topic's id by name (None when unknown), for the OffsetCommit values
        self.topic_ids = topic_ids

    def group_metadata(self, group: Group, assignment: dict[str, bytes]) -> None:
        self._write(group.group_id, [(group_key(group.group_id), group_value(
            group, assignment, int(time.time() * 1000)))])

    def offsets_committed(self, group_id: str,
                          offsets: list[tuple[str, int, OffsetAndMetadata]]) -> None:
        """Raises AppendError when the write fails (the commit is answered with it)."""
        self.topic.append(group_id, [(offset_key(group_id, t, p),
                                      offset_value(o, self.topic_ids(t))) for t, p, o in offsets])

    def offsets_deleted(self, group_id: str, partitions: list[tuple[str, int]], *,
                        group: bool = False) -> None:
        records = [(offset_key(group_id, t, p), None) for t, p in partitions]
        if group:
            records.append((group_key(group_id), None))
        self._write(group_id, records)

    def _write(self, group_id: str, records: list[tuple[bytes, bytes | None]]) -> None:
        """A group change already made in memory: a failed write is logged (the group
        goes on; its record is missing after a restart, as after a lost append)."""
        try:
            self.topic.append(group_id, records)
        except AppendError as e:
            log.error("group %s: writing to %s failed: %s", group_id, self.topic.name, e)


def load_groups(topic: CoordinatorTopic) -> tuple[dict[str, dict | None],
                                                  dict[str, dict[tuple[str, int], dict]],
                                                  dict[int, list[tuple[str, str, int, dict]]]]:
    """Replay ``__consumer_offsets`` (:class:`~kafkalog_cli.decoders.group_state.
    GroupLogReplay`, the one replay of the coordinator's records): ``(group id -> last
    GroupMetadataValue or None for a tombstone, group id -> {(topic, partition):
    OffsetCommitValue fields}, producer id -> the transactional offset commits with no
    marker yet [(group, topic, partition, value)])``.

    Raises:
        CoordinatorLoadError: a partition is offline or holds a record that does not parse,
            naming the partition and offset.
    """
    for p, why in topic.offline().items():
        raise CoordinatorLoadError(f"{topic.name}-{p} is offline ({why}): its groups and offsets "
                             "cannot be loaded", file=topic.catalog.log_dir / f"{topic.name}-{p}")
    state = replay_topic(topic)
    offsets = {g: {tp: o.to_dict() for tp, o in offs.items()}
               for g, offs in state.all_committed().items()}
    pending = {pid: [(g, t, p, o.to_dict()) for g, t, p, o in entries]
               for pid, entries in state.pending.items()}
    return dict(state.classic_values), offsets, pending


def replay_topic(topic: CoordinatorTopic) -> GroupLogReplay:
    """Every batch of ``topic`` (``__consumer_offsets``) through a :class:`GroupLogReplay`.

    Raises:
        CoordinatorLoadError: a record that does not parse (naming partition and offset).
    """
    state = GroupLogReplay()
    for p, batch, records in _scan(topic):
        state.replay_batch(p, batch, records, where=f"{topic.name}-{p}")
    return state


def _scan(topic: CoordinatorTopic):
    try:
        yield from topic.scan()
    except KafkalogError as e:
        raise CoordinatorLoadError(f"{topic.name}: {e}", file=getattr(e, "file", None)) from None


def _offset(v: dict) -> OffsetAndMetadata:
    return OffsetAndMetadata(v["offset"], v.get("leaderEpoch", -1), v["metadata"],
                             v["commitTimestamp"])


def restore(coordinator: GroupCoordinator, groups: dict[str, dict | None],
            offsets: dict[str, dict[tuple[str, int], dict]],
            pending: dict[int, list[tuple[str, str, int, dict]]] | None = None) -> int:
    """Put what :func:`load_groups` read into ``coordinator`` (on the event loop: member
    session timers start); ``pending`` transactional offsets wait for their marker.
    Returns the number of groups restored."""
    for pid, entries in (pending or {}).items():
        for g, t, p, v in entries:
            coordinator.store_txn_offsets(pid, g, {(t, p): _offset(v)})
    for gid in set(groups) | set(offsets):
        value = groups.get(gid)
        if value is None and not offsets.get(gid):
            continue
        group = Group(gid)
        if value is not None:
            group.generation = value["generation"]
            group.protocol_type = value["protocolType"] or None
            group.protocol = value["protocol"]
            for m in value["members"]:
                member = Member(
                    member_id=m["memberId"], group_instance_id=m.get("groupInstanceId"),
                    client_id=m["clientId"], client_host=m["clientHost"],
                    rebalance_timeout_ms=m.get("rebalanceTimeout", -1),
                    session_timeout_ms=m["sessionTimeout"],
                    protocol_type=value["protocolType"],
                    protocols=[(value["protocol"] or "", bytes(m["subscription"]))],
                    assignment=bytes(m["assignment"]))
                group.add(member)
            group.leader = value["leader"] if group.members else None
            group.state = STABLE if group.members else EMPTY
            ts = value.get("currentStateTimestamp", -1)
            group.current_state_timestamp = None if ts == -1 else ts
            group.subscribed_topics = group.compute_subscribed_topics()
        for (t, p), v in offsets.get(gid, {}).items():
            group.offsets[(t, p)] = _offset(v)
        coordinator.load_group(group)
    return len(coordinator.groups)
