"""Transactions with real clients: librdkafka (confluent-kafka) transactional producers,
read_committed consumers from confluent-kafka and kafka-python, consume-transform-produce
with ``send_offsets_to_transaction``, a ``kill -9`` in the middle of a transaction; the
on-disk results checked with verify-index, the ``.txnindex`` and ``dump-segment``, and the
``__transaction_state`` records against the one a real broker wrote (corpus)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from serve_testkit import NO_GROUP_DELAY, RawClient
from test_serve_clients import _confluent
from test_serve_fetch import _start_cli

from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.ops.verify import verify_index
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.coordinator_log import partition_for
from kafkalog_cli.server.kafka_apis import ServerOptions

TOPIC = "txn"


def _admin_create(ck, bootstrap, *topics):
    from confluent_kafka.admin import AdminClient, NewTopic
    a = AdminClient({"bootstrap.servers": bootstrap})
    for f in a.create_topics([NewTopic(t, 2, 1) for t in topics]).values():
        f.result(10)


def _producer(ck, bootstrap, tid, **extra):
    p = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": tid,
                     "linger.ms": 0, **extra})
    p.init_transactions(30)
    return p


def _read_all(ck, bootstrap, topic, isolation, n_parts=2, wait=4.0):
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{isolation}",
                     "isolation.level": isolation, "enable.auto.commit": False})
    c.assign([ck.TopicPartition(topic, p, 0) for p in range(n_parts)])
    got, deadline = [], time.monotonic() + wait
    while time.monotonic() < deadline:
        m = c.poll(0.3)
        if m is not None and not m.error():
            got.append(m.value())
    c.close()
    return sorted(got)


def _kafka_python_read(bootstrap, topic, isolation, n_parts=2):
    from kafka import KafkaConsumer, TopicPartition
    c = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation,
                      enable_auto_commit=False, fetch_max_wait_ms=100)
    tps = [TopicPartition(topic, p) for p in range(n_parts)]
    c.assign(tps)
    c.seek_to_beginning()
    got, deadline = [], time.monotonic() + 4
    while time.monotonic() < deadline:
        for recs in c.poll(timeout_ms=300).values():
            got += [r.value for r in recs]
    c.close()
    return sorted(got)


def test_commit_and_abort_across_two_partitions(log_dir):
    ck = _confluent()
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=NO_GROUP_DELAY) as s:
        _admin_create(ck, s.bootstrap, TOPIC)
        p = _producer(ck, s.bootstrap, "tx-commit-abort")
        p.begin_transaction()
        for i in range(6):
            p.produce(TOPIC, b"committed-%d" % i, partition=i % 2)
        p.commit_transaction(30)
        p.begin_transaction()
        for i in range(6):
            p.produce(TOPIC, b"aborted-%d" % i, partition=i % 2)
        assert p.flush(10) == 0  # on disk before the abort: the markers must hide them
        p.abort_transaction(30)
        p.begin_transaction()
        p.produce(TOPIC, b"committed-last", partition=1)
        p.commit_transaction(30)
        committed = sorted([b"committed-%d" % i for i in range(6)] + [b"committed-last"])
        aborted = sorted(b"aborted-%d" % i for i in range(6))
        assert _read_all(ck, s.bootstrap, TOPIC, "read_committed") == committed
        assert _kafka_python_read(s.bootstrap, TOPIC, "read_committed") == committed
        assert _read_all(ck, s.bootstrap, TOPIC, "read_uncommitted") == \
            sorted(committed + aborted)
        # DescribeTransactions / ListTransactions (admin APIs 65, 66)
        c = RawClient(s.port)
        d = c.request(65, 0, {"transactionalIds": ["tx-commit-abort", "nobody"]})
        st = d["transactionStates"]
        assert (st[0]["errorCode"], st[0]["transactionState"], st[0]["topics"]) == \
            (0, "CompleteCommit", [])
        assert st[1]["errorCode"] == 105  # TRANSACTIONAL_ID_NOT_FOUND
        lt = c.request(66, 1, {"stateFilters": ["CompleteCommit", "Nope"],
                               "producerIdFilters": [], "durationFilter": -1})
        assert lt["unknownStateFilters"] == ["Nope"]
        assert [t["transactionalId"] for t in lt["transactionStates"]] == ["tx-commit-abort"]
        c.close()
        p.flush(5)
    assert verify_index([log_dir]).ok
    # partition 0: the commit's and the abort's markers; partition 1 also the last
    # commit's; the aborted transaction is the one entry of each .txnindex (34 bytes)
    for part, markers in ((0, 2), (1, 3)):
        d = log_dir / f"{TOPIC}-{part}"
        batches = list(FileRecords((d / "00000000000000000000.log").read_bytes()).batches())
        assert sum(b.is_control for b in batches) == markers
        assert (d / "00000000000000000000.txnindex").stat().st_size == 34
    # __transaction_state: the id's partition, decoded by dump-segment
    tdir = log_dir / f"__transaction_state-{partition_for('tx-commit-abort', 50)}"
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "dump-segment", str(tdir),
                        "--print-data-log", "-o", "kafka"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert "tx-commit-abort" in r.stdout
    # Kafka 4's tool prints TransactionLogValue's JSON: every state the id went through
    # (Empty 0, Ongoing 1, PrepareCommit 2, PrepareAbort 3, CompleteCommit 4,
    # CompleteAbort 5), each Ongoing record naming the partitions added
    for state in range(6):
        assert f'"transactionStatus":{state}' in r.stdout, (state, r.stdout)
    assert '"transactionPartitions":[{"topic":"txn","partitionIds":[0,1]}]' in r.stdout


def test_consume_transform_produce_with_send_offsets_to_transaction(log_dir):
    ck = _confluent()
    from kafka import KafkaConsumer, TopicPartition
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=NO_GROUP_DELAY) as s:
        _admin_create(ck, s.bootstrap, "in", "out")
        plain = ck.Producer({"bootstrap.servers": s.bootstrap})
        for i in range(10):
            plain.produce("in", b"%d" % i, partition=i % 2)
        plain.flush(10)
        consumer = ck.Consumer({"bootstrap.servers": s.bootstrap, "group.id": "ctp",
                                "auto.offset.reset": "earliest",
                                "enable.auto.commit": False,
                                "isolation.level": "read_committed"})
        consumer.subscribe(["in"])
        p = _producer(ck, s.bootstrap, "tx-ctp")
        seen, deadline = 0, time.monotonic() + 30
        aborted_once = False
        while seen < 10 and time.monotonic() < deadline:
            msgs = [m for m in consumer.consume(5, timeout=1.0) if not m.error()]
            if not msgs:
                continue
            p.begin_transaction()
            for m in msgs:
                p.produce("out", b"x" + m.value(), partition=m.partition())
            positions = consumer.position(consumer.assignment())
            p.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 30)
            if not aborted_once:
                # the first batch is aborted once: its output and offsets never count
                aborted_once = True
                assert p.flush(10) == 0
                p.abort_transaction(30)
                for tp in consumer.committed(consumer.assignment(), timeout=10):
                    consumer.seek(ck.TopicPartition(tp.topic, tp.partition,
                                                    max(tp.offset, 0)))
                continue
            p.commit_transaction(30)
            seen += len(msgs)
        consumer.close()
        assert seen == 10
        assert _read_all(ck, s.bootstrap, "out", "read_committed") == \
            sorted(b"x%d" % i for i in range(10))
        kc = KafkaConsumer(bootstrap_servers=s.bootstrap, group_id="ctp",
                           enable_auto_commit=False)
        assert [kc.committed(TopicPartition("in", p)) for p in (0, 1)] == [5, 5]
        kc.close()
    # the transactional offsets survive a restart
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=NO_GROUP_DELAY) as s:
        kc = KafkaConsumer(bootstrap_servers=s.bootstrap, group_id="ctp",
                           enable_auto_commit=False)
        assert [kc.committed(TopicPartition("in", p)) for p in (0, 1)] == [5, 5]
        kc.close()
    assert verify_index([log_dir]).ok


#: fewer internal partitions than Kafka's 50: the restart recovers every partition (the
#: preallocated indexes of each are rebuilt and quarantined), which costs fsyncs
SMALL = ("--config", "group.initial.rebalance.delay.ms=0", "--config",
         "transaction.state.log.num.partitions=4", "--config", "offsets.topic.num.partitions=4")


def test_kill_9_mid_transaction_then_a_new_producer_fences_and_aborts(log_dir):
    ck = _confluent()
    proc, port = _start_cli(log_dir, *SMALL)
    bootstrap = f"127.0.0.1:{port}"
    try:
        _admin_create(ck, bootstrap, TOPIC)
        p = _producer(ck, bootstrap, "tx-crash")
        p.begin_transaction()
        p.produce(TOPIC, b"before", partition=0)
        p.commit_transaction(30)
        p.begin_transaction()
        for i in range(4):
            p.produce(TOPIC, b"open-%d" % i, partition=i % 2)
        assert p.flush(10) == 0  # the open transaction's records are on disk
    finally:
        proc.kill()  # SIGKILL with the transaction open
        proc.wait(10)
        proc.stderr.close()
    assert len(list(log_dir.glob("__transaction_state-*"))) == 4
    # the same port: the old producer, still alive, reconnects to the restarted server
    proc, port = _start_cli(log_dir, "--listen", f"127.0.0.1:{port}", *SMALL)
    bootstrap = f"127.0.0.1:{port}"
    try:
        # the open transaction holds the last stable offset: nothing of it is visible
        assert _read_all(ck, bootstrap, TOPIC, "read_committed", wait=2) == [b"before"]
        fresh = _producer(ck, bootstrap, "tx-crash")  # fences the old one, aborts its txn
        fresh.begin_transaction()
        fresh.produce(TOPIC, b"after", partition=1)
        fresh.commit_transaction(30)
        assert _read_all(ck, bootstrap, TOPIC, "read_committed") == [b"after", b"before"]
        assert _kafka_python_read(bootstrap, TOPIC, "read_committed") == [b"after", b"before"]
        # the old producer (still alive) is fenced: its commit fails and nothing shows
        with pytest.raises(ck.KafkaException) as e:
            p.produce(TOPIC, b"zombie", partition=0)
            p.commit_transaction(15)
        assert e.value.args[0].code() in (ck.KafkaError._FENCED, ck.KafkaError.PRODUCER_FENCED,
                                          ck.KafkaError.INVALID_PRODUCER_EPOCH), e.value
        assert b"zombie" not in _read_all(ck, bootstrap, TOPIC, "read_uncommitted", wait=2)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert verify_index([log_dir]).ok
