"""Declarations of the ``__share_group_state`` records (``share-coordinator/src/main/
resources/common/message``): the state of each share-partition of a share group (KIP-932),
written by the share coordinator.

    type  key message        value message       what
    0     ShareSnapshotKey   ShareSnapshotValue  the whole state of a share-partition
    1     ShareUpdateKey     ShareUpdateValue    a change since the last snapshot

Keys are ``(groupId, topicId, partition)``; the key's int16 prefix is the record type
(ShareCoordinatorRecordSerde), the value's the value's version. Kafka's trees of 2025
changed both values without a version bump (SnapshotEpoch became an int32 and every
field moved to ``0+``; snapshots gained create and write timestamps; Kafka 4.2 added the
tagged DeliveryCompleteCount of KIP-1226); the layout of Kafka's December 2024 tree is kept
in ``earlier``.
"""

from __future__ import annotations

from ..schema.messages import Field, Message, fields, registry

_EARLIER = "Kafka's December 2024 tree (apache/kafka e6d2421)"

ShareSnapshotKey = Message(
    "ShareSnapshotKey", valid="0", api_key=0, kind="coordinator-key", fields=fields("""
    groupId    string  0
    topicId    uuid    0
    partition  int32   0
"""))

#: ``ShareUpdateKey`` at version 1, as Kafka's December 2024 tree declares it (a ``data``
#: message whose only version is its record type; later trees make it a coordinator key
#: at version 0 with apiKey 1: the same bytes).
ShareUpdateKey = Message(
    "ShareUpdateKey", valid="1", api_key=1, kind="coordinator-key", fields=fields("""
    groupId    string  1
    topicId    uuid    1
    partition  int32   1
"""))


def _state_batches(versions: str) -> Field:
    return Field("stateBatches", "[]StateBatch", versions, fields=[
        Field("firstOffset", "int64", versions),
        Field("lastOffset", "int64", versions),
        Field("deliveryState", "int8", versions),  # 0 Available, 2 Acked, 4 Archived
        Field("deliveryCount", "int16", versions),
    ])


def _earlier(name: str, fields) -> Message:
    """A value as Kafka's December 2024 tree laid it out (a ``data`` message, version 0
    only), before KIP-932's records changed incompatibly."""
    return Message(name, valid="0", flexible="0+", kind="data", layout=_EARLIER,
                   fields=fields)


#: KIP-1226 (Kafka 4.2): apache/kafka 0c9eef5
_DELIVERY_COMPLETE_COUNT = Field("deliveryCompleteCount", "int32", "0+", tagged="0+", tag=0,
                                 default=-1)

ShareSnapshotValue = Message(
    "ShareSnapshotValue", valid="0", flexible="0+", api_key=0, kind="coordinator-value",
    fields=[
        Field("snapshotEpoch", "int32", "0+"),
        Field("stateEpoch", "int32", "0+"),
        Field("leaderEpoch", "int32", "0+"),
        Field("startOffset", "int64", "0+"),
        _DELIVERY_COMPLETE_COUNT,
        # the order of Kafka 4's DumpLogSegmentsTest.testShareGroupStateMessageParser
        Field("createTimestamp", "int64", "0+"),
        Field("writeTimestamp", "int64", "0+"),
        _state_batches("0+"),
    ],
    earlier=[_earlier("ShareSnapshotValue", [
        Field("snapshotEpoch", "uint16", "0"),
        Field("stateEpoch", "int32", "0+"),
        Field("leaderEpoch", "int32", "0+"),
        Field("startOffset", "int64", "0"),
        _state_batches("0"),
    ])])

ShareUpdateValue = Message(
    "ShareUpdateValue", valid="0", flexible="0+", api_key=1, kind="coordinator-value",
    layout="apache/kafka 0c9eef5", fields=[
        Field("snapshotEpoch", "int32", "0+"),
        Field("leaderEpoch", "int32", "0+"),
        Field("startOffset", "int64", "0+"),
        _DELIVERY_COMPLETE_COUNT,
        _state_batches("0+"),
    ],
    earlier=[_earlier("ShareUpdateValue", [
        Field("snapshotEpoch", "uint16", "0"),
        Field("leaderEpoch", "int32", "0+"),
        Field("startOffset", "int64", "0"),
        _state_batches("0"),
    ])])

#: ``{record type: (key message, value message)}`` (ShareCoordinatorRecordSerde).
RECORD_TYPES: dict[int, tuple[Message, Message]] = {
    0: (ShareSnapshotKey, ShareSnapshotValue),
    1: (ShareUpdateKey, ShareUpdateValue),
}

MESSAGES = registry(ShareSnapshotKey, ShareSnapshotValue, ShareUpdateKey, ShareUpdateValue)
