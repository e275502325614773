"""The one exception hierarchy of kafkalog, for every layer.

Kafka splits its failures into three families and so do we:

* bad bytes on disk -> :class:`CorruptRecordError` / :class:`CorruptIndexError`
  (Kafka's ``CorruptRecordException`` / ``CorruptIndexException``); each carries the
  file and the byte position so the CLI can print one line that names both;
* a bad argument -> :class:`InvalidArgumentError` (``IllegalArgumentException``);
* a lifecycle misuse -> :class:`IllegalStateError` (``IllegalStateException``).

Every class derives from :class:`KafkalogError`. The CLI maps them to exit codes:
usage errors exit 2, unreadable input exits 3 (see :mod:`kafkalog_cli.render.exit_codes`).
"""

from __future__ import annotations

import os


class KafkalogError(Exception):
    """Root of every error kafkalog raises on purpose.

    Attributes:
        file: the path the error is about, or None.
        position: the byte position inside ``file``, or None.
    """

    exit_code = 3

    def __init__(self, message: str, *, file: str | os.PathLike | None = None,
                 position: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = os.fspath(file) if file is not None else None
        self.position = position

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file
            if self.position is not None:
                where += f" at byte {self.position}"
            where += ": "
        return where + self.message


# -- bad bytes ---------------------------------------------------------------------------

class CorruptRecordError(KafkalogError):
    """Bytes that are not a valid record batch or record (Kafka's CorruptRecordException)."""


class CrcMismatchError(CorruptRecordError):
    """A batch whose stored CRC differs from the computed one (``ensureValid``)."""

    def __init__(self, stored: int, computed: int, *, file=None, position=None):
        super().__init__(f"Record is corrupt (stored crc = {stored}, computed crc = {computed})",
                         file=file, position=position)
        self.stored = stored
        self.computed = computed


class InvalidRecordError(CorruptRecordError):
    """A record that violates the format's rules (Kafka's InvalidRecordException)."""


class UnsupportedCompressionError(CorruptRecordError):
    """A batch whose attributes name a codec Kafka does not define (id 5-7)."""


class CorruptIndexError(KafkalogError):
    """An index file that fails its sanity check (Kafka's CorruptIndexException)."""


class CorruptSnapshotError(KafkalogError):
    """A producer-state snapshot that fails to parse or whose CRC differs."""


class CorruptCheckpointError(KafkalogError):
    """A small text file of a log or partition directory that does not parse as the broker
    reads it: a checkpoint file (version/count/entries, ``CheckpointFile``),
    ``partition.metadata`` (``PartitionMetadataReadBuffer``), ``meta.properties`` or
    ``quorum-state``. The broker throws ``IOException`` / ``KafkaStorageException`` for it.

    Attributes:
        line: the 1-based line at fault (None when the file as a whole is: not UTF-8,
            too few entries).
    """

    def __init__(self, message: str, *, file=None, line: int | None = None,
                 position: int | None = None):
        super().__init__(message, file=file, position=position)
        self.line = line

    def __str__(self) -> str:
        if self.line is None or self.file is None:
            return super().__str__()
        return f"{self.file} line {self.line}: {self.message}"


class OffsetOverflowError(KafkalogError):
    """An offset that cannot be stored relative to the segment's base offset
    (Kafka's LogSegmentOffsetOverflowException)."""

    def __init__(self, base_offset: int, offset: int, *, file=None):
        super().__init__(f"offset {offset} cannot be stored relative to base offset {base_offset}",
                         file=file)
        self.base_offset = base_offset
        self.offset = offset


class OffsetOutOfRangeError(KafkalogError):
    """An offset outside the log's ``[log start offset, log end offset]`` for the operation
    (Kafka's OffsetOutOfRangeException, ``Errors.OFFSET_OUT_OF_RANGE``)."""

    def __init__(self, message: str, *, offset: int, file=None):
        super().__init__(message, file=file)
        self.offset = offset


# -- bad arguments and paths -------------------------------------------------------------

class InvalidArgumentError(KafkalogError):
    """A bad argument or configuration value (Kafka's IllegalArgumentException /
    ConfigException). Exits 2 from the CLI."""

    exit_code = 2


class InvalidConfigError(InvalidArgumentError):
    """A config value outside what Kafka accepts; ``key`` names the config."""

    def __init__(self, key: str, value, reason: str):
        super().__init__(f"Invalid value {value!r} for configuration {key}: {reason}")
        self.key = key
        self.value = value


class NotAKafkaFileError(KafkalogError):
    """A path that is not a Kafka log, index or partition directory."""


class UnreadableError(KafkalogError):
    """A path that cannot be opened or read (missing, permissions, I/O error)."""


class UnsafePathError(KafkalogError):
    """A write kafkalog refuses because it would leave the log directory: a symbolic link
    where a file or directory is to be written (or created, truncated, renamed over), a
    path in a quarantine manifest outside the partition directory it belongs to. Nothing
    is written."""


# -- refused appends ---------------------------------------------------------------------

class TransactionCoordinatorFencedError(KafkalogError):
    """A COMMIT/ABORT marker from a transaction coordinator older than the one whose marker
    the producer last had (Kafka's TransactionCoordinatorFencedException,
    ``Errors.TRANSACTION_COORDINATOR_FENCED``): a zombie coordinator's, refused before it
    is written.

    Attributes:
        producer_id: the marker's producer id.
        coordinator_epoch: the marker's coordinator epoch (the zombie's).
        current_coordinator_epoch: the producer's last known coordinator epoch.
        offset: the offset the marker would have taken.
    """

    exit_code = 1  # refused: nothing was appended (not unreadable input)

    def __init__(self, producer_id: int, coordinator_epoch: int,
                 current_coordinator_epoch: int, *, offset: int, file=None):
        super().__init__(
            f"Invalid coordinator epoch for producerId {producer_id} at offset {offset}: "
            f"{coordinator_epoch} (zombie), {current_coordinator_epoch} (current)", file=file)
        self.producer_id = producer_id
        self.coordinator_epoch = coordinator_epoch
        self.current_coordinator_epoch = current_coordinator_epoch
        self.offset = offset


# -- lifecycle ---------------------------------------------------------------------------

class IllegalStateError(KafkalogError):
    """An operation used at the wrong point of an object's lifecycle."""

    exit_code = 1


class LogDirLockedError(KafkalogError):
    """The log directory's ``.lock`` is held by a broker or another kafkalog."""

    exit_code = 1

    def __init__(self, log_dir):
        super().__init__(
            f"Failed to acquire lock on file .lock in {os.fspath(log_dir)}. A Kafka instance in "
            "another process or thread is using this directory.", file=log_dir)
