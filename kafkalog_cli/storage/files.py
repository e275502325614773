"""File names of a log directory, after ``LogFileUtils`` and ``LocalLog``.

Segment files are named by their base offset, zero-padded to 20 digits:
``00000000000000000042.log`` / ``.index`` / ``.timeindex`` / ``.txnindex``; producer
snapshots ``<offset>.snapshot``. Partition directories are ``<topic>-<partition>``, or
``<topic>-<partition>.<32 hex>-delete|-future|-stray`` while being deleted or moved.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..constants import (
    CHECKPOINT_FILE_SUFFIX,
    FILENAME_DIGITS,
    INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    META_PROPERTIES_FILE_NAME,
    TIME_INDEX_FILE_SUFFIX,
    TXN_INDEX_FILE_SUFFIX,
)
from ..errors import InvalidArgumentError, NotAKafkaFileError

_OFFSET_NAME = re.compile(r"^(\d{" + str(FILENAME_DIGITS) + r"})(\.[a-z]+)(\.(?:deleted|cleaned|swap))?$")
_PARTITION_DIR = re.compile(
    r"^(?P<topic>.+)-(?P<partition>\d+)(?:\.(?P<uid>[0-9a-f]{32})-(?P<kind>delete|future|stray))?$")
_TOPIC_LEGAL = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_NAME_LENGTH = 249


def filename_prefix_from_offset(offset: int) -> str:
    """LogFileUtils.filenamePrefixFromOffset: the 20-digit zero-padded offset."""
    return f"{offset:0{FILENAME_DIGITS}d}"


def log_file(directory, offset: int) -> Path:
    return Path(directory) / (filename_prefix_from_offset(offset) + LOG_FILE_SUFFIX)


def index_file(directory, offset: int) -> Path:
    return Path(directory) / (filename_prefix_from_offset(offset) + INDEX_FILE_SUFFIX)


def time_index_file(directory, offset: int) -> Path:
    return Path(directory) / (filename_prefix_from_offset(offset) + TIME_INDEX_FILE_SUFFIX)


def txn_index_file(directory, offset: int) -> Path:
    return Path(directory) / (filename_prefix_from_offset(offset) + TXN_INDEX_FILE_SUFFIX)


def offset_from_file_name(path) -> int:
    """The base offset a segment file's name encodes (LogFileUtils.offsetFromFileName).

    Raises:
        NotAKafkaFileError: the name is not a 20-digit offset and a suffix.
    """
    name = os.path.basename(os.fspath(path))
    m = _OFFSET_NAME.match(name)
    if not m:
        raise NotAKafkaFileError(
            "file name is not a 20-digit zero-padded base offset followed by a Kafka suffix "
            "(e.g. 00000000000000000000.log)", file=path)
    return int(m.group(1))


def is_segment_file_name(name: str) -> bool:
    return _OFFSET_NAME.match(name) is not None


def validate_topic_name(topic: str) -> None:
    """Topic.validate: 1-249 characters of [a-zA-Z0-9._-], not '.' or '..'.

    Raises:
        InvalidArgumentError: the name is illegal.
    """
    if not topic:
        raise InvalidArgumentError("Topic name is illegal, it can't be empty")
    if topic in (".", ".."):
        raise InvalidArgumentError("Topic name cannot be \".\" or \"..\"")
    if len(topic) > MAX_TOPIC_NAME_LENGTH:
        raise InvalidArgumentError(
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} characters, "
            f"topic name: {topic}")
    if not _TOPIC_LEGAL.match(topic):
        raise InvalidArgumentError(
            f"Topic name \"{topic}\" is illegal, it contains a character other than ASCII "
            "alphanumerics, '.', '_' and '-'")


@dataclass(frozen=True)
class TopicPartition:
    """A topic and partition, as a partition directory's name gives them."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


def parse_partition_dir_name(name: str) -> TopicPartition | None:
    """LocalLog.parseTopicPartitionName, or None when ``name`` is not a partition dir."""
    m = _PARTITION_DIR.match(name)
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


def is_live_partition_dir_name(name: str) -> bool:
    """A ``<topic>-<partition>`` name without the suffix of a directory a broker is
    deleting (``LocalLog.DeleteDirSuffix``, ``-delete``), copying to another log dir
    (``FutureDirSuffix``, ``-future``: the replica is not live until it is renamed) or
    has set aside (``StrayDirSuffix``, ``-stray``). No consumer reads those."""
    m = _PARTITION_DIR.match(name)
    return m is not None and m.group("kind") is None


def is_partition_dir(path) -> bool:
    """A directory named ``<topic>-<partition>`` holding at least one segment file (or
    nothing else Kafka-like: an empty partition dir counts too when its name parses)."""
    p = Path(path)
    return p.is_dir() and parse_partition_dir_name(p.name) is not None


def is_log_dir(path) -> bool:
    """A directory with meta.properties or a checkpoint file or partition directories."""
    p = Path(path)
    if not p.is_dir():
        return False
    if (p / META_PROPERTIES_FILE_NAME).exists():
        return True
    for child in p.iterdir():
        if child.is_dir() and parse_partition_dir_name(child.name) is not None:
            return True
    return False


def is_snapshot_checkpoint_name(name: str) -> bool:
    """KRaft metadata snapshots: ``<20-digit offset>-<10-digit epoch>.checkpoint``."""
    return re.match(r"^\d{20}-\d{10}" + re.escape(CHECKPOINT_FILE_SUFFIX) + "$", name) is not None
