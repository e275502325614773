"""Renderers of ``read``: kafka-console-consumer's ``DefaultMessageFormatter`` text, and
JSON Lines.

The formatter's properties (``--property NAME=VALUE``, as the console consumer takes
them): ``print.timestamp``, ``print.key``, ``print.value`` (default true),
``print.partition``, ``print.offset``, ``print.delivery``, ``print.epoch``,
``print.headers``, ``key.separator`` (tab), ``line.separator`` (newline),
``headers.separator`` (comma) and ``null.literal`` (``null``). Columns come in the
formatter's order: ``CreateTime:<ms>`` (``NO_TIMESTAMP`` for v0 messages),
``Partition:<n>``, ``Offset:<n>``, ``Delivery:NOT_PRESENT``, ``Epoch:<n>`` (or
``NOT_PRESENT``), headers ``k:v,k:v`` (or ``NO_HEADERS``), key, value. Keys, values and
header values are written as their raw bytes, as the console consumer does without a
deserializer; the records of Kafka's internal topics, when decoded, as the decoders'
compact JSON (``DecodedRecord.key_json`` / ``value_json``), a missing key or a tombstone
value as ``null.literal``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from ..constants import NO_TIMESTAMP_TYPE
from ..errors import InvalidArgumentError
from .lines import C_ENCODINGS, compiled_lines, text_and_bytes_writer

_c = compiled_lines()

_BOOL_PROPS = {
    "print.timestamp": "print_timestamp", "print.key": "print_key",
    "print.value": "print_value", "print.partition": "print_partition",
    "print.offset": "print_offset", "print.delivery": "print_delivery",
    "print.epoch": "print_epoch", "print.headers": "print_headers",
}
_BYTES_PROPS = {
    "key.separator": "key_separator", "line.separator": "line_separator",
    "headers.separator": "headers_separator", "null.literal": "null_literal",
}


@dataclass
class FormatterConfig:
    """DefaultMessageFormatter's settings and defaults."""

    print_timestamp: bool = False
    print_key: bool = False
    print_value: bool = True
    print_partition: bool = False
    print_offset: bool = False
    print_delivery: bool = False
    print_epoch: bool = False
    print_headers: bool = False
    key_separator: bytes = b"\t"
    line_separator: bytes = b"\n"
    headers_separator: bytes = b","
    null_literal: bytes = b"null"

    @classmethod
    def from_properties(cls, props: Iterable[str]) -> FormatterConfig:
        """Parse ``NAME=VALUE`` strings. Booleans are true when the value is ``true``
        (any case, trimmed), as ``getBoolProperty``. A name the formatter does not take
        is refused (the formatter ignores it: a typo would silently print something
        else), and so are its deserializer properties (``key.deserializer``, ...: read
        prints bytes, or decodes Kafka's internal topics).

        Raises:
            InvalidArgumentError: a property without ``=``, or one read does not support.
        """
        cfg = cls()
        for p in props:
            if "=" not in p:
                raise InvalidArgumentError(f"invalid --property {p!r}: expected NAME=VALUE")
            name, value = p.split("=", 1)
            name = name.strip()
            if name in _BOOL_PROPS:
                setattr(cfg, _BOOL_PROPS[name], value.strip().lower() == "true")
            elif name in _BYTES_PROPS:
                setattr(cfg, _BYTES_PROPS[name], value.encode("utf-8"))
            elif name.endswith("deserializer") or ".deserializer." in name:
                raise InvalidArgumentError(
                    f"--property {name} is not supported: read prints raw bytes (or decodes "
                    "Kafka's internal topics); use -o json for other encodings")
            else:
                raise InvalidArgumentError(
                    f"unknown --property {name!r}: read takes "
                    f"{', '.join([*_BOOL_PROPS, *_BYTES_PROPS])}")
        return cfg


def format_record(rec, cfg: FormatterConfig) -> bytes:
    """One record as DefaultMessageFormatter.writeTo writes it (line separator included
    when the value is printed)."""
    cols: list[bytes] = []
    if cfg.print_timestamp:
        if rec.timestamp_type != NO_TIMESTAMP_TYPE:
            cols.append(f"{rec.timestamp_type}:{rec.timestamp}".encode())
        else:
            cols.append(b"NO_TIMESTAMP")
    if cfg.print_partition:
        cols.append(f"Partition:{rec.partition}".encode())
    if cfg.print_offset:
        cols.append(f"Offset:{rec.offset}".encode())
    if cfg.print_delivery:
        cols.append(b"Delivery:NOT_PRESENT")
    if cfg.print_epoch:
        epoch = rec.leader_epoch
        cols.append(b"Epoch:" + (b"NOT_PRESENT" if epoch is None else str(epoch).encode()))
    null = cfg.null_literal
    if cfg.print_headers:
        if not rec.headers:
            cols.append(b"NO_HEADERS")
        else:
            cols.append(cfg.headers_separator.join(
                k.encode("utf-8") + b":" + (null if v is None else v) for k, v in rec.headers))
    key, value = rec.key, rec.value
    d = rec.decoded
    if d is not None and hasattr(d, "console"):  # Schema Registry's: JSON, else bytes
        key, value = d.console(key, value)
    elif d is not None:
        key = None if d.key is None else d.key_json().encode("utf-8")
        value = None if d.tombstone or d.value is None else d.value_json().encode("utf-8")
    if cfg.print_key:
        cols.append(null if key is None else key)
    out = cfg.key_separator.join(cols)
    if cfg.print_value:
        if cols:
            out += cfg.key_separator
        out += (null if value is None else value) + cfg.line_separator
    elif cols:
        # the formatter writes the line separator after the last printed column
        out += cfg.line_separator
    return out


def escaped(rec):
    """``rec`` with its key, value and headers as terminal-safe text
    (:func:`~kafkalog_cli.render.text.safe_bytes`: control characters and bytes that are
    not UTF-8 as visible escapes); a decoded record's JSON likewise."""
    from .text import safe, safe_bytes

    def esc(b):
        return None if b is None else safe_bytes(b).encode("utf-8")

    key, value, d = rec.key, rec.value, rec.decoded
    if d is not None and hasattr(d, "console"):
        key, value = map(esc, d.console(key, value))
    elif d is not None:
        key = None if d.key is None else safe(d.key_json()).encode("utf-8")
        value = (None if d.tombstone or d.value is None
                 else safe(d.value_json()).encode("utf-8"))
    else:
        key, value = esc(key), esc(value)
    headers = tuple((safe(k), esc(v)) for k, v in rec.headers)
    return rec._replace(key=key, value=value, headers=headers, decoded=None)


def write_console(records: Iterable, cfg: FormatterConfig, out=None, *,
                  escape: bool = False) -> int:
    """Write records in console-consumer format to a binary stream; returns the count.
    ``escape`` (stdout is a terminal): data bytes as visible escapes (:func:`escaped`),
    never raw; otherwise exactly the console consumer's bytes."""
    return _write_blocks(records, lambda rec: format_record(rec, cfg), out, escape)


def _write_blocks(records: Iterable, line, out, escape: bool) -> int:
    """``line(record)`` of each record to the binary stream ``out`` (stdout's), a block
    of lines per write; the records before an error are written. Returns the count."""
    out = out or sys.stdout.buffer
    w = out.write
    n = 0
    if escape:
        records = map(escaped, records)
    block: list[bytes] = []
    try:
        for rec in records:
            block.append(line(rec))
            n += 1
            if len(block) >= _BLOCK:  # one write per block of lines
                w(b"".join(block))
                block = []
    finally:  # the records before an error are written, as one by one
        if block:
            w(b"".join(block))
    out.flush()
    return n


# -- kcat's -f format --------------------------------------------------------------------

#: kcat's ``-f`` tokens (format.c ``fmt_parse``), each a function of a record
_KCAT_TOKENS = "okKsSRtpTh"


def _strtoul(text: bytes, i: int, base: int) -> tuple[int, int]:
    """C's ``strtoul(text + i, &next, base)`` for a string starting with a digit (the
    only way kcat calls it): ``(value, index after the digits)``; base 0 reads ``0x``
    as hex and a leading ``0`` as octal; a value past 2^64 - 1 is ULONG_MAX."""
    if base in (0, 16) and text[i:i + 2].lower() == b"0x" and i + 2 < len(text) and \
            chr(text[i + 2]) in "0123456789abcdefABCDEF":
        base, i = 16, i + 2
    elif base == 0:
        base = 8 if text[i:i + 1] == b"0" else 10
    digits = "0123456789abcdef"[:base]
    j = i
    while j < len(text) and chr(text[j]).lower() in digits:
        j += 1
    value = int(text[i:j], base) if j > i else 0
    return min(value, 2**64 - 1), j


def _kcat_literal(raw: bytes) -> bytes:
    """A literal part of a kcat format, its escapes converted as format.c ``fmt_add``
    does: ``\\t \\n \\r``; ``\\xHH`` (hex, when a digit follows the x) and
    ``\\NNN`` (C's base 0: decimal, octal after a 0, hex after 0x) as one byte, the
    value cut to 8 bits; any other escaped character as itself; then the string ends at
    its first NUL byte (kcat measures it with strlen)."""
    out = bytearray()
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == 0x5C and i + 1 < n:  # a backslash with something after it
            i += 1
            e = raw[i]
            base = 0
            if e == ord("x"):
                i += 1
                base = 16
                if i >= n:  # the C reads the terminating NUL here
                    out.append(0)
                    break
                e = raw[i]
            if e in b"tnr" and base == 0:
                out.append({ord("t"): 9, ord("n"): 10, ord("r"): 13}[e])
            elif 0x30 <= e <= 0x39:
                value, nxt = _strtoul(raw, i, base)
                out.append(value & 0xFF)
                i = nxt - 1
            else:
                out.append(e)
        else:
            out.append(c)
        i += 1
    nul = out.find(0)
    return bytes(out if nul < 0 else out[:nul])


def parse_kcat_format(fmt: str) -> list:
    """kcat's ``-f`` format string as a list of literal ``bytes`` and token letters
    (format.c ``fmt_parse``): ``%t %p %o %k %K %s %S %R %T %h``, ``%%``, escapes in the
    literal parts (:func:`_kcat_literal`).

    Raises:
        InvalidArgumentError: kcat's message for a format it refuses (``Empty
            formatter``, ``Unsupported formatter: %c``).
    """
    raw = fmt.encode("utf-8", "surrogateescape")
    parts: list = []
    i = 0
    while i < len(raw):
        t = raw.find(b"%", i)
        if t < 0:
            parts.append(_kcat_literal(raw[i:]))
            break
        if t > i:
            parts.append(_kcat_literal(raw[i:t]))
        if t + 1 >= len(raw):
            raise InvalidArgumentError("invalid --format: Empty formatter")
        tok = chr(raw[t + 1])
        if tok == "%":
            parts.append(b"%")
        elif tok in _KCAT_TOKENS:
            parts.append(tok)
        else:
            raise InvalidArgumentError(f"invalid --format: Unsupported formatter: %{tok}")
        i = t + 2
    return [p for p in parts if p != b""]


def _kcat_headers(headers) -> bytes:
    """``%h``: ``name=value`` joined with commas; an empty value prints nothing, a null
    one ``NULL`` (format.c ``print_headers``)."""
    return b",".join(k.encode("utf-8") + b"=" + (b"NULL" if v is None else v)
                     for k, v in headers)


def kcat_record(rec, parts: list) -> bytes:
    """One record as ``kcat -C -f`` writes it (format.c ``fmt_msg_output_str``): a null
    or empty key/value prints nothing for ``%k``/``%s`` and -1/0 for ``%K``/``%S``;
    ``%R`` is the value's length (-1 for null) as a big-endian int32; ``%T`` the
    timestamp in ms (0 for a v0 message, which has none: librdkafka leaves it unset). A decoded record of an internal
    topic prints its decoders' JSON, as the console format does; a key or value decoded
    through Schema Registry prints its JSON (as kcat's ``-s avro`` does), else its bytes."""
    key, value, d = rec.key, rec.value, rec.decoded
    if d is not None and hasattr(d, "console"):
        key, value = d.console(key, value)
    elif d is not None:
        key = None if d.key is None else d.key_json().encode("utf-8")
        value = None if d.tombstone or d.value is None else d.value_json().encode("utf-8")
    out = []
    for p in parts:
        if p.__class__ is bytes:
            out.append(p)
        elif p == "s":
            out.append(value or b"")
        elif p == "k":
            out.append(key or b"")
        elif p == "o":
            out.append(b"%d" % rec.offset)
        elif p == "S":
            out.append(b"-1" if value is None else b"%d" % len(value))
        elif p == "K":
            out.append(b"-1" if key is None else b"%d" % len(key))
        elif p == "R":
            out.append((-1 if value is None else len(value)).to_bytes(4, "big", signed=True))
        elif p == "t":
            out.append(rec.topic.encode("utf-8"))
        elif p == "p":
            out.append(b"%d" % rec.partition)
        elif p == "T":
            # librdkafka leaves a v0 message's timestamp unset: 0, not -1
            out.append(b"0" if rec.timestamp_type == NO_TIMESTAMP_TYPE
                       else b"%d" % rec.timestamp)
        elif p == "h":
            out.append(_kcat_headers(rec.headers))
    return b"".join(out)


def write_kcat(records: Iterable, parts: list, out=None, *, escape: bool = False) -> int:
    """Write records as ``kcat -C -f`` does (:func:`kcat_record`) to a binary stream;
    returns the count. ``escape`` (stdout is a terminal): data bytes as visible escapes
    (:func:`escaped`)."""
    return _write_blocks(records, lambda rec: kcat_record(rec, parts), out, escape)


def _json_bytes(data, encoding: str, estr) -> tuple[str, str | None]:
    from ..ops.encoding import encode_bytes

    if data is None:
        return "null", None
    text, label = encode_bytes(data, encoding)
    return estr(text), label


def json_line(rec, encoding: str = "utf8") -> str:
    """``rec.to_dict(encoding)`` as compact JSON text (no newline), built from per-field
    templates with json's own string encoder: the same keys in the same order, no dict
    (a decoded record goes through ``to_dict``)."""
    if rec.decoded is not None:
        if hasattr(rec.decoded, "console"):
            return _schema_json_line(rec, encoding)
        return _DUMPS(rec.to_dict(encoding))
    estr = _ESTR
    key, value = rec.key, rec.value
    klabel = vlabel = None
    try:
        if encoding != "utf8":
            raise UnicodeDecodeError("", b"", 0, 0, "")
        ktext = "null" if key is None else estr(key.decode())
        vtext = "null" if value is None else estr(value.decode())
    except UnicodeDecodeError:
        ktext, klabel = _json_bytes(key, encoding, estr)
        vtext, vlabel = _json_bytes(value, encoding, estr)
    epoch = rec.leader_epoch
    line = (f'{{"topic":{estr(rec.topic)},"partition":{rec.partition},'
            f'"offset":{rec.offset},"timestamp":{rec.timestamp},'
            f'"timestampType":{estr(rec.timestamp_type)},'
            f'"leaderEpoch":{"null" if epoch is None else epoch},"key":{ktext}')
    if klabel:
        line += f',"keyEncoding":"{klabel}"'
    line += f',"value":{vtext}'
    if vlabel:
        line += f',"valueEncoding":"{vlabel}"'
    if rec.headers:
        return line + ',"headers":' + _headers_text(rec.headers, encoding) + "}"
    return line + ',"headers":[]}'


def _headers_text(headers, encoding: str) -> str:
    """The ``headers`` array of a JSON line, as text."""
    hs = []
    for hk, hv in headers:
        htext, hlabel = _json_bytes(hv, encoding, _ESTR)
        hs.append(f'{{"key":{_ESTR(hk)},"value":{htext}'
                  + (f',"valueEncoding":"{hlabel}"}}' if hlabel else "}"))
    return "[" + ",".join(hs) + "]"


def _schema_json_lines(records: list, encoding: str) -> bytes:
    """The UTF-8 JSON lines of a block of records decoded through Schema Registry: each
    record as one dict of ``ConsumerRecord.to_dict``'s keys, in its order, holding the
    decoded values themselves, written by orjson in one call (a record it refuses, or
    with headers or a side left as bytes, through :func:`_schema_json_line_bytes`)."""
    import orjson

    dumps = orjson.dumps
    out = []
    put = out.append
    for rec in records:
        d = rec.decoded
        k, v = d.key, d.value
        if rec.headers or d.warnings or (k is None and rec.key is not None) or (
                v is None and rec.value is not None):
            put(_schema_json_line_bytes(rec, encoding))
            continue
        o = {"topic": rec.topic, "partition": rec.partition, "offset": rec.offset,
             "timestamp": rec.timestamp, "timestampType": rec.timestamp_type,
             "leaderEpoch": rec.leader_epoch}
        for name, f in (("key", k), ("value", v)):
            if f is None:
                o[name] = None
                continue
            m = f.meta
            o[name] = f.datum
            o[name + "Encoding"] = m.encoding
            o[name + "SchemaId"] = m.schema_id
            if m.subject is not None:
                o[name + "Subject"] = m.subject
        o["headers"] = []
        try:
            put(dumps(o))
        except TypeError:  # an integer beyond 64 bits
            put(_schema_json_line_bytes(rec, encoding))
    out.append(b"")
    return b"\n".join(out)


def _schema_json_line(rec, encoding: str) -> str:
    """:func:`json_line` of a record decoded through Schema Registry (text)."""
    return _schema_json_line_bytes(rec, encoding).decode()


def _raw_side(name: str, data, failed: bool, encoding: str) -> bytes:
    """A side left as bytes: ``"key":...`` (with its ``keyEncoding``) as UTF-8."""
    if data is None:
        return b'"%s":null' % name.encode()
    text, label = _json_bytes(data, "base64" if failed else encoding, _ESTR)
    return (f'"{name}":{text}' + (f',"{name}Encoding":"{label}"' if label else "")).encode()


def _schema_json_line_bytes(rec, encoding: str) -> bytes:
    """:func:`json_line` of a record decoded through Schema Registry, as UTF-8: the
    decoded key and value are the decoder's JSON bytes already, their labels made once
    per schema id (``ConsumerRecord.to_dict``'s keys in its order, nothing parsed back or
    re-encoded)."""
    d = rec.decoded
    k, v = d.key, d.value
    epoch = rec.leader_epoch
    head = (f'{{"topic":{_ESTR(rec.topic)},"partition":{rec.partition},'
            f'"offset":{rec.offset},"timestamp":{rec.timestamp},'
            f'"timestampType":"{rec.timestamp_type}",'
            f'"leaderEpoch":{"null" if epoch is None else epoch},').encode()
    tail = ',"headers":' + (_headers_text(rec.headers, encoding) if rec.headers else "[]")
    if d.warnings:
        tail += ',"decodeWarnings":' + _DUMPS(list(d.warnings))
    return b"".join((
        head,
        _raw_side("key", rec.key, d.key_failed, encoding) if k is None
        else k.meta.head + k.jsonb + k.meta.suffix,
        b",",
        _raw_side("value", rec.value, d.value_failed, encoding) if v is None
        else v.meta.head + v.jsonb + v.meta.suffix,
        tail.encode(), b"}"))


_DUMPS = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_ESTR = json.encoder.encode_basestring  # what ensure_ascii=False writes
#: records written per call: one write per block of lines
_BLOCK = 1024


def json_lines(records: list, encoding: str = "utf8") -> bytes | str:
    """:func:`json_line` of each of ``records`` with its newline, joined: UTF-8 bytes from
    the compiled loop when it is in use and takes the block (no decoded record), else
    text."""
    d = records[0].decoded if records else None
    if d is not None and hasattr(d, "console") and all(
            hasattr(r.decoded, "console") for r in records):
        return _schema_json_lines(records, encoding)
    if _c is not None and encoding in C_ENCODINGS:
        b = _c.read_json_lines(records, C_ENCODINGS[encoding])
        if b is not None:
            return b
    lines = [json_line(rec, encoding) for rec in records]
    lines.append("")
    return "\n".join(lines)


def write_json(records: Iterable, *, encoding: str = "utf8", out=None) -> int:
    """JSON Lines, one object per record (see ConsumerRecord.to_dict, :func:`json_line`),
    written a block of lines at a time (:func:`json_lines`); returns the count."""
    out = out or sys.stdout
    w, flush = text_and_bytes_writer(out)
    n = 0
    block: list = []
    try:
        for rec in records:
            block.append(rec)
            n += 1
            if len(block) >= _BLOCK:
                w(json_lines(block, encoding))
                block = []
    finally:  # the records before an error are written, as one by one
        if block:
            w(json_lines(block, encoding))
    flush()
    out.flush()
    return n


def report_problems(result, *, json_lines: bool = False) -> None:
    """After the records: one line on stderr per problem of a read
    (:attr:`~kafkalog_cli.ops.read.ReadResult.problems`) and per byte range it skipped
    (``--skip-corrupt``); with ``json_lines`` the skipped ranges are also written to
    stdout as ``invalidBytes`` objects (lines ``produce`` passes over)."""
    from .consoles import error

    sys.stdout.flush()
    if json_lines and result.skipped:
        w, flush = text_and_bytes_writer(sys.stdout)
        w("".join(json.dumps(s.to_dict(), separators=(",", ":"), ensure_ascii=False) + "\n"
                  for s in result.skipped))
        flush()
        sys.stdout.flush()
    for problem in result.problems:
        error(problem)
    for s in result.skipped:
        error(s.message())
