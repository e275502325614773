"""``kafkalog dump-segment``: a faster, scriptable kafka-dump-log.sh."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ..app import app
from ..options import (
    MAX_DECOMPRESSED_DEFAULT,
    DataEncoding,
    DumpOutput,
    MaxDecompressedOpt,
    Paths,
)


@app.command("dump-segment")
def dump_segment(
    paths: Paths,
    # -- what to read (kafka-dump-log.sh's options) --
    deep_iteration: Annotated[bool, typer.Option(
        "--deep-iteration", help="Decode every record, not only batch headers.")] = False,
    print_data_log: Annotated[bool, typer.Option(
        "--print-data-log", help="Print keys, payloads and headers (implies --deep-iteration).")
    ] = False,
    max_bytes: Annotated[int | None, typer.Option(
        "--max-bytes", min=0, help="Read at most this many bytes of each .log.")] = None,
    max_message_size: Annotated[int, typer.Option(
        "--max-message-size", min=1, help="Size of the largest message (bytes), for index "
        "checks.")] = 5 * 1024 * 1024,
    skip_record_metadata: Annotated[bool, typer.Option(
        "--skip-record-metadata", help="Print only key and payload of records.")] = False,
    index_sanity_check: Annotated[bool, typer.Option(
        "--index-sanity-check", help="Only run the broker's start-up sanity check on index "
        "files.")] = False,
    verify_index_only: Annotated[bool, typer.Option(
        "--verify-index-only", help="Check index entries against the log without printing "
        "them.")] = False,
    start_offset: Annotated[int | None, typer.Option(
        "--start-offset", min=0, help="First offset to dump (seeks through the offset index).")
    ] = None,
    end_offset: Annotated[int | None, typer.Option(
        "--end-offset", min=0, help="Last offset to dump (inclusive).")] = None,
    max_decompressed_bytes: MaxDecompressedOpt = MAX_DECOMPRESSED_DEFAULT,
    # -- internal topics (kafka-dump-log.sh's decoders; each implies --print-data-log) --
    offsets_decoder: Annotated[bool, typer.Option(
        "--offsets-decoder", help="Decode records as __consumer_offsets data.")] = False,
    transaction_log_decoder: Annotated[bool, typer.Option(
        "--transaction-log-decoder", help="Decode records as __transaction_state data.")
    ] = False,
    cluster_metadata_decoder: Annotated[bool, typer.Option(
        "--cluster-metadata-decoder", help="Decode records as KRaft __cluster_metadata records.")
    ] = False,
    remote_log_metadata_decoder: Annotated[bool, typer.Option(
        "--remote-log-metadata-decoder", help="Decode records as __remote_log_metadata "
        "(tiered storage) records.")] = False,
    share_group_state_decoder: Annotated[bool, typer.Option(
        "--share-group-state-decoder", help="Decode records as __share_group_state data.")
    ] = False,
    key_decoder_class: Annotated[str | None, typer.Option(
        "--key-decoder-class", metavar="CLASS", help="Kafka's StringDecoder "
        "(org.apache.kafka.tools.api.StringDecoder or kafka.serializer.StringDecoder): keys "
        "as text, no internal-topic decoding; implies --print-data-log. Other classes are "
        "refused.", show_default=False)] = None,
    value_decoder_class: Annotated[str | None, typer.Option(
        "--value-decoder-class", metavar="CLASS", help="As --key-decoder-class, for payloads.",
        show_default=False)] = None,
    no_decode: Annotated[bool, typer.Option(
        "--no-decode", help="Do not pick a decoder from the partition's topic name.")] = False,
    # -- how to print --
    output: Annotated[DumpOutput | None, typer.Option(
        "--output", "-o", help="text: rich (default on a terminal); kafka: kafka-dump-log.sh's "
        "exact lines (default when piped); json: JSON Lines.", show_default=False)] = None,
    data_encoding: Annotated[DataEncoding, typer.Option(
        "--data-encoding", help="Encoding of keys, payloads and header values in JSON.")
    ] = DataEncoding.utf8,
) -> None:
    """Dump batches, records and index entries of segment files.

    Exit status: 0 when every file reads cleanly (index-vs-log mismatches, non-consecutive
    offsets and a corrupt producer snapshot are reported on stderr but, as in Kafka's
    tool, leave it 0), 1 when the dump found corrupt data (bytes after the last whole
    batch, a batch failing its CRC check, records that do not decode, an index failing
    --index-sanity-check, a .txnindex entry of an unknown version), 2 for usage errors,
    3 for unreadable input or a .log holding no whole batch.

    \b
    Examples:
      kafkalog dump-segment fixtures/logs/plain-0 --print-data-log
      kafkalog dump-segment 00000000000000000000.log -o json --deep-iteration | jq .
    """
    from ...errors import InvalidArgumentError
    from ...ops.dump import DumpOptions, check_decoder_class, dump
    from ...render import dump as render

    if start_offset is not None and end_offset is not None and end_offset < start_offset:
        raise typer.BadParameter("--end-offset must not be below --start-offset")
    chosen = [name for name, on in (("offsets", offsets_decoder),
                                    ("transaction-log", transaction_log_decoder),
                                    ("cluster-metadata", cluster_metadata_decoder),
                                    ("remote-log-metadata", remote_log_metadata_decoder),
                                    ("share-group-state", share_group_state_decoder)) if on]
    if len(chosen) > 1:
        raise typer.BadParameter("give at most one of the decoder options")
    classes = [c for c in (key_decoder_class, value_decoder_class) if c is not None]
    for name in classes:
        try:
            check_decoder_class(name)
        except InvalidArgumentError as e:
            raise typer.BadParameter(e.message) from None
    # Kafka's tool: a topic decoder wins; else the (String) decoder classes print bytes
    decoder = chosen[0] if chosen else ("none" if no_decode or classes else "auto")
    opts = DumpOptions(
        deep_iteration=deep_iteration,
        print_data_log=print_data_log or bool(chosen) or bool(classes),
        max_bytes=max_bytes, decoder=decoder,
        max_message_size=max_message_size, skip_record_metadata=skip_record_metadata,
        index_sanity_check=index_sanity_check, verify_index_only=verify_index_only,
        start_offset=start_offset, end_offset=end_offset,
        max_decompressed_bytes=max_decompressed_bytes)
    invalid: list[dict] = []
    bad_crc: dict[str, list[int]] = {}
    errors: list[dict] = []
    events = _watch_invalid(dump(paths, opts), invalid, bad_crc, errors)
    if output is None:
        output = DumpOutput.text if sys.stdout.isatty() else DumpOutput.kafka
    if output is DumpOutput.json:
        render.write_json(events, encoding=data_encoding.value)
    elif output is DumpOutput.kafka:
        render.write_kafka(events, skip_record_metadata=skip_record_metadata)
    else:
        render.write_rich(events, skip_record_metadata=skip_record_metadata)
    if invalid or bad_crc or errors:
        _report_invalid(invalid, bad_crc)


def _watch_invalid(events, invalid: list, bad_crc: dict, errors: list):
    """Pass ``events`` through, collecting ``invalid_bytes`` events in ``invalid``, the
    positions of batches that fail their CRC check (``isvalid: false``) by file, and the
    diagnostics of corrupt data (``"error": True``: already one line on stderr each) in
    ``errors``."""
    for ev in events:
        t = ev["type"]
        if t == "batch":
            if not ev["isValid"]:
                bad_crc.setdefault(ev["file"], []).append(ev["position"])
        elif t == "invalid_bytes":
            invalid.append(ev)
        elif t == "diagnostic" and ev.get("error"):
            errors.append(ev)
        yield ev


def _report_invalid(invalid: list[dict], bad_crc: dict[str, list[int]]) -> None:
    """One line per damaged file on stderr, then exit. A file with no whole batch from its
    first byte is not a readable Kafka log (exit 3); a valid log with bad trailing bytes
    (a truncated or preallocated tail, as Kafka reports it), with batches failing their
    CRC check, or any other corrupt data the dump reported (records that do not decode,
    an index failing the sanity check: where Kafka's tool throws and exits 1) is a
    finding (exit 1)."""
    from ...errors import KafkalogError
    from ...render.consoles import error

    for file, positions in bad_crc.items():
        msg = "record batch fails its CRC check (isvalid: false)"
        if len(positions) > 1:
            msg += f", and {len(positions) - 1} more after it"
        error(str(KafkalogError(msg, file=file, position=positions[0])))
    unreadable = False
    for ev in invalid:
        why = f" ({ev['reason']})" if ev.get("reason") else ""
        if ev["position"] == 0:
            unreadable = True
            msg = (f"no whole record batch: {ev['bytes']} bytes are truncated or not a Kafka "
                   f"log{why}")
        else:
            msg = f"{ev['bytes']} invalid bytes at the end of the log{why}"
        error(str(KafkalogError(msg, file=ev["file"], position=ev["position"])))
    raise typer.Exit(3 if unreadable else 1)
