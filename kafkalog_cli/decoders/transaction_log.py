"""Decoder of ``__transaction_state`` records, after Kafka's TransactionLog
(``readTxnRecordKey`` / ``readTxnRecordValue`` / ``formatRecordKeyAndValue``).

    Key =>
      Version => Int16             (0; others are "unknown" keys)
      TransactionLogKey at Version
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
from .consumer_offsets import decode_versioned, short_version_failure
from .decoded import DELETE_MARKER, DecodedRecord, DecodeFailure, raw_json

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


class TransactionLogDecoder:
    """Decodes ``__transaction_state`` keys and values. Never raises: what cannot be
    decoded is returned as ``{"raw": base64}`` with a warning."""

    topic = "__transaction_state"

    def decode(self, key: bytes | None, value: bytes | None) -> DecodedRecord:
        """Decode one record (``value`` None is a tombstone)."""
        warnings: list[str] = []
        if key is None or len(key) < 2:
            warnings.append("missing or short key: not a transaction log record")
            failure = (DecodeFailure("missing_key") if key is None
                       else short_version_failure("key"))
            return DecodedRecord(raw_json(key), raw_json(value), None, warnings,
                                 tombstone=value is None, failure=failure)
        key_version = int.from_bytes(key[:2], "big", signed=True)
        errors: list[str] = []
        key_data = decode_versioned(tm.TransactionLogKey, key, key_version, warnings, "key",
                                    errors)
        if key_data is None:
            # TransactionCoordinatorRecordSerde knows record type 0 only
            failure = (DecodeFailure("error", errors[0]) if key_version in
                       tm.TransactionLogKey.valid else
                       DecodeFailure("unknown_type", record_type=key_version))
            return DecodedRecord(raw_json(key), raw_json(value), None, warnings,
                                 tombstone=value is None, failure=failure)
        key_json = {"type": str(key_version), "data": key_data}
        if value is None:
            return DecodedRecord(key_json, None, tm.TransactionLogKey.name, warnings,
                                 tombstone=True)
        if len(value) < 2:
            warnings.append("value shorter than its version, kept raw")
            return DecodedRecord(key_json, raw_json(value), tm.TransactionLogKey.name, warnings,
                                 failure=short_version_failure("value"))
        version = int.from_bytes(value[:2], "big", signed=True)
        value_data = decode_versioned(tm.TransactionLogValue, value, version, warnings, "value",
                                      errors)
        value_json = (raw_json(value) if value_data is None
                      else {"version": str(version), "data": value_data})
        return DecodedRecord(key_json, value_json, tm.TransactionLogKey.name, warnings,
                             failure=DecodeFailure("error", errors[0]) if errors else None)


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
