"""The requests a partition's log answers (Kafka's ``ReplicaManager`` behind ``KafkaApis``):
Produce, Fetch, ListOffsets, DeleteRecords, OffsetForLeaderEpoch and DescribeProducers -
Kafka's generated ``ProduceRequestData`` / ``ProduceResponseData``, ``FetchRequestData``,
``ListOffsetsRequestData``, ``DeleteRecordsRequestData``, ``OffsetForLeaderEpochRequestData``,
``DescribeProducersRequestData`` and their responses.

Declared with the DSL of :mod:`kafkalog_cli.schema.messages` as
:mod:`kafkalog_cli.protocol.messages` says; Produce's usual shape also has a hand-written
codec, :mod:`kafkalog_cli.protocol.produce_codec`.
"""

from __future__ import annotations

from ...schema.messages import Message, fields

# -- Produce (key 0) --------------------------------------------------------------------------

ProduceRequest = Message("ProduceRequest", valid="0-13", flexible="9+", fields=fields("""
    transactionalId  string                  3+  nullable=3+ default=null
    acks             int16                   0+
    timeoutMs        int32                   0+
    topicData        []TopicProduceData      0+
      name           string                  0-12
      topicId        uuid                    13+
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

ProduceResponse = Message("ProduceResponse", valid="0-13", flexible="9+", fields=fields("""
    responses                     []TopicProduceResponse       0+
      name                        string                       0-12
      topicId                     uuid                         13+
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

# -- Fetch (key 1) ----------------------------------------------------------------------------

FetchRequest = Message("FetchRequest", valid="0-18", flexible="12+", fields=fields("""
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
        highWatermark       int64             18+   tagged=18+ tag=1 default=0x7FFFFFFFFFFFFFFF
    forgottenTopicsData     []ForgottenTopic  7+
      topic                 string            7-12
      topicId               uuid              13+
      partitions            []int32           7+
    rackId                  string            11+   default=""
"""))

FetchResponse = Message("FetchResponse", valid="0-18", flexible="12+", fields=fields("""
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

# -- ListOffsets (key 2) ----------------------------------------------------------------------

ListOffsetsRequest = Message("ListOffsetsRequest", valid="0-11", flexible="6+", fields=fields("""
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

ListOffsetsResponse = Message("ListOffsetsResponse", valid="0-11", flexible="6+", fields=fields("""
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

# -- DeleteRecords (key 21) -------------------------------------------------------------------

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

# -- OffsetForLeaderEpoch (key 23) ------------------------------------------------------------

OffsetForLeaderEpochRequest = Message("OffsetForLeaderEpochRequest", valid="0-4", flexible="4+",
                                      fields=fields("""
    replicaId               int32                       3+  default=-2
    topics                  []OffsetForLeaderTopic      0+
      topic                 string                      0+
      partitions            []OffsetForLeaderPartition  0+
        partition           int32                       0+
        currentLeaderEpoch  int32                       2+  default=-1
        leaderEpoch         int32                       0+
"""))

OffsetForLeaderEpochResponse = Message("OffsetForLeaderEpochResponse", valid="0-4",
                                       flexible="4+", fields=fields("""
    throttleTimeMs   int32                         2+
    topics           []OffsetForLeaderTopicResult  0+
      topic          string                        0+
      partitions     []EpochEndOffset              0+
        errorCode    int16                         0+
        partition    int32                         0+
        leaderEpoch  int32                         1+  default=-1
        endOffset    int64                         0+  default=-1
"""))

# -- DescribeProducers (key 61) ---------------------------------------------------------------

DescribeProducersRequest = Message("DescribeProducersRequest", valid="0", flexible="0+", fields=fields("""
    topics              []TopicRequest  0+
      name              string          0+
      partitionIndexes  []int32         0+
"""))

DescribeProducersResponse = Message("DescribeProducersResponse", valid="0", flexible="0+",
                                    fields=fields("""
    throttleTimeMs               int32                0+
    topics                       []TopicResponse      0+
      name                       string               0+
      partitions                 []PartitionResponse  0+
        partitionIndex           int32                0+
        errorCode                int16                0+
        errorMessage             string               0+  nullable=0+ default=null
        activeProducers          []ProducerState      0+
          producerId             int64                0+
          producerEpoch          int32                0+
          lastSequence           int32                0+  default=-1
          lastTimestamp          int64                0+  default=-1
          coordinatorEpoch       int32                0+
          currentTxnStartOffset  int64                0+  default=-1
"""))

