"""The parent side of the fuzz worker (:mod:`fuzz_worker`): start it under an
address-space limit, send it cases, turn what it answers into assertions.

One worker serves a whole test session (imports cost ~1 s); it is restarted when it dies
or does not answer within a case's time limit, and the case that did it fails.
"""

from __future__ import annotations

import json
import os
import pickle
import resource
import select
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from kafkalog_testkit import REPO

_LEN = struct.Struct(">Q")
WORKER = Path(__file__).with_name("fuzz_worker.py")
MiB = 1 << 20

#: the worker's address space (RLIMIT_AS): Python, kafkalog, pyarrow (which reserves
#: ~300 MiB of address space up front) and a few batches
ADDRESS_SPACE = 1536 * MiB
#: peak resident memory a target may add while it runs on a small mutated input (KiB)
SMALL_CASE_PEAK_KIB = 96 * 1024
#: seconds a case may take in the worker before it counts as a hang
CASE_TIMEOUT = float(os.environ.get("KAFKALOG_FUZZ_CASE_TIMEOUT", "120"))

#: outcomes a target may end with: returned, or raised a KafkalogError (serve: answered,
#: closed the connection as the broker does, no response for acks=0, still waiting)
ACCEPTED = {"ok", "typed", "answered", "closed", "no-response", "waiting"}


class WorkerDied(AssertionError):
    """The worker process ended (killed by the kernel, a crash) or hung on a case."""


class FuzzWorker:
    def __init__(self, address_space: int = ADDRESS_SPACE):
        self.address_space = address_space
        self.proc: subprocess.Popen | None = None
        self.totals: Counter = Counter()
        self.outcomes: Counter = Counter()
        self.peaks: dict[str, int] = {}
        self.slowest: dict[str, float] = {}
        #: (target, error type) -> the first message seen
        self.typed: dict[tuple[str, str], str] = {}

    # -- process --------------------------------------------------------------------------

    def start(self) -> None:
        r1, w1 = os.pipe()  # parent -> worker
        r2, w2 = os.pipe()  # worker -> parent
        limit = self.address_space

        def pre():
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "tests"),
                                             env.get("PYTHONPATH", "")])
        env["MALLOC_ARENA_MAX"] = "2"  # each glibc arena reserves 64 MiB of address space
        # Arrow's own allocator keeps ~1 GiB of address space reserved after one large
        # batch, which would leave the next targets none under RLIMIT_AS: malloc's frees
        env["ARROW_DEFAULT_MEMORY_POOL"] = "system"
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, str(WORKER), str(r1), str(w2)],
                                     pass_fds=(r1, w2), preexec_fn=pre, env=env,
                                     stdout=self.log, stderr=self.log, cwd=REPO)
        os.close(r1)
        os.close(w2)
        self.wf = os.fdopen(w1, "wb", buffering=0)
        self.rfd = r2
        self.rf = os.fdopen(r2, "rb", buffering=0)

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            self.wf.close()
            self.proc.wait(30)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        finally:
            self.rf.close()
            self.log.close()
            self.proc = None

    def _kill(self) -> str:
        self.proc.kill()
        self.proc.wait()
        self.log.seek(0)
        tail = self.log.read()[-4000:].decode("utf-8", "replace")
        code = self.proc.returncode
        self.rf.close()
        self.wf.close()
        self.log.close()
        self.proc = None
        return f"exit status {code}; its output:\n{tail}"

    def _read_exact(self, n: int, deadline_s: float) -> bytes:
        buf = b""
        while len(buf) < n:
            ready, _, _ = select.select([self.rfd], [], [], deadline_s)
            if not ready:
                raise TimeoutError
            chunk = self.rf.read(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf

    def request(self, req: dict, timeout: float = CASE_TIMEOUT) -> dict:
        if self.proc is None:
            self.start()
            if self._serve_layout is not None and req["op"] == "serve":
                self.request(self._serve_layout)
        data = pickle.dumps(req)
        try:
            self.wf.write(_LEN.pack(len(data)) + data)
            (n,) = _LEN.unpack(self._read_exact(8, timeout))
            return pickle.loads(self._read_exact(n, timeout))
        except TimeoutError:
            raise WorkerDied(f"no answer within {timeout} s (a hang?); "
                             + self._kill()) from None
        except (EOFError, BrokenPipeError):
            raise WorkerDied("the worker died: " + self._kill()) from None

    _serve_layout: dict | None = None

    # -- cases ----------------------------------------------------------------------------

    def run_dir(self, layout: dict[str, bytes], targets, params: dict | None = None,
                timeout: float = CASE_TIMEOUT) -> dict:
        res = self.request({"op": "dir", "layout": layout, "targets": list(targets),
                            "params": params or {}}, timeout)
        self._account(res)
        return res

    def run_bytes(self, case: dict, targets, params: dict | None = None) -> dict:
        res = self.request({"op": "bytes", "case": case, "targets": list(targets),
                            "params": params or {}})
        self._account(res)
        return res

    def serve_open(self, layout: dict[str, bytes], read_only: bool = False) -> dict:
        req = {"op": "serve_open", "layout": layout, "read_only": read_only}
        self._serve_layout = req
        res = self.request(req)["open"]
        assert res["outcome"] == "ok", res
        return res

    def serve(self, frame: bytes, wait: float = 2.0) -> dict:
        res = self.request({"op": "serve", "frame": frame, "wait": wait},
                           timeout=max(CASE_TIMEOUT, wait + 60))
        self._account(res)
        return res["serve"]

    def _account(self, res: dict) -> None:
        for name, r in res.items():
            if not isinstance(r, dict) or "outcome" not in r:
                continue
            self.totals[name] += 1
            out = r["value"] if name == "serve" and r["outcome"] == "ok" else r["outcome"]
            self.outcomes[(name, out)] += 1
            if r.get("peak_kib") is not None:
                self.peaks[name] = max(self.peaks.get(name, 0), r["peak_kib"])
            self.slowest[name] = max(self.slowest.get(name, 0.0), r["seconds"])
            if r["outcome"] == "typed":
                self.typed.setdefault((name, r["type"].rsplit(".", 1)[-1]), r["message"][:300])

    def report(self) -> dict:
        return {"cases": dict(self.totals),
                "outcomes": {f"{k[0]}:{k[1]}": v for k, v in sorted(self.outcomes.items())},
                "peakKib": self.peaks,
                "slowestSeconds": {k: round(v, 3) for k, v in self.slowest.items()},
                "typedErrors": {f"{k[0]}:{k[1]}": v for k, v in sorted(self.typed.items())}}


def check(res: dict, *, peak_kib: int | None = SMALL_CASE_PEAK_KIB, what: str = "") -> None:
    """Fail unless every target of ``res`` ended as :data:`ACCEPTED` within ``peak_kib``
    of extra resident memory."""
    bad = []
    for name, r in res.items():
        if not isinstance(r, dict) or "outcome" not in r:
            continue
        out = r["value"] if name == "serve" and r["outcome"] == "ok" else r["outcome"]
        if out not in ACCEPTED:
            bad.append(f"{name}: {r['outcome']} {r.get('type', '')}: {r.get('message', '')}\n"
                       f"{r.get('traceback', '')}")
        elif peak_kib is not None and r.get("peak_kib") is not None and \
                r["peak_kib"] > peak_kib:
            bad.append(f"{name}: peak resident memory grew by {r['peak_kib']} KiB "
                       f"(bound {peak_kib} KiB)")
    assert not bad, (what + "\n" if what else "") + "\n".join(bad)


def write_report(worker: FuzzWorker, path: str | None) -> None:
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(worker.report()) + "\n")
