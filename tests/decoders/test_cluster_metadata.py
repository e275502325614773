"""__cluster_metadata and control records against hand-computed bytes."""

from __future__ import annotations

import pytest

from kafkalog_cli.decoders import ClusterMetadataDecoder, control_text, decode_control_record
from kafkalog_cli.decoders import metadata_messages as mm
from kafkalog_cli.decoders.cluster_metadata import read_frame

H = bytes.fromhex
dec = ClusterMetadataDecoder()
TOPIC_ID = bytes(15) + b"\x01"  # "AAAAAAAAAAAAAAAAAAAAAQ"


def test_topic_record_golden():
    # frame 1, api key 2 (TopicRecord), version 0; name "foo"; topicId; no tags
    value = H("01" "02" "00" "04666f6f") + TOPIC_ID + H("00")
    d = dec.decode(None, value)
    assert d.warnings == []
    assert d.key is None
    assert d.key_type == "TopicRecord"
    assert d.value == {"type": "TOPIC_RECORD", "version": 0,
                       "data": {"name": "foo", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}}
    assert d.value_json() == ('{"type":"TOPIC_RECORD","version":0,"data":{"name":"foo",'
                              '"topicId":"AAAAAAAAAAAAAAAAAAAAAQ"}}')


def test_partition_change_record_tagged_fields_golden():
    # api key 5 v0: partitionId 0, topicId, tags: 0 isr [1,2], 1 leader 2
    value = (H("01" "05" "00" "00000000") + TOPIC_ID
             + H("02" "00" "09" "03" "00000001" "00000002" "01" "04" "00000002"))
    d = dec.decode(None, value)
    assert d.warnings == []
    assert d.value["data"] == {"partitionId": 0, "topicId": "AAAAAAAAAAAAAAAAAAAAAQ",
                               "isr": [1, 2], "leader": 2}


def test_no_op_and_multi_byte_api_key_frame():
    assert read_frame(H("01" "14" "00")) == (1, 20, 0, 3)
    assert read_frame(H("01" "8001" "02")) == (1, 128, 2, 4)
    d = dec.decode(None, H("01" "14" "00" "00"))
    assert d.value == {"type": "NO_OP_RECORD", "version": 0, "data": {}}


def test_every_api_key_has_a_type_name():
    assert {k: mm.metadata_type_name(m.name) for k, m in mm.BY_API_KEY.items()}[21] == \
        "ZK_MIGRATION_STATE_RECORD"
    assert mm.metadata_type_name("RegisterBrokerRecord") == "REGISTER_BROKER_RECORD"
    # MetadataRecordType 0-29 but 6, 13 and 16 (removed before KRaft shipped)
    assert len(mm.BY_API_KEY) == 27
    assert mm.metadata_type_name(mm.BY_API_KEY[28].name) == "CLEAR_ELR_RECORD"


@pytest.mark.parametrize(("value", "needle"), [
    (H("01" "63" "00" "00"), "unknown metadata record type 99"),
    (H("01" "02" "07" "00"), "unknown TopicRecord version 7"),
    (H("00" "02" "00"), "unknown frame version 0"),
    (H("01" "02" "00" "04666f"), "Failed to deserialize record with type 2"),
    (H("01" "14" "00" "00" "00"), "garbage"),
    (H("01"), "frame"),
    (H("01" "ffffffff0f" "00"), "too large"),
])
def test_bad_values_are_raw_with_warning(value, needle):
    d = dec.decode(None, value)
    assert "raw" in d.value
    assert needle in d.warnings[0]


def test_unknown_tag_is_decoded_with_warning():
    value = H("01" "02" "00" "04666f6f") + TOPIC_ID + H("01" "07" "01" "2a")
    d = dec.decode(None, value)
    assert d.value["data"]["name"] == "foo"
    assert d.warnings == ["TopicRecord: unknown tagged field 7 kept raw (Kg==)"]


# -- control records ---------------------------------------------------------------------------

def test_commit_marker():
    d = decode_control_record(None, H("0000" "0001"), H("0000" "00000005"))
    assert d.warnings == []
    assert d.key == {"version": 0, "type": 1}
    assert d.key_type == "COMMIT"
    assert d.value == {"version": 0, "coordinatorEpoch": 5}
    assert control_text(d) == "endTxnMarker: COMMIT coordinatorEpoch: 5"


def test_snapshot_header_and_footer():
    d = decode_control_record(3, H("0000" "0003"), H("0000" "0000019a00000000" "00"))
    assert d.warnings == []
    assert d.key_type == "SnapshotHeader"
    assert d.value == {"version": 0, "lastContainedLogTimestamp": 0x19a00000000}
    assert control_text(d) == 'SnapshotHeader {"version":0,"lastContainedLogTimestamp":1760936591360}'
    d = decode_control_record(4, H("0000" "0004"), H("0000" "00"))
    assert (d.key_type, d.value) == ("SnapshotFooter", {"version": 0})


def test_leader_change_and_kraft_version_and_voters():
    # LeaderChangeMessage v0: leaderId 1, voters [1], grantingVoters [1]
    d = decode_control_record(None, H("0000" "0002"),
                              H("0000" "00000001" "02" "00000001" "00" "02" "00000001" "00" "00"))
    assert d.warnings == []
    assert d.value == {"version": 0, "leaderId": 1, "voters": [{"voterId": 1}],
                       "grantingVoters": [{"voterId": 1}]}
    d = decode_control_record(None, H("0000" "0005"), H("0000" "0001" "00"))
    assert (d.key_type, d.value) == ("KRaftVersion", {"version": 0, "kRaftVersion": 1})
    voters = (H("0000" "02" "00000001") + TOPIC_ID
              + H("02" "0b434f4e54524f4c4c4552" "0a6c6f63616c686f7374" "2385" "00"
                  "0000" "0001" "00" "00" "00"))
    d = decode_control_record(None, H("0000" "0006"), voters)
    assert d.warnings == []
    assert d.key_type == "KRaftVoters"
    assert d.value["voters"] == [{
        "voterId": 1, "voterDirectoryId": "AAAAAAAAAAAAAAAAAAAAAQ",
        "endpoints": [{"name": "CONTROLLER", "host": "localhost", "port": 9093}],
        "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1}}]


@pytest.mark.parametrize(("type_id", "key", "value"), [
    (None, H("0000" "0009"), H("00")),
    (None, H("00"), H("00")),
    (None, None, None),
    (3, H("0000" "0003"), H("0005" "00")),
    (3, H("0000" "0003"), H("0000" "00")),
    (1, H("0000" "0001"), H("00")),
    (2, H("0000" "0002"), None),
])
def test_bad_control_records_never_raise(type_id, key, value):
    d = decode_control_record(type_id, key, value)
    assert d.warnings
    assert control_text(d)


@pytest.mark.parametrize(("value", "message"), [
    (H("0163" "00" "616263"), "org.apache.kafka.common.errors.UnsupportedVersionException: "
     "Unknown metadata id 99"),
    (None, "Error while reading frame version"),
    (b"", "Error while reading frame version"),
    (H("01"), "Error while reading type"),
    (H("0102"), "Error while reading version"),
    (H("01" "ffffffffff"), "Error while reading type"),
    (H("01" "ffff03" "00"), "Value for type was too large."),
    (H("00" "02"), "Could not deserialize metadata record with frame version 0. Note that "
     "upgrades from the preview release of KRaft in 2.8 to newer versions are not supported."),
    (H("02" "02" "00"), "Could not deserialize metadata record due to unknown frame version "
     "2(only frame version 1 is supported)"),
    (H("01" "02" "00" "04666f"), "Failed to deserialize record with type 2"),
    (H("01" "02" "63" "04666f6f") + TOPIC_ID + H("00"), "Failed to deserialize record with type 2"),
    (H("01" "02" "00" "04666f6f") + TOPIC_ID + H("00" "0000"),
     "Found 2 byte(s) of garbage after 2"),
])
def test_failure_as_kafka_prints_it(value, message):
    """ClusterMetadataLogMessageParser: 'Error at <offset>, skipping. <getMessage()>' as
    the payload (no key) when MetadataRecordSerde.read throws."""
    d = dec.decode(None, value)
    assert d.failure is not None and d.failure.in_payload
    text = f"Error at 12, skipping. {message}"
    assert d.failure.kafka_key_and_payload(12) == (None, text)
