"""The request and response messages ``kafkalog serve`` speaks, declared once with the
message DSL of :mod:`kafkalog_cli.schema.messages` (construct, compiled per version).

Each declaration follows Kafka's JSON definition of the message
(``clients/src/main/resources/common/message/<Name>.json``): the same fields, versions,
nullable and tagged versions and defaults, for the whole range Kafka defines, whether or
not the server advertises every version (the served ranges are in :mod:`.apis`). Field
names are Kafka's camelCase names. The ``records`` type is the DSL's (bytes / compact
bytes holding record batches).
"""

from __future__ import annotations

from ..schema.messages import Field, Message

F = Field

# -- ApiVersions (key 18) ------------------------------------------------------------------

ApiVersionsRequest = Message("ApiVersionsRequest", valid="0-4", flexible="3+", fields=[
    F("clientSoftwareName", "string", "3+"),
    F("clientSoftwareVersion", "string", "3+"),
])

ApiVersionsResponse = Message("ApiVersionsResponse", valid="0-4", flexible="3+", fields=[
    F("errorCode", "int16", "0+"),
    F("apiKeys", "[]ApiVersion", "0+", fields=[
        F("apiKey", "int16", "0+"),
        F("minVersion", "int16", "0+"),
        F("maxVersion", "int16", "0+"),
    ]),
    F("throttleTimeMs", "int32", "1+"),
    F("supportedFeatures", "[]SupportedFeatureKey", "3+", tagged="3+", tag=0, fields=[
        F("name", "string", "3+"),
        F("minVersion", "int16", "3+"),
        F("maxVersion", "int16", "3+"),
    ]),
    F("finalizedFeaturesEpoch", "int64", "3+", tagged="3+", tag=1, default=-1),
    F("finalizedFeatures", "[]FinalizedFeatureKey", "3+", tagged="3+", tag=2, fields=[
        F("name", "string", "3+"),
        F("maxVersionLevel", "int16", "3+"),
        F("minVersionLevel", "int16", "3+"),
    ]),
    F("zkMigrationReady", "bool", "3+", tagged="3+", tag=3, default=False),
])

# -- Produce (key 0) -------------------------------------------------------------------------

ProduceRequest = Message("ProduceRequest", valid="0-11", flexible="9+", fields=[
    F("transactionalId", "string", "3+", nullable="3+", default=None),
    F("acks", "int16", "0+"),
    F("timeoutMs", "int32", "0+"),
    F("topicData", "[]TopicProduceData", "0+", fields=[
        F("name", "string", "0+"),
        F("partitionData", "[]PartitionProduceData", "0+", fields=[
            F("index", "int32", "0+"),
            F("records", "records", "0+", nullable="0+"),
        ]),
    ]),
])

_LEADER_ID_AND_EPOCH = [
    F("leaderId", "int32", "0+", default=-1),
    F("leaderEpoch", "int32", "0+", default=-1),
]

_NODE_ENDPOINT = [
    F("nodeId", "int32", "0+"),
    F("host", "string", "0+"),
    F("port", "int32", "0+"),
    F("rack", "string", "0+", nullable="0+", default=None),
]

ProduceResponse = Message("ProduceResponse", valid="0-11", flexible="9+", fields=[
    F("responses", "[]TopicProduceResponse", "0+", fields=[
        F("name", "string", "0+"),
        F("partitionResponses", "[]PartitionProduceResponse", "0+", fields=[
            F("index", "int32", "0+"),
            F("errorCode", "int16", "0+"),
            F("baseOffset", "int64", "0+"),
            F("logAppendTimeMs", "int64", "2+", default=-1),
            F("logStartOffset", "int64", "5+", default=-1),
            F("recordErrors", "[]BatchIndexAndErrorMessage", "8+", fields=[
                F("batchIndex", "int32", "8+"),
                F("batchIndexErrorMessage", "string", "8+", nullable="8+", default=None),
            ]),
            F("errorMessage", "string", "8+", nullable="8+", default=None),
            F("currentLeader", "LeaderIdAndEpoch", "10+", tagged="10+", tag=0,
              fields=_LEADER_ID_AND_EPOCH),
        ]),
    ]),
    F("throttleTimeMs", "int32", "1+", default=0),
    F("nodeEndpoints", "[]NodeEndpoint", "10+", tagged="10+", tag=0, fields=_NODE_ENDPOINT),
])

# -- Fetch (key 1) ---------------------------------------------------------------------------

FetchRequest = Message("FetchRequest", valid="0-17", flexible="12+", fields=[
    F("clusterId", "string", "12+", nullable="12+", default=None, tagged="12+", tag=0),
    F("replicaId", "int32", "0-14", default=-1),
    F("replicaState", "ReplicaState", "15+", tagged="15+", tag=1, fields=[
        F("replicaId", "int32", "15+", default=-1),
        F("replicaEpoch", "int64", "15+", default=-1),
    ]),
    F("maxWaitMs", "int32", "0+"),
    F("minBytes", "int32", "0+"),
    F("maxBytes", "int32", "3+", default=0x7FFFFFFF),
    F("isolationLevel", "int8", "4+", default=0),
    F("sessionId", "int32", "7+", default=0),
    F("sessionEpoch", "int32", "7+", default=-1),
    F("topics", "[]FetchTopic", "0+", fields=[
        F("topic", "string", "0-12"),
        F("topicId", "uuid", "13+"),
        F("partitions", "[]FetchPartition", "0+", fields=[
            F("partition", "int32", "0+"),
            F("currentLeaderEpoch", "int32", "9+", default=-1),
            F("fetchOffset", "int64", "0+"),
            F("lastFetchedEpoch", "int32", "12+", default=-1),
            F("logStartOffset", "int64", "5+", default=-1),
            F("partitionMaxBytes", "int32", "0+"),
            F("replicaDirectoryId", "uuid", "17+", tagged="17+", tag=0),
        ]),
    ]),
    F("forgottenTopicsData", "[]ForgottenTopic", "7+", fields=[
        F("topic", "string", "7-12"),
        F("topicId", "uuid", "13+"),
        F("partitions", "[]int32", "7+"),
    ]),
    F("rackId", "string", "11+", default=""),
])

FetchResponse = Message("FetchResponse", valid="0-17", flexible="12+", fields=[
    F("throttleTimeMs", "int32", "1+"),
    F("errorCode", "int16", "7+"),
    F("sessionId", "int32", "7+", default=0),
    F("responses", "[]FetchableTopicResponse", "0+", fields=[
        F("topic", "string", "0-12"),
        F("topicId", "uuid", "13+"),
        F("partitions", "[]PartitionData", "0+", fields=[
            F("partitionIndex", "int32", "0+"),
            F("errorCode", "int16", "0+"),
            F("highWatermark", "int64", "0+"),
            F("lastStableOffset", "int64", "4+", default=-1),
            F("logStartOffset", "int64", "5+", default=-1),
            F("divergingEpoch", "EpochEndOffset", "12+", tagged="12+", tag=0, fields=[
                F("epoch", "int32", "12+", default=-1),
                F("endOffset", "int64", "12+", default=-1),
            ]),
            F("currentLeader", "LeaderIdAndEpoch", "12+", tagged="12+", tag=1,
              fields=_LEADER_ID_AND_EPOCH),
            F("snapshotId", "SnapshotId", "12+", tagged="12+", tag=2, fields=[
                F("endOffset", "int64", "0+", default=-1),
                F("epoch", "int32", "0+", default=-1),
            ]),
            F("abortedTransactions", "[]AbortedTransaction", "4+", nullable="4+", fields=[
                F("producerId", "int64", "4+"),
                F("firstOffset", "int64", "4+"),
            ]),
            F("preferredReadReplica", "int32", "11+", default=-1),
            F("records", "records", "0+", nullable="0+"),
        ]),
    ]),
    F("nodeEndpoints", "[]NodeEndpoint", "16+", tagged="16+", tag=0, fields=_NODE_ENDPOINT),
])

# -- ListOffsets (key 2) ---------------------------------------------------------------------

ListOffsetsRequest = Message("ListOffsetsRequest", valid="0-10", flexible="6+", fields=[
    F("replicaId", "int32", "0+"),
    F("isolationLevel", "int8", "2+"),
    F("topics", "[]ListOffsetsTopic", "0+", fields=[
        F("name", "string", "0+"),
        F("partitions", "[]ListOffsetsPartition", "0+", fields=[
            F("partitionIndex", "int32", "0+"),
            F("currentLeaderEpoch", "int32", "4+", default=-1),
            F("timestamp", "int64", "0+"),
            F("maxNumOffsets", "int32", "0", default=1),
        ]),
    ]),
    F("timeoutMs", "int32", "10+"),
])

ListOffsetsResponse = Message("ListOffsetsResponse", valid="0-10", flexible="6+", fields=[
    F("throttleTimeMs", "int32", "2+"),
    F("topics", "[]ListOffsetsTopicResponse", "0+", fields=[
        F("name", "string", "0+"),
        F("partitions", "[]ListOffsetsPartitionResponse", "0+", fields=[
            F("partitionIndex", "int32", "0+"),
            F("errorCode", "int16", "0+"),
            F("oldStyleOffsets", "[]int64", "0"),
            F("timestamp", "int64", "1+", default=-1),
            F("offset", "int64", "1+", default=-1),
            F("leaderEpoch", "int32", "4+", default=-1),
        ]),
    ]),
])

# -- Metadata (key 3) ------------------------------------------------------------------------

MetadataRequest = Message("MetadataRequest", valid="0-12", flexible="9+", fields=[
    F("topics", "[]MetadataRequestTopic", "0+", nullable="1+", fields=[
        F("topicId", "uuid", "10+"),
        F("name", "string", "0+", nullable="10+"),
    ]),
    F("allowAutoTopicCreation", "bool", "4+", default=True),
    F("includeClusterAuthorizedOperations", "bool", "8-10"),
    F("includeTopicAuthorizedOperations", "bool", "8+"),
])

MetadataResponse = Message("MetadataResponse", valid="0-12", flexible="9+", fields=[
    F("throttleTimeMs", "int32", "3+"),
    F("brokers", "[]MetadataResponseBroker", "0+", fields=[
        F("nodeId", "int32", "0+"),
        F("host", "string", "0+"),
        F("port", "int32", "0+"),
        F("rack", "string", "1+", nullable="1+", default=None),
    ]),
    F("clusterId", "string", "2+", nullable="2+", default=None),
    F("controllerId", "int32", "1+", default=-1),
    F("topics", "[]MetadataResponseTopic", "0+", fields=[
        F("errorCode", "int16", "0+"),
        F("name", "string", "0+", nullable="12+"),
        F("topicId", "uuid", "10+"),
        F("isInternal", "bool", "1+", default=False),
        F("partitions", "[]MetadataResponsePartition", "0+", fields=[
            F("errorCode", "int16", "0+"),
            F("partitionIndex", "int32", "0+"),
            F("leaderId", "int32", "0+"),
            F("leaderEpoch", "int32", "7+", default=-1),
            F("replicaNodes", "[]int32", "0+"),
            F("isrNodes", "[]int32", "0+"),
            F("offlineReplicas", "[]int32", "5+"),
        ]),
        F("topicAuthorizedOperations", "int32", "8+", default=-2147483648),
    ]),
    F("clusterAuthorizedOperations", "int32", "8-10", default=-2147483648),
])

# -- InitProducerId (key 22) -----------------------------------------------------------------

InitProducerIdRequest = Message("InitProducerIdRequest", valid="0-5", flexible="2+", fields=[
    F("transactionalId", "string", "0+", nullable="0+"),
    F("transactionTimeoutMs", "int32", "0+"),
    F("producerId", "int64", "3+", default=-1),
    F("producerEpoch", "int16", "3+", default=-1),
])

InitProducerIdResponse = Message("InitProducerIdResponse", valid="0-5", flexible="2+", fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("errorCode", "int16", "0+"),
    F("producerId", "int64", "0+", default=-1),
    F("producerEpoch", "int16", "0+"),
])

# -- CreateTopics (key 19) -------------------------------------------------------------------

CreateTopicsRequest = Message("CreateTopicsRequest", valid="0-7", flexible="5+", fields=[
    F("topics", "[]CreatableTopic", "0+", fields=[
        F("name", "string", "0+"),
        F("numPartitions", "int32", "0+"),
        F("replicationFactor", "int16", "0+"),
        F("assignments", "[]CreatableReplicaAssignment", "0+", fields=[
            F("partitionIndex", "int32", "0+"),
            F("brokerIds", "[]int32", "0+"),
        ]),
        F("configs", "[]CreatableTopicConfig", "0+", fields=[
            F("name", "string", "0+"),
            F("value", "string", "0+", nullable="0+"),
        ]),
    ]),
    F("timeoutMs", "int32", "0+", default=60000),
    F("validateOnly", "bool", "1+", default=False),
])

CreateTopicsResponse = Message("CreateTopicsResponse", valid="0-7", flexible="5+", fields=[
    F("throttleTimeMs", "int32", "2+"),
    F("topics", "[]CreatableTopicResult", "0+", fields=[
        F("name", "string", "0+"),
        F("topicId", "uuid", "7+"),
        F("errorCode", "int16", "0+"),
        F("errorMessage", "string", "1+", nullable="0+"),
        F("topicConfigErrorCode", "int16", "5+", tagged="5+", tag=0),
        F("numPartitions", "int32", "5+", default=-1),
        F("replicationFactor", "int16", "5+", default=-1),
        F("configs", "[]CreatableTopicConfigs", "5+", nullable="5+", fields=[
            F("name", "string", "5+"),
            F("value", "string", "5+", nullable="5+"),
            F("readOnly", "bool", "5+"),
            F("configSource", "int8", "5+", default=-1),
            F("isSensitive", "bool", "5+"),
        ]),
    ]),
])

# -- DeleteTopics (key 20) -------------------------------------------------------------------

DeleteTopicsRequest = Message("DeleteTopicsRequest", valid="0-6", flexible="4+", fields=[
    F("topics", "[]DeleteTopicState", "6+", fields=[
        F("name", "string", "6+", nullable="6+", default=None),
        F("topicId", "uuid", "6+"),
    ]),
    F("topicNames", "[]string", "0-5"),
    F("timeoutMs", "int32", "0+"),
])

DeleteTopicsResponse = Message("DeleteTopicsResponse", valid="0-6", flexible="4+", fields=[
    F("throttleTimeMs", "int32", "1+"),
    F("responses", "[]DeletableTopicResult", "0+", fields=[
        F("name", "string", "0+", nullable="6+"),
        F("topicId", "uuid", "6+"),
        F("errorCode", "int16", "0+"),
        F("errorMessage", "string", "5+", nullable="5+", default=None),
    ]),
])

# -- DescribeConfigs (key 32) ----------------------------------------------------------------

DescribeConfigsRequest = Message("DescribeConfigsRequest", valid="0-4", flexible="4+", fields=[
    F("resources", "[]DescribeConfigsResource", "0+", fields=[
        F("resourceType", "int8", "0+"),
        F("resourceName", "string", "0+"),
        F("configurationKeys", "[]string", "0+", nullable="0+"),
    ]),
    F("includeSynonyms", "bool", "1+", default=False),
    F("includeDocumentation", "bool", "3+", default=False),
])

DescribeConfigsResponse = Message("DescribeConfigsResponse", valid="0-4", flexible="4+", fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("results", "[]DescribeConfigsResult", "0+", fields=[
        F("errorCode", "int16", "0+"),
        F("errorMessage", "string", "0+", nullable="0+"),
        F("resourceType", "int8", "0+"),
        F("resourceName", "string", "0+"),
        F("configs", "[]DescribeConfigsResourceResult", "0+", fields=[
            F("name", "string", "0+"),
            F("value", "string", "0+", nullable="0+"),
            F("readOnly", "bool", "0+"),
            F("isDefault", "bool", "0"),
            F("configSource", "int8", "1+", default=-1),
            F("isSensitive", "bool", "0+"),
            F("synonyms", "[]DescribeConfigsSynonym", "1+", fields=[
                F("name", "string", "1+"),
                F("value", "string", "1+", nullable="0+"),
                F("source", "int8", "1+"),
            ]),
            F("configType", "int8", "3+", default=0),
            F("documentation", "string", "3+", nullable="0+"),
        ]),
    ]),
])

# -- consumer groups: FindCoordinator (10), JoinGroup (11), Heartbeat (12), LeaveGroup (13),
# SyncGroup (14), OffsetCommit (8), OffsetFetch (9) --------------------------------------

FindCoordinatorRequest = Message("FindCoordinatorRequest", valid="0-6", flexible="3+", fields=[
    F("key", "string", "0-3"),
    F("keyType", "int8", "1+", default=0),
    F("coordinatorKeys", "[]string", "4+"),
])

FindCoordinatorResponse = Message("FindCoordinatorResponse", valid="0-6", flexible="3+",
                                  fields=[
    F("throttleTimeMs", "int32", "1+"),
    F("errorCode", "int16", "0-3"),
    F("errorMessage", "string", "1-3", nullable="1-3", default=None),
    F("nodeId", "int32", "0-3"),
    F("host", "string", "0-3"),
    F("port", "int32", "0-3"),
    F("coordinators", "[]Coordinator", "4+", fields=[
        F("key", "string", "4+"),
        F("nodeId", "int32", "4+"),
        F("host", "string", "4+"),
        F("port", "int32", "4+"),
        F("errorCode", "int16", "4+"),
        F("errorMessage", "string", "4+", nullable="4+", default=None),
    ]),
])

JoinGroupRequest = Message("JoinGroupRequest", valid="0-9", flexible="6+", fields=[
    F("groupId", "string", "0+"),
    F("sessionTimeoutMs", "int32", "0+"),
    F("rebalanceTimeoutMs", "int32", "1+", default=-1),
    F("memberId", "string", "0+"),
    F("groupInstanceId", "string", "5+", nullable="5+", default=None),
    F("protocolType", "string", "0+"),
    F("protocols", "[]JoinGroupRequestProtocol", "0+", fields=[
        F("name", "string", "0+"),
        F("metadata", "bytes", "0+"),
    ]),
    F("reason", "string", "8+", nullable="8+", default=None),
])

JoinGroupResponse = Message("JoinGroupResponse", valid="0-9", flexible="6+", fields=[
    F("throttleTimeMs", "int32", "2+"),
    F("errorCode", "int16", "0+"),
    F("generationId", "int32", "0+", default=-1),
    F("protocolType", "string", "7+", nullable="7+", default=None),
    F("protocolName", "string", "0+", nullable="7+"),
    F("leader", "string", "0+"),
    F("skipAssignment", "bool", "9+", default=False),
    F("memberId", "string", "0+"),
    F("members", "[]JoinGroupResponseMember", "0+", fields=[
        F("memberId", "string", "0+"),
        F("groupInstanceId", "string", "5+", nullable="5+", default=None),
        F("metadata", "bytes", "0+"),
    ]),
])

HeartbeatRequest = Message("HeartbeatRequest", valid="0-4", flexible="4+", fields=[
    F("groupId", "string", "0+"),
    F("generationId", "int32", "0+"),
    F("memberId", "string", "0+"),
    F("groupInstanceId", "string", "3+", nullable="3+", default=None),
])

HeartbeatResponse = Message("HeartbeatResponse", valid="0-4", flexible="4+", fields=[
    F("throttleTimeMs", "int32", "1+"),
    F("errorCode", "int16", "0+"),
])

LeaveGroupRequest = Message("LeaveGroupRequest", valid="0-5", flexible="4+", fields=[
    F("groupId", "string", "0+"),
    F("memberId", "string", "0-2"),
    F("members", "[]MemberIdentity", "3+", fields=[
        F("memberId", "string", "3+"),
        F("groupInstanceId", "string", "3+", nullable="3+", default=None),
        F("reason", "string", "5+", nullable="5+", default=None),
    ]),
])

LeaveGroupResponse = Message("LeaveGroupResponse", valid="0-5", flexible="4+", fields=[
    F("throttleTimeMs", "int32", "1+"),
    F("errorCode", "int16", "0+"),
    F("members", "[]MemberResponse", "3+", fields=[
        F("memberId", "string", "3+"),
        F("groupInstanceId", "string", "3+", nullable="3+"),
        F("errorCode", "int16", "3+"),
    ]),
])

SyncGroupRequest = Message("SyncGroupRequest", valid="0-5", flexible="4+", fields=[
    F("groupId", "string", "0+"),
    F("generationId", "int32", "0+"),
    F("memberId", "string", "0+"),
    F("groupInstanceId", "string", "3+", nullable="3+", default=None),
    F("protocolType", "string", "5+", nullable="5+", default=None),
    F("protocolName", "string", "5+", nullable="5+", default=None),
    F("assignments", "[]SyncGroupRequestAssignment", "0+", fields=[
        F("memberId", "string", "0+"),
        F("assignment", "bytes", "0+"),
    ]),
])

SyncGroupResponse = Message("SyncGroupResponse", valid="0-5", flexible="4+", fields=[
    F("throttleTimeMs", "int32", "1+"),
    F("errorCode", "int16", "0+"),
    F("protocolType", "string", "5+", nullable="5+", default=None),
    F("protocolName", "string", "5+", nullable="5+", default=None),
    F("assignment", "bytes", "0+"),
])

OffsetCommitRequest = Message("OffsetCommitRequest", valid="0-9", flexible="8+", fields=[
    F("groupId", "string", "0+"),
    F("generationIdOrMemberEpoch", "int32", "1+", default=-1),
    F("memberId", "string", "1+"),
    F("groupInstanceId", "string", "7+", nullable="7+", default=None),
    F("retentionTimeMs", "int64", "2-4", default=-1),
    F("topics", "[]OffsetCommitRequestTopic", "0+", fields=[
        F("name", "string", "0+"),
        F("partitions", "[]OffsetCommitRequestPartition", "0+", fields=[
            F("partitionIndex", "int32", "0+"),
            F("committedOffset", "int64", "0+"),
            F("committedLeaderEpoch", "int32", "6+", default=-1),
            F("commitTimestamp", "int64", "1", default=-1),
            F("committedMetadata", "string", "0+", nullable="0+"),
        ]),
    ]),
])

OffsetCommitResponse = Message("OffsetCommitResponse", valid="0-9", flexible="8+", fields=[
    F("throttleTimeMs", "int32", "3+"),
    F("topics", "[]OffsetCommitResponseTopic", "0+", fields=[
        F("name", "string", "0+"),
        F("partitions", "[]OffsetCommitResponsePartition", "0+", fields=[
            F("partitionIndex", "int32", "0+"),
            F("errorCode", "int16", "0+"),
        ]),
    ]),
])

_OFFSET_FETCH_PARTITION = [
    F("partitionIndex", "int32", "0+"),
    F("committedOffset", "int64", "0+"),
    F("committedLeaderEpoch", "int32", "5+", default=-1),
    F("metadata", "string", "0+", nullable="0+"),
    F("errorCode", "int16", "0+"),
]

OffsetFetchRequest = Message("OffsetFetchRequest", valid="0-9", flexible="6+", fields=[
    F("groupId", "string", "0-7"),
    F("topics", "[]OffsetFetchRequestTopic", "0-7", nullable="2-7", fields=[
        F("name", "string", "0-7"),
        F("partitionIndexes", "[]int32", "0-7"),
    ]),
    F("groups", "[]OffsetFetchRequestGroup", "8+", fields=[
        F("groupId", "string", "8+"),
        F("memberId", "string", "9+", nullable="9+", default=None),
        F("memberEpoch", "int32", "9+", default=-1),
        F("topics", "[]OffsetFetchRequestTopics", "8+", nullable="8+", fields=[
            F("name", "string", "8+"),
            F("partitionIndexes", "[]int32", "8+"),
        ]),
    ]),
    F("requireStable", "bool", "7+", default=False),
])

OffsetFetchResponse = Message("OffsetFetchResponse", valid="0-9", flexible="6+", fields=[
    F("throttleTimeMs", "int32", "3+"),
    F("topics", "[]OffsetFetchResponseTopic", "0-7", fields=[
        F("name", "string", "0-7"),
        F("partitions", "[]OffsetFetchResponsePartition", "0-7",
          fields=_OFFSET_FETCH_PARTITION),
    ]),
    F("errorCode", "int16", "2-7", default=0),
    F("groups", "[]OffsetFetchResponseGroup", "8+", fields=[
        F("groupId", "string", "8+"),
        F("topics", "[]OffsetFetchResponseTopics", "8+", fields=[
            F("name", "string", "8+"),
            F("partitions", "[]OffsetFetchResponsePartitions", "8+",
              fields=_OFFSET_FETCH_PARTITION),
        ]),
        F("errorCode", "int16", "8+", default=0),
    ]),
])

# -- admin: CreatePartitions (37), AlterConfigs (33), IncrementalAlterConfigs (44),
# DescribeCluster (60), DescribeLogDirs (35), DeleteRecords (21) --------------------------

CreatePartitionsRequest = Message("CreatePartitionsRequest", valid="0-3", flexible="2+",
                                  fields=[
    F("topics", "[]CreatePartitionsTopic", "0+", fields=[
        F("name", "string", "0+"),
        F("count", "int32", "0+"),
        F("assignments", "[]CreatePartitionsAssignment", "0+", nullable="0+", fields=[
            F("brokerIds", "[]int32", "0+"),
        ]),
    ]),
    F("timeoutMs", "int32", "0+"),
    F("validateOnly", "bool", "0+"),
])

CreatePartitionsResponse = Message("CreatePartitionsResponse", valid="0-3", flexible="2+",
                                   fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("results", "[]CreatePartitionsTopicResult", "0+", fields=[
        F("name", "string", "0+"),
        F("errorCode", "int16", "0+"),
        F("errorMessage", "string", "0+", nullable="0+", default=None),
    ]),
])

_ALTER_CONFIGS_RESOURCE_RESPONSE = [
    F("errorCode", "int16", "0+"),
    F("errorMessage", "string", "0+", nullable="0+"),
    F("resourceType", "int8", "0+"),
    F("resourceName", "string", "0+"),
]

AlterConfigsRequest = Message("AlterConfigsRequest", valid="0-2", flexible="2+", fields=[
    F("resources", "[]AlterConfigsResource", "0+", fields=[
        F("resourceType", "int8", "0+"),
        F("resourceName", "string", "0+"),
        F("configs", "[]AlterableConfig", "0+", fields=[
            F("name", "string", "0+"),
            F("value", "string", "0+", nullable="0+"),
        ]),
    ]),
    F("validateOnly", "bool", "0+"),
])

AlterConfigsResponse = Message("AlterConfigsResponse", valid="0-2", flexible="2+", fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("responses", "[]AlterConfigsResourceResponse", "0+",
      fields=_ALTER_CONFIGS_RESOURCE_RESPONSE),
])

IncrementalAlterConfigsRequest = Message("IncrementalAlterConfigsRequest", valid="0-1",
                                         flexible="1+", fields=[
    F("resources", "[]AlterConfigsResource", "0+", fields=[
        F("resourceType", "int8", "0+"),
        F("resourceName", "string", "0+"),
        F("configs", "[]AlterableConfig", "0+", fields=[
            F("name", "string", "0+"),
            F("configOperation", "int8", "0+"),
            F("value", "string", "0+", nullable="0+"),
        ]),
    ]),
    F("validateOnly", "bool", "0+"),
])

IncrementalAlterConfigsResponse = Message("IncrementalAlterConfigsResponse", valid="0-1",
                                          flexible="1+", fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("responses", "[]AlterConfigsResourceResponse", "0+",
      fields=_ALTER_CONFIGS_RESOURCE_RESPONSE),
])

DescribeClusterRequest = Message("DescribeClusterRequest", valid="0-1", flexible="0+", fields=[
    F("includeClusterAuthorizedOperations", "bool", "0+"),
    F("endpointType", "int8", "1+", default=1),
])

DescribeClusterResponse = Message("DescribeClusterResponse", valid="0-1", flexible="0+",
                                  fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("errorCode", "int16", "0+"),
    F("errorMessage", "string", "0+", nullable="0+", default=None),
    F("endpointType", "int8", "1+", default=1),
    F("clusterId", "string", "0+"),
    F("controllerId", "int32", "0+", default=-1),
    F("brokers", "[]DescribeClusterBroker", "0+", fields=[
        F("brokerId", "int32", "0+"),
        F("host", "string", "0+"),
        F("port", "int32", "0+"),
        F("rack", "string", "0+", nullable="0+", default=None),
    ]),
    F("clusterAuthorizedOperations", "int32", "0+", default=-2147483648),
])

DescribeLogDirsRequest = Message("DescribeLogDirsRequest", valid="0-4", flexible="2+", fields=[
    F("topics", "[]DescribableLogDirTopic", "0+", nullable="0+", fields=[
        F("topic", "string", "0+"),
        F("partitions", "[]int32", "0+"),
    ]),
])

DescribeLogDirsResponse = Message("DescribeLogDirsResponse", valid="0-4", flexible="2+",
                                  fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("errorCode", "int16", "3+"),
    F("results", "[]DescribeLogDirsResult", "0+", fields=[
        F("errorCode", "int16", "0+"),
        F("logDir", "string", "0+"),
        F("topics", "[]DescribeLogDirsTopic", "0+", fields=[
            F("name", "string", "0+"),
            F("partitions", "[]DescribeLogDirsPartition", "0+", fields=[
                F("partitionIndex", "int32", "0+"),
                F("partitionSize", "int64", "0+"),
                F("offsetLag", "int64", "0+"),
                F("isFutureKey", "bool", "0+"),
            ]),
        ]),
        F("totalBytes", "int64", "4+", default=-1),
        F("usableBytes", "int64", "4+", default=-1),
    ]),
])

DeleteRecordsRequest = Message("DeleteRecordsRequest", valid="0-2", flexible="2+", fields=[
    F("topics", "[]DeleteRecordsTopic", "0+", fields=[
        F("name", "string", "0+"),
        F("partitions", "[]DeleteRecordsPartition", "0+", fields=[
            F("partitionIndex", "int32", "0+"),
            F("offset", "int64", "0+"),
        ]),
    ]),
    F("timeoutMs", "int32", "0+"),
])

DeleteRecordsResponse = Message("DeleteRecordsResponse", valid="0-2", flexible="2+", fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("topics", "[]DeleteRecordsTopicResult", "0+", fields=[
        F("name", "string", "0+"),
        F("partitions", "[]DeleteRecordsPartitionResult", "0+", fields=[
            F("partitionIndex", "int32", "0+"),
            F("lowWatermark", "int64", "0+"),
            F("errorCode", "int16", "0+"),
        ]),
    ]),
])

# -- group admin: ListGroups (16), DescribeGroups (15), DeleteGroups (42),
# OffsetDelete (47) ----------------------------------------------------------------------

ListGroupsRequest = Message("ListGroupsRequest", valid="0-5", flexible="3+", fields=[
    F("statesFilter", "[]string", "4+"),
    F("typesFilter", "[]string", "5+"),
])

ListGroupsResponse = Message("ListGroupsResponse", valid="0-5", flexible="3+", fields=[
    F("throttleTimeMs", "int32", "1+"),
    F("errorCode", "int16", "0+"),
    F("groups", "[]ListedGroup", "0+", fields=[
        F("groupId", "string", "0+"),
        F("protocolType", "string", "0+"),
        F("groupState", "string", "4+"),
        F("groupType", "string", "5+"),
    ]),
])

DescribeGroupsRequest = Message("DescribeGroupsRequest", valid="0-5", flexible="5+", fields=[
    F("groups", "[]string", "0+"),
    F("includeAuthorizedOperations", "bool", "3+"),
])

DescribeGroupsResponse = Message("DescribeGroupsResponse", valid="0-5", flexible="5+", fields=[
    F("throttleTimeMs", "int32", "1+"),
    F("groups", "[]DescribedGroup", "0+", fields=[
        F("errorCode", "int16", "0+"),
        F("groupId", "string", "0+"),
        F("groupState", "string", "0+"),
        F("protocolType", "string", "0+"),
        F("protocolData", "string", "0+"),
        F("members", "[]DescribedGroupMember", "0+", fields=[
            F("memberId", "string", "0+"),
            F("groupInstanceId", "string", "4+", nullable="4+", default=None),
            F("clientId", "string", "0+"),
            F("clientHost", "string", "0+"),
            F("memberMetadata", "bytes", "0+"),
            F("memberAssignment", "bytes", "0+"),
        ]),
        F("authorizedOperations", "int32", "3+", default=-2147483648),
    ]),
])

DeleteGroupsRequest = Message("DeleteGroupsRequest", valid="0-2", flexible="2+", fields=[
    F("groupsNames", "[]string", "0+"),
])

DeleteGroupsResponse = Message("DeleteGroupsResponse", valid="0-2", flexible="2+", fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("results", "[]DeletableGroupResult", "0+", fields=[
        F("groupId", "string", "0+"),
        F("errorCode", "int16", "0+"),
    ]),
])

OffsetDeleteRequest = Message("OffsetDeleteRequest", valid="0", flexible="none", fields=[
    F("groupId", "string", "0+"),
    F("topics", "[]OffsetDeleteRequestTopic", "0+", fields=[
        F("name", "string", "0+"),
        F("partitions", "[]OffsetDeleteRequestPartition", "0+", fields=[
            F("partitionIndex", "int32", "0+"),
        ]),
    ]),
])

OffsetDeleteResponse = Message("OffsetDeleteResponse", valid="0", flexible="none", fields=[
    F("errorCode", "int16", "0+"),
    F("throttleTimeMs", "int32", "0+"),
    F("topics", "[]OffsetDeleteResponseTopic", "0+", fields=[
        F("name", "string", "0+"),
        F("partitions", "[]OffsetDeleteResponsePartition", "0+", fields=[
            F("partitionIndex", "int32", "0+"),
            F("errorCode", "int16", "0+"),
        ]),
    ]),
])

# -- transactions (keys 24, 25, 26, 28, 65, 66) ------------------------------------------------

_TXN_TOPIC = [
    F("name", "string", "0+"),
    F("partitions", "[]int32", "0+"),
]
_TXN_TOPIC_RESULT = [
    F("name", "string", "0+"),
    F("resultsByPartition", "[]AddPartitionsToTxnPartitionResult", "0+", fields=[
        F("partitionIndex", "int32", "0+"),
        F("partitionErrorCode", "int16", "0+"),
    ]),
]

AddPartitionsToTxnRequest = Message("AddPartitionsToTxnRequest", valid="0-5", flexible="3+",
                                    fields=[
    F("transactions", "[]AddPartitionsToTxnTransaction", "4+", fields=[
        F("transactionalId", "string", "4+"),
        F("producerId", "int64", "4+"),
        F("producerEpoch", "int16", "4+"),
        F("verifyOnly", "bool", "4+", default=False),
        F("topics", "[]AddPartitionsToTxnTopic", "4+", fields=_TXN_TOPIC),
    ]),
    F("v3AndBelowTransactionalId", "string", "0-3"),
    F("v3AndBelowProducerId", "int64", "0-3"),
    F("v3AndBelowProducerEpoch", "int16", "0-3"),
    F("v3AndBelowTopics", "[]AddPartitionsToTxnTopic", "0-3", fields=_TXN_TOPIC),
])

AddPartitionsToTxnResponse = Message("AddPartitionsToTxnResponse", valid="0-5",
                                     flexible="3+", fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("errorCode", "int16", "4+"),
    F("resultsByTransaction", "[]AddPartitionsToTxnResult", "4+", fields=[
        F("transactionalId", "string", "4+"),
        F("topicResults", "[]AddPartitionsToTxnTopicResult", "4+", fields=_TXN_TOPIC_RESULT),
    ]),
    F("resultsByTopicV3AndBelow", "[]AddPartitionsToTxnTopicResult", "0-3",
      fields=_TXN_TOPIC_RESULT),
])

AddOffsetsToTxnRequest = Message("AddOffsetsToTxnRequest", valid="0-4", flexible="3+", fields=[
    F("transactionalId", "string", "0+"),
    F("producerId", "int64", "0+"),
    F("producerEpoch", "int16", "0+"),
    F("groupId", "string", "0+"),
])

AddOffsetsToTxnResponse = Message("AddOffsetsToTxnResponse", valid="0-4", flexible="3+",
                                  fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("errorCode", "int16", "0+"),
])

EndTxnRequest = Message("EndTxnRequest", valid="0-5", flexible="3+", fields=[
    F("transactionalId", "string", "0+"),
    F("producerId", "int64", "0+"),
    F("producerEpoch", "int16", "0+"),
    F("committed", "bool", "0+"),
])

EndTxnResponse = Message("EndTxnResponse", valid="0-5", flexible="3+", fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("errorCode", "int16", "0+"),
    F("producerId", "int64", "5+", default=-1),
    F("producerEpoch", "int16", "5+", default=-1),
])

TxnOffsetCommitRequest = Message("TxnOffsetCommitRequest", valid="0-4", flexible="3+", fields=[
    F("transactionalId", "string", "0+"),
    F("groupId", "string", "0+"),
    F("producerId", "int64", "0+"),
    F("producerEpoch", "int16", "0+"),
    F("generationId", "int32", "3+", default=-1),
    F("memberId", "string", "3+", default=""),
    F("groupInstanceId", "string", "3+", nullable="3+", default=None),
    F("topics", "[]TxnOffsetCommitRequestTopic", "0+", fields=[
        F("name", "string", "0+"),
        F("partitions", "[]TxnOffsetCommitRequestPartition", "0+", fields=[
            F("partitionIndex", "int32", "0+"),
            F("committedOffset", "int64", "0+"),
            F("committedLeaderEpoch", "int32", "2+", default=-1),
            F("committedMetadata", "string", "0+", nullable="0+"),
        ]),
    ]),
])

TxnOffsetCommitResponse = Message("TxnOffsetCommitResponse", valid="0-4", flexible="3+",
                                  fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("topics", "[]TxnOffsetCommitResponseTopic", "0+", fields=[
        F("name", "string", "0+"),
        F("partitions", "[]TxnOffsetCommitResponsePartition", "0+", fields=[
            F("partitionIndex", "int32", "0+"),
            F("errorCode", "int16", "0+"),
        ]),
    ]),
])

DescribeTransactionsRequest = Message("DescribeTransactionsRequest", valid="0", flexible="0+",
                                      fields=[
    F("transactionalIds", "[]string", "0+"),
])

DescribeTransactionsResponse = Message("DescribeTransactionsResponse", valid="0",
                                       flexible="0+", fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("transactionStates", "[]TransactionState", "0+", fields=[
        F("errorCode", "int16", "0+"),
        F("transactionalId", "string", "0+"),
        F("transactionState", "string", "0+"),
        F("transactionTimeoutMs", "int32", "0+"),
        F("transactionStartTimeMs", "int64", "0+"),
        F("producerId", "int64", "0+"),
        F("producerEpoch", "int16", "0+"),
        F("topics", "[]TopicData", "0+", fields=[
            F("topic", "string", "0+"),
            F("partitions", "[]int32", "0+"),
        ]),
    ]),
])

ListTransactionsRequest = Message("ListTransactionsRequest", valid="0-1", flexible="0+", fields=[
    F("stateFilters", "[]string", "0+"),
    F("producerIdFilters", "[]int64", "0+"),
    F("durationFilter", "int64", "1+", default=-1),
])

ListTransactionsResponse = Message("ListTransactionsResponse", valid="0-1", flexible="0+",
                                   fields=[
    F("throttleTimeMs", "int32", "0+"),
    F("errorCode", "int16", "0+"),
    F("unknownStateFilters", "[]string", "0+"),
    F("transactionStates", "[]TransactionState", "0+", fields=[
        F("transactionalId", "string", "0+"),
        F("producerId", "int64", "0+"),
        F("transactionState", "string", "0+"),
    ]),
])

# -- headers ---------------------------------------------------------------------------------

#: RequestHeader v0-v2. ``clientId`` has flexibleVersions "none" in Kafka's JSON (an int16
#: string even in v2), so the declaration is never flexible and :mod:`.headers` reads the
#: v2 tagged-field section after it.
RequestHeader = Message("RequestHeader", valid="0-2", flexible="none", fields=[
    F("requestApiKey", "int16", "0+"),
    F("requestApiVersion", "int16", "0+"),
    F("correlationId", "int32", "0+"),
    F("clientId", "string", "1+", nullable="1+"),
])

ResponseHeader = Message("ResponseHeader", valid="0-1", flexible="1+", fields=[
    F("correlationId", "int32", "0+"),
])
