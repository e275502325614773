"""Rich rendering of an :class:`~kafkalog_cli.ops.export.ExportResult`."""

from __future__ import annotations

from .consoles import stdout_console


def render_export(result) -> None:
    from rich.text import Text  # here: -o json never needs rich (~10 ms of import)

    con = stdout_console()
    con.print(Text(f"exported {result.rows} records of {result.partitions} partition(s) to "
              f"{result.out} ({result.format}, {result.files} file(s), engine "
              f"{result.engine}) in {result.seconds:.2f} s "
              f"({result.records_per_second:,.0f} records/s)"))
    if result.corrupt_batches:
        first = next((s["file"] for s in result.skipped if "file" in s), "")
        con.print(Text(f"skipped {result.corrupt_batches} corrupt batch(es) ({first} ...)",
                       style="yellow"))
    if result.lost_offsets:
        con.print(Text(f"{result.lost_offsets} offset(s) before the log start offset were "
                       "not available (data loss)", style="yellow"))
    if result.aborted_records:
        con.print(f"dropped {result.aborted_records} record(s) of aborted transactions")
