"""serve --read-only: a directory served to real clients (kafka-python) stays byte-identical
(every file's bytes and mtime, the set of files and directories), consumers read what
read/dump-segment read, and every write is refused with the authorization errors a broker
answers a client allowed to read but not write."""

from __future__ import annotations

import os
import shutil

import pytest

from kafkalog_cli.ops.read import read
from kafkalog_cli.protocol.apis import ApiKeys
from kafkalog_cli.protocol.errors import Errors
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions


def _tree(root):
    """Every path under ``root`` -> (bytes, mtime_ns) for files, None for directories."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = None
        for f in filenames:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = (fh.read(), os.stat(p).st_mtime_ns)
    return out


@pytest.fixture
def served(fixtures_root, tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    for name in ("plain-0", "headers-0", "txn-0", "multi-0"):
        shutil.copytree(fixtures_root / name, d / name)
    shutil.copy(fixtures_root / "meta.properties", d / "meta.properties")
    before = _tree(d)
    with ServerThread(d, ServerOptions(port=0, read_only=True),
                      checkpoint_interval=0.05) as s:
        yield s, d
    assert _tree(d) == before  # not a byte, not a file, not an mtime changed


def test_consumer_reads_what_read_reads(served):
    from kafka import KafkaConsumer, TopicPartition

    s, d = served
    c = KafkaConsumer(bootstrap_servers=s.bootstrap, enable_auto_commit=False,
                      auto_offset_reset="earliest", consumer_timeout_ms=3000)
    try:
        tp = TopicPartition("headers", 0)
        c.assign([tp])
        got = [(m.offset, m.timestamp, m.key, m.value, list(m.headers)) for m in c]
    finally:
        c.close()
    res = read(d / "headers-0")
    try:
        want = [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in res.records]
    finally:
        res.close()
    assert got == want and len(want) == 4


def test_produce_create_delete_refused(served):
    import confluent_kafka as ck
    from confluent_kafka.admin import AdminClient, NewTopic
    from kafka import KafkaProducer
    from kafka.errors import TopicAuthorizationFailedError

    s, _ = served
    p = KafkaProducer(bootstrap_servers=s.bootstrap, retries=0, max_block_ms=5000)
    try:
        fut = p.send("plain", b"must not be written", partition=0)
        with pytest.raises(TopicAuthorizationFailedError):
            fut.get(timeout=10)
    finally:
        p.close(timeout=5)
    admin = AdminClient({"bootstrap.servers": s.bootstrap, "log_level": 3})
    for futures in (admin.create_topics([NewTopic("fresh", 1, 1)]),
                    admin.delete_topics(["plain"])):
        (f,) = futures.values()
        with pytest.raises(ck.KafkaException) as e:
            f.result(10)
        assert e.value.args[0].code() == ck.KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert sorted(admin.list_topics(timeout=10).topics) == ["headers", "multi", "plain",
                                                            "txn"]


def test_raw_writes_refused(served):
    from serve_testkit import RawClient

    s, _ = served
    c = RawClient(s.port)
    try:
        body = c.request(ApiKeys.INIT_PRODUCER_ID, 4, {
            "transactionalId": None, "transactionTimeoutMs": 60000, "producerId": -1,
            "producerEpoch": -1})
        assert body["errorCode"] == Errors.CLUSTER_AUTHORIZATION_FAILED
        body = c.request(ApiKeys.DELETE_TOPICS, 4, {"topicNames": ["plain"],
                                                    "timeoutMs": 1000})
        (r,) = body["responses"]
        assert r["errorCode"] == Errors.TOPIC_AUTHORIZATION_FAILED
    finally:
        c.close()


def test_admin_writes_refused_reads_answered(served):
    """CreatePartitions, DeleteRecords and config changes are refused with the
    authorization error of their resource; DescribeConfigs, DescribeLogDirs and the
    in-memory group APIs work (the fixture checks that no file changed)."""
    from confluent_kafka import KafkaError, KafkaException, TopicPartition
    from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, ResourceType
    from serve_testkit import RawClient

    s, d = served
    a = AdminClient({"bootstrap.servers": s.bootstrap, "log_level": 3})
    for futures in (a.create_partitions([NewPartitions("plain", 3)]),
                    a.delete_records([TopicPartition("plain", 0, 1)])):
        (f,) = futures.values()
        with pytest.raises(KafkaException) as e:
            f.result(10)
        assert e.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    c = RawClient(s.port)
    try:
        res = c.request(ApiKeys.INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [
            {"resourceType": t, "resourceName": n, "configs": [
                {"name": k, "configOperation": 0, "value": "1000"}]}
            for t, n, k in ((2, "plain", "retention.ms"), (4, "0", "log.retention.ms"),
                            (32, "g", "consumer.session.timeout.ms"))],
            "validateOnly": True})
        assert [r["errorCode"] for r in res["responses"]] == [
            Errors.TOPIC_AUTHORIZATION_FAILED, Errors.CLUSTER_AUTHORIZATION_FAILED,
            Errors.GROUP_AUTHORIZATION_FAILED]
        res = c.request(ApiKeys.DESCRIBE_LOG_DIRS, 4, {"topics": None})
        sizes = {(t["name"], p["partitionIndex"]): p["partitionSize"]
                 for t in res["results"][0]["topics"] for p in t["partitions"]}
        assert sizes[("plain", 0)] == sum(f.stat().st_size for f in (d / "plain-0").glob("*.log"))
        # a standalone commit lives in memory only
        res = c.request(ApiKeys.OFFSET_COMMIT, 8, {
            "groupId": "g", "generationIdOrMemberEpoch": -1, "memberId": "",
            "groupInstanceId": None, "topics": [{"name": "plain", "partitions": [
                {"partitionIndex": 0, "committedOffset": 1, "committedLeaderEpoch": -1,
                 "committedMetadata": ""}]}]})
        assert res["topics"][0]["partitions"][0]["errorCode"] == 0
    finally:
        c.close()
    [cfg] = [f.result(10) for f in a.describe_configs(
        [ConfigResource(ResourceType.TOPIC, "plain")]).values()]
    assert cfg["retention.ms"].value == "604800000"


def test_cli_refuses_read_only_with_auto_create(tmp_path):
    from kafkalog_testkit import run_cli

    r = run_cli("serve", "--log-dir", str(tmp_path), "--read-only", "--auto-create-topics")
    assert r.returncode == 2 and "exclude each other" in r.stderr
