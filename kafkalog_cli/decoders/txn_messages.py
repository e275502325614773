"""Declarations of the ``__transaction_state`` records, after Kafka's TransactionLogKey /
TransactionLogValue messages (``transaction-coordinator/.../common/message``).

    TransactionLogKey (key, version 0; the key's int16 prefix is its record type, 0) =>
      transactionalId => String
    TransactionLogValue (value, versions 0-1, flexible from 1) =>
      producerId => Int64, producerEpoch => Int16, transactionTimeoutMs => Int32,
      transactionStatus => Int8, transactionPartitions => [topic, [partitionIds]] (nullable),
      transactionLastUpdateTimestampMs => Int64, transactionStartTimestampMs => Int64,
      tagged (v1+): 0 previousProducerId, 1 nextProducerId, 2 clientTransactionVersion,
      3 nextProducerEpoch (Kafka 4.4)
"""

from __future__ import annotations

from ..schema.messages import Message, fields, registry

TransactionLogKey = Message(
    "TransactionLogKey", valid="0", api_key=0, kind="coordinator-key", fields=fields("""
    transactionalId  string  0
"""))

TransactionLogValue = Message(
    "TransactionLogValue", valid="0-1", flexible="1+", api_key=0, kind="coordinator-value",
    fields=fields("""
    producerId                        int64               0+
    previousProducerId                int64               1+  tagged=1+ tag=0 default=-1
    nextProducerId                    int64               1+  tagged=1+ tag=1 default=-1
    producerEpoch                     int16               0+
    nextProducerEpoch                 int16               1+  tagged=1+ tag=3 default=-1
    transactionTimeoutMs              int32               0+
    transactionStatus                 int8                0+
    transactionPartitions             []PartitionsSchema  0+  nullable=0+
      topic                           string              0+
      partitionIds                    []int32             0+
    transactionLastUpdateTimestampMs  int64               0+
    transactionStartTimestampMs       int64               0+
    clientTransactionVersion          int16               1+  tagged=1+ tag=2 default=0
"""))

MESSAGES = registry(TransactionLogKey, TransactionLogValue)

#: ``{record type: (key message, value message)}`` (TransactionCoordinatorRecordSerde).
RECORD_TYPES = {0: (TransactionLogKey, TransactionLogValue)}
