"""Checkpoint files, after ``CheckpointFile`` / ``OffsetCheckpointFile`` /
``LeaderEpochCheckpointFile``.

    CheckpointFile (text) =>
      Version => line "0"
      Count => line, the number of entries
      Entries => Count lines
        offset checkpoints:  "<topic> <partition> <offset>"
        leader-epoch-checkpoint: "<epoch> <startOffset>"

Written as ``<name>.tmp``, fsynced, then atomically renamed over ``<name>``.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import CorruptCheckpointError, UnreadableError
from .files import TopicPartition

VERSION = 0


def _read_lines(path) -> list[str] | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=path) from e


def _parse(path, lines: list[str], width: int) -> list[list[str]]:
    if not lines:
        return []  # Kafka treats an empty file as no entries
    try:
        version = int(lines[0].strip())
        count = int(lines[1].strip())
    except (ValueError, IndexError):
        raise CorruptCheckpointError("malformed checkpoint header", file=path) from None
    if version != VERSION:
        raise CorruptCheckpointError(f"unrecognised checkpoint version {version}", file=path)
    entries = [ln.split() for ln in lines[2:] if ln.strip()]
    if len(entries) != count:
        raise CorruptCheckpointError(
            f"expected {count} entries but found {len(entries)}", file=path)
    for e in entries:
        if len(e) != width:
            raise CorruptCheckpointError(f"malformed line {' '.join(e)!r}", file=path)
    return entries


def read_offset_checkpoint(path) -> dict[TopicPartition, int] | None:
    """Read a log-directory offset checkpoint (recovery point, log start offset, ...).

    Returns None when the file does not exist.

    Raises:
        CorruptCheckpointError: the text is not version/count/entries.
    """
    lines = _read_lines(path)
    if lines is None:
        return None
    out = {}
    for topic, partition, offset in _parse(path, lines, 3):
        try:
            out[TopicPartition(topic, int(partition))] = int(offset)
        except ValueError:
            raise CorruptCheckpointError(f"malformed line '{topic} {partition} {offset}'",
                                         file=path) from None
    return out


def read_leader_epoch_checkpoint(path) -> list[tuple[int, int]] | None:
    """Read ``leader-epoch-checkpoint`` as ``[(epoch, start offset)]``, None if absent."""
    lines = _read_lines(path)
    if lines is None:
        return None
    try:
        return [(int(a), int(b)) for a, b in _parse(path, lines, 2)]
    except ValueError:
        raise CorruptCheckpointError("malformed entry", file=path) from None


def format_offset_checkpoint(entries: dict[TopicPartition, int]) -> str:
    lines = [str(VERSION), str(len(entries))]
    lines += [f"{tp.topic} {tp.partition} {off}" for tp, off in entries.items()]
    return "\n".join(lines) + "\n"


def format_leader_epoch_checkpoint(entries: list[tuple[int, int]]) -> str:
    lines = [str(VERSION), str(len(entries))] + [f"{e} {o}" for e, o in entries]
    return "\n".join(lines) + "\n"


def write_atomically(path, data: bytes | str, *, fsync: bool = True) -> None:
    """Write ``path`` as ``path.tmp``, fsync, rename over ``path``, fsync the directory."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(data, str):
        data = data.encode("utf-8")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if fsync:
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
