"""Vectorised decode of many v2 records blocks at once (numpy + pyarrow), for the readers
that take whole blocks (the Spark rows layer, :mod:`kafkalog_cli.spark.rows`, and
``audit``): a format decoder, beside :mod:`.records` whose loop is its reference.

The per-record Python loop of :func:`~kafkalog_cli.format.records.decode_records_into`
costs ~1 us a record. Here Python only walks the chain of record lengths
(:func:`scan_lengths`, ~0.15 us a record); every other field is read with numpy over a
whole group of blocks, and keys and values are cut out of the blocks by pyarrow's
``take`` (no Python bytes per record).

It handles the common shape only: every varint of one or two bytes (deltas, lengths
below 8 KiB), no headers. Anything else (a longer varint, headers, a malformed record)
makes :func:`decode_group` return None, and the caller decodes those blocks with
``decode_records_into``, whose values and errors are the reference. A group is accepted
only when every record parses exactly as ``decode_records`` would parse it (each field
inside its record, the record consumed exactly, the lengths chain ending exactly at the
block's end after ``count`` records), so the values are the same; tests compare both on
generated data, the fixtures and the real corpus.

numpy is optional: :data:`AVAILABLE` is False without it, and the group decode in Python
is then off. The compiled core's :func:`decode_rows` needs no numpy (:data:`ROWS`), so
the rows layer keeps its group path with the core and pyarrow alone. numpy and pyarrow
are imported by the first group decode, not with this module (their imports cost 0.13 s
of CPU, measured, more than a small input's whole run): :func:`scan_lengths` needs
neither.
"""

from __future__ import annotations

from importlib.util import find_spec

from .compiled import _c as _core
from .record import ZIGZAG14, decode_records_into

#: whether numpy is installed (the group decode needs it; found without importing it)
AVAILABLE = find_spec("numpy") is not None
#: whether :func:`decode_rows` can run: the compiled core's needs pyarrow only, the Python
#: one numpy too
ROWS = _core is not None or AVAILABLE


def without_numpy() -> bool:
    """Keep numpy out of this process when the compiled core is in use: ``import numpy``
    then raises ImportError (a ``None`` entry in ``sys.modules``), pyarrow loads without
    it as it supports, and :data:`AVAILABLE` turns False (the Python group decode is not
    used; the core's :func:`decode_rows` needs no numpy). numpy's import is ~50 ms of CPU
    (measured), a fifth of a small ``export``'s whole run.

    Only for a caller that owns the process and imports nothing else after (the CLI): a
    library call must not hide a module from its host. Returns whether numpy is now kept
    out (False without the core, or when numpy is already imported)."""
    global AVAILABLE
    import sys

    loaded = sys.modules.get("numpy", False)   # False: never imported; None: kept out
    if _core is not None and loaded is False:
        sys.modules["numpy"] = None
        AVAILABLE = False
        return True
    return loaded is None


_SKIP: list[int] | None = None
_BAD = 1 << 40  # a step past any block: the chain then fails its end check


def _skip_table() -> list[int]:
    """Bytes from a record's start to the next record's, indexed by the record's first two
    bytes ``b0 | b1 << 8``: 1 + length for a one-byte length varint, 2 + length for a
    two-byte one; :data:`_BAD` for a negative length or a longer varint."""
    global _SKIP
    if _SKIP is None:
        t = [_BAD] * 65536
        for b0 in range(256):
            for b1 in range(256):
                if b0 < 0x80:
                    n, w = ZIGZAG14[b0], 1
                elif b1 < 0x80:
                    n, w = ZIGZAG14[(b0 & 0x7F) | (b1 << 7)], 2
                else:
                    continue
                if n >= 0:
                    t[b0 | b1 << 8] = w + n
        _SKIP = t
    return _SKIP


def _py_scan_lengths(data: bytes, count: int, positions: list) -> bool:
    """Append the position in ``data`` of each of the ``count`` records of a records block
    (where its length varint starts). False (and nothing appended) unless each length is
    a one- or two-byte varint >= 0 and the records end exactly at the end of ``data``."""
    skip = _SKIP or _skip_table()
    append = positions.append
    n0 = len(positions)
    pos = 0
    try:
        for _ in range(count):
            append(pos)
            pos += skip[data[pos] | data[pos + 1] << 8]
    except IndexError:
        pos = -1
    if pos == len(data) and count > 0:
        return True
    del positions[n0:]
    return False


def _py_decode_group(buf: bytes, positions: list, bases: list, counts: list):
    """Decode the records of the blocks joined in ``buf``: block j starts at
    ``bases[j]`` and holds ``counts[j]`` records, whose positions in the block
    :func:`scan_lengths` listed in ``positions``.

    Returns ``(timestamp_deltas, offset_deltas, keys, values)`` (int64 arrays, pyarrow
    binary arrays), or None when a record is not in the fast shape (see the module).
    """
    import numpy as np
    import pyarrow as pa

    a = np.frombuffer(buf, np.uint8)
    last = len(a) - 1
    if last < 0 or not positions:
        return None
    v = np.array(positions, np.int64)
    v += np.repeat(np.array(bases, np.int64), counts)
    # a record ends where the next one starts (blocks are contiguous in buf)
    e = np.empty_like(v)
    e[:-1] = v[1:]
    e[-1] = len(a)
    s = v + 1 + (a[v] >= 0x80)  # the body, after the length varint

    def varint(p):
        # a one- or two-byte zigzag varint at p (inside the record), else not ok
        b0 = a[np.minimum(p, last)].astype(np.int64)
        two = b0 >= 0x80
        b1 = a[np.minimum(p + 1, last)].astype(np.int64)
        ok = (p < e) & (~two | ((p + 1 < e) & (b1 < 0x80)))
        v = np.where(two, (b0 & 0x7F) | (b1 << 7), b0)
        return (v >> 1) ^ -(v & 1), p + 1 + two, ok

    # attributes (1 byte), timestampDelta, offsetDelta, key, value, header count 0
    ts, p, ok = varint(s + 1)
    od, p, ok2 = varint(p)
    ok &= ok2
    klen, p, ok2 = varint(p)
    ok &= ok2
    kpos = p
    p = p + np.maximum(klen, 0)
    vlen, p, ok2 = varint(p)
    ok &= ok2
    vpos = p
    p = p + np.maximum(vlen, 0)
    ok &= (p + 1 == e) & (a[np.minimum(p, last)] == 0)
    if not ok.all():
        return None
    # keys and values: a binary array over buf whose elements alternate key, gap, value,
    # gap (monotonic offsets, as records are in order), then take the keys and values
    n = len(s)
    bounds = np.empty(4 * n, np.int64)
    bounds[0::4] = kpos
    bounds[1::4] = kpos + np.maximum(klen, 0)
    bounds[2::4] = vpos
    bounds[3::4] = vpos + np.maximum(vlen, 0)
    if len(a) < 2 ** 31:
        spans = pa.Array.from_buffers(pa.binary(), 4 * n - 1,
                                      [None, pa.py_buffer(bounds.astype(np.int32)),
                                       pa.py_buffer(buf)])
    else:
        spans = pa.Array.from_buffers(pa.large_binary(), 4 * n - 1,
                                      [None, pa.py_buffer(bounds), pa.py_buffer(buf)])
    keys = _with_nulls(spans.take(int64_array(np.arange(0, 4 * n, 4))), klen, pa)
    values = _with_nulls(spans.take(int64_array(np.arange(2, 4 * n, 4))), vlen, pa)
    return ts, od, keys, values


def _py_decode_blocks(blocks: list, positions: list, counts: list):
    """:func:`decode_group` of ``blocks`` joined, block j holding ``counts[j]`` records at
    ``positions`` (relative to the block), when each block's records end at its end in
    the joined buffer (as :func:`scan_lengths` finds them); None otherwise."""
    bases, size, ends_ok, r, gap = [], 0, True, 0, 0
    for blk, k in zip(blocks, counts, strict=True):
        bases.append(size)
        size += len(blk)
        if k > 0:
            # the previous non-empty block's records end at this block's first record
            ends_ok = ends_ok and (r == 0 or positions[r] == 0 and gap == 0)
            gap, r = 0, r + k
        elif r:
            gap += len(blk)
    if not ends_ok or (r and gap):  # bytes after the last non-empty block, too
        return None
    return _py_decode_group(b"".join(blocks), positions, bases, counts)


def _arrow_columns(got, n: int):
    """The compiled core's group decode (Arrow buffers, or None) as
    ``(timestamp_deltas, offset_deltas, keys, values)``."""
    if got is None:
        return None
    import numpy as np
    import pyarrow as pa

    ts, od, koff, voff, kdata, vdata, kvalid, vvalid, knulls, vnulls = got
    keys = pa.Array.from_buffers(pa.binary(), n, [pa.py_buffer(kvalid) if knulls else None,
                                                  pa.py_buffer(koff), pa.py_buffer(kdata)],
                                 null_count=knulls)
    values = pa.Array.from_buffers(pa.binary(), n, [pa.py_buffer(vvalid) if vnulls else None,
                                                    pa.py_buffer(voff), pa.py_buffer(vdata)],
                                   null_count=vnulls)
    return np.frombuffer(ts, np.int64), np.frombuffer(od, np.int64), keys, values


def _core_decode_group(buf: bytes, positions, bases: list, counts: list):
    """:func:`_py_decode_group` by the compiled core: the same records accepted, the same
    values, built from the Arrow buffers it fills (int32 offsets, validity bitmaps)
    without numpy's passes over the group."""
    return _arrow_columns(_core.decode_group(buf, positions, bases, counts),
                          _npositions(positions))


def _core_decode_blocks(blocks: list, positions, counts: list):
    """:func:`_py_decode_blocks` by the compiled core: the blocks are read where they
    are (no joined copy), keys and values copied once, into the Arrow data buffers."""
    return _arrow_columns(_core.decode_blocks(blocks, positions, counts),
                          _npositions(positions))


def _npositions(positions) -> int:
    return len(positions) // 8 if positions.__class__ is bytearray else len(positions)


def new_positions():
    """An empty positions container for :func:`scan_lengths`, :func:`decode_group` and
    :func:`decode_blocks`: with the compiled core a bytearray of native int64s (no int
    object per record), else a list."""
    return [] if _core is None else bytearray()


#: scan_lengths(data, count, positions) -> bool: append the position in ``data`` of each of
#: the ``count`` records of a records block (where its length varint starts); False (and
#: nothing appended) unless each length is a one- or two-byte varint >= 0 and the records
#: end exactly at the end of ``data``. The compiled core's twin when it is in use.
scan_lengths = _py_scan_lengths if _core is None else _core.scan_lengths

#: decode_group(buf, positions, bases, counts): decode the records of the blocks joined in
#: ``buf`` (block j starts at ``bases[j]`` and holds ``counts[j]`` records, whose
#: positions :func:`scan_lengths` listed in ``positions``) -> ``(timestamp_deltas,
#: offset_deltas, keys, values)`` (int64 arrays, pyarrow binary arrays), or None when a
#: record is not in the fast shape (see the module).
decode_group = _py_decode_group if _core is None else _core_decode_group

#: decode_blocks(blocks, positions, counts): :func:`decode_group` of the list ``blocks``
#: joined (block j holding ``counts[j]`` records at ``positions``, relative to it), when
#: each block's records end at its end (as :func:`scan_lengths` finds them), else None;
#: the compiled core reads the blocks in place.
decode_blocks = _py_decode_blocks if _core is None else _core_decode_blocks


def _py_decode_rows(blocks: list, positions, counts: list, base_offsets: list,
                    base_timestamps: list, append_times: list):
    """:func:`decode_blocks` of the blocks, with each record's absolute offset and
    timestamp: block j is of a batch whose baseOffset and baseTimestamp are
    ``base_offsets[j]`` and ``base_timestamps[j]`` and ``append_times[j]`` its
    maxTimestamp when it is LogAppendTime (every record takes it), else None. None too
    when a count is not positive, a base is not within +-2**62 (the int64 sums could wrap
    where Kafka's longs would not), or the blocks reach 2 GiB.

    Returns ``(offsets, timestamps_us, keys, values)`` (pyarrow int64 arrays, the
    timestamps in microseconds, the product wrapping in int64; binary arrays), or None
    when a record is not in the fast shape.
    """
    import numpy as np

    limit = 1 << 62
    if (not counts or min(counts) <= 0 or sum(len(b) for b in blocks) >= (1 << 31) - 1
            or any(not -limit < x < limit for x in base_offsets)
            or any(not -limit < x < limit for x in base_timestamps)
            or any(x is not None and not -limit < x < limit for x in append_times)):
        return None  # as the core: every block holds records, int32 Arrow offsets
    got = decode_blocks(blocks, positions, counts)
    if got is None:
        return None
    ts_delta, off_delta, keys, values = got
    k = len(counts)
    cnt = np.fromiter(counts, np.int64, k)
    offsets = np.repeat(np.fromiter(base_offsets, np.int64, k), cnt) + off_delta
    ts = np.repeat(np.fromiter(base_timestamps, np.int64, k), cnt) + ts_delta
    if any(t is not None for t in append_times):
        lat = np.repeat(np.array([t is not None for t in append_times], bool), cnt)
        fixed = np.repeat(np.fromiter((0 if t is None else t for t in append_times),
                                      np.int64, k), cnt)
        ts = np.where(lat, fixed, ts)
    return int64_array(offsets), int64_array(ts * 1000), keys, values


def _core_decode_rows(blocks: list, positions, counts: list, base_offsets: list,
                      base_timestamps: list, append_times: list):
    """:func:`_py_decode_rows` by the compiled core, which walks each block's lengths
    itself (``positions`` is not used) and writes the columns into buffers of pyarrow's
    memory pool (no fresh pages per group, no numpy pass)."""
    import pyarrow as pa

    if not counts or min(counts) <= 0:
        return None  # the core's answer, before buffers of a size from these counts
    n = sum(counts)
    total = sum(len(b) for b in blocks)
    if 7 * n > total:
        # more records than the blocks can hold (each takes at least 7 bytes: its length,
        # attributes, two deltas, the key and value lengths, the headers count): a
        # batch's recordsCount is read from its header, and the buffers below are sized
        # from it, so a hostile count must not size them
        return None
    bits = (n + 7) // 8
    out = [pa.allocate_buffer(size) for size in
           (8 * n, 8 * n, 4 * (n + 1), 4 * (n + 1), total, total, bits, bits)]
    got = _core.decode_rows(blocks, counts, base_offsets, base_timestamps, append_times, out)
    if got is None:
        return None
    klen, vlen, knulls, vnulls = got
    offsets = pa.Array.from_buffers(pa.int64(), n, [None, out[0]])
    ts = pa.Array.from_buffers(pa.int64(), n, [None, out[1]])
    keys = pa.Array.from_buffers(pa.binary(), n, [out[6] if knulls else None, out[2],
                                                  out[4].slice(0, klen)], null_count=knulls)
    values = pa.Array.from_buffers(pa.binary(), n, [out[7] if vnulls else None, out[3],
                                                    out[5].slice(0, vlen)], null_count=vnulls)
    return offsets, ts, keys, values


def int64_array(a):
    """A numpy int64 array as a pyarrow int64 array over the same memory (not
    ``pa.array``, whose numpy path imports numpy.ma, ~9 ms of CPU)."""
    import numpy as np
    import pyarrow as pa

    a = np.ascontiguousarray(a, np.int64)
    return pa.Array.from_buffers(pa.int64(), len(a), [None, pa.py_buffer(a)])


def bool_array(a):
    """A numpy bool array as a pyarrow boolean array (bits packed; not ``pa.array``, see
    :func:`int64_array`)."""
    import numpy as np
    import pyarrow as pa

    bits = np.packbits(np.asarray(a, bool), bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(a), [None, pa.py_buffer(bits)])


#: decode_rows(blocks, positions, counts, base_offsets, base_timestamps, append_times) ->
#: ``(offsets, timestamps_us, keys, values)`` as pyarrow arrays, or None: the records of
#: the blocks with absolute offsets and timestamps (see :func:`_py_decode_rows`). The
#: compiled core walks the lengths itself (:data:`SCANS_LENGTHS`).
decode_rows = _py_decode_rows if _core is None else _core_decode_rows

#: whether :func:`decode_rows` walks the blocks' record lengths itself: the caller then
#: need not call :func:`scan_lengths` per block (``positions`` may stay empty), and a
#: block of another shape makes the whole call None rather than being refused alone.
SCANS_LENGTHS = _core is not None


def _with_nulls(arr, lengths, pa):
    """``arr`` as a binary array, null where ``lengths`` < 0."""
    if arr.type != pa.binary():
        arr = arr.cast(pa.binary())
    null = lengths < 0
    if not null.any():
        return arr
    import pyarrow.compute as pc

    return pc.if_else(bool_array(null), pa.scalar(None, pa.binary()), arr)


def check_block(data: bytes, count: int) -> None:
    """Decode the ``count`` records of ``data`` (a records block, or a run of whole
    records of one) into nothing: vectorised when the block has the common shape, else
    by ``decode_records_into``, whose errors are the reference.

    Raises:
        InvalidRecordError: as ``decode_records_into``.
    """
    if AVAILABLE and count > 0:
        positions: list[int] = []
        if scan_lengths(data, count, positions) and \
                decode_group(data, positions, [0], [count]) is not None:
            return
    sink: list = []
    decode_records_into(data, count, 0, 0, None, sink, sink, sink, sink, None)
