"""The hot write path: building record batches, after ``MemoryRecordsBuilder`` and
``DefaultRecord.writeTo`` (v2), and ``LegacyRecord.write`` (v0/v1, for fixtures and
tests; brokers of Kafka 4 no longer write them).

Records are given as ``(timestamp, key, value, headers)``: timestamp in ms, key/value
bytes or None, headers a sequence of ``(str, bytes | None)``. Offsets inside a batch are
``baseOffset + i``; the broker assigns ``baseOffset`` (it is outside the CRC).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence
from itertools import chain, islice

from ..constants import (
    CODEC_NONE,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    MAGIC_V0,
    MAGIC_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from ..crc import load as load_crc32c
from ..errors import InvalidArgumentError
from ..schema.record_batch import (
    ATTRIBUTES_OFFSET,
    BASE_OFFSET_OFFSET,
    CRC_OFFSET,
    MIN_BATCH_LENGTH,
    PARTITION_LEADER_EPOCH_OFFSET,
    RECORD_BATCH_OVERHEAD,
)
from . import compression
from .compiled import _import_speedups
from .record_batch import HEADER

_crc = load_crc32c()
#: the compiled encoder (``_encode.c``), or None (not built, or KAFKALOG_PURE_PYTHON=1)
_c = _import_speedups("_encode")
#: True when the compiled encoder is in use
SPEEDUPS = _c is not None
_INT32 = struct.Struct(">i")
_CONTROL_KEY = struct.Struct(">hh")
_END_TXN_VALUE = struct.Struct(">hi")


def _encoder():
    """The pure-Python encoder (:mod:`.encoder`), imported on first need: its tables cost
    start-up time that the compiled encoder never needs."""
    from . import encoder
    return encoder


def encode_records(records: Iterable, base_timestamp: int, start: int = 0
                   ) -> tuple[bytes, int, int, int]:
    """Encode ``(timestamp, key, value, headers)`` records (DefaultRecord.writeTo each),
    the first with offset delta ``start`` (the records of a batch may be encoded a run at
    a time). The compiled encoder (``_encode.c``) when it is built and takes them, else
    the Python loop (the reference: the same bytes and errors).

    Returns:
        (records block, count, max timestamp, offset delta of the first record holding the
        max timestamp; -1 when there are no records).
    """
    if _c is not None:
        if type(records) is not list and type(records) is not tuple:
            records = list(records)
        done = _c.encode_records(records, base_timestamp, start)
        if done is not None:
            return done
    return _encoder().encode_records(records, base_timestamp, start)


def encode_columns(timestamps: Sequence, keys: Sequence | None, values: Sequence,
                   headers: Sequence | None, base_timestamp: int
                   ) -> tuple[bytes, int, int, int]:
    """:func:`encode_records` of records given as columns (same bytes, same result): the
    hot path of keyed records and records with headers. ``timestamps`` ms, ``keys`` None:
    every key is null; ``headers`` None: no record has headers, else tuples of
    ``(str, bytes | None)`` pairs. The compiled encoder when it is built and takes them,
    else column by column with C-level maps, no Python code per record (headers then
    hashable: their encoding is cached)."""
    if _c is not None:
        done = _c.encode_columns(timestamps, keys, values, headers, base_timestamp, 0)
        if done is not None:
            return done
    return _encoder().encode_columns(timestamps, keys, values, headers, base_timestamp)


def encode_values(values: Sequence, timestamp_delta: int = 0) -> bytes:
    """The records block of keyless, header-less records with one timestamp: the hot path
    of line input (same bytes as :func:`encode_records` gives for them)."""
    if _c is not None:
        done = _c.encode_columns(timestamp_delta, None, values, None, 0, 0)
        if done is not None:
            return done[0]
    return _encoder().encode_values(values, timestamp_delta)


def build_batch(records: Iterable, *, base_offset: int = 0,
                partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
                compression_type: int = CODEC_NONE, log_append_time: int | None = None,
                is_transactional: bool = False, is_control: bool = False,
                producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH,
                base_sequence: int = NO_SEQUENCE, delete_horizon_ms: int | None = None,
                compression_level: int | None = None) -> bytes:
    """Build one RecordBatch v2 (MemoryRecordsBuilder.build).

    ``records`` (any iterable, consumed once) are ``(timestamp, key, value, headers)``;
    baseTimestamp is the first record's timestamp (or the delete horizon when given),
    maxTimestamp the largest (or ``log_append_time``, which also sets the LogAppendTime
    attribute). The CRC-32C is computed last.

    Memory: records are encoded a run of :data:`ENCODE_RUN` at a time into the batch
    (compressed as they come, :class:`~.compression.Compressor`, as MemoryRecordsBuilder
    writes through a compressing stream), so a generator of records costs the batch
    built and a run, never an object per record nor the uncompressed block.

    Raises:
        InvalidArgumentError: more records than fit an int32 delta.
    """
    it = iter(records)
    first = next(it, None)
    if first is not None:
        it = chain((first,), it)
    if delete_horizon_ms is not None:
        base_ts = delete_horizon_ms
    else:
        base_ts = NO_TIMESTAMP if first is None else first[0]
    comp = compression.Compressor(compression_type, level=compression_level) \
        if compression_type != CODEC_NONE else None
    buf = bytearray(RECORD_BATCH_OVERHEAD)
    count = 0
    max_ts = NO_TIMESTAMP
    while True:
        run = list(islice(it, ENCODE_RUN))
        if not run:
            break
        block, n, run_max, _ = encode_records(run, base_ts, count)
        del run
        count += n
        if count > 2**31 - 1:
            raise InvalidArgumentError("too many records for one batch")
        if run_max > max_ts:
            max_ts = run_max
        buf += comp.compress(block) if comp is not None else block
    if comp is not None:
        buf += comp.flush()
    attributes = compression_type
    if log_append_time is not None:
        attributes |= TIMESTAMP_TYPE_MASK
        max_ts = log_append_time
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG_MASK
    if is_control:
        attributes |= CONTROL_FLAG_MASK
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_FLAG_MASK
    _pack_header(buf, base_offset=base_offset, partition_leader_epoch=partition_leader_epoch,
                 attributes=attributes, last_offset_delta=max(count - 1, 0),
                 base_timestamp=base_ts, max_timestamp=max_ts, producer_id=producer_id,
                 producer_epoch=producer_epoch, base_sequence=base_sequence,
                 records_count=count)
    return bytes(buf)


#: records encoded at a time by :func:`build_batch`
ENCODE_RUN = 16384


def _pack_header(buf: bytearray, *, base_offset: int, partition_leader_epoch: int,
                 attributes: int, last_offset_delta: int, base_timestamp: int,
                 max_timestamp: int, producer_id: int, producer_epoch: int,
                 base_sequence: int, records_count: int) -> None:
    """Write the 61-byte header into ``buf`` (header + records block), CRC last."""
    HEADER.pack_into(buf, 0, base_offset, MIN_BATCH_LENGTH + len(buf) - RECORD_BATCH_OVERHEAD,
                     partition_leader_epoch, MAGIC_V2, 0, attributes, last_offset_delta,
                     base_timestamp, max_timestamp, producer_id, producer_epoch, base_sequence,
                     records_count)
    struct.pack_into(">I", buf, CRC_OFFSET, _crc(memoryview(buf)[ATTRIBUTES_OFFSET:]))


def assemble_batch(block: bytes, *, base_offset: int, partition_leader_epoch: int,
                   attributes: int, last_offset_delta: int, base_timestamp: int,
                   max_timestamp: int, producer_id: int, producer_epoch: int,
                   base_sequence: int, records_count: int) -> bytes:
    """Prefix a (possibly compressed) records block with the 61-byte header and CRC."""
    buf = bytearray(RECORD_BATCH_OVERHEAD + len(block))
    buf[RECORD_BATCH_OVERHEAD:] = block
    _pack_header(buf, base_offset=base_offset, partition_leader_epoch=partition_leader_epoch,
                 attributes=attributes, last_offset_delta=last_offset_delta,
                 base_timestamp=base_timestamp, max_timestamp=max_timestamp,
                 producer_id=producer_id, producer_epoch=producer_epoch,
                 base_sequence=base_sequence, records_count=records_count)
    return bytes(buf)


def build_control_batch(control_type: int, *, base_offset: int = 0, timestamp: int,
                        producer_id: int, producer_epoch: int, coordinator_epoch: int = 0,
                        partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
                        value: bytes | None = None) -> bytes:
    """A control batch of one record (MemoryRecords.withEndTransactionMarker for ABORT 0 /
    COMMIT 1: key ``version 0, type``, value ``version 0, coordinatorEpoch``)."""
    key = _CONTROL_KEY.pack(0, control_type)
    if value is None and control_type in (0, 1):
        value = _END_TXN_VALUE.pack(0, coordinator_epoch)
    return build_batch([(timestamp, key, value, ())], base_offset=base_offset,
                       partition_leader_epoch=partition_leader_epoch,
                       is_transactional=control_type in (0, 1), is_control=True,
                       producer_id=producer_id, producer_epoch=producer_epoch)


def set_base_offset(batch: bytearray | memoryview, base_offset: int) -> None:
    """Assign the batch's baseOffset in place (outside the CRC, as the broker does)."""
    struct.pack_into(">q", batch, BASE_OFFSET_OFFSET, base_offset)


def set_partition_leader_epoch(batch, epoch: int) -> None:
    """Assign partitionLeaderEpoch in place (outside the CRC)."""
    struct.pack_into(">i", batch, PARTITION_LEADER_EPOCH_OFFSET, epoch)


# -- legacy v0/v1 (read-only formats; built for fixtures and tests) ------------------------

def build_legacy_message(offset: int, key, value, *, magic: int = 1,
                         timestamp: int = NO_TIMESTAMP, attributes: int = 0) -> bytes:
    """One v0/v1 log entry ``offset size crc magic attributes [timestamp] key value``
    (LegacyRecord.write), CRC-32 over magic..end."""
    body = bytearray((magic & 0xFF, attributes & 0xFF))
    if magic >= 1:
        body += struct.pack(">q", timestamp)
    for field in (key, value):
        if field is None:
            body += _INT32.pack(-1)
        else:
            body += _INT32.pack(len(field)) + field
    crc = zlib.crc32(body)
    message = struct.pack(">I", crc) + bytes(body)
    return struct.pack(">qi", offset, len(message)) + message


def build_legacy_wrapper(first_offset: int, messages: Sequence, *, magic: int = 1,
                         compression_type: int, timestamp: int = NO_TIMESTAMP,
                         log_append_time: bool = False) -> bytes:
    """A compressed v0/v1 wrapper holding ``messages`` (``(timestamp, key, value)``):
    inner offsets absolute in v0, relative 0..n-1 in v1; the wrapper's offset is the last
    inner offset and its timestamp the max (or ``timestamp`` with LogAppendTime)."""
    inner = bytearray()
    n = len(messages)
    max_ts = NO_TIMESTAMP
    for i, (ts, key, value) in enumerate(messages):
        off = first_offset + i if magic == MAGIC_V0 else i
        inner += build_legacy_message(off, key, value, magic=magic, timestamp=ts)
        max_ts = max(max_ts, ts)
    data = compression.compress(compression_type, bytes(inner), magic=magic)
    attrs = compression_type | (TIMESTAMP_TYPE_MASK if log_append_time else 0)
    wrapper_ts = timestamp if log_append_time else max_ts
    return build_legacy_message(first_offset + n - 1, None, data, magic=magic,
                                timestamp=wrapper_ts, attributes=attrs)
