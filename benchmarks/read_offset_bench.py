"""Benchmark: ``read --offset`` on a 1 GiB segment returns its first record through the
offset index, not a scan (target: under 50 ms).

Builds ``benchmarks/data/read-offset/bench-0/00000000000000000000.log`` (1 GiB, gitignored)
by stamping one batch's bytes with successive base offsets (the CRC does not cover the
base offset), and its ``.index``/``.timeindex`` with ``rebuild_indexes`` (the broker's
recovery scan, index.interval.bytes 4096). Then times :func:`kafkalog_cli.ops.read.read`
plus the first record for offsets spread over the segment, each on a freshly opened log
(the index file is read again each time), and the whole CLI process for a few of them.

    python benchmarks/read_offset_bench.py [--size-mib 1024] [--write-results]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from kafkalog_cli.format.builder import build_batch, set_base_offset  # noqa: E402
from kafkalog_cli.ops.read import read  # noqa: E402
from kafkalog_cli.storage.segment import open_view, rebuild_indexes  # noqa: E402

RECORDS_PER_BATCH = 100


def build(pdir: Path, size: int) -> tuple[int, int]:
    """Write the segment and its indexes unless present at the right size; return
    (batches, records)."""
    log = pdir / "00000000000000000000.log"
    recs = [(1_700_000_000_000 + i, f"key-{i}".encode(), os.urandom(100), ())
            for i in range(RECORDS_PER_BATCH)]
    template = bytearray(build_batch(recs, base_offset=0))
    n_batches = size // len(template)
    if log.exists() and log.stat().st_size == n_batches * len(template) and \
            (pdir / "00000000000000000000.index").exists():
        return n_batches, n_batches * RECORDS_PER_BATCH
    pdir.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    chunk = 4096
    with open(log, "wb") as f:
        for start in range(0, n_batches, chunk):
            buf = bytearray()
            for i in range(start, min(start + chunk, n_batches)):
                set_base_offset(template, i * RECORDS_PER_BATCH)
                buf += template
            f.write(buf)
    print(f"wrote {log} ({log.stat().st_size / 2**30:.2f} GiB) in "
          f"{time.perf_counter() - t:.1f} s", file=sys.stderr)
    t = time.perf_counter()
    view = open_view(log)
    r = rebuild_indexes(view, 0, 4096)
    (pdir / "00000000000000000000.index").write_bytes(r.offset_index_bytes(0))
    (pdir / "00000000000000000000.timeindex").write_bytes(r.time_index_bytes(0))
    print(f"indexes: {len(r.offset_entries)} offset entries, {len(r.time_entries)} time "
          f"entries in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    del r
    view.release()
    return n_batches, n_batches * RECORDS_PER_BATCH


def time_read(pdir: Path, offset: int) -> float:
    t = time.perf_counter()
    res = read(pdir, offset=offset, max_records=1)
    rec = next(res.records)
    dt = time.perf_counter() - t
    assert rec.offset == offset, (rec.offset, offset)
    res.close()
    return dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--write-results", action="store_true")
    args = ap.parse_args()
    pdir = HERE / "data" / "read-offset" / "bench-0"
    n_batches, n_records = build(pdir, args.size_mib * 2**20)
    size = (pdir / "00000000000000000000.log").stat().st_size
    index_size = (pdir / "00000000000000000000.index").stat().st_size
    rng = random.Random(0)
    targets = [0, 1, n_records // 2, n_records - 1] + [rng.randrange(n_records)
                                                       for _ in range(50)]
    time_read(pdir, 0)  # warm the page cache for the index files
    times = [time_read(pdir, o) for o in targets]
    ms = sorted(x * 1000 for x in times)
    cli = []
    for o in (0, n_records // 2, n_records - 1):
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "kafkalog_cli", "read", str(pdir),
                              "--offset", str(o), "--max-records", "1", "--property",
                              "print.offset=true", "--property", "print.value=false"],
                             cwd=ROOT, capture_output=True, check=True)
        cli.append((time.perf_counter() - t) * 1000)
        assert out.stdout.strip() == f"Offset:{o}".encode(), out.stdout
    lines = [
        "# read --offset on a 1 GiB segment",
        "",
        f"Segment: {size / 2**30:.2f} GiB, {n_batches} batches of {RECORDS_PER_BATCH} "
        f"records ({n_records} records); offset index of {index_size:,} bytes "
        f"(index.interval.bytes 4096: one entry per batch here, built by `rebuild_indexes`). "
        f"Machine: {os.cpu_count()} CPU(s), "
        f"Python {sys.version.split()[0]}.",
        "",
        "`kafkalog_cli.ops.read.read(partition_dir, offset=N, max_records=1)` and the first "
        "record, each on a freshly opened log (index file re-read, log mmapped again), "
        f"{len(targets)} offsets (first, second, middle, last and 50 random):",
        "",
        "| statistic | ms |",
        "|---|---:|",
        f"| min | {ms[0]:.2f} |",
        f"| median | {statistics.median(ms):.2f} |",
        f"| p95 | {ms[int(len(ms) * 0.95) - 1]:.2f} |",
        f"| max | {ms[-1]:.2f} |",
        "",
        "Target: under 50 ms. Whole CLI process (`python -m kafkalog_cli read ... --offset N "
        "--max-records 1`, interpreter start-up and imports included): "
        + ", ".join(f"{x:.0f} ms" for x in cli) + " (first, middle, last offset).",
        "",
        "Reproduce: `python benchmarks/read_offset_bench.py --write-results` (the 1 GiB "
        "segment is written to `benchmarks/data/`, gitignored).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write_results:
        (HERE / "results").mkdir(exist_ok=True)
        (HERE / "results" / "read_offset.md").write_text(text)


if __name__ == "__main__":
    main()
