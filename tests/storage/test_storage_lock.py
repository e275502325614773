"""The log directory's ``.lock`` (issue 16, case 9): a holder of either an fcntl (POSIX
record) lock - what the broker's ``FileLock`` takes through ``FileChannel.tryLock`` on
Linux - or a flock(2) lock makes every writing command refuse the directory; and while
kafkalog holds it, a process asking for either kind is refused.

The holders are child processes using the kernel's calls directly (``fcntl.lockf`` is
``fcntl(F_SETLK)``, ``fcntl.flock`` is ``flock(2)``), independent of kafkalog's code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from kafkalog_testkit import run_cli_inprocess

from kafkalog_cli.errors import LogDirLockedError
from kafkalog_cli.storage.lock import LogDirLock, is_locked

KINDS = ["lockf", "flock"]

_HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.{kind}(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""

_PROBE = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.{kind}(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    print("refused")
else:
    print("granted")
"""


class Holder:
    """A child process holding ``<log_dir>/.lock`` with ``kind`` until closed."""

    def __init__(self, log_dir: Path, kind: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _HOLDER.format(kind=kind), str(log_dir / ".lock")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "held"

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


@pytest.fixture(params=KINDS)
def held(request, tmp_path):
    """A log directory (one partition written by produce) whose .lock a child holds."""
    log_dir = tmp_path / "logs"
    data = tmp_path / "in.txt"
    data.write_text("a\nb\nc\n")
    assert run_cli_inprocess("produce", "--log-dir", str(log_dir), "--topic", "t",
                             str(data)).returncode == 0
    h = Holder(log_dir, request.param)
    yield log_dir
    h.close()


def _tree(log_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(log_dir)): p.read_bytes() for p in sorted(log_dir.rglob("*"))
            if p.is_file() and p.name != ".lock"}


def test_is_locked_sees_either_kind(held):
    assert is_locked(held)
    with pytest.raises(LogDirLockedError):
        LogDirLock(held).acquire()


def test_produce_is_refused(held, tmp_path):
    before = _tree(held)
    data = tmp_path / "more.txt"
    data.write_text("d\n")
    r = run_cli_inprocess("produce", "--log-dir", str(held), "--topic", "t", str(data))
    assert r.returncode == 1 and "Failed to acquire lock" in r.stderr
    assert _tree(held) == before


def test_recover_truncate_is_refused(held):
    with open(held / "t-0" / "00000000000000000000.log", "ab") as f:
        f.write(b"\x07" * 40)
    before = _tree(held)
    r = run_cli_inprocess("recover", str(held), "--truncate", "--all")
    assert r.returncode == 1 and "Failed to acquire lock" in r.stderr
    assert _tree(held) == before


def test_undo_is_refused(tmp_path):
    from kafkalog_cli.recovery import recover, undo

    log_dir = tmp_path / "logs"
    data = tmp_path / "in.txt"
    data.write_text("a\nb\n")
    run_cli_inprocess("produce", "--log-dir", str(log_dir), "--topic", "t", str(data))
    with open(log_dir / "t-0" / "00000000000000000000.log", "ab") as f:
        f.write(b"\x07" * 40)
    session = recover([log_dir], truncate=True, all_segments=True).partitions[0].quarantine
    for kind in KINDS:
        before = _tree(log_dir)
        h = Holder(log_dir, kind)
        try:
            with pytest.raises(LogDirLockedError):
                undo(session)
            r = run_cli_inprocess("recover", "--undo", session)
            assert r.returncode == 1 and "Failed to acquire lock" in r.stderr
        finally:
            h.close()
        assert _tree(log_dir) == before
    assert undo(session).ok


def test_serve_is_refused(held):
    from kafkalog_cli.server.broker import ServerThread
    from kafkalog_cli.server.kafka_apis import ServerOptions

    before = _tree(held)
    with pytest.raises(LogDirLockedError):
        ServerThread(held, ServerOptions(port=0)).start()
    assert _tree(held) == before


def test_spark_writer_is_refused(held):
    pytest.importorskip("pyarrow")
    from kafkalog_cli.spark.writer import append_staged

    before = _tree(held)
    with pytest.raises(LogDirLockedError):
        append_staged(held, [])
    assert _tree(held) == before


@pytest.mark.parametrize("kind", KINDS)
def test_while_kafkalog_holds_it_either_kind_is_refused_to_others(tmp_path, kind):
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    probe = [sys.executable, "-c", _PROBE.format(kind=kind), str(log_dir / ".lock")]
    with LogDirLock(log_dir):
        assert subprocess.run(probe, capture_output=True, text=True).stdout.strip() == \
            "refused"
    # released as a broker's shutdown releases it (FileLock.destroy): unlocked and deleted
    assert not (log_dir / ".lock").exists()
    assert not is_locked(log_dir)
    (log_dir / ".lock").touch()
    assert subprocess.run(probe, capture_output=True, text=True).stdout.strip() == "granted"


def test_a_symlinked_lock_file_is_refused(tmp_path):
    import os

    from kafkalog_cli.errors import UnsafePathError

    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    os.symlink(tmp_path / "elsewhere", log_dir / ".lock")
    with pytest.raises(UnsafePathError):
        LogDirLock(log_dir).acquire()
    assert not (tmp_path / "elsewhere").exists()


def test_release_never_deletes_a_lock_file_it_does_not_hold(tmp_path):
    """The name is removed only while it still leads to the file this lock holds: a
    .lock replaced meanwhile (another holder's) stays."""
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    lock = LogDirLock(log_dir).acquire()
    (log_dir / ".lock").unlink()
    (log_dir / ".lock").write_text("someone else's")
    lock.release()
    assert (log_dir / ".lock").read_text() == "someone else's"


def test_a_lock_file_found_there_is_left_as_found(tmp_path):
    """A .lock left by a crashed broker: taken and released, it stays (a refused run
    changes nothing); one this lock created is removed."""
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    (log_dir / ".lock").write_bytes(b"")
    with LogDirLock(log_dir):
        pass
    assert (log_dir / ".lock").exists()
