"""Differential suites 2 and 3: the bytes on disk, and the broker opening what kafkalog
wrote.

**Suite 2.** The same records (:func:`producer_runs`: fixed timestamps, keys, values and
headers; every codec, a plain, an idempotent and a transactional producer with commits
and an abort, a LogAppendTime topic, topics whose segments roll on a full time index, on
``segment.bytes`` and at transaction markers, three index intervals, a
``max.message.bytes`` the producer's batches exceed) are written three ways:

(a) Kafka's Java producer to the bench broker, which is then stopped cleanly;
(b) the same producer, the same spec, to ``kafkalog serve`` (stopped cleanly);
(c) ``kafkalog produce`` offline (the library, one run per topic) with the batch
    boundaries, producer ids, epochs and sequences of (a)'s batches and the records of the
    spec (:func:`offline_produce`).

Every file of every partition is compared with (a)'s: the file names (the roll points),
``.log``, ``.index``, ``.timeindex``, producer ``.snapshot``, ``.txnindex``,
``leader-epoch-checkpoint``, ``partition.metadata``, and the log directory's checkpoint
entries of these partitions. Normalised first, and only there (:func:`normalised`):

* a timestamp taken from the writer's clock, wherever it is stored (the base and max
  timestamps of a transaction marker, which the coordinator stamps; the max timestamp of
  a LogAppendTime batch, which the leader stamps; the time-index entries and producer
  snapshot timestamps that follow them), is replaced by 0, with the CRC of the batch or
  snapshot it sits in: every other timestamp is one of the spec's (2023), before the
  test started;
* ``partition.metadata``'s ``topic_id`` of (b): the broker's controller and serve each
  pick a random id for a new topic ((c) is given the broker's, ``--topic-id``);
* (c)'s clock ticks a millisecond at every reading (``ManualClock``), as batches sent
  one after another reach a broker at distinct milliseconds (else two LogAppendTime
  stamps or marker timestamps of one millisecond would add one time-index entry less);
* the log directory's checkpoints are compared entry by entry for these partitions
  only (the broker's also list its internal topics); (c) writes no
  ``replication-offset-checkpoint`` (there is no high watermark offline).

The broker is formatted with ``transaction.version=1``. With Kafka 4.4's default, 2,
the producer epoch is bumped at every transaction end (the markers carry the next epoch,
the next transaction's batches use it and restart their sequences at 0): kafkalog serve
implements transaction.version 1 (its ApiVersions finalizes no ``transaction.version``,
so Kafka's client ends transactions the TV1 way: EndTxn without the epoch bump), and
against a TV1 broker every byte is equal (a run against both: epochs 0/1/2/3 on the TV2
broker, 0 throughout on the TV1 broker and on serve, the data batches byte-identical).

**Suite 3.** The partition directories (b) and (c) wrote, and copies of (c)'s damaged
(a torn tail) and repaired by ``kafkalog recover --truncate``, are put into the stopped
broker's log directory under topics the broker created for them (each with the
broker's topic id in ``partition.metadata``, and the checkpoint entries kafkalog wrote
for them), and the broker is restarted: its log shows no recovery, truncation or index
rebuilt for them, the sealed segments are byte for byte what was put there after it
ran, and Kafka's Java consumer reads every record back from them with the offsets,
timestamps, keys, values, headers and leader epochs it reads from (a)'s own topics,
``read_uncommitted`` and ``read_committed``. The restart's log lines about each placed
partition are those about the broker's own partition of the same records (its own
files, loaded in the same restart, are the oracle), and none is a LogLoader repair.
The repaired directories are also compared with (a) file by file as in suite 2: the
broker trusts a log directory shut down cleanly and reads no segment tail again, so
the restart alone would not show a torn batch left behind.

**A read_committed fetch with a transaction open** (the suite's gap): a transaction is
committed, the next one left open; Kafka's Java consumer, ``read_committed``, reads
from the broker and from serve the same records, and none at or past the open
transaction's first offset (the last stable offset).
"""

from __future__ import annotations

import re
import shutil
import struct
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from kafka_testkit import KafkaBroker, java_consume, java_produce
from kafka_testkit import send_step as _record
from kafkalog_testkit import run_cli_inprocess

from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.inputs import InputRecord
from kafkalog_cli.ops.produce import BatchBoundary, EndTransaction, ProduceOptions, produce
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.storage.clock import ManualClock

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

#: any timestamp at or after this came from a writer's clock (the spec's are from 2023)
CLOCK_FLOOR = int(time.time() * 1000) - 3_600_000
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
#: segment.index.bytes 64: the time index holds 5 entries, so with an entry per batch
#: (index.interval.bytes 1) a segment rolls every 5 batches
SMALL_INDEX = {"segment.index.bytes": 64, "index.interval.bytes": 1}
#: topic -> (partitions, topic configs)
TOPICS = {
    "d-codecs": (len(CODECS), SMALL_INDEX),
    "d-idempotent": (1, {"index.interval.bytes": 200}),
    "d-txn": (2, SMALL_INDEX),
    "d-log-append-time": (1, {"message.timestamp.type": "LogAppendTime",
                              "index.interval.bytes": 100}),
    "d-size": (1, {"segment.bytes": 1048576}),
    "d-max-message": (1, {"max.message.bytes": 600}),
}
#: suite 3's topics on the broker, one per topic of TOPICS and writer
PLACED = ("serve", "produce", "recover")
OPEN_TXN = "d-open-txn"


def placed(writer: str, topic: str) -> str:
    return f"{writer}-{topic}"


# -- the spec ----------------------------------------------------------------------------------

def _odd_records(topic: str, partition: int, base: int) -> list[dict]:
    """Null key, null value, no headers, bytes that are not UTF-8, non-ASCII text."""
    return [
        _record(topic, partition, base, key=None),
        _record(topic, partition, base + 1, value=None, headers=[]),
        _record(topic, partition, base + 2, key=None, keyBase64="AP/+gA==",
                valueBase64="wygA/w==", headers=[["bin", {"base64": "gIE="}]]),
        _record(topic, partition, base + 3, key="ключ", value="значение ☃"),
    ]


PLAIN = {"linger.ms": "60000", "batch.size": "1048576", "acks": "all",
         "enable.idempotence": "false"}
FLUSH = {"op": "flush"}


def producer_runs() -> list[dict]:
    """The Java producer runs of suite 2, in order (the idempotent producer's
    InitProducerId comes before the transactional one's: producer ids 0 and 1)."""
    runs = []
    for p, codec in enumerate(CODECS):  # one partition per codec: each partition is one run
        steps = []
        for b in range(6):  # 6 batches: the time index fills after 5, the segment rolls
            steps += [_record("d-codecs", p, 100 * p + 10 * b + i) for i in range(1 + b % 3)]
            steps.append(FLUSH)
        steps += _odd_records("d-codecs", p, 100 * p + 90) + [FLUSH]
        runs.append({"producer": {**PLAIN, "compression.type": codec}, "steps": steps})
    idem = []
    for b in range(4):
        idem += [_record("d-idempotent", 0, 10 * b + i) for i in range(3)] + [FLUSH]
    runs.append({"producer": {"linger.ms": "60000", "enable.idempotence": "true",
                              "acks": "all", "compression.type": "lz4"}, "steps": idem})
    txn = []
    for t, end in enumerate(("commit", "abort", "commit")):
        txn.append({"op": "begin"})
        for b in range(2):
            txn += [_record("d-txn", p, 100 * t + 10 * b + p) for p in (0, 1)] + [FLUSH]
        txn.append({"op": end})
    runs.append({"producer": {"transactional.id": "d-txn", "linger.ms": "60000",
                              "compression.type": "zstd"}, "steps": txn})
    lat = []
    for b in range(3):
        lat += [_record("d-log-append-time", 0, 10 * b + i) for i in range(4)] + [FLUSH]
    runs.append({"producer": {**PLAIN, "compression.type": "gzip"}, "steps": lat})
    size = []
    for b in range(11):  # 11 batches of ~100 KB: more than the 1 MiB segment.bytes
        size += [_record("d-size", 0, 10 * b + i, value=f"{b:02d}{i}" * 3400)
                 for i in range(10)] + [FLUSH]
    runs.append({"producer": {**PLAIN}, "steps": size})
    # five ~220-byte records in one batch over max.message.bytes 600: the broker refuses
    # it (MESSAGE_TOO_LARGE) and the producer splits it into batches of batch.size
    big = [_record("d-max-message", 0, i, value="m" * 200) for i in range(5)] + [FLUSH]
    runs.append({"producer": {**PLAIN, "batch.size": "400"}, "steps": big})
    return runs


def open_txn_run() -> dict:
    """A committed transaction, then one left open (the producer exits without ending
    it; its transaction.timeout.ms outlasts the test)."""
    send = [_record(OPEN_TXN, 0, i) for i in range(3)]
    return {"producer": {"transactional.id": OPEN_TXN, "linger.ms": "60000",
                         "transaction.timeout.ms": "900000"},
            "steps": [{"op": "begin"}, *send[:2], FLUSH, {"op": "commit"},
                      {"op": "begin"}, send[2], FLUSH]}


def create_topics(bootstrap: str, topics: dict) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(t, n, 1, config={k: str(v) for k, v in c.items()})
                                   for t, (n, c) in topics.items()], operation_timeout=30)
    for f in futures.values():
        f.result(30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        md = admin.list_topics(timeout=10).topics
        if all(t in md and md[t].error is None and len(md[t].partitions) == n
               and all(p.leader >= 0 for p in md[t].partitions.values())
               for t, (n, _) in topics.items()):
            return
        time.sleep(0.1)
    raise AssertionError("topics without leaders after 30 s")


# -- (c): kafkalog produce offline --------------------------------------------------------------

def _spec_records(runs: list[dict], acks: list[dict]) -> dict[tuple, dict]:
    """{(topic, partition, offset): the spec's send step} from the acks of (a)."""
    sends = [s for run in runs for s in run["steps"] if s["op"] == "send"]
    assert len(sends) == len(acks)
    return {(a["topic"], a["partition"], a["offset"]): s for s, a in zip(sends, acks, strict=True)
            if "offset" in a}


def _bytes(step: dict, field: str) -> bytes | None:
    import base64

    if step.get(field + "Base64") is not None:
        return base64.b64decode(step[field + "Base64"])
    v = step.get(field)
    return None if v is None else v.encode()


def _input_record(step: dict, partition: int) -> InputRecord:
    import base64

    headers = []
    for k, v in step.get("headers", []):
        headers.append((k, None if v is None else base64.b64decode(v["base64"])
                        if isinstance(v, dict) else v.encode()))
    return InputRecord(0, step["timestamp"], _bytes(step, "key"), _bytes(step, "value"),
                       tuple(headers), partition)


def _batches(partition_dir: Path) -> list:
    out = []
    for log in sorted(partition_dir.glob("*.log")):
        out += list(FileRecords(log.read_bytes()).batches())
    return out


def offline_produce(log_dir: Path, topic: str, broker_dir: Path, spec: dict[tuple, dict],
                    topic_id: str) -> None:
    """Write ``topic`` with ``kafkalog produce``'s library, batch for batch as (a)'s log
    holds it: the same records, codec, producer id, epoch, transactions (markers of the
    same type) and batch boundaries (BatchBoundary, EndTransaction); one run per group of
    partitions one producer wrote (one per codec for ``d-codecs``)."""
    partitions, configs = TOPICS[topic]
    per_partition = {p: _batches(broker_dir / f"{topic}-{p}") for p in range(partitions)}
    groups: dict[tuple, list[int]] = {}
    for p, bs in per_partition.items():
        first = next(b for b in bs if not b.is_control)
        key = (first.compression_name, first.producer_id, first.producer_epoch,
               first.is_transactional)
        groups.setdefault(key, []).append(p)
    for (codec, pid, epoch, transactional), members in groups.items():
        opts = ProduceOptions.assemble(
            topic, config_overrides=[f"{k}={v}" for k, v in configs.items()],
            partition=members[0], keep_partition=True, batch_bytes=2**31 - 1,
            compression=codec, producer_id=pid if pid >= 0 else None,
            producer_epoch=max(epoch, 0), transactional=transactional, topic_id=topic_id)
        chunks: list = []
        cursors = dict.fromkeys(members, 0)
        while any(cursors[p] < len(per_partition[p]) for p in members):
            marker = None
            for p in members:  # each partition's batches up to its next marker
                bs = per_partition[p]
                while cursors[p] < len(bs):
                    b = bs[cursors[p]]
                    cursors[p] += 1
                    if b.is_control:  # a marker's key: version int16, type int16
                        marker = next(iter(b.iter_records(2**31)))[2][3] == 1  # COMMIT
                        break
                    assert (b.compression_name, b.producer_id) == (codec, pid)
                    chunks += [[_input_record(spec[(topic, p, off)], p)
                                for off in range(b.base_offset, b.last_offset + 1)],
                               BatchBoundary()]
            if marker is not None:
                chunks.append(EndTransaction(marker))
        # the clock ticks at every reading: batches sent one after another reach a broker
        # at distinct milliseconds, and a LogAppendTime stamp or a marker's timestamp that
        # grows adds a time-index entry
        produce(log_dir, opts, iter(chunks), fsync=False,
                clock=ManualClock(int(time.time() * 1000), auto_tick_ms=1))


# -- normalisation and comparison ---------------------------------------------------------------

_HEADER = struct.Struct(">qiibIhiqqqhii")  # DefaultRecordBatch's 61-byte header


def _normalised_log(data: bytes) -> bytes:
    out, pos = bytearray(data), 0
    while pos + 61 <= len(data):
        (base, length, epoch, magic, crc, attrs, delta, base_ts, max_ts, pid, pepoch, seq,
         count) = _HEADER.unpack_from(data, pos)
        control, log_append_time = attrs & 0x20, attrs & 0x08
        if control or log_append_time:
            if control and base_ts >= CLOCK_FLOOR:
                base_ts = 0
            if max_ts >= CLOCK_FLOOR:
                max_ts = 0
            struct.pack_into(">I", out, pos + 17, 0)  # the CRC covers them
            struct.pack_into(">qq", out, pos + 27, base_ts, max_ts)
        pos += 12 + length
    return bytes(out)


def _normalised_time_index(data: bytes) -> bytes:
    out = bytearray(data)
    for pos in range(0, len(data) - len(data) % 12, 12):
        (ts,) = struct.unpack_from(">q", data, pos)
        if ts >= CLOCK_FLOOR:
            struct.pack_into(">q", out, pos, 0)
    return bytes(out)


def _normalised_snapshot(data: bytes) -> bytes:
    """ProducerStateManager's snapshot: version int16, crc uint32, then entries
    (producerId int64, epoch int16, lastSequence int32, lastOffset int64, offsetDelta
    int32, timestamp int64, coordinatorEpoch int32, currentTxnFirstOffset int64)."""
    out = bytearray(data)
    (count,) = struct.unpack_from(">i", data, 6)
    for i in range(count):
        pos = 10 + i * 42 + 26
        (ts,) = struct.unpack_from(">q", data, pos)
        if ts >= CLOCK_FLOOR:
            struct.pack_into(">q", out, pos, 0)
            struct.pack_into(">I", out, 2, 0)
    return bytes(out)


def _normalised_metadata(text: str) -> str:
    return "".join("topic_id: <id>\n" if line.startswith("topic_id: ") else line + "\n"
                   for line in text.splitlines())


def normalised(path: Path, *, topic_id: bool) -> bytes:
    """A partition file's bytes after the normalisations of the module docstring."""
    data = path.read_bytes()
    if path.suffix == ".log":
        return _normalised_log(data)
    if path.suffix == ".timeindex":
        return _normalised_time_index(data)
    if path.suffix == ".snapshot":
        return _normalised_snapshot(data)
    if path.name == "partition.metadata" and topic_id:
        return _normalised_metadata(data.decode()).encode()
    return data


def partition_files(d: Path) -> list[str]:
    return sorted(f.name for f in d.iterdir() if f.is_file())


def compare_partition(ours: Path, theirs: Path, *, topic_id: bool) -> list[str]:
    problems = []
    names_ours, names_theirs = partition_files(ours), partition_files(theirs)
    if names_ours != names_theirs:
        problems.append(f"{ours.name}: files {names_ours} != the broker's {names_theirs}")
    for name in sorted(set(names_ours) & set(names_theirs)):
        a = normalised(ours / name, topic_id=topic_id)
        b = normalised(theirs / name, topic_id=topic_id)
        if a != b:
            at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                      min(len(a), len(b)))
            problems.append(f"{ours.name}/{name}: {len(a)} bytes != the broker's {len(b)}, "
                            f"first difference at byte {at}")
    return problems


def checkpoint(path: Path) -> dict[tuple[str, int], int]:
    if not path.is_file():
        return {}
    lines = path.read_text().splitlines()
    out = {}
    for line in lines[2:]:
        topic, partition, offset = line.split()
        out[(topic, int(partition))] = int(offset)
    return out


CHECKPOINTS = ("recovery-point-offset-checkpoint", "log-start-offset-checkpoint",
               "replication-offset-checkpoint")


# -- the module's run -------------------------------------------------------------------------

@dataclass
class Written:
    broker: KafkaBroker
    a: Path           # (a): a copy of the stopped broker's log directory (the topics')
    b: Path           # (b): serve's log directory
    c: Path           # (c): kafkalog produce's log directory
    acks: list[dict]  # the Java producer's acks from the broker, in send order
    open_txn: dict    # {"broker": records, "serve": records} read_committed


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Written:
    root = tmp_path_factory.mktemp("disk-differential")
    broker = KafkaBroker(root / "broker", format_args=["--feature", "transaction.version=1"])
    broker.start()
    try:
        yield _write(root, broker)
    finally:
        try:
            broker.stop(30)
        except Exception:
            broker.kill()


def _read_committed_now(bootstrap: str) -> list[dict]:
    """read_committed up to the last stable offset as it is now (no wait for the open
    transaction to end)."""
    return java_consume(bootstrap, OPEN_TXN, "read_committed",
                        configs={"kafkalog.stable.wait.ms": "0"})


def _clockless(acks: list[dict]) -> list[dict]:
    """Acks with a LogAppendTime timestamp (the leader's clock) as 0."""
    return [{**a, "timestamp": 0} if a.get("timestamp", 0) >= CLOCK_FLOOR else a
            for a in acks]


def _write(root: Path, broker: KafkaBroker) -> Written:
    runs = producer_runs()
    everything = {**TOPICS, OPEN_TXN: (1, {})}
    create_topics(broker.bootstrap, {
        **everything, **{placed(w, t): v for t, v in TOPICS.items() for w in PLACED}})
    acks = java_produce(broker.bootstrap, {"runs": runs})
    java_produce(broker.bootstrap, open_txn_run())
    open_txn = {"broker": _read_committed_now(broker.bootstrap)}
    # (b) serve
    b = root / "serve"
    b.mkdir()
    # the bench broker's log.retention.ms=-1: the records carry 2023 timestamps, which
    # serve's retention pass (30 s after its start) would delete under the default 7 days
    with ServerThread(b, server_configs={"log.retention.ms": "-1"}) as server:
        create_topics(server.bootstrap, everything)
        serve_acks = java_produce(server.bootstrap, {"runs": runs})
        java_produce(server.bootstrap, open_txn_run())
        open_txn["serve"] = _read_committed_now(server.bootstrap)
    assert _clockless(serve_acks) == _clockless(acks)  # the same offsets, as the broker's
    broker.stop()
    # (a) as the broker left it
    a = root / "broker-copy"
    a.mkdir()
    for t, (n, _) in TOPICS.items():
        for p in range(n):
            shutil.copytree(broker.log_dir / f"{t}-{p}", a / f"{t}-{p}")
    for name in CHECKPOINTS:
        shutil.copyfile(broker.log_dir / name, a / name)
    # (c) kafkalog produce, from (a)'s batch layout and the spec's records
    c = root / "produce"
    spec = _spec_records(runs, acks)
    for t in TOPICS:
        offline_produce(c, t, a, spec, broker.topic_id(t))
    return Written(broker, a, b, c, acks, open_txn)


def _partitions() -> list[tuple[str, int]]:
    return [(t, p) for t, (n, _) in TOPICS.items() for p in range(n)]


@pytest.mark.parametrize("writer", ["serve", "produce"])
@pytest.mark.parametrize(("topic", "partition"), _partitions(),
                         ids=[f"{t}-{p}" for t, p in _partitions()])
def test_partition_files_are_the_brokers(written, writer, topic, partition):
    ours = (written.b if writer == "serve" else written.c) / f"{topic}-{partition}"
    problems = compare_partition(ours, written.a / f"{topic}-{partition}",
                                 topic_id=writer == "serve")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("writer", ["serve", "produce"])
def test_log_dir_checkpoints_are_the_brokers(written, writer):
    ours_dir = written.b if writer == "serve" else written.c
    for name in CHECKPOINTS:
        if writer == "produce" and name == "replication-offset-checkpoint":
            continue  # no high watermark offline
        theirs = checkpoint(written.a / name)
        ours = checkpoint(ours_dir / name)
        keys = [k for k in theirs if k[0] in TOPICS]
        assert {k: ours.get(k) for k in keys} == {k: theirs[k] for k in keys}, name


def test_read_committed_stops_at_the_open_transaction(written):
    """The committed transaction's two records, not the open one's: serve answers the
    read_committed fetch as the broker does (offsets 0 and 1; the marker is offset 2,
    the open transaction starts at 3, the last stable offset)."""
    seen = {k: [(r["offset"], r["value"]) for r in v] for k, v in written.open_txn.items()}
    assert seen["broker"] == [(0, b"value 0 "), (1, b"value 1 " + b"x" * 40)]
    assert seen["serve"] == seen["broker"]


# -- suite 3: the broker opens what kafkalog wrote ------------------------------------------------

def _write_checkpoint(path: Path, entries: dict[tuple[str, int], int]) -> None:
    """A log directory checkpoint as CheckpointFile writes it: version 0, the count, one
    ``topic partition offset`` line each."""
    lines = ["0", str(len(entries))] + [f"{t} {p} {o}" for (t, p), o in entries.items()]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(path)


def _tear_and_recover(c: Path, root: Path) -> Path:
    """A copy of (c) after a crash mid-append (every partition's last segment ends in the
    first half of a copy of its last batch, and no clean-shutdown marker), repaired by
    ``kafkalog recover --truncate``, each topic with its index interval."""
    d = root / "recovered"
    shutil.copytree(c, d)
    (d / ".kafka_cleanshutdown").unlink(missing_ok=True)
    for t, (n, configs) in TOPICS.items():
        for p in range(n):
            last = max((d / f"{t}-{p}").glob("*.log"))
            data = last.read_bytes()
            batches = list(FileRecords(data).batches())
            tail = data[batches[-1].position:]
            last.write_bytes(data + tail[:len(tail) // 2])
        r = run_cli_inprocess(
            "recover", "--truncate", "--no-quarantine", "--index-interval-bytes",
            str(configs.get("index.interval.bytes", 4096)),
            *[str(d / f"{t}-{p}") for p in range(n)])
        assert r.returncode == 0, r.stdout + r.stderr
    return d


#: what the broker logs when it repairs a log it loads (LogLoader, Kafka 4.4: a swap file
#: recovered, a segment or index deleted or rebuilt, a segment recovered or truncated;
#: "runcat": Truncating and truncating alike)
REPAIRS = ("interrupted swap", "Recovering file", "Deleting segment", "orphaned index",
           "Could not find offset index", "corrupted index", "Deleting all segments",
           "Recovering unflushed segment", "Found invalid offset", "Corruption found",
           "as part of log recovery", "runcat")


def _about(lines: list[str], topic: str, partition: int, topic_id: str) -> list[str]:
    """The restart's lines about partition ``topic-partition`` alone (a line listing
    several partitions, e.g. the fetchers removed, is about none), each without its time
    stamp, with the partition (``topic-partition``, ``topic=T, partition=P``) as ``<p>``,
    its topic id as ``<topic id>``, durations as ``N ms`` and the load's progress
    (``52/95 completed``) as ``N/M``."""
    name = f"{topic}-{partition}"
    mention = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])"
                         rf"|topic={re.escape(topic)}, partition={partition}(?!\d)")
    out = []
    for line in lines:
        if (name in line or f"topic={topic}," in line) and "Set(" not in line \
                and mention.search(line):
            text = mention.sub("<p>", line.split("] ", 1)[-1]).replace(topic_id, "<topic id>")
            text = re.sub(r"\d+ ?ms\b", "N ms", text)
            out.append(re.sub(r"\d+/\d+ completed", "N/M completed", text))
    return sorted(out)


@dataclass
class Reopened:
    acks: list[dict]                  # (a)'s acks
    sources: dict[str, Path]          # writer -> the log directory its partitions came from
    log_lines: list[str]              # the broker's log lines of its restart
    records: dict[str, list[dict]]    # isolation level -> records of every topic
    placed_files: dict[str, dict]     # writer -> {(topic, partition): {file: bytes}}
    after_files: dict[str, dict]      # the same files after the broker ran
    topic_ids: dict[str, str]         # topic -> the broker's topic id


def _sealed_files(d: Path) -> dict[str, bytes]:
    """The files of a partition's segments before its active one (what no broker that
    loads the log has a reason to touch)."""
    bases = sorted(int(f.stem) for f in d.glob("*.log"))
    sealed = {f"{b:020d}" for b in bases[:-1]}
    return {f.name: f.read_bytes() for f in sorted(d.iterdir())
            if f.is_file() and f.stem in sealed and f.suffix in (".log", ".index", ".timeindex")}


@pytest.fixture(scope="module")
def reopened(written, tmp_path_factory) -> Reopened:
    broker = written.broker
    sources = {"serve": written.b, "produce": written.c,
               "recover": _tear_and_recover(written.c, tmp_path_factory.mktemp("recover"))}
    cps = {name: checkpoint(broker.log_dir / name) for name in CHECKPOINTS}
    placed_files: dict[str, dict] = {}
    for writer, src in sources.items():
        src_cps = {name: checkpoint(src / name) for name in CHECKPOINTS}
        for t, (n, _) in TOPICS.items():
            target = placed(writer, t)
            topic_id = broker.topic_id(target)
            for p in range(n):
                dst = broker.log_dir / f"{target}-{p}"
                shutil.rmtree(dst)
                shutil.copytree(src / f"{t}-{p}", dst)
                (dst / "partition.metadata").write_text(f"version: 0\ntopic_id: {topic_id}\n")
                leo = src_cps["recovery-point-offset-checkpoint"][(t, p)]
                for name in CHECKPOINTS:
                    entry = src_cps[name].get((t, p))
                    if entry is None and name == "replication-offset-checkpoint":
                        entry = leo  # no high watermark offline: every record was acked
                    if entry is None:  # a log start at the first segment is not listed
                        cps[name].pop((target, p), None)
                    else:
                        cps[name][(target, p)] = entry
                placed_files.setdefault(writer, {})[(t, p)] = _sealed_files(dst)
    for name, entries in cps.items():
        _write_checkpoint(broker.log_dir / name, entries)
    seen = broker.server_log.stat().st_size
    broker.start()
    names = ",".join([*TOPICS, *(placed(w, t) for w in sources for t in TOPICS)])
    records = {iso: java_consume(broker.bootstrap, names, iso)
               for iso in ("read_uncommitted", "read_committed")}
    broker.stop()
    # the lines of the whole run, start to stop: a partition's leadership may be logged
    # after "Kafka Server started"
    with open(broker.server_log, "rb") as f:
        f.seek(seen)
        log_lines = f.read().decode(errors="replace").splitlines()
    after = {w: {(t, p): _sealed_files(broker.log_dir / f"{placed(w, t)}-{p}")
                 for (t, p) in files} for w, files in placed_files.items()}
    topic_ids = {name: broker.topic_id(name) for name in
                 [*TOPICS, *(placed(w, t) for w in sources for t in TOPICS)]}
    return Reopened(written.acks, sources, log_lines, records, placed_files, after, topic_ids)


@pytest.mark.parametrize("writer", PLACED)
def test_broker_repairs_nothing_kafkalog_wrote(reopened, writer):
    """The broker's restart says of each partition kafkalog wrote what it says of its own
    partition of the same records (the oracle: its own files, loaded in the same restart),
    and neither names a repair (:data:`REPAIRS`); each was loaded ("Completed load of
    Log")."""
    for t, p in _partitions():
        own = _about(reopened.log_lines, t, p, reopened.topic_ids[t])
        ours = _about(reopened.log_lines, placed(writer, t), p,
                      reopened.topic_ids[placed(writer, t)])
        assert any("Completed load of" in line for line in own), own
        assert ours == own, f"{placed(writer, t)}-{p}"
        repairs = [line for line in own if any(w in line for w in REPAIRS)]
        assert not repairs, repairs


def _comparable(r: dict) -> tuple:
    ts = 0 if r["timestamp"] >= CLOCK_FLOOR else r["timestamp"]
    return (r["partition"], r["offset"], ts, r["timestampType"], r["leaderEpoch"], r["key"],
            r["value"], tuple(r["headers"]))


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
@pytest.mark.parametrize("writer", PLACED)
def test_broker_serves_every_record_kafkalog_wrote(reopened, writer, isolation):
    """Kafka's Java consumer reads the same records from the directories kafkalog wrote
    as from the broker's own: offsets, timestamps (the leader's LogAppendTime stamps
    aside), keys, values, headers, leader epochs; read_committed leaves out the aborted
    transaction."""
    by_topic: dict[str, list] = {}
    for r in reopened.records[isolation]:
        by_topic.setdefault(r["topic"], []).append(_comparable(r))
    for t in TOPICS:
        assert by_topic.get(placed(writer, t)) == by_topic[t], t
    expected = sum(1 for a in reopened.acks if "offset" in a)
    if isolation == "read_committed":  # the aborted transaction's records are not read
        expected -= _aborted_sends()
    assert sum(len(by_topic[t]) for t in TOPICS) == expected


def _aborted_sends() -> int:
    """The spec's sends between a ``begin`` and an ``abort``."""
    n = 0
    for run in producer_runs():
        pending = 0
        for step in run["steps"]:
            if step["op"] == "begin":
                pending = 0
            elif step["op"] == "send":
                pending += 1
            elif step["op"] == "abort":
                n += pending
    return n


@pytest.mark.parametrize("writer", PLACED)
def test_sealed_segments_untouched(reopened, writer):
    """After the broker loaded, served and closed them, the segments before the active
    one are byte for byte what kafkalog wrote (no index was rebuilt, no log truncated)."""
    assert reopened.after_files[writer] == reopened.placed_files[writer]


def test_recover_gives_back_the_brokers_files(written, reopened):
    """``kafkalog recover --truncate`` on (c) with a torn last batch gives back, file for
    file, what the broker wrote ((a), after suite 2's normalisations): the torn bytes cut,
    the active segment's indexes rebuilt to the broker's bytes, the snapshots and
    checkpoints as they were. (The restart above trusts a log directory shut down cleanly
    and reads no segment's tail again: this is what shows the repair whole.)"""
    recovered = reopened.sources["recover"]
    problems = [problem for t, p in _partitions() for problem in compare_partition(
        recovered / f"{t}-{p}", written.a / f"{t}-{p}", topic_id=False)]
    assert not problems, "\n".join(problems)
    for name in ("recovery-point-offset-checkpoint", "log-start-offset-checkpoint"):
        theirs = checkpoint(written.a / name)
        keys = [k for k in theirs if k[0] in TOPICS]
        assert {k: checkpoint(recovered / name).get(k) for k in keys} == \
            {k: theirs[k] for k in keys}, name
