"""The log cleaner (storage/cleaner.py) on hand-computed logs: the offset map, the records
a clean keeps (Cleaner.shouldRetainRecord / checkBatchRetention), the rebuilt batches'
header fields, the .cleaned/.swap protocol and what the log recovery makes of a crash
at each step. The broker as the oracle is tests/server/test_serve_cleaner.py."""

from __future__ import annotations

import os

import pytest

from kafkalog_cli.constants import CODEC_GZIP
from kafkalog_cli.format.builder import build_batch
from kafkalog_cli.storage.checkpoints import read_offset_checkpoint
from kafkalog_cli.storage.cleaner import (
    CleanConfig,
    Cleaner,
    OffsetMap,
    clean_log,
    group_segments_by_size,
    prepare_clean,
    replace_segments,
)
from kafkalog_cli.storage.clock import ManualClock
from kafkalog_cli.storage.config import LogConfig
from kafkalog_cli.storage.files import TopicPartition
from kafkalog_cli.storage.log import Log
from kafkalog_cli.storage.log_manager import LogManager

T0 = 1_700_000_000_000
CFG = CleanConfig(delete_retention_ms=1000)


def _log(tmp_path, clock=None):
    m = LogManager.open(tmp_path / "d", clock=clock or ManualClock(T0), fsync=False)
    return m, m.get_or_create_log("t", 0, LogConfig.from_properties({"segment.bytes": 1 << 20}))


def _records(directory):
    """(offset, key, value) of every record, and (base, last) of every batch."""
    log = Log.open(directory)
    recs, batches = [], []
    for _, b in log.batches_from(0):
        batches.append((b.base_offset, b.last_offset))
        recs += [(r.offset, r.key, r.value) for r in b.iter_records()]
    log.close()
    return recs, batches


def _a1_a2_roll_b1(log):
    """a@0, a@1 in a rolled segment, b@2 in the active one."""
    _append(log, [(b"a", b"1")])
    _append(log, [(b"a", b"2")])
    log.roll()
    _append(log, [(b"b", b"1")])


def _append(log, pairs, **kw):
    log.append_as_leader(build_batch([(T0, k, v, ()) for k, v in pairs], **kw))


def test_offset_map_counts_keys_as_kafka():
    m = OffsetMap(24 * 100, 0.9)   # Kafka: 100 slots of 24 bytes, 90 entries
    # but 2,400 bytes hold 15 entries of 160 bytes here: the memory bound wins
    assert (m.slots, m.max_size) == (100, 15)
    assert OffsetMap(24 * 100, 0.05).max_size == 5   # Kafka's count, when it is lower
    m.put(b"a", 3)
    m.put(b"a", 7)
    assert (m.get(b"a"), m.get(b"b"), m.size, m.latest_offset) == (7, -1, 1, 7)


@pytest.mark.parametrize("memory", [1 << 20, 8 << 20])
def test_a_full_offset_map_stays_within_the_dedupe_buffer(memory):
    import tracemalloc

    m = OffsetMap(memory, 0.9)
    assert m.max_size == memory // 160      # 6,553 and 52,428 keys
    tracemalloc.start()
    try:
        for i in range(m.max_size):
            m.put(b"key-%d" % i, 10_000_000_000 + i)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert m.size == m.max_size
    assert peak <= memory


def test_a_full_map_cleans_a_prefix_then_the_rest_next_pass(tmp_path):
    m, log = _log(tmp_path)
    with m:
        _append(log, [(b"a", b"1"), (b"b", b"1")])   # 0-1
        log.roll()
        _append(log, [(b"a", b"2"), (b"c", b"1")])   # 2-3
        log.roll()
        _append(log, [(b"d", b"1")])                 # 4: active
        small = Cleaner(dedupe_buffer_size=2 * 160, fsync=False)   # a map of 2 keys
        assert small.offset_map.max_size == 2
        # pass 1: a@0, b@1 fill the map at a@2, so it covers offsets 0-1 only; the first
        # segment is cleaned with {a: 0, b: 1} and keeps both
        end, _ = clean_log(log, small, CFG, now=T0, fsync=False)
        assert end == 2
        # pass 2 maps 2-3 ({a: 2, c: 3}): a@0 is superseded
        end, _ = clean_log(log, small, CFG, now=T0, fsync=False)
        assert end == 4
    recs, _ = _records(tmp_path / "d" / "t-0")
    assert recs == [(1, b"b", b"1"), (2, b"a", b"2"), (3, b"c", b"1"), (4, b"d", b"1")]
    ckpt = read_offset_checkpoint(tmp_path / "d" / "cleaner-offset-checkpoint")
    assert ckpt == {TopicPartition("t", 0): 4}


def test_clean_hand_computed(tmp_path):
    m, log = _log(tmp_path)
    with m:
        _append(log, [(b"a", b"1"), (b"b", b"1"), (b"c", b"1")])     # 0-2
        log.roll()
        _append(log, [(b"a", b"2"), (b"b", b"2")], compression_type=CODEC_GZIP)  # 3-4
        _append(log, [(b"d", b"1"), (None, b"x")])                      # 5-6
        log.roll()
        _append(log, [(b"a", b"3")])                                    # 7: active
        out = clean_log(log, Cleaner(fsync=False), CFG, now=T0, fsync=False)
        assert out is not None
        end, stats = out
        # the map covers offsets up to the active segment's base (7)
        assert end == 7
        assert stats.invalid_messages_read == 1
    recs, batches = _records(tmp_path / "d" / "t-0")
    # hand-computed: a@0 and b@1 are superseded by a@3/b@4; c@2, d@5 stay; the keyless
    # record goes; a@7 is in the active segment, not cleaned
    assert recs == [(2, b"c", b"1"), (3, b"a", b"2"), (4, b"b", b"2"), (5, b"d", b"1"),
                    (7, b"a", b"3")]
    # batches keep their base and last offsets (the last offset of 5-6 is kept even
    # though 6 went: overrideLastOffset)
    assert batches == [(0, 2), (3, 4), (5, 6), (7, 7)]
    ckpt = read_offset_checkpoint(tmp_path / "d" / "cleaner-offset-checkpoint")
    assert ckpt == {TopicPartition("t", 0): 7}
    # both rolled segments went into one (groupSegmentsBySize)
    names = sorted(os.listdir(tmp_path / "d" / "t-0"))
    assert [n for n in names if n.endswith(".log")] == ["00000000000000000000.log",
                                                         "00000000000000000007.log"]
    assert not [n for n in names if n.endswith((".cleaned", ".swap", ".deleted"))]
    # the producer snapshot of the segment merged away (3) goes; the active segment's (7)
    # and the close's (8) stay
    assert [n for n in names if n.endswith(".snapshot")] == [
        "00000000000000000007.snapshot", "00000000000000000008.snapshot"]


def test_rebuilt_batch_keeps_header_fields(tmp_path):
    from kafkalog_cli.format.records import batch_at
    from kafkalog_cli.storage.cleaner import rebuild_batch

    raw = build_batch([(T0, b"a", b"1", ()), (T0 + 5, b"b", b"2", (("h", b"v"),)),
                       (T0 + 9, b"c", b"3", ())], base_offset=40, partition_leader_epoch=3,
                      producer_id=77, producer_epoch=2, base_sequence=10,
                      compression_type=CODEC_GZIP)
    b = batch_at(memoryview(raw), 0)
    recs = list(b.iter_records())
    out = batch_at(memoryview(rebuild_batch(b, [recs[1]], None)), 0)
    out.ensure_valid()
    assert (out.base_offset, out.last_offset, out.producer_id, out.producer_epoch,
            out.base_sequence, out.partition_leader_epoch, out.compression, out.count,
            out.base_timestamp, out.max_timestamp) == (40, 42, 77, 2, 10, 3, CODEC_GZIP, 1,
                                                       T0 + 5, T0 + 5)
    assert [tuple(r) for r in out.iter_records()] == [(41, T0 + 5, b"b", b"2", (("h", b"v"),))]
    # with a delete horizon: bit 6 set, baseTimestamp the horizon, record times unchanged
    out = batch_at(memoryview(rebuild_batch(b, recs[:1], T0 + 1000)), 0)
    assert out.delete_horizon_ms == T0 + 1000
    assert [r.timestamp for r in out.iter_records()] == [T0]


def test_tombstones_kept_until_the_delete_horizon(tmp_path):
    clock = ManualClock(T0)
    m, log = _log(tmp_path, clock)
    with m:
        _append(log, [(b"a", b"1"), (b"b", b"1")])    # 0-1
        _append(log, [(b"a", None)])                  # 2: tombstone for a
        log.roll()
        _append(log, [(b"c", b"1")])                  # 3 (active)
        clean_log(log, Cleaner(fsync=False), CFG, now=T0, fsync=False)
        recs, _ = _records(tmp_path / "d" / "t-0")
        assert recs == [(1, b"b", b"1"), (2, b"a", None), (3, b"c", b"1")]
        b = next(b for _, b in Log.open(tmp_path / "d" / "t-0").batches_from(2))
        assert b.delete_horizon_ms == T0 + 1000
        # more data so the checkpointed section is dirty again, then past the horizon
        _append(log, [(b"d", b"1")])
        log.roll()
        _append(log, [(b"e", b"1")])
        clean_log(log, Cleaner(fsync=False), CFG, now=T0 + 1000, fsync=False)
        recs, batches = _records(tmp_path / "d" / "t-0")
        assert recs == [(1, b"b", b"1"), (3, b"c", b"1"), (4, b"d", b"1"), (5, b"e", b"1")]


def test_group_segments_by_size():
    class S:
        def __init__(self, base, size):
            self.base_offset, self.size = base, size
            self.index_path = self.time_index_path = "/nonexistent"

    segs = [S(0, 60), S(10, 30), S(20, 20), S(30, 0), S(40, 90)]
    got = group_segments_by_size(segs, 100, 1 << 20, 50)
    assert [[s.base_offset for s in g] for g in got] == [[0, 10], [20, 30], [40]]
    # offsets that do not fit an int relative to the group's base split it
    segs = [S(0, 1), S(2**31, 1)]
    got = group_segments_by_size(segs, 100, 1 << 20, 2**31 + 5)
    assert [[s.base_offset for s in g] for g in got] == [[0], [2**31]]


def _cleaned_state(tmp_path):
    """A log of two rolled segments with a .cleaned segment written for them, not
    swapped: (manager, log, group, base)."""
    m, log = _log(tmp_path)
    _append(log, [(b"a", b"1"), (b"b", b"1")])
    log.roll()
    _append(log, [(b"a", b"2")])
    log.roll()
    _append(log, [(b"c", b"1")])
    snap = prepare_clean(log, last_clean_offset=None, now=T0)
    c = Cleaner(fsync=False)
    c.build_offset_map(snap.segments, 0, 3, [])
    from kafkalog_cli.storage.cleaner import CleanedTransactionMetadata, CleanerStats

    base = c.clean_segments(snap.segments, snap.segments, CleanedTransactionMetadata(),
                            config=CFG, now=T0, aborted_between=lambda a, b: [],
                            last_records={}, high_watermark=4, stats=CleanerStats())
    return m, log, snap.segments, base


@pytest.mark.parametrize("crash_after", [None, "cleaned", "swap", "deleted"])
def test_crash_at_each_step_of_the_swap_recovers(tmp_path, crash_after):
    """A crash after writing .cleaned (recovery removes them: the old segments stay),
    after .cleaned -> .swap, after the old files -> .deleted (recovery completes the
    swap): the records read after recovery are the old ones or the cleaned ones, never
    a mix or a loss."""
    from kafkalog_cli.recovery import recover

    m, log, group, base = _cleaned_state(tmp_path)
    d = tmp_path / "d" / "t-0"
    if crash_after != "cleaned":
        deleted = replace_segments(d, base, group, fsync=False, crash_after=crash_after)
        if crash_after is None:
            for p in deleted:
                os.unlink(p)
    m.abandon()
    recover([tmp_path / "d"], truncate=True)
    names = os.listdir(d)
    assert not [n for n in names if n.endswith((".cleaned", ".swap", ".deleted"))]
    recs, _ = _records(d)
    if crash_after == "cleaned":
        assert recs == [(0, b"a", b"1"), (1, b"b", b"1"), (2, b"a", b"2"), (3, b"c", b"1")]
    else:
        assert recs == [(1, b"b", b"1"), (2, b"a", b"2"), (3, b"c", b"1")]


def test_aborted_records_go_markers_and_producer_state_stay(tmp_path):
    """Hand-computed: producer 5 aborts a transaction of a@1, b@2 (ABORT marker at 3)
    then producer 6 commits c@4 (COMMIT at 5); a@0 is plain. The clean drops the aborted
    records, keeps their batch empty (producer 5's last data batch: its sequence numbers),
    keeps both markers (their transactions' batches were seen) and the aborted
    transaction's .txnindex entry; the aborted a@1 never shadows a@0 in the map."""
    from kafkalog_cli.storage.txn_index import TransactionIndex

    m, log = _log(tmp_path)
    with m:
        _append(log, [(b"a", b"0")])                                               # 0
        _append(log, [(b"a", b"x"), (b"b", b"x")], producer_id=5, producer_epoch=0,
                base_sequence=0, is_transactional=True)                             # 1-2
        log.append_end_txn_marker(producer_id=5, producer_epoch=0, commit=False)   # 3
        _append(log, [(b"c", b"1")], producer_id=6, producer_epoch=0, base_sequence=0,
                is_transactional=True)                                              # 4
        log.append_end_txn_marker(producer_id=6, producer_epoch=0, commit=True)    # 5
        log.roll()
        _append(log, [(b"d", b"1")])                                               # 6
        end, _ = clean_log(log, Cleaner(fsync=False), CFG, now=T0, fsync=False)
        assert end == 6
    d = tmp_path / "d" / "t-0"
    recs, batches = _records(d)
    assert [(o, k, v) for o, k, v in recs if o not in (3, 5)] == [
        (0, b"a", b"0"), (4, b"c", b"1"), (6, b"d", b"1")]
    assert batches == [(0, 0), (1, 2), (3, 3), (4, 4), (5, 5), (6, 6)]
    log2 = Log.open(d)
    counts = {b.base_offset: (b.count, b.is_control) for _, b in log2.batches_from(0)}
    assert counts[1] == (0, False) and counts[3] == (1, True) and counts[5] == (1, True)
    entries = list(TransactionIndex.load(d / "00000000000000000000.txnindex", 0).iter_entries())
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in entries] == [(5, 1, 3)]
    log2.close()


def test_abandoned_clean_leaves_no_file(tmp_path):
    """A clean stopped at a batch (the server stopping: check_done raises) removes its
    .cleaned files and leaves the log and the checkpoint as they were."""
    from kafkalog_cli.errors import LogCleaningAbortedError

    m, log = _log(tmp_path)
    with m:
        _a1_a2_roll_b1(log)
        c = Cleaner(fsync=False)
        calls = []

        def check():
            calls.append(1)
            if len(calls) > 2:   # past the map's two batches: inside the rewrite
                raise LogCleaningAbortedError("stop")

        c.check_done = check
        with pytest.raises(LogCleaningAbortedError):
            clean_log(log, c, CFG, now=T0, fsync=False)
    names = os.listdir(tmp_path / "d" / "t-0")
    assert not [n for n in names if n.endswith(".cleaned")]
    assert not (tmp_path / "d" / "cleaner-offset-checkpoint").exists()
    recs, _ = _records(tmp_path / "d" / "t-0")
    assert recs == [(0, b"a", b"1"), (1, b"a", b"2"), (2, b"b", b"1")]


class _Seg:
    def __init__(self, base, size, largest_ts=0):
        self.base_offset, self.size, self.largest = base, size, largest_ts

    def largest_timestamp_in_index(self):
        return self.largest


def test_cleanable_offsets_hand_computed():
    """LogCleanerManager.cleanableOffsets: the least of the LSO, the active segment's base
    and the first dirty segment within min.compaction.lag.ms; the cleanable bytes are the
    segments from the first dirty one's floor to that segment."""
    from kafkalog_cli.storage.cleaner import cleanable_offsets

    segs = [_Seg(0, 100, T0), _Seg(10, 200, T0 + 10), _Seg(20, 300, T0 + 20), _Seg(30, 50)]
    kw = dict(log_start_offset=0, log_end_offset=35, now=T0 + 100)
    # nothing holds it back but the active segment
    tc = cleanable_offsets(segs, last_stable_offset=35, last_clean_offset=None, **kw)
    assert (tc.first_dirty_offset, tc.first_uncleanable_offset, tc.clean_bytes,
            tc.cleanable_bytes) == (0, 30, 0, 600)
    # an open transaction from 15: the segment holding it is the first uncleanable
    tc = cleanable_offsets(segs, last_stable_offset=15, last_clean_offset=10, **kw)
    assert (tc.first_dirty_offset, tc.first_uncleanable_offset, tc.clean_bytes,
            tc.cleanable_bytes) == (10, 10, 100, 0)
    # min.compaction.lag.ms 85: segment 20's largest timestamp (T0+20) > now - 85 = T0+15
    tc = cleanable_offsets(segs, last_stable_offset=35, last_clean_offset=10,
                           min_compaction_lag_ms=85, **kw)
    assert (tc.first_uncleanable_offset, tc.clean_bytes, tc.cleanable_bytes) == (20, 100, 200)
    assert tc.cleanable_ratio == 200 / 300
    # a checkpoint past the log end is reset to the log start
    tc = cleanable_offsets(segs, last_stable_offset=35, last_clean_offset=99, **kw)
    assert (tc.first_dirty_offset, tc.force_update_checkpoint) == (0, True)


def test_commit_marker_goes_after_its_records_and_the_horizon(tmp_path):
    """KIP-534 for markers, hand-computed: producer 6 commits c@0 (COMMIT at 1), c@2
    supersedes it, producer 6 commits e@3 (COMMIT at 4). Clean 1 drops c@0's batch (not
    the producer's last) but keeps the marker (its transaction's batch was read in the
    same pass); clean 2 finds the marker's transaction empty: stamps the delete horizon;
    clean 3, at the horizon, drops it."""
    def marker_at_1(d):
        log2 = Log.open(d)
        b = next((b for _, b in log2.batches_from(0) if b.base_offset == 1), None)
        log2.close()
        return b

    m, log = _log(tmp_path)
    d = tmp_path / "d" / "t-0"
    txn = dict(producer_id=6, producer_epoch=0, is_transactional=True)
    with m:
        _append(log, [(b"c", b"t")], base_sequence=0, **txn)                      # 0
        log.append_end_txn_marker(producer_id=6, producer_epoch=0, commit=True)   # 1
        _append(log, [(b"c", b"p")])                                              # 2
        _append(log, [(b"e", b"t2")], base_sequence=1, **txn)                     # 3
        log.append_end_txn_marker(producer_id=6, producer_epoch=0, commit=True)   # 4
        log.roll()
        _append(log, [(b"x", b"1")])                                              # 5
        clean_log(log, Cleaner(fsync=False), CFG, now=T0, fsync=False)
        assert [b for b in _records(d)[1] if b[0] < 5] == [(1, 1), (2, 2), (3, 3), (4, 4)]
        assert marker_at_1(d).delete_horizon_ms is None
        log.roll()
        _append(log, [(b"y", b"1")])                                              # 6
        clean_log(log, Cleaner(fsync=False), CFG, now=T0, fsync=False)
        assert marker_at_1(d).delete_horizon_ms == T0 + 1000
        log.roll()
        _append(log, [(b"z", b"1")])                                              # 7
        clean_log(log, Cleaner(fsync=False), CFG, now=T0 + 1000, fsync=False)
        assert marker_at_1(d) is None
    recs, _ = _records(d)
    assert [(o, k, v) for o, k, v in recs if o != 4] == [
        (2, b"c", b"p"), (3, b"e", b"t2"), (5, b"x", b"1"), (6, b"y", b"1"), (7, b"z", b"1")]


def test_bytes_that_are_not_a_batch_fail_the_clean(tmp_path):
    """A rolled segment ending in bytes that are not a whole batch is not cleaned (what
    follows them would be dropped): one error naming the file and position, the log as
    it was, no .cleaned file left."""
    from kafkalog_cli.errors import CorruptRecordError

    m, log = _log(tmp_path)
    d = tmp_path / "d" / "t-0"
    with m:
        _a1_a2_roll_b1(log)
        seg = d / "00000000000000000000.log"
        good = seg.stat().st_size
        with open(seg, "ab") as f:
            f.write(b"\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x01")
        with pytest.raises(CorruptRecordError) as e:
            clean_log(log, Cleaner(fsync=False), CFG, now=T0, fsync=False)
        assert str(seg) in str(e.value) and f"at byte {good}" in str(e.value)
    assert not [n for n in os.listdir(d) if n.endswith(".cleaned")]
    assert seg.stat().st_size == good + 11


def test_max_compaction_lag_cleans_whatever_the_ratio(tmp_path):
    """maxCompactionDelay, hand-computed: the dirty segment's first batch is stamped T0;
    at T0 + 1000 a max.compaction.lag.ms of 2000 has not passed (a ratio of at most 1.0
    is never above 1.0: no clean), one of 500 has (cleaned)."""
    from kafkalog_cli.storage.cleaner import max_compaction_delay

    m, log = _log(tmp_path)
    with m:
        _a1_a2_roll_b1(log)
        assert max_compaction_delay(log.segments, 0, T0 + 1000, 500) == 500
        assert max_compaction_delay(log.segments, 0, T0 + 1000, 2000) == 0
        kw = dict(now=T0 + 1000, min_cleanable_ratio=1.0, fsync=False)
        assert clean_log(log, Cleaner(fsync=False), CFG, max_compaction_lag_ms=2000,
                         **kw) is None
        assert clean_log(log, Cleaner(fsync=False), CFG, max_compaction_lag_ms=500,
                         **kw)[0] == 2
    recs, _ = _records(tmp_path / "d" / "t-0")
    assert recs == [(1, b"a", b"2"), (2, b"b", b"1")]


def test_swap_refused_when_the_log_changed(tmp_path):
    """swap_in refuses a group that is no longer a run of rolled segments of the log
    (retention took one meanwhile): nothing renamed; the clean stops without moving the
    checkpoint and leaves no .cleaned file."""
    from kafkalog_cli.errors import LogCleaningAbortedError
    from kafkalog_cli.storage.cleaner import swap_in

    m, log = _log(tmp_path)
    d = tmp_path / "d" / "t-0"
    with m:
        _append(log, [(b"a", b"1")])
        log.roll()
        _append(log, [(b"a", b"2")])
        log.roll()
        _append(log, [(b"b", b"1")])
        snap = prepare_clean(log, last_clean_offset=None, now=T0)
        before = sorted(os.listdir(d))
        gone = log.segments.pop(0)          # as a retention pass would
        assert swap_in(log, snap.segments, 0, fsync=False) is None
        assert sorted(os.listdir(d)) == before
        log.segments.insert(0, gone)
        with pytest.raises(LogCleaningAbortedError):
            Cleaner(fsync=False).clean(snap.segments, snap.to_clean, config=CFG, now=T0,
                                       aborted_between=snap.aborted_between,
                                       last_records_of_active_producers={},
                                       replace=lambda group, base: False, high_watermark=3)
    after = os.listdir(d)
    assert not [n for n in after if n.endswith((".cleaned", ".swap", ".deleted"))]
    assert [n for n in sorted(after) if n.endswith(".log")] == [
        n for n in before if n.endswith(".log")]
    assert not (tmp_path / "d" / "cleaner-offset-checkpoint").exists()
    assert _records(d)[0] == [(0, b"a", b"1"), (1, b"a", b"2"), (2, b"b", b"1")]
