"""Builders of partition and log directories for the describe/read tests (written with
the project's batch builder and the broker's index rebuild, so indexes are what a broker
leaves after a roll)."""

from __future__ import annotations

import random
import struct
from pathlib import Path

from kafkalog_cli.format.builder import build_batch, build_control_batch
from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.storage.segment import rebuild_indexes

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "real"


def base_offset_of(batch: bytes) -> int:
    return struct.unpack_from(">q", batch)[0]


def write_partition(pdir: Path, batches: list[bytes], *, segment_bytes: int = 1 << 30,
                    index_interval: int = 4096, bases: list[int] | None = None) -> Path:
    """Write ``batches`` (base offsets already set) as segments of at most
    ``segment_bytes``, each with the .index/.timeindex the broker would have. ``bases``
    may name the segments' base offsets (else the first batch's base offset)."""
    pdir.mkdir(parents=True, exist_ok=True)
    segs: list[list[bytes]] = []
    cur: list[bytes] = []
    size = 0
    for b in batches:
        if cur and size + len(b) > segment_bytes:
            segs.append(cur)
            cur, size = [], 0
        cur.append(b)
        size += len(b)
    if cur:
        segs.append(cur)
    for i, seg in enumerate(segs):
        base = bases[i] if bases else base_offset_of(seg[0])
        data = b"".join(seg)
        (pdir / f"{base:020d}.log").write_bytes(data)
        r = rebuild_indexes(data, base, index_interval)
        assert r.error is None, r.error
        (pdir / f"{base:020d}.index").write_bytes(r.offset_index_bytes(base))
        (pdir / f"{base:020d}.timeindex").write_bytes(r.time_index_bytes(base))
    return pdir


def random_batches(rng: random.Random, *, n_batches: int, start_offset: int = 0,
                   max_records: int = 8, gap_probability: float = 0.0,
                   t0: int = 1_700_000_000_000, jitter: int = 50_000,
                   value_size: int = 40) -> list[bytes]:
    """Batches with out-of-order timestamps (a drifting clock plus random jitter) and,
    with ``gap_probability``, offset gaps between batches as compaction leaves them."""
    out = []
    off = start_offset
    now = t0
    for _ in range(n_batches):
        n = rng.randint(1, max_records)
        recs = []
        for j in range(n):
            now += rng.randint(0, 1000)
            ts = now + rng.randint(-jitter, jitter)
            key = None if rng.random() < 0.1 else f"k{off + j}".encode()
            value = None if rng.random() < 0.05 else rng.randbytes(value_size)
            headers = [("h", b"v")] if rng.random() < 0.2 else []
            recs.append((ts, key, value, headers))
        out.append(build_batch(recs, base_offset=off, partition_leader_epoch=3))
        off += n
        if rng.random() < gap_probability:
            off += rng.randint(1, 5)
    return out


def txn_batches(t0: int = 1_700_000_000_000) -> tuple[list[bytes], dict]:
    """A partition with: plain records, a committed transaction (pid 1), an aborted one
    (pid 2, interleaved with pid 1's), more plain records, and a transaction (pid 3) still
    open at the end of the log followed by a plain record. Returns the batches and the
    expected offsets of each kind."""
    out = []
    off = 0
    exp = {"plain": [], "committed": [], "aborted": [], "open": [], "control": []}

    def data(kind, n, **kw):
        nonlocal off
        recs = [(t0 + off + i, f"k{off + i}".encode(), f"{kind}-{off + i}".encode(), ())
                for i in range(n)]
        out.append(build_batch(recs, base_offset=off, **kw))
        exp[kind].extend(range(off, off + n))
        off += n

    def marker(ctype, pid):
        nonlocal off
        out.append(build_control_batch(ctype, base_offset=off, timestamp=t0 + off,
                                       producer_id=pid, producer_epoch=0))
        exp["control"].append(off)
        off += 1

    txn = {"is_transactional": True, "producer_epoch": 0, "base_sequence": 0}
    data("plain", 3)
    data("committed", 2, producer_id=1, **txn)
    data("aborted", 3, producer_id=2, **txn)
    data("plain", 1)
    data("committed", 2, producer_id=1, **txn)
    data("aborted", 2, producer_id=2, compression_type=3, **txn)
    marker(0, 2)  # ABORT pid 2
    marker(1, 1)  # COMMIT pid 1
    data("plain", 2)
    data("open", 2, producer_id=3, **txn)
    data("open", 1)  # plain, but after the LSO
    return out, exp


def brute_records(pdir: Path) -> list[tuple[int, int, bool]]:
    """``(offset, timestamp, is_control)`` of every record of every segment, in order."""
    out = []
    for log in sorted(pdir.glob("*.log")):
        data = log.read_bytes()
        for b in FileRecords(data).batches():
            ctrl = b.is_control
            for r in b.records():
                out.append((r.offset, r.timestamp, ctrl))
    return out
