"""OffsetIndex / TimeIndex: lookups, sanity checks, zero tails, append rules, truncation."""

from __future__ import annotations

import struct

import pytest

from kafkalog_cli.errors import CorruptIndexError, IllegalStateError, InvalidArgumentError
from kafkalog_cli.storage.offset_index import OffsetIndex, OffsetPosition
from kafkalog_cli.storage.time_index import TimeIndex, TimestampOffset

BASE = 100


def _offset_index(tmp_path, entries, extra=b"", base=BASE):
    p = tmp_path / "00000000000000000100.index"
    p.write_bytes(b"".join(struct.pack(">ii", o - base, pos) for o, pos in entries) + extra)
    return OffsetIndex.load(p, base)


def _time_index(tmp_path, entries, extra=b"", base=BASE):
    p = tmp_path / "00000000000000000100.timeindex"
    p.write_bytes(b"".join(struct.pack(">qi", t, o - base) for t, o in entries) + extra)
    return TimeIndex.load(p, base)


def test_offset_lookup_largest_lower_bound(tmp_path):
    idx = _offset_index(tmp_path, [(110, 4100), (125, 8300), (140, 12600)])
    assert idx.entries == 3
    assert idx.lookup(110) == OffsetPosition(110, 4100)   # exact
    assert idx.lookup(124) == OffsetPosition(110, 4100)   # between
    assert idx.lookup(125) == OffsetPosition(125, 8300)
    assert idx.lookup(10**9) == OffsetPosition(140, 12600)  # after the last
    assert idx.lookup(105) == OffsetPosition(BASE, 0)     # before the first: (base, 0)
    assert idx.lookup(0) == OffsetPosition(BASE, 0)


def test_empty_indexes(tmp_path):
    idx = _offset_index(tmp_path, [])
    assert idx.entries == 0
    assert idx.lookup(500) == OffsetPosition(BASE, 0)
    assert idx.last_offset == BASE
    idx.sanity_check()
    t = _time_index(tmp_path, [])
    assert t.lookup(123) == TimestampOffset(-1, BASE)
    assert t.last_entry == TimestampOffset(-1, BASE)
    t.sanity_check()


def test_time_lookup(tmp_path):
    t = _time_index(tmp_path, [(1000, 105), (2000, 120), (3000, 130)])
    assert t.lookup(999) == TimestampOffset(-1, BASE)
    assert t.lookup(1000) == TimestampOffset(1000, 105)
    assert t.lookup(2500) == TimestampOffset(2000, 120)
    assert t.lookup(9999) == TimestampOffset(3000, 130)


def test_offset_sanity_check_messages(tmp_path):
    bad_len = _offset_index(tmp_path, [(110, 4100)], extra=b"\x00\x00\x00")
    with pytest.raises(CorruptIndexError, match="found 11 bytes which is neither positive nor "
                                                "a multiple of 8"):
        bad_len.sanity_check()
    below = _offset_index(tmp_path, [(110, 4100), (90, 8000)])
    with pytest.raises(CorruptIndexError, match="last offset is 90 which is less than the "
                                                "base offset 100"):
        below.sanity_check()


def test_time_sanity_check_messages(tmp_path):
    backwards = _time_index(tmp_path, [(2000, 110), (1000, 120)])
    with pytest.raises(CorruptIndexError, match="last timestamp is 1000 which is less than the "
                                                "first timestamp 2000"):
        backwards.sanity_check()
    below = _time_index(tmp_path, [(1000, 110), (2000, 99)])
    with pytest.raises(CorruptIndexError, match="last offset is 99"):
        below.sanity_check()
    bad_len = _time_index(tmp_path, [(1000, 110)], extra=b"\x00" * 5)
    with pytest.raises(CorruptIndexError, match="found 17 bytes"):
        bad_len.sanity_check()


def test_zero_tail_counted(tmp_path):
    idx = _offset_index(tmp_path, [(110, 4100), (125, 8300)], extra=bytes(8 * 5))
    assert idx.entries == 7          # the broker counts every whole slot
    assert idx.zero_tail == 5
    t = _time_index(tmp_path, [(1000, 110)], extra=bytes(12 * 3))
    assert (t.entries, t.zero_tail) == (4, 3)
    # the first slot is never counted as tail, even when zero (relative offset 0, position 0)
    z = _offset_index(tmp_path, [(BASE, 0)], extra=bytes(16))
    assert z.zero_tail == 2


def test_offset_append_ordering(tmp_path):
    idx = OffsetIndex(tmp_path / "x.index", BASE, max_index_size=3 * 8)
    idx.append(110, 0)
    idx.append(120, 4096)
    with pytest.raises(InvalidArgumentError, match=r"Attempt to append an offset \(120\)"):
        idx.append(120, 9000)
    with pytest.raises(InvalidArgumentError, match="no larger than the last offset appended"):
        idx.append(115, 9000)
    idx.append(130, 9000)
    assert idx.is_full
    with pytest.raises(IllegalStateError, match="full index"):
        idx.append(140, 12000)
    with pytest.raises(InvalidArgumentError):
        OffsetIndex(tmp_path / "y.index", BASE).append(BASE + 2**31, 0)
    with pytest.raises(InvalidArgumentError):
        OffsetIndex(tmp_path / "y.index", BASE).append(BASE - 1, 0)


def test_time_append_rules(tmp_path):
    t = TimeIndex(tmp_path / "x.timeindex", BASE, max_index_size=3 * 12)
    assert t.maybe_append(1000, 110)
    assert not t.maybe_append(1000, 115)     # not larger: skipped
    with pytest.raises(InvalidArgumentError, match="timestamp"):
        t.maybe_append(900, 120)
    with pytest.raises(InvalidArgumentError, match="offset"):
        t.maybe_append(2000, 105)
    assert t.maybe_append(2000, 120)
    assert t.is_full                          # one slot kept for the final entry
    with pytest.raises(IllegalStateError):
        t.maybe_append(3000, 130)
    assert t.maybe_append(3000, 130, skip_full_check=True)
    assert t.entries_list() == [TimestampOffset(1000, 110), TimestampOffset(2000, 120),
                                TimestampOffset(3000, 130)]


def test_truncate_to(tmp_path):
    idx = _offset_index(tmp_path, [(110, 4100), (125, 8300), (140, 12600)])
    idx.truncate_to(126)
    assert idx.entries_list() == [OffsetPosition(110, 4100), OffsetPosition(125, 8300)]
    idx.truncate_to(125)                      # removes entries >= the offset
    assert idx.entries_list() == [OffsetPosition(110, 4100)]
    idx.truncate_to(0)
    assert idx.entries == 0
    t = _time_index(tmp_path, [(1000, 105), (2000, 120), (3000, 130)])
    t.truncate_to(121)
    assert [e.offset for e in t.entries_list()] == [105, 120]
    t.truncate_to(105)
    assert t.entries == 0


def test_write_trimmed_and_preallocated(tmp_path):
    p = tmp_path / "00000000000000000100.index"
    idx = OffsetIndex(p, BASE, max_index_size=10 * 8)
    idx.append(110, 4100)
    idx.write(preallocate=True, fsync=False)
    assert p.stat().st_size == 80
    idx.write(fsync=False)
    assert p.read_bytes() == struct.pack(">ii", 10, 4100)
