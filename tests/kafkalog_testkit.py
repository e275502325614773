"""Shared test helpers and fixtures: the bundled fixture log dir, the real corpus, temp
copies, and ways to run the CLI."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures" / "logs"
CORPUS = (REPO / ".." / "shared" / "corpus" / "real").resolve()

#: fixture partitions whose bytes are all valid and whose indexes agree with the log
GOOD_PARTITIONS = [
    "plain-0", "headers-0", "nulls-0", "idempotent-0", "txn-0", "gzip-0", "snappy-0",
    "lz4-0", "zstd-0", "legacy-v0-0", "legacy-v1-0", "multi-0", "preallocated-0",
]
#: good partitions that verify-index still fails: the active segment's preallocated
#: .timeindex tail reads as a last entry with timestamp 0 (TimeIndex.sanityCheck)
SANITY_FAILURES = ["preallocated-0"]
#: good partitions verify-index passes
VERIFIED_PARTITIONS = [p for p in GOOD_PARTITIONS if p not in SANITY_FAILURES]
#: .log corruptions (dump-segment reports them) and index corruptions (verify-index finds them)
LOG_CORRUPTIONS = ["corrupt-truncated-0", "corrupt-crc-0", "corrupt-zero-tail-0"]
INDEX_CORRUPTIONS = ["corrupt-index-order-0", "corrupt-index-position-0",
                     "corrupt-timeindex-0", "corrupt-index-length-0"]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def fixtures_root() -> Path:
    """``fixtures/logs``: the bundled log directory (never modified by tests)."""
    assert FIXTURES.is_dir(), "run python fixtures/generate.py"
    return FIXTURES


@pytest.fixture(scope="session")
def corpus_root() -> Path:
    """The real-broker corpus; tests using it skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("real corpus not present at ../shared/corpus/real")
    return CORPUS


def kafka_python_batches(data: bytes) -> list[tuple[int, int, int, list]]:
    """``(position, base offset, size, [(offset, key, value)])`` of each batch of a
    ``.log``'s bytes, read by kafka-python (an independent reader; it gives a v1
    wrapper's own offset as its base offset)."""
    from kafka.record.memory_records import MemoryRecords

    out, pos = [], 0
    mr = MemoryRecords(data)
    while mr.has_next():
        b = mr.next_batch()
        size = len(b._buffer)
        out.append((pos, b.base_offset, size, [(r.offset, r.key, r.value) for r in b]))
        pos += size
    return out


@pytest.fixture(scope="session")
def java() -> str:
    """The JDK's ``java`` (with ``javac``: a single-file source launch compiles); skips
    when absent, fails under ``CI=true``."""
    from kafka_testkit import skip_or_fail

    java = shutil.which("java")
    if java is None or shutil.which("javac") is None:
        skip_or_fail("no JDK (java and javac) on PATH")
    return java


@pytest.fixture
def fixtures_copy(tmp_path) -> Path:
    """A private copy of ``fixtures/logs`` that a test may damage or inspect."""
    dst = tmp_path / "logs"
    shutil.copytree(FIXTURES, dst)
    return dst


def corpus_log_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(CORPUS.rglob("*.log"))


def corpus_snapshot_files() -> list[Path]:
    """KRaft metadata snapshots ``<offset>-<epoch>.checkpoint`` (same batch format)."""
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*.checkpoint") if "-" in p.stem
                  and p.stem.split("-")[0].isdigit())


def fixture_log_files() -> list[Path]:
    return sorted(FIXTURES.rglob("*.log"))


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 120):
    """Run ``python -m kafkalog_cli ARGS`` against this checkout; returns CompletedProcess."""
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("COLUMNS", None)
    return subprocess.run([sys.executable, "-m", "kafkalog_cli", *args], cwd=cwd or REPO,
                          env=env, capture_output=True, text=True, timeout=timeout)


class Result:
    """What a run of the CLI gave: ``returncode``, ``stdout``, ``stderr`` (as text)."""

    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def run_cli_inprocess(*args: str, cwd: Path | None = None) -> Result:
    """Run ``kafkalog ARGS`` in this process through the console-script entry point
    (:func:`kafkalog_cli.cli.main`, which maps errors to exit codes), with stdout and
    stderr captured separately; ~50x cheaper than a subprocess. The click command Typer
    builds from the app is built once per app and set of registered commands (see
    :func:`_built_once`), not once per run as in a process of its own."""
    import os

    import typer.main
    from typer.testing import CliRunner

    from kafkalog_cli.cli import main

    old = os.getcwd()
    os.chdir(cwd or REPO)
    build = typer.main.get_command
    typer.main.get_command = _built_once(build)
    try:
        with CliRunner().isolation() as (out, err, _):
            code = 0
            try:
                main(list(args))
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            sys.stdout.flush()
            sys.stderr.flush()
            return Result(code, out.getvalue().decode(), err.getvalue().decode())
    finally:
        typer.main.get_command = build
        os.chdir(old)


#: (Typer app id, commands and groups registered on it) -> (the app, its click command)
_BUILT: dict = {}


def _built_once(build):
    """``typer.main.get_command`` (``build``) memoised per Typer app and number of
    commands and groups registered on it (kafkalog's root app gains commands as their
    modules are imported): building the click command (signatures, type hints, every
    option) was half the CPU of a short in-process run (~4 of ~8 ms of dump-segment on
    a small file), over thousands of runs a session. A click command keeps no state
    between invocations (each gets a context of its own)."""
    def get_command(typer_app):
        key = (id(typer_app), len(typer_app.registered_commands),
               len(typer_app.registered_groups))
        hit = _BUILT.get(key)
        if hit is None or hit[0] is not typer_app:
            hit = _BUILT[key] = (typer_app, build(typer_app))
        return hit[1]
    return get_command


@pytest.fixture(scope="session")
def cli():
    """Run the CLI in-process (see :func:`run_cli_inprocess`); tests about the process
    itself (exit status, tracebacks, timing) use :func:`run_cli` instead."""
    return run_cli_inprocess


# -- hand-built batches (struct + crc32c, independent of kafkalog's own builder) -------------

def uvarint(n: int) -> bytes:
    """An unsigned varint (ByteUtils.writeUnsignedVarint/Varlong: 7 bits a byte, low
    first), of any size."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zigzag(n: int) -> bytes:
    """A zigzag varint of any size (Kafka's ByteUtils.writeVarlong for int64 values;
    longer for values outside int64, which no reader may accept)."""
    return uvarint((n << 1) ^ (n >> 127) if n < 0 else n << 1)


def raw_record(offset_delta: int, ts_delta: int, key: bytes | None, value: bytes | None,
               headers=()) -> bytes:
    """One v2 record (DefaultRecord.writeTo), varints zigzag-encoded."""
    body = b"\x00" + zigzag(ts_delta) + zigzag(offset_delta)
    body += zigzag(-1) if key is None else zigzag(len(key)) + key
    body += zigzag(-1) if value is None else zigzag(len(value)) + value
    body += zigzag(len(headers))
    for hk, hv in headers:
        body += zigzag(len(hk)) + hk
        body += zigzag(-1) if hv is None else zigzag(len(hv)) + hv
    return zigzag(len(body)) + body


def raw_batch(base_offset: int, records: list[bytes], *, base_ts: int = 1000,
              max_ts: int | None = None, last_delta: int | None = None, attrs: int = 0,
              pid: int = -1, epoch: int = -1, base_seq: int = -1, leader_epoch: int = 0,
              count: int | None = None, magic: int = 2) -> bytes:
    """A v2 batch around ``records`` (from :func:`raw_record`) with a valid CRC-32C; every
    header field can be set to any value, consistent or not."""
    import struct

    import crc32c

    recs = b"".join(records)
    last_delta = len(records) - 1 if last_delta is None else last_delta
    max_ts = base_ts if max_ts is None else max_ts
    count = len(records) if count is None else count
    after_crc = struct.pack(">hiqqqhii", attrs, last_delta, base_ts, max_ts, pid, epoch,
                            base_seq, count) + recs
    body = struct.pack(">ibI", leader_epoch, magic, crc32c.crc32c(after_crc)) + after_crc
    return struct.pack(">qi", base_offset, len(body)) + body


# -- hostile input: decompression bombs and bounded memory -------------------------------------

#: 256 MiB of seven-byte records: the 22 KB zstd batch of issue 16 (38 M records)
BOMB_RECORDS = (256 << 20) // 7
#: its 1.2 KB variant
BOMB_SMALL_RECORDS = 2_000_000
#: one seven-byte DefaultRecord: length 6, attributes 0, timestampDelta 0, offsetDelta 0,
#: null key, null value, no headers (DefaultRecord.writeTo)
SEVEN_BYTE_RECORD = bytes.fromhex("0c000000010100")


def zstd_bomb_block(n: int = BOMB_RECORDS) -> bytes:
    """``n`` seven-byte records compressed by zstd (level 19) as a stream, so the frame
    has no content size, as zstd-jni writes it; built in pieces (the 256 MiB are never
    in memory)."""
    import zstandard

    o = zstandard.ZstdCompressor(level=19, write_content_size=False).compressobj()
    piece = SEVEN_BYTE_RECORD * (1 << 20)
    parts = []
    left = n
    while left:
        k = min(left, 1 << 20)
        parts.append(o.compress(piece if k == 1 << 20 else SEVEN_BYTE_RECORD * k))
        left -= k
    parts.append(o.flush())
    return b"".join(parts)


def zstd_bomb_batch(n: int = BOMB_RECORDS, *, base_offset: int = 0, count: int | None = None,
                    last_delta: int | None = None) -> bytes:
    """A v2 batch (valid CRC-32C, zstd, CreateTime) of ``n`` seven-byte records, whose
    header says ``count`` records (default ``n``) and lastOffsetDelta ``count - 1``, as a
    producer's batch would: the records all carry offsetDelta 0. With the defaults it is
    the issue's 22 KB batch that decompresses to 256 MiB."""
    import struct

    import crc32c

    count = n if count is None else count
    last_delta = count - 1 if last_delta is None else last_delta
    after_crc = struct.pack(">hiqqqhii", 4, last_delta, 1000, 1000, -1, -1, -1, count) \
        + zstd_bomb_block(n)
    body = struct.pack(">ibI", 0, 2, crc32c.crc32c(after_crc)) + after_crc
    return struct.pack(">qi", base_offset, len(body)) + body


def write_partition(root: Path, name: str, log: bytes, base_offset: int = 0) -> Path:
    """``root/name`` holding one segment ``<base_offset>.log`` with ``log``."""
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{base_offset:020d}.log").write_bytes(log)
    return d


def run_cli_limited(*args: str, address_space: int = 1 << 30, timeout: float = 300,
                    cwd: Path | None = None):
    """:func:`run_cli` with the child's address space capped (``RLIMIT_AS``), so a
    decoder that grows with its input fails with MemoryError instead of swapping."""
    import os
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("COLUMNS", None)
    return subprocess.run([sys.executable, "-m", "kafkalog_cli", *args], cwd=cwd or REPO,
                          env=env, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=limit)


class Measured:
    """A CLI run of :func:`run_cli_measured`: ``returncode`` (None when it was killed at
    its timeout, ``hung``), ``stdout`` / ``stderr`` (text, at most their first 1 MiB),
    their sizes in bytes, ``peak_rss_kib`` (the kernel's ``ru_maxrss`` of the process) and
    ``seconds``."""

    def __init__(self, returncode, stdout, stderr, stdout_bytes, stderr_bytes, peak_rss_kib,
                 seconds, hung):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr
        self.stdout_bytes, self.stderr_bytes = stdout_bytes, stderr_bytes
        self.peak_rss_kib, self.seconds, self.hung = peak_rss_kib, seconds, hung


#: the parent of a measured run (``python -c`` this ``FD ARGS...``): it forks and execs
#: the CLI with ``ARGS`` and writes the CLI's ``ru_maxrss`` and wait status to ``FD``. (A
#: process forked from the test process starts with the test process's resident set, and
#: ``ru_maxrss`` keeps it across ``exec``: the CLI is started from this small process.)
_MEASURING_PARENT = """
import os, sys
fd = int(sys.argv[1])
pid = os.fork()
if pid == 0:
    os.close(fd)
    os.execv(sys.executable, [sys.executable, "-m", "kafkalog_cli", *sys.argv[2:]])
_, status, usage = os.wait4(pid, 0)
os.write(fd, b"%d %d" % (usage.ru_maxrss, status))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def run_cli_measured(*args: str, address_space: int = 2 << 30, timeout: float = 60,
                     stdin: bytes = b"", cwd: Path | None = None) -> Measured:
    """Run ``python -m kafkalog_cli ARGS`` under ``RLIMIT_AS`` = ``address_space``, killed
    (its whole process group) after ``timeout`` seconds, and measure it: its peak
    resident memory (``wait4``'s ``ru_maxrss`` of the CLI's process alone, started from a
    small parent, :data:`_MEASURING_PARENT`) and its output sizes (the output is counted,
    only its first MiB kept)."""
    import os
    import resource
    import threading
    import time

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
        os.setsid()

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("COLUMNS", None)
    report_r, report_w = os.pipe()
    t = time.monotonic()
    try:
        p = subprocess.Popen([sys.executable, "-c", _MEASURING_PARENT, str(report_w), *args],
                             cwd=cwd or REPO, env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=limit, pass_fds=(report_w,))
    finally:
        os.close(report_w)
    kept = {1: bytearray(), 2: bytearray()}
    sizes = {1: 0, 2: 0}

    def pump(stream, key):
        while True:
            b = stream.read(1 << 16)
            if not b:
                return
            sizes[key] += len(b)
            if len(kept[key]) < 1 << 20:
                kept[key] += b[:(1 << 20) - len(kept[key])]

    pumps = [threading.Thread(target=pump, args=(p.stdout, 1), daemon=True),
             threading.Thread(target=pump, args=(p.stderr, 2), daemon=True)]
    for th in pumps:
        th.start()
    try:
        p.stdin.write(stdin)
        p.stdin.close()
    except BrokenPipeError:
        pass
    hung = False
    while p.poll() is None:
        if time.monotonic() - t > timeout:
            hung = True
            os.killpg(p.pid, 9)
            p.wait()
            break
        time.sleep(0.02)
    seconds = time.monotonic() - t
    with os.fdopen(report_r, "rb") as f:
        report = f.read().split()
    peak, status = (int(report[0]), int(report[1])) if len(report) == 2 else (0, None)
    code = None if hung or status is None else os.waitstatus_to_exitcode(status)
    for th in pumps:
        th.join()
    p.stdout.close()
    p.stderr.close()
    return Measured(code, kept[1].decode("utf-8", "replace"),
                    kept[2].decode("utf-8", "replace"), sizes[1], sizes[2], peak, seconds,
                    hung)


#: what :func:`make_special` puts where a regular file belongs
SPECIAL_VARIANTS = ("fifo", "link-dev-zero", "link-dev-urandom", "directory")


def make_special(path: Path, variant: str) -> Path:
    """Put at ``path`` (removed first if it is a file) what is not a regular file: a
    ``fifo``, a symbolic link to ``/dev/zero`` or ``/dev/urandom`` (``link-dev-zero``,
    ``link-dev-urandom``) or a ``directory``; returns ``path``."""
    import os

    if path.is_symlink() or path.is_file():
        path.unlink()
    if variant == "fifo":
        os.mkfifo(path)
    elif variant in ("link-dev-zero", "link-dev-urandom"):
        os.symlink("/dev/" + variant.rsplit("-", 1)[1], path)
    elif variant == "directory":
        path.mkdir()
    else:
        raise ValueError(variant)
    return path


def popen_cli_limited(*args: str, address_space: int = 1 << 30):
    """The CLI started as a Popen (stdout a text pipe) with ``RLIMIT_AS`` capped, for
    commands whose whole output is too long to wait for."""
    import os
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, "-m", "kafkalog_cli", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=limit)
