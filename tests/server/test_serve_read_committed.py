"""read_committed fetches over aborted transactions, as ``LocalLog.addAbortedTransactions``
answers them: every aborted transaction (``.txnindex`` entry) with ``lastOffset >=``
the fetch offset and ``firstOffset <`` the fetch's upper bound, scanning the ``.txnindex``
of the segment read and of the following segments until an entry's last stable offset
reaches the upper bound (``collectAbortedTxns``: the entry of a transaction lives in the
segment its ABORT marker was written to, which may come after the segment read).

The partition is written with the append engine; what a consumer must see follows from
how it was written (records of aborted transactions are dropped, markers are never
records). Checked with raw Fetch requests and with real clients in read_committed mode:
confluent-kafka (librdkafka) and kafka-python, each starting at offsets inside the
transactions.
"""

from __future__ import annotations

import pytest
from serve_testkit import RawClient
from test_serve_fetch import fetch

from kafkalog_cli.format.builder import build_batch
from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.schema.txn_index import parse_txn_index
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions
from kafkalog_cli.storage.clock import ManualClock
from kafkalog_cli.storage.log_manager import LogManager

TS = 1_700_000_000_000
TOPIC = "rc"
A, B, C, D = 10, 11, 12, 13  # one producer id per transaction

#: offset -> value of every data record written; the transactions' fates
LAYOUT_SEGMENT_0 = [
    (None, [b"c0", b"c1", b"c2"]),   # 0-2 plain
    (A, [b"a3", b"a4"]),             # 3-4 A (aborted at 11, in segment 7)
    (B, [b"b5"]),                    # 5   B (committed at 7)
    (A, [b"a6"]),                    # 6   A
]
LAYOUT_SEGMENT_7 = [
    ("commit", B),                   # 7
    (A, [b"a8"]),                    # 8
    (C, [b"x9", b"x10"]),            # 9-10 C (aborted at 12, same segment)
    ("abort", A),                    # 11
    ("abort", C),                    # 12
    (None, [b"c13"]),                # 13
    (D, [b"d14"]),                   # 14 D (committed at 15)
    ("commit", D),                   # 15
    (None, [b"c16"]),                # 16
]
LOG_END = 17
#: what a read_committed consumer starting at each offset must see
COMMITTED_FROM = {
    0: [b"c0", b"c1", b"c2", b"b5", b"c13", b"d14", b"c16"],
    4: [b"b5", b"c13", b"d14", b"c16"],   # inside A, which began at 3
    6: [b"c13", b"d14", b"c16"],          # A began in this segment, aborted in the next
    8: [b"c13", b"d14", b"c16"],
    10: [b"c13", b"d14", b"c16"],         # inside C, which began at 9
}


def _write(log_dir) -> None:
    m = LogManager.open(log_dir, clock=ManualClock(TS), fsync=False)
    log = m.get_or_create_log(TOPIC, 0)
    seqs = {}

    def append(entries):
        for pid, what in entries:
            if pid in ("commit", "abort"):
                log.append_end_txn_marker(producer_id=what, producer_epoch=0,
                                          commit=pid == "commit")
                continue
            recs = [(TS, None, v, ()) for v in what]
            if pid is None:
                log.append_as_leader(build_batch(recs))
            else:
                seq = seqs.get(pid, 0)
                log.append_as_leader(build_batch(recs, producer_id=pid, producer_epoch=0,
                                                 base_sequence=seq, is_transactional=True))
                seqs[pid] = seq + len(recs)

    append(LAYOUT_SEGMENT_0)
    assert log.log_end_offset == 7
    log.roll()
    append(LAYOUT_SEGMENT_7)
    assert log.log_end_offset == LOG_END
    m.close()
    d = log_dir / f"{TOPIC}-0"
    assert [p.name for p in sorted(d.glob("*.log"))] == [
        "00000000000000000000.log", "00000000000000000007.log"]
    # both aborts are indexed in the segment of their marker
    first = d / "00000000000000000000.txnindex"
    assert not first.exists() or first.read_bytes() == b""
    txns = parse_txn_index((d / "00000000000000000007.txnindex").read_bytes())
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in txns] == [
        (A, 3, 11), (C, 9, 12)]


@pytest.fixture
def served(log_dir):
    _write(log_dir)
    with ServerThread(log_dir, ServerOptions(port=0)) as s:
        yield s


@pytest.mark.parametrize(("offset", "aborted"), [
    (0, [(A, 3)]),            # segment 0 read; A's entry found in segment 7's index
    (4, [(A, 3)]),            # A began before the fetch offset
    (6, [(A, 3)]),
    (7, [(A, 3), (C, 9)]),
    (10, [(A, 3), (C, 9)]),   # C began before the fetch offset, in this segment
    (13, []),                 # both ended before 13
])
def test_fetch_lists_the_aborted_transactions(served, offset, aborted):
    c = RawClient(served.port)
    p = fetch(c, TOPIC, offset, isolation=1)["responses"][0]["partitions"][0]
    c.close()
    assert p["errorCode"] == 0 and p["lastStableOffset"] == LOG_END
    assert [(t["producerId"], t["firstOffset"]) for t in p["abortedTransactions"]] == aborted


def test_read_uncommitted_lists_none(served):
    c = RawClient(served.port)
    p = fetch(c, TOPIC, 4, isolation=0)["responses"][0]["partitions"][0]
    c.close()
    assert p["abortedTransactions"] is None


def _confluent_read(port: int, offset: int) -> list[bytes]:
    ck = pytest.importorskip("confluent_kafka")
    cons = ck.Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "rc-test",
                        "enable.auto.commit": False, "isolation.level": "read_committed",
                        "enable.partition.eof": True, "log_level": 0})
    cons.assign([ck.TopicPartition(TOPIC, 0, offset)])
    got = []
    try:
        for _ in range(200):
            msg = cons.poll(5.0)
            if msg is None:
                break
            if msg.error():
                if msg.error().code() == ck.KafkaError._PARTITION_EOF:
                    break
                raise AssertionError(msg.error())
            got.append(msg.value())
    finally:
        cons.close()
    return got


def _kafka_python_read(port: int, offset: int) -> list[bytes]:
    from kafka import KafkaConsumer, TopicPartition

    tp = TopicPartition(TOPIC, 0)
    cons = KafkaConsumer(bootstrap_servers=f"127.0.0.1:{port}", enable_auto_commit=False,
                         isolation_level="read_committed", fetch_max_wait_ms=100,
                         # one segment's bytes per fetch at most: several fetches
                         max_partition_fetch_bytes=1 << 20)
    cons.assign([tp])
    cons.seek(tp, offset)
    got = []
    try:
        for _ in range(20):
            batch = cons.poll(timeout_ms=500)
            got += [r.value for r in batch.get(tp, [])]
            if cons.position(tp) >= LOG_END:
                break
    finally:
        cons.close()
    return got


@pytest.mark.parametrize("offset", sorted(COMMITTED_FROM))
def test_confluent_kafka_read_committed(served, offset):
    assert _confluent_read(served.port, offset) == COMMITTED_FROM[offset]


@pytest.mark.parametrize("offset", sorted(COMMITTED_FROM))
def test_kafka_python_read_committed(served, offset):
    assert _kafka_python_read(served.port, offset) == COMMITTED_FROM[offset]


# -- a transaction left open -----------------------------------------------------------------------

OPEN = "rc-open"


@pytest.fixture
def open_txn(log_dir):
    """``rc-open-0``: plain 0-1, producer A's transaction 2-3 (open: no marker), plain 4."""
    m = LogManager.open(log_dir, clock=ManualClock(TS), fsync=False)
    log = m.get_or_create_log(OPEN, 0)
    log.append_as_leader(build_batch([(TS, None, b"p0", ()), (TS, None, b"p1", ())]))
    log.append_as_leader(build_batch([(TS, None, b"a2", ()), (TS, None, b"a3", ())],
                                     producer_id=A, producer_epoch=0, base_sequence=0,
                                     is_transactional=True))
    log.append_as_leader(build_batch([(TS, None, b"p4", ())]))
    m.close()
    return log_dir


def _batches(p) -> list[tuple[int, int]]:
    return [(b.base_offset, b.last_offset) for b in FileRecords(p["records"] or b"").batches()]


def test_read_committed_stops_at_an_open_transaction(open_txn):
    """With A's transaction open, the last stable offset is its first offset (2): a
    read_committed fetch gets the batches below it and nothing from 2 on (Kafka's
    FetchIsolation.TXN_COMMITTED reads up to the LSO); read_uncommitted gets every batch;
    once A commits (marker at 5) read_committed reads on to the end (the bench broker's
    answer to the same: tests/kafka_bench/test_disk_differential.py, and the wire suite's
    test_read_uncommitted_and_committed_while_open)."""
    with ServerThread(open_txn, ServerOptions(port=0)) as s:
        c = RawClient(s.port)
        p = fetch(c, OPEN, 0, isolation=1)["responses"][0]["partitions"][0]
        assert (p["errorCode"], p["highWatermark"], p["lastStableOffset"]) == (0, 5, 2)
        assert _batches(p) == [(0, 1)] and p["abortedTransactions"] == []
        p = fetch(c, OPEN, 2, isolation=1)["responses"][0]["partitions"][0]
        assert (p["errorCode"], p["lastStableOffset"], _batches(p)) == (0, 2, [])
        p = fetch(c, OPEN, 0, isolation=0)["responses"][0]["partitions"][0]
        assert _batches(p) == [(0, 1), (2, 3), (4, 4)] and p["lastStableOffset"] == 2
        c.close()
    m = LogManager.open(open_txn, clock=ManualClock(TS), fsync=False)
    m.get_or_create_log(OPEN, 0).append_end_txn_marker(producer_id=A, producer_epoch=0,
                                                       commit=True)
    m.close()
    with ServerThread(open_txn, ServerOptions(port=0)) as s:
        c = RawClient(s.port)
        p = fetch(c, OPEN, 2, isolation=1)["responses"][0]["partitions"][0]
        assert (p["highWatermark"], p["lastStableOffset"]) == (6, 6)
        assert _batches(p) == [(2, 3), (4, 4), (5, 5)]
        c.close()
