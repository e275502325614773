"""ops.dump events: seeks through the offset index, ranges, bounds, index dumps."""

from __future__ import annotations

import random
import shutil
import struct

import pytest

from kafkalog_cli.errors import InvalidArgumentError
from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.ops import dump as dump_mod
from kafkalog_cli.ops.dump import DumpOptions, dump

SEG0 = "00000000000000000000"


def _events(paths, **kw):
    return list(dump([str(p) for p in paths], DumpOptions(**kw)))


def _index_entries(path):
    data = path.read_bytes()
    return [struct.unpack_from(">ii", data, i) for i in range(0, len(data) - len(data) % 8, 8)]


def test_start_offset_seeks_through_the_index(fixtures_root, monkeypatch):
    seg = fixtures_root / "multi-0" / f"{SEG0}.log"
    entries = _index_entries(fixtures_root / "multi-0" / f"{SEG0}.index")
    assert len(entries) >= 3
    rel, pos = entries[2]
    target = rel + 2  # inside the batch after the one the entry names
    starts = []

    records = dump_mod.LogSegment.records

    def spy(self, start=0, end=None):
        starts.append(start)
        return records(self, start, end)

    monkeypatch.setattr(dump_mod.LogSegment, "records", spy)
    evs = _events([seg], start_offset=target, deep_iteration=True)
    assert starts == [pos]  # the scan began at the index entry's position, not at 0
    batches = [e for e in evs if e["type"] == "batch"]
    assert batches[0]["baseOffset"] <= target <= batches[0]["lastOffset"]
    recs = [e for e in evs if e["type"] == "record"]
    assert recs[0]["offset"] == target


def test_start_and_end_offset_range(fixtures_root):
    evs = _events([fixtures_root / "multi-0"], start_offset=90, end_offset=93,
                  deep_iteration=True)
    files = [e["file"].rsplit("/", 1)[1] for e in evs if e["type"] == "file"]
    assert files == [f"{SEG0}.log", "00000000000000000088.log"]  # 164 is past the end
    assert [e["offset"] for e in evs if e["type"] == "record"] == [90, 91, 92, 93]
    assert not [e for e in evs if e["type"] == "invalid_bytes"]


def test_end_offset_inside_legacy_wrapper(fixtures_root):
    # the gzip wrapper holds offsets 2..4 (its entry offset is 4): ending at 3 keeps it
    evs = _events([fixtures_root / "legacy-v1-0"], end_offset=3, deep_iteration=True)
    assert [e["offset"] for e in evs if e["type"] == "record"] == [0, 1, 2, 3]


def test_max_bytes(fixtures_root):
    seg = fixtures_root / "corrupt-truncated-0" / f"{SEG0}.log"
    evs = _events([seg], max_bytes=2500)
    assert [e["position"] for e in evs if e["type"] == "batch"] == [0, 1001]
    # Kafka reports trailing bytes only when reading the whole file
    assert not [e for e in evs if e["type"] == "invalid_bytes"]
    evs = _events([seg])
    (inv,) = [e for e in evs if e["type"] == "invalid_bytes"]
    assert (inv["position"], inv["bytes"]) == (5005, 901)


def test_zero_tail_reason(fixtures_root):
    evs = _events([fixtures_root / "corrupt-zero-tail-0"])
    (inv,) = [e for e in evs if e["type"] == "invalid_bytes"]
    assert inv["bytes"] == 1000 and "size 0" in inv["reason"]


def test_control_events(fixtures_root):
    evs = _events([fixtures_root / "txn-0"], deep_iteration=True)
    ctrl = [e for e in evs if e["type"] == "record" and "controlType" in e]
    assert [(e["offset"], e["controlType"], e["coordinatorEpoch"]) for e in ctrl] == \
        [(3, "COMMIT", 4), (6, "ABORT", 4)]


def test_partition_dir_in_offset_order(fixtures_root):
    evs = _events([fixtures_root / "multi-0"])
    assert [e["startOffset"] for e in evs if e["type"] == "file"] == [0, 88, 164]


def test_index_dumps(fixtures_root):
    d = fixtures_root / "multi-0"
    evs = _events([d / f"{SEG0}.index", d / f"{SEG0}.timeindex"])
    idx = [(e["offset"], e["position"]) for e in evs if e["type"] == "index_entry"]
    assert idx == [(r, p) for r, p in _index_entries(d / f"{SEG0}.index")]
    traw = (d / f"{SEG0}.timeindex").read_bytes()
    expected = [struct.unpack_from(">qi", traw, i) for i in range(0, len(traw), 12)]
    assert [(e["timestamp"], e["offset"]) for e in evs if e["type"] == "timeindex_entry"] \
        == expected
    assert not [e for e in evs if e["type"] == "diagnostic"]


def test_empty_index(fixtures_root):
    evs = _events([fixtures_root / "plain-0" / f"{SEG0}.index"])
    assert [e["type"] for e in evs] == ["file", "index_empty"]


def _mismatches(evs):
    diags = [e for e in evs if e["type"] == "diagnostic"]
    assert len(diags) <= 1
    return [(m["indexOffset"], m["logOffset"]) for m in diags[0]["mismatches"]] if diags else []


@pytest.mark.parametrize("with_log", [False, True])
def test_garbage_index_is_an_error_not_a_crash(fixtures_root, tmp_path, with_log):
    """Random bytes as a .index (fixed seed): Kafka's DumpLogSegments dies at the first
    entry whose position is outside the log (FileRecords.slice's
    IllegalArgumentException), before printing it; kafkalog prints what the tool printed
    and an error naming that entry instead of a stack trace."""
    d = tmp_path / "t-0"
    d.mkdir()
    raw = random.Random(20240605).randbytes(100)
    (d / f"{SEG0}.index").write_bytes(raw)
    log_size = 0
    if with_log:
        shutil.copy(fixtures_root / "multi-0" / f"{SEG0}.log", d / f"{SEG0}.log")
        log_size = (d / f"{SEG0}.log").stat().st_size
    stored = [struct.unpack_from(">ii", raw, i) for i in range(0, 96, 8)]
    assert all(rel != 0 for rel, _ in stored[1:])  # no zero-filled-tail stop
    assert any(pos < 0 for _, pos in stored)
    assert all(not 0 <= pos < log_size for _, pos in stored)
    evs = _events([d / f"{SEG0}.index"])
    if not with_log:  # DumpLogSegments opens the .log first: NoSuchFileException, exit 1
        assert [(e["type"], e.get("kind")) for e in evs] == [("file", "index"),
                                                             ("diagnostic", "missing_log")]
        assert evs[1]["error"] and f"{SEG0}.log" in evs[1]["message"]
        return
    assert [(e["type"], e.get("kind")) for e in evs] == [("file", "index"),
                                                         ("diagnostic", "corrupt_index")]
    rel, pos = stored[0]
    assert evs[1]["error"] and f"offset {rel} points at position {pos} of the .log" \
        in evs[1]["message"]
    assert (f"Invalid position: {pos} in read from" if pos < 0 else
            f"Slice from position {pos} exceeds end position of") in evs[1]["message"]


@pytest.mark.parametrize("bad", ["negative", "end", "past-end", "mid-batch"])
def test_index_entry_outside_the_log_is_an_error(fixtures_root, tmp_path, bad):
    """An entry at which no whole batch starts ends the index's dump with an error naming
    it, where Kafka's tool dies: IllegalArgumentException from FileRecords.slice (a
    negative position, one past the end), NoSuchElementException (the end itself: no
    batch there), CorruptRecordException (the middle of a batch, read as a size below 14
    bytes). The entries before it are printed, as the tool prints them, and no mismatch
    report follows (the tool never reaches it). The messages are Kafka 4.4.0's, as its
    DumpLogSegments printed them for these four indexes."""
    d = tmp_path / "t-0"
    d.mkdir()
    shutil.copy(fixtures_root / "multi-0" / f"{SEG0}.log", d / f"{SEG0}.log")
    size = (d / f"{SEG0}.log").stat().st_size
    good = _index_entries(fixtures_root / "multi-0" / f"{SEG0}.index")
    position = {"negative": -8, "end": size, "past-end": size + 10,
                "mid-batch": good[1][1] + 3}[bad]
    entries = [good[0], (good[1][0], position), good[2]]
    (d / f"{SEG0}.index").write_bytes(b"".join(struct.pack(">ii", *e) for e in entries))
    evs = _events([d / f"{SEG0}.index"])
    assert [(e["offset"], e["position"]) for e in evs if e["type"] == "index_entry"] \
        == entries[:1]
    diags = [e for e in evs if e["type"] == "diagnostic"]
    assert len(diags) == 1 and diags[0]["error"] and diags[0]["kind"] == "corrupt_index"
    assert f"points at position {position} of the .log" in diags[0]["message"]
    assert {"negative": "Invalid position: -8 in read from FileRecords(size=",
            "end": "NoSuchElementException", "past-end": "exceeds end position of",
            "mid-batch": "Found record size -721420288 smaller than minimum record overhead "
                         "(14)"}[bad] in diags[0]["message"]


def test_file_records_rejects_a_negative_start():
    with pytest.raises(InvalidArgumentError, match="-8"):
        FileRecords(b"\x00" * 100, -8)


@pytest.mark.parametrize("name,ok", [("multi-0", True), ("corrupt-index-length-0", False)])
def test_index_sanity_check(fixtures_root, name, ok):
    evs = _events([fixtures_root / name / f"{SEG0}.index"], index_sanity_check=True)
    types = [e["type"] for e in evs]
    assert types == (["file", "index_sane"] if ok else ["file", "diagnostic"])
    if not ok:  # Kafka's sanityCheck throws: corrupt data, not a mismatch
        assert evs[1]["error"] is True and evs[1]["kind"] == "corrupt_index"


def test_corrupt_records_and_mismatches_are_told_apart(tmp_path, fixtures_root):
    """Record-level corruption (where Kafka's tool throws) is a diagnostic with
    ``error: True`` naming the file and the batch's position; index-vs-log mismatches
    (Kafka prints them and exits 0) are not errors."""
    from kafkalog_testkit import raw_batch, raw_record

    d = tmp_path / "cnt-0"
    d.mkdir()
    good = raw_batch(0, [raw_record(0, 0, b"k", b"v")])
    bad = raw_batch(1, [raw_record(0, 0, b"k", b"v")], count=2, last_delta=1)
    log = d / f"{SEG0}.log"
    log.write_bytes(good + bad)
    (diag,) = [e for e in _events([log], deep_iteration=True) if e["type"] == "diagnostic"]
    assert (diag["error"], diag["kind"], diag["position"]) == (True, "corrupt_record", len(good))
    assert diag["message"] == (f"{log} at byte {len(good)}: Incorrect declared batch size, "
                               "premature EOF reached")
    # the time index check reads the same records: the same error, not a mismatch
    (d / f"{SEG0}.index").write_bytes(b"")
    (d / f"{SEG0}.timeindex").write_bytes(struct.pack(">qi", 1000, 2))  # bad's last offset
    diags = [e for e in _events([d / f"{SEG0}.timeindex"]) if e["type"] == "diagnostic"]
    assert [(e.get("error"), e.get("position")) for e in diags] == [(True, len(good))]
    # an entry at a batch's start naming another offset: a mismatch, not an error
    m = tmp_path / "mism-0"
    m.mkdir()
    shutil.copy(fixtures_root / "multi-0" / f"{SEG0}.log", m / f"{SEG0}.log")
    rel, pos = _index_entries(fixtures_root / "multi-0" / f"{SEG0}.index")[0]
    (m / f"{SEG0}.index").write_bytes(struct.pack(">ii", rel + 1, pos))
    mism = [e for e in _events([m / f"{SEG0}.index"]) if e["type"] == "diagnostic"]
    assert [d["mismatches"] for d in mism] == [[{"indexOffset": rel + 1, "logOffset": rel}]]
    assert not any(e.get("error") for e in mism)


@pytest.mark.corpus
def test_corpus_dumps_with_deep_iteration_without_error(corpus_root):
    """Every .log of the corpus dumps with deep iteration: no diagnostics but the
    non-consecutive offsets of compacted or later segments (exactly the gaps of the
    records dumped, from -1), no invalid bytes, and one record event per record
    (CATALOG: 704676 records in .log files)."""
    logs = sorted(corpus_root.rglob("*.log"))
    records = 0
    offsets: dict[str, list[int]] = {}
    reported: dict[str, list[tuple[int, int]]] = {}
    file = None
    files_done = False  # Kafka 4's tool reports the gaps after the last file
    for ev in dump([str(p) for p in logs], DumpOptions(deep_iteration=True)):
        t = ev["type"]
        if t == "file":
            assert not files_done
            file = ev["file"]
        elif t == "diagnostic" and ev.get("kind") == "non_consecutive_offsets":
            files_done = True
            reported[ev["file"]] = [(g["offset"], g["nextOffset"])
                                    for g in ev["nonConsecutive"]]
            continue
        assert t not in ("diagnostic", "invalid_bytes"), ev
        if t == "record":
            records += 1
            offsets.setdefault(file, []).append(ev["offset"])
    assert records == 704676
    expected = {}
    for f, offs in offsets.items():
        pairs = zip([-1, *offs[:-1]], offs, strict=True)
        gaps = sorted({a: b for a, b in pairs if b != a + 1}.items())
        if gaps:
            expected[f] = gaps
    assert reported == expected and len(reported) > 10


def test_record_sequence_is_no_sequence_for_any_negative_base_sequence(tmp_path):
    """DefaultRecord.sequence: baseSequence >= 0 ? incrementSequence(..) : NO_SEQUENCE, so a
    base sequence of -2 gives -1 on every record (the batch's lastSequence still adds the
    delta: DefaultRecordBatch.lastSequence checks only NO_SEQUENCE)."""
    from kafkalog_testkit import raw_batch, raw_record

    d = tmp_path / "t-0"
    d.mkdir()
    (d / f"{SEG0}.log").write_bytes(raw_batch(
        0, [raw_record(0, 0, b"k", b"v"), raw_record(1, 0, None, None)], base_seq=-2, pid=5,
        epoch=0))
    evs = _events([d / f"{SEG0}.log"], deep_iteration=True)
    (batch,) = [e for e in evs if e["type"] == "batch"]
    assert (batch["baseSequence"], batch["lastSequence"]) == (-2, -1)
    assert [e["sequence"] for e in evs if e["type"] == "record"] == [-1, -1]


def test_time_index_log_timestamp_starts_from_no_timestamp(tmp_path):
    """dumpTimeIndex: maxTimestamp starts at NO_TIMESTAMP (-1) and takes
    max(maxTimestamp, record.timestamp), so a batch whose timestamps are all below -1
    has log timestamp -1."""
    from kafkalog_testkit import raw_batch, raw_record

    d = tmp_path / "negts-0"
    d.mkdir()
    b0 = raw_batch(0, [raw_record(0, 0, b"k", b"v"), raw_record(1, -3, b"k", b"v")],
                   base_ts=-5, max_ts=-5)
    b1 = raw_batch(2, [raw_record(0, 0, b"k", b"v")], base_ts=-7, max_ts=-7)
    (d / f"{SEG0}.log").write_bytes(b0 + b1)
    (d / f"{SEG0}.index").write_bytes(b"")
    (d / f"{SEG0}.timeindex").write_bytes(struct.pack(">qi", -5, 1) + struct.pack(">qi", -3, 2))
    evs = _events([d / f"{SEG0}.timeindex"])
    diags = [e["message"] for e in evs if e["type"] == "diagnostic"]
    full = (d / f"{SEG0}.timeindex").absolute()
    assert diags[0].splitlines() == [
        f"Found timestamp mismatch in :{full}",
        "  Index timestamp: -5, log timestamp: -1",
        "  Index timestamp: -3, log timestamp: -1",
    ]


def _gap_log(tmp_path, offsets_per_batch):
    """A .log of one batch per list of absolute offsets (deltas from the first)."""
    from kafkalog_testkit import raw_batch, raw_record

    d = tmp_path / "gaps-0"
    d.mkdir(exist_ok=True)
    data = b"".join(
        raw_batch(offs[0], [raw_record(o - offs[0], 0, b"k", b"v") for o in offs],
                  last_delta=offs[-1] - offs[0])
        for offs in offsets_per_batch)
    log = d / f"{SEG0}.log"
    log.write_bytes(data)
    return log


def _non_consecutive(evs):
    return [e for e in evs if e["type"] == "diagnostic"
            and e.get("kind") == "non_consecutive_offsets"]


def test_non_consecutive_offsets_with_deep_iteration(tmp_path):
    """DumpLogSegments.dumpBatchRecords: with deep iteration (or print-data-log), each
    record whose offset is not the previous one's + 1 (from -1) is collected per file and
    printed as 'Non-consecutive offsets in <absolute path>' / '  A is followed by B', by
    A (a TreeMap: a later pair with the same A replaces the earlier one)."""
    log = _gap_log(tmp_path, [[4], [16, 17], [0, 2], [0, 3]])
    for kw in ({"deep_iteration": True}, {"print_data_log": True}):
        evs = _events([log], **kw)
        (d,) = _non_consecutive(evs)
        assert evs[-1] is d  # after the file's dump
        assert d["message"].splitlines() == [
            f"Non-consecutive offsets in {log.absolute()}",
            "  -1 is followed by 4",
            "  0 is followed by 3",
            "  2 is followed by 0",
            "  4 is followed by 16",
            "  17 is followed by 0",
        ]
        assert d["nonConsecutive"][0] == {"offset": -1, "nextOffset": 4}
    # shallow iteration reads no record: nothing to compare
    assert not _non_consecutive(_events([log]))


def test_consecutive_offsets_from_zero_report_nothing(fixtures_root):
    # legacy-v1-0 holds a gzip wrapper: its inner offsets are the records compared
    for part in ("plain-0", "legacy-v1-0", "txn-0"):
        assert not _non_consecutive(_events([fixtures_root / part], deep_iteration=True))
    # a later segment starts above 0: '-1 is followed by <base offset>', per file, after
    # the last file (in the order of the tool's HashMap of absolute paths, which depends
    # on where the checkout is: test_java_hash_map_order checks it)
    evs = _events([fixtures_root / "multi-0"], deep_iteration=True)
    got = sorted((e["file"].rsplit("/", 1)[1], e["nonConsecutive"])
                 for e in _non_consecutive(evs))
    assert got == [("00000000000000000088.log", [{"offset": -1, "nextOffset": 88}]),
                   ("00000000000000000164.log", [{"offset": -1, "nextOffset": 164}])]
    assert evs[-2:] == _non_consecutive(evs)


def test_non_consecutive_offsets_after_a_seek(tmp_path):
    """With --start-offset the dump does not begin at the file's first record: the first
    record dumped is not compared with -1, the ones after it are."""
    log = _gap_log(tmp_path, [[0, 1], [5, 6], [9]])
    evs = _events([log], deep_iteration=True, start_offset=5)
    (d,) = _non_consecutive(evs)
    assert d["nonConsecutive"] == [{"offset": 6, "nextOffset": 9}]
    evs = _events([log], deep_iteration=True, start_offset=6)
    (d,) = _non_consecutive(evs)
    assert d["nonConsecutive"] == [{"offset": 6, "nextOffset": 9}]


def test_non_consecutive_pairs_kept_are_bounded(tmp_path, monkeypatch):
    """A log whose every record jumps would keep a pair per record until the file's dump
    ends: past MAX_NON_CONSECUTIVE_PAIRS the pairs are counted, not kept (the first ones
    printed as Kafka's tool prints them, plus one line saying how many more)."""
    monkeypatch.setattr(dump_mod, "MAX_NON_CONSECUTIVE_PAIRS", 3)
    log = _gap_log(tmp_path, [[0, 2, 4, 6, 8, 10, 12]])
    (d,) = _non_consecutive(_events([log], deep_iteration=True))
    assert d["message"].splitlines() == [
        f"Non-consecutive offsets in {log.absolute()}",
        "  0 is followed by 2", "  2 is followed by 4", "  4 is followed by 6",
        "  ... and 3 more (kafkalog keeps the first 3 pairs of a file)"]
    assert d["nonConsecutiveNotKept"] == 3 and len(d["nonConsecutive"]) == 3


JAVA_HASH_MAP = """
import java.util.*;
public class HashMapOrder {
    public static void main(String[] a) throws Exception {
        Map<String, List<Integer>> m = new HashMap<>();
        Scanner in = new Scanner(System.in, "UTF-8");
        while (in.hasNextLine()) {
            String line = in.nextLine();
            if (line.equals("---")) {  // one map per section
                for (String k : m.keySet()) System.out.println(k);
                System.out.println("---");
                m = new HashMap<>();
                continue;
            }
            String[] kv = line.split("\\t");
            for (int i = 0; i < Integer.parseInt(kv[1]); i++)
                m.computeIfAbsent(kv[0], k -> new ArrayList<>()).add(i);
        }
    }
}
"""


@pytest.mark.slow
def test_java_hash_map_order(tmp_path, java):
    """The reports Kafka 4's DumpLogSegments prints after the last file come in the order
    of a HashMap filled with computeIfAbsent, keyed by absolute paths: the JDK's own
    HashMap is the oracle, for 1 to 60 keys (resizes at 13, 25, 49 keys; a call for a
    key already present may resize too; a new key goes to the head of its bucket) and
    non-ASCII names."""
    import subprocess

    from kafkalog_cli.ops.dump import java_hash_map_order

    src = tmp_path / "HashMapOrder.java"
    src.write_text(JAVA_HASH_MAP)
    rng = random.Random(30)
    cases = []
    for n in (1, 2, 12, 13, 14, 25, 26, 49, 60, 200):
        calls = [(f"/var/lib/kafka/t{rng.randrange(10**6)}-{i}/{i:020d}.log",
                  rng.choice((1, 1, 2, 5))) for i in range(n)]
        calls.append(("/d/\u00e9v\u00e9nements-0/00000000000000000000.log", 1))
        calls.append(calls[0])  # the same file dumped twice
        cases.append(calls)
    text = "".join("".join(f"{k}\t{c}\n" for k, c in calls) + "---\n" for calls in cases)
    out = subprocess.run([java, str(src)], input=text, capture_output=True, text=True,
                         encoding="utf-8", check=True).stdout
    expected = [section.splitlines() for section in out.split("---\n")[:-1]]
    assert [java_hash_map_order(calls) for calls in cases] == expected
