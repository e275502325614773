"""Declarations of the ``__consumer_offsets`` records (``group-coordinator/.../common/message``)
and of the consumer embedded protocol (ConsumerProtocolSubscription / Assignment).

A record's key and value each start with an int16. The key's is the record type
(GroupCoordinatorRecordSerde.apiMessageKeyFor) and also the version the key message is
read at; the value's is the value message's version::

    type  key message                               value message
    0, 1  OffsetCommitKey                           OffsetCommitValue (0-4)
    2     GroupMetadataKey                          GroupMetadataValue (0-4)
    3     ConsumerGroupMetadataKey                  ConsumerGroupMetadataValue
    4     ConsumerGroupPartitionMetadataKey         ConsumerGroupPartitionMetadataValue
    5     ConsumerGroupMemberMetadataKey            ConsumerGroupMemberMetadataValue
    6     ConsumerGroupTargetAssignmentMetadataKey  ConsumerGroupTargetAssignmentMetadataValue
    7     ConsumerGroupTargetAssignmentMemberKey    ConsumerGroupTargetAssignmentMemberValue
    8     ConsumerGroupCurrentMemberAssignmentKey   ConsumerGroupCurrentMemberAssignmentValue
    9     ShareGroupPartitionMetadataKey            ShareGroupPartitionMetadataValue
    10    ShareGroupMemberMetadataKey               ShareGroupMemberMetadataValue
    11    ShareGroupMetadataKey                     ShareGroupMetadataValue
    12    ShareGroupTargetAssignmentMetadataKey     ShareGroupTargetAssignmentMetadataValue
    13    ShareGroupTargetAssignmentMemberKey       ShareGroupTargetAssignmentMemberValue
    14    ShareGroupCurrentMemberAssignmentKey      ShareGroupCurrentMemberAssignmentValue
    15    ShareGroupStatePartitionMetadataKey       ShareGroupStatePartitionMetadataValue

A GroupMetadataValue member's ``subscription`` / ``assignment`` bytes, for protocolType
"consumer", are a version int16 followed by ConsumerProtocolSubscription /
ConsumerProtocolAssignment at that version.
"""

from __future__ import annotations

from ..schema.messages import Field, Message, registry

OffsetCommitKey = Message(
    "OffsetCommitKey", valid="0-1", fields=[
        Field("group", "string", "0-1"),
        Field("topic", "string", "0-1"),
        Field("partition", "int32", "0-1"),
    ])

OffsetCommitValue = Message(
    "OffsetCommitValue", valid="0-4", flexible="4+", fields=[
        Field("offset", "int64", "0+"),
        Field("leaderEpoch", "int32", "3+", default=-1),
        Field("metadata", "string", "0+"),
        Field("commitTimestamp", "int64", "0+"),
        Field("expireTimestamp", "int64", "1", default=-1),
    ])

GroupMetadataKey = Message(
    "GroupMetadataKey", valid="2", fields=[
        Field("group", "string", "2"),
    ])

GroupMetadataValue = Message(
    "GroupMetadataValue", valid="0-4", flexible="4+", fields=[
        Field("protocolType", "string", "0+"),
        Field("generation", "int32", "0+"),
        Field("protocol", "string", "0+", nullable="0+"),
        Field("leader", "string", "0+", nullable="0+"),
        Field("currentStateTimestamp", "int64", "2+", default=-1),
        Field("members", "[]MemberMetadata", "0+", fields=[
            Field("memberId", "string", "0+"),
            Field("groupInstanceId", "string", "3+", nullable="3+", default=None),
            Field("clientId", "string", "0+"),
            Field("clientHost", "string", "0+"),
            Field("rebalanceTimeout", "int32", "1+", default=-1),
            Field("sessionTimeout", "int32", "0+"),
            Field("subscription", "bytes", "0+"),
            Field("assignment", "bytes", "0+"),
        ]),
    ])

ConsumerGroupMetadataKey = Message(
    "ConsumerGroupMetadataKey", valid="3", fields=[
        Field("groupId", "string", "3"),
    ])

ConsumerGroupMetadataValue = Message(
    "ConsumerGroupMetadataValue", valid="0", flexible="0+", fields=[
        Field("epoch", "int32", "0+"),
    ])

ConsumerGroupPartitionMetadataKey = Message(
    "ConsumerGroupPartitionMetadataKey", valid="4", fields=[
        Field("groupId", "string", "4"),
    ])

ConsumerGroupPartitionMetadataValue = Message(
    "ConsumerGroupPartitionMetadataValue", valid="0", flexible="0+", fields=[
        Field("topics", "[]TopicMetadata", "0+", fields=[
            Field("topicId", "uuid", "0+"),
            Field("topicName", "string", "0+"),
            Field("numPartitions", "int32", "0+"),
            Field("partitionMetadata", "[]PartitionMetadata", "0+", fields=[
                Field("partition", "int32", "0+"),
                Field("racks", "[]string", "0+"),
            ]),
        ]),
    ])

ConsumerGroupMemberMetadataKey = Message(
    "ConsumerGroupMemberMetadataKey", valid="5", fields=[
        Field("groupId", "string", "5"),
        Field("memberId", "string", "5"),
    ])

ConsumerGroupMemberMetadataValue = Message(
    "ConsumerGroupMemberMetadataValue", valid="0", flexible="0+", fields=[
        Field("instanceId", "string", "0+", nullable="0+"),
        Field("rackId", "string", "0+", nullable="0+"),
        Field("clientId", "string", "0+"),
        Field("clientHost", "string", "0+"),
        Field("subscribedTopicNames", "[]string", "0+"),
        Field("subscribedTopicRegex", "string", "0+", nullable="0+"),
        Field("rebalanceTimeoutMs", "int32", "0+", default=-1),
        Field("serverAssignor", "string", "0+", nullable="0+"),
        Field("classicMemberMetadata", "ClassicMemberMetadata", "0+",
              nullable="0+", tagged="0+", tag=0, default=None, fields=[
            Field("sessionTimeoutMs", "int32", "0+"),
            Field("supportedProtocols", "[]ClassicProtocol", "0+", fields=[
                Field("name", "string", "0+"),
                Field("metadata", "bytes", "0+"),
            ]),
        ]),
    ])

ConsumerGroupTargetAssignmentMetadataKey = Message(
    "ConsumerGroupTargetAssignmentMetadataKey", valid="6", fields=[
        Field("groupId", "string", "6"),
    ])

ConsumerGroupTargetAssignmentMetadataValue = Message(
    "ConsumerGroupTargetAssignmentMetadataValue", valid="0", flexible="0+", fields=[
        Field("assignmentEpoch", "int32", "0+"),
    ])

ConsumerGroupTargetAssignmentMemberKey = Message(
    "ConsumerGroupTargetAssignmentMemberKey", valid="7", fields=[
        Field("groupId", "string", "7"),
        Field("memberId", "string", "7"),
    ])

ConsumerGroupTargetAssignmentMemberValue = Message(
    "ConsumerGroupTargetAssignmentMemberValue", valid="0", flexible="0+", fields=[
        Field("topicPartitions", "[]TopicPartition", "0+", fields=[
            Field("topicId", "uuid", "0+"),
            Field("partitions", "[]int32", "0+"),
        ]),
    ])

ConsumerGroupCurrentMemberAssignmentKey = Message(
    "ConsumerGroupCurrentMemberAssignmentKey", valid="8", fields=[
        Field("groupId", "string", "8"),
        Field("memberId", "string", "8"),
    ])

#: The common struct TopicPartitions of the current-member-assignment values.
_TOPIC_PARTITIONS = [
    Field("topicId", "uuid", "0+"),
    Field("partitions", "[]int32", "0+"),
]

ConsumerGroupCurrentMemberAssignmentValue = Message(
    "ConsumerGroupCurrentMemberAssignmentValue", valid="0", flexible="0+", fields=[
        Field("memberEpoch", "int32", "0+"),
        Field("previousMemberEpoch", "int32", "0+"),
        Field("state", "int8", "0+"),
        Field("assignedPartitions", "[]TopicPartitions", "0+", fields=_TOPIC_PARTITIONS),
        Field("partitionsPendingRevocation", "[]TopicPartitions", "0+",
              fields=_TOPIC_PARTITIONS),
    ])

ShareGroupPartitionMetadataKey = Message(
    "ShareGroupPartitionMetadataKey", valid="9", fields=[
        Field("groupId", "string", "9"),
    ])

ShareGroupPartitionMetadataValue = Message(
    "ShareGroupPartitionMetadataValue", valid="0", flexible="0+", fields=[
        Field("topics", "[]TopicMetadata", "0+", fields=[
            Field("topicId", "uuid", "0+"),
            Field("topicName", "string", "0+"),
            Field("numPartitions", "int32", "0+"),
            Field("partitionMetadata", "[]PartitionMetadata", "0+", fields=[
                Field("partition", "int32", "0+"),
                Field("racks", "[]string", "0+"),
            ]),
        ]),
    ])

ShareGroupMemberMetadataKey = Message(
    "ShareGroupMemberMetadataKey", valid="10", fields=[
        Field("groupId", "string", "10"),
        Field("memberId", "string", "10"),
    ])

ShareGroupMemberMetadataValue = Message(
    "ShareGroupMemberMetadataValue", valid="0", flexible="0+", fields=[
        Field("rackId", "string", "0+", nullable="0+"),
        Field("clientId", "string", "0+"),
        Field("clientHost", "string", "0+"),
        Field("subscribedTopicNames", "[]string", "0+"),
    ])

ShareGroupMetadataKey = Message(
    "ShareGroupMetadataKey", valid="11", fields=[
        Field("groupId", "string", "11"),
    ])

ShareGroupMetadataValue = Message(
    "ShareGroupMetadataValue", valid="0", flexible="0+", fields=[
        Field("epoch", "int32", "0+"),
    ])

ShareGroupTargetAssignmentMetadataKey = Message(
    "ShareGroupTargetAssignmentMetadataKey", valid="12", fields=[
        Field("groupId", "string", "12"),
    ])

ShareGroupTargetAssignmentMetadataValue = Message(
    "ShareGroupTargetAssignmentMetadataValue", valid="0", flexible="0+", fields=[
        Field("assignmentEpoch", "int32", "0+"),
    ])

ShareGroupTargetAssignmentMemberKey = Message(
    "ShareGroupTargetAssignmentMemberKey", valid="13", fields=[
        Field("groupId", "string", "13"),
        Field("memberId", "string", "13"),
    ])

ShareGroupTargetAssignmentMemberValue = Message(
    "ShareGroupTargetAssignmentMemberValue", valid="0", flexible="0+", fields=[
        Field("topicPartitions", "[]TopicPartition", "0+", fields=[
            Field("topicId", "uuid", "0+"),
            Field("partitions", "[]int32", "0+"),
        ]),
    ])

ShareGroupCurrentMemberAssignmentKey = Message(
    "ShareGroupCurrentMemberAssignmentKey", valid="14", fields=[
        Field("groupId", "string", "14"),
        Field("memberId", "string", "14"),
    ])

ShareGroupCurrentMemberAssignmentValue = Message(
    "ShareGroupCurrentMemberAssignmentValue", valid="0", flexible="0+", fields=[
        Field("memberEpoch", "int32", "0+"),
        Field("previousMemberEpoch", "int32", "0+"),
        Field("state", "int8", "0+"),
        Field("assignedPartitions", "[]TopicPartitions", "0+", fields=[
            Field("topicId", "uuid", "0+"),
            Field("partitions", "[]int32", "0+"),
        ]),
    ])

ShareGroupStatePartitionMetadataKey = Message(
    "ShareGroupStatePartitionMetadataKey", valid="15", fields=[
        Field("groupId", "string", "15"),
    ])

ShareGroupStatePartitionMetadataValue = Message(
    "ShareGroupStatePartitionMetadataValue", valid="0", flexible="0+", fields=[
        Field("initializedTopics", "[]TopicPartitionsInfo", "0+", fields=[
            Field("topicId", "uuid", "0+"),
            Field("topicName", "string", "0+"),
            Field("partitions", "[]int32", "0+"),
        ]),
        Field("deletingTopics", "[]TopicInfo", "0+", fields=[
            Field("topicId", "uuid", "0+"),
            Field("topicName", "string", "0+"),
        ]),
    ])

ConsumerProtocolSubscription = Message(
    "ConsumerProtocolSubscription", valid="0-3", fields=[
        Field("topics", "[]string", "0+"),
        Field("userData", "bytes", "0+", nullable="0+", default=None),
        Field("ownedPartitions", "[]TopicPartition", "1+", fields=[
            Field("topic", "string", "1+"),
            Field("partitions", "[]int32", "1+"),
        ]),
        Field("generationId", "int32", "2+", default=-1),
        Field("rackId", "string", "3+", nullable="3+", default=None),
    ])

ConsumerProtocolAssignment = Message(
    "ConsumerProtocolAssignment", valid="0-3", fields=[
        Field("assignedPartitions", "[]TopicPartition", "0+", fields=[
            Field("topic", "string", "0+"),
            Field("partitions", "[]int32", "0+"),
        ]),
        Field("userData", "bytes", "0+", nullable="0+", default=None),
    ])

MESSAGES = registry(
    OffsetCommitKey, OffsetCommitValue, GroupMetadataKey, GroupMetadataValue,
    ConsumerGroupMetadataKey, ConsumerGroupMetadataValue,
    ConsumerGroupPartitionMetadataKey, ConsumerGroupPartitionMetadataValue,
    ConsumerGroupMemberMetadataKey, ConsumerGroupMemberMetadataValue,
    ConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupTargetAssignmentMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupCurrentMemberAssignmentKey, ConsumerGroupCurrentMemberAssignmentValue,
    ShareGroupPartitionMetadataKey, ShareGroupPartitionMetadataValue,
    ShareGroupMemberMetadataKey, ShareGroupMemberMetadataValue,
    ShareGroupMetadataKey, ShareGroupMetadataValue,
    ShareGroupTargetAssignmentMetadataKey, ShareGroupTargetAssignmentMetadataValue,
    ShareGroupTargetAssignmentMemberKey, ShareGroupTargetAssignmentMemberValue,
    ShareGroupCurrentMemberAssignmentKey, ShareGroupCurrentMemberAssignmentValue,
    ShareGroupStatePartitionMetadataKey, ShareGroupStatePartitionMetadataValue,
    ConsumerProtocolSubscription, ConsumerProtocolAssignment,
)

#: ``{record type: (key message, value message)}`` (GroupCoordinatorRecordSerde).
RECORD_TYPES: dict[int, tuple[Message, Message]] = {
    0: (OffsetCommitKey, OffsetCommitValue),
    1: (OffsetCommitKey, OffsetCommitValue),
    2: (GroupMetadataKey, GroupMetadataValue),
    3: (ConsumerGroupMetadataKey, ConsumerGroupMetadataValue),
    4: (ConsumerGroupPartitionMetadataKey, ConsumerGroupPartitionMetadataValue),
    5: (ConsumerGroupMemberMetadataKey, ConsumerGroupMemberMetadataValue),
    6: (ConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupTargetAssignmentMetadataValue),
    7: (ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberValue),
    8: (ConsumerGroupCurrentMemberAssignmentKey, ConsumerGroupCurrentMemberAssignmentValue),
    9: (ShareGroupPartitionMetadataKey, ShareGroupPartitionMetadataValue),
    10: (ShareGroupMemberMetadataKey, ShareGroupMemberMetadataValue),
    11: (ShareGroupMetadataKey, ShareGroupMetadataValue),
    12: (ShareGroupTargetAssignmentMetadataKey, ShareGroupTargetAssignmentMetadataValue),
    13: (ShareGroupTargetAssignmentMemberKey, ShareGroupTargetAssignmentMemberValue),
    14: (ShareGroupCurrentMemberAssignmentKey, ShareGroupCurrentMemberAssignmentValue),
    15: (ShareGroupStatePartitionMetadataKey, ShareGroupStatePartitionMetadataValue),
}
