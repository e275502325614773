"""The corruption matrix of ``kafkalog recover`` (the issue's acceptance list), on
partitions written by kafkalog and on copies of real broker partitions.

After ``recover --truncate`` every time: (1) each .log holds exactly the longest valid
prefix (kafka-python decides), (2) verify-index passes, (3) quarantine + what remains ==
what was there before, (4) a second recover does nothing, (5) --undo restores the bytes.
"""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest
from recovery_helpers import (
    CORPUS,
    _segments,
    check_recovery,
    copy_tree,
    legacy_partition,
    standard_partition,
)

from kafkalog_cli.ops.verify import verify_index
from kafkalog_cli.recovery import recover

# -- partitions written by kafkalog ----------------------------------------------------------

def _last_batch_span(data: bytes) -> tuple[int, int]:
    pos = 0
    last = 0
    while pos < len(data):
        last = pos
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
    return last, len(data)


def test_truncated_at_every_byte_of_the_last_batch(tmp_path):
    src = standard_partition(tmp_path / "src")
    log = sorted(src.glob("*.log"))[-1]
    start, end = _last_batch_span(log.read_bytes())
    for cut in range(start + 1, end):
        root = tmp_path / f"c{cut}"
        pdir = root / src.name
        shutil.copytree(src, pdir)
        p = pdir / log.name
        p.write_bytes(p.read_bytes()[:cut])
        check_recovery(root, pdir)
        shutil.rmtree(root)


def test_truncated_at_every_byte_of_a_legacy_last_batch(tmp_path):
    src = legacy_partition(tmp_path / "src")
    log = sorted(src.glob("*.log"))[-1]
    start, end = _last_batch_span(log.read_bytes())
    for cut in range(start + 1, end):
        root = tmp_path / f"c{cut}"
        pdir = root / src.name
        shutil.copytree(src, pdir)
        p = pdir / log.name
        p.write_bytes(p.read_bytes()[:cut])
        check_recovery(root, pdir, interval=256)
        shutil.rmtree(root)


def _no(pdir: Path, pattern: str) -> None:
    assert not list(pdir.glob(pattern))


def _flip(path: Path, at: int) -> None:
    b = bytearray(path.read_bytes())
    b[at] ^= 0x10
    path.write_bytes(bytes(b))


def _middle_batch(path: Path) -> int:
    data = path.read_bytes()
    pos, starts = 0, []
    while pos < len(data):
        starts.append(pos)
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
    return starts[len(starts) // 2]


@pytest.mark.parametrize("where", ["base_offset", "length", "epoch", "magic", "crc",
                                   "attributes", "last_offset_delta", "records"])
@pytest.mark.parametrize("segment", [0, 1])
def test_flipped_bit_in_a_middle_batch(tmp_path, where, segment):
    pdir = standard_partition(tmp_path)
    log = sorted(pdir.glob("*.log"))[segment]
    mid = _middle_batch(log)
    at = {"base_offset": 7, "length": 11, "epoch": 15, "magic": 16, "crc": 19,
          "attributes": 22, "last_offset_delta": 25, "records": 70}[where]
    _flip(log, mid + at)
    check_recovery(tmp_path, pdir)


def test_corrupt_segment_without_index_keeps_the_segments_after_it(tmp_path):
    """LogLoader.loadSegmentFiles recovers a segment whose .index is missing on its own
    (truncating its corrupt tail without touching the segments after it); recoverLog's
    pass over it then truncates nothing, so, unlike a corruption found by recoverLog,
    the later segments stay."""
    pdir = standard_partition(tmp_path)
    logs = sorted(pdir.glob("*.log"))
    mid = _middle_batch(logs[1])
    _flip(logs[1], mid + 70)
    logs[1].with_suffix(".index").unlink()
    res = recover([pdir])
    assert not any(a.kind == "delete" and a.path.endswith(".log")
                   for a in res.partitions[0].actions)
    assert [s.removed for s in res.partitions[0].segments] == [False, False, False]
    check_recovery(tmp_path, pdir, then=lambda: None if sorted(pdir.glob("*.log")) == logs
                   else pytest.fail("a segment was removed"))


def test_garbage_appended(tmp_path):
    pdir = standard_partition(tmp_path)
    log = sorted(pdir.glob("*.log"))[-1]
    with open(log, "ab") as f:
        f.write(os.urandom(777))
    check_recovery(tmp_path, pdir)


@pytest.mark.parametrize("zeros", [5, 17, 4096])
def test_zero_filled_tail(tmp_path, zeros):
    pdir = standard_partition(tmp_path)
    log = sorted(pdir.glob("*.log"))[-1]
    with open(log, "ab") as f:
        f.write(bytes(zeros))
    check_recovery(tmp_path, pdir)


def test_zero_filled_tail_in_a_middle_segment_removes_what_follows(tmp_path):
    pdir = standard_partition(tmp_path)
    log = sorted(pdir.glob("*.log"))[1]
    with open(log, "ab") as f:
        f.write(bytes(1000))
    res = recover([pdir])
    rep = res.partitions[0]
    assert [s.removed for s in rep.segments] == [False, False, True]
    check_recovery(tmp_path, pdir)


@pytest.mark.parametrize("which", [".index", ".timeindex"])
def test_missing_index(tmp_path, which):
    pdir = standard_partition(tmp_path)
    (sorted(pdir.glob("*.log"))[1].with_suffix(which)).unlink()
    check_recovery(tmp_path, pdir)


@pytest.mark.parametrize("how", ["wrong_length", "out_of_order", "past_the_end"])
@pytest.mark.parametrize("which", [".index", ".timeindex"])
def test_corrupted_index(tmp_path, how, which):
    pdir = standard_partition(tmp_path)
    idx = sorted(pdir.glob("*.log"))[0].with_suffix(which)
    data = bytearray(idx.read_bytes())
    size = 8 if which == ".index" else 12
    assert len(data) >= 2 * size
    if how == "wrong_length":
        data += b"\x01\x02\x03"
    elif how == "out_of_order":
        data[0:size], data[size:2 * size] = data[size:2 * size], data[0:size]
    else:
        data += (struct.pack(">ii", 10**6, 10**7) if which == ".index"
                 else struct.pack(">qi", 2**40, 10**6))
    idx.write_bytes(bytes(data))
    res = recover([pdir], all_segments=True)
    assert any(a.path == str(idx) for a in res.partitions[0].actions)
    check_recovery(tmp_path, pdir)


def test_half_written_swap(tmp_path):
    pdir = standard_partition(tmp_path)
    seg = sorted(pdir.glob("*.log"))[1]
    data = seg.read_bytes()
    (pdir / (seg.name + ".swap")).write_bytes(data[:len(data) // 2])
    check_recovery(tmp_path, pdir, then=lambda: _no(pdir, "*.swap"))


def test_complete_swap_replaces_the_segments_it_covers(tmp_path):
    pdir = standard_partition(tmp_path)
    logs = sorted(pdir.glob("*.log"))
    merged = logs[0].read_bytes() + logs[1].read_bytes()
    (pdir / (logs[0].name + ".swap")).write_bytes(merged)
    res = recover([pdir])
    kinds = [(a.kind, Path(a.path).name) for a in res.partitions[0].actions]
    assert ("rename", logs[0].name + ".swap") in kinds
    assert ("delete", logs[1].name) in kinds
    def then():
        assert sorted(p.name for p in pdir.glob("*.log")) == [logs[0].name, logs[2].name]
    check_recovery(tmp_path, pdir, then=then)


def test_cleaned_and_deleted_leftovers(tmp_path):
    pdir = standard_partition(tmp_path)
    logs = sorted(pdir.glob("*.log"))
    (pdir / (logs[1].name + ".cleaned")).write_bytes(logs[1].read_bytes()[:300])
    (pdir / (logs[2].name + ".swap")).write_bytes(logs[2].read_bytes())  # unfinished split
    (pdir / (logs[0].name + ".deleted")).write_bytes(b"old")
    (pdir / "00000000000000000999.index").write_bytes(bytes(8))  # orphan
    def then():
        names = {p.name for p in pdir.iterdir()}
        assert not any(n.endswith((".cleaned", ".deleted", ".swap")) for n in names)
        assert "00000000000000000999.index" not in names
    check_recovery(tmp_path, pdir, then=then)


def test_clean_shutdown_is_reported_and_skipped(tmp_path):
    pdir = standard_partition(tmp_path)
    (tmp_path / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":1}')
    log = sorted(pdir.glob("*.log"))[-1]
    with open(log, "ab") as f:
        f.write(b"junk" * 10)
    res = recover([pdir])
    rep = res.partitions[0]
    assert rep.clean_shutdown and not any(s.scanned for s in rep.segments)
    assert any("clean shutdown" in n for n in rep.notes)
    res = recover([pdir], all_segments=True)
    assert res.partitions[0].segments[-1].invalid_bytes == 40


def test_recovery_point_limits_the_scan(tmp_path):
    pdir = standard_partition(tmp_path)
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n1\ntopic 0 100\n")
    res = recover([pdir])
    assert [s.scanned for s in res.partitions[0].segments] == [False, True, True]
    assert res.partitions[0].checkpoint_updates == {"recovery-point-offset-checkpoint": 176}
    def then():
        assert (tmp_path / "recovery-point-offset-checkpoint").read_text() == \
            "0\n1\ntopic 0 176\n"
    check_recovery(tmp_path, pdir, all_segments=False, then=then)


def test_preallocated_indexes_of_a_recovered_segment_are_rebuilt(tmp_path):
    """After an unclean shutdown the active segment's index files are still preallocated
    (zero-filled tails). LogSegment.recover resets and trims them; recover must do the
    same before it moves the recovery point past the segment, or a broker would trust a
    .timeindex whose last slot reads as timestamp 0 (and delete the segment by
    retention)."""
    from kafkalog_cli.storage.segment import rebuild_indexes

    pdir = standard_partition(tmp_path)
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n1\ntopic 0 150\n")
    base = max(b for b, _ in _segments(pdir))
    prefix = pdir / f"{base:020d}"
    rebuilt = rebuild_indexes(prefix.with_suffix(".log").read_bytes(), base)
    for suf, size in ((".index", 8 << 10), (".timeindex", 12 << 10)):
        f = prefix.with_suffix(suf)
        f.write_bytes(f.read_bytes().ljust(size, b"\0"))
    assert not verify_index([pdir]).ok  # the .timeindex fails TimeIndex.sanityCheck

    def then():
        assert prefix.with_suffix(".index").read_bytes() == rebuilt.offset_index_bytes(base)
        assert prefix.with_suffix(".timeindex").read_bytes() == rebuilt.time_index_bytes(base)
    check_recovery(tmp_path, pdir, all_segments=False, then=then)


def test_time_index_without_its_final_entry_is_rebuilt(tmp_path):
    """A recovered segment's .timeindex gets the entry for the segment's largest timestamp
    that LogSegment.recover appends, also when the rest of the file is right."""
    pdir = standard_partition(tmp_path)
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n1\ntopic 0 0\n")
    first = pdir / f"{0:020d}.timeindex"
    full = first.read_bytes()
    first.write_bytes(full[:-12])
    res = recover([pdir])
    (write,) = [a for a in res.partitions[0].actions if a.path == str(first)]
    assert "entries missing" in write.reason
    check_recovery(tmp_path, pdir, all_segments=False,
                   then=lambda: first.read_bytes() == full or pytest.fail("not rebuilt"))


def test_lock_is_honoured(tmp_path):
    from kafkalog_cli.errors import LogDirLockedError
    from kafkalog_cli.storage.lock import LogDirLock

    pdir = standard_partition(tmp_path)
    with LogDirLock(tmp_path):
        with pytest.raises(LogDirLockedError):
            recover([pdir], truncate=True)


def test_derived_files(tmp_path):
    from kafkalog_cli.schema.producer_snapshot import parse_snapshot
    from kafkalog_cli.schema.txn_index import parse_txn_index
    from kafkalog_cli.storage.checkpoints import read_leader_epoch_checkpoint

    pdir = standard_partition(tmp_path)
    recover([pdir], truncate=True)
    assert read_leader_epoch_checkpoint(pdir / "leader-epoch-checkpoint") == \
        [(0, 0), (1, 60), (2, 150)]
    snap = parse_snapshot((pdir / "00000000000000000176.snapshot").read_bytes())
    by_pid = {e.producer_id: e for e in snap}
    assert by_pid[7].last_sequence == 89 and by_pid[7].last_offset == 149
    assert by_pid[9].current_txn_first_offset == -1 and by_pid[9].coordinator_epoch == 3
    (txn,) = parse_txn_index((pdir / "00000000000000000150.txnindex").read_bytes())
    assert (txn.producer_id, txn.first_offset, txn.last_offset, txn.last_stable_offset) == \
        (9, 150, 155, 156)


# -- copies of real broker partitions -----------------------------------------------------

CORPUS_PARTITIONS = [
    "dipendrasaini__kafka-learnning-series/tmp/kafka-logs/invoice-0",
    "xpxwo100__bullShit/tmp/kafka-logs/TEST-TOPIC-0",
    "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/"
    "_confluent-ksql-default__command_topic-0",
    "DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-39",
    "saikrupa82__Project-Real-time-Sentiment-Analysis/kafka-logs/test-0",
]


def _corpus(rel: str) -> Path:
    p = CORPUS / rel
    if not p.is_dir():
        pytest.skip(f"corpus partition {rel} absent")
    return p


@pytest.mark.corpus
@pytest.mark.parametrize("rel", CORPUS_PARTITIONS)
def test_corpus_pristine_copy(tmp_path, rel):
    """A healthy broker partition, every segment recovered (--all): every .log byte is
    kept; the indexes are LogSegment.recover's (rewritten where the broker's files differ,
    e.g. written with another index.interval.bytes) and verify; a second run is a no-op;
    undo restores all."""
    pdir = copy_tree(_corpus(rel), tmp_path / Path(rel).name)
    logs_before = dict(_segments(pdir))
    res = recover([pdir], all_segments=True)
    for a in res.partitions[0].actions:
        assert a.kind != "truncate" and not a.path.endswith(".log")
    assert verify_index([pdir]).ok
    check_recovery(tmp_path, pdir)
    assert dict(_segments(pdir)) == logs_before


@pytest.mark.corpus
@pytest.mark.parametrize("rel", CORPUS_PARTITIONS)
def test_corpus_corruption_matrix(tmp_path, rel):
    src = _corpus(rel)
    logs = sorted(p for p in src.glob("*.log") if p.stat().st_size)
    if not logs:
        pytest.skip("no data")
    n = 0

    def case(mutate):
        nonlocal n
        n += 1
        root = tmp_path / f"case{n}"
        pdir = copy_tree(src, root / src.name)
        mutate(pdir)
        check_recovery(root, pdir)
        shutil.rmtree(root)

    last = logs[-1]
    start, end = _last_batch_span(last.read_bytes())
    span = end - start
    # every byte of the last batch is covered on kafkalog-written partitions; here a
    # spread of positions (both framing fields, the header, the records) keeps it fast
    cuts = sorted({start + 1, start + 8, start + 12, start + 17, start + 30, start + 61,
                   end - 1} | {start + 1 + (span - 2) * i // 6 for i in range(7)})
    cuts = [c for c in cuts if start < c < end]

    def cutter(at):
        def m(pdir):
            p = pdir / last.name
            p.write_bytes(p.read_bytes()[:at])
        return m

    for at in cuts:
        case(cutter(at))
    mid_log = logs[len(logs) // 2]
    mid = _middle_batch(mid_log)
    for off in (11, 19, 40 if mid_log.read_bytes()[mid + 16] == 2 else 30):
        case(lambda pdir, off=off: _flip(pdir / mid_log.name, mid + off))

    def garbage(pdir):
        with open(pdir / last.name, "ab") as f:
            f.write(os.urandom(123))
    case(garbage)

    def zeros(pdir):
        with open(pdir / last.name, "ab") as f:
            f.write(bytes(3000))
    case(zeros)

    def no_index(pdir):
        (pdir / mid_log.name).with_suffix(".index").unlink(missing_ok=True)
    case(no_index)

    def bad_index(pdir):
        p = (pdir / mid_log.name).with_suffix(".index")
        p.write_bytes((p.read_bytes() if p.exists() else b"") + struct.pack(">ii", 5, 10**8))
    case(bad_index)

    def swap(pdir):
        data = (pdir / mid_log.name).read_bytes()
        (pdir / (mid_log.name + ".swap")).write_bytes(data[:len(data) * 2 // 3])
    case(swap)

    def cleaned(pdir):
        (pdir / (mid_log.name + ".cleaned")).write_bytes(b"x" * 100)
    case(cleaned)


# -- found by the fuzz harness (tests/fuzz) ------------------------------------------------------

def test_index_pointing_inside_a_batch_below_the_recovery_point(tmp_path):
    """A clean shutdown, the recovery point at the log end: the broker recovers nothing
    and finds the log end offset from the last offset-index entry (readNextOffset). The
    log's first batch was rewritten 4 bytes longer (a valid batch, CRC and all) after
    the index was written, so that entry points 4 bytes inside a batch: the header read
    there is record bytes, and kafkalog took its offsets for the log end offset
    (-8815280599624318975 on a corpus partition) and planned a producer snapshot named
    ``-8815280599624318975.snapshot``. Now that segment is recovered (its last index
    entry is not the start of a batch holding its offset)."""
    from recovery_helpers import make_batches, write_partition

    from kafkalog_cli.format.builder import build_batch

    batches = make_batches(0, 40, value_size=200)
    pdir = write_partition(tmp_path, [batches], interval=1024)
    log = pdir / "00000000000000000000.log"
    longer = build_batch([(1_700_000_000_000, b"k0", b"A" * 204, ())], base_offset=0)
    assert len(longer) == len(batches[0]) + 4
    log.write_bytes(longer + b"".join(batches[1:]))
    (tmp_path / ".kafka_cleanshutdown").write_bytes(b"")
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n1\ntopic 0 40\n")
    rep = recover([pdir]).partitions[0]
    assert rep.log_end_offset == 40
    assert all(not os.path.basename(a.path).startswith("-") for a in rep.actions)
    assert any(a.path == str(pdir / "00000000000000000000.index") for a in rep.actions)
    check_recovery(tmp_path, pdir, all_segments=False, interval=1024)
