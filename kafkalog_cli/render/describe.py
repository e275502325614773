"""Rich rendering of a :class:`~kafkalog_cli.ops.describe.DescribeResult`: per log
directory a heading with its metadata, then a table of its partitions."""

from __future__ import annotations

from datetime import datetime, timezone

from .consoles import stdout_console
from .text import safe


def _ts(ms: int | None) -> str:
    if ms is None or ms < 0:
        return "-"
    try:
        dt = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return str(ms)
    return dt.strftime("%Y-%m-%d %H:%M:%S")


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _partition_line(p):
    from rich.text import Text

    bad = p.invalid_bytes or p.errors
    t = Text(overflow="fold")
    t.append(safe(f"{p.topic}-{p.partition}"), style="bold red" if bad else "bold")
    if p.state:
        t.append(f" ({p.state})", style="yellow")
    t.append(f"  {p.segments} seg  {_bytes(p.bytes)}  {p.batches} batches  "
             f"{p.records} records  offsets {p.log_start_offset}..{p.log_end_offset}")
    t.append(f"  {_ts(p.first_timestamp)} .. {_ts(p.last_timestamp)}", style="cyan")
    if p.codecs:
        t.append("  " + ",".join(p.codecs), style="magenta")
    extra = []
    lag = p.recovery_point_lag
    if lag is not None:
        extra.append(f"recovery lag {lag}")
    if p.high_watermark is not None:
        extra.append(f"hw {p.high_watermark}")
    if p.leader_epochs:
        e, o = p.leader_epochs[-1]
        extra.append(f"epochs {len(p.leader_epochs)} (last {e}@{o})")
    if p.producer_snapshots:
        extra.append(f"{p.producer_snapshots} producer snapshot(s)")
    if p.control_batches:
        extra.append(f"{p.control_batches} control")
    if p.aborted_transactions:
        extra.append(f"{p.aborted_transactions} aborted txn")
    if extra:
        t.append("  " + "  ".join(extra), style="dim")
    for line in _kraft_lines(p) + _internal_lines(p):
        t.append("\n  " + safe(line), style="dim")
    if p.invalid_bytes:
        t.append(f"  {p.invalid_bytes} invalid bytes", style="bold red")
    for e in p.errors:
        t.append(f"\n  error: {safe(e)}", style="red")
    return t


def _kraft_lines(p) -> list[str]:
    """The KRaft lines of a ``__cluster_metadata`` partition: its metadata snapshots and
    ``quorum-state`` (every key it holds, as written)."""
    parts = []
    s = p.metadata_snapshots
    if s is not None:
        if s.count:
            parts.append(f"metadata snapshots {s.count} ({_bytes(s.bytes)}, latest end offset "
                         f"{s.latest_end_offset} epoch {s.latest_epoch})")
        else:
            parts.append("no metadata snapshot")
    q = p.quorum_state
    if q is not None:
        fields = ", ".join(f"{k}={_json_text(v)}" for k, v in q.items())
        parts.append(f"quorum-state {{{fields}}}")
    return parts


def _internal_lines(p) -> list[str]:
    """An internal topic's replayed state (``PartitionInfo.internal_topic``)."""
    s = p.internal_topic
    if not s:
        return []
    parts = []
    if "groups" in s:
        parts.append("groups " + ", ".join(f"{n} {kind}" for kind, n in s["groups"].items())
                     + f"; {s['committedOffsets']} committed offsets")
    if "sharePartitions" in s:
        parts.append(f"{s['sharePartitions']} share-partitions")
    if "transactionalIds" in s:
        parts.append(f"{s['transactionalIds']} transactional ids")
    if "remoteLogSegments" in s:
        r = s["remoteLogSegments"]
        states = ", ".join(f"{n} {state}" for state, n in r["byState"].items())
        parts.append(f"remote log segments {r['segments']} ({_bytes(r['bytes'])})"
                     + (f": {states}" if states else "")
                     + f"; {r['partitionsDeleted']} partitions deleted")
    if s.get("undecodable"):
        parts.append(f"{s['undecodable']} records not decoded")
    return ["; ".join(parts)]


def _json_text(v) -> str:
    import json

    return v if isinstance(v, str) and v else json.dumps(v, separators=(",", ":"))


def render_describe(result, console=None) -> None:
    """A tree: log directory (metadata, lock) > topic > one line per partition."""
    from rich.text import Text
    from rich.tree import Tree

    con = console or stdout_console()
    for d in result.log_dirs:
        head = Text(safe(d.path), style="bold")
        meta = [f"cluster {safe(d.cluster_id or '-')}",
                f"node {d.node_id if d.node_id is not None else '-'}"]
        if d.directory_id:
            meta.append(f"directory {d.directory_id}")
        meta.append("clean shutdown" if d.clean_shutdown else "no clean-shutdown marker")
        head.append("\n" + "  ".join(meta) + "  ", style="dim")
        head.append("LOCKED (in use by a broker)" if d.locked else "not locked",
                    style="bold yellow" if d.locked else "green")
        for e in d.errors:
            head.append("\n" + e, style="bold red")
        tree = Tree(head)
        for t in d.topics:
            n = len(t.partitions)
            branch = tree.add(Text(f"{safe(t.topic)}  ({n} partition{'s' if n != 1 else ''})",
                                   style="bold blue"))
            for p in t.partitions:
                branch.add(_partition_line(p))
        parts = d.partitions
        tree.add(Text(
            f"{len(d.topics)} topic(s), {len(parts)} partition(s), "
            f"{sum(p.segments for p in parts)} segment(s), "
            f"{_bytes(sum(p.bytes for p in parts))}, {sum(p.batches for p in parts)} "
            f"batches, {sum(p.records for p in parts)} records", style="dim"))
        con.print(tree, soft_wrap=False)
