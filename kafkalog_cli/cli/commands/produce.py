"""``kafkalog produce``: append records to a partition as a broker's storage layer would."""

from pathlib import Path
from typing import Annotated

import typer

from ..options import DataEncoding, OutputOpt, choices
from ..root import app

InputFormat = choices("InputFormat", "lines jsonl raw")
Codec = choices("Codec", "none gzip snappy lz4 zstd")
Serializer = choices("Serializer", "avro protobuf json-schema")


def _serializer_opt(side: str):
    return Annotated[Serializer | None, typer.Option(
        f"--{side}-serializer", metavar="avro|protobuf|json-schema",
        help=f"Serialize each {side} (JSON input: Avro's JSON encoding, Protobuf's JSON "
        "mapping, a JSON document) in Schema Registry's wire format, as the Confluent "
        f"console producers do; the schema (--{side}-schema) is registered in the log "
        "directory's _schemas as Schema Registry would.", show_default=False)]


def _subject_opt(side: str):
    return Annotated[str | None, typer.Option(
        f"--{side}-subject", metavar="SUBJECT", help=f"The subject of the {side} schema "
        f"(default: <topic>-{side}).", show_default=False)]


def _schema_opt(side: str):
    return Annotated[Path | None, typer.Option(
        f"--{side}-schema", metavar="FILE", help=f"The {side} schema (.avsc, .proto, "
        "JSON Schema); default: the subject's latest schema in _schemas.",
        show_default=False)]


@app.command("produce")
def produce(
    files: Annotated[list[Path] | None, typer.Argument(
        help="Input files ('-' or none: stdin).", metavar="FILE",
        show_default=False)] = None,
    log_dir: Annotated[str, typer.Option(
        "--log-dir", metavar="DIR", help="The log directory (created with meta.properties "
        "when new), on a local filesystem.", show_default=False)] = ...,
    topic: Annotated[str, typer.Option("--topic", metavar="TOPIC", help="Topic name.",
                                       show_default=False)] = ...,
    partition: Annotated[int, typer.Option(
        "--partition", min=0, max=2**31 - 1, metavar="N",
        help="Partition id (a Kafka int32) of records without their own.")] = 0,
    fmt: Annotated[InputFormat | None, typer.Option(
        "--format", metavar="lines|jsonl|raw", help="lines: one value per line; jsonl: JSON objects (read -o json and "
        "dump-segment -o json --print-data-log output included); raw: a file is a record. "
        "Default: jsonl for *.jsonl/*.ndjson files, else lines.", show_default=False)] = None,
    prop: Annotated[list[str] | None, typer.Option(
        "--property", metavar="NAME=VALUE", help="lines: kafka-console-producer's reader "
        "property (repeatable): parse.key, key.separator, parse.headers, headers.delimiter, "
        "headers.separator, headers.key.separator, ignore.error, null.marker.",
        show_default=False)] = None,
    parse_key: Annotated[bool, typer.Option(
        "--parse-key", help="lines: split key and value at --key-separator "
        "(parse.key=true).")] = False,
    key_separator: Annotated[str, typer.Option(
        "--key-separator", metavar="SEP", help="lines: the key separator (key.separator).")
    ] = "\t",
    value_encoding: Annotated[DataEncoding, typer.Option(
        "--value-encoding", metavar="utf8|base64|hex", help="jsonl: encoding of strings without their own "
        "keyEncoding/valueEncoding field.")] = DataEncoding.utf8,
    keep_partition: Annotated[bool, typer.Option(
        "--keep-partition", help="jsonl: write each record to the partition its 'partition' "
        "field names (default: --partition, the field ignored).")] = False,
    atomic: Annotated[bool, typer.Option(
        "--atomic", help="Read and check the whole input before writing anything: a "
        "malformed line writes nothing (default: the records before it are written).")
    ] = False,
    batch_size: Annotated[int | None, typer.Option(
        "--batch-size", min=1, metavar="N", help="Records per batch (default: only "
        "--batch-bytes limits).", show_default=False)] = None,
    batch_bytes: Annotated[int, typer.Option(
        "--batch-bytes", min=1, metavar="BYTES", help="Bytes per batch (the producer's "
        "batch.size).")] = 16384,
    compression: Annotated[Codec | None, typer.Option(
        "--compression", "--compression-codec", metavar="none|gzip|snappy|lz4|zstd",
        help="Codec of the batches "
        "(--compression-codec with no value: gzip, as kafka-console-producer).",
        show_default=False)] = None,
    config: Annotated[list[str] | None, typer.Option(
        "--config", metavar="KEY=VALUE", help="Topic config (repeatable), e.g. "
        "segment.bytes=1048576; an unknown key is refused.", show_default=False)] = None,
    config_file: Annotated[Path | None, typer.Option(
        "--config-file", metavar="FILE", help="A server.properties-style file (log.* and "
        "topic keys; other broker keys are ignored).", show_default=False)] = None,
    timestamp: Annotated[int | None, typer.Option(
        "--timestamp", min=-1, max=2**63 - 1, metavar="MS", help="Timestamp (ms, a Kafka "
        "int64; -1: none) of records without one; default: now.", show_default=False)
    ] = None,
    producer_id: Annotated[int | None, typer.Option(
        "--producer-id", min=0, max=2**63 - 1, metavar="ID", help="Write idempotent "
        "batches of this producer id, sequences continued from the partition's producer "
        "state.", show_default=False)] = None,
    producer_epoch: Annotated[int, typer.Option(
        "--producer-epoch", min=0, max=32767, metavar="N", help="The producer epoch of "
        "--producer-id.")] = 0,
    transactional: Annotated[bool, typer.Option(
        "--transactional", help="Transactional batches, then a marker (--end-txn).")] = False,
    end_txn: Annotated[str, typer.Option(
        "--end-txn", metavar="commit|abort|none", help="How --transactional ends: a COMMIT "
        "or ABORT marker, or none (the transaction stays open).")] = "commit",
    leader_epoch: Annotated[int | None, typer.Option(
        "--leader-epoch", min=0, max=2**31 - 1, metavar="N", help="partitionLeaderEpoch of "
        "the batches (default: the partition's latest epoch in leader-epoch-checkpoint, 0 "
        "for a new partition; a lower one is refused).", show_default=False)] = None,
    topic_id: Annotated[str | None, typer.Option(
        "--topic-id", metavar="UUID", help="For a new partition.metadata (default: the id "
        "of the topic's existing partitions, else random; must match them).",
        show_default=False)] = None,
    key_serializer: _serializer_opt("key") = None,
    value_serializer: _serializer_opt("value") = None,
    key_subject: _subject_opt("key") = None,
    value_subject: _subject_opt("value") = None,
    key_schema: _schema_opt("key") = None,
    value_schema: _schema_opt("value") = None,
    no_fsync: Annotated[bool, typer.Option(
        "--no-fsync", help="Skip fsync (tests only; a crash may lose data).")] = False,
    output: OutputOpt = None,
) -> None:
    """Append records to <log-dir>/<topic>-<partition> exactly as a broker would.

    The summary goes to stderr (with -o json: one JSON object on stdout, whether the
    run completed or stopped).

    \b
    Examples:
      seq 1000 | kafkalog produce --log-dir /tmp/kl --topic t
      kafkalog produce --log-dir /tmp/kl --topic t data.jsonl --compression zstd
      kafkalog read src/orders-0 -o json | kafkalog produce --log-dir /tmp/kl --topic copy --format jsonl
      kafkalog produce --log-dir /tmp/kl --topic t --property parse.key=true --property key.separator=:
      kafkalog produce --log-dir /tmp/kl --topic orders --value-serializer avro \\
          --value-schema order.avsc orders.json

    \b
    Exit status:
      0  every record was appended
      1  stopped: a malformed input line (the records before it are written, unless
         --atomic), a batch the broker would refuse (over max.message.bytes or
         segment.bytes, a timestamp outside message.timestamp.*.max.ms, a keyless
         record on a compacted topic, a producer sequence/epoch error), or a locked
         log directory; the batches before it are written and the summary says what
      2  usage error (an option, topic name, --config key or value); nothing written
      3  an input file that cannot be read, or a partition that needs recovery
    """
    from ...errors import ProduceError
    from ...ops.produce import ProduceOptions, iter_inputs
    from ...ops.produce import produce as run
    from ...render.produce import render_produce
    from ...render.progress import record_counter
    from ..output import emit

    if prop and fmt in (InputFormat.jsonl, InputFormat.raw):
        raise typer.BadParameter(f"--property applies to lines input, not {fmt.value}")
    opts = ProduceOptions.assemble(
        topic, properties=prop or [], parse_key=parse_key, key_separator=key_separator,
        config_file=config_file, config_overrides=config or [], partition=partition,
        input_format=fmt.value if fmt else None, value_encoding=value_encoding.value,
        keep_partition=keep_partition, atomic=atomic, batch_size=batch_size,
        batch_bytes=batch_bytes, compression=(compression or Codec.none).value,
        timestamp=timestamp, producer_id=producer_id, producer_epoch=producer_epoch,
        transactional=transactional, end_txn=end_txn, leader_epoch=leader_epoch,
        topic_id=topic_id,
        key_serializer=key_serializer.value if key_serializer else None,
        value_serializer=value_serializer.value if value_serializer else None,
        key_subject=key_subject, value_subject=value_subject,
        key_schema=None if key_schema is None else str(key_schema),
        value_schema=None if value_schema is None else str(value_schema))
    paths = [str(f) for f in (files or [])]
    try:
        with record_counter("produce") as count:
            result = run(log_dir, opts, iter_inputs(paths, opts), fsync=not no_fsync,
                         progress=count)
    except ProduceError as e:
        emit(e.result, output, render_produce)
        raise e.cause from None
    except KeyboardInterrupt as e:
        # what was written before Ctrl-C (complete and consistent), then exit 130
        if getattr(e, "result", None) is not None:
            emit(e.result, output, render_produce)
        raise
    emit(result, output, render_produce)
