"""``kafkalog verify-index``: do the indexes agree with the log?"""

from __future__ import annotations

import json

import typer

from ..app import app
from ..options import Output, OutputOpt, Paths, resolve_output


@app.command("verify-index")
def verify_index(paths: Paths, output: OutputOpt = None) -> None:
    """Check every segment's .index and .timeindex against its .log.

    Exit status: 0 when every index agrees with its log, 1 when problems were found,
    2 for usage errors, 3 for unreadable input.

    \b
    Example:
      kafkalog verify-index /var/lib/kafka/data
    """
    from ...ops.verify import verify_index as run
    from ...render.verify import render_verify

    result = run(paths)
    if resolve_output(output) is Output.json:
        print(json.dumps(result.to_dict()))
    else:
        render_verify(result)
    raise typer.Exit(0 if result.ok else 1)
