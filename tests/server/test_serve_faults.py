"""Load and faults: several librdkafka producers at once on loopback against
``kafkalog serve`` (a subprocess) for a bounded time; ``kill -9`` of the server mid-load;
then every record acknowledged with acks=1 or acks=all must be in the log exactly once,
at the offset it was acknowledged with, in the order it was produced.

Two checks of the same crash: straight from the ``.log`` files (a killed process loses
nothing the page cache holds; at most a torn batch at the very end, never acknowledged),
and after ``kafkalog recover --truncate`` (then verify-index passes and a restarted server
continues the offsets). The second is skipped while ``recover`` is not on this branch.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from serve_testkit import RawClient
from test_serve_clients import _confluent
from test_serve_fetch import ROOT, _start_cli
from test_serve_produce_errors import batch, part, produce

from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.ops.verify import verify_index
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions
from kafkalog_cli.storage.log import Log

TOPIC = "load"
PARTITIONS = 3
LOAD_SECONDS = 5.0
KILL_AFTER = 3.0
PRODUCERS = {  # name -> librdkafka settings; acks=0 is load only, never "acknowledged"
    "a1": {"acks": "1"},
    "idem": {"acks": "all", "enable.idempotence": True, "compression.type": "lz4"},
    "z1": {"acks": "1", "compression.type": "zstd", "batch.size": 65536},
    "a0": {"acks": "0"},
}


class Load:
    def __init__(self):
        self.acked: dict[str, list[tuple[int, int, bytes]]] = defaultdict(list)
        self.failed: Counter = Counter()
        self.sent: Counter = Counter()
        self.killed_at: float | None = None
        self.errors: dict[str, str] = {}


def _produce(ck, name: str, settings: dict, port: int, deadline: float, load: Load,
             lock: threading.Lock) -> None:
    p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{port}", "linger.ms": 5,
                     "message.timeout.ms": 4000, "request.timeout.ms": 3000,
                     # a bounded queue: produce() waits for the server (backpressure)
                     "queue.buffering.max.messages": 5000, "log_level": 0, **settings})
    track = settings["acks"] != "0"

    def report(err, msg):
        with lock:
            if err is not None:
                load.failed[name] += 1
                load.errors.setdefault(name, str(err))
            elif track:
                load.acked[name].append((msg.partition(), msg.offset(), msg.value()))

    i = 0
    while time.monotonic() < deadline:
        value = b"%s-%09d-" % (name.encode(), i) + b"x" * (i % 200)
        try:
            p.produce(TOPIC, value, partition=i % PARTITIONS, on_delivery=report)
        except BufferError:
            p.poll(0.01)
            continue
        i += 1
        load.sent[name] += 1
        if i % 200 == 0:
            p.poll(0)
    p.flush(10)  # bounded: message.timeout.ms fails what the dead server never answered


@pytest.fixture(scope="module")
def crashed(tmp_path_factory):
    ck = _confluent()
    log_dir = tmp_path_factory.mktemp("faults") / "logs"
    log_dir.mkdir()
    proc, port = _start_cli(log_dir, "--auto-create-topics", "--num-partitions",
                            str(PARTITIONS), "--config", "segment.bytes=262144")
    load = Load()
    lock = threading.Lock()
    start = time.monotonic()
    deadline = start + LOAD_SECONDS
    threads = [threading.Thread(target=_produce, args=(ck, n, s, port, deadline, load, lock))
               for n, s in PRODUCERS.items()]
    try:
        for t in threads:
            t.start()
        time.sleep(KILL_AFTER)
        proc.kill()  # SIGKILL, mid-load
        load.killed_at = time.monotonic() - start
        proc.wait(10)
        for t in threads:
            t.join(30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stderr.close()
    assert not any(t.is_alive() for t in threads)
    return log_dir, load


def _log_records(log_dir: Path) -> dict[int, list[tuple[int, bytes]]]:
    """Every record of each partition from its .log files, stopping at a torn tail (only
    allowed at the end of the last segment)."""
    out = {}
    for p in range(PARTITIONS):
        log = Log.open(log_dir / f"{TOPIC}-{p}")
        recs = []
        for k, seg in enumerate(log.segments):
            fr = FileRecords(seg.log_path.read_bytes())
            for b in fr.batches():
                b.ensure_valid()
                recs += [(r.offset, r.value) for r in b.records()]
            if fr.invalid_bytes:
                assert k == len(log.segments) - 1, f"invalid bytes inside {seg.log_path}"
        log.close()
        offsets = [o for o, _ in recs]
        assert offsets == sorted(set(offsets)), f"partition {p}: offsets not increasing"
        out[p] = recs
    return out


def _check_acknowledged(records: dict[int, list[tuple[int, bytes]]], load: Load) -> None:
    by_offset = {p: dict(recs) for p, recs in records.items()}
    counts = {p: Counter(v for _, v in recs) for p, recs in records.items()}
    for name, acked in load.acked.items():
        last: dict[int, tuple[int, int]] = {}
        for p, off, value in sorted(acked, key=lambda a: int(a[2].split(b"-")[1])):
            assert by_offset[p].get(off) == value, (name, p, off)
            assert counts[p][value] == 1, (name, p, off, "duplicated")
            seq = int(value.split(b"-")[1])
            if p in last:  # produced later -> a later offset in the partition
                assert off > last[p][1] and seq > last[p][0], (name, p, off)
            last[p] = (seq, off)


def test_load_then_kill_9_keeps_every_acknowledged_record(crashed):
    log_dir, load = crashed
    assert load.killed_at is not None and load.killed_at < LOAD_SECONDS
    tracked = [n for n, s in PRODUCERS.items() if s["acks"] != "0"]
    assert all(len(load.acked[n]) > 100 for n in tracked), (
        dict(load.sent), dict(load.failed), {n: len(a) for n, a in load.acked.items()},
        load.errors)
    # the kill was mid-load: some records were never acknowledged
    assert sum(load.failed.values()) > 0 or sum(load.sent.values()) > sum(
        len(load.acked[n]) for n in tracked)
    records = _log_records(log_dir)
    _check_acknowledged(records, load)
    print(f"sent {dict(load.sent)}; acknowledged "
          f"{ {n: len(a) for n, a in load.acked.items()} }; failed {dict(load.failed)}; "
          f"in the log {sum(len(r) for r in records.values())}; killed at "
          f"{load.killed_at:.1f}s; first errors {load.errors}")


def _recover_available() -> bool:
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "recover", "--help"], cwd=ROOT,
                       capture_output=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    return r.returncode == 0


def test_recover_truncate_then_every_acknowledged_record_once_in_order(crashed):
    if not _recover_available():
        pytest.skip("`kafkalog recover` is not on this branch yet (it lands from branch "
                    "recover); the crash itself is checked by "
                    "test_load_then_kill_9_keeps_every_acknowledged_record")
    log_dir, load = crashed
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "recover", "--truncate",
                        str(log_dir)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stdout + r.stderr
    result = verify_index([log_dir])
    assert result.ok, result.to_dict()
    records = _log_records(log_dir)
    _check_acknowledged(records, load)
    ends = {p: (recs[-1][0] + 1 if recs else 0) for p, recs in records.items()}
    # the recovered directory serves again and continues each partition's offsets
    with ServerThread(log_dir, ServerOptions(port=0)) as s:
        c = RawClient(s.port)
        for p in range(PARTITIONS):
            assert part(produce(c, TOPIC, batch(2), partition=p))["baseOffset"] == ends[p]
        c.close()
    assert verify_index([log_dir]).ok
