"""``kafkalog describe``: what log directories hold, from batch headers alone."""

from __future__ import annotations

import json

import typer

from ..app import app
from ..options import Output, OutputOpt, Paths, resolve_output


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

    result = run(paths)
    if resolve_output(output) is Output.json:
        print(json.dumps(result.to_dict()))
    else:
        render_describe(result)
    raise typer.Exit(0 if result.ok else 1)
