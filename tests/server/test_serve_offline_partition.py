"""serve with a partition whose files the broker cannot parse (issue 16, case 6): the
server starts and serves every other partition; that partition answers as Kafka answers
for a partition whose log directory is offline - Metadata without a leader
(``LEADER_NOT_AVAILABLE``, the node in ``offlineReplicas``: KRaftMetadataCache), and
``KAFKA_STORAGE_ERROR`` (56) to Produce, Fetch and ListOffsets
(``ReplicaManager.getPartitionOrError`` for ``HostedPartition.Offline``)."""

from __future__ import annotations

import logging
import shutil

import pytest
from serve_testkit import RawClient, create_topic
from test_serve_fetch import fetch
from test_serve_produce_errors import batch, part, produce

from kafkalog_cli.errors import CorruptCheckpointError
from kafkalog_cli.protocol.errors import Errors
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions
from kafkalog_cli.storage.lock import is_locked


def _serve(log_dir):
    return ServerThread(log_dir, ServerOptions(port=0))


def _populate(log_dir):
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        create_topic(c, "t", partitions=2)
        create_topic(c, "other")
        for name, p in (("t", 0), ("t", 1), ("other", 0)):
            assert part(produce(c, name, batch(3), partition=p))["errorCode"] == 0
        c.close()


@pytest.mark.parametrize("name, data", [
    ("leader-epoch-checkpoint", b"0\n1\n\xff\xfe 0\n"),
    ("partition.metadata", b"version: \ntopic_id: x\n"),
])
def test_only_the_partition_concerned_is_offline(log_dir, caplog, name, data):
    _populate(log_dir)
    original = (log_dir / "t-1" / name).read_bytes()
    (log_dir / "t-1" / name).write_bytes(data)
    before = {p.name: p.read_bytes() for p in (log_dir / "t-1").iterdir()}
    with caplog.at_level(logging.ERROR, logger="kafkalog.serve"), _serve(log_dir) as s:
        c = RawClient(s.port)
        md = c.request(3, 12, {"topics": None, "allowAutoTopicCreation": False,
                                "includeTopicAuthorizedOperations": False})
        topics = {t["name"]: t for t in md["topics"]}
        assert sorted(topics) == ["other", "t"]
        parts = {p["partitionIndex"]: p for p in topics["t"]["partitions"]}
        assert sorted(parts) == [0, 1]
        assert parts[0]["errorCode"] == 0 and parts[0]["leaderId"] == s.options.node_id
        assert parts[1]["errorCode"] == Errors.LEADER_NOT_AVAILABLE == 5
        assert parts[1]["leaderId"] == -1
        assert parts[1]["offlineReplicas"] == [s.options.node_id]
        # the offline partition: the broker's storage error, nothing written
        assert part(produce(c, "t", batch(2), partition=1))["errorCode"] == \
            Errors.KAFKA_STORAGE_ERROR == 56
        f = fetch(c, "t", 0, partition=1)["responses"][0]["partitions"][0]
        assert f["errorCode"] == 56
        lo = c.request(2, 7, {"replicaId": -1, "isolationLevel": 0, "topics": [
            {"name": "t", "partitions": [{"partitionIndex": 1, "currentLeaderEpoch": -1,
                                          "timestamp": -1}]}]})
        assert lo["topics"][0]["partitions"][0]["errorCode"] == 56
        # every other partition is served
        assert part(produce(c, "t", batch(2), partition=0))["baseOffset"] == 3
        assert part(produce(c, "other", batch(2)))["baseOffset"] == 3
        f = fetch(c, "t", 0, partition=0)["responses"][0]["partitions"][0]
        assert f["errorCode"] == 0 and f["highWatermark"] == 5
        c.close()
    # one line naming the partition, the file and the line
    lines = [r.getMessage() for r in caplog.records if "offline" in r.getMessage()]
    assert len(lines) == 1 and "t-1" in lines[0] and f"t-1/{name} line " in lines[0]
    assert {p.name: p.read_bytes() for p in (log_dir / "t-1").iterdir()} == before
    assert not is_locked(log_dir)
    # once the file is repaired the partition is served again, with its records
    (log_dir / "t-1" / name).write_bytes(original)
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        f = fetch(c, "t", 0, partition=1)["responses"][0]["partitions"][0]
        assert f["errorCode"] == 0 and f["highWatermark"] == 3
        c.close()


def test_a_real_client_consumes_the_other_partitions(log_dir):
    """kafka-python, an independent client, reads the healthy partition while its
    sibling is offline."""
    kafka = pytest.importorskip("kafka")
    _populate(log_dir)
    (log_dir / "t-1" / "leader-epoch-checkpoint").write_bytes(b"0\n1\n\xff 0\n")
    with _serve(log_dir) as s:
        consumer = kafka.KafkaConsumer(bootstrap_servers=f"127.0.0.1:{s.port}",
                                       enable_auto_commit=False, consumer_timeout_ms=3000,
                                       fetch_max_wait_ms=100)
        try:
            tp = kafka.TopicPartition("t", 0)
            consumer.assign([tp])
            consumer.seek(tp, 0)
            got = []
            while len(got) < 3:
                polled = consumer.poll(timeout_ms=2000)
                if not polled:
                    break
                got += [m.offset for recs in polled.values() for m in recs]
            end = consumer.end_offsets([tp])[tp]
        finally:
            consumer.close()
    assert got == [0, 1, 2] and end == 3


def test_a_corrupt_log_dir_checkpoint_is_reset_not_fatal(log_dir, caplog):
    _populate(log_dir)
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        (log_dir / name).write_bytes(b"0\n9\nt 0 1\n")
    with caplog.at_level(logging.WARNING), _serve(log_dir) as s:
        c = RawClient(s.port)
        assert part(produce(c, "t", batch(1), partition=1))["baseOffset"] == 3
        c.close()
    text = caplog.text
    assert "recovery-point-offset-checkpoint: Expected [9] entries" in text
    assert "replication-offset-checkpoint: Expected [9] entries" in text


def test_a_corrupt_meta_properties_stops_serve_as_it_stops_a_broker(log_dir):
    _populate(log_dir)
    (log_dir / "meta.properties").write_text("version=7\n")
    with pytest.raises(CorruptCheckpointError, match="meta.properties line 1"):
        _serve(log_dir).start()
    assert not is_locked(log_dir)


def test_the_cli_starts_with_an_offline_partition(log_dir, tmp_path):
    """``kafkalog serve`` logs one line for the partition and keeps serving."""
    import subprocess
    import sys
    import time

    from kafkalog_testkit import REPO

    _populate(log_dir)
    (log_dir / "t-0" / "partition.metadata").write_bytes(b"version: \n")
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir",
                             str(log_dir), "--listen", "127.0.0.1:0"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 30
        lines = []
        while time.time() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            if "offline" in line:
                break
        assert any("t-0" in ln and "partition.metadata line 1" in ln for ln in lines), lines
        assert proc.poll() is None  # still serving
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    shutil.rmtree(log_dir)


# -- found by the fuzz harness (tests/fuzz) --------------------------------------------------

@pytest.mark.parametrize("name, data", [
    ("leader-epoch-checkpoint", b"0\n1\n\xff\xfe 0\n"),
    ("leader-epoch-checkpoint", b"0\n1\n0\x00\x00 0\n"),
])
def test_read_only_serve_takes_only_the_partition_offline(log_dir, caplog, name, data):
    """``serve --read-only`` did not start at all (CorruptCheckpointError for the whole
    directory) when one partition's leader-epoch-checkpoint did not parse; now the
    partition is offline as when serving writable, every other partition served."""
    _populate(log_dir)
    (log_dir / "t-1" / name).write_bytes(data)
    before = {p.name: p.read_bytes() for p in (log_dir / "t-1").iterdir()}
    with caplog.at_level(logging.ERROR, logger="kafkalog.serve"), \
            ServerThread(log_dir, ServerOptions(port=0, read_only=True)) as s:
        c = RawClient(s.port)
        md = c.request(3, 12, {"topics": None, "allowAutoTopicCreation": False,
                                "includeTopicAuthorizedOperations": False})
        parts = {p["partitionIndex"]: p for t in md["topics"] if t["name"] == "t"
                 for p in t["partitions"]}
        assert parts[0]["errorCode"] == 0 and parts[1]["errorCode"] == 5
        assert fetch(c, "t", 0, partition=1)["responses"][0]["partitions"][0][
            "errorCode"] == 56
        f = fetch(c, "t", 0, partition=0)["responses"][0]["partitions"][0]
        assert f["errorCode"] == 0 and f["highWatermark"] == 3
        c.close()
    assert any("t-1" in r.getMessage() and "offline" in r.getMessage()
               for r in caplog.records)
    assert {p.name: p.read_bytes() for p in (log_dir / "t-1").iterdir()} == before


def test_read_only_serve_resets_a_corrupt_log_start_checkpoint(log_dir):
    """LogManager.loadLogs reads a log-start-offset-checkpoint that does not parse as
    empty; read-only serve refused to start instead."""
    _populate(log_dir)
    (log_dir / "log-start-offset-checkpoint").write_bytes(b"0\n9\nt 0 1\n")
    with ServerThread(log_dir, ServerOptions(port=0, read_only=True)) as s:
        c = RawClient(s.port)
        f = fetch(c, "t", 0, partition=0)["responses"][0]["partitions"][0]
        assert f["errorCode"] == 0 and f["logStartOffset"] == 0
        c.close()


@pytest.mark.parametrize("state", [b"[1]", b'{"nextProducerIdBlock": "x"}',
                                   b'{"nextProducerIdBlock": 1e30}',
                                   b'{"topicConfigs": {"t": 5}}', b'{"topicConfigs": []}',
                                   b"\xff"])
@pytest.mark.parametrize("read_only", [False, True])
def test_a_malformed_state_file_is_ignored(log_dir, caplog, state, read_only):
    """kafkalog-serve.json is a file of the directory, hostile like any other: a JSON
    value of another shape gave AttributeError / ValueError / TypeError at start-up.
    What does not have the documented shape is ignored, with a warning."""
    _populate(log_dir)
    (log_dir / "kafkalog-serve.json").write_bytes(state)
    with caplog.at_level(logging.WARNING, logger="kafkalog.serve"), \
            ServerThread(log_dir, ServerOptions(port=0, read_only=read_only)) as s:
        c = RawClient(s.port)
        f = fetch(c, "t", 0, partition=0)["responses"][0]["partitions"][0]
        assert f["errorCode"] == 0 and f["highWatermark"] == 3
        if not read_only:
            pid = c.request(22, 4, {"transactionalId": None, "transactionTimeoutMs": 1000,
                                    "producerId": -1, "producerEpoch": -1})
            assert pid["errorCode"] == 0 and pid["producerId"] >= 0
        c.close()
    assert "kafkalog-serve.json" in caplog.text
