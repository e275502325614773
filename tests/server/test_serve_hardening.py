"""Issue 24's serve defects: one request, or one client that stops reading, must not stall
``kafkalog serve`` or drive it to gigabytes, and SIGTERM must always end it.

* decoded size: a request whose counts claim millions of elements is refused when the
  count is read (MAX_REQUEST_ELEMENTS), and large legitimate requests are parsed and
  encoded off the event loop;
* Fetch: ``fetch.max.bytes`` bounds the response (the first batch still whole, KIP-74),
  records go from the segment files (``os.sendfile``), a parked fetch keeps positions
  (DelayedFetch) and a partition named twice is read once (FetchRequest.fetchData);
* a client that does not read: at most a chunk of its response in the transport, the
  idle timer aborts it, a stop aborts it;
* start-up reads each offset checkpoint once.

The memory figures are measured on a separate server process (peak RSS from /proc).
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time

import pytest
from serve_process import MiB, Probe, connect, recv_frame, write_partition_of
from serve_testkit import RawClient, create_topic
from test_serve_fetch import fetch
from test_serve_produce_errors import batch, produce

from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.protocol.wire import encode_request, parse_request
from kafkalog_cli.schema.flexible import ZERO_UUID
from kafkalog_cli.schema.primitives import encode_unsigned_varint
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions

INT32_MAX = (1 << 31) - 1


def describe_groups_frame(names: int) -> bytes:
    """DescribeGroups v5 (flexible) of ``names`` empty group names, without its size
    prefix: one byte a name."""
    header = struct.pack(">hhih", 15, 5, 1, 5) + b"abuse" + b"\x00"
    return header + encode_unsigned_varint(names + 1) + b"\x01" * names + b"\x00\x00"


def metadata_frame(topics: int) -> bytes:
    """Metadata v12 naming ``topics`` topics (by name), without its size prefix."""
    body = bytearray(encode_unsigned_varint(topics + 1))
    for i in range(topics):
        name = b"t%07d" % i
        body += b"\x00" * 16 + encode_unsigned_varint(len(name) + 1) + name + b"\x00"
    body += b"\x00\x00\x00"  # allowAutoTopicCreation, includeTopicAuthorizedOperations, tags
    return struct.pack(">hhih", 3, 12, 1, 5) + b"abuse" + b"\x00" + bytes(body)


def framed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def fetch_frame(topic: str, *, max_bytes=INT32_MAX, partition_max=INT32_MAX, min_bytes=1,
                max_wait=0, cid=1) -> bytes:
    return encode_request(1, 12, cid, {
        "replicaId": -1, "maxWaitMs": max_wait, "minBytes": min_bytes, "maxBytes": max_bytes,
        "isolationLevel": 0, "sessionId": 0, "sessionEpoch": -1,
        "topics": [{"topic": topic, "partitions": [
            {"partition": 0, "fetchOffset": 0, "partitionMaxBytes": partition_max}]}],
        "forgottenTopicsData": [], "rackId": ""})


def _offsets(records) -> list[tuple[int, int]]:
    return [(b.base_offset, b.last_offset) for b in FileRecords(bytes(records)).batches()]


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """The server closed ``sock`` (EOF or reset) within ``seconds``, having answered
    nothing."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


# -- decoded size ------------------------------------------------------------------------

def test_a_count_past_the_bound_is_refused_before_its_elements_are_read():
    """A million empty group names (1 MB): refused when the count is read, in far less
    time than reading them took (seconds); a request within the bound is parsed and its
    elements counted; a flood of tagged fields in a flexible header counts too."""
    from kafkalog_cli.errors import RequestTooManyElements

    frame = describe_groups_frame(1_000_000)
    t = time.process_time()
    with pytest.raises(RequestTooManyElements, match="more than 1000 elements"):
        parse_request(frame, 1000)
    assert time.process_time() - t < 0.05
    ok = parse_request(describe_groups_frame(999), 1000)
    assert ok.body["groups"] == [""] * 999 and ok.elements == 999
    header = struct.pack(">hhih", 15, 5, 1, 1) + b"x"
    flood = header + encode_unsigned_varint(5000) + b"\x07\x00" * 4999 + b"\x01\x00\x00"
    with pytest.raises(RequestTooManyElements):
        parse_request(flood, 1000)


def test_huge_element_counts_close_the_connection_at_once(serve_process):
    """DescribeGroups v5 of a million empty names (on main: answered after 20-40 s, RSS
    +400 MB, every other client stalled) and Metadata v12 of 40,000 topics (past the
    bound): each connection is closed at once; another client is answered throughout
    (never stalled for the 20-40 s of main); memory stays put; SIGTERM ends the server
    with its marker."""
    server = serve_process()
    _, before = server.memory()
    probe = Probe(server.port)
    for payload in (describe_groups_frame(1_000_000), metadata_frame(40_000)):
        s = connect(server.port)
        s.sendall(framed(payload))
        assert _closed_within(s, 5), "".join(server.log[-5:])
        s.close()
    # a hang bound, not a speed: reading the elements stalled every client for 20-40 s
    assert probe.stop() < 10 and not probe.failures, (probe.longest, probe.failures)
    peak, _ = server.memory()
    assert peak - before < 64 * MiB, f"grew by {(peak - before) / MiB:.0f} MiB"
    assert any("more than 32768 elements" in line for line in server.log), server.log[-5:]
    took = server.terminate(10)
    assert took is not None and took < 5, took
    assert server.clean_shutdown_marker()


def test_large_requests_within_the_bound_do_not_stall_others(server):
    """DescribeGroups of 30,000 names (within the bound): answered in full, parsed and
    encoded on a codec thread while another client's ApiVersions is answered, waiting a
    small part of the request's time (on main the loop was blocked for all of it: seconds)."""
    probe = Probe(server.port)
    answered_before = probe.answered
    c = connect(server.port, timeout=60)
    t = time.monotonic()
    c.sendall(framed(describe_groups_frame(30_000)))
    frame = recv_frame(c)
    took = time.monotonic() - t
    assert frame is not None and len(frame) > 30_000 * 16
    c.close()
    # the other client waited a small part of the request's time (both stretch alike
    # under load; on the loop it waited all of it) and was answered meanwhile
    longest = probe.stop()
    assert longest < max(took / 2, 0.5) and not probe.failures, (longest, took,
                                                                 probe.failures)
    assert probe.answered > answered_before


@pytest.mark.slow
def test_making_many_partitions_does_not_stall_others(server):
    """CreateTopics of 200 partitions (directories, files, fsyncs: seconds) and
    DeleteTopics of them: made and removed on the files thread, so another client's
    ApiVersions waits a small part of that time, and less than a second (on main the
    event loop did the fsyncs: the other client waited for all of them)."""
    c = RawClient(server.port, timeout=120)
    probe = Probe(server.port)
    t = time.monotonic()
    create_topic(c, "wide", 200)
    assert len(server.server.catalog.topics["wide"].partitions) == 200
    res = c.request(20, 6, {"topics": [{"name": "wide", "topicId": ZERO_UUID}],
                            "timeoutMs": 1000})
    took = time.monotonic() - t
    assert res["responses"][0]["errorCode"] == 0
    longest = probe.stop()
    # a small part of the operation's time: relative, as load stretches both alike
    assert longest < took / 4 and not probe.failures, (longest, took, probe.failures)
    assert not [d for d in server.log_dir.iterdir() if d.name.startswith("wide")]
    c.close()


# -- Fetch -----------------------------------------------------------------------------------

def test_fetch_max_bytes_bounds_the_response_and_the_first_batch_stays_whole(log_dir):
    """KafkaApis.handleFetchRequest: the response holds at most min(maxBytes,
    fetch.max.bytes) of records, in request order, partitionMaxBytes per partition; the
    first batch of the first partition with data is whole even when larger (KIP-74), and
    then nothing more is read."""
    with ServerThread(log_dir, ServerOptions(port=0),
                      server_configs={"fetch.max.bytes": "65536"}) as s:
        c = RawClient(s.port)
        create_topic(c, "t", 3)
        for p in range(3):
            for _ in range(4):
                produce(c, "t", batch(1, size=20_000), partition=p)
        body = {"replicaId": -1, "maxWaitMs": 0, "minBytes": 1, "maxBytes": INT32_MAX,
                "isolationLevel": 0, "sessionId": 0, "sessionEpoch": -1,
                "topics": [{"topic": "t", "partitions": [
                    {"partition": p, "fetchOffset": 0, "partitionMaxBytes": INT32_MAX}
                    for p in range(3)]}], "forgottenTopicsData": [], "rackId": ""}
        parts = c.request(1, 12, body)["responses"][0]["partitions"]
        sizes = [len(p["records"]) for p in parts]
        assert sum(sizes) == 65536, sizes  # whole batches, the last one cut
        assert _offsets(parts[0]["records"]) == [(0, 0), (1, 1), (2, 2)]
        assert sizes[2] == 0
        # one batch larger than fetch.max.bytes: whole, and nothing after it
        create_topic(c, "big", 2)
        produce(c, "big", batch(1, size=100_000))
        produce(c, "big", batch(1, size=1000), partition=1)
        body["topics"] = [{"topic": "big", "partitions": [
            {"partition": p, "fetchOffset": 0, "partitionMaxBytes": 10} for p in range(2)]}]
        parts = c.request(1, 12, body)["responses"][0]["partitions"]
        assert _offsets(parts[0]["records"]) == [(0, 0)]
        assert len(parts[0]["records"]) > 100_000 and parts[1]["records"] == b""
        c.close()


def test_fetched_records_are_sent_from_the_segment_file(server, raw, monkeypatch):
    """FileRecords.writeTo: the records of a Fetch response go from the segment file to
    the socket with os.sendfile, not through a copy in memory."""
    sent = []
    real = os.sendfile

    def counting(out_fd, in_fd, offset, count, *args, **kwargs):
        n = real(out_fd, in_fd, offset, count, *args, **kwargs)
        sent.append(n)
        return n

    monkeypatch.setattr(os, "sendfile", counting)
    c = raw()
    create_topic(c, "t")
    for _ in range(8):
        produce(c, "t", batch(1, size=60_000))
    res = fetch(c, "t", 0, part_max=INT32_MAX, max_bytes=INT32_MAX)
    records = res["responses"][0]["partitions"][0]["records"]
    assert _offsets(records) == [(i, i) for i in range(8)]
    assert sum(sent) >= len(records) > 480_000


def test_a_partition_named_twice_is_read_once(raw):
    """FetchRequest.fetchData is a map keyed by topic-partition: a partition named again
    is read once, at the place it was first named, with the values named last."""
    c = raw()
    create_topic(c, "t", 2)
    produce(c, "t", batch(3))
    body = {"replicaId": -1, "maxWaitMs": 0, "minBytes": 1, "maxBytes": 1 << 20,
            "isolationLevel": 0, "sessionId": 0, "sessionEpoch": -1,
            "topics": [{"topic": "t", "partitions": [
                {"partition": 0, "fetchOffset": 0, "partitionMaxBytes": 1 << 20},
                {"partition": 1, "fetchOffset": 0, "partitionMaxBytes": 1 << 20}]},
                {"topic": "t", "partitions": [
                    {"partition": 0, "fetchOffset": 3, "partitionMaxBytes": 1 << 20}]
                    * 1000}],
            "forgottenTopicsData": [], "rackId": ""}
    res = c.request(1, 12, body)
    assert [[p["partitionIndex"] for p in t["partitions"]] for t in res["responses"]] == \
        [[0, 1]]
    assert res["responses"][0]["partitions"][0]["records"] == b""  # fetchOffset 3: none


def test_a_parked_fetch_keeps_positions_and_reads_when_it_completes(server, raw,
                                                                    monkeypatch):
    """DelayedFetch: a fetch waiting for minBytes reads the log once when parked and once
    when it completes, whatever the appends meanwhile (on main it re-read everything on
    each append); it completes once the bytes after its position reach minBytes, before
    maxWaitMs."""
    from kafkalog_cli.storage.log import Log

    c = raw()
    create_topic(c, "t")
    produce(c, "t", batch(1, size=1000))
    reads = []
    real = Log.read

    def counting(self, *args, **kwargs):
        reads.append(self.directory.name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Log, "read", counting)
    producer = raw()
    waiter = raw()
    one = len(batch(1, size=1000))
    result = {}

    def wait():
        t = time.monotonic()
        result["res"] = fetch(waiter, "t", 0, wait=20_000, min_bytes=one * 5 + 10)
        result["seconds"] = time.monotonic() - t

    th = threading.Thread(target=wait)
    th.start()
    time.sleep(0.3)
    for _ in range(3):  # not enough: the fetch stays parked
        produce(producer, "t", batch(1, size=1000))
        time.sleep(0.1)
    assert th.is_alive()
    for _ in range(2):
        produce(producer, "t", batch(1, size=1000))
    th.join(10)
    assert not th.is_alive() and result["seconds"] < 10
    records = result["res"]["responses"][0]["partitions"][0]["records"]
    assert _offsets(records) == [(i, i) for i in range(6)]
    assert reads.count("t-0") == 2, reads


# -- clients that do not read ----------------------------------------------------------------

def _unread_fetch(port: int, topic: str) -> socket.socket:
    s = connect(port, rcvbuf=4096)
    s.sendall(fetch_frame(topic))
    return s


def _wait_for(cond, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def test_a_client_that_does_not_read_holds_at_most_a_chunk(log_dir):
    """The transport's buffer of a connection whose client does not read its 4 MiB fetch
    response holds at most a chunk (the rest stays in the segment file; on main the whole
    response was copied into it), and the server reads nothing more from it; another
    client is served."""
    write_partition_of(log_dir, "t", 4, MiB - 200)
    with ServerThread(log_dir, ServerOptions(port=0)) as s:
        unread = _unread_fetch(s.port, "t")
        unread.sendall(encode_request(18, 0, 2, {}))  # never read either
        assert _wait_for(lambda: s.server._connections, 5)
        time.sleep(1.0)
        (conn,) = s.call(lambda: list(s.server._connections.values()))
        buffered = s.call(conn.writer.transport.get_write_buffer_size)
        assert buffered <= 512 * 1024, buffered  # a chunk, not the 4 MiB response
        probe = RawClient(s.port)
        assert probe.request(18, 0, {})["errorCode"] == 0
        probe.close()
        unread.close()


def _server_side_established(server_port: int, client: socket.socket) -> bool:
    """The server's end of ``client``'s connection is ESTABLISHED (/proc/net/tcp): not
    closed by the server."""
    client_port = client.getsockname()[1]
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        f = line.split()
        local, remote = f[1].split(":"), f[2].split(":")
        if int(local[1], 16) == server_port and int(remote[1], 16) == client_port:
            return f[3] == "01"
    return False


def test_the_idle_timer_aborts_a_connection_whose_response_is_not_read(log_dir):
    """connections.max.idle.ms: a connection whose client stopped reading its response is
    aborted: the server's socket is closed at once (on main the connection's task was
    cancelled but its close waited for a flush that never came: the socket stayed
    ESTABLISHED, holding its buffers); everything is given back."""
    write_partition_of(log_dir, "t", 4, MiB - 200)
    with ServerThread(log_dir, ServerOptions(port=0),
                      broker_configs={"connections.max.idle.ms": "500"}) as s:
        unread = _unread_fetch(s.port, "t")
        assert _wait_for(lambda: s.server._connections, 5)
        assert _server_side_established(s.port, unread)
        assert _wait_for(lambda: not _server_side_established(s.port, unread), 10)
        # the socket closes first, then the connection's cancelled task ends: an event to
        # await, not a state to read at once (it raced: "Task cancelling" still listed)
        assert _wait_for(lambda: not s.server._connections, 10)
        pool = s.server.memory_pool
        assert _wait_for(lambda: pool.available == pool.size, 5)
        unread.close()


def test_stop_aborts_connections_that_do_not_read(log_dir):
    """ServerThread.stop (SIGTERM's path) returns at once with a non-reading client
    connected (on main it waited for ever for the flush), and closes the directory
    cleanly."""
    write_partition_of(log_dir, "t", 4, MiB - 200)
    s = ServerThread(log_dir, ServerOptions(port=0)).start()
    unread = _unread_fetch(s.port, "t")
    assert _wait_for(lambda: s.server._connections, 5)
    time.sleep(0.5)
    t = time.monotonic()
    s.stop()
    # the bound is the behaviour (the stop returns instead of waiting for ever on the
    # flush): generous, as load only delays the stop's own work
    assert time.monotonic() - t < 15
    assert (log_dir / ".kafka_cleanshutdown").exists()
    unread.close()


@pytest.mark.slow
def test_clients_that_do_not_read_cost_no_memory_and_cannot_hold_sigterm(serve_process,
                                                                        log_dir):
    """Against a separate process, a 24 MiB partition: 8 clients fetch it all and never
    read, 6 fetches park on minBytes while a producer appends, one client pipelines
    20,000 ApiVersions without reading. On main: each unread or parked fetch held a copy
    (RSS +330 MB here), other clients stalled for seconds, and SIGTERM never finished.
    Now: RSS grows by less than 64 MiB, another client is answered within a second, and
    SIGTERM ends the server within 5 s with the clean-shutdown marker."""
    write_partition_of(log_dir, "t", 24, MiB - 200)
    server = serve_process()
    _, before = server.memory()
    probe = Probe(server.port)
    socks = [_unread_fetch(server.port, "t") for _ in range(8)]
    for i in range(6):
        s = connect(server.port, rcvbuf=4096)
        s.sendall(fetch_frame("t", min_bytes=INT32_MAX, max_wait=30_000, cid=10 + i))
        socks.append(s)
    pipelined = connect(server.port, rcvbuf=4096)
    frames = b"".join(encode_request(18, 3, i, {"clientSoftwareName": "x",
                                                "clientSoftwareVersion": "1"})
                      for i in range(20_000))
    threading.Thread(target=lambda: _send_quietly(pipelined, frames), daemon=True).start()
    socks.append(pipelined)
    producer = RawClient(server.port)
    for _ in range(20):
        produce(producer, "t", batch(1, size=100))
        time.sleep(0.1)
    peak, _ = server.memory()
    assert probe.stop() < 1.0 and not probe.failures, (probe.longest, probe.failures)
    assert peak - before < 64 * MiB, f"grew by {(peak - before) / MiB:.0f} MiB"
    took = server.terminate(10)
    assert took is not None and took < 5, (took, "".join(server.log[-5:]))
    assert server.clean_shutdown_marker()
    for s in socks:
        s.close()
    producer.close()


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    try:
        sock.sendall(data)
    except OSError:
        pass


# -- start-up ---------------------------------------------------------------------------------

def test_start_up_reads_each_offset_checkpoint_once(log_dir, monkeypatch):
    """LogManager.loadLogs reads recovery-point-offset-checkpoint and
    log-start-offset-checkpoint once per directory; opening every partition re-read both
    for each (start-up quadratic in partitions: 10,009 took ~8 minutes)."""
    from kafkalog_cli.server.catalog import LogDirCatalog
    from kafkalog_cli.storage import log as log_module
    from kafkalog_cli.storage import log_manager

    cat = LogDirCatalog(log_dir, fsync=False).open()
    cat.create_topic("t", 40)
    cat.close()
    calls = []
    real = log_module.read_offset_checkpoint

    def counting(path, *args, **kwargs):
        calls.append(path.name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(log_module, "read_offset_checkpoint", counting)
    monkeypatch.setattr(log_manager, "read_offset_checkpoint", counting)
    cat = LogDirCatalog(log_dir, fsync=False).open()
    assert len(cat.topics["t"].partitions) == 40
    assert sorted(calls) == ["log-start-offset-checkpoint", "recovery-point-offset-checkpoint"]
    cat.close()
