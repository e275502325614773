"""Rich rendering of a :class:`~kafkalog_cli.recovery.RecoveryResult` and an
:class:`~kafkalog_cli.recovery.UndoResult` (the JSON output is their ``to_dict``)."""

from __future__ import annotations

import os

from .consoles import stdout_console


def _n(v) -> str:
    return "-" if v is None else str(v)


def _lost(s) -> str:
    """What a segment loses, in words: its offset range and byte range."""
    parts = []
    if s.lost_offsets:
        a, b = s.lost_offsets
        parts.append(f"offset {a}" if a == b else f"offsets {a}-{b}")
    if s.lost_bytes:
        pos, size = s.lost_bytes
        parts.append(f"bytes {pos}-{pos + size - 1} ({size} bytes)")
    return ", ".join(parts)


def _salvage_lines(s, verb: str):
    """``--salvage``: each region a segment drops, then the batches it keeps (runs of
    batches that lie one after the other)."""
    from rich.text import Text

    from .text import safe

    if s.kept_batches is None:
        return
    name = safe(os.path.basename(s.log))
    for pos, size, reason, lost in s.dropped_regions:
        what = f"bytes {pos}-{pos + size - 1}" + (
            f" (offsets {lost[0]}-{lost[1]})" if lost else "")
        yield Text(f"  {verb} drop {what} of {name}: {safe(reason)}", style="red")
    runs: list[list[int]] = []
    for pos, size, first, last in s.kept_batches:
        if runs and runs[-1][1] == pos:
            runs[-1][1], runs[-1][3], runs[-1][4] = pos + size, last, runs[-1][4] + 1
        else:
            runs.append([pos, pos + size, first, last, 1])
    for start, end, first, last, n in runs:
        yield Text(f"  {verb} keep {n} batch(es) of {name}: offsets {first}-{last}, "
                   f"bytes {start}-{end - 1}", style="green")


def _ranges(ranges) -> str:
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


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
            if s.replaced_by:
                status = Text(f"replaced by {safe(os.path.basename(s.replaced_by))}",
                              style="bold red")
            elif s.removed:
                status = Text("removed (follows a truncation)", style="bold red")
            elif s.kept_batches is not None:
                status = Text("salvaged", style="bold yellow")
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
        for s in p.segments:
            for line in _salvage_lines(s, verb):
                con.print(line)
            if s.lost_offsets or s.lost_bytes:
                con.print(Text(f"  {verb} drop {_lost(s)} of "
                               f"{safe(os.path.basename(s.log))}", style="red"))
        ranges = p.lost_offset_ranges()
        if ranges:
            con.print(Text(f"  offsets lost: {_ranges(ranges)}", style="bold red"))
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
                f"({s['invalidBytes']} invalid bytes; {s['segmentsSalvaged']} salvaged), "
                f"{s['segmentsRemoved']} to remove "
                f"({s['segmentsReplaced']} replaced by .swap files; {s['removedBytes']} "
                f"bytes), {s['actions']} action(s). Run with --truncate to apply.")
    else:
        line = (f"recovered {s['partitionsWithWork']} of {s['partitions']} partition(s): "
                f"{s['segmentsTruncated']} segment(s) truncated ({s['invalidBytes']} "
                f"bytes quarantined; {s['segmentsSalvaged']} salvaged), "
                f"{s['segmentsRemoved']} removed ({s['segmentsReplaced']} "
                f"replaced by .swap files; {s['removedBytes']} bytes), {s['actions']} "
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
