"""Render a :class:`~kafkalog_cli.ops.produce.ProduceResult`: a rich table on stderr
(produce's stdout carries data only: the JSON summary with ``-o json``)."""

from __future__ import annotations

from .consoles import stderr_console


def render_produce(result, console=None) -> None:
    from rich.text import Text

    from .tables import Column, render_table
    from .text import safe

    console = console or stderr_console()
    rows = [[str(p.partition), f"{p.records:,}", f"{p.batches:,}", f"{p.bytes:,}",
             "-" if p.first_offset is None else str(p.first_offset),
             "-" if p.last_offset is None else str(p.last_offset),
             str(p.log_end_offset), str(p.segments_rolled)]
            for p in sorted(result.partitions.values(), key=lambda p: p.partition)]
    if rows:
        render_table(console, [Column(c) for c in (
            "partition", "records", "batches", "bytes", "first offset", "last offset",
            "log end offset", "segments rolled")], rows,
            title=Text(safe(f"produce {result.topic} -> {result.log_dir}"), style="bold"))
    rate = f"{result.records_per_second:,.0f} records/s" if result.elapsed_s else ""
    console.print(Text(f"{result.records:,} records, {result.bytes:,} bytes in "
                       f"{result.elapsed_s:.3f} s {rate}"))
    if result.markers:
        console.print(Text(f"{result.markers} transaction marker(s) written"))
    if result.dropped_records:
        console.print(Text(f"{result.dropped_records} record(s) of the failing batch were "
                           "not written", style="yellow"))
    if not result.clean_shutdown:
        console.print(Text("the log directory was not cleanly shut down before this run: "
                           ".kafka_cleanshutdown not written, a broker will run recovery",
                           style="yellow"))
