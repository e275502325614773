"""``kafkalog get-offsets``: kafka-get-offsets.sh, answered from the log directories."""

from typing import Annotated

import typer

from ..options import Output, Paths
from ..root import app


@app.command("get-offsets")
def get_offsets(
    paths: Paths,
    topic: Annotated[str | None, typer.Option(
        "--topic", metavar="REGEX", help="The topic, or a regular expression the whole "
        "name must match (default: every topic).", show_default=False)] = None,
    partitions: Annotated[str | None, typer.Option(
        "--partitions", metavar="IDS", help="Comma-separated partition ids (default: "
        "all).", show_default=False)] = None,
    topic_partitions: Annotated[str | None, typer.Option(
        "--topic-partitions", metavar="RULES", help="Comma-separated rules "
        "topic-regex:N, topic-regex:N-M (upper exclusive), :N-, :-M; not with --topic or "
        "--partitions.", show_default=False)] = None,
    time: Annotated[str, typer.Option(
        "--time", metavar="TIME", help="-1 or latest, -2 or earliest, -3 or max-timestamp, "
        "-4 or earliest-local, -5 or latest-tiered, -6 or earliest-pending-upload, or a "
        "timestamp (epoch ms): the first offset at or after it.")] = "latest",
    exclude_internal_topics: Annotated[bool, typer.Option(
        "--exclude-internal-topics", help="Leave out internal topics.")] = False,
    output: Annotated[Output, typer.Option(
        "--output", "-o", metavar="text|json",
        help="text: topic:partition:offset lines; json: one object.")] = Output.text,
) -> None:
    """Print the offsets of partitions for a time, as kafka-get-offsets.sh does, from the
    log directories without a broker: topic:partition:offset, sorted, partitions
    without an answer (offset -1) left out.

    PATH is a broker's log directory (several for a broker with several log.dirs).

    Exit status: 0; 1 when no partition matches the filters or something could not be
    used; 2 for usage errors; 3 for unreadable input.

    \b
    Examples:
      kafkalog get-offsets /var/lib/kafka/data --topic orders
      kafkalog get-offsets /var/lib/kafka/data --topic-partitions 'orders:0-3' --time -2
      kafkalog get-offsets /var/lib/kafka/data --time 1714521600000 -o json
    """
    from ...ops.get_offsets import get_offsets as run
    from ..output import finish

    res = run(paths, topic=topic, partitions=partitions, topic_partitions=topic_partitions,
              time=time, exclude_internal=exclude_internal_topics)
    if output is Output.json:
        from ...render.jsonout import write_object

        write_object(res.to_dict())
    else:
        from ...render.text import safe

        lines = "".join(f"{t}:{p}:{o}\n" for t, p, o, _ in res.offsets)
        import sys

        sys.stdout.write(safe(lines) if sys.stdout.isatty() else lines)
    if res.problems:
        from ...render.consoles import error

        for p in res.problems:
            error(p)
    finish(res)
