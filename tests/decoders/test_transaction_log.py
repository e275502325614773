"""__transaction_state decoding: no corpus data exists, so golden bytes are computed by
hand from TransactionLogKey/Value and cross-checked with a construct build."""

from __future__ import annotations

import pytest

from kafkalog_cli.decoders import TransactionLogDecoder, format_text
from kafkalog_cli.decoders import txn_messages as tm

H = bytes.fromhex
dec = TransactionLogDecoder()

KEY = H("0000" "0005" "74786e2d31")  # version 0, transactionalId "txn-1"

# v0: producerId 1000, epoch 2, timeout 60000, status Ongoing(1), partitions [t: 0, 1],
#     lastUpdate 5000, start 4000
VALUE_V0 = H(
    "0000"
    "00000000000003e8" "0002" "0000ea60" "01"
    "00000001" "000174" "00000002" "00000000" "00000001"
    "0000000000001388" "0000000000000fa0")

# v1 (flexible): same fields with compact encodings, then tags 0 (previousProducerId 999)
# and 2 (clientTransactionVersion 2)
VALUE_V1 = H(
    "0001"
    "00000000000003e8" "0002" "0000ea60" "01"
    "02" "0274" "03" "00000000" "00000001" "00"
    "0000000000001388" "0000000000000fa0"
    "02" "00" "08" "00000000000003e7" "02" "02" "0002")

DATA = {"producerId": 1000, "producerEpoch": 2, "transactionTimeoutMs": 60000,
        "transactionStatus": 1,
        "transactionPartitions": [{"topic": "t", "partitionIds": [0, 1]}],
        "transactionLastUpdateTimestampMs": 5000, "transactionStartTimestampMs": 4000}


def test_key():
    d = dec.decode(KEY, VALUE_V0)
    assert d.warnings == []
    assert d.key_type == "TransactionLogKey"
    assert d.key == {"type": "0", "data": {"transactionalId": "txn-1"}}


def test_value_v0_golden():
    d = dec.decode(KEY, VALUE_V0)
    assert d.value == {"version": "0", "data": DATA}
    assert tm.TransactionLogValue.build(DATA, 0) == VALUE_V0[2:]


def test_value_v1_golden_with_tagged_fields():
    d = dec.decode(KEY, VALUE_V1)
    assert d.warnings == []
    data = d.value["data"]
    assert d.value["version"] == "1"
    # tagged fields that differ from their default appear, in declaration order
    assert list(data) == ["producerId", "previousProducerId", "producerEpoch",
                          "transactionTimeoutMs", "transactionStatus", "transactionPartitions",
                          "transactionLastUpdateTimestampMs", "transactionStartTimestampMs",
                          "clientTransactionVersion"]
    assert data == {**DATA, "previousProducerId": 999, "clientTransactionVersion": 2}
    built = tm.TransactionLogValue.build(
        {**DATA, "previousProducerId": 999, "nextProducerId": -1,
         "clientTransactionVersion": 2}, 1)
    assert built == VALUE_V1[2:]


def test_value_v1_without_tags_omits_defaults():
    value = H("0001") + tm.TransactionLogValue.build(DATA, 1)
    assert value.endswith(b"\x00")
    d = dec.decode(KEY, value)
    assert d.value["data"] == DATA


def test_null_partitions():
    value = H("0001") + tm.TransactionLogValue.build(
        {**DATA, "transactionStatus": 0, "transactionPartitions": None}, 1)
    d = dec.decode(KEY, value)
    assert d.value["data"]["transactionPartitions"] is None
    assert format_text(d)[1].startswith("producerId:1000,producerEpoch:2,state=Empty,partitions=[]")


def test_format_text_like_transaction_log():
    d = dec.decode(KEY, VALUE_V1)
    assert format_text(d) == (
        "transaction_metadata::transactionalId=txn-1",
        "producerId:1000,producerEpoch:2,state=Ongoing,partitions=[t-0,t-1],"
        "txnLastUpdateTimestamp=5000,txnTimeoutMs=60000")


def test_tombstone():
    d = dec.decode(KEY, None)
    assert d.tombstone and d.warnings == []
    assert format_text(d) == ("transaction_metadata::transactionalId=txn-1", "<DELETE>")


def test_unknown_key_version():
    d = dec.decode(H("0003" "0001" "61"), VALUE_V0)
    assert d.key_type is None and "raw" in d.key and d.warnings
    assert format_text(d) == ("unknown::version=3", None)


@pytest.mark.parametrize("value", [H("0002" "00"), VALUE_V1[:-4], H("00")])
def test_bad_values_are_raw_with_warning(value):
    d = dec.decode(KEY, value)
    assert d.key_type == "TransactionLogKey"
    assert "raw" in d.value and d.warnings


def test_failures_as_kafka_prints_them():
    """TransactionCoordinatorRecordSerde knows record type 0 only (else
    UnknownRecordTypeException); a bad value is the serde's RuntimeException."""
    d = dec.decode(H("0003" "0001" "61"), VALUE_V0)
    assert d.failure.text(5) == "Unknown record type 3 at offset 5, skipping."
    d = dec.decode(KEY, H("0002" "00"))
    assert d.failure.text(5) == ("Error at offset 5, skipping. Found an unknown record "
                                 "version 2 for 0 type")
    assert d.failure.kafka_key_and_payload(5) == (d.failure.text(5), None)
    assert dec.decode(KEY, VALUE_V1).failure is None
    assert dec.decode(None, VALUE_V1).failure.kind == "missing_key"
