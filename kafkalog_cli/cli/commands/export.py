"""``kafkalog export``: records to Parquet or JSON Lines, locally or on Spark."""

from typing import Annotated

import typer

from ..options import (
    MAX_DECOMPRESSED_DEFAULT,
    IsolationLevel,
    KeyDecoderOpt,
    MaxDecompressedOpt,
    OutputOpt,
    Paths,
    SchemaRegistryOpt,
    SchemaRegistryPropertyOpt,
    SchemasOpt,
    ValueDecoderOpt,
    choices,
    registry_options,
)
from ..output import emit_and_exit
from ..root import app

ExportFormat = choices("ExportFormat", "parquet jsonl")
Engine = choices("Engine", "auto local spark")


EngineOpt = Annotated[Engine, typer.Option(
    "--engine", metavar="auto|local|spark", help="local: this process (pyarrow); spark: the kafkalog data source on "
    "local[*] or --master; auto: spark from 1 GiB of input or with --master, else local.")]
MasterOpt = Annotated[str | None, typer.Option(
    "--master", metavar="URL", help="Spark master URL (default $SPARK_MASTER, else local[*]); implies "
    "--engine spark under auto.", show_default=False)]
VerboseOpt = Annotated[bool, typer.Option(
    "--verbose", help="Show Spark's own log output.")]


@app.command("export")
def export(
    paths: Paths,
    to: Annotated[str, typer.Option("--to", metavar="DIR", help="Output directory: a local path "
                                    "or a URI (s3://, gs://, abfs://, hdfs://).",
                                    show_default=False)],
    fmt: Annotated[ExportFormat, typer.Option("--format", metavar="parquet|jsonl", help="Output format.")
                   ] = ExportFormat.parquet,
    engine: EngineOpt = Engine.auto,
    master: MasterOpt = None,
    topic: Annotated[list[str] | None, typer.Option(
        "--topic", metavar="TOPIC", help="Only this topic (repeatable).", show_default=False)] = None,
    subscribe_pattern: Annotated[str | None, typer.Option(
        "--subscribe-pattern", metavar="REGEX", help="Only topics matching this regex (whole name).",
        show_default=False)] = None,
    starting_offsets: Annotated[str | None, typer.Option(
        "--starting-offsets", metavar="SPEC", help='earliest, or JSON {"topic":{"0":23}} (-2 earliest, '
        "-1 latest), as Spark's startingOffsets.", show_default=False)] = None,
    ending_offsets: Annotated[str | None, typer.Option(
        "--ending-offsets", metavar="SPEC", help='latest, or JSON {"topic":{"0":42}}, exclusive, as '
        "Spark's endingOffsets.", show_default=False)] = None,
    starting_timestamp: Annotated[int | None, typer.Option(
        "--starting-timestamp", metavar="MS", help="Start each partition at its first record with a "
        "timestamp >= this (ms since the epoch), found through the time index.",
        show_default=False)] = None,
    ending_timestamp: Annotated[int | None, typer.Option(
        "--ending-timestamp", metavar="MS", help="End each partition before its first record with a "
        "timestamp >= this (ms).", show_default=False)] = None,
    isolation_level: Annotated[IsolationLevel, typer.Option(
        "--isolation-level", metavar="read_uncommitted|read_committed",
        help="read_committed drops records of aborted transactions.")
    ] = IsolationLevel.read_uncommitted,
    fail_on_data_loss: Annotated[bool, typer.Option(
        "--fail-on-data-loss/--skip-corrupt", help="Stop at a corrupt batch (default), or "
        "read past damage: after a batch that fails (CRC, framing, size), go on at the "
        "next position where a whole batch with a valid CRC and plausible offsets starts; "
        "each byte range skipped is reported on stderr and in the result's skipped "
        "list (exit 1).")] = True,
    headers: Annotated[bool, typer.Option(
        "--headers/--no-headers", help="Write the headers column.")] = True,
    batch_metadata: Annotated[bool, typer.Option(
        "--batch-metadata", help="Also write producerId, producerEpoch, baseSequence, "
        "partitionLeaderEpoch, isTransactional.")] = False,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace --to when it exists.")] = False,
    verbose: VerboseOpt = False,
    output: OutputOpt = None,
    max_decompressed_bytes: MaxDecompressedOpt = MAX_DECOMPRESSED_DEFAULT,
    key_decoder: KeyDecoderOpt = None,
    value_decoder: ValueDecoderOpt = None,
    schemas: SchemasOpt = None,
    schema_registry: SchemaRegistryOpt = None,
    schema_registry_property: SchemaRegistryPropertyOpt = None,
) -> None:
    """Export records of log directories to Parquet or JSON Lines, in hive-style
    directories topic=T/partition=P/ with the columns of Spark's Kafka source.

    With --value-decoder (--key-decoder), values in Schema Registry's wire format are
    written as typed columns (Arrow types from the topic's newest schema, every version
    read as it), with valueSchemaId and valueRaw (the bytes of what did not decode).

    Exit status: 0 when everything was exported, 1 for damaged data (a corrupt batch
    stops the export; with --skip-corrupt the read goes on at the next good batch and
    each byte range skipped is reported) or keys or values that did not decode, 2 for
    usage errors or a missing optional dependency, 3 for unreadable input or a .log
    holding no whole batch.

    \b
    Examples:
      kafkalog export /var/lib/kafka/data --to /tmp/out
      kafkalog export data/ --to out --topic orders --starting-offsets '{"orders":{"0":100}}'
      kafkalog export 'logs/*/kafka-logs' --to out --engine spark --master spark://h:7077
      kafkalog export data/ --to out --topic orders --value-decoder schema-registry
    """
    from ... import cli
    from ...ops.export import export as run
    from ...render.export import render_export
    from ...render.progress import byte_progress

    options: dict[str, str] = {
        "includeHeaders": str(headers).lower(),
        "includeBatchMetadata": str(batch_metadata).lower(),
        "failOnDataLoss": str(fail_on_data_loss).lower(),
        "isolationLevel": isolation_level.value,
        "maxDecompressedBytes": str(max_decompressed_bytes),
    }
    registry = registry_options(key_decoder, value_decoder, schemas, schema_registry,
                                schema_registry_property)
    if registry:
        for name, v in (("keyDecoder", registry.key_decoder),
                        ("valueDecoder", registry.value_decoder),
                        ("schemas", registry.schemas), ("schemaRegistry", registry.url),
                        ("schemaRegistryUserInfo",
                         registry.properties.get("basic.auth.user.info")
                         or registry.properties.get("schema.registry.basic.auth.user.info"))):
            if v:
                options[name] = v
    if topic:
        options["subscribe"] = ",".join(topic)
    if subscribe_pattern:
        options["subscribePattern"] = subscribe_pattern
    if starting_offsets:
        options["startingOffsets"] = starting_offsets
    if ending_offsets:
        options["endingOffsets"] = ending_offsets
    if starting_timestamp is not None:
        options["startingTimestamp"] = str(starting_timestamp)
    if ending_timestamp is not None:
        options["endingTimestamp"] = str(ending_timestamp)
    with byte_progress("export") as advance:
        result = run([str(p) for p in paths], to, fmt=fmt.value, engine=engine.value,
                     master=master, options=options, overwrite=overwrite, verbose=verbose,
                     progress=advance, own_process=cli.OWN_PROCESS)
    if result.not_kafka_files:
        from ...errors import NotAKafkaFileError
        from ...render.consoles import error

        for f in result.not_kafka_files:
            error(str(NotAKafkaFileError("no whole record batch: truncated or not a Kafka "
                                         "log", file=f, position=0)))
    emit_and_exit(result, output, render_export)
