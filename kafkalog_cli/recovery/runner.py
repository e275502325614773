"""``recover``: plan every partition under the given paths, and with ``truncate`` apply
the plans under the log directory's lock, journalled in quarantine sessions.

Crash safety: every plan is a pure function of the directory (plus the journalled
intents of an interrupted session), its actions are ordered so that each intermediate
state re-plans to the rest of the work, each action is idempotent and quarantines before
it touches, and the log dir's checkpoints are written last. A run killed at any point is
completed by the next run, which resumes the same session.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..constants import (
    CLEAN_SHUTDOWN_FILE_NAME,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
)
from ..errors import KafkalogError, LogDirLockedError, NotAKafkaFileError, UnreadableError
from ..storage.checkpoints import format_offset_checkpoint, read_offset_checkpoint
from ..storage.files import (
    LOG_DIR,
    classify_dir,
    find_partition_dirs,
    parse_partition_dir_name,
    partition_log_bytes,
)
from ..storage.lock import LogDirLock, is_locked
from .model import DELETE, RENAME, TRUNCATE, WRITE, Action, PartitionReport, RecoveryResult
from .planner import check_partition_dir, link_notes, plan_partition, refuse_link_changes
from .quarantine import (
    LOG_DIR_TEMP_FILES,
    QUARANTINE_DIR_NAME,
    Session,
    _step,
    find_in_progress,
    fsync_dir,
    write_durably,
)


def resolve_partition_dirs(paths) -> list[Path]:
    """Partition directories named by ``paths`` (partition directories, log directories or
    directories holding log directories, as
    :func:`~kafkalog_cli.storage.files.find_partition_dirs` finds them), in order.

    Raises:
        UnreadableError: a path is missing.
        NotAKafkaFileError: a path is neither.
    """
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise UnreadableError("No such file or directory", file=p)
        if not p.is_dir():
            raise NotAKafkaFileError("recover takes partition or log directories", file=p)
        if parse_partition_dir_name(p.name) is not None and classify_dir(p) != LOG_DIR:
            out.append(p)  # a partition directory, even one holding no segment yet
            continue
        # the rule of every command; a partition being deleted is the broker's to remove
        out.extend(d for _, d in find_partition_dirs(p)
                   if d == p or not d.name.endswith("-delete"))
    seen, uniq = set(), []
    for p in out:
        k = p.resolve()
        if k not in seen:
            seen.add(k)
            uniq.append(p)
    return uniq


def _read_ckpt(path: Path, notes: list[str]) -> dict | None:
    """The entries of a log-dir checkpoint ({} when absent); None when it does not parse
    (a note says so: the broker's ``LogManager.loadLogs`` then treats it as empty)."""
    try:
        return read_offset_checkpoint(path) or {}
    except KafkalogError as e:
        notes.append(f"{e}: treated as empty, as the broker does, and rewritten")
        return None


def recover(paths, *, truncate: bool = False, all_segments: bool = False,
            salvage: bool = False,
            quarantine=None, keep: bool = True,
            index_interval_bytes: int = 4096, progress=None,
            held: LogDirLock | None = None) -> RecoveryResult:
    """Recover the partitions under ``paths`` (see ``kafkalog recover``).

    Every partition is planned first (under the log directories' locks with
    ``truncate``); nothing changes until every plan has passed its checks.

    Args:
        paths: partition directories and/or log directories.
        truncate: apply the plan (else a dry run that changes nothing).
        all_segments: recover every segment, not only those from the recovery point.
        salvage: keep every valid batch after a corrupt region, at its offsets, instead
            of truncating at the first one (``--salvage``; kafkalog's extension).
        quarantine: a directory for quarantine sessions (default: in each partition dir).
        keep: keep what is cut/removed/rewritten (``--no-quarantine`` is ``False``).
        index_interval_bytes: ``index.interval.bytes``.
        progress: ``progress(done_bytes, total_bytes)`` after each partition planned
            (bytes of its ``.log`` files), or None.
        held: the lock of a log directory the caller holds already (serve's start-up
            recovery keeps the lock it serves under): that directory is neither checked
            nor locked again, and its lock stays held.

    Raises:
        LogDirLockedError: a broker (or another kafkalog) holds a log dir's ``.lock``
            (through fcntl or flock).
        UnreadableError / NotAKafkaFileError: bad paths, or a directory (or a link to
            one, or a dangling link) where a segment file (or ``leader-epoch-checkpoint``)
            should be (before any change).
        UnsafePathError: (``truncate``) the plan would change a symbolic link, or the
            quarantine directory is one (before any change).
    """
    from ..storage.location import require_local

    paths = [require_local(p, "recover") for p in paths]
    result = RecoveryResult(dry_run=not truncate)
    groups: dict[Path, list[Path]] = {}
    for pdir in resolve_partition_dirs(paths):
        # e.g. a directory named like a segment's .index: refused before any change
        check_partition_dir(pdir)
        groups.setdefault(pdir.resolve().parent, []).append(pdir)
    advance = None
    if progress is not None:
        total = sum(partition_log_bytes(p) for ps in groups.values() for p in ps)
        done = 0

        def advance(pdir: Path) -> None:
            nonlocal done
            done += partition_log_bytes(pdir)
            progress(done, total)

    locks: list[LogDirLock] = []
    planned: list[tuple[Path, list[tuple[PartitionReport, Session | None]]]] = []
    try:
        mine = held.log_dir.resolve() if held is not None else None
        for log_dir in groups:
            if log_dir == mine:
                continue
            if is_locked(log_dir):
                raise LogDirLockedError(log_dir)
            if truncate:
                locks.append(LogDirLock(log_dir).acquire())
        for log_dir, pdirs in groups.items():
            planned.append((log_dir, _plan_log_dir(
                log_dir, pdirs, all_segments=all_segments, salvage=salvage,
                quarantine=quarantine,
                index_interval_bytes=index_interval_bytes, advance=advance)))
        if truncate:
            for _, plans in planned:
                for rep, _ in plans:
                    refuse_link_changes(rep)
            for log_dir, plans in planned:
                _apply_log_dir(log_dir, plans, quarantine=quarantine, keep=keep)
        else:
            for _, plans in planned:
                for rep, _ in plans:
                    link_notes(rep)
        for _, plans in planned:
            result.partitions.extend(rep for rep, _ in plans)
    finally:
        for _, plans in planned:
            for _, session in plans:
                if session is not None:
                    session.close()
        for lock in reversed(locks):
            lock.release()
    return result


def _first_offset(rep: PartitionReport) -> int:
    """The base offset of the partition's first segment after recovery (the log start
    offset a broker falls back to), the log end offset without segments."""
    kept = [s.base_offset for s in rep.segments if not s.removed]
    return kept[0] if kept else (rep.log_end_offset or 0)


def _plan_log_dir(log_dir: Path, pdirs: list[Path], *, all_segments: bool, quarantine,
                  salvage: bool = False,
                  index_interval_bytes: int, advance=None
                  ) -> list[tuple[PartitionReport, Session | None]]:
    notes: list[str] = []
    rp_map = _read_ckpt(log_dir / RECOVERY_POINT_CHECKPOINT, notes)
    ls_map = _read_ckpt(log_dir / LOG_START_OFFSET_CHECKPOINT, notes)
    clean = (log_dir / CLEAN_SHUTDOWN_FILE_NAME).exists()
    reports: list[tuple[PartitionReport, Session | None]] = []
    for pdir in pdirs:
        tp = parse_partition_dir_name(pdir.name)
        root = Session.root_for(pdir, quarantine)
        session = find_in_progress(root, pdir)
        forced = session.forced_bases if session is not None else set()
        rep = plan_partition(
            pdir, recovery_point=(rp_map or {}).get(tp) if tp else None,
            log_start_offset=(ls_map or {}).get(tp) if tp else None, clean_shutdown=clean,
            all_segments=all_segments, index_interval_bytes=index_interval_bytes,
            salvage=salvage,
            forced_bases=forced)
        if advance is not None:
            advance(pdir)
        rep.notes[:0] = notes
        if session is not None:
            rep.notes.append(f"resuming the interrupted run journalled in {session.path}")
        if tp is None:
            rep.checkpoint_updates.clear()
        elif ls_map is None:
            # LogManager.loadLogs resets an unreadable log-start-offset-checkpoint to the
            # base offset of the first segment: written as such, the file parses again
            rep.checkpoint_updates.setdefault(LOG_START_OFFSET_CHECKPOINT, _first_offset(rep))
        reports.append((rep, session))
    if reports:
        # temp files of the log directory's own files, left by an interrupted tmp +
        # rename write: journalled in the first partition's session
        rep = reports[0][0]
        for name in sorted(LOG_DIR_TEMP_FILES):
            path = log_dir / name
            if path.is_file() and not path.is_symlink():
                rep.actions.append(Action(DELETE, str(path), "temp file of an interrupted "
                                          "write (tmp + rename never finished)"))
    return reports


def _apply_log_dir(log_dir: Path, reports: list[tuple[PartitionReport, Session | None]], *,
                   quarantine, keep: bool) -> None:
    for i, (rep, session) in enumerate(reports):
        if rep.work_needed or session is not None:
            if session is None:
                session = Session.open(rep.directory, quarantine, keep=keep)
                reports[i] = (rep, session)
            _apply(rep, session)
            rep.quarantine = str(session.path)
    for name in (RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT):
        updates = [(r, s) for r, s in reports if name in r.checkpoint_updates]
        if not updates:
            continue
        path = log_dir / name
        cur = _read_ckpt(path, []) or {}
        for r, s in updates:
            tp = parse_partition_dir_name(Path(r.directory).name)
            new = r.checkpoint_updates[name]
            s.checkpoint(path, str(tp), cur.get(tp), new)
            cur[tp] = new
        write_durably(path, format_offset_checkpoint(cur).encode())
        _step()
    for r, s in reports:
        if s is not None:
            s.complete()
            r.applied = True


def _apply(rep: PartitionReport, session: Session) -> None:
    """Carry out ``rep.actions`` in order, each through the quarantine session."""
    session.set_intents(rep.rebuild_bases)
    for a in rep.actions:
        if a.kind == DELETE:
            session.remove(a.path, a.reason)
        elif a.kind == RENAME:
            session.rename(a.path, a.target, a.reason)
        elif a.kind == TRUNCATE:
            session.cut(a.path, a.size, a.reason)
        elif a.kind == WRITE:
            session.write(a.path, a.data, a.reason)
    # the recovery point says "flushed below": flush what was recovered
    for s in rep.segments:
        if s.scanned and not s.removed and os.path.exists(s.log):
            fd = os.open(s.log, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    fsync_dir(rep.directory)


__all__ = ["recover", "resolve_partition_dirs", "QUARANTINE_DIR_NAME"]
