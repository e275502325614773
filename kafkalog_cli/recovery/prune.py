"""Quarantine sessions that hold nothing to give back.

A crash of ``kafkalog serve`` leaves every partition it had open with preallocated
(zero-filled) index tails, and its start-up recovery then rebuilds the indexes, writes a
producer snapshot and moves the recovery point: a session per partition holding old
indexes, zeros, files it created and checkpoint offsets - nothing of the log. After a few
dozen restarts that was ~100 sessions. :func:`prune_if_empty` removes such a session once
its recovery has completed; one that kept a byte of data is kept (a cut ``.log`` tail, a
removed segment, a rewritten ``partition.metadata``: any file recovery does not rebuild
from the log, unless all its bytes are zeros), or a rename, as every in-progress one is.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..errors import KafkalogError
from ..storage.fileio import nonzero_length, open_dir_nofollow
from .quarantine import QUARANTINE_DIR_NAME, _open_read, _read_manifest

_CHUNK = 1 << 20


#: what recovery rebuilds from the ``.log`` (LogSegment.recover, the producer state and
#: leader epoch caches): an old copy of one is not data
_DERIVED_SUFFIXES = (".index", ".timeindex", ".txnindex", ".snapshot")
_DERIVED_NAMES = ("leader-epoch-checkpoint",)
_LEFTOVER_SUFFIXES = (".deleted", ".cleaned", ".swap", ".tmp")


def _derived(original: str) -> bool:
    name = os.path.basename(original)
    for suffix in _LEFTOVER_SUFFIXES:
        if name.endswith(suffix):
            name = name[:-len(suffix)]
    return name.endswith(_DERIVED_SUFFIXES) or name in _DERIVED_NAMES


def holds_data(session_dir) -> bool:
    """Whether the completed session ``session_dir`` holds something ``--undo`` would
    give back besides what recovery rebuilds from the log (indexes, ``.txnindex``,
    producer snapshots, ``leader-epoch-checkpoint``), checkpoint offsets, files it created
    and zero bytes: a rename, or a quarantined copy of any other file (a cut ``.log``
    tail, a removed segment, a rewritten ``partition.metadata``) with a non-zero byte. An
    in-progress or unreadable session counts as holding data.

    Raises:
        UnsafePathError: the session or its ``files/`` is a symbolic link.
    """
    d = Path(session_dir)
    fd = open_dir_nofollow(d)
    try:
        try:
            manifest = _read_manifest(fd, d)
        except (OSError, KafkalogError):
            return True
        if manifest.get("state") != "complete":
            return True
        for e in manifest.get("entries", []):
            if not isinstance(e, dict) or e.get("action") == "rename":
                return True
            q = e.get("quarantine")
            if e.get("action") == "checkpoint" or q is None or \
                    _derived(str(e.get("original", ""))):
                continue
            if _nonzero(fd, os.path.basename(str(q))):
                return True
        return False
    finally:
        os.close(fd)


def _nonzero(session_fd: int, name: str) -> bool:
    """Whether ``files/<name>`` of the session holds a non-zero byte (a missing or
    unreadable copy counts as holding one: keep the session)."""
    try:
        files = open_dir_nofollow("files", dir_fd=session_fd)
    except OSError:
        return True
    try:
        fd = _open_read(name, dir_fd=files)
    except (OSError, KafkalogError):
        return True
    finally:
        os.close(files)
    try:
        pos = 0
        while True:
            chunk = os.pread(fd, _CHUNK, pos)
            if not chunk:
                return False
            if nonzero_length(chunk):
                return True
            pos += len(chunk)
    finally:
        os.close(fd)


def prune_if_empty(session_dir) -> bool:
    """Remove the completed session ``session_dir`` when it holds nothing
    (:func:`holds_data`), and its ``.kafkalog-quarantine`` when that is then empty.
    Returns whether it was removed."""
    d = Path(session_dir)
    if holds_data(d):
        return False
    shutil.rmtree(d)
    root = d.parent
    if root.name == QUARANTINE_DIR_NAME:
        try:
            root.rmdir()
        except OSError:   # other sessions, or already gone
            pass
    return True


__all__ = ["holds_data", "prune_if_empty"]
