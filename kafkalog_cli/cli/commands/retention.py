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
    output: Annotated[Output, typer.Option(
        "--output", "-o", metavar="text|json",
        help="text: one line per segment deleted; json: one object.")] = Output.text,
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
    from ..output import finish

    res = plan_retention(paths, now=now, topic=topic)
    if output is Output.json:
        from ...render.jsonout import write_object

        write_object(res.to_dict())
    else:
        import sys

        from ...render.text import safe

        lines = []
        for p in res.partitions:
            for base, size, reason in p.segments:
                lines.append(f"{p.topic}-{p.partition}\tsegment {base}\t{size} bytes\t{reason}\n")
            if p.segments:
                lines.append(f"{p.topic}-{p.partition}\tlog start offset {p.log_start_offset}"
                             f" -> {p.new_log_start_offset}"
                             f"{' (after a roll)' if p.roll else ''}\n")
        lines.append(f"{res.deleted_segments} segments, {res.deleted_bytes} bytes would be "
                     "deleted\n")
        text = "".join(lines)
        sys.stdout.write(safe(text) if sys.stdout.isatty() else text)
    if res.problems:
        from ...render.consoles import error

        for p in res.problems:
            error(p)
    finish(res)
