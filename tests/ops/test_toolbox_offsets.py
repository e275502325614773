"""``get-offsets``, ``delete-records`` and ``describe --log-dirs-json`` on copies of real
broker directories. Expected offsets are computed here with kafka-python's batch reader
(first/last offsets, timestamps), sizes with ``os.stat``; the tools' texts are Kafka
4.4.0's (GetOffsetShell, DeleteRecordsCommand, LogDirsCommand), checked on a 4.4.0 broker.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from kafkalog_testkit import run_cli_inprocess as cli

MULTI = "dipendrasaini__kafka-learnning-series/tmp/kafka-logs"


def _batches(partition_dir: Path):
    from kafka.record import MemoryRecords

    for f in sorted(partition_dir.glob("*.log")):
        mr = MemoryRecords(f.read_bytes())
        while (b := mr.next_batch()) is not None:
            yield list(b)


def _records(partition_dir: Path):
    for b in _batches(partition_dir):
        yield from b


@pytest.fixture(scope="module")
def multi(corpus_root, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("getoffsets") / "logs"
    shutil.copytree(corpus_root / MULTI, d)
    return d


def _end_offset(partition_dir: Path) -> int:
    """The offset after the last batch, from the batch headers (kafka-python)."""
    from kafka.record import MemoryRecords

    last = None
    for f in sorted(partition_dir.glob("*.log")):
        mr = MemoryRecords(f.read_bytes())
        while (b := mr.next_batch()) is not None:
            last = b.base_offset + b.last_offset_delta
    return last + 1


@pytest.mark.corpus
@pytest.mark.slow
def test_get_offsets_every_time(multi):
    recs = {p: list(_records(multi / f"invoice-{p}")) for p in (0, 1)}
    latest = cli("get-offsets", str(multi), "--topic", "invoice")
    assert latest.returncode == 0, latest.stderr
    assert latest.stdout == "".join(f"invoice:{p}:{_end_offset(multi / f'invoice-{p}')}\n"
                                    for p in range(5))
    for t in ("-2", "earliest", "-4", "earliest-local"):
        r = cli("get-offsets", str(multi), "--topic", "invoice", "--time", t)
        assert r.stdout == "".join(f"invoice:{p}:0\n" for p in range(5))
    # no tiered storage: -1 answers, which the tool leaves out
    for t in ("-5", "latest-tiered", "-6"):
        r = cli("get-offsets", str(multi), "--topic", "invoice", "--time", t)
        assert (r.returncode, r.stdout) == (0, "")
    # max-timestamp: the first record holding the partition's largest timestamp
    r = cli("get-offsets", str(multi), "--topic-partitions", "invoice:0-2", "--time", "-3")
    want = []
    for p in (0, 1):
        best = max(r_.timestamp for r_ in recs[p])
        want.append(f"invoice:{p}:{next(x.offset for x in recs[p] if x.timestamp == best)}")
    assert r.stdout.splitlines() == want
    # a timestamp: the first record at or after it
    ts = recs[0][len(recs[0]) // 2].timestamp
    r = cli("get-offsets", str(multi), "--topic", "inv.*", "--partitions", "0", "--time",
            str(ts), "-o", "json")
    got = json.loads(r.stdout)["offsets"]
    first = next(x for x in recs[0] if x.timestamp >= ts)
    assert got == [{"topic": "invoice", "partition": 0, "offset": first.offset,
                    "timestamp": first.timestamp}]


@pytest.mark.corpus
def test_get_offsets_filters_and_sorting(multi, corpus_root):
    internal = corpus_root / "DanielMorales9__kafkafun/data/kafka"
    r = cli("get-offsets", str(internal))
    lines = r.stdout.splitlines()
    # TopicPartition.toString order (text): __consumer_offsets-13 sorts before -2
    assert lines == sorted(lines, key=lambda s: "-".join(s.rsplit(":", 2)[:2]))
    names = [x.rsplit(":", 1)[0] for x in lines]
    assert names[:4] == ["__consumer_offsets:0", "__consumer_offsets:1",
                         "__consumer_offsets:10", "__consumer_offsets:13"]
    assert names.index("__consumer_offsets:45") < names.index("__consumer_offsets:5")
    for line in lines:
        t, p, off = line.rsplit(":", 2)
        assert int(off) == list(_records(internal / f"{t}-{p}"))[-1].offset + 1
    r = cli("get-offsets", str(internal), "--exclude-internal-topics")
    assert r.stdout and "__consumer_offsets" not in r.stdout
    r = cli("get-offsets", str(multi), "--topic-partitions", "invoice:3-")
    assert [x.split(":")[1] for x in r.stdout.splitlines()] == ["3", "4"]
    r = cli("get-offsets", str(multi), "--topic-partitions", "invoice:-1,'invoice':4")
    assert [x.split(":")[1] for x in r.stdout.splitlines()] == ["0", "4"]
    r = cli("get-offsets", str(multi), "--topic", "nomatch")
    assert r.returncode == 1
    assert "Could not match any topic-partitions with the specified filters" in r.stderr
    r = cli("get-offsets", str(multi), "--topic", "invoice", "--time", "soon")
    assert r.returncode == 2 and "Malformed time argument soon." in r.stderr
    r = cli("get-offsets", str(multi), "--topic", "x", "--topic-partitions", "x")
    assert r.returncode == 2 and "cannot be used with --topic" in r.stderr


def _digest(d: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(d.iterdir()) if p.is_file()}


@pytest.mark.corpus
@pytest.mark.slow
def test_delete_records_moves_the_start_deletes_segments_and_undoes(corpus_root, tmp_path):
    log_dir = tmp_path / "logs"
    shutil.copytree(corpus_root / MULTI, log_dir)
    part = log_dir / "invoice-0"
    before = _digest(part)
    ckpt = (log_dir / "log-start-offset-checkpoint").read_bytes()
    bases = sorted(int(p.name[:20]) for p in part.glob("*.log"))
    assert len(bases) == 4
    target = bases[2] + 5  # inside the third segment: the first two are wholly below it
    spec = tmp_path / "d.json"
    spec.write_text(json.dumps({"partitions": [
        {"topic": "invoice", "partition": 0, "offset": target},
        {"topic": "invoice", "partition": 1, "offset": 10 ** 9},
        {"topic": "__consumer_offsets", "partition": 0, "offset": 0}], "version": 1}))
    r = cli("delete-records", str(log_dir), "--offset-json-file", str(spec))
    assert r.returncode == 1
    leo1 = list(_records(log_dir / "invoice-1"))[-1].offset + 1
    assert r.stdout.splitlines() == [
        "Executing records delete operation", "Records delete operation completed:",
        "partition: __consumer_offsets-0\terror: org.apache.kafka.common.errors."
        "InvalidTopicException: The request attempted to perform an operation on an invalid "
        "topic.",
        f"partition: invoice-0\tlow_watermark: {target}",
        "partition: invoice-1\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: "
        "The requested offset is not within the range of offsets maintained by the server."]
    assert (f"Cannot increment the log start offset to {10 ** 9} of partition invoice-1 since "
            f"it is larger than the high watermark {leo1}") in r.stderr
    assert sorted(int(p.name[:20]) for p in part.glob("*.log")) == bases[2:]
    assert f"invoice 0 {target}" in (log_dir / "log-start-offset-checkpoint").read_text()
    r = cli("read", str(log_dir), "-t", "invoice", "-p", "0", "--max-records", "1",
            "--property", "print.offset=true")
    assert r.stdout.startswith(f"Offset:{target}\t")
    r = cli("get-offsets", str(log_dir), "--topic", "invoice", "--partitions", "0", "--time",
            "-2")
    assert r.stdout == f"invoice:0:{target}\n"
    # the quarantine gives every byte back
    (session,) = (part / ".kafkalog-quarantine").iterdir()
    r = cli("recover", "--undo", str(session))
    assert r.returncode == 0, r.stderr
    assert _digest(part) == before
    assert (log_dir / "log-start-offset-checkpoint").read_bytes() == ckpt


def test_delete_records_refuses_the_tools_bad_files(tmp_path):
    (tmp_path / "logs").mkdir()
    for text, why in (("{", "The input string is not a valid JSON"),
                      ('{"version": 2, "partitions": []}', "Not supported version field value 2"),
                      ('{"version": 1}', "Missing partitions field"),
                      ('{"partitions": [{"topic": "t", "partition": 0, "offset": 1},'
                       '{"topic": "t", "partition": 0, "offset": 2}]}',
                       "Offset json file contains duplicate topic partitions: t-0")):
        f = tmp_path / "d.json"
        f.write_text(text)
        r = cli("delete-records", str(tmp_path / "logs"), "--offset-json-file", str(f))
        assert r.returncode == 2 and why in r.stderr, (text, r.stderr)


@pytest.mark.corpus
def test_log_dirs_json(corpus_root):
    log_dir = corpus_root / "DonaldY__kafka-2.7.1/kafka-logs"
    r = cli("describe", str(log_dir), "--log-dirs-json")
    assert r.returncode == 0, r.stderr
    head1, head2, body = r.stdout.splitlines()
    assert head1 == "Querying brokers for log directories information"
    assert head2 == "Received log directory information from brokers 0"
    assert body.startswith('{"brokers":[{"broker":0,"logDirs":[{"partitions":[')
    assert body.endswith(f'"error":null,"logDir":"{log_dir}"}}]}}],"version":1}}')
    obj = json.loads(body)
    parts = obj["brokers"][0]["logDirs"][0]["partitions"]
    want = {p.name: sum(f.stat().st_size for f in p.glob("*.log"))
            for p in log_dir.iterdir() if p.is_dir()}
    assert {p["partition"]: p["size"] for p in parts} == want
    assert all(list(p) == ["partition", "size", "offsetLag", "isFuture"] for p in parts)
    assert {(p["offsetLag"], p["isFuture"]) for p in parts} == {(0, False)}
    r = cli("describe", str(log_dir), "-o", "kafka-log-dirs", "--topic-list", "myTopic,nope")
    (obj,) = [json.loads(x) for x in r.stdout.splitlines()[2:]]
    assert [p["partition"] for p in obj["brokers"][0]["logDirs"][0]["partitions"]] == [
        "myTopic-0"]


def test_log_dirs_json_future_delete_and_stray_replicas(tmp_path):
    """LogManager.loadLog: a ``-future`` directory is the future replica of a move between
    log directories (listed, isFuture true, offsetLag = the current replica's log end
    offset minus its own: ReplicaManager.getLogEndOffsetLag, -1 without a current
    replica); ``-delete`` and ``-stray`` ones are in no map DescribeLogDirs reads."""
    from kafkalog_testkit import raw_batch, raw_record, write_partition

    def batch(base, n):
        return raw_batch(base, [raw_record(i, 0, None, b"v") for i in range(n)])

    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        (d / "meta.properties").write_text("version=1\nnode.id=3\ncluster.id=c\n")
    cur = write_partition(a, "t-0", batch(0, 7))                    # log end offset 7
    fut = write_partition(b, "t-0.0123456789abcdef0123456789abcdef-future", batch(0, 4))
    # a future replica without a current one (an id other than 32 hex: any \S+ is one)
    lone = write_partition(b, "u-1.x-future", batch(0, 2))
    write_partition(b, "t-1.0123456789abcdef0123456789abcdef-delete", batch(0, 3))
    write_partition(b, "t-2.0123456789abcdef0123456789abcdef-stray", batch(0, 3))
    r = cli("describe", str(a), str(b), "--log-dirs-json")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1] == "Received log directory information from brokers 3"
    obj = json.loads(r.stdout.splitlines()[2])
    got = {ld["logDir"]: {p["partition"]: (p["size"], p["offsetLag"], p["isFuture"])
                          for p in ld["partitions"]}
           for ld in obj["brokers"][0]["logDirs"]}
    size = lambda d: (d / "00000000000000000000.log").stat().st_size  # noqa: E731
    assert got == {str(a): {"t-0": (size(cur), 0, False)},
                   str(b): {"t-0": (size(fut), 7 - 4, True), "u-1": (size(lone), -1, True)}}
    # the other commands read the live replica only (the broker serves no other)
    r = cli("get-offsets", str(a), str(b), "--topic", "t")
    assert r.stdout == "t:0:7\n", r.stderr


def test_delete_records_refuses_a_compact_topic_of_serves_configs(tmp_path):
    """Partition.deleteRecordsOnLeader (4.4.0): compact without delete is POLICY_VIOLATION,
    an empty policy is not; here the overrides are those ``kafkalog serve`` stored (the
    KRaft metadata log's are compared with the broker in
    tests/kafka_bench/test_delete_records_policy.py). A dynamic broker config that is no
    number does not stop it."""
    from kafkalog_testkit import raw_batch, raw_record, write_partition

    ld = tmp_path / "logs"
    for t in ("c", "e"):
        write_partition(ld, f"{t}-0", raw_batch(0, [raw_record(i, 0, b"k", b"v")
                                                    for i in range(3)]))
    (ld / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=x\n")
    (ld / "kafkalog-serve.json").write_text(json.dumps({
        "version": 1, "topicConfigs": {"c": {"cleanup.policy": "compact"},
                                       "e": {"cleanup.policy": ""}},
        "brokerConfigs": {"": {"log.retention.hours": "x"}}}))
    spec = tmp_path / "d.json"
    spec.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": 0, "offset": 1} for t in ("c", "e")]}))
    r = cli("delete-records", str(ld), "--offset-json-file", str(spec))
    assert r.returncode == 1
    assert sorted(r.stdout.splitlines()[2:]) == [
        "partition: c-0\terror: org.apache.kafka.common.errors.PolicyViolationException: "
        "Request parameters do not satisfy the configured policy.",
        "partition: e-0\tlow_watermark: 1"]
    assert r.stderr.startswith("c-0: Records of partition c-0 can not be deleted due to the "
                               "configured policy\n")
