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


def _offsets(p) -> str:
    """The partition's offsets, both ends inclusive (the log end offset is the next
    offset to be written: the last is one below it)."""
    if p.log_end_offset > p.log_start_offset:
        return f"offsets {p.log_start_offset}..{p.log_end_offset - 1}"
    return f"no records (log end offset {p.log_end_offset})"


def _partition_line(p, width: int = 10**6):
    """One partition: its figures packed onto lines of ``width`` cells, breaking only
    between figures (never inside a number or a name), then its KRaft / internal-topic
    lines and errors."""
    from rich.text import Text

    from .tables import pack_atoms

    bad = p.invalid_bytes or p.errors
    name = Text(safe(f"{p.topic}-{p.partition}"), style="bold red" if bad else "bold")
    if p.state:
        name.append(f" ({p.state})", style="yellow")
    atoms = [name] + [Text(x) for x in (
        f"{p.segments} seg", _bytes(p.bytes), f"{p.batches} batches",
        f"{p.records} records", _offsets(p))]
    atoms.append(Text(f"{_ts(p.first_timestamp)} .. {_ts(p.last_timestamp)}", style="cyan"))
    if p.codecs:
        atoms.append(Text(",".join(p.codecs), style="magenta"))
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
    atoms += [Text(x, style="dim") for x in extra]
    if p.invalid_bytes:
        atoms.append(Text(f"{p.invalid_bytes} invalid bytes", style="bold red"))
    t = Text(overflow="fold")
    for i, line in enumerate(pack_atoms(atoms, width)):
        if i:
            t.append("\n")
        t.append_text(line)
    for line in _kraft_lines(p) + _internal_lines(p):
        t.append("\n  " + safe(line), style="dim")
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
        from .tables import pack_atoms

        head = Text(safe(d.path), style="bold")
        meta = [f"cluster {safe(d.cluster_id or '-')}",
                f"node {d.node_id if d.node_id is not None else '-'}"]
        if d.directory_id:
            meta.append(f"directory {d.directory_id}")
        meta.append("clean shutdown" if d.clean_shutdown else "no clean-shutdown marker")
        atoms = [Text(m, style="dim") for m in meta]
        atoms.append(Text("LOCKED (in use by a broker)" if d.locked else "not locked",
                          style="bold yellow" if d.locked else "green"))
        for line in pack_atoms(atoms, con.width, indent=0):
            head.append("\n")
            head.append_text(line)
        for e in d.errors:
            head.append("\n" + e, style="bold red")
        tree = Tree(head)
        for t in d.topics:
            n = len(t.partitions)
            branch = tree.add(Text(f"{safe(t.topic)}  ({n} partition{'s' if n != 1 else ''})",
                                   style="bold blue"))
            for p in t.partitions:
                # a partition's node sits two tree levels deep (8 cells of guides)
                branch.add(_partition_line(p, con.width - 8))
        parts = d.partitions
        tree.add(Text(
            f"{len(d.topics)} topic(s), {len(parts)} partition(s), "
            f"{sum(p.segments for p in parts)} segment(s), "
            f"{_bytes(sum(p.bytes for p in parts))}, {sum(p.batches for p in parts)} "
            f"batches, {sum(p.records for p in parts)} records", style="dim"))
        con.print(tree, soft_wrap=False)
