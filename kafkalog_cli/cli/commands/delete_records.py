"""``kafkalog delete-records``: kafka-delete-records.sh, carried out on the log directories."""

from pathlib import Path
from typing import Annotated

import typer

from ..options import Output, Paths
from ..root import app


@app.command("delete-records")
def delete_records(
    paths: Paths,
    offset_json_file: Annotated[str, typer.Option(
        "--offset-json-file", metavar="FILE", help='The JSON file with the offset per '
        'partition: {"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], '
        '"version": 1} (offset -1: the high watermark).', show_default=False)],
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print what would happen; change nothing.")] = False,
    quarantine: Annotated[Path | None, typer.Option(
        "--quarantine", metavar="DIR", help="Keep what is removed or rewritten under this "
        "directory (default: <partition dir>/.kafkalog-quarantine/<UTC timestamp>/).",
        show_default=False)] = None,
    output: Annotated[Output, typer.Option(
        "--output", "-o", metavar="text|json",
        help="text: kafka-delete-records.sh's lines; json: one object.")] = Output.text,
) -> None:
    """Delete the records of partitions below the given offsets, as kafka-delete-records.sh
    does through the broker: the log start offset moves up (log-start-offset-checkpoint,
    written atomically), the segments wholly below it are removed as retention removes
    them. Refused for offsets past the high watermark, with the broker's error.

    PATH is a broker's log directory (several for a broker with several log.dirs); the
    log directory must not be in use (its .lock is taken). Everything removed or
    rewritten goes to a quarantine session first: `kafkalog recover --undo SESSION`
    puts it back.

    Exit status: 0; 1 when a partition was refused; 2 for usage errors (a malformed
    file); 3 for unreadable input.

    \b
    Examples:
      echo '{"partitions":[{"topic":"orders","partition":0,"offset":1200}],"version":1}' > d.json
      kafkalog delete-records /var/lib/kafka/data --offset-json-file d.json
    """
    from ...ops.delete_records import delete_records as run
    from ..output import finish

    res = run(paths, offset_json_file, dry_run=dry_run, quarantine=quarantine)
    if output is Output.json:
        from ...render.jsonout import write_object

        write_object(res.to_dict())
    else:
        import sys

        from ...render.text import safe

        text = "Executing records delete operation\nRecords delete operation completed:\n"
        text += "".join(p.tool_line() + "\n" for p in res.partitions)
        sys.stdout.write(safe(text) if sys.stdout.isatty() else text)
        sys.stdout.flush()
        for p in res.partitions:
            if p.message:
                sys.stderr.write(f"{p.topic}-{p.partition}: {p.message}\n")
            if p.quarantine and not res.dry_run:
                sys.stderr.write(f"{p.topic}-{p.partition}: removed {len(p.removed)} files; "
                                 f"undo with: kafkalog recover --undo {p.quarantine}\n")
    finish(res)
