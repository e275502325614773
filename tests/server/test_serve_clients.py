"""Real clients against the server on 127.0.0.1: kafka-python, aiokafka and (when
installed; required under CI=true) confluent-kafka/librdkafka. Each produces N records
with every codec and acks 0/1/all (idempotence on with all), consumes them back by offset
and by timestamp; afterwards the log directory passes verify-index, decodes with
kafka-python's reader, and every segment's indexes equal what recovery rebuilds."""

from __future__ import annotations

import asyncio
import os

import pytest
from kafka.record import MemoryRecords
from serve_testkit import check_log_dir

from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions
from kafkalog_cli.storage.log import Log

N = 150
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
#: kafka-python's compression_type of each codec (the batch attributes' low 3 bits)
CODEC_IDS = {c: i for i, c in enumerate(CODECS)}
ACKS = [0, 1, "all"]
BASE_TS = 1_700_000_000_000


def _value(i: int) -> bytes:
    return b"value-%05d-" % i + b"x" * (i % 50)


def _expected():
    return [(b"key-%d" % i, _value(i), BASE_TS + i * 10) for i in range(N)]


# -- kafka-python -------------------------------------------------------------------------

def _kp_produce(bootstrap, topic, codec, acks):
    from kafka import KafkaProducer

    p = KafkaProducer(bootstrap_servers=bootstrap, acks=acks, compression_type=(
        None if codec == "none" else codec), enable_idempotence=acks == "all",
        linger_ms=5, batch_size=4096, request_timeout_ms=10000)
    futures = [p.send(topic, key=k, value=v, partition=0, timestamp_ms=ts)
               for k, v, ts in _expected()]
    p.flush(30)
    meta = [f.get(10) for f in futures]
    p.close(5)
    return meta


def _kp_consume(bootstrap, topic):
    from kafka import KafkaConsumer, TopicPartition

    tp = TopicPartition(topic, 0)
    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                      consumer_timeout_ms=3000, fetch_max_wait_ms=100)
    c.assign([tp])
    c.seek(tp, 0)
    got = []
    while len(got) < N:
        batch = c.poll(timeout_ms=2000)
        if not batch:
            break
        for recs in batch.values():
            got += recs
    by_time = c.offsets_for_times({tp: BASE_TS + 42 * 10 - 5})[tp]
    end = c.end_offsets([tp])[tp]
    begin = c.beginning_offsets([tp])[tp]
    c.seek(tp, 77)
    after_seek = c.poll(timeout_ms=2000)[tp][0]
    c.close()
    return got, by_time, begin, end, after_seek


@pytest.mark.parametrize("acks", ACKS)
@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_produce_consume(log_dir, codec, acks):
    topic = f"kp-{codec}-{acks}"
    with ServerThread(log_dir, ServerOptions(port=0, auto_create_topics=True)) as s:
        meta = _kp_produce(s.bootstrap, topic, codec, acks)
        if acks != 0:
            assert [m.offset for m in meta] == list(range(N))
        got, by_time, begin, end, after_seek = _kp_consume(s.bootstrap, topic)
    assert [(r.key, r.value, r.timestamp) for r in got] == _expected()
    assert [r.offset for r in got] == list(range(N))
    assert by_time.offset == 42 and by_time.timestamp == BASE_TS + 420
    assert (begin, end) == (0, N)
    assert after_seek.offset == 77
    check_log_dir(log_dir, {topic: N}, codecs={topic: CODEC_IDS[codec]})


# -- aiokafka -------------------------------------------------------------------------------

async def _aio_roundtrip(bootstrap, topic, codec, acks):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    p = AIOKafkaProducer(bootstrap_servers=bootstrap, acks=acks, compression_type=(
        None if codec == "none" else codec), enable_idempotence=acks == "all", linger_ms=5,
        max_batch_size=4096)
    await p.start()
    try:
        futs = [await p.send(topic, key=k, value=v, partition=0, timestamp_ms=ts)
                for k, v, ts in _expected()]
        meta = await asyncio.gather(*futs)
    finally:
        await p.stop()
    tp = TopicPartition(topic, 0)
    c = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                         fetch_max_wait_ms=100)
    await c.start()
    try:
        c.assign([tp])
        c.seek(tp, 0)
        got = []
        while len(got) < N:
            batch = await asyncio.wait_for(c.getmany(tp, timeout_ms=1000), 10)
            got += batch.get(tp, [])
        by_time = (await c.offsets_for_times({tp: BASE_TS + 100 * 10}))[tp]
        end = (await c.end_offsets([tp]))[tp]
    finally:
        await c.stop()
    return meta, got, by_time, end


@pytest.mark.parametrize("acks", ACKS)
@pytest.mark.parametrize("codec", CODECS)
def test_aiokafka_produce_consume(log_dir, codec, acks):
    topic = f"aio-{codec}-{acks}"
    with ServerThread(log_dir, ServerOptions(port=0, auto_create_topics=True)) as s:
        meta, got, by_time, end = asyncio.run(
            asyncio.wait_for(_aio_roundtrip(s.bootstrap, topic, codec, acks), 60))
    if acks != 0:
        assert [m.offset for m in meta] == list(range(N))
    assert [(r.key, r.value, r.timestamp) for r in got] == _expected()
    assert by_time.offset == 100 and end == N
    check_log_dir(log_dir, {topic: N}, codecs={topic: CODEC_IDS[codec]})


# -- confluent-kafka (librdkafka) -------------------------------------------------------------

def _confluent():
    try:
        import confluent_kafka
    except ImportError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("confluent-kafka is not installed (pip install '.[test]')")
        pytest.skip("confluent-kafka is not installed")
    return confluent_kafka


def test_librdkafka_lists_all_topics(log_dir):
    # librdkafka's all-topics Metadata v12 request carries bytes after its body; serve
    # closed the connection on it ("Broker transport failure") until it ignored them
    _confluent()
    from confluent_kafka.admin import AdminClient, NewTopic

    with ServerThread(log_dir, ServerOptions(port=0)) as s:
        admin = AdminClient({"bootstrap.servers": s.bootstrap, "log_level": 3})
        for f in admin.create_topics([NewTopic("listed", 3, 1)]).values():
            f.result(10)
        md = admin.list_topics(timeout=10)
        assert sorted(md.topics) == ["listed"]
        assert sorted(md.topics["listed"].partitions) == [0, 1, 2]
        assert [b.port for b in md.brokers.values()] == [s.port]


@pytest.mark.parametrize("acks", ["0", "1", "all"])
@pytest.mark.parametrize("codec", CODECS)
def test_librdkafka_produce_consume(log_dir, codec, acks):
    ck = _confluent()
    topic = f"rd-{codec}-{acks}"
    with ServerThread(log_dir, ServerOptions(port=0, auto_create_topics=True)) as s:
        p = ck.Producer({"bootstrap.servers": s.bootstrap, "acks": acks,
                         "compression.type": codec, "linger.ms": 5,
                         "enable.idempotence": acks == "all", "log_level": 3})
        reports = []
        for k, v, ts in _expected():
            p.produce(topic, value=v, key=k, partition=0, timestamp=ts,
                      on_delivery=lambda err, msg: reports.append((err, msg.offset())))
        assert p.flush(30) == 0
        assert all(e is None for e, _ in reports)
        if acks != "0":
            assert [o for _, o in reports] == list(range(N))
        c = ck.Consumer({"bootstrap.servers": s.bootstrap, "group.id": "unused",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 100,
                         "log_level": 3})
        tp = ck.TopicPartition(topic, 0, 0)
        c.assign([tp])
        got = []
        for _ in range(200):
            if len(got) >= N:
                break
            for m in c.consume(N, timeout=0.5):
                assert m.error() is None, m.error()
                got.append(m)
        found = c.offsets_for_times([ck.TopicPartition(topic, 0, BASE_TS + 55 * 10)],
                                    timeout=10)
        lo, hi = c.get_watermark_offsets(ck.TopicPartition(topic, 0), timeout=10)
        c.close()
    assert [(m.key(), m.value(), m.timestamp()[1]) for m in got] == _expected()
    assert found[0].offset == 55
    assert (lo, hi) == (0, N)
    check_log_dir(log_dir, {topic: N}, codecs={topic: CODEC_IDS[codec]})


def test_librdkafka_idempotent_many_segments_and_restart(log_dir):
    """Idempotent producer over small segments (rolls, snapshots, per-segment indexes);
    a restart continues the offsets; everything reads back in order."""
    ck = _confluent()
    topic = "rd-roll"
    # lz4 batches of these values are ~4x smaller than the records: 4 KiB segments
    configs = {"segment.bytes": "4096", "index.interval.bytes": "1024"}
    n1, n2 = 1500, 500
    values = [b"roll-%06d-" % i + b"y" * (i % 70) for i in range(n1 + n2)]
    reports = []
    for lo, hi in ((0, n1), (n1, n1 + n2)):
        with ServerThread(log_dir, ServerOptions(port=0, auto_create_topics=True),
                          server_configs=configs) as s:
            p = ck.Producer({"bootstrap.servers": s.bootstrap, "acks": "all",
                             "enable.idempotence": True, "compression.type": "lz4",
                             "linger.ms": 5, "batch.size": 4096, "log_level": 3})
            for i in range(lo, hi):
                p.produce(topic, value=values[i], partition=0, timestamp=BASE_TS + i,
                          on_delivery=lambda err, msg: reports.append((err, msg.offset())))
                p.poll(0)
            assert p.flush(30) == 0
    assert all(e is None for e, _ in reports)
    assert [o for _, o in reports] == list(range(n1 + n2))
    segs = Log.open(log_dir / f"{topic}-0").segments
    assert len(segs) > 5
    snaps = sorted(int(p.name[:20]) for p in (log_dir / f"{topic}-0").glob("*.snapshot"))
    assert snaps[-1] == n1 + n2 and n1 in snaps  # at close, and at the first close
    check_log_dir(log_dir, {topic: n1 + n2}, 1024)
    got = []
    codecs = set()
    for seg in segs:
        mr = MemoryRecords(seg.log_path.read_bytes())
        while (b := mr.next_batch()) is not None:
            codecs.add(b.compression_type)
            got += [r.value for r in b]
    assert got == values
    # librdkafka compresses with lz4 only when the broker has FindCoordinator (its LZ4
    # feature check); it silently sends uncompressed batches otherwise (and for a batch
    # that compression would not make smaller)
    assert 3 in codecs and codecs <= {0, 3}


# -- kcat (librdkafka's CLI) ------------------------------------------------------------------

def _kcat():
    import shutil

    exe = shutil.which("kcat") or shutil.which("kafkacat")
    if exe is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("kcat is not installed (apt-get install -y kcat)")
        pytest.skip("kcat is not installed (apt-get install -y kcat)")
    return exe


def test_kcat_produce_consume(log_dir, tmp_path):
    import subprocess

    exe = _kcat()
    lines = [b"kcat-%05d:" % i + b"z" * (i % 40) for i in range(N)]
    src = tmp_path / "in.txt"
    src.write_bytes(b"\n".join(lines) + b"\n")
    with ServerThread(log_dir, ServerOptions(port=0, auto_create_topics=True)) as s:
        r = subprocess.run([exe, "-b", s.bootstrap, "-P", "-t", "kc", "-p", "0", "-K", ":",
                            "-z", "snappy", "-X", "linger.ms=5", "-X", "acks=all",
                            "-X", "enable.idempotence=true", "-l", str(src)],
                           capture_output=True, timeout=60)
        assert r.returncode == 0, r.stderr
        r = subprocess.run([exe, "-b", s.bootstrap, "-C", "-t", "kc", "-p", "0", "-o",
                            "beginning", "-e", "-f", "%o %k %s\\n"], capture_output=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
    got = r.stdout.splitlines()
    assert got == [b"%d %s %s" % (i, *line.split(b":", 1)) for i, line in enumerate(lines)]
    check_log_dir(log_dir, {"kc": N})
