"""``recover --undo``: putting back what a quarantine session kept (kafkalog's own: Kafka's
``LogLoader`` recovery has no undo). The session and its manifest are
:mod:`kafkalog_cli.recovery.quarantine`'s; this module reads them back.

:func:`undo` checks every path of the manifest before its first write
(:func:`validate_manifest`: each file directly inside the partition directory or, for a
checkpoint entry, one of its log directory's checkpoint files; nothing through a symbolic
link), takes the log directory's ``.lock``, then applies the entries last first: a cut
tail appended back, a removed or rewritten file restored with its zero tail, a rename
reversed, a checkpoint entry set back to its old value. An entry whose file changed
since is a conflict, left as it is. A session all of whose entries are back in place is
removed.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InvalidArgumentError, KafkalogError, UnreadableError, UnsafePathError
from ..storage.checkpoints import (
    MAX_CHECKPOINT_BYTES,
    _parse,
    format_offset_checkpoint,
    read_offset_checkpoint,
)
from ..storage.fileio import fsync_dir, open_dir_nofollow, open_for_write
from ..storage.files import parse_partition_dir_name
from ..storage.lock import LogDirLock
from .quarantine import (
    _CHUNK,
    ACTIONS,
    CHECKPOINT_FILES,
    LOG_DIR_TEMP_FILES,
    MANIFEST,
    QUARANTINE_DIR_NAME,
    _abs,
    _absolute_entry,
    _dump,
    _home,
    _open_read,
    _read_logical,
    _read_manifest,
    sha256_file,
    write_durably,
)


@dataclass
class UndoResult:
    """What ``recover --undo`` did: files restored, entries already in place, and
    entries it could not apply (the file changed since, or no bytes were kept)."""

    session: str
    restored: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    #: the session directory was removed (everything it kept is back in place)
    removed: bool = False

    @property
    def ok(self) -> bool:
        return not self.conflicts

    def to_dict(self) -> dict:
        return {"quarantine": self.session, "ok": self.ok, "restored": self.restored,
                "already": self.already, "conflicts": self.conflicts,
                "quarantineRemoved": self.removed}


def _path_problem(p, home: Path, *, names=None) -> str | None:
    """Why ``p`` is not a file directly inside ``home`` that undo may write (None: it is):
    an absolute, normalised path (no ``..``, ``.``, ``//``) whose directory resolves to
    ``home`` resolved (no symbolic link in between), not itself a symbolic link, and
    (``names``) one of those names."""
    if not isinstance(p, str) or not os.path.isabs(p):
        return f"{p!r} is not an absolute path"
    if os.path.normpath(p) != p or ".." in p.split(os.sep):
        return f"{p} is not a normalised path"
    parent, name = os.path.split(p)
    if name in ("", ".", ".."):
        return f"{p} names no file"
    if os.path.realpath(parent) != os.path.realpath(home):
        return f"{p} is outside {home}"
    if os.path.islink(p):
        return f"{p} is a symbolic link"
    if names is not None and name not in names:
        return f"{p} is not one of {', '.join(sorted(names))}"
    return None


def validate_manifest(sdir: Path, manifest: dict) -> tuple[Path, Path]:
    """Check every path of a session's manifest before undo writes anything: each
    ``original`` / ``renamed_to`` is a file directly inside the partition directory the
    session belongs to (its grandparent in the default location, else the manifest's
    ``partition_dir``; a ``checkpoint`` entry's: one of the log directory's checkpoint
    files; a ``remove`` entry's may also be a temp file of the log directory's own files,
    :data:`LOG_DIR_TEMP_FILES`), each ``quarantine`` a file directly inside the session's
    ``files/``, none of
    them a symbolic link, the session and ``.kafkalog-quarantine`` not links either.
    Returns ``(partition dir, log dir)``.

    Raises:
        UnsafePathError: naming the manifest, the first problems and how many there are.
    """
    problems: list[str] = []
    for d in (sdir, sdir / "files") + ((sdir.parent,) if sdir.parent.name ==
                                        QUARANTINE_DIR_NAME else ()):
        if os.path.islink(d):
            problems.append(f"{d} is a symbolic link")
    pdir = _home(sdir, manifest)
    if not os.path.isabs(pdir):
        problems.append(f"partition_dir {str(pdir)!r} is not an absolute path")
    log_dir = pdir.parent
    entries = manifest.get("entries", [])
    for i, raw in enumerate(entries):
        if not isinstance(raw, dict) or raw.get("action") not in ACTIONS:
            problems.append(f"entry {i} is not a kafkalog quarantine entry")
            continue
        e = _absolute_entry(raw, sdir, manifest)
        checkpoint = e["action"] == "checkpoint"
        home, names = (log_dir, CHECKPOINT_FILES) if checkpoint else (pdir, None)
        if e["action"] == "remove" and isinstance(e.get("original"), str) and \
                os.path.basename(e["original"]) in LOG_DIR_TEMP_FILES:
            home, names = log_dir, LOG_DIR_TEMP_FILES
        keys = ("original", "renamed_to") if e["action"] == "rename" else ("original",)
        for k in keys:
            why = _path_problem(e.get(k), home, names=names)
            if why:
                problems.append(f"entry {i} {k}: {why}")
        if e.get("quarantine") is not None:
            why = _path_problem(e["quarantine"], sdir / "files")
            if why:
                problems.append(f"entry {i} quarantine: {why}")
        if e["action"] == "cut":
            r = e.get("range")
            if not (isinstance(r, list) and len(r) == 2 and all(type(x) is int for x in r)
                    and 0 <= r[0] <= r[1]):
                problems.append(f"entry {i}: range {r!r} is not [start, end]")
        if checkpoint and parse_partition_dir_name(str(e.get("partition"))) is None:
            problems.append(f"entry {i}: partition {e.get('partition')!r} is not "
                            "<topic>-<partition>")
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise UnsafePathError("refusing to undo, nothing was written: " +
                              "; ".join(problems[:3]) + more, file=sdir / MANIFEST)
    return pdir, log_dir


def _restore_copy(q: Path, original: Path, length: int | None) -> None:
    """Put the quarantined copy ``q`` back as ``original`` (tmp + rename): a hard link
    when it is whole, else its bytes and the zero tail up to ``length``."""
    tmp = original.with_name(original.name + ".kafkalog-undo.tmp")
    try:
        tmp.unlink()
    except FileNotFoundError:
        pass
    qfd = _open_read(q)
    try:
        stored = os.fstat(qfd).st_size
        linked = False
        if length is None or stored == length:
            try:
                os.link(q, tmp, follow_symlinks=False)
                linked = True
            except OSError:
                pass
        if not linked:
            out = open_for_write(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            try:
                pos = 0
                while pos < stored:
                    chunk = os.pread(qfd, min(_CHUNK, stored - pos), pos)
                    if not chunk:
                        break
                    os.pwrite(out, chunk, pos)
                    pos += len(chunk)
                os.ftruncate(out, stored if length is None else length)
                os.fsync(out)
            finally:
                os.close(out)
    finally:
        os.close(qfd)
    os.replace(tmp, original)
    fsync_dir(original.parent)


def undo(session_dir) -> UndoResult:
    """Put back everything a session quarantined, newest change first. Safe to rerun
    while it meets conflicts (the manifest journals each entry undone).

    Every path in the manifest is checked first (:func:`validate_manifest`); then the log
    directory's ``.lock`` is taken (when the directory exists) for the writes, and
    released (the file removed, as a broker's shutdown does) at the end. When every
    entry is back in place, the session directory is removed, and the partition's
    ``.kafkalog-quarantine`` too when no other session is left in it.

    Raises:
        InvalidArgumentError: ``session_dir`` holds no manifest.
        UnsafePathError: a path of the manifest leads outside the partition directory
            (or log directory, or session), or through a symbolic link: nothing written.
        LogDirLockedError: a broker (or another kafkalog) holds the log directory.
    """
    from ..storage.location import require_local

    sdir = _abs(require_local(session_dir, "recover --undo"))
    try:
        sfd = open_dir_nofollow(sdir)
    except (FileNotFoundError, NotADirectoryError):
        raise InvalidArgumentError(f"{sdir} is not a kafkalog quarantine session "
                                   f"(no {MANIFEST})") from None
    try:
        try:
            manifest = _read_manifest(sfd, sdir)
        except FileNotFoundError:
            raise InvalidArgumentError(f"{sdir} is not a kafkalog quarantine session "
                                       f"(no {MANIFEST})") from None
        except OSError as e:
            raise UnreadableError(e.strerror or str(e), file=sdir / MANIFEST) from e
        _pdir, log_dir = validate_manifest(sdir, manifest)
        lock = LogDirLock(log_dir).acquire() if log_dir.is_dir() else None
        try:
            res = _undo_entries(sdir, sfd, manifest, str(session_dir))
            if res.ok:
                res.removed = _remove_session(sdir)
            return res
        finally:
            if lock is not None:
                lock.release()
    finally:
        os.close(sfd)


def _remove_session(sdir: Path) -> bool:
    """Remove an undone session directory (through its parent's descriptor: no symbolic
    link is followed), then its ``.kafkalog-quarantine`` root when empty. True when the
    session is gone."""
    try:
        root_fd = open_dir_nofollow(sdir.parent)
    except OSError:
        return False
    try:
        shutil.rmtree(sdir.name, dir_fd=root_fd)
        fsync_dir(sdir.parent)
    except OSError:
        return False
    finally:
        os.close(root_fd)
    if sdir.parent.name == QUARANTINE_DIR_NAME:
        try:
            os.rmdir(sdir.parent)  # only when no other session is left in it
            fsync_dir(sdir.parent.parent)
        except OSError:
            pass
    return True


def _undo_entries(sdir: Path, sfd: int, manifest: dict, name: str) -> UndoResult:
    res = UndoResult(name)
    for e in reversed(manifest.get("entries", [])):
        if e.get("undone"):
            res.already.append(e["original"])
            continue
        before = len(res.conflicts)
        ae = _absolute_entry(e, sdir, manifest)
        try:
            if not Path(ae["original"]).parent.is_dir():
                # never "already in place": the files are somewhere else, or gone
                res.conflicts.append(f"{ae['original']}: directory "
                                     f"{Path(ae['original']).parent} does not exist")
            else:
                _undo_entry(ae, res)
        except (OSError, KafkalogError) as ex:
            res.conflicts.append(f"{ae['original']}: {ex}")
        if len(res.conflicts) == before:
            # journal the progress: a rerun must not apply this entry twice (a later
            # entry may have put other bytes at the same path)
            e["undone"] = True
            write_durably(MANIFEST, _dump(manifest), dir_fd=sfd)
    if res.ok:
        manifest["state"] = "undone"
        write_durably(MANIFEST, _dump(manifest), dir_fd=sfd)
    return res


def _size_of(path: Path) -> int | None:
    """The size of ``path`` itself (None when missing)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePathError("is a symbolic link; undo does not write through it", file=path)
    return st.st_size


def _undo_entry(e: dict, res: UndoResult) -> None:
    original = Path(e["original"])
    q = Path(e["quarantine"]) if e.get("quarantine") else None
    act = e["action"]
    if act == "rename":
        dst = Path(e["renamed_to"])
        if not original.exists() and dst.exists():
            os.rename(dst, original)
            fsync_dir(original.parent)
            res.restored.append(str(original))
        else:
            res.already.append(str(original))
        return
    if act == "checkpoint":
        _undo_checkpoint(e, q, res)
        return
    if act == "rewrite":
        cur = None if _size_of(original) is None else sha256_file(original)
        if not e.get("existed"):
            if cur is None:
                res.already.append(str(original))
            elif cur == e["new_sha256"]:
                original.unlink()
                fsync_dir(original.parent)
                res.restored.append(str(original))
            else:
                res.conflicts.append(f"{original}: changed since recovery wrote it")
            return
        if cur == e["sha256"]:
            res.already.append(str(original))
            return
        if q is None or not q.exists():
            res.conflicts.append(f"{original}: no quarantined copy (--no-quarantine)")
            return
        _restore_copy(q, original, e.get("size"))
        res.restored.append(str(original))
        return
    if q is None or not q.exists():
        if act == "remove" and _size_of(original) is not None:
            res.already.append(str(original))
        else:
            res.conflicts.append(f"{original}: no quarantined copy")
        return
    if act == "remove":
        if _size_of(original) is not None:
            res.already.append(str(original))
        else:
            _restore_copy(q, original, e.get("size"))
            res.restored.append(str(original))
        return
    if act == "cut":
        _undo_cut(e, original, q, res)
        return
    res.conflicts.append(f"{original}: unknown action {act!r}")


def _undo_cut(e: dict, original: Path, q: Path, res: UndoResult) -> None:
    """Append the cut bytes back (the stored ones, then the zero tail they left out)."""
    start, end = e["range"]
    try:
        fd = open_for_write(original, os.O_RDWR)
    except FileNotFoundError:
        res.conflicts.append(f"{original}: size -1 is neither {start} nor {end}")
        return
    try:
        size = os.fstat(fd).st_size
        if size == end:
            res.already.append(str(original))
            return
        if not start <= size < end:
            res.conflicts.append(f"{original}: size {size} is neither {start} nor {end}")
            return
        qfd = _open_read(q)
        try:
            stored = os.fstat(qfd).st_size
            if size > start and os.pread(fd, size - start, start) != \
                    _read_logical(qfd, stored, 0, size - start):
                res.conflicts.append(f"{original}: bytes after {start} changed")
                return
            pos = size - start
            while pos < min(stored, end - start):
                chunk = os.pread(qfd, min(_CHUNK, stored - pos), pos)
                if not chunk:
                    break
                os.pwrite(fd, chunk, start + pos)
                pos += len(chunk)
        finally:
            os.close(qfd)
        os.ftruncate(fd, end)
        os.fsync(fd)
    finally:
        os.close(fd)
    res.restored.append(str(original))


def _undo_checkpoint(e: dict, q: Path | None, res: UndoResult) -> None:
    path = Path(e["original"])
    tp = parse_partition_dir_name(e["partition"])
    try:
        cur = read_offset_checkpoint(path) or {}
    except KafkalogError:
        res.conflicts.append(f"{path}: unreadable, not restored")
        return
    if cur.get(tp) != e["new"]:
        res.already.append(f"{path} ({e['partition']})")
        return
    if e["old"] is None:
        del cur[tp]
    else:
        cur[tp] = e["old"]
    old_bytes = None
    length = None
    if q is not None and q.exists():
        qfd = _open_read(q)
        try:
            stored = os.fstat(qfd).st_size
            length = e.get("size") if e.get("size") is not None else stored
            if length <= MAX_CHECKPOINT_BYTES:   # else no checkpoint kafkalog reads
                old_bytes = _read_logical(qfd, stored, 0, length)
        finally:
            os.close(qfd)
    if old_bytes is None and length is not None and not cur:
        # an old file too large to be a checkpoint: put back as it was, a piece at a time
        _restore_copy(q, path, length)
        res.restored.append(f"{path} ({e['partition']})")
        return
    if old_bytes is not None:
        try:
            old_entries = {parse_partition_dir_name(f"{t}-{p}"): int(o)
                           for t, p, o in _parse(path, old_bytes.decode().splitlines(), 3)}
        except (KafkalogError, ValueError):
            old_entries = None
        # the old bytes, once they hold what the file holds now; an old file that did not
        # parse (recovery rewrote it from scratch) once every partition is undone
        if old_entries == cur or (old_entries is None and not cur):
            write_durably(path, old_bytes)
            res.restored.append(f"{path} ({e['partition']})")
            return
    if not cur and not e.get("existed"):
        path.unlink()
        fsync_dir(path.parent)
    else:
        write_durably(path, format_offset_checkpoint(cur).encode())
    res.restored.append(f"{path} ({e['partition']})")
