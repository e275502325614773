"""``kafkalog verify-index``: do the indexes agree with the log?"""

from ..options import OutputOpt, Paths
from ..output import emit, finish
from ..root import app


@app.command("verify-index")
def verify_index(paths: Paths, output: OutputOpt = None) -> None:
    """Check every segment's .index and .timeindex against its .log.

    Exit status: 0 when every index agrees with its log, 1 when problems were found
    (bytes after a log's last whole batch are one: a broker truncates them at recovery),
    2 for usage errors, 3 for unreadable input (a .log holding no whole batch too).

    \b
    Example:
      kafkalog verify-index /var/lib/kafka/data
    """
    from ...ops.verify import verify_index as run
    from ...render.progress import byte_progress
    from ...render.verify import render_unreadable, render_verify

    with byte_progress("verify-index") as advance:
        result = run(paths, progress=advance)
    emit(result, output, render_verify)
    render_unreadable(result)
    finish(result)
