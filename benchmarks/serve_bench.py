"""Benchmark ``kafkalog serve``'s produce path against the append engine's ceiling.

    python benchmarks/serve_bench.py [--records 200000] [--value-size 1000] [--repeat 2]
                                     [--client kcat|confluent] [--out FILE]

For each batch size (16 KB and 1 MB, linger.ms=5, acks=1, no compression):

* **server**: ``python -m kafkalog_cli serve`` (a subprocess, fresh log directory) receives
  the records of one file from librdkafka: Debian's ``kcat -P -l FILE`` (the C client, so
  the client is not the bottleneck), or with ``--client confluent`` a confluent-kafka
  produce loop in a separate process. Measured: wall time of the client run (connection
  and metadata included), records/s and MB/s acknowledged (the client waits for every
  delivery report; the log end offset afterwards must equal the record count), and the
  server's CPU seconds (user+sys from /proc) per MB.
* **ceiling**: ``python -m kafkalog_cli produce`` writing the same file into a fresh log
  directory with ``--batch-bytes`` equal to the batch size (the engine's own batching;
  its ``elapsed_s``, which excludes interpreter start-up).
* **latency**: confluent-kafka at a fixed, moderate offered load (well below saturation),
  with librdkafka's statistics: ``rtt`` is the time from a ProduceRequest being sent to its
  response (per request, no client-side queueing); also produce()->delivery-report time,
  which adds linger.ms and the client's queue.

Best of ``--repeat`` runs for throughput. Everything is on 127.0.0.1 and bounded; every
server is stopped with SIGTERM (clean shutdown) at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
CLK = os.sysconf("SC_CLK_TCK")
BATCHES = (("16 KB", 16384), ("1 MB", 1000000))
TOPIC = "bench"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def start_server(log_dir: Path):
    proc = subprocess.Popen([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir",
                             str(log_dir), "--listen", "127.0.0.1:0", "--auto-create-topics"],
                            cwd=ROOT, env=ENV, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if m:
            return proc, int(m.group(1))
    proc.kill()
    raise SystemExit("server did not start")


def stop_server(proc) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"server exited with {proc.returncode}")


def log_end_offset(log_dir: Path) -> int:
    text = (log_dir / "recovery-point-offset-checkpoint").read_text().split("\n")
    return sum(int(line.split()[2]) for line in text[2:] if line.strip())


def write_records(path: Path, records: int, value_size: int) -> int:
    pad = b"v" * value_size
    with open(path, "wb") as f:
        for start in range(0, records, 10000):
            f.write(b"".join(b"%09d-" % i + pad[:value_size - 10] + b"\n"
                             for i in range(start, min(records, start + 10000))))
    return records * value_size


# -- the load client -------------------------------------------------------------------------

def kcat_produce(port: int, src: Path, batch_size: int) -> None:
    exe = shutil.which("kcat") or shutil.which("kafkacat")
    r = subprocess.run([exe, "-P", "-b", f"127.0.0.1:{port}", "-t", TOPIC, "-p", "0",
                        "-X", "linger.ms=5", "-X", f"batch.size={batch_size}",
                        "-X", "acks=1", "-X", "queue.buffering.max.messages=1000000",
                        "-X", "queue.buffering.max.kbytes=2097151", "-l", str(src)],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"kcat failed: {r.stderr}")


_CONFLUENT_LOOP = r"""
import sys, confluent_kafka as ck
port, src, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = ck.Producer({"bootstrap.servers": "127.0.0.1:" + port, "acks": "1", "linger.ms": 5,
                 "batch.size": batch, "queue.buffering.max.messages": 1000000,
                 "queue.buffering.max.kbytes": 2097151, "log_level": 3})
failed = [0]
def cb(err, msg):
    if err is not None:
        failed[0] += 1
produce = p.produce
with open(src, "rb") as f:
    for line in f:
        while True:
            try:
                produce("bench", line[:-1], partition=0, on_delivery=cb)
                break
            except BufferError:
                p.poll(0.005)
p.flush(300)
sys.exit(1 if failed[0] else 0)
"""


def confluent_produce(port: int, src: Path, batch_size: int) -> None:
    r = subprocess.run([sys.executable, "-c", _CONFLUENT_LOOP, str(port), str(src),
                        str(batch_size)], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"confluent-kafka client failed: {r.stderr}")


def server_run(src: Path, records: int, batch_size: int, client) -> dict:
    with tempfile.TemporaryDirectory(dir=src.parent) as d:
        log_dir = Path(d)
        proc, port = start_server(log_dir)
        try:
            cpu0 = cpu_seconds(proc.pid)
            t0 = time.perf_counter()
            client(port, src, batch_size)
            elapsed = time.perf_counter() - t0
            cpu = cpu_seconds(proc.pid) - cpu0
        finally:
            stop_server(proc)
        acked = log_end_offset(log_dir)
    if acked != records:
        raise SystemExit(f"{acked} of {records} records in the log")
    return {"elapsed": elapsed, "cpu": cpu}


def ceiling_run(src: Path, batch_size: int) -> dict:
    with tempfile.TemporaryDirectory(dir=src.parent) as d:
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "produce", "--log-dir", d,
                            "--topic", TOPIC, "--batch-bytes", str(batch_size), "-o", "json",
                            str(src)], cwd=ROOT, env=ENV, capture_output=True, text=True,
                           timeout=600)
        wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"kafkalog produce failed: {r.stderr}")
    out = json.loads(r.stdout)
    return {"elapsed": out["elapsed_s"], "wall": wall, "batches": out["batches"]}


# -- latency at a moderate load ----------------------------------------------------------------

def latency_run(value_size: int, batch_size: int, rate: int, seconds: float) -> dict:
    """``rate`` records/s for ``seconds`` from confluent-kafka; librdkafka's per-request
    rtt percentiles (from its statistics) and produce->delivery percentiles."""
    import confluent_kafka as ck

    with tempfile.TemporaryDirectory() as d:
        proc, port = start_server(Path(d))
        stats = []
        try:
            p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{port}", "acks": "1",
                             "linger.ms": 5, "batch.size": batch_size, "log_level": 3,
                             "statistics.interval.ms": 500,
                             "stats_cb": lambda s: stats.append(json.loads(s))})
            value = b"v" * value_size
            p.produce(TOPIC, value, partition=0)  # metadata, connection
            p.flush(10)
            stats.clear()
            lat = []
            clock = time.perf_counter

            def report(err, msg, t=None):
                if err is None:
                    lat.append(clock() - t)

            start = clock()
            sent = 0
            while clock() - start < seconds:
                due = int((clock() - start) * rate)
                while sent < due:
                    t = clock()
                    p.produce(TOPIC, value, partition=0,
                              on_delivery=lambda e, m, t=t: report(e, m, t))
                    sent += 1
                p.poll(0.0005)
            p.flush(30)
            p.poll(0.6)  # one more statistics callback
        finally:
            stop_server(proc)
    rtt50, rtt99, reqs, req_bytes = [], [], 0, 0
    for s in stats:
        for b in s["brokers"].values():
            if b.get("nodeid", -1) < 0 or not b["rtt"]["cnt"]:
                continue
            rtt50.append(b["rtt"]["p50"] / 1000)
            rtt99.append(b["rtt"]["p99"] / 1000)
    last = [b for b in stats[-1]["brokers"].values() if b.get("nodeid", -1) >= 0][0]
    reqs, req_bytes = last["tx"], last["txbytes"]
    lat.sort()
    return {"rtt_p50": statistics.median(rtt50), "rtt_p99": max(rtt99),
            "e2e_p50": lat[len(lat) // 2] * 1000, "e2e_p99": lat[int(len(lat) * 0.99)] * 1000,
            "avg_request": req_bytes / max(1, reqs), "records": sent}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--value-size", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--client", choices=("kcat", "confluent"),
                    default="kcat" if shutil.which("kcat") or shutil.which("kafkacat")
                    else "confluent")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "serve.md")
    args = ap.parse_args()
    client = kcat_produce if args.client == "kcat" else confluent_produce
    rows, lat_rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "records.txt"
        total = write_records(src, args.records, args.value_size)
        mb = total / 1e6
        for label, batch_size in BATCHES:
            srv = min((server_run(src, args.records, batch_size, client)
                       for _ in range(args.repeat)), key=lambda r: r["elapsed"])
            ceil = min((ceiling_run(src, batch_size) for _ in range(args.repeat)),
                       key=lambda r: r["elapsed"])
            rows.append((label, srv, ceil))
            print(label, srv, ceil, flush=True)
    for label, batch_size, rate in (("16 KB", 16384, 10_000), ("1 MB", 1000000, 10_000),
                                    ("1 MB", 1000000, 40_000)):
        r = latency_run(args.value_size, batch_size, rate, 4.0)
        lat_rows.append((label, rate, r))
        print(label, rate, r, flush=True)

    import confluent_kafka

    kcat_v = ""
    if args.client == "kcat":
        kcat_v = subprocess.run([shutil.which("kcat") or "kafkacat", "-V"], capture_output=True,
                                text=True).stdout.splitlines()[0]
    lines = [
        "# `kafkalog serve` produce throughput and latency (acks=1, librdkafka, loopback)",
        "",
        f"{args.records:,} records of {args.value_size} bytes (one line each of a file), one "
        f"partition, no compression, linger.ms=5, acks=1. Load client: "
        f"{'`kcat -P -l FILE` (' + kcat_v + ')' if args.client == 'kcat' else 'confluent-kafka produce loop in a separate process'}"
        f"; librdkafka {confluent_kafka.libversion()[0]}; Python "
        f"{platform.python_version()}; {os.cpu_count()} CPUs (client, server and ceiling "
        "share them). Best of "
        f"{args.repeat}. Server: `python -m kafkalog_cli serve` (subprocess) over the append "
        "engine. Ceiling: `kafkalog produce --batch-bytes N FILE` on the same file (its "
        "`elapsed_s`).",
        "",
        "## Throughput (records acknowledged)",
        "",
        "| batch.size | server records/s | server MB/s | client wall s | server CPU s/MB "
        "| ceiling records/s | ceiling MB/s | server / ceiling |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, srv, ceil in rows:
        rps = args.records / srv["elapsed"]
        crps = args.records / ceil["elapsed"]
        lines.append(f"| {label} | {rps:,.0f} | {mb / srv['elapsed']:.1f} | "
                     f"{srv['elapsed']:.2f} | {srv['cpu'] / mb:.4f} | {crps:,.0f} | "
                     f"{mb / ceil['elapsed']:.1f} | **{100 * rps / crps:.0f}%** |")
    lines += [
        "",
        "## Produce latency at a moderate offered load (confluent-kafka, acks=1)",
        "",
        "| batch.size | offered records/s | avg request bytes | request rtt p50 ms | "
        "request rtt p99 ms | produce->ack p50 ms | produce->ack p99 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, rate, r in lat_rows:
        lines.append(f"| {label} | {rate:,} ({rate * args.value_size / 1e6:.0f} MB/s) | "
                     f"{r['avg_request']:,.0f} | {r['rtt_p50']:.2f} | {r['rtt_p99']:.2f} | "
                     f"{r['e2e_p50']:.2f} | {r['e2e_p99']:.2f} |")
    lines += [
        "",
        "Notes:",
        "",
        "* `server / ceiling` compares records/s; the server's figure includes the client's "
        "start-up, metadata round trip and reading the file (kcat's own CPU is small), the "
        "ceiling's excludes interpreter start-up. Both write into the page cache; neither "
        "fsyncs per batch (flush.messages / flush.ms unset, as on a broker).",
        "* The server validates every record of every batch (`LogValidator`: structure, "
        "timestamps, keys) because a client's bytes are untrusted; `kafkalog produce` builds "
        "its batches itself and skips that walk. With 16 KB batches the fixed cost per "
        "request (request parsing, response, per-append bookkeeping) dominates on both "
        "sides.",
        "* rtt (librdkafka statistics, per ProduceRequest, worst p99 over 0.5 s windows) "
        "is the request's service time plus loopback; produce->ack adds linger.ms=5 and the "
        "client's queue. At a moderate load a request holds what linger collects "
        "(rate x 5 ms), so `1 MB` batches are not full there.",
        "",
        "Reproduce: `python benchmarks/serve_bench.py` (needs kcat: `apt-get install -y "
        "kcat`, and confluent-kafka).",
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
