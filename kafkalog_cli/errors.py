"""The one exception hierarchy of kafkalog, for every layer.

Kafka splits its failures into three families and so do we:

* bad bytes on disk -> :class:`CorruptRecordError` / :class:`CorruptIndexError`
  (Kafka's ``CorruptRecordException`` / ``CorruptIndexException``); each carries the
  file and the byte position so the CLI can print one line that names both;
* a bad argument -> :class:`InvalidArgumentError` (``IllegalArgumentException``);
* a lifecycle misuse -> :class:`IllegalStateError` (``IllegalStateException``).

Every class derives from :class:`KafkalogError`. Errors carry no exit status: the CLI
maps their classes to one in a single place (:mod:`kafkalog_cli.cli.exit_codes`):
:class:`RefusedError` (and :class:`IllegalStateError`) exit 1, :class:`InvalidArgumentError`
exits 2, every other error (unreadable or corrupt input) exits 3.
"""

from __future__ import annotations

import os


class KafkalogError(Exception):
    """Root of every error kafkalog raises on purpose.

    Attributes:
        file: the path the error is about, or None.
        position: the byte position inside ``file``, or None.
    """

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


class DecompressedSizeError(CorruptRecordError):
    """A batch whose records decompress to more bytes than the bound in force: kafkalog's
    bound on the work one batch can cause (``--max-decompressed-bytes`` offline, the
    topic's max.message.bytes for appends); Kafka has none. ``limit`` is the bound, in
    bytes."""

    def __init__(self, message: str, *, limit: int, file=None, position=None):
        super().__init__(message, file=file, position=position)
        self.limit = limit


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


# -- refused operations ------------------------------------------------------------------

class RefusedError(KafkalogError):
    """An operation refused by a rule the broker applies, or stopped by a record it cannot
    take: a batch the broker would reject, a fenced producer or coordinator, a held
    ``.lock``, a malformed input record. What was done before it stands (and is reported);
    the input is neither unusable nor was the command misused, so the CLI reports it as a
    finding (exit 1)."""


class FencedLeaderEpochError(RefusedError):
    """A leader epoch below the partition's latest (Kafka's FencedLeaderEpochException,
    ``Errors.FENCED_LEADER_EPOCH``): a leader never writes an epoch lower than the latest
    in its LeaderEpochFileCache."""


class TransactionCoordinatorFencedError(RefusedError):
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
    """An operation used at the wrong point of an object's lifecycle (exit 1 from the
    CLI: the run stopped; what was done before it stands)."""


class LogDirLockedError(RefusedError):
    """The log directory's ``.lock`` is held by a broker or another kafkalog."""

    def __init__(self, log_dir):
        super().__init__(
            f"Failed to acquire lock on file .lock in {os.fspath(log_dir)}. A Kafka instance in "
            "another process or thread is using this directory.", file=log_dir)
