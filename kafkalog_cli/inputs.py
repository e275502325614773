"""Record input for ``kafkalog produce``: plain lines, JSON Lines, raw files.

Every reader yields *chunks*: lists of :class:`InputRecord` (``(line, timestamp, key,
value, headers, partition)``; line is the 1-based line number, timestamp ms or None for
"now", key/value bytes or None, headers a tuple of ``(str, bytes | None)``, partition an
int or None for the default), or a :class:`ValuesChunk` (plain values only, the fast path
of ``lines``). Chunks keep memory bounded and let the batcher work on lists.

Formats, as users know them:

* ``lines`` (kafka-console-producer): one value per line, ``\\n`` or ``\\r\\n``; with
  ``parse_key`` the line is split at the first ``key_separator`` (a line without it is an
  error naming its number, as the console producer's "No key separator found on line
  number N").
* ``jsonl``: one JSON object per line: ``{"key", "value", "headers", "timestamp",
  "partition"}``, every field optional; ``headers`` an object, an array of ``[key,
  value]`` pairs (string keys) or null; key/value/header values are strings (UTF-8, or base64 with
  ``value_encoding="base64"``), null, or any other JSON value (written as compact JSON
  text). ``timestamp`` is 0..2^63-1 ms (a non-negative int64, as
  ProducerRecord accepts; null: the default), ``partition`` 0..2^31-1 (an int32 partition id).
  NaN and Infinity (and numbers beyond a double, such as 1e400) are refused. Blank lines
  are skipped. A malformed line raises :class:`InputError` naming it, after the records
  before it were yielded.
* ``raw``: each file is one record (the whole file is the value).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from itertools import repeat
from typing import NamedTuple

from .constants import INT32_MAX, INT64_MAX
from .errors import InvalidArgumentError

# 1 MiB: 4 MiB buffers cost page faults and cache misses (read + split ~2x slower)
CHUNK_BYTES = 1 << 20


class InputError(InvalidArgumentError):
    """Malformed input; ``line`` is the 1-based line number (None for a raw file)."""

    exit_code = 1

    def __init__(self, message: str, *, source: str, line: int | None = None):
        where = f"{source}:{line}: " if line is not None else f"{source}: "
        super().__init__(where + message)
        self.source = source
        self.line = line


class ValuesChunk(list):
    """A chunk of plain values (keyless, header-less, no timestamp or partition of their
    own): the columnar fast path of ``lines`` input. ``first_line`` numbers its first."""

    __slots__ = ("first_line",)

    def __init__(self, values, first_line: int = 1):
        super().__init__(values)
        self.first_line = first_line


class InputRecord(NamedTuple):
    line: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple
    partition: int | None


def read_chunks(stream, chunk_bytes: int = CHUNK_BYTES) -> Iterator[tuple[int, list[bytes]]]:
    """Split a binary stream into lines (``\\n``, a trailing ``\\r`` stripped), in chunks.

    Yields:
        ``(number of the chunk's first line, [line bytes])``; a final line without a
        newline counts, an empty final segment does not.
    """
    rest = b""
    line_no = 1
    while True:
        data = stream.read(chunk_bytes)
        if not data:
            break
        # split first and glue the previous tail to the first line: no copy of the chunk
        lines = data.split(b"\n")
        if rest:
            lines[0] = rest + lines[0]
        rest = lines.pop()
        if not lines:
            continue
        if b"\r" in data or b"\r" in lines[0]:
            lines = [ln[:-1] if ln.endswith(b"\r") else ln for ln in lines]
        yield line_no, lines
        line_no += len(lines)
    if rest:
        yield line_no, [rest[:-1] if rest.endswith(b"\r") else rest]


def lines_records(stream, source: str, *, parse_key: bool = False,
                  key_separator: bytes = b"\t") -> Iterator[list[InputRecord]]:
    """Records of a ``lines`` input (see the module docstring)."""
    for first, lines in read_chunks(stream):
        if not parse_key:
            yield ValuesChunk(lines, first)
            continue
        # column by column: partition every line, then one zip into records
        keys, seps, vals = zip(*map(bytes.partition, lines, repeat(key_separator)),
                               strict=True)
        bad = seps.index(b"") if b"" in seps else len(lines)
        yield list(map(tuple.__new__, repeat(InputRecord),
                       zip(range(first, first + bad), repeat(None), keys, vals, repeat(()),
                           repeat(None), strict=False)))
        if bad < len(lines):
            ln = lines[bad]
            raise InputError(f"No key separator found on line number {first + bad}: "
                             f"'{ln.decode('utf-8', 'replace')}'", source=source,
                             line=first + bad)


class _EncodingError(ValueError):
    """A string that cannot become the record's bytes (bad base64, a lone surrogate)."""


def _utf8(s: str, what: str) -> bytes:
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError as e:
        # JSON allows "\ud800"; UTF-8 (and Kafka's StringSerializer) has no lone surrogates
        bad = s[e.start]
        raise _EncodingError(f"{what} holds a lone surrogate \\u{ord(bad):04x}, which "
                             "cannot be encoded as UTF-8") from None


def _enc(value, encoding: str, what: str):
    if value is None:
        return None
    if isinstance(value, str):
        if encoding == "base64":
            try:
                return base64.b64decode(value, validate=True)
            except ValueError as e:
                raise _EncodingError(f"{what} is not valid base64: {e}") from None
        return _utf8(value, what)
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:  # 1.5e400 parses as inf; JSON (and Jackson's output) has no Infinity
        raise _EncodingError(f"{what} holds a number out of the range of a 64-bit float "
                             "(it would be written as Infinity, which is not JSON)") from None
    return _utf8(text, what)


def _no_constant(name: str):
    # Python's json reads NaN/Infinity/-Infinity; JSON (RFC 8259) has no such literals
    raise ValueError(f"{name} is not valid JSON")


_DECODE = json.JSONDecoder(parse_constant=_no_constant).decode


def _loads(b: bytes):
    """json.loads without the NaN/Infinity extension."""
    return _DECODE(b.decode(json.detect_encoding(b), "surrogatepass"))


_FIELDS = {"key", "value", "headers", "timestamp", "partition"}
_NONE = type(None)
_STR_OR_NONE = {str, _NONE}
_INT_OR_NONE = {int, _NONE}


def _utf8_column(col: list) -> list:
    if _NONE in set(map(type, col)):
        return [None if x is None else x.encode("utf-8") for x in col]
    return list(map(str.encode, col))


# headers objects seen recently, as item tuples -> InputRecord headers
_HEADERS_SEEN: dict = {}
_HEADERS_SEEN_MAX = 4096
_EMPTY: dict = {}


def _header_tuple(items: tuple) -> tuple | None:
    if not set(map(type, (v for _, v in items))) <= _STR_OR_NONE:
        return None
    return tuple((k, None if v is None else v.encode("utf-8")) for k, v in items)


def _headers_column(col: list) -> list | None:
    """Headers of a chunk (objects of strings or nulls; None for anything else), looked up
    by content: repeated headers cost no per-record Python code."""
    if not set(map(type, col)) <= {dict, _NONE}:
        return None
    items = list(map(tuple, map(dict.items, [h or _EMPTY for h in col])))
    try:
        out = list(map(_HEADERS_SEEN.get, items))
    except TypeError:  # unhashable header values (arrays, objects)
        return None
    if None in out:
        if len(_HEADERS_SEEN) > _HEADERS_SEEN_MAX:
            _HEADERS_SEEN.clear()
        for i, h in enumerate(out):
            if h is None:
                h = _header_tuple(items[i])
                if h is None:
                    return None
                out[i] = _HEADERS_SEEN[items[i]] = h
    return out


def _in_range(col: list, lo: int, hi: int) -> bool:
    """Every integer of ``col`` (Nones skipped) within ``lo..hi``."""
    if None in col:
        col = [x for x in col if x is not None]
    return not col or (lo <= min(col) and max(col) <= hi)


def _columnar(objs: list, lines) -> list | None:
    """The records of parsed JSON objects column by column (C-level maps), when every
    field is of the usual type: strings or null for key/value, an object of strings or
    nulls for headers, integers or null for timestamp/partition. None otherwise: the
    caller then goes record by record (and names a bad line)."""
    names = set().union(*objs)
    if not names <= _FIELDS:
        return None
    n = len(objs)

    def col(name):
        return list(map(dict.get, objs, repeat(name))) if name in names else None

    ks, vs, hs, ts, ps = (col("key"), col("value"), col("headers"), col("timestamp"),
                          col("partition"))
    for c, ok in ((ks, _STR_OR_NONE), (vs, _STR_OR_NONE), (ts, _INT_OR_NONE),
                  (ps, _INT_OR_NONE)):
        if c is not None and not set(map(type, c)) <= ok:
            return None
    if (ps is not None and not _in_range(ps, 0, INT32_MAX)) or \
            (ts is not None and not _in_range(ts, 0, INT64_MAX)):
        return None  # the record path names the line
    try:
        ks = repeat(None, n) if ks is None else _utf8_column(ks)
        vs = repeat(None, n) if vs is None else _utf8_column(vs)
        hs = repeat((), n) if hs is None else _headers_column(hs)
    except ValueError:  # not encodable (lone surrogates)
        return None
    if hs is None:
        return None
    return list(map(tuple.__new__, repeat(InputRecord),
                    zip(lines, ts or repeat(None), ks, vs, hs, ps or repeat(None),
                        strict=False)))


def _headers(h, encoding: str) -> tuple:
    """``headers``: an object, an array of ``[key, value]`` pairs with a string key, or
    null; values as key/value (a Kafka header key is a non-null String)."""
    if h is None:
        return ()
    if isinstance(h, dict):
        pairs = list(h.items())
    elif isinstance(h, list):
        pairs = h
        for n, pair in enumerate(pairs, 1):
            if not isinstance(pair, list) or len(pair) != 2:
                raise ValueError(f"headers: pair {n} must be a [key, value] array of two "
                                 f"elements, got {_short(pair)}")
            if not isinstance(pair[0], str):
                raise ValueError(f"headers: the key of pair {n} must be a string, got "
                                 f"{_short(pair[0])}")
    else:
        raise ValueError("headers must be an object, an array of [key, value] pairs or "
                         f"null, got {_short(h)}")
    return tuple((k, _enc(v, encoding, f"header {k!r}")) for k, v in pairs)


def _short(v) -> str:
    t = json.dumps(v, ensure_ascii=False)
    return t if len(t) <= 40 else t[:37] + "..."


def _record(obj, line: int, encoding: str) -> InputRecord:
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    extra = obj.keys() - _FIELDS
    if extra:
        raise ValueError(f"unknown field(s) {', '.join(sorted(extra))}")
    ts = obj.get("timestamp")
    if ts is not None and (not isinstance(ts, int) or isinstance(ts, bool)):
        raise ValueError("timestamp must be an integer (ms since the epoch)")
    if ts is not None and not 0 <= ts <= INT64_MAX:
        raise ValueError(f"timestamp {ts} is out of range: it must be 0..{INT64_MAX} ms "
                         "(a non-negative 64-bit integer) or null")
    part = obj.get("partition")
    if part is not None and (not isinstance(part, int) or isinstance(part, bool) or part < 0):
        raise ValueError("partition must be a non-negative integer")
    if part is not None and part > INT32_MAX:
        raise ValueError(f"partition {part} is out of range: partition ids are 0..{INT32_MAX} "
                         "(a signed 32-bit integer)")
    headers = _headers(obj.get("headers"), encoding)
    return InputRecord(line, ts, _enc(obj.get("key"), encoding, "key"),
                       _enc(obj.get("value"), encoding, "value"), headers, part)


# Put between the lines of a chunk parsed as one array: a string that costs nothing to parse
# and is rare in data (a chunk holding "~" anywhere, or a \u007X escape that could spell
# it, is parsed line by line instead)
_MARK = "~"
_MARK_SEP = b',"~",'


def _parse_lines(lines: list[bytes]) -> list[dict]:
    """The objects of ``lines`` parsed as one JSON array ``[L1,M,L2,M,...,Ln]``, when every
    line is exactly one JSON object; ValueError otherwise (the caller then parses line
    by line and names the bad one).

    The markers M keep a line from borrowing from its neighbours: joined with bare
    commas, ``{"v":"a"},{"v":"b"}`` / ``{"v":[{"x":1}`` / ``{"y":2}]}`` would give three
    objects from three malformed lines. When no line can spell M, each M is a top-level
    element exactly when every line between two of them is one whole value, so the parse
    must alternate object, M, object, ...
    """
    plain = b"".join(lines)
    if b"~" in plain or (b"\\" in plain and b"\\u007" in plain):
        raise ValueError  # a line might spell the marker
    n = len(lines)
    objs = _loads(b"[" + _MARK_SEP.join(lines) + b"]")
    if len(objs) != 2 * n - 1 or objs[1::2].count(_MARK) != n - 1:
        raise ValueError
    objs = objs[::2]
    if set(map(type, objs)) != {dict}:
        raise ValueError
    return objs


def jsonl_records(stream, source: str, *, value_encoding: str = "utf8"
                  ) -> Iterator[list[InputRecord]]:
    """Records of a JSON Lines input (see the module docstring).

    Raises:
        InputError: naming the first malformed line.
    """
    loads = _loads
    for first, lines in read_chunks(stream):
        if all(lines) and all(map(bytes.startswith, lines, repeat(b"{"))) and \
                all(map(bytes.endswith, lines, repeat(b"}"))):
            idx = range(len(lines))
            simple = True
        else:
            idx = []
            simple = True
            for i, ln in enumerate(lines):
                s = ln.strip()
                if s:
                    idx.append(i)
                    if simple and not (s[:1] == b"{" and s[-1:] == b"}"):
                        simple = False
        try:
            # one parse per chunk when every line is a lone object; else line by line
            if not simple:
                raise ValueError
            objs = _parse_lines(lines if type(idx) is range else [lines[i] for i in idx])
        except ValueError:
            objs = None
        if objs is not None and value_encoding == "utf8" and len(idx) == len(lines) and \
                sum(map(len, objs)) == len(objs):
            # every line may be {"value": "..."}: then the columnar path of plain lines
            vals = [o.get("value") for o in objs]
            if set(map(type, vals)) == {str}:
                try:
                    encoded = list(map(str.encode, vals))
                except UnicodeEncodeError:  # a lone surrogate: the record path names it
                    encoded = None
                if encoded is not None:
                    yield ValuesChunk(encoded, first)
                    continue
        if objs is not None and value_encoding == "utf8":
            recs = _columnar(objs, map(first.__add__, idx))
            if recs is not None:
                yield recs
                continue
        out = []
        for n, i in enumerate(idx):
            try:
                obj = objs[n] if objs is not None else loads(lines[i])
            except ValueError as e:
                # hand over the records before the bad line, then fail
                yield out
                raise InputError(f"malformed JSON: {e}", source=source,
                                 line=first + i) from None
            try:
                out.append(_record(obj, first + i, value_encoding))
            except ValueError as e:
                yield out
                raise InputError(str(e), source=source, line=first + i) from None
        yield out


def raw_record(data: bytes) -> list[InputRecord]:
    """One record holding a whole file."""
    return ValuesChunk([data], 1)


def format_for(name: str, default: str) -> str:
    """``jsonl`` for ``*.jsonl`` / ``*.ndjson`` files, else ``default``."""
    if name.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    return default
