"""``groups``' offset expiration against a 4.4.0 broker's own pass.

The broker checks for expired offsets every 500 ms (``offsets.retention.check.interval.
ms``). Offsets are committed with OffsetCommit v2's ``retentionTimeMs`` (the coordinator
writes them as OffsetCommitValue v1 with an ``expireTimestamp``): ``gx``'s only offset
and one of ``gz``'s expire after 1.5 s, the others do not. Once the broker has written
its tombstones, kafka-consumer-groups describes the groups; the broker stops and
kafkalog must print the same, both from the whole log (the tombstones replayed) and from
the log cut before the first tombstone with ``--at`` the time the broker wrote the last
(kafkalog's pass must find what the broker's found).
"""

from __future__ import annotations

import shutil
import socket
import struct
import time

import pytest
from kafka_testkit import kafka_tools_batch
from kafkalog_testkit import run_cli_inprocess as cli

from kafkalog_cli.protocol.apis import APIS
from kafkalog_cli.protocol.wire import encode_request

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

CGC = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


class _Client:
    """Requests as frames (kafkalog's encoder), answers decoded by its declarations."""

    def __init__(self, bootstrap: str):
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=20)
        self.cid = 0

    def call(self, api: int, version: int, body: dict) -> dict:
        self.cid += 1
        self.sock.sendall(encode_request(api, version, self.cid, body, "expire-test"))
        size = struct.unpack(">i", self._read(4))[0]
        frame = self._read(size)
        a = APIS[api]
        pos = 4 + (1 if a.response_header_version(version) >= 1 else 0)
        return a.response.parse(frame, version, offset=pos)[0]

    def _read(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            assert chunk, "the broker closed the connection"
            buf += chunk
        return buf

    def until_ok(self, api: int, version: int, body: dict, error) -> dict:
        deadline = time.monotonic() + 60
        while True:
            got = self.call(api, version, body)
            if error(got) == 0:
                return got
            assert time.monotonic() < deadline, got
            time.sleep(0.1)


def _commit(c: _Client, group: str, partition: int, offset: int, retention_ms: int) -> None:
    body = {"groupId": group, "generationIdOrMemberEpoch": -1, "memberId": "",
            "retentionTimeMs": retention_ms,
            "topics": [{"name": "t", "partitions": [
                {"partitionIndex": partition, "committedOffset": offset,
                 "committedMetadata": ""}]}]}
    c.until_ok(8, 2, body, lambda r: r["topics"][0]["partitions"][0]["errorCode"])


def _batches(seg: bytes):
    """``(position, size, max timestamp, [(key, value)])`` of each whole v2 batch, read
    with struct and kafka-python's record reader."""
    from kafka.record import MemoryRecords

    pos = 0
    while pos + 12 <= len(seg):
        size = 12 + struct.unpack_from(">i", seg, pos + 8)[0]
        if pos + size > len(seg):
            return
        (max_ts,) = struct.unpack_from(">q", seg, pos + 35)
        batch = MemoryRecords(seg[pos:pos + size]).next_batch()
        yield pos, size, max_ts, [(r.key, r.value) for r in batch]
        pos += size


def _tombstones(seg_path) -> list[tuple[int, int]]:
    """``(position, max timestamp)`` of the batches holding tombstones."""
    return [(pos, ts) for pos, _, ts, recs in _batches(seg_path.read_bytes())
            if any(v is None for _, v in recs)]


def test_expiration_equals_the_brokers(kafka_broker_factory, tmp_path):
    broker = kafka_broker_factory({"offsets.topic.num.partitions": "1",
                                   "offsets.retention.check.interval.ms": "500"})
    bs = broker.bootstrap
    c = _Client(bs)
    c.until_ok(19, 7, {"topics": [{"name": "t", "numPartitions": 2, "replicationFactor": 1,
                                   "assignments": [], "configs": []}],
                       "timeoutMs": 30000, "validateOnly": False},
               lambda r: r["topics"][0]["errorCode"])
    c.until_ok(10, 4, {"keyType": 0, "coordinatorKeys": ["gx"]},
               lambda r: r["coordinators"][0]["errorCode"])
    _commit(c, "gx", 0, 3, 1500)
    _commit(c, "gz", 0, 4, 1500)
    _commit(c, "gz", 1, 5, -1)
    _commit(c, "gy", 1, 1, 3_600_000)
    committed_at = int(time.time() * 1000)
    seg = broker.log_dir / "__consumer_offsets-0" / f"{0:020d}.log"
    deadline = time.monotonic() + 60
    # the broker's passes: gx's offset and group, gz's t-0 (3 tombstones in all)
    while sum(v is None for _, _, _, recs in _batches(seg.read_bytes()) for _, v in recs) < 3:
        assert time.monotonic() < deadline, "the broker expired nothing"
        time.sleep(0.2)
    cases = [("--list",), ("--describe", "--all-groups"), ("--describe", "--group", "gx")]
    results = kafka_tools_batch([(CGC, ["--bootstrap-server", bs, *case]) for case in cases])
    c.sock.close()
    broker.stop()

    tombstones = _tombstones(seg)
    cut = tmp_path / "cut"
    shutil.copytree(broker.log_dir, cut)
    part = cut / "__consumer_offsets-0"
    with (part / seg.name).open("r+b") as f:
        f.truncate(tombstones[0][0])
    for p in part.iterdir():
        if p.suffix in (".index", ".timeindex", ".snapshot"):
            p.unlink()
    at = str(max(ts for _, ts in tombstones))
    for case, r in zip(cases, results, strict=True):
        assert r.exit == 0, (case, r.stderr)
        # (kafkalog exits 1 where a group named does not exist; the tool 0)
        mine = cli("groups", str(broker.log_dir), *case)
        assert mine.stdout == r.stdout, case
        mine = cli("groups", str(cut), *case, "--at", at)
        assert mine.stdout == r.stdout, case
    assert "gx" not in results[0].stdout.split() and "gz" in results[0].stdout.split()
    # before the pass, the cut log still has every offset (gx's 3 among them)
    mine = cli("groups", str(cut), "--describe", "--group", "gx", "--at", str(committed_at))
    assert mine.stdout.split("\n")[2].split()[:4] == ["gx", "t", "0", "3"]
