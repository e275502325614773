"""Legacy message sets (magic v0 and v1), after Kafka's ``AbstractLegacyRecordBatch`` and
``LegacyRecord``: an entry is a message, or a compressed wrapper whose value holds an
inner message set (``DeepRecordsIterator``; ``DataLogInputStream`` over its pieces).

:class:`LegacyRecordBatch` has :class:`~kafkalog_cli.format.record_batch.RecordBatch`'s
interface; its records are :class:`~kafkalog_cli.format.record.Record` tuples. Checksums
are CRC-32 (zlib), as ``LegacyRecord.computeChecksum``.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from operator import itemgetter

from ..constants import (
    CODEC_NAMES,
    COMPRESSION_CODEC_MASK,
    CREATE_TIME,
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    INT64_MAX,
    LOG_APPEND_TIME,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    NO_TIMESTAMP_TYPE,
    TIMESTAMP_TYPE_MASK,
)
from ..errors import CorruptRecordError, CrcMismatchError, InvalidRecordError
from ..schema.legacy import ATTRIBUTES_OFFSET as LEGACY_ATTRIBUTES_OFFSET
from ..schema.legacy import CRC_OFFSET as LEGACY_CRC_OFFSET
from ..schema.legacy import MAGIC_OFFSET as LEGACY_MAGIC_OFFSET
from ..schema.legacy import RECORD_OVERHEAD_V0 as LEGACY_RECORD_OVERHEAD_V0
from ..schema.legacy import RECORD_OVERHEAD_V1 as LEGACY_RECORD_OVERHEAD_V1
from ..schema.legacy import TIMESTAMP_OFFSET as LEGACY_TIMESTAMP_OFFSET
from ..schema.record_batch import LOG_OVERHEAD
from . import compression
from .record import Record, _peek_pieces, _tuple_new
from .record_batch import _OFFSET_SIZE, _BatchEntry

#: LegacyRecord after offset+size: crc, magic, attributes
_LEGACY_PREFIX = struct.Struct(">Ibb")
assert LEGACY_CRC_OFFSET + _LEGACY_PREFIX.size == LEGACY_ATTRIBUTES_OFFSET + 1
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")


# -- legacy v0/v1 ----------------------------------------------------------------------------

class LegacyRecordBatch(_BatchEntry):
    """A v0/v1 log entry: ``(view, position, offset, size, crc, magic, attributes,
    timestamp, key, value)``; ``offset`` is the entry's offset (for a compressed v1 wrapper
    the last inner offset). Follows AbstractLegacyRecordBatch.
    """

    __slots__ = ()

    offset = property(itemgetter(2))
    last_offset = property(itemgetter(2))
    crc = property(itemgetter(4))
    magic = property(itemgetter(5))
    attributes = property(itemgetter(6))
    timestamp = property(itemgetter(7))
    max_timestamp = property(itemgetter(7))
    key = property(itemgetter(8))
    value = property(itemgetter(9))

    partition_leader_epoch = -1
    producer_id = -1
    producer_epoch = -1
    base_sequence = NO_SEQUENCE
    last_sequence = NO_SEQUENCE
    is_transactional = False
    is_control = False
    has_delete_horizon = False
    delete_horizon_ms = None

    @property
    def next_offset(self) -> int:
        """AbstractLegacyRecordBatch.nextOffset: ``lastOffset + 1``, a Java long (an offset
        of INT64_MAX wraps to INT64_MIN)."""
        return self[2] + 1 if self[2] != INT64_MAX else -INT64_MAX - 1

    @property
    def compression(self) -> int:
        return self[6] & COMPRESSION_CODEC_MASK

    @property
    def compression_name(self) -> str:
        c = self[6] & COMPRESSION_CODEC_MASK
        return CODEC_NAMES[c] if c < len(CODEC_NAMES) else f"unknown({c})"

    @property
    def timestamp_type(self) -> str:
        if self[5] == 0:
            return NO_TIMESTAMP_TYPE
        return LOG_APPEND_TIME if self[6] & TIMESTAMP_TYPE_MASK else CREATE_TIME

    def compute_crc(self) -> int:
        p = self[1]
        return zlib.crc32(self[0][p + LEGACY_MAGIC_OFFSET:p + self[3] + LOG_OVERHEAD])

    @property
    def is_valid(self) -> bool:
        """LegacyRecord.isValid: size >= the v0 overhead and the CRC-32 matches."""
        return self.compute_crc() == self[4]

    def ensure_valid(self, file=None) -> None:
        computed = self.compute_crc()
        if computed != self[4]:
            raise CrcMismatchError(self[4], computed, file=file, position=self[1])

    def _inner_pieces(self, max_bytes: int) -> Iterator[bytes]:
        return compression.decompress_chunks(self[6] & COMPRESSION_CODEC_MASK, self[9],
                                             magic=self[5], max_bytes=max_bytes)

    def iter_inner(self, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
                   ) -> Iterator[LegacyRecordBatch]:
        """The entries this one stands for, lazily: itself when uncompressed, else the
        inner messages with absolute offsets, as AbstractLegacyRecordBatch's
        ``DeepRecordsIterator``: v1 relative offsets resolved against the wrapper's
        (``wrapper - last relative``; a wrapper offset of 0, as some librdkafka versions
        sent, means 0; a wrapper below the last relative offset is invalid); with
        LogAppendTime, inner timestamps take the wrapper's. A decompressed message set
        of up to :data:`~kafkalog_cli.constants.DECODE_CHUNK_BYTES` is held whole; a
        larger one is streamed (twice for v1: once for the last relative offset).

        Raises (when called, or as the entries are reached):
            InvalidRecordError / CorruptRecordError: a null or undecodable value, no inner
                message, a nested compressed message, an inner entry that does not parse,
                an offset past int64.
        """
        if not self[6] & COMPRESSION_CODEC_MASK:
            return iter((self,))
        if self.__class__ is _FieldsOverrunEntry:  # its compressed value cannot be read
            raise self.fields_error()
        if self[9] is None:
            raise InvalidRecordError("compressed wrapper message has a null value",
                                     position=self[1])
        first, pieces = _peek_pieces(self._inner_pieces(max_bytes))
        if pieces is None:
            def spans():
                return _legacy_spans((first,))
        else:
            def spans():
                return _legacy_spans(self._inner_pieces(max_bytes))
        return self._inner_entries(spans)

    def _inner_entries(self, spans) -> Iterator[LegacyRecordBatch]:
        base = None
        if self[5] != 0:
            last_rel = None
            for _, _, off, _ in spans():
                last_rel = off
            if last_rel is None:
                raise InvalidRecordError("compressed wrapper message holds no inner messages",
                                         position=self[1])
            wrapper = self[2]
            if wrapper == 0:
                base = 0
            elif wrapper < last_rel:
                raise InvalidRecordError(
                    f"Found invalid wrapper offset in compressed v1 message set, wrapper offset "
                    f"'{wrapper}' is less than the last inner message offset '{last_rel}' and "
                    "it is not zero.", position=self[1])
            else:
                base = wrapper - last_rel
        lat_ts = self[7] if self[6] & TIMESTAMP_TYPE_MASK else None
        n = 0
        for view, p, off, size in spans():
            e = _legacy_entry(view, p, off, size)
            if base is not None:
                off = base + off
                if off > INT64_MAX:
                    raise InvalidRecordError(
                        f"Inner message offset overflows int64: wrapper offset {self[2]} - "
                        f"last relative offset + relative offset {e[2]}", position=self[1])
                e = _tuple_new(e.__class__, (view, p, off, size, e[4], e[5], e[6],
                                             e[7] if lat_ts is None else lat_ts, e[8],
                                             e[9]) + e[10:])
            if e.__class__ is _FieldsOverrunEntry:  # a position in the file: the wrapper's
                e = _tuple_new(_FieldsOverrunEntry, e[:10] + (self[1], e[11]))
            if e[6] & COMPRESSION_CODEC_MASK:
                raise InvalidRecordError("Compressed message has a nested compressed message",
                                         position=self[1])
            n += 1
            yield e
        if not n:
            raise InvalidRecordError("compressed wrapper message holds no inner messages",
                                     position=self[1])

    def inner(self, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> list[LegacyRecordBatch]:
        """:meth:`iter_inner` as a list (memory in proportion to the inner messages)."""
        return list(self.iter_inner(max_bytes))

    @property
    def base_offset(self) -> int:
        """The first inner offset (AbstractLegacyRecordBatch.baseOffset)."""
        if not self[6] & COMPRESSION_CODEC_MASK:
            return self[2]
        return next(self.iter_inner())[2]

    @property
    def count(self) -> int | None:
        """countOrNull: None for legacy batches, as in Kafka."""
        return None

    def iter_records(self, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
                     ) -> Iterator[Record]:
        """The records lazily (:meth:`iter_inner` as :class:`Record` s)."""
        for e in self.iter_inner(max_bytes):
            if e.__class__ is _FieldsOverrunEntry:
                raise e.fields_error()
            yield _tuple_new(Record, (e[2], e[7], e[8], e[9], ()))

    def records(self, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> list[Record]:
        """Every record, as a list."""
        return list(self.iter_records(max_bytes))

    def __repr__(self) -> str:
        return (f"LegacyRecordBatch(position={self[1]}, offset={self[2]}, magic={self[5]}, "
                f"size={self.size})")


def _legacy_entry(view, pos: int, offset: int, size: int) -> LegacyRecordBatch:
    """The v0/v1 entry of ``size`` bytes (after its offset and size) at ``pos`` of ``view``.

    Raises CorruptRecordError for a size below the v0 overhead (FileLogInputStream's
    check). A key or value length that overruns the message does not, nor a v1 message
    too short for its key and value size fields (14 to 21 bytes): the entry is whole, as
    the broker's framing and ``LegacyRecord.ensureValid`` (the v0 overhead and the CRC)
    see it, and only reading its key or value fails (:class:`_FieldsOverrunEntry`)."""
    if size < LEGACY_RECORD_OVERHEAD_V0:
        raise CorruptRecordError(f"Found record size {size} smaller than minimum record "
                                 f"overhead ({LEGACY_RECORD_OVERHEAD_V0})", position=pos)
    crc, magic, attributes = _LEGACY_PREFIX.unpack_from(view, pos + LEGACY_CRC_OFFSET)
    p = pos + LEGACY_TIMESTAMP_OFFSET
    end = pos + LOG_OVERHEAD + size
    timestamp = NO_TIMESTAMP
    if magic != 0:  # LegacyRecord: every magic but 0 (-1 too) has the v1 layout
        (timestamp,) = _INT64.unpack_from(view, p)  # size >= 14: inside the message
        p += 8
        if size < LEGACY_RECORD_OVERHEAD_V1:  # whole for ensureValid (v0 overhead, CRC)
            return _overrun_entry(view, pos, offset, size, crc, magic, attributes, timestamp,
                                  "key and value size fields")
    (n,) = _INT32.unpack_from(view, p)
    p += 4
    key = None
    if n >= 0:
        if p + n + 4 > end:  # the key overruns the message (and maybe the buffer)
            return _overrun_entry(view, pos, offset, size, crc, magic, attributes, timestamp,
                                  f"key of {n} bytes")
        key = bytes(view[p:p + n])
        p += n
    (n,) = _INT32.unpack_from(view, p)
    p += 4
    value = None
    if n >= 0:
        if p + n > end:
            return _overrun_entry(view, pos, offset, size, crc, magic, attributes, timestamp,
                                  f"value of {n} bytes")
        value = bytes(view[p:p + n])
    return _tuple_new(LegacyRecordBatch,
                      (view, pos, offset, size, crc, magic, attributes, timestamp, key, value))


class _FieldsOverrunEntry(LegacyRecordBatch):
    """A legacy entry whose key or value length runs past the end of the message: ``(view,
    position, offset, size, crc, magic, attributes, timestamp, None, None, errorPosition,
    what)``. Its framing, CRC, offset and timestamp are as for any entry (the broker's
    FileLogInputStream, ``ensureValid`` and LogSegment.recover keep it); reading its key
    or value raises CorruptRecordError at ``errorPosition`` (the entry's position; for an
    inner message, its wrapper's), where Kafka's ``LegacyRecord.key()``/``value()`` fail
    (``Utils.sizeDelimited``: a limit past the buffer) and kafka-dump-log.sh with it."""

    __slots__ = ()

    def fields_error(self) -> CorruptRecordError:
        return CorruptRecordError(
            f"Record is corrupt: the v{self[5]} message at offset {self[2]} "
            f"({self[3] + LOG_OVERHEAD} bytes) is too short for its {self[11]}",
            position=self[10])

    @property
    def key(self):
        raise self.fields_error()

    @property
    def value(self):
        raise self.fields_error()


def _overrun_entry(view, pos, offset, size, crc, magic, attributes, timestamp, what
                   ) -> _FieldsOverrunEntry:
    return _tuple_new(_FieldsOverrunEntry, (view, pos, offset, size, crc, magic, attributes,
                                            timestamp, None, None, pos, what))


def _legacy_spans(pieces) -> Iterator[tuple[memoryview, int, int, int]]:
    """``(view, position, offset, size)`` of each whole entry of an inner message set
    that arrives in ``pieces`` (DataLogInputStream: a partial entry at the end ends it).
    An entry cut between pieces waits for the rest."""
    held: list[bytes] = []
    size = need = 0
    unpack = _OFFSET_SIZE.unpack_from
    for piece in pieces:
        held.append(piece)
        size += len(piece)
        if size < need:
            continue
        data = held[0] if len(held) == 1 else b"".join(held)
        mv = memoryview(data)
        pos = 0
        n = len(data)
        need = 0
        while pos + LOG_OVERHEAD <= n:
            offset, sz = unpack(mv, pos)
            if sz < LEGACY_RECORD_OVERHEAD_V0:
                raise CorruptRecordError(f"Record size is less than the minimum record overhead "
                                         f"({LEGACY_RECORD_OVERHEAD_V0})")
            if pos + LOG_OVERHEAD + sz > n:
                need = LOG_OVERHEAD + sz
                break
            yield mv, pos, offset, sz
            pos += LOG_OVERHEAD + sz
        rest = data[pos:] if pos else data
        held = [rest] if rest else []
        size = len(rest)
