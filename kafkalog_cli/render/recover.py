"""Rich rendering of a :class:`~kafkalog_cli.recovery.RecoveryResult` and an
:class:`~kafkalog_cli.recovery.UndoResult` (the JSON output is their ``to_dict``)."""

from __future__ import annotations

import os

from .consoles import stdout_console


def _n(v) -> str:
    return "-" if v is None else str(v)


def render_recover(result) -> None:
    from rich.table import Table
    from rich.text import Text

    con = stdout_console()
    for p in result.partitions:
        title = p.directory + ("  (dry run)" if result.dry_run else "")
        table = Table(title=title, title_justify="left", show_lines=False, expand=False)
        for col, just in (("segment", "left"), ("valid bytes", "right"),
                          ("invalid bytes", "right"), ("batches", "right"),
                          ("last valid offset", "right"), ("index entries rebuilt", "right"),
                          ("files removed", "right"), ("status", "left")):
            table.add_column(col, justify=just, overflow="fold")
        for s in p.segments:
            if s.removed:
                status = Text("removed (follows a truncation)", style="bold red")
            elif s.invalid_bytes:
                status = Text("truncated", style="bold red")
            elif s.scanned:
                status = Text("valid", style="green")
            else:
                status = Text("not scanned", style="dim")
            rebuilt = None
            if s.index_entries_rebuilt is not None or s.time_index_entries_rebuilt is not None:
                rebuilt = f"{_n(s.index_entries_rebuilt)} / {_n(s.time_index_entries_rebuilt)}"
            table.add_row(os.path.basename(s.log).lstrip("0").rjust(1, "0").replace(".log", "")
                          or "0", _n(s.valid_bytes), str(s.invalid_bytes),
                          _n(s.batches), _n(s.last_valid_offset), _n(rebuilt),
                          str(len(s.files_removed)), status)
        con.print(table)
        for note in p.notes:
            con.print(Text("note  " + note, style="yellow"))
        for s in p.segments:
            if s.error and not s.removed:
                con.print(Text(f"invalid {os.path.basename(s.log)}: {s.error}", style="red"))
            for note in s.notes:
                con.print(Text(f"note  {os.path.basename(s.log)}: {note}", style="yellow"))
        verb = "would" if result.dry_run else "did"
        for a in p.actions:
            extra = f" -> {a.target}" if a.target else (f" to {a.size} bytes" if a.size is not None
                                                       else "")
            con.print(f"  {verb} {a.kind} "
                      f"{a.path}{extra}  ({a.reason})")
        for name, off in p.checkpoint_updates.items():
            con.print(f"  {verb} set {name} to {off} (was {_n(p.recovery_point) if 'recovery' in name else _n(p.log_start_offset)})")
        if p.quarantine:
            con.print(Text(f"  quarantine: {p.quarantine}", style="cyan"))
    s = result.summary()
    if result.dry_run:
        line = (f"dry run: {s['partitionsWithWork']} of {s['partitions']} partition(s) need "
                f"recovery; {s['segmentsTruncated']} segment(s) to truncate "
                f"({s['invalidBytes']} invalid bytes), {s['segmentsRemoved']} to remove, "
                f"{s['actions']} action(s). Run with --truncate to apply.")
    else:
        line = (f"recovered {s['partitionsWithWork']} of {s['partitions']} partition(s): "
                f"{s['segmentsTruncated']} segment(s) truncated ({s['invalidBytes']} "
                f"bytes quarantined), {s['segmentsRemoved']} removed, {s['actions']} "
                f"action(s).")
    con.print(Text(line, style="bold"))


def render_undo(res) -> None:
    from rich.text import Text

    con = stdout_console()
    for p in res.restored:
        con.print(f"restored  {p}")
    for p in res.conflicts:
        con.print(Text(f"conflict  {p}", style="bold red"))
    con.print(Text(f"undo of {res.session}: {len(res.restored)} restored, "
                   f"{len(res.already)} already in place, {len(res.conflicts)} conflict(s)",
                   style="bold green" if res.ok else "bold red"))
