"""The log directory's ``.lock``, after ``FileLock`` / ``LogManager.lockLogDirs``.

The broker takes ``FileChannel.tryLock()`` on ``<log dir>/.lock``: on Linux an exclusive
``fcntl`` (POSIX record) lock over the whole file. ``fcntl.lockf`` takes the same kind of
lock, so a running broker and kafkalog exclude each other. POSIX locks are per process:
a second lock in the same process always succeeds, so kafkalog also keeps a registry of
the directories this process holds.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from ..constants import LOCK_FILE_NAME
from ..errors import LogDirLockedError

_held: set[str] = set()


class LogDirLock:
    """An exclusive lock on ``<log_dir>/.lock``; a context manager.

    Raises:
        LogDirLockedError: another process (a broker, another kafkalog) or this process
            already holds it.
    """

    def __init__(self, log_dir):
        self.log_dir = Path(log_dir)
        self.path = self.log_dir / LOCK_FILE_NAME
        self._fd: int | None = None

    def acquire(self) -> LogDirLock:
        key = str(self.log_dir.resolve())
        if key in _held:
            raise LogDirLockedError(self.log_dir)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise LogDirLockedError(self.log_dir) from None
        self._fd = fd
        _held.add(key)
        return self

    def release(self) -> None:
        if self._fd is not None:
            try:
                fcntl.lockf(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None
                _held.discard(str(self.log_dir.resolve()))

    def __enter__(self) -> LogDirLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def is_locked(log_dir) -> bool:
    """Whether some process holds ``<log_dir>/.lock`` right now (tests the lock without
    taking it; never creates the file)."""
    path = Path(log_dir) / LOCK_FILE_NAME
    if str(Path(log_dir).resolve()) in _held:
        return True
    if not path.exists():
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        # F_GETLK through lockf is not exposed; probe with a shared lock on a read fd
        try:
            fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
