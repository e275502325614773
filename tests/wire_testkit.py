"""The differential wire suite's bench: the pinned Kafka broker and ``kafkalog serve`` side
by side, each request sent to both as the same bytes over a raw socket, each answer
decoded and compared field by field after ONE normalisation (:func:`normalise`).

* :class:`WirePair` - a bench broker (KRaft, node 1, formatted with
  ``--feature transaction.version=1``: serve implements the classic transaction protocol,
  TV1, docs/serve.md) and a serve (node 1, in-process, ``--auto-create-topics``) on its
  own empty directory. ``pair.same(key, version, body)`` sends, decodes, normalises and
  asserts equality, returning the (normalised) answer for further checks;
  ``pair.both(...)`` returns both answers without asserting; a body may be a function of
  the side (``lambda side: {...}``) where the request must carry what that side handed
  out before (a member id, a producer id).
* :func:`normalise` - the one normalisation, applied to both answers alike:

  - ``throttleTimeMs`` -> 0 (quotas are the broker's business, serve has none);
  - ``clusterId`` -> ``"<cluster>"``; ``host`` -> ``"<host>"``, ``port`` -> ``"<port>"``
    (the listeners are on different ports; the node id is the same, 1, on both);
  - ``topicId`` -> ``"<id:NAME>"`` for the ids each side gave its topics (both make
    random ones), ``"<other id>"`` for any other id but the zero one (a validateOnly
    creation's, one sent in a request);
  - member ids (``memberId``, ``leader``, ``memberId`` of members; ``<clientId>-<random
    UUID>``) -> ``"<member:N>"``, N in order of first appearance on that side;
  - the order of topic, partition, transaction and group entries (Kafka builds many
    answers - Produce, ListOffsets, ListTransactions, ListGroups, a transaction's
    partitions - from hash maps): sorted by name and index;
  - time-derived values: ``logAppendTimeMs`` and ``transactionStartTimeMs`` other
    than -1; the clock bounds in
    LogValidator's timestamp messages; in Fetch records, the
    timestamps and CRC of control batches (markers carry the append time) and of
    LogAppendTime batches; ``DescribeLogDirs`` ``logDir``, ``totalBytes``,
    ``usableBytes`` (the directories differ).

  Nothing else is normalised: error codes, error messages, offsets, epochs, producer ids,
  record batches (decoded to their fields and records) must be equal.

The pair is started once per test session on first use (``wire_pair``) and stopped at the
end; the scenario modules share it, each with topic names of its own.
"""

from __future__ import annotations

import re
import socket
import struct
import time
from dataclasses import dataclass, field

import pytest
from kafka_testkit import KafkaBroker

from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.protocol.apis import APIS
from kafkalog_cli.protocol.wire import encode_request
from kafkalog_cli.schema.flexible import ZERO_UUID
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions

#: the broker's node id, given to serve too: no node id needs normalising
NODE_ID = 1
#: configs both sides get (Kafka's names): groups start at once (as Kafka's test brokers),
#: three partitions of each coordinator topic (fifty take the broker seconds to create), no
#: time retention (the bench broker's: the scenarios' records carry 2023 timestamps, which
#: the default 7 days would delete mid-suite)
COMMON_CONFIGS = {"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "3",
                  "transaction.state.log.num.partitions": "3", "log.retention.ms": "-1"}
#: the bench broker's own: topic auto-creation as serve's --auto-create-topics
BROKER_CONFIGS = {**COMMON_CONFIGS, "auto.create.topics.enable": "true", "num.partitions": "1"}
#: the bench broker's features: the classic transaction protocol (TV1, what serve implements) and
#: no eligible leader replicas (ELR makes the controller write a cluster-wide
#: min.insync.replicas, a DYNAMIC_DEFAULT_BROKER_CONFIG serve has no reason to have)
TV1 = ["--feature", "transaction.version=1", "--feature", "eligible.leader.replicas.version=0"]

_SIZE = struct.Struct(">i")


class Side:
    """One end of the pair: its name, port, connection and the ids it handed out."""

    def __init__(self, name: str, port: int):
        self.name = name
        self.port = port
        self.sock: socket.socket | None = None
        self.correlation = 0
        self.topic_ids: dict[str, str] = {}  # id -> topic name
        self.members: dict[str, str] = {}  # member id -> "<member:N>"
        self.values: dict = {}  # what a scenario keeps per side (its member ids, pids)

    def connect(self) -> socket.socket:
        if self.sock is None:
            self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=20)
        return self.sock

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def send(self, frame: bytes) -> None:
        self.connect().sendall(frame)

    def recv(self, timeout: float = 20) -> bytes | None:
        """The next response frame, or None when the peer closed the connection."""
        sock = self.connect()
        sock.settimeout(timeout)
        head = self._read(sock, 4)
        if head is None:
            self.close()
            return None
        body = self._read(sock, _SIZE.unpack(head)[0])
        if body is None:
            self.close()
        return body

    @staticmethod
    def _read(sock, n: int) -> bytes | None:
        buf = bytearray()
        while len(buf) < n:
            try:
                chunk = sock.recv(n - len(buf))
            except (ConnectionResetError, BrokenPipeError):
                return None
            if not chunk:
                return None
            buf += chunk
        return bytes(buf)

    def recv_or_timeout(self, timeout: float):
        """The next frame, None when closed, or "timeout" when nothing came in time."""
        try:
            return self.recv(timeout)
        except TimeoutError:
            return "timeout"

    def closed(self, timeout: float = 5) -> bool:
        """Whether the peer closes the connection within ``timeout`` s (nothing sent)."""
        sock = self.connect()
        sock.settimeout(timeout)
        try:
            closed = sock.recv(1) == b""
        except (ConnectionResetError, BrokenPipeError):
            closed = True
        except TimeoutError:
            return False
        self.close()
        return closed


def decode(api_key: int, version: int, frame: bytes) -> dict:
    """A response frame (without its size) decoded by kafkalog's declaration of the
    response; every byte must be consumed (the broker's bytes check the declaration)."""
    api = APIS[api_key]
    pos = 4 + (1 if api.response_header_version(version) >= 1 else 0)
    body, end = api.response.parse(frame, version, offset=pos)
    assert end == len(frame), f"{end} of {len(frame)} bytes decoded"
    return body


def _entry_key(entry: dict):
    return tuple(str(entry.get(k) or "") if k in ("name", "topic", "transactionalId", "groupId")
                 else entry.get(k, -1) for k in _ENTRY_KEYS)


def decode_records(data) -> list[dict]:
    """Record batches as dicts (header fields, records as tuples), for comparison."""
    if not data:
        return []
    out = []
    fr = FileRecords(bytes(data))
    for b in fr.batches():
        d = {"baseOffset": b.base_offset, "lastOffsetDelta": b.last_offset_delta,
             "magic": b.magic, "attributes": b.attributes, "crc": b.crc,
             "partitionLeaderEpoch": b.partition_leader_epoch,
             "producerId": b.producer_id, "producerEpoch": b.producer_epoch,
             "baseSequence": b.base_sequence, "firstTimestamp": b.base_timestamp,
             "maxTimestamp": b.max_timestamp, "size": b.size,
             "records": [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers))
                         for r in b.iter_records()]}
        if b.is_control or b.attributes & 0x08:  # control batch or LogAppendTime
            d.update(firstTimestamp="<time>", maxTimestamp="<time>", crc="<crc>")
            d["records"] = [(o, "<time>", k, v, h) for o, _, k, v, h in d["records"]]
        out.append(d)
    if fr.stop_error is not None:
        out.append({"partial": len(data) - sum(d["size"] for d in out)})
    return out


#: the clock in messages: LogValidator's "should be within [now - before, now + after]"
_WITHIN = re.compile(r"within \[-?\d+, -?\d+\]")
#: keys of the entries of an array whose order is Kafka's hash-map order (Produce and
#: ListOffsets answers are built from maps keyed by topic-partition): sorted by them
_ENTRY_KEYS = ("name", "topic", "transactionalId", "groupId", "index", "partitionIndex")


def normalise(value, side: Side, key: str | None = None):
    """:func:`normalise` of the module docstring, recursively over a decoded body."""
    if isinstance(value, dict):
        return {k: normalise(v, side, k) for k, v in value.items()}
    if isinstance(value, list):
        out = [normalise(v, side, key) for v in value]
        if key in ("responses", "partitionResponses", "topics", "partitions",
                   "transactionStates", "groups", "results", "configs",
                   "synonyms") and all(
                isinstance(v, dict) for v in out):
            out.sort(key=_entry_key)
        return out
    if isinstance(value, str) and "within [" in value:
        return _WITHIN.sub("within [<now - before>, <now + after>]", value)
    if key == "throttleTimeMs":
        return 0
    if key == "clusterId" and value is not None:
        return "<cluster>"
    if key == "host":
        return "<host>"
    if key == "port":
        return "<port>"
    if key == "topicId" and value != ZERO_UUID:
        return f"<id:{side.topic_ids[value]}>" if value in side.topic_ids else "<other id>"
    if key in ("memberId", "leader") and isinstance(value, str) and value:
        return side.members.setdefault(value, f"<member:{len(side.members)}>")
    if key in ("logAppendTimeMs", "transactionStartTimeMs") and value != -1:
        return "<time>"
    if key in ("logDir", "totalBytes", "usableBytes"):
        return f"<{key}>"
    if key == "records" and isinstance(value, (bytes, bytearray, memoryview)):
        return decode_records(value)
    return value


@dataclass
class Exchange:
    """One request's answers: ``broker`` and ``serve`` (normalised; None when that side
    closed the connection or, for acks=0, sent nothing)."""

    broker: dict | None
    serve: dict | None
    raw: dict = field(default_factory=dict)


class WirePair:
    """The bench broker and serve, started together (see the module docstring)."""

    def __init__(self, root, *, broker_configs: dict | None = None, format_args=TV1):
        self.broker = KafkaBroker(root / "broker", {**BROKER_CONFIGS, **(broker_configs or {})},
                                  format_args=list(format_args))
        self.serve_dir = root / "serve"
        self.serve_dir.mkdir()
        self.server: ServerThread | None = None
        self.sides: dict[str, Side] = {}

    def start(self) -> WirePair:
        self.broker.start()
        self.server = ServerThread(self.serve_dir, ServerOptions(
            port=0, node_id=NODE_ID, auto_create_topics=True, num_partitions=1),
            server_configs=COMMON_CONFIGS).start()
        self.sides = {"broker": Side("broker", self.broker.port),
                      "serve": Side("serve", self.server.port)}
        # the coordinators' topics exist before the scenarios (a broker creates them on
        # the first FindCoordinator, answering COORDINATOR_NOT_AVAILABLE meanwhile; serve
        # creates them at once: a kept difference of timing, docs/serve.md)
        for side in self.sides.values():
            self.find_coordinator(side, 0, "wire-set-up")
            self.find_coordinator(side, 1, "wire-set-up")
        for name in ("__consumer_offsets", "__transaction_state"):
            self.wait_leaders(name, int(COMMON_CONFIGS["offsets.topic.num.partitions"]))
            self.learn_topic_ids(name)
        return self

    def stop(self) -> None:
        for side in self.sides.values():
            side.close()
        if self.server is not None:
            self.server.stop()
        self.broker.stop()

    # -- sending ---------------------------------------------------------------------------

    def send(self, api_key: int, version: int, body, *, client_id: str | None = "wire",
             expect_response: bool = True, raw: bytes | None = None) -> Exchange:
        """Send the request (``body`` a dict, or a function of the :class:`Side`; or the
        ``raw`` frame itself) to both and decode the answers (None where the side closed
        the connection or ``expect_response`` is False). A failure (a timeout, a frame
        that does not decode) closes both connections: the next request starts afresh."""
        try:
            return self._send(api_key, version, body, client_id, expect_response, raw)
        except BaseException:
            for side in self.sides.values():
                side.close()
            raise

    def _send(self, api_key, version, body, client_id, expect_response, raw) -> Exchange:
        answers, raws = {}, {}
        for name, side in self.sides.items():
            side.correlation += 1
            cid = side.correlation
            b = body(side) if callable(body) else body
            frame = raw if raw is not None else encode_request(api_key, version, cid, b,
                                                               client_id)
            side.send(frame)
            if not expect_response:
                answers[name] = None
                continue
            got = side.recv()
            raws[name] = got
            if got is None:
                answers[name] = None
                continue
            if raw is None:
                assert _SIZE.unpack_from(got)[0] == cid, f"{name}: correlation id"
            else:
                cid = _SIZE.unpack_from(got)[0]
            answers[name] = decode(api_key, version, got)
        return Exchange(answers["broker"], answers["serve"], raws)

    def both(self, api_key: int, version: int, body, **kw) -> tuple:
        """``(broker, serve)``: the answers, each normalised."""
        ex = self.send(api_key, version, body, **kw)
        return (None if ex.broker is None else normalise(ex.broker, self.sides["broker"]),
                None if ex.serve is None else normalise(ex.serve, self.sides["serve"]))

    def same(self, api_key: int, version: int, body, **kw) -> dict | None:
        """Send to both, assert the normalised answers are equal, return the broker's."""
        kw.pop("normal_time", None)
        mask = kw.pop("mask", ())
        ex = self.send(api_key, version, body, **kw)
        b = None if ex.broker is None else normalise(ex.broker, self.sides["broker"])
        s = None if ex.serve is None else normalise(ex.serve, self.sides["serve"])
        if mask:
            b, s = _mask(b, mask), _mask(s, mask)
        assert s == b, _diff(b, s)
        return b

    def raw_both(self, api_key: int, version: int, body) -> dict:
        """Each side's answer before normalisation (for the values a scenario keeps)."""
        ex = self.send(api_key, version, body)
        return {"broker": ex.broker, "serve": ex.serve}

    # -- state set up identically on both ---------------------------------------------------

    def create_topic(self, name: str, partitions: int = 1, configs: dict | None = None):
        """CreateTopics v7 with the same bytes to both (the answers compared), then wait
        until the broker's leaders are known (its creation is asynchronous)."""
        body = {"topics": [{"name": name, "numPartitions": partitions, "replicationFactor": -1,
                            "assignments": [], "configs": [
                                {"name": k, "value": str(v)} for k, v in (configs or {}).items()]}],
                "timeoutMs": 30000, "validateOnly": False}
        raw = self.raw_both(19, 7, body)
        for side_name, answer in raw.items():
            self.sides[side_name].topic_ids[answer["topics"][0]["topicId"]] = name
        b, s = (normalise(raw[n], self.sides[n]) for n in ("broker", "serve"))
        assert s == b, _diff(b, s)
        assert b["topics"][0]["errorCode"] == 0, b
        self.wait_leaders(name, partitions)

    def wait_leaders(self, name: str, partitions: int, timeout: float = 30) -> None:
        side = self.sides["broker"]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            side.correlation += 1
            side.send(encode_request(3, 12, side.correlation, {
                "topics": [{"topicId": ZERO_UUID, "name": name}],
                "allowAutoTopicCreation": False, "includeTopicAuthorizedOperations": False}))
            t = decode(3, 12, side.recv())["topics"][0]
            if t["errorCode"] == 0 and len(t["partitions"]) == partitions and all(
                    p["leaderId"] == NODE_ID for p in t["partitions"]):
                return
            time.sleep(0.05)
        raise AssertionError(f"the broker has no leaders for {name} after {timeout} s")

    def init_producer_id(self, side: Side, transactional_id: str | None = None,
                         timeout_ms: int = 60000, timeout: float = 30) -> tuple[int, int]:
        """Set-up on one side: InitProducerId v4 until it stops answering a retriable error
        (COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
        CONCURRENT_TRANSACTIONS); returns ``(producerId, producerEpoch)``."""
        deadline = time.monotonic() + timeout
        if transactional_id:
            self.find_coordinator(side, 1, transactional_id, timeout)
        while True:
            side.correlation += 1
            side.send(encode_request(22, 4, side.correlation, {
                "transactionalId": transactional_id, "transactionTimeoutMs": timeout_ms,
                "producerId": -1, "producerEpoch": -1}, "wire"))
            got = decode(22, 4, side.recv())
            if got["errorCode"] == 0:
                return got["producerId"], got["producerEpoch"]
            assert got["errorCode"] in (14, 15, 16, 51), (side.name, got)
            assert time.monotonic() < deadline, (side.name, got)
            time.sleep(0.1)

    def find_coordinator(self, side: Side, key_type: int, key: str, timeout: float = 30):
        """Set-up on one side: FindCoordinator v4 until the coordinator is known (a broker
        creates ``__consumer_offsets`` / ``__transaction_state`` on the first ask)."""
        deadline = time.monotonic() + timeout
        while True:
            side.correlation += 1
            side.send(encode_request(10, 4, side.correlation, {
                "keyType": key_type, "coordinatorKeys": [key]}, "wire"))
            got = decode(10, 4, side.recv())["coordinators"][0]
            if got["errorCode"] == 0:
                return
            assert time.monotonic() < deadline, (side.name, got)
            time.sleep(0.1)

    def learn_topic_ids(self, name: str) -> None:
        """Learn the ids both sides gave ``name`` (one created otherwise: auto-creation)."""
        for side in self.sides.values():
            side.correlation += 1
            side.send(encode_request(3, 12, side.correlation, {
                "topics": [{"topicId": ZERO_UUID, "name": name}],
                "allowAutoTopicCreation": False, "includeTopicAuthorizedOperations": False}))
            t = decode(3, 12, side.recv())["topics"][0]
            side.topic_ids[t["topicId"]] = name


def _mask(value, keys):
    """A scenario's own time-derived fields (a LogAppendTime topic's ListOffsets
    timestamp) replaced by "<masked>"."""
    if isinstance(value, dict):
        return {k: "<masked>" if k in keys else _mask(v, keys) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v, keys) for v in value]
    return value


def _diff(b, s, path="") -> str:
    """The first fields where broker (b) and serve (s) differ, one per line."""
    lines: list[str] = []
    _walk(b, s, path, lines)
    return "broker and serve differ:\n" + "\n".join(lines[:20])


def _walk(b, s, path, lines):
    if isinstance(b, dict) and isinstance(s, dict):
        for k in dict.fromkeys([*b, *s]):
            _walk(b.get(k, "<absent>"), s.get(k, "<absent>"), f"{path}.{k}", lines)
    elif isinstance(b, list) and isinstance(s, list) and len(b) == len(s):
        for i, (x, y) in enumerate(zip(b, s, strict=True)):
            _walk(x, y, f"{path}[{i}]", lines)
    elif b != s:
        lines.append(f"{path or '.'}: broker {b!r} serve {s!r}")


@pytest.fixture(scope="session")
def wire_pair(tmp_path_factory, kafka_bench):
    """The session's :class:`WirePair` (started on first use, stopped at the end)."""
    pair = WirePair(tmp_path_factory.mktemp("wire")).start()
    yield pair
    pair.stop()



# -- request builders the scenario modules share -----------------------------------------------

#: the scenarios' record timestamps (CreateTime; fixed, so answers carry no clock)
TS = 1_700_000_000_000


def batch(n: int = 2, *, pid: int = -1, epoch: int = -1, seq: int = -1, codec: int = 0,
          ts: int = TS, value_size: int = 8, key: bytes | None = b"k", txn: bool = False,
          headers=(), base_offset: int = 0) -> bytes:
    """One v2 batch of ``n`` records (kafkalog's builder: the broker judges the bytes)."""
    from kafkalog_cli.format.builder import build_batch
    recs = [(ts + i, None if key is None else key + b"%d" % i, b"v" * value_size, headers)
            for i in range(n)]
    return build_batch(recs, producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                       compression_type=codec, is_transactional=txn, base_offset=base_offset)


def produce_body(parts, *, acks: int = 1, txn_id: str | None = None,
                 timeout_ms: int = 5000) -> dict:
    """A ProduceRequest body: ``parts`` is ``[(topic, partition, records), ...]`` (records
    of one topic grouped in the order given)."""
    topics: dict[str, list] = {}
    for topic, partition, records in parts:
        topics.setdefault(topic, []).append({"index": partition, "records": records})
    return {"transactionalId": txn_id, "acks": acks, "timeoutMs": timeout_ms,
            "topicData": [{"name": t, "partitionData": p} for t, p in topics.items()]}


def list_offsets_body(topic: str, partitions, timestamp: int = -1, *,
                      isolation: int = 0) -> dict:
    return {"replicaId": -1, "isolationLevel": isolation, "timeoutMs": 5000, "topics": [
        {"name": topic, "partitions": [{"partitionIndex": p, "currentLeaderEpoch": -1,
                                        "timestamp": timestamp, "maxNumOffsets": 1}
                                       for p in partitions]}]}


def fetch_body(topic: str, partitions, offset: int = 0, *, isolation: int = 0,
               max_bytes: int = 1 << 20, partition_max_bytes: int = 1 << 20,
               topic_id: str = ZERO_UUID, max_wait_ms: int = 0, min_bytes: int = 0) -> dict:
    """A sessionless FetchRequest (sessionEpoch -1: the broker creates no session)."""
    return {"replicaId": -1, "maxWaitMs": max_wait_ms, "minBytes": min_bytes,
            "maxBytes": max_bytes, "isolationLevel": isolation, "sessionId": 0,
            "sessionEpoch": -1, "topics": [{"topic": topic, "topicId": topic_id, "partitions": [
                {"partition": p, "currentLeaderEpoch": -1, "fetchOffset": offset,
                 "lastFetchedEpoch": -1, "logStartOffset": -1,
                 "partitionMaxBytes": partition_max_bytes} for p in partitions]}],
            "forgottenTopicsData": [], "rackId": ""}
