"""What one abusive client costs ``kafkalog serve`` (issue 24): for each case, the server's
peak RSS, the longest another client waited for an ApiVersions answer meanwhile, and
how long SIGTERM took (and whether the clean-shutdown marker was written).

    python benchmarks/serve_abuse_bench.py [--checkout DIR] [--cases a,b] [--label L]
                                           [--out FILE.json] [--table]

``--checkout DIR`` runs the server of another checkout (``python -m kafkalog_cli serve``
with ``cwd`` and ``PYTHONPATH`` at ``DIR``; e.g. ``../main-before``, a worktree of the
commit before, for the figures before a change); the clients and the log directory are this checkout's. Each case starts a
fresh server (so ``VmHWM`` is that case's peak), runs its clients while a probe client
sends ApiVersions v3 every 50 ms on its own connection, from its own process
(``tests/serve_process.py``'s ``Probe``; the longest wait is the stall, one never
answered counting as the whole time it waited), reads ``VmHWM`` from /proc (reset
once the server listens: the case's peak, not the start-up's),
sends SIGTERM with the abusive clients still connected and measures the time to exit
(killed after ``--term-timeout`` s, reported as ``>N``), then checks
``.kafka_cleanshutdown``. Clients shrink their receive buffers (``SO_RCVBUF`` 4 KiB) so
that what they do not read stays in the server.

Cases (the issue's, after ``baseline``: no abusive client for 3 s):

* ``describe-groups-1m``: one DescribeGroups v5 of 1,000,000 empty group names (1 MB);
* ``metadata-300k``: one Metadata v12 naming 300,000 topics (~7.5 MB);
* ``fetch-unread-16``: 16 clients each Fetch v12 ``maxBytes = partitionMaxBytes =
  2^31-1`` from offset 0 of a 100 MiB partition and never read;
* ``fetch-parked-10``: 10 clients each Fetch with ``minBytes = 2^31-1``, ``maxWaitMs``
  30 s (parked) while a producer appends a small batch every 100 ms;
* ``metadata-pipelined-300``: one client sends 300 Metadata v12 (all topics: 1,000
  partitions) without reading;
* ``idle-unread-6``: ``connections.max.idle.ms=3000``; 6 clients each Fetch 100 MiB and
  never read; 10 s later: the server's ESTABLISHED sockets on its port and its RSS.

The log directory (``big-0``: 100 one-MiB batches; ``wide``: 1,000 empty partitions) is
built once under ``--work`` (default a temporary directory) with this checkout's engine,
and each case starts from a copy of it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "tests"))

from serve_process import Probe, recv_frame  # noqa: E402
from serve_process import connect as serve_connect  # noqa: E402

from kafkalog_cli.format.builder import build_batch  # noqa: E402
from kafkalog_cli.protocol.wire import encode_request  # noqa: E402
from kafkalog_cli.schema.primitives import encode_unsigned_varint  # noqa: E402

MiB = 1 << 20
INT32_MAX = (1 << 31) - 1
BIG_BATCHES = 100
WIDE_PARTITIONS = 1000
MARKER = ".kafka_cleanshutdown"


# -- the log directory ----------------------------------------------------------------------

def build_log_dir(d: Path) -> None:
    """``big-0`` (100 batches of one 1 MiB record) and ``wide`` (1,000 partitions), written
    with the engine; closed cleanly (the marker written)."""
    from kafkalog_cli.storage.log_manager import LogManager

    if (d / MARKER).exists():
        return
    d.mkdir(parents=True, exist_ok=True)
    m = LogManager.open(d, node_id=0, fsync=False)
    try:
        big = m.get_or_create_log("big", 0)
        value = b"v" * (MiB - 100)
        now = int(time.time() * 1000)
        for _ in range(BIG_BATCHES):
            big.append_as_leader(build_batch([(now, None, value, ())]))
        for p in range(WIDE_PARTITIONS):
            m.get_or_create_log("wide", p)
    finally:
        m.close()


# -- the server -----------------------------------------------------------------------------

class Server:
    """``kafkalog serve`` of ``checkout`` on ``log_dir`` (a start that fails - the lock of
    a server killed just before not yet released - is tried again)."""

    def __init__(self, checkout: Path, log_dir: Path, configs=()):
        self.log_dir = log_dir
        for _ in range(5):
            lines = self._start(checkout, configs)
            if self.port is not None:
                break
            time.sleep(2)
        else:
            raise SystemExit("server did not start: " + "".join(lines[-5:]))
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()

    def _start(self, checkout: Path, configs) -> list[str]:
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        args = [a for c in configs for a in ("--config", c)]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir", str(self.log_dir),
             "--listen", "127.0.0.1:0", *args], cwd=checkout, env=env,
            stderr=subprocess.PIPE, text=True)
        self.port = None
        lines = []
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                return lines
        self.proc.kill()
        self.proc.wait()
        return lines

    def reset_peak(self) -> None:
        """Reset VmHWM (``/proc/<pid>/clear_refs``), so the peak is the case's, not the
        start-up's (which maps the 100 MiB segment to rebuild its indexes)."""
        Path(f"/proc/{self.proc.pid}/clear_refs").write_text("5")

    def status(self, key: str) -> int:
        text = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(re.search(rf"^{key}:\s+(\d+)", text, re.M).group(1)) * 1024

    def established(self) -> int:
        """The server's TCP sockets on its port in state ESTABLISHED (/proc/net/tcp)."""
        inodes = set()
        for fd in Path(f"/proc/{self.proc.pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        n = 0
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            f = line.split()
            if f[3] == "01" and f[9] in inodes and int(f[1].split(":")[1], 16) == self.port:
                n += 1
        return n

    def terminate(self, timeout: float) -> tuple[float | None, bool]:
        """(seconds SIGTERM took, None when it was killed after ``timeout``; marker
        written)."""
        (self.log_dir / MARKER).unlink(missing_ok=True)
        t = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
            took = time.monotonic() - t
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            took = None
        return took, (self.log_dir / MARKER).exists()


# -- clients --------------------------------------------------------------------------------

def connect(port: int, rcvbuf: int | None = 4096, timeout: float = 600) -> socket.socket:
    """A client socket with a 4 KiB receive buffer (what it does not read stays in the
    server)."""
    return serve_connect(port, rcvbuf=rcvbuf, timeout=timeout)


def send_async(s: socket.socket, data: bytes) -> threading.Thread:
    def go():
        try:
            s.sendall(data)
        except OSError:
            pass
    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t


def wait_answer(s: socket.socket, timeout: float) -> str:
    s.settimeout(timeout)
    try:
        frame = recv_frame(s)
    except TimeoutError:
        return f"no answer in {timeout:.0f} s"
    except OSError as e:
        return f"closed ({type(e).__name__})"
    return "closed" if frame is None else f"answered ({len(frame)} bytes)"


def fetch_frame(topic: str, *, max_bytes=INT32_MAX, partition_max=INT32_MAX, min_bytes=1,
                max_wait=0, offset=0, cid=1) -> bytes:
    body = {"replicaId": -1, "maxWaitMs": max_wait, "minBytes": min_bytes,
            "maxBytes": max_bytes, "isolationLevel": 0, "sessionId": 0, "sessionEpoch": -1,
            "topics": [{"topic": topic, "partitions": [
                {"partition": 0, "currentLeaderEpoch": -1, "fetchOffset": offset,
                 "lastFetchedEpoch": -1, "logStartOffset": -1,
                 "partitionMaxBytes": partition_max}]}],
            "forgottenTopicsData": [], "rackId": ""}
    return encode_request(1, 12, cid, body)


# -- cases ----------------------------------------------------------------------------------

def case_describe_groups(port, keep, limit):
    n = 1_000_000
    header = struct.pack(">hhih", 15, 5, 1, 5) + b"abuse" + b"\x00"
    body = encode_unsigned_varint(n + 1) + b"\x01" * n + b"\x00\x00"
    data = header + body
    s = connect(port)
    keep.append(s)
    s.sendall(struct.pack(">i", len(data)) + data)
    return wait_answer(s, limit)


def case_metadata_300k(port, keep, limit):
    topics = [{"topicId": "AAAAAAAAAAAAAAAAAAAAAA", "name": f"t{i:07d}"} for i in range(300_000)]
    data = encode_request(3, 12, 1, {"topics": topics, "allowAutoTopicCreation": False,
                                     "includeTopicAuthorizedOperations": False})
    s = connect(port)
    keep.append(s)
    send_async(s, data)
    return wait_answer(s, limit)


def case_fetch_unread(port, keep, limit, n=16, settle=20.0):
    for i in range(n):
        s = connect(port)
        keep.append(s)
        s.sendall(fetch_frame("big", cid=i + 1))
    time.sleep(settle)
    return f"{n} fetchers sent, none read"


def case_fetch_parked(port, keep, limit, n=10, seconds=15.0):
    for i in range(n):
        s = connect(port)
        keep.append(s)
        s.sendall(fetch_frame("big", min_bytes=INT32_MAX, max_wait=30_000, cid=i + 1))
    p = connect(port, rcvbuf=None, timeout=30)
    keep.append(p)
    end = time.monotonic() + seconds
    cid = 100
    appended = 0
    while time.monotonic() < end:
        cid += 1
        batch = build_batch([(int(time.time() * 1000), None, b"x" * 100, ())])
        p.sendall(encode_request(0, 9, cid, {
            "transactionalId": None, "acks": 1, "timeoutMs": 5000,
            "topicData": [{"name": "big", "partitionData": [{"index": 0,
                                                             "records": batch}]}]}))
        if recv_frame(p) is not None:
            appended += 1
        time.sleep(0.1)
    return f"{n} parked fetchers, {appended} appends"


def case_metadata_pipelined(port, keep, limit, n=300, settle=10.0):
    s = connect(port)
    keep.append(s)
    frames = b"".join(encode_request(3, 12, i + 1, {"topics": None}) for i in range(n))
    send_async(s, frames)
    time.sleep(settle)
    return f"{n} Metadata requests sent, none read"


def case_idle_unread(port, keep, limit, server=None, n=6, idle_s=3.0, after=10.0):
    for i in range(n):
        s = connect(port)
        keep.append(s)
        s.sendall(fetch_frame("big", cid=i + 1))
    time.sleep(idle_s + after)
    return f"{server.established()} server sockets ESTABLISHED {after:.0f} s after the " \
           f"idle timeout (of {n} + probe); RSS now {server.status('VmRSS') / MiB:.0f} MiB"


def case_baseline(port, keep, limit, seconds=3.0):
    time.sleep(seconds)
    return "no abuse"


CASES = {
    "baseline": (case_baseline, ()),
    "describe-groups-1m": (case_describe_groups, ()),
    "metadata-300k": (case_metadata_300k, ()),
    "fetch-unread-16": (case_fetch_unread, ()),
    "fetch-parked-10": (case_fetch_parked, ()),
    "metadata-pipelined-300": (case_metadata_pipelined, ()),
    "idle-unread-6": (case_idle_unread, ("connections.max.idle.ms=3000",)),
}


def run_case(name, checkout, log_dir, limit, term_timeout) -> dict:
    fn, configs = CASES[name]
    server = Server(checkout, log_dir, configs)
    server.reset_peak()
    base = server.status("VmRSS")
    keep: list[socket.socket] = []
    probe = Probe(server.port)
    t = time.monotonic()
    try:
        kwargs = {"server": server} if name == "idle-unread-6" else {}
        outcome = fn(server.port, keep, limit, **kwargs)
    except Exception as e:  # the case's clients failed: say so in the row
        outcome = f"client error {type(e).__name__}: {e}"
    took = time.monotonic() - t
    peak = server.status("VmHWM")
    stall = probe.stop()
    term, marker = server.terminate(term_timeout)
    for s in keep:
        s.close()
    return {"case": name, "outcome": outcome, "seconds": round(took, 1),
            "startRssMiB": round(base / MiB), "peakRssMiB": round(peak / MiB),
            "longestStallS": round(stall, 2), "answeredProbes": probe.answered,
            "sigtermS": None if term is None else round(term, 2), "marker": marker}


def table(rows: list[dict], label: str) -> str:
    out = [f"| case ({label}) | peak RSS MiB | longest ApiVersions wait s | SIGTERM s | "
           "marker | outcome |", "|---|---|---|---|---|---|"]
    for r in rows:
        term = "killed" if r["sigtermS"] is None else f"{r['sigtermS']}"
        out.append(f"| {r['case']} | {r['peakRssMiB']} | {r['longestStallS']} | {term} | "
                   f"{'yes' if r['marker'] else 'no'} | {r['outcome']} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkout", type=Path, default=ROOT)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--label", default="")
    ap.add_argument("--limit", type=float, default=120.0,
                    help="seconds a case waits for an answer")
    ap.add_argument("--term-timeout", type=float, default=60.0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="serve-abuse-"))
    pristine = work / "pristine"
    build_log_dir(pristine)
    log_dir = work / "logs"
    rows = []
    for name in args.cases.split(","):
        # every case from a copy of the clean directory: a server killed by the case
        # before would make the next one start with its recovery
        shutil.rmtree(log_dir, ignore_errors=True)
        shutil.copytree(pristine, log_dir)
        r = run_case(name, args.checkout.resolve(), log_dir, args.limit, args.term_timeout)
        print(json.dumps(r), flush=True)
        rows.append(r)
    label = args.label or str(args.checkout)
    print(table(rows, label))
    if args.out:
        args.out.write_text(json.dumps({"label": label, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
