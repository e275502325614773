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
from kafkalog_cli.recovery.scan import scan_log
from kafkalog_cli.storage.files import filename_prefix_from_offset

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
            if f == ".lock":
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


def expected_logs(segments: list[tuple[int, bytes]], all_segments: bool = True) -> dict[int, bytes]:
    """The .log bytes recovery must leave: each segment's valid prefix, and nothing after
    the first truncated one."""
    out = {}
    prev = None
    for base, data in sorted(segments):
        n, last = kp_valid_prefix(data, base, prev)
        out[base] = data[:n]
        if n < len(data):
            break
        if last is not None:
            prev = last
    return out


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
            q = Path(e["quarantine"]).read_bytes()
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
