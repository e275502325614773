"""Shared fixtures of the serve tests: a server on 127.0.0.1 (ephemeral port, in-process
event-loop thread), a raw-socket client for crafted requests, and the checks of the log
directory a real client leaves (:func:`check_log_dir`)."""

from __future__ import annotations

import socket
import struct

import pytest
from kafka.record import MemoryRecords

from kafkalog_cli.ops.verify import verify_index
from kafkalog_cli.protocol.apis import APIS
from kafkalog_cli.protocol.wire import encode_request
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions
from kafkalog_cli.storage.log import Log
from kafkalog_cli.storage.offset_index import OffsetIndex
from kafkalog_cli.storage.segment import rebuild_indexes
from kafkalog_cli.storage.time_index import TimeIndex


class RawClient:
    """A blocking socket speaking frames; every read is bounded by a timeout."""

    def __init__(self, port: int, timeout: float = 5.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.correlation = 0

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def recv_frame(self) -> bytes | None:
        """The next response frame's payload, or None when the server closed."""
        head = self._read(4)
        if head is None:
            return None
        (size,) = struct.unpack(">i", head)
        return self._read(size)

    def _read(self, n: int) -> bytes | None:
        buf = b""
        while len(buf) < n:
            try:
                chunk = self.sock.recv(n - len(buf))
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            buf += chunk
        return buf

    def closed_by_server(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False

    def request(self, api_key: int, version: int, body: dict, *, client_id="raw-test"):
        """Send a request, return ``(correlation id, response body dict)``; the response is
        parsed at ``version`` with the response header its version uses."""
        self.correlation += 1
        cid = self.correlation
        self.send_raw(encode_request(api_key, version, cid, body, client_id))
        frame = self.recv_frame()
        assert frame is not None, "server closed the connection"
        return parse_response(api_key, version, frame, cid)

    def close(self) -> None:
        self.sock.close()


def parse_response(api_key: int, version: int, frame: bytes, cid: int) -> dict:
    api = APIS[api_key]
    (got,) = struct.unpack_from(">i", frame, 0)
    assert got == cid
    pos = 4 + (1 if api.response_header_version(version) >= 1 else 0)
    if pos == 5:
        assert frame[4] == 0  # empty tagged fields
    body, end = api.response.parse(frame, version, offset=pos)
    assert end == len(frame)
    return body


@pytest.fixture
def log_dir(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    return d


#: Kafka's test brokers start groups at once (TestUtils.createBrokerConfig sets
#: group.initial.rebalance.delay.ms=0); tests of the delay itself use the default
NO_GROUP_DELAY = {"group.initial.rebalance.delay.ms": "0"}


@pytest.fixture
def serve_process(log_dir):
    """``start(*configs)`` -> a :class:`~serve_process.ServeProcess` on ``log_dir``,
    stopped at the end of the test."""
    from serve_process import ServeProcess

    started = []

    def start(*configs):
        p = ServeProcess(log_dir, *configs)
        started.append(p)
        return p

    yield start
    for p in started:
        p.stop()


@pytest.fixture
def server(log_dir):
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=NO_GROUP_DELAY) as s:
        yield s


@pytest.fixture
def raw(server):
    clients = []

    def make():
        c = RawClient(server.port)
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.close()


def create_topic(client: RawClient, name: str, partitions: int = 1, configs=None) -> dict:
    body = {"topics": [{"name": name, "numPartitions": partitions, "replicationFactor": 1,
                        "assignments": [],
                        "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}],
            "timeoutMs": 1000}
    res = client.request(19, 7, body)
    assert res["topics"][0]["errorCode"] == 0, res
    return res["topics"][0]


def check_log_dir(log_dir, topics: dict[str, int], index_interval: int = 4096, *,
                  records: dict[str, list[tuple]] | None = None,
                  codecs: dict[str, int] | None = None) -> None:
    """verify-index clean; kafka-python decodes every record of partition 0 (offsets 0..n-1);
    indexes == rebuilt ones. ``records``: per topic, the exact ``(key, value, timestamp)``
    list expected; ``codecs``: per topic, the compression type the batches must have
    (kafka-python's ``compression_type``: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd) - at
    least one batch, and the others uncompressed (kafka-python, aiokafka and librdkafka
    send a batch uncompressed when compressing does not make it smaller, e.g. one record
    alone)."""
    result = verify_index([log_dir])
    assert result.ok, result.to_dict()
    for topic, count in topics.items():
        log = Log.open(log_dir / f"{topic}-0")
        offsets, decoded, seen_codecs = [], [], set()
        for seg in log.segments:
            data = seg.log_path.read_bytes()
            mr = MemoryRecords(data)
            while True:
                b = mr.next_batch()
                if b is None:
                    break
                seen_codecs.add(b.compression_type)
                for r in b:
                    offsets.append(r.offset)
                    decoded.append((r.key, r.value, r.timestamp))
            rebuilt = rebuild_indexes(memoryview(data), seg.base_offset, index_interval)
            assert OffsetIndex.load(seg.index_path, seg.base_offset).entries_list() == \
                rebuilt.offset_entries
            assert TimeIndex.load(seg.time_index_path, seg.base_offset).entries_list() == \
                rebuilt.time_entries
        log.close()
        assert offsets == list(range(count)), topic
        if records is not None:
            assert decoded == records[topic], topic
        if codecs is not None:
            assert codecs[topic] in seen_codecs and seen_codecs <= {0, codecs[topic]}, \
                (topic, seen_codecs)
