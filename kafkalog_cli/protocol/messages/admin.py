"""The cluster's metadata and administration requests (Kafka's ``ControllerApis``,
``ConfigAdminManager``, ``DescribeTopicPartitionsRequestHandler``): Metadata, CreateTopics,
DeleteTopics, CreatePartitions, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs,
DescribeCluster, DescribeLogDirs, DescribeTopicPartitions, ListPartitionReassignments and
DescribeClientQuotas - Kafka's generated ``MetadataRequestData`` / ``MetadataResponseData``,
``CreateTopicsRequestData``, ... and their responses.

Declared with the DSL of :mod:`kafkalog_cli.schema.messages` as
:mod:`kafkalog_cli.protocol.messages` says.
"""

from __future__ import annotations

from ...schema.messages import Message, fields

# -- Metadata (key 3) -------------------------------------------------------------------------

MetadataRequest = Message("MetadataRequest", valid="0-13", flexible="9+", fields=fields("""
    topics                              []MetadataRequestTopic  0+    nullable=1+
      topicId                           uuid                    10+
      name                              string                  0+    nullable=10+
    allowAutoTopicCreation              bool                    4+    default=true
    includeClusterAuthorizedOperations  bool                    8-10
    includeTopicAuthorizedOperations    bool                    8+
"""))

MetadataResponse = Message("MetadataResponse", valid="0-13", flexible="9+", fields=fields("""
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
    errorCode                    int16                        13+
"""))

# -- CreateTopics (key 19) --------------------------------------------------------------------

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

# -- DeleteTopics (key 20) --------------------------------------------------------------------

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

# -- CreatePartitions (key 37) ----------------------------------------------------------------

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

# -- DescribeConfigs (key 32) -----------------------------------------------------------------

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

# -- AlterConfigs (key 33) --------------------------------------------------------------------

AlterConfigsRequest = Message("AlterConfigsRequest", valid="0-2", flexible="2+", fields=fields("""
    resources       []AlterConfigsResource  0+
      resourceType  int8                    0+
      resourceName  string                  0+
      configs       []AlterableConfig       0+
        name        string                  0+
        value       string                  0+  nullable=0+
    validateOnly    bool                    0+
"""))

_ALTER_CONFIGS_RESOURCE_RESPONSE = fields("""
    errorCode     int16   0+
    errorMessage  string  0+  nullable=0+
    resourceType  int8    0+
    resourceName  string  0+
""")

AlterConfigsResponse = Message("AlterConfigsResponse", valid="0-2", flexible="2+", fields=fields("""
    throttleTimeMs  int32                           0+
    responses       []AlterConfigsResourceResponse  0+
""", AlterConfigsResourceResponse=_ALTER_CONFIGS_RESOURCE_RESPONSE))

# -- IncrementalAlterConfigs (key 44) ---------------------------------------------------------

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

# -- DescribeCluster (key 60) -----------------------------------------------------------------

DescribeClusterRequest = Message("DescribeClusterRequest", valid="0-2", flexible="0+", fields=fields("""
    includeClusterAuthorizedOperations  bool  0+
    endpointType                        int8  1+  default=1
    includeFencedBrokers                bool  2+
"""))

DescribeClusterResponse = Message("DescribeClusterResponse", valid="0-2", flexible="0+",
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
      isFenced                   bool                     2+
    clusterAuthorizedOperations  int32                    0+  default=-2147483648
"""))

# -- DescribeLogDirs (key 35) -----------------------------------------------------------------

DescribeLogDirsRequest = Message("DescribeLogDirsRequest", valid="0-5", flexible="2+", fields=fields("""
    topics        []DescribableLogDirTopic  0+  nullable=0+
      topic       string                    0+
      partitions  []int32                   0+
"""))

DescribeLogDirsResponse = Message("DescribeLogDirsResponse", valid="0-5", flexible="2+",
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
      isCordoned          bool                        5+  default=false
"""))

# -- DescribeTopicPartitions (key 75) ---------------------------------------------------------

DescribeTopicPartitionsRequest = Message("DescribeTopicPartitionsRequest", valid="0",
                                         flexible="0+", fields=fields("""
    topics                  []TopicRequest  0+
      name                  string          0+
    responsePartitionLimit  int32           0+  default=2000
    cursor                  Cursor          0+  nullable=0+ default=null
      topicName             string          0+
      partitionIndex        int32           0+
"""))

DescribeTopicPartitionsResponse = Message("DescribeTopicPartitionsResponse", valid="0",
                                          flexible="0+", fields=fields("""
    throttleTimeMs               int32                                       0+
    topics                       []DescribeTopicPartitionsResponseTopic      0+
      errorCode                  int16                                       0+
      name                       string                                      0+  nullable=0+
      topicId                    uuid                                        0+
      isInternal                 bool                                        0+  default=false
      partitions                 []DescribeTopicPartitionsResponsePartition  0+
        errorCode                int16                                       0+
        partitionIndex           int32                                       0+
        leaderId                 int32                                       0+
        leaderEpoch              int32                                       0+  default=-1
        replicaNodes             []int32                                     0+
        isrNodes                 []int32                                     0+
        eligibleLeaderReplicas   []int32                                     0+  nullable=0+ default=null
        lastKnownElr             []int32                                     0+  nullable=0+ default=null
        offlineReplicas          []int32                                     0+
      topicAuthorizedOperations  int32                                       0+  default=-2147483648
    nextCursor                   Cursor                                      0+  nullable=0+ default=null
      topicName                  string                                      0+
      partitionIndex             int32                                       0+
"""))

# -- ListPartitionReassignments (key 46) ------------------------------------------------------

ListPartitionReassignmentsRequest = Message("ListPartitionReassignmentsRequest", valid="0",
                                            flexible="0+", fields=fields("""
    timeoutMs           int32                               0+  default=60000
    topics              []ListPartitionReassignmentsTopics  0+  nullable=0+ default=null
      name              string                              0+
      partitionIndexes  []int32                             0+
"""))

ListPartitionReassignmentsResponse = Message("ListPartitionReassignmentsResponse", valid="0",
                                             flexible="0+", fields=fields("""
    throttleTimeMs        int32                           0+
    errorCode             int16                           0+
    errorMessage          string                          0+  nullable=0+
    topics                []OngoingTopicReassignment      0+
      name                string                          0+
      partitions          []OngoingPartitionReassignment  0+
        partitionIndex    int32                           0+
        replicas          []int32                         0+
        addingReplicas    []int32                         0+
        removingReplicas  []int32                         0+
"""))

# -- DescribeClientQuotas (key 48) ------------------------------------------------------------

DescribeClientQuotasRequest = Message("DescribeClientQuotasRequest", valid="0-1", flexible="1+",
                                      fields=fields("""
    components    []ComponentData  0+
      entityType  string           0+
      matchType   int8             0+
      match       string           0+  nullable=0+
    strict        bool             0+
"""))

DescribeClientQuotasResponse = Message("DescribeClientQuotasResponse", valid="0-1",
                                       flexible="1+", fields=fields("""
    throttleTimeMs  int32         0+
    errorCode       int16         0+
    errorMessage    string        0+  nullable=0+
    entries         []EntryData   0+  nullable=0+
      entity        []EntityData  0+
        entityType  string        0+
        entityName  string        0+  nullable=0+
      values        []ValueData   0+
        key         string        0+
        value       float64       0+
"""))

