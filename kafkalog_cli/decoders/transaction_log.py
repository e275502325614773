"""Decoder of ``__transaction_state`` records, after Kafka's TransactionLog
(``readTxnRecordKey`` / ``readTxnRecordValue`` / ``formatRecordKeyAndValue``).

    Key =>
      RecordType => Int16          (0; others are "unknown" record types)
      TransactionLogKey
    Value (null = tombstone) =>
      Version => Int16             (0-1; 1 is flexible, with tagged fields)
      TransactionLogValue at Version

Output shapes follow the other coordinator topics (and DumpLogSegments of newer Kafka)::

    key   {"type": "<key version>", "data": {"transactionalId": ...}}
    value {"version": "<version>", "data": {"producerId": ..., ...}}

:func:`format_text` gives the text TransactionLog.formatRecordKeyAndValue prints
(``transaction_metadata::transactionalId=...`` / ``producerId:...,state=...``).
"""

from __future__ import annotations

import base64

from . import txn_messages as tm
from .coordinator import CoordinatorDecoder
from .decoded import DELETE_MARKER, DecodedRecord

#: TransactionState ids and the names Kafka prints.
TRANSACTION_STATES = {
    0: "Empty",
    1: "Ongoing",
    2: "PrepareCommit",
    3: "PrepareAbort",
    4: "CompleteCommit",
    5: "CompleteAbort",
    6: "Dead",
    7: "PrepareEpochFence",
}


class TransactionLogDecoder(CoordinatorDecoder):
    """Decodes ``__transaction_state`` keys and values (TransactionLogMessageParser,
    TransactionCoordinatorRecordSerde: record type 0 only). Never raises: what cannot be
    decoded is returned as ``{"raw": base64}`` with a warning."""

    topic = "__transaction_state"
    record_types = tm.RECORD_TYPES

    def decode(self, key: bytes | None, value: bytes | None) -> DecodedRecord:
        """As :meth:`CoordinatorDecoder.decode`; Kafka's text (:attr:`DecodedRecord.
        kafka_value`) names the TransactionLogValue's ``transactionStatus``, as Kafka 4.4's
        TransactionLogMessageParser.valueAsJson does (``TransactionState.fromId(id)
        .stateName()``, the id as a string when it names no state); JSON keeps the id."""
        record = super().decode(key, value)
        v = record.value
        if record.failure is None and isinstance(v, dict) and isinstance(v.get("data"), dict) \
                and "transactionStatus" in v["data"]:
            status = v["data"]["transactionStatus"]
            record.kafka_value = {**v, "data": {
                **v["data"], "transactionStatus": TRANSACTION_STATES.get(status, str(status))}}
        return record


def format_text(record: DecodedRecord) -> tuple[str | None, str | None]:
    """The (key, payload) strings TransactionLog.formatRecordKeyAndValue prints for a
    decoded record; (``"unknown::version=N"``, None) for an undecodable key.

    Partitions are listed in record order (Kafka prints a set, in no fixed order) and
    only when the state is not Empty, as Kafka adds them.
    """
    if record.key is None or "data" not in record.key:
        raw = base64.b64decode(record.key["raw"]) if record.key else b""
        version = int.from_bytes(raw[:2], "big", signed=True) if len(raw) >= 2 else None
        return (f"unknown::version={version}", None)
    txn_id = record.key["data"]["transactionalId"]
    key = f"transaction_metadata::transactionalId={txn_id}"
    if record.tombstone:
        return key, DELETE_MARKER
    if record.value is None or "data" not in record.value:
        return key, None
    v = record.value["data"]
    state = TRANSACTION_STATES.get(v["transactionStatus"], f"Unknown({v['transactionStatus']})")
    partitions = []
    if v["transactionStatus"] != 0:
        for entry in v.get("transactionPartitions") or ():
            partitions.extend(f"{entry['topic']}-{p}" for p in entry["partitionIds"])
    payload = (f"producerId:{v['producerId']},producerEpoch:{v['producerEpoch']},"
               f"state={state},partitions=[{','.join(partitions)}],"
               f"txnLastUpdateTimestamp={v['transactionLastUpdateTimestampMs']},"
               f"txnTimeoutMs={v['transactionTimeoutMs']}")
    return key, payload
