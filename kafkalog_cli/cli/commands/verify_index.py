"""``kafkalog verify-index``: do the indexes agree with the log?"""

from __future__ import annotations

import json

import typer

from ..app import app
from ..options import Output, OutputOpt, Paths, resolve_output


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
    from ...render.verify import render_verify

    result = run(paths)
    if resolve_output(output) is Output.json:
        print(json.dumps(result.to_dict()))
    else:
        render_verify(result)
    if result.unreadable:
        from ...errors import KafkalogError
        from ...ops.verify import NO_WHOLE_BATCH
        from ...render.consoles import error

        for seg in result.segments:
            for p in seg.problems:
                if p.kind == NO_WHOLE_BATCH:
                    error(str(KafkalogError(p.message, file=p.file, position=p.position)))
        raise typer.Exit(3)
    raise typer.Exit(0 if result.ok else 1)
