"""Rich rendering of a :class:`~kafkalog_cli.ops.verify.VerifyResult`."""

from __future__ import annotations

from ..errors import KafkalogError
from ..ops.verify import NO_WHOLE_BATCH
from .consoles import stdout_console


def render_verify(result, console=None) -> None:
    from rich.text import Text

    from .tables import FOLD, WRAP, Column, render_table
    from .text import safe

    con = console or stdout_console()
    rows = []
    for s in result.segments:
        verdict = Text("ok", style="green") if s.ok else Text(
            f"{len(s.problems)} problem(s)", style="bold red")
        if s.ok and s.warnings:
            verdict = Text(f"ok, {len(s.warnings)} warning(s)", style="yellow")
        rows.append([safe(s.log), str(s.batches),
                     "missing" if s.index_entries is None else str(s.index_entries),
                     "missing" if s.time_index_entries is None else str(s.time_index_entries),
                     verdict])
    render_table(con, [Column("segment", FOLD, "left"), Column("batches"), Column("index"),
                       Column("timeindex"), Column("verdict", WRAP, "left")], rows,
                 title="verify-index")
    for s in result.segments:
        for p in s.problems:
            con.print(Text(f"problem  {safe(p.file)}: {safe(p.message)}", style="red"))
        for w in s.warnings:
            con.print(Text(f"warning  {safe(w.file)}: {safe(w.message)}", style="yellow"))
    total = len(result.segments)
    bad = sum(1 for s in result.segments if not s.ok)
    con.print(Text(f"{total} segment(s) checked, {bad} with problems",
                   style="bold green" if not bad else "bold red"))


def render_unreadable(result) -> None:
    """One line on stderr per ``.log`` holding no whole batch (the run exits 3), naming
    the file and byte position, as dump-segment reports it."""
    from .consoles import error

    for s in result.segments:
        for p in s.problems:
            if p.kind == NO_WHOLE_BATCH:
                error(str(KafkalogError(p.message, file=p.file, position=p.position)))
