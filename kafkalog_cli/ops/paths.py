"""Resolve command-line paths to segments: a segment file, a partition directory (all its
segments in offset order), or a log directory (every partition directory in it)."""

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
    is_live_partition_dir_name,
    is_segment_file_name,
    offset_from_file_name,
    parse_partition_dir_name,
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


def partition_dirs(log_dir: Path, live_only: bool = False) -> list[Path]:
    """Partition directories of a log directory, sorted by topic then partition.
    ``live_only`` leaves out ``-delete`` / ``-future`` / ``-stray`` directories
    (:func:`~kafkalog_cli.storage.files.is_live_partition_dir_name`), as a consumer never
    reads them."""
    try:
        children = list(log_dir.iterdir())
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=log_dir) from e
    parts = []
    for c in children:
        tp = parse_partition_dir_name(c.name)
        if tp is not None and c.is_dir() and (
                not live_only or is_live_partition_dir_name(c.name)):
            parts.append((tp.topic, tp.partition, c))
    return [c for _, _, c in sorted(parts)]


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
        NotAKafkaFileError: a path is neither a segment file nor a partition or log
            directory, or a directory holds no segments.
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
        if parse_partition_dir_name(p.name) is not None or segment_bases(p):
            bases = segment_bases(p)
            if not bases and not partition_dirs(p):
                raise NotAKafkaFileError("no Kafka segments in this directory", file=p)
            for b in bases:
                yield LogSegment(p, b), None
            if bases:
                continue
        parts = partition_dirs(p)
        if not parts:
            raise NotAKafkaFileError(
                "not a partition directory or log directory (no segments, no "
                "<topic>-<partition> directories)", file=p)
        for d in parts:
            for b in segment_bases(d):
                yield LogSegment(d, b), None
