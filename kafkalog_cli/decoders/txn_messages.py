"""Declarations of the ``__transaction_state`` records, after Kafka's TransactionLogKey /
TransactionLogValue messages (``transaction-coordinator/.../common/message``).

    TransactionLogKey (key, version 0; the key's int16 prefix is its record type, 0) =>
      transactionalId => String
    TransactionLogValue (value, versions 0-1, flexible from 1) =>
      producerId => Int64, producerEpoch => Int16, transactionTimeoutMs => Int32,
      transactionStatus => Int8, transactionPartitions => [topic, [partitionIds]] (nullable),
      transactionLastUpdateTimestampMs => Int64, transactionStartTimestampMs => Int64,
      tagged (v1+): 0 previousProducerId, 1 nextProducerId, 2 clientTransactionVersion
"""

from __future__ import annotations

from ..schema.messages import Field, Message, registry

TransactionLogKey = Message(
    "TransactionLogKey", valid="0", api_key=0, kind="coordinator-key", fields=[
        Field("transactionalId", "string", "0"),
    ])

TransactionLogValue = Message(
    "TransactionLogValue", valid="0-1", flexible="1+", api_key=0, kind="coordinator-value",
    fields=[
        Field("producerId", "int64", "0+"),
        Field("previousProducerId", "int64", tagged="1+", tag=0, default=-1),
        Field("nextProducerId", "int64", tagged="1+", tag=1, default=-1),
        Field("producerEpoch", "int16", "0+"),
        Field("transactionTimeoutMs", "int32", "0+"),
        Field("transactionStatus", "int8", "0+"),
        Field("transactionPartitions", "[]PartitionsSchema", "0+", nullable="0+", fields=[
            Field("topic", "string", "0+"),
            Field("partitionIds", "[]int32", "0+"),
        ]),
        Field("transactionLastUpdateTimestampMs", "int64", "0+"),
        Field("transactionStartTimestampMs", "int64", "0+"),
        Field("clientTransactionVersion", "int16", tagged="1+", tag=2, default=0),
    ])

MESSAGES = registry(TransactionLogKey, TransactionLogValue)

#: ``{record type: (key message, value message)}`` (TransactionCoordinatorRecordSerde).
RECORD_TYPES = {0: (TransactionLogKey, TransactionLogValue)}
