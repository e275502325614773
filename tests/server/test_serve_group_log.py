"""Durable groups: ``__consumer_offsets`` written in Kafka's format and loaded at start-up.

Checked against the JDK (``String.hashCode`` partitioning), real brokers' own
``__consumer_offsets`` partitions in the corpus (every OffsetCommit and GroupMetadata
record a broker wrote at the versions serve writes is rebuilt byte for byte, and sits in
the partition the JDK's hash picks), and real clients across a restart."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import pytest
from serve_testkit import NO_GROUP_DELAY
from test_serve_clients import _confluent

from kafkalog_cli.decoders.group_messages import GroupMetadataValue, OffsetCommitValue
from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.ops.verify import verify_index
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.coordinator_log import partition_for
from kafkalog_cli.server.group_log import (
    GROUP_METADATA_VALUE_VERSION,
    group_key,
    group_value,
    offset_key,
    offset_value,
)
from kafkalog_cli.server.groups import Group, Member, OffsetAndMetadata
from kafkalog_cli.server.kafka_apis import ServerOptions

JAVA_HASH = """
import java.nio.file.*;
public class H {
  public static void main(String[] a) throws Exception {
    for (String s : Files.readAllLines(Paths.get(a[0]), java.nio.charset.StandardCharsets.UTF_8)) {
      int h = s.hashCode();
      int abs = (h == Integer.MIN_VALUE) ? 0 : Math.abs(h);  // org.apache.kafka.common.utils.Utils.abs
      System.out.println((abs % 50) + " " + (abs % 7));
    }
  }
}
"""

IDS = ["g", "", "polygenelubricants", "consumer-group-1", "orders-app", "tx-1", "tx-2",
       "日本語のグループ", "emoji-😀-group", "Ünïcödé", "a" * 300, "my-transactional-id"]


def test_partition_for_matches_the_jdk(tmp_path):
    if shutil.which("java") is None:
        pytest.skip("no JDK")
    src = tmp_path / "H.java"
    src.write_text(JAVA_HASH)
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(IDS) + "\n", encoding="utf-8")
    r = subprocess.run(["java", str(src), str(ids)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    java = [tuple(map(int, ln.split())) for ln in r.stdout.splitlines()]
    assert java == [(partition_for(s, 50), partition_for(s, 7)) for s in IDS]
    assert partition_for("polygenelubricants", 50) == 0  # hashCode is Integer.MIN_VALUE


def _corpus_offsets_dirs():
    from kafkalog_testkit import CORPUS
    if not CORPUS.is_dir():
        pytest.skip("the real-broker corpus is absent")
    return sorted(d for d in CORPUS.rglob("__consumer_offsets-*") if d.is_dir())


def test_records_equal_what_real_brokers_wrote():
    """Every OffsetCommit v3 / GroupMetadata v3 record of a real broker is rebuilt byte for
    byte (the group records by serve's builder), and every record
    sits in the partition ``partition_for(group, 50)`` names."""
    checked = {"offset": 0, "group": 0, "partitioned": 0}
    for d in _corpus_offsets_dirs():
        partition = int(d.name.rsplit("-", 1)[1])
        for log in sorted(d.glob("*.log")):
            for batch in FileRecords(log.read_bytes()).batches():
                if batch.magic != 2 or batch.is_control:
                    continue
                for r in batch.records():
                    kind = int.from_bytes(r.key[:2], "big")
                    if kind not in (1, 2):
                        continue
                    from kafkalog_cli.decoders.group_messages import (
                        GroupMetadataKey,
                        OffsetCommitKey,
                    )
                    if kind == 1:
                        key = OffsetCommitKey.parse(r.key, 0, offset=2)[0]
                        assert offset_key(key["group"], key["topic"], key["partition"]) == \
                            r.key
                    else:
                        key = GroupMetadataKey.parse(r.key, 0, offset=2)[0]
                        assert group_key(key["group"]) == r.key
                    assert partition_for(key["group"], 50) == partition, (log, key)
                    checked["partitioned"] += 1
                    if r.value is None:
                        continue
                    version = int.from_bytes(r.value[:2], "big")
                    if kind == 1 and version == 3:
                        # what 3.x brokers wrote; serve writes 4.4's v4 (checked on the
                        # bench below), the same fields in the flexible encoding
                        v = OffsetCommitValue.parse(r.value, version, offset=2)[0]
                        assert version.to_bytes(2, "big") + OffsetCommitValue.build(
                            v, version) == r.value, (log, r.offset)
                        checked["offset"] += 1
                    elif kind == 2 and version == GROUP_METADATA_VALUE_VERSION:
                        v = GroupMetadataValue.parse(r.value, version, offset=2)[0]
                        assert _rebuilt_group_value(key["group"], v) == r.value, (log, r.offset)
                        checked["group"] += 1
    assert checked["offset"] > 100 and checked["group"] > 10, checked


@pytest.mark.kafka
def _commit(bootstrap: str, group: str) -> None:
    """librdkafka commits offsets 5 and 7 (with metadata) of ``offset-records`` for
    ``group`` (OffsetCommit below v10: the request names no topic id)."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                  "enable.auto.commit": False})
    try:
        deadline = time.monotonic() + 60
        while True:  # the coordinator loads __consumer_offsets after the first lookup
            try:
                c.commit(offsets=[TopicPartition("offset-records", 0, 5),
                                  TopicPartition("offset-records", 1, 7, metadata="m\u00e9ta")],
                         asynchronous=False)
                break
            except KafkaException:
                if time.monotonic() > deadline:  # NOT_COORDINATOR is not "retriable" here
                    raise
                c.poll(0.5)  # serves librdkafka's coordinator query
    finally:
        c.close()


def _offset_commits(d, want: int = 2) -> list[tuple[tuple, bytes]]:
    """The OffsetCommit records of ``__consumer_offsets`` partition directory ``d``:
    ``(their batch's header fields but offsets, CRC and times, value)`` (waiting up to 30 s
    for ``want`` of them: the coordinator writes after it answers)."""
    seen = []
    deadline = time.monotonic() + 30
    while len(seen) < want and time.monotonic() < deadline:
        seen = []
        for log in sorted(d.glob("*.log")):
            for batch in FileRecords(log.read_bytes()).batches():
                for r in ([] if batch.is_control else batch.records()):
                    if int.from_bytes(r.key[:2], "big") == 1 and r.value is not None:
                        header = (batch.magic, batch.attributes, batch.last_offset_delta,
                                  batch.producer_id, batch.producer_epoch,
                                  batch.base_sequence, batch.records_count)
                        seen.append((header, r.value))
        time.sleep(0.2)
    return seen


def test_offset_commit_records_equal_kafka_4_4s(kafka_broker, tmp_path):
    """The OffsetCommit records a Kafka 4.4.0 coordinator writes for librdkafka's commits
    are what serve writes for the same commits: values byte for byte (version 4, flexible,
    no expire timestamp, the topic's id in the tagged ``topicId``), in batches with the
    same header fields (the group coordinator's runtime writes baseSequence 0)."""
    kafka_broker.create_topic("offset-records", 2)
    group = "offset-records-group"
    _commit(kafka_broker.bootstrap, group)
    seen = _offset_commits(kafka_broker.log_dir /
                           f"__consumer_offsets-{partition_for(group, 50)}")
    assert len(seen) == 2
    topic_id = kafka_broker.topic_id("offset-records")
    for _, value in seen:
        assert value[:2] == b"\x00\x04"
        v = OffsetCommitValue.parse(value, 4, offset=2)[0]
        assert v["topicId"] == topic_id  # resolved by the coordinator, whatever the version
        assert offset_value(OffsetAndMetadata(v["offset"], v["leaderEpoch"], v["metadata"],
                                              v["commitTimestamp"]), topic_id) == value
    assert sorted(OffsetCommitValue.parse(v, 4, offset=2)[0]["offset"] for _, v in seen) == [5, 7]

    log_dir = tmp_path / "serve-logs"
    with ServerThread(log_dir, ServerOptions(port=0, auto_create_topics=True),
                      server_configs=NO_GROUP_DELAY) as s:
        from confluent_kafka.admin import AdminClient, NewTopic
        admin = AdminClient({"bootstrap.servers": s.bootstrap})  # kept: its futures need it
        admin.create_topics([NewTopic("offset-records", 2, 1)])["offset-records"].result(30)
        _commit(s.bootstrap, group)
    ours = _offset_commits(log_dir / f"__consumer_offsets-{partition_for(group, 50)}")
    assert [h for h, _ in ours] == [h for h, _ in seen]
    assert [OffsetCommitValue.parse(v, 4, offset=2)[0]["offset"] for _, v in ours] == \
        [OffsetCommitValue.parse(v, 4, offset=2)[0]["offset"] for _, v in seen]


def _rebuilt_group_value(group_id: str, v: dict) -> bytes:
    g = Group(group_id, generation=v["generation"], protocol_type=v["protocolType"],
              protocol=v["protocol"])
    for m in v["members"]:
        g.add(Member(m["memberId"], m["groupInstanceId"], m["clientId"], m["clientHost"],
                     m["rebalanceTimeout"], m["sessionTimeout"], v["protocolType"],
                     [(v["protocol"], bytes(m["subscription"]))]))
    g.leader = v["leader"]
    return group_value(g, {m["memberId"]: bytes(m["assignment"]) for m in v["members"]},
                       v["currentStateTimestamp"])


def _produce(bootstrap, n):
    from kafka import KafkaProducer
    p = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(n):
        p.send("durable", b"v%d" % i, partition=0)
    p.flush(10)
    p.close(5)


def test_committed_offsets_survive_a_restart(log_dir):
    """confluent-kafka and kafka-python groups commit, the server stops and starts again:
    both groups resume from their commits, the offsets topic is in Kafka's layout."""
    ck = _confluent()
    from kafka import KafkaConsumer, TopicPartition

    opts = ServerOptions(port=0, auto_create_topics=True)
    with ServerThread(log_dir, opts, server_configs=NO_GROUP_DELAY) as s:
        _produce(s.bootstrap, 10)
        c = ck.Consumer({"bootstrap.servers": s.bootstrap, "group.id": "ck-group",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
        c.subscribe(["durable"])
        got = []
        while len(got) < 6:
            m = c.poll(1.0)
            if m is not None and not m.error():
                got.append(m.offset())
        c.commit(offsets=[ck.TopicPartition("durable", 0, 6)], asynchronous=False)
        c.close()
        kc = KafkaConsumer("durable", bootstrap_servers=s.bootstrap, group_id="kp-group",
                           auto_offset_reset="earliest", enable_auto_commit=False,
                           consumer_timeout_ms=5000, fetch_max_wait_ms=100)
        n = 0
        for _ in kc:
            n += 1
            if n == 3:
                break
        kc.commit({TopicPartition("durable", 0): __import__("kafka").OffsetAndMetadata(
            3, "kp-meta", -1)})
        kc.close()
    # the records landed in the partitions Kafka's hash picks
    for gid in ("ck-group", "kp-group"):
        p = partition_for(gid, 50)
        assert any((log_dir / f"__consumer_offsets-{p}").glob("*.log"))
        assert (log_dir / f"__consumer_offsets-{p}" / "00000000000000000000.log").stat().st_size
    assert len(list(log_dir.glob("__consumer_offsets-*"))) == 50
    assert verify_index([log_dir]).ok
    opts = ServerOptions(port=0)
    with ServerThread(log_dir, opts, server_configs=NO_GROUP_DELAY) as s:
        kc = KafkaConsumer(bootstrap_servers=s.bootstrap, group_id="kp-group",
                           enable_auto_commit=False)
        tp = TopicPartition("durable", 0)
        assert kc.committed(tp) == 3
        assert kc.committed(tp, metadata=True).metadata == "kp-meta"
        kc.close()
        c = ck.Consumer({"bootstrap.servers": s.bootstrap, "group.id": "ck-group",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
        assert [t.offset for t in c.committed([ck.TopicPartition("durable", 0)],
                                              timeout=10)] == [6]
        c.subscribe(["durable"])
        m = None
        for _ in range(30):
            m = c.poll(1.0)
            if m is not None and not m.error():
                break
        assert m.offset() == 6 and m.value() == b"v6"
        c.close()


def test_dump_segment_decodes_what_serve_wrote(log_dir):
    from kafka import KafkaConsumer, TopicPartition
    from kafka import OffsetAndMetadata as KOM

    with ServerThread(log_dir, ServerOptions(port=0, auto_create_topics=True),
                      server_configs=NO_GROUP_DELAY) as s:
        _produce(s.bootstrap, 2)
        kc = KafkaConsumer("durable", bootstrap_servers=s.bootstrap, group_id="dumped",
                           auto_offset_reset="earliest", enable_auto_commit=False,
                           consumer_timeout_ms=3000)
        next(iter(kc))
        kc.commit({TopicPartition("durable", 0): KOM(2, "m", -1)})
        kc.close()
    d = log_dir / f"__consumer_offsets-{partition_for('dumped', 50)}"
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "dump-segment", str(d),
                        "--print-data-log", "-o", "kafka"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    # Kafka 4's tool prints the key and value as their JSON converters write them
    assert ('offset_commit::{"group":"dumped","topic":"durable","partition":0}' in r.stdout
            or '"group":"dumped","topic":"durable","partition":0' in r.stdout), r.stdout
    assert '"offset":2' in r.stdout and '"metadata":"m"' in r.stdout
    assert "GroupMetadata" in r.stdout or '"protocolType":"consumer"' in r.stdout


def test_a_stable_group_comes_back_stable_and_its_members_expire(log_dir):
    """GroupMetadata replay: a group with a member is Stable after a restart with the same
    generation, leader, protocol and assignment; the member's heartbeat is accepted, and
    without heartbeats its session timeout removes it (GroupMetadataManager.onLoaded)."""
    from serve_testkit import RawClient
    from test_serve_groups import HEARTBEAT, SYNC, _join

    with ServerThread(log_dir, ServerOptions(port=0), server_configs=NO_GROUP_DELAY) as s:
        c = RawClient(s.port)
        mid = _join(c, 3, session=6000)["memberId"]
        r = c.request(SYNC, 3, {"groupId": "g", "generationId": 1, "memberId": mid,
                                "groupInstanceId": None,
                                "assignments": [{"memberId": mid, "assignment": b"A"}]})
        assert r["errorCode"] == 0
        c.close()
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=NO_GROUP_DELAY) as s:
        c = RawClient(s.port)
        (g,) = c.request(15, 5, {"groups": ["g"], "includeAuthorizedOperations": False})[
            "groups"]
        assert (g["groupState"], g["protocolData"], [m["memberId"] for m in g["members"]],
                g["members"][0]["memberAssignment"]) == ("Stable", "range", [mid], b"A")
        assert c.request(HEARTBEAT, 3, {"groupId": "g", "generationId": 1, "memberId": mid,
                                        "groupInstanceId": None})["errorCode"] == 0
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            (g,) = c.request(15, 5, {"groups": ["g"], "includeAuthorizedOperations": False})[
                "groups"]
            if g["groupState"] == "Empty":
                break
            time.sleep(0.5)
        assert g["groupState"] == "Empty" and g["members"] == []
        c.close()
