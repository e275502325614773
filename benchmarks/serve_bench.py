"""Benchmark ``kafkalog serve``: records/s and MB/s acknowledged with acks=1 from
librdkafka (confluent-kafka) on loopback, produce latency p50/p99, server CPU per MB;
compared with appending the same batches straight through the storage adapter in-process
(the ceiling of the write path the server uses).

    python benchmarks/serve_bench.py [--records 200000] [--value-size 100] [--out FILE]

Everything runs on 127.0.0.1, bounded by --records; the server is a subprocess
(``python -m kafkalog_cli serve``) stopped with SIGTERM at the end.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kafkalog_cli.format.builder import build_batch  # noqa: E402
from kafkalog_cli.server.storage_adapter import StandInPartitionLog  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def start_server(log_dir: Path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir",
                             str(log_dir), "--listen", "127.0.0.1:0",
                             "--auto-create-topics"], cwd=ROOT, env=env,
                            stderr=subprocess.PIPE, text=True)
    while True:
        line = proc.stderr.readline()
        if not line:
            raise SystemExit("server did not start")
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if m:
            return proc, int(m.group(1))


def run_client(port: int, topic: str, records: int, value: bytes, batch_size: int) -> dict:
    import confluent_kafka as ck

    p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{port}", "acks": "1",
                     "linger.ms": 5, "batch.size": batch_size, "compression.type": "none",
                     "queue.buffering.max.kbytes": 1048576,
                     "queue.buffering.max.messages": 1000000, "log_level": 3})
    # warm up: metadata, connection
    p.produce(topic, value, partition=0)
    p.flush(10)
    lat = []
    sent = [0.0] * records
    acked = [0]
    clock = time.perf_counter

    def cb(err, msg):
        if err is None:
            acked[0] += 1
            lat.append(clock() - sent[int(msg.key())])

    start = clock()
    for i in range(records):
        sent[i] = clock()
        while True:
            try:
                p.produce(topic, value, key=b"%d" % i, partition=0, on_delivery=cb)
                break
            except BufferError:
                p.poll(0.01)
        if i % 1000 == 0:
            p.poll(0)
    p.flush(120)
    elapsed = time.perf_counter() - start
    lat.sort()
    return {"elapsed": elapsed, "acked": acked[0],
            "p50": lat[len(lat) // 2] * 1000, "p99": lat[int(len(lat) * 0.99)] * 1000}


def ceiling(records: int, value: bytes, batch_size: int) -> dict:
    """The same records as batches of ~batch_size bytes, appended in-process."""
    per_batch = max(1, batch_size // (len(value) + 20))
    now = int(time.time() * 1000)
    batches = []
    for start in range(0, records, per_batch):
        n = min(per_batch, records - start)
        batches.append(build_batch([(now, b"%d" % (start + i), value, ())
                                    for i in range(n)]))
    with tempfile.TemporaryDirectory() as d:
        pd = Path(d) / "ceiling-0"
        pd.mkdir()
        log = StandInPartitionLog(pd)
        t0 = time.perf_counter()
        for b in batches:
            log.append_as_leader(b)
        elapsed = time.perf_counter() - t0
        log.close()
    return {"elapsed": elapsed, "bytes": sum(len(b) for b in batches)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--value-size", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "serve.md")
    args = ap.parse_args()
    value = b"v" * args.value_size
    mb = args.records * args.value_size / 1e6
    rows = []
    for label, batch_size in (("16 KB", 16 * 1024), ("1 MB", 1000000)):
        with tempfile.TemporaryDirectory() as d:
            proc, port = start_server(Path(d))
            try:
                cpu0 = cpu_seconds(proc.pid)
                r = run_client(port, "bench", args.records, value, batch_size)
                cpu = cpu_seconds(proc.pid) - cpu0
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.communicate(timeout=60)
        c = ceiling(args.records, value, batch_size)
        rows.append((label, r, cpu, c))
        print(label, r, f"cpu={cpu:.2f}s", c, flush=True)
    import platform

    lines = [
        "# `kafkalog serve` produce throughput (acks=1, librdkafka, loopback)",
        "",
        f"{args.records} records of {args.value_size}-byte values (+ a short key), one "
        "partition, no compression, linger.ms=5, acks=1; confluent-kafka "
        f"{__import__('confluent_kafka').version()} (librdkafka "
        f"{__import__('confluent_kafka').libversion()[0]}); Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs. Server: "
        "`python -m kafkalog_cli serve` (subprocess) with the stand-in appender. Latency: "
        "produce() call to delivery report. CPU: server process user+sys per MB of values. "
        "Ceiling: the same records built into batches of the same size and appended "
        "in-process through `StandInPartitionLog.append_as_leader` (no network, no "
        "protocol).",
        "",
        "| batch.size | records/s | MB/s (values) | p50 ms | p99 ms | server CPU s/MB | "
        "server-CPU-bound MB/s | ceiling records/s | ceiling MB/s | % of ceiling |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, r, cpu, c in rows:
        rps = r["acked"] / r["elapsed"]
        crps = args.records / c["elapsed"]
        lines.append(f"| {label} | {rps:,.0f} | {rps * args.value_size / 1e6:.1f} | "
                     f"{r['p50']:.1f} | {r['p99']:.1f} | {cpu / mb:.4f} | "
                     f"{mb / cpu if cpu else float('inf'):.0f} | {crps:,.0f} | "
                     f"{crps * args.value_size / 1e6:.1f} | {100 * rps / crps:.0f}% |")
    lines += [
        "",
        "Reading the table: the client enqueues every record as fast as Python can call "
        "produce(), so the latencies are queueing latencies under saturation, not the "
        "service time of one request. `server-CPU-bound MB/s` is MB / server CPU seconds: "
        "what the server could absorb if the client were faster; with 16 KB batches the "
        "per-request cost (request parsing with the construct-based DSL, response building, "
        "one pwrite per batch) dominates, with 1 MB batches it is amortised. The ceiling "
        "appends pre-built batches into the page cache (CRC check + pwrite), so the ratio "
        "is far below the issue's 70% target in phase 1; the target is for phase 2 "
        "against `kafkalog produce` (the engine), with a client that is not Python-bound.",
        "", "Reproduce: `python benchmarks/serve_bench.py`.", ""]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
