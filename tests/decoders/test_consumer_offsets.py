"""__consumer_offsets decoding against hand-computed bytes (OffsetsMessageParser shapes)."""

from __future__ import annotations

import base64

import pytest

from kafkalog_cli.decoders import ConsumerOffsetsDecoder, decoder_for_topic
from kafkalog_cli.decoders import group_messages as gm

H = bytes.fromhex
dec = ConsumerOffsetsDecoder()

# OffsetCommitKey, record type 1: group "g1", topic "t", partition 3
OFFSET_KEY = H("0001" "0002" "6731" "0001" "74" "00000003")
# OffsetCommitValue v1: offset 42, metadata "", commit 1000, expire 2000
OFFSET_VALUE_V1 = H("0001" "000000000000002a" "0000" "00000000000003e8" "00000000000007d0")
# OffsetCommitValue v3: offset 42, leaderEpoch 5, metadata "m", commit 1000
OFFSET_VALUE_V3 = H("0003" "000000000000002a" "00000005" "00016d" "00000000000003e8")
# OffsetCommitValue v4 (flexible): same, compact string, empty tagged fields
OFFSET_VALUE_V4 = H("0004" "000000000000002a" "00000005" "026d" "00000000000003e8" "00")


def test_offset_commit_v1():
    d = dec.decode(OFFSET_KEY, OFFSET_VALUE_V1)
    assert d.warnings == []
    assert d.key_type == "OffsetCommitKey"
    assert d.key == {"type": "1", "data": {"group": "g1", "topic": "t", "partition": 3}}
    assert d.value == {"version": "1", "data": {"offset": 42, "metadata": "",
                                                "commitTimestamp": 1000,
                                                "expireTimestamp": 2000}}
    assert d.key_json() == '{"type":"1","data":{"group":"g1","topic":"t","partition":3}}'


def test_offset_commit_v3_and_flexible_v4_agree():
    d3 = dec.decode(OFFSET_KEY, OFFSET_VALUE_V3)
    d4 = dec.decode(OFFSET_KEY, OFFSET_VALUE_V4)
    assert d3.warnings == d4.warnings == []
    expected = {"offset": 42, "leaderEpoch": 5, "metadata": "m", "commitTimestamp": 1000}
    assert d3.value == {"version": "3", "data": expected}
    assert d4.value == {"version": "4", "data": expected}


def test_offset_commit_key_v0():
    key = H("0000" "0002" "6731" "0001" "74" "00000000")
    d = dec.decode(key, None)
    assert d.key == {"type": "0", "data": {"group": "g1", "topic": "t", "partition": 0}}


def test_tombstone():
    d = dec.decode(OFFSET_KEY, None)
    assert d.tombstone and d.value is None and d.warnings == []
    assert d.value_json() == "<DELETE>"


def test_group_metadata_with_consumer_protocol():
    subscription = H("0001") + gm.ConsumerProtocolSubscription.build(
        {"topics": ["orders"], "userData": None,
         "ownedPartitions": [{"topic": "orders", "partitions": [0, 1]}]}, 1)
    assignment = H("0000") + gm.ConsumerProtocolAssignment.build(
        {"assignedPartitions": [{"topic": "orders", "partitions": [1]}], "userData": b""}, 0)
    member = {"memberId": "m-1", "groupInstanceId": None, "clientId": "c", "clientHost": "/h",
              "rebalanceTimeout": 300000, "sessionTimeout": 45000,
              "subscription": subscription, "assignment": assignment}
    value = H("0003") + gm.GroupMetadataValue.build(
        {"protocolType": "consumer", "generation": 4, "protocol": "range", "leader": "m-1",
         "currentStateTimestamp": 99, "members": [member]}, 3)
    d = dec.decode(H("0002" "0002" "6731"), value)
    assert d.warnings == []
    assert d.key == {"type": "2", "data": {"group": "g1"}}
    assert d.key_type == "GroupMetadataKey"
    m = d.value["data"]["members"][0]
    assert m["subscription"] == {"topics": ["orders"], "userData": None,
                                 "ownedPartitions": [{"topic": "orders", "partitions": [0, 1]}]}
    assert m["assignment"] == {"assignedPartitions": [{"topic": "orders", "partitions": [1]}],
                               "userData": ""}
    assert d.value["data"]["currentStateTimestamp"] == 99


def test_group_metadata_bad_subscription_keeps_bytes():
    member = {"memberId": "m", "clientId": "c", "clientHost": "h", "sessionTimeout": 1,
              "subscription": b"\x00\x09junk", "assignment": b"\x00"}
    value = H("0000") + gm.GroupMetadataValue.build(
        {"protocolType": "consumer", "generation": 1, "protocol": None, "leader": None,
         "members": [member]}, 0)
    d = dec.decode(H("0002" "0001" "67"), value)
    assert d.warnings == []
    m = d.value["data"]["members"][0]
    assert m["subscription"] == base64.b64encode(b"\x00\x09junk").decode()
    assert m["assignment"] == "AA=="


def test_non_consumer_protocol_keeps_bytes():
    member = {"memberId": "m", "clientId": "c", "clientHost": "h", "sessionTimeout": 1,
              "subscription": b"\x00\x00", "assignment": b""}
    value = H("0000") + gm.GroupMetadataValue.build(
        {"protocolType": "connect", "generation": 1, "protocol": "p", "leader": "m",
         "members": [member]}, 0)
    d = dec.decode(H("0002" "0001" "67"), value)
    assert d.value["data"]["members"][0]["subscription"] == "AAA="


def test_consumer_group_records():
    key = H("0003") + gm.ConsumerGroupMetadataKey.build({"groupId": "cg"}, 0)
    value = H("0000") + gm.ConsumerGroupMetadataValue.build({"epoch": 12}, 0)
    d = dec.decode(key, value)
    assert d.warnings == []
    assert d.key == {"type": "3", "data": {"groupId": "cg"}}
    assert d.value == {"version": "0", "data": {"epoch": 12}}
    key = H("000f") + gm.ShareGroupStatePartitionMetadataKey.build({"groupId": "sg"}, 0)
    assert dec.decode(key, None).key_type == "ShareGroupStatePartitionMetadataKey"


def test_unknown_record_type_is_raw_with_warning():
    key = H("0063" "0001" "61")
    d = dec.decode(key, H("0000"))
    assert d.key == {"raw": base64.b64encode(key).decode()}
    assert d.key_type is None
    assert d.warnings and "Unknown record type 99" in d.warnings[0]


def test_unknown_value_version_is_raw_with_warning():
    value = H("0009" "00")
    d = dec.decode(OFFSET_KEY, value)
    assert d.key_type == "OffsetCommitKey"
    assert d.value == {"raw": base64.b64encode(value).decode()}
    assert "unknown OffsetCommitValue version 9" in d.warnings[0]


def test_truncated_value_is_raw_with_warning():
    d = dec.decode(OFFSET_KEY, OFFSET_VALUE_V3[:-3])
    assert "raw" in d.value and d.warnings


def test_missing_or_short_key_never_raises():
    assert dec.decode(None, b"x").warnings
    assert dec.decode(b"\x00", None).tombstone


def test_trailing_bytes_are_reported():
    d = dec.decode(OFFSET_KEY, OFFSET_VALUE_V1 + b"\x00")
    assert d.value["data"]["offset"] == 42
    assert d.warnings == ["value: 1 bytes after OffsetCommitValue v1"]


def test_decoder_for_topic():
    assert isinstance(decoder_for_topic("__consumer_offsets"), ConsumerOffsetsDecoder)
    assert isinstance(decoder_for_topic("__consumer_offsets-49"), ConsumerOffsetsDecoder)
    assert type(decoder_for_topic("__transaction_state-3")).__name__ == "TransactionLogDecoder"
    assert type(decoder_for_topic("__cluster_metadata-0")).__name__ == "ClusterMetadataDecoder"
    assert decoder_for_topic("orders") is None
    assert decoder_for_topic("orders-0") is None


# -- what Kafka's OffsetsMessageParser prints when GroupCoordinatorRecordSerde throws ----------

@pytest.mark.parametrize(("key", "value", "kind", "text"), [
    (H("0063" "78"), H("0001"), "unknown_type", "Unknown record type 99 at offset 7, skipping."),
    (H("00"), H("0001"), "error",
     "Error at offset 7, skipping. Could not read version from key's buffer."),
    # Kafka 4.4's serde checks the value version against the value message's range first
    (OFFSET_KEY, H("004d" "7a7a"), "error",
     "Error at offset 7, skipping. Found an unknown record version 77 for 1 type"),
    (OFFSET_KEY, H("0001" "00"), "error", "Error at offset 7, skipping. Could not read record "
     "with version 1 from value's buffer due to: null."),
    (OFFSET_KEY, H("00"), "error",
     "Error at offset 7, skipping. Could not read version from value's buffer."),
    (H("0001" "0005" "6731"), None, "error", "Error at offset 7, skipping. Could not read "
     "record with version 1 from key's buffer due to: Error reading byte array of 5 byte(s): "
     "only 2 byte(s) available."),
    (H("0001" "ffff"), H("0001"), "error", "Error at offset 7, skipping. Could not read record "
     "with version 1 from key's buffer due to: non-nullable field group was serialized as "
     "null."),
    (None, H("78"), "missing_key", "Failed to decode message at offset 7 using the specified "
     "decoder (message had a missing key)"),
])
def test_failure_as_kafka_prints_it(key, value, kind, text):
    d = dec.decode(key, value)
    assert d.failure is not None and d.failure.kind == kind
    assert d.failure.text(7) == text
    # on the key's side, no payload; a missing key prints neither (the tool stops)
    assert d.failure.kafka_key_and_payload(7) == ((None, None) if kind == "missing_key"
                                                  else (text, None))
    assert d.warnings  # and the JSON shape keeps the raw bytes
    assert "raw" in (d.value or {}) or "raw" in (d.key or {}) or d.tombstone


def test_decoded_records_have_no_failure():
    for value in (OFFSET_VALUE_V1, OFFSET_VALUE_V4, None, OFFSET_VALUE_V1 + b"\x00"):
        assert dec.decode(OFFSET_KEY, value).failure is None
