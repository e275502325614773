"""Log retention (UnifiedLog.deleteOldSegments): the pure decision against hand-computed
cases, then the action on a real partition directory (the broker comparison is
tests/server/test_serve_retention.py)."""

import os
import random

import pytest

from kafkalog_cli.format.builder import build_batch
from kafkalog_cli.storage.clock import ManualClock
from kafkalog_cli.storage.config import LogConfig
from kafkalog_cli.storage.log import Log
from kafkalog_cli.storage.log_manager import LogManager
from kafkalog_cli.storage.retention import (
    LOG_START_OFFSET_BREACH as LSO,
)
from kafkalog_cli.storage.retention import (
    RETENTION_MS_BREACH as MS,
)
from kafkalog_cli.storage.retention import (
    RETENTION_SIZE_BREACH as SIZE,
)
from kafkalog_cli.storage.retention import (
    RetentionConfig,
    SegmentStat,
    delete_old_segments,
    plan_deletions,
    remove_deleted_files,
)

# three segments: [0, 10) 100 bytes, newest record at 1000 ms; [10, 20) 100 bytes at
# 5000 ms; the active one [20, 25) 50 bytes at 9000 ms
SEGS = [SegmentStat(0, 100, 1000), SegmentStat(10, 100, 5000), SegmentStat(20, 50, 9000)]
UNLIMITED = RetentionConfig(retention_ms=-1, retention_bytes=-1)


def plan(cfg, *, segs=SEGS, leo=25, hw=25, lso=0, now=8000):
    p = plan_deletions(segs, log_end_offset=leo, high_watermark=hw, log_start_offset=lso,
                       config=cfg, now=now)
    return [(d.base_offset, d.reason) for d in p.deletions], p.log_start_offset, p.roll_at


def test_retention_ms_is_strictly_greater_than_the_limit():
    cfg = RetentionConfig(retention_ms=3000)
    # 8000 - 5000 = 3000 is not > 3000: the second segment stays
    assert plan(cfg, now=8000) == ([(0, MS)], 10, None)
    assert plan(cfg, now=8001) == ([(0, MS), (10, MS)], 20, None)


def test_breached_active_segment_is_deleted_after_a_roll():
    assert plan(RetentionConfig(retention_ms=3000), now=12001) == (
        [(0, MS), (10, MS), (20, MS)], 25, 25)


def test_empty_active_segment_is_never_deleted():
    segs = [SegmentStat(0, 100, 1000), SegmentStat(10, 0, 1000)]
    assert plan(RetentionConfig(retention_ms=0), segs=segs, leo=10, hw=10) == (
        [(0, MS)], 10, None)


def test_nothing_at_or_past_the_high_watermark():
    cfg = RetentionConfig(retention_ms=0)
    # the second segment's upper bound (20) is above the high watermark 15
    assert plan(cfg, now=99999, hw=15) == ([(0, MS)], 10, None)
    assert plan(cfg, now=99999, hw=9) == ([], 0, None)
    # the active segment's upper bound is the log end offset
    assert plan(cfg, now=99999, hw=24) == ([(0, MS), (10, MS)], 20, None)


def test_minus_one_is_unlimited():
    assert plan(UNLIMITED, now=10 ** 12) == ([], 0, None)


def test_retention_bytes_deletes_while_the_excess_covers_the_segment():
    # 250 bytes, limit 150: 100 over -> the first segment (100) goes, the second would
    # leave the log under the limit
    assert plan(RetentionConfig(retention_ms=-1, retention_bytes=150)) == (
        [(0, SIZE)], 10, None)
    # exactly at the limit: nothing; 149: still only the first (1 byte over after it)
    assert plan(RetentionConfig(retention_ms=-1, retention_bytes=250)) == ([], 0, None)
    assert plan(RetentionConfig(retention_ms=-1, retention_bytes=149)) == (
        [(0, SIZE)], 10, None)
    assert plan(RetentionConfig(retention_ms=-1, retention_bytes=50)) == (
        [(0, SIZE), (10, SIZE)], 20, None)
    # 0: every byte is over, the active segment too (after a roll)
    assert plan(RetentionConfig(retention_ms=-1, retention_bytes=0)) == (
        [(0, SIZE), (10, SIZE), (20, SIZE)], 25, 25)


def test_log_start_offset_rule_applies_to_a_compact_only_log():
    compact = RetentionConfig(retention_ms=0, retention_bytes=0, delete=False, compact=True)
    # a segment goes when the next one starts at or below the log start offset
    assert plan(compact, lso=12, now=10 ** 9) == ([(0, LSO)], 12, None)
    assert plan(compact, lso=20, now=10 ** 9) == ([(0, LSO), (10, LSO)], 20, None)
    assert plan(compact, lso=9) == ([], 9, None)
    # the active segment never breaches it (it has no next segment)
    assert plan(compact, lso=25) == ([(0, LSO), (10, LSO)], 25, None)
    assert not compact.retention_task_applies
    assert RetentionConfig(delete=True, compact=True).retention_task_applies


def test_passes_run_in_kafkas_order_on_what_the_one_before_left():
    # log start offset 12: [0] by LSO; then 150 bytes left, limit 50: 100 over covers
    # [10]; then the time pass finds the active segment (9000) within 3000 ms of 10000
    cfg = RetentionConfig(retention_ms=3000, retention_bytes=50)
    assert plan(cfg, lso=12, now=10000) == ([(0, LSO), (10, SIZE)], 20, None)
    # limit 100: 50 over does not cover [10] (100 bytes); the time pass takes it (5000 ms
    # old)
    cfg = RetentionConfig(retention_ms=3000, retention_bytes=100)
    assert plan(cfg, lso=12, now=10000) == ([(0, LSO), (10, MS)], 20, None)


def test_config_from_log_config_extra():
    cfg = LogConfig.from_properties({"retention.ms": "5", "retention.bytes": "7",
                                     "cleanup.policy": "Compact, DELETE",
                                     "file.delete.delay.ms": "0"})
    assert RetentionConfig.of(cfg) == RetentionConfig(5, 7, True, True, 0)
    assert RetentionConfig.of(LogConfig()) == RetentionConfig()


# -- the action on a partition directory ---------------------------------------------------

T0 = 1_700_000_000_000


@pytest.fixture
def log_dir(tmp_path):
    clock = ManualClock(T0)
    m = LogManager.open(tmp_path / "logs", clock=clock, fsync=False, rng=random.Random(1))
    cfg = LogConfig.from_properties({"segment.bytes": "300", "retention.ms": "60000",
                                     "message.timestamp.before.max.ms": str(10 ** 12)})
    lg = m.get_or_create_log("t", 0, cfg)
    for i in range(6):  # one 5-record batch per segment (a ~170-byte batch each)
        lg.append_as_leader(build_batch([(T0 - 120000 + i * 20000, None, b"v" * 20, ())] * 5))
    yield m, lg, clock, tmp_path / "logs" / "t-0"
    if not m.closed:
        m.close()


def _names(d):
    return sorted(p.name for p in d.iterdir())


def test_segments_renamed_then_removed_and_start_offset_checkpointed(log_dir):
    m, lg, clock, d = log_dir
    assert [s.base_offset for s in lg.segments] == [0, 5, 10, 15, 20, 25]
    # batches at T0-120 s .. T0-20 s; retention 60 s: those older than T0-60 s go
    # (T0-120, -100, -80: strictly more than 60 s old), T0-60 s stays
    res = delete_old_segments(lg)
    assert [(x.base_offset, x.reason) for x in res.plan.deletions] == [
        (0, MS), (5, MS), (10, MS)]
    assert lg.log_start_offset == 15
    assert [s.base_offset for s in lg.segments] == [15, 20, 25]
    names = _names(d)
    assert "00000000000000000000.log.deleted" in names
    assert "00000000000000000010.timeindex.deleted" in names
    assert not any(n.startswith("0000000000000000000") and n.endswith(".log") for n in names
                   if n[:20] in ("00000000000000000000", "00000000000000000005"))
    # the producer snapshots at the deleted bases (written at each roll) are renamed too
    assert "00000000000000000005.snapshot.deleted" in names
    assert remove_deleted_files(res.renamed, res.segments) == len(res.renamed)
    assert not any(n.endswith(".deleted") for n in _names(d))
    m.checkpoint()
    # the start offset is the first segment's base now: checkpointLogStartOffsets
    # writes no entry for it (it does only above the first base)
    text = (d.parent / "log-start-offset-checkpoint").read_text().split("\n")
    assert text[:2] == ["0", "0"]
    assert Log.open(d).log_start_offset == 15


def test_crash_between_rename_and_removal(log_dir, tmp_path):
    m, lg, clock, d = log_dir
    res = delete_old_segments(lg)
    assert res.renamed
    m.abandon()  # no checkpoint, files left renamed
    # a symlink named like a leftover is removed itself, its target untouched
    outside = tmp_path / "outside.log"
    outside.write_bytes(b"keep")
    os.symlink(outside, d / "00000000000000000099.log.deleted")
    m2 = LogManager.open(d.parent, fsync=False)
    lg2 = m2.get_or_create_log("t", 0, lg.config)
    assert not any(n.endswith(".deleted") for n in _names(d))
    assert outside.read_bytes() == b"keep"
    # no checkpoint was written: the start offset is the first segment's base
    assert lg2.log_start_offset == 15
    assert [s.base_offset for s in lg2.segments] == [15, 20, 25]
    m2.close()


def test_whole_log_breached_rolls_first(log_dir):
    m, lg, clock, d = log_dir
    clock.sleep(10 ** 6)
    res = delete_old_segments(lg)
    assert res.plan.roll_at == 30
    assert [s.base_offset for s in lg.segments] == [30]
    assert lg.log_start_offset == 30 == lg.log_end_offset
    # appends go on after it
    lg.append_as_leader(build_batch([(T0 + 10 ** 6, None, b"v", ())]))
    assert lg.log_end_offset == 31


def test_delete_records_start_offset_deletes_below_it_only(log_dir):
    m, lg, clock, d = log_dir
    lg.maybe_increment_log_start_offset(12)
    cfg = RetentionConfig(retention_ms=-1)
    res = delete_old_segments(lg, config=cfg)
    assert [(x.base_offset, x.reason) for x in res.plan.deletions] == [(0, LSO), (5, LSO)]
    assert lg.log_start_offset == 12
    assert lg.leader_epoch_cache.epochs[0][1] == 12
