"""describe: totals against dump-segment and CATALOG.md, and the broker's offsets."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from kafkalog_read_testkit import CORPUS, random_batches, write_partition

from kafkalog_cli.format.builder import build_legacy_message, build_legacy_wrapper
from kafkalog_cli.ops.describe import describe
from kafkalog_cli.ops.dump import DumpOptions, dump
from kafkalog_cli.storage.checkpoints import format_offset_checkpoint
from kafkalog_cli.storage.dir_files import (
    write_clean_shutdown,
    write_meta_properties,
    write_partition_metadata,
)
from kafkalog_cli.storage.files import LOG_DIR, TopicPartition, classify_dir
from kafkalog_cli.storage.lock import LogDirLock

WT = Path(__file__).resolve().parents[2]
corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus absent")


def _dump_totals(pdir: Path) -> tuple[int, int]:
    batches = records = 0
    for ev in dump([pdir], DumpOptions(deep_iteration=True)):
        if ev["type"] == "batch":
            batches += 1
        elif ev["type"] == "record":
            records += 1
    return batches, records


@corpus
@pytest.mark.corpus
def test_corpus_totals_equal_dump_and_catalog():
    res = describe([CORPUS])
    parts = res.partitions
    assert len(parts) >= 170
    for p in parts:
        if p.bytes:
            assert (p.batches, p.records) == _dump_totals(Path(p.path)), p.path
        assert p.invalid_bytes == 0 and not p.errors, (p.path, p.errors)
    text = (CORPUS / "CATALOG.md").read_text()
    m = re.search(r"(\d+) batches, (\d+) records, (\d+) bytes", text)
    assert (sum(p.batches for p in parts), sum(p.records for p in parts),
            sum(p.bytes for p in parts)) == tuple(int(x) for x in m.groups())
    # per segment file rows of CATALOG.md, summed per partition directory
    per_dir: dict[str, list[int]] = {}
    for row in re.finditer(r"^\| `([^`]+\.log)` \| \d+ \| (\d+) \| [^|]* \| [^|]* \| (\d+) \|",
                           text, re.M):
        d = str((CORPUS / row.group(1)).parent)
        acc = per_dir.setdefault(d, [0, 0])
        acc[0] += int(row.group(2))
        acc[1] += int(row.group(3))
    by_path = {p.path: p for p in parts}
    assert per_dir
    for d, (b, r) in per_dir.items():
        assert (by_path[d].batches, by_path[d].records) == (b, r), d


@corpus
@pytest.mark.corpus
def test_corpus_offsets_follow_the_broker():
    res = describe([CORPUS / "DonaldY__kafka-2.7.1" / "kafka-logs"])
    by = {f"{p.topic}-{p.partition}": p for p in res.partitions}
    # an empty active segment: start = end = its base offset
    assert (by["myTopic-0"].log_start_offset, by["myTopic-0"].log_end_offset) == (38, 38)
    # a first segment whose first batch is past its base offset: the broker starts at the
    # segment's base offset
    p28 = by["__consumer_offsets-28"]
    assert p28.first_offset == 1 and p28.log_start_offset == 0 and p28.log_end_offset == 3
    assert by["__consumer_offsets-39"].log_end_offset == 20
    ld = res.log_dirs[0]
    assert ld.cluster_id == "d0053poFTbGwSWThjV1DEg" and ld.node_id == 0
    assert by["myTopic-0"].producer_snapshots == 1


@corpus
@pytest.mark.corpus
def test_corpus_partition_dir_and_kraft():
    ksql = next(CORPUS.glob("ItumelengMogase*/kafka-data/_confluent-ksql-default__command_topic-0"))
    res = describe([ksql])
    assert len(res.log_dirs) == 1 and len(res.partitions) == 1
    p = res.partitions[0]
    assert p.control_batches == 1 and p.transactional_batches >= 2
    assert res.log_dirs[0].directory_id is not None  # KRaft meta.properties v1
    assert classify_dir(CORPUS / "dipendrasaini__kafka-learnning-series" / "tmp" /
                        "kafka-logs-2") == LOG_DIR


def _log_dir(tmp_path: Path) -> Path:
    ld = tmp_path / "data"
    rng = random.Random(7)
    write_partition(ld / "orders-0", random_batches(rng, n_batches=60), segment_bytes=2000)
    write_partition(ld / "orders-1", random_batches(rng, n_batches=5, start_offset=100),
                    bases=[90])
    (ld / "orders-1" / "00000000000000000200.log").write_bytes(b"")  # empty active segment
    legacy = (build_legacy_message(0, b"k", b"v", magic=1, timestamp=5)
              + build_legacy_wrapper(1, [(6, None, b"a"), (7, None, b"b"), (8, b"c", b"c")],
                                     magic=1, compression_type=1)
              + build_legacy_message(4, None, b"z", magic=0))
    (ld / "old-0").mkdir(parents=True)
    (ld / "old-0" / "00000000000000000000.log").write_bytes(legacy + b"\0\0\0")
    write_meta_properties(ld, cluster_id="c1", node_id=4, directory_id="AAAAAAAAAAAAAAAAAAAAAQ")
    write_clean_shutdown(ld, 17)
    write_partition_metadata(ld / "orders-0", "AAAAAAAAAAAAAAAAAAAAAg")
    (ld / "log-start-offset-checkpoint").write_text(
        format_offset_checkpoint({TopicPartition("orders", 1): 102}))
    (ld / "recovery-point-offset-checkpoint").write_text(
        format_offset_checkpoint({TopicPartition("orders", 0): 10}))
    (ld / "orders-0" / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n3 5\n")
    (ld / "orders-0" / "00000000000000000010.snapshot").write_bytes(b"")
    return ld


def test_generated_log_dir(tmp_path):
    ld = _log_dir(tmp_path)
    with LogDirLock(ld):
        res = describe([ld])
        assert res.log_dirs[0].locked
    assert not describe([ld]).log_dirs[0].locked
    d = res.to_dict()["logDirs"][0]
    assert (d["clusterId"], d["nodeId"], d["directoryId"], d["cleanShutdown"],
            d["brokerEpoch"]) == ("c1", 4, "AAAAAAAAAAAAAAAAAAAAAQ", True, 17)
    by = {(t["topic"], p["partition"]): p for t in d["topics"] for p in t["partitions"]}
    o0 = by[("orders", 0)]
    assert o0["segments"] > 3 and o0["topicId"] == "AAAAAAAAAAAAAAAAAAAAAg"
    assert o0["batches"] == 60 and o0["logStartOffset"] == 0
    assert o0["records"] == _dump_totals(ld / "orders-0")[1]
    assert o0["logEndOffset"] == o0["records"]
    assert o0["recoveryPoint"] == 10 and o0["recoveryPointLag"] == o0["logEndOffset"] - 10
    assert o0["leaderEpochs"] == [{"epoch": 0, "startOffset": 0}, {"epoch": 3, "startOffset": 5}]
    assert o0["producerSnapshots"] == 1 and o0["codecs"] == ["none"]
    assert o0["firstTimestamp"] <= o0["maxTimestamp"] and o0["lastTimestamp"] <= o0["maxTimestamp"]
    o1 = by[("orders", 1)]
    assert o1["logStartOffset"] == 102  # the checkpoint moved past the first segment's base
    assert o1["logEndOffset"] == 200 and o1["segments"] == 2 and o1["firstOffset"] == 100
    old = by[("old", 0)]
    assert (old["batches"], old["records"]) == (3, 5)  # the gzip wrapper holds 3
    assert old["codecs"] == ["none", "gzip"] and old["magics"] == [0, 1]
    assert old["invalidBytes"] == 3 and old["logEndOffset"] == 5
    assert not res.ok


def test_cli_json_and_text(tmp_path):
    ld = _log_dir(tmp_path)
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "describe", str(ld / "orders-0"),
                        "-o", "json"], cwd=WT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    (only,) = doc["logDirs"]
    assert only["logDir"] == str(ld)
    assert [t["topic"] for t in only["topics"]] == ["orders"]
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "describe", str(ld), "-o",
                        "text"], cwd=WT, capture_output=True, text=True)
    assert r.returncode == 1  # old-0 has invalid bytes
    assert "orders-1" in r.stdout and "3 invalid bytes" in r.stdout


def test_not_kafka(tmp_path):
    (tmp_path / "x").mkdir()
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "describe", str(tmp_path / "x")],
                       cwd=WT, capture_output=True, text=True)
    assert r.returncode == 3 and "no log directory" in r.stderr



def test_negative_magic_is_listed_not_a_crash(tmp_path):
    """A batch whose magic byte is 0x80..0xFF is a legacy batch with a negative magic
    (Kafka reads a signed byte): describe lists the magic and goes on."""
    from kafkalog_testkit import raw_batch, raw_record

    d = tmp_path / "negmagic-0"
    d.mkdir()
    good = raw_batch(0, [raw_record(0, 0, b"k", b"v")])
    bad = bytearray(raw_batch(1, [raw_record(0, 0, b"k", b"v")]))
    bad[16] = 0xFF
    (d / "00000000000000000000.log").write_bytes(good + bytes(bad))
    (p,) = [p for t in describe([d]).to_dict()["logDirs"][0]["topics"] for p in t["partitions"]]
    assert p["magics"] == [-1, 2] and p["batches"] == 2


def test_partition_dir_with_a_name_a_broker_refuses(tmp_path):
    """A partition copied under another name (``backup``) is still summarised, as
    partition -1, but the name is an error: UnifiedLog.parseTopicPartitionName refuses
    it and the broker takes the log directory offline."""
    import shutil

    src = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "plain-0"
    d = tmp_path / "backup"
    shutil.copytree(src, d)
    res = describe([d])
    (p,) = [p for ld in res.log_dirs for t in ld.topics for p in t.partitions]
    assert (p.topic, p.partition) == ("backup", -1) and p.records > 0
    assert p.errors == [f"{d}: the directory name is not in the form of <topic>-<partition> "
                        "(a broker refuses to load it)"]
    assert not res.ok
    ok = describe([src])
    assert ok.ok
