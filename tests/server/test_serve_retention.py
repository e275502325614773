"""Log retention in serve against the pinned broker: the same topic configs and the same
records given to a bench broker (retention checked every 500 ms from its start, files
removed 200 ms after their rename) and to serve; the log start offset (ListOffsets
earliest) and the segment base offsets left on disk must be the hand-computed ones on
both. Segments are made by ``segment.ms=1`` and record timestamps hours apart (each batch
rolls), so no small ``segment.bytes`` is needed (Kafka 4 requires 1 MiB)."""

from __future__ import annotations

import time

import pytest
from kafka_testkit import KafkaBroker
from serve_testkit import RawClient, create_topic

from kafkalog_cli.format.builder import build_batch
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions

PRODUCE, LIST_OFFSETS, DELETE_RECORDS = 0, 2, 21
HOUR = 3_600_000
#: the schedule both servers run: check every 500 ms from the start, remove 200 ms later
SCHEDULE = {"log.retention.check.interval.ms": "500", "log.initial.task.delay.ms": "0",
            "log.segment.delete.delay.ms": "200"}
VALUE = b"v" * 100


def _batch(ts: int) -> bytes:
    return build_batch([(ts, None, VALUE, ())])


#: topic -> (topic configs, record timestamps as hours before now, DeleteRecords offset,
#: the expected log start offset and segment base offsets)
SIZE = len(_batch(0))
CASES = {
    # retention.ms 1 h: the records 5, 4, 3 and 2 h old go; 0.5 h and 0.1 h stay
    "ret-ms": ({"retention.ms": str(HOUR)}, [5, 4, 3, 2, 0.5, 0.1], None, 4, [4, 5]),
    # every record breached: the active segment goes too, after a roll at the end offset
    "ret-all": ({"retention.ms": str(HOUR)}, [5, 4, 3], None, 3, [3]),
    # 5 one-batch segments, limit 2.5 of them: 2.5 over -> the two oldest go
    "ret-bytes": ({"retention.bytes": str(SIZE * 5 // 2), "retention.ms": "-1"},
                  [0.5, 0.4, 0.3, 0.2, 0.1], None, 2, [2, 3, 4]),
    # DeleteRecords to 3: segments whose next one starts at or below 3 go (0, 1, 2)
    "ret-lso": ({"retention.ms": "-1"}, [0.5, 0.4, 0.3, 0.2, 0.1], 3, 3, [3, 4]),
}


@pytest.fixture(scope="module")
def retention_broker(tmp_path_factory, kafka_bench):
    broker = KafkaBroker(tmp_path_factory.mktemp("retention-broker"), SCHEDULE)
    broker.start()
    yield broker
    broker.stop()


def _produce(c: RawClient, topic: str, records: bytes, deadline: float) -> None:
    body = {"transactionalId": None, "acks": -1, "timeoutMs": 5000, "topicData": [
        {"name": topic, "partitionData": [{"index": 0, "records": records}]}]}
    while True:  # a new topic's leader may not be known yet
        p = c.request(PRODUCE, 9, body)["responses"][0]["partitionResponses"][0]
        if p["errorCode"] == 0 or time.monotonic() > deadline:
            assert p["errorCode"] == 0, p
            return
        time.sleep(0.1)


def _earliest(c: RawClient, topic: str) -> int:
    res = c.request(LIST_OFFSETS, 7, {"replicaId": -1, "isolationLevel": 0, "topics": [
        {"name": topic, "partitions": [{"partitionIndex": 0, "currentLeaderEpoch": -1,
                                        "timestamp": -2}]}]})
    p = res["topics"][0]["partitions"][0]
    assert p["errorCode"] == 0, p
    return p["offset"]


def _segments(log_dir, topic: str) -> tuple[list[int], list[str]]:
    d = log_dir / f"{topic}-0"
    names = sorted(p.name for p in d.iterdir())
    return ([int(n[:20]) for n in names if n.endswith(".log")],
            [n for n in names if n.endswith(".deleted")])


def _feed(port: int, now_ms: int, cases: dict = CASES) -> None:
    c = RawClient(port, timeout=15)
    try:
        deadline = time.monotonic() + 20
        for topic, (configs, hours, delete_to, _, _) in cases.items():
            create_topic(c, topic, 1, {"segment.ms": "1", **configs})
            for h in hours:
                _produce(c, topic, _batch(now_ms - int(h * HOUR)), deadline)
            if delete_to is not None:
                res = c.request(DELETE_RECORDS, 2, {"topics": [{"name": topic, "partitions": [
                    {"partitionIndex": 0, "offset": delete_to}]}], "timeoutMs": 5000})
                assert res["topics"][0]["partitions"][0]["errorCode"] == 0, res
    finally:
        c.close()


def _settled(port: int, log_dir, timeout: float = 20) -> dict:
    """Each topic's (log start offset, segment bases) once every expected deletion is
    done and no ``.deleted`` file is left (polled: two servers' schedules, not ours)."""
    c = RawClient(port, timeout=15)
    deadline = time.monotonic() + timeout
    try:
        while True:
            got = {}
            for topic in CASES:
                bases, pending = _segments(log_dir, topic)
                got[topic] = (_earliest(c, topic), bases, pending)
            done = all(got[t][0] == CASES[t][3] and got[t][1] == CASES[t][4] and not got[t][2]
                       for t in CASES)
            if done or time.monotonic() > deadline:
                return {t: v[:2] for t, v in got.items()}
            time.sleep(0.1)
    finally:
        c.close()


@pytest.mark.kafka
def test_serve_deletes_what_the_broker_deletes(retention_broker, tmp_path):
    now = int(time.time() * 1000)
    expected = {t: (case[3], case[4]) for t, case in CASES.items()}
    _feed(retention_broker.port, now)
    broker = _settled(retention_broker.port, retention_broker.log_dir)
    log_dir = tmp_path / "logs"
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=SCHEDULE) as s:
        _feed(s.port, now)
        served = _settled(s.port, log_dir)
        assert s.server.retention.deleted_segments == 4 + 3 + 2 + 3
    assert broker == expected
    assert served == expected


def test_renamed_files_wait_for_the_delay_and_a_restart_removes_them(tmp_path):
    """Without the broker: the pass renames at once, the removal waits for
    file.delete.delay.ms (a minute here), a stop leaves the renamed files, the next
    start removes them (LogLoader)."""
    configs = {**SCHEDULE, "log.retention.check.interval.ms": "100",
               "log.segment.delete.delay.ms": "60000"}
    log_dir = tmp_path / "logs"
    cases = {"ret-ms": CASES["ret-ms"]}
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=configs) as s:
        _feed(s.port, int(time.time() * 1000), cases)
        c = RawClient(s.port)
        deadline = time.monotonic() + 10
        while _earliest(c, "ret-ms") != 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        c.close()
        bases, pending = _segments(log_dir, "ret-ms")
        assert bases == [4, 5]
        # .log, .index, .timeindex of 0..3 (no .txnindex without transactions) and the
        # producer snapshots at 1..3 (taken at each roll)
        assert {n[:20] for n in pending} == {f"{b:020d}" for b in range(4)}
        assert any(n.endswith(".log.deleted") for n in pending)
    assert _segments(log_dir, "ret-ms")[1] == pending
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=configs) as s:
        assert _segments(log_dir, "ret-ms") == ([4, 5], [])
        c = RawClient(s.port)
        assert _earliest(c, "ret-ms") == 4
        c.close()
