"""``kafkalog describe``: what log directories hold, from batch headers alone."""

from ..options import OutputOpt, Paths
from ..output import emit_and_exit
from ..root import app


@app.command("describe")
def describe(paths: Paths, output: OutputOpt = None) -> None:
    """Summarise log directories: metadata, lock, and per partition its segments, bytes,
    batches, records, offsets, timestamps, codecs, recovery point and leader epochs.

    PATH may be a log directory, a partition directory, or a directory holding log
    directories (searched recursively).

    Exit status: 0 when every partition reads cleanly, 1 when some partition has invalid
    bytes or unreadable files, 2 for usage errors, 3 for unreadable input.

    \b
    Examples:
      kafkalog describe /var/lib/kafka/data
      kafkalog describe /var/lib/kafka/data -o json | jq '.logDirs[].topics[].topic'
    """
    from ...ops.describe import describe as run
    from ...render.describe import render_describe
    from ...render.progress import byte_progress

    with byte_progress("describe") as advance:
        result = run(paths, progress=advance)
    emit_and_exit(result, output, render_describe)
