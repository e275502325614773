"""serve's log cleaner with the pinned broker as the oracle: the same keyed records
(idempotent batches, an aborted and a committed transaction, a tombstone, one segment per
batch) go to a ``cleanup.policy=compact`` topic on the session bench broker and on
``kafkalog serve``; once both cleaners have checkpointed the whole cleanable section,
the records a Java consumer reads back (offset, key, value) are the same."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from kafka_testkit import SPEC_T0, java_consume, java_produce

from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions
from kafkalog_cli.storage.checkpoints import read_offset_checkpoint
from kafkalog_cli.storage.files import TopicPartition

TOPIC = "compacted-oracle"
#: every batch carries timestamps 10 s after the previous one, so each rolls a segment
#: (LogSegment.shouldRoll: the batch's max timestamp - the segment's first > segment.ms)
#: min.cleanable.dirty.ratio 1 (a ratio is never above it) while the records are written,
#: 0.01 after: both cleaners then see the same whole log (a clean while a producer writes
#: keeps its last batch of the moment, as an empty batch: when is a matter of timing)
CONFIGS = {"cleanup.policy": "compact", "segment.ms": "5000",
           "min.cleanable.dirty.ratio": "1", "delete.retention.ms": "86400000"}


def _spec():
    n = 0

    def send(key, value):
        nonlocal n
        n += 1
        return [{"op": "send", "topic": TOPIC, "partition": 0,
                 "timestamp": SPEC_T0 + n * 10_000, "key": key, "value": value,
                 "headers": []}, {"op": "flush"}]

    plain = [s for i in range(14) for s in send(f"k{i % 4}", f"v{i}")]
    plain += send("k1", None)                                  # a tombstone
    txn = [{"op": "begin"}, *send("k2", "aborted-1"), *send("k5", "aborted-2"), {"op": "abort"},
           {"op": "begin"}, *send("k3", "committed"), {"op": "commit"}]
    tail = send("k0", "again") + send("k6", "last")        # the last: the active segment
    return {"runs": [{"producer": {"linger.ms": "0"}, "steps": plain},
                     {"producer": {"transactional.id": "cleaner-oracle", "linger.ms": "0"},
                      "steps": txn},
                     {"producer": {"linger.ms": "0"}, "steps": tail}]}


def _wait_checkpoint(log_dir, offset: int, timeout: float, event=None, topic=TOPIC) -> None:
    tp = TopicPartition(topic, 0)
    deadline = time.monotonic() + timeout
    while True:
        if event is not None:
            event.clear()
        entries = read_offset_checkpoint(log_dir / "cleaner-offset-checkpoint") or {}
        if entries.get(tp) == offset:
            return
        left = deadline - time.monotonic()
        assert left > 0, f"no clean up to {offset} in {log_dir}: {entries.get(tp)}"
        if event is not None:
            event.wait(min(left, 1.0))
        else:
            time.sleep(0.1)


def _active_base(log_dir, topic=TOPIC) -> int:
    return max(int(p.name[:20]) for p in (log_dir / f"{topic}-0").glob("*.log"))


def _alter(bootstrap, kind: str, name: str, key: str, value):
    """IncrementalAlterConfigs: ``key`` of the BROKER or TOPIC ``name`` set to ``value``
    (None: deleted)."""
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )

    op = AlterConfigOpType.SET if value is not None else AlterConfigOpType.DELETE
    res = ConfigResource(getattr(ResourceType, kind), name, incremental_configs=[
        ConfigEntry(key, value or "", incremental_operation=op)])
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.incremental_alter_configs([res]).values():
        f.result(30)


def _alter_broker(broker, value):
    _alter(broker.bootstrap, "BROKER", "1", "log.cleaner.backoff.ms", value)


def _batches(log_dir, below: int):
    from kafkalog_cli.storage.log import Log

    log = Log.open(log_dir / f"{TOPIC}-0")
    try:
        return [(b.base_offset, b.last_offset, b.count, b.is_control, b.is_transactional,
                 b.has_delete_horizon, b.compression) for _, b in log.batches_from(0)
                if b.base_offset < below]
    finally:
        log.close()


def _records(bootstrap):
    return [(r["offset"], r["key"], r["value"])
            for r in java_consume(bootstrap, TOPIC, "read_uncommitted")]


@pytest.mark.kafka
@pytest.mark.slow
def test_compaction_matches_the_broker(kafka_broker, tmp_path):
    from confluent_kafka.admin import AdminClient, NewTopic

    spec = _spec()
    # the broker: its cleaner's backoff made short (a dynamic config) while this runs
    _alter_broker(kafka_broker, "100")
    try:
        kafka_broker.create_topic(TOPIC, 1, CONFIGS)
        with ServerThread(tmp_path / "logs", ServerOptions(port=0),
                          server_configs={"log.cleaner.backoff.ms": "100"}) as s, \
                ThreadPoolExecutor(2) as pool:
            admin = AdminClient({"bootstrap.servers": s.bootstrap})
            admin.create_topics([NewTopic(TOPIC, 1, 1, config=CONFIGS)])[TOPIC].result(30)
            # the two Java producers (and later consumers) at once: their JVMs' start-up
            # is most of this test's time
            acks, served_acks = pool.map(lambda b: java_produce(b, spec),
                                         [kafka_broker.bootstrap, s.bootstrap])
            assert [a["offset"] for a in served_acks] == [a["offset"] for a in acks]
            for bootstrap in (kafka_broker.bootstrap, s.bootstrap):
                _alter(bootstrap, "TOPIC", TOPIC, "min.cleanable.dirty.ratio", "0.01")
            # the whole log up to the active segment (the markers carry the wall clock's
            # time, the records 2023's: the segment of the ABORT marker stays active)
            active = _active_base(kafka_broker.log_dir)
            assert _active_base(tmp_path / "logs") == active
            _wait_checkpoint(tmp_path / "logs", active, 30, s.server.log_cleaner.cleaned_event)
            _wait_checkpoint(kafka_broker.log_dir, active, 30)
            got, want = pool.map(_records, [s.bootstrap, kafka_broker.bootstrap])
    finally:
        _alter_broker(kafka_broker, None)
    assert got == want
    # and the batches left below the active segment are the broker's: the empty ones kept
    # for a producer's last sequence, the last offsets kept, the delete horizons stamped
    assert _batches(tmp_path / "logs", active) == _batches(kafka_broker.log_dir, active)
    # the oracle did compact: fewer records than were written, the aborted ones gone
    assert len(want) < len(acks)
    assert not [r for r in want if r[2] and r[2].startswith(b"aborted")]
    assert (want[-1][1], want[-1][2]) == (b"k6", b"last")


def test_consumer_offsets_compacted_and_reloaded(tmp_path):
    """__consumer_offsets is compacted like any compacted topic: after 20 commits of one
    group and partition over many small segments only the last commit's record is left
    below the active segment, and a restarted serve loads the last committed offset."""
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CTP
    from confluent_kafka.admin import AdminClient, NewTopic

    from kafkalog_cli.storage.log import Log

    configs = {"log.cleaner.backoff.ms": "50", "offsets.topic.num.partitions": "1",
               "offsets.topic.segment.bytes": "400", "log.cleaner.min.cleanable.ratio": "0.01",
               "group.initial.rebalance.delay.ms": "0"}
    logs = tmp_path / "logs"
    with ServerThread(logs, ServerOptions(port=0), server_configs=configs) as s:
        admin = AdminClient({"bootstrap.servers": s.bootstrap})
        admin.create_topics([NewTopic("t", 1, 1)])["t"].result(30)
        c = Consumer({"bootstrap.servers": s.bootstrap, "group.id": "g"})
        for i in range(1, 21):
            c.commit(offsets=[CTP("t", 0, i)], asynchronous=False)
        c.close()
        active = _active_base(logs, "__consumer_offsets")
        assert active > 5   # the commits rolled many segments
        _wait_checkpoint(logs, active, 30, s.server.log_cleaner.cleaned_event,
                         topic="__consumer_offsets")
    log = Log.open(logs / "__consumer_offsets-0")
    keys = [r.key for _, b in log.batches_from(0) if not b.is_control
            for r in b.iter_records() if r.offset < active]
    log.close()
    assert len(keys) == len(set(keys)) == 1      # the group's one offset key
    with ServerThread(logs, ServerOptions(port=0), server_configs=configs) as s:
        c = Consumer({"bootstrap.servers": s.bootstrap, "group.id": "g"})
        assert c.committed([CTP("t", 0)], timeout=10)[0].offset == 20
        c.close()
