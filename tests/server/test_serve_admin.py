"""The admin APIs (server/admin.py): CreatePartitions, AlterConfigs, IncrementalAlterConfigs,
DescribeConfigs, DescribeCluster, DescribeLogDirs, DeleteRecords and ListOffsets' special
timestamps - raw requests for Kafka's error codes and messages, and the admin clients of
librdkafka (confluent-kafka), kafka-python and aiokafka for what they see."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from serve_testkit import NO_GROUP_DELAY, RawClient, create_topic
from test_serve_fetch import fetch
from test_serve_produce_errors import TS, batch, part, produce

from kafkalog_cli.protocol.errors import Errors
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions
from kafkalog_cli.storage.checkpoints import read_offset_checkpoint
from kafkalog_cli.storage.files import TopicPartition as TP
from kafkalog_cli.storage.log import Log

CREATE_PARTITIONS, ALTER, INCREMENTAL_ALTER, DESCRIBE_CONFIGS = 37, 33, 44, 32
DESCRIBE_CLUSTER, DESCRIBE_LOG_DIRS, DELETE_RECORDS, LIST_OFFSETS, METADATA = 60, 35, 21, 2, 3
TOPIC, BROKER, GROUP = 2, 4, 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _serve(log_dir, configs=None, **options):
    return ServerThread(log_dir, ServerOptions(port=0, **options),
                        server_configs=dict(NO_GROUP_DELAY, **(configs or {})))


def _topic_id_on_disk(d) -> str:
    """partition.metadata as the broker writes it: ``version: 0`` / ``topic_id: <id>``."""
    lines = (d / "partition.metadata").read_text().splitlines()
    return dict(x.split(": ", 1) for x in lines)["topic_id"]


def _create_partitions(c, topics, version=3, validate_only=False):
    return c.request(CREATE_PARTITIONS, version, {
        "topics": [{"name": n, "count": k, "assignments": a} for n, k, a in topics],
        "timeoutMs": 1000, "validateOnly": validate_only})["results"]


# -- CreatePartitions ---------------------------------------------------------------------

def test_create_partitions_errors_and_directories(log_dir, raw):
    c = raw()
    tid = create_topic(c, "t", 2)["topicId"]
    res = _create_partitions(c, [("t", 4, None), ("gone", 3, None), ("dup", 2, None),
                                 ("dup", 3, None)])
    by = {r["name"]: (r["errorCode"], r["errorMessage"]) for r in res}
    assert by == {"t": (0, None),
                  # no message: the bench broker writes none (tests/wire)
                  "gone": (Errors.UNKNOWN_TOPIC_OR_PARTITION, None),
                  "dup": (Errors.INVALID_REQUEST, "Duplicate topic name.")}
    assert len(res) == 3
    # the new partitions are directories of the same topic id, served at once
    assert {_topic_id_on_disk(log_dir / f"t-{p}") for p in range(4)} == {
        _topic_id_on_disk(log_dir / "t-0")}
    md = c.request(METADATA, 12, {"topics": [{"topicId": tid, "name": None}],
                                  "allowAutoTopicCreation": False,
                                  "includeTopicAuthorizedOperations": False})
    assert [p["partitionIndex"] for p in md["topics"][0]["partitions"]] == [0, 1, 2, 3]
    assert part(produce(c, "t", batch(2), partition=3))["baseOffset"] == 0
    # ReplicationControlManager.createPartitions' refusals
    res = _create_partitions(c, [("t", 4, None)])
    assert (res[0]["errorCode"], res[0]["errorMessage"]) == (
        Errors.INVALID_PARTITIONS, "Topic already has 4 partition(s).")
    res = _create_partitions(c, [("t", 3, None)], version=0)
    assert (res[0]["errorCode"], res[0]["errorMessage"]) == (
        Errors.INVALID_PARTITIONS, "The topic t currently has 4 partition(s); 3 would not be "
                                   "an increase.")
    res = _create_partitions(c, [("t", 6, [{"brokerIds": [0]}])])
    assert (res[0]["errorCode"], res[0]["errorMessage"]) == (
        Errors.INVALID_REPLICA_ASSIGNMENT, "Attempted to add 2 additional partition(s), but "
                                           "only 1 assignment(s) were specified.")
    for ids, message in (([7], "includes broker 7, but no such broker is registered."),
                         ([], "includes an empty replica list."),
                         ([0, 0], "includes the broker 0 more than once.")):
        res = _create_partitions(c, [("t", 5, [{"brokerIds": ids}])])
        assert res[0]["errorCode"] == Errors.INVALID_REPLICA_ASSIGNMENT
        assert res[0]["errorMessage"] == "The manual partition assignment " + message
    # validateOnly checks and creates nothing
    res = _create_partitions(c, [("t", 6, [{"brokerIds": [0]}, {"brokerIds": [0]}])],
                             validate_only=True)
    assert res[0]["errorCode"] == 0 and not (log_dir / "t-4").exists()


def test_a_request_creating_more_than_10000_records_fails_whole(log_dir, raw):
    """QuorumController.MAX_RECORDS_PER_USER_OP: the records one CreateTopics or
    CreatePartitions request would create (a TopicRecord, a PartitionRecord per partition, a
    ConfigRecord per config) overflow the controller's BoundedList past 10,000 and every
    topic of the request gets POLICY_VIOLATION with EventHandlerExceptionInfo's message;
    nothing is created. Found by the fuzz harness: a drawn CreatePartitions for 36,650
    partitions kept serve busy for minutes."""
    c = raw()
    create_topic(c, "t", 1)
    big = "Unable to perform excessively large batch operation."
    res = _create_partitions(c, [("t", 5001, None), ("gone", 2, None), ("t2", 5001, None)],
                             validate_only=True)
    # "gone" and "t2" fail on their own; t (5,000 new partitions) alone is allowed
    assert {r["name"]: r["errorCode"] for r in res} == {
        "t": 0, "gone": Errors.UNKNOWN_TOPIC_OR_PARTITION, "t2": Errors.UNKNOWN_TOPIC_OR_PARTITION}
    create_topic(c, "u", 1)
    res = _create_partitions(c, [("u", 5001, None), ("t", 10_002, None)], validate_only=True)
    assert [(r["name"], r["errorCode"], r["errorMessage"]) for r in res] == [
        ("u", Errors.POLICY_VIOLATION, big), ("t", Errors.POLICY_VIOLATION, big)]

    def create(topics, validate_only):
        return c.request(19, 7, {"topics": [
            {"name": n, "numPartitions": k, "replicationFactor": 1, "assignments": [],
             "configs": [{"name": "cleanup.policy", "value": "compact"}] * cfg}
            for n, k, cfg in topics], "timeoutMs": 1000,
            "validateOnly": validate_only})["topics"]

    # 1 + 9,998 + 1 = 10,000 records: allowed (validateOnly: nothing written)
    res = create([("v", 9998, 1)], True)
    assert (res[0]["errorCode"], res[0]["numPartitions"]) == (0, 9998)
    res = create([("v", 9998, 1), ("w", 1, 0)], True)
    assert [(r["name"], r["errorCode"], r["errorMessage"], r["numPartitions"]) for r in res] == [
        ("v", Errors.POLICY_VIOLATION, big, -1), ("w", Errors.POLICY_VIOLATION, big, -1)]
    res = create([("w", 10_000, 0)], False)
    assert res[0]["errorCode"] == Errors.POLICY_VIOLATION
    assert not (log_dir / "w-0").exists()
    assert sorted(p.name for p in log_dir.iterdir() if p.name.startswith("t-"))[:1] == ["t-0"]


def test_create_partitions_with_every_admin_client(log_dir):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewPartitions
    from kafka.admin import KafkaAdminClient
    from kafka.admin import NewPartitions as KpNewPartitions

    with _serve(log_dir) as s:
        c = RawClient(s.port)
        create_topic(c, "t", 1)
        a = AdminClient({"bootstrap.servers": s.bootstrap, "log_level": 3})
        assert a.create_partitions([NewPartitions("t", 3)])["t"].result(10) is None
        with pytest.raises(Exception, match="INVALID_PARTITIONS"):
            a.create_partitions([NewPartitions("t", 2)])["t"].result(10)
        kp = KafkaAdminClient(bootstrap_servers=s.bootstrap)
        r = kp.create_partitions({"t": KpNewPartitions(4)})
        assert [x.error_code for x in r.results] == [0]
        kp.close()

        async def aio():
            from aiokafka.admin import AIOKafkaAdminClient
            from aiokafka.admin import NewPartitions as AioNewPartitions

            ac = AIOKafkaAdminClient(bootstrap_servers=s.bootstrap)
            await ac.start()
            try:
                return await ac.create_partitions({"t": AioNewPartitions(5)})
            finally:
                await ac.close()

        assert [x[1] for x in asyncio.run(aio()).topic_errors] == [0]
        # librdkafka learns the new count and writes to the last partition
        p = Producer({"bootstrap.servers": s.bootstrap, "log_level": 3})
        reports = []
        p.produce("t", b"x", partition=4, on_delivery=lambda e, m: reports.append((e, m.offset())))
        assert p.flush(10) == 0 and reports == [(None, 0)]
        c.close()
    assert sorted(d.name for d in log_dir.iterdir() if d.is_dir()) == [f"t-{i}" for i in range(5)]


# -- AlterConfigs / IncrementalAlterConfigs ------------------------------------------------

def _alter(c, resources, *, incremental=True, validate_only=False, version=None):
    key = INCREMENTAL_ALTER if incremental else ALTER
    res = c.request(key, (1 if incremental else 2) if version is None else version, {
        "resources": [{"resourceType": t, "resourceName": n, "configs": [
            {"name": k, "configOperation": op, "value": v} for k, op, v in cfgs]}
            for t, n, cfgs in resources], "validateOnly": validate_only})
    return [(r["resourceName"], r["errorCode"], r["errorMessage"]) for r in res["responses"]]


def _describe(c, resources, synonyms=False, version=4):
    res = c.request(DESCRIBE_CONFIGS, version, {"resources": [
        {"resourceType": t, "resourceName": n, "configurationKeys": keys}
        for t, n, keys in resources], "includeSynonyms": synonyms,
        "includeDocumentation": False})
    return res["results"]


def _configs(result) -> dict:
    return {e["name"]: e for e in result["configs"]}


def test_incremental_alter_configs_ops_and_errors(raw):
    c = raw()
    create_topic(c, "t", configs={"retention.ms": "1000"})
    assert _alter(c, [(TOPIC, "t", [("segment.bytes", SET, "4096"),
                                    ("retention.ms", DELETE, None),
                                    ("cleanup.policy", APPEND, "compact")])]) == [("t", 0, None)]
    cfg = _configs(_describe(c, [(TOPIC, "t", None)])[0])
    assert (cfg["segment.bytes"]["value"], cfg["segment.bytes"]["configSource"]) == ("4096", 1)
    assert (cfg["retention.ms"]["value"], cfg["retention.ms"]["configSource"]) == (
        "604800000", 5)
    # APPEND starts from the default list; SUBTRACT removes
    assert cfg["cleanup.policy"]["value"] == "delete,compact"
    assert _alter(c, [(TOPIC, "t", [("cleanup.policy", SUBTRACT, "delete")])])[0][1] == 0
    assert _configs(_describe(c, [(TOPIC, "t", ["cleanup.policy"])])[0])[
        "cleanup.policy"]["value"] == "compact"
    # ConfigurationControlManager / LogConfig.validate refusals: INVALID_CONFIG
    assert _alter(c, [(TOPIC, "t", [("segment.bytes", APPEND, "1")])]) == [
        ("t", Errors.INVALID_CONFIG, "Can't APPEND to key segment.bytes because its type is "
                                     "not LIST.")]
    assert _alter(c, [(TOPIC, "t", [("no.such", SET, "1")])]) == [
        ("t", Errors.INVALID_CONFIG, "Unknown topic config name: no.such")]
    assert _alter(c, [(TOPIC, "t", [("segment.bytes", SET, "abc")])])[0][1] == \
        Errors.INVALID_CONFIG
    assert _alter(c, [(TOPIC, "t", [("min.compaction.lag.ms", SET, "10"),
                                    ("max.compaction.lag.ms", SET, "5")])])[0][1] == \
        Errors.INVALID_CONFIG
    # the values are checked before the topic's existence (validator, then existenceChecker)
    assert _alter(c, [(TOPIC, "gone", [("segment.bytes", SET, "x")])])[0][1] == \
        Errors.INVALID_CONFIG
    assert _alter(c, [(TOPIC, "gone", [("segment.bytes", SET, "4096")])]) == [
        ("gone", Errors.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'gone' does not exist.")]
    # ConfigAdminManager.preprocess: INVALID_REQUEST
    assert _alter(c, [(TOPIC, "t", []), (TOPIC, "t", [])]) == [
        ("t", Errors.INVALID_REQUEST, "Each resource must appear at most once.")] * 2
    assert _alter(c, [(TOPIC, "t", [("flush.ms", SET, "1"), ("flush.ms", DELETE, None)])]) == [
        ("t", Errors.INVALID_REQUEST, "Error due to duplicate config keys")]
    assert _alter(c, [(TOPIC, "t", [("flush.ms", SET, None)])]) == [
        ("t", Errors.INVALID_REQUEST, "Null value not supported for : flush.ms")]
    # AlterConfigOp.OpType.forId throws: UNKNOWN_SERVER_ERROR, as the bench broker answers
    assert _alter(c, [(TOPIC, "t", [("flush.ms", 9, "1")])])[0][1] == \
        Errors.UNKNOWN_SERVER_ERROR
    assert _alter(c, [(TOPIC, "", [("flush.ms", SET, "1")])])[0][1] == Errors.INVALID_REQUEST
    assert _alter(c, [(TOPIC, "a/b", [("flush.ms", SET, "1")])])[0][1] == \
        Errors.INVALID_TOPIC_EXCEPTION
    # broker resources: only this node's id or "", only dynamic configs
    assert _alter(c, [(BROKER, "7", [("log.retention.ms", SET, "1")])]) == [
        ("7", Errors.INVALID_REQUEST, "Unexpected broker id, expected 0, but received 7")]
    assert _alter(c, [(BROKER, "0", [("group.initial.rebalance.delay.ms", SET, "1")])]) == [
        ("0", Errors.INVALID_REQUEST, "Cannot update these configs dynamically: "
                                      "[group.initial.rebalance.delay.ms]")]
    assert _alter(c, [(BROKER, "", [("log.segment.bytes", SET, "12")])])[0][1] == \
        Errors.INVALID_REQUEST
    # validateOnly: checked, nothing changes
    assert _alter(c, [(TOPIC, "t", [("flush.ms", SET, "7")])], validate_only=True)[0][1] == 0
    assert _configs(_describe(c, [(TOPIC, "t", ["flush.ms"])])[0])["flush.ms"][
        "configSource"] == 5


def test_legacy_alter_configs_replaces_every_override(raw):
    c = raw()
    create_topic(c, "t", configs={"retention.ms": "1000", "flush.ms": "99"})
    assert _alter(c, [(TOPIC, "t", [("segment.ms", None, "5000")])], incremental=False,
                  version=0) == [("t", 0, None)]
    cfg = _configs(_describe(c, [(TOPIC, "t", None)])[0])
    assert {k for k, e in cfg.items() if e["configSource"] == 1} == {"segment.ms"}
    assert _alter(c, [(TOPIC, "t", [("segment.ms", None, None)])], incremental=False) == [
        ("t", Errors.INVALID_REQUEST, "Null value not supported for : segment.ms")]


def test_altered_configs_drive_the_engine_and_survive_a_restart(log_dir):
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        create_topic(c, "t")
        create_topic(c, "u")
        assert _alter(c, [(TOPIC, "t", [("segment.bytes", SET, "1000")]),
                          (BROKER, "", [("log.segment.bytes", SET, "2000")])]) == [
            ("t", 0, None), ("", 0, None)]
        for topic in ("t", "u"):
            for _ in range(10):
                assert part(produce(c, topic, batch(3, size=100)))["errorCode"] == 0
        c.close()
    # LogSegment rolls at segment.bytes: every segment but the last holds at most that much
    for topic, limit in (("t", 1000), ("u", 2000)):
        sizes = [seg.log_path.stat().st_size for seg in Log.open(log_dir / f"{topic}-0").segments]
        assert len(sizes) >= 2 and max(sizes) <= limit, (topic, sizes)
    state = json.loads((log_dir / "kafkalog-serve.json").read_text())
    assert state["topicConfigs"] == {"t": {"segment.bytes": "1000"}}
    assert state["brokerConfigs"] == {"": {"log.segment.bytes": "2000"}}
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        t, u, b = _describe(c, [(TOPIC, "t", ["segment.bytes"]), (TOPIC, "u", ["segment.bytes"]),
                                (BROKER, "", None)], synonyms=True)
        assert _configs(t)["segment.bytes"]["synonyms"] == [
            {"name": "segment.bytes", "value": "1000", "source": 1},
            {"name": "log.segment.bytes", "value": "2000", "source": 3},
            {"name": "log.segment.bytes", "value": "1073741824", "source": 5}]
        assert (_configs(u)["segment.bytes"]["value"],
                _configs(u)["segment.bytes"]["configSource"]) == ("2000", 3)
        assert [(e["name"], e["value"], e["configSource"], e["readOnly"])
                for e in b["configs"]] == [("log.segment.bytes", "2000", 3, False)]
        # a deleted dynamic config falls back to the default
        assert _alter(c, [(BROKER, "", [("log.segment.bytes", DELETE, None)])])[0][1] == 0
        assert _configs(_describe(c, [(TOPIC, "u", ["segment.bytes"])])[0])[
            "segment.bytes"]["value"] == "1073741824"
        c.close()


def test_describe_configs_sources_synonyms_and_read_only(log_dir):
    """ConfigHelper: a topic config's source is its first synonym's; synonyms list each
    layer's broker synonyms and drop those before the first one's name (so retention.ms
    shows no log.retention.hours); broker configs are read-only unless dynamic."""
    configs = {"segment.bytes": "4096", "log.retention.hours": "5"}
    with _serve(log_dir, configs) as s:
        c = RawClient(s.port)
        create_topic(c, "t", configs={"flush.ms": "10"})
        [t] = _describe(c, [(TOPIC, "t", None)], synonyms=True)
        cfg = _configs(t)
        # Kafka 4.4's LogConfig: 37 keys (the bench broker lists as many: tests/wire)
        assert len(cfg) == 37 and not any(e["readOnly"] for e in cfg.values())
        assert (cfg["segment.bytes"]["value"], cfg["segment.bytes"]["configSource"],
                cfg["segment.bytes"]["synonyms"]) == ("4096", 4, [
                    {"name": "log.segment.bytes", "value": "4096", "source": 4},
                    {"name": "log.segment.bytes", "value": "1073741824", "source": 5}])
        # log.retention.hours applies (5 h) but is no synonym of retention.ms's log.retention.ms
        assert (cfg["retention.ms"]["value"], cfg["retention.ms"]["configSource"],
                cfg["retention.ms"]["synonyms"]) == (str(5 * 3600000), 5, [])
        assert (cfg["flush.ms"]["value"], cfg["flush.ms"]["configSource"]) == ("10", 1)
        assert cfg["flush.ms"]["synonyms"] == [{"name": "flush.ms", "value": "10", "source": 1}]
        assert cfg["cleanup.policy"]["configType"] == 7  # LIST
        [b] = _describe(c, [(BROKER, "0", None)], synonyms=True)
        bc = _configs(b)
        assert (bc["node.id"]["value"], bc["node.id"]["readOnly"],
                bc["node.id"]["configSource"]) == ("0", True, 4)
        assert bc["log.dirs"]["value"] == str(log_dir.absolute())
        assert (bc["log.segment.bytes"]["readOnly"], bc["log.roll.hours"]["readOnly"]) == (
            False, True)
        assert (bc["group.initial.rebalance.delay.ms"]["value"],
                bc["group.initial.rebalance.delay.ms"]["configSource"]) == ("0", 4)
        assert bc["log.retention.hours"]["synonyms"] == [
            {"name": "log.retention.hours", "value": "5", "source": 4},
            {"name": "log.retention.hours", "value": "168", "source": 5}]
        # errors: unknown topic, bad names, other brokers, unsupported resource types
        results = _describe(c, [(TOPIC, "gone", None), (TOPIC, "a/b", None),
                                (BROKER, "3", None), (BROKER, "x", None), (8, "0", None)])
        assert [r["errorCode"] for r in results] == [
            Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.INVALID_TOPIC_EXCEPTION,
            Errors.INVALID_REQUEST, Errors.INVALID_REQUEST, Errors.INVALID_REQUEST]
        c.close()


def test_configs_through_confluent_kafka_python_and_aiokafka(log_dir):
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ConfigSource,
        ResourceType,
    )
    from kafka.admin import ConfigResource as KpResource
    from kafka.admin import ConfigResourceType, KafkaAdminClient

    with _serve(log_dir) as s:
        c = RawClient(s.port)
        create_topic(c, "t")
        a = AdminClient({"bootstrap.servers": s.bootstrap, "log_level": 3})
        r = ConfigResource(ResourceType.TOPIC, "t", incremental_configs=[
            ConfigEntry("retention.ms", "1000", incremental_operation=AlterConfigOpType.SET),
            ConfigEntry("cleanup.policy", "compact",
                        incremental_operation=AlterConfigOpType.APPEND)])
        for f in a.incremental_alter_configs([r]).values():
            f.result(10)
        [got] = [f.result(10) for f in a.describe_configs(
            [ConfigResource(ResourceType.TOPIC, "t")]).values()]
        assert (got["retention.ms"].value, got["retention.ms"].source) == (
            "1000", ConfigSource.DYNAMIC_TOPIC_CONFIG.value)
        assert got["cleanup.policy"].value == "delete,compact"
        assert got["segment.ms"].source == ConfigSource.DEFAULT_CONFIG.value
        [broker] = [f.result(10) for f in a.describe_configs(
            [ConfigResource(ResourceType.BROKER, "0")]).values()]
        assert broker["node.id"].is_read_only and not broker["log.retention.ms"].is_read_only
        # kafka-python: IncrementalAlterConfigs (its default with this server), then
        # DescribeConfigs ("modified" ones only, by their source)
        kp = KafkaAdminClient(bootstrap_servers=s.bootstrap)
        kp.alter_configs([KpResource(ConfigResourceType.TOPIC, "t",
                                     configs={"segment.bytes": "65536"})])
        modified = kp.describe_configs([KpResource(ConfigResourceType.TOPIC, "t")])["topic"]["t"]
        kp.close()
        assert {k: (e["value"], e["config_source"]) for k, e in modified.items()} == {
            "cleanup.policy": ("delete,compact", "DYNAMIC_TOPIC_CONFIG"),
            "retention.ms": ("1000", "DYNAMIC_TOPIC_CONFIG"),
            "segment.bytes": ("65536", "DYNAMIC_TOPIC_CONFIG")}

        async def aio():
            from aiokafka.admin import AIOKafkaAdminClient
            from aiokafka.admin.config_resource import ConfigResource as AioResource
            from aiokafka.admin.config_resource import ConfigResourceType as AioType

            ac = AIOKafkaAdminClient(bootstrap_servers=s.bootstrap)
            await ac.start()
            try:
                await ac.alter_configs([AioResource(AioType.TOPIC, "t",
                                                    configs={"flush.ms": "77"})])
                return await ac.describe_configs([AioResource(AioType.TOPIC, "t")])
            finally:
                await ac.close()

        [resp] = asyncio.run(aio())
        entries = {e[0]: e[1] for e in resp.resources[0][4]}
        assert entries["flush.ms"] == "77" and entries["segment.bytes"] == "1073741824"
        c.close()


# -- DescribeCluster / DescribeLogDirs ----------------------------------------------------

def test_describe_cluster(log_dir):
    from confluent_kafka.admin import AclOperation, AdminClient

    with _serve(log_dir) as s:
        meta = dict(line.split("=", 1) for line in
                    (log_dir / "meta.properties").read_text().splitlines()
                    if "=" in line and not line.startswith("#"))
        a = AdminClient({"bootstrap.servers": s.bootstrap, "log_level": 3})
        d = a.describe_cluster(include_authorized_operations=True).result(10)
        assert d.cluster_id == meta["cluster.id"]
        assert (d.controller.id, [(n.id, n.host, n.port) for n in d.nodes]) == (
            0, [(0, "127.0.0.1", s.port)])
        assert set(d.authorized_operations) == {
            AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
            AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER,
            AclOperation.DESCRIBE}
        c = RawClient(s.port)
        # librdkafka asks Metadata v8-10 for them (KafkaApis.handleTopicMetadataRequest)
        body = {"topics": [], "allowAutoTopicCreation": False,
                "includeClusterAuthorizedOperations": True,
                "includeTopicAuthorizedOperations": False}
        assert c.request(METADATA, 10, body)["clusterAuthorizedOperations"] == sum(
            1 << op for op in (5, 9, 10, 11, 12, 7, 8))
        assert c.request(METADATA, 10, dict(body, includeClusterAuthorizedOperations=False))[
            "clusterAuthorizedOperations"] == -2**31
        r = c.request(DESCRIBE_CLUSTER, 0, {"includeClusterAuthorizedOperations": False})
        assert (r["errorCode"], r["clusterAuthorizedOperations"]) == (0, -2**31)
        r = c.request(DESCRIBE_CLUSTER, 1, {"includeClusterAuthorizedOperations": False,
                                            "endpointType": 2})
        assert r["errorCode"] == Errors.MISMATCHED_ENDPOINT_TYPE
        r = c.request(DESCRIBE_CLUSTER, 1, {"includeClusterAuthorizedOperations": False,
                                            "endpointType": 9})
        assert r["errorCode"] == Errors.UNSUPPORTED_ENDPOINT_TYPE
        c.close()


def test_describe_log_dirs_reports_the_bytes_on_disk(log_dir):
    from kafka.admin import KafkaAdminClient

    with _serve(log_dir, {"segment.bytes": "600"}) as s:
        c = RawClient(s.port)
        create_topic(c, "t", 2)
        create_topic(c, "u", 1)
        for _ in range(5):
            produce(c, "t", batch(3, size=100))
        produce(c, "t", batch(1), partition=1)
        kp = KafkaAdminClient(bootstrap_servers=s.bootstrap)
        [broker] = kp.describe_log_dirs()
        only = kp.describe_log_dirs({"t": [1, 9]})
        kp.close()
        res = c.request(DESCRIBE_LOG_DIRS, 1, {"topics": [{"topic": "u", "partitions": [0]}]})
        c.close()
    [d] = broker["log_dirs"]
    assert (d["error_code"], d["log_dir"]) == (0, str(log_dir.absolute()))
    st = os.statvfs(log_dir)
    assert d["total_bytes"] == st.f_blocks * st.f_frsize and 0 < d["usable_bytes"]
    sizes = {(t["name"], p["partition_index"]): (p["partition_size"], p["offset_lag"])
             for t in d["topics"] for p in t["partitions"]}

    def on_disk(tp):
        return sum(f.stat().st_size for f in (log_dir / tp).glob("*.log"))

    assert sizes == {("t", 0): (on_disk("t-0"), 0), ("t", 1): (on_disk("t-1"), 0),
                     ("u", 0): (0, 0)}
    assert len(list((log_dir / "t-0").glob("*.log"))) > 1  # several segments summed
    assert [(t["name"], [p["partition_index"] for p in t["partitions"]])
            for t in only[0]["log_dirs"][0]["topics"]] == [("t", [1])]
    [r] = res["results"]
    assert [t["name"] for t in r["topics"]] == ["u"] and "totalBytes" not in r


# -- DeleteRecords -----------------------------------------------------------------------

def _delete_records(c, entries, version=2):
    topics: dict[str, list] = {}
    for topic, p, offset in entries:
        topics.setdefault(topic, []).append({"partitionIndex": p, "offset": offset})
    res = c.request(DELETE_RECORDS, version, {"topics": [
        {"name": n, "partitions": ps} for n, ps in topics.items()], "timeoutMs": 1000})
    return {(t["name"], p["partitionIndex"]): (p["errorCode"], p["lowWatermark"])
            for t in res["topics"] for p in t["partitions"]}


def _list_offset(c, topic, timestamp, version=9, partition=0):
    res = c.request(LIST_OFFSETS, version, {"replicaId": -1, "isolationLevel": 0, "topics": [
        {"name": topic, "partitions": [{"partitionIndex": partition, "currentLeaderEpoch": -1,
                                        "timestamp": timestamp}]}]})
    p = res["topics"][0]["partitions"][0]
    return p["errorCode"], p["timestamp"], p["offset"], p["leaderEpoch"]


def test_delete_records_moves_the_log_start_offset_and_checkpoints_it(log_dir):
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        create_topic(c, "t", 2)
        create_topic(c, "compacted", configs={"cleanup.policy": "compact"})
        # Kafka 4.4.0 refuses compact without delete only: an empty policy is allowed
        # (tests/kafka_bench/test_delete_records_policy.py, the broker's answers)
        create_topic(c, "kept", configs={"cleanup.policy": ""})
        create_topic(c, "both", configs={"cleanup.policy": "compact,delete"})
        for _ in range(4):
            produce(c, "t", batch(3))
        assert _delete_records(c, [("t", 0, 5), ("t", 1, 0), ("t", 9, 1), ("gone", 0, 1),
                                   ("compacted", 0, 0), ("kept", 0, 0), ("both", 0, 0)]) == {
            ("t", 0): (0, 5), ("t", 1): (0, 0), ("t", 9): (Errors.UNKNOWN_TOPIC_OR_PARTITION, -1),
            ("gone", 0): (Errors.UNKNOWN_TOPIC_OR_PARTITION, -1),
            ("compacted", 0): (Errors.POLICY_VIOLATION, -1), ("kept", 0): (0, 0),
            ("both", 0): (0, 0)}
        # written before the answer, as a broker's checkpoint thread would
        assert read_offset_checkpoint(log_dir / "log-start-offset-checkpoint") == {
            TP("t", 0): 5}
        # reads below the log start offset are out of range; ListOffsets' earliest moved
        assert fetch(c, "t", 4)["responses"][0]["partitions"][0]["errorCode"] == \
            Errors.OFFSET_OUT_OF_RANGE
        p = fetch(c, "t", 5)["responses"][0]["partitions"][0]
        assert (p["errorCode"], p["logStartOffset"]) == (0, 5)
        assert _list_offset(c, "t", -2)[2] == 5
        assert part(produce(c, "t", batch(1)))["logStartOffset"] == 5
        # a lower offset changes nothing; above the high watermark is out of range; -1 is it
        assert _delete_records(c, [("t", 0, 2)], version=0) == {("t", 0): (0, 5)}
        assert _delete_records(c, [("t", 0, 14)]) == {("t", 0): (Errors.OFFSET_OUT_OF_RANGE, -1)}
        assert _delete_records(c, [("t", 0, -1)]) == {("t", 0): (0, 13)}
        assert _delete_records(c, [("t", 0, -7)]) == {("t", 0): (Errors.OFFSET_OUT_OF_RANGE, -1)}
        c.close()
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        assert _list_offset(c, "t", -2)[2] == 13
        assert part(produce(c, "t", batch(1)))["baseOffset"] == 13
        c.close()


def test_delete_records_with_every_admin_client(log_dir):
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec
    from kafka import TopicPartition as KpTP
    from kafka.admin import KafkaAdminClient

    with _serve(log_dir) as s:
        p = Producer({"bootstrap.servers": s.bootstrap, "log_level": 3})
        create_topic(RawClient(s.port), "t", 1)
        for i in range(20):
            p.produce("t", b"v%d" % i, partition=0, timestamp=TS + i)
        assert p.flush(10) == 0
        a = AdminClient({"bootstrap.servers": s.bootstrap, "log_level": 3})
        [res] = [f.result(10) for f in a.delete_records([TopicPartition("t", 0, 6)]).values()]
        assert res.low_watermark == 6
        kp = KafkaAdminClient(bootstrap_servers=s.bootstrap)
        r = kp.delete_records({KpTP("t", 0): 9})
        kp.close()
        assert r[KpTP("t", 0)]["low_watermark"] == 9

        async def aio():
            from aiokafka.admin import AIOKafkaAdminClient
            from aiokafka.admin.records_to_delete import RecordsToDelete
            from aiokafka.structs import TopicPartition as AioTP

            ac = AIOKafkaAdminClient(bootstrap_servers=s.bootstrap)
            await ac.start()
            try:
                return await ac.delete_records({AioTP("t", 0): RecordsToDelete(11)})
            finally:
                await ac.close()

        assert list(asyncio.run(aio()).values()) == [11]
        offs = a.list_offsets({TopicPartition("t", 0): OffsetSpec.earliest()})
        assert [f.result(10).offset for f in offs.values()] == [11]
        c = Consumer({"bootstrap.servers": s.bootstrap, "group.id": "g",
                      "auto.offset.reset": "earliest", "log_level": 3})
        c.assign([TopicPartition("t", 0)])
        got = []
        for _ in range(40):
            got += [m.offset() for m in c.consume(20, timeout=0.5) if m.error() is None]
            if len(got) >= 9:
                break
        c.close()
        assert got == list(range(11, 20))


# -- ListOffsets' special timestamps -------------------------------------------------------

def test_list_offsets_special_timestamps(log_dir):
    """UnifiedLog.fetchOffsetByTimestamp without remote storage: EARLIEST_LOCAL (-4) is
    EARLIEST (-2) - the log start offset with the earliest cached epoch when it starts at
    or below it - and LATEST_TIERED (-5, v9) is offset -1, epoch -1."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    from kafkalog_cli.format.builder import build_batch
    from kafkalog_cli.storage.log_manager import LogManager

    with LogManager.open(log_dir) as m:
        lg = m.get_or_create_log("t", 0)
        for epoch, n in ((0, 5), (3, 5)):
            recs = [(TS + 100 * epoch + i, None, b"v", ()) for i in range(n)]
            lg.append_as_leader(build_batch(recs), leader_epoch=epoch)
    # the start moved to 7 while leader-epoch-checkpoint still starts at offset 0 (the broker
    # truncates the cache asynchronously)
    (log_dir / "log-start-offset-checkpoint").write_text("0\n1\nt 0 7\n")
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        assert _list_offset(c, "t", -2) == (0, -1, 7, 0)
        assert _list_offset(c, "t", -4, version=8) == (0, -1, 7, 0)
        assert _list_offset(c, "t", -5) == (0, -1, -1, -1)
        assert _list_offset(c, "t", -5, version=8)[0] == Errors.UNSUPPORTED_VERSION
        assert _list_offset(c, "t", -3, version=7) == (0, TS + 304, 9, 3)
        a = AdminClient({"bootstrap.servers": s.bootstrap, "log_level": 3})
        offs = a.list_offsets({TopicPartition("t", 0): OffsetSpec.max_timestamp()})
        [res] = [f.result(10) for f in offs.values()]
        assert (res.offset, res.timestamp) == (9, TS + 304)
        c.close()


def test_serve_config_option_takes_topic_and_broker_names():
    """--config: topic config names stand for their broker synonym, broker configs are
    the broker's own; unknown names, option-set configs and bad values are refused."""
    from kafkalog_cli.errors import InvalidArgumentError
    from kafkalog_cli.ops.serve import parse_configs
    from kafkalog_cli.server.configs import static_broker_configs

    items = ["segment.ms=5000", "group.initial.rebalance.delay.ms=0", "log.retention.hours=1",
             "socket.request.max.bytes=2000000"]
    static, sockets, _security = parse_configs(items)
    assert static_broker_configs(static) == {
        "log.roll.ms": "5000", "group.initial.rebalance.delay.ms": "0",
        "log.retention.hours": "1", "socket.request.max.bytes": "2000000"}
    assert sockets == {"socket.request.max.bytes": "2000000"}
    for bad in ("no.such=1", "node.id=3", "segment.bytes=abc", "remote.storage.enable=false",
                "group.min.session.timeout.ms=x", "segment.bytes", "socket.request.max.bytes=0",
                "queued.max.request.bytes=10"):
        with pytest.raises(InvalidArgumentError):
            parse_configs([bad])


def test_cleanup_policy_appended_at_runtime_refuses_null_keys(log_dir):
    """librdkafka's 0011 test: IncrementalAlterConfigs APPENDs compact to cleanup.policy
    and the partition refuses keyless records at once (LogValidator's compacted-topic
    check, INVALID_RECORD); SUBTRACT lifts it again."""
    from confluent_kafka import KafkaError, Producer
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )

    with _serve(log_dir) as s:
        create_topic(RawClient(s.port), "t")
        a = AdminClient({"bootstrap.servers": s.bootstrap, "log_level": 3})

        def alter(op):
            r = ConfigResource(ResourceType.TOPIC, "t", incremental_configs=[
                ConfigEntry("cleanup.policy", "compact", incremental_operation=op)])
            for f in a.incremental_alter_configs([r]).values():
                f.result(10)

        def produce_pair():
            p = Producer({"bootstrap.servers": s.bootstrap, "log_level": 3, "linger.ms": 0})
            out = []
            for key in (b"k", None):
                p.produce("t", b"v", key=key, partition=0,
                          on_delivery=lambda e, m: out.append(e and e.code()))
                p.flush(10)
            return out

        alter(AlterConfigOpType.APPEND)
        assert produce_pair() == [None, KafkaError.INVALID_RECORD]
        alter(AlterConfigOpType.SUBTRACT)
        assert produce_pair() == [None, None]


def test_group_resource_configs(log_dir):
    """KIP-848's GROUP config resource (GroupConfig): any group name, the broker's bounds,
    DEFAULT_CONFIG / GROUP_CONFIG (8) sources; stored across a restart."""
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )

    with _serve(log_dir) as s:
        a = AdminClient({"bootstrap.servers": s.bootstrap, "log_level": 3})
        r = ConfigResource(ResourceType.GROUP, "g", incremental_configs=[ConfigEntry(
            "consumer.session.timeout.ms", "50000",
            incremental_operation=AlterConfigOpType.SET)])
        for f in a.incremental_alter_configs([r]).values():
            f.result(10)
        c = RawClient(s.port)
        assert _alter(c, [(GROUP, "g", [("consumer.session.timeout.ms", SET, "70000")]),
                          (GROUP, "h", [("no.such", SET, "1")]),
                          (GROUP, "i", [("share.session.timeout.ms", SET, "45000"),
                                        ("share.heartbeat.interval.ms", SET, "5000")]),
                          (GROUP, "", [("consumer.session.timeout.ms", SET, "50000")])]) == [
            ("g", Errors.INVALID_CONFIG, "consumer.session.timeout.ms must be less than or "
             "equal to group.consumer.max.session.timeout.ms"),
            ("h", Errors.INVALID_CONFIG, "Unknown group config name: no.such"),
            ("i", 0, None),
            ("", Errors.INVALID_REQUEST, "Default group resource is not allowed.")]
        c.close()
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        [g, other] = _describe(c, [(GROUP, "g", None), (GROUP, "nobody", None)],
                               synonyms=True)
        cfg = _configs(g)
        assert sorted(cfg) == ["consumer.heartbeat.interval.ms", "consumer.session.timeout.ms",
                               "share.heartbeat.interval.ms", "share.record.lock.duration.ms",
                               "share.session.timeout.ms"]
        assert (cfg["consumer.session.timeout.ms"]["value"],
                cfg["consumer.session.timeout.ms"]["configSource"],
                cfg["consumer.session.timeout.ms"]["synonyms"]) == ("50000", 8, [
                    {"name": "consumer.session.timeout.ms", "value": "50000", "source": 8}])
        assert (cfg["consumer.heartbeat.interval.ms"]["value"],
                cfg["consumer.heartbeat.interval.ms"]["configSource"]) == ("5000", 5)
        assert {e["name"]: e["value"] for e in other["configs"]}[
            "consumer.session.timeout.ms"] == "45000"
        c.close()


def test_socket_server_limits_are_described_as_static_broker_configs(log_dir):
    with ServerThread(log_dir, ServerOptions(port=0),
                      broker_configs={"connections.max.idle.ms": "300000"}) as s:
        c = RawClient(s.port)
        [b] = _describe(c, [(BROKER, "0", ["connections.max.idle.ms",
                                           "socket.request.max.bytes"])])
        c.close()
    assert [(e["name"], e["value"], e["configSource"], e["readOnly"]) for e in b["configs"]] == [
        ("connections.max.idle.ms", "300000", 4, True),
        ("socket.request.max.bytes", "104857600", 5, True)]


def test_delete_stray_and_future_directories_at_start(log_dir):
    """LogManager.loadLog: a ``-delete`` directory left by a stop is removed (the broker's
    delete thread), ``-stray`` and ``-future`` ones stay on disk and are not served."""
    from kafkalog_testkit import raw_batch, raw_record

    uid = "0123456789abcdef0123456789abcdef"
    names = ["t-0", f"t-1.{uid}-delete", f"t-2.{uid}-stray", f"t-0.{uid}-future"]
    for name in names:
        (log_dir / name).mkdir()
        (log_dir / name / "00000000000000000000.log").write_bytes(
            raw_batch(0, [raw_record(0, 0, b"k", b"v")]))
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        res = c.request(METADATA, 12, {"topics": None, "allowAutoTopicCreation": False,
                                       "includeTopicAuthorizedOperations": False})
        c.close()
    assert [(t["name"], [p["partitionIndex"] for p in t["partitions"]])
            for t in res["topics"]] == [("t", [0])]
    assert not (log_dir / names[1]).exists()
    assert (log_dir / names[2]).is_dir() and (log_dir / names[3]).is_dir()
