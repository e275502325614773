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
  number N"). :class:`LineReaderConfig` takes the console producer's ``--property``
  settings (LineMessageReader's: ``parse.key``, ``key.separator``, ``parse.headers``,
  ``headers.delimiter``, ``headers.separator``, ``headers.key.separator``,
  ``ignore.error``, ``null.marker``), read by :func:`console_lines_records`.
* ``jsonl``: one JSON object per line: ``{"key", "value", "headers", "timestamp",
  "partition", "keyEncoding", "valueEncoding"}``, every field optional, so that the
  objects ``read -o json`` and ``dump-segment -o json --print-data-log`` write are input
  that gives the same bytes (docs/json.md). ``headers`` an object, an array of ``[key,
  value]`` pairs or of ``{"key", "value", "valueEncoding"}`` objects (string keys), or
  null; key/value/header values are strings, null, or any other JSON value (written as
  compact JSON text). A string is the UTF-8 of the text, or base64 / hex as its
  ``keyEncoding`` / ``valueEncoding`` (a header's ``valueEncoding``) says, default
  ``value_encoding``. ``timestamp`` is 0..2^63-1 ms (a non-negative int64, as
  ProducerRecord accepts) or -1 (Kafka's NO_TIMESTAMP, what ``read`` prints for a v0
  message); null: the default. ``partition`` 0..2^31-1 (an int32 partition id) is used
  with ``keep_partition``, else ignored. The other fields of ``read``'s and
  ``dump-segment``'s objects (``topic``, ``offset``, ``timestampType``, ``leaderEpoch``,
  ``keySize``, ...) are ignored, and so are the dump's lines that are not records
  (``"type": "batch"``, ...) and its control records (``controlType``): a consumer never
  sees those. Any other field is refused (a typo must not drop data). NaN and Infinity
  (and numbers beyond a double, such as 1e400) are refused. Blank lines are skipped. A
  malformed line raises :class:`InputError` naming it, after the records before it were
  yielded.
* ``raw``: each file is one record (the whole file is the value).

With a Schema Registry serializer (``produce --value-serializer``), the serialized side
of a JSON Lines record is a JSON value taken as is (``json_fields``: a string is a JSON
string, not bytes), written as its compact JSON text for the serializer; the objects
``read --value-decoder`` writes (``valueEncoding`` ``avro``/``protobuf``/``json-schema``,
``valueSchemaId``, ``valueSubject``) are such input.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import NamedTuple

from .constants import INT32_MAX, INT64_MAX, NO_TIMESTAMP
from .errors import (
    InputError,
    InvalidArgumentError,
)

_FIRST, _SECOND, _THIRD = itemgetter(0), itemgetter(1), itemgetter(2)

# 1 MiB: 4 MiB buffers cost page faults and cache misses (read + split ~2x slower)
CHUNK_BYTES = 1 << 20


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


class ColumnsChunk:
    r"""A chunk of records as columns, one list per :class:`InputRecord` field: the
    columnar path of keyed lines and of JSON Lines with keys, headers or timestamps
    (batches are sized and encoded column by column, with no tuple per record). A column
    that is None holds the field's default for every record: no timestamp of its own, no
    key, no headers (``()``), no partition of its own. As a sequence it reads as the
    :class:`InputRecord`\ s it holds.

    Attributes:
        lines: the input line number of each record (a list or a ``range``).
        timestamps: ms (or None entries), or None.
        keys / values: bytes or None entries (``values`` is always a list).
        headers: tuples of ``(str, bytes | None)`` pairs, or None.
        partitions: partition ids (or None entries), or None.
    """

    __slots__ = ("lines", "timestamps", "keys", "values", "headers", "partitions")

    def __init__(self, lines, values: list, *, keys=None, timestamps=None, headers=None,
                 partitions=None):
        self.lines = lines
        self.values = values
        self.keys = keys
        self.timestamps = timestamps
        self.headers = headers
        self.partitions = partitions

    def __len__(self) -> int:
        return len(self.values)

    def records(self) -> list[InputRecord]:
        """The chunk as :class:`InputRecord` tuples."""
        n = len(self.values)
        return list(map(tuple.__new__, repeat(InputRecord), zip(
            self.lines, self.timestamps or repeat(None, n), self.keys or repeat(None, n),
            self.values, self.headers or repeat((), n), self.partitions or repeat(None, n),
            strict=False)))

    def __iter__(self):
        return iter(self.records())

    def __getitem__(self, i):
        return self.records()[i]

    def __eq__(self, other) -> bool:
        if isinstance(other, ColumnsChunk):
            other = other.records()
        return isinstance(other, list) and self.records() == other

    __hash__ = None


class _GcPaused:
    """The cyclic garbage collector paused (when it was on) while a chunk is split into
    columns: that creates a container per line (a JSON object's dict, a keyed line's
    partition tuple), and the collections those allocations trigger re-scan every object
    alive, for nothing (they hold no cycle and are dropped once their fields are
    columns); measured ~40% of a JSON Lines chunk's CPU time, ~20% of a keyed one's. Never
    held across a yield."""

    __slots__ = ("was",)

    def __enter__(self):
        import gc

        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was:
            import gc

            gc.enable()


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
        # column by column: partition every line, then pick each part with C-level maps
        with _GcPaused():
            parts = list(map(bytes.partition, lines, repeat(key_separator)))
            seps = list(map(_SECOND, parts))
            bad = seps.index(b"") if b"" in seps else len(lines)
            if bad < len(lines):
                parts = parts[:bad]
            chunk = ColumnsChunk(range(first, first + bad), list(map(_THIRD, parts)),
                                 keys=list(map(_FIRST, parts)))
            del parts, seps
        yield chunk
        if bad < len(lines):
            ln = lines[bad]
            raise InputError(f"No key separator found on line number {first + bad}: "
                             f"'{ln.decode('utf-8', 'replace')}'", source=source,
                             line=first + bad)


#: LineMessageReader's properties (kafka-console-producer ``--property``) and defaults
LINE_READER_PROPERTIES = {
    "parse.key": "false", "key.separator": "\t", "parse.headers": "false",
    "headers.delimiter": "\t", "headers.separator": ",", "headers.key.separator": ":",
    "ignore.error": "false", "null.marker": None,
}


@dataclass(frozen=True)
class LineReaderConfig:
    """kafka-console-producer's LineMessageReader settings: a line is
    ``[headers <headers.delimiter>] [key <key.separator>] value``; headers are split with
    the regular expression ``headers.separator`` (Java's ``Pattern.split``: trailing empty
    strings dropped) into ``key<headers.key.separator>value`` pairs; a key, value, header
    value or whole headers part equal to ``null.marker`` is null; ``ignore.error`` makes
    a missing delimiter mean "no headers" / "no key" (and a pair without its separator a
    header with a null value) instead of an error."""

    parse_key: bool = False
    key_separator: str = "\t"
    parse_headers: bool = False
    headers_delimiter: str = "\t"
    headers_separator: str = ","
    headers_key_separator: str = ":"
    ignore_error: bool = False
    null_marker: str | None = None

    @classmethod
    def from_properties(cls, props, *, parse_key: bool = False,
                        key_separator: str = "\t") -> LineReaderConfig:
        """Settings from ``NAME=VALUE`` strings (``parseKeyValueArgs``: split at the first
        ``=``, a missing value is empty; booleans true when the value is ``true``, any
        case, trimmed), over ``parse_key`` / ``key_separator`` (``--parse-key``,
        ``--key-separator``).

        Raises:
            InvalidArgumentError: an unknown property, or separators LineMessageReader
                refuses (``headers.delimiter and headers.separator may not be equal``, ...).
        """
        values = {"parse.key": "true" if parse_key else "false", "key.separator": key_separator}
        for p in props:
            name, _, value = p.partition("=")
            if name not in LINE_READER_PROPERTIES:
                raise InvalidArgumentError(
                    f"unknown --property {name!r}: produce takes kafka-console-producer's "
                    f"{', '.join(LINE_READER_PROPERTIES)}")
            values[name] = value

        def get(name):
            return values.get(name, LINE_READER_PROPERTIES[name])

        def flag(name):
            return (get(name) or "").strip().lower() == "true"

        cfg = cls(parse_key=flag("parse.key"), key_separator=get("key.separator"),
                  parse_headers=flag("parse.headers"),
                  headers_delimiter=get("headers.delimiter"),
                  headers_separator=get("headers.separator"),
                  headers_key_separator=get("headers.key.separator"),
                  ignore_error=flag("ignore.error"), null_marker=get("null.marker"))
        cfg.check()
        return cfg

    def check(self) -> None:
        """LineMessageReader.configure's refusals (KafkaException there)."""
        import re

        pairs = [("headers.delimiter", self.headers_delimiter, "headers.separator",
                  self.headers_separator),
                 ("headers.delimiter", self.headers_delimiter, "headers.key.separator",
                  self.headers_key_separator),
                 ("headers.separator", self.headers_separator, "headers.key.separator",
                  self.headers_key_separator)]
        if self.null_marker is not None:
            pairs += [("null.marker", self.null_marker, name, v) for name, v in (
                ("key.separator", self.key_separator),
                ("headers.separator", self.headers_separator),
                ("headers.delimiter", self.headers_delimiter),
                ("headers.key.separator", self.headers_key_separator))]
        for a, va, b, vb in pairs:
            if va == vb:
                raise InvalidArgumentError(f"{a} and {b} may not be equal")
        for name, v in (("key.separator", self.key_separator),
                        ("headers.delimiter", self.headers_delimiter),
                        ("headers.key.separator", self.headers_key_separator)):
            if (name == "key.separator" and self.parse_key or name != "key.separator"
                    and self.parse_headers) and not v:
                raise InvalidArgumentError(f"{name} must not be empty")
        try:
            re.compile(self.headers_separator)
        except re.error as e:
            raise InvalidArgumentError(f"headers.separator {self.headers_separator!r} is not "
                                       f"a regular expression: {e}") from None

    @property
    def plain(self) -> bool:
        """Only ``parse.key`` (or nothing): the fast column-wise path of lines input."""
        return not (self.parse_headers or self.ignore_error or self.null_marker is not None)


def _java_split(pattern, text: str) -> list[str]:
    """Java's ``Pattern.split(text)`` (limit 0): no match gives ``[text]``; a zero-width
    match at the start makes no leading empty string; trailing empty strings dropped."""
    parts, pos = [], 0
    for m in pattern.finditer(text):
        if m.end() == 0:
            continue
        parts.append(text[pos:m.start()])
        pos = m.end()
    if not parts:
        return [text]
    parts.append(text[pos:])
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def console_lines_records(stream, source: str, cfg: LineReaderConfig
                          ) -> Iterator[list[InputRecord]]:
    """Records of a ``lines`` input read as LineMessageReader reads them (see
    :class:`LineReaderConfig`); the fast paths of :func:`lines_records` when only
    ``parse.key`` is set.

    Raises:
        InputError: a line without its delimiter, a pair without its separator (unless
            ``ignore.error``), a header key equal to ``null.marker``; after the records
            before it were yielded.
    """
    import re

    if cfg.plain:
        yield from lines_records(stream, source, parse_key=cfg.parse_key,
                                 key_separator=cfg.key_separator.encode("utf-8"))
        return
    null = None if cfg.null_marker is None else cfg.null_marker.encode("utf-8")
    hdelim = cfg.headers_delimiter.encode("utf-8")
    ksep = cfg.key_separator.encode("utf-8")
    hsep = re.compile(cfg.headers_separator)
    hksep = cfg.headers_key_separator

    def demarcate(line, start, sep, what, n):
        i = line.find(sep, start)
        if i == -1:
            if cfg.ignore_error:
                return None
            raise ValueError(f"No {what} found on line number {n}: "
                             f"'{line.decode('utf-8', 'replace')}'")
        return line[start:i]

    def header(pair: str, n: int):
        i = pair.find(hksep)
        if i == -1:
            if cfg.ignore_error:
                return pair, None
            raise ValueError(f"No header key separator found in pair '{pair}' on line "
                             f"number {n}")
        k, v = pair[:i], pair[i + len(hksep):]
        if k == cfg.null_marker:
            raise ValueError(f"Header keys should not be equal to the null marker "
                             f"'{cfg.null_marker}' as they can't be null")
        v = v.encode("utf-8", "surrogateescape")
        return k, (None if v == null else v)

    for first, lines in read_chunks(stream):
        out = []
        for n, line in enumerate(lines, first):
            try:
                hs = demarcate(line, 0, hdelim, "headers delimiter", n) \
                    if cfg.parse_headers else None
                start = 0 if hs is None else len(hs) + len(hdelim)
                key = demarcate(line, start, ksep, "key separator", n) \
                    if cfg.parse_key else None
                value = line[start + (0 if key is None else len(key) + len(ksep)):]
                headers = ()
                if hs is not None and hs != null:
                    text = hs.decode("utf-8", "surrogateescape")
                    headers = tuple(header(p, n) for p in _java_split(hsep, text))
            except ValueError as e:
                yield out
                raise InputError(str(e), source=source, line=n) from None
            out.append(InputRecord(n, None, None if key == null else key,
                                   None if value == null else value, headers, None))
        yield out


def _utf8(s: str, what: str) -> bytes:
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError as e:
        # JSON allows "\ud800"; UTF-8 (and Kafka's StringSerializer) has no lone surrogates
        bad = s[e.start]
        raise ValueError(f"{what} holds a lone surrogate \\u{ord(bad):04x}, which "
                             "cannot be encoded as UTF-8") from None


#: ``...Encoding`` values: how a JSON string spells bytes
ENCODINGS = ("utf8", "base64", "hex")


def _enc(value, encoding: str, what: str):
    if value is None:
        return None
    if isinstance(value, str):
        if encoding == "base64":
            try:
                return base64.b64decode(value, validate=True)
            except ValueError as e:
                raise ValueError(f"{what} is not valid base64: {e}") from None
        if encoding == "hex":
            try:
                return bytes.fromhex(value)
            except ValueError as e:
                raise ValueError(f"{what} is not valid hex: {e}") from None
        return _utf8(value, what)
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:  # 1.5e400 parses as inf; JSON (and Jackson's output) has no Infinity
        raise ValueError(f"{what} holds a number out of the range of a 64-bit float "
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
#: fields of ``read -o json`` / ``dump-segment -o json`` records that produce ignores
IGNORED_FIELDS = frozenset({
    "topic", "offset", "timestampType", "leaderEpoch", "type", "keySize", "valueSize",
    "sequence", "headerKeys", "isValid", "crc",
    # read --key-decoder/--value-decoder (the schema comes with the serializer's subject)
    "keySchemaId", "valueSchemaId", "keySubject", "valueSubject"})
#: ``keyEncoding`` / ``valueEncoding`` of a value decoded through Schema Registry: a
#: JSON value, taken with a serializer of ``json_fields``
SCHEMA_ENCODINGS = ("avro", "protobuf", "json-schema")
#: fields that make the line one to skip (a dump's control record), or refuse
_SPECIAL = {"keyEncoding", "valueEncoding", "type", "controlType", "keyType",
            "decodeWarnings", "decodeFailure"}
_KNOWN = _FIELDS | IGNORED_FIELDS | _SPECIAL
_NONE = type(None)
_STR_OR_NONE = {str, _NONE}
_INT_OR_NONE = {int, _NONE}


def _utf8_column(col: list) -> list:
    if _NONE in set(map(type, col)):
        return [None if x is None else x.encode("utf-8") for x in col]
    return list(map(str.encode, col))


# headers objects seen recently, as their JSON text -> InputRecord headers
_HEADERS_SEEN: dict = {b"null": (), b"{}": (), b"[]": ()}
_HEADERS_SEEN_MAX = 4096


def _header_tuple(obj: dict) -> tuple | None:
    if not set(map(type, obj.values())) <= _STR_OR_NONE:
        return None
    return tuple((k, None if v is None else v.encode("utf-8")) for k, v in obj.items())


def _headers_column(col: list) -> list | None:
    """Headers of a chunk parsed by orjson (objects of strings or nulls, or empty arrays
    as ``read -o json`` writes no headers; None for anything else), looked up by their
    JSON text: repeated headers cost no per-record Python code. The text of such an
    object is its content (orjson parses no NaN or Infinity, which would write as null).
    """
    import orjson

    types = set(map(type, col))
    if list in types:
        if any(h for h in col if type(h) is list):
            return None  # [[k, v]] pairs or {key, value} objects: the record path
        types.discard(list)
    if not types <= {dict, _NONE}:
        return None
    try:
        texts = list(map(orjson.dumps, col))
    except TypeError:  # orjson.JSONEncodeError: not from orjson.loads
        return None
    out = list(map(_HEADERS_SEEN.get, texts))
    if None in out:
        if len(_HEADERS_SEEN) > _HEADERS_SEEN_MAX:
            _HEADERS_SEEN.clear()
            _HEADERS_SEEN.update({b"null": (), b"{}": (), b"[]": ()})
        for i, h in enumerate(out):
            if h is None:
                h = _header_tuple(col[i])
                if h is None:
                    return None
                out[i] = _HEADERS_SEEN[texts[i]] = h
    return out


def _in_range(col: list, lo: int, hi: int) -> bool:
    """Every integer of ``col`` (Nones skipped) within ``lo..hi``."""
    if None in col:
        col = [x for x in col if x is not None]
    return not col or (lo <= min(col) and max(col) <= hi)


def _columnar(objs: list, lines, keep_partition: bool) -> ColumnsChunk | None:
    """The records of parsed JSON objects as columns (C-level maps), when every
    field is of the usual type: strings or null for key/value, an object of strings or
    nulls for headers, integers or null for timestamp/partition, no encodings and nothing
    to skip. None otherwise: the caller then goes record by record (and names a bad
    line)."""
    names = set().union(*objs)
    if not names <= _FIELDS | IGNORED_FIELDS or "type" in names:
        return None
    n = len(objs)

    def col(name):
        return list(map(dict.get, objs, repeat(name))) if name in names else None

    ks, vs, hs, ts = col("key"), col("value"), col("headers"), col("timestamp")
    ps = col("partition") if keep_partition else None
    for c, ok in ((ks, _STR_OR_NONE), (vs, _STR_OR_NONE), (ts, _INT_OR_NONE),
                  (ps, _INT_OR_NONE)):
        if c is not None and not set(map(type, c)) <= ok:
            return None
    if (ps is not None and not _in_range(ps, 0, INT32_MAX)) or \
            (ts is not None and not _in_range(ts, 0, INT64_MAX)):
        return None  # the record path names the line (or takes NO_TIMESTAMP)
    try:
        ks = None if ks is None else _utf8_column(ks)
        vs = [None] * n if vs is None else _utf8_column(vs)
        if hs is not None:
            hs = _headers_column(hs)
            if hs is None:
                return None
    except ValueError:  # not encodable (lone surrogates)
        return None
    return ColumnsChunk(lines if type(lines) is range else list(lines), vs, keys=ks,
                        timestamps=ts, headers=hs, partitions=ps)


def _encoding_of(obj: dict, name: str, default: str) -> str:
    e = obj.get(name)
    if e is None:
        return default
    if e in SCHEMA_ENCODINGS:
        raise ValueError(f"{name} {e}: a {'key' if name[0] == 'k' else 'value'} decoded "
                         "through Schema Registry; produce it with --"
                         f"{'key' if name[0] == 'k' else 'value'}-serializer {e}")
    if e not in ENCODINGS:
        raise ValueError(f"{name} must be one of {', '.join(ENCODINGS)}, got {_short(e)}")
    return e


def _headers(h, encoding: str) -> tuple:
    """``headers``: an object, an array of ``[key, value]`` pairs or of ``{"key", "value",
    "valueEncoding"}`` objects (``read``'s and ``dump-segment``'s form) with a string
    key, or null; values as key/value (a Kafka header key is a non-null String)."""
    if h is None:
        return ()
    if isinstance(h, dict):
        return tuple((k, _enc(v, encoding, f"header {k!r}")) for k, v in h.items())
    if not isinstance(h, list):
        raise ValueError("headers must be an object, an array of [key, value] pairs or "
                         f"of {{key, value}} objects, or null, got {_short(h)}")
    out = []
    for n, pair in enumerate(h, 1):
        if isinstance(pair, dict):
            extra = pair.keys() - {"key", "value", "valueEncoding"}
            if extra or "key" not in pair:
                raise ValueError(f"headers: object {n} must have a key, a value and "
                                 f"optionally a valueEncoding, got {_short(pair)}")
            k, v = pair["key"], pair.get("value")
            enc = _encoding_of(pair, "valueEncoding", encoding)
        elif isinstance(pair, list) and len(pair) == 2:
            (k, v), enc = pair, encoding
        else:
            raise ValueError(f"headers: pair {n} must be a [key, value] array of two "
                             f"elements or a {{key, value}} object, got {_short(pair)}")
        if not isinstance(k, str):
            raise ValueError(f"headers: the key of pair {n} must be a string, got "
                             f"{_short(k)}")
        out.append((k, _enc(v, enc, f"header {k!r}")))
    return tuple(out)


def _short(v) -> str:
    t = json.dumps(v, ensure_ascii=False)
    return t if len(t) <= 40 else t[:37] + "..."


def _json_field(obj: dict, name: str) -> bytes | None:
    """A ``json_fields`` side: its JSON value as compact JSON text (null: None)."""
    e = obj.get(name + "Encoding")
    if e is not None and e not in SCHEMA_ENCODINGS:
        raise ValueError(f"{name}Encoding {_short(e)}: with a serializer the {name} is a "
                         f"JSON value (or {', '.join(SCHEMA_ENCODINGS)})")
    v = obj.get(name)
    if v is None:
        return None
    try:
        text = json.dumps(v, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:
        raise ValueError(f"{name} holds a number out of the range of a 64-bit float") from None
    return _utf8(text, name)


def _record(obj, line: int, encoding: str, keep_partition: bool = False,
            json_fields: frozenset = frozenset()) -> InputRecord | None:
    """The record of one JSON object; None for a line to skip (a dump's non-record
    object or control record). ``json_fields`` (``"key"``, ``"value"``): sides taken as
    JSON values (see the module docstring)."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    if "type" in obj and obj["type"] != "record":
        return None  # dump-segment's file, batch, index entries...: not records
    if "controlType" in obj:
        return None  # a control record: the broker writes those, no consumer sees them
    extra = obj.keys() - _KNOWN
    if extra:
        raise ValueError(f"unknown field(s) {', '.join(sorted(extra))}")
    if "keyType" in obj or "decodeFailure" in obj:
        raise ValueError("a decoded record of an internal topic (its key and value are "
                         "the decoders' JSON, not its bytes): read it with --no-decode")
    if "keySize" in obj and "value" not in obj and "key" not in obj:
        raise ValueError("a dump-segment record without its data: dump with "
                         "--print-data-log")
    ts = obj.get("timestamp")
    if ts is not None and (not isinstance(ts, int) or isinstance(ts, bool)):
        raise ValueError("timestamp must be an integer (ms since the epoch)")
    if ts is not None and not (0 <= ts <= INT64_MAX or ts == NO_TIMESTAMP):
        raise ValueError(f"timestamp {ts} is out of range: it must be 0..{INT64_MAX} ms "
                         "(a non-negative 64-bit integer), -1 (no timestamp) or null")
    part = obj.get("partition") if keep_partition else None
    if part is not None and (not isinstance(part, int) or isinstance(part, bool) or part < 0):
        raise ValueError("partition must be a non-negative integer")
    if part is not None and part > INT32_MAX:
        raise ValueError(f"partition {part} is out of range: partition ids are 0..{INT32_MAX} "
                         "(a signed 32-bit integer)")
    headers = _headers(obj.get("headers"), encoding)
    key = (_json_field(obj, "key") if "key" in json_fields else
           _enc(obj.get("key"), _encoding_of(obj, "keyEncoding", encoding), "key"))
    value = (_json_field(obj, "value") if "value" in json_fields else
             _enc(obj.get("value"), _encoding_of(obj, "valueEncoding", encoding), "value"))
    return InputRecord(line, ts, key, value, headers, part)


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


def _columns_of_lines(lines: list[bytes], first: int, keep_partition: bool):
    """The records of a chunk of JSON Lines (strings UTF-8, ``value_encoding`` utf8) as a
    ValuesChunk (every object a lone string ``value``) or a ColumnsChunk, parsed with
    orjson; None when they must go record by record (a line orjson refuses or that is not
    an object, a field not of the usual type: see :func:`_columnar`).

    orjson and the json module differ only on input that never reaches the columns: lone
    surrogates, NaN/Infinity and numbers beyond a double (orjson refuses them), integers
    beyond 64 bits (orjson gives floats, which no column takes); the record path then
    parses the chunk with the json module and names a bad line."""
    import orjson

    idx = range(len(lines)) if all(lines) else [i for i, ln in enumerate(lines) if ln]
    if not idx:
        return None
    with _GcPaused():
        try:
            objs = list(map(orjson.loads, lines if type(idx) is range else
                            [lines[i] for i in idx]))
        except orjson.JSONDecodeError:
            return None
        if set(map(type, objs)) != {dict}:
            return None
        if type(idx) is range and sum(map(len, objs)) == len(objs):
            vals = [o.get("value") for o in objs]
            if set(map(type, vals)) == {str}:
                return ValuesChunk(list(map(str.encode, vals)), first)
        return _columnar(objs, range(first, first + len(idx)) if type(idx) is range else
                         [first + i for i in idx], keep_partition)


def jsonl_records(stream, source: str, *, value_encoding: str = "utf8",
                  keep_partition: bool = False, json_fields: frozenset = frozenset()
                  ) -> Iterator[list[InputRecord]]:
    """Records of a JSON Lines input (see the module docstring); ``value_encoding`` is
    the encoding of strings without a ``...Encoding`` field, ``keep_partition`` whether a
    ``partition`` field is used, ``json_fields`` the sides taken as JSON values.

    Raises:
        InputError: naming the first malformed line.
    """
    loads = _loads
    for first, lines in read_chunks(stream):
        if value_encoding == "utf8" and not json_fields:
            chunk = _columns_of_lines(lines, first, keep_partition)
            if chunk is not None:
                yield chunk
                continue
        # record by record, parsed by the json module
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
                rec = _record(obj, first + i, value_encoding, keep_partition, json_fields)
            except ValueError as e:
                yield out
                raise InputError(str(e), source=source, line=first + i) from None
            if rec is not None:
                out.append(rec)
        yield out


def raw_record(data: bytes) -> list[InputRecord]:
    """One record holding a whole file."""
    return ValuesChunk([data], 1)


def format_for(name: str, default: str) -> str:
    """``jsonl`` for ``*.jsonl`` / ``*.ndjson`` files, else ``default``."""
    if name.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    return default
