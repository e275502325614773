"""``kafkalog audit``: health figures for every partition of many log directories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..app import app
from ..options import (
    MAX_DECOMPRESSED_DEFAULT,
    MaxDecompressedOpt,
    Output,
    OutputOpt,
    Paths,
    resolve_output,
)
from .export import Engine, EngineOpt, MasterOpt, VerboseOpt


@app.command("audit")
def audit(
    paths: Paths,
    engine: EngineOpt = Engine.auto,
    master: MasterOpt = None,
    report: Annotated[Path | None, typer.Option(
        "--report", help="Also write the figures as Parquet, one row per partition.",
        show_default=False)] = None,
    verbose: VerboseOpt = False,
    output: OutputOpt = None,
    max_decompressed_bytes: MaxDecompressedOpt = MAX_DECOMPRESSED_DEFAULT,
) -> None:
    """Audit every partition: segments, batches, records, bytes, offsets, timestamps,
    codecs, CRC failures, invalid trailing bytes, index problems (as verify-index finds
    them), transactional and control batches.

    Exit status: 0 when every partition is healthy, 1 when any has problems, 2 for usage
    errors or a missing optional dependency, 3 for unreadable input.

    \b
    Examples:
      kafkalog audit /var/lib/kafka/data
      kafkalog audit 'backups/*/kafka-logs' --report audit.parquet -o json
    """
    from ...ops.audit import audit as run

    if report is not None:
        from ...spark import require

        require("pyarrow")
    result = run([str(p) for p in paths], engine=engine.value, master=master,
                 verbose=verbose, max_decompressed_bytes=max_decompressed_bytes)
    if report is not None:
        from ...ops.audit import write_report

        write_report(result, report)
    if resolve_output(output) is Output.json:
        print(json.dumps(result.to_dict()))
    else:
        _render(result)
    raise typer.Exit(0 if result.ok else 1)


def _render(result) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from ...render.consoles import stdout_console

    con = stdout_console()
    groups: dict = {}
    for p in result.partitions_by_log_dir():
        groups.setdefault(p.log_dir or "-", []).append(p)
    for log_dir, parts in groups.items():
        t = Table(title=log_dir, title_justify="left", box=box.SIMPLE_HEAD)
        for col in ("partition", "segs", "batches", "records", "bytes", "offsets", "codecs",
                    "crc", "invalid", "idx", "txn/ctl", "verdict"):
            left = col in ("partition", "offsets", "codecs", "verdict")
            t.add_column(col, justify="left" if left else "right", no_wrap=col != "codecs")
        for p in parts:
            offs = "-" if p.first_offset is None else f"{p.first_offset}..{p.last_offset}"
            verdict = Text("ok", style="green") if p.ok else Text(
                f"{len(p.problems)} problem(s)", style="bold red")
            t.add_row(f"{p.topic}-{p.partition}", str(p.segments), str(p.batches),
                      str(p.records), str(p.bytes), offs, ",".join(p.codecs) or "-",
                      str(p.corrupt_batches), str(p.invalid_bytes), str(p.index_problems),
                      f"{p.transactional_batches}/{p.control_batches}", verdict)
        con.print(t)
    for p in result.partitions:
        for msg in p.problems:
            con.print(Text(f"problem  {p.topic}-{p.partition}: {msg}", style="red"))
    bad = sum(1 for p in result.partitions if not p.ok)
    con.print(Text(f"{len(result.partitions)} partition(s) audited, {bad} with problems",
                   style="bold red" if bad else "bold green"))
