"""``kafkalog serve``'s start-up and clean stop on a log directory of many partitions
(issue 24, defect 6: start-up was quadratic in partitions).

    python benchmarks/serve_startup_bench.py [--partitions 10000] [--topics 10]
                                             [--checkout DIR] [--work DIR] [--repeat 2]

A log directory of ``--partitions`` empty partitions spread over ``--topics`` topics is
written once with the engine (closed cleanly, both offset checkpoints naming every
partition, as a broker leaves them). Then, ``--repeat`` times: ``python -m kafkalog_cli
serve`` (from ``--checkout``, default this one) is started and timed until it prints
``listening`` (wall seconds, and its CPU seconds from /proc), then stopped with SIGTERM
(timed until it exits; the clean-shutdown marker must be there). The best run is
reported; ``--checkout ../main-before`` (a worktree of the commit before) gives the figure before a change.
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
CLK = os.sysconf("SC_CLK_TCK")
MARKER = ".kafka_cleanshutdown"


def build(d: Path, partitions: int, topics: int) -> None:
    from kafkalog_cli.storage.log_manager import LogManager

    if (d / MARKER).exists():
        return
    d.mkdir(parents=True, exist_ok=True)
    m = LogManager.open(d, node_id=0, fsync=False)
    try:
        for i in range(partitions):
            m.get_or_create_log(f"topic-{i % topics}", i // topics)
    finally:
        m.close()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def run_once(checkout: Path, d: Path, timeout: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    t = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir",
                             str(d), "--listen", "127.0.0.1:0"], cwd=checkout, env=env,
                            stderr=subprocess.PIPE, text=True)
    started = None
    deadline = t + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        if re.search(r"listening on", line):
            started = time.monotonic() - t
            break
    if started is None:
        proc.kill()
        proc.wait()
        return {"startS": None, "startCpuS": None, "stopS": None, "marker": False}
    cpu = cpu_seconds(proc.pid)
    t = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=600)
    stopped = time.monotonic() - t
    return {"startS": round(started, 2), "startCpuS": round(cpu, 2),
            "stopS": round(stopped, 2), "marker": (d / MARKER).exists()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--checkout", type=Path, default=ROOT)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=1800.0)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="serve-startup-"))
    d = work / f"logs-{args.partitions}"
    t = time.monotonic()
    build(d, args.partitions, args.topics)
    print(f"log directory: {args.partitions} partitions in {args.topics} topics "
          f"({time.monotonic() - t:.1f} s to write)", flush=True)
    runs = [run_once(args.checkout.resolve(), d, args.timeout) for _ in range(args.repeat)]
    for r in runs:
        print(r, flush=True)
    ok = [r for r in runs if r["startS"] is not None]
    best = min(ok, key=lambda r: r["startS"]) if ok else runs[0]
    print(f"{args.checkout}: start-up {best['startS']} s ({best['startCpuS']} s CPU), "
          f"SIGTERM {best['stopS']} s, marker {'written' if best['marker'] else 'missing'}")


if __name__ == "__main__":
    main()
