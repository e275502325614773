"""The hot read path: struct/memoryview twins of the construct schemas.

:mod:`kafkalog_cli.schema.record_batch`, ``record`` and ``legacy`` declare the format;
this module reads the same bytes 20-90x faster (measured in ``benchmarks/``) and tests
assert both give identical results on every batch of the fixtures and the real corpus.

Shapes:

* :class:`RecordBatch` - a v2 batch, a tuple ``(view, position, *61-byte header)``;
  nothing is decoded until asked (``is_valid`` computes the CRC, ``records()`` decodes).
* :class:`LegacyRecordBatch` - a v0/v1 log entry (a message, or a compressed wrapper
  holding inner messages), with the same interface.
* :class:`Record` - a tuple ``(offset, timestamp, key, value, headers)``: absolute offset,
  timestamp in ms, key/value as bytes or None, headers a tuple of ``(str, bytes|None)``.
* :class:`FileRecords` - batches of a buffer (a whole ``.log`` or a slice), iterated as
  ``FileLogInputStream`` does: stops at a partial batch at the end and records where.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import chain
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
    NO_TIMESTAMP,
    NO_TIMESTAMP_TYPE,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from ..crc import load as load_crc32c
from ..errors import (
    CorruptRecordError,
    CrcMismatchError,
    InvalidArgumentError,
    InvalidRecordError,
    RecordOverheadError,
)
from ..schema.legacy import ATTRIBUTES_OFFSET as LEGACY_ATTRIBUTES_OFFSET
from ..schema.legacy import CRC_OFFSET as LEGACY_CRC_OFFSET
from ..schema.legacy import HEADER_SIZE_UP_TO_MAGIC
from ..schema.legacy import MAGIC_OFFSET as LEGACY_MAGIC_OFFSET
from ..schema.legacy import RECORD_OVERHEAD_V0 as LEGACY_RECORD_OVERHEAD_V0
from ..schema.legacy import RECORD_OVERHEAD_V1 as LEGACY_RECORD_OVERHEAD_V1
from ..schema.legacy import TIMESTAMP_OFFSET as LEGACY_TIMESTAMP_OFFSET
from ..schema.record_batch import (
    ATTRIBUTES_OFFSET,
    HEADER_FIELDS,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MIN_BATCH_LENGTH,
    RECORD_BATCH_OVERHEAD,
    RECORDS_OFFSET,
    header_format,
)
from ..schema.utf8 import java_utf8
from . import compression
from .varint import read_varint


def _import_speedups(name: str = "_speedups"):
    """A module of the optional compiled core (``_speedups.c``, ``_encode.c``: built by
    ``setup.py`` when a compiler is present), or None: when it was not built, or
    ``KAFKALOG_PURE_PYTHON=1`` forces the pure-Python loops (the reference; same values
    and errors)."""
    if os.environ.get("KAFKALOG_PURE_PYTHON", "") not in ("", "0"):
        return None
    import importlib

    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ImportError:
        return None


_c = _import_speedups()
#: True when the compiled core is in use (False: the pure-Python loops).
SPEEDUPS = _c is not None


def load_pure_python():
    """A second instance of this module running the pure-Python loops only, beside this one:
    for the tests that compare both implementations and the benchmarks that time both in
    one process. Its classes are its own (``Record``, ``RecordBatch``); its errors are
    :mod:`kafkalog_cli.errors`'."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"{__package__}._records_pure_python",
                                                  __file__)
    mod = importlib.util.module_from_spec(spec)
    saved = os.environ.get("KAFKALOG_PURE_PYTHON")
    os.environ["KAFKALOG_PURE_PYTHON"] = "1"
    try:
        spec.loader.exec_module(mod)
    finally:
        if saved is None:
            del os.environ["KAFKALOG_PURE_PYTHON"]
        else:
            os.environ["KAFKALOG_PURE_PYTHON"] = saved
    return mod


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
#: LegacyRecord after offset+size: crc, magic, attributes
_LEGACY_PREFIX = struct.Struct(">Ibb")
assert LEGACY_CRC_OFFSET + _LEGACY_PREFIX.size == LEGACY_ATTRIBUTES_OFFSET + 1
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")

_tuple_new = tuple.__new__

#: Zigzag-decoded values of the 14 payload bits of a one- or two-byte varint, indexed by
#: ``b0 & 0x7F | b1 << 7`` (a one-byte varint is its own index): a list lookup is ~3x faster
#: than the shift/xor arithmetic in the interpreter. Zigzag maps even v to v >> 1 and odd v
#: to -(v >> 1) - 1: two slice assignments (~0.1 ms) instead of 16384 expressions (~1.4 ms).
ZIGZAG14 = [0] * (1 << 14)
ZIGZAG14[0::2] = range(1 << 13)
ZIGZAG14[1::2] = range(-1, -(1 << 13) - 1, -1)
_ZIGZAG14 = ZIGZAG14


def increment_sequence(sequence: int, increment: int) -> int:
    """DefaultRecordBatch.incrementSequence: sequences wrap from INT32_MAX to 0."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


# -- records -------------------------------------------------------------------------------

class Record(tuple):
    """One record: ``(offset, timestamp, key, value, headers)``.

    offset is absolute; timestamp in ms (-1 when the format has none); key and value are
    bytes or None; headers is a tuple of ``(key: str, value: bytes | None)``.
    """

    __slots__ = ()

    offset = property(itemgetter(0))
    timestamp = property(itemgetter(1))
    key = property(itemgetter(2))
    value = property(itemgetter(3))
    headers = property(itemgetter(4))

    @property
    def key_size(self) -> int:
        """Key length in bytes, -1 for a null key (Record.keySize)."""
        k = self[2]
        return -1 if k is None else len(k)

    @property
    def value_size(self) -> int:
        """Value length in bytes, -1 for a null value (Record.valueSize)."""
        v = self[3]
        return -1 if v is None else len(v)

    def __repr__(self) -> str:
        return (f"Record(offset={self[0]}, timestamp={self[1]}, key={self[2]!r}, "
                f"value={self[3]!r}, headers={self[4]!r})")


def decode_records(data, count: int, base_offset: int, base_timestamp: int,
                   log_append_time: int | None = None) -> list[Record]:
    """Decode ``count`` DefaultRecords from ``data`` (an uncompressed records block).

    Follows DefaultRecord.readFrom: zigzag varints, exact body length, null key/value at
    length -1, header keys >= 0 bytes of UTF-8. With ``log_append_time`` every record takes
    that timestamp (a LogAppendTime batch's maxTimestamp). ``data`` may be any bytes-like
    object; keys and values are always ``bytes``.

    Raises:
        InvalidRecordError: a record does not parse, or the block holds more or fewer
            bytes than ``count`` records.
    """
    if data.__class__ is not bytes:
        data = bytes(data)
    out = _decode_block(data, count, base_offset, base_timestamp, 0)
    if log_append_time is not None:
        out = [_tuple_new(Record, (r[0], log_append_time, r[2], r[3], r[4])) for r in out]
    return out


def _decode_headers(data: bytes, pos: int) -> tuple[tuple, int]:
    """Headers at ``pos`` (the count varint), for :func:`decode_records`."""
    b = data[pos]
    if b < 0x80:
        count = _ZIGZAG14[b]
        pos += 1
    else:
        count, pos = read_varint(data, pos)
    if count < 0:
        raise InvalidRecordError(f"Found invalid number of record headers {count}")
    headers = []
    append = headers.append
    for _ in range(count):
        b = data[pos]
        if b < 0x80:
            n = _ZIGZAG14[b]
            pos += 1
        else:
            n, pos = read_varint(data, pos)
        if n < 0:
            raise InvalidRecordError(f"Invalid negative header key size {n}")
        hkey = java_utf8(data[pos:pos + n])  # Utils.utf8: Java's replacement rules
        pos += n
        b = data[pos]
        if b < 0x80:
            n = _ZIGZAG14[b]
            pos += 1
        else:
            n, pos = read_varint(data, pos)
        if n < 0:
            hval = None
        else:
            hval = data[pos:pos + n]
            pos += n
        append((hkey, hval))
    return tuple(headers), pos


# -- the record decode loop --------------------------------------------------------------------
#
# DefaultRecord.readFrom for a block of records, written once: _DECODE_LOOP is rendered
# at import into its two consumers, _decode_block (a list of Record tuples) and
# _decode_block_into (caller-owned columns), which differ only in what each record
# becomes ({emit}). A template rather than a shared function keeps every step inline (a
# call per record or per field costs more than the decode itself: measured with
# benchmarks/read_bench.py and spark_bench.py).
#
# Varints of one and two bytes (values -8192..8191: every length and delta below 8 KiB)
# are decoded inline through the _ZIGZAG14 table, longer ones by read_varint (which
# enforces the 5/10-byte caps). Defaults bind globals as fast locals; a one-record batch
# iterates a 1-tuple, cheaper than creating a range. ``_at`` is the position of ``data``
# in its records block (for error messages only: a streamed block is decoded a piece at a
# time).

def _inline_varint(name: str, skip: int = 0, cap: str = "", indent: int = 12,
                   long_tail: tuple[str, ...] = ()) -> str:
    """The source of one varint read inline at ``pos`` (after ``skip`` bytes) into
    ``name``: one- and two-byte varints through the zigzag table ``_zz``, longer ones by
    ``read_varint`` (``cap`` its byte-cap argument, ``", 10"`` for a varlong), followed by
    the lines ``long_tail`` (only for those)."""
    def at(k: int) -> str:
        return "pos" if k == 0 else f"pos + {k}"

    lines = [f"b = data[{at(skip)}]", "if b < 0x80:", f"    {name} = _zz[b]",
             f"    pos += {skip + 1}", "else:", f"    c = data[{at(skip + 1)}]",
             "    if c < 0x80:", f"        {name} = _zz[(b & 0x7F) | (c << 7)]",
             f"        pos += {skip + 2}", "    else:",
             f"        {name}, pos = read_varint(data, {at(skip)}{cap})"]
    lines += [f"        {line}" for line in long_tail]
    return "\n".join(" " * indent + line for line in lines).lstrip()


# A record's timestamp is baseTimestamp + timestampDelta in a Java long, which wraps
# (DefaultRecord.readFrom); both are int64 but their sum may not be. With |baseTimestamp|
# <= 2^62 (checked once per block: else the block goes through _decode_block*_edge) only
# a delta above 2^62 in magnitude (a varlong of 9 or 10 bytes, read by read_varint) can
# make the sum leave int64: only that branch checks.
_TS_DELTA_WRAP = (
    "if ts_delta > 0x3FFFFFFFFFFFFFFF or ts_delta < -0x4000000000000000:",
    "    ts_delta = (((base_timestamp + ts_delta + 0x8000000000000000) & "
    "0xFFFFFFFFFFFFFFFF) - 0x8000000000000000 - base_timestamp)",
)


def java_long(value: int) -> int:
    """``value`` wrapped to a Java long (two's complement int64), as Java's long
    arithmetic leaves a sum that overflows."""
    return ((value + 0x8000000000000000) & 0xFFFFFFFFFFFFFFFF) - 0x8000000000000000


def _decode_block_edge(data, count, base_offset, base_timestamp, _at):
    """_decode_block for a base timestamp beyond +-2^62: decoded against 0, then each
    timestamp is baseTimestamp + delta wrapped as a Java long."""
    out = _decode_block(data, count, base_offset, 0, _at)
    return [_tuple_new(Record, (r[0], java_long(base_timestamp + r[1]), r[2], r[3], r[4]))
            for r in out]


def _decode_block_into_edge(data, count, base_offset, base_timestamp, _at, off_append,
                            ts_append, key_append, value_append, hdr_append):
    """_decode_block_into for a base timestamp beyond +-2^62 (see _decode_block_edge)."""
    return _decode_block_into(data, count, base_offset, 0, _at, off_append,
                              lambda d: ts_append(java_long(base_timestamp + d)),
                              key_append, value_append, hdr_append)


_DECODE_LOOP = """
def {name}(data, count, base_offset, base_timestamp, _at{args}, _zz=_ZIGZAG14, _one=(None,),
        _empty=(), _new=_tuple_new, _Record=Record):
    if base_timestamp > 0x4000000000000000 or base_timestamp < -0x4000000000000000:
        return {name}_edge(data, count, base_offset, base_timestamp, _at{args})
    {prologue}
    pos = 0
    end = len(data)
    try:
        for _ in (_one if count == 1 else range(count)):
            # length (varint)
            {read_length}
            rec_end = pos + length
            if length < 0 or rec_end > end:
                raise InvalidRecordError(f"Invalid record size {{length}} at byte "
                                         f"{{_at + pos}} of the records block "
                                         f"({{_at + end}} bytes)")
            # attributes (int8, unused), then timestampDelta (varlong)
            {read_ts_delta}
            # offsetDelta (varint)
            {read_offset_delta}
            # key
            {read_key_length}
            if n < 0:
                key = None
            else:
                key = data[pos:pos + n]
                pos += n
            # value
            {read_value_length}
            if n < 0:
                value = None
            else:
                value = data[pos:pos + n]
                pos += n
            # headers: a count of 0 is the single byte 0
            if data[pos] == 0:
                pos += 1
                headers = _empty
            else:
                headers, pos = _decode_headers(data, pos)
            if pos != rec_end:
                raise InvalidRecordError(
                    f"Invalid record size: expected to read {{length}} bytes in record "
                    f"payload, but instead read {{length + pos - rec_end}}")
            {emit}
    except IndexError:
        raise InvalidRecordError("Incorrect declared batch size, premature EOF reached") \\
            from None
    if pos != end:
        raise InvalidRecordError("Incorrect declared batch size, records still remaining "
                                 "in file")
    {epilogue}
"""

#: The consumers of the loop: ``name -> (extra arguments, prologue, emit, epilogue)``.
_DECODE_CONSUMERS = {
    # a list of Record tuples
    "_decode_block": (
        "", "out = []; append = out.append",
        "append(_new(_Record, (base_offset + offset_delta, base_timestamp + ts_delta, "
        "key, value, headers)))",
        "return out"),
    # each field appended to its column
    "_decode_block_into": (
        ", off_append, ts_append, key_append, value_append, hdr_append", "pass",
        "off_append(base_offset + offset_delta); ts_append(base_timestamp + ts_delta); "
        "key_append(key); value_append(value)\n"
        "            if hdr_append is not None:\n"
        "                hdr_append(headers)",
        "return None"),
}


def _render_decode_loops() -> tuple:
    """The consumers of :data:`_DECODE_LOOP`, in :data:`_DECODE_CONSUMERS`' order."""
    namespace = {"_ZIGZAG14": _ZIGZAG14, "_tuple_new": _tuple_new, "Record": Record,
                 "read_varint": read_varint, "_decode_headers": _decode_headers,
                 "InvalidRecordError": InvalidRecordError,
                 "_decode_block_edge": _decode_block_edge,
                 "_decode_block_into_edge": _decode_block_into_edge}
    for name, (args, prologue, emit, epilogue) in _DECODE_CONSUMERS.items():
        src = _DECODE_LOOP.format(
            name=name, args=args, prologue=prologue, emit=emit, epilogue=epilogue,
            read_length=_inline_varint("length"),
            read_ts_delta=_inline_varint("ts_delta", skip=1, cap=", 10",
                                         long_tail=_TS_DELTA_WRAP),
            read_offset_delta=_inline_varint("offset_delta"),
            read_key_length=_inline_varint("n"), read_value_length=_inline_varint("n"))
        exec(compile(src, f"<kafkalog_cli.format.records._DECODE_LOOP:{name}>", "exec"),
             namespace)
    return tuple(namespace[name] for name in _DECODE_CONSUMERS)


if _c is None:
    #: DefaultRecord.readFrom over a block: ``(data, count, base_offset, base_timestamp,
    #: at)`` -> a list of :class:`Record`; ``_decode_block_into`` takes the columns'
    #: ``append`` methods after ``at`` (``hdr_append`` None drops the headers once checked).
    _py_decode_block, _py_decode_block_into = _render_decode_loops()
else:
    # The compiled core hands these loops only what it does not take (arguments beyond
    # int64), so they are rendered on first use: compiling them costs every command ~3 ms
    # of start-up.
    _rendered: tuple = ()

    def _py_loops() -> tuple:
        global _rendered
        if not _rendered:
            _rendered = _render_decode_loops()
        return _rendered

    def _py_loop(i: int):
        """The ``i``-th rendered loop, rendering them on its first call."""
        def loop(*args):
            return _py_loops()[i](*args)
        return loop

    _py_decode_block, _py_decode_block_into = _py_loop(0), _py_loop(1)
#: the loops in use: the compiled core's twins (same arguments, values and errors) or these
_decode_block, _decode_block_into = ((_c.decode_block, _c.decode_block_into) if _c is not None
                                     else (_py_decode_block, _py_decode_block_into))


# -- streamed blocks -------------------------------------------------------------------------

#: Record offsets of a batch whose base offset is above this may pass int64 (baseOffset +
#: an int32 offsetDelta); only then are they checked one by one.
_OFFSETS_UNCHECKED_MAX = INT64_MAX - INT32_MAX


def _whole_records(data: bytes, limit: int, at: int) -> tuple[int, int, int]:
    """How many of the records at the start of ``data`` are whole, reading only their
    length prefixes (DefaultRecord's ``sizeOfBodyInBytes``): ``(k, end, need)``, the
    first ``k`` (at most ``limit``) records fill ``data[:end]``; ``need`` is the number of
    bytes the record after them takes in all (length varint and body), 0 while its
    length varint is itself cut. ``at`` is the position of ``data`` in the block.

    Raises:
        InvalidRecordError: a negative record size, or a length varint over 5 bytes.
    """
    pos = 0
    n = len(data)
    k = 0
    zz = _ZIGZAG14
    while k < limit and pos < n:
        b = data[pos]
        if b < 0x80:
            length = zz[b]
            q = pos + 1
        else:
            try:
                length, q = read_varint(data, pos)
            except InvalidRecordError:
                if n - pos >= 5:
                    raise
                return k, pos, 0  # the varint goes on in the next piece
        if length < 0:
            raise InvalidRecordError(f"Invalid record size {length} at byte {at + q} of the "
                                     "records block")
        if q + length > n:
            return k, pos, q + length - pos
        pos = q + length
        k += 1
    return k, pos, 0


def _decode_piece(data: bytes, count: int, base_offset: int, base_timestamp: int,
                  log_append_time: int | None, at: int) -> list[Record]:
    out = _decode_block(data, count, base_offset, base_timestamp, at)
    if log_append_time is not None:
        out = [_tuple_new(Record, (r[0], log_append_time, r[2], r[3], r[4])) for r in out]
    return out


def _record_pieces(pieces: Iterator[bytes], count: int) -> Iterator[tuple[bytes, int, int]]:
    """Cut a block that arrives in ``pieces`` (non-empty bytes) into runs of whole
    records: ``(data, k, at)``, ``data`` holding exactly ``k`` records and starting at
    byte ``at`` of the block, with the count checks of DefaultRecordBatch's
    ``RecordIterator`` (``count`` records, then nothing left: "records still remaining";
    the block ending before them: "premature EOF"). Only the length prefixes are read
    here: decoding each run checks the records themselves. A record cut between pieces
    waits for the rest; memory holds a piece and the one record being completed."""
    remaining = count
    at = 0  # position in the block of held[0]
    held: list[bytes] = []
    size = need = 0
    nxt = next(pieces, None)
    while nxt is not None:
        piece = nxt
        nxt = next(pieces, None)
        held.append(piece)
        size += len(piece)
        if nxt is not None and size < need:
            continue  # the record being completed needs more
        data = held[0] if len(held) == 1 else b"".join(held)
        k, end, need = _whole_records(data, remaining, at)
        if k:
            yield (data if end == len(data) else data[:end]), k, at
            remaining -= k
        if not remaining and (end < len(data) or nxt is not None):
            # ensureNoneRemaining: more bytes follow the declared count
            raise InvalidRecordError("Incorrect declared batch size, records still remaining "
                                     "in file")
        at += end
        rest = data[end:] if end else data
        held = [rest] if rest else []
        size = len(rest)
    if remaining:
        # the block ends inside (or before) a record: the whole-block decoder's error
        _decode_block(held[0] if held else b"", remaining, 0, 0, at)
        raise InvalidRecordError("Incorrect declared batch size, premature EOF reached")


def _stream_records(pieces: Iterator[bytes], count: int, base_offset: int,
                    base_timestamp: int, log_append_time: int | None) -> Iterator[Record]:
    """The records of a block that arrives in ``pieces``, decoded a run of whole records
    at a time (:func:`_record_pieces`)."""
    for data, k, at in _record_pieces(pieces, count):
        yield from _decode_piece(data, k, base_offset, base_timestamp, log_append_time, at)


def _view_pieces(view, start: int, end: int) -> Iterator[bytes]:
    """``view[start:end]`` as bytes, :data:`DECODE_CHUNK_BYTES` at a time."""
    for p in range(start, end, DECODE_CHUNK_BYTES):
        yield bytes(view[p:min(p + DECODE_CHUNK_BYTES, end)])


def _checked_offsets(records, base_offset: int) -> Iterator[Record]:
    """``records``, refusing an offset past int64 (a corrupt base offset: it is outside
    the CRC)."""
    for r in records:
        if r[0] > INT64_MAX:
            raise InvalidRecordError(f"Record offset overflows int64: baseOffset {base_offset} "
                                     f"+ offsetDelta {r[0] - base_offset}")
        yield r


def _peek_pieces(pieces: Iterator[bytes]) -> tuple[bytes, Iterator[bytes] | None]:
    """``(first piece, None)`` when ``pieces`` holds at most one, else ``(first piece,
    an iterator of them all)``."""
    first = next(pieces, b"")
    second = next(pieces, None)
    if second is None:
        return first, None
    return first, chain((first, second), pieces)


# -- columnar decode -------------------------------------------------------------------------

def decode_records_into(data, count: int, base_offset: int, base_timestamp: int,
                        log_append_time: int | None, offsets, timestamps, keys: list,
                        values: list, headers: list | None = None) -> int:
    """:func:`decode_records`, appending to caller-owned columns instead of building a
    :class:`Record` per record; returns the number of records appended (``count``).

    ``offsets`` and ``timestamps`` take ints (lists, or ``array('q')``), ``keys`` and
    ``values`` bytes or None, ``headers`` (when given) each record's headers tuple as in
    :attr:`Record.headers` (``()`` for none). With ``headers`` None the headers are still
    parsed and checked, then dropped. Values, validation and errors are exactly
    :func:`decode_records`' (tests compare both on every fixture and corpus batch); when
    it raises, every column is left as it was.

    Raises:
        InvalidRecordError: as :func:`decode_records`.
    """
    if data.__class__ is not bytes:
        data = bytes(data)
    n0 = len(offsets)
    cols = (offsets, timestamps, keys, values) if headers is None else (
        offsets, timestamps, keys, values, headers)
    lens = [len(c) for c in cols]
    try:
        _decode_block_into(data, count, base_offset, base_timestamp, 0, offsets.append,
                           timestamps.append, keys.append, values.append,
                           None if headers is None else headers.append)
    except BaseException:
        for c, n in zip(cols, lens, strict=True):
            del c[n:]
        raise
    if log_append_time is not None and count:
        del timestamps[n0:]
        timestamps.extend([log_append_time] * count)
    return count


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


def record_columns(batch: RecordBatch, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
                   ) -> Iterator[tuple[list, list, list]]:
    """The offsets, timestamps and keys of a v2 batch's records (values and headers are
    parsed and checked, then dropped), a run of whole records at a time
    (:meth:`RecordBatch.record_pieces`): ``(offsets, timestamps, keys)`` lists per run, so
    memory stays bounded whatever ``recordsCount``. The values and errors of
    :meth:`RecordBatch.iter_records`, without a :class:`Record` per record: for callers
    that fold over every record (the log validator's summary).

    Raises (as the runs are reached):
        InvalidRecordError / CorruptRecordError: as :meth:`RecordBatch.iter_records`.
    """
    base_offset, base_ts = batch[2], batch[9]
    lat = batch[10] if batch[7] & 8 else None  # TIMESTAMP_TYPE_MASK: LogAppendTime
    dropped = deque(maxlen=0).append
    for data, k, at in batch.record_pieces(max_bytes):
        offsets: list = []
        timestamps: list = []
        keys: list = []
        _decode_block_into(data, k, base_offset, base_ts, at, offsets.append,
                           timestamps.append, keys.append, dropped, None)
        if base_offset > _OFFSETS_UNCHECKED_MAX:
            for _ in _checked_offsets([(o,) for o in offsets], base_offset):
                pass
        if lat is not None:
            timestamps = [lat] * k
        yield offsets, timestamps, keys


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
        return self[2] + self[8]

    @property
    def next_offset(self) -> int:
        return self[2] + self[8] + 1

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
        return self[2] + 1

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


# -- batches of a buffer ---------------------------------------------------------------------

def offset_overflow(base_offset: int, last_offset_delta: int, file, position: int
                    ) -> CorruptRecordError:
    """The error for a batch whose next offset (``baseOffset + lastOffsetDelta + 1``) does
    not fit int64: the base offset is outside the CRC, so one edited field makes every
    offset of the batch (and the log end offset) meaningless. Kafka's Java longs would
    wrap; the batch is corrupt."""
    what = (f"baseOffset {base_offset} + lastOffsetDelta {last_offset_delta}"
            if last_offset_delta else f"offset {base_offset}")
    return CorruptRecordError(f"Record batch is corrupt: its offsets overflow int64 ({what} "
                              f"leaves no next offset below 2^63)",
                              file=None if file is None else str(file), position=position)


class FileRecords:
    """Batches of a buffer, iterated as ``FileLogInputStream.nextBatch`` does.

    ``view`` is a bytes-like object (bytes, mmap, memoryview) holding a ``.log`` or a part
    of it; ``start``/``end`` bound the iteration (byte positions in ``view``).

    After :meth:`batches` is exhausted, :attr:`valid_end` is the position after the last
    whole batch, and :attr:`stop_error` says why iteration stopped before ``end`` (None:
    a partial batch or the end was reached). Iteration never raises on bad bytes: a size
    below the minimum overhead (Kafka's ``CorruptRecordException``), or a batch whose
    offsets overflow int64 (:func:`offset_overflow`; kafkalog's check, as no offset can
    pass 2^63 - 1), ends it with ``stop_error`` set, so callers report the rest as
    invalid bytes.
    """

    __slots__ = ("view", "start", "end", "file", "valid_end", "stop_error")

    def __init__(self, view, start: int = 0, end: int | None = None, file=None):
        if start < 0:  # struct would read from the buffer's end (or raise struct.error)
            raise InvalidArgumentError(f"Invalid start position {start}: must be >= 0",
                                       file=file)
        self.view = view if isinstance(view, memoryview) else memoryview(view)
        self.start = start
        self.end = len(self.view) if end is None else min(end, len(self.view))
        self.file = file
        self.valid_end = start
        self.stop_error: CorruptRecordError | None = None

    @property
    def invalid_bytes(self) -> int:
        """Bytes after the last whole batch (valid once iteration has finished)."""
        return self.end - self.valid_end

    def batches(self) -> Iterator[RecordBatch | LegacyRecordBatch]:
        """Each whole batch from ``start`` to ``end``, shallowly (no CRC check): an
        iterator with ``close()``, whose end (exhausted, closed or dropped) sets
        :attr:`valid_end`, as a generator's ``finally`` would (the compiled core's
        iterator, or :meth:`_batches`)."""
        if _c is not None:
            return _c.BatchIterator(self, self.view, self.start, self.end)
        return self._batches()

    def _step(self, pos: int):
        """For the compiled iterator: the batch at ``pos`` that its v2 fast path did not
        take, read as :meth:`_batches` reads it, as ``(batch, next position)``; None
        where iteration ends (:attr:`stop_error` set for a bad size or offset, or a
        legacy entry that does not parse)."""
        view, end = self.view, self.end
        try:
            offset, size = _OFFSET_SIZE.unpack_from(view, pos)
            if size < LEGACY_RECORD_OVERHEAD_V0:
                self.stop_error = RecordOverheadError(
                    f"Found record size {size} smaller than minimum record overhead "
                    f"({LEGACY_RECORD_OVERHEAD_V0})", file=self.file, position=pos)
                return None
            nxt = pos + LOG_OVERHEAD + size
            if nxt > end:
                return None
            magic = view[pos + MAGIC_OFFSET]
            if magic > 127:  # a signed byte, as FileLogInputStream reads it
                magic -= 256
            if magic >= MAGIC_V2:
                if size < MIN_BATCH_LENGTH:
                    self.stop_error = CorruptRecordError(
                        f"Record batch is corrupt (the size {size + LOG_OVERHEAD} is "
                        f"smaller than the minimum allowed overhead {RECORD_BATCH_OVERHEAD})",
                        file=self.file, position=pos)
                    return None
                h = HEADER.unpack_from(view, pos)
                if h[0] + h[6] >= INT64_MAX:
                    self.stop_error = offset_overflow(h[0], h[6], self.file, pos)
                    return None
                return _tuple_new(RecordBatch, (view, pos) + h), nxt
            if offset >= INT64_MAX:
                self.stop_error = offset_overflow(offset, 0, self.file, pos)
                return None
            return _legacy_entry(view, pos, offset, size), nxt
        except CorruptRecordError as e:
            e.file = e.file or (None if self.file is None else str(self.file))
            e.position = pos if e.position is None else e.position
            self.stop_error = e
            return None

    def _batches(self) -> Iterator[RecordBatch | LegacyRecordBatch]:
        """:meth:`batches` in Python (the reference; :meth:`_step` is its slow path)."""
        view = self.view
        pos = self.start
        end = self.end
        limit = end - HEADER_SIZE_UP_TO_MAGIC
        v2_limit = end - RECORD_BATCH_OVERHEAD
        unpack = HEADER.unpack_from
        tnew = _tuple_new
        # a base offset at or below this cannot overflow with an int32 lastOffsetDelta;
        # above it, the slow path checks the sum (one compare with a local per batch)
        safe_base = _OFFSETS_UNCHECKED_MAX
        # the layout as fast locals (the loop runs once per batch)
        log_overhead, magic_v2, min_length = LOG_OVERHEAD, MAGIC_V2, MIN_BATCH_LENGTH
        try:
            while pos < limit:
                if pos <= v2_limit:
                    # Fast path: unpack the 61-byte v2 header at once; a legacy entry or a
                    # bad size falls through to the checks below, which reread the prefix.
                    h = unpack(view, pos)
                    nxt = pos + log_overhead + h[1]
                    # MAGIC_V2, 61 - 12, whole, and a base offset that cannot overflow
                    if h[3] >= magic_v2 and h[1] >= min_length and nxt <= end and \
                            h[0] <= safe_base:
                        yield tnew(RecordBatch, (view, pos) + h)
                        pos = nxt
                        continue
                # anything else, one step the slow way (None: iteration ends here)
                step = self._step(pos)
                if step is None:
                    break
                batch, nxt = step
                yield batch
                pos = nxt
        finally:
            self.valid_end = pos

    def __iter__(self):
        return self.batches()


def batch_at(view, position: int) -> RecordBatch | LegacyRecordBatch | None:
    """The whole batch starting at ``position`` of ``view``, or None when the bytes there
    are not a whole batch (used to check an index entry's position)."""
    fr = FileRecords(view, position)
    for batch in fr.batches():
        return batch
    return None


def v2_batch_at(view, position: int) -> RecordBatch:
    """The v2 batch whose 61-byte header starts at ``position`` of ``view``, read without
    any check: for positions a scan has already found to be whole v2 batches (the
    producer batches of a recovery scan)."""
    return _tuple_new(RecordBatch, (view, position) + HEADER.unpack_from(view, position))


# -- scanning without batch objects ------------------------------------------------------------

class BatchScan:
    """What :func:`scan_batches` found in ``view[start:end]``.

    Attributes:
        batches: whole batches (v2 batches and legacy entries).
        records: sum of ``recordsCount`` over the v2 batches (legacy entries are counted in
            ``legacy`` only: counting a compressed wrapper's messages needs decompression).
        legacy: whole v0/v1 entries among ``batches``.
        invalid: positions of the batches whose CRC does not match (CRC-32C for v2, CRC-32
            for legacy), in file order.
        first_offset / last_offset: base offset of the first batch and last offset of the
            last one (None without batches); as :attr:`RecordBatch.base_offset` and
            ``last_offset``.
        valid_end, stop_error: as :class:`FileRecords` after iteration.
    """

    __slots__ = ("start", "end", "batches", "records", "legacy", "invalid", "first_offset",
                 "last_offset", "valid_end", "stop_error")

    def __init__(self, start, end, batches, records, legacy, invalid, first_offset,
                 last_offset, valid_end, stop_error):
        self.start = start
        self.end = end
        self.batches = batches
        self.records = records
        self.legacy = legacy
        self.invalid = invalid
        self.first_offset = first_offset
        self.last_offset = last_offset
        self.valid_end = valid_end
        self.stop_error = stop_error

    @property
    def invalid_bytes(self) -> int:
        """Bytes after the last whole batch."""
        return self.end - self.valid_end

    def __repr__(self) -> str:
        return (f"BatchScan(batches={self.batches}, records={self.records}, "
                f"legacy={self.legacy}, invalid={len(self.invalid)}, "
                f"offsets={self.first_offset}..{self.last_offset}, valid_end={self.valid_end}, "
                f"invalid_bytes={self.invalid_bytes}, stop_error={self.stop_error!r})")


def scan_batches(view, start: int = 0, end: int | None = None, file=None) -> BatchScan:
    """Walk the batches of ``view[start:end]`` and check every CRC, without creating a
    batch object per batch: the fast path for consumers that need only the headers'
    aggregates and CRC validity (verify, summaries). Iterates exactly as
    :meth:`FileRecords.batches` does (same ``valid_end`` and ``stop_error``).

    v2 batches take a tight loop (one header unpack and one CRC-32C each); legacy entries
    and anything unusual (a partial or undersized batch at the end) go through
    :class:`FileRecords` one step at a time.
    """
    mv = view if isinstance(view, memoryview) else memoryview(view)
    end = len(mv) if end is None else min(end, len(mv))
    crc = _crc32c_fn or _load_crc32c()
    safe_base = _OFFSETS_UNCHECKED_MAX  # above it, FileRecords checks the offsets
    unpack = HEADER.unpack_from
    v2_limit = end - RECORD_BATCH_OVERHEAD
    # the layout as fast locals (the loop runs once per batch)
    log_overhead, magic_v2, min_length, crc_from = (LOG_OVERHEAD, MAGIC_V2, MIN_BATCH_LENGTH,
                                                    ATTRIBUTES_OFFSET)
    pos = start
    nb = nrec = legacy = 0
    invalid: list[int] = []
    last_pos = -1
    stop_error = None
    while True:
        if _c is not None:  # the same loop, compiled
            pos, k, r, lp = _c.scan_v2(mv, pos, end, invalid)
            if k:
                nb += k
                nrec += r
                last_pos = lp
        while pos <= v2_limit:
            h = unpack(mv, pos)
            nxt = pos + log_overhead + h[1]
            # not MAGIC_V2, undersized, partial, or offsets that may pass int64
            if h[3] < magic_v2 or h[1] < min_length or nxt > end or h[0] > safe_base:
                break
            if crc(mv[pos + crc_from:nxt]) != h[4]:
                invalid.append(pos)
            nrec += h[12]
            last_pos = pos
            pos = nxt
            nb += 1
        if pos >= end - HEADER_SIZE_UP_TO_MAGIC:
            break
        fr = FileRecords(mv, pos, end, file)
        it = fr.batches()
        batch = next(it, None)
        it.close()
        if batch is None:
            stop_error = fr.stop_error
            break
        nb += 1
        if not batch.is_valid:
            invalid.append(pos)
        if batch.__class__ is RecordBatch:
            nrec += batch[14]
        else:
            legacy += 1
        last_pos = pos
        pos = batch.next_position
    first_offset = last_offset = None
    if nb:
        first_offset = batch_at(mv, start).base_offset
        last_offset = batch_at(mv, last_pos).last_offset
    return BatchScan(start, end, nb, nrec, legacy, invalid, first_offset, last_offset, pos,
                     stop_error)


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
