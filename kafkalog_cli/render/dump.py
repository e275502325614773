"""Renderers of ``dump-segment`` events: Kafka's exact text, JSON Lines, and rich text."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable

from .encoding import encode_bytes, java_string

_INTERNAL_RECORD_KEYS = ("timestampType", "magic", "controlTypeId", "decoded", "controlValue")


def _b(v: bool) -> str:
    return "true" if v else "false"


def _value_text(v) -> str:
    """A key or payload as Kafka's StringDecoder (or a decoder's JSON) prints it."""
    if isinstance(v, (bytes, bytearray, memoryview)):
        return java_string(v)
    if isinstance(v, str):
        return v
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


def kafka_record_line(ev: dict, skip_metadata: bool) -> str:
    """A record line of DumpLogSegments (``| offset: ...``), as the Kafka 4 tool prints it
    (tools/DumpLogSegments.java: printRecordMetadata, printControlRecord,
    printRecordContents)."""
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
        parts.append(f"{prefix}key: {_value_text(key)}")
        prefix = " "
    if payload is not None:
        parts.append(f"{prefix}payload: {_value_text(payload)}")
    return "".join(parts)


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
                out=None, err=None) -> int:
    """Write the Kafka tool's text; returns the number of diagnostics written to stderr."""
    out = out or sys.stdout
    err = err or sys.stderr
    w = out.write
    n_diag = 0
    for ev in events:
        t = ev["type"]
        if t == "record":
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
            out.flush()
            err.write(ev["message"] + "\n")
            n_diag += 1
    return n_diag


def json_event(ev: dict, encoding: str) -> dict:
    """The JSON Lines object of an event (bytes encoded per ``encoding``)."""
    if ev["type"] != "record":
        return ev
    o = {k: v for k, v in ev.items() if k not in _INTERNAL_RECORD_KEYS}
    if "payload" in ev and not ev.get("decoded"):
        for name in ("key", "payload"):
            text, fallback = encode_bytes(ev[name], encoding)
            o[name] = text
            if fallback:
                o[name + "Encoding"] = fallback
        hs = []
        for h in ev["headers"]:
            text, fallback = encode_bytes(h["value"], encoding)
            hd = {"key": h["key"], "value": text}
            if fallback:
                hd["valueEncoding"] = fallback
            hs.append(hd)
        o["headers"] = hs
    elif "headers" in ev:
        hs = []
        for h in ev["headers"]:
            text, fallback = encode_bytes(h["value"], encoding)
            hd = {"key": h["key"], "value": text}
            if fallback:
                hd["valueEncoding"] = fallback
            hs.append(hd)
        o["headers"] = hs
    return o


def write_json(events: Iterable[dict], *, encoding: str = "utf8", out=None, err=None) -> int:
    """Write JSON Lines (diagnostics go to stderr as text); returns diagnostics count."""
    out = out or sys.stdout
    err = err or sys.stderr
    w = out.write
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    n_diag = 0
    for ev in events:
        if ev["type"] == "diagnostic":
            out.flush()
            err.write(ev["message"] + "\n")
            n_diag += 1
            continue
        w(dumps(json_event(ev, encoding)) + "\n")
    return n_diag


def write_rich(events: Iterable[dict], *, skip_record_metadata: bool = False) -> int:
    """A rich rendering for terminals: a rule per file, batch lines highlighted, record
    lines indented beneath them."""
    from rich.text import Text

    from .consoles import stderr_console, stdout_console

    con = stdout_console()
    n_diag = 0
    for ev in events:
        t = ev["type"]
        if t == "file":
            title = ev["file"]
            if ev["kind"] == "log":
                title += f"  (log starting offset {ev['startOffset']})"
            con.rule(Text(title, style="bold"))
        elif t == "batch":
            style = "cyan" if ev["isValid"] else "bold red"
            line = Text()
            line.append(f"{ev['baseOffset']}..{ev['lastOffset']}", style="bold " + style)
            line.append(f"  @{ev['position']}  {ev['size']} B  magic {ev['magic']}  "
                        f"{ev['compresscodec']}  {ev['timestampType']} {ev['maxTimestamp']}",
                        style=style)
            extras = []
            if ev["producerId"] != -1:
                extras.append(f"pid {ev['producerId']} epoch {ev['producerEpoch']} "
                              f"seq {ev['baseSequence']}..{ev['lastSequence']}")
            if ev["isTransactional"]:
                extras.append("transactional")
            if ev["isControl"]:
                extras.append("control")
            if ev["partitionLeaderEpoch"] != -1:
                extras.append(f"leader epoch {ev['partitionLeaderEpoch']}")
            if not ev["isValid"]:
                extras.append(f"CRC MISMATCH (stored {ev['crc']})")
            if extras:
                line.append("  " + "  ".join(extras), style="dim" if ev["isValid"] else style)
            con.print(line)
        elif t == "record":
            con.print(Text("  " + kafka_record_line(ev, skip_record_metadata)[2:],
                           style="default"))
        elif t == "invalid_bytes":
            con.print(Text(f"Found {ev['bytes']} invalid bytes at the end of "
                           f"{os.path.basename(ev['file'])} (from byte {ev['position']})",
                           style="bold red"))
        elif t == "index_entry":
            con.print(f"offset {ev['offset']}  position {ev['position']}")
        elif t == "timeindex_entry":
            con.print(f"timestamp {ev['timestamp']}  offset {ev['offset']}")
        elif t == "producer_snapshot_entry":
            line = Text()
            line.append(f"producer {ev['producerId']} epoch {ev['producerEpoch']}",
                        style="bold cyan")
            if ev["lastOffset"] is not None:
                line.append(f"  seq {ev['firstSequence']}..{ev['lastSequence']}  last offset "
                            f"{ev['lastOffset']} (delta {ev['offsetDelta']})")
            line.append(f"  last timestamp {ev['lastTimestamp']}  coordinator epoch "
                        f"{ev['coordinatorEpoch']}", style="dim")
            if ev["currentTxnFirstOffset"] is not None:
                line.append(f"  open transaction from offset {ev['currentTxnFirstOffset']}",
                            style="yellow")
            con.print(line)
        elif t == "txn_index_entry":
            con.print(f"aborted: producer {ev['producerId']}  offsets {ev['firstOffset']}.."
                      f"{ev['lastOffset']}  last stable offset {ev['lastStableOffset']}  "
                      f"(version {ev['version']})")
        elif t == "index_empty":
            con.print(Text(f"{ev['file']} is empty.", style="dim"))
        elif t == "index_sane":
            con.print(Text(f"{ev['file']} passed sanity check.", style="green"))
        elif t == "diagnostic":
            stderr_console().print(Text(ev["message"], style="yellow"))
            n_diag += 1
    return n_diag
