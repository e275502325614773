"""Renderers of ``dump-segment`` events: Kafka's exact text, JSON Lines, and rich text.

The record lines of a ``records`` event (a block of an ordinary v2 batch's records) are
formatted by the optional compiled loops (``_speedups.c``, built beside the format's core)
when they are in use, straight into UTF-8 bytes written to the binary stream beneath
stdout, one write per block; :func:`kafka_record_lines` and :func:`json_record_lines` are
the pure-Python reference (``KAFKALOG_PURE_PYTHON=1``) and give the same bytes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from ..errors import KafkalogError
from ..ops.dump_records import batch_event, event_records
from ..ops.encoding import encode_bytes
from .encoding import java_string
from .lines import C_ENCODINGS, compiled_lines, text_and_bytes_writer

_c = compiled_lines()

_INTERNAL_RECORD_KEYS = ("timestampType", "magic", "controlTypeId", "decoded", "controlValue",
                         "schemaDecoded")


def _b(v: bool) -> str:
    return "true" if v else "false"


def _value_text(v) -> str:
    """A key or payload as Kafka's StringDecoder (or a decoder's JSON) prints it."""
    if isinstance(v, (bytes, bytearray, memoryview)):
        return java_string(v)
    if isinstance(v, str):
        return v
    import json

    return json.dumps(v, separators=(",", ":"))


def kafka_batch_line(ev: dict) -> str:
    """The batch line of DumpLogSegments.printBatchLevel."""
    if ev["magic"] >= 2:
        dh = ev["deleteHorizonMs"]
        head = (f"baseOffset: {ev['baseOffset']} lastOffset: {ev['lastOffset']} "
                f"count: {ev['count']} baseSequence: {ev['baseSequence']} "
                f"lastSequence: {ev['lastSequence']} producerId: {ev['producerId']} "
                f"producerEpoch: {ev['producerEpoch']} "
                f"partitionLeaderEpoch: {ev['partitionLeaderEpoch']} "
                f"isTransactional: {_b(ev['isTransactional'])} isControl: {_b(ev['isControl'])} "
                f"deleteHorizonMs: "
                f"{'OptionalLong.empty' if dh is None else f'OptionalLong[{dh}]'}")
    else:
        head = f"offset: {ev['lastOffset']}"
    return (f"{head} position: {ev['position']} {ev['timestampType']}: {ev['maxTimestamp']} "
            f"size: {ev['size']} magic: {ev['magic']} compresscodec: {ev['compresscodec']} "
            f"crc: {ev['crc']} isvalid: {_b(ev['isValid'])}")


def _safe_value_text(v) -> str:
    """A key or payload for the rich view: bytes that are not UTF-8 as ``\\xNN``, control
    characters escaped (:mod:`kafkalog_cli.render.text`)."""
    from .text import safe, safe_bytes

    if isinstance(v, (bytes, bytearray, memoryview)):
        return safe_bytes(v)
    return safe(_value_text(v))


def kafka_record_line(ev: dict, skip_metadata: bool, text=_value_text) -> str:
    """A record line of DumpLogSegments (``| offset: ...``), as the Kafka 4 tool prints it
    (tools/DumpLogSegments.java: printRecordMetadata, printControlRecord,
    printRecordContents); ``text`` turns a key or payload into text (Kafka's
    StringDecoder by default)."""
    parts = []
    if not skip_metadata:
        s = (f"| offset: {ev['offset']} {ev['timestampType']}: {ev['timestamp']} "
             f"keySize: {ev['keySize']} valueSize: {ev['valueSize']}")
        if ev["magic"] >= 2:
            s += f" sequence: {ev['sequence']} headerKeys: [{','.join(ev['headerKeys'])}]"
        else:
            s += f" isValid: {_b(ev['isValid'])} crc: {ev['crc']}"
        if "controlType" in ev:
            ct = ev["controlType"]
            if ct in ("ABORT", "COMMIT") and "coordinatorEpoch" in ev:
                s += f" endTxnMarker: {ct} coordinatorEpoch: {ev['coordinatorEpoch']}"
            elif "controlValue" in ev:
                s += f" {ev['controlValue']}"
            else:
                s += f" controlType: {ct}({ev.get('controlTypeId', -1)})"
        parts.append(s)
    prefix = "| " if skip_metadata else " "
    if ev.get("decoded"):  # an internal topic's parser: what Kafka's tool prints
        key, payload = ev["decoded"].kafka_text(ev["offset"])
    elif "payload" in ev:
        key, payload = ev["key"], ev["payload"]
    else:
        key = payload = None
    if key is not None:
        parts.append(f"{prefix}key: {text(key)}")
        prefix = " "
    if payload is not None:
        parts.append(f"{prefix}payload: {text(payload)}")
    return "".join(parts)


def _log_append_time(batch) -> int | None:
    """Every record's timestamp in a LogAppendTime batch (its maxTimestamp), else None."""
    return batch.max_timestamp if batch.timestamp_type == "LogAppendTime" else None


def _sequences(batch, records) -> list | None:
    """Each record's sequence (DefaultRecord.sequence), or None when the batch has none
    (every record's is -1)."""
    base_seq = batch.base_sequence
    if base_seq < 0:
        return None
    base = batch.base_offset
    seq = batch.record_sequence
    return [seq(r[0] - base) for r in records]


def kafka_record_lines(ev: dict, skip_metadata: bool, with_data: bool) -> str:
    """The record lines of a ``records`` event (several records of one v2 batch, no
    control records, no decoder), each as :func:`kafka_record_line` writes it, joined
    with their newlines: one string per block, formatted without a dict per record."""
    batch = ev["batch"]
    records = event_records(ev)
    seqs = _sequences(batch, records)
    ts_type = batch.timestamp_type
    text = java_string
    out = []
    put = out.append
    for i, (off, ts, key, value, headers) in enumerate(records):
        if skip_metadata:
            line = ""
            prefix = "| "
        else:
            line = (f"| offset: {off} {ts_type}: {ts} "
                    f"keySize: {-1 if key is None else len(key)} "
                    f"valueSize: {-1 if value is None else len(value)} "
                    f"sequence: {-1 if seqs is None else seqs[i]} "
                    f"headerKeys: [{','.join([h[0] for h in headers]) if headers else ''}]")
            prefix = " "
        if with_data:
            if key is not None:
                try:  # well-formed UTF-8 reads the same in Python and Java
                    k = key.decode()
                except UnicodeDecodeError:
                    k = text(key)
                line += f"{prefix}key: {k}"
                prefix = " "
            if value is not None:
                try:
                    v = value.decode()
                except UnicodeDecodeError:
                    v = text(value)
                line += f"{prefix}payload: {v}"
        put(line)
    put("")
    return "\n".join(out)


def kafka_record_bytes(ev: dict, skip_metadata: bool, with_data: bool) -> bytes | str:
    """:func:`kafka_record_lines` of a ``records`` event as UTF-8 bytes from the compiled
    loop, or as its text when that is off or declines the block (a shape it does not
    take: the Python loop renders it)."""
    if _c is not None:
        batch = ev["batch"]
        block = ev.get("block")
        if block is not None:
            b = _c.kafka_block(block, batch.count, batch.base_offset, batch.base_timestamp,
                               _log_append_time(batch), batch.timestamp_type,
                               batch.base_sequence, skip_metadata, with_data, java_string)
        else:
            b = _c.kafka_lines(ev["records"], batch.timestamp_type, batch.base_offset,
                               batch.base_sequence, skip_metadata, with_data, java_string)
        if b is not None:
            return b
    return kafka_record_lines(ev, skip_metadata, with_data)


def _run_events(ev: dict) -> Iterable[dict]:
    """The ``batch`` and ``records`` events a ``batches`` event stands for."""
    file = ev["file"]
    for batch, _, block in ev["runs"]:
        yield batch_event(batch, file)
        yield {"type": "records", "file": file, "batch": batch, "block": block}


def kafka_run_bytes(ev: dict, skip_metadata: bool, with_data: bool) -> list:
    """The lines of a ``batches`` event (a run of ordinary v2 batches: each batch's line,
    then its records'), as one bytes from the compiled loop, or else as the pieces of
    :func:`kafka_batch_line` and :func:`kafka_record_bytes` of each batch."""
    if _c is not None:
        b = _c.kafka_run(ev["runs"], skip_metadata, with_data, java_string)
        if b is not None:
            return [b]
    return [kafka_batch_line(e) + "\n" if e["type"] == "batch"
            else kafka_record_bytes(e, skip_metadata, with_data) for e in _run_events(ev)]


def _optional_long(v) -> str:
    """A Java OptionalLong's toString."""
    return "OptionalLong.empty" if v is None else f"OptionalLong[{v}]"


def kafka_producer_snapshot_line(ev: dict) -> str:
    """A line of DumpLogSegments.dumpProducerIdSnapshot (with its trailing space when the
    entry holds no batch metadata)."""
    s = (f"producerId: {ev['producerId']} producerEpoch: {ev['producerEpoch']} "
         f"coordinatorEpoch: {ev['coordinatorEpoch']} "
         f"currentTxnFirstOffset: {_optional_long(ev['currentTxnFirstOffset'])} "
         f"lastTimestamp: {ev['lastTimestamp']} ")
    if ev["lastOffset"] is not None:
        s += (f"firstSequence: {ev['firstSequence']} lastSequence: {ev['lastSequence']} "
              f"lastOffset: {ev['lastOffset']} offsetDelta: {ev['offsetDelta']} "
              f"timestamp: {ev['timestamp']}")
    return s


def kafka_txn_index_line(ev: dict) -> str:
    """A line of DumpLogSegments.dumpTxnIndex."""
    return (f"version: {ev['version']} producerId: {ev['producerId']} "
            f"firstOffset: {ev['firstOffset']} lastOffset: {ev['lastOffset']} "
            f"lastStableOffset: {ev['lastStableOffset']}")


def write_kafka(events: Iterable[dict], *, skip_record_metadata: bool = False,
                with_data: bool = False, out=None, err=None) -> int:
    """Write the Kafka tool's text; returns the number of diagnostics written to stderr.
    ``with_data``: the dump printed data (``--print-data-log``), for ``records`` events
    (``record`` events carry it themselves)."""
    out = out or sys.stdout
    err = err or sys.stderr
    w, flush = text_and_bytes_writer(out)
    n_diag = 0
    for ev in events:
        t = ev["type"]
        if t == "batches":
            for piece in kafka_run_bytes(ev, skip_record_metadata, with_data):
                w(piece)
        elif t == "records":
            w(kafka_record_bytes(ev, skip_record_metadata, with_data))
        elif t == "record":
            w(kafka_record_line(ev, skip_record_metadata) + "\n")
        elif t == "batch":
            w(kafka_batch_line(ev) + "\n")
        elif t == "file":
            w(f"Dumping {ev['file']}\n")
            if ev["kind"] == "log":
                w(f"Log starting offset: {ev['startOffset']}\n")
            elif ev["kind"] == "snapshot":
                if "snapshotEndOffset" in ev:
                    w(f"Snapshot end offset: {ev['snapshotEndOffset']}, "
                      f"epoch: {ev['snapshotEpoch']}\n")
                else:
                    w("KRaft bootstrap snapshot\n")
        elif t == "index_entry":
            w(f"offset: {ev['offset']} position: {ev['position']}\n")
        elif t == "timeindex_entry":
            w(f"timestamp: {ev['timestamp']} offset: {ev['offset']}\n")
        elif t == "invalid_bytes":
            # the tool died there (the finding says so), or --skip-corrupt passed a range
            # (stderr only)
            if "kafkaException" not in ev and not ev.get("skipped"):
                w(f"Found {ev['bytes']} invalid bytes at the end of "
                  f"{os.path.basename(ev['file'])}\n")
        elif t == "producer_snapshot_entry":
            w(kafka_producer_snapshot_line(ev) + "\n")
        elif t == "txn_index_entry":
            w(kafka_txn_index_line(ev) + "\n")
        elif t == "index_empty":
            w(f"{ev['file']} is empty.\n")
        elif t == "index_sane":
            w(f"{ev['file']} passed sanity check.\n")
        elif t == "diagnostic":
            flush()
            err.write(ev["message"] + "\n")
            n_diag += 1
    return n_diag


#: event type -> the JSON object's ``type`` (camelCase, as every name in docs/json.md)
JSON_TYPES = {"file": "file", "batch": "batch", "record": "record",
              "invalid_bytes": "invalidBytes", "index_entry": "indexEntry",
              "timeindex_entry": "timeIndexEntry", "index_empty": "indexEmpty",
              "index_sane": "indexSane", "producer_snapshot_entry": "producerSnapshotEntry",
              "txn_index_entry": "txnIndexEntry"}


def _json_headers(headers, encoding: str) -> list:
    hs = []
    for h in headers:
        text, label = encode_bytes(h["value"], encoding)
        hd = {"key": h["key"], "value": text}
        if label:
            hd["valueEncoding"] = label
        hs.append(hd)
    return hs


def json_event(ev: dict, encoding: str) -> dict:
    """The JSON Lines object of an event (docs/json.md, ``dump-event.json``): ``type``
    in camelCase (:data:`JSON_TYPES`); a record's payload as ``value`` with the bytes
    encoded per ``encoding`` and ``keyEncoding`` / ``valueEncoding`` beside any field
    that is not UTF-8 text, as ``read -o json`` writes them, so that both are
    ``produce --format jsonl`` input."""
    t = ev["type"]
    if t != "record":
        jt = JSON_TYPES.get(t, t)
        return ev if jt == t else {**ev, "type": jt}
    o = {}
    for k, v in ev.items():
        if k not in _INTERNAL_RECORD_KEYS:
            o["value" if k == "payload" else k] = v
    sd = ev.get("schemaDecoded")
    if sd is not None:  # Schema Registry's: decoded sides as JSON, others as bytes
        for name, out, f, failed in (("key", "key", sd.key, sd.key_failed),
                                     ("payload", "value", sd.value, sd.value_failed)):
            if f is not None:
                o[out] = f.value
                continue
            text, label = encode_bytes(ev[name], "base64" if failed else encoding)
            o[out] = text
            if label:
                o[out + "Encoding"] = label
        o["headers"] = _json_headers(ev["headers"], encoding)
    elif "payload" in ev and not ev.get("decoded"):
        for name, out in (("key", "key"), ("payload", "value")):
            text, label = encode_bytes(ev[name], encoding)
            o[out] = text
            if label:
                o[out + "Encoding"] = label
        o["headers"] = _json_headers(ev["headers"], encoding)
    elif "headers" in ev:
        o["headers"] = _json_headers(ev["headers"], encoding)
    if ev.get("decoded"):
        # as read -o json names it: the key and value are the decoders' JSON, not the
        # record's bytes (produce refuses such a line)
        o["keyType"] = ev["decoded"].key_type
    return o


def _encode_basestring(s: str) -> str:
    """A str as a JSON string, as ``ensure_ascii=False`` writes it (json.encoder's
    encode_basestring; the json package is loaded on first use: -o kafka needs none of
    it)."""
    global _encode_basestring
    from json.encoder import encode_basestring

    _encode_basestring = encode_basestring
    return encode_basestring(s)


def _json_bytes(data, encoding: str) -> tuple[str, str | None]:
    """A key, value or header value as JSON text and its ``...Encoding`` label."""
    if data is None:
        return "null", None
    text, label = encode_bytes(data, encoding)
    return _encode_basestring(text), label


def json_record_lines(ev: dict, encoding: str, with_data: bool) -> str:
    """The JSON Lines of a ``records`` event, each the text ``json_event`` gives for the
    record (same keys in the same order), built from per-field templates with no dict
    per record; joined with their newlines."""
    batch = ev["batch"]
    records = event_records(ev)
    seqs = _sequences(batch, records)
    out = []
    put = out.append
    estr = _encode_basestring
    utf8 = encoding == "utf8"
    for i, (off, ts, key, value, headers) in enumerate(records):
        head = (f'{{"type":"record","offset":{off},"timestamp":{ts},'
                f'"keySize":{-1 if key is None else len(key)},'
                f'"valueSize":{-1 if value is None else len(value)},'
                f'"sequence":{-1 if seqs is None else seqs[i]},"headerKeys":'
                f'[{",".join([estr(h[0]) for h in headers]) if headers else ""}]')
        if not with_data:
            put(head + "}\n")
            continue
        klabel = vlabel = None
        try:
            if not utf8:
                raise UnicodeDecodeError("", b"", 0, 0, "")
            ktext = "null" if key is None else estr(key.decode())
            vtext = "null" if value is None else estr(value.decode())
        except UnicodeDecodeError:
            ktext, klabel = _json_bytes(key, encoding)
            vtext, vlabel = _json_bytes(value, encoding)
        if headers:
            hs = []
            for hk, hv in headers:
                htext, hlabel = _json_bytes(hv, encoding)
                hs.append(f'{{"key":{estr(hk)},"value":{htext}'
                          + (f',"valueEncoding":"{hlabel}"}}' if hlabel else "}"))
            htext = "[" + ",".join(hs) + "]"
        else:
            htext = "[]"
        # key and value as parts of their own: a huge one is copied once, by the join
        put(head + ',"key":')
        put(ktext)
        put(',"value":')
        put(vtext)
        tail = f',"headers":{htext}'
        if klabel:
            tail += f',"keyEncoding":"{klabel}"'
        if vlabel:
            tail += f',"valueEncoding":"{vlabel}"'
        put(tail + "}\n")
    return "".join(out)


def json_record_bytes(ev: dict, encoding: str, with_data: bool) -> bytes | str:
    """:func:`json_record_lines` of a ``records`` event as UTF-8 bytes from the compiled
    loop, or as its text (as :func:`kafka_record_bytes`)."""
    if _c is not None and encoding in C_ENCODINGS:
        batch = ev["batch"]
        block = ev.get("block")
        if block is not None:
            b = _c.json_block(block, batch.count, batch.base_offset, batch.base_timestamp,
                              _log_append_time(batch), batch.base_sequence, with_data,
                              C_ENCODINGS[encoding])
        else:
            b = _c.json_lines(ev["records"], batch.base_offset, batch.base_sequence,
                              with_data, C_ENCODINGS[encoding])
        if b is not None:
            return b
    return json_record_lines(ev, encoding, with_data)


def json_run_bytes(ev: dict, encoding: str, with_data: bool, dumps) -> list:
    """The JSON Lines of a ``batches`` event (as :func:`kafka_run_bytes`): one bytes from
    the compiled loop, or else the pieces of each batch's object and
    :func:`json_record_bytes`."""
    if _c is not None and encoding in C_ENCODINGS:
        try:
            prefix = ('{"type":"batch","file":' + _encode_basestring(ev["file"])
                      + ',"position":').encode()
        except UnicodeEncodeError:  # a file name that is not UTF-8 (surrogate escapes)
            prefix = None
        if prefix is not None:
            b = _c.json_run(ev["runs"], prefix, with_data, C_ENCODINGS[encoding])
            if b is not None:
                return [b]
    return [dumps(json_event(e, encoding)) + "\n" if e["type"] == "batch"
            else json_record_bytes(e, encoding, with_data) for e in _run_events(ev)]


def write_json(events: Iterable[dict], *, encoding: str = "utf8", with_data: bool = False,
               out=None, err=None) -> int:
    """Write JSON Lines (diagnostics go to stderr as text); returns diagnostics count.
    ``with_data``: as :func:`write_kafka`'s."""
    out = out or sys.stdout
    err = err or sys.stderr
    w, flush = text_and_bytes_writer(out)
    import json

    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    n_diag = 0
    for ev in events:
        if ev["type"] == "batches":
            for piece in json_run_bytes(ev, encoding, with_data, dumps):
                w(piece)
            continue
        if ev["type"] == "records":
            w(json_record_bytes(ev, encoding, with_data))
            continue
        if ev["type"] == "diagnostic":
            flush()
            err.write(ev["message"] + "\n")
            n_diag += 1
            continue
        w(dumps(json_event(ev, encoding)) + "\n")
    return n_diag


def _rich_record_atoms(ev: dict, skip_metadata: bool) -> list[str]:
    """The parts of a record line of the rich view (:func:`kafka_record_line`'s fields,
    keys and payloads escaped), each kept whole on a line when it fits."""
    line = kafka_record_line(ev, skip_metadata, _safe_value_text)
    from .text import safe

    line = safe(line[2:] if line.startswith("| ") else line.lstrip())
    # break between the tool's "name: value" fields, never inside one
    names = ("offset", ev.get("timestampType", ""), "keySize", "valueSize", "sequence",
             "headerKeys", "isValid", "crc", "endTxnMarker", "coordinatorEpoch",
             "controlType", "key", "payload")
    atoms: list[str] = []
    for word in line.split(" "):
        if atoms and not any(word == f"{n}:" for n in names if n):
            atoms[-1] += " " + word
        else:
            atoms.append(word)
    return atoms


def _print_packed(con, parts, style: str = "", *, indent: int = 0, hang: int = 2) -> None:
    """``parts`` (str or Text) on lines of the console's width, breaking only between
    parts (:func:`~kafkalog_cli.render.tables.pack_atoms`), the first line indented by
    ``indent``, the others by ``indent + hang``."""
    from rich.text import Text

    from .tables import pack_atoms

    atoms = [p if isinstance(p, Text) else Text(p, style=style) for p in parts]
    if indent and atoms:
        atoms[0] = Text(" " * indent).append_text(atoms[0])
    for line in pack_atoms(atoms, con.width, indent=indent + hang):
        con.print(line, overflow="fold", soft_wrap=False, no_wrap=False)


def _rule(con, title: str) -> None:
    """A rule with ``title`` in it, or, when the title does not fit a rule, the title on
    its own (folded, never cut) above a plain rule."""
    from rich.text import Text

    if len(title) + 6 <= con.width:
        con.rule(Text(title, style="bold"))
        return
    con.print(Text(title, style="bold"), overflow="fold", soft_wrap=False, no_wrap=False)
    con.rule()


def write_rich(events: Iterable[dict], *, skip_record_metadata: bool = False,
               console=None, err_console=None) -> int:
    """A rich rendering for terminals: a rule per file, batch lines highlighted, record
    lines indented beneath them, every line fitted to the terminal's width (broken
    between fields, never inside a number or a name). Data and names are escaped
    (:mod:`.text`): a record's bytes never reach the terminal raw."""
    from rich.text import Text

    from .consoles import stderr_console, stdout_console
    from .text import safe

    con = console or stdout_console()
    err = err_console or stderr_console()
    n_diag = 0
    for ev in events:
        t = ev["type"]
        if t == "file":
            title = safe(ev["file"])
            if ev["kind"] == "log":
                title += f"  (log starting offset {ev['startOffset']})"
            _rule(con, title)
        elif t == "batch":
            style = "cyan" if ev["isValid"] else "bold red"
            parts = [Text(f"{ev['baseOffset']}..{ev['lastOffset']}", style="bold " + style),
                     f"@{ev['position']}", f"{ev['size']} B", f"magic {ev['magic']}",
                     ev["compresscodec"], f"{ev['timestampType']} {ev['maxTimestamp']}"]
            parts = [p if isinstance(p, Text) else Text(p, style=style) for p in parts]
            extras = []
            if ev["producerId"] != -1:
                extras += [f"pid {ev['producerId']}", f"epoch {ev['producerEpoch']}",
                           f"seq {ev['baseSequence']}..{ev['lastSequence']}"]
            if ev["isTransactional"]:
                extras.append("transactional")
            if ev["isControl"]:
                extras.append("control")
            if ev["partitionLeaderEpoch"] != -1:
                extras.append(f"leader epoch {ev['partitionLeaderEpoch']}")
            if not ev["isValid"]:
                extras.append(f"CRC MISMATCH (stored {ev['crc']})")
            extra_style = "dim" if ev["isValid"] else style
            _print_packed(con, parts + [Text(x, style=extra_style) for x in extras])
        elif t == "record":
            _print_packed(con, _rich_record_atoms(ev, skip_record_metadata), "default",
                          indent=2)
        elif t == "invalid_bytes":
            what = ("Skipped {} invalid bytes in" if ev.get("skipped")
                    else "Found {} invalid bytes at the end of").format(ev["bytes"])
            con.print(Text(f"{what} "
                           f"{safe(os.path.basename(ev['file']))} (from byte "
                           f"{ev['position']})",
                           style="bold red"), soft_wrap=False, overflow="fold")
        elif t == "index_entry":
            con.print(Text(f"offset {ev['offset']}  position {ev['position']}"))
        elif t == "timeindex_entry":
            con.print(Text(f"timestamp {ev['timestamp']}  offset {ev['offset']}"))
        elif t == "producer_snapshot_entry":
            parts = [Text(f"producer {ev['producerId']} epoch {ev['producerEpoch']}",
                          style="bold cyan")]
            if ev["lastOffset"] is not None:
                parts += [f"seq {ev['firstSequence']}..{ev['lastSequence']}",
                          f"last offset {ev['lastOffset']} (delta {ev['offsetDelta']})"]
            parts += [Text(f"last timestamp {ev['lastTimestamp']}", style="dim"),
                      Text(f"coordinator epoch {ev['coordinatorEpoch']}", style="dim")]
            if ev["currentTxnFirstOffset"] is not None:
                parts.append(Text(f"open transaction from offset "
                                  f"{ev['currentTxnFirstOffset']}", style="yellow"))
            _print_packed(con, parts)
        elif t == "txn_index_entry":
            _print_packed(con, [f"aborted: producer {ev['producerId']}",
                                f"offsets {ev['firstOffset']}..{ev['lastOffset']}",
                                f"last stable offset {ev['lastStableOffset']}",
                                f"(version {ev['version']})"])
        elif t == "index_empty":
            con.print(Text(f"{safe(ev['file'])} is empty.", style="dim"),
                      soft_wrap=False, overflow="fold")
        elif t == "index_sane":
            con.print(Text(f"{safe(ev['file'])} passed sanity check.", style="green"),
                      soft_wrap=False, overflow="fold")
        elif t == "diagnostic":
            err.print(Text(safe(ev["message"]), style="yellow"))
            n_diag += 1
    return n_diag


def report_findings(findings) -> None:
    """One line per damaged file on stderr (a :class:`~kafkalog_cli.ops.dump.
    DumpFindings`): the first batch failing its CRC check, then the invalid bytes at the
    end of a log (a log without any whole batch said so). The diagnostics of corrupt
    data were already printed, one line each, as the dump went."""
    from .consoles import error

    for file, positions in findings.bad_crc.items():
        msg = "record batch fails its CRC check (isvalid: false)"
        if len(positions) > 1:
            msg += f", and {len(positions) - 1} more after it"
        error(str(KafkalogError(msg, file=file, position=positions[0])))
    for ev in findings.invalid:
        why = f" ({ev['reason']})" if ev.get("reason") else ""
        if ev.get("skipped"):
            msg = (f"skipped {ev['bytes']} bytes that are not a valid batch{why}; reading "
                   f"resumed at byte {ev['position'] + ev['bytes']}")
        elif ev["position"] == 0:
            msg = (f"no whole record batch: {ev['bytes']} bytes are truncated or not a Kafka "
                   f"log{why}")
        else:
            msg = f"{ev['bytes']} invalid bytes at the end of the log{why}"
        error(str(KafkalogError(msg, file=ev["file"], position=ev["position"])))
