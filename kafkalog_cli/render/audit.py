"""Rich rendering of an :class:`~kafkalog_cli.ops.audit.AuditResult`."""

from __future__ import annotations

from .consoles import stdout_console


def render_audit(result) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    con = stdout_console()
    groups: dict = {}
    for p in result.partitions_by_log_dir():
        groups.setdefault(p.log_dir or "-", []).append(p)
    for log_dir, parts in groups.items():
        t = Table(title=log_dir, title_justify="left", box=box.SIMPLE_HEAD)
        for col in ("partition", "segs", "batches", "records", "bytes", "offsets", "codecs",
                    "crc", "invalid", "idx", "txn/ctl", "verdict"):
            left = col in ("partition", "offsets", "codecs", "verdict")
            t.add_column(col, justify="left" if left else "right", no_wrap=col != "codecs")
        for p in parts:
            offs = "-" if p.first_offset is None else f"{p.first_offset}..{p.last_offset}"
            verdict = Text("ok", style="green") if p.ok else Text(
                f"{len(p.problems)} problem(s)", style="bold red")
            t.add_row(f"{p.topic}-{p.partition}", str(p.segments), str(p.batches),
                      str(p.records), str(p.bytes), offs, ",".join(p.codecs) or "-",
                      str(p.corrupt_batches), str(p.invalid_bytes), str(p.index_problems),
                      f"{p.transactional_batches}/{p.control_batches}", verdict)
        con.print(t)
    for p in result.partitions:
        for msg in p.problems:
            con.print(Text(f"problem  {p.topic}-{p.partition}: {msg}", style="red"))
    bad = sum(1 for p in result.partitions if not p.ok)
    con.print(Text(f"{len(result.partitions)} partition(s) audited, {bad} with problems",
                   style="bold red" if bad else "bold green"))
