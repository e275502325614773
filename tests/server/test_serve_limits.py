"""The socket server's limits, as Kafka's ``SocketServer`` / ``Selector`` apply them:
``socket.request.max.bytes`` (a larger frame closes its connection),
``queued.max.request.bytes`` (request bytes read and not yet handled, over all
connections: a frame that does not fit waits unread), ``connections.max.idle.ms``
(an idle connection is closed). In-process servers; the memory figures of a separate
process are in test_serve_abuse.py."""

from __future__ import annotations

import asyncio
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest
from serve_testkit import RawClient, create_topic
from test_serve_fetch import ROOT
from test_serve_produce_errors import batch

from kafkalog_cli.errors import InvalidConfigError
from kafkalog_cli.protocol.wire import encode_request
from kafkalog_cli.server import configs as cfgs
from kafkalog_cli.server.broker import RequestMemoryPool, ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions

MiB = 1 << 20


def _produce_frame(topic: str, value_size: int, correlation: int = 7) -> bytes:
    body = {"transactionalId": None, "acks": 1, "timeoutMs": 1000,
            "topicData": [{"name": topic, "partitionData": [
                {"index": 0, "records": batch(1, size=value_size)}]}]}
    return encode_request(0, 9, correlation, body)


def _api_versions_ok(port: int, timeout: float = 30.0) -> bool:
    """A new connection's ApiVersions is answered (within ``timeout`` s: a hang bound, not a
    speed; whether it was served beside a held reservation is asserted by the caller from
    the pool, which load cannot stretch)."""
    c = RawClient(port, timeout=timeout)
    try:
        return c.request(18, 0, {})["errorCode"] == 0
    finally:
        c.close()


# -- the pool ------------------------------------------------------------------------------

def test_pool_is_strict_and_lets_small_requests_pass():
    """A reservation waits until it fits (the bound holds); a waiting large one does not
    hold back a smaller one that fits; a release wakes the waiters that now fit."""

    async def go():
        pool = RequestMemoryPool(100)
        await pool.acquire(60)
        big = asyncio.create_task(pool.acquire(50))
        await asyncio.sleep(0)
        assert not big.done() and pool.available == 40
        await asyncio.wait_for(pool.acquire(30), 1)  # fits beside the waiting one
        assert pool.available == 10
        pool.release(30)
        await asyncio.sleep(0)
        assert not big.done()  # 40 free, 50 wanted
        pool.release(60)
        await asyncio.wait_for(big, 1)
        assert pool.available == 50
        # a cancelled waiter leaves nothing reserved
        waiter = asyncio.create_task(pool.acquire(80))
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        pool.release(50)
        assert pool.available == 100 and not pool._waiters

    asyncio.run(go())


def test_pool_without_bound():
    async def go():
        pool = RequestMemoryPool(-1)
        await asyncio.wait_for(pool.acquire(10 * MiB), 1)
        pool.release(10 * MiB)

    asyncio.run(go())


# -- configs -------------------------------------------------------------------------------

def test_broker_config_defaults_and_rules():
    c = cfgs.broker_configs()
    assert c == {"socket.request.max.bytes": 100 * MiB, "queued.max.request.bytes": 256 * MiB,
                 "connections.max.idle.ms": 600_000}
    # KafkaConfig: queued.max.request.bytes must be <= 0 or >= socket.request.max.bytes
    with pytest.raises(InvalidConfigError, match="must be larger or equal to "
                                                 "socket.request.max.bytes"):
        cfgs.broker_configs({"queued.max.request.bytes": str(MiB)})
    assert cfgs.broker_configs({"queued.max.request.bytes": "-1"})[
        "queued.max.request.bytes"] == -1
    with pytest.raises(InvalidConfigError, match="at least 1"):
        cfgs.broker_configs({"socket.request.max.bytes": "0"})
    with pytest.raises(InvalidConfigError, match="32-bit"):
        cfgs.broker_configs({"socket.request.max.bytes": str(1 << 31)})
    with pytest.raises(InvalidConfigError, match="number"):
        cfgs.broker_configs({"connections.max.idle.ms": "soon"})


def test_cli_refuses_a_bad_limit(tmp_path):
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir",
                        str(tmp_path), "--listen", "127.0.0.1:0", "--config",
                        "queued.max.request.bytes=1000"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "queued.max.request.bytes must be larger or equal to socket.request.max.bytes" \
        in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert not (tmp_path / "meta.properties").exists()  # nothing opened or written


# -- socket.request.max.bytes ----------------------------------------------------------------

def test_socket_request_max_bytes_closes_only_that_connection(log_dir):
    with ServerThread(log_dir, ServerOptions(port=0),
                      broker_configs={"socket.request.max.bytes": "2000",
                                      "queued.max.request.bytes": "2000"}) as s:
        ok = RawClient(s.port)
        create_topic(ok, "t")
        small = _produce_frame("t", 100)
        large = _produce_frame("t", 3000)
        assert len(small) - 4 <= 2000 < len(large) - 4
        ok.send_raw(small)
        assert ok.recv_frame() is not None
        bad = RawClient(s.port)
        bad.send_raw(large)
        assert bad.recv_frame() is None  # NetworkReceive: InvalidReceiveException
        # the other connection, and new ones, are served; nothing was appended by `bad`
        ok.send_raw(small)
        assert ok.recv_frame() is not None
        assert _api_versions_ok(s.port)
        assert s.server.catalog.partition("t", 0).log_end_offset == 2
        ok.close()


# -- queued.max.request.bytes and connections.max.idle.ms -----------------------------------

def test_a_frame_that_does_not_fit_waits_for_an_idle_connection_to_close(log_dir):
    """A stalled partial frame holds its reservation (its bytes and the elements it could
    decode to) until connections.max.idle.ms closes its connection; a request that does
    not fit meanwhile waits unread, then is served; a small request that fits is served
    at once."""
    limit = 64 * 1024
    pool_size = 48 * MiB
    configs = {"socket.request.max.bytes": str(limit),
               "queued.max.request.bytes": str(pool_size), "connections.max.idle.ms": "1000"}
    stalled_size, waiting_frame = 60_000, _produce_frame("t", 40_000)
    pool = RequestMemoryPool(pool_size)
    left = pool_size - pool.reservation(stalled_size)
    assert pool.reservation(100) < left < pool.reservation(len(waiting_frame) - 4)
    with ServerThread(log_dir, ServerOptions(port=0), broker_configs=configs) as s:
        setup = RawClient(s.port)
        create_topic(setup, "t")
        setup.close()
        stalled = RawClient(s.port, timeout=10)
        stalled.send_raw(struct.pack(">i", stalled_size) + b"\x00" * 100)  # then nothing
        time.sleep(0.5)
        # ApiVersions (a few bytes) fits beside the reservation
        assert _api_versions_ok(s.port)
        waiting = RawClient(s.port, timeout=10)
        t = time.monotonic()
        waiting.send_raw(waiting_frame)
        frame = waiting.recv_frame()
        waited = time.monotonic() - t
        assert frame is not None
        assert stalled.recv_frame() is None  # closed by the server for idleness
        # the waiting request is served once connections.max.idle.ms (1 s) closes the
        # stalled one: the bounds are that timer (it cannot fire early; load only delays
        # it, so the upper bound is generous, the socket's own timeout being 10 s)
        assert 0.2 < waited < 10, waited
        assert s.server.catalog.partition("t", 0).log_end_offset == 1
        deadline = time.monotonic() + 5  # the response's bytes: given back once written
        while s.server.memory_pool.available != pool_size and time.monotonic() < deadline:
            time.sleep(0.01)
        assert s.server.memory_pool.available == pool_size  # everything given back
        waiting.close()


def test_idle_connection_closed_between_requests(log_dir):
    with ServerThread(log_dir, ServerOptions(port=0),
                      broker_configs={"connections.max.idle.ms": "300"}) as s:
        c = RawClient(s.port, timeout=5)
        assert c.request(18, 0, {})["errorCode"] == 0
        time.sleep(1.0)
        assert c.closed_by_server()
        # an active connection stays open
        d = RawClient(s.port, timeout=5)
        for _ in range(8):
            assert d.request(18, 0, {})["errorCode"] == 0
            time.sleep(0.1)
        d.close()


def test_many_partial_frames_stay_within_the_pool(log_dir):
    """8 connections each announcing a 24 MiB frame and sending most of it: with a 120 MiB
    pool at most two are read at a time (strict: each reserves its bytes and the elements
    it could hold, 56 MiB), the others wait unread; the server keeps answering; when the
    clients give up, every byte of the pool comes back."""
    size = 24 * MiB
    configs = {"socket.request.max.bytes": str(size),
               "queued.max.request.bytes": str(120 * MiB)}
    assert 2 * RequestMemoryPool(120 * MiB).reservation(size) <= 120 * MiB < \
        3 * RequestMemoryPool(120 * MiB).reservation(size)
    with ServerThread(log_dir, ServerOptions(port=0), broker_configs=configs) as s:
        socks = []
        sent = [0] * 8

        def push(i):
            sk = socket.create_connection(("127.0.0.1", s.port), timeout=3)
            socks.append(sk)
            sk.sendall(struct.pack(">i", size))
            chunk = b"\x00" * 65536
            try:
                while sent[i] < size - MiB:
                    sk.sendall(chunk)
                    sent[i] += len(chunk)
            except (TimeoutError, OSError):
                pass  # the server stopped reading this connection

        threads = [threading.Thread(target=push, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        pool = s.server.memory_pool
        assert pool.size - pool.available == 2 * pool.reservation(size)  # two, no more
        assert sum(1 for n in sent if n >= size - MiB) == 2  # only those two were read
        # a small request is answered beside the two held reservations (still held after;
        # its own response's bytes may not be given back yet)
        assert _api_versions_ok(s.port)
        assert pool.size - pool.available >= 2 * pool.reservation(size)
        for sk in socks:
            sk.close()
        deadline = time.monotonic() + 10
        while pool.available != pool.size and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pool.available == pool.size
        assert _api_versions_ok(s.port)


# -- validation on worker threads ------------------------------------------------------------

def test_concurrent_threaded_validations(log_dir):
    """Compressed batches are validated on worker threads, several at once for different
    partitions (the codecs' contexts must not be shared between threads: python-zstandard
    crashes), one at a time per partition. Eight connections producing at once - two per
    partition - get disjoint offset ranges that tile each partition's log, and the log is
    what a broker would have written (verify-index, kafka-python decodes)."""
    from serve_testkit import check_log_dir

    from kafkalog_cli.constants import CODEC_ZSTD

    per, n, parts = 20, 200, 4
    batches = [batch(n, codec=CODEC_ZSTD, ts=int(time.time() * 1000), size=50)
               for _ in range(per)]  # built here: the clients share nothing
    with ServerThread(log_dir, ServerOptions(port=0)) as s:
        setup = RawClient(s.port)
        create_topic(setup, "t", parts)
        setup.close()
        ranges = {p: [] for p in range(parts)}
        errors = []

        def produce_many(p):
            c = RawClient(s.port, timeout=60)
            for recs in batches:
                body = {"transactionalId": None, "acks": 1, "timeoutMs": 1000,
                        "topicData": [{"name": "t", "partitionData": [
                            {"index": p, "records": recs}]}]}
                r = c.request(0, 9, body)["responses"][0]["partitionResponses"][0]
                if r["errorCode"]:
                    errors.append(r)
                ranges[p].append((r["baseOffset"], r["baseOffset"] + n - 1))
            c.close()

        threads = [threading.Thread(target=produce_many, args=(k % parts,))
                   for k in range(2 * parts)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not errors
        for p in range(parts):
            assert sorted(ranges[p]) == [(i * n, i * n + n - 1) for i in range(2 * per)]
    check_log_dir(log_dir, {"t": 2 * per * n})
