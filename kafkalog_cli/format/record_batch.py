"""A v2 record batch in a buffer, after Kafka's ``DefaultRecordBatch`` (``isValid``,
``iterator``, ``streamingIterator``, ``incrementSequence``) and the ``RecordBatch``
interface both batch formats share (:class:`_BatchEntry`).

:class:`RecordBatch` is a tuple ``(view, position, *61-byte header)``; nothing is decoded
until asked (``is_valid`` computes the CRC-32C, ``records()`` decodes). Its records are
:mod:`.record`'s; the batches of a file are :class:`~kafkalog_cli.format.records.FileRecords`'.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Iterable, Iterator
from operator import itemgetter

from ..constants import (
    CODEC_NAMES,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CREATE_TIME,
    DECODE_CHUNK_BYTES,
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    DELETE_HORIZON_FLAG_MASK,
    INT32_MAX,
    INT64_MAX,
    LOG_APPEND_TIME,
    MAGIC_V2,
    NO_SEQUENCE,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from ..crc import load as load_crc32c
from ..errors import CrcMismatchError, InvalidRecordError
from ..schema.record_batch import (
    ATTRIBUTES_OFFSET,
    HEADER_FIELDS,
    LOG_OVERHEAD,
    MIN_BATCH_LENGTH,
    RECORD_BATCH_OVERHEAD,
    RECORDS_OFFSET,
    header_format,
)
from ..schema.utf8 import java_utf8
from . import compression
from .compiled import _c
from .record import (
    _OFFSETS_UNCHECKED_MAX,
    Record,
    _checked_offsets,
    _decode_block,
    _decode_block_into,
    _decode_piece,
    _peek_pieces,
    _py_decode_block,
    _py_decode_block_into,
    _record_pieces,
    _stream_records,
    _view_pieces,
    decode_records,
    decode_records_into,
    java_long,
)

#: the smallest Java long
_INT64_MIN = -INT64_MAX - 1


def _load_crc32c():
    """The ``crc32c`` package's function, loaded on first use by
    :func:`kafkalog_cli.crc.load` (without the package's ~20 ms import)."""
    global _crc32c_fn
    _crc32c_fn = load_crc32c()
    return _crc32c_fn


def crc32c(data, *args, **kwargs) -> int:
    """CRC-32C (Castagnoli) of ``data``, through the hardware-based ``crc32c`` package
    (same arguments as ``crc32c.crc32c``: ``data, value=0``, a running ``value``)."""
    return (_crc32c_fn or _load_crc32c())(data, *args, **kwargs)


#: the crc32c package's function, loaded on first use (the compiled core calls the
#: package's C function directly, see _speedups.c)
_crc32c_fn = None

#: The one v2 header reader, in the schema's field order (:data:`~kafkalog_cli.schema
#: .record_batch.HEADER_FIELDS`): baseOffset, length, partitionLeaderEpoch, magic, crc,
#: attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, producerEpoch,
#: baseSequence, recordsCount.
HEADER = struct.Struct(header_format(*(name for name, _, _ in HEADER_FIELDS)))
assert HEADER.size == RECORD_BATCH_OVERHEAD
#: baseOffset (or a legacy entry's offset) and length: the prefix every format shares
_OFFSET_SIZE = struct.Struct(header_format("base_offset", "length"))


def increment_sequence(sequence: int, increment: int) -> int:
    """DefaultRecordBatch.incrementSequence: sequences wrap from INT32_MAX to 0."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


# -- batches ---------------------------------------------------------------------------------

class _BatchEntry(tuple):
    """What every batch tuple shares: ``(view, position, <offset>, <size field>, ...)``,
    the size field counting the bytes after the LOG_OVERHEAD prefix (``length`` of a v2
    batch, ``MessageSize`` of a legacy entry)."""

    __slots__ = ()

    view = property(itemgetter(0))
    position = property(itemgetter(1))

    @property
    def size(self) -> int:
        """Bytes of the whole batch (sizeInBytes = size field + LOG_OVERHEAD)."""
        return self[3] + LOG_OVERHEAD

    @property
    def next_position(self) -> int:
        return self[1] + self[3] + LOG_OVERHEAD

    def raw(self) -> bytes:
        """The batch's bytes."""
        p = self[1]
        return bytes(self[0][p:p + self[3] + LOG_OVERHEAD])


class RecordBatch(_BatchEntry):
    """A RecordBatch v2 in a buffer: ``(view, position, baseOffset, length,
    partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta, baseTimestamp,
    maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount)``.

    ``position`` is the byte position of the batch in its buffer (for a file: in the
    ``.log``). Offsets are absolute, timestamps in ms. Follows DefaultRecordBatch.
    """

    __slots__ = ()

    base_offset = property(itemgetter(2))
    length = property(itemgetter(3))
    partition_leader_epoch = property(itemgetter(4))
    magic = property(itemgetter(5))
    crc = property(itemgetter(6))
    attributes = property(itemgetter(7))
    last_offset_delta = property(itemgetter(8))
    base_timestamp = property(itemgetter(9))
    max_timestamp = property(itemgetter(10))
    producer_id = property(itemgetter(11))
    producer_epoch = property(itemgetter(12))
    base_sequence = property(itemgetter(13))
    records_count = property(itemgetter(14))

    @property
    def last_offset(self) -> int:
        """DefaultRecordBatch.lastOffset: ``baseOffset + lastOffsetDelta`` in a Java long,
        wrapped as Java's long add leaves it (a base offset near either end of int64 is
        outside the CRC; DumpLogSegments prints the wrapped value). Readers that must
        reject such a batch check the unwrapped sum themselves
        (:func:`~kafkalog_cli.format.records.offset_overflow`)."""
        v = self[2] + self[8]
        return v if _INT64_MIN <= v <= INT64_MAX else java_long(v)

    @property
    def next_offset(self) -> int:
        """DefaultRecordBatch.nextOffset: ``lastOffset + 1``, a Java long (wraps)."""
        v = self[2] + self[8] + 1
        return v if _INT64_MIN <= v <= INT64_MAX else java_long(v)

    @property
    def count(self) -> int:
        """recordsCount (countOrNull)."""
        return self[14]

    @property
    def compression(self) -> int:
        return self[7] & COMPRESSION_CODEC_MASK

    @property
    def compression_name(self) -> str:
        c = self[7] & COMPRESSION_CODEC_MASK
        return CODEC_NAMES[c] if c < len(CODEC_NAMES) else f"unknown({c})"

    @property
    def timestamp_type(self) -> str:
        return LOG_APPEND_TIME if self[7] & TIMESTAMP_TYPE_MASK else CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self[7] & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self[7] & CONTROL_FLAG_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self[7] & DELETE_HORIZON_FLAG_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        """The delete horizon (baseTimestamp when bit 6 is set), else None."""
        return self[9] if self[7] & DELETE_HORIZON_FLAG_MASK else None

    @property
    def last_sequence(self) -> int:
        if self[13] == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self[13], self[8])

    def record_sequence(self, offset_delta: int) -> int:
        """DefaultRecord.sequence: ``baseSequence >= 0 ? incrementSequence(baseSequence,
        offsetDelta) : NO_SEQUENCE`` (any negative base sequence, not only -1; unlike
        :attr:`last_sequence`, which checks only NO_SEQUENCE as Kafka does)."""
        if self[13] < 0:
            return NO_SEQUENCE
        return increment_sequence(self[13], offset_delta)

    def compute_crc(self) -> int:
        """CRC-32C over attributes..end of the batch."""
        p = self[1]
        return (_crc32c_fn or _load_crc32c())(self[0][p + ATTRIBUTES_OFFSET:p + self[3] + LOG_OVERHEAD])

    def _is_valid(self) -> bool:
        p = self[1]
        return (_crc32c_fn or _load_crc32c())(self[0][p + ATTRIBUTES_OFFSET:p + self[3] + LOG_OVERHEAD]) == self[6]

    #: DefaultRecordBatch.isValid: size >= 61 and the CRC matches (the compiled core
    #: computes the CRC-32C itself, without a slice of the view).
    is_valid = property(_is_valid if _c is None else _c.batch_is_valid)

    def ensure_valid(self, file=None) -> None:
        """Raise :class:`CrcMismatchError` unless :attr:`is_valid` (ensureValid)."""
        computed = self.compute_crc()
        if computed != self[6]:
            raise CrcMismatchError(self[6], computed, file=file, position=self[1])

    def records_block(self, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> bytes:
        """The records block after the 61-byte header, decompressed (whole: its size is
        bounded by ``max_bytes``, not by the batch; :meth:`block_pieces` streams it)."""
        p = self[1]
        data = self[0][p + RECORDS_OFFSET:p + self[3] + LOG_OVERHEAD]
        codec = self[7] & COMPRESSION_CODEC_MASK
        if codec:
            return compression.decompress(codec, data, magic=MAGIC_V2, max_bytes=max_bytes)
        return bytes(data)

    def block_pieces(self, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
                     ) -> Iterator[bytes]:
        """The records block, decompressed lazily in pieces of at most
        :data:`~kafkalog_cli.constants.DECODE_CHUNK_BYTES` (non-empty ``bytes``).

        Raises (as the pieces are reached):
            CorruptRecordError: the block does not decompress or exceeds ``max_bytes``.
        """
        view, p, length, attributes = self[0], self[1], self[3], self[7]
        if attributes & 7:  # COMPRESSION_CODEC_MASK
            return compression.decompress_chunks(attributes & 7, view[p + RECORDS_OFFSET:p + length + LOG_OVERHEAD],
                                                 magic=MAGIC_V2, max_bytes=max_bytes)
        return _view_pieces(view, p + RECORDS_OFFSET, p + length + LOG_OVERHEAD)

    def small_block(self, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
                    view: bool = False) -> bytes | memoryview | None:
        """The decompressed records block when it holds at most
        :data:`~kafkalog_cli.constants.DECODE_CHUNK_BYTES`, else None (a larger block is
        for :meth:`iter_records` to stream): for the vectorised decoders, which take a
        whole block.

        With ``view``, an uncompressed block is a slice of the batch's buffer (for a
        segment, a memoryview of its map: no copy, but the map stays exported, so it
        cannot close, until the slice is dropped); otherwise ``bytes``.

        Raises:
            CorruptRecordError: the block does not decompress or exceeds ``max_bytes``.
        """
        buf, p, length, attributes = self[0], self[1], self[3], self[7]
        if not attributes & 7:
            if length - MIN_BATCH_LENGTH > DECODE_CHUNK_BYTES:
                return None
            block = buf[p + RECORDS_OFFSET:p + length + LOG_OVERHEAD]
            return block if view else bytes(block)
        first, pieces = _peek_pieces(self.block_pieces(max_bytes))
        return first if pieces is None else None

    def record_pieces(self, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
                      ) -> Iterator[tuple[bytes, int, int]]:
        """The decompressed records block as runs of whole records, for decoders that
        take a block at a time (the vectorised ones): ``(data, count, at)``, ``data``
        holding ``count`` records from byte ``at`` of the block. A block of up to
        :data:`~kafkalog_cli.constants.DECODE_CHUNK_BYTES` comes whole, with
        ``recordsCount`` (decoding it checks the count); a larger one in runs of about
        that size whose counts were checked against ``recordsCount`` (see
        :meth:`iter_records`).

        Raises (as the runs are reached):
            InvalidRecordError / CorruptRecordError: as :meth:`iter_records`.
        """
        count = self[14]
        if count < 0:
            raise InvalidRecordError(f"Found invalid record count {count} in magic v2 batch")
        first, pieces = _peek_pieces(self.block_pieces(max_bytes))
        if pieces is None:
            yield first, count, 0
        else:
            yield from _record_pieces(pieces, count)

    def iter_records(self, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
                     ) -> Iterable[Record]:
        """The records, decoded lazily: a block of up to
        :data:`~kafkalog_cli.constants.DECODE_CHUNK_BYTES` (decompressed) is decoded at
        once (the result is then a list), a larger one a piece at a time, so memory stays
        bounded whatever ``recordsCount`` and the block's size (DefaultRecordBatch's
        ``streamingIterator``). The count is checked as Kafka's ``RecordIterator`` does:
        after ``recordsCount`` records nothing may remain, and the block may not end
        before them.

        Raises (when called, or as the records are reached):
            InvalidRecordError / CorruptRecordError: records that do not parse or
                decompress, a count that the block does not hold, a block over
                ``max_bytes``, a record offset past int64 (positions are inside the
                records block).
        """
        view, p, base_offset, length, _, _, _, attributes, _, base_ts, max_ts, _, _, _, count \
            = self
        if count < 0:
            raise InvalidRecordError(f"Found invalid record count {count} in magic v2 batch")
        lat = max_ts if attributes & 8 else None  # TIMESTAMP_TYPE_MASK: LogAppendTime
        if attributes & 7 or length - MIN_BATCH_LENGTH > DECODE_CHUNK_BYTES:
            first, pieces = _peek_pieces(self.block_pieces(max_bytes))
            if pieces is None:
                recs = _decode_piece(first, count, base_offset, base_ts, lat, 0)
            else:
                recs = _stream_records(pieces, count, base_offset, base_ts, lat)
        else:
            recs = _decode_piece(bytes(view[p + RECORDS_OFFSET:p + length + LOG_OVERHEAD]), count, base_offset,
                                 base_ts, lat, 0)
        if base_offset > _OFFSETS_UNCHECKED_MAX:
            return _checked_offsets(recs, base_offset)
        return recs

    def _records(self, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> list[Record]:
        """Every record, as a list (:meth:`iter_records` streams them instead: a list
        costs memory in proportion to ``recordsCount``). The compiled core takes the
        uncompressed fast path below and calls this for the rest.

        Raises:
            InvalidRecordError / CorruptRecordError: as :meth:`iter_records`.
        """
        view, p, base_offset, length, _, _, _, attributes, _, base_ts, max_ts, _, _, _, count \
            = self
        if (attributes & 7 or count < 0 or length - MIN_BATCH_LENGTH > DECODE_CHUNK_BYTES
                or base_offset > _OFFSETS_UNCHECKED_MAX):
            recs = self.iter_records(max_bytes)
            return recs if recs.__class__ is list else list(recs)
        data = bytes(view[p + RECORDS_OFFSET:p + length + LOG_OVERHEAD])
        if attributes & 8:  # TIMESTAMP_TYPE_MASK: LogAppendTime
            return decode_records(data, count, base_offset, base_ts, max_ts)
        return _decode_block(data, count, base_offset, base_ts, 0)

    #: the compiled core replaces it with its own method (see the end of the module)
    records = _records

    def __repr__(self) -> str:
        return (f"RecordBatch(position={self[1]}, baseOffset={self[2]}, "
                f"lastOffset={self.last_offset}, count={self[14]}, size={self.size})")


# -- columnar decode -------------------------------------------------------------------------

def batch_records_into(batch, offsets, timestamps, keys: list, values: list,
                       headers: list | None = None,
                       max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> int:
    """``batch.records()`` (a :class:`RecordBatch` or :class:`LegacyRecordBatch`) appended
    to columns as :func:`decode_records_into` does; returns the number of records.
    Same values and errors as ``records()``; on error the columns are left as they were.
    """
    if batch.__class__ is not RecordBatch:
        recs = batch.records(max_bytes)
        for r in recs:
            offsets.append(r[0])
            timestamps.append(r[1])
            keys.append(r[2])
            values.append(r[3])
            if headers is not None:
                headers.append(r[4])
        return len(recs)
    view, p, base_offset, length, _, _, _, attributes, _, base_ts, max_ts, _, _, _, count \
        = batch
    if count < 0:
        raise InvalidRecordError(f"Found invalid record count {count} in magic v2 batch")
    if attributes & 7:  # COMPRESSION_CODEC_MASK
        data = compression.decompress(attributes & 7, view[p + RECORDS_OFFSET:p + length + LOG_OVERHEAD],
                                      magic=MAGIC_V2, max_bytes=max_bytes)
    else:
        data = bytes(view[p + RECORDS_OFFSET:p + length + LOG_OVERHEAD])
    return decode_records_into(data, count, base_offset, base_ts,
                               max_ts if attributes & 8 else None,  # LogAppendTime
                               offsets, timestamps, keys, values, headers)


def record_runs_summary(batch: RecordBatch, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
                        ) -> Iterator[tuple[int, int, int, int, bool, bool]]:
    """A fold over a v2 batch's records for callers that need no record itself (the log
    validator's summary), a run of whole records at a time
    (:meth:`RecordBatch.record_pieces`), so memory stays bounded whatever
    ``recordsCount``: per run ``(count, minTimestamp, maxTimestamp, index in the run of
    its first record with maxTimestamp, every key non-null, every offset its position
    in the batch)``. Every record is parsed and checked as :meth:`RecordBatch.iter_records`
    checks it (same errors), none materialised: the compiled core walks a run without a
    Python object per record (``_speedups.summarize_block``), the pure-Python loop
    decodes its columns and drops the values.

    Raises (as the runs are reached):
        InvalidRecordError / CorruptRecordError: as :meth:`RecordBatch.iter_records`.
    """
    base_offset, base_ts = batch[2], batch[9]
    lat = batch[10] if batch[7] & 8 else None  # TIMESTAMP_TYPE_MASK: LogAppendTime
    fast = _c is not None and lat is None and base_offset <= _OFFSETS_UNCHECKED_MAX
    seen = 0
    for data, k, at in batch.record_pieces(max_bytes):
        run = _c.summarize_block(data, k, base_ts, seen) if fast else None
        if run is None:
            run = _summarize_piece(data, k, at, seen, base_offset, base_ts, lat)
        if k:
            yield (k, *run)
            seen += k


def _summarize_piece(data, k: int, at: int, seen: int, base_offset: int, base_ts: int,
                     lat: int | None) -> tuple[int, int, int, bool, bool] | None:
    """``summarize_block``'s run summary by the decoder's columns (which raise its errors);
    None for an empty run."""
    offsets: list = []
    timestamps: list = []
    keys: list = []
    _decode_block_into(data, k, base_offset, base_ts, at, offsets.append,
                       timestamps.append, keys.append, deque(maxlen=0).append, None)
    if base_offset > _OFFSETS_UNCHECKED_MAX:
        for _ in _checked_offsets([(o,) for o in offsets], base_offset):
            pass
    if not k:
        return None  # an empty block decoded (its errors raised), nothing to summarise
    if lat is not None:
        timestamps = [lat] * k
    hi = max(timestamps)
    return (min(timestamps), hi, timestamps.index(hi), None not in keys,
            offsets == list(range(base_offset + seen, base_offset + seen + k)))


if _c is not None:
    # the layout compiled into the C is the schema's (header_format's 61 bytes)
    assert (_c.LOG_OVERHEAD, _c.RECORD_BATCH_OVERHEAD, _c.MIN_BATCH_LENGTH, _c.ATTRIBUTES_OFFSET,
            _c.RECORDS_OFFSET, _c.MAGIC_V2) == (LOG_OVERHEAD, RECORD_BATCH_OVERHEAD,
                                                MIN_BATCH_LENGTH, ATTRIBUTES_OFFSET,
                                                RECORDS_OFFSET, MAGIC_V2)
    _c.setup(InvalidRecordError, Record, RecordBatch, java_utf8, DECODE_CHUNK_BYTES,
             _py_decode_block, _py_decode_block_into, RecordBatch._is_valid,
             RecordBatch._records, _load_crc32c)
    # records(): the uncompressed fast path in C, the rest by _records (a method
    # descriptor: called without a bound method per call)
    RecordBatch.records = _c.records_method(RecordBatch)
    # is_valid: a getset descriptor calling the C check directly (a property would call
    # batch_is_valid as a function per access)
    RecordBatch.is_valid = _c.is_valid_property(RecordBatch)
