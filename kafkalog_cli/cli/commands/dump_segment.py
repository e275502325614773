"""``kafkalog dump-segment``: a faster, scriptable kafka-dump-log.sh."""

import sys
from typing import Annotated

import typer

from ..options import (
    MAX_DECOMPRESSED_DEFAULT,
    ClusterMetadataDecoderOpt,
    DataEncoding,
    DumpOutput,
    KeyDecoderOpt,
    MaxDecompressedOpt,
    OffsetsDecoderOpt,
    RemoteLogMetadataDecoderOpt,
    SchemaRegistryOpt,
    SchemaRegistryPropertyOpt,
    SchemasOpt,
    ShareGroupStateDecoderOpt,
    SkipCorruptOpt,
    TransactionLogDecoderOpt,
    ValueDecoderOpt,
    chosen_decoder,
    registry_options,
)
from ..root import app


@app.command("dump-segment")
def dump_segment(
    paths: Annotated[list[str] | None, typer.Argument(
        help="Segment files (.log, .index, .timeindex, .snapshot, .txnindex, .checkpoint), "
             "partition directories or log directories; local paths or URIs (s3://, gs://, "
             "abfs://, hdfs://).", metavar="PATH",
        show_default=False)] = None,
    files: Annotated[list[str] | None, typer.Option(
        "--files", metavar="FILE[,FILE...]", help="Files to dump, comma-separated, as "
        "kafka-dump-log.sh takes them (repeatable; beside or instead of PATH).",
        show_default=False)] = None,
    # -- what to read (kafka-dump-log.sh's options) --
    deep_iteration: Annotated[bool, typer.Option(
        "--deep-iteration", help="Decode every record, not only batch headers.")] = False,
    print_data_log: Annotated[bool, typer.Option(
        "--print-data-log", help="Print keys, payloads and headers (implies --deep-iteration).")
    ] = False,
    max_bytes: Annotated[int | None, typer.Option(
        "--max-bytes", min=0, metavar="BYTES", help="Read at most this many bytes of each .log.")] = None,
    max_message_size: Annotated[int, typer.Option(
        "--max-message-size", min=1, metavar="BYTES", help="Size of the largest message (bytes), for index "
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
        "--start-offset", min=0, metavar="OFFSET", help="First offset to dump (seeks through the offset index).")
    ] = None,
    end_offset: Annotated[int | None, typer.Option(
        "--end-offset", min=0, metavar="OFFSET", help="Last offset to dump (inclusive).")] = None,
    max_decompressed_bytes: MaxDecompressedOpt = MAX_DECOMPRESSED_DEFAULT,
    skip_corrupt: SkipCorruptOpt = False,
    # -- internal topics (kafka-dump-log.sh's decoders; each implies --print-data-log) --
    offsets_decoder: OffsetsDecoderOpt = False,
    transaction_log_decoder: TransactionLogDecoderOpt = False,
    cluster_metadata_decoder: ClusterMetadataDecoderOpt = False,
    remote_log_metadata_decoder: RemoteLogMetadataDecoderOpt = False,
    share_group_state_decoder: ShareGroupStateDecoderOpt = False,
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
    # -- Schema Registry (each implies --print-data-log) --
    key_decoder: KeyDecoderOpt = None,
    value_decoder: ValueDecoderOpt = None,
    schemas: SchemasOpt = None,
    schema_registry: SchemaRegistryOpt = None,
    schema_registry_property: SchemaRegistryPropertyOpt = None,
    # -- how to print --
    output: Annotated[DumpOutput | None, typer.Option(
        "--output", "-o", metavar="text|kafka|json", help="text: rich (default on a terminal); kafka: kafka-dump-log.sh's "
        "exact lines (default when piped); json: JSON Lines.", show_default=False)] = None,
    data_encoding: Annotated[DataEncoding, typer.Option(
        "--data-encoding", metavar="utf8|base64|hex", help="Encoding of keys, payloads and header values in JSON "
        "(utf8 falls back to base64 per field; keyEncoding / valueEncoding name any field "
        "that is not UTF-8 text).")
    ] = DataEncoding.utf8,
) -> None:
    """Dump batches, records and index entries of segment files.

    Exit status: 0 when every file reads cleanly (non-consecutive offsets are reported on
    stderr, after the last file, as Kafka's tool does, and leave it 0), 1 when the dump
    found damaged data (bytes after the last whole batch, a batch failing its CRC check,
    records that do not decode (with --key-decoder/--value-decoder: a schema id not
    found, a frame that does not decode: the records are printed with their bytes),
    ranges skipped with --skip-corrupt, an index failing --index-sanity-check or an
    index entry at which no batch starts, a producer snapshot that does not parse, a
    .txnindex entry of an unknown version), 2 for usage errors, 3 for unreadable input
    or a .log holding no whole batch. Index-vs-log mismatches and time-index reports
    leave it 0, as Kafka's tool (it makes them of indexes older brokers wrote, which
    verify-index accepts; verify-index judges an index).

    \b
    Examples:
      kafkalog dump-segment fixtures/logs/plain-0 --print-data-log
      kafkalog dump-segment 00000000000000000000.log -o json --deep-iteration | jq .
      kafkalog dump-segment --files 00000000000000000000.log,00000000000000000000.index
      kafkalog dump-segment /var/lib/kafka/data/orders-0 --value-decoder schema-registry
    """
    from ...errors import InvalidArgumentError
    from ...ops.dump import DumpFindings, DumpOptions, check_decoder_class, dump
    from ...render import dump as render
    from ...render.progress import byte_progress
    from ...storage.files import log_bytes
    from ..output import finish

    if start_offset is not None and end_offset is not None and end_offset < start_offset:
        raise typer.BadParameter("--end-offset must not be below --start-offset")
    chosen = chosen_decoder(offsets_decoder, transaction_log_decoder,
                            cluster_metadata_decoder, remote_log_metadata_decoder,
                            share_group_state_decoder)
    classes = [c for c in (key_decoder_class, value_decoder_class) if c is not None]
    for name in classes:
        try:
            check_decoder_class(name)
        except InvalidArgumentError as e:
            raise typer.BadParameter(e.message) from None
    registry = registry_options(key_decoder, value_decoder, schemas, schema_registry,
                                schema_registry_property)
    if registry and chosen:
        raise typer.BadParameter("--key-decoder/--value-decoder do not go with the "
                                 "internal-topic decoder options")
    # Kafka's tool: a topic decoder wins; else the (String) decoder classes print bytes
    decoder = chosen or ("none" if no_decode or classes else "auto")
    opts = DumpOptions(
        deep_iteration=deep_iteration,
        print_data_log=print_data_log or bool(chosen) or bool(classes) or bool(registry),
        max_bytes=max_bytes, decoder=decoder,
        max_message_size=max_message_size, skip_record_metadata=skip_record_metadata,
        index_sanity_check=index_sanity_check, verify_index_only=verify_index_only,
        start_offset=start_offset, end_offset=end_offset,
        max_decompressed_bytes=max_decompressed_bytes, skip_corrupt=skip_corrupt,
        registry=registry or None)
    targets = [*(paths or []), *(p for f in files or [] for p in f.split(",") if p)]
    if not targets:
        raise typer.BadParameter("Missing argument 'PATH...' (or --files): the files or "
                                 "directories to dump")
    findings = DumpFindings()
    if output is None:
        output = DumpOutput.text if sys.stdout.isatty() else DumpOutput.kafka
    elif output is DumpOutput.kafka and opts.deep and sys.stdout.isatty():
        # Kafka's text holds the records' bytes (and header keys) as they are: kept as
        # Kafka's, but said once
        from ...render.consoles import warning

        warning("-o kafka writes the records' bytes raw, control characters included, "
                "to this terminal (-o text escapes them)")
    # kafka text and JSON Lines take a batch's records as blocks (no dict per record),
    # and runs of ordinary batches as one event (their lines formatted in C)
    opts.record_blocks = opts.batch_runs = output is not DumpOutput.text
    with byte_progress("dump-segment", lambda: log_bytes(targets),
                       streams_stdout=True) as advance:
        events = findings.watch(dump(targets, opts))
        if advance is not None:
            events = _advancing(events, advance)
        if output is DumpOutput.json:
            render.write_json(events, encoding=data_encoding.value,
                              with_data=opts.print_data_log)
        elif output is DumpOutput.kafka:
            render.write_kafka(events, skip_record_metadata=skip_record_metadata,
                               with_data=opts.print_data_log)
        else:
            render.write_rich(events, skip_record_metadata=skip_record_metadata)
    render.report_findings(findings)
    finish(findings)


def _advancing(events, advance):
    """Pass ``events`` through, advancing the progress bar by each batch's bytes."""
    done = 0
    for ev in events:
        if ev["type"] in ("batch", "batches"):
            done += ev["size"]
            advance(done)
        yield ev
