"""Resolve command-line paths to segments: a segment file, a partition directory (all its
segments in offset order), a log directory (every partition directory in it), or a
directory holding log directories (searched recursively): the rule of
:func:`~kafkalog_cli.storage.files.find_partition_dirs`, the same for every command."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ..constants import (
    INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
)
from ..errors import NotAKafkaFileError, UnreadableError
from ..storage.files import (
    find_partition_dirs,
    is_segment_file_name,
    offset_from_file_name,
    partition_dirs_of,
)
from ..storage.segment import LogSegment

SEGMENT_SUFFIXES = (LOG_FILE_SUFFIX, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX)


def check_exists(path) -> Path:
    """Raise :class:`UnreadableError` naming ``path`` when it is missing or unreadable."""
    p = Path(path)
    try:
        os.stat(p)
    except FileNotFoundError:
        raise UnreadableError("No such file or directory", file=p) from None
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=p) from e
    if not os.access(p, os.R_OK):
        raise UnreadableError("Permission denied", file=p)
    return p


#: the partition directories of a log directory (see storage.files.partition_dirs_of)
partition_dirs = partition_dirs_of


def segment_bases(directory: Path, suffixes=SEGMENT_SUFFIXES) -> list[int]:
    try:
        names = os.listdir(directory)
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=directory) from e
    bases = set()
    for n in names:
        if is_segment_file_name(n) and os.path.splitext(n)[1] in suffixes:
            bases.add(int(n[:20]))
    return sorted(bases)


def resolve_segments(paths) -> Iterator[tuple[LogSegment, str | None]]:
    """Yield ``(segment, only)`` for every segment under ``paths``; ``only`` is the suffix
    when a single file of the segment was named (``.log``, ``.index``, ``.timeindex``),
    else None.

    Raises:
        UnreadableError: a path is missing or unreadable.
        NotAKafkaFileError: a path is neither a segment file nor a directory holding
            partition or log directories.
    """
    for raw in paths:
        p = check_exists(raw)
        if p.is_file():
            suffix = p.suffix
            if suffix not in SEGMENT_SUFFIXES:
                raise NotAKafkaFileError(
                    "not a Kafka segment file (expected .log, .index or .timeindex)", file=p)
            base = offset_from_file_name(p)
            yield LogSegment(p.parent, base), suffix
            continue
        for _, d in find_partition_dirs(p):
            for b in segment_bases(d):
                yield LogSegment(d, b), None


def log_bytes(paths) -> int:
    """Bytes of the ``.log`` files under ``paths`` (a file counts itself), for progress
    totals; paths that cannot be read count 0 (the command itself reports them)."""
    total = 0
    for raw in paths:
        p = Path(raw)
        try:
            if p.is_file():
                total += p.stat().st_size
                continue
            for _, d in find_partition_dirs(p):
                for n in os.listdir(d):
                    if n.endswith(LOG_FILE_SUFFIX) and is_segment_file_name(n):
                        total += (d / n).stat().st_size
        except (OSError, NotAKafkaFileError):
            continue
    return total
