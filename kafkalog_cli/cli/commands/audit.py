"""``kafkalog audit``: health figures for every partition of many log directories."""

from pathlib import Path
from typing import Annotated

import typer

from ..options import (
    MAX_DECOMPRESSED_DEFAULT,
    KeyDecoderOpt,
    MaxDecompressedOpt,
    OutputOpt,
    Paths,
    SchemaRegistryOpt,
    SchemaRegistryPropertyOpt,
    SchemasOpt,
    ValueDecoderOpt,
    registry_options,
)
from ..output import emit_and_exit
from ..root import app
from .export import Engine, EngineOpt, MasterOpt, VerboseOpt


@app.command("audit")
def audit(
    paths: Paths,
    engine: EngineOpt = Engine.auto,
    master: MasterOpt = None,
    report: Annotated[Path | None, typer.Option(
        "--report", metavar="FILE", help="Also write the figures as Parquet, one row per partition.",
        show_default=False)] = None,
    verbose: VerboseOpt = False,
    output: OutputOpt = None,
    max_decompressed_bytes: MaxDecompressedOpt = MAX_DECOMPRESSED_DEFAULT,
    key_decoder: KeyDecoderOpt = None,
    value_decoder: ValueDecoderOpt = None,
    schemas: SchemasOpt = None,
    schema_registry: SchemaRegistryOpt = None,
    schema_registry_property: SchemaRegistryPropertyOpt = None,
) -> None:
    """Audit every partition: segments, batches, records, bytes, offsets, timestamps,
    codecs, CRC failures, invalid trailing bytes, index problems (as verify-index finds
    them), transactional and control batches; with --value-decoder (--key-decoder), the
    records whose values decode through Schema Registry, those that do not (a problem),
    and the schema ids seen.

    Exit status: 0 when every partition is healthy, 1 when any has problems, 2 for usage
    errors or a missing optional dependency, 3 for unreadable input.

    \b
    Examples:
      kafkalog audit /var/lib/kafka/data
      kafkalog audit 'backups/*/kafka-logs' --report audit.parquet -o json
    """
    from ...ops.audit import audit as run
    from ...render.audit import render_audit
    from ...render.progress import byte_progress

    registry = registry_options(key_decoder, value_decoder, schemas, schema_registry,
                                schema_registry_property)
    if report is not None:
        from ...spark import require

        require("pyarrow")
    with byte_progress("audit") as advance:
        result = run([str(p) for p in paths], engine=engine.value, master=master,
                     verbose=verbose, progress=advance,
                     max_decompressed_bytes=max_decompressed_bytes,
                     registry=registry or None)
    if report is not None:
        from ...ops.audit import write_report

        write_report(result, report)
    emit_and_exit(result, output, render_audit)
