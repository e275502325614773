"""Declarations of the ``__consumer_offsets`` records (``group-coordinator/src/main/resources/
common/message``, the ``coordinator-key`` / ``coordinator-value`` pairs of the group
coordinator) and of the consumer embedded protocol (ConsumerProtocolSubscription /
Assignment, ``clients/src/main/resources/common/message``).

A record's key and value each start with an int16. The key's is the record type
(``CoordinatorRecordType``, the JSON's ``apiKey``; GroupCoordinatorRecordSerde reads the
key message after it); the value's is the value message's version::

    type  record (key / value messages)          value versions  protocol
    0     LegacyOffsetCommit                     0               offsets (Kafka 0.8.2)
    1     OffsetCommit                           0-4             offsets
    2     GroupMetadata                          0-4             classic groups
    3-8   ConsumerGroup{Metadata, PartitionMetadata, MemberMetadata,
          TargetAssignmentMetadata, TargetAssignmentMember,
          CurrentMemberAssignment}               0               KIP-848 consumer groups
    9-15  ShareGroup{PartitionMetadata, MemberMetadata, Metadata,
          TargetAssignmentMetadata, TargetAssignmentMember,
          CurrentMemberAssignment, StatePartitionMetadata}   0   KIP-932 share groups
    16    ConsumerGroupRegularExpression         0               KIP-848 regex subscriptions
    17-24 StreamsGroup{Metadata, PartitionMetadata, MemberMetadata,
          TargetAssignmentMetadata, TargetAssignmentMember,
          CurrentMemberAssignment, Topology,
          TargetAssignmentResolvedTopicIds}      0               KIP-1071 streams groups

Every key is at version 0. Kafka's trees of 2025-2026 added tagged fields (read when
present, their default otherwise) and, for records still "in development" there,
changed a layout without a version bump: those messages keep the layout of Kafka's
December 2024 tree in ``earlier`` (see :class:`~kafkalog_cli.schema.messages.Message`).

A GroupMetadataValue member's ``subscription`` / ``assignment`` bytes, for protocolType
"consumer", are a version int16 followed by ConsumerProtocolSubscription /
ConsumerProtocolAssignment at that version.
"""

from __future__ import annotations

from ..schema.messages import Field, Message, fields, registry


def _key(name: str, api_key: int, *fields: tuple[str, str]) -> Message:
    """A coordinator key: version 0, not flexible, plain fields."""
    return Message(name, valid="0", api_key=api_key, kind="coordinator-key",
                   fields=[Field(n, t, "0") for n, t in fields])


def _value(name: str, api_key: int, fields, *, valid: str = "0", flexible: str = "0+",
           earlier=(), layout: str | None = None) -> Message:
    return Message(name, valid=valid, flexible=flexible, api_key=api_key,
                   kind="coordinator-value", fields=fields, earlier=earlier, layout=layout)


def _earlier(name: str, api_key: int, fields) -> Message:
    """The layout of Kafka's December 2024 tree (apache/kafka e6d2421), before the
    incompatible change of a record still "in development" there."""
    return _value(name, api_key, fields,
                  layout="Kafka's December 2024 tree (apache/kafka e6d2421)")


_GROUP = ("groupId", "string")
_MEMBER = ("memberId", "string")

# -- offsets and classic groups (0-2) ----------------------------------------------------------

LegacyOffsetCommitKey = _key("LegacyOffsetCommitKey", 0,
                             ("group", "string"), ("topic", "string"), ("partition", "int32"))

LegacyOffsetCommitValue = Message(
    "LegacyOffsetCommitValue", valid="0", api_key=0, kind="coordinator-value", fields=fields("""
    offset           int64   0
    metadata         string  0
    commitTimestamp  int64   0
"""))

OffsetCommitKey = _key("OffsetCommitKey", 1,
                       ("group", "string"), ("topic", "string"), ("partition", "int32"))

OffsetCommitValue = _value("OffsetCommitValue", 1, valid="0-4", flexible="4+", fields=fields("""
    offset           int64   0+
    leaderEpoch      int32   3+  default=-1
    metadata         string  0+
    commitTimestamp  int64   0+
    expireTimestamp  int64   1   default=-1
    # KIP-848's OffsetCommit v10 (Kafka 4.1+): the topic id, from the metadata image
    topicId          uuid    4+  tagged=4+ tag=0
"""))

GroupMetadataKey = _key("GroupMetadataKey", 2, ("group", "string"))

GroupMetadataValue = _value("GroupMetadataValue", 2, valid="0-4", flexible="4+", fields=fields("""
    protocolType           string            0+
    generation             int32             0+
    protocol               string            0+  nullable=0+
    leader                 string            0+  nullable=0+
    currentStateTimestamp  int64             2+  default=-1
    members                []MemberMetadata  0+
      memberId             string            0+
      groupInstanceId      string            3+  nullable=3+ default=null
      clientId             string            0+
      clientHost           string            0+
      rebalanceTimeout     int32             1+  default=-1
      sessionTimeout       int32             0+
      subscription         bytes             0+
      assignment           bytes             0+
"""))

# -- KIP-848 consumer groups (3-8, 16) -----------------------------------------------------------

#: The topic metadata of the *PartitionMetadataValue records (4, 9, 18).
_TOPIC_METADATA = fields("""
    topicId            uuid                 0+
    topicName          string               0+
    numPartitions      int32                0+
    partitionMetadata  []PartitionMetadata  0+
      partition        int32                0+
      racks            []string             0+
""")

ConsumerGroupMetadataKey = _key("ConsumerGroupMetadataKey", 3, _GROUP)

ConsumerGroupMetadataValue = _value("ConsumerGroupMetadataValue", 3, fields("""
    epoch           int32  0+
    # KIP-1101 (Kafka 4.1) and KIP-1282: apache/kafka 266ed84
    metadataHash    int64  0+  tagged=0+ tag=0 default=0
    creationTimeMs  int64  0+  tagged=0+ tag=1 default=-1
"""))

ConsumerGroupPartitionMetadataKey = _key("ConsumerGroupPartitionMetadataKey", 4, _GROUP)

ConsumerGroupPartitionMetadataValue = _value("ConsumerGroupPartitionMetadataValue", 4, fields("""
    topics  []TopicMetadata  0+
""", TopicMetadata=_TOPIC_METADATA))

ConsumerGroupMemberMetadataKey = _key("ConsumerGroupMemberMetadataKey", 5, _GROUP, _MEMBER)

ConsumerGroupMemberMetadataValue = _value("ConsumerGroupMemberMetadataValue", 5, fields("""
    instanceId             string                 0+  nullable=0+
    rackId                 string                 0+  nullable=0+
    clientId               string                 0+
    clientHost             string                 0+
    subscribedTopicNames   []string               0+
    subscribedTopicRegex   string                 0+  nullable=0+
    rebalanceTimeoutMs     int32                  0+  default=-1
    serverAssignor         string                 0+  nullable=0+
    classicMemberMetadata  ClassicMemberMetadata  0+  nullable=0+ tagged=0+ tag=0 default=null
      sessionTimeoutMs     int32                  0+
      supportedProtocols   []ClassicProtocol      0+
        name               string                 0+
        metadata           bytes                  0+
"""))

ConsumerGroupTargetAssignmentMetadataKey = _key(
    "ConsumerGroupTargetAssignmentMetadataKey", 6, _GROUP)

#: KIP-1263 (Kafka 4.3): apache/kafka 07b06d0
_ASSIGNMENT_TIMESTAMP = Field("assignmentTimestamp", "int64", "0+", tagged="0+", tag=0,
                              default=0)

ConsumerGroupTargetAssignmentMetadataValue = _value(
    "ConsumerGroupTargetAssignmentMetadataValue", 6, [
        Field("assignmentEpoch", "int32", "0+"),
        _ASSIGNMENT_TIMESTAMP,
    ])

ConsumerGroupTargetAssignmentMemberKey = _key(
    "ConsumerGroupTargetAssignmentMemberKey", 7, _GROUP, _MEMBER)

#: TopicPartition of the target-assignment member values (7, 13).
_TOPIC_PARTITION = fields("""
    topicId     uuid     0+
    partitions  []int32  0+
""")

ConsumerGroupTargetAssignmentMemberValue = _value(
    "ConsumerGroupTargetAssignmentMemberValue", 7, fields("""
    topicPartitions  []TopicPartition  0+
""", TopicPartition=_TOPIC_PARTITION))

ConsumerGroupCurrentMemberAssignmentKey = _key(
    "ConsumerGroupCurrentMemberAssignmentKey", 8, _GROUP, _MEMBER)

#: ConsumerGroupCurrentMemberAssignmentValue's common struct TopicPartitions.
_CONSUMER_TOPIC_PARTITIONS = fields("""
    topicId           uuid     0+
    partitions        []int32  0+
    # KIP-1251: apache/kafka 6541f94
    assignmentEpochs  []int32  0+  nullable=0+ tagged=0+ tag=0 default=null
""")

ConsumerGroupCurrentMemberAssignmentValue = _value(
    "ConsumerGroupCurrentMemberAssignmentValue", 8, fields("""
    memberEpoch                  int32              0+
    previousMemberEpoch          int32              0+
    state                        int8               0+
    assignedPartitions           []TopicPartitions  0+
    partitionsPendingRevocation  []TopicPartitions  0+
""", TopicPartitions=_CONSUMER_TOPIC_PARTITIONS))

ConsumerGroupRegularExpressionKey = _key(
    "ConsumerGroupRegularExpressionKey", 16, _GROUP, ("regularExpression", "string"))

ConsumerGroupRegularExpressionValue = _value("ConsumerGroupRegularExpressionValue", 16, fields("""
    topics     []string  0+
    version    int64     0+
    timestamp  int64     0+
"""))

# -- KIP-932 share groups (9-15) -----------------------------------------------------------------

ShareGroupPartitionMetadataKey = _key("ShareGroupPartitionMetadataKey", 9, _GROUP)

ShareGroupPartitionMetadataValue = _value("ShareGroupPartitionMetadataValue", 9, fields("""
    topics  []TopicMetadata  0+
""", TopicMetadata=_TOPIC_METADATA))

ShareGroupMemberMetadataKey = _key("ShareGroupMemberMetadataKey", 10, _GROUP, _MEMBER)

ShareGroupMemberMetadataValue = _value("ShareGroupMemberMetadataValue", 10, fields("""
    rackId                string    0+  nullable=0+
    clientId              string    0+
    clientHost            string    0+
    subscribedTopicNames  []string  0+
"""))

ShareGroupMetadataKey = _key("ShareGroupMetadataKey", 11, _GROUP)

ShareGroupMetadataValue = _value("ShareGroupMetadataValue", 11, fields("""
    epoch         int32  0+
    # KIP-1101: apache/kafka 31f85dd
    metadataHash  int64  0+
"""), earlier=[_earlier("ShareGroupMetadataValue", 11, fields("""
    epoch  int32  0+
"""))])

ShareGroupTargetAssignmentMetadataKey = _key("ShareGroupTargetAssignmentMetadataKey", 12, _GROUP)

ShareGroupTargetAssignmentMetadataValue = _value("ShareGroupTargetAssignmentMetadataValue", 12, fields("""
    assignmentEpoch  int32  0+
"""))

ShareGroupTargetAssignmentMemberKey = _key(
    "ShareGroupTargetAssignmentMemberKey", 13, _GROUP, _MEMBER)

ShareGroupTargetAssignmentMemberValue = _value("ShareGroupTargetAssignmentMemberValue", 13, fields("""
    topicPartitions  []TopicPartition  0+
""", TopicPartition=_TOPIC_PARTITION))

ShareGroupCurrentMemberAssignmentKey = _key(
    "ShareGroupCurrentMemberAssignmentKey", 14, _GROUP, _MEMBER)

ShareGroupCurrentMemberAssignmentValue = _value("ShareGroupCurrentMemberAssignmentValue", 14, fields("""
    memberEpoch          int32              0+
    previousMemberEpoch  int32              0+
    state                int8               0+
    assignedPartitions   []TopicPartitions  0+
      topicId            uuid               0+
      partitions         []int32            0+
"""))

ShareGroupStatePartitionMetadataKey = _key("ShareGroupStatePartitionMetadataKey", 15, _GROUP)

#: TopicInfo of ShareGroupStatePartitionMetadataValue.
_SHARE_TOPIC_INFO = fields("""
    topicId    uuid    0+
    topicName  string  0+
""")

#: apache/kafka 25002b6: InitializingTopics, and each topic's CreateTimestamp
_SHARE_TOPIC_PARTITIONS_INFO = fields("""
    topicId          uuid     0+
    topicName        string   0+
    partitions       []int32  0+
    createTimestamp  int64    0+
""")

ShareGroupStatePartitionMetadataValue = _value("ShareGroupStatePartitionMetadataValue", 15, fields("""
    initializingTopics  []TopicPartitionsInfo  0+
    initializedTopics   []TopicPartitionsInfo  0+
    deletingTopics      []TopicInfo            0+
""", TopicPartitionsInfo=_SHARE_TOPIC_PARTITIONS_INFO, TopicInfo=_SHARE_TOPIC_INFO), earlier=[_earlier("ShareGroupStatePartitionMetadataValue", 15, fields("""
    initializedTopics  []TopicPartitionsInfo  0+
      topicId          uuid                   0+
      topicName        string                 0+
      partitions       []int32                0+
    deletingTopics     []TopicInfo            0+
""", TopicInfo=_SHARE_TOPIC_INFO))])

# -- KIP-1071 streams groups (17-24) ---------------------------------------------------------------

StreamsGroupMetadataKey = _key("StreamsGroupMetadataKey", 17, _GROUP)

StreamsGroupMetadataValue = _value("StreamsGroupMetadataValue", 17, fields("""
    epoch                   int32                   0+
    # Kafka 4.1+ (KIP-1101 hash; validated topology epoch and last assignment configs of
    # KIP-1071); names as in apache/kafka's StreamsCoordinatorRecordHelpers tests
    metadataHash            int64                   0+
    validatedTopologyEpoch  int32                   0+  tagged=0+ tag=0 default=-1
    lastAssignmentConfigs   []LastAssignmentConfig  0+  nullable=0+ tagged=0+ tag=1 default=null
      key                   string                  0+
      value                 string                  0+
"""), earlier=[_earlier("StreamsGroupMetadataValue", 17, fields("""
    epoch  int32  0+
"""))])

StreamsGroupPartitionMetadataKey = _key("StreamsGroupPartitionMetadataKey", 18, _GROUP)

StreamsGroupPartitionMetadataValue = _value("StreamsGroupPartitionMetadataValue", 18, fields("""
    topics  []TopicMetadata  0+
""", TopicMetadata=_TOPIC_METADATA))

StreamsGroupMemberMetadataKey = _key("StreamsGroupMemberMetadataKey", 19, _GROUP, _MEMBER)

StreamsGroupMemberMetadataValue = _value("StreamsGroupMemberMetadataValue", 19, fields("""
    instanceId          string      0+  nullable=0+
    rackId              string      0+  nullable=0+
    clientId            string      0+
    clientHost          string      0+
    rebalanceTimeoutMs  int32       0+  default=-1
    topologyEpoch       int32       0+
    processId           string      0+
    userEndpoint        Endpoint    0+  nullable=0+ default=null
      host              string      0+
      port              uint16      0+
    clientTags          []KeyValue  0+
      key               string      0+
      value             string      0+
"""))

StreamsGroupTargetAssignmentMetadataKey = _key(
    "StreamsGroupTargetAssignmentMetadataKey", 20, _GROUP)

StreamsGroupTargetAssignmentMetadataValue = _value(
    "StreamsGroupTargetAssignmentMetadataValue", 20, [
        Field("assignmentEpoch", "int32", "0+"),
        _ASSIGNMENT_TIMESTAMP,  # KIP-1263, as ConsumerGroupTargetAssignmentMetadataValue
    ])

StreamsGroupTargetAssignmentMemberKey = _key(
    "StreamsGroupTargetAssignmentMemberKey", 21, _GROUP, _MEMBER)

#: TaskIds of the streams assignment values (21, 22).
_TASK_IDS = fields("""
    subtopologyId  string   0+
    partitions     []int32  0+
""")

StreamsGroupTargetAssignmentMemberValue = _value("StreamsGroupTargetAssignmentMemberValue", 21, fields("""
    activeTasks   []TaskIds  0+
    standbyTasks  []TaskIds  0+
    warmupTasks   []TaskIds  0+
""", TaskIds=_TASK_IDS))

StreamsGroupCurrentMemberAssignmentKey = _key(
    "StreamsGroupCurrentMemberAssignmentKey", 22, _GROUP, _MEMBER)

StreamsGroupCurrentMemberAssignmentValue = _value(
    "StreamsGroupCurrentMemberAssignmentValue", 22, fields("""
    memberEpoch                    int32      0+
    previousMemberEpoch            int32      0+
    state                          int8       0+
    activeTasks                    []TaskIds  0+
    standbyTasks                   []TaskIds  0+
    warmupTasks                    []TaskIds  0+
    activeTasksPendingRevocation   []TaskIds  0+
    standbyTasksPendingRevocation  []TaskIds  0+
    warmupTasksPendingRevocation   []TaskIds  0+
""", TaskIds=_TASK_IDS))

StreamsGroupTopologyKey = _key("StreamsGroupTopologyKey", 23, _GROUP)

#: StreamsGroupTopologyValue's common struct TopicInfo.
_STREAMS_TOPIC_INFO = fields("""
    name               string         0+
    partitions         int32          0+
    replicationFactor  int16          0+
    topicConfigs       []TopicConfig  0+
      key              string         0+
      value            string         0+
""")

StreamsGroupTopologyValue = _value("StreamsGroupTopologyValue", 23, fields("""
    epoch                        int32               0+
    subtopologies                []Subtopology       0+
      subtopologyId              string              0+
      sourceTopics               []string            0+
      sourceTopicRegex           []string            0+
      stateChangelogTopics       []TopicInfo         0+
      repartitionSinkTopics      []string            0+
      repartitionSourceTopics    []TopicInfo         0+
      copartitionGroups          []CopartitionGroup  0+
        sourceTopics             []int16             0+
        sourceTopicRegex         []int16             0+
        repartitionSourceTopics  []int16             0+
""", TopicInfo=_STREAMS_TOPIC_INFO))

StreamsGroupTargetAssignmentResolvedTopicIdsKey = _key(
    "StreamsGroupTargetAssignmentResolvedTopicIdsKey", 24, _GROUP)

StreamsGroupTargetAssignmentResolvedTopicIdsValue = _value(
    "StreamsGroupTargetAssignmentResolvedTopicIdsValue", 24, fields("""
    assignmentEpoch                int32               0+
    resolvedTopicIdsBySubtopology  []ResolvedTopicIds  0+
      subtopologyId                string              0+
      topicIds                     []uuid              0+
"""))

# -- the consumer embedded protocol ----------------------------------------------------------------

ConsumerProtocolSubscription = Message(
    "ConsumerProtocolSubscription", valid="0-3", kind="data", fields=fields("""
    topics           []string          0+
    userData         bytes             0+  nullable=0+ default=null
    ownedPartitions  []TopicPartition  1+
      topic          string            1+
      partitions     []int32           1+
    generationId     int32             2+  default=-1
    rackId           string            3+  nullable=3+ default=null
"""))

ConsumerProtocolAssignment = Message(
    "ConsumerProtocolAssignment", valid="0-3", kind="data", fields=fields("""
    assignedPartitions  []TopicPartition  0+
      topic             string            0+
      partitions        []int32           0+
    userData            bytes             0+  nullable=0+ default=null
"""))

#: ``{record type: (key message, value message)}`` (GroupCoordinatorRecordSerde).
RECORD_TYPES: dict[int, tuple[Message, Message]] = {
    0: (LegacyOffsetCommitKey, LegacyOffsetCommitValue),
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
    16: (ConsumerGroupRegularExpressionKey, ConsumerGroupRegularExpressionValue),
    17: (StreamsGroupMetadataKey, StreamsGroupMetadataValue),
    18: (StreamsGroupPartitionMetadataKey, StreamsGroupPartitionMetadataValue),
    19: (StreamsGroupMemberMetadataKey, StreamsGroupMemberMetadataValue),
    20: (StreamsGroupTargetAssignmentMetadataKey, StreamsGroupTargetAssignmentMetadataValue),
    21: (StreamsGroupTargetAssignmentMemberKey, StreamsGroupTargetAssignmentMemberValue),
    22: (StreamsGroupCurrentMemberAssignmentKey, StreamsGroupCurrentMemberAssignmentValue),
    23: (StreamsGroupTopologyKey, StreamsGroupTopologyValue),
    24: (StreamsGroupTargetAssignmentResolvedTopicIdsKey,
         StreamsGroupTargetAssignmentResolvedTopicIdsValue),
}

MESSAGES = registry(*(m for pair in RECORD_TYPES.values() for m in pair),
                    ConsumerProtocolSubscription, ConsumerProtocolAssignment)

#: Record types whose key names a group, by the group protocol they belong to (the
#: group's own metadata record: a group exists while its latest one is not a tombstone).
GROUP_METADATA_TYPES = {2: "classic", 3: "consumer", 11: "share", 17: "streams"}
