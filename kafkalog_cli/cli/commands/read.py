"""``kafkalog read``: a partition as kafka-console-consumer prints it, without a broker."""

import sys
from typing import Annotated

import typer

from ..options import (
    MAX_DECOMPRESSED_DEFAULT,
    ClusterMetadataDecoderOpt,
    DataEncoding,
    IsolationLevel,
    KeyDecoderOpt,
    MaxDecompressedOpt,
    OffsetsDecoderOpt,
    Output,
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
from ..output import finish
from ..root import app


@app.command("read")
def read(
    path: Annotated[str, typer.Argument(
        help="A log directory (then --topic/--partition pick the partition) or a "
             "partition directory; a local path or a URI (s3://, gs://, abfs://, hdfs://).",
        metavar="PATH", show_default=False)],
    topic: Annotated[str | None, typer.Option(
        "--topic", "-t", metavar="TOPIC", help="Topic (needed with a log directory).")] = None,
    partition: Annotated[int | None, typer.Option(
        "--partition", "-p", min=0, metavar="N", help="Partition (optional when the topic has one).")
    ] = None,
    offset: Annotated[str | None, typer.Option(
        "--offset", metavar="OFFSET", help="Start at this offset (or 'earliest' / 'latest'), found through "
                         "the offset index.")] = None,
    timestamp: Annotated[str | None, typer.Option(
        "--timestamp", metavar="TIME", help="Start at the first record with timestamp >= this (epoch ms or "
                            "ISO-8601; UTC without a zone), found through the time index.")
    ] = None,
    from_beginning: Annotated[bool, typer.Option(
        "--from-beginning", help="Start at the log start offset (the default).")] = False,
    max_records: Annotated[int | None, typer.Option(
        "--max-records", "--max-messages", min=0, metavar="N", help="Stop after this many records.")
    ] = None,
    isolation_level: Annotated[IsolationLevel, typer.Option(
        "--isolation-level", metavar="read_uncommitted|read_committed",
        help="read_committed hides aborted transactions and stops at "
                                  "the last stable offset.")] = IsolationLevel.read_uncommitted,
    check_crcs: Annotated[bool, typer.Option(
        "--check-crcs/--no-check-crcs", help="Check each batch's CRC before delivering it, as "
        "the consumer's check.crcs=true does (a mismatch is an error naming the file and "
        "byte position).")] = True,
    prop: Annotated[list[str] | None, typer.Option(
        "--property", metavar="NAME=VALUE", help="Formatter property NAME=VALUE, as kafka-console-consumer takes "
                           "them: print.key, print.timestamp, print.offset, print.partition, "
                           "print.headers, print.epoch, print.value, key.separator, "
                           "line.separator, headers.separator, null.literal.")] = None,
    output: Annotated[Output, typer.Option(
        "--output", "-o", metavar="text|json", help="text: kafka-console-consumer's lines; json: JSON Lines.")
    ] = Output.text,
    data_encoding: Annotated[DataEncoding, typer.Option(
        "--data-encoding", metavar="utf8|base64|hex", help="Encoding of raw keys, values and header values in JSON "
                                "(utf8 falls back to base64 per field; keyEncoding / "
                                "valueEncoding name any field that is not UTF-8 text).")
    ] = DataEncoding.utf8,
    # -- internal topics (dump-segment's decoder options) --
    offsets_decoder: OffsetsDecoderOpt = False,
    transaction_log_decoder: TransactionLogDecoderOpt = False,
    cluster_metadata_decoder: ClusterMetadataDecoderOpt = False,
    remote_log_metadata_decoder: RemoteLogMetadataDecoderOpt = False,
    share_group_state_decoder: ShareGroupStateDecoderOpt = False,
    no_decode: Annotated[bool, typer.Option(
        "--no-decode", help="Print raw bytes, also for Kafka's internal topics.")] = False,
    max_decompressed_bytes: MaxDecompressedOpt = MAX_DECOMPRESSED_DEFAULT,
    kcat_format: Annotated[str | None, typer.Option(
        "--format", "-f", metavar="FMT", help="Print each record as kcat -C -f FMT does: "
        "%t topic, %p partition, %o offset, %k key, %K key length, %s value, %S value "
        "length, %R value length as a big-endian int32, %T timestamp (ms), %h headers "
        "(n=v,...), %% a percent sign; escapes \\n \\t \\r \\xHH \\NNN and "
        "\\\\.", show_default=False)] = None,
    skip_corrupt: SkipCorruptOpt = False,
    # -- Schema Registry --
    key_decoder: KeyDecoderOpt = None,
    value_decoder: ValueDecoderOpt = None,
    schemas: SchemasOpt = None,
    schema_registry: SchemaRegistryOpt = None,
    schema_registry_property: SchemaRegistryPropertyOpt = None,
) -> None:
    """Print a partition's records as a consumer receives them.

    Control records are never printed; with --isolation-level read_committed neither are
    the records of aborted transactions, and the read stops at the last stable offset.

    The records of __consumer_offsets, __transaction_state, __share_group_state,
    __cluster_metadata and __remote_log_metadata are decoded (keys and values printed as
    JSON, as dump-segment decodes them) unless --no-decode is given; a decoder option
    (--offsets-decoder, --transaction-log-decoder, --cluster-metadata-decoder,
    --remote-log-metadata-decoder, --share-group-state-decoder) forces that decoder
    whatever the topic's name.

    With --key-decoder/--value-decoder, keys and values in Schema Registry's wire format
    are decoded with the schemas of the log directory's own _schemas topic, no registry
    running, and printed as the Confluent console consumers print them (Avro's JSON
    encoding, Protobuf's canonical JSON, the JSON Schema document).

    Exit status: 0, 1 for damaged data (a batch failing its CRC check or whose records
    do not decode stops the read, as a consumer throws; bytes after a segment's last
    whole batch that the read reached, a log-start-offset-checkpoint that does not parse
    (read as empty, as the broker resets it), ranges skipped with --skip-corrupt,
    records kept as bytes because their schema id was not found or they did not decode:
    one line each on stderr, after the records), 2 for usage errors, 3 for unreadable
    input or a .log holding no whole batch.

    \b
    Examples:
      kafkalog read /var/lib/kafka/data -t orders -p 0 --from-beginning
      kafkalog read orders-0 --offset 1200 --max-records 10 \\
          --property print.key=true --property print.offset=true
      kafkalog read orders-0 --timestamp 2024-05-01T12:00:00Z -o json | jq .
      kafkalog read /var/lib/kafka/data -t __consumer_offsets -p 12 --property print.key=true
      kafkalog read /var/lib/kafka/data -t orders --value-decoder schema-registry -o json
    """
    from ...ops.read import read as run
    from ...render import read as render

    chosen = chosen_decoder(offsets_decoder, transaction_log_decoder,
                            cluster_metadata_decoder, remote_log_metadata_decoder,
                            share_group_state_decoder)
    if chosen and no_decode:
        raise typer.BadParameter("give at most one of the decoder options and --no-decode")
    if kcat_format is not None and (prop or output is Output.json):
        raise typer.BadParameter("--format is an output of its own: give it without "
                                 "--property and -o json")
    registry = registry_options(key_decoder, value_decoder, schemas, schema_registry,
                                schema_registry_property)
    if registry and (chosen or no_decode):
        raise typer.BadParameter("--key-decoder/--value-decoder do not go with the "
                                 "internal-topic decoder options or --no-decode")
    cfg = render.FormatterConfig.from_properties(prop or [])
    parts = None if kcat_format is None else render.parse_kcat_format(kcat_format)
    res = run(path, topic=topic, partition=partition, offset=offset, timestamp=timestamp,
              from_beginning=from_beginning, max_records=max_records,
              isolation_level=isolation_level.value,
              decode=chosen or ("none" if no_decode else "auto"),
              check_crcs=check_crcs, max_decompressed_bytes=max_decompressed_bytes,
              skip_corrupt=skip_corrupt, registry=registry)
    try:
        if output is Output.json:
            render.write_json(res.records, encoding=data_encoding.value)
        elif parts is not None:
            render.write_kcat(res.records, parts, escape=sys.stdout.isatty())
        else:
            n = render.write_console(res.records, cfg, escape=sys.stdout.isatty())
            sys.stderr.write(f"Processed a total of {n} messages\n")
    finally:
        res.close()
    render.report_problems(res, json_lines=output is Output.json)
    finish(res)
