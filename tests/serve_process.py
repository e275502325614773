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
    """Another client, in a process of its own (so that the test's own threads do not
    delay it): ApiVersions v3 every ``interval`` seconds on one connection;
    :attr:`longest` is the longest wait for an answer so far (one still unanswered counts
    until :meth:`stop`), :attr:`answered` how many were, :attr:`failures` what went wrong
    (a closed connection)."""

    def __init__(self, port: int, interval: float = 0.05):
        self.longest = 0.0
        #: when (time.monotonic(), the same clock in every process) the longest wait began
        self.longest_since = 0.0
        self.answered = 0
        self.failures: list[str] = []
        self._proc = subprocess.Popen(
            [sys.executable, __file__, "probe", str(port), str(interval)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(
                [str(REPO), str(Path(__file__).parent)])})
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        ready = time.monotonic() + 30
        while not self.answered and not self.failures and time.monotonic() < ready:
            time.sleep(0.01)

    def _read(self):
        for line in self._proc.stdout:
            kind, _, rest = line.rstrip("\n").partition(" ")
            if kind == "wait":
                longest, answered, since = rest.split()
                if float(longest) > self.longest:
                    self.longest = float(longest)
                    self.longest_since = float(since)
                self.answered = int(answered)
            elif kind == "failure":
                self.failures.append(rest)

    def stop(self) -> float:
        """Stop; returns :attr:`longest`."""
        if self._proc.poll() is None:
            try:
                self._proc.stdin.close()
            except OSError:
                pass
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._reader.join(5)
        return self.longest


def _probe_main(port: int, interval: float) -> None:
    """The probe's process: reports ``wait <longest> <answered>`` whenever the longest
    wait grows (and every second), ``failure <text>``; ends when stdin closes, reporting
    a request still unanswered as waited until then."""
    body = {"clientSoftwareName": "probe", "clientSoftwareVersion": "1"}
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    longest, answered, pending, since = 0.0, 0, None, 0.0
    last_report = 0.0

    def report():
        print(f"wait {longest:.4f} {answered} {since:.4f}", flush=True)

    try:
        s = connect(port, timeout=0.1)
    except OSError as e:
        print(f"failure connect: {e}", flush=True)
        return
    cid = 0
    while not stop.is_set():
        cid += 1
        pending = time.monotonic()
        try:
            s.sendall(encode_request(18, 3, cid, body))
            frame = None
            while frame is None and not stop.is_set():
                try:
                    frame = recv_frame(s)
                except TimeoutError:
                    if time.monotonic() - pending > longest + 0.05:
                        longest, since = time.monotonic() - pending, pending
                        report()
                    continue
                if frame is None:
                    raise ConnectionError("the server closed the probe's connection")
        except OSError as e:
            print(f"failure {type(e).__name__}: {e}", flush=True)
            return
        if frame is not None:
            waited = time.monotonic() - pending
            answered += 1
            if waited > longest:
                longest, since = waited, pending
            pending = None
            if waited >= longest or time.monotonic() - last_report > 1:
                last_report = time.monotonic()
                report()
        stop.wait(interval)
    if pending is not None and time.monotonic() - pending > longest:
        longest, since = time.monotonic() - pending, pending
    report()


def write_partition_of(log_dir: Path, topic: str, batches: int, value_size: int) -> None:
    """``<topic>-0`` of ``batches`` batches of one record of ``value_size`` bytes, written
    with the engine (the directory closed cleanly)."""
    from kafkalog_cli.format.builder import build_batch
    from kafkalog_cli.storage.log_manager import LogManager

    m = LogManager.open(log_dir, node_id=0, fsync=False)
    try:
        log = m.get_or_create_log(topic, 0)
        now = int(time.time() * 1000)
        value = b"v" * value_size
        for _ in range(batches):
            log.append_as_leader(build_batch([(now, None, value, ())]))
    finally:
        m.close()


if __name__ == "__main__":
    if sys.argv[1] == "probe":
        _probe_main(int(sys.argv[2]), float(sys.argv[3]))
