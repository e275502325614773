"""``kafkalog export`` from a local S3 server vs from local files.

    python benchmarks/s3_bench.py [--rounds 3] [--partitions 4]   # writes results/s3.md

The same log directory (``spark_bench.py``'s data, the first ``--partitions`` of its 8
partitions: 250,000 records of ~100 B each, 4 segments) is exported with
``--engine local`` to Parquet from the local disk (memory maps) and from moto's S3
server on 127.0.0.1 (a process of its own; the bytes travel over HTTP and through
pyarrow's S3 client and kafkalog's ranged reader: a temporary file per segment, 8 MiB
requests). Runs alternate local/remote, each in a fresh process; the best of
``--rounds`` counts. Besides wall time, the CPU seconds of the export process (from
``getrusage(RUSAGE_CHILDREN)``; the S3 server's own CPU is not in it) show what reading
remotely costs kafkalog itself.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

RESULTS = HERE / "results" / "s3.md"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def export_once(src: str, out: Path, env: dict) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "export", src, "--to", str(out),
                        "--engine", "local", "--no-headers", "--overwrite", "-o", "json"],
                       env=env, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        raise RuntimeError(r.stderr[-3000:])
    d = json.loads(r.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"records": d["records"], "export_s": d["elapsedMs"] / 1000, "process_s": wall,
            "cpu_s": cpu}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--partitions", type=int, default=4)
    args = ap.parse_args()
    import pyarrow.fs as pafs
    from spark_bench import generate

    log = generate()
    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-s3-bench-"))
    port = _port()
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                               str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        endpoint = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        env = dict(os.environ)
        env.update({"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "bench",
                    "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
                    "AWS_EC2_METADATA_DISABLED": "true",
                    "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])})
        src_local = tmp / "kafka-logs"
        src_local.mkdir()
        for p in range(args.partitions):
            shutil.copytree(log / f"bench-{p}", src_local / f"bench-{p}")
        fs = pafs.S3FileSystem(endpoint_override=endpoint, access_key="bench",
                               secret_key="bench", region="us-east-1",
                               allow_bucket_creation=True)
        fs.create_dir("bench")
        pafs.copy_files(str(src_local), "bench/kafka-logs",
                        source_filesystem=pafs.LocalFileSystem(), destination_filesystem=fs)
        size = sum(f.stat().st_size for f in src_local.rglob("*.log"))
        runs = {"local": [], "s3": []}
        for _ in range(args.rounds):
            runs["local"].append(export_once(str(src_local), tmp / "out-local", env))
            runs["s3"].append(export_once("s3://bench/kafka-logs", tmp / "out-s3", env))
            print(json.dumps({k: v[-1] for k, v in runs.items()}), flush=True)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    best = {k: min(v, key=lambda r: r["export_s"]) for k, v in runs.items()}
    rows = best["local"]["records"]
    assert best["s3"]["records"] == rows
    ratio = best["local"]["export_s"] / best["s3"]["export_s"]
    cpu_ratio = best["local"]["cpu_s"] / best["s3"]["cpu_s"]
    lines = [
        "# export: a local S3 server vs local files", "",
        f"`python benchmarks/s3_bench.py --rounds {args.rounds} --partitions "
        f"{args.partitions}` on {platform.node()} ({os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f} at the end), {time.strftime('%Y-%m-%d')}.", "",
        f"{rows:,} records, {size / 1e6:.0f} MB of .log in {args.partitions} partitions; "
        "`export --engine local` to Parquet, no headers column.", "",
        "| source | export s (best) | rows/s | process s | CPU s |", "|---|---:|---:|---:|---:|",
    ]
    for k in ("local", "s3"):
        for r in runs[k]:
            lines.append(f"| {k} | {r['export_s']:.2f} | {rows / r['export_s']:,.0f} | "
                         f"{r['process_s']:.2f} | {r['cpu_s']:.2f} |")
    lines += ["", f"Best S3 rows/s / best local rows/s: **{ratio:.2f}** (target >= 0.50); "
              f"CPU of the export, local / S3: **{cpu_ratio:.2f}**."]
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
