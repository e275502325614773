"""Rich rendering of an :class:`~kafkalog_cli.ops.audit.AuditResult`: a table per log
directory whose numbers and partition names are never cut (:mod:`.tables`). Columns:
segments, batches, records, bytes, offsets, codecs, transactional/control batches,
CRC failures / invalid tail bytes / index problems, verdict."""

from __future__ import annotations

from .consoles import stdout_console


def render_audit(result, console=None) -> None:
    from rich.text import Text

    from .tables import WRAP, Column, render_table
    from .text import safe

    con = console or stdout_console()
    groups: dict = {}
    for p in result.partitions_by_log_dir():
        groups.setdefault(p.log_dir or "-", []).append(p)
    columns = [Column("partition", justify="left"), Column("segs"), Column("batches"),
               Column("records"), Column("bytes"), Column("offsets", justify="left"),
               Column("codecs", WRAP, "left"), Column("txn/ctl"),
               Column("crc tail idx"), Column("verdict", WRAP, "left")]
    for log_dir, parts in groups.items():
        rows = []
        for p in parts:
            offs = "-" if p.first_offset is None else f"{p.first_offset}..{p.last_offset}"
            verdict = Text("ok", style="green") if p.ok else Text(
                f"{len(p.problems)} problem(s)", style="bold red")
            rows.append([safe(f"{p.topic}-{p.partition}"), str(p.segments), str(p.batches),
                         str(p.records), str(p.bytes), offs, ", ".join(p.codecs) or "-",
                         f"{p.transactional_batches}/{p.control_batches}",
                         f"{p.corrupt_batches}/{p.invalid_bytes}/{p.index_problems}",
                         verdict])
        render_table(con, columns, rows, title=Text(safe(log_dir), style="bold"))
    for p in result.partitions:
        for msg in p.problems:
            con.print(Text(f"problem  {safe(p.topic)}-{p.partition}: {safe(msg)}",
                           style="red"))
    bad = sum(1 for p in result.partitions if not p.ok)
    con.print(Text(f"{len(result.partitions)} partition(s) audited, {bad} with problems",
                   style="bold red" if bad else "bold green"))
