"""read: seeking by offset and by timestamp against brute-force scans, and the bound
on bytes scanned after an index lookup."""

from __future__ import annotations

import bisect
import random
from pathlib import Path

import pytest
from kafkalog_read_testkit import CORPUS, brute_records, random_batches, write_partition

import kafkalog_cli.ops.read as read_mod
import kafkalog_cli.storage.segment as segment_mod
from kafkalog_cli.errors import OffsetOutOfRangeError
from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.ops.describe import describe
from kafkalog_cli.ops.read import (
    offset_for_timestamp,
    open_partition,
    parse_timestamp,
    read,
)

corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus absent")
INTERVAL = 1024


@pytest.fixture(scope="module")
def multi(tmp_path_factory) -> Path:
    """Several segments, compaction gaps, out-of-order timestamps, small index interval."""
    rng = random.Random(42)
    d = tmp_path_factory.mktemp("seek") / "events-0"
    return write_partition(d, random_batches(rng, n_batches=400, gap_probability=0.3,
                                             jitter=20_000),
                           segment_bytes=16_000, index_interval=INTERVAL)


def _brute_first_ts(recs, t):
    for off, ts, _ in recs:
        if ts >= t:
            return ts, off
    return None


def test_offset_every_offset(multi):
    recs = brute_records(multi)
    offsets = [r[0] for r in recs]
    assert len(list(multi.glob("*.log"))) > 5
    leo = offsets[-1] + 1
    for target in range(0, leo + 1):
        res = read(multi, offset=target, max_records=1)
        got = [r.offset for r in res.records]
        i = bisect.bisect_left(offsets, target)
        assert got == offsets[i:i + 1], target
        res.close()


def test_offset_out_of_range(multi):
    log = open_partition(multi)
    leo = read_mod.log_end_offset(log)
    with pytest.raises(OffsetOutOfRangeError):
        read(multi, offset=leo + 1)
    assert list(read(multi, offset="latest").records) == []
    first = next(read(multi, offset="earliest").records)
    assert first.offset == 0


def test_offset_seek_scans_one_interval(multi, monkeypatch):
    """Bytes of batches yielded to reach the first record: at most the gap between two
    index entries (one interval plus one batch) plus the target batch."""
    sizes = [b.size for log in multi.glob("*.log")
             for b in FileRecords(log.read_bytes()).batches()]
    max_batch = max(sizes)
    scanned = []

    class Counting(FileRecords):
        def batches(self):
            for b in super().batches():
                scanned.append(b.size)
                yield b

    rng = random.Random(1)
    recs = brute_records(multi)
    for target in rng.sample([r[0] for r in recs], 200):
        res = read(multi, offset=target, max_records=1)
        monkeypatch.setattr(segment_mod, "FileRecords", Counting)
        scanned.clear()
        (rec,) = list(res.records)
        monkeypatch.setattr(segment_mod, "FileRecords", FileRecords)
        assert rec.offset == target
        # the first batch read validates the index entry; the rest is the scan
        assert sum(scanned[1:]) <= INTERVAL + 2 * max_batch, (target, scanned)
        res.close()


def test_timestamp_matches_brute_force(multi):
    recs = brute_records(multi)
    tss = [r[1] for r in recs]
    lo, hi = min(tss), max(tss)
    rng = random.Random(3)
    log = open_partition(multi)
    targets = [rng.randint(lo - 10, hi + 10) for _ in range(300)] + [lo, hi, hi + 1, lo - 1]
    targets += rng.sample(tss, 50)
    for t in targets:
        assert offset_for_timestamp(log, t) == _brute_first_ts(recs, t), t
    log.close()
    for t in targets[:40]:
        res = read(multi, timestamp=t, max_records=1)
        exp = _brute_first_ts(recs, t)
        got = [(r.timestamp, r.offset) for r in res.records]
        assert got == ([exp] if exp else []), t
        res.close()


def test_timestamp_starts_at_log_start_offset(tmp_path):
    rng = random.Random(5)
    d = write_partition(tmp_path / "ckpt" / "t-0", random_batches(rng, n_batches=50),
                        segment_bytes=3000, index_interval=512)
    (tmp_path / "ckpt" / "log-start-offset-checkpoint").write_text("0\n1\nt 0 40\n")
    recs = brute_records(d)
    log = open_partition(d)
    assert read_mod.log_start_offset(log) == 40
    first = next(r for r in recs if r[0] >= 40)
    assert offset_for_timestamp(log, 0) == (first[1], first[0])
    with pytest.raises(OffsetOutOfRangeError):
        read(d, offset=39)


def test_parse_timestamp():
    assert parse_timestamp("1700000000000") == 1700000000000
    assert parse_timestamp("1970-01-01T00:00:01") == 1000
    assert parse_timestamp("1970-01-01T00:00:01.250Z") == 1250
    assert parse_timestamp("1970-01-01T01:00:00+01:00") == 0


@corpus
@pytest.mark.corpus
def test_corpus_timestamps_and_offsets():
    rng = random.Random(11)
    for p in describe([CORPUS]).partitions:
        if not p.records:
            continue
        d = Path(p.path)
        recs = brute_records(d)
        log = open_partition(d)
        tss = [r[1] for r in recs]
        for t in [rng.randint(min(tss) - 5, max(tss) + 5) for _ in range(8)] + tss[:1]:
            assert offset_for_timestamp(log, t) == _brute_first_ts(recs, t), (d, t)
        offsets = [r[0] for r in recs]
        for target in rng.sample(range(p.log_start_offset, p.log_end_offset + 1),
                                 min(8, p.log_end_offset - p.log_start_offset + 1)):
            i = bisect.bisect_left(offsets, target)
            res = read(d, offset=target, max_records=1)
            exp = [o for o, _, c in recs[i:] if not c][:1]
            assert [r.offset for r in res.records] == exp, (d, target)
            res.close()
        log.close()


def test_read_checks_crcs_like_a_consumer(tmp_path):
    """A batch whose CRC fails stops the read with an error naming the file and position
    (the consumer's check.crcs=true); --no-check-crcs delivers it."""
    import shutil
    import subprocess
    import sys

    from kafkalog_cli.errors import CrcMismatchError
    from kafkalog_cli.ops.read import read

    repo = Path(__file__).resolve().parents[2]
    part = tmp_path / "corrupt-crc-0"
    shutil.copytree(repo / "fixtures" / "logs" / "corrupt-crc-0", part)
    with pytest.raises(CrcMismatchError) as e:
        list(read(part).records)
    assert e.value.file.endswith(".log") and e.value.position is not None
    assert len(list(read(part, check_crcs=False).records)) == 24
    env = {"PYTHONPATH": str(repo), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "read", str(part)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "Record is corrupt" in r.stderr and "at byte" in r.stderr
    assert "Traceback" not in r.stderr


def test_negative_timestamp_is_a_usage_error():
    from kafkalog_cli.errors import InvalidArgumentError
    from kafkalog_cli.ops.read import parse_timestamp

    assert parse_timestamp("0") == 0
    with pytest.raises(InvalidArgumentError):
        parse_timestamp("-1")


# -- found by the fuzz harness: an index entry with a negative position -------------------------

@pytest.fixture
def negative_positions(fixtures_copy):
    """multi-0 with every .index position of its first segment set to -5 (a corrupt
    index: LogSegment.translateOffset clamps a lookup to the segment's start)."""
    import struct

    p = fixtures_copy / "multi-0" / "00000000000000000000.index"
    data = bytearray(p.read_bytes())
    for i in range(0, len(data), 8):
        struct.pack_into(">i", data, i + 4, -5)
    p.write_bytes(bytes(data))
    return fixtures_copy / "multi-0"


def test_seeks_through_an_index_with_negative_positions(negative_positions, fixtures_root):
    """read --offset / --timestamp and dump-segment --start-offset raised
    InvalidArgumentError ("Invalid start position -5": a usage error, exit 2) when the
    index entry looked up had a negative position; now the lookup falls back to the
    segment's start and the records are those of the intact partition."""
    from kafkalog_cli.ops.dump import DumpOptions, dump

    def records(path, **kw):
        r = read(path, max_records=5, **kw)
        try:
            return [(x.offset, x.timestamp) for x in r.records]
        finally:
            r.close()

    good = fixtures_root / "multi-0"
    for kw in ({"offset": 40}, {"offset": 87}, {"timestamp": 1_700_000_000_000 + 30}):
        assert records(negative_positions, **kw) == records(good, **kw)

    def dumped(path):
        opts = DumpOptions(deep_iteration=True, start_offset=40, end_offset=45)
        return [e["offset"] for e in dump([path], opts) if e["type"] == "record"]

    assert dumped(negative_positions) == dumped(good) == list(range(40, 46))


def test_a_directory_that_is_neither_partition_nor_log_dir(tmp_path):
    """Found by the fuzz harness: a partition directory whose only .log was renamed to a
    name that is not a segment's (a fullwidth digit) was called "a log directory: name
    the partition with --topic and --partition" - a usage error (exit 2) for what is
    not Kafka's (exit 3)."""
    from kafkalog_cli.errors import NotAKafkaFileError

    d = tmp_path / "orders-0"
    d.mkdir()
    (d / "\uff100000000000000000000.log").write_bytes(b"")
    with pytest.raises(NotAKafkaFileError, match="neither a partition directory"):
        read(d)
