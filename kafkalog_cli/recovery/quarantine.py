"""The quarantine: where every byte recovery cuts, removes or rewrites goes first, and the
manifest ``--undo`` reads to put it back.

A session is a directory (by default ``<partition dir>/.kafkalog-quarantine/<UTC
timestamp>/``; a broker loads only files of a partition directory, so it ignores it)::

    manifest.json      {"version": 1, "partition_dir", "state", "intents", "entries": [...]}
    files/<name>...    the quarantined bytes

Entries (``action``): ``cut`` (a ``.log`` tail: ``range`` [start, end)), ``remove`` (a
whole file moved here), ``rewrite`` (the previous bytes of a file recovery rewrote;
``quarantine`` is null when the file did not exist), ``rename`` (a ``.swap`` renamed;
no bytes), ``checkpoint`` (one partition's entry of a log-dir checkpoint: ``old``/``new``
value, plus the old file's bytes). Each carries ``original``, ``quarantine`` and the
``sha256`` of the quarantined bytes. Paths are absolute (``--undo`` may run from any
directory); manifests written before that hold paths relative to the directory recovery
ran in, which ``undo`` maps back by file name (see :func:`_absolute_entry`).

Ordering, for crash safety: the quarantined copy is written and fsynced (file and
directory) and the manifest entry saved (tmp + fsync + rename + directory fsync) before
the original is touched. Names in ``files/`` are deterministic, so a resumed run finds
a copy it already made. A session stays ``in-progress`` until its run completes; the
next run on the partition resumes it (one session, one undo).

``--no-quarantine`` keeps the manifest (the journal) but no bytes; such a session cannot
be undone.

Space: a quarantined copy keeps only the bytes up to its last non-zero byte (zero runs
inside become holes); the entry's logical length (``range`` of a cut, ``size`` of a
removed or rewritten file) gives the zero tail back on undo, byte for byte. A preallocated
10 MiB index whose live entries are a few hundred bytes costs those bytes, so recovery
works on a nearly full disk.

Nothing is written outside the partition directory (and, for checkpoint entries, its log
directory) or the session: the quarantine root and the session are opened with
``O_DIRECTORY | O_NOFOLLOW`` and used through their descriptors (a symbolic link there is
refused); every file recovery cuts or restores is opened ``O_NOFOLLOW``; ``undo`` checks
every path of the manifest before its first write (see
:func:`kafkalog_cli.recovery.restore.validate_manifest`) and takes the log directory's
``.lock``. ``undo`` itself is :mod:`kafkalog_cli.recovery.restore`.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import time
from pathlib import Path

from ..constants import (
    CLEAN_SHUTDOWN_FILE_NAME,
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    META_PROPERTIES_FILE_NAME,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
)
from ..errors import UnreadableError, UnsafePathError
from ..storage.fileio import (
    NOFOLLOW,
    NONBLOCK,
    create_fresh,
    fsync_dir,
    make_dir_nofollow,
    nonzero_length,
    not_regular,
    open_dir_nofollow,
    open_for_write,
    write_all,
    write_atomically,
)

MANIFEST = "manifest.json"
QUARANTINE_DIR_NAME = ".kafkalog-quarantine"
#: name prefix of a session directory being created (renamed into place when whole)
STARTING_PREFIX = ".starting-"
VERSION = 1
_CHUNK = 8 << 20
#: log-directory files a ``checkpoint`` entry may name
CHECKPOINT_FILES = frozenset({RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT})
#: temp files of the log directory's own files (an interrupted tmp + rename write) that
#: recovery removes: the only log-directory files a ``remove`` entry may name
LOG_DIR_TEMP_FILES = frozenset(f"{n}.tmp" for n in (
    RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT,
    CLEANER_OFFSET_CHECKPOINT, META_PROPERTIES_FILE_NAME, CLEAN_SHUTDOWN_FILE_NAME))
ACTIONS = frozenset({"cut", "remove", "rewrite", "rename", "checkpoint"})

# -- the crash hook used by the SIGKILL tests ------------------------------------------------

_steps = {"n": 0, "limit": None}


def _step() -> None:
    """Count one durable step; with KAFKALOG_TEST_CRASH_AFTER=N, die after the N-th
    (os._exit: no cleanup, no flush, as a kill -9)."""
    if _steps["limit"] is None:
        _steps["limit"] = int(os.environ.get("KAFKALOG_TEST_CRASH_AFTER", "0") or 0)
    _steps["n"] += 1
    if _steps["limit"] and _steps["n"] >= _steps["limit"]:
        os._exit(137)


# -- small durable-IO helpers ------------------------------------------------------------

def write_durably(path, data: bytes, *, dir_fd: int | None = None) -> None:
    """tmp + fsync + rename + directory fsync (:func:`~..storage.fileio.write_atomically`)."""
    write_atomically(path, data, dir_fd=dir_fd)


def _open_read(path, *, dir_fd: int | None = None) -> int:
    """An fd reading ``path`` itself, a regular file (a symbolic link is refused; a FIFO,
    a device or a socket too, without waiting for a FIFO's writer).

    Raises:
        UnsafePathError: a symbolic link.
        NotRegularFileError: not a regular file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | NONBLOCK, dir_fd=dir_fd)
    except OSError as e:
        if os.path.islink(path if dir_fd is None else f"/proc/self/fd/{dir_fd}/{path}"):
            raise UnsafePathError("is a symbolic link; kafkalog does not follow links in "
                                  "a quarantine or its undo", file=path) from None
        if e.errno == errno.ENXIO:   # a socket
            raise not_regular(path, os.stat(path, dir_fd=dir_fd).st_mode,
                              dir_fd=dir_fd) from None
        raise e
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise not_regular(path, mode, dir_fd=dir_fd)
    os.set_blocking(fd, True)
    return fd


def sha256_file(path, start: int = 0, end: int | None = None) -> str:
    fd = _open_read(path)
    try:
        return _sha256_fd(fd, start, end)
    finally:
        os.close(fd)


def _sha256(data: bytes = b""):
    """hashlib's SHA-256 of ``data``, imported on first use: loading OpenSSL's hashes costs
    ~2 ms of CPU, which a dry run, hashing nothing, should not pay."""
    import hashlib

    return hashlib.sha256(data)


def _sha256_fd(fd: int, start: int = 0, end: int | None = None) -> str:
    h = _sha256()
    pos = start
    end = os.fstat(fd).st_size if end is None else end
    while pos < end:
        chunk = os.pread(fd, min(_CHUNK, end - pos), pos)
        if not chunk:
            break
        h.update(chunk)
        pos += len(chunk)
    return h.hexdigest()


def _copy_range(src_fd: int, dst_name: str, start: int, end: int, *, dir_fd: int,
                digest: bool = True) -> str | None:
    """Copy bytes [start, end) of ``src_fd`` to ``dst_name`` in the directory ``dir_fd``
    (tmp + fsync + rename), leaving out the trailing zero bytes (and making holes of zero
    chunks inside); returns the sha256 of all of [start, end) (None without ``digest``:
    the caller hashed them already)."""
    h = _sha256() if digest else None
    tmp = dst_name + ".tmp"
    out = create_fresh(tmp, dir_fd=dir_fd)
    try:
        pending = 0  # zero bytes not written yet (a hole, or the tail left out)
        pos = start
        while pos < end:
            chunk = os.pread(src_fd, min(_CHUNK, end - pos), pos)
            if not chunk:
                break
            pos += len(chunk)
            if h is not None:
                h.update(chunk)
            n = nonzero_length(chunk)
            if not n:
                pending += len(chunk)
                continue
            if pending:
                os.lseek(out, pending, os.SEEK_CUR)
            write_all(out, memoryview(chunk)[:n])
            pending = len(chunk) - n
        os.fsync(out)
    except BaseException:
        os.close(out)
        os.unlink(tmp, dir_fd=dir_fd)
        raise
    os.close(out)
    os.replace(tmp, dst_name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    os.fsync(dir_fd)
    return None if h is None else h.hexdigest()


def _read_logical(q_fd: int, stored: int, offset: int, n: int) -> bytes:
    """Bytes [offset, offset + n) of a quarantined copy: what is stored, then zeros."""
    data = os.pread(q_fd, max(0, min(n, stored - offset)), offset) if offset < stored else b""
    return data + bytes(n - len(data))


def _abs(path) -> Path:
    """``path`` made absolute against the current directory (symlinks kept)."""
    return Path(os.path.abspath(path))


def utc_stamp() -> str:
    t = time.time()
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(t)) + f".{int(t * 1e6) % 1000000:06d}Z"


def _dump(manifest: dict) -> bytes:
    return json.dumps(manifest, indent=1, sort_keys=True).encode()


# -- sessions ------------------------------------------------------------------------------

class Session:
    """One quarantine session for one partition directory (see the module doc). Holds
    open descriptors of its directory and of ``files/``: :meth:`close` it."""

    def __init__(self, path: Path, partition_dir: Path, keep: bool, manifest: dict, fd: int):
        # absolute: every path journalled in the manifest derives from these two
        self.path = _abs(path)
        self.files = self.path / "files"
        self.partition_dir = _abs(partition_dir)
        self.keep = keep
        self.manifest = manifest
        self._fd = fd
        self._files_fd = make_dir_nofollow("files", dir_fd=fd)

    def close(self) -> None:
        for name in ("_files_fd", "_fd"):
            fd = getattr(self, name, None)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)

    def __del__(self):
        self.close()

    # -- opening -------------------------------------------------------------------------

    @staticmethod
    def root_for(partition_dir: Path, quarantine: Path | None) -> Path:
        partition_dir = _abs(partition_dir)
        if quarantine is None:
            return partition_dir / QUARANTINE_DIR_NAME
        tag = _sha256(str(partition_dir.resolve()).encode()).hexdigest()[:8]
        return _abs(quarantine) / f"{partition_dir.name}-{tag}"

    @classmethod
    def open(cls, partition_dir, quarantine=None, *, keep: bool = True) -> Session:
        """Resume this partition's in-progress session, or start a new one.

        Raises:
            UnsafePathError: the quarantine root (``.kafkalog-quarantine``) or a session
                in it is a symbolic link.
        """
        pdir = _abs(partition_dir)
        root = cls.root_for(pdir, quarantine)
        found = find_in_progress(root, pdir)
        if found is not None:
            return found
        # A session becomes visible only whole: it is built under a dot name (manifest
        # included) and renamed into place, so a kill while starting leaves no session
        # without a manifest for the next run to miss; leftovers of such a kill hold no
        # quarantined bytes (nothing is quarantined before the rename) and are removed.
        if quarantine is None:
            parent = pdir
        else:
            parent = _abs(quarantine)
            parent.mkdir(parents=True, exist_ok=True)  # the operator's choice
        parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            root_fd = make_dir_nofollow(root.name, dir_fd=parent_fd)
            try:
                for stale in os.listdir(root_fd):
                    if stale.startswith(STARTING_PREFIX):
                        shutil.rmtree(stale, dir_fd=root_fd, ignore_errors=True)
                name = utc_stamp()
                tmp = STARTING_PREFIX + name
                os.mkdir(tmp, 0o755, dir_fd=root_fd)
                fd = open_dir_nofollow(tmp, dir_fd=root_fd)
                os.mkdir("files", 0o755, dir_fd=fd)
                manifest = {"version": VERSION, "partition_dir": str(pdir.resolve()),
                            "created": name, "state": "in-progress", "keep": keep,
                            "intents": {"rebuild_bases": []}, "entries": []}
                write_durably(MANIFEST, _dump(manifest), dir_fd=fd)
                os.rename(tmp, name, src_dir_fd=root_fd, dst_dir_fd=root_fd)
                os.fsync(root_fd)
            finally:
                os.close(root_fd)
            os.fsync(parent_fd)
        finally:
            os.close(parent_fd)
        _step()
        return cls(root / name, pdir, keep, manifest, fd)

    def save(self) -> None:
        write_durably(MANIFEST, _dump(self.manifest), dir_fd=self._fd)
        _step()

    @property
    def entries(self) -> list[dict]:
        return self.manifest["entries"]

    def set_intents(self, rebuild_bases) -> None:
        merged = sorted(set(self.manifest["intents"].get("rebuild_bases", [])) |
                        set(rebuild_bases))
        if merged != self.manifest["intents"].get("rebuild_bases"):
            self.manifest["intents"]["rebuild_bases"] = merged
            self.save()

    @property
    def forced_bases(self) -> set[int]:
        return set(self.manifest["intents"].get("rebuild_bases", []))

    def complete(self) -> None:
        self.manifest["state"] = "complete"
        self.save()

    def _qname(self, name: str) -> Path:
        return self.files / name

    def _exists(self, q: Path) -> bool:
        try:
            os.stat(q.name, dir_fd=self._files_fd, follow_symlinks=False)
            return True
        except FileNotFoundError:
            return False

    def _find(self, **match) -> dict | None:
        for e in self.entries:
            if all(e.get(k) == v for k, v in match.items()):
                return e
        return None

    def _own_temp(self, path: Path) -> bool:
        """``path`` is ``<file>.tmp`` of a file this session journalled a write of
        (``rewrite``, or a log-dir ``checkpoint``) before writing it: the temp file a kill
        between its creation and its rename left behind. A ``.tmp`` that was there before
        the session is quarantined first (leftovers are planned before writes), so it never
        matches."""
        if path.is_symlink() or not path.name.endswith(".tmp"):
            return False
        target = str(path.with_name(path.name[:-len(".tmp")]))
        return any(e.get("original") == target and e.get("action") in ("rewrite", "checkpoint")
                   for e in self.entries)

    def _unique(self, name: str) -> Path:
        p = self._qname(name)
        used = {e.get("quarantine") for e in self.entries}
        i = 1
        while str(p) in used or self._exists(p):
            p = self._qname(f"{name}.{i}")
            i += 1
        return p

    # -- the four kinds of change ---------------------------------------------------------

    def cut(self, path, size: int, reason: str = "") -> None:
        """Quarantine bytes [size, end) of ``path``, then truncate it to ``size``.

        Raises:
            UnsafePathError: ``path`` is a symbolic link.
        """
        path = _abs(path)
        fd = open_for_write(path, os.O_RDWR)
        try:
            end = os.fstat(fd).st_size
            if end <= size:
                return
            q = None
            digest = None
            if self.keep:
                q = self._qname(f"{path.name}.cut-{size}-{end}")
                prior = self._find(action="cut", original=str(path), range=[size, end])
                if prior and self._exists(q):
                    digest = prior["sha256"]
                else:
                    digest = _copy_range(fd, q.name, size, end, dir_fd=self._files_fd)
                    _step()
            if not self._find(action="cut", original=str(path), range=[size, end]):
                self.entries.append({"action": "cut", "original": str(path),
                                     "quarantine": None if q is None else str(q),
                                     "range": [size, end], "sha256": digest,
                                     "reason": reason})
                self.save()
            os.ftruncate(fd, size)
            os.fsync(fd)
        finally:
            os.close(fd)
        _step()

    def remove(self, path, reason: str = "") -> None:
        """Move ``path`` into the quarantine (or delete it without one).

        Raises:
            UnsafePathError: ``path`` is a symbolic link.
        """
        path = _abs(path)
        if self._own_temp(path):
            # this session's own tmp + rename write, interrupted by a kill: its bytes were
            # never the partition's, so it goes without a trace (undo must not bring it back)
            try:
                path.unlink()
            except FileNotFoundError:
                return
            fsync_dir(path.parent)
            _step()
            return
        try:
            fd = _open_read(path)
        except FileNotFoundError:
            return
        try:
            digest = _sha256_fd(fd)
            size = os.fstat(fd).st_size
            prior = self._find(action="remove", original=str(path), sha256=digest)
            q = None
            if self.keep:
                q = Path(prior["quarantine"]) if prior and prior.get("quarantine") \
                    else self._unique(path.name)
            if prior is None:
                self.entries.append({"action": "remove", "original": str(path),
                                     "quarantine": None if q is None else str(q),
                                     "sha256": digest, "size": size, "reason": reason})
                self.save()
            if q is None:
                path.unlink()
            else:
                try:
                    os.rename(path, q.name, dst_dir_fd=self._files_fd)
                except OSError:  # another file system: copy, then remove
                    _copy_range(fd, q.name, 0, size, dir_fd=self._files_fd, digest=False)
                    path.unlink()
                os.fsync(self._files_fd)
        finally:
            os.close(fd)
        fsync_dir(path.parent)
        _step()

    def rename(self, src, dst, reason: str = "") -> None:
        src, dst = _abs(src), _abs(dst)
        if not src.exists():
            return
        if not self._find(action="rename", original=str(src), renamed_to=str(dst)):
            self.entries.append({"action": "rename", "original": str(src),
                                 "renamed_to": str(dst), "quarantine": None,
                                 "sha256": None, "reason": reason})
            self.save()
        os.rename(src, dst)
        fsync_dir(dst.parent)
        _step()

    def write(self, path, data: bytes, reason: str = "") -> None:
        """Quarantine the current bytes of ``path`` (if any), then replace it durably.

        Raises:
            UnsafePathError: ``path`` is a symbolic link.
        """
        path = _abs(path)
        new_digest = _sha256(data).hexdigest()
        try:
            fd = _open_read(path)
        except FileNotFoundError:
            fd = None
        try:
            # the old bytes are hashed and kept a piece at a time (an inflated file is
            # never held; its zero runs stay holes in the quarantine)
            size = None if fd is None else os.fstat(fd).st_size
            old_digest = None if fd is None else _sha256_fd(fd)
            if size == len(data) and old_digest == new_digest:
                return
            prior = self._find(action="rewrite", original=str(path), sha256=old_digest,
                               new_sha256=new_digest)
            if prior is None:
                q = None
                if fd is not None and self.keep:
                    q = self._unique(path.name + ".old")
                    _copy_range(fd, q.name, 0, size, dir_fd=self._files_fd, digest=False)
                    _step()
                self.entries.append({"action": "rewrite", "original": str(path),
                                     "quarantine": None if q is None else str(q),
                                     "existed": fd is not None, "sha256": old_digest,
                                     "size": size, "new_sha256": new_digest,
                                     "reason": reason})
                self.save()
        finally:
            if fd is not None:
                os.close(fd)
        write_durably(path, data)
        _step()

    def checkpoint(self, path, partition: str, old: int | None, new: int) -> None:
        """Record one partition's entry change in a log-dir checkpoint, keeping its
        current bytes (read a piece at a time) when it exists (the caller writes the file
        once for all partitions, after every partition's call)."""
        path = _abs(path)
        q = None
        digest = None
        size = None
        try:
            fd = _open_read(path)
        except FileNotFoundError:
            fd = None
        try:
            if fd is not None:
                size = os.fstat(fd).st_size
                digest = _sha256_fd(fd)
                if self.keep:
                    prior = self._find(action="checkpoint", original=str(path),
                                       sha256=digest)
                    if prior and prior.get("quarantine"):
                        q = Path(prior["quarantine"])
                    else:
                        q = self._unique(Path(path).name + ".old")
                        _copy_range(fd, q.name, 0, size, dir_fd=self._files_fd,
                                    digest=False)
                        _step()
        finally:
            if fd is not None:
                os.close(fd)
        if not self._find(action="checkpoint", original=str(path), partition=partition,
                          new=new):
            self.entries.append({"action": "checkpoint", "original": str(path),
                                 "partition": partition, "old": old, "new": new,
                                 "existed": fd is not None,
                                 "quarantine": None if q is None else str(q),
                                 "size": size, "sha256": digest})
            self.save()


#: the largest manifest read (one entry is ~500 bytes: 130,000 of them)
MAX_MANIFEST_BYTES = 64 << 20


def _read_manifest(dir_fd: int, where: Path) -> dict:
    fd = _open_read(MANIFEST, dir_fd=dir_fd)
    try:
        size = os.fstat(fd).st_size
        if size > MAX_MANIFEST_BYTES:
            raise UnreadableError(f"is {size} bytes, more than the {MAX_MANIFEST_BYTES} bytes "
                                  "kafkalog reads of a manifest", file=where / MANIFEST)
        raw = os.pread(fd, size, 0)
    finally:
        os.close(fd)
    try:
        manifest = json.loads(raw)
    except RecursionError:
        raise UnreadableError("not JSON (nested too deeply)", file=where / MANIFEST) from None
    except ValueError as e:
        raise UnreadableError(f"not JSON ({e})", file=where / MANIFEST) from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("entries", []), list):
        raise UnreadableError("not a kafkalog quarantine manifest", file=where / MANIFEST)
    return manifest


def find_in_progress(root: Path, partition_dir: Path) -> Session | None:
    """The newest in-progress session under ``root`` for ``partition_dir``.

    Raises:
        UnsafePathError: ``root`` or a session directory in it is a symbolic link.
    """
    if not os.path.lexists(root):
        return None
    try:
        root_fd = open_dir_nofollow(root)
    except NotADirectoryError:
        return None
    try:
        for name in sorted(os.listdir(root_fd), reverse=True):
            if name.startswith(STARTING_PREFIX):
                continue
            try:
                fd = open_dir_nofollow(name, dir_fd=root_fd)
            except NotADirectoryError:
                continue
            try:
                manifest = _read_manifest(fd, root / name)
            except (OSError, UnreadableError):
                os.close(fd)
                continue
            if manifest.get("state") == "in-progress" and \
                    manifest.get("partition_dir") == str(partition_dir.resolve()):
                child = _abs(root / name)
                manifest["entries"] = [_absolute_entry(e, child, manifest)
                                       for e in manifest.get("entries", [])]
                return Session(child, partition_dir, manifest.get("keep", True), manifest,
                               fd)
            os.close(fd)
    finally:
        os.close(root_fd)
    return None


def _absolute_entry(e: dict, sdir: Path, manifest: dict) -> dict:
    """``e`` with absolute paths. Manifests written before paths were stored absolute
    hold them relative to the directory recovery ran in, which is unknown; but every
    file recovery touches is in the partition directory (a ``checkpoint`` entry: in its
    log directory) and every quarantined copy in the session's ``files/``, so the file
    name places it. The partition directory is the session's grandparent in the default
    location (``<partition dir>/.kafkalog-quarantine/<stamp>``), else the manifest's
    ``partition_dir``."""
    if all(not isinstance(e.get(k), str) or os.path.isabs(e[k])
           for k in ("original", "quarantine", "renamed_to")):
        return e
    pdir = _home(sdir, manifest)
    home = pdir.parent if e.get("action") == "checkpoint" else pdir
    out = dict(e)
    for k in ("original", "renamed_to"):
        if isinstance(out.get(k), str) and not os.path.isabs(out[k]):
            out[k] = str(home / Path(out[k]).name)
    if isinstance(out.get("quarantine"), str) and not os.path.isabs(out["quarantine"]):
        out["quarantine"] = str(sdir / "files" / Path(out["quarantine"]).name)
    return out


def _home(sdir: Path, manifest: dict) -> Path:
    """The partition directory a session belongs to: its grandparent in the default
    location, else the manifest's ``partition_dir``."""
    if sdir.parent.name == QUARANTINE_DIR_NAME:
        return sdir.parent.parent
    return Path(manifest.get("partition_dir") or sdir)

