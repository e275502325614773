"""Protocol layer and framing: schema round trips, ApiVersions (incl. KIP-511), and what
closes a connection (only that one)."""

from __future__ import annotations

import struct

import pytest
from serve_testkit import RawClient

from kafkalog_cli.errors import InvalidRequest
from kafkalog_cli.protocol.apis import APIS, ApiKeys, api_versions_table
from kafkalog_cli.protocol.errors import Errors
from kafkalog_cli.protocol.wire import encode_request, parse_request


def _sample(field, version):
    """A non-default value for every field present at ``version``."""
    if field.is_struct:
        one = {f.name: _sample(f, version) for f in field.fields if version in f.versions}
        return [one] if field.is_array else one
    t = field.element
    value = {"bool": True, "int8": 3, "int16": 300, "int32": 70000, "int64": 2**40,
             "uint16": 65000, "uint32": 2**31, "float64": 1.5,
             "uuid": "AAAAAAAAAAAAAAAAAAAAAQ", "string": "é-x",
             "bytes": b"\x00\x01", "records": b"\x07" * 70}[t]
    return [value, value] if field.is_array else value


@pytest.mark.parametrize("api", list(APIS.values()), ids=lambda a: a.key.name)
def test_every_declared_version_round_trips(api):
    for msg in (api.request, api.response):
        for v in msg.versions:
            obj = {f.name: _sample(f, v) for f in msg.fields if v in f.versions}
            data = msg.build(obj, v)
            back, end = msg.parse(data, v)
            assert end == len(data)
            assert msg.build(back, v) == data


def test_api_versions_table_matches_served_ranges():
    table = {e["apiKey"]: (e["minVersion"], e["maxVersion"]) for e in api_versions_table()}
    assert table == {0: (3, 11), 1: (4, 16), 2: (1, 9), 3: (0, 12), 8: (0, 8), 9: (1, 8),
                     10: (0, 4), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 5),
                     16: (0, 5), 18: (0, 4), 19: (2, 7), 20: (1, 6), 21: (0, 2), 22: (0, 4),
                     32: (0, 4), 33: (0, 2), 35: (0, 4), 37: (0, 3), 42: (0, 2), 44: (0, 1),
                     47: (0, 0), 60: (0, 1), 24: (0, 3), 25: (0, 4), 26: (0, 4), 28: (0, 4),
                     65: (0, 0), 66: (0, 1),
                     # security (Kafka 4.4's ranges: the ACL APIs' v0 went in 4.0)
                     17: (0, 1), 36: (0, 2), 29: (1, 3), 30: (1, 3), 31: (1, 3),
                     50: (0, 0), 51: (0, 0)}


@pytest.mark.parametrize("version", range(0, 5))
def test_api_versions_every_version(raw, version):
    c = raw()
    body = {"clientSoftwareName": "kafkalog-test", "clientSoftwareVersion": "1.0"}
    res = c.request(18, version, body)
    assert res["errorCode"] == 0
    assert res["apiKeys"] == api_versions_table()
    if version >= 1:
        assert res["throttleTimeMs"] == 0


def test_api_versions_unsupported_version_kip511_exact_bytes(raw):
    c = raw()
    # ApiVersions v127: header v2 (flexible), body ignored, answered as v0
    header = struct.pack(">hhih", 18, 127, 42, 3) + b"abc" + b"\x00"
    frame = header + b"\x07garbage"
    c.send_raw(struct.pack(">i", len(frame)) + frame)
    resp = c.recv_frame()
    # ResponseHeader v0 (correlation id) + ApiVersionsResponse v0:
    # errorCode 35, apiKeys [{18, 0, 4}]
    assert resp == struct.pack(">ih", 42, 35) + struct.pack(">i", 1) + struct.pack(">hhh", 18,
                                                                                    0, 4)
    # the connection stays usable
    assert c.request(18, 0, {})["errorCode"] == 0


def test_api_versions_invalid_software_name(raw):
    res = raw().request(18, 3, {"clientSoftwareName": "-bad-", "clientSoftwareVersion": "1"})
    assert res["errorCode"] == Errors.INVALID_REQUEST
    assert res["apiKeys"] == []


def test_parse_request_rules():
    ok = encode_request(3, 12, 1, {"topics": None})[4:]
    assert parse_request(ok).api_key == ApiKeys.METADATA
    with pytest.raises(InvalidRequest, match="Unknown API key 27"):  # WriteTxnMarkers
        parse_request(struct.pack(">hhih", 27, 0, 1, -1))
    with pytest.raises(InvalidRequest, match="not enabled"):
        parse_request(struct.pack(">hhih", 0, 2, 1, -1) + b"\x00" * 20)
    with pytest.raises(InvalidRequest):
        parse_request(ok[:-1])


# librdkafka 2.16.1's all-topics Metadata v12 request (AdminClient.list_topics), captured
# from confluent-kafka: three bytes follow the body (null topics, allowAutoTopicCreation,
# includeTopicAuthorizedOperations, empty tagged fields).
LIBRDKAFKA_METADATA_V12_ALL_TOPICS = bytes.fromhex(
    "0003000c00000003000772646b61666b610000000000010000")


def test_bytes_after_the_body_are_ignored_as_kafka_ignores_them():
    # RequestContext.parseRequest reads what the schema needs and never checks the rest
    req = parse_request(LIBRDKAFKA_METADATA_V12_ALL_TOPICS)
    assert (req.api_key, req.api_version, req.correlation_id) == (ApiKeys.METADATA, 12, 3)
    assert req.client_id == "rdkafka"
    assert req.body["topics"] is None
    assert req.body["allowAutoTopicCreation"] is False
    ok = encode_request(3, 12, 1, {"topics": None})[4:]
    assert parse_request(ok + b"\x00\x01\x02").body == parse_request(ok).body


def test_librdkafka_all_topics_metadata_is_answered(server, raw):
    c = raw()
    c.send_raw(struct.pack(">i", len(LIBRDKAFKA_METADATA_V12_ALL_TOPICS))
               + LIBRDKAFKA_METADATA_V12_ALL_TOPICS)
    frame = c.recv_frame()
    assert frame is not None, "the connection was closed"
    assert struct.unpack_from(">i", frame)[0] == 3  # the correlation id
    assert c.request(18, 0, {})["errorCode"] == 0


def _expect_closed(client: RawClient) -> None:
    assert client.recv_frame() is None


@pytest.mark.parametrize("payload", [
    struct.pack(">i", -5),                                     # negative size
    struct.pack(">i", 200 * 1024 * 1024),                      # > socket.request.max.bytes
    struct.pack(">i", 3) + b"abc",                             # shorter than a header
    struct.pack(">i", 12) + b"\xff" * 12,                      # garbage: api key -1
    struct.pack(">i", 10) + struct.pack(">hhih", 24, 0, 1, -1),  # AddOffsetsToTxn: not served
    struct.pack(">i", 10) + struct.pack(">hhih", 0, 2, 1, -1),   # Produce v2: not served
    struct.pack(">i", 10) + struct.pack(">hhih", 1, 17, 1, -1),  # Fetch v17: not served
    struct.pack(">i", 14) + struct.pack(">hhih", 3, 1, 1, -1) + b"\x00\x00\x10\x00",  # bad body
], ids=["negative-size", "too-large", "short", "garbage", "unknown-api", "produce-v2",
        "fetch-v17", "truncated-body"])
def test_malformed_frames_close_only_that_connection(server, raw, payload):
    other = raw()
    assert other.request(18, 3, {"clientSoftwareName": "a", "clientSoftwareVersion": "1"})[
        "errorCode"] == 0
    bad = raw()
    bad.send_raw(payload)
    _expect_closed(bad)
    # the server still serves the other connection and new ones
    assert other.request(3, 12, {"topics": None})["brokers"][0]["port"] == server.port
    assert raw().request(18, 0, {})["errorCode"] == 0


def test_eof_inside_a_frame_is_one_connection_error(server, raw):
    before = server.server.connection_errors
    bad = raw()
    bad.send_raw(struct.pack(">i", 100) + b"\x00" * 10)
    bad.sock.shutdown(1)
    _expect_closed(bad)
    assert raw().request(18, 1, {})["errorCode"] == 0
    assert server.server.connection_errors == before + 1


def test_metadata_all_versions(server, raw):
    from serve_testkit import create_topic

    c = raw()
    create_topic(c, "meta-t", 3)
    for v in range(0, 13):
        body = {"topics": None if v >= 1 else [], "allowAutoTopicCreation": False,
                "includeTopicAuthorizedOperations": False}
        res = c.request(3, v, body)
        assert res["brokers"][0]["nodeId"] == 0
        assert res["brokers"][0]["host"] == "127.0.0.1"
        t = res["topics"][0]
        assert t["name"] == "meta-t" and t["errorCode"] == 0
        assert [p["partitionIndex"] for p in t["partitions"]] == [0, 1, 2]
        assert all(p["leaderId"] == 0 and p["replicaNodes"] == [0] and p["isrNodes"] == [0]
                   for p in t["partitions"])
    res = c.request(3, 12, {"topics": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAA", "name": "nope"},
                                       {"topicId": "AAAAAAAAAAAAAAAAAAAAAA", "name": "bad/name"}],
                            "allowAutoTopicCreation": True})
    assert [t["errorCode"] for t in res["topics"]] == [Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                                       Errors.INVALID_TOPIC_EXCEPTION]


@pytest.mark.parametrize("version", [10, 11])
@pytest.mark.parametrize("topic", [{"name": None, "topicId": "AAAAAAAAAAAAAAAAAAAAAA"},
                                   {"name": "meta-t", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}])
def test_metadata_topic_ids_below_v12_are_an_invalid_request(server, raw, version, topic):
    """Found by the fuzz harness: a Metadata v10/v11 request naming a topic by id (a null
    name) was answered with a null name, which v10/v11 cannot encode: the connection
    closed on an unexpected ValidationError. KafkaApis.handleTopicMetadataRequest throws
    InvalidRequestException, answered by MetadataRequest.getErrorResponse: every
    requested topic with INVALID_REQUEST, a null name as ""."""
    from serve_testkit import create_topic

    c = raw()
    create_topic(c, "meta-t", 1)
    res = c.request(3, version, {"topics": [topic, {"name": "meta-t",
                                                    "topicId": "AAAAAAAAAAAAAAAAAAAAAA"}],
                                 "allowAutoTopicCreation": False,
                                 "includeTopicAuthorizedOperations": False})
    assert [(t["name"], t["errorCode"], t["partitions"]) for t in res["topics"]] == [
        (topic["name"] or "", Errors.INVALID_REQUEST, []), ("meta-t", Errors.INVALID_REQUEST, [])]
    assert res["brokers"] == [] and res["controllerId"] == -1
    assert c.request(18, 3, {"clientSoftwareName": "a", "clientSoftwareVersion": "1"})[
        "errorCode"] == 0  # the connection stays open
