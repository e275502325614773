"""The records of a v2 batch, after Kafka's ``DefaultRecord`` (``readFrom``,
``readPartiallyFrom``): the record decode loop, one template rendered for two consumers
(:class:`Record` tuples, and columns for Arrow and the validator), the streamed decode of
a compressed batch's records in bounded pieces, and their twins in the compiled core
(``format/_speedups.c``).

:class:`Record` - a tuple ``(offset, timestamp, key, value, headers)``: absolute offset,
timestamp in ms, key/value as bytes or None, headers a tuple of ``(str, bytes|None)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from operator import itemgetter

from ..constants import DECODE_CHUNK_BYTES, INT32_MAX, INT64_MAX
from ..errors import InvalidRecordError
from ..schema.utf8 import java_utf8
from .compiled import _c
from .varint import read_varint

_tuple_new = tuple.__new__

#: Zigzag-decoded values of the 14 payload bits of a one- or two-byte varint, indexed by
#: ``b0 & 0x7F | b1 << 7`` (a one-byte varint is its own index): a list lookup is ~3x faster
#: than the shift/xor arithmetic in the interpreter. Zigzag maps even v to v >> 1 and odd v
#: to -(v >> 1) - 1: two slice assignments (~0.1 ms) instead of 16384 expressions (~1.4 ms).
ZIGZAG14 = [0] * (1 << 14)
ZIGZAG14[0::2] = range(1 << 13)
ZIGZAG14[1::2] = range(-1, -(1 << 13) - 1, -1)
_ZIGZAG14 = ZIGZAG14


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
        exec(compile(src, f"<kafkalog_cli.format.record._DECODE_LOOP:{name}>", "exec"),
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
    """``view[start:end]`` as non-empty bytes, :data:`DECODE_CHUNK_BYTES` at a time.
    ``end`` is cut to the view's end: a batch tuple whose ``length`` claims more than
    its buffer holds would otherwise give an empty piece per chunk of the claim (2^46 of
    them for a length near 2^62, each one more turn of the record loop)."""
    end = min(end, len(view))
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
