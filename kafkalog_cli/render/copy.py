"""Rich rendering of a :class:`~kafkalog_cli.ops.copy.CopyResult`: one row per partition
copied (its name in the target, the source, the first and last offsets copied, the log
start and end offsets, what was kept of the source's own files), then the problems and
the partitions left out."""

from __future__ import annotations

from .consoles import stdout_console


def render_copy(result, console=None) -> None:
    from rich.text import Text

    from .tables import FOLD, WRAP, Column, render_table
    from .text import safe

    con = console or stdout_console()
    columns = [Column("partition", justify="left"), Column("from", FOLD, "left"),
               Column("segs"), Column("batches"), Column("bytes"),
               Column("offsets", justify="left"), Column("log start"), Column("log end"),
               Column("kept as written", WRAP, "left")]
    rows = []
    for p in result.partitions:
        c = p.copied
        offs = "-" if c.first_offset is None else f"{c.first_offset}..{c.last_offset}"
        kept = ", ".join(_kinds(c.kept)) or "-"
        rows.append([safe(f"{p.topic}-{p.partition}"), safe(p.source), str(c.segments),
                     str(c.batches), str(c.bytes), offs, str(c.log_start_offset),
                     str(c.log_end_offset), kept])
    render_table(con, columns, rows, title=Text(f"copied into {safe(result.log_dir)}",
                                                style="bold"))
    for p in result.partitions:
        for msg in p.problems:
            con.print(Text(f"problem  {safe(p.topic)}-{p.partition}: {safe(msg)}",
                           style="red"), soft_wrap=False, overflow="fold")
    for s in result.skipped:
        con.print(Text(f"skipped  {safe(s['partitionDir'])}: {s['reason']}", style="dim"),
                  soft_wrap=False, overflow="fold")
    bad = sum(1 for p in result.partitions if not p.ok)
    con.print(Text(f"{len(result.partitions)} partition(s) copied, {bad} with problems",
                   style="bold red" if bad else "bold green"))


def _kinds(names: list[str]) -> list[str]:
    """The kinds of the source files kept (``.index``, ``.snapshot``, ...), each once."""
    out: list[str] = []
    for n in names:
        kind = n[n.index("."):] if n[:1].isdigit() and "." in n else n
        if kind not in out:
            out.append(kind)
    return out
