"""The serve abuse harness (issue 24): one ``kafkalog serve`` process with small pools,
fed requests for every API and version it advertises, drawn from the protocol
declarations (valid, then with huge array counts, nested arrays, long strings, tagged
field floods, byte-level mutations), sent by clients that read, do not read, read
slowly, or stop half-way. Throughout, after every example:

* another client's ApiVersions is answered within :data:`STALL_S` (a probe asks every
  50 ms on its own connection);
* the server's RSS stays under its pools (``queued.max.request.bytes``) plus
  :data:`MARGIN` over its RSS once started;
* the server is alive.

At the end (the last test), SIGTERM with every abusive connection still open ends the
server within :data:`SIGTERM_S` and the clean-shutdown marker is written.

Huge arrays are made by splicing (:func:`spliced`): the request encoded with one and
with two elements in the chosen array gives the element's bytes and the count's place;
the frame is then rebuilt with N copies (N up to millions costs nothing to make). What a
request may answer is not checked here (test_fuzz_serve.py does): only what it costs.
"""

from __future__ import annotations

import random
import socket
import struct
import threading
import time

import pytest
from fuzz_testkit import LONG, LONG_EXAMPLES, fixture_seeds, fuzz_settings, mutate, mutations
from hypothesis import given
from hypothesis import strategies as st
from serve_process import MiB, Probe, ServeProcess, connect, recv_frame, write_partition_of
from test_fuzz_serve import request as drawn_request

from kafkalog_cli.protocol.apis import APIS
from kafkalog_cli.protocol.wire import encode_request
from kafkalog_cli.schema.primitives import encode_unsigned_varint

pytestmark = pytest.mark.fuzz

#: the server's pools and bounds (small, so the bounds are reached)
POOL = 64 * MiB
MAX_FRAME = 16 * MiB
IDLE_MS = 3000
CONFIGS = (f"queued.max.request.bytes={POOL}", f"socket.request.max.bytes={MAX_FRAME}",
           f"connections.max.idle.ms={IDLE_MS}", "group.initial.rebalance.delay.ms=0",
           "fetch.max.bytes=8388608",
           # the seeds' records are years old: no time retention (serve's pass runs 30 s
           # after the start, as a broker's)
           "log.retention.ms=-1")
#: what the server may hold beyond its pools (interpreter and modules are in its start
#: RSS): codec and worker threads, pymalloc arenas and malloc's free lists kept after a
#: peak, the segment maps of the partitions read, one chunk per connection
MARGIN = 160 * MiB
#: the longest another client may wait for ApiVersions (seconds)
STALL_S = 1.0
SIGTERM_S = 5.0
#: served: fixture partitions and one of 16 MiB (1 MiB batches) to fetch
SERVED = ("plain-0", "txn-0", "gzip-0", "legacy-v1-0", "headers-0")
BIG = "big"
#: the largest frame a test makes (4 times what the server accepts: an element of 32 KiB
#: times millions would otherwise be gigabytes in the test's own process)
FRAME_LIMIT = 4 * MAX_FRAME
#: abusive connections kept open at once (the oldest is closed beyond)
KEEP_OPEN = 24
#: CreateTopics / CreatePartitions draw at most this many partitions: each is a
#: directory and two fsyncs (cheap for the event loop, time-sliced, but seconds of disk
#: for the whole run and of close at SIGTERM)
MAX_NEW_PARTITIONS = 20


class Harness:
    """The server, the probe, and the abusive connections left open."""

    def __init__(self, server: ServeProcess):
        self.server = server
        self.start_rss = server.memory()[1]
        self.probe = Probe(server.port)
        self.open: list[socket.socket] = []
        self.threads: list[threading.Thread] = []
        self.cases = 0
        self.peak_rss = self.start_rss
        self.outcomes: dict[str, int] = {}
        #: (the probe's longest wait, the example after which it was seen), when it grew
        self.stalls: list[tuple[float, str]] = []
        #: (monotonic time, example) of each request sent
        self.timeline: list[tuple[float, str]] = []

    @property
    def rss_bound(self) -> int:
        return self.start_rss + POOL + MARGIN

    def keep(self, s: socket.socket) -> None:
        self.open.append(s)
        while len(self.open) > KEEP_OPEN:
            self.open.pop(0).close()

    def check(self, what: str) -> None:
        """The invariants, after each example."""
        self.cases += 1
        srv = self.server
        assert srv.alive(), f"{what}: the server died\n" + "".join(srv.log[-20:])
        peak, rss = srv.memory()
        self.peak_rss = max(self.peak_rss, peak)
        assert rss <= self.rss_bound, \
            f"{what}: RSS {rss / MiB:.0f} MiB > {self.rss_bound / MiB:.0f} MiB"
        if not self.stalls or self.probe.longest > self.stalls[-1][0]:
            self.stalls.append((self.probe.longest, what[:200]))
        assert not self.probe.failures, (what, self.probe.failures)
        assert self.probe.longest < STALL_S, \
            f"{what}: another client waited {self.probe.longest:.2f} s for ApiVersions; " \
            f"sent just before: {self.around(self.probe.longest_since)}"

    def sent(self, what: str) -> None:
        self.timeline.append((time.monotonic(), what[:160]))

    def around(self, t: float) -> list[str]:
        """The last examples sent in the 2 s before ``t`` (monotonic)."""
        return [w for at, w in self.timeline if t - 2 <= at <= t + 0.05][-8:]

    def send(self, frame: bytes, how: str, what: str) -> None:
        """Send ``frame`` (with its size prefix) as a client that ``how``: ``read`` (its
        answer or the close, 10 s at most), ``unread`` (never; kept open), ``slow``
        (512 bytes every 20 ms, in a thread), ``half`` (half the frame, then nothing;
        kept open), ``shut`` (then shuts its side and reads)."""
        self.sent(what)
        try:
            s = connect(self.server.port, rcvbuf=4096 if how in ("unread", "slow") else None,
                        timeout=5)
        except OSError as e:
            raise AssertionError(f"{what}: cannot connect: {e}") from None
        try:
            if how == "half":
                s.sendall(frame[:max(1, len(frame) // 2)])
                self.keep(s)
                return
            s.sendall(frame)
        except OSError:  # the server stopped reading it (muted) or closed it
            self.keep(s)
            return
        if how == "unread":
            self.keep(s)
        elif how == "slow":
            t = threading.Thread(target=_read_slowly, args=(s,), daemon=True)
            t.start()
            self.threads.append(t)
        else:
            if how == "shut":
                s.shutdown(socket.SHUT_WR)
            s.settimeout(10)
            try:
                out = "answered" if recv_frame(s) is not None else "closed"
            except TimeoutError:
                out = "waiting"
            except OSError:
                out = "closed"
            self.outcomes[out] = self.outcomes.get(out, 0) + 1
            s.close()


def _read_slowly(s: socket.socket) -> None:
    s.settimeout(1)
    end = time.monotonic() + 5
    try:
        while time.monotonic() < end and s.recv(512):
            time.sleep(0.02)
    except OSError:
        pass
    s.close()


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    d = tmp_path_factory.mktemp("serve-abuse") / "logs"
    d.mkdir()
    write_partition_of(d, BIG, 16, MiB - 200)
    seeds = {s.name: s for s in fixture_seeds()}
    for name in SERVED:
        for rel, data in seeds[name].layout().items():
            if "/" in rel:
                p = d / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(data)
    server = ServeProcess(d, *CONFIGS)
    h = Harness(server)
    yield h
    h.probe.stop()
    for s in h.open:
        s.close()
    server.stop()


# -- requests ---------------------------------------------------------------------------------

def _frame(key: int, version: int, body: dict) -> bytes | None:
    try:
        return encode_request(key, version, 7, body)
    except Exception:  # a drawn value the declaration cannot encode
        return None


def _tame(key: int, body: dict) -> dict:
    """Keep drawn CreateTopics / CreatePartitions to :data:`MAX_NEW_PARTITIONS`."""
    if key == 19:
        for t in body.get("topics") or ():
            if t.get("numPartitions", 0) > MAX_NEW_PARTITIONS:
                t["numPartitions"] = MAX_NEW_PARTITIONS
    elif key == 37:
        for t in body.get("topics") or ():
            if t.get("count", 0) > MAX_NEW_PARTITIONS:
                t["count"] = MAX_NEW_PARTITIONS
    return body


def array_paths(fields, version: int, depth: int = 2, prefix=()) -> list[tuple]:
    """Paths (field names) to every array reachable through regular fields at
    ``version`` (structs' fields through their first element), at most ``depth``
    arrays deep."""
    out = []
    for f in fields:
        if version not in f.versions or version in f.tagged:
            continue
        if f.is_array:
            out.append(prefix + (f,))
            if f.is_struct and depth > 1:
                out += array_paths(f.fields, version, depth - 1, prefix + (f,))
        elif f.is_struct:
            out += array_paths(f.fields, version, depth, prefix + (f,))
    return out


def _element(f, version: int, rng: random.Random):
    if f.is_struct:
        return {g.name: g.default(version) for g in f.fields if version in g.versions}
    t = f.element
    if t == "string":
        return "x" * rng.choice([0, 1, 8, 32767])
    if t in ("bytes", "records"):
        return b"y" * rng.choice([0, 1, 100])
    return f.default(version) if f.element != "uuid" else "AAAAAAAAAAAAAAAAAAAAAA"


def _set_path(body: dict, path: tuple, value, version: int) -> None:
    """Set the array at ``path`` to ``value``, every array before it to one element."""
    cur = body
    for f in path[:-1]:
        if f.is_array:
            cur[f.name] = [cur.get(f.name) and cur[f.name][0] or
                           {g.name: g.default(version) for g in f.fields
                            if version in g.versions}]
            cur = cur[f.name][0]
        else:
            cur[f.name] = cur.get(f.name) or {g.name: g.default(version) for g in f.fields
                                              if version in g.versions}
            cur = cur[f.name]
    cur[path[-1].name] = value


def spliced(key: int, version: int, body: dict, path: tuple, n: int,
            rng: random.Random) -> bytes | None:
    """The request with the array at ``path`` holding ``n`` copies of one element: the
    frames with one and with two elements give the count's place and the element's
    bytes; the count is rewritten and the element repeated."""
    api = APIS[key]
    flexible = api.is_flexible(version)
    elem = _element(path[-1], version, rng)
    _set_path(body, path, [elem], version)
    one = _frame(key, version, body)
    _set_path(body, path, [elem, elem], version)
    two = _frame(key, version, body)
    if one is None or two is None:
        return None
    one = one[4:]
    found = _count_place(one, two[4:], flexible)
    if found is None:
        return None
    start, end, size = found
    return _repeated(one[:start], one[end:end + size], n, one[end + size:], flexible)


def _count_place(one: bytes, two: bytes, flexible: bool) -> tuple[int, int, int] | None:
    """Where the count of an array is in a payload encoded with one element (``one``) and
    with two (``two``): ``(its start, its end, the element's size)``; None when the
    first difference is not the count (a size before it)."""
    i = next(j for j in range(len(one)) if one[j] != two[j])
    start = i if flexible else i - 3
    prefix = encode_unsigned_varint(2) if flexible else struct.pack(">i", 1)
    if one[start:i + 1] != prefix:
        return None
    return start, i + 1, len(two) - len(one)


def _repeated(head: bytes, element: bytes, n: int, tail: bytes, flexible: bool) -> bytes:
    """A frame: ``head``, the count ``n``, ``n`` copies of ``element`` (at most
    :data:`FRAME_LIMIT` bytes of them), ``tail``."""
    n = min(n, FRAME_LIMIT // max(1, len(element)))
    count = encode_unsigned_varint(n + 1) if flexible else struct.pack(">i", n)
    payload = head + count + element * n + tail
    return struct.pack(">i", len(payload)) + payload


def flooded(frame: bytes, key: int, version: int, n: int, in_header: bool) -> bytes | None:
    """``frame`` (a flexible version, no top-level tagged field set) with ``n`` unknown
    tagged fields in its header's or its body's last tagged section."""
    api = APIS[key]
    if not api.is_flexible(version):
        return None
    payload = frame[4:]
    flood = encode_unsigned_varint(n) + b"".join(
        encode_unsigned_varint(100 + t) + b"\x00" for t in range(n))
    if in_header:
        (id_len,) = struct.unpack_from(">h", payload, 8)
        at = 10 + max(0, id_len)
        if payload[at] != 0:
            return None
        payload = payload[:at] + flood + payload[at + 1:]
    else:
        if payload[-1] != 0:
            return None
        payload = payload[:-1] + flood
    return struct.pack(">i", len(payload)) + payload


HOW = st.sampled_from(["read", "read", "unread", "slow", "half", "shut"])
#: array lengths: around the element bound (32,768), far past it, and small
COUNTS = st.sampled_from([2, 100, 5000, 30_000, 32_769, 200_000, 1_000_000, 4_000_000])


def _describe(key, version, extra="") -> str:
    return f"{APIS[key].key.name} v{version} {extra}"


# -- the properties ---------------------------------------------------------------------------

@fuzz_settings(short=60)
@given(drawn_request(), HOW)
def test_drawn_requests_of_every_api(harness, req, how):
    key, version, body = req
    frame = _frame(key, version, _tame(key, body))
    if frame is not None:
        harness.send(frame, how, _describe(key, version, how))
    harness.check(_describe(key, version, how))


@fuzz_settings(short=40)
@given(drawn_request(), COUNTS, st.integers(1, 200), st.randoms(use_true_random=False),
       HOW)
def test_huge_and_nested_arrays(harness, req, n, nested, rng, how):
    """An array of ``n`` elements (a string array's elements sometimes 32 KiB), or an
    array of ``nested`` elements each holding one of ``n``."""
    key, version, body = req
    body = _tame(key, body)
    paths = array_paths(APIS[key].request.fields, version)
    if not paths:
        harness.check(_describe(key, version))
        return
    path = rng.choice(paths)
    arrays = [f for f in path if f.is_array]
    frame = None
    if len(arrays) == 2 and rng.random() < 0.5:
        outer = path[:path.index(arrays[0]) + 1]
        inner_frame = spliced(key, version, body, path, n, rng)
        if inner_frame is not None:
            frame = _nest(key, version, body, outer, path, inner_frame, nested, rng)
    if frame is None:
        frame = spliced(key, version, body, path, n, rng)
    what = _describe(key, version, f"{'.'.join(f.name for f in path)} x{n} {how}")
    if frame is not None:
        harness.send(frame, how, what)
    harness.check(what)


def _nest(key, version, body, outer, path, inner_frame, nested, rng) -> bytes | None:
    """``nested`` copies of the outer array's element whose inner array is the one in
    ``inner_frame`` (a frame whose outer array holds one element)."""
    elem = _element(outer[-1], version, rng)
    _set_path(body, outer, [elem], version)
    small = _frame(key, version, body)
    _set_path(body, outer, [elem, elem], version)
    two = _frame(key, version, body)
    if small is None or two is None:
        return None
    small = small[4:]
    flexible = APIS[key].is_flexible(version)
    found = _count_place(small, two[4:], flexible)
    if found is None:
        return None
    start, end, size = found
    tail = len(small) - end - size
    inner = inner_frame[4:]
    if inner[:start] != small[:start] or inner[len(inner) - tail:] != small[end + size:]:
        return None
    return _repeated(small[:start], inner[end:len(inner) - tail], nested, small[end + size:],
                     flexible)


@fuzz_settings(short=20)
@given(drawn_request(), st.sampled_from([100, 40_000, 1_000_000]), st.booleans(), HOW)
def test_tagged_field_floods(harness, req, n, in_header, how):
    key, version, body = req
    api = APIS[key]
    for f in api.request.fields:  # no top-level tagged value: the section is one 0 byte
        if version in f.tagged:
            body.pop(f.name, None)
    frame = _frame(key, version, _tame(key, body))
    flood = frame and flooded(frame, key, version, n, in_header)
    what = _describe(key, version, f"{n} tags {'header' if in_header else 'body'} {how}")
    if flood:
        harness.send(flood, how, what)
    harness.check(what)


@fuzz_settings(short=40)
@given(drawn_request(), mutations(4), HOW)
def test_mutated_frames(harness, req, ops, how):
    key, version, body = req
    frame = _frame(key, version, _tame(key, body))
    what = _describe(key, version, f"{ops} {how}")
    if frame is not None:
        payload = mutate(frame[4:], ops)
        harness.send(struct.pack(">i", len(payload)) + payload, how, what)
    harness.check(what)


def _fetch(partition_max: int, max_bytes: int, min_bytes: int, max_wait: int) -> bytes:
    return encode_request(1, 12, 3, {
        "replicaId": -1, "maxWaitMs": max_wait, "minBytes": min_bytes, "maxBytes": max_bytes,
        "isolationLevel": 0, "sessionId": 0, "sessionEpoch": -1,
        "topics": [{"topic": BIG, "partitions": [
            {"partition": 0, "fetchOffset": 0, "partitionMaxBytes": partition_max}]}],
        "forgottenTopicsData": [], "rackId": ""})


@fuzz_settings(short=20)
@given(st.sampled_from([1 << 20, (1 << 31) - 1]), st.sampled_from([1 << 20, (1 << 31) - 1]),
       st.sampled_from([1, (1 << 31) - 1]), st.sampled_from([0, 500, 30_000]),
       st.sampled_from(["unread", "unread", "slow", "read", "half"]))
def test_fetching_clients_that_do_not_read(harness, part_max, max_bytes, min_bytes,
                                           max_wait, how):
    """Fetches of the 16 MiB partition (everything, parked on minBytes, or small) by
    clients that do not read, read slowly, or stop half-way."""
    what = f"FETCH {part_max}/{max_bytes}/{min_bytes}/{max_wait} {how}"
    harness.send(_fetch(part_max, max_bytes, min_bytes, max_wait), how, what)
    harness.check(what)


@fuzz_settings(short=5, **({"max_examples": 20} if LONG else {}))
@given(st.sampled_from([2000, 20_000]))
def test_pipelined_requests_not_read(harness, n):
    """A client pipelining thousands of Metadata and ApiVersions requests, never
    reading."""
    frames = b"".join(encode_request(3 if i % 2 else 18, 12 if i % 2 else 3, i,
                                     {"topics": None} if i % 2 else
                                     {"clientSoftwareName": "p", "clientSoftwareVersion": "1"})
                      for i in range(n))
    s = connect(harness.server.port, rcvbuf=4096, timeout=5)
    threading.Thread(target=_send_ignoring, args=(s, frames), daemon=True).start()
    harness.keep(s)
    time.sleep(0.5)
    harness.check(f"{n} pipelined")


def _send_ignoring(s: socket.socket, data: bytes) -> None:
    try:
        s.sendall(data)
    except OSError:
        pass


def test_zz_sigterm_ends_the_server_whatever_its_clients_do(harness):
    """Last: the server's peak RSS stayed under its bound; with every abusive connection
    still open (non-reading fetchers, half frames, parked fetches), SIGTERM ends it within
    SIGTERM_S and the clean-shutdown marker is written."""
    for _ in range(4):  # a few more that hold responses
        harness.send(_fetch((1 << 31) - 1, (1 << 31) - 1, 1, 0), "unread", "final fetch")
    harness.check("before SIGTERM")
    assert harness.cases >= (min(300, 4 * LONG_EXAMPLES) if LONG else 100), harness.cases
    assert harness.peak_rss <= harness.rss_bound, \
        f"peak RSS {harness.peak_rss / MiB:.0f} MiB > {harness.rss_bound / MiB:.0f} MiB"
    harness.probe.stop()
    took = harness.server.terminate(SIGTERM_S * 4)
    server_log = "".join(harness.server.log[-10:])
    assert took is not None and took < SIGTERM_S, (took, server_log)
    assert harness.server.clean_shutdown_marker(), server_log
    print(f"\nserve abuse: {harness.cases} cases, outcomes {harness.outcomes}, peak RSS "
          f"{harness.peak_rss / MiB:.0f} MiB (start {harness.start_rss / MiB:.0f} MiB, "
          f"bound {harness.rss_bound / MiB:.0f} MiB), longest ApiVersions wait "
          f"{harness.probe.longest:.3f} s (sent just before: "
          f"{harness.around(harness.probe.longest_since)}), SIGTERM {took:.2f} s")

