"""Benchmark: ``kafkalog copy`` against ``cp -r`` of the same partitions (MB/s, CPU time).

Two inputs: a generated partition (``benchmarks/data/copy/``, gitignored) of ``--mb`` MB of
v2 batches of 16 records x 1 KiB from an idempotent producer (about 16 KiB a batch, the
producer's default ``batch.size``), in segments of 64 MiB with their ``.index`` and
``.timeindex``; and every log directory of ``../shared/corpus/real`` (when present: real
brokers' files, ZooKeeper era and KRaft, small). Each round copies the input with
``cp -r`` and with ``python -m kafkalog_cli copy SRC --to DST`` (whole processes,
interleaved, warm page cache, the output removed between runs); CPU time is the child's
user + system time. ``copy`` checks each batch's CRC, appends it as a follower
(indexes, producer state, epochs rebuilt) and fsyncs each file once; ``cp`` copies bytes.
A check after the runs: every ``.log`` of the copy equals the source's.

    python benchmarks/copy_bench.py [--mb 256] [--rounds 5] [--write-results]
"""

from __future__ import annotations

import argparse
import os
import resource
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
from kafkalog_cli.storage.segment import rebuild_indexes  # noqa: E402

SEGMENT_BYTES = 64 << 20
RECORDS, VALUE = 16, 1024
CORPUS = ROOT.parent / "shared" / "corpus" / "real"


def build(mb: int) -> Path:
    """A log directory holding ``bench-0`` of about ``mb`` MB."""
    ld = HERE / "data" / "copy" / f"logs-{mb}"
    if (ld / ".built").exists():
        return ld
    shutil.rmtree(ld, ignore_errors=True)
    d = ld / "bench-0"
    d.mkdir(parents=True)
    value = os.urandom(VALUE * 4)
    offset = seq = 0
    total, seg_base, seg = 0, 0, bytearray()

    def flush_segment() -> None:
        name = f"{seg_base:020d}"
        (d / f"{name}.log").write_bytes(seg)
        r = rebuild_indexes(memoryview(seg), seg_base, 4096)
        (d / f"{name}.index").write_bytes(r.offset_index_bytes(seg_base))
        (d / f"{name}.timeindex").write_bytes(r.time_index_bytes(seg_base))

    while total < mb << 20:
        recs = [(1_700_000_000_000 + offset + i, b"k%d" % (offset + i),
                 value[(offset + i) % 3072:][:VALUE], ()) for i in range(RECORDS)]
        b = build_batch(recs, base_offset=offset, partition_leader_epoch=0,
                        producer_id=1000, producer_epoch=0, base_sequence=seq)
        if len(seg) + len(b) > SEGMENT_BYTES:
            flush_segment()
            seg_base, seg = offset, bytearray()
        seg += b
        offset += RECORDS
        seq += RECORDS
        total += len(b)
    flush_segment()
    (d / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    (d / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n")
    (ld / ".built").touch()
    return ld


def log_bytes(root: Path) -> int:
    """The .log bytes under ``root`` that copy copies (it leaves __cluster_metadata out)."""
    return sum(p.stat().st_size for p in root.rglob("*.log")
               if not p.parent.name.startswith("__cluster_metadata"))


def timed(cmd: list[str], check: bool = True) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of ``cmd`` (``check``: it must exit 0)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=check, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run(name: str, sources: list[Path], rounds: int, tmp: Path):
    """Each source copied into a log directory of its own (one process each), by both
    tools, ``rounds`` times interleaved."""
    size = sum(log_bytes(s) for s in sources)
    cp, cps, kl = [], [], []
    for _ in range(rounds):
        for label, acc in (("cp", cp), ("cp+sync", cps), ("kafkalog", kl)):
            out = tmp / label
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            wall = cpu = 0.0
            for i, s in enumerate(sources):
                if label == "cp":
                    w, c = timed(["cp", "-r", str(s), str(out / str(i))])
                elif label == "cp+sync":  # as durable as copy: every file and directory
                    w, c = timed(["sh", "-c", 'cp -r "$0" "$1" && find "$1" -exec sync {} +',
                                  str(s), str(out / str(i))])
                else:
                    w, c = timed([sys.executable, "-m", "kafkalog_cli", "copy", str(s),
                                  "--to", str(out / str(i)), "-o", "json"])
                wall, cpu = wall + w, cpu + c
            acc.append((wall, cpu))
    # the part of kafkalog's CPU that is process start: the same command on an empty
    # directory (imports, option parsing, the refusal), once per source
    empty = tmp / "empty"
    empty.mkdir(parents=True, exist_ok=True)
    start = [timed([sys.executable, "-m", "kafkalog_cli", "copy", str(empty), "--to",
                    str(tmp / "nothing")], check=False) for _ in range(3)]
    starts = (statistics.median(w for w, _ in start) * len(sources),
              statistics.median(c for _, c in start) * len(sources))
    # the check: every .log of the copy is the source's, byte for byte
    for i, s in enumerate(sources):
        for p in s.rglob("*.log"):
            if p.parent.name.startswith("__cluster_metadata"):
                continue
            rel = p.relative_to(s) if s.name != p.parent.name else Path(s.name, p.name)
            assert (tmp / "kafkalog" / str(i) / rel).read_bytes() == p.read_bytes(), p
    mb = size / 1e6

    def row(label, runs):
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        return (f"| {name} | {label} | {wall:.2f} s | {mb / wall:,.1f} MB/s | {cpu:.2f} s | "
                f"{mb / cpu:,.1f} MB/s |")

    w, c = starts
    return [row("`cp -r`", cp), row("`cp -r` + `sync` of each file", cps),
            row("`kafkalog copy`", kl),
            f"| {name} | of which {len(sources)} process start(s) | {w:.2f} s | | "
            f"{c:.2f} s | |"], mb


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--write-results", action="store_true")
    args = ap.parse_args()
    tmp = HERE / "data" / "copy" / "out"
    ld = build(args.mb)
    rows, mb = run(f"generated, {args.mb} MB", [ld / "bench-0"], args.rounds, tmp)
    notes = [f"generated: {mb:,.0f} MB of .log, 16 KiB batches"]
    if CORPUS.is_dir():
        from kafkalog_cli.storage.files import find_log_dirs

        dirs = sorted(find_log_dirs(CORPUS))
        crow, cmb = run("real corpus", dirs, args.rounds, tmp)
        rows += crow
        notes.append(f"real corpus: {len(dirs)} log directories, {cmb:,.1f} MB of .log "
                     "(many small partitions: per-partition costs dominate)")
    shutil.rmtree(tmp, ignore_errors=True)
    lines = [
        "# copy: `kafkalog copy` against `cp -r`",
        "",
        f"Inputs: {'; '.join(notes)}. Whole processes, {args.rounds} interleaved rounds, "
        "medians, warm page cache; MB/s is .log bytes over wall or CPU time; CPU is the "
        "child's user + system (each process's start, ~0.3 s of imports, included): on "
        f"a shared machine the CPU column is the one to compare. Machine: {os.cpu_count()} CPU(s) shared with other work, "
        f"Python {sys.version.split()[0]}.",
        "",
        "| input | tool | wall | MB/s (wall) | CPU | MB/s (CPU) |",
        "|---|---|---:|---:|---:|---:|",
        *rows,
        "",
        "`cp` copies bytes (`sync FILE...` then fsyncs each file and directory, the "
        "durability `copy` gives); `copy` also checks every batch's CRC, rebuilds the indexes, "
        "producer state and snapshots as a follower's appends do, fsyncs each file and "
        "renames each partition into place (its `.log` files come out byte-identical, "
        "checked after the runs).",
        "",
        "Reproduce: `python benchmarks/copy_bench.py --write-results`.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write_results:
        (HERE / "results" / "copy.md").write_text(text)


if __name__ == "__main__":
    main()
