"""Render a :class:`~kafkalog_cli.ops.produce.ProduceResult` as a rich table."""

from __future__ import annotations


def render_produce(result, err: bool = False) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=err)
    t = Table(title=f"produce {result.topic} -> {result.log_dir}", show_edge=False)
    for col in ("partition", "records", "batches", "bytes", "first offset", "last offset",
                "log end offset", "segments rolled"):
        t.add_column(col, justify="right")
    for p in sorted(result.partitions.values(), key=lambda p: p.partition):
        t.add_row(str(p.partition), f"{p.records:,}", f"{p.batches:,}", f"{p.bytes:,}",
                  "-" if p.first_offset is None else str(p.first_offset),
                  "-" if p.last_offset is None else str(p.last_offset),
                  str(p.log_end_offset), str(p.segments_rolled))
    console.print(t)
    rate = f"{result.records_per_second:,.0f} records/s" if result.elapsed_s else ""
    console.print(f"{result.records:,} records, {result.bytes:,} bytes in "
                  f"{result.elapsed_s:.3f} s {rate}")
    if result.markers:
        console.print(f"{result.markers} transaction marker(s) written")
    if result.dropped_records:
        console.print(f"[yellow]{result.dropped_records} record(s) of the failing batch were "
                      "not written[/yellow]")
    if not result.clean_shutdown:
        console.print("[yellow]the log directory was not cleanly shut down before this run: "
                      ".kafka_cleanshutdown not written, a broker will run recovery[/yellow]")
