"""The one exception hierarchy of kafkalog, for every layer.

Kafka splits its failures into three families and so do we:

* bad bytes on disk -> :class:`CorruptRecordError` / :class:`CorruptIndexError`
  (Kafka's ``CorruptRecordException`` / ``CorruptIndexException``); each carries the
  file and the byte position so the CLI can print one line that names both;
* a bad argument -> :class:`InvalidArgumentError` (``IllegalArgumentException``);
* a lifecycle misuse -> :class:`IllegalStateError` (``IllegalStateException``).

Every class derives from :class:`KafkalogError`. Errors carry no exit status: the CLI
maps their classes to one in a single place (:mod:`kafkalog_cli.cli.exit_codes`):
:class:`RefusedError`, :class:`IllegalStateError` and damaged Kafka data
(:class:`CorruptRecordError`, :class:`CorruptIndexError`, :class:`CorruptSnapshotError`,
:class:`CorruptCheckpointError`) exit 1, :class:`InvalidArgumentError` exits 2, every other
error (unreadable or not-Kafka input) exits 3.
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
        # a path, a str, or a remote path (storage.location.RemotePath: its URI)
        self.file = (None if file is None else os.fspath(file)
                     if isinstance(file, str | os.PathLike) else str(file))
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


class RecordOverheadError(CorruptRecordError):
    """A batch size field below the smallest record overhead (14 bytes, a v0 message's):
    where Kafka's ``FileLogInputStream.nextBatch`` throws ``CorruptRecordException``
    (DumpLogSegments dies with it, exit 1) rather than ending the batches there as it
    does for a partial batch. A reader of kafkalog stops there and reports the rest as
    invalid bytes."""


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


# -- bad arguments and paths -------------------------------------------------------------

class InvalidArgumentError(KafkalogError):
    """A bad argument or configuration value (Kafka's IllegalArgumentException /
    ConfigException). Exits 2 from the CLI."""


class InvalidConfigError(InvalidArgumentError):
    """A config value outside what Kafka accepts; ``key`` names the config."""

    def __init__(self, key: str, value, reason: str):
        # ConfigException(name, value, message): the value as it came, unquoted
        super().__init__(f"Invalid value {value} for configuration {key}: {reason}")
        self.key = key
        self.value = value


class ExecutorEnvironmentError(InvalidArgumentError):
    """A Spark executor that cannot run kafkalog's tasks: a package kafkalog needs is not
    importable in the executors' Python, or their pyspark is not the driver's. Raised at
    task start, naming the executor's host and the package. Exits 2 (a setup problem)."""


class UnknownTopicConfigError(InvalidConfigError):
    """A name that is not a topic config (``LogConfig.validateNames``)."""

    def __init__(self, name: str):
        InvalidArgumentError.__init__(self, f"Unknown topic config name: {name}")
        self.key = name
        self.value = None


class GroupConfigError(InvalidConfigError):
    """A group config set ``GroupConfig.validate`` refuses, with Kafka's message (its
    InvalidConfigurationException: an unknown name, a value outside the broker's
    bounds)."""

    def __init__(self, name: str, value, message: str):
        InvalidArgumentError.__init__(self, message)
        self.key = name
        self.value = value


class NotAKafkaFileError(KafkalogError):
    """A path that is not a Kafka log, index or partition directory."""


class UnreadableError(KafkalogError):
    """A path that cannot be opened or read (missing, permissions, I/O error)."""


class NotRegularFileError(UnreadableError):
    """A path where kafkalog reads a regular file (a segment, an index, a checkpoint, a
    snapshot, ``meta.properties``, ``.lock``...) that is something else: a FIFO, a
    character or block device (a symbolic link to ``/dev/zero`` included), a socket or a
    directory. Nothing is read from it, and opening it never waits for a FIFO's writer.
    Exits 3 (unreadable input); ``serve`` takes the partition offline.

    Attributes:
        kind: what the path is, as the message says it (``"a FIFO"``, ``"a character
            device"``, ``"a socket"``, ``"a directory"``, ...).
    """

    def __init__(self, kind: str, *, file=None, through_link: bool = False):
        link = " (through a symbolic link)" if through_link else ""
        super().__init__(f"is {kind}{link}, not a regular file", file=file)
        self.kind = kind


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


class ApiError(KafkalogError):
    """One part of a request refused with a protocol error code (Kafka's ApiException
    subclasses, as the admin handlers answer them): ``error`` is a
    :class:`kafkalog_cli.protocol.errors.Errors` member, ``message`` the response's
    errorMessage (None for Kafka's default text)."""

    def __init__(self, error, message: str | None = None):
        super().__init__(message if message is not None else getattr(error, "name", str(error)))
        self.error = error
        self.message = message


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


class LogCleaningAbortedError(IllegalStateError):
    """A log clean stopped before its end (Kafka's LogCleaningAbortedException): the
    server is stopping; its ``.cleaned`` files are removed, the log is as before."""


class LogDirLockedError(RefusedError):
    """The log directory's ``.lock`` is held by a broker or another kafkalog."""

    def __init__(self, log_dir):
        super().__init__(
            f"Failed to acquire lock on file .lock in {os.fspath(log_dir)}. A Kafka instance in "
            "another process or thread is using this directory.", file=log_dir)


class UncleanShutdownError(RefusedError):
    """``serve --no-recover`` on a log directory without ``.kafka_cleanshutdown``: a broker
    would run its log recovery (LogLoader) first; serve refuses instead of guessing."""

    def __init__(self, log_dir):
        super().__init__(
            f"{os.fspath(log_dir)} was not shut down cleanly (no .kafka_cleanshutdown): "
            "recovery is needed; run `kafkalog recover --truncate` or serve without "
            "--no-recover", file=log_dir)


class CoordinatorLoadError(KafkalogError):
    """A partition of ``__consumer_offsets`` or ``__transaction_state`` whose records do
    not load at serve's start (offline, or a record that does not parse): serve refuses to
    start rather than guess which groups, offsets or transactions it held."""


# -- bad bytes, found by a reader ---------------------------------------------------

class DataLossError(CorruptRecordError):
    """Data that a read wants is gone or corrupt while ``failOnDataLoss`` is true."""

    def __str__(self) -> str:
        return ("kafkalog: data loss: " + super().__str__()
                + " (failOnDataLoss=false, or --skip-corrupt, skips corrupt batches)")


class MetadataObjectError(KafkalogError, ValueError):
    """The exception the constructor of a remote log metadata object throws; ``message``
    is its ``getMessage()`` (``"null"`` for a bare ``Objects.requireNonNull``)."""


# -- bad arguments ------------------------------------------------------------------

class UnknownConfigError(InvalidConfigError):
    """A key that is not a topic config (Kafka's InvalidConfigurationException);
    ``hint`` says what replaced a key Kafka removed."""

    def __init__(self, key: str, hint: str | None = None):
        InvalidArgumentError.__init__(
            self, f"Unknown topic config name: {key}" + (f" ({hint})" if hint else ""))
        self.key = key
        self.value = None


class OffsetOutOfRangeError(InvalidArgumentError):
    """An offset below the log start offset or above the log end offset (the broker's
    OFFSET_OUT_OF_RANGE)."""

    def __init__(self, offset: int, start: int, end: int, *, file=None):
        super().__init__(f"offset {offset} is out of range: the log holds offsets {start} "
                         f"(log start offset) to {end} (log end offset)", file=file)
        self.offset = offset
        self.log_start_offset = start
        self.log_end_offset = end


class MissingDependencyError(InvalidArgumentError):
    """An optional dependency (pyspark, pyarrow) is not installed. Exits 2."""


# -- refused appends and input ------------------------------------------------------

class InputError(InvalidArgumentError, RefusedError):
    """Malformed input; ``line`` is the 1-based line number (None for a raw file). A
    refusal (exit 1 from the CLI): the records before it were read."""

    def __init__(self, message: str, *, source: str, line: int | None = None):
        where = f"{source}:{line}: " if line is not None else f"{source}: "
        super().__init__(where + message)
        self.source = source
        self.line = line


class ProducerStateError(RefusedError):
    """An append the producer state rejects."""


class OutOfOrderSequenceError(ProducerStateError):
    """OutOfOrderSequenceException."""


class InvalidProducerEpochError(ProducerStateError):
    """InvalidProducerEpochException (an epoch below the last one seen)."""


class InvalidTxnStateError(ProducerStateError):
    """InvalidTxnStateException (a non-transactional write inside a transaction)."""


class RecordTooLargeError(InvalidRecordError, RefusedError):
    """A batch larger than max.message.bytes (RecordTooLargeException): not appended."""


class RecordBatchTooLargeError(InvalidRecordError, RefusedError):
    """An append larger than segment.bytes (RecordBatchTooLargeException): not appended."""


class InvalidTimestampError(InvalidRecordError, RefusedError):
    """A timestamp the topic does not accept (Errors.INVALID_TIMESTAMP): not appended."""


class RejectedRecordError(InvalidRecordError, RefusedError):
    """Records an append refuses (LogValidator.processRecordErrors' InvalidRecordException,
    e.g. a compacted topic's record without a key): not appended."""


# -- a run that stopped, a Spark job that failed ------------------------------------

class ProduceError(KafkalogError):
    """A run that stopped early; ``result`` says what was written, ``cause`` why."""

    def __init__(self, cause: KafkalogError, result):
        super().__init__(str(cause))
        self.cause = cause
        self.result = result


class SparkJobError(KafkalogError):
    """A Spark job's failure, reduced to one line (the CLI prints it): a kafkalog error
    raised in a task about the input (unreadable data, exit 3)."""


class SparkJobDataLossError(SparkJobError, CorruptRecordError):
    """A task's error about damaged data (a corrupt batch with ``failOnDataLoss``): exit 1,
    as the local engine's."""


class SparkJobUsageError(SparkJobError, InvalidArgumentError):
    """A task's kafkalog error about an option or a missing dependency (exit 2)."""


class SparkJobFailedError(SparkJobError, RefusedError):
    """A Spark job that failed for a reason of Spark's own (exit 1)."""


# -- serve: the wire and the broker's answers ---------------------------------------

class InvalidRequest(KafkalogError):
    """A frame the broker answers by closing the connection."""


class RequestTooManyElements(InvalidRequest):
    """A request whose arrays (and tagged fields) hold more elements than ``bound``:
    refused before they are read (docs/serve.md, "Limits")."""

    def __init__(self, message: str, bound: int):
        super().__init__(message)
        self.bound = bound


class IncompleteFrame(KafkalogError, EOFError):
    """The stream ended inside a frame: ``received`` of ``expected`` bytes."""

    def __init__(self, received: int, expected: int):
        super().__init__(f"connection closed inside a frame ({received} of {expected} bytes)")
        self.received = received
        self.expected = expected


class CloseConnection(KafkalogError):
    """Close the client's connection instead of answering (acks=0 produce errors)."""

    def __init__(self, message: str = "the connection is closed instead of answered"):
        super().__init__(message)


class AppendError(KafkalogError):
    """An append the broker refuses, as ``serve`` answers it.

    Attributes:
        error: the Kafka error code to answer (``protocol.errors.Errors``).
        record_errors: ``[(batchIndex, message)]`` (``RecordValidationException``).
        error_message: the ProduceResponse's ``errorMessage`` (None unless the broker sets
            one: only for record validation errors).
        failed_record: the broker's ``processFailedRecord`` path: the response carries
            the log start offset and ``FailedProduceRequestsPerSec`` counts it (not for
            unknown partitions, corrupt or too-large batches, nor storage errors).
    """

    #: the errors ``processFailedRecord`` does not see (by name: ``Errors`` is protocol's)
    NOT_FAILED_RECORDS = ("UNKNOWN_TOPIC_OR_PARTITION", "CORRUPT_MESSAGE",
                          "MESSAGE_TOO_LARGE", "RECORD_LIST_TOO_LARGE", "KAFKA_STORAGE_ERROR")

    def __init__(self, error, message: str, *, record_errors=(),
                 error_message: str | None = None):
        super().__init__(message)
        self.error = error
        self.record_errors = list(record_errors)
        self.error_message = error_message
        self.failed_record = getattr(error, "name", None) not in self.NOT_FAILED_RECORDS


# -- serve: security ----------------------------------------------------------------

class AuthenticationError(KafkalogError):
    """A failed authentication (Kafka's ``AuthenticationException`` family): answered with
    ``error`` (a ``protocol.errors.Errors`` member, SASL_AUTHENTICATION_FAILED unless
    given) and this message after ``connection.failed.authentication.delay.ms``, then the
    connection is closed. The message is what the client sees: it names no secret and,
    for bad credentials, not whether the user exists."""

    #: the response frame to send after the delay (None: close without one), set by the
    #: authenticator that knows the request
    response: bytes | None = None

    def __init__(self, message: str, error=None):
        super().__init__(message)
        self.error = error


class SaslError(KafkalogError):
    """A SASL exchange that failed in a way whose details are not for the client (Kafka's
    ``SaslException``): the client gets the generic "Authentication failed during
    authentication due to invalid credentials with SASL mechanism <m>"; ``message`` is for
    the debug log only."""


class SecurityConfigError(InvalidArgumentError):
    """A security config (listeners, TLS, SASL, JAAS, authorizer) serve cannot run with:
    one line naming the key (``key``), never a secret value."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key


# -- Schema Registry ------------------------------------------------------------------

class SchemaRegistryError(KafkalogError):
    """A Schema Registry (its REST API) that cannot be reached or answers with an error,
    or a ``_schemas`` state that cannot serve a request (exits 3)."""


class SchemaDecodeError(KafkalogError, ValueError):
    """A key or value that cannot be decoded through Schema Registry: not in its wire
    format, a schema id not found, a schema that does not parse, a ``_schemas`` record
    that does not read. Its message is the text of a ``decodeWarnings`` entry; a reader
    keeps the bytes and goes on."""
