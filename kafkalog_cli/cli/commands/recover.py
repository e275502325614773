"""``kafkalog recover``: the broker's log recovery, run offline, losing nothing."""

from pathlib import Path
from typing import Annotated

import typer

from ..options import OutputOpt
from ..output import emit_and_exit
from ..root import app


@app.command("recover")
def recover(
    paths: Annotated[list[str] | None, typer.Argument(
        help="Partition directories, log directories or directories holding log "
        "directories, on a local filesystem.", metavar="PATH", show_default=False)] = None,
    truncate: Annotated[bool, typer.Option(
        "--truncate", help="Apply the plan (without it: a dry run that changes nothing).")
    ] = False,
    all_segments: Annotated[bool, typer.Option(
        "--all", help="Recover every segment, not only those from the recovery point.")
    ] = False,
    quarantine: Annotated[Path | None, typer.Option(
        "--quarantine", metavar="DIR", help="Keep what is cut, removed or rewritten under this directory "
        "(default: <partition dir>/.kafkalog-quarantine/<UTC timestamp>/).",
        show_default=False)] = None,
    no_quarantine: Annotated[bool, typer.Option(
        "--no-quarantine", help="Discard what is cut, removed or rewritten.")] = False,
    salvage: Annotated[bool, typer.Option(
        "--salvage", help="Keep every valid batch after a corrupt region, at its offsets "
        "(an offset gap where the region was), instead of truncating at the first invalid "
        "batch as the broker does; it truncates there still where a transaction is open "
        "at the damage and its producer writes on. kafkalog's extension.")] = False,
    undo: Annotated[str | None, typer.Option(
        "--undo", help="Put back what the quarantine session QUARANTINE holds.",
        metavar="QUARANTINE", show_default=False)] = None,
    index_interval_bytes: Annotated[int, typer.Option(
        "--index-interval-bytes", min=1, metavar="BYTES", help="index.interval.bytes of the topics.")] = 4096,
    output: OutputOpt = None,
) -> None:
    """Run the broker's log recovery offline: validate batches, truncate at the first
    invalid one, rebuild indexes and derived files, finish interrupted swaps.

    Everything cut, removed or rewritten goes first to a quarantine folder;
    --undo puts it back.

    Exit status: 0 when nothing needed doing or recovery completed, 1 when a dry run
    found work (or --undo met conflicts), 2 for usage errors, 3 for unreadable input.

    \b
    Examples:
      kafkalog recover /var/lib/kafka/data              # dry run: what would change
      kafkalog recover /var/lib/kafka/data/orders-3 --truncate
      kafkalog recover /var/lib/kafka/data/orders-3 --truncate --salvage
      kafkalog recover --undo /var/lib/kafka/data/orders-3/.kafkalog-quarantine/2025...Z
    """
    from ...ops import recover as ops
    from ...render.progress import byte_progress
    from ...render.recover import render_recover, render_undo

    if undo is not None:
        if paths or truncate or all_segments or salvage or no_quarantine or \
                quarantine is not None:
            raise typer.BadParameter("--undo takes only the quarantine session directory")
        emit_and_exit(ops.undo(undo), output, render_undo)
    if not paths:
        raise typer.BadParameter("give at least one partition or log directory")
    if no_quarantine and quarantine is not None:
        raise typer.BadParameter("--quarantine and --no-quarantine exclude each other")
    with byte_progress("recover") as advance:
        result = ops.recover(paths, truncate=truncate, all_segments=all_segments,
                             salvage=salvage,
                             quarantine=quarantine, keep=not no_quarantine,
                             index_interval_bytes=index_interval_bytes, progress=advance)
    emit_and_exit(result, output, render_recover)
