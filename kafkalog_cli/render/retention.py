"""``kafkalog retention``'s text view: one tab-separated line per segment the pass would
delete, the partition's log start offset after it, then the totals."""

from __future__ import annotations

import sys

from .text import safe


def render_retention(result, out=None) -> None:
    """Write ``result`` (an :class:`~kafkalog_cli.ops.retention.RetentionReport`) as text
    to ``out`` (default stdout; control characters of names escaped on a terminal)."""
    out = out or sys.stdout
    lines = []
    for p in result.partitions:
        for base, size, reason in p.segments:
            lines.append(f"{p.topic}-{p.partition}\tsegment {base}\t{size} bytes\t{reason}\n")
        if p.segments:
            lines.append(f"{p.topic}-{p.partition}\tlog start offset {p.log_start_offset}"
                         f" -> {p.new_log_start_offset}"
                         f"{' (after a roll)' if p.roll else ''}\n")
    lines.append(f"{result.deleted_segments} segments, {result.deleted_bytes} bytes would be "
                 "deleted\n")
    text = "".join(lines)
    out.write(safe(text) if out.isatty() else text)
