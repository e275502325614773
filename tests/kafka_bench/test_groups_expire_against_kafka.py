"""``groups``' offset expiration and ``share-groups`` against a 4.4.0 broker and its
tools (one broker for both).

The broker checks for expired offsets every 500 ms (``offsets.retention.check.interval.
ms``). Offsets are committed with OffsetCommit v2's ``retentionTimeMs`` (the coordinator
writes them as OffsetCommitValue v1 with an ``expireTimestamp``): ``gx``'s only offset
and one of ``gz``'s expire after 1.5 s, the others do not. Once the broker has written
its tombstones, kafka-consumer-groups describes the groups; the broker stops and
kafkalog must print the same, both from the whole log (the tombstones replayed) and from
the log cut before the first tombstone with ``--at`` the time the broker wrote the last
(kafkalog's pass must find what the broker's found).

It plans ``--reset-offsets --from-file`` resets (the CSV of one group, of several), then
deletes ``gy`` (and a group that does not exist): kafkalog's ``--delete``
on the log cut before the broker's tombstones must print the tool's text and write the
broker's records. Last, ``--delete-offsets`` of a group that does not exist, of the share
group, and of ``gz``'s offsets of ``t`` (and of a topic that does not exist): kafkalog's
on the log cut before them must print the tool's text and write the broker's batch.

A share group ``gsh`` (``share.auto.offset.reset=earliest``) consumes 3 of the 5 records
of ``t``-0 with Kafka's console share consumer and leaves: kafka-share-groups describes
it (offsets, members, state, each verbose), and kafkalog's ``share-groups`` must print
the same from the log directory.
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
SGC = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
#: the share group's scenario: its config, then 3 records consumed and acknowledged
SHARE_SETUP = [
    ("org.apache.kafka.tools.ConfigCommand", ["--alter", "--entity-type", "groups",
                                              "--entity-name", "gsh", "--add-config",
                                              "share.auto.offset.reset=earliest"]),
    ("org.apache.kafka.tools.consumer.ConsoleShareConsumer", [
        "--topic", "t", "--group", "gsh", "--max-messages", "3", "--timeout-ms", "30000"]),
]
SHARE_CASES = [("--list",)] + [
    ("--describe", *g, *extra) for g in (("--group", "gsh"),)
    for extra in ((), ("--verbose",), ("--members",), ("--members", "--verbose"),
                  ("--state",), ("--state", "--verbose"))] + [
    ("--describe", "--group", "nope"), ("--describe", "--group", "gy"),
    ("--describe", "--all-groups")]
#: --delete-offsets, after everything else: a group that does not exist, the share group
#: (GROUP_ID_NOT_FOUND both), gz (Empty: its t-1 offset deleted, t-0 had none left) with
#: a topic that does not exist
OFFSET_DELETES = [("--group", "nope", "--topic", "t:0"), ("--group", "gsh", "--topic", "t"),
                  ("--group", "gz", "--topic", "t", "--topic", "nosuch")]


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


def _notes(stderr: str) -> str:
    """The tool's own stderr lines (log4j / SLF4J lines and stack traces dropped)."""
    return "".join(line for line in stderr.splitlines(keepends=True)
                   if not line.startswith(("SLF4J", "WARNING", "log4j", "\t", "Caused by",
                                           "java.", "org.")))


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
    """``(position, max timestamp)`` of the batches holding tombstones of offsets or
    classic groups (record types 0-2: the expiration pass's)."""
    return [(pos, ts) for pos, _, ts, recs in _batches(seg_path.read_bytes())
            if any(v is None and struct.unpack_from(">h", k)[0] <= 2 for k, v in recs)]


def _produce(c: _Client) -> None:
    """5 records to t-0 (Produce v9, one batch, acks=1)."""
    from kafkalog_cli.format.builder import build_batch

    batch = build_batch([(1000 + i, None, b"v%d" % i, ()) for i in range(5)])
    got = c.call(0, 9, {"transactionalId": None, "acks": 1, "timeoutMs": 10000,
                        "topicData": [{"name": "t", "partitionData": [
                            {"index": 0, "records": batch}]}]})
    assert got["responses"][0]["partitionResponses"][0]["errorCode"] == 0, got


def test_expiration_and_share_groups_equal_the_brokers(kafka_broker_factory, tmp_path):
    broker = kafka_broker_factory({"offsets.topic.num.partitions": "1",
                                   "share.coordinator.state.topic.num.partitions": "1",
                                   "offsets.retention.check.interval.ms": "500"})
    bs = broker.bootstrap
    c = _Client(bs)
    c.until_ok(19, 7, {"topics": [{"name": "t", "numPartitions": 2, "replicationFactor": 1,
                                   "assignments": [], "configs": []}],
                       "timeoutMs": 30000, "validateOnly": False},
               lambda r: r["topics"][0]["errorCode"])
    c.until_ok(10, 4, {"keyType": 0, "coordinatorKeys": ["gx"]},
               lambda r: r["coordinators"][0]["errorCode"])
    _produce(c)
    _commit(c, "gx", 0, 3, 1500)
    _commit(c, "gz", 0, 4, 1500)
    _commit(c, "gz", 1, 5, -1)
    _commit(c, "gy", 1, 1, 3_600_000)
    committed_at = int(time.time() * 1000)
    seg = broker.log_dir / "__consumer_offsets-0" / f"{0:020d}.log"
    deadline = time.monotonic() + 60
    # the broker's passes: gx's offset and group, gz's t-0 (3 tombstones in all)
    while sum(v is None for _, _, _, recs in _batches(seg.read_bytes())
              for _, v in recs) < 3:
        assert time.monotonic() < deadline, "the broker expired nothing"
        time.sleep(0.2)
    cases = [("--list",), ("--describe", "--all-groups"), ("--describe", "--group", "gx"),
             ("--describe", "--group", "gsh")]
    calls = [(main, ["--bootstrap-server", bs, *args]) for main, args in SHARE_SETUP]
    calls += [(CGC, ["--bootstrap-server", bs, *case]) for case in cases]
    calls += [(SGC, ["--bootstrap-server", bs, *case]) for case in SHARE_CASES]
    # --reset-offsets --from-file (dry runs): one group's CSV, and a CSV with groups
    one, several = tmp_path / "one.csv", tmp_path / "several.csv"
    one.write_text("t,0,2\nt,1,7\n")
    several.write_text("gz,t,0,9\ngy,t,1,0\ngz,t,1,\"0\"\n")
    resets = [("--group", "gz", "--from-file", str(one)),
              ("--group", "gz", "--group", "gy", "--group", "gx", "--from-file", str(several))]
    calls += [(CGC, ["--bootstrap-server", bs, "--reset-offsets", "--dry-run", *case])
              for case in resets]
    # then the tool deletes gy (Empty, one offset) and a group that does not exist
    calls += [(CGC, ["--bootstrap-server", bs, "--delete", "--group", "gy", "--group", "nope"]),
              (CGC, ["--bootstrap-server", bs, "--describe", "--all-groups"])]
    calls += [(CGC, ["--bootstrap-server", bs, "--delete-offsets", *case])
              for case in OFFSET_DELETES]
    everything = kafka_tools_batch(calls)
    offset_deletes = everything[len(everything) - len(OFFSET_DELETES):]
    everything = everything[:len(everything) - len(OFFSET_DELETES)]
    assert [r.exit for r in everything[:2]] == [0, 0], [r.stderr for r in everything[:2]]
    results = everything[2:2 + len(cases)]
    shared = everything[2 + len(cases):-2 - len(resets)]
    reset_results = everything[-2 - len(resets):-2]
    deleted, after = everything[-2:]
    c.sock.close()
    broker.stop()

    batches = list(_batches(seg.read_bytes()))
    gy_tombstone = (struct.pack(">hh", 2, 2) + b"gy", None)
    (deletion,) = [b for b in batches if gy_tombstone in b[3]]
    tombstones = [t for t in _tombstones(seg) if t[0] < deletion[0]]
    cut = _cut(broker.log_dir, tmp_path / "cut", tombstones[0][0])
    before = _cut(broker.log_dir, tmp_path / "before-delete", deletion[0])
    at = str(max(ts for _, ts in tombstones))
    for case, r in zip(cases, results, strict=True):
        assert r.exit == 0, (case, r.stderr)
        # (kafkalog exits 1 where a group named does not exist; the tool 0)
        if "gsh" in case:  # (the share group's records come after the cut)
            mine = cli("groups", str(before), *case)
        else:
            mine = cli("groups", str(cut), *case, "--at", at)
        assert mine.stdout == r.stdout, case
    assert "gx" not in results[0].stdout.split() and "gz" in results[0].stdout.split()
    for case, r in zip(SHARE_CASES, shared, strict=True):
        args = list(case) + (["--coordinator", bs] if "--state" in case else [])
        mine = cli("share-groups", str(before), *args)
        assert mine.stdout == r.stdout, case
        assert mine.stderr == _notes(r.stderr), case
    for case, r in zip(resets, reset_results, strict=True):
        mine = cli("groups", str(before), "--reset-offsets", "--dry-run", *case)
        assert mine.stdout == r.stdout, (case, r.stderr)
    # before the pass, the cut log still has every offset (gx's 3 among them)
    mine = cli("groups", str(cut), "--describe", "--group", "gx", "--at", str(committed_at))
    assert mine.stdout.split("\n")[2].split()[:4] == ["gx", "t", "0", "3"]

    # --delete-offsets: the broker's batch of tombstones for gz's t-1 (the others wrote
    # nothing), and the log cut before it
    gz_t1 = (struct.pack(">hh", 1, 2) + b"gz" + struct.pack(">h", 1) + b"t"
             + struct.pack(">i", 1), None)
    (offsets_deletion,) = [b for b in batches if gz_t1 in b[3]]
    before_offsets = _cut(broker.log_dir, tmp_path / "before-delete-offsets",
                          offsets_deletion[0])
    # the log after the deletion (the broker's tombstones replayed)
    assert cli("groups", str(before_offsets), "--describe", "--all-groups").stdout == after.stdout
    # kafkalog's --delete on the log cut before the broker's: the same text, the same
    # records (keys and tombstones, in the coordinator's order)
    mine = cli("groups", str(before), "--delete", "--group", "gy", "--group", "nope",
               "--at", str(deletion[2]))
    assert mine.stdout == deleted.stdout
    written = (before / "__consumer_offsets-0" / seg.name).read_bytes()
    # (the batch byte for byte: baseSequence 0 as the coordinator's runtime writes it)
    assert written[deletion[0]:] == seg.read_bytes()[deletion[0]:deletion[0] + deletion[1]]
    for case, r in zip(OFFSET_DELETES, offset_deletes, strict=True):
        mine = cli("groups", str(before_offsets), "--delete-offsets", *case,
                   "--at", str(offsets_deletion[2]))
        assert mine.stdout == r.stdout, (case, r.stderr)
    # the batch kafkalog wrote is the broker's, byte for byte
    pos, size = offsets_deletion[:2]
    written = (before_offsets / "__consumer_offsets-0" / seg.name).read_bytes()
    assert written[pos:] == seg.read_bytes()[pos:pos + size]


def _cut(log_dir, to, position: int):
    """A copy of ``log_dir`` whose __consumer_offsets-0 ends at byte ``position`` (its
    indexes and snapshots dropped: the loader rebuilds them)."""
    shutil.copytree(log_dir, to)
    part = to / "__consumer_offsets-0"
    with (part / f"{0:020d}.log").open("r+b") as f:
        f.truncate(position)
    for p in part.iterdir():
        if p.suffix in (".index", ".timeindex", ".snapshot"):
            p.unlink()
    return to
