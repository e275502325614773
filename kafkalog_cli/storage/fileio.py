"""Writing inside a log directory without ever leaving it.

Every write kafkalog makes (appends, index and checkpoint rewrites, producer snapshots,
recovery's cuts and quarantine, undo) goes through these helpers:

* :func:`open_for_write` adds ``O_NOFOLLOW``: a symbolic link where a file is to be
  written, created or truncated is refused (:class:`UnsafePathError`), never followed out
  of the directory. (The broker's Java ``File`` APIs follow links; kafkalog reads through
  them as the broker does, but does not write through them.) It adds ``O_NONBLOCK`` too
  and checks what it opened with ``fstat``: a FIFO, a device or a socket where a file is
  to be written is refused (:class:`NotRegularFileError`) without waiting for a reader.
  (Reading: :func:`~.location.open_regular`, the same checks, links followed.)
* :func:`write_atomically` is Kafka's ``CheckpointFile.write`` /
  ``Utils.atomicMoveWithFallback``: ``<name>.tmp`` written and fsynced, renamed over
  ``<name>``, the directory fsynced. A stale ``<name>.tmp`` (a link included) is unlinked
  first and the new one created with ``O_EXCL | O_NOFOLLOW``, so a planted link is never
  opened; a failed write (``ENOSPC``) removes its temp file.
* :func:`open_dir_nofollow` / :func:`make_dir_nofollow` open or create a directory that
  must not be a link (``O_DIRECTORY | O_NOFOLLOW``), relative to an open directory
  (``dir_fd``) when given, so that a directory checked once stays the one written to.

And the small checks both halves share: :func:`not_regular` (the error for a FIFO, a
device, a socket or a directory where a regular file belongs) and
:func:`nonzero_length` (where a zero-filled tail starts, at memory speed).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..errors import NotRegularFileError, UnsafePathError

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)


_ZEROS = bytes(1 << 16)


def nonzero_length(data) -> int:
    """``len(data.rstrip(b"\\0"))``, fast on long zero runs (``rstrip`` walks a byte at a
    time, ~80 MB/s; a preallocated tail is compared 64 KiB at a time)."""
    end = len(data)
    step = len(_ZEROS)
    while end > 0:
        start = max(0, end - step)
        piece = data[start:end]
        if piece != _ZEROS[:end - start]:
            return start + len(bytes(piece).rstrip(b"\0"))
        end = start
    return 0


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words ("a FIFO (named pipe)", "a
    socket", ...)."""
    for test, kind in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return kind
    return "not a regular file"


def not_regular(path, mode: int, *, dir_fd: int | None = None) -> NotRegularFileError:
    """The :class:`NotRegularFileError` for ``path``, of ``st_mode`` ``mode`` (saying
    whether it was reached through a symbolic link)."""
    try:
        link = stat.S_ISLNK(os.lstat(_join(path, dir_fd)).st_mode)
    except OSError:
        link = False
    return NotRegularFileError(file_kind(mode), file=path, through_link=link)


def _refuse(path, what: str = "file") -> UnsafePathError:
    return UnsafePathError(f"is a symbolic link where a {what} is to be written; kafkalog "
                           "does not write through symbolic links", file=path)


def open_for_write(path, flags: int, mode: int = 0o644, *, dir_fd: int | None = None) -> int:
    """``os.open(path, flags | O_NOFOLLOW, mode)``: an fd for writing ``path`` itself,
    which must be a regular file (or be created as one).

    Raises:
        UnsafePathError: ``path`` is a symbolic link.
        NotRegularFileError: ``path`` is a FIFO, a device, a socket or a directory (opened
            without waiting for a FIFO's reader).
        OSError: any other failure.
    """
    try:
        fd = os.open(path, flags | NOFOLLOW | NONBLOCK, mode, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ELOOP or (e.errno == errno.EEXIST and flags & os.O_EXCL
                                      and os.path.islink(_join(path, dir_fd))):
            raise _refuse(path) from None
        if e.errno in (errno.ENXIO, errno.EISDIR):  # a FIFO without reader, a socket; a dir
            try:
                st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                raise e from None
            raise not_regular(path, st.st_mode, dir_fd=dir_fd) from None
        raise
    try:
        st_mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(st_mode):
            raise not_regular(path, st_mode, dir_fd=dir_fd)
        if NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _join(path, dir_fd: int | None) -> str:
    if dir_fd is None or os.path.isabs(path):
        return os.fspath(path)
    return os.path.join(f"/proc/self/fd/{dir_fd}", os.fspath(path))


def write_all(fd: int, data) -> None:
    """Write every byte of ``data`` to ``fd`` (``os.write`` may write fewer)."""
    mv = memoryview(data)
    while mv:
        n = os.write(fd, mv)
        mv = mv[n:]


def fsync_dir(path, *, dir_fd: int | None = None) -> None:
    """fsync a directory (makes creates, renames and unlinks in it durable)."""
    fd = os.open(path, os.O_RDONLY | DIRECTORY, dir_fd=dir_fd)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_fresh(path, *, dir_fd: int | None = None) -> int:
    """A temp file created anew for writing: a stale one at ``path`` (a planted link
    included) is unlinked first, then ``path`` is created with ``O_EXCL | O_NOFOLLOW``,
    so nothing already there is ever opened. Returns the fd (the caller closes it).

    Raises:
        UnsafePathError: a link was planted at ``path`` between the unlink and the create.
    """
    try:
        os.unlink(path, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    return open_for_write(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, dir_fd=dir_fd)


def write_atomically(path, data: bytes | str, *, fsync: bool = True,
                     dir_fd: int | None = None) -> None:
    """Replace ``path`` with ``data``: ``path.tmp`` (created afresh, never through a link),
    fsync, rename over ``path``, fsync the directory (``CheckpointFile.write``).

    ``dir_fd``: ``path`` is a name relative to that open directory.

    Raises:
        UnsafePathError: a link was planted as ``path.tmp`` between the unlink and the
            create (a race), or ``path`` names a directory that is a link.
        OSError: the write failed (the temp file is removed).
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(data, str):
        data = data.encode("utf-8")
    fd = create_fresh(tmp, dir_fd=dir_fd)
    try:
        try:
            write_all(fd, data)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise
    if fsync:
        if dir_fd is None:
            fsync_dir(path.parent)
        else:
            os.fsync(dir_fd)


def open_dir_nofollow(path, *, dir_fd: int | None = None) -> int:
    """An fd of the directory ``path``, refusing a symbolic link.

    Raises:
        UnsafePathError: ``path`` is a symbolic link.
        OSError: missing, or not a directory.
    """
    try:
        return os.open(path, os.O_RDONLY | DIRECTORY | NOFOLLOW, dir_fd=dir_fd)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(_join(path, dir_fd)):
            raise _refuse(path, "directory") from None
        raise


def make_dir_nofollow(path, *, dir_fd: int | None = None) -> int:
    """Create the directory ``path`` if it is missing, then open it refusing a link
    (:func:`open_dir_nofollow`); returns its fd."""
    try:
        os.mkdir(path, 0o755, dir_fd=dir_fd)
    except FileExistsError:
        pass
    return open_dir_nofollow(path, dir_fd=dir_fd)
