"""Rich rendering of a :class:`~kafkalog_cli.ops.verify.VerifyResult`."""

from __future__ import annotations

from .consoles import stdout_console


def render_verify(result) -> None:
    from rich.table import Table
    from rich.text import Text

    con = stdout_console()
    table = Table(title="verify-index", show_lines=False)
    table.add_column("segment", overflow="fold")
    table.add_column("batches", justify="right")
    table.add_column("index", justify="right")
    table.add_column("timeindex", justify="right")
    table.add_column("verdict")
    for s in result.segments:
        verdict = Text("ok", style="green") if s.ok else Text(
            f"{len(s.problems)} problem(s)", style="bold red")
        if s.ok and s.warnings:
            verdict = Text(f"ok, {len(s.warnings)} warning(s)", style="yellow")
        table.add_row(s.log, str(s.batches),
                      "missing" if s.index_entries is None else str(s.index_entries),
                      "missing" if s.time_index_entries is None else str(s.time_index_entries),
                      verdict)
    con.print(table)
    for s in result.segments:
        for p in s.problems:
            con.print(Text(f"problem  {p.file}: {p.message}", style="red"))
        for w in s.warnings:
            con.print(Text(f"warning  {w.file}: {w.message}", style="yellow"))
    total = len(result.segments)
    bad = sum(1 for s in result.segments if not s.ok)
    con.print(Text(f"{total} segment(s) checked, {bad} with problems",
                   style="bold green" if not bad else "bold red"))
