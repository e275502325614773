"""Indexes and leader epochs kafkalog writes, byte for byte against the files real
brokers wrote (issue 16, test-suite gaps): a bug shared by kafkalog's recovery and its
append engine would pass a comparison of the two with each other, not this one.

Which corpus segments qualify. Since Kafka 3.8 (KAFKA-16310) ``LogSegment.append``
indexes each batch: an offset-index entry ``(batch last offset, batch position)`` once
more than ``index.interval.bytes`` were written since the last entry, with a time-index
entry ``(max timestamp so far, last offset of its batch)``; ``LogSegment.recover`` has
always used that rule, and a closed segment ends with the entry for its largest
timestamp (``onBecomeInactiveSegment`` / ``close``). A segment follows it exactly when it
was written by a leader in one broker session and:

* holds only v2 batches (a v0/v1 message set appended as a unit gets one entry for all
  its messages);
* has no offset gaps (a compacted segment is rewritten by the cleaner, which appends
  chunks of retained batches);
* has each batch's largest timestamp on its last record (or LogAppendTime): before 3.8
  the time index held the offset of the *first record* carrying the largest timestamp
  (``LogValidator``'s ``offsetOfMaxTimestamp``), the same offset only then. These
  excluded segments are from ``dipendrasaini__kafka-learnning-series`` (Kafka 3.7;
  ``tmp/kafka-logs`` is moreover a follower replica, which appended fetched chunks of
  several batches with one entry each) and two ``__consumer_offsets`` partitions of
  ``joseluisjb1990__kafka-course``;
* was not appended to across broker restarts: each shutdown's ``LogSegment.close``
  appended a time-index entry for the largest timestamp so far, and the restarted broker
  counted ``index.interval.bytes`` from 0 again. Those are listed in :data:`RESTARTED`
  (their broker entries are checked to be such shutdown entries instead).

Leader epochs: ``LeaderEpochFileCache.assign`` for each batch's ``partitionLeaderEpoch``
reproduces ``leader-epoch-checkpoint`` when the log still starts at offset 0 with no gap
(retention or compaction removes the batches that carried the first epochs) and the last
entry starts below the log end offset (a leader elected after the last batch assigns
``(epoch, log end offset)`` with no batch to carry it).
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from recovery_helpers import copy_tree

from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.recovery import plan_partition
from kafkalog_cli.storage.checkpoints import read_leader_epoch_checkpoint
from kafkalog_cli.storage.clock import ManualClock
from kafkalog_cli.storage.config import LogConfig
from kafkalog_cli.storage.leader_epoch import LeaderEpochFileCache
from kafkalog_cli.storage.recovery_scan import scan_log
from kafkalog_cli.storage.segment import WritableLogSegment

pytestmark = pytest.mark.corpus

#: segments appended to across broker restarts (see the module doc)
RESTARTED = {
    "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/"
    "__consumer_offsets-29/00000000000000000000.log",
    "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/"
    "__consumer_offsets-37/00000000000000000000.log",
    "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/"
    "_schemas-0/00000000000000000000.log",
    "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/"
    "docker-connect-configs-0/00000000000000000000.log",
    "joseluisjb1990__kafka-course/data/kafka/__consumer_offsets-27/00000000000000000000.log",
    "joseluisjb1990__kafka-course/data/kafka/__consumer_offsets-47/00000000000000000000.log",
    "joseluisjb1990__kafka-course/data/kafka/first_topic-0/00000000000000000000.log",
}


def _batches(data: bytes) -> list:
    return list(FileRecords(data).batches())


def _layout_independent(batches) -> str | None:
    """Why a segment's broker indexes depend on the broker version or on compaction
    (None: the per-batch rule reproduces them)."""
    prev = None
    for b in batches:
        if b.magic < 2:
            return "v0/v1 message sets"
        if prev is not None and b.base_offset != prev + 1:
            return "offset gaps (compacted)"
        prev = b.last_offset
        if b.timestamp_type == "LogAppendTime":
            continue
        recs = b.records()
        if recs:
            top = max(r.timestamp for r in recs)
            if next(r.offset for r in recs if r.timestamp == top) != b.last_offset:
                return "a batch's largest timestamp is not on its last record"
    return None


def _indexed_segments(corpus: Path) -> list[Path]:
    out = []
    for log in sorted(corpus.rglob("*.log")):
        idx, tidx = log.with_suffix(".index"), log.with_suffix(".timeindex")
        if idx.exists() and tidx.exists() and (idx.stat().st_size or tidx.stat().st_size):
            out.append(log)
    return out


def _classify(corpus: Path):
    qualifying, excluded = [], {}
    for log in _indexed_segments(corpus):
        rel = str(log.relative_to(corpus))
        why = "appended to across broker restarts" if rel in RESTARTED else \
            _layout_independent(_batches(log.read_bytes()))
        if why:
            excluded[rel] = why
        else:
            qualifying.append(log)
    return qualifying, excluded


def test_recovery_rebuilds_the_broker_indexes_byte_for_byte(corpus_root):
    qualifying, excluded = _classify(corpus_root)
    assert len(qualifying) >= 40, (len(qualifying), excluded)
    assert {r for r, why in excluded.items() if "restarts" in why} == RESTARTED
    for log in qualifying:
        data = log.read_bytes()
        s = scan_log(data, int(log.name[:20]), 4096)
        assert s.invalid_bytes == 0
        assert s.offset_index == log.with_suffix(".index").read_bytes(), log
        assert s.time_index == log.with_suffix(".timeindex").read_bytes(), log


def test_the_append_engine_writes_the_broker_indexes_byte_for_byte(corpus_root, tmp_path):
    qualifying, _ = _classify(corpus_root)
    for n, log in enumerate(qualifying):
        base = int(log.name[:20])
        d = tmp_path / f"p{n}" / "t-0"
        d.mkdir(parents=True)
        seg = WritableLogSegment.create(d, base, LogConfig(), ManualClock(0))
        data = log.read_bytes()
        for b in _batches(data):
            seg.append(data[b.position:b.position + b.size], b.last_offset)
        seg.close()
        assert (d / log.name).read_bytes() == data
        assert (d / log.with_suffix(".index").name).read_bytes() == \
            log.with_suffix(".index").read_bytes(), log
        assert (d / log.with_suffix(".timeindex").name).read_bytes() == \
            log.with_suffix(".timeindex").read_bytes(), log


def test_recover_leaves_broker_indexes_alone(corpus_root, tmp_path):
    """The whole planner on copies: no qualifying segment gets an index rewrite."""
    qualifying, _ = _classify(corpus_root)
    by_dir: dict[Path, list[Path]] = {}
    for log in qualifying:
        by_dir.setdefault(log.parent, []).append(log)
    for n, (pdir, logs) in enumerate(sorted(by_dir.items())):
        copy = copy_tree(pdir, tmp_path / f"c{n}" / pdir.name)
        rep = plan_partition(copy, all_segments=True)
        rewritten = {Path(a.path).name for a in rep.actions if a.kind == "write"}
        for log in logs:
            assert not {log.with_suffix(".index").name,
                        log.with_suffix(".timeindex").name} & rewritten, (log, rewritten)


def test_restarted_segments_hold_shutdown_entries(corpus_root):
    """The exclusion's reason, checked: every broker time-index entry of those segments
    is ``(largest timestamp up to some batch, last offset of the batch holding it)``, as
    ``close`` appends it, and every offset-index entry points at a batch."""
    for rel in sorted(RESTARTED):
        log = corpus_root / rel
        data = log.read_bytes()
        base = int(log.name[:20])
        bs = _batches(data)
        so_far, top, prefixes = -1, None, set()
        for b in bs:
            if b.max_timestamp > so_far:
                so_far, top = b.max_timestamp, b.last_offset
            prefixes.add((so_far, top - base))
        tb = log.with_suffix(".timeindex").read_bytes()
        for i in range(0, len(tb), 12):
            assert struct.unpack_from(">qi", tb, i) in prefixes, (rel, i)
        at = {(b.last_offset - base, b.position) for b in bs}
        ib = log.with_suffix(".index").read_bytes()
        for i in range(0, len(ib), 8):
            assert struct.unpack_from(">ii", ib, i) in at, (rel, i)


def _epoch_partitions(corpus: Path):
    """Partitions whose leader-epoch-checkpoint the batches reproduce (module doc), and
    the others with the reason."""
    ok, other = [], {}
    for ck in sorted(corpus.rglob("leader-epoch-checkpoint")):
        d = ck.parent
        bs = [b for log in sorted(d.glob("*.log")) for b in _batches(log.read_bytes())]
        broker = read_leader_epoch_checkpoint(ck)
        gaps = any(b.base_offset != a.last_offset + 1 for a, b in zip(bs, bs[1:], strict=False))
        if not bs:
            other[d] = "no batches left"
        elif bs[0].base_offset != 0 or gaps:
            other[d] = "batches removed (retention or compaction)"
        elif broker and broker[-1][1] >= bs[-1].last_offset + 1:
            other[d] = "an epoch assigned at the log end offset, no batch carries it"
        else:
            ok.append((d, bs))
    return ok, other


def test_leader_epochs_rebuilt_by_recovery_and_the_append_engine(corpus_root, tmp_path):
    ok, other = _epoch_partitions(corpus_root)
    assert len(ok) >= 100, other
    with_entries = 0
    for n, (d, bs) in enumerate(ok):
        broker_bytes = (d / "leader-epoch-checkpoint").read_bytes()
        # the append engine: assign as each batch is appended
        cache = LeaderEpochFileCache(tmp_path / f"e{n}", fsync=False)
        (tmp_path / f"e{n}").mkdir()
        for b in bs:
            if b.magic >= 2 and b.partition_leader_epoch >= 0:
                cache.assign(b.partition_leader_epoch, b.base_offset)
        assert cache.text().encode() == broker_bytes, d
        # recovery: the file rebuilt from the batches when it is missing
        copy = copy_tree(d, tmp_path / f"r{n}" / d.name)
        (copy / "leader-epoch-checkpoint").unlink()
        rep = plan_partition(copy, all_segments=True)
        writes = [a for a in rep.actions if Path(a.path).name == "leader-epoch-checkpoint"]
        if read_leader_epoch_checkpoint(d / "leader-epoch-checkpoint"):
            assert [a.data for a in writes] == [broker_bytes], d
        else:  # no epoch to write: recovery creates no file
            assert writes == [], d
        with_entries += bool(writes)
    assert with_entries >= 100
