"""The pure-Python record encoder: ``DefaultRecord.writeTo`` over a batch's records, the
reference for the compiled encoder (``_encode.c``) and the fallback when it is not built
(``KAFKALOG_PURE_PYTHON=1``) or does not take the records. :mod:`.builder` is the API and
imports this module on first need, so the lookup tables below (about 8 ms to build) cost
nothing when the compiled encoder does the work.

Records are ``(timestamp, key, value, headers)``: timestamp in ms, key/value bytes or
None, headers a sequence of ``(str, bytes | None)``. Each function returns what its
namesake in :mod:`.builder` returns, with the same bytes and the same errors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import add as _add

from ..constants import NO_TIMESTAMP
from .varint import varint_bytes

# varints of -64..16383 (lengths, deltas: the common cases) are precomputed; zigzag of
# a small value is the same in 32 and 64 bits
_VT_LO = -64


def _small_varints() -> list[bytes]:
    """varint(i) for i in -64..16383, i.e. the unsigned varints of their zigzags 0..32767
    laid out by value (one byte below 128, two below 16384, three above), then picked in
    zigzag order: 127, 125, .., 1 for -64..-1 and 0, 2, .., 32766 for 0..16383. Built
    from byte tuples instead of 16,448 varint_bytes calls (8 ms instead of 14 at start-up,
    measured)."""
    unsigned = [bytes((z,)) for z in range(128)] + \
        [bytes((lo, hi)) for hi in range(1, 128) for lo in range(128, 256)] + \
        [bytes((lo, mid, 1)) for mid in range(128, 256) for lo in range(128, 256)]
    return unsigned[127:0:-2] + unsigned[0::2]


_VT = _small_varints()


def _vi(value: int) -> bytes:
    if -64 <= value < 16384:
        return _VT[value + 64]
    return varint_bytes(value)


def _vl(value: int) -> bytes:
    if -64 <= value < 16384:
        return _VT[value + 64]
    return varint_bytes(value, 64)


# varints of -1..16383 (record lengths, key/value lengths, offset deltas), precomputed
_VI_LO = -1
_VI_TABLE = _VT[_VI_LO - _VT_LO:]
# "attributes 0, timestampDelta 0, offsetDelta i" prefixes for the common same-ms case
_PREFIX0 = [b"\x00\x00" + _VI_TABLE[i + 1] for i in range(4096)]
_PREFIX0_LEN = list(map(len, _PREFIX0))
_PREFIX0_LEN1 = [n + 1 for n in _PREFIX0_LEN]  # and a record's empty header count



def _length_field(x) -> tuple[bytes, bytes]:
    """(varint length, bytes) of a key, value or header value (DefaultRecord.writeTo's
    length-prefixed fields); null is length -1 and no bytes."""
    if x is None:
        return b"\x01", b""
    n = len(x)
    return (_VI_TABLE[n + 1] if n < 16383 else _vi(n)), x


def encode_records(records: Iterable, base_timestamp: int, start: int = 0
                       ) -> tuple[bytes, int, int, int]:
    """:func:`encode_records` in Python."""
    out: list = []
    extend = out.extend
    max_ts = NO_TIMESTAMP
    max_delta = -1
    i = start - 1
    table = _VI_TABLE
    prefix0 = _PREFIX0
    for i, (ts, key, value, headers) in enumerate(records, start):
        if ts > max_ts:
            max_ts = ts
            max_delta = i
        td = ts - base_timestamp
        prefix = prefix0[i] if td == 0 and i < 4096 else b"\x00" + _vl(td) + _vi(i)
        # _length_field inlined (a call per field costs this loop ~25%)
        if key is None:
            klb, key = b"\x01", b""
        else:
            klb = table[len(key) + 1] if len(key) < 16383 else _vi(len(key))
        if value is None:
            vlb, value = b"\x01", b""
        else:
            vlb = table[len(value) + 1] if len(value) < 16383 else _vi(len(value))
        hs = _header_section(headers) if headers else b"\x00"
        length = len(prefix) + len(klb) + len(key) + len(vlb) + len(value) + len(hs)
        extend((table[length + 1] if length < 16383 else _vi(length), prefix, klb, key, vlb,
                value, hs))
    return b"".join(out), i + 1 - start, max_ts, max_delta


# encoded header sections (count + entries) of recently seen header tuples
_HDR_CACHE: dict = {}
_HDR_CACHE_MAX = 4096


def _header_section(headers) -> bytes:
    """A record's headers count and headers (a key as UTF-8, a value as a key's field)."""
    parts = [_vi(len(headers))]
    for hk, hv in headers:
        hkb = hk.encode("utf-8") if isinstance(hk, str) else bytes(hk)
        parts += (_vi(len(hkb)), hkb, *_length_field(hv))
    return b"".join(parts)



def encode_columns(timestamps: Sequence, keys: Sequence | None, values: Sequence,
                       headers: Sequence | None, base_timestamp: int
                       ) -> tuple[bytes, int, int, int]:
    """:func:`encode_columns` in Python."""
    n = len(values)
    if keys is None:
        keys = [None] * n
    no_headers = headers is None
    if no_headers:
        headers = [()] * n
    if n == 0 or n > 4096:
        return encode_records(zip(timestamps, keys, values, headers, strict=True),
                              base_timestamp)
    if no_headers and timestamps.count(base_timestamp) == n:
        block = _encode_keyed_cached(keys, values, n)
        if block is not None:
            if base_timestamp <= NO_TIMESTAMP:
                return block, n, NO_TIMESTAMP, -1
            return block, n, base_timestamp, 0
    col = _null_column(keys)
    col2 = _null_column(values) if col is not None else None
    hb = None
    if col2 is not None and not no_headers:
        hb = _header_column(headers)
        if hb is None:  # unhashable headers
            col2 = None
    if col2 is None:
        return encode_records(zip(timestamps, keys, values, headers, strict=True),
                              base_timestamp)
    klb, kfield, ksize = col
    vlb, vfield, vsize = col2
    if timestamps.count(base_timestamp) == n:
        prefix = _PREFIX0[:n]
        plen = _PREFIX0_LEN1[:n] if hb is None else _PREFIX0_LEN[:n]
    else:
        prefix = [b"\x00" + _vl(t - base_timestamp) + _vi(i) for i, t in enumerate(timestamps)]
        plen = [len(p) + (hb is None) for p in prefix]
    # body length: prefix + key field + value field + header section (1 byte when there
    # are none, counted in plen), in C-level adds
    lengths = list(map(_add, map(_add, plen, ksize), vsize))
    if hb is not None:
        lengths = list(map(_add, lengths, map(len, hb)))
    if max(lengths) >= 16384:
        return encode_records(zip(timestamps, keys, values, headers, strict=True),
                              base_timestamp)
    out: list = [None] * (7 * n)
    out[0::7] = map(_VT.__getitem__, map((64).__add__, lengths))
    out[1::7] = prefix
    out[2::7] = klb
    out[3::7] = kfield
    out[4::7] = vlb
    out[5::7] = vfield
    out[6::7] = hb if hb is not None else _ZEROS[:n]
    max_ts = max(timestamps)
    if max_ts <= NO_TIMESTAMP:
        return b"".join(out), n, NO_TIMESTAMP, -1
    return b"".join(out), n, max_ts, timestamps.index(max_ts)


#: b"\x00" (a record's empty header count) n times
_ZEROS = [b"\x00"] * 4096


def _header_column(headers: Sequence) -> list | None:
    """Encoded header sections, cached per header tuple; None for unhashable headers."""
    try:
        return list(map(_HDR_CACHE.__getitem__, headers))
    except KeyError:
        pass
    except TypeError:
        return None
    # resolve this batch from a local table (another thread may clear the cache)
    local: dict = {}
    try:
        for h in headers:
            if h not in local:
                local[h] = _HDR_CACHE.get(h) or _header_section(h)
    except TypeError:
        return None
    if len(_HDR_CACHE) > _HDR_CACHE_MAX:
        _HDR_CACHE.clear()
    _HDR_CACHE.update(local)
    return list(map(local.__getitem__, headers))


def _null_column(col: Sequence) -> tuple[list, Sequence, list] | None:
    """(varint length prefixes, fields with null as b"", the bytes of each prefix and
    field together) of a key or value column; None when a field is too large for the
    precomputed varints."""
    if None in col:
        lens = [-1 if x is None else len(x) for x in col]
        if max(lens) >= 16000:
            return None
        col = [b"" if x is None else x for x in col]
        idx = list(map((64).__add__, lens))
        return list(map(_VT.__getitem__, idx)), col, list(map(_VF.__getitem__, idx))
    lens = list(map(len, col))
    if max(lens) >= 16000:
        return None
    return list(map(_VTN.__getitem__, lens)), col, list(map(_VFN.__getitem__, lens))


#: bytes of a length-prefixed field of n bytes (varint(n) + n), indexed by n + 64; a null
#: field (n = -1) is its one varint byte
_VF = list(map(_add, map(len, _VT), [0] * -_VT_LO + list(range(len(_VT) + _VT_LO))))
#: the same two tables indexed by n >= 0 itself
_VTN = _VT[-_VT_LO:]
_VFN = _VF[-_VT_LO:]


# Record i of a keyless, header-less batch at timestamp delta 0 with an n-byte value is
# ``varint(length) 00 00 varint(i) 01 varint(n) <value> 00``: all but the value depends
# only on (i, n). Those "heads" are cached per value length (each carrying the previous
# record's trailing headers count 00 in front), so a batch is one list interleave and one
# join, with no per-record Python code. Bounded: at most _HEADS_MAX cached heads, and at
# most _HEADS_NEW new lengths per batch (data with many distinct lengths warms the cache
# gradually and uses the loop below meanwhile).
_HEADS: dict[int, list[bytes]] = {}
_HEADS_MAX = 1 << 17
_HEADS_NEW = 8
_HEADS_MAX_LEN = 16000
_heads_cached = 0
_Z_VI = list(map(b"\x00".__add__, _VI_TABLE[1:16385]))


def _build_heads(n: int, k: int) -> list[bytes]:
    vl = _VI_TABLE[n + 1]
    rest = len(vl) + n + 2  # null key 01, the length varint, the value, headers count 00
    return [_Z_VI[len(p) + rest] + p + b"\x01" + vl for p in _PREFIX0[:k]]


def _add_heads(lens: list, n: int) -> bool:
    global _heads_cached
    k = 128
    while k < n:
        k <<= 1
    todo = []
    for length in set(lens):
        have = _HEADS.get(length)
        if have is None or len(have) < n:
            if length >= _HEADS_MAX_LEN:
                return False
            todo.append(length)
    if len(todo) > _HEADS_NEW or _heads_cached + k * len(todo) > _HEADS_MAX:
        return False
    for length in todo:
        _HEADS[length] = _build_heads(length, k)
        _heads_cached += k
    return True


def _encode_values_cached(values: Sequence, n: int) -> bytes | None:
    try:
        lens = list(map(len, values))
    except TypeError:  # a null value
        return None
    for _ in range(2):
        try:
            if lens.count(lens[0]) == n:
                heads = _HEADS[lens[0]]
                if len(heads) < n:
                    raise KeyError
                heads = heads[:n]
            else:
                heads = list(map(list.__getitem__, map(_HEADS.__getitem__, lens), range(n)))
            break
        except (KeyError, IndexError):
            if not _add_heads(lens, n):
                return None
    else:
        return None
    out: list = [None] * (2 * n)
    out[0::2] = heads
    out[1::2] = values
    out[0] = heads[0][1:]
    out.append(b"\x00")
    return b"".join(out)


# The same for keyed, header-less records at timestamp delta 0: record i is
# ``varint(length) 00 00 varint(i) varint(k) <key> varint(n) <value> 00``, and all before
# the key depends only on (i, k, n). Heads (with the previous record's trailing 00 in
# front) are cached per (key length, value length), bounded as _HEADS.
_KHEADS: dict[int, list[bytes]] = {}
_kheads_cached = 0


def _build_kheads(k: int, n: int, count: int) -> list[bytes]:
    kl, vl = _VI_TABLE[k + 1], _VI_TABLE[n + 1]
    rest = len(kl) + k + len(vl) + n + 1
    return [_Z_VI[len(p) + rest] + p + kl for p in _PREFIX0[:count]]


def _encode_keyed_cached(keys: Sequence, values: Sequence, n: int) -> bytes | None:
    """The records block of non-null keys and values, no headers, one timestamp; None
    when the cache cannot serve it (nulls, long fields, too many new length pairs)."""
    global _kheads_cached
    try:
        klens = list(map(len, keys))
        vlens = list(map(len, values))
    except TypeError:  # a null
        return None
    if max(klens) >= _HEADS_MAX_LEN or max(vlens) >= _HEADS_MAX_LEN:
        return None
    pairs = list(map(_add, map((1 << 16).__mul__, klens), vlens))
    try:
        heads = list(map(list.__getitem__, map(_KHEADS.__getitem__, pairs), range(n)))
    except (KeyError, IndexError):
        count = 128
        while count < n:
            count <<= 1
        todo = [p for p in set(pairs) if len(_KHEADS.get(p, ())) < n]
        if len(todo) > _HEADS_NEW or _kheads_cached + count * len(todo) > _HEADS_MAX:
            return None
        for p in todo:
            _KHEADS[p] = _build_kheads(p >> 16, p & 0xFFFF, count)
            _kheads_cached += count
        heads = list(map(list.__getitem__, map(_KHEADS.__getitem__, pairs), range(n)))
    out: list = [None] * (4 * n)
    out[0::4] = heads
    out[1::4] = keys
    out[2::4] = map(_VTN.__getitem__, vlens)
    out[3::4] = values
    out[0] = heads[0][1:]
    out.append(b"\x00")
    return b"".join(out)



def encode_values(values: Sequence, timestamp_delta: int = 0) -> bytes:
    """:func:`encode_values` in Python."""
    if timestamp_delta == 0 and 0 < len(values) <= 4096:
        block = _encode_values_cached(values, len(values))
        if block is not None:
            return block
    out: list = []
    extend = out.extend
    table = _VI_TABLE
    prefix0 = _PREFIX0
    for i, value in enumerate(values):
        prefix = prefix0[i] if timestamp_delta == 0 and i < 4096 else \
            b"\x00" + _vl(timestamp_delta) + _vi(i)
        if value is None:
            extend((table[len(prefix) + 4], prefix, b"\x01\x01\x00"))
            continue
        n = len(value)
        vlb = table[n + 1] if n < 16383 else _vi(n)
        length = len(prefix) + 2 + len(vlb) + n
        extend((table[length + 1] if length < 16383 else _vi(length), prefix, b"\x01", vlb,
                value, b"\x00"))
    return b"".join(out)

