"""The log directory's ``.lock``, after ``FileLock`` / ``LogManager.lockLogDirs``.

The broker takes ``FileChannel.tryLock()`` on ``<log dir>/.lock``: on Linux an exclusive
``fcntl`` (POSIX record) lock over the whole file. Other tools lock with ``flock(2)``,
a separate kind of lock on Linux that does not conflict with ``fcntl`` locks. kafkalog
takes both (``fcntl.lockf`` then ``fcntl.flock``, each non-blocking), so that a holder of
either kind makes it refuse the directory, and holders of either kind see it as held.
``is_locked`` probes both kinds without taking them for long.

POSIX locks are per process (a second lock in the same process always succeeds, and
closing any descriptor of the file drops them), so kafkalog also keeps a registry of the
directories this process holds.

``.lock`` is opened with ``O_NOFOLLOW``: a symbolic link there is refused, never
followed to create or lock a file outside the log directory.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path

from ..constants import LOCK_FILE_NAME
from ..errors import LogDirLockedError, UnsafePathError
from .fileio import NOFOLLOW, NONBLOCK, not_regular, open_for_write

_held: set[str] = set()


class LogDirLock:
    """An exclusive lock on ``<log_dir>/.lock`` (fcntl and flock); a context manager.

    Raises (from :meth:`acquire`):
        LogDirLockedError: another process (a broker, another kafkalog, any holder of an
            fcntl or flock lock on the file) or this process already holds it.
        UnsafePathError: ``.lock`` is a symbolic link.
    """

    def __init__(self, log_dir):
        self.log_dir = Path(log_dir)
        self.path = self.log_dir / LOCK_FILE_NAME
        self._fd: int | None = None
        #: this lock created ``.lock`` (it was not there): released, it removes it
        self._created = False

    def acquire(self) -> LogDirLock:
        key = str(self.log_dir.resolve())
        if key in _held:
            raise LogDirLockedError(self.log_dir)
        try:
            fd = open_for_write(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL)
            created = True
        except FileExistsError:  # there already (a broker's, left by a crash)
            fd = open_for_write(self.path, os.O_RDWR | os.O_CREAT)
            created = False
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)  # drops whichever of the two was taken
            raise LogDirLockedError(self.log_dir) from None
        self._fd = fd
        self._created = created
        _held.add(key)
        return self

    def release(self) -> None:
        """Unlock, and remove the ``.lock`` this lock created, as a broker's clean
        shutdown removes its own (``FileLock.destroy``: unlock, then delete the file); a
        ``.lock`` that was there before (a crashed broker's) is left as found, so a run
        that writes nothing changes nothing. The file is removed while the lock is still
        held, and only when the name still leads to the locked file, so a lock another
        process took since is never deleted."""
        if self._fd is not None:
            try:
                try:
                    st = os.stat(self._fd)
                    now = os.lstat(self.path)
                    if self._created and (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino):
                        os.unlink(self.path)
                except OSError:
                    pass  # gone already, or not ours: nothing to remove
                fcntl.flock(self._fd, fcntl.LOCK_UN)
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
    """Whether some process holds ``<log_dir>/.lock`` right now through fcntl or flock
    (tests the lock with shared locks, released at once; never creates the file, never
    follows a symbolic link). A remote log directory has no process-held lock: False.

    Raises:
        NotRegularFileError: ``.lock`` is a FIFO, a device, a socket or a directory
            (opened without waiting for a FIFO's writer).
        UnsafePathError: ``.lock`` is a symbolic link.
    """
    from .location import RemotePath

    if isinstance(log_dir, RemotePath):
        return False
    path = Path(log_dir) / LOCK_FILE_NAME
    if str(Path(log_dir).resolve()) in _held:
        return True
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | NONBLOCK)
    except OSError as e:
        if e.errno == errno.ENXIO:   # a socket
            raise not_regular(path, os.lstat(path).st_mode) from None
        if e.errno == errno.ELOOP:   # never followed: not the lock a broker would take
            raise UnsafePathError("is a symbolic link; kafkalog does not follow a lock file "
                                  "link", file=path) from None
        return False
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):   # a FIFO, a device: never waited on, never locked
            raise not_regular(path, mode)
        # F_GETLK is not exposed: probe with shared locks on a read fd
        for take, drop in ((lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB),
                            lambda: fcntl.lockf(fd, fcntl.LOCK_UN)),
                           (lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB),
                            lambda: fcntl.flock(fd, fcntl.LOCK_UN))):
            try:
                take()
            except OSError:
                return True
            drop()
        return False
    finally:
        os.close(fd)
