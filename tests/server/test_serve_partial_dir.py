"""serve on a log directory holding only some partitions (a copy of one broker of a
cluster, issue 27): Metadata numbers each topic's partitions 0..N-1 (N one more than the
highest found), the absent ones as a broker reports offline partitions (no leader,
``LEADER_NOT_AVAILABLE``, the node in ``offlineReplicas``) and answers
``NOT_LEADER_OR_FOLLOWER`` for them; the absent partitions of ``__consumer_offsets``
are created (under ``--read-only``: FindCoordinator answers ``COORDINATOR_NOT_AVAILABLE``
naming the cause); one start-up line names the absent partitions."""

from __future__ import annotations

import logging
import shutil
import subprocess

import pytest
from serve_testkit import NO_GROUP_DELAY, RawClient, create_topic
from test_serve_fetch import fetch
from test_serve_produce_errors import batch, part, produce

from kafkalog_cli.constants import CLEAN_SHUTDOWN_FILE_NAME
from kafkalog_cli.protocol.errors import Errors
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions

#: five __consumer_offsets partitions: the groups below are hashed by Java's
#: String.hashCode (Utils.abs(hash) % 5, worked out by hand): "g-kept" -> 2, "g-lost" -> 3
CONFIGS = {**NO_GROUP_DELAY, "offsets.topic.num.partitions": "5"}
KEPT, LOST = "g-kept", "g-lost"


def _serve(log_dir, read_only=False):
    return ServerThread(log_dir, ServerOptions(port=0, read_only=read_only),
                        server_configs=CONFIGS)


def _commit(c, group, offset, version=2):
    return c.request(8, version, {
        "groupId": group, "generationIdOrMemberEpoch": -1, "memberId": "",
        "retentionTimeMs": -1, "topics": [{"name": "orders", "partitions": [
            {"partitionIndex": 3, "committedOffset": offset, "committedMetadata": ""}]}]})


def _committed(c, group):
    r = c.request(9, 2, {"groupId": group, "topics": [{"name": "orders",
                                                       "partitionIndexes": [3]}]})
    return r["topics"][0]["partitions"][0]["committedOffset"]


def _find(c, group):
    return c.request(10, 4, {"keyType": 0, "coordinatorKeys": [group]})["coordinators"][0]


@pytest.fixture
def partial(log_dir):
    """orders-1 and orders-3 of four, __consumer_offsets without partitions 1 and 3."""
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        create_topic(c, "orders", partitions=4)
        for p in range(4):
            assert part(produce(c, "orders", batch(p + 1), partition=p))["errorCode"] == 0
        for group in (KEPT, LOST):
            assert _find(c, group)["errorCode"] == 0
        assert _commit(c, KEPT, 2)["topics"][0]["partitions"][0]["errorCode"] == 0
        c.close()
    assert sorted(p.name for p in log_dir.glob("__consumer_offsets-*")) == [
        f"__consumer_offsets-{p}" for p in range(5)]
    for name in ("orders-0", "orders-2", "__consumer_offsets-1", "__consumer_offsets-3"):
        shutil.rmtree(log_dir / name)
    return log_dir


def test_metadata_numbers_every_partition_and_absent_ones_are_offline(partial, caplog):
    with caplog.at_level(logging.WARNING, logger="kafkalog.serve"), _serve(partial) as s:
        c = RawClient(s.port)
        md = c.request(3, 12, {"topics": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAA",
                                           "name": "orders"}],
                                "allowAutoTopicCreation": False,
                                "includeTopicAuthorizedOperations": False})
        parts = {p["partitionIndex"]: p for p in md["topics"][0]["partitions"]}
        assert sorted(parts) == [0, 1, 2, 3]
        for p in (0, 2):
            assert (parts[p]["errorCode"], parts[p]["leaderId"], parts[p]["offlineReplicas"]) \
                == (Errors.LEADER_NOT_AVAILABLE, -1, [s.options.node_id])
        for p in (1, 3):
            assert (parts[p]["errorCode"], parts[p]["leaderId"]) == (0, s.options.node_id)
        # not hosted here: NOT_LEADER_OR_FOLLOWER (ReplicaManager, HostedPartition.None)
        assert part(produce(c, "orders", batch(1), partition=2))["errorCode"] == \
            Errors.NOT_LEADER_OR_FOLLOWER
        got = fetch(c, "orders", 0, partition=0)["responses"][0]["partitions"][0]
        assert got["errorCode"] == Errors.NOT_LEADER_OR_FOLLOWER
        got = fetch(c, "orders", 0, partition=3)["responses"][0]["partitions"][0]
        assert (got["errorCode"], got["highWatermark"]) == (0, 4)
        # the absent coordinator partitions were created: a group there commits
        assert (partial / "__consumer_offsets-1").is_dir()
        assert (partial / "__consumer_offsets-3").is_dir()
        assert _find(c, LOST)["errorCode"] == 0
        assert _commit(c, LOST, 1)["topics"][0]["partitions"][0]["errorCode"] == 0
        assert (_committed(c, KEPT), _committed(c, LOST)) == (2, 1)
        c.close()
    lines = [r.getMessage() for r in caplog.records if "absent" in r.getMessage()]
    assert lines == ["partitions absent from the log directory (served as offline "
                     "partitions): __consumer_offsets 1, 3; orders 0, 2"]


def test_read_only_has_no_coordinator_for_absent_partitions(partial, caplog):
    (partial / CLEAN_SHUTDOWN_FILE_NAME).unlink(missing_ok=True)
    with caplog.at_level(logging.WARNING, logger="kafkalog.serve"), \
            _serve(partial, read_only=True) as s:
        c = RawClient(s.port)
        lost = _find(c, LOST)
        assert (lost["errorCode"], lost["nodeId"], lost["errorMessage"]) == (
            Errors.COORDINATOR_NOT_AVAILABLE, -1, "__consumer_offsets-3 is absent from the "
            "log directory and --read-only does not create it")
        assert _find(c, KEPT)["errorCode"] == 0
        assert _committed(c, KEPT) == 2
        c.close()
    assert not (partial / "__consumer_offsets-3").exists()
    assert any("has no .kafka_cleanshutdown" in r.getMessage() and "kafkalog recover" in
               r.getMessage() for r in caplog.records)


def test_kcat_reads_a_partition_above_the_ones_found(partial):
    """kcat -C -t orders -p 3 used to hang ("partition_cnt 2")."""
    if shutil.which("kcat") is None:
        pytest.skip("kcat is not installed")
    with _serve(partial, read_only=True) as s:
        out = subprocess.run(["kcat", "-b", f"127.0.0.1:{s.port}", "-C", "-t", "orders",
                              "-p", "3", "-e", "-f", "%p %o\n"], capture_output=True,
                             text=True, timeout=30)
    assert out.stdout.split("\n")[:4] == ["3 0", "3 1", "3 2", "3 3"], out.stderr
