"""Benchmark: ``describe`` of a log directory with 1,000 partitions (target: under 2 s).

Builds ``benchmarks/data/describe/logs`` (gitignored): meta.properties, the four offset
checkpoints, and 1,000 partition directories (100 topics x 10 partitions), each holding a
segment of 20 batches x 10 records with its .index/.timeindex, a leader-epoch-checkpoint,
partition.metadata and a producer snapshot file. Times the library call
(:func:`kafkalog_cli.ops.describe.describe`) with a warm page cache and the whole CLI
process with ``-o json``.

    python benchmarks/describe_bench.py [--partitions 1000] [--write-results]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from kafkalog_cli.format.builder import build_batch  # noqa: E402
from kafkalog_cli.ops.describe import describe  # noqa: E402
from kafkalog_cli.storage.checkpoints import format_offset_checkpoint  # noqa: E402
from kafkalog_cli.storage.dir_files import write_meta_properties  # noqa: E402
from kafkalog_cli.storage.files import TopicPartition  # noqa: E402
from kafkalog_cli.storage.segment import rebuild_indexes  # noqa: E402

BATCHES, RECORDS = 20, 10


def build(ld: Path, n: int) -> None:
    marker = ld / f".built-{n}"
    if marker.exists():
        return
    shutil.rmtree(ld, ignore_errors=True)
    ld.mkdir(parents=True)
    batches = []
    for i in range(BATCHES):
        recs = [(1_700_000_000_000 + i * RECORDS + j, f"k{j}".encode(), os.urandom(60), ())
                for j in range(RECORDS)]
        batches.append(build_batch(recs, base_offset=i * RECORDS, partition_leader_epoch=0))
    data = b"".join(batches)
    r = rebuild_indexes(data, 0, 512)
    index, tindex = r.offset_index_bytes(0), r.time_index_bytes(0)
    tps = [TopicPartition(f"topic-{t:03d}", p) for t in range(n // 10) for p in range(10)]
    for tp in tps:
        d = ld / str(tp)
        d.mkdir()
        (d / "00000000000000000000.log").write_bytes(data)
        (d / "00000000000000000000.index").write_bytes(index)
        (d / "00000000000000000000.timeindex").write_bytes(tindex)
        (d / "00000000000000000200.snapshot").write_bytes(b"")
        (d / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
        (d / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ")
    offsets = {tp: BATCHES * RECORDS for tp in tps}
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                 "log-start-offset-checkpoint", "cleaner-offset-checkpoint"):
        (ld / name).write_text(format_offset_checkpoint(offsets if "start" not in name else {}))
    write_meta_properties(ld, cluster_id="bench", node_id=1)
    marker.touch()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--write-results", action="store_true")
    args = ap.parse_args()
    ld = HERE / "data" / "describe" / "logs"
    build(ld, args.partitions)
    describe([ld])  # warm the page cache
    times = []
    for _ in range(5):
        t = time.perf_counter()
        res = describe([ld])
        times.append(time.perf_counter() - t)
    parts = res.partitions
    assert len(parts) == args.partitions
    assert sum(p.records for p in parts) == args.partitions * BATCHES * RECORDS
    cli = []
    for _ in range(3):
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "kafkalog_cli", "describe", str(ld), "-o",
                              "json"], cwd=ROOT, capture_output=True, check=True)
        cli.append(time.perf_counter() - t)
        doc = json.loads(out.stdout)
        assert sum(len(t["partitions"]) for t in doc["logDirs"][0]["topics"]) == len(parts)
    size = sum(p.bytes for p in parts)
    lines = [
        f"# describe of a log directory with {args.partitions:,} partitions",
        "",
        f"{args.partitions:,} partition directories ({args.partitions // 10} topics x 10), "
        f"each one segment of {BATCHES} batches x {RECORDS} records "
        f"({size // args.partitions:,} bytes) with .index, .timeindex, "
        "leader-epoch-checkpoint, partition.metadata and a producer snapshot; the log "
        "directory has meta.properties and the four offset checkpoints. Warm page cache. "
        f"Machine: {os.cpu_count()} CPU(s), Python {sys.version.split()[0]}.",
        "",
        "| what | median | min | max |",
        "|---|---:|---:|---:|",
        f"| `describe([log_dir])` (library, 5 runs) | {statistics.median(times):.3f} s | "
        f"{min(times):.3f} s | {max(times):.3f} s |",
        f"| `python -m kafkalog_cli describe DIR -o json` (whole process, 3 runs) | "
        f"{statistics.median(cli):.3f} s | {min(cli):.3f} s | {max(cli):.3f} s |",
        "",
        "Target: under 2 s. Per partition: one directory listing, one mmap of the .log and "
        "a header-only batch walk (no record decoding, no CRC), the leader-epoch "
        "checkpoint and partition.metadata; the log-directory checkpoints are read once.",
        "",
        "Reproduce: `python benchmarks/describe_bench.py --write-results` (data in "
        "`benchmarks/data/`, gitignored).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write_results:
        (HERE / "results").mkdir(exist_ok=True)
        (HERE / "results" / "describe.md").write_text(text)


if __name__ == "__main__":
    main()
