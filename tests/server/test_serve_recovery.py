"""Start-up recovery: ``kafkalog serve`` on a directory without ``.kafka_cleanshutdown``
runs the log recovery a broker runs (LogLoader.recoverLog; here the recovery of
``kafkalog recover --truncate``) before accepting connections, keeping what it cuts in a
quarantine session; ``--no-recover`` refuses instead; a clean stop writes the marker.

The crash is a real ``kill -9`` of a serving process after a client's acknowledged
writes; the torn tail a crash can leave (a batch half-written when the machine lost
power) is then appended by hand, as Kafka's LogLoaderTest does with junk bytes."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from test_serve_clients import _confluent
from test_serve_fetch import ROOT, _start_cli

from kafkalog_cli.ops.verify import verify_index
from kafkalog_cli.storage.dir_files import read_clean_shutdown

TOPIC = "crash"
RECORDS = 20


def _produce(port: int, values, ck) -> list[int]:
    p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{port}", "acks": "all",
                     "enable.idempotence": True, "linger.ms": 0})
    offsets = []

    def report(err, msg):
        assert err is None, err
        offsets.append(msg.offset())

    for v in values:
        p.produce(TOPIC, v, partition=0, on_delivery=report)
    assert p.flush(20) == 0
    return offsets


def _consume_all(port: int, ck, n: int) -> list[tuple[int, bytes]]:
    c = ck.Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "check",
                     "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.assign([ck.TopicPartition(TOPIC, 0, 0)])
    got = []
    for _ in range(100):
        m = c.poll(0.5)
        if m is not None and not m.error():
            got.append((m.offset(), m.value()))
        if len(got) >= n:
            break
    c.close()
    return got


def _crashed_dir(tmp_path, ck):
    """A directory written by serve and a client, then ``kill -9``; plus a torn batch at
    the end of the active segment. Returns (log dir, the junk's length)."""
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    proc, port = _start_cli(log_dir, "--auto-create-topics")
    try:
        offsets = _produce(port, [b"v%d" % i for i in range(RECORDS)], ck)
        assert offsets == list(range(RECORDS))
    finally:
        proc.kill()  # SIGKILL: no checkpoints, no clean-shutdown marker
        proc.wait(10)
        proc.stderr.close()
    assert not (log_dir / ".kafka_cleanshutdown").exists()
    seg = sorted((log_dir / f"{TOPIC}-0").glob("*.log"))[-1]
    junk = bytes.fromhex("0000000000000014000001f4") + b"\x02torn batch"  # a header, cut
    with open(seg, "ab") as f:
        f.write(junk)
    return log_dir, seg, junk


def _start_logged(log_dir, *extra):
    """``_start_cli`` keeping the lines logged before "listening" (the recovery's)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir",
                             str(log_dir), "--listen", "127.0.0.1:0", *extra], cwd=ROOT,
                            env=env, stderr=subprocess.PIPE, text=True)
    lines = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if m:
            return proc, int(m.group(1)), "".join(lines)
    proc.kill()
    raise AssertionError("server did not start: " + "".join(lines))


def test_kill_9_then_restart_recovers_and_a_clean_stop_writes_the_marker(tmp_path):
    ck = _confluent()
    log_dir, seg, junk = _crashed_dir(tmp_path, ck)
    proc, port, started = _start_logged(log_dir)
    try:
        got = _consume_all(port, ck, RECORDS)
        assert got == [(i, b"v%d" % i) for i in range(RECORDS)]
        # the log continues after the valid prefix, not after the junk
        assert _produce(port, [b"after"], ck) == [RECORDS]
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    # the recovery was reported, naming the partition and its quarantine
    line = next(ln for ln in started.splitlines() if "recovered " in ln)
    assert f"{TOPIC}-0" in line and f"{len(junk)} invalid bytes truncated" in line, err
    qdir = line.rsplit("quarantine kept in ", 1)[1].strip()
    kept = [p for p in Path(qdir).rglob("*") if p.is_file()]
    assert any(p.read_bytes().endswith(junk) for p in kept), kept
    assert junk not in seg.read_bytes()
    assert read_clean_shutdown(log_dir) is not None
    assert verify_index([log_dir]).ok
    # and the next start, clean, recovers nothing and does not refuse
    proc, port, started = _start_logged(log_dir, "--no-recover")
    try:
        assert _consume_all(port, ck, RECORDS + 1)[-1] == (RECORDS, b"after")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and "recovery" not in started + err, started + err


def test_no_recover_refuses_an_unclean_directory_and_changes_nothing(tmp_path):
    ck = _confluent()
    log_dir, seg, junk = _crashed_dir(tmp_path, ck)
    before = {p: p.read_bytes() for p in log_dir.rglob("*") if p.is_file()}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir",
                        str(log_dir), "--listen", "127.0.0.1:0", "--no-recover"], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(errors) == 1 and "not shut down cleanly" in errors[0], r.stderr
    assert str(log_dir) in errors[0]
    after = {p: p.read_bytes() for p in log_dir.rglob("*") if p.is_file()}
    assert after == before


def test_start_up_recovery_runs_under_the_lock_serve_keeps(tmp_path):
    """The lock serve takes before recovering is the one it serves under: the recovery
    neither refuses it nor releases it (no other process can start on the directory in
    between); without it a held lock refuses the recovery."""
    import pytest

    from kafkalog_cli.errors import LogDirLockedError
    from kafkalog_cli.format.builder import build_batch
    from kafkalog_cli.ops.serve import recover_at_startup
    from kafkalog_cli.storage.lock import LogDirLock, is_locked
    from kafkalog_cli.storage.log_manager import LogManager

    d = tmp_path / "logs"
    m = LogManager.open(d)
    m.get_or_create_log("t", 0).append_as_leader(build_batch([(1, None, b"v", ())]))
    m.abandon()  # as kill -9 leaves it: no marker
    with open(d / "t-0" / "00000000000000000000.log", "ab") as f:
        f.write(b"\x00" * 7)
    lock = LogDirLock(d).acquire()
    try:
        result = recover_at_startup(d, lock=lock)
        assert result is not None and result.partitions[0].applied
        assert is_locked(d)  # still ours
        with pytest.raises(LogDirLockedError):
            LogDirLock(d).acquire()
    finally:
        lock.release()
    with open(d / "t-0" / "00000000000000000000.log", "ab") as f:
        f.write(b"\x00" * 7)
    other = LogDirLock(d).acquire()
    try:
        with pytest.raises(LogDirLockedError):
            recover_at_startup(d)
    finally:
        other.release()


def test_a_stop_while_partitions_are_made_closes_every_one_made(tmp_path):
    """A stop that ends a CreateTopics while the files thread makes its partitions (in
    ~10 ms batches) leaves every partition made closed as the broker's shutdown closes
    its logs: trimmed indexes (verify-index clean), the clean-shutdown marker. Before, a
    batch made but not yet served was never closed: its .index and .timeindex stayed
    preallocated (entry 0 over an empty .log), one stop in three under load."""
    from serve_testkit import RawClient

    from kafkalog_cli.protocol.wire import encode_request
    from kafkalog_cli.server.broker import ServerThread
    from kafkalog_cli.server.kafka_apis import ServerOptions

    log_dir = tmp_path / "logs"
    for _ in range(3):
        server = ServerThread(log_dir, ServerOptions(port=0)).start()
        try:
            c = RawClient(server.port)
            body = {"topics": [{"name": f"many-{time.monotonic_ns()}", "numPartitions": 300,
                                "replicationFactor": 1, "assignments": [], "configs": []}],
                    "timeoutMs": 60000}
            c.send_raw(encode_request(19, 7, 1, body, "raw-test"))
            deadline = time.monotonic() + 30
            while not any(log_dir.glob("many-*")) and time.monotonic() < deadline:
                time.sleep(0.005)  # the first batch exists: the stop lands mid-creation
        finally:
            server.stop()
        assert read_clean_shutdown(log_dir) is not None
        assert verify_index([log_dir]).ok
        for index in log_dir.glob("many-*/*.index"):
            assert index.stat().st_size == 0, index


def test_crash_restarts_keep_only_the_sessions_that_hold_data(tmp_path):
    """Each crash-restart left a quarantine session for every partition serve had open,
    even with nothing of the log removed: the preallocated index tails recovery trims,
    a producer snapshot written, the recovery point moved (~100 sessions after a few
    dozen restarts). Only a session that kept data (here a torn batch cut from a .log)
    stays, holding that batch."""
    import json

    from kafkalog_cli.format.builder import build_batch
    from kafkalog_cli.ops.serve import recover_at_startup
    from kafkalog_cli.storage.log_manager import LogManager

    d = tmp_path / "logs"
    junk = bytes.fromhex("0000000000000014000001f4") + b"\x02torn batch"

    def crash(first: bool) -> None:
        """serve's engine opens every partition (preallocating the active segments'
        indexes), appends, and is killed: no marker, no trimming."""
        m = LogManager.open(d, recovered=not first)
        m.index_write_through = True
        for p in range(5):
            m.get_or_create_log("__consumer_offsets", p)
        for p in (0, 1):
            m.get_or_create_log("t", p).append_as_leader(build_batch([(1, None, b"v", ())]))
        m.abandon()

    crash(True)
    with open(d / "t-1" / "00000000000000000000.log", "ab") as f:
        f.write(junk)
    for _ in range(2):
        result = recover_at_startup(d)
        assert result is not None
        crash(False)
    sessions = sorted(d.rglob(".kafkalog-quarantine/*"))
    assert [s.parent.parent.name for s in sessions] == ["t-1"], sessions
    manifest = json.loads((sessions[0] / "manifest.json").read_text())
    assert [e["action"] for e in manifest["entries"] if e["action"] == "cut"] == ["cut"]
    assert not list(d.glob("__consumer_offsets-*/.kafkalog-quarantine"))
    assert [p.read_bytes() for p in (sessions[0] / "files").glob("*.cut-*")] == [junk]


def test_a_retry_after_kill_9_and_recovery_is_a_duplicate(tmp_path):
    """After a kill -9, serve's start-up recovery writes a producer snapshot at the log end
    offset; the log then opens replaying from the snapshot below it, as the broker's
    LogLoader rebuilds the state after an unclean shutdown, so the producer's last five
    batches are known: a retry of the first of three batches (its answer lost with the
    crash) is answered as the duplicate it is, at its offsets, nothing appended. Loading
    the recovery's snapshot knew only the last batch: OutOfOrderSequence, and the Java
    producer then bumped its epoch and wrote the batches again (found by the
    VerifiableProducer loop, test_serve_verifiable.py)."""
    from kafkalog_cli.format.builder import build_batch
    from kafkalog_cli.ops.serve import recover_at_startup
    from kafkalog_cli.storage.log_manager import LogManager

    def batch(seq):
        return build_batch([(1, None, b"v%d" % (seq + i), ()) for i in range(2)],
                           producer_id=7, producer_epoch=0, base_sequence=seq)

    d = tmp_path / "logs"
    m = LogManager.open(d)
    lg = m.get_or_create_log("t", 0)
    for seq in (0, 2, 4):
        lg.append_as_leader(batch(seq))
    m.abandon()  # as kill -9 leaves it: no marker, no snapshot
    assert recover_at_startup(d) is not None
    assert (d / "t-0" / "00000000000000000006.snapshot").exists()
    m = LogManager.open(d, recovered=True)
    try:
        lg = m.get_or_create_log("t", 0)
        info = lg.append_as_leader(batch(0))
        assert (info.first_offset, info.last_offset, lg.log_end_offset) == (0, 1, 6)
    finally:
        m.abandon()
