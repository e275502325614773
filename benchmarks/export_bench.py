#!/usr/bin/env python3
"""Export benchmark: ``export --engine local`` (Parquet) vs aiokafka's C reader + pyarrow,
with kafkalog's compiled core and with its pure-Python fallback.

Data: read_bench's shape ``b`` (2,000 batches x 100 records, 10-byte key, ~100-byte value,
no headers; built with kafka-python's builder) as one partition ``bench-0``. Every reader
writes the same rows (key, value, offset, timestamp, timestampType; no headers:
``includeHeaders`` false) to one Snappy Parquet file under ``topic=bench/partition=0/``,
as kafkalog lays it out, and the row counts are checked. The aiokafka script runs twice:
with pyarrow's default writer options (as a user writes it), and with the options
kafkalog's local export passes (``parquet_writer_options``), so the ratio is not from
the writer settings alone.

Each reader runs in a process of its own (``--worker NAME``), which times its operation
(CPU time of the process, best of ``--loops``) after a warm-up; readers take turns for
``--repeat`` rounds so a shared machine's load hits all alike; the best round counts.

    python benchmarks/export_bench.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

READERS = ["kafkalog", "kafkalog[py]", "aiokafka[C]+pyarrow",
           "aiokafka[C]+pyarrow, kafkalog's writer options"]


def partition_dir() -> Path:
    import read_bench

    log = read_bench.ensure_data(["b"])["b"]
    part = HERE / "data" / "export" / "bench-0"
    target = part / "00000000000000000000.log"
    if not target.exists() or target.stat().st_size != log.stat().st_size:
        part.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(log, target)
    return part


def kafkalog_export(part: Path, out: Path) -> int:
    from kafkalog_cli.ops.export import export

    r = export([str(part)], str(out), fmt="parquet", engine="local", overwrite=True,
               options={"includeHeaders": "false"})
    return r.to_dict()["records"]


def aiokafka_export(part: Path, out: Path, same_options: bool = False) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from aiokafka.record.memory_records import MemoryRecords

    assert "_crecords" in MemoryRecords.__module__, "aiokafka's C extension is not in use"
    keys, values, offsets, tss, tst = [], [], [], [], []
    for f in sorted(part.glob("*.log")):
        mr = MemoryRecords(f.read_bytes())
        while mr.has_next():
            batch = mr.next_batch()
            if not batch.validate_crc():
                raise AssertionError("crc")
            t = batch.timestamp_type
            for rec in batch:
                keys.append(rec.key)
                values.append(rec.value)
                offsets.append(rec.offset)
                tss.append(rec.timestamp)
                tst.append(t)
    n = len(offsets)
    table = pa.table({
        "key": pa.array(keys, pa.binary()), "value": pa.array(values, pa.binary()),
        "offset": pa.array(offsets, pa.int64()),
        "timestamp": pa.array(tss, pa.int64()).cast(pa.timestamp("ms")).cast(
            pa.timestamp("us", tz="UTC")),
        "timestampType": pa.array(tst, pa.int32())})
    # the layout and codec kafkalog writes: hive-style topic=/partition= directories
    # (so no topic and partition columns in the file), Snappy
    d = out / "topic=bench" / "partition=0"
    d.mkdir(parents=True, exist_ok=True)
    if same_options:  # the options kafkalog's local export passes its ParquetWriter
        from kafkalog_cli.ops.export import parquet_writer_options

        pq.write_table(table, d / "part-00000.parquet", **parquet_writer_options(table.schema))
    else:
        pq.write_table(table, d / "part-00000.parquet", compression="snappy")
    return n


def worker(name: str, loops: int) -> None:
    part = partition_dir()
    if name.startswith("aiokafka"):
        def fn(part, out):
            return aiokafka_export(part, out, "writer options" in name)
    else:
        fn = kafkalog_export
    with tempfile.TemporaryDirectory() as tmp:
        rows = fn(part, Path(tmp) / "w")  # warm-up: imports, codec contexts
        best = float("inf")
        for i in range(loops):
            t = time.process_time()
            fn(part, Path(tmp) / f"o{i}")
            best = min(best, time.process_time() - t)
    print(f"{rows} {best}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--loops", type=int, default=3)
    ap.add_argument("--worker")
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.loops)
        return 0
    partition_dir()
    best: dict[str, float] = {}
    rows: dict[str, int] = {}
    for _ in range(args.repeat):
        for name in READERS:
            env = dict(os.environ)
            env.pop("KAFKALOG_PURE_PYTHON", None)
            if name == "kafkalog[py]":
                env["KAFKALOG_PURE_PYTHON"] = "1"
            r = subprocess.run([sys.executable, __file__, "--worker", name, "--loops",
                                str(args.loops)], capture_output=True, text=True, env=env,
                               check=True)
            n, t = r.stdout.split()
            rows[name] = int(n)
            best[name] = min(best.get(name, float("inf")), float(t))
    if len(set(rows.values())) != 1:
        raise SystemExit(f"row counts differ: {rows}")
    n = next(iter(rows.values()))
    print(f"# export benchmark: {n} rows, CPU s (best of {args.repeat} rounds x "
          f"{args.loops} loops), load average {os.getloadavg()[0]:.2f}")
    print("| reader | CPU s | rows/s | kafkalog vs it |")
    print("|---|--:|--:|--:|")
    for name in READERS:
        print(f"| {name} | {best[name]:.3f} | {n / best[name] / 1e3:.0f}k | "
              f"{best[name] / best['kafkalog']:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
