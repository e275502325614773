"""The transactions' requests (Kafka's ``TransactionCoordinator`` behind ``KafkaApis``):
InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit,
DescribeTransactions and ListTransactions - Kafka's generated ``InitProducerIdRequestData``,
``AddPartitionsToTxnRequestData``, ``EndTxnRequestData``, ... and their responses.

Declared with the DSL of :mod:`kafkalog_cli.schema.messages` as
:mod:`kafkalog_cli.protocol.messages` says.
"""

from __future__ import annotations

from ...schema.messages import Message, fields

# -- InitProducerId (key 22) ------------------------------------------------------------------

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

# -- AddPartitionsToTxn (key 24) --------------------------------------------------------------

_TXN_TOPIC = fields("""
    name        string   0+
    partitions  []int32  0+
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

_TXN_TOPIC_RESULT = fields("""
    name                  string                               0+
    resultsByPartition    []AddPartitionsToTxnPartitionResult  0+
      partitionIndex      int32                                0+
      partitionErrorCode  int16                                0+
""")

AddPartitionsToTxnResponse = Message("AddPartitionsToTxnResponse", valid="0-5",
                                     flexible="3+", fields=fields("""
    throttleTimeMs            int32                            0+
    errorCode                 int16                            4+
    resultsByTransaction      []AddPartitionsToTxnResult       4+
      transactionalId         string                           4+
      topicResults            []AddPartitionsToTxnTopicResult  4+
    resultsByTopicV3AndBelow  []AddPartitionsToTxnTopicResult  0-3
""", AddPartitionsToTxnTopicResult=_TXN_TOPIC_RESULT))

# -- AddOffsetsToTxn (key 25) -----------------------------------------------------------------

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

# -- EndTxn (key 26) --------------------------------------------------------------------------

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

# -- TxnOffsetCommit (key 28) -----------------------------------------------------------------

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

# -- DescribeTransactions (key 65) ------------------------------------------------------------

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

# -- ListTransactions (key 66) ----------------------------------------------------------------

ListTransactionsRequest = Message("ListTransactionsRequest", valid="0-2", flexible="0+", fields=fields("""
    stateFilters            []string  0+
    producerIdFilters       []int64   0+
    durationFilter          int64     1+  default=-1
    transactionalIdPattern  string    2+  nullable=2+ default=null
"""))

ListTransactionsResponse = Message("ListTransactionsResponse", valid="0-2", flexible="0+",
                                   fields=fields("""
    throttleTimeMs       int32               0+
    errorCode            int16               0+
    unknownStateFilters  []string            0+
    transactionStates    []TransactionState  0+
      transactionalId    string              0+
      producerId         int64               0+
      transactionState   string              0+
"""))

