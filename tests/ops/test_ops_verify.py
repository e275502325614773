"""verify-index: passes on the corpus and the good fixtures, finds each corruption."""

from __future__ import annotations

import shutil

import pytest
from kafkalog_testkit import (
    GOOD_PARTITIONS,
    INDEX_CORRUPTIONS,
    LOG_CORRUPTIONS,
    SANITY_FAILURES,
    VERIFIED_PARTITIONS,
)

from kafkalog_cli.errors import NotAKafkaFileError, UnreadableError
from kafkalog_cli.ops.verify import verify_index


@pytest.mark.parametrize("name", VERIFIED_PARTITIONS + ["corrupt-crc-0"])
def test_good_indexes_pass(fixtures_root, name):
    r = verify_index([fixtures_root / name])
    assert r.ok, [p.message for s in r.segments for p in s.problems]
    assert r.segments and all(s.batches > 0 for s in r.segments)


def test_multi_segment_counts(fixtures_root):
    r = verify_index([fixtures_root / "multi-0"])
    assert [(s.base_offset, s.batches, s.index_entries, s.time_index_entries)
            for s in r.segments] == [(0, 22, 4, 5), (88, 19, 3, 4), (164, 13, 2, 3)]
    assert all(s.layouts == ["batch-last-offset"] for s in r.segments)
    assert not any(s.warnings for s in r.segments)


def test_preallocated_tail(fixtures_root):
    """An unclean shutdown leaves the active segment's index files preallocated. The
    zero tail of the .index passes OffsetIndex.sanityCheck (its last slot reads as the
    base offset); the .timeindex's last slot reads as timestamp 0, below the first entry's,
    which TimeIndex.sanityCheck (kafka-dump-log.sh --index-sanity-check) rejects."""
    (s,) = verify_index([fixtures_root / "preallocated-0"]).segments
    assert s.preallocated_slots > 0 and 0 < s.index_entries < 16
    assert [(p.file.rsplit(".", 1)[1], p.kind) for p in s.problems] == [("timeindex", "sanity")]
    (msg,) = [p.message for p in s.problems]
    assert "has non-zero size but the last timestamp is 0 which is less than the first " \
        "timestamp" in msg


@pytest.mark.parametrize("name,kinds", [
    ("corrupt-index-order-0", {"offset-order", "position-order"}),
    ("corrupt-index-position-0", {"not-batch-start"}),
    ("corrupt-timeindex-0", {"timestamp-mismatch"}),
    ("corrupt-index-length-0", {"length"}),
])
def test_corruptions_found(fixtures_root, name, kinds):
    r = verify_index([fixtures_root / name])
    assert not r.ok
    (s,) = r.segments
    assert {p.kind for p in s.problems} == kinds
    assert r.problem_count == len(s.problems)


def test_entry_numbers(fixtures_root):
    (s,) = verify_index([fixtures_root / "corrupt-index-position-0"]).segments
    (p,) = s.problems
    assert p.entry == 1 and "position 2003" in p.message
    assert p.file.endswith("00000000000000000000.index")


@pytest.mark.parametrize("name,n", [("corrupt-truncated-0", 901), ("corrupt-zero-tail-0", 1000)])
def test_invalid_log_tail_is_a_problem(fixtures_root, name, n):
    """Bytes after the last whole batch are what the broker's recovery truncates
    (LogSegment.recover): a finding with their position and length, not a warning. The
    fixtures' README gives the figures: the last batch cut 100 bytes short (901 bytes
    left), 1000 zero bytes appended. The indexes themselves agree with the log."""
    (s,) = verify_index([fixtures_root / name]).segments
    assert not s.ok and not s.warnings
    (p,) = s.problems
    size = (fixtures_root / name / "00000000000000000000.log").stat().st_size
    assert (p.kind, p.position, p.bytes) == ("invalid-bytes", size - n, n)
    assert f"Found {n} invalid bytes" in p.message and f"from byte {size - n}" in p.message


def test_missing_index_is_a_warning(fixtures_copy):
    (fixtures_copy / "plain-0" / "00000000000000000000.index").unlink()
    (s,) = verify_index([fixtures_copy / "plain-0"]).segments
    assert s.ok and s.index_entries is None
    assert [w.kind for w in s.warnings] == ["missing-index"]


def test_index_without_log(fixtures_copy):
    (fixtures_copy / "multi-0" / "00000000000000000088.log").unlink()
    r = verify_index([fixtures_copy / "multi-0" / "00000000000000000088.index"])
    (s,) = r.segments
    assert "missing-log" in [w.kind for w in s.warnings]


def test_single_file_checks_only_that_index(fixtures_root):
    r = verify_index([fixtures_root / "corrupt-timeindex-0" / "00000000000000000000.index"])
    assert r.ok and r.segments[0].time_index_entries is None
    r = verify_index([fixtures_root / "corrupt-timeindex-0" / "00000000000000000000.timeindex"])
    assert not r.ok


def test_log_dir_covers_every_partition(fixtures_root):
    r = verify_index([fixtures_root])
    bad = {s.log.split("/")[-2] for s in r.segments if not s.ok}
    # the .log corruptions with bytes after their last batch: a broker truncates them
    tails = {"corrupt-truncated-0", "corrupt-zero-tail-0"}
    assert bad == set(INDEX_CORRUPTIONS) | set(SANITY_FAILURES) | tails
    assert len(r.segments) == len(GOOD_PARTITIONS) + len(LOG_CORRUPTIONS) + \
        len(INDEX_CORRUPTIONS) + 2  # multi-0 has 3 segments


def test_bad_paths(tmp_path):
    with pytest.raises(UnreadableError, match="No such file"):
        verify_index([tmp_path / "nope"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(NotAKafkaFileError):
        verify_index([empty])
    odd = tmp_path / "foo.index"
    odd.write_bytes(b"")
    with pytest.raises(NotAKafkaFileError, match="20-digit"):
        verify_index([odd])


@pytest.mark.corpus
def test_corpus_passes(corpus_root, tmp_path):
    """Every index of the corpus whose .log is present agrees with it (index files without
    their .log are only sanity-checked)."""
    dirs = sorted({p.parent for suffix in ("*.log", "*.index", "*.timeindex")
                   for p in corpus_root.rglob(suffix)})
    assert len(dirs) > 150
    r = verify_index(dirs)
    problems = [(s.log, p.kind, p.message) for s in r.segments for p in s.problems]
    assert problems == []
    assert len(r.segments) >= 190
    assert r.to_dict()["ok"] is True


def test_to_dict_shape(fixtures_root, tmp_path):
    shutil.copytree(fixtures_root / "corrupt-index-order-0", tmp_path / "x-0")
    d = verify_index([tmp_path / "x-0"]).to_dict()
    assert d["ok"] is False
    (seg,) = d["segments"]
    # docs/json.md's vocabulary (camelCase; "file" for a file path)
    assert set(seg) == {"file", "baseOffset", "batches", "indexEntries", "timeIndexEntries",
                        "problems", "warnings", "ok", "layouts", "preallocatedSlots"}
    assert {"file", "kind", "message", "entry"} <= set(seg["problems"][0])


def test_insane_txnindex_is_a_problem(fixtures_copy):
    """TransactionIndex.sanityCheck: an aborted transaction whose last offset is below
    the segment's base offset (the broker recovers such a segment at start-up)."""
    from kafkalog_cli.schema.txn_index import AbortedTxn

    pdir = fixtures_copy / "multi-0"
    txn = pdir / "00000000000000000088.txnindex"
    txn.write_bytes(AbortedTxn(1, 10, 20, 21).to_bytes() + AbortedTxn(1, 90, 95, 96).to_bytes())
    r = verify_index([pdir])
    assert not r.ok and r.problem_count == 1
    s = next(s for s in r.segments if s.base_offset == 88)
    (p,) = s.problems
    assert p.kind == "txnindex-sanity" and p.file == str(txn)
    assert "less than start offset 88" in p.message
    # a single index file checks only that index
    assert verify_index([pdir / "00000000000000000088.index"]).ok
    # a sane one passes
    txn.write_bytes(AbortedTxn(1, 90, 95, 96).to_bytes())
    assert verify_index([pdir]).ok


def test_txn_index_check_can_be_skipped(fixtures_copy):
    from kafkalog_cli.ops.verify import verify_segment
    from kafkalog_cli.schema.txn_index import AbortedTxn
    from kafkalog_cli.storage.segment import LogSegment

    pdir = fixtures_copy / "txn-0"
    (pdir / "00000000000000000000.txnindex").write_bytes(AbortedTxn(1, -5, -2, 0).to_bytes())
    seg = LogSegment(pdir, 0)
    try:
        assert [p.kind for p in verify_segment(seg).problems] == ["txnindex-sanity"]
        assert verify_segment(seg, check_txn_index=False).ok
    finally:
        seg.close()


# -- memory: one pass, whatever the number of batches ------------------------------------------

def _many_small_batches(root, n: int):
    """One segment of ``n`` one-record batches (70 bytes each) with the indexes a
    broker's recovery writes (every 4096 bytes)."""
    from kafkalog_cli.format.builder import build_batch
    from kafkalog_cli.storage.recovery_scan import scan_log

    d = root / "t-0"
    d.mkdir()
    one = build_batch([(1_700_000_000_000, None, b"x", ())], base_offset=0)
    data = bytearray(one * n)
    for i in range(n):  # base offsets 0, 1, ... (outside the CRC)
        data[i * len(one):i * len(one) + 8] = i.to_bytes(8, "big")
    (d / "00000000000000000000.log").write_bytes(data)
    s = scan_log(memoryview(data), 0, 4096)
    (d / "00000000000000000000.index").write_bytes(s.offset_index)
    (d / "00000000000000000000.timeindex").write_bytes(s.time_index)
    return d


def _peak(fn) -> int:
    import tracemalloc

    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_verify_memory_does_not_grow_with_batches(tmp_path):
    """verify-index kept ~40 bytes per batch (positions, offsets, timestamps) to check the
    indexes against the log: 64 MB for 1.64 M batches, ~700 MB for a 1 GiB segment of
    minimum-size batches. Now the entries are matched as the log is scanned:
    ``benchmarks/verify_memory_bench.py`` measures 0.4 MB for 1.64 M batches (73.6 MB
    before)."""
    d = _many_small_batches(tmp_path, 200_000)
    r = verify_index([d])
    assert r.ok and r.segments[0].batches == 200_000 and r.segments[0].index_entries > 3000
    assert _peak(lambda: verify_index([d])) < 2_000_000  # 8.9 MB before


@pytest.mark.slow
def test_audit_memory_does_not_grow_with_batches(tmp_path):
    """audit queued every small batch of a segment for the vectorised records check (its
    group was bounded by bytes of blocks only, ~600 bytes a batch besides): 1049 MB for
    1.64 M one-record batches. Now a group holds at most 8192 batches: 18 MB."""
    from kafkalog_cli.ops.audit import audit

    d = _many_small_batches(tmp_path, 100_000)
    (p,) = audit([d], engine="local").partitions
    assert (p.batches, p.records, p.ok) == (100_000, 100_000, True)
    assert _peak(lambda: audit([d], engine="local")) < 32_000_000  # 64 MB before
