"""Rich rendering of a :class:`~kafkalog_cli.recovery.RecoveryResult` and an
:class:`~kafkalog_cli.recovery.UndoResult` (the JSON output is their ``to_dict``)."""

from __future__ import annotations

import os

from .consoles import stdout_console


def _n(v) -> str:
    return "-" if v is None else str(v)


def render_recover(result, console=None) -> None:
    from rich.text import Text

    from .tables import WRAP, Column, render_table
    from .text import safe

    con = console or stdout_console()
    columns = [Column("segment", justify="left"), Column("valid bytes"),
               Column("invalid bytes"), Column("batches"), Column("last valid offset"),
               Column("index entries rebuilt"), Column("files removed"),
               Column("status", WRAP, "left")]
    for p in result.partitions:
        title = Text(safe(p.directory) + ("  (dry run)" if result.dry_run else ""),
                     style="bold")
        rows = []
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
            rows.append([str(s.base_offset), _n(s.valid_bytes), str(s.invalid_bytes),
                         _n(s.batches), _n(s.last_valid_offset), _n(rebuilt),
                         str(len(s.files_removed)), status])
        render_table(con, columns, rows, title=title)
        for note in p.notes:
            con.print(Text("note  " + safe(note), style="yellow"))
        for s in p.segments:
            name = safe(os.path.basename(s.log))
            if s.error and not s.removed:
                con.print(Text(f"invalid {name}: {safe(s.error)}", style="red"))
            for note in s.notes:
                con.print(Text(f"note  {name}: {safe(note)}", style="yellow"))
        verb = "would" if result.dry_run else "did"
        for a in p.actions:
            extra = f" -> {a.target}" if a.target else (f" to {a.size} bytes" if a.size is not None
                                                       else "")
            con.print(Text(f"  {verb} {a.kind} {safe(a.path)}{safe(extra)}  ({safe(a.reason)})"))
        for name, off in p.checkpoint_updates.items():
            was = _n(p.recovery_point) if "recovery" in name else _n(p.log_start_offset)
            con.print(Text(f"  {verb} set {name} to {off} (was {was})"))
        if p.quarantine:
            con.print(Text(f"  quarantine: {safe(p.quarantine)}", style="cyan"))
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

    from .text import safe

    con = stdout_console()
    for p in res.restored:
        con.print(Text(f"restored  {safe(p)}"))
    for p in res.conflicts:
        con.print(Text(f"conflict  {safe(p)}", style="bold red"))
    con.print(Text(f"undo of {safe(res.session)}: {len(res.restored)} restored, "
                   f"{len(res.already)} already in place, {len(res.conflicts)} conflict(s)",
                   style="bold green" if res.ok else "bold red"))
