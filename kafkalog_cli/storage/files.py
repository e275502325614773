"""File names of a log directory, after ``LogFileUtils`` and ``LocalLog``.

Segment files are named by their base offset, zero-padded to 20 digits:
``00000000000000000042.log`` / ``.index`` / ``.timeindex`` / ``.txnindex``; producer
snapshots ``<offset>.snapshot``. Partition directories are ``<topic>-<partition>``, or
``<topic>-<partition>.<32 hex>-delete|-future|-stray`` while being deleted or moved.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ..constants import (
    CHECKPOINT_FILE_SUFFIX,
    FILENAME_DIGITS,
    INDEX_FILE_SUFFIX,
    INT32_MAX,
    INT64_MAX,
    LEADER_EPOCH_CHECKPOINT,
    LOG_FILE_SUFFIX,
    META_PROPERTIES_FILE_NAME,
    PARTITION_METADATA_FILE,
    TIME_INDEX_FILE_SUFFIX,
    TXN_INDEX_FILE_SUFFIX,
)
from ..errors import InvalidArgumentError, KafkalogError, NotAKafkaFileError, UnreadableError
from .fileio import not_regular
from .location import RemotePath, as_path, listdir, walk

# Names are matched as Kafka writes them: ASCII digits only (``\d`` would take any Unicode
# digit, "\uff10" too, and then the file opened by its offset would be another one), and
# to the very end (``$`` would also match before a trailing newline)
_OFFSET_NAME = re.compile(r"([0-9]{" + str(FILENAME_DIGITS) + r"})(\.[a-z]+)(\.(?:deleted|cleaned|swap))?\Z")
# LocalLog's DELETE/FUTURE/STRAY_DIR_PATTERN take any non-blank unique id
# (``^(\S+)-(\S+)\.(\S+)-future``); the name up to its last "." is the topic-partition,
# so an id holding a "." leaves no int partition (refused, as parseTopicPartitionName does)
_PARTITION_DIR = re.compile(
    r"(?P<topic>.+)-(?P<partition>[0-9]+)(?:\.(?P<uid>[^\s.]+)-(?P<kind>delete|future|stray))?\Z")
_ASCII_DIGITS = re.compile(r"[0-9]+\Z")
_TOPIC_LEGAL = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_NAME_LENGTH = 249


def filename_prefix_from_offset(offset: int) -> str:
    """LogFileUtils.filenamePrefixFromOffset: the 20-digit zero-padded offset."""
    return f"{offset:0{FILENAME_DIGITS}d}"


def log_file(directory, offset: int) -> Path:
    """LogFileUtils.logFile."""
    return as_path(directory) / (filename_prefix_from_offset(offset) + LOG_FILE_SUFFIX)


def index_file(directory, offset: int) -> Path:
    """LogFileUtils.offsetIndexFile."""
    return as_path(directory) / (filename_prefix_from_offset(offset) + INDEX_FILE_SUFFIX)


def time_index_file(directory, offset: int) -> Path:
    """LogFileUtils.timeIndexFile."""
    return as_path(directory) / (filename_prefix_from_offset(offset) + TIME_INDEX_FILE_SUFFIX)


def txn_index_file(directory, offset: int) -> Path:
    """LogFileUtils.transactionIndexFile."""
    return as_path(directory) / (filename_prefix_from_offset(offset) + TXN_INDEX_FILE_SUFFIX)


def offset_from_file_name(path) -> int:
    """The base offset a segment file's name encodes (LogFileUtils.offsetFromFileName).

    Raises:
        NotAKafkaFileError: the name is not a 20-digit offset and a suffix.
    """
    name = path.name if isinstance(path, RemotePath) else os.path.basename(os.fspath(path))
    m = _OFFSET_NAME.match(name)
    if not m or int(m.group(1)) > INT64_MAX:  # Long.parseLong throws
        raise NotAKafkaFileError(
            "file name is not a 20-digit zero-padded base offset followed by a Kafka suffix "
            "(e.g. 00000000000000000000.log)", file=path)
    return int(m.group(1))


def is_segment_file_name(name: str) -> bool:
    """A name :func:`offset_from_file_name` takes: 20 ASCII digits (an offset within
    int64), a suffix, maybe ``.deleted``/``.cleaned``/``.swap``."""
    m = _OFFSET_NAME.match(name)
    return m is not None and int(m.group(1)) <= INT64_MAX


def offset_prefix(name: str, suffix: str) -> int | None:
    """The offset of a file named ``<20 ASCII digits><suffix>`` as the broker names it
    (``LogFileUtils.filenamePrefixFromOffset`` + suffix: segment files, producer
    snapshots), else None."""
    if len(name) != FILENAME_DIGITS + len(suffix) or not name.endswith(suffix):
        return None
    head = name[:FILENAME_DIGITS]
    if not _ASCII_DIGITS.match(head) or int(head) > INT64_MAX:
        return None
    return int(head)


def leading_offset(name: str) -> int | None:
    """``LogFileUtils.offsetFromFileName``: the number before the first ``.`` of a name
    (any length of ASCII digits, as leftovers such as ``.swap`` and ``.deleted`` files
    keep their segment's prefix), else None."""
    i = name.find(".")
    head = name[:i] if i > 0 else ""
    if not head or not _ASCII_DIGITS.match(head) or len(head) > 20 or int(head) > INT64_MAX:
        return None
    return int(head)


def validate_topic_name(topic: str) -> None:
    """Topic.validate: 1-249 characters of [a-zA-Z0-9._-], not '.' or '..', with Kafka
    4.4's messages (``Topic name is invalid: ...``, as the pinned broker words them).

    Raises:
        InvalidArgumentError: the name is illegal.
    """
    if not topic:
        raise InvalidArgumentError("Topic name is invalid: the empty string is not allowed")
    if topic in (".", ".."):
        raise InvalidArgumentError(f"Topic name is invalid: '{topic}' is not allowed")
    if len(topic) > MAX_TOPIC_NAME_LENGTH:
        raise InvalidArgumentError(
            f"Topic name is invalid: the length of '{topic}' is longer than the max allowed "
            f"length {MAX_TOPIC_NAME_LENGTH}")
    if not _TOPIC_LEGAL.match(topic):
        raise InvalidArgumentError(
            f"Topic name is invalid: '{topic}' contains one or more characters other than "
            "ASCII alphanumerics, '.', '_' and '-'")


@dataclass(frozen=True)
class TopicPartition:
    """A topic and partition, as a partition directory's name gives them."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


def _partition_match(name: str):
    m = _PARTITION_DIR.match(name)
    # Integer.parseInt: a partition number beyond int32 is not one (the broker throws)
    if not m or len(m.group("partition")) > 10 or int(m.group("partition")) > INT32_MAX:
        return None
    return m


def parse_partition_dir_name(name: str) -> TopicPartition | None:
    """LocalLog.parseTopicPartitionName, or None when ``name`` is not a partition dir
    (no ``-<partition>``, or a partition number that is not an int32)."""
    m = _partition_match(name)
    if not m:
        return None
    return TopicPartition(m.group("topic"), int(m.group("partition")))


def log_delete_dir_name(tp: TopicPartition) -> str:
    """LocalLog.logDeleteDirName: ``<topic>-<partition>.<32 hex>-delete`` for a fresh
    random id, the topic cut short so the name stays within 255 characters (the file-name
    limit; a 249-character topic would not fit otherwise), as
    ``logDirNameWithSuffixCappedLength`` does."""
    import uuid

    suffix = f"-{tp.partition}.{uuid.uuid4().hex}-delete"
    return tp.topic[:min(len(tp.topic), 255 - len(suffix))] + suffix


def partition_dir_kind(name: str) -> str | None:
    """``"delete"``, ``"future"`` or ``"stray"`` for a partition directory being deleted,
    copied to this log dir or set aside (``<topic>-<partition>.<id>-<kind>``, LocalLog's
    DeleteDirSuffix / FutureDirSuffix / StrayDirSuffix); None for a live one or a name
    that is no partition directory."""
    m = _partition_match(name)
    return None if m is None else m.group("kind")


def is_live_partition_dir_name(name: str) -> bool:
    """A ``<topic>-<partition>`` name without the suffix of a directory a broker is
    deleting (``LocalLog.DeleteDirSuffix``, ``-delete``), copying to another log dir
    (``FutureDirSuffix``, ``-future``: the replica is not live until it is renamed) or
    has set aside (``StrayDirSuffix``, ``-stray``). No consumer reads those."""
    m = _partition_match(name)
    return m is not None and m.group("kind") is None


# -- finding partitions under a path: the one rule of every command -----------------------

#: The files of a segment a command may name by itself.
SEGMENT_SUFFIXES = (LOG_FILE_SUFFIX, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX)


def check_exists(path) -> Path:
    """``path`` as a Path (a :class:`~kafkalog_cli.storage.location.RemotePath` for a URI
    of object storage or HDFS, :func:`~kafkalog_cli.storage.location.as_path`), once it
    exists and is readable.

    Raises:
        UnreadableError: naming ``path`` when it is missing or unreadable.
        NotRegularFileError: it is neither a directory nor a regular file (a FIFO, a
            device, a socket).
        InvalidArgumentError: a URI of a scheme kafkalog cannot read.
    """
    p = as_path(path)
    if isinstance(p, RemotePath):
        if not p.exists():
            raise UnreadableError("No such file or directory", file=p)
        return p
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise UnreadableError("No such file or directory", file=p) from None
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=p) from e
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise not_regular(p, st.st_mode)   # a FIFO, a device, a socket
    if not os.access(p, os.R_OK):
        raise UnreadableError("Permission denied", file=p)
    return p


def segment_bases(directory, suffixes=SEGMENT_SUFFIXES) -> list[int]:
    """Base offsets of the segments of a partition directory that have a file with one of
    ``suffixes``, ascending.

    Raises:
        UnreadableError: the directory cannot be listed.
    """
    try:
        names = listdir(as_path(directory))
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=directory) from e
    bases = set()
    for n in names:
        if is_segment_file_name(n) and os.path.splitext(n)[1] in suffixes:
            bases.add(int(n[:FILENAME_DIGITS]))
    return sorted(bases)


def log_bytes(paths) -> int:
    """Bytes of the ``.log`` files under ``paths`` (a file counts itself), for progress
    totals; paths that cannot be read count 0 (the command itself reports them)."""
    total = 0
    for raw in paths:
        try:
            p = as_path(raw)
            if p.is_file():
                total += p.stat().st_size
                continue
            for _, d in find_partition_dirs(p):
                total += partition_log_bytes(d)
        except (OSError, KafkalogError):
            continue
    return total

PARTITION, LOG_DIR, OTHER = "partition", "logDir", "other"


def _has_segments(names) -> bool:
    return any(is_segment_file_name(n) for n in names)


def classify_dir(path) -> str:
    """:data:`PARTITION`, :data:`LOG_DIR` or :data:`OTHER` for a directory, by its
    contents: a directory holding segment files is a partition directory (whatever its
    name: log directories like ``kafka-logs-2`` parse as partition names); one holding
    ``meta.properties``, or ``<topic>-<partition>`` directories with segments (or empty),
    is a log directory; a ``<topic>-<partition>`` directory holding only a
    ``leader-epoch-checkpoint`` or ``partition.metadata`` is an empty partition."""
    p = as_path(path)
    try:
        names = listdir(p)
    except OSError:
        return OTHER
    if _has_segments(names):
        return PARTITION
    if META_PROPERTIES_FILE_NAME in names:
        return LOG_DIR
    for n in names:
        if parse_partition_dir_name(n) is not None and (p / n).is_dir():
            try:
                inner = listdir(p / n)
            except OSError:
                continue
            if _has_segments(inner) or not inner:
                return LOG_DIR
    if parse_partition_dir_name(p.name) is not None and any(
            n in (LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA_FILE) for n in names):
        return PARTITION
    return OTHER


def find_log_dirs(root) -> list[Path]:
    """Log directories under ``root`` (``root`` itself when it is one), searched
    recursively (not below a log or partition directory; symlinked directories are not
    followed), sorted."""
    out = []
    for dirpath, dirnames, _ in walk(root):
        kind = classify_dir(dirpath)
        if kind == LOG_DIR:
            out.append(dirpath)
            dirnames[:] = []
        elif kind == PARTITION:
            dirnames[:] = []
        else:
            dirnames.sort()
    return sorted(out)


def partition_dirs_of(log_dir, live_only: bool = False) -> list[Path]:
    """Partition directories of a log directory, sorted by topic, partition, then name.
    ``live_only`` leaves out ``-delete`` / ``-future`` / ``-stray`` directories
    (:func:`is_live_partition_dir_name`), as a consumer never reads them.

    Raises:
        UnreadableError: the directory cannot be listed.
    """
    log_dir = as_path(log_dir)
    try:
        children = list(log_dir.iterdir())
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=log_dir) from e
    parts = []
    for c in children:
        tp = parse_partition_dir_name(c.name)
        if tp is not None and c.is_dir() and (
                not live_only or is_live_partition_dir_name(c.name)):
            parts.append((tp.topic, tp.partition, c.name, c))
    return [c for *_, c in sorted(parts)]


def partition_log_bytes(partition_dir) -> int:
    """Bytes of the ``.log`` segment files of a partition directory (0 when unreadable)."""
    total = 0
    if isinstance(partition_dir, RemotePath):
        try:
            return sum(c.stat().st_size for c in partition_dir.iterdir()
                       if c.name.endswith(LOG_FILE_SUFFIX) and is_segment_file_name(c.name))
        except OSError:
            return total
    try:
        with os.scandir(partition_dir) as it:
            for e in it:
                if e.name.endswith(LOG_FILE_SUFFIX) and is_segment_file_name(e.name):
                    total += e.stat().st_size
    except OSError:
        return total
    return total


def find_partition_dirs(path, *, live_only: bool = False) -> list[tuple[Path, Path]]:
    """``(log directory, partition directory)`` for every partition under the directory
    ``path``, the rule every command follows: ``path`` itself when it is a partition
    directory (:func:`classify_dir`; its log directory is the parent); the partition
    directories of a log directory; else those of every log directory found below it
    (:func:`find_log_dirs`). ``live_only`` applies to partitions found by listing, not to
    a partition directory named explicitly.

    Raises:
        UnreadableError: a directory cannot be listed.
        NotAKafkaFileError: ``path`` holds no partition or log directory.
    """
    p = as_path(path)
    kind = classify_dir(p)
    if kind == PARTITION:
        return [(p.parent, p)]
    log_dirs = [p] if kind == LOG_DIR else find_log_dirs(p)
    out = [(ld, d) for ld in log_dirs for d in partition_dirs_of(ld, live_only)]
    if not log_dirs:
        raise NotAKafkaFileError(
            "not a partition directory or log directory, and none below it (no segments, "
            "no meta.properties, no <topic>-<partition> directories)", file=p)
    return out


def is_snapshot_checkpoint_name(name: str) -> bool:
    """KRaft metadata snapshots: ``<20-digit offset>-<10-digit epoch>.checkpoint``."""
    return re.match(r"[0-9]{20}-[0-9]{10}" + re.escape(CHECKPOINT_FILE_SUFFIX) + r"\Z",
                    name) is not None
