"""The bench itself: the pinned broker starts, Kafka's Java client writes exactly what its
spec says, the tools run (one JVM or many), and a clean stop leaves the marker."""

from __future__ import annotations

import pytest
from kafka_testkit import java_consume, java_produce, kafka_tool, kafka_tools_batch

pytestmark = pytest.mark.kafka

T0 = 1_700_000_000_000


def test_java_client_round_trip_exact(kafka_broker):
    kafka_broker.create_topic("bench-round-trip", 2)
    spec = {"producer": {"linger.ms": "60000", "batch.size": "1048576", "acks": "all"},
            "steps": [
                {"op": "send", "topic": "bench-round-trip", "partition": 1, "timestamp": T0,
                 "key": "k1", "value": "v1", "headers": [["h", "x"], ["n", None]]},
                {"op": "send", "topic": "bench-round-trip", "partition": 1, "timestamp": T0 + 5,
                 "key": None, "valueBase64": "AP8=", "headers": []},
                {"op": "flush"},
                {"op": "send", "topic": "bench-round-trip", "partition": 0, "timestamp": T0 + 9,
                 "key": "k3", "value": None, "headers": []},
            ]}
    acks = java_produce(kafka_broker.bootstrap, spec)
    assert [(a["partition"], a["offset"], a["timestamp"]) for a in acks] == \
        [(1, 0, T0), (1, 1, T0 + 5), (0, 0, T0 + 9)]
    records = java_consume(kafka_broker.bootstrap, "bench-round-trip")
    assert [(r["partition"], r["offset"], r["timestamp"], r["timestampType"], r["key"],
             r["value"], r["headers"]) for r in records] == [
        (0, 0, T0 + 9, "CreateTime", b"k3", None, []),
        (1, 0, T0, "CreateTime", b"k1", b"v1", [("h", b"x"), ("n", None)]),
        (1, 1, T0 + 5, "CreateTime", None, b"\x00\xff", []),
    ]


def test_transactions_and_read_committed(kafka_broker):
    kafka_broker.create_topic("bench-txn", 1)
    send = {"op": "send", "topic": "bench-txn", "partition": 0, "timestamp": T0, "key": None}
    spec = {"producer": {"transactional.id": "bench-txn-1", "linger.ms": "60000"},
            "steps": [{"op": "begin"}, {**send, "value": "committed"}, {"op": "commit"},
                      {"op": "begin"}, {**send, "value": "aborted"}, {"op": "flush"},
                      {"op": "abort"},
                      {"op": "begin"}, {**send, "value": "never sent"}, {"op": "abort"}]}
    acks = java_produce(kafka_broker.bootstrap, spec)
    assert [a.get("offset", a.get("error")) for a in acks] == [0, 2, "TransactionAbortedException"]
    committed = java_consume(kafka_broker.bootstrap, "bench-txn", "read_committed")
    everything = java_consume(kafka_broker.bootstrap, "bench-txn", "read_uncommitted")
    assert [r["value"] for r in committed] == [b"committed"]
    # the consumer hides the two markers but not the aborted record; offsets 0, 2
    assert [(r["offset"], r["value"]) for r in everything] == [(0, b"committed"), (2, b"aborted")]


def test_tools_one_jvm_and_many(kafka_broker):
    kafka_broker.create_topic("bench-tools", 1)
    java_produce(kafka_broker.bootstrap, {"producer": {}, "steps": [
        {"op": "send", "topic": "bench-tools", "partition": 0, "timestamp": T0, "value": "a"}]})
    segment = kafka_broker.log_dir / "bench-tools-0" / "00000000000000000000.log"
    single = kafka_tool("org.apache.kafka.tools.DumpLogSegments", "--files", str(segment))
    assert single.exit == 0, single.stderr
    assert f"Dumping {segment}" in single.stdout and "baseOffset: 0 lastOffset: 0" in single.stdout
    batch = kafka_tools_batch([
        ("org.apache.kafka.tools.DumpLogSegments", ["--files", str(segment)]),
        ("org.apache.kafka.tools.DumpLogSegments", ["--no-such-option"]),
    ])
    assert batch[0].exit == 0 and batch[0].stdout == single.stdout
    assert batch[1].exit != 0


def test_clean_stop_and_kill(kafka_broker_factory):
    broker = kafka_broker_factory({"num.partitions": 1})
    broker.create_topic("stops", 1)
    broker.stop()
    assert (broker.log_dir / ".kafka_cleanshutdown").is_file()
    broker.start()
    assert not (broker.log_dir / ".kafka_cleanshutdown").exists()
    broker.kill()
    assert not (broker.log_dir / ".kafka_cleanshutdown").exists()
    assert (broker.log_dir / "meta.properties").read_text().count(broker.cluster_id) == 1
