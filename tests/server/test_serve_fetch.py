"""Fetch and ListOffsets over crafted requests: minOneMessage, byte limits, out-of-range
offsets, topic ids (v13+), the delayed fetch, timestamp lookups; CLI lifecycle."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from serve_testkit import RawClient, create_topic
from test_serve_produce_errors import TS, batch, part, produce

from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.protocol.errors import Errors
from kafkalog_cli.storage.dir_files import read_clean_shutdown
from kafkalog_cli.storage.lock import is_locked

ROOT = Path(__file__).resolve().parents[2]


def fetch(c, topic, offset, *, version=12, part_max=1 << 20, max_bytes=1 << 20, wait=0,
          min_bytes=1, topic_id=None, isolation=0, partition=0):
    t = {"topicId": topic_id} if version >= 13 else {"topic": topic}
    body = {"replicaId": -1, "maxWaitMs": wait, "minBytes": min_bytes, "maxBytes": max_bytes,
            "isolationLevel": isolation, "sessionId": 0, "sessionEpoch": -1,
            "topics": [{**t, "partitions": [{"partition": partition, "fetchOffset": offset,
                                            "partitionMaxBytes": part_max}]}],
            "forgottenTopicsData": [], "rackId": ""}
    return c.request(1, version, body)


def _p(res):
    return res["responses"][0]["partitions"][0]


def _offsets(records: bytes):
    return [(b.base_offset, b.last_offset) for b in FileRecords(records).batches()]


def test_fetch_min_one_message_and_limits(raw):
    c = raw()
    create_topic(c, "t")
    for _ in range(4):
        produce(c, "t", batch(5, size=200))  # ~1 KB batches, offsets 0-4, 5-9, ...
    one = _p(fetch(c, "t", 0, part_max=10))
    assert one["errorCode"] == 0 and _offsets(one["records"]) == [(0, 4)]
    assert (one["highWatermark"], one["lastStableOffset"], one["logStartOffset"]) == (20, 20, 0)
    assert one["abortedTransactions"] is None
    # from the middle of a batch: the whole batch from its start
    assert _offsets(_p(fetch(c, "t", 7, part_max=10))["records"]) == [(5, 9)]
    # a limit between batches: whole batches then a partial one (LogSegment.read slices)
    size = len(one["records"])
    two = _p(fetch(c, "t", 0, part_max=size * 2 + 10))["records"]
    assert len(two) == size * 2 + 10 and _offsets(two) == [(0, 4), (5, 9)]
    every = _p(fetch(c, "t", 0))
    assert _offsets(every["records"]) == [(0, 4), (5, 9), (10, 14), (15, 19)]
    # at the log end: nothing; read_committed: an (empty) aborted list
    end = _p(fetch(c, "t", 20, isolation=1))
    assert end["records"] == b"" and end["errorCode"] == 0 and end["abortedTransactions"] == []


def test_fetch_errors_and_topic_ids(raw):
    c = raw()
    tid = create_topic(c, "t")["topicId"]
    produce(c, "t", batch(3))
    oor = _p(fetch(c, "t", 4))
    assert oor == {"partitionIndex": 0, "errorCode": Errors.OFFSET_OUT_OF_RANGE,
                   "highWatermark": -1, "lastStableOffset": -1, "logStartOffset": -1,
                   "divergingEpoch": {"epoch": -1, "endOffset": -1},
                   "currentLeader": {"leaderId": -1, "leaderEpoch": -1},
                   "snapshotId": {"endOffset": -1, "epoch": -1},
                   "abortedTransactions": None, "preferredReadReplica": -1, "records": b""}
    assert _p(fetch(c, "nope", 0))["errorCode"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert _p(fetch(c, "t", 0, partition=3))["errorCode"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
    for v in (13, 16):
        res = fetch(c, None, 0, version=v, topic_id=tid)
        assert res["responses"][0]["topicId"] == tid
        assert _offsets(_p(res)["records"]) == [(0, 2)]
        bad = fetch(c, None, 0, version=v, topic_id="AAAAAAAAAAAAAAAAAAAAAQ")
        assert _p(bad)["errorCode"] == Errors.UNKNOWN_TOPIC_ID
    for v in range(4, 13):
        assert _offsets(_p(fetch(c, "t", 0, version=v))["records"]) == [(0, 2)]
    # incremental fetch sessions are not created: an incremental epoch is unknown
    body = {"maxWaitMs": 0, "minBytes": 1, "sessionId": 5, "sessionEpoch": 3, "topics": [],
            "forgottenTopicsData": []}
    assert c.request(1, 12, body)["errorCode"] == Errors.FETCH_SESSION_ID_NOT_FOUND


def test_fetch_topics_without_partitions(raw):
    """FetchRequest.fetchData is keyed by partition: a topic naming no partition - its id
    known or not - contributes nothing; an unknown id's errors carry the requested id."""
    c = raw()
    tid = create_topic(c, "t")["topicId"]
    produce(c, "t", batch(3))
    unknown = "AAAAAAAAAAAAAAAAAAAAAQ"
    base = {"replicaId": -1, "maxWaitMs": 0, "minBytes": 1, "maxBytes": 1 << 20,
            "isolationLevel": 0, "sessionId": 0, "sessionEpoch": -1,
            "forgottenTopicsData": [], "rackId": ""}
    one = [{"partition": 0, "fetchOffset": 0, "partitionMaxBytes": 1 << 20}]
    for v in (13, 16):
        res = c.request(1, v, dict(base, topics=[{"topicId": unknown, "partitions": []},
                                                  {"topicId": tid, "partitions": []}]))
        assert (res["errorCode"], res["responses"]) == (0, [])
        res = c.request(1, v, dict(base, topics=[{"topicId": unknown, "partitions": []},
                                                  {"topicId": unknown, "partitions": one},
                                                  {"topicId": tid, "partitions": one}]))
        assert [(r["topicId"], [p["errorCode"] for p in r["partitions"]])
                for r in res["responses"]] == [(unknown, [Errors.UNKNOWN_TOPIC_ID]), (tid, [0])]
    res = c.request(1, 12, dict(base, topics=[{"topic": "t", "partitions": []}]))
    assert res["responses"] == []


def test_delayed_fetch_wakes_on_append(server, raw):
    c = raw()
    create_topic(c, "t")
    t0 = time.monotonic()
    assert _p(fetch(c, "t", 0, wait=300))["records"] == b""
    assert time.monotonic() - t0 >= 0.25  # waited maxWaitMs for minBytes
    producer = raw()
    timer = threading.Timer(0.2, lambda: produce(producer, "t", batch(2)))
    timer.start()
    c.sock.settimeout(60)
    t0 = time.monotonic()
    res = _p(fetch(c, "t", 0, wait=30000))
    # the fetch may answer as soon as the batch is appended, before the producer has read
    # its own response: wait for it, or teardown closes the producer's socket under it
    timer.join(10)
    assert _offsets(res["records"]) == [(0, 1)]
    # woken by the append, not by the maxWaitMs timer (the bound is that timeout, not a speed)
    assert time.monotonic() - t0 < 30


def test_list_offsets(raw):
    c = raw()
    create_topic(c, "t")
    for i in range(3):  # timestamps TS+100i .. TS+100i+2
        produce(c, "t", batch(3, ts=TS + 100 * i))

    def lo(ts, v=8, name="t", partition=0):
        body = {"replicaId": -1, "isolationLevel": 0, "topics": [
            {"name": name, "partitions": [{"partitionIndex": partition,
                                           "currentLeaderEpoch": -1, "timestamp": ts}]}]}
        p = c.request(2, v, body)["topics"][0]["partitions"][0]
        return p["errorCode"], p["timestamp"], p["offset"], p.get("leaderEpoch")

    assert lo(-2) == (0, -1, 0, 0)
    assert lo(-1) == (0, -1, 9, 0)
    assert lo(-3) == (0, TS + 202, 8, 0)
    assert lo(TS + 101) == (0, TS + 101, 4, 0)
    assert lo(TS + 150) == (0, TS + 200, 6, 0)
    assert lo(TS + 999) == (0, -1, -1, -1)
    assert lo(-2, v=1)[:3] == (0, -1, 0)
    assert lo(-1, name="nope")[0] == Errors.UNKNOWN_TOPIC_OR_PARTITION


def test_list_offsets_unsupported_timestamps_and_duplicates(raw):
    """ReplicaManager.fetchOffset: a negative timestamp that is not special at the request
    version is UNSUPPORTED_VERSION (-3 from v7, -4 from v8, -5 from v9, others never); a
    partition named twice is INVALID_REQUEST at every version."""
    c = raw()
    create_topic(c, "t")
    produce(c, "t", batch(3, ts=TS))

    def lo(ts, v, name="t"):
        body = {"replicaId": -1, "isolationLevel": 0, "topics": [
            {"name": name, "partitions": [{"partitionIndex": 0, "currentLeaderEpoch": -1,
                                           "timestamp": ts, "maxNumOffsets": 1}]}]}
        p = c.request(2, v, body)["topics"][0]["partitions"][0]
        return p["errorCode"], p["timestamp"], p["offset"]

    unsupported = (Errors.UNSUPPORTED_VERSION, -1, -1)
    assert lo(-3, 1) == lo(-3, 6) == lo(-4, 7) == lo(-5, 8) == lo(-100, 8) == unsupported
    assert lo(-6, 1, name="nope") == unsupported
    assert lo(-3, 7) == (0, TS + 2, 2)
    assert lo(-4, 8) == (0, -1, 0)
    for v in (1, 2, 8):
        body = {"replicaId": -1, "isolationLevel": 0, "topics": [{"name": "t", "partitions": [
            {"partitionIndex": 0, "currentLeaderEpoch": -1, "timestamp": -1},
            {"partitionIndex": 0, "currentLeaderEpoch": -1, "timestamp": -2}]}]}
        parts = c.request(2, v, body)["topics"][0]["partitions"]
        # answered once: the broker's answers are keyed by topic-partition (the bench
        # broker answers so: tests/wire/test_wire_reads.py)
        assert [(p["errorCode"], p["offset"]) for p in parts] == \
            [(Errors.INVALID_REQUEST, -1)], v


def test_describe_configs_and_delete_topics(raw):
    c = raw()
    tid = create_topic(c, "t", configs={"retention.ms": "1000"})["topicId"]
    res = c.request(32, 4, {"resources": [{"resourceType": 2, "resourceName": "t",
                                           "configurationKeys": ["retention.ms",
                                                                 "segment.bytes"]}],
                            "includeSynonyms": True})
    cfg = {e["name"]: e for e in res["results"][0]["configs"]}
    assert cfg["retention.ms"]["value"] == "1000" and cfg["retention.ms"]["configSource"] == 1
    assert cfg["segment.bytes"]["value"] == "1073741824"
    assert cfg["segment.bytes"]["configSource"] == 5
    res = c.request(19, 7, {"topics": [
        {"name": "t", "numPartitions": 1, "replicationFactor": 1, "assignments": [],
         "configs": []},
        {"name": "u", "numPartitions": 1, "replicationFactor": 3, "assignments": [],
         "configs": []},
        {"name": "v", "numPartitions": 1, "replicationFactor": 1, "assignments": [],
         "configs": [{"name": "no.such", "value": "1"}]}], "timeoutMs": 100})
    assert [t["errorCode"] for t in res["topics"]] == [
        Errors.TOPIC_ALREADY_EXISTS, Errors.INVALID_REPLICATION_FACTOR, Errors.INVALID_CONFIG]
    res = c.request(20, 6, {"topics": [{"name": None, "topicId": tid},
                                       {"name": "gone", "topicId": "AAAAAAAAAAAAAAAAAAAAAA"}],
                            "timeoutMs": 100})
    assert [(r["name"], r["errorCode"]) for r in res["responses"]] == [
        ("t", 0), ("gone", Errors.UNKNOWN_TOPIC_OR_PARTITION)]
    assert part(produce(c, "t", batch()))["errorCode"] == Errors.UNKNOWN_TOPIC_OR_PARTITION


def _start_cli(log_dir, *extra):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir",
                             str(log_dir), "--listen", "127.0.0.1:0", *extra], cwd=ROOT,
                            env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    lines = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if m:
            return proc, int(m.group(1))
    proc.kill()
    raise AssertionError("server did not start: " + "".join(lines))


def test_cli_serves_and_closes_cleanly_on_sigterm(log_dir):
    proc, port = _start_cli(log_dir, "--auto-create-topics", "--metrics",
                            "--metrics-interval", "0.2")
    try:
        assert is_locked(log_dir)
        c = RawClient(port)
        c.request(3, 12, {"topics": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAA", "name": "cli"}]})
        assert part(produce(c, "cli", batch(4)))["baseOffset"] == 0
        c.close()
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "MessagesInPerSec=4" in err
    assert read_clean_shutdown(log_dir) == {"version": 0, "brokerEpoch": -1}
    assert not is_locked(log_dir)
    assert (log_dir / "recovery-point-offset-checkpoint").read_text() == "0\n1\ncli 0 4\n"


def test_cli_refuses_remote_and_locked_dirs(log_dir):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir",
                        str(log_dir), "--listen", "0.0.0.0:0"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "--allow-remote" in r.stderr
    proc, _ = _start_cli(log_dir)
    try:
        r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir",
                            str(log_dir), "--listen", "127.0.0.1:0"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 1 and "Failed to acquire lock" in r.stderr
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert proc.returncode == 0
