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
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InvalidArgumentError, KafkalogError, UnreadableError
from ..storage.checkpoints import _parse, format_offset_checkpoint, read_offset_checkpoint
from ..storage.files import parse_partition_dir_name

MANIFEST = "manifest.json"
#: name prefix of a session directory being created (renamed into place when whole)
STARTING_PREFIX = ".starting-"
VERSION = 1
_CHUNK = 8 << 20

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

def fsync_dir(path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durably(path: Path, data: bytes) -> None:
    """tmp + fsync + rename + directory fsync."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        mv = memoryview(data)
        while mv:
            n = os.write(fd, mv)
            mv = mv[n:]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def sha256_file(path, start: int = 0, end: int | None = None) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        f.seek(start)
        left = None if end is None else end - start
        while left is None or left > 0:
            chunk = f.read(_CHUNK if left is None else min(_CHUNK, left))
            if not chunk:
                break
            h.update(chunk)
            if left is not None:
                left -= len(chunk)
    return h.hexdigest()


def _copy_range(src, dst: Path, start: int, end: int) -> str:
    """Copy bytes [start, end) of ``src`` to ``dst`` (tmp + fsync + rename); sha256."""
    h = hashlib.sha256()
    tmp = dst.with_name(dst.name + ".tmp")
    with open(src, "rb") as f, open(tmp, "wb") as out:
        f.seek(start)
        left = end - start
        while left > 0:
            chunk = f.read(min(_CHUNK, left))
            if not chunk:
                break
            h.update(chunk)
            out.write(chunk)
            left -= len(chunk)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, dst)
    fsync_dir(dst.parent)
    return h.hexdigest()


def _abs(path) -> Path:
    """``path`` made absolute against the current directory (symlinks kept)."""
    return Path(os.path.abspath(path))


def utc_stamp() -> str:
    t = time.time()
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(t)) + f".{int(t * 1e6) % 1000000:06d}Z"


# -- sessions ------------------------------------------------------------------------------

class Session:
    """One quarantine session for one partition directory (see the module doc)."""

    def __init__(self, path: Path, partition_dir: Path, keep: bool, manifest: dict):
        # absolute: every path journalled in the manifest derives from these two
        self.path = _abs(path)
        self.files = self.path / "files"
        self.partition_dir = _abs(partition_dir)
        self.keep = keep
        self.manifest = manifest

    # -- opening -------------------------------------------------------------------------

    @staticmethod
    def root_for(partition_dir: Path, quarantine: Path | None) -> Path:
        partition_dir = _abs(partition_dir)
        if quarantine is None:
            return partition_dir / ".kafkalog-quarantine"
        tag = hashlib.sha256(str(partition_dir.resolve()).encode()).hexdigest()[:8]
        return _abs(quarantine) / f"{partition_dir.name}-{tag}"

    @classmethod
    def open(cls, partition_dir, quarantine=None, *, keep: bool = True) -> Session:
        """Resume this partition's in-progress session, or start a new one."""
        pdir = _abs(partition_dir)
        root = cls.root_for(pdir, quarantine)
        found = find_in_progress(root, pdir)
        if found is not None:
            return found
        # A session becomes visible only whole: it is built under a dot name (manifest
        # included) and renamed into place, so a kill while starting leaves no session
        # without a manifest for the next run to miss; leftovers of such a kill hold no
        # quarantined bytes (nothing is quarantined before the rename) and are removed.
        root.mkdir(parents=True, exist_ok=True)
        for stale in root.glob(STARTING_PREFIX + "*"):
            shutil.rmtree(stale, ignore_errors=True)
        path = root / utc_stamp()
        tmp = root / (STARTING_PREFIX + path.name)
        tmp.mkdir()
        (tmp / "files").mkdir()
        manifest = {"version": VERSION, "partition_dir": str(pdir.resolve()),
                    "created": path.name, "state": "in-progress", "keep": keep,
                    "intents": {"rebuild_bases": []}, "entries": []}
        write_durably(tmp / MANIFEST,
                      json.dumps(manifest, indent=1, sort_keys=True).encode())
        fsync_dir(tmp)
        os.rename(tmp, path)
        fsync_dir(root)
        if root.parent != pdir:
            fsync_dir(root.parent)
        else:
            fsync_dir(pdir)
        _step()
        return cls(path, pdir, keep, manifest)

    def save(self) -> None:
        write_durably(self.path / MANIFEST,
                      json.dumps(self.manifest, indent=1, sort_keys=True).encode())
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

    def _find(self, **match) -> dict | None:
        for e in self.entries:
            if all(e.get(k) == v for k, v in match.items()):
                return e
        return None

    def _unique(self, name: str) -> Path:
        p = self._qname(name)
        used = {e.get("quarantine") for e in self.entries}
        i = 1
        while str(p) in used or p.exists():
            p = self._qname(f"{name}.{i}")
            i += 1
        return p

    # -- the four kinds of change ---------------------------------------------------------

    def cut(self, path, size: int, reason: str = "") -> None:
        """Quarantine bytes [size, end) of ``path``, then truncate it to ``size``."""
        path = _abs(path)
        end = path.stat().st_size
        if end <= size:
            return
        q = None
        digest = None
        if self.keep:
            q = self._qname(f"{path.name}.cut-{size}-{end}")
            prior = self._find(action="cut", original=str(path), range=[size, end])
            if prior and q.exists() and q.stat().st_size == end - size:
                digest = prior["sha256"]
            else:
                digest = _copy_range(path, q, size, end)
                _step()
        if not self._find(action="cut", original=str(path), range=[size, end]):
            self.entries.append({"action": "cut", "original": str(path),
                                 "quarantine": None if q is None else str(q),
                                 "range": [size, end], "sha256": digest, "reason": reason})
            self.save()
        fd = os.open(path, os.O_RDWR)
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        finally:
            os.close(fd)
        _step()

    def remove(self, path, reason: str = "") -> None:
        """Move ``path`` into the quarantine (or delete it without one)."""
        path = _abs(path)
        if not path.exists():
            return
        digest = sha256_file(path)
        prior = self._find(action="remove", original=str(path), sha256=digest)
        q = None
        if self.keep:
            q = Path(prior["quarantine"]) if prior and prior.get("quarantine") \
                else self._unique(path.name)
        if prior is None:
            self.entries.append({"action": "remove", "original": str(path),
                                 "quarantine": None if q is None else str(q),
                                 "sha256": digest, "size": path.stat().st_size,
                                 "reason": reason})
            self.save()
        if q is None:
            path.unlink()
        else:
            try:
                os.rename(path, q)
            except OSError:
                _copy_range(path, q, 0, path.stat().st_size)
                path.unlink()
            fsync_dir(q.parent)
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
        """Quarantine the current bytes of ``path`` (if any), then replace it durably."""
        path = _abs(path)
        new_digest = hashlib.sha256(data).hexdigest()
        old = path.read_bytes() if path.exists() else None
        if old == data:
            return
        old_digest = None if old is None else hashlib.sha256(old).hexdigest()
        prior = self._find(action="rewrite", original=str(path), sha256=old_digest,
                           new_sha256=new_digest)
        if prior is None:
            q = None
            if old is not None and self.keep:
                q = self._unique(path.name + ".old")
                write_durably(q, old)
                _step()
            self.entries.append({"action": "rewrite", "original": str(path),
                                 "quarantine": None if q is None else str(q),
                                 "existed": old is not None, "sha256": old_digest,
                                 "new_sha256": new_digest, "reason": reason})
            self.save()
        write_durably(path, data)
        _step()

    def checkpoint(self, path, partition: str, old: int | None, new: int,
                   old_bytes: bytes | None) -> None:
        """Record one partition's entry change in a log-dir checkpoint (the caller writes
        the file once for all partitions)."""
        path = _abs(path)
        q = None
        digest = None
        if old_bytes is not None:
            digest = hashlib.sha256(old_bytes).hexdigest()
            if self.keep:
                prior = self._find(action="checkpoint", original=str(path), sha256=digest)
                if prior and prior.get("quarantine"):
                    q = Path(prior["quarantine"])
                else:
                    q = self._unique(Path(path).name + ".old")
                    write_durably(q, old_bytes)
                    _step()
        if not self._find(action="checkpoint", original=str(path), partition=partition,
                          new=new):
            self.entries.append({"action": "checkpoint", "original": str(path),
                                 "partition": partition, "old": old, "new": new,
                                 "existed": old_bytes is not None,
                                 "quarantine": None if q is None else str(q),
                                 "sha256": digest})
            self.save()


def find_in_progress(root: Path, partition_dir: Path) -> Session | None:
    """The newest in-progress session under ``root`` for ``partition_dir``."""
    if not root.is_dir():
        return None
    for child in sorted(root.iterdir(), reverse=True):
        m = child / MANIFEST
        if not child.is_dir() or child.name.startswith(STARTING_PREFIX):
            continue
        try:
            manifest = json.loads(m.read_text())
        except (OSError, ValueError):
            continue
        if manifest.get("state") == "in-progress" and \
                manifest.get("partition_dir") == str(partition_dir.resolve()):
            (child / "files").mkdir(exist_ok=True)
            manifest["entries"] = [_absolute_entry(e, _abs(child), manifest)
                                   for e in manifest.get("entries", [])]
            return Session(child, partition_dir, manifest.get("keep", True), manifest)
    return None


def _absolute_entry(e: dict, sdir: Path, manifest: dict) -> dict:
    """``e`` with absolute paths. Manifests written before paths were stored absolute
    hold them relative to the directory recovery ran in, which is unknown; but every
    file recovery touches is in the partition directory (a ``checkpoint`` entry: in its
    log directory) and every quarantined copy in the session's ``files/``, so the file
    name places it. The partition directory is the session's grandparent in the default
    location (``<partition dir>/.kafkalog-quarantine/<stamp>``), else the manifest's
    ``partition_dir``."""
    if all(e.get(k) is None or os.path.isabs(e[k])
           for k in ("original", "quarantine", "renamed_to")):
        return e
    if sdir.parent.name == ".kafkalog-quarantine":
        pdir = sdir.parent.parent
    else:
        pdir = Path(manifest.get("partition_dir") or sdir)
    home = pdir.parent if e.get("action") == "checkpoint" else pdir
    out = dict(e)
    for k in ("original", "renamed_to"):
        if out.get(k) and not os.path.isabs(out[k]):
            out[k] = str(home / Path(out[k]).name)
    if out.get("quarantine") and not os.path.isabs(out["quarantine"]):
        out["quarantine"] = str(sdir / "files" / Path(out["quarantine"]).name)
    return out


# -- undo ----------------------------------------------------------------------------------

@dataclass
class UndoResult:
    """What ``recover --undo`` did: files restored, entries already in place, and
    entries it could not apply (the file changed since, or no bytes were kept)."""

    session: str
    restored: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.conflicts

    def to_dict(self) -> dict:
        return {"quarantine": self.session, "ok": self.ok, "restored": self.restored,
                "already": self.already, "conflicts": self.conflicts}


def _restore_copy(q: Path, original: Path) -> None:
    tmp = original.with_name(original.name + ".kafkalog-undo.tmp")
    if tmp.exists():
        tmp.unlink()
    try:
        os.link(q, tmp)
    except OSError:
        shutil.copyfile(q, tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
    os.replace(tmp, original)
    fsync_dir(original.parent)


def undo(session_dir) -> UndoResult:
    """Put back everything a session quarantined, newest change first. Safe to rerun.

    Raises:
        InvalidArgumentError: ``session_dir`` holds no manifest.
    """
    sdir = Path(session_dir)
    try:
        manifest = json.loads((sdir / MANIFEST).read_text())
    except FileNotFoundError:
        raise InvalidArgumentError(f"{sdir} is not a kafkalog quarantine session "
                                   f"(no {MANIFEST})") from None
    except (OSError, ValueError) as e:
        raise UnreadableError(str(e), file=sdir / MANIFEST) from e
    res = UndoResult(str(sdir))
    sdir = _abs(sdir)
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
            write_durably(sdir / MANIFEST,
                          json.dumps(manifest, indent=1, sort_keys=True).encode())
    if res.ok:
        manifest["state"] = "undone"
        write_durably(sdir / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode())
    return res


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
        if not original.exists():
            cur = None
        else:
            cur = sha256_file(original)
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
        _restore_copy(q, original)
        res.restored.append(str(original))
        return
    if q is None or not q.exists():
        if act == "remove" and original.exists():
            res.already.append(str(original))
        else:
            res.conflicts.append(f"{original}: no quarantined copy")
        return
    if act == "remove":
        if original.exists():
            res.already.append(str(original))
        else:
            _restore_copy(q, original)
            res.restored.append(str(original))
        return
    if act == "cut":
        start, end = e["range"]
        size = original.stat().st_size if original.exists() else -1
        if size == end:
            res.already.append(str(original))
            return
        if not start <= size < end:
            res.conflicts.append(f"{original}: size {size} is neither {start} nor {end}")
            return
        with open(q, "rb") as src, open(original, "rb+") as dst:
            if size > start:
                dst.seek(start)
                if dst.read(size - start) != src.read(size - start):
                    res.conflicts.append(f"{original}: bytes after {start} changed")
                    return
            src.seek(size - start)
            dst.seek(size)
            while True:
                chunk = src.read(_CHUNK)
                if not chunk:
                    break
                dst.write(chunk)
            dst.flush()
            os.fsync(dst.fileno())
        res.restored.append(str(original))
        return
    res.conflicts.append(f"{original}: unknown action {act!r}")


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
    old_bytes = q.read_bytes() if q is not None and q.exists() else None
    if old_bytes is not None:
        try:
            old_entries = {parse_partition_dir_name(f"{t}-{p}"): int(o)
                           for t, p, o in _parse(path, old_bytes.decode().splitlines(), 3)}
        except (KafkalogError, ValueError):
            old_entries = None
        if old_entries == cur:
            write_durably(path, old_bytes)
            res.restored.append(f"{path} ({e['partition']})")
            return
    if not cur and not e.get("existed"):
        path.unlink()
        fsync_dir(path.parent)
    else:
        write_durably(path, format_offset_checkpoint(cur).encode())
    res.restored.append(f"{path} ({e['partition']})")
