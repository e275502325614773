"""dump-segment with Kafka 4's DumpLogSegments flags and text.

Expected texts are Kafka's own: the strings tools/DumpLogSegmentsTest.java asserts for the
same records (testOffsetsMessageParser, testTransactionLogMessageParser,
testShareGroupStateMessageParser), the toString of the remote log metadata classes
(storage/api RemoteLogSegmentMetadata & co.), and the error lines of
CoordinatorRecordMessageParser. Records are built byte by byte here, from the message
definitions, independently of kafkalog's declarations.
"""

from __future__ import annotations

import base64
import json
import struct

import pytest
from kafka4_records import (
    SHARE_SNAPSHOT_DEFAULT,
    SHARE_UPDATE_VALUE,
    STATE_BATCH,
    UUID,
    UUID_BYTES,
    carr,
    cs,
    i16,
    i32,
    i64,
    remote_segment,
    s,
    share_key,
    share_snapshot_value,
    write_log,
)


def payload_tails(stdout: str) -> list[str]:
    """What follows ``headerKeys: [] `` on each record line."""
    return [ln.split("headerKeys: [] ", 1)[1] if "headerKeys: [] " in ln else ""
            for ln in stdout.splitlines() if ln.startswith("| offset:")]


def json_records(stdout: str) -> list[dict]:
    return [o for o in map(json.loads, stdout.splitlines()) if o["type"] == "record"]


# -- __share_group_state ------------------------------------------------------------------------

@pytest.mark.parametrize("how", [["--share-group-state-decoder"], []],
                         ids=["flag", "by-topic-name"])
def test_share_group_state_as_kafka_prints_it(cli, tmp_path, how):
    """testShareGroupStateMessageParser's records and strings; the by-name pick of the
    decoder gives the same text."""
    ts = 1_750_000_000_123
    name = "__share_group_state-3" if not how else "anything-0"
    log = write_log(tmp_path, name, [
        (share_key(0), share_snapshot_value(ts)),
        (share_key(1), SHARE_UPDATE_VALUE),
        (share_key(0), None),
        (i16(32767), b""),
        (share_key(1), SHARE_SNAPSHOT_DEFAULT),
    ])
    r = cli("dump-segment", str(log), "-o", "kafka", *how, *([] if how else ["--print-data-log"]))
    assert r.returncode == 0, r.stderr
    key0 = '{"type":"0","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}'
    key1 = key0.replace('"type":"0"', '"type":"1"')
    assert payload_tails(r.stdout) == [
        f"key: {key0} payload: "
        '{"version":"0","data":{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,'
        f'"startOffset":0,"createTimestamp":{ts},"writeTimestamp":{ts},"stateBatches":[{{'
        '"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}',
        f"key: {key1} payload: "
        '{"version":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,'
        '"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}',
        f"key: {key0} payload: <DELETE>",
        "key: Unknown record type 32767 at offset 3, skipping.",
        "key: Error at offset 4, skipping. Could not read record with version 0 from value's "
        "buffer due to: non-nullable field stateBatches was serialized as null.",
    ]


def test_share_state_of_kafkas_december_2024_layout(cli, tmp_path):
    """A ShareSnapshotValue as Kafka's December 2024 tree wrote it (uint16 snapshot epoch,
    no timestamps) is read with that layout."""
    old = (i16(0) + struct.pack(">H", 7) + i32(1) + i32(2) + i64(3) + carr([STATE_BATCH])
           + b"\x00")
    log = write_log(tmp_path, "__share_group_state-0", [(share_key(0), old)])
    r = cli("dump-segment", str(log), "--print-data-log", "-o", "json")
    (rec,) = json_records(r.stdout)
    assert "decodeWarnings" not in rec
    assert rec["value"] == {"version": "0", "data": {
        "snapshotEpoch": 7, "stateEpoch": 1, "leaderEpoch": 2, "startOffset": 3,
        "stateBatches": [{"firstOffset": 0, "lastOffset": 4, "deliveryState": 2,
                          "deliveryCount": 1}]}}


# -- tombstones -----------------------------------------------------------------------------------

def test_tombstones_are_null_in_json_and_delete_in_kafka_text(cli, tmp_path):
    key = i16(3) + s("group")  # ConsumerGroupMetadataKey
    log = write_log(tmp_path, "__consumer_offsets-7", [(key, None)])
    r = cli("dump-segment", str(log), "--print-data-log", "-o", "kafka")
    # testOffsetsMessageParser: "A valid key with a tombstone should work."
    assert payload_tails(r.stdout) == [
        'key: {"type":"3","data":{"groupId":"group"}} payload: <DELETE>']
    (rec,) = json_records(cli("dump-segment", str(log), "--print-data-log", "-o",
                              "json").stdout)
    assert rec["key"] == {"type": "3", "data": {"groupId": "group"}}
    assert rec["value"] is None and rec["valueSize"] == -1
    assert "decodeWarnings" not in rec


# -- __transaction_state ---------------------------------------------------------------------------

def test_transaction_log_as_kafka_prints_it(cli, tmp_path):
    """testTransactionLogMessageParser's v0 and v1 records (v1 with its tagged fields);
    Kafka 4.4's parser names the status (TransactionState.stateName: 0 is "Empty"), which
    the pinned tool prints (tests/kafka_bench/test_dump_differential.py)."""
    key = i16(0) + s("txnId")
    v0 = (i16(0) + i64(123) + i16(0) + i32(0) + b"\x00" + i32(0) + i64(0) + i64(0))
    partitions = carr([cs("topic1") + carr([i32(0), i32(1), i32(2)]) + b"\x00",
                       cs("topic2") + carr([i32(3), i32(4), i32(5)]) + b"\x00"])
    v1 = (i16(1) + i64(12) + i16(2) + i32(14) + b"\x00" + partitions + i64(123) + i64(13)
          + b"\x02" + b"\x00\x08" + i64(11) + b"\x01\x08" + i64(10))
    log = write_log(tmp_path, "__transaction_state-0", [(key, v0), (key, None), (key, v1)])
    r = cli("dump-segment", str(log), "--transaction-log-decoder", "-o", "kafka")
    k = '{"type":"0","data":{"transactionalId":"txnId"}}'
    assert payload_tails(r.stdout) == [
        f'key: {k} payload: {{"version":"0","data":{{"producerId":123,"producerEpoch":0,'
        '"transactionTimeoutMs":0,"transactionStatus":"Empty","transactionPartitions":[],'
        '"transactionLastUpdateTimestampMs":0,"transactionStartTimestampMs":0}}',
        f"key: {k} payload: <DELETE>",
        f'key: {k} payload: {{"version":"1","data":{{"producerId":12,"previousProducerId":11,'
        '"nextProducerId":10,"producerEpoch":2,"transactionTimeoutMs":14,"transactionStatus":"Empty",'
        '"transactionPartitions":[{"topic":"topic1","partitionIds":[0,1,2]},'
        '{"topic":"topic2","partitionIds":[3,4,5]}],"transactionLastUpdateTimestampMs":123,'
        '"transactionStartTimestampMs":13}}',
    ]


# -- __consumer_offsets: the consumer protocol inside GroupMetadataValue ----------------------------

def test_group_metadata_with_consumer_protocol_as_kafka_prints_it(cli, tmp_path):
    """testOffsetsMessageParser: GroupMetadataValue v4 whose member's subscription and
    assignment (ConsumerProtocol v3) are printed decoded; bytes that are not a consumer
    protocol message stay base64."""
    sub = (i16(3) + i32(1) + s("foo") + i32(-1) + i32(1) + s("foo") + i32(1) + i32(0)
           + i32(0) + s("rack"))
    assignment = i16(3) + i32(1) + s("foo") + i32(1) + i32(0) + i32(-1)

    def value(subscription: bytes, assigned: bytes) -> bytes:
        member = (cs("member") + cs("instance") + cs("client") + cs("host") + i32(1000)
                  + i32(100) + bytes([len(subscription) + 1]) + subscription
                  + bytes([len(assigned) + 1]) + assigned + b"\x00")
        return (i16(4) + cs("consumer") + i32(10) + cs("range") + cs("member") + i64(-1)
                + carr([member]) + b"\x00")

    key = i16(2) + s("group")
    log = write_log(tmp_path, "__consumer_offsets-0", [
        (key, value(sub, assignment)), (key, value(b"Subscription", b"Assignment"))])
    r = cli("dump-segment", str(log), "--offsets-decoder", "-o", "kafka")
    head = ('key: {"type":"2","data":{"group":"group"}} payload: {"version":"4","data":'
            '{"protocolType":"consumer","generation":10,"protocol":"range","leader":"member",'
            '"currentStateTimestamp":-1,"members":[{"memberId":"member",'
            '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
            '"rebalanceTimeout":1000,"sessionTimeout":100,')
    assert payload_tails(r.stdout) == [
        head + '"subscription":{"topics":["foo"],"userData":null,"ownedPartitions":'
        '[{"topic":"foo","partitions":[0]}],"generationId":0,"rackId":"rack"},"assignment":'
        '{"assignedPartitions":[{"topic":"foo","partitions":[0]}],"userData":null}}]}}',
        head + '"subscription":"U3Vic2NyaXB0aW9u","assignment":"QXNzaWdubWVudA=="}]}}',
    ]


# -- __remote_log_metadata ---------------------------------------------------------------------------

def test_remote_log_metadata_as_kafka_prints_it(cli, tmp_path):
    """RemoteMetadataLogMessageParser prints RemoteLogMetadataSerde's object's toString
    (no key); where the object's constructor throws, 'Error at offset X, skipping.'."""
    seg_id = base64.urlsafe_b64encode(bytes(range(16))).rstrip(b"=").decode()
    update = (b"\x01\x01\x00" + cs("orders") + UUID_BYTES + i32(3) + b"\x00"
              + bytes(range(16)) + b"\x00" + i32(1) + i64(3000) + b"\x00" + b"\x03" + b"\x00")
    delete = b"\x01\x02\x00" + cs("orders") + UUID_BYTES + i32(3) + b"\x00" + i32(1) \
        + i64(4000) + b"\x00" + b"\x00"
    log = write_log(tmp_path, "__remote_log_metadata-0", [
        (None, remote_segment(1)), (None, update), (None, delete),
        (None, remote_segment(9)), (None, remote_segment(0, start=10, end=5)),
        (None, remote_segment(0, epochs=())), (None, None), (None, b"\x01\x09\x00")])
    r = cli("dump-segment", str(log), "--remote-log-metadata-decoder", "-o", "kafka")
    assert r.returncode == 0, r.stderr
    seg = (f"RemoteLogSegmentId{{topicIdPartition={UUID}:orders-3, id={seg_id}}}")
    assert payload_tails(r.stdout) == [
        f"payload: RemoteLogSegmentMetadata{{remoteLogSegmentId={seg}, startOffset=0, "
        "endOffset=99, brokerId=1, maxTimestampMs=1000, eventTimestampMs=2000, "
        "segmentLeaderEpochs={0=0, 2=50}, segmentSizeInBytes=4096, "
        "customMetadata=Optional[CustomMetadata{3 bytes}], state=COPY_SEGMENT_FINISHED, "
        "txnIdxEmpty=true}",
        f"payload: RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={seg}, "
        "customMetadata=Optional.empty, state=DELETE_SEGMENT_FINISHED, eventTimestampMs=3000, "
        "brokerId=1}",
        f"payload: RemotePartitionDeleteMetadata{{topicPartition={UUID}:orders-3, "
        "state=DELETE_PARTITION_MARKED, eventTimestampMs=4000, brokerId=1}",
        "payload: Error at offset 3, skipping. state can not be null",
        "payload: Error at offset 4, skipping. Unexpected end offset = 5. EndOffset for a "
        "remote segment cannot be less than startOffset = 10",
        "payload: Error at offset 5, skipping. segmentLeaderEpochs can not be null or empty",
        'payload: Error at offset 6, skipping. Cannot invoke "java.nio.ByteBuffer.remaining()" '
        'because the return value of "org.apache.kafka.common.record.internal.Record.value()" is null',
        "payload: Error at offset 7, skipping. org.apache.kafka.common.errors."
        "UnsupportedVersionException: Unknown metadata id 9",
    ]
    recs = json_records(cli("dump-segment", str(log), "--print-data-log", "-o", "json").stdout)
    assert recs[0]["key"] is None
    assert recs[0]["value"]["type"] == "REMOTE_LOG_SEGMENT_METADATA_RECORD"
    assert recs[0]["value"]["data"]["segmentLeaderEpochs"] == [
        {"leaderEpoch": 0, "offset": 0}, {"leaderEpoch": 2, "offset": 50}]
    assert recs[0]["value"]["data"]["customMetadata"] == base64.b64encode(b"abc").decode()
    assert "decodeWarnings" not in recs[0]
    assert recs[3]["decodeFailure"] == "Error at offset 3, skipping. state can not be null"
    assert recs[7]["value"] == {"raw": base64.b64encode(b"\x01\x09\x00").decode()}


# -- --key-decoder-class / --value-decoder-class --------------------------------------------------------

@pytest.mark.parametrize("cls", ["org.apache.kafka.tools.api.StringDecoder",
                                 "kafka.serializer.StringDecoder"])
def test_string_decoder_classes_print_bytes(cli, tmp_path, cls):
    """Kafka's tool: a decoder class (no topic decoder flag) means DecoderMessageParser, so
    even __consumer_offsets prints its bytes as text; it implies --print-data-log."""
    log = write_log(tmp_path, "__consumer_offsets-0", [(b"k1", b"v1")])
    r = cli("dump-segment", str(log), "--value-decoder-class", cls, "-o", "kafka")
    assert r.returncode == 0, r.stderr
    assert payload_tails(r.stdout) == ["key: k1 payload: v1"]
    r = cli("dump-segment", str(log), "--key-decoder-class", cls, "--offsets-decoder",
            "-o", "kafka")
    # a topic decoder wins over the decoder classes, as in Kafka's messageParser()
    assert payload_tails(r.stdout) == ["key: Unknown record type 27441 at offset 0, skipping."]


def test_other_decoder_classes_are_refused(cli, tmp_path):
    log = write_log(tmp_path, "t-0", [(b"k", b"v")])
    for opt in ("--key-decoder-class", "--value-decoder-class"):
        r = cli("dump-segment", str(log), opt, "com.example.AvroDecoder")
        assert r.returncode == 2
        assert "com.example.AvroDecoder" in r.stderr and "StringDecoder" in r.stderr
        assert r.stdout == ""


# -- Jackson's doubles ------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "text"), [
    (1048576.0, "1048576.0"), (10485760.0, "1.048576E7"), (1e-4, "1.0E-4"),
    (0.001, "0.001"), (-3e9, "-3.0E9"), (0.0, "0.0")])
def test_client_quota_doubles_as_java_prints_them(value, text):
    """Jackson writes a DoubleNode with Double.toString: scientific below 1e-3 and from
    1e7 on (java.lang.Double's documented format)."""
    from kafkalog_cli.decoders import ClusterMetadataDecoder

    # ClientQuotaRecord v0: entity [("user", "alice")], key, value, remove false
    body = (carr([cs("user") + cs("alice") + b"\x00"]) + cs("producer_byte_rate")
            + struct.pack(">d", value) + b"\x00" + b"\x00")
    d = ClusterMetadataDecoder().decode(None, b"\x01\x0e\x00" + body)
    assert d.warnings == []
    assert d.kafka_text(0)[1] == (
        '{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"user",'
        f'"entityName":"alice"}}],"key":"producer_byte_rate","value":{text},"remove":false}}}}')


def test_classic_member_subscription_decoded_in_json_only(cli, tmp_path):
    """A KIP-848 group member that joined with the classic protocol keeps its
    ConsumerProtocolSubscription bytes in classicMemberMetadata.supportedProtocols: Kafka's
    tool prints them as base64 (so does -o kafka); JSON adds the decoded subscription
    beside them; bytes that are not a subscription stay as they are."""
    subscription = i16(0) + i32(1) + s("orders") + i32(-1)  # v0: [orders], no user data
    protocols = carr([cs("range") + bytes([len(subscription) + 1]) + subscription + b"\x00",
                      cs("junk") + b"\x03\x00\x07" + b"\x00"])
    classic = i32(45000) + protocols + b"\x00"
    value = (i16(0) + b"\x00" + b"\x00" + cs("client") + cs("/h") + carr([cs("orders")])
             + b"\x00" + i32(300000) + b"\x00"
             + b"\x01" + b"\x00" + bytes([len(classic) + 1]) + b"\x01" + classic)
    key = i16(5) + s("g") + s("m")
    log = write_log(tmp_path, "__consumer_offsets-0", [(key, value)])
    (rec,) = json_records(cli("dump-segment", str(log), "--print-data-log", "-o",
                              "json").stdout)
    sub_b64 = base64.b64encode(subscription).decode()
    assert rec["value"]["data"]["classicMemberMetadata"] == {
        "sessionTimeoutMs": 45000, "supportedProtocols": [
            {"name": "range", "metadata": sub_b64,
             "subscription": {"topics": ["orders"], "userData": None}},
            {"name": "junk", "metadata": "AAc="}]}
    (tail,) = payload_tails(cli("dump-segment", str(log), "--print-data-log", "-o",
                                "kafka").stdout)
    assert tail.endswith('"classicMemberMetadata":{"sessionTimeoutMs":45000,'
                         f'"supportedProtocols":[{{"name":"range","metadata":"{sub_b64}"}},'
                         '{"name":"junk","metadata":"AAc="}]}}}')
