"""The request and response messages ``kafkalog serve`` speaks, declared once with the
message DSL of :mod:`kafkalog_cli.schema.messages` (construct, compiled per version):
each message's fields as a table, one line a field (``name type versions
[attributes]``, structs' fields indented under them; :func:`~kafkalog_cli.schema.
messages.fields`), as Kafka's protocol documentation lists them.

Each declaration follows Kafka's JSON definition of the message
(``clients/src/main/resources/common/message/<Name>.json``): the same fields, versions,
nullable and tagged versions and defaults, for the whole range Kafka defines, whether or
not the server advertises every version (the served ranges are in :mod:`.apis`). Field
names are Kafka's camelCase names. The ``records`` type is the DSL's (bytes / compact
bytes holding record batches).
"""

from __future__ import annotations

from ..schema.messages import Message, fields

# -- ApiVersions (key 18) ------------------------------------------------------------------

ApiVersionsRequest = Message("ApiVersionsRequest", valid="0-4", flexible="3+", fields=fields("""
    clientSoftwareName     string  3+
    clientSoftwareVersion  string  3+
"""))

ApiVersionsResponse = Message("ApiVersionsResponse", valid="0-4", flexible="3+", fields=fields("""
    errorCode               int16                  0+
    apiKeys                 []ApiVersion           0+
      apiKey                int16                  0+
      minVersion            int16                  0+
      maxVersion            int16                  0+
    throttleTimeMs          int32                  1+
    supportedFeatures       []SupportedFeatureKey  3+  tagged=3+ tag=0
      name                  string                 3+
      minVersion            int16                  3+
      maxVersion            int16                  3+
    finalizedFeaturesEpoch  int64                  3+  tagged=3+ tag=1 default=-1
    finalizedFeatures       []FinalizedFeatureKey  3+  tagged=3+ tag=2
      name                  string                 3+
      maxVersionLevel       int16                  3+
      minVersionLevel       int16                  3+
    zkMigrationReady        bool                   3+  tagged=3+ tag=3 default=false
"""))

# -- Produce (key 0) -------------------------------------------------------------------------

ProduceRequest = Message("ProduceRequest", valid="0-11", flexible="9+", fields=fields("""
    transactionalId  string                  3+  nullable=3+ default=null
    acks             int16                   0+
    timeoutMs        int32                   0+
    topicData        []TopicProduceData      0+
      name           string                  0+
      partitionData  []PartitionProduceData  0+
        index        int32                   0+
        records      records                 0+  nullable=0+
"""))

_LEADER_ID_AND_EPOCH = fields("""
    leaderId     int32  0+  default=-1
    leaderEpoch  int32  0+  default=-1
""")

_NODE_ENDPOINT = fields("""
    nodeId  int32   0+
    host    string  0+
    port    int32   0+
    rack    string  0+  nullable=0+ default=null
""")

ProduceResponse = Message("ProduceResponse", valid="0-11", flexible="9+", fields=fields("""
    responses                     []TopicProduceResponse       0+
      name                        string                       0+
      partitionResponses          []PartitionProduceResponse   0+
        index                     int32                        0+
        errorCode                 int16                        0+
        baseOffset                int64                        0+
        logAppendTimeMs           int64                        2+   default=-1
        logStartOffset            int64                        5+   default=-1
        recordErrors              []BatchIndexAndErrorMessage  8+
          batchIndex              int32                        8+
          batchIndexErrorMessage  string                       8+   nullable=8+ default=null
        errorMessage              string                       8+   nullable=8+ default=null
        currentLeader             LeaderIdAndEpoch             10+  tagged=10+ tag=0
    throttleTimeMs                int32                        1+   default=0
    nodeEndpoints                 []NodeEndpoint               10+  tagged=10+ tag=0
""", LeaderIdAndEpoch=_LEADER_ID_AND_EPOCH, NodeEndpoint=_NODE_ENDPOINT))

# -- Fetch (key 1) ---------------------------------------------------------------------------

FetchRequest = Message("FetchRequest", valid="0-17", flexible="12+", fields=fields("""
    clusterId               string            12+   nullable=12+ default=null tagged=12+ tag=0
    replicaId               int32             0-14  default=-1
    replicaState            ReplicaState      15+   tagged=15+ tag=1
      replicaId             int32             15+   default=-1
      replicaEpoch          int64             15+   default=-1
    maxWaitMs               int32             0+
    minBytes                int32             0+
    maxBytes                int32             3+    default=0x7FFFFFFF
    isolationLevel          int8              4+    default=0
    sessionId               int32             7+    default=0
    sessionEpoch            int32             7+    default=-1
    topics                  []FetchTopic      0+
      topic                 string            0-12
      topicId               uuid              13+
      partitions            []FetchPartition  0+
        partition           int32             0+
        currentLeaderEpoch  int32             9+    default=-1
        fetchOffset         int64             0+
        lastFetchedEpoch    int32             12+   default=-1
        logStartOffset      int64             5+    default=-1
        partitionMaxBytes   int32             0+
        replicaDirectoryId  uuid              17+   tagged=17+ tag=0
    forgottenTopicsData     []ForgottenTopic  7+
      topic                 string            7-12
      topicId               uuid              13+
      partitions            []int32           7+
    rackId                  string            11+   default=""
"""))

FetchResponse = Message("FetchResponse", valid="0-17", flexible="12+", fields=fields("""
    throttleTimeMs            int32                     1+
    errorCode                 int16                     7+
    sessionId                 int32                     7+    default=0
    responses                 []FetchableTopicResponse  0+
      topic                   string                    0-12
      topicId                 uuid                      13+
      partitions              []PartitionData           0+
        partitionIndex        int32                     0+
        errorCode             int16                     0+
        highWatermark         int64                     0+
        lastStableOffset      int64                     4+    default=-1
        logStartOffset        int64                     5+    default=-1
        divergingEpoch        EpochEndOffset            12+   tagged=12+ tag=0
          epoch               int32                     12+   default=-1
          endOffset           int64                     12+   default=-1
        currentLeader         LeaderIdAndEpoch          12+   tagged=12+ tag=1
        snapshotId            SnapshotId                12+   tagged=12+ tag=2
          endOffset           int64                     0+    default=-1
          epoch               int32                     0+    default=-1
        abortedTransactions   []AbortedTransaction      4+    nullable=4+
          producerId          int64                     4+
          firstOffset         int64                     4+
        preferredReadReplica  int32                     11+   default=-1
        records               records                   0+    nullable=0+
    nodeEndpoints             []NodeEndpoint            16+   tagged=16+ tag=0
""", LeaderIdAndEpoch=_LEADER_ID_AND_EPOCH, NodeEndpoint=_NODE_ENDPOINT))

# -- ListOffsets (key 2) ---------------------------------------------------------------------

ListOffsetsRequest = Message("ListOffsetsRequest", valid="0-10", flexible="6+", fields=fields("""
    replicaId               int32                   0+
    isolationLevel          int8                    2+
    topics                  []ListOffsetsTopic      0+
      name                  string                  0+
      partitions            []ListOffsetsPartition  0+
        partitionIndex      int32                   0+
        currentLeaderEpoch  int32                   4+   default=-1
        timestamp           int64                   0+
        maxNumOffsets       int32                   0    default=1
    timeoutMs               int32                   10+
"""))

ListOffsetsResponse = Message("ListOffsetsResponse", valid="0-10", flexible="6+", fields=fields("""
    throttleTimeMs       int32                           2+
    topics               []ListOffsetsTopicResponse      0+
      name               string                          0+
      partitions         []ListOffsetsPartitionResponse  0+
        partitionIndex   int32                           0+
        errorCode        int16                           0+
        oldStyleOffsets  []int64                         0
        timestamp        int64                           1+  default=-1
        offset           int64                           1+  default=-1
        leaderEpoch      int32                           4+  default=-1
"""))

# -- Metadata (key 3) ------------------------------------------------------------------------

MetadataRequest = Message("MetadataRequest", valid="0-12", flexible="9+", fields=fields("""
    topics                              []MetadataRequestTopic  0+    nullable=1+
      topicId                           uuid                    10+
      name                              string                  0+    nullable=10+
    allowAutoTopicCreation              bool                    4+    default=true
    includeClusterAuthorizedOperations  bool                    8-10
    includeTopicAuthorizedOperations    bool                    8+
"""))

MetadataResponse = Message("MetadataResponse", valid="0-12", flexible="9+", fields=fields("""
    throttleTimeMs               int32                        3+
    brokers                      []MetadataResponseBroker     0+
      nodeId                     int32                        0+
      host                       string                       0+
      port                       int32                        0+
      rack                       string                       1+    nullable=1+ default=null
    clusterId                    string                       2+    nullable=2+ default=null
    controllerId                 int32                        1+    default=-1
    topics                       []MetadataResponseTopic      0+
      errorCode                  int16                        0+
      name                       string                       0+    nullable=12+
      topicId                    uuid                         10+
      isInternal                 bool                         1+    default=false
      partitions                 []MetadataResponsePartition  0+
        errorCode                int16                        0+
        partitionIndex           int32                        0+
        leaderId                 int32                        0+
        leaderEpoch              int32                        7+    default=-1
        replicaNodes             []int32                      0+
        isrNodes                 []int32                      0+
        offlineReplicas          []int32                      5+
      topicAuthorizedOperations  int32                        8+    default=-2147483648
    clusterAuthorizedOperations  int32                        8-10  default=-2147483648
"""))

# -- InitProducerId (key 22) -----------------------------------------------------------------

InitProducerIdRequest = Message("InitProducerIdRequest", valid="0-5", flexible="2+", fields=fields("""
    transactionalId       string  0+  nullable=0+
    transactionTimeoutMs  int32   0+
    producerId            int64   3+  default=-1
    producerEpoch         int16   3+  default=-1
"""))

InitProducerIdResponse = Message("InitProducerIdResponse", valid="0-5", flexible="2+", fields=fields("""
    throttleTimeMs  int32  0+
    errorCode       int16  0+
    producerId      int64  0+  default=-1
    producerEpoch   int16  0+
"""))

# -- CreateTopics (key 19) -------------------------------------------------------------------

CreateTopicsRequest = Message("CreateTopicsRequest", valid="0-7", flexible="5+", fields=fields("""
    topics               []CreatableTopic              0+
      name               string                        0+
      numPartitions      int32                         0+
      replicationFactor  int16                         0+
      assignments        []CreatableReplicaAssignment  0+
        partitionIndex   int32                         0+
        brokerIds        []int32                       0+
      configs            []CreatableTopicConfig        0+
        name             string                        0+
        value            string                        0+  nullable=0+
    timeoutMs            int32                         0+  default=60000
    validateOnly         bool                          1+  default=false
"""))

CreateTopicsResponse = Message("CreateTopicsResponse", valid="0-7", flexible="5+", fields=fields("""
    throttleTimeMs          int32                    2+
    topics                  []CreatableTopicResult   0+
      name                  string                   0+
      topicId               uuid                     7+
      errorCode             int16                    0+
      errorMessage          string                   1+  nullable=0+
      topicConfigErrorCode  int16                    5+  tagged=5+ tag=0
      numPartitions         int32                    5+  default=-1
      replicationFactor     int16                    5+  default=-1
      configs               []CreatableTopicConfigs  5+  nullable=5+
        name                string                   5+
        value               string                   5+  nullable=5+
        readOnly            bool                     5+
        configSource        int8                     5+  default=-1
        isSensitive         bool                     5+
"""))

# -- DeleteTopics (key 20) -------------------------------------------------------------------

DeleteTopicsRequest = Message("DeleteTopicsRequest", valid="0-6", flexible="4+", fields=fields("""
    topics      []DeleteTopicState  6+
      name      string              6+   nullable=6+ default=null
      topicId   uuid                6+
    topicNames  []string            0-5
    timeoutMs   int32               0+
"""))

DeleteTopicsResponse = Message("DeleteTopicsResponse", valid="0-6", flexible="4+", fields=fields("""
    throttleTimeMs  int32                   1+
    responses       []DeletableTopicResult  0+
      name          string                  0+  nullable=6+
      topicId       uuid                    6+
      errorCode     int16                   0+
      errorMessage  string                  5+  nullable=5+ default=null
"""))

# -- DescribeConfigs (key 32) ----------------------------------------------------------------

DescribeConfigsRequest = Message("DescribeConfigsRequest", valid="0-4", flexible="4+", fields=fields("""
    resources             []DescribeConfigsResource  0+
      resourceType        int8                       0+
      resourceName        string                     0+
      configurationKeys   []string                   0+  nullable=0+
    includeSynonyms       bool                       1+  default=false
    includeDocumentation  bool                       3+  default=false
"""))

DescribeConfigsResponse = Message("DescribeConfigsResponse", valid="0-4", flexible="4+", fields=fields("""
    throttleTimeMs     int32                            0+
    results            []DescribeConfigsResult          0+
      errorCode        int16                            0+
      errorMessage     string                           0+  nullable=0+
      resourceType     int8                             0+
      resourceName     string                           0+
      configs          []DescribeConfigsResourceResult  0+
        name           string                           0+
        value          string                           0+  nullable=0+
        readOnly       bool                             0+
        isDefault      bool                             0
        configSource   int8                             1+  default=-1
        isSensitive    bool                             0+
        synonyms       []DescribeConfigsSynonym         1+
          name         string                           1+
          value        string                           1+  nullable=0+
          source       int8                             1+
        configType     int8                             3+  default=0
        documentation  string                           3+  nullable=0+
"""))

# -- consumer groups: FindCoordinator (10), JoinGroup (11), Heartbeat (12), LeaveGroup (13),
# SyncGroup (14), OffsetCommit (8), OffsetFetch (9) --------------------------------------

FindCoordinatorRequest = Message("FindCoordinatorRequest", valid="0-6", flexible="3+", fields=fields("""
    key              string    0-3
    keyType          int8      1+   default=0
    coordinatorKeys  []string  4+
"""))

FindCoordinatorResponse = Message("FindCoordinatorResponse", valid="0-6", flexible="3+",
                                  fields=fields("""
    throttleTimeMs  int32          1+
    errorCode       int16          0-3
    errorMessage    string         1-3  nullable=1-3 default=null
    nodeId          int32          0-3
    host            string         0-3
    port            int32          0-3
    coordinators    []Coordinator  4+
      key           string         4+
      nodeId        int32          4+
      host          string         4+
      port          int32          4+
      errorCode     int16          4+
      errorMessage  string         4+   nullable=4+ default=null
"""))

JoinGroupRequest = Message("JoinGroupRequest", valid="0-9", flexible="6+", fields=fields("""
    groupId             string                      0+
    sessionTimeoutMs    int32                       0+
    rebalanceTimeoutMs  int32                       1+  default=-1
    memberId            string                      0+
    groupInstanceId     string                      5+  nullable=5+ default=null
    protocolType        string                      0+
    protocols           []JoinGroupRequestProtocol  0+
      name              string                      0+
      metadata          bytes                       0+
    reason              string                      8+  nullable=8+ default=null
"""))

JoinGroupResponse = Message("JoinGroupResponse", valid="0-9", flexible="6+", fields=fields("""
    throttleTimeMs     int32                      2+
    errorCode          int16                      0+
    generationId       int32                      0+  default=-1
    protocolType       string                     7+  nullable=7+ default=null
    protocolName       string                     0+  nullable=7+
    leader             string                     0+
    skipAssignment     bool                       9+  default=false
    memberId           string                     0+
    members            []JoinGroupResponseMember  0+
      memberId         string                     0+
      groupInstanceId  string                     5+  nullable=5+ default=null
      metadata         bytes                      0+
"""))

HeartbeatRequest = Message("HeartbeatRequest", valid="0-4", flexible="4+", fields=fields("""
    groupId          string  0+
    generationId     int32   0+
    memberId         string  0+
    groupInstanceId  string  3+  nullable=3+ default=null
"""))

HeartbeatResponse = Message("HeartbeatResponse", valid="0-4", flexible="4+", fields=fields("""
    throttleTimeMs  int32  1+
    errorCode       int16  0+
"""))

LeaveGroupRequest = Message("LeaveGroupRequest", valid="0-5", flexible="4+", fields=fields("""
    groupId            string            0+
    memberId           string            0-2
    members            []MemberIdentity  3+
      memberId         string            3+
      groupInstanceId  string            3+   nullable=3+ default=null
      reason           string            5+   nullable=5+ default=null
"""))

LeaveGroupResponse = Message("LeaveGroupResponse", valid="0-5", flexible="4+", fields=fields("""
    throttleTimeMs     int32             1+
    errorCode          int16             0+
    members            []MemberResponse  3+
      memberId         string            3+
      groupInstanceId  string            3+  nullable=3+
      errorCode        int16             3+
"""))

SyncGroupRequest = Message("SyncGroupRequest", valid="0-5", flexible="4+", fields=fields("""
    groupId          string                        0+
    generationId     int32                         0+
    memberId         string                        0+
    groupInstanceId  string                        3+  nullable=3+ default=null
    protocolType     string                        5+  nullable=5+ default=null
    protocolName     string                        5+  nullable=5+ default=null
    assignments      []SyncGroupRequestAssignment  0+
      memberId       string                        0+
      assignment     bytes                         0+
"""))

SyncGroupResponse = Message("SyncGroupResponse", valid="0-5", flexible="4+", fields=fields("""
    throttleTimeMs  int32   1+
    errorCode       int16   0+
    protocolType    string  5+  nullable=5+ default=null
    protocolName    string  5+  nullable=5+ default=null
    assignment      bytes   0+
"""))

OffsetCommitRequest = Message("OffsetCommitRequest", valid="0-9", flexible="8+", fields=fields("""
    groupId                    string                          0+
    generationIdOrMemberEpoch  int32                           1+   default=-1
    memberId                   string                          1+
    groupInstanceId            string                          7+   nullable=7+ default=null
    retentionTimeMs            int64                           2-4  default=-1
    topics                     []OffsetCommitRequestTopic      0+
      name                     string                          0+
      partitions               []OffsetCommitRequestPartition  0+
        partitionIndex         int32                           0+
        committedOffset        int64                           0+
        committedLeaderEpoch   int32                           6+   default=-1
        commitTimestamp        int64                           1    default=-1
        committedMetadata      string                          0+   nullable=0+
"""))

OffsetCommitResponse = Message("OffsetCommitResponse", valid="0-9", flexible="8+", fields=fields("""
    throttleTimeMs      int32                            3+
    topics              []OffsetCommitResponseTopic      0+
      name              string                           0+
      partitions        []OffsetCommitResponsePartition  0+
        partitionIndex  int32                            0+
        errorCode       int16                            0+
"""))

_OFFSET_FETCH_PARTITION = fields("""
    partitionIndex        int32   0+
    committedOffset       int64   0+
    committedLeaderEpoch  int32   5+  default=-1
    metadata              string  0+  nullable=0+
    errorCode             int16   0+
""")

OffsetFetchRequest = Message("OffsetFetchRequest", valid="0-9", flexible="6+", fields=fields("""
    groupId               string                      0-7
    topics                []OffsetFetchRequestTopic   0-7  nullable=2-7
      name                string                      0-7
      partitionIndexes    []int32                     0-7
    groups                []OffsetFetchRequestGroup   8+
      groupId             string                      8+
      memberId            string                      9+   nullable=9+ default=null
      memberEpoch         int32                       9+   default=-1
      topics              []OffsetFetchRequestTopics  8+   nullable=8+
        name              string                      8+
        partitionIndexes  []int32                     8+
    requireStable         bool                        7+   default=false
"""))

OffsetFetchResponse = Message("OffsetFetchResponse", valid="0-9", flexible="6+", fields=fields("""
    throttleTimeMs  int32                            3+
    topics          []OffsetFetchResponseTopic       0-7
      name          string                           0-7
      partitions    []OffsetFetchResponsePartition   0-7
    errorCode       int16                            2-7  default=0
    groups          []OffsetFetchResponseGroup       8+
      groupId       string                           8+
      topics        []OffsetFetchResponseTopics      8+
        name        string                           8+
        partitions  []OffsetFetchResponsePartitions  8+
      errorCode     int16                            8+   default=0
""", OffsetFetchResponsePartition=_OFFSET_FETCH_PARTITION, OffsetFetchResponsePartitions=_OFFSET_FETCH_PARTITION))

# -- admin: CreatePartitions (37), AlterConfigs (33), IncrementalAlterConfigs (44),
# DescribeCluster (60), DescribeLogDirs (35), DeleteRecords (21) --------------------------

CreatePartitionsRequest = Message("CreatePartitionsRequest", valid="0-3", flexible="2+",
                                  fields=fields("""
    topics         []CreatePartitionsTopic       0+
      name         string                        0+
      count        int32                         0+
      assignments  []CreatePartitionsAssignment  0+  nullable=0+
        brokerIds  []int32                       0+
    timeoutMs      int32                         0+
    validateOnly   bool                          0+
"""))

CreatePartitionsResponse = Message("CreatePartitionsResponse", valid="0-3", flexible="2+",
                                   fields=fields("""
    throttleTimeMs  int32                          0+
    results         []CreatePartitionsTopicResult  0+
      name          string                         0+
      errorCode     int16                          0+
      errorMessage  string                         0+  nullable=0+ default=null
"""))

_ALTER_CONFIGS_RESOURCE_RESPONSE = fields("""
    errorCode     int16   0+
    errorMessage  string  0+  nullable=0+
    resourceType  int8    0+
    resourceName  string  0+
""")

AlterConfigsRequest = Message("AlterConfigsRequest", valid="0-2", flexible="2+", fields=fields("""
    resources       []AlterConfigsResource  0+
      resourceType  int8                    0+
      resourceName  string                  0+
      configs       []AlterableConfig       0+
        name        string                  0+
        value       string                  0+  nullable=0+
    validateOnly    bool                    0+
"""))

AlterConfigsResponse = Message("AlterConfigsResponse", valid="0-2", flexible="2+", fields=fields("""
    throttleTimeMs  int32                           0+
    responses       []AlterConfigsResourceResponse  0+
""", AlterConfigsResourceResponse=_ALTER_CONFIGS_RESOURCE_RESPONSE))

IncrementalAlterConfigsRequest = Message("IncrementalAlterConfigsRequest", valid="0-1",
                                         flexible="1+", fields=fields("""
    resources            []AlterConfigsResource  0+
      resourceType       int8                    0+
      resourceName       string                  0+
      configs            []AlterableConfig       0+
        name             string                  0+
        configOperation  int8                    0+
        value            string                  0+  nullable=0+
    validateOnly         bool                    0+
"""))

IncrementalAlterConfigsResponse = Message("IncrementalAlterConfigsResponse", valid="0-1",
                                          flexible="1+", fields=fields("""
    throttleTimeMs  int32                           0+
    responses       []AlterConfigsResourceResponse  0+
""", AlterConfigsResourceResponse=_ALTER_CONFIGS_RESOURCE_RESPONSE))

DescribeClusterRequest = Message("DescribeClusterRequest", valid="0-1", flexible="0+", fields=fields("""
    includeClusterAuthorizedOperations  bool  0+
    endpointType                        int8  1+  default=1
"""))

DescribeClusterResponse = Message("DescribeClusterResponse", valid="0-1", flexible="0+",
                                  fields=fields("""
    throttleTimeMs               int32                    0+
    errorCode                    int16                    0+
    errorMessage                 string                   0+  nullable=0+ default=null
    endpointType                 int8                     1+  default=1
    clusterId                    string                   0+
    controllerId                 int32                    0+  default=-1
    brokers                      []DescribeClusterBroker  0+
      brokerId                   int32                    0+
      host                       string                   0+
      port                       int32                    0+
      rack                       string                   0+  nullable=0+ default=null
    clusterAuthorizedOperations  int32                    0+  default=-2147483648
"""))

DescribeLogDirsRequest = Message("DescribeLogDirsRequest", valid="0-4", flexible="2+", fields=fields("""
    topics        []DescribableLogDirTopic  0+  nullable=0+
      topic       string                    0+
      partitions  []int32                   0+
"""))

DescribeLogDirsResponse = Message("DescribeLogDirsResponse", valid="0-4", flexible="2+",
                                  fields=fields("""
    throttleTimeMs        int32                       0+
    errorCode             int16                       3+
    results               []DescribeLogDirsResult     0+
      errorCode           int16                       0+
      logDir              string                      0+
      topics              []DescribeLogDirsTopic      0+
        name              string                      0+
        partitions        []DescribeLogDirsPartition  0+
          partitionIndex  int32                       0+
          partitionSize   int64                       0+
          offsetLag       int64                       0+
          isFutureKey     bool                        0+
      totalBytes          int64                       4+  default=-1
      usableBytes         int64                       4+  default=-1
"""))

DeleteRecordsRequest = Message("DeleteRecordsRequest", valid="0-2", flexible="2+", fields=fields("""
    topics              []DeleteRecordsTopic      0+
      name              string                    0+
      partitions        []DeleteRecordsPartition  0+
        partitionIndex  int32                     0+
        offset          int64                     0+
    timeoutMs           int32                     0+
"""))

DeleteRecordsResponse = Message("DeleteRecordsResponse", valid="0-2", flexible="2+", fields=fields("""
    throttleTimeMs      int32                           0+
    topics              []DeleteRecordsTopicResult      0+
      name              string                          0+
      partitions        []DeleteRecordsPartitionResult  0+
        partitionIndex  int32                           0+
        lowWatermark    int64                           0+
        errorCode       int16                           0+
"""))

# -- group admin: ListGroups (16), DescribeGroups (15), DeleteGroups (42),
# OffsetDelete (47) ----------------------------------------------------------------------

ListGroupsRequest = Message("ListGroupsRequest", valid="0-5", flexible="3+", fields=fields("""
    statesFilter  []string  4+
    typesFilter   []string  5+
"""))

ListGroupsResponse = Message("ListGroupsResponse", valid="0-5", flexible="3+", fields=fields("""
    throttleTimeMs  int32          1+
    errorCode       int16          0+
    groups          []ListedGroup  0+
      groupId       string         0+
      protocolType  string         0+
      groupState    string         4+
      groupType     string         5+
"""))

DescribeGroupsRequest = Message("DescribeGroupsRequest", valid="0-5", flexible="5+", fields=fields("""
    groups                       []string  0+
    includeAuthorizedOperations  bool      3+
"""))

DescribeGroupsResponse = Message("DescribeGroupsResponse", valid="0-5", flexible="5+", fields=fields("""
    throttleTimeMs          int32                   1+
    groups                  []DescribedGroup        0+
      errorCode             int16                   0+
      groupId               string                  0+
      groupState            string                  0+
      protocolType          string                  0+
      protocolData          string                  0+
      members               []DescribedGroupMember  0+
        memberId            string                  0+
        groupInstanceId     string                  4+  nullable=4+ default=null
        clientId            string                  0+
        clientHost          string                  0+
        memberMetadata      bytes                   0+
        memberAssignment    bytes                   0+
      authorizedOperations  int32                   3+  default=-2147483648
"""))

DeleteGroupsRequest = Message("DeleteGroupsRequest", valid="0-2", flexible="2+", fields=fields("""
    groupsNames  []string  0+
"""))

DeleteGroupsResponse = Message("DeleteGroupsResponse", valid="0-2", flexible="2+", fields=fields("""
    throttleTimeMs  int32                   0+
    results         []DeletableGroupResult  0+
      groupId       string                  0+
      errorCode     int16                   0+
"""))

OffsetDeleteRequest = Message("OffsetDeleteRequest", valid="0", flexible="none", fields=fields("""
    groupId             string                          0+
    topics              []OffsetDeleteRequestTopic      0+
      name              string                          0+
      partitions        []OffsetDeleteRequestPartition  0+
        partitionIndex  int32                           0+
"""))

OffsetDeleteResponse = Message("OffsetDeleteResponse", valid="0", flexible="none", fields=fields("""
    errorCode           int16                            0+
    throttleTimeMs      int32                            0+
    topics              []OffsetDeleteResponseTopic      0+
      name              string                           0+
      partitions        []OffsetDeleteResponsePartition  0+
        partitionIndex  int32                            0+
        errorCode       int16                            0+
"""))

# -- transactions (keys 24, 25, 26, 28, 65, 66) ------------------------------------------------

_TXN_TOPIC = fields("""
    name        string   0+
    partitions  []int32  0+
""")
_TXN_TOPIC_RESULT = fields("""
    name                  string                               0+
    resultsByPartition    []AddPartitionsToTxnPartitionResult  0+
      partitionIndex      int32                                0+
      partitionErrorCode  int16                                0+
""")

AddPartitionsToTxnRequest = Message("AddPartitionsToTxnRequest", valid="0-5", flexible="3+",
                                    fields=fields("""
    transactions               []AddPartitionsToTxnTransaction  4+
      transactionalId          string                           4+
      producerId               int64                            4+
      producerEpoch            int16                            4+
      verifyOnly               bool                             4+   default=false
      topics                   []AddPartitionsToTxnTopic        4+
    v3AndBelowTransactionalId  string                           0-3
    v3AndBelowProducerId       int64                            0-3
    v3AndBelowProducerEpoch    int16                            0-3
    v3AndBelowTopics           []AddPartitionsToTxnTopic        0-3
""", AddPartitionsToTxnTopic=_TXN_TOPIC))

AddPartitionsToTxnResponse = Message("AddPartitionsToTxnResponse", valid="0-5",
                                     flexible="3+", fields=fields("""
    throttleTimeMs            int32                            0+
    errorCode                 int16                            4+
    resultsByTransaction      []AddPartitionsToTxnResult       4+
      transactionalId         string                           4+
      topicResults            []AddPartitionsToTxnTopicResult  4+
    resultsByTopicV3AndBelow  []AddPartitionsToTxnTopicResult  0-3
""", AddPartitionsToTxnTopicResult=_TXN_TOPIC_RESULT))

AddOffsetsToTxnRequest = Message("AddOffsetsToTxnRequest", valid="0-4", flexible="3+", fields=fields("""
    transactionalId  string  0+
    producerId       int64   0+
    producerEpoch    int16   0+
    groupId          string  0+
"""))

AddOffsetsToTxnResponse = Message("AddOffsetsToTxnResponse", valid="0-4", flexible="3+",
                                  fields=fields("""
    throttleTimeMs  int32  0+
    errorCode       int16  0+
"""))

EndTxnRequest = Message("EndTxnRequest", valid="0-5", flexible="3+", fields=fields("""
    transactionalId  string  0+
    producerId       int64   0+
    producerEpoch    int16   0+
    committed        bool    0+
"""))

EndTxnResponse = Message("EndTxnResponse", valid="0-5", flexible="3+", fields=fields("""
    throttleTimeMs  int32  0+
    errorCode       int16  0+
    producerId      int64  5+  default=-1
    producerEpoch   int16  5+  default=-1
"""))

TxnOffsetCommitRequest = Message("TxnOffsetCommitRequest", valid="0-4", flexible="3+", fields=fields("""
    transactionalId           string                             0+
    groupId                   string                             0+
    producerId                int64                              0+
    producerEpoch             int16                              0+
    generationId              int32                              3+  default=-1
    memberId                  string                             3+  default=""
    groupInstanceId           string                             3+  nullable=3+ default=null
    topics                    []TxnOffsetCommitRequestTopic      0+
      name                    string                             0+
      partitions              []TxnOffsetCommitRequestPartition  0+
        partitionIndex        int32                              0+
        committedOffset       int64                              0+
        committedLeaderEpoch  int32                              2+  default=-1
        committedMetadata     string                             0+  nullable=0+
"""))

TxnOffsetCommitResponse = Message("TxnOffsetCommitResponse", valid="0-4", flexible="3+",
                                  fields=fields("""
    throttleTimeMs      int32                               0+
    topics              []TxnOffsetCommitResponseTopic      0+
      name              string                              0+
      partitions        []TxnOffsetCommitResponsePartition  0+
        partitionIndex  int32                               0+
        errorCode       int16                               0+
"""))

DescribeTransactionsRequest = Message("DescribeTransactionsRequest", valid="0", flexible="0+",
                                      fields=fields("""
    transactionalIds  []string  0+
"""))

DescribeTransactionsResponse = Message("DescribeTransactionsResponse", valid="0",
                                       flexible="0+", fields=fields("""
    throttleTimeMs            int32               0+
    transactionStates         []TransactionState  0+
      errorCode               int16               0+
      transactionalId         string              0+
      transactionState        string              0+
      transactionTimeoutMs    int32               0+
      transactionStartTimeMs  int64               0+
      producerId              int64               0+
      producerEpoch           int16               0+
      topics                  []TopicData         0+
        topic                 string              0+
        partitions            []int32             0+
"""))

ListTransactionsRequest = Message("ListTransactionsRequest", valid="0-1", flexible="0+", fields=fields("""
    stateFilters       []string  0+
    producerIdFilters  []int64   0+
    durationFilter     int64     1+  default=-1
"""))

ListTransactionsResponse = Message("ListTransactionsResponse", valid="0-1", flexible="0+",
                                   fields=fields("""
    throttleTimeMs       int32               0+
    errorCode            int16               0+
    unknownStateFilters  []string            0+
    transactionStates    []TransactionState  0+
      transactionalId    string              0+
      producerId         int64               0+
      transactionState   string              0+
"""))

# -- headers ---------------------------------------------------------------------------------

#: RequestHeader v0-v2. ``clientId`` has flexibleVersions "none" in Kafka's JSON (an int16
#: string even in v2), so the declaration is never flexible and :mod:`.headers` reads the
#: v2 tagged-field section after it.
RequestHeader = Message("RequestHeader", valid="0-2", flexible="none", fields=fields("""
    requestApiKey      int16   0+
    requestApiVersion  int16   0+
    correlationId      int32   0+
    clientId           string  1+  nullable=1+
"""))

ResponseHeader = Message("ResponseHeader", valid="0-1", flexible="1+", fields=fields("""
    correlationId  int32  0+
"""))

# -- SaslHandshake (key 17), SaslAuthenticate (key 36) ----------------------------------------

SaslHandshakeRequest = Message("SaslHandshakeRequest", valid="0-1", flexible="none",
                               fields=fields("""
    mechanism  string  0+
"""))

SaslHandshakeResponse = Message("SaslHandshakeResponse", valid="0-1", flexible="none",
                                fields=fields("""
    errorCode   int16     0+
    mechanisms  []string  0+
"""))

SaslAuthenticateRequest = Message("SaslAuthenticateRequest", valid="0-2", flexible="2+",
                                  fields=fields("""
    authBytes  bytes  0+
"""))

SaslAuthenticateResponse = Message("SaslAuthenticateResponse", valid="0-2", flexible="2+",
                                   fields=fields("""
    errorCode          int16   0+
    errorMessage       string  0+  nullable=0+
    authBytes          bytes   0+
    sessionLifetimeMs  int64   1+  default=0
"""))

# -- DescribeAcls (key 29), CreateAcls (key 30), DeleteAcls (key 31) ----------------------------

DescribeAclsRequest = Message("DescribeAclsRequest", valid="0-3", flexible="2+", fields=fields("""
    resourceTypeFilter  int8    0+
    resourceNameFilter  string  0+  nullable=0+
    patternTypeFilter   int8    1+  default=3
    principalFilter     string  0+  nullable=0+
    hostFilter          string  0+  nullable=0+
    operation           int8    0+
    permissionType      int8    0+
"""))

DescribeAclsResponse = Message("DescribeAclsResponse", valid="0-3", flexible="2+", fields=fields("""
    throttleTimeMs      int32                   0+
    errorCode           int16                   0+
    errorMessage        string                  0+  nullable=0+
    resources           []DescribeAclsResource  0+
      resourceType      int8                    0+
      resourceName      string                  0+
      patternType       int8                    1+  default=3
      acls              []AclDescription        0+
        principal       string                  0+
        host            string                  0+
        operation       int8                    0+
        permissionType  int8                    0+
"""))

CreateAclsRequest = Message("CreateAclsRequest", valid="0-3", flexible="2+", fields=fields("""
    creations              []AclCreation  0+
      resourceType         int8           0+
      resourceName         string         0+
      resourcePatternType  int8           1+  default=3
      principal            string         0+
      host                 string         0+
      operation            int8           0+
      permissionType       int8           0+
"""))

CreateAclsResponse = Message("CreateAclsResponse", valid="0-3", flexible="2+", fields=fields("""
    throttleTimeMs  int32                 0+
    results         []AclCreationResult   0+
      errorCode     int16                 0+
      errorMessage  string                0+  nullable=0+
"""))

DeleteAclsRequest = Message("DeleteAclsRequest", valid="0-3", flexible="2+", fields=fields("""
    filters               []DeleteAclsFilter  0+
      resourceTypeFilter  int8                0+
      resourceNameFilter  string              0+  nullable=0+
      patternTypeFilter   int8                1+  default=3
      principalFilter     string              0+  nullable=0+
      hostFilter          string              0+  nullable=0+
      operation           int8                0+
      permissionType      int8                0+
"""))

DeleteAclsResponse = Message("DeleteAclsResponse", valid="0-3", flexible="2+", fields=fields("""
    throttleTimeMs      int32                      0+
    filterResults       []DeleteAclsFilterResult   0+
      errorCode         int16                      0+
      errorMessage      string                     0+  nullable=0+
      matchingAcls      []DeleteAclsMatchingAcl    0+
        errorCode       int16                      0+
        errorMessage    string                     0+  nullable=0+
        resourceType    int8                       0+
        resourceName    string                     0+
        patternType     int8                       1+  default=3
        principal       string                     0+
        host            string                     0+
        operation       int8                       0+
        permissionType  int8                       0+
"""))

# -- DescribeUserScramCredentials (key 50), AlterUserScramCredentials (key 51) ------------------

DescribeUserScramCredentialsRequest = Message(
    "DescribeUserScramCredentialsRequest", valid="0", flexible="0+", fields=fields("""
    users   []UserName  0+  nullable=0+
      name  string      0+
"""))

DescribeUserScramCredentialsResponse = Message(
    "DescribeUserScramCredentialsResponse", valid="0", flexible="0+", fields=fields("""
    throttleTimeMs     int32                                 0+
    errorCode          int16                                 0+
    errorMessage       string                                0+  nullable=0+
    results            []DescribeUserScramCredentialsResult  0+
      user             string                                0+
      errorCode        int16                                 0+
      errorMessage     string                                0+  nullable=0+
      credentialInfos  []CredentialInfo                      0+
        mechanism      int8                                  0+
        iterations     int32                                 0+
"""))

AlterUserScramCredentialsRequest = Message(
    "AlterUserScramCredentialsRequest", valid="0", flexible="0+", fields=fields("""
    deletions         []ScramCredentialDeletion   0+
      name            string                      0+
      mechanism       int8                        0+
    upsertions        []ScramCredentialUpsertion  0+
      name            string                      0+
      mechanism       int8                        0+
      iterations      int32                       0+
      salt            bytes                       0+
      saltedPassword  bytes                       0+
"""))

AlterUserScramCredentialsResponse = Message(
    "AlterUserScramCredentialsResponse", valid="0", flexible="0+", fields=fields("""
    throttleTimeMs    int32                               0+
    results           []AlterUserScramCredentialsResult   0+
      user            string                              0+
      errorCode       int16                               0+
      errorMessage    string                              0+  nullable=0+
"""))
