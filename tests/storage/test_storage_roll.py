"""One test per roll condition: the pure decision, then the log doing it."""

import random

from kafkalog_cli.constants import INT32_MAX
from kafkalog_cli.format.builder import build_batch
from kafkalog_cli.storage.clock import ManualClock
from kafkalog_cli.storage.config import LogConfig
from kafkalog_cli.storage.log_manager import LogManager
from kafkalog_cli.storage.roll import RollParams, random_segment_jitter, roll_reasons

T0 = 1_700_000_000_000


def params(**kw):
    base = dict(max_segment_ms=1000, max_segment_bytes=1000, max_timestamp_in_messages=T0,
                max_offset_in_messages=10, messages_size=100, now=T0, segment_size=100,
                segment_base_offset=0, rolling_based_timestamp=T0, created_ms=T0)
    base.update(kw)
    return RollParams(**base)


def test_pure_conditions():
    assert roll_reasons(params()) == []
    assert roll_reasons(params(segment_size=901)) == ["segment.bytes"]
    assert roll_reasons(params(segment_size=900)) == []
    assert roll_reasons(params(max_timestamp_in_messages=T0 + 1001)) == ["segment.ms"]
    assert roll_reasons(params(max_timestamp_in_messages=T0 + 1000)) == []
    # an empty segment never rolls on time
    assert roll_reasons(params(max_timestamp_in_messages=T0 + 5000, segment_size=0)) == []
    # no timestamp on the first batch: wall clock since creation
    assert roll_reasons(params(rolling_based_timestamp=-1, now=T0 + 1001)) == ["segment.ms"]
    assert roll_reasons(params(roll_jitter_ms=300, max_timestamp_in_messages=T0 + 701)) == [
        "segment.ms"]
    assert roll_reasons(params(offset_index_full=True)) == ["offset-index-full"]
    assert roll_reasons(params(time_index_full=True)) == ["time-index-full"]
    assert roll_reasons(params(max_offset_in_messages=INT32_MAX + 1)) == ["offset-overflow"]


def test_jitter_is_bounded_and_seeded():
    assert random_segment_jitter(0, 1000) == 0
    a = random_segment_jitter(500, 1000, random.Random(7))
    assert a == random_segment_jitter(500, 1000, random.Random(7))
    assert 0 <= a < 500
    assert random_segment_jitter(5000, 100, random.Random(1)) < 100


def _log(tmp_path, clock, **cfg):
    m = LogManager.open(tmp_path / "logs", clock=clock, fsync=False, rng=random.Random(3))
    return m, m.get_or_create_log("t", 0, LogConfig.from_properties(cfg))


def _batch(ts, n=5, size=20):
    return build_batch([(ts, None, b"x" * size, ())] * n)


def _bases(tmp_path):
    return sorted(int(p.name[:20]) for p in (tmp_path / "logs" / "t-0").glob("*.log"))


def test_roll_on_segment_bytes(tmp_path):
    clock = ManualClock(T0)
    m, log = _log(tmp_path, clock, **{"segment.bytes": "500"})
    size = len(_batch(T0))
    reasons = [log.append_as_leader(_batch(T0)).rolled for _ in range(4)]
    m.close()
    per = 500 // size
    assert reasons[per] == ["segment.bytes"]
    assert _bases(tmp_path) == [0, per * 5]


def test_roll_on_segment_ms_by_timestamps(tmp_path):
    clock = ManualClock(T0)
    m, log = _log(tmp_path, clock, **{"segment.ms": "1000"})
    assert log.append_as_leader(_batch(T0)).rolled == []
    assert log.append_as_leader(_batch(T0 + 1000)).rolled == []
    assert log.append_as_leader(_batch(T0 + 1001)).rolled == ["segment.ms"]
    m.close()
    assert _bases(tmp_path) == [0, 10]


def test_roll_on_segment_ms_with_jitter(tmp_path):
    clock = ManualClock(T0)
    m, log = _log(tmp_path, clock, **{"segment.ms": "1000", "segment.jitter.ms": "400"})
    jitter = log.active.roll_jitter_ms
    assert 0 <= jitter < 400
    log.append_as_leader(_batch(T0))
    assert log.append_as_leader(_batch(T0 + 1000 - jitter)).rolled == []
    assert log.append_as_leader(_batch(T0 + 1001 - jitter)).rolled == ["segment.ms"]
    m.close()


def test_roll_on_time_index_full(tmp_path):
    clock = ManualClock(T0)
    # 36 bytes: 3 time entries, full at 2 (one kept for the roll entry); 4 offset entries
    m, log = _log(tmp_path, clock, **{"segment.index.bytes": "36",
                                      "index.interval.bytes": "0"})
    rolled = [log.append_as_leader(_batch(T0 + i)).rolled for i in range(4)]
    m.close()
    assert rolled[3] == ["time-index-full"]
    ti = (tmp_path / "logs/t-0/00000000000000000000.timeindex").read_bytes()
    # 2 entries; the final entry at roll adds nothing (the max did not grow since)
    assert len(ti) == 24


def test_roll_on_offset_index_full(tmp_path):
    clock = ManualClock(T0)
    # no timestamps: the time index stays empty, the offset index (3 entries) fills
    m, log = _log(tmp_path, clock, **{"segment.index.bytes": "24",
                                      "index.interval.bytes": "0"})
    rolled = [log.append_as_leader(_batch(-1)).rolled for _ in range(5)]
    m.close()
    assert rolled[4] == ["offset-index-full"]
    assert (tmp_path / "logs/t-0/00000000000000000000.index").stat().st_size == 24
    assert (tmp_path / "logs/t-0/00000000000000000000.timeindex").stat().st_size == 0


def test_roll_on_relative_offset_overflow(tmp_path):
    clock = ManualClock(T0)
    d = tmp_path / "logs" / "t-0"
    d.mkdir(parents=True)
    # a segment at base 0 whose only batch sits near the int32 limit (a compacted log)
    far = INT32_MAX - 2
    b = build_batch([(T0, b"k", b"v", ())] * 2, base_offset=far, partition_leader_epoch=0)
    (d / "00000000000000000000.log").write_bytes(b)
    m, log = _log(tmp_path, clock)
    assert log.log_end_offset == far + 2
    info = log.append_as_leader(_batch(T0))
    m.close()
    assert info.rolled == ["offset-overflow"]
    assert _bases(tmp_path) == [0, far + 2]


def test_empty_segment_with_full_index_is_not_rolled(tmp_path):
    clock = ManualClock(T0)
    m, log = _log(tmp_path, clock, **{"segment.index.bytes": "4"})
    for _ in range(3):
        log.append_as_leader(_batch(T0))
    m.close()
    assert _bases(tmp_path) == [0, 5, 10]


def test_segment_should_roll_decides_as_the_roll_params(tmp_path):
    """The per-append decision (WritableLogSegment.should_roll, read in place) is the one
    the full RollParams gives, on each condition's edges: timestamps or the clock, jitter,
    full indexes, relative offsets, sizes."""
    clock = ManualClock(T0)
    m, log = _log(tmp_path, clock, **{"segment.bytes": "1000", "segment.ms": "1000",
                                      "segment.index.bytes": "80"})
    seg, rng = log.active, random.Random(11)
    edges = (-1, 0, 1)
    for _ in range(3000):
        seg._size = rng.choice([0, 1, 899, 900, 901, 1000])
        seg.rolling_based_timestamp = rng.choice([None, -1, T0])
        seg.roll_jitter_ms = rng.choice([0, 300])
        seg._offset_index.entries = rng.choice([0, 9, 10])
        seg._time_index.entries = rng.choice([0, 5, 6])
        args = (100, T0 + rng.choice([700, 1000]) + rng.choice(edges),
                rng.choice([0, 10, INT32_MAX, INT32_MAX + 1, -1]),
                seg.created_ms + rng.choice([700, 1000]) + rng.choice(edges))
        expected = bool(roll_reasons(log.roll_params(*args)))
        assert seg.should_roll(1000, 1000, *args) == expected, args
    seg._size = seg._offset_index.entries = seg._time_index.entries = 0
    m.close()
