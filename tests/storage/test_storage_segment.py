"""rebuild_indexes (LogSegment.recover) and LogSegment reads, on hand-checked layouts, the
fixtures and the corpus."""

from __future__ import annotations

import pytest
from kafkalog_testkit import GOOD_PARTITIONS

from kafkalog_cli.format.builder import build_batch, set_base_offset
from kafkalog_cli.storage.log import Log
from kafkalog_cli.storage.offset_index import OffsetPosition
from kafkalog_cli.storage.segment import LogSegment, open_view, rebuild_indexes
from kafkalog_cli.storage.time_index import TimestampOffset


def _log(sizes_ts):
    """Batches of one record with a value of ``size`` bytes and timestamp ``ts``."""
    out = bytearray()
    positions = []
    for i, (size, ts) in enumerate(sizes_ts):
        b = bytearray(build_batch([(ts, None, b"x" * size, ())]))
        set_base_offset(b, i)
        positions.append(len(out))
        out += b
    return bytes(out), positions


def test_rebuild_follows_recover():
    # batches of 1000+ bytes; interval 1500: an entry when > 1500 bytes since the last one
    data, pos = _log([(1000, 10), (1000, 30), (1000, 20), (1000, 40), (1000, 5)])
    r = rebuild_indexes(data, 0, 1500)
    size = pos[1]
    assert size > 1000
    # entry at batch 2 (3 * size - 0 > 1500 first happens at position 2*size), then batch 4
    assert r.offset_entries == [OffsetPosition(2, pos[2]), OffsetPosition(4, pos[4])]
    # time entries: max so far when each offset entry was added, then the final max
    assert r.time_entries == [TimestampOffset(30, 1), TimestampOffset(40, 3)]
    assert (r.max_timestamp, r.offset_of_max_timestamp) == (40, 3)
    assert (r.valid_bytes, r.batches, r.last_offset, r.error) == (len(data), 5, 4, None)


def test_rebuild_stops_at_crc_error():
    data, pos = _log([(100, 1), (100, 2), (100, 3)])
    bad = bytearray(data)
    bad[pos[1] + 70] ^= 1
    r = rebuild_indexes(bytes(bad), 0)
    assert r.batches == 1 and r.valid_bytes == pos[1]
    assert r.error is not None and "corrupt" in r.error.message


def test_rebuild_strict_rejects_backwards_offsets():
    data, pos = _log([(10, 1), (10, 2)])
    bad = bytearray(data)
    set_base_offset(memoryview(bad)[pos[1]:], 0)
    assert rebuild_indexes(bytes(bad), 0).batches == 1
    assert rebuild_indexes(bytes(bad), 0, strict=False).batches == 2


@pytest.mark.parametrize("name", GOOD_PARTITIONS)
def test_fixture_indexes_are_what_recovery_writes(fixtures_root, name):
    log = Log.open(fixtures_root / name)
    assert log.segments
    for seg in log.segments:
        r = rebuild_indexes(seg.view, seg.base_offset,
                            1024 if name == "preallocated-0" else 4096)
        idx, tidx = seg.offset_index, seg.time_index
        n, tn = idx.entries - idx.zero_tail, tidx.entries - tidx.zero_tail
        assert idx.entries_list()[:n] == r.offset_entries
        assert tidx.entries_list()[:tn] == r.time_entries
        seg.close()


def test_translate_offset_and_find_by_timestamp(fixtures_root):
    log = Log.open(fixtures_root / "multi-0")
    assert [s.base_offset for s in log.segments] == [0, 88, 164]
    assert log.segment_for(100).base_offset == 88
    assert log.segment_for(5).base_offset == 0
    seg = log.segment_for(100)
    b = seg.translate_offset(100)
    assert b.base_offset <= 100 <= b.last_offset
    # the index entry before 100 is used: the scan starts at or after its position
    assert seg.offset_index.lookup(100).position <= b.position
    assert seg.translate_offset(10**6) is None
    first = seg.records(0).batches().__next__()
    ts, off = seg.find_offset_by_timestamp(first.max_timestamp)
    assert ts >= first.max_timestamp and off >= seg.base_offset
    log.close()


def test_open_view_of_empty_file(tmp_path):
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(b"")
    assert len(open_view(p)) == 0
    seg = LogSegment.open(p)
    assert list(seg.records().batches()) == []


@pytest.mark.corpus
def test_corpus_indexes_match_recovery_or_legacy_layout(corpus_root):
    """On the corpus, every offset-index entry points at a batch start (rebuild gives the
    batch boundaries); checked fully by verify-index's tests."""
    checked = 0
    for d in sorted({p.parent for p in corpus_root.rglob("*.index")}):
        for seg in Log.open(d).segments:
            if not seg.log_path.exists() or seg.offset_index is None:
                continue
            r = rebuild_indexes(seg.view, seg.base_offset, strict=False)
            assert r.error is None, seg.log_path
            starts = set()
            pos = 0
            for b in seg.records().batches():
                starts.add(b.position)
                pos = b.next_position
            assert pos == r.valid_bytes
            idx = seg.offset_index
            for e in idx.entries_list()[:idx.entries - idx.zero_tail]:
                assert e.position in starts
            checked += 1
            seg.close()
    assert checked > 50
