"""``kafkalog describe``: what log directories hold, from batch headers alone."""

from typing import Annotated

import typer

from ..options import Paths, choices
from ..output import emit_and_exit
from ..root import app

DescribeOutput = choices("DescribeOutput", "text json kafka-log-dirs")


@app.command("describe")
def describe(
    paths: Paths,
    output: Annotated[DescribeOutput | None, typer.Option(
        "--output", "-o", metavar="text|json|kafka-log-dirs",
        help="text: rich tables (default on a terminal); json: for scripts (default when "
             "stdout is not a terminal); kafka-log-dirs: what kafka-log-dirs.sh --describe "
             "prints.", show_default=False)] = None,
    log_dirs_json: Annotated[bool, typer.Option(
        "--log-dirs-json", help="Print what kafka-log-dirs.sh --describe prints (the same "
        "as -o kafka-log-dirs).")] = False,
    topic_list: Annotated[str, typer.Option(
        "--topic-list", metavar="T1,T2", help="With --log-dirs-json: only these topics "
        "(comma-separated).")] = "",
) -> None:
    """Summarise log directories: metadata, lock, and per partition its segments, bytes,
    batches, records, offsets, timestamps, codecs, recovery point and leader epochs.

    With --log-dirs-json (-o kafka-log-dirs): kafka-log-dirs.sh --describe's lines,
    the JSON of every partition's size per log directory of each broker (node.id of
    meta.properties), from the files.

    PATH may be a log directory, a partition directory, or a directory holding log
    directories (searched recursively).

    Exit status: 0 when every partition reads cleanly, 1 when some partition has invalid
    bytes or unreadable files, 2 for usage errors, 3 for unreadable input.

    \b
    Examples:
      kafkalog describe /var/lib/kafka/data
      kafkalog describe /var/lib/kafka/data -o json | jq '.logDirs[].topics[].topic'
    """
    if log_dirs_json or (output is not None and output.value == "kafka-log-dirs"):
        _log_dirs(paths, topic_list)
    if topic_list:
        raise typer.BadParameter("--topic-list goes with --log-dirs-json")
    from ...ops.describe import describe as run
    from ...render.describe import render_describe
    from ...render.progress import byte_progress

    with byte_progress("describe") as advance:
        result = run(paths, progress=advance)
    from ..options import Output

    emit_and_exit(result, None if output is None else Output(output.value), render_describe)


def _log_dirs(paths, topic_list: str) -> None:
    import sys

    from ...ops.log_dirs import describe_log_dirs
    from ..output import finish

    res = describe_log_dirs(paths, topics=topic_list.split(","))
    sys.stdout.write(res.kafka_text())
    if res.problems:
        from ...render.consoles import error

        sys.stdout.flush()
        for p in res.problems:
            error(p)
    finish(res)
