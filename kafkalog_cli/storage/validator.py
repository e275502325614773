"""Validation and offset assignment of a leader append, after ``UnifiedLog.
analyzeAndValidateRecords`` and ``LogValidator.validateMessagesAndAssignOffsets``.

Input: the bytes a producer sends for one partition (a ``MemoryRecords``), magic v2 only
(Kafka 4 brokers accept nothing else from clients). Output: a :class:`ValidationResult`
holding the batch as it goes to disk: baseOffset = the log end offset, lastOffsetDelta
kept, partitionLeaderEpoch stamped, maxTimestamp and the timestamp type set (the topic's:
a client's LogAppendTime attribute is cleared on a CreateTime topic), the CRC-32C recomputed when a covered byte changed; recompressed when ``compression.type``
names another codec (``MemoryRecordsBuilder``, as ``buildRecordsAndAssignOffsets``).

Records are iterated lazily, as the broker's ``streamingIterator`` /
``skipKeyValueIterator`` read them: a compressed batch is decompressed and decoded a
piece at a time (``RecordBatch.iter_records``), never held as a list of its records, and
its decompressed records may not exceed the topic's max.message.bytes (kafkalog's bound
on the work one produced batch can cause: a 22 KB batch can decompress to 256 MiB of
7-byte records; Kafka has none. It answers as Kafka answers a rebuilt batch over the
limit, ``RecordTooLargeException``, on which a Java producer splits the batch and
retries; raise max.message.bytes to accept larger ones). When the batch is rebuilt
(recompression), the new one is encoded from that stream.

Errors, as Kafka raises them (each a :class:`~kafkalog_cli.errors.KafkalogError`):

* :class:`RecordTooLargeError` - a batch over max.message.bytes (RecordTooLargeException),
  or whose records decompress to more than that (see above);
* :class:`RecordBatchTooLargeError` - an append over segment.bytes;
* :class:`~kafkalog_cli.errors.CrcMismatchError` - a corrupt batch ("Record is corrupt");
* :class:`InvalidTimestampError` - a CreateTime timestamp outside
  ``[now - before.max.ms, now + after.max.ms]``, or a client batch claiming LogAppendTime
  on a LogAppendTime topic or with maxTimestamp -1 (on a CreateTime topic such a batch's
  maxTimestamp is every record's timestamp: range-checked, then written as CreateTime);
* :class:`~kafkalog_cli.errors.InvalidRecordError` - more than one batch, a non-zero
  baseOffset, inconsistent count/offsets, a control batch from a client, a producer id
  without a sequence, a null key on a compacted topic, records that do not parse.

The errors Kafka reports per record (``LogValidator.validateRecord`` ->
``RecordValidationException``: timestamps out of range, a client claiming LogAppendTime,
null keys on a compacted topic) carry ``record_errors``: a tuple of ``(index of the record
in the batch, message)`` for every offending record, as the ProduceResponse's
``recordErrors`` lists them. A record's key is checked before its timestamp (a keyless
record on a compacted topic gets only the key error); the exception is an
:class:`InvalidTimestampError` when any record has a timestamp error, else an
``InvalidRecordError`` (``processRecordErrors``). Other errors have no such attribute.

Hot path: the caller that built the batch itself (``ops.produce``) may pass a
:class:`RecordsSummary` (min/max timestamps, offset delta of the max, whether every key
is non-null) so the records need not be decoded again; the decisions are the same.

As ``validateMessagesAndAssignOffsetsCompressed``: a compressed batch (source or target
codec) whose records' offsets are not 0, 1, 2, ... (``record.offset() !=
expectedInnerOffset``) is rebuilt rather than written as it came.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..constants import (
    CODEC_NAMES,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    DELETE_HORIZON_FLAG_MASK,
    MAGIC_V2,
    NO_PRODUCER_ID,
    NO_TIMESTAMP,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from ..crc import load as load_crc32c
from ..errors import (
    CrcMismatchError,
    DecompressedSizeError,
    InvalidRecordError,
    InvalidTimestampError,
    RecordTooLargeError,
    RejectedRecordError,
)
from ..format.builder import build_batch
from ..format.record_batch import HEADER, RecordBatch, increment_sequence, record_runs_summary
from ..schema.legacy import HEADER_SIZE_UP_TO_MAGIC
from ..schema.record_batch import (
    ATTRIBUTES_OFFSET,
    BASE_OFFSET_OFFSET,
    CRC_OFFSET,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAX_TIMESTAMP_OFFSET,
    MIN_BATCH_LENGTH,
    PARTITION_LEADER_EPOCH_OFFSET,
    RECORD_BATCH_OVERHEAD,
)
from .config import LogConfig

_crc = load_crc32c()
_Q = struct.Struct(">q")
_I = struct.Struct(">i")
_H = struct.Struct(">h")
_U = struct.Struct(">I")

CLIENT = "client"
COORDINATOR = "coordinator"


@dataclass(frozen=True)
class RecordsSummary:
    """What a builder knows about the records it encoded (no second decode needed).

    Attributes:
        min_timestamp / max_timestamp: over every record (ms).
        offset_delta_of_max: offset delta of the first record holding the max.
        all_keys_present: no record has a null key.
        offsets_in_order: the records' offset deltas are 0, 1, 2, ... (a builder's
            always are).
    """

    min_timestamp: int
    max_timestamp: int
    offset_delta_of_max: int = 0
    all_keys_present: bool = True
    offsets_in_order: bool = True


@dataclass
class ValidationResult:
    """The validated batch and what the log needs to know about it (LogAppendInfo +
    ValidationResult).

    Attributes:
        batch: the batch bytes as written to disk.
        first_offset / last_offset: absolute offsets assigned.
        records: the record count.
        max_timestamp: the batch's max timestamp after validation (the append time with
            LogAppendTime), ms.
        shallow_offset_of_max_timestamp: last offset of the batch holding the max.
        log_append_time: the append time (ms) with LogAppendTime, else -1.
        size_maybe_changed: the batch was rebuilt (recompressed).
        source_codec / target_codec: compression ids.
        producer_id, producer_epoch, base_sequence: from the batch header.
        is_transactional, is_control: from the attributes.
        partition_leader_epoch: stamped on the batch.
        origin: ``"client"`` or ``"coordinator"`` (AppendOrigin): the producer state
            checks a coordinator's batches' epochs but not their sequences.
    """

    batch: bytes | bytearray
    first_offset: int
    last_offset: int
    records: int
    max_timestamp: int
    shallow_offset_of_max_timestamp: int
    log_append_time: int
    size_maybe_changed: bool
    source_codec: int
    target_codec: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    is_transactional: bool
    is_control: bool
    partition_leader_epoch: int
    origin: str = CLIENT

    @property
    def size(self) -> int:
        return len(self.batch)

    @property
    def last_sequence(self) -> int:
        if self.base_sequence < 0:
            return self.base_sequence
        return increment_sequence(self.base_sequence, self.last_offset - self.first_offset)


def analyze(records, config: LogConfig, *, ignore_record_size: bool = False) -> tuple:
    """UnifiedLog.analyzeAndValidateRecords for a leader append of v2 data.

    Returns:
        the unpacked 61-byte header of the single batch (``format.records.HEADER`` order),
        after trimming a partial tail (trimInvalidBytes).

    Raises:
        InvalidRecordError: no batch, more than one batch, not magic v2.
        RecordTooLargeError: a batch over max.message.bytes.
        CrcMismatchError: a batch whose CRC is wrong.
    """
    mv = memoryview(records)
    n = len(mv)
    if n < RECORD_BATCH_OVERHEAD:
        raise InvalidRecordError("Record batch has no batches at all")
    hdr = HEADER.unpack_from(mv, 0)
    size = hdr[1] + LOG_OVERHEAD
    if hdr[3] != MAGIC_V2:
        raise InvalidRecordError(
            f"Unsupported magic {hdr[3]}: Kafka 4 brokers accept only magic v2 from producers")
    if hdr[1] < MIN_BATCH_LENGTH or size > n:
        raise InvalidRecordError("Record batch has no batches at all")
    if n - size >= HEADER_SIZE_UP_TO_MAGIC:
        # a second whole (or partial with a header) batch follows
        nxt = _I.unpack_from(mv, size + LENGTH_OFFSET)[0]
        if size + LOG_OVERHEAD + nxt <= n:
            raise InvalidRecordError("Compressed outer record has more than one batch")
    if not ignore_record_size and size > config.max_message_bytes:
        raise RecordTooLargeError(
            f"The record batch size in the append is {size} bytes which exceeds the maximum "
            f"configured value of {config.max_message_bytes}.")
    computed = _crc(mv[ATTRIBUTES_OFFSET:size])
    if computed != hdr[4]:
        raise CrcMismatchError(hdr[4], computed)
    return hdr


def validate(records, *, offset: int, now: int, config: LogConfig,
             partition_leader_epoch: int, origin: str = CLIENT,
             summary: RecordsSummary | None = None,
             ignore_record_size: bool = False,
             topic_partition: str | None = None) -> ValidationResult:
    """Validate one v2 append and assign offsets from ``offset`` (the log end offset).

    Args:
        records: the producer's bytes (one batch; baseOffset 0 from a client).
        offset: the first offset to assign.
        now: the clock (ms): LogAppendTime and the timestamp window.
        config: the topic's LogConfig.
        partition_leader_epoch: stamped on the batch.
        origin: ``"client"`` (producer checks apply) or ``"coordinator"`` (markers).
        summary: see :class:`RecordsSummary`; None decodes the records.
        topic_partition: ``"topic-partition"``, named at the end of a keyless record's
            error on a compacted topic (LogValidator.validateKey's message).

    Raises:
        see the module docstring.
    """
    hdr = analyze(records, config, ignore_record_size=ignore_record_size)
    (base_offset, length, _ple, _magic, _crc_stored, attributes, last_delta, base_ts, max_ts,
     pid, pepoch, base_seq, count) = hdr
    size = length + LOG_OVERHEAD
    source_codec = attributes & COMPRESSION_CODEC_MASK
    if source_codec >= len(CODEC_NAMES):
        raise InvalidRecordError(f"unknown compression codec id {source_codec}")
    is_control = bool(attributes & CONTROL_FLAG_MASK)
    is_txn = bool(attributes & TRANSACTIONAL_FLAG_MASK)
    target_codec = source_codec if is_control else config.target_codec(source_codec)

    # -- validateBatch --
    if origin == CLIENT:
        if base_offset != 0:
            raise InvalidRecordError(f"The baseOffset of the record batch in the append should "
                                     f"be 0, but it is {base_offset}")
        count_from_offsets = last_delta + 1
        if count_from_offsets <= 0:
            raise InvalidRecordError(f"Batch has an invalid offset range: [{base_offset}, "
                                     f"{base_offset + last_delta}]")
        if count <= 0:
            raise InvalidRecordError(f"Invalid reported count for record batch: {count}")
        if count_from_offsets != count:
            raise InvalidRecordError(f"Inconsistent batch offset range [{base_offset}, "
                                     f"{base_offset + last_delta}] and count of records {count}")
        if is_control:
            raise InvalidRecordError("Clients are not allowed to write control records")
        if pid != NO_PRODUCER_ID and base_seq < 0:
            raise InvalidRecordError(f"Invalid sequence number {base_seq} in record batch with "
                                     f"producerId {pid}")
    elif count <= 0 or last_delta + 1 != count:
        raise InvalidRecordError(f"Inconsistent batch offset range and count of records {count}")

    log_append = config.log_append_time
    compact = "compact" in str(config.extra.get("cleanup.policy", ""))
    rebuild = target_codec != source_codec
    # a client batch claiming LogAppendTime: each record's timestamp is the batch's
    # maxTimestamp (DefaultRecordBatch), which a builder's summary does not know
    lat_batch = bool(attributes & TIMESTAMP_TYPE_MASK)
    if attributes & DELETE_HORIZON_FLAG_MASK:
        raise InvalidRecordError("a producer batch must not carry a delete horizon")
    limit = DEFAULT_MAX_DECOMPRESSED_BYTES if ignore_record_size else config.max_message_bytes

    def decoded():
        """The records, streamed anew at each call (a piece of the block at a time)."""
        return _records(records, hdr, limit)

    if summary is None or rebuild or lat_batch:
        summary = _summarize(records, hdr, limit)
    if (source_codec or target_codec) and not summary.offsets_in_order:
        rebuild = True  # LogValidator: record.offset() != expectedInnerOffset

    # -- validateRecord: keys, then timestamps --
    before, after = (config.message_timestamp_before_max_ms,
                     config.message_timestamp_after_max_ms)
    bad = lat_batch  # LogValidator.validateTimestamp decides per record
    if not log_append:
        lo, hi = summary.min_timestamp, summary.max_timestamp
        bad = bad or (lo != NO_TIMESTAMP and now - lo > before) or \
            (hi != NO_TIMESTAMP and hi - now > after)
        if not bad and lo == NO_TIMESTAMP and hi != NO_TIMESTAMP:
            bad = True  # a mix: check each record (rare)
    if bad or (compact and not summary.all_keys_present):
        _check_records(decoded(), offset, now, before, after,
                       create_time=not log_append, lat_batch=lat_batch, compact=compact,
                       topic_partition=topic_partition)

    first = offset
    last = offset + last_delta
    append_time = now if log_append else NO_TIMESTAMP
    if rebuild:
        out = build_batch(
            ((r[1], r[2], r[3], r[4]) for r in decoded()), base_offset=first,
            partition_leader_epoch=partition_leader_epoch, compression_type=target_codec, log_append_time=now if log_append else None,
            is_transactional=is_txn, producer_id=pid, producer_epoch=pepoch,
            base_sequence=base_seq, compression_level=config.compression_level(target_codec))
        if not ignore_record_size and len(out) > config.max_message_bytes:
            raise RecordTooLargeError(
                f"Message batch size is {len(out)} bytes in append which exceeds the maximum "
                f"configured size of {config.max_message_bytes}.")
        new_max = now if log_append else summary.max_timestamp
        return ValidationResult(out, first, last, count, new_max, last, append_time, True,
                                source_codec, target_codec, pid, pepoch, base_seq, is_txn,
                                is_control, partition_leader_epoch, origin)

    # -- in place: setLastOffset, setPartitionLeaderEpoch, setMaxTimestamp --
    buf = bytearray(records[:size]) if not isinstance(records, bytearray) or \
        len(records) != size else records
    _Q.pack_into(buf, BASE_OFFSET_OFFSET, first)
    _I.pack_into(buf, PARTITION_LEADER_EPOCH_OFFSET, partition_leader_epoch)
    if log_append:
        new_attrs, new_max = attributes | TIMESTAMP_TYPE_MASK, now
    else:
        # setMaxTimestamp(CreateTime, max): a client's LogAppendTime attribute is cleared
        new_attrs, new_max = attributes & ~TIMESTAMP_TYPE_MASK, summary.max_timestamp
    if new_attrs != attributes or new_max != max_ts:
        _H.pack_into(buf, ATTRIBUTES_OFFSET, new_attrs)
        _Q.pack_into(buf, MAX_TIMESTAMP_OFFSET, new_max)
        _U.pack_into(buf, CRC_OFFSET, _crc(memoryview(buf)[ATTRIBUTES_OFFSET:]))
    return ValidationResult(buf, first, last, count, new_max, last, append_time, False,
                            source_codec, target_codec, pid, pepoch, base_seq, is_txn,
                            is_control, partition_leader_epoch, origin)


def _records(records, hdr, limit: int):
    """The batch's records as the broker iterates them, lazily
    (``RecordBatch.iter_records``): with the LogAppendTime attribute every record's
    timestamp is the batch's maxTimestamp. Records decompressing to more than ``limit``
    bytes raise :class:`RecordTooLargeError`."""
    batch = RecordBatch((memoryview(records), 0) + tuple(hdr))
    try:
        yield from batch.iter_records(limit)
    except DecompressedSizeError as e:
        raise _too_large(e) from e


def _too_large(e: DecompressedSizeError) -> RecordTooLargeError:
    return RecordTooLargeError(
        f"The records of the batch decompress to more than {e.limit} bytes, the maximum "
        f"configured value of max.message.bytes (kafkalog's bound on decompressed "
        f"records; a producer splits the batch and retries)")


def _summarize(records, hdr, limit: int) -> RecordsSummary:
    """The batch's :class:`RecordsSummary`, folded over runs of records
    (:func:`~kafkalog_cli.format.record_batch.record_runs_summary`: no Record, and in the
    compiled core no Python step, per record); the errors of iterating its records."""
    batch = RecordBatch((memoryview(records), 0) + tuple(hdr))
    lo = hi = NO_TIMESTAMP
    at = 0
    keys = True
    in_order = True
    seen = 0
    try:
        for k, run_lo, run_hi, run_at, run_keys, run_in_order in record_runs_summary(batch,
                                                                                      limit):
            if seen == 0 or run_lo < lo:
                lo = run_lo
            if run_hi > hi:
                hi, at = run_hi, seen + run_at
            keys = keys and run_keys
            in_order = in_order and run_in_order
            seen += k
    except DecompressedSizeError as e:
        raise _too_large(e) from e
    return RecordsSummary(lo, hi, at, keys, in_order)


def _with_record_errors(exc, errors) -> Exception:
    exc.record_errors = tuple(errors)
    return exc


def _check_records(decoded, offset: int, now: int, before: int, after: int, *,
                   create_time: bool, lat_batch: bool, compact: bool,
                   topic_partition: str | None) -> None:
    """LogValidator.validateRecord for every record, then processRecordErrors.

    A record's key is checked first (a keyless record on a compacted topic is not
    checked further), then its timestamp (validateTimestamp): on a CreateTime topic
    (``create_time``) a timestamp other than -1 must lie in the window; otherwise a batch
    with the LogAppendTime attribute (``lat_batch``; ``decoded`` then holds its
    maxTimestamp as every record's timestamp) is refused. When any record has a
    timestamp error, raise :class:`InvalidTimestampError` for the first of them, else
    :class:`RejectedRecordError`; either way ``record_errors`` lists
    every offending record, key and timestamp errors together (the record's offset in the
    batch as sent, as Kafka's message shows it)."""
    first_ts = None
    errors = []
    no_key = "Compacted topic cannot accept message without key in topic partition"
    if topic_partition is not None:
        no_key += f" {topic_partition}"
    window = f"The timestamp should be within [{now - before}, {now + after}]"
    for i, r in enumerate(decoded):
        if compact and r[2] is None:
            # validateKey comes first: the timestamp of a keyless record is not checked
            errors.append((i, no_key))
            continue
        ts = r[1]
        if create_time and ts != NO_TIMESTAMP:
            diff = now - ts
            if diff > before or -diff > after:
                if first_ts is None:
                    first_ts = (f"Timestamp {ts} of message with offset {offset + i} is out "
                                "of range. " + window)
                errors.append((i, f"Timestamp {ts} of message with offset {i} is out of "
                               "range. " + window))
        elif lat_batch:
            msg = (f"Invalid timestamp type in message DefaultRecord(offset={r[0]}, "
                   f"timestamp={ts}, key={0 if r[2] is None else len(r[2])} bytes, "
                   f"value={0 if r[3] is None else len(r[3])} bytes). Producer should not "
                   "set timestamp type to LogAppendTime.")
            if first_ts is None:
                first_ts = msg
            errors.append((i, msg))
    if not errors:
        return
    # processRecordErrors: InvalidTimestampException if any record's error is one
    if first_ts is not None:
        raise _with_record_errors(InvalidTimestampError(first_ts), errors)
    raise _with_record_errors(RejectedRecordError(no_key), errors)
