"""The admin APIs, differentially: CreateTopics validation, DescribeConfigs (sources,
defaults, synonyms, documentation), AlterConfigs / IncrementalAlterConfigs,
CreatePartitions, DeleteRecords, DescribeLogDirs, DescribeCluster, DeleteTopics; and
ApiVersions, whose ranges must equal the broker's but for the ones docs/serve.md lists."""

from __future__ import annotations

import itertools
import struct

import pytest
from wire_testkit import batch, list_offsets_body, produce_body

from kafkalog_cli.protocol.apis import APIS

pytestmark = pytest.mark.kafka

TOPIC, BROKER = 2, 4


@pytest.fixture(scope="module")
def pair(wire_pair):
    wire_pair.create_topic("ad-a", 2, {"retention.ms": "3600000", "cleanup.policy": "compact"})
    wire_pair.create_topic("ad-b", 1)
    wire_pair.create_topic("ad-del", 1)
    for n in (3, 4):
        wire_pair.same(0, 11, produce_body([("ad-b", 0, batch(n))]))
    return wire_pair


_N = itertools.count()


def create(name, n=1, rf=-1, configs=None, assignments=(), validate=False):
    return {"topics": [{"name": name, "numPartitions": n, "replicationFactor": rf,
                        "assignments": list(assignments),
                        "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}],
            "timeoutMs": 30000, "validateOnly": validate}


CREATE = {
    "exists": create("ad-a"),
    "zero-partitions": create("ad-x-" + str(next(_N)), 0),
    "negative-partitions": create("ad-x-" + str(next(_N)), -5),
    "rf-2": create("ad-x-" + str(next(_N)), 1, 2),
    "rf-0": create("ad-x-" + str(next(_N)), 1, 0),
    "bad-name": create("ad x"),
    "dot-dot": create(".."),
    "long-name": create("a" * 250),
    "collides": create("ad.a.x", validate=True),
    "unknown-config": create("ad-x-" + str(next(_N)), configs={"no.such.config": "1"}),
    "bad-config-value": create("ad-x-" + str(next(_N)), configs={"retention.ms": "soon"}),
    "config-below-min": create("ad-x-" + str(next(_N)), configs={"min.insync.replicas": "0"}),
    "bad-cleanup-policy": create("ad-x-" + str(next(_N)), configs={"cleanup.policy": "shred"}),
    "bad-timestamp-type": create("ad-x-" + str(next(_N)), configs={"message.timestamp.type": "Now"}),
    "bad-compression": create("ad-x-" + str(next(_N)), configs={"compression.type": "brotli"}),
    "null-config-value": create("ad-x-" + str(next(_N)), configs={"retention.ms": None}),
    "segment-bytes-min": create("ad-x-" + str(next(_N)), configs={"segment.bytes": "1048576"}, validate=True),
    "validate-only": create("ad-valid", 3, validate=True, configs={"retention.ms": "5"}),
    "assignments": create("ad-x-" + str(next(_N)), -1, -1, assignments=[
        {"partitionIndex": 0, "brokerIds": [1]}, {"partitionIndex": 1, "brokerIds": [1]}],
        validate=True),
    "assignments-and-count": create("ad-x-" + str(next(_N)), 2, -1, assignments=[
        {"partitionIndex": 0, "brokerIds": [1]}], validate=True),
    "assignment-unknown-broker": create("ad-x-" + str(next(_N)), -1, -1, assignments=[
        {"partitionIndex": 0, "brokerIds": [7]}], validate=True),
    "default-count": create("ad-default", -1, validate=True),
}


@pytest.mark.parametrize("case", list(CREATE))
def test_create_topics(pair, case):
    pair.same(19, 7, CREATE[case])


def test_segment_bytes_below_a_mebibyte_kept_difference(pair):
    """Kept difference (docs/serve.md): Kafka 4 refuses segment.bytes below 1 MiB; serve
    takes down to 14 bytes (tests and small stores roll segments with a few KiB)."""
    b, s = pair.both(19, 7, create("ad-small-seg", configs={"segment.bytes": "1048575"},
                                   validate=True))
    assert (b["topics"][0]["errorCode"], b["topics"][0]["errorMessage"]) == (
        40, "Invalid value 1048575 for configuration segment.bytes: Value must be at least "
            "1048576")
    assert s["topics"][0]["errorCode"] == 0


def test_create_topics_duplicate_in_request(pair):
    body = create("ad-dup")
    body["topics"] *= 2
    pair.same(19, 7, body)


@pytest.mark.parametrize("version", range(2, 8))
def test_create_topics_versions(pair, version):
    pair.same(19, version, create("ad-a"))


def describe(resources, synonyms=False, docs=False):
    return {"resources": [{"resourceType": t, "resourceName": n, "configurationKeys": k}
                          for t, n, k in resources],
            "includeSynonyms": synonyms, "includeDocumentation": docs}


@pytest.mark.parametrize("version", range(1, 5))
def test_describe_topic_configs(pair, version):
    pair.same(32, version, describe([(TOPIC, "ad-a", None), (TOPIC, "ad-b", None)],
                                    synonyms=version >= 1))


def test_describe_topic_configs_keys_and_docs(pair):
    """Kept difference (docs/serve.md): serve has no documentation strings (null)."""
    pair.same(32, 4, describe([(TOPIC, "ad-a", ["retention.ms", "cleanup.policy",
                                                "no.such", "segment.bytes"])],
                              synonyms=True, docs=True), mask=("documentation",))


def test_describe_configs_errors(pair):
    pair.same(32, 4, describe([(TOPIC, "ad-nope", None)]))
    pair.same(32, 4, describe([(TOPIC, "", None)]))
    pair.same(32, 4, describe([(BROKER, "7", None)]))
    pair.same(32, 4, describe([(BROKER, "x", None)]))
    pair.same(32, 4, describe([(9, "x", None)]))


def test_describe_broker_config_keys(pair):
    keys = ["num.partitions", "log.retention.hours", "log.segment.bytes", "min.insync.replicas",
            "group.initial.rebalance.delay.ms", "offsets.topic.num.partitions",
            "transaction.max.timeout.ms", "message.max.bytes", "compression.type"]
    pair.same(32, 4, describe([(BROKER, "1", keys)], synonyms=True))
    pair.same(32, 4, describe([(BROKER, "", ["log.retention.hours"])], synonyms=True))


def alter(resources, validate=False):
    return {"resources": [{"resourceType": t, "resourceName": n,
                           "configs": [{"name": k, "value": v} for k, v in c.items()]}
                          for t, n, c in resources], "validateOnly": validate}


def incremental(resources, validate=False):
    return {"resources": [{"resourceType": t, "resourceName": n, "configs": [
        {"name": k, "configOperation": op, "value": v} for k, op, v in c]}
        for t, n, c in resources], "validateOnly": validate}


ALTER = {
    "set": alter([(TOPIC, "ad-b", {"retention.ms": "1000", "segment.ms": "100000"})]),
    "unknown-topic": alter([(TOPIC, "ad-nope", {"retention.ms": "1"})]),
    "unknown-config": alter([(TOPIC, "ad-b", {"no.such": "1"})]),
    "bad-value": alter([(TOPIC, "ad-b", {"retention.ms": "x"})]),
    "validate-only": alter([(TOPIC, "ad-b", {"retention.ms": "5"})], validate=True),
    "broker-dynamic": alter([(BROKER, "1", {"log.retention.ms": "100000"})], validate=True),
    "broker-static": alter([(BROKER, "1", {"num.partitions": "3"})], validate=True),
    "other-broker": alter([(BROKER, "9", {"log.retention.ms": "1"})], validate=True),
}


@pytest.mark.parametrize("case", list(ALTER))
def test_alter_configs(pair, case):
    pair.same(33, 2, ALTER[case])
    pair.same(32, 4, describe([(TOPIC, "ad-b", None)]))


INCREMENTAL = {
    "set": incremental([(TOPIC, "ad-b", [("retention.ms", 0, "2000")])]),
    "delete": incremental([(TOPIC, "ad-b", [("segment.ms", 1, None)])]),
    "append-list": incremental([(TOPIC, "ad-b", [("cleanup.policy", 2, "compact")])]),
    "subtract-list": incremental([(TOPIC, "ad-b", [("cleanup.policy", 3, "delete")])]),
    "append-non-list": incremental([(TOPIC, "ad-b", [("retention.ms", 2, "1")])]),
    "bad-op": incremental([(TOPIC, "ad-b", [("retention.ms", 7, "1")])]),
    "duplicate-key": incremental([(TOPIC, "ad-b", [("retention.ms", 0, "1"),
                                                   ("retention.ms", 0, "2")])]),
    "null-set": incremental([(TOPIC, "ad-b", [("retention.ms", 0, None)])]),
    "unknown-topic": incremental([(TOPIC, "ad-nope", [("retention.ms", 0, "1")])]),
}


@pytest.mark.parametrize("case", list(INCREMENTAL))
def test_incremental_alter_configs(pair, case):
    pair.same(44, 1, INCREMENTAL[case])
    pair.same(32, 4, describe([(TOPIC, "ad-b", None)]))


def partitions(name, count, assignments=None, validate=False):
    return {"topics": [{"name": name, "count": count, "assignments": assignments}],
            "timeoutMs": 30000, "validateOnly": validate}


CREATE_PARTITIONS = {
    "grow-validate": partitions("ad-a", 4, validate=True),
    "same-count": partitions("ad-a", 2),
    "shrink": partitions("ad-a", 1),
    "unknown-topic": partitions("ad-nope", 3),
    "assignments-mismatch": partitions("ad-a", 4, [[1]], validate=True),
    "assignments-unknown-broker": partitions("ad-a", 3, [[5]], validate=True),
    "grow": partitions("ad-a", 3),
}


@pytest.mark.parametrize("case", list(CREATE_PARTITIONS))
def test_create_partitions(pair, case):
    pair.same(37, 3, CREATE_PARTITIONS[case])


def delete_records(name, offsets):
    return {"topics": [{"name": name, "partitions": [
        {"partitionIndex": p, "offset": o} for p, o in offsets]}], "timeoutMs": 30000}


DELETE_RECORDS = {
    "to-3": delete_records("ad-b", [(0, 3)]),
    "below-start": delete_records("ad-b", [(0, 1)]),
    "to-high-watermark": delete_records("ad-b", [(0, -1)]),
    "above-high-watermark": delete_records("ad-b", [(0, 100)]),
    "unknown-partition": delete_records("ad-b", [(4, 1)]),
    "unknown-topic": delete_records("ad-nope", [(0, 1)]),
    "compacted": delete_records("ad-a", [(0, 0)]),
}


@pytest.mark.parametrize("case", list(DELETE_RECORDS))
def test_delete_records(pair, case):
    pair.same(21, 2, DELETE_RECORDS[case])
    pair.same(2, 7, list_offsets_body("ad-b", [0], -2))


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_describe_log_dirs(pair, version):
    pair.same(35, version, {"topics": [{"topic": "ad-b", "partitions": [0, 3]},
                                       {"topic": "ad-nope", "partitions": [0]}]})


@pytest.mark.parametrize("version", [0, 1])
def test_describe_cluster(pair, version):
    pair.same(60, version, {"includeClusterAuthorizedOperations": True, "endpointType": 1})


def test_describe_cluster_controller_endpoints(pair):
    pair.same(60, 1, {"includeClusterAuthorizedOperations": False, "endpointType": 2})


@pytest.mark.parametrize("version", [1, 5, 6])
def test_delete_topics(pair, version):
    if version < 6:
        body = {"topicNames": ["ad-nope", "ad-del" if version == 5 else "ad-nope2"],
                "timeoutMs": 30000}
    else:
        body = {"topics": [{"name": "ad-nope", "topicId": "AAAAAAAAAAAAAAAAAAAAAA"},
                           {"name": None, "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}],
                "timeoutMs": 30000}
    pair.same(20, version, body)


# -- ApiVersions ---------------------------------------------------------------------------

#: APIs the broker advertises on a plain listener and serve does not, each with its reason
#: (docs/serve.md, "ApiVersions")
NOT_SERVED = {
    # the controller's and the inter-broker APIs a client never sends a broker
    **dict.fromkeys([23, 27, 34, 38, 39, 40, 41, 43, 45, 46, 48, 49, 55, 57, 61, 64, 74,
                     80, 81, 86, 89, 90, 91, 92, 93, 94], "not answered by a single node "
                    "(replication, quotas, reassignment, delegation tokens, telemetry, "
                    "share groups, streams groups, feature updates)"),
    # the KIP-848 consumer group protocol and share groups
    68: "ConsumerGroupHeartbeat: serve's groups are classic",
    69: "ConsumerGroupDescribe: serve's groups are classic",
    75: "DescribeTopicPartitions: not yet served (clients fall back to Metadata)",
    76: "ShareGroupHeartbeat", 77: "ShareGroupDescribe", 78: "ShareFetch",
    79: "ShareAcknowledge", 83: "InitializeShareGroupState",
    84: "ReadShareGroupState", 85: "WriteShareGroupState",
    87: "DeleteShareGroupState", 88: "ReadShareGroupStateSummary",
}


# -- the security APIs on a listener without SASL, a node without an authorizer ----------------

_ANY_ACL = {"resourceTypeFilter": 1, "resourceNameFilter": None, "patternTypeFilter": 1,
            "principalFilter": None, "hostFilter": None, "operation": 1, "permissionType": 1}


@pytest.mark.parametrize(("api_key", "version", "body"), [
    (17, 1, {"mechanism": "PLAIN"}),  # SaslHandshake outside a SASL listener
    (29, 3, _ANY_ACL),  # DescribeAcls, CreateAcls, DeleteAcls: SECURITY_DISABLED
    (30, 3, {"creations": [{"resourceType": 2, "resourceName": "ad-a",
                            "resourcePatternType": 3, "principal": "User:alice",
                            "host": "*", "operation": 3, "permissionType": 3}]}),
    (31, 3, {"filters": [_ANY_ACL]}),
    (50, 0, {"users": None}),  # DescribeUserScramCredentials: none stored
    (50, 0, {"users": [{"name": "nobody"}, {"name": "nobody"}]}),
    (51, 0, {"deletions": [{"name": "nobody", "mechanism": 1}], "upsertions": []}),
], ids=["sasl-handshake", "describe-acls", "create-acls", "delete-acls",
        "describe-scram-all", "describe-scram-named", "alter-scram-delete-missing"])
def test_security_apis_without_sasl_or_authorizer(pair, api_key, version, body):
    pair.same(api_key, version, body)


def test_api_versions_match_the_broker(pair):
    b, s = pair.both(18, 3, {"clientSoftwareName": "wire", "clientSoftwareVersion": "1"})
    broker = {a["apiKey"]: (a["minVersion"], a["maxVersion"]) for a in b["apiKeys"]}
    serve = {a["apiKey"]: (a["minVersion"], a["maxVersion"]) for a in s["apiKeys"]}
    assert set(serve) <= set(broker), set(serve) - set(broker)
    missing = {k for k in broker if k not in serve and k not in NOT_SERVED}
    assert not missing, f"APIs the broker serves, serve neither serves nor documents: {missing}"
    differ = {k: (broker[k], serve[k]) for k in serve if serve[k] != broker[k]
              and k not in RANGES_DIFFER}
    assert not differ, f"version ranges that differ undocumented: {differ}"
    for k, (lo, hi) in RANGES_DIFFER.items():
        assert (serve.get(k), broker.get(k)) == ((lo, hi), BROKER_RANGES[k]), k
    assert {k: v for k, v in RANGES_DIFFER.items() if serve.get(k) == broker.get(k)} == {}


#: APIs whose served range differs from the broker's: serve's range (docs/serve.md,
#: "ApiVersions", gives each reason), and the pinned broker's
RANGES_DIFFER = {0: (3, 11), 1: (4, 16), 2: (1, 9), 3: (0, 12), 8: (0, 8), 9: (1, 8),
                 10: (0, 4), 15: (0, 5), 18: (0, 4), 22: (0, 4), 24: (0, 3), 26: (0, 4),
                 28: (0, 4), 32: (0, 4), 35: (0, 4), 42: (0, 2), 60: (0, 1), 66: (0, 1)}
BROKER_RANGES = {0: (0, 13), 1: (4, 18), 2: (1, 11), 3: (0, 13), 8: (2, 10), 9: (1, 10),
                 10: (0, 6), 15: (0, 6), 18: (0, 5), 22: (0, 5), 24: (0, 5), 26: (0, 5),
                 28: (0, 6), 32: (1, 4), 35: (1, 5), 42: (0, 3), 60: (0, 2), 66: (0, 2)}


def test_api_versions_unsupported_version(pair):
    """KIP-511: a version above the served range is answered as v0, UNSUPPORTED_VERSION
    and ApiVersions' own range (the broker's 0-5 is wider: v5 is in RANGES_DIFFER)."""
    header = struct.pack(">hhih", 18, 99, 5, 4) + b"wire" + b"\x00"  # header v2
    frame = struct.pack(">i", len(header)) + header
    ex = pair.send(18, 0, None, raw=frame)
    assert ex.broker["errorCode"] == ex.serve["errorCode"] == 35
    assert [a["apiKey"] for a in ex.broker["apiKeys"]] == [a["apiKey"] for a in
                                                          ex.serve["apiKeys"]] == [18]
    assert APIS[18].max_version >= 3
