"""``kafkalog retention``: what the broker's next log retention pass would delete."""

from typing import Annotated

import typer

from ..options import Output, Paths
from ..root import app


@app.command("retention")
def retention(
    paths: Paths,
    topic: Annotated[str | None, typer.Option(
        "--topic", metavar="TOPIC", help="Only this topic (default: every topic).",
        show_default=False)] = None,
    now: Annotated[int | None, typer.Option(
        "--now", metavar="MS", help="The clock for retention.ms, in epoch ms (default: "
        "now): what a pass at that time would delete.", show_default=False)] = None,
    output: Annotated[Output | None, typer.Option(
        "--output", "-o", metavar="text|json",
        help="text: one line per segment deleted (default on a terminal); json: one "
             "object (default when stdout is not a terminal).", show_default=False)] = None,
) -> None:
    """Show which segments the broker's next log retention pass would delete
    (UnifiedLog.deleteOldSegments: the log start offset, retention.bytes and retention.ms
    rules) and the log start offset after it, per partition. Read-only: nothing is
    deleted (a broker or `kafkalog serve` deletes them).

    PATH is a broker's log directory (several for a broker with several log.dirs). Topic
    configs come from the directory (the KRaft metadata log, kafkalog serve's state);
    static broker defaults in server.properties are not there: Kafka's defaults apply.

    Exit status: 0; 1 when something could not be read; 2 for usage errors; 3 for
    unreadable input.

    \b
    Examples:
      kafkalog retention /var/lib/kafka/data
      kafkalog retention /var/lib/kafka/data --topic orders --now 1767225600000 -o json
    """
    from ...ops.retention import plan_retention
    from ...render.retention import render_retention
    from ..output import emit, finish

    res = plan_retention(paths, now=now, topic=topic)
    emit(res, output, render_retention)
    if res.problems:
        import sys

        from ...render.consoles import error

        sys.stdout.flush()
        for p in res.problems:
            error(p)
    finish(res)
