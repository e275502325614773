"""Helpers of the recovery tests: build partitions with kafkalog's builder, copy corpus
partitions, snapshot a directory's bytes, decode a .log with kafka-python."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

from kafkalog_cli.format.builder import (
    build_batch,
    build_control_batch,
    build_legacy_message,
)
from kafkalog_cli.ops.verify import verify_segment
from kafkalog_cli.recovery import recover, undo
from kafkalog_cli.storage.files import filename_prefix_from_offset
from kafkalog_cli.storage.recovery_scan import scan_log, walk_log
from kafkalog_cli.storage.segment import LogSegment

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "real"


def make_batches(base: int, n: int, *, records: int = 1, epoch: int = 0, ts: int = 1_700_000_000_000,
                 value_size: int = 40, **kw) -> list[bytes]:
    out = []
    off = base
    for _ in range(n):
        recs = [(ts + off + j, b"k%d" % (off + j), bytes([65 + (off + j) % 26]) * value_size, ())
                for j in range(records)]
        out.append(build_batch(recs, base_offset=off, partition_leader_epoch=epoch, **kw))
        off += records
    return out


def write_partition(root: Path, segments: list[list[bytes]], *, name: str = "topic-0",
                    interval: int = 4096, indexes: bool = True) -> Path:
    """A partition directory whose segments hold the given batches, with indexes in the
    recovery layout (what a broker's recovery writes)."""
    d = root / name
    d.mkdir(parents=True)
    for batches in segments:
        base = int.from_bytes(batches[0][:8], "big", signed=True) if batches else 0
        prefix = filename_prefix_from_offset(base)
        data = b"".join(batches)
        (d / (prefix + ".log")).write_bytes(data)
        if indexes:
            s = scan_log(data, base, interval)
            (d / (prefix + ".index")).write_bytes(s.offset_index)
            (d / (prefix + ".timeindex")).write_bytes(s.time_index)
    return d


def standard_partition(root: Path, *, name: str = "topic-0") -> Path:
    """Three segments of small v2 batches (several per index interval), epochs 0..2,
    an idempotent producer, a transaction with an abort marker."""
    seg0 = make_batches(0, 60, epoch=0, value_size=100)
    # an idempotent producer: each batch's sequence continues the last
    seg1 = []
    off = 60
    for i in range(30):
        seg1 += make_batches(off, 1, records=3, epoch=1, producer_id=7, producer_epoch=0,
                             base_sequence=i * 3)
        off += 3
    seg2 = make_batches(150, 5, epoch=2, producer_id=9, producer_epoch=1, base_sequence=0,
                        is_transactional=True)
    seg2.append(build_control_batch(0, base_offset=155, timestamp=1_700_000_000_999,
                                    producer_id=9, producer_epoch=1, coordinator_epoch=3,
                                    partition_leader_epoch=2))
    seg2 += make_batches(156, 20, epoch=2)
    return write_partition(root, [seg0, seg1, seg2], name=name)


def legacy_partition(root: Path, *, name: str = "legacy-0") -> Path:
    batches = [build_legacy_message(i, b"k%d" % i, b"v" * 30, magic=1, timestamp=1000 + i)
               for i in range(40)]
    return write_partition(root, [batches], name=name, interval=256)


def copy_tree(src: Path, dst: Path) -> Path:
    """Copy a (read-only) corpus partition dir into a writable tmp dir."""
    shutil.copytree(src, dst, copy_function=shutil.copyfile)
    for dirpath, _dirs, filenames in os.walk(dst):
        os.chmod(dirpath, 0o755)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP)
    return dst


def tree_bytes(root: Path, *, skip_quarantine: bool = True) -> dict[str, bytes]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if skip_quarantine:
            dirnames[:] = [d for d in dirnames if d != ".kafkalog-quarantine"]
        for f in filenames:
            if f == ".lock" and skip_quarantine:
                continue
            p = Path(dirpath) / f
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


# -- the independent oracle (kafka-python) ------------------------------------------------

def kp_valid_prefix(data: bytes, base_offset: int, prev_last: int | None) -> tuple[int, int | None]:
    """Longest valid prefix of a .log by kafka-python's batch classes: the framing rules
    of FileLogInputStream, kafka-python's CRC check, offsets monotonic and relative to
    the base. Returns (valid bytes, last offset)."""
    import struct

    from kafka.record.default_records import DefaultRecordBatch
    from kafka.record.legacy_records import LegacyRecordBatch

    pos = 0
    last = prev_last
    end = len(data)
    while pos < end - 17:
        offset, size = struct.unpack_from(">qi", data, pos)
        if size < 14 or pos + 12 + size > end:
            break
        buf = bytearray(data[pos:pos + 12 + size])
        magic = buf[16]
        try:
            if magic == 2:
                if size < 49:
                    break
                b = DefaultRecordBatch(buf)
                if not b.validate_crc():
                    break
                first, lst = b.base_offset, b.last_offset
                if lst < first:
                    break
            elif magic in (0, 1):
                b = LegacyRecordBatch(buf, magic)
                if not b.validate_crc():
                    break
                first = lst = offset
            else:
                break
        except Exception:  # noqa: BLE001 - anything kafka-python rejects is invalid
            break
        if (last is not None and first <= last) or first < base_offset or \
                lst - base_offset > 2**31 - 1:
            break
        last = lst
        pos += 12 + size
    return pos, last


def expected_logs(segments: list[tuple[int, bytes]], all_segments: bool = True,
                  load_recovered: frozenset[int] | set[int] = frozenset()) -> dict[int, bytes]:
    """The .log bytes recovery must leave: each segment's valid prefix, and nothing after
    the first truncated one, unless that segment had no .index (``load_recovered``):
    LogLoader.loadSegmentFiles recovers such a segment on its own, and recoverLog's
    second pass over it truncates nothing, so the segments after it stay."""
    out = {}
    prev = None
    for base, data in sorted(segments):
        n, last = kp_valid_prefix(data, base, prev)
        out[base] = data[:n]
        if n < len(data) and base not in load_recovered:
            break
        if last is not None:
            prev = last
    return out


def quarantined_bytes(e: dict) -> bytes:
    """The bytes a manifest entry quarantined: its stored copy, then the zero bytes the
    copy leaves out up to the entry's length (``range`` of a cut, ``size`` of a removed
    or rewritten file or a checkpoint's old bytes)."""
    data = Path(e["quarantine"]).read_bytes()
    if e["action"] == "cut":
        length = e["range"][1] - e["range"][0]
    else:
        length = e.get("size")
    if length is None:
        return data
    assert len(data) <= length and (len(data) == length or data[-1:] != b"\0")
    return data + bytes(length - len(data))


def quarantine_accounts(before: dict[str, bytes], after: dict[str, bytes], root: Path,
                        sessions: list[Path]) -> list[str]:
    """Check that quarantine + what remains == what was there before, byte for byte.
    Returns the list of failures."""
    import json

    fails = []
    entries = []
    for s in sessions:
        entries += json.loads((s / "manifest.json").read_text())["entries"]
    renamed = {e["original"]: e["renamed_to"] for e in entries if e["action"] == "rename"}
    for rel, data in before.items():
        path = str(root / rel)
        cur_path = renamed.get(path, path)
        cur_rel = str(Path(cur_path).relative_to(root))
        if after.get(cur_rel) == data:
            continue
        ok = False
        for e in entries:
            if e["original"] not in (path, cur_path) or not e.get("quarantine"):
                continue
            q = quarantined_bytes(e)
            if e["action"] in ("remove", "rewrite", "checkpoint") and q == data:
                ok = True
            elif e["action"] == "cut":
                start, _ = e["range"]
                prefix = after.get(cur_rel, b"")
                if prefix[:start] + q == data or data[:start] + q == data:
                    ok = True
            if ok:
                break
        if not ok:
            fails.append(rel)
    return fails


def _segments(pdir: Path) -> list[tuple[int, bytes]]:
    return [(int(p.name[:20]), p.read_bytes()) for p in sorted(pdir.glob("*.log"))]


def _without_offset_index(pdir: Path) -> set[int]:
    """Bases of the segments that will have no .index once leftovers are dealt with. A
    swapped-in segment always has one: Kafka 4.4.0's LogLoader opens the .swap segment,
    which creates its missing index files (empty) before they are renamed with it, so
    loadSegmentFiles does not recover it on its own (seen on the bench:
    test_recovery_vs_broker's swap cases)."""
    swapped = {int(sw.name[:20]) for sw in pdir.glob("*.log.swap")}
    out = set()
    for base, _ in _effective_segments(pdir):
        if base not in swapped and not (pdir / f"{base:020d}.index").exists():
            out.add(base)
    return out


def _effective_segments(pdir: Path) -> list[tuple[int, bytes]]:
    """Segments as recovery will see them once leftovers are dealt with (a valid
    .log.swap replaces the segments it covers; .cleaned and .deleted do not count)."""
    segs = dict(_segments(pdir))
    for sw in pdir.glob("*.log.swap"):
        base = int(sw.name[:20])
        data = sw.read_bytes()
        w = walk_log(data)
        nxt = base if w.last_offset is None else w.last_offset + 1
        for b in list(segs):
            if base <= b < nxt:
                del segs[b]
        segs[base] = data
    return sorted(segs.items())


def check_recovery(root: Path, pdir: Path, *, all_segments: bool = True,
                   interval: int = 4096, then=None, before=None, expected=None) -> None:
    """Run recover --truncate on pdir and check the five acceptance properties
    (``before``/``expected``: the state before an interrupted run, when resuming one)."""
    if before is None:
        before = tree_bytes(root)
    if expected is None:
        expected = expected_logs(_effective_segments(pdir), all_segments,
                                 _without_offset_index(pdir))
    res = recover([pdir], truncate=True, all_segments=all_segments,
                  index_interval_bytes=interval)
    assert res.ok
    after = tree_bytes(root)
    if then is not None:
        then()
    # (1) exactly the longest valid prefix, nothing after the first truncation
    got = dict(_segments(pdir))
    assert sorted(got) == sorted(expected), (sorted(got), sorted(expected))
    for base, data in expected.items():
        assert got[base] == data, f"segment {base}: {len(got[base])} != {len(data)}"
    # (2) verify-index passes
    for base in got:
        seg = LogSegment(pdir, base)
        try:
            v = verify_segment(seg)
        finally:
            seg.close()
        assert v.ok, v.problems
        assert seg.index_path.exists() and seg.time_index_path.exists()
    # (3) quarantine + remaining == before
    sessions = sorted((pdir / ".kafkalog-quarantine").glob("*")) \
        if (pdir / ".kafkalog-quarantine").exists() else []
    assert len(sessions) <= 1
    assert quarantine_accounts(before, after, root, sessions) == []
    # (4) a second run does nothing
    again = recover([pdir], all_segments=all_segments, index_interval_bytes=interval)
    assert not again.work_needed, [a.to_dict() for p in again.partitions for a in p.actions]
    again = recover([pdir], truncate=True, all_segments=all_segments,
                    index_interval_bytes=interval)
    assert tree_bytes(root) == after
    # (5) undo restores the original bytes
    for s in sessions:
        u = undo(s)
        assert u.ok, u.conflicts
        # done: the session is gone (an undo that met conflicts keeps it, to rerun)
        assert u.removed and not Path(s).exists()
    assert tree_bytes(root) == before
