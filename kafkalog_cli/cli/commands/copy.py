"""``kafkalog copy``: partitions copied into a log directory as their broker wrote them."""

from typing import Annotated

import typer

from ..options import OutputOpt, Paths
from ..output import emit_and_exit
from ..root import app


@app.command("copy")
def copy(
    paths: Paths,
    to: Annotated[str, typer.Option(
        "--to", metavar="DIR", help="The log directory to copy into (local; created, with "
        "the sources' cluster and node ids, when new).", show_default=False)],
    start_offset: Annotated[int | None, typer.Option(
        "--start-offset", min=0, metavar="OFFSET", help="Copy from the batch holding this "
        "offset; the copy's log start offset is this offset.", show_default=False)] = None,
    end_offset: Annotated[int | None, typer.Option(
        "--end-offset", min=0, metavar="OFFSET", help="Copy up to the batch holding this "
        "offset (inclusive).", show_default=False)] = None,
    start_timestamp: Annotated[int | None, typer.Option(
        "--start-timestamp", min=0, metavar="MS", help="Copy from the batch holding the "
        "first record whose timestamp is >= this (ms), as offsetsForTimes finds it.",
        show_default=False)] = None,
    end_timestamp: Annotated[int | None, typer.Option(
        "--end-timestamp", min=0, metavar="MS", help="Copy up to the batch holding the "
        "last record before the first whose timestamp is > this (ms).",
        show_default=False)] = None,
    rename: Annotated[list[str] | None, typer.Option(
        "--rename", metavar="OLD:NEW", help="Write topic OLD as NEW, with a new topic id "
        "(repeatable).", show_default=False)] = None,
    index_interval_bytes: Annotated[int | None, typer.Option(
        "--index-interval-bytes", min=0, metavar="BYTES", help="index.interval.bytes of "
        "the indexes rebuilt (default 4096; a segment copied whole keeps its own indexes "
        "when they verify).", show_default=False)] = None,
    output: OutputOpt = None,
) -> None:
    """Copy partitions into a log directory exactly as their broker wrote them.

    Every batch is kept as written (offsets, producer ids, epochs, sequences, transaction
    markers, timestamps, compression): each .log of a partition copied whole is
    byte-identical to its source. Indexes, .txnindex, producer snapshots, leader epochs,
    partition.metadata and the log directory's checkpoints are a broker's for those
    batches (the source's own where they still hold: indexes that verify, snapshots that
    parse, its leader-epoch-checkpoint). Whole batches are selected: the ones
    overlapping --start/--end. Each partition appears at once (written under a -delete
    name, then renamed), under the target's lock; an existing partition is never
    merged into. __cluster_metadata is left out.

    Exit status: 0 when everything was copied, 1 when bytes of a source were not (bytes
    after a segment's last whole batch), a batch fails its CRC check, a target partition
    exists or the target is locked, 2 for usage errors, 3 for unreadable input.

    \b
    Examples:
      kafkalog copy /backups/kafka-logs/orders-0 --to /var/lib/kafka/data
      kafkalog copy /var/lib/kafka/data --to /tmp/slice --start-timestamp 1700000000000
      kafkalog copy data/orders-0 --to data --rename orders:orders-replay
    """
    from ...ops.copy import copy as run
    from ...render.copy import render_copy

    result = run(paths, to, start_offset=start_offset, end_offset=end_offset,
                 start_timestamp=start_timestamp, end_timestamp=end_timestamp,
                 rename=rename or (), index_interval_bytes=index_interval_bytes)
    emit_and_exit(result, output, render_copy)
