"""Transactions with real clients: librdkafka (confluent-kafka) transactional producers,
read_committed consumers from confluent-kafka and kafka-python, consume-transform-produce
with ``send_offsets_to_transaction``, a ``kill -9`` in the middle of a transaction; the
on-disk results checked with verify-index, the ``.txnindex`` and ``dump-segment``, and the
``__transaction_state`` records against the one a real broker wrote (corpus)."""

from __future__ import annotations

import json
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


def _read_all(ck, bootstrap, topic, isolation, n_parts=2, wait=None):
    """Every record a confluent-kafka consumer with ``isolation`` reads, sorted. With
    ``wait`` (s), polled for that long in full (what must NOT show up); without it, until
    the consumer's position reaches each partition's end offset as it answers it for this
    isolation level (the LSO under read_committed; nothing is produced while it reads),
    4 s at most."""
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{isolation}",
                     "isolation.level": isolation, "enable.auto.commit": False})
    tps = [ck.TopicPartition(topic, p, 0) for p in range(n_parts)]
    c.assign(tps)
    ends = None
    if wait is None:
        ends = [c.get_watermark_offsets(tp, timeout=10, cached=False) for tp in tps]
    got, deadline = [], time.monotonic() + (4.0 if wait is None else wait)
    while time.monotonic() < deadline:
        m = c.poll(0.3)
        if m is not None and not m.error():
            got.append(m.value())
        if ends is not None and all(high <= low or p.offset >= high
                                    for p, (low, high) in zip(c.position(tps), ends, strict=True)):
            break
    c.close()
    return sorted(got)


def _kafka_python_read(bootstrap, topic, isolation, n_parts=2):
    """:func:`_read_all` by kafka-python: until its position reaches each partition's end
    offset for ``isolation`` (4 s at most)."""
    from kafka import KafkaConsumer, TopicPartition
    c = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation,
                      enable_auto_commit=False, fetch_max_wait_ms=100)
    tps = [TopicPartition(topic, p) for p in range(n_parts)]
    c.assign(tps)
    c.seek_to_beginning()
    ends = c.end_offsets(tps)
    got, deadline = [], time.monotonic() + 4
    while time.monotonic() < deadline:
        for recs in c.poll(timeout_ms=300).values():
            got += [r.value for r in recs]
        if all(c.position(tp) >= ends[tp] for tp in tps):
            break
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
    # Kafka 4.4's tool prints TransactionLogValue's JSON with the status by its name
    # (TransactionState.stateName): every state the id went through, each Ongoing record
    # naming the partitions added
    for state in ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit",
                  "CompleteAbort"):
        assert f'"transactionStatus":"{state}"' in r.stdout, (state, r.stdout)
    assert '"transactionPartitions":[{"topic":"txn","partitionIds":[0,1]}]' in r.stdout
    # describe replays it as the coordinator loads it: one transactional id
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "describe", str(tdir), "-o",
                        "json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    (t,) = json.loads(r.stdout)["logDirs"][0]["topics"]
    assert t["partitions"][0]["internalTopic"]["transactionalIds"] == 1


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


# -- the records against a real broker's, and bad input -----------------------------------

def test_transaction_log_records_equal_what_a_real_broker_wrote():
    """The corpus's __transaction_state partition (a Kafka broker under ksqlDB): each record
    (Empty -> Ongoing -> PrepareCommit -> CompleteCommit) is rebuilt byte for byte from what
    it decodes to, and its transactional id hashes to the partition it is in."""
    from kafkalog_testkit import CORPUS

    from kafkalog_cli.server.transactions import _parse, txn_key, txn_value
    dirs = sorted(CORPUS.rglob("__transaction_state-*")) if CORPUS.is_dir() else []
    if not dirs:
        pytest.skip("the real-broker corpus is absent")
    states = []
    for d in dirs:
        for log in d.glob("*.log"):
            for b in FileRecords(log.read_bytes()).batches():
                for r in b.records():
                    tid, m = _parse(r.key, r.value)
                    assert partition_for(tid, 50) == int(d.name.rsplit("-", 1)[1])
                    assert txn_key(tid) == r.key and txn_value(m) == r.value
                    states.append(m.state)
    assert states == [0, 1, 2, 4]


def _txn(c, tid, timeout=60000, version=4):
    r = c.request(22, version, {"transactionalId": tid, "transactionTimeoutMs": timeout})
    assert r["errorCode"] == 0, r
    return r["producerId"], r["producerEpoch"]


def _add(c, tid, pid, epoch, parts, version=3):
    r = c.request(24, version, {"v3AndBelowTransactionalId": tid, "v3AndBelowProducerId": pid,
                                "v3AndBelowProducerEpoch": epoch, "v3AndBelowTopics": [
                                    {"name": t, "partitions": ps} for t, ps in parts]})
    return [(t["name"], p["partitionIndex"], p["partitionErrorCode"])
            for t in r["resultsByTopicV3AndBelow"] for p in t["resultsByPartition"]]


def _end(c, tid, pid, epoch, commit, version=3):
    return c.request(26, version, {"transactionalId": tid, "producerId": pid,
                                   "producerEpoch": epoch, "committed": commit})["errorCode"]


def _txn_batch(pid, epoch, seq=0):
    from kafkalog_cli.format.builder import build_batch
    return build_batch([(1_700_000_000_000, b"k", b"v", ())], producer_id=pid,
                       producer_epoch=epoch, base_sequence=seq, is_transactional=True)


def _produce(c, tid, partition, records):
    body = {"transactionalId": tid, "acks": -1, "timeoutMs": 1000,
            "topicData": [{"name": TOPIC, "partitionData": [{"index": partition,
                                                             "records": records}]}]}
    return c.request(0, 9, body)["responses"][0]["partitionResponses"][0]


def _batches(pdir):
    """Every batch of a partition directory, over its segments."""
    out = []
    for log in sorted(pdir.glob("*.log")):
        out += list(FileRecords(log.read_bytes()).batches())
    return out


def _files(d):
    return {p: p.read_bytes() for p in d.rglob("*") if p.is_file()
            and p.suffix in (".log", ".txnindex")}


def test_requests_from_a_producer_that_is_not_the_current_one_write_nothing(server, raw):
    from serve_testkit import create_topic

    from kafkalog_cli.protocol.errors import Errors
    c = raw()
    create_topic(c, TOPIC, 2)
    pid, e0 = _txn(c, "tx-old")
    assert _add(c, "tx-old", pid, e0, [(TOPIC, [0])]) == [(TOPIC, 0, 0)]
    assert _produce(c, "tx-old", 0, _txn_batch(pid, e0))["errorCode"] == 0
    # a second InitProducerId fences the first: its open transaction is aborted first
    r = c.request(22, 4, {"transactionalId": "tx-old", "transactionTimeoutMs": 60000})
    assert r["errorCode"] == Errors.CONCURRENT_TRANSACTIONS
    pid2, e2 = _txn(c, "tx-old")
    assert (pid2, e2) == (pid, e0 + 2)  # +1 to fence and abort, +1 for the new producer
    before = _files(server.log_dir)
    # the old epoch: every request refused with the broker's code, nothing written
    assert _add(c, "tx-old", pid, e0, [(TOPIC, [1])]) == [(TOPIC, 1, Errors.PRODUCER_FENCED)]
    assert _add(c, "tx-old", pid, e0, [(TOPIC, [1])], version=1) == \
        [(TOPIC, 1, Errors.INVALID_PRODUCER_EPOCH)]  # clients before KIP-588
    assert _add(c, "tx-old", pid + 7, e2, [(TOPIC, [1])]) == \
        [(TOPIC, 1, Errors.INVALID_PRODUCER_ID_MAPPING)]
    assert _end(c, "tx-old", pid, e0, True) == Errors.PRODUCER_FENCED
    assert _end(c, "tx-old", pid, e0, True, version=1) == Errors.INVALID_PRODUCER_EPOCH
    assert _end(c, "tx-old", pid, e2, True) == Errors.INVALID_TXN_STATE  # Empty
    assert _produce(c, "tx-old", 0, _txn_batch(pid, e0, 1))["errorCode"] == \
        Errors.INVALID_PRODUCER_EPOCH
    assert c.request(25, 3, {"transactionalId": "tx-old", "producerId": pid,
                             "producerEpoch": e0, "groupId": "g"})["errorCode"] == \
        Errors.PRODUCER_FENCED
    r = c.request(28, 3, {"transactionalId": "tx-old", "groupId": "g", "producerId": pid,
                          "producerEpoch": e0, "generationId": -1, "memberId": "",
                          "groupInstanceId": None, "topics": [{"name": TOPIC, "partitions": [
                              {"partitionIndex": 0, "committedOffset": 1,
                               "committedLeaderEpoch": -1, "committedMetadata": None}]}]})
    assert r["topics"][0]["partitions"][0]["errorCode"] == Errors.INVALID_PRODUCER_EPOCH
    assert _files(server.log_dir) == before
    # the fenced transaction's record is in the log with an ABORT marker at epoch + 1
    batches = _batches(server.log_dir / f"{TOPIC}-0")
    assert [(b.is_control, b.producer_epoch) for b in batches] == [(False, e0), (True, e0 + 1)]


def test_a_marker_never_lands_in_a_partition_not_added(server, raw):
    from serve_testkit import create_topic

    from kafkalog_cli.protocol.errors import Errors
    c = raw()
    create_topic(c, TOPIC, 2)
    pid, epoch = _txn(c, "tx-one")
    assert _add(c, "tx-one", pid, epoch, [(TOPIC, [0])]) == [(TOPIC, 0, 0)]
    assert _produce(c, "tx-one", 0, _txn_batch(pid, epoch))["errorCode"] == 0
    # partition 1 was never added: the coordinator's verification refuses the batch
    assert _produce(c, "tx-one", 1, _txn_batch(pid, epoch))["errorCode"] == \
        Errors.INVALID_TXN_STATE
    # unknown partitions: nothing is added, the others are not attempted
    assert _add(c, "tx-one", pid, epoch, [(TOPIC, [1, 9])]) == [
        (TOPIC, 1, Errors.OPERATION_NOT_ATTEMPTED), (TOPIC, 9, Errors.UNKNOWN_TOPIC_OR_PARTITION)]
    assert _end(c, "tx-one", pid, epoch, True) == 0
    assert _end(c, "tx-one", pid, epoch, True) == 0  # a retried commit of a completed one
    assert _end(c, "tx-one", pid, epoch, False) == Errors.INVALID_TXN_STATE
    p0 = _batches(server.log_dir / f"{TOPIC}-0")
    assert [b.is_control for b in p0] == [False, True]
    assert _batches(server.log_dir / f"{TOPIC}-1") == []


def test_an_ongoing_transaction_is_aborted_at_its_timeout(log_dir):
    from serve_testkit import create_topic
    configs = {**NO_GROUP_DELAY,
               "transaction.abort.timed.out.transaction.cleanup.interval.ms": "100"}
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=configs) as s:
        c = RawClient(s.port)
        create_topic(c, TOPIC, 1)
        pid, epoch = _txn(c, "tx-slow", timeout=300)
        _add(c, "tx-slow", pid, epoch, [(TOPIC, [0])])
        assert _produce(c, "tx-slow", 0, _txn_batch(pid, epoch))["errorCode"] == 0
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            st = c.request(65, 0, {"transactionalIds": ["tx-slow"]})["transactionStates"][0]
            if st["transactionState"] == "CompleteAbort":
                break
            time.sleep(0.1)
        assert (st["transactionState"], st["producerEpoch"]) == ("CompleteAbort", epoch + 1)
        # the producer is fenced: its commit is refused
        assert _end(c, "tx-slow", pid, epoch, True) == 90  # PRODUCER_FENCED
        c.close()
    batches = _batches(log_dir / f"{TOPIC}-0")
    assert [(b.is_control, b.producer_epoch) for b in batches] == [(False, epoch),
                                                                   (True, epoch + 1)]


@pytest.mark.parametrize("topic", ["__consumer_offsets", "__transaction_state"])
def test_an_internal_partition_that_does_not_load_stops_the_start(log_dir, topic):
    """A record that does not parse: serve refuses to start, naming the partition and the
    offset (it does not guess which offsets or transactions the partition held)."""
    from kafkalog_cli.format.builder import build_batch
    from kafkalog_cli.storage.log_manager import LogManager
    with LogManager.open(log_dir) as m:
        lg = m.get_or_create_log(topic, 3)
        key = b"\x00\x01\x00\x05gro" if topic == "__consumer_offsets" else b"\x00\x00\x00"
        lg.append_as_leader(build_batch([(1_700_000_000_000, key, b"\x00\x03junk", ())]))
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir",
                        str(log_dir), "--listen", "127.0.0.1:0"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 3, r.stderr
    assert f"{topic}-3: the record at offset 0 does not load" in r.stderr


def test_kafka_python_and_aiokafka_transactional_producers(log_dir):
    """kafka-python's and aiokafka's transactional producers commit and abort across two
    partitions; a librdkafka read_committed consumer sees exactly the committed records."""
    ck = _confluent()
    import asyncio

    from aiokafka import AIOKafkaProducer
    from kafka import KafkaProducer

    committed = sorted(b"c%d" % i for i in range(4))
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=NO_GROUP_DELAY) as s:
        _admin_create(ck, s.bootstrap, "kp", "aio")
        p = KafkaProducer(bootstrap_servers=s.bootstrap, transactional_id="kp-tx")
        p.init_transactions()
        p.begin_transaction()
        for i in range(4):
            p.send("kp", b"c%d" % i, partition=i % 2)
        p.commit_transaction()
        p.begin_transaction()
        for i in range(4):
            p.send("kp", b"a%d" % i, partition=i % 2)
        p.flush()
        p.abort_transaction()
        p.close()

        async def aio():
            ap = AIOKafkaProducer(bootstrap_servers=s.bootstrap, transactional_id="aio-tx")
            await ap.start()
            try:
                async with ap.transaction():
                    for i in range(4):
                        await ap.send("aio", b"c%d" % i, partition=i % 2)
                with pytest.raises(RuntimeError):
                    async with ap.transaction():
                        for i in range(4):
                            await ap.send_and_wait("aio", b"a%d" % i, partition=i % 2)
                        raise RuntimeError("abort")
            finally:
                await ap.stop()

        asyncio.run(aio())
        assert _read_all(ck, s.bootstrap, "kp", "read_committed") == committed
        assert _read_all(ck, s.bootstrap, "aio", "read_committed") == committed
        assert len(_read_all(ck, s.bootstrap, "aio", "read_uncommitted")) == 8
    assert verify_index([log_dir]).ok
