"""``kafkalog serve`` in a separate process, for the tests that measure what a client
costs it (tests/server/test_serve_abuse.py, test_serve_hardening.py and the serve abuse
harness in tests/fuzz): the process (address space limited, so a regression fails
instead of exhausting the machine), its peak and current RSS from /proc, a probe client
timing another client's ApiVersions, and the SIGTERM that must end it."""

from __future__ import annotations

import os
import re
import resource
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

from kafkalog_testkit import REPO

from kafkalog_cli.protocol.wire import encode_request

MiB = 1 << 20
GiB = 1 << 30
#: the server's address-space limit (RLIMIT_AS)
ADDRESS_SPACE = 3 * GiB // 2
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"


def _limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


class ServeProcess:
    """``kafkalog serve`` in a subprocess; its stderr is drained into :attr:`log`."""

    def __init__(self, log_dir, *configs: str):
        args = [a for c in configs for a in ("--config", c)]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.log_dir = Path(log_dir)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir", str(log_dir),
             "--listen", "127.0.0.1:0", *args], cwd=REPO, env=env, stderr=subprocess.PIPE,
            text=True, preexec_fn=_limit_address_space)
        self.log: list[str] = []
        deadline = time.monotonic() + 60
        self.port = None
        while time.monotonic() < deadline and self.port is None:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.log.append(line)
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
        if self.port is None:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("server did not start: " + "".join(self.log))
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stderr:
            self.log.append(line)

    def memory(self) -> tuple[int, int]:
        """(peak RSS, current RSS) in bytes (VmHWM, VmRSS)."""
        status = open(f"/proc/{self.proc.pid}/status").read()
        kb = {k: int(v.split()[0]) for k, v in re.findall(r"^(VmHWM|VmRSS):\s+(.*)$", status,
                                                           re.M)}
        return kb["VmHWM"] * 1024, kb["VmRSS"] * 1024

    def alive(self) -> bool:
        return self.proc.poll() is None

    def terminate(self, timeout: float) -> float | None:
        """SIGTERM; the seconds until the process ended, or None when it was still alive
        after ``timeout`` (then it is killed)."""
        t = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            return None
        return time.monotonic() - t

    def clean_shutdown_marker(self) -> bool:
        return (self.log_dir / CLEAN_SHUTDOWN).exists()

    def stop(self) -> int:
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode


def recv_frame(sock: socket.socket) -> bytes | None:
    """The next response frame's payload (None: closed)."""
    def exactly(n):
        buf = bytearray()
        while len(buf) < n:
            chunk = sock.recv(min(n - len(buf), 1 << 20))
            if not chunk:
                return None
            buf += chunk
        return bytes(buf)

    head = exactly(4)
    return None if head is None else exactly(struct.unpack(">i", head)[0])


def connect(port: int, *, rcvbuf: int | None = None, timeout: float = 30) -> socket.socket:
    """A client socket; ``rcvbuf``: a small receive buffer, so what the client does not
    read stays in the server."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


class Probe:
    """Another client: ApiVersions v3 every ``interval`` seconds on its own connection,
    in a thread; :attr:`longest` is the longest wait for an answer (one still unanswered
    counts until :meth:`stop`), :attr:`failures` what went wrong (a closed connection)."""

    def __init__(self, port: int, interval: float = 0.05):
        self.port = port
        self.interval = interval
        self.longest = 0.0
        self.answered = 0
        self.failures: list[str] = []
        self._pending: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        body = {"clientSoftwareName": "probe", "clientSoftwareVersion": "1"}
        try:
            s = connect(self.port, timeout=0.2)
        except OSError as e:
            self.failures.append(f"connect: {e}")
            return
        cid = 0
        with s:
            while not self._stop.is_set():
                cid += 1
                self._pending = time.monotonic()
                try:
                    s.sendall(encode_request(18, 3, cid, body))
                    frame = None
                    while frame is None and not self._stop.is_set():
                        try:
                            frame = recv_frame(s)
                        except TimeoutError:
                            continue
                        if frame is None:
                            raise ConnectionError("the server closed the probe's connection")
                except OSError as e:
                    self.failures.append(f"{type(e).__name__}: {e}")
                    return
                if frame is not None:
                    self.longest = max(self.longest, time.monotonic() - self._pending)
                    self.answered += 1
                self._pending = None
                self._stop.wait(self.interval)

    def stop(self) -> float:
        """Stop; returns :attr:`longest`."""
        pending = self._pending
        self._stop.set()
        self._thread.join(5)
        if pending is not None:
            self.longest = max(self.longest, time.monotonic() - pending)
        return self.longest


def write_partition_of(log_dir: Path, topic: str, batches: int, value_size: int) -> None:
    """``<topic>-0`` of ``batches`` batches of one record of ``value_size`` bytes, written
    with the engine (the directory closed cleanly)."""
    from kafkalog_cli.format.builder import build_batch
    from kafkalog_cli.storage.log import LogManager

    m = LogManager.open(log_dir, node_id=0, fsync=False)
    try:
        log = m.get_or_create_log(topic, 0)
        now = int(time.time() * 1000)
        value = b"v" * value_size
        for _ in range(batches):
            log.append_as_leader(build_batch([(now, None, value, ())]))
    finally:
        m.close()
