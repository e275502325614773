"""``kafkalog copy``: partitions copied as their broker wrote them. Oracles: the source
files themselves (a copied .log must be byte-identical), kafka-python's reader for the
offsets and records of a range, hand-computed offsets of the fixtures, and Apache Kafka
4.4.0's broker (the bench): files it wrote, copied, must come out equal."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from kafkalog_testkit import run_cli_inprocess as cli

from kafkalog_cli.ops.copy import copy
from kafkalog_cli.storage.dir_files import read_partition_metadata

SEG0 = "00000000000000000000"


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()}


def _kp_records(part: Path) -> list[tuple[int, int, bytes | None, bytes | None]]:
    """(offset, timestamp, key, value) of every record of a partition, by kafka-python."""
    from kafka.record.memory_records import MemoryRecords

    out = []
    for log in sorted(part.glob("*.log")):
        mr = MemoryRecords(log.read_bytes())
        while mr.has_next():
            b = mr.next_batch()
            out += [(r.offset, r.timestamp, r.key, r.value) for r in b]
    return out


def test_whole_partitions_are_byte_identical(tmp_path, fixtures_root):
    """multi-0 (3 segments), txn-0 (a commit and an abort), legacy-v1-0 (v1 wrappers),
    idempotent-0 and lz4-0: every source file comes out byte for byte (the indexes are
    the source's, which verify; the rebuilt ones are the same here), plus
    partition.metadata, the producer snapshots, .txnindex and leader epochs a broker
    has, and the log directory's checkpoints; exit 0."""
    parts = ["multi-0", "txn-0", "legacy-v1-0", "idempotent-0", "lz4-0"]
    out = tmp_path / "out"
    r = cli("copy", *(str(fixtures_root / p) for p in parts), "--to", str(out), "-o", "json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert [p["topic"] for p in res["partitions"]] == [p[:-2] for p in parts]
    for p in parts:
        src, dst = _files(fixtures_root / p), _files(out / p)
        assert {k: v for k, v in dst.items() if k in src} == src, p
    extra = set(_files(out / "txn-0")) - set(_files(fixtures_root / "txn-0"))
    assert extra == {"partition.metadata", f"{SEG0}.txnindex", "00000000000000000007.snapshot",
                     "leader-epoch-checkpoint"}
    # the aborted transaction of txn-0: producer 5000, offsets 4..6 (its ABORT marker)
    d = cli("dump-segment", str(out / "txn-0" / f"{SEG0}.txnindex"), "-o", "kafka")
    assert "producerId: 5000 firstOffset: 4 lastOffset: 6" in d.stdout
    # leader epochs 0/1/2 of multi-0's segments, from the batches (the fixture has no file)
    assert (out / "multi-0" / "leader-epoch-checkpoint").read_text() == \
        "0\n3\n0 0\n1 88\n2 164\n"
    assert sorted(p.name for p in (out / "multi-0").glob("*.snapshot")) == [
        "00000000000000000088.snapshot", "00000000000000000164.snapshot",
        "00000000000000000216.snapshot"]
    ckpt = (out / "recovery-point-offset-checkpoint").read_text().splitlines()
    assert ckpt[:2] == ["0", "5"] and "multi 0 216" in ckpt and "txn 0 7" in ckpt
    assert (out / ".kafka_cleanshutdown").exists() and not (out / ".lock").exists()
    assert cli("verify-index", str(out)).returncode == 0
    # a second copy never merges into the partition: refused, nothing changed
    before = _files(out / "txn-0")
    r = cli("copy", str(fixtures_root / "txn-0"), "--to", str(out))
    assert r.returncode == 1 and "txn-0 exists already" in r.stderr
    assert _files(out / "txn-0") == before
    assert not [p for p in out.iterdir() if p.name.endswith("-delete")]


def test_an_empty_last_segment_is_copied_too(tmp_path, fixtures_root):
    """A partition whose last segment is empty (rolled just before a shutdown): the copy
    has it too, with the snapshot the roll writes at its base offset."""
    src = tmp_path / "src" / "plain-0"
    shutil.copytree(fixtures_root / "plain-0", src)
    (src / "00000000000000000008.log").write_bytes(b"")
    res = copy([src], tmp_path / "out")
    assert res.partitions[0].copied.segments == 2
    out = tmp_path / "out" / "plain-0"
    assert (out / "00000000000000000008.log").read_bytes() == b""
    assert (out / "00000000000000000008.snapshot").exists()
    assert (out / f"{SEG0}.log").read_bytes() == (src / f"{SEG0}.log").read_bytes()


def test_a_range_takes_whole_batches(tmp_path, fixtures_root):
    """multi-0: batches of 4 records, segments at 0, 88 and 164. [101, 170] takes the
    batches 100..103 to 168..171; the first segment starts at its first batch (100),
    the next where the source's does (164); the log start offset is 101 (a consumer
    reads from it), the end 172. kafka-python reads the copy's records as the source's
    100..171."""
    src = fixtures_root / "multi-0"
    out = tmp_path / "out"
    res = copy([src], out, start_offset=101, end_offset=170)
    (p,) = res.partitions
    c = p.copied
    assert (c.first_offset, c.last_offset, c.log_start_offset, c.log_end_offset) == \
        (100, 171, 101, 172)
    assert sorted(x.name for x in (out / "multi-0").glob("*.log")) == [
        "00000000000000000100.log", "00000000000000000164.log"]
    assert _kp_records(out / "multi-0") == [r for r in _kp_records(src) if 100 <= r[0] <= 171]
    # the last segment cut after its second batch: a prefix of the source's
    part = (out / "multi-0" / "00000000000000000164.log").read_bytes()
    assert (src / "00000000000000000164.log").read_bytes().startswith(part)
    assert [r[0] for r in _kp_records(out / "multi-0") if r[0] >= 164] == list(range(164, 172))
    assert "multi 0 101" in (out / "log-start-offset-checkpoint").read_text()
    r = cli("read", str(out / "multi-0"), "-o", "json")
    assert [json.loads(x)["offset"] for x in r.stdout.splitlines()] == list(range(101, 172))
    # the leader epochs rebuilt from the batches (1 from 100, 2 from 164), then cut at
    # the log start offset as LeaderEpochFileCache.truncateFromStart does: 1 from 101
    assert (out / "multi-0" / "leader-epoch-checkpoint").read_text() == "0\n2\n1 101\n2 164\n"


def test_a_time_range_as_offsets_for_times(tmp_path, fixtures_root):
    """--start-timestamp / --end-timestamp: from the batch holding the first record (in
    offset order) whose timestamp is >= start, to the batch holding the last record
    before the first whose timestamp is > end; the records' timestamps read by
    kafka-python."""
    src = fixtures_root / "multi-0"
    recs = _kp_records(src)
    t_start, t_end = recs[50][1], recs[150][1]
    first = next(o for o, ts, _, _ in recs if ts >= t_start)
    after = next(o for o, ts, _, _ in recs if ts > t_end)
    res = copy([src], tmp_path / "out", start_timestamp=t_start, end_timestamp=t_end)
    (p,) = res.partitions
    assert p.copied.log_start_offset == first
    assert p.copied.first_offset == first - first % 4
    assert p.copied.last_offset == (after - 1) | 3


def test_rename_writes_a_new_topic_id(tmp_path, fixtures_root):
    """--rename OLD:NEW: the partitions of OLD come out as NEW-<n>, one new topic id for
    them all (not the source's), the same records."""
    src = tmp_path / "src"
    for n in (0, 1):
        shutil.copytree(fixtures_root / "plain-0", src / f"orders-{n}")
        (src / f"orders-{n}" / "partition.metadata").write_text(
            "version: 0\ntopic_id: 7cSN21T7T4a_vJKRsz4Srg\n")
    out = tmp_path / "out"
    r = cli("copy", str(src), "--to", str(out), "--rename", "orders:orders-replay",
            "-o", "json")
    assert r.returncode == 0, r.stderr
    ids = {read_partition_metadata(out / f"orders-replay-{n}")["topic_id"] for n in (0, 1)}
    assert len(ids) == 1 and ids != {"7cSN21T7T4a_vJKRsz4Srg"}
    assert not (out / "orders-0").exists()
    assert _kp_records(out / "orders-replay-1") == _kp_records(src / "orders-1")
    # without --rename the source's id stays
    r = cli("copy", str(src / "orders-0"), "--to", str(tmp_path / "same"))
    assert read_partition_metadata(tmp_path / "same" / "orders-0")["topic_id"] == \
        "7cSN21T7T4a_vJKRsz4Srg"


def test_refusals_leave_nothing(tmp_path, fixtures_root):
    out = tmp_path / "out"
    # a batch failing its CRC: that partition is not written (no -delete left over)
    r = cli("copy", str(fixtures_root / "plain-0"), str(fixtures_root / "corrupt-crc-0"),
            "--to", str(out))
    assert r.returncode == 1 and "corrupt-crc-0/00000000000000000000.log" in r.stderr
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["plain-0"]
    # the same topic-partition from two log directories
    other = tmp_path / "other"
    shutil.copytree(fixtures_root / "headers-0", other / "headers-0")
    r = cli("copy", str(fixtures_root / "headers-0"), str(other), "--to", str(tmp_path / "x"))
    assert r.returncode == 2 and "headers-0 is in more than one of the sources" in r.stderr
    r = cli("copy", str(fixtures_root / "headers-0"), "--to", str(tmp_path / "x"),
            "--rename", "nope:yes")
    assert r.returncode == 2 and "not among the sources" in r.stderr
    # the target's lock held: refused before anything is written
    from kafkalog_cli.storage.lock import LogDirLock

    locked = tmp_path / "locked"
    locked.mkdir()
    with LogDirLock(locked):
        r = cli("copy", str(fixtures_root / "headers-0"), "--to", str(locked))
    assert r.returncode == 1 and not (locked / "headers-0").exists()


@pytest.mark.corpus
@pytest.mark.slow
def test_corpus_log_dirs_copy_byte_identical(tmp_path, corpus_root):
    """Every partition of the real brokers' log directories (ZooKeeper era and KRaft,
    v1 and v2, lz4, compacted, transactional): every .log byte-identical, and the
    leader-epoch checkpoints, producer snapshots and partition.metadata as the broker
    wrote them; the copy verifies (verify-index) and keeps the source's cluster id."""
    from kafkalog_cli.storage.dir_files import read_meta_properties
    from kafkalog_cli.storage.files import find_log_dirs

    logs = same = 0
    for i, log_dir in enumerate(find_log_dirs(corpus_root)):
        out = tmp_path / f"t{i}"
        res = copy([log_dir], out)
        for p in res.partitions:
            src, dst = Path(p.source), p.copied.directory
            for f in src.iterdir():
                if f.suffix == ".log" or f.name in ("leader-epoch-checkpoint",
                                                   "partition.metadata") \
                        or f.suffix == ".snapshot":
                    assert (dst / f.name).read_bytes() == f.read_bytes(), f
                    logs += f.suffix == ".log"
                elif (dst / f.name).exists() and f.read_bytes() == (dst / f.name).read_bytes():
                    same += 1
        meta = read_meta_properties(log_dir)
        if meta and meta.get("cluster.id") and res.partitions:
            assert read_meta_properties(out)["cluster.id"] == meta["cluster.id"]
        if res.partitions:
            assert cli("verify-index", str(out), "-o", "json").returncode == 0, out
    assert logs == 193 and same > 100


@pytest.mark.kafka
@pytest.mark.slow
def test_a_brokers_partitions_copy_as_it_wrote_them(kafka_broker_factory, tmp_path):
    """Kafka 4.4.0 writes a partition (idempotent and transactional producers, a commit
    and an abort, lz4, several segments), stops cleanly; its partition directory copied
    comes out file for file as the broker wrote it. With its snapshots, indexes and
    .txnindex removed from the source first, the copy rebuilds them equal to the
    broker's (the append engine is the broker's)."""
    import hashlib

    from kafka_testkit import java_produce

    broker = kafka_broker_factory({"num.partitions": 1})
    # Kafka 4's smallest segment.bytes is 1 MiB: 2.5 MB of records make three segments
    broker.create_topic("cp", 1, {"segment.bytes": 1 << 20, "retention.ms": -1})
    send = {"op": "send", "topic": "cp", "partition": 0}
    steps = [{**send, "timestamp": 1_700_000_000_000 + i, "key": f"k{i}",
              "value": hashlib.sha256(b"%d" % i).hexdigest() * 16, "headers": [["h", str(i)]]}
             for i in range(2500)]
    txn = {"producer": {"transactional.id": "cp-txn", "linger.ms": "60000"}, "steps": [
        {"op": "begin"}, {**send, "value": "committed"}, {"op": "commit"},
        {"op": "begin"}, {**send, "value": "aborted"}, {"op": "flush"}, {"op": "abort"}]}
    # three producers one after the other, in one JVM
    java_produce(broker.bootstrap, {"runs": [
        {"producer": {"enable.idempotence": "true", "batch.size": "20000", "linger.ms": "5"},
         "steps": steps},
        {"producer": {"compression.type": "lz4"}, "steps": steps[:50]},
        txn]})
    broker.stop()
    src = broker.log_dir / "cp-0"
    assert len(list(src.glob("*.log"))) > 2
    out = tmp_path / "out"
    res = copy([src], out)
    assert res.ok
    theirs, ours = _files(src), _files(out / "cp-0")
    assert ours == theirs
    # the derived files rebuilt by the copy's append engine, not taken from the source
    bare = tmp_path / "bare" / "cp-0"
    shutil.copytree(src, bare)
    for p in list(bare.iterdir()):
        if p.suffix in (".snapshot", ".index", ".timeindex", ".txnindex"):
            p.unlink()
    res = copy([bare], tmp_path / "rebuilt")
    rebuilt = _files(tmp_path / "rebuilt" / "cp-0")
    for name, data in theirs.items():
        if name.endswith((".snapshot", ".txnindex", ".log")):
            assert rebuilt.get(name) == data, name
