"""The result objects of ``kafkalog recover``: the plan (actions) and the per-segment and
per-partition reports. The CLI renders exactly these (``to_dict`` is the JSON output)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..storage.files import parse_partition_dir_name

#: Action kinds, in the order a partition's plan applies them.
DELETE = "delete"        # quarantine (move) the file, then it is gone
RENAME = "rename"        # finish an interrupted swap: X.swap -> X
TRUNCATE = "truncate"    # quarantine the tail, then truncate the file
WRITE = "write"          # quarantine the old file (if any), then write tmp + fsync + rename


@dataclass
class Action:
    """One change to the directory.

    Attributes:
        kind: delete, rename, truncate or write.
        path: the file changed (for rename: the source, ``X.swap``).
        reason: why, in a few words.
        target: rename destination.
        size: truncate to this many bytes.
        data: bytes to write (not in the JSON; ``bytes`` gives its length).
    """

    kind: str
    path: str
    reason: str
    target: str | None = None
    size: int | None = None
    data: bytes | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        """The JSON object (docs/json.md, ``recover.json``; null for what does not
        apply)."""
        return {"action": self.kind, "file": self.path, "reason": self.reason,
                "target": self.target, "size": self.size,
                "bytes": None if self.data is None else len(self.data)}


@dataclass
class SegmentReport:
    """What recovery found (or would do) for one segment.

    Attributes:
        log: the ``.log`` path (after any swap completion).
        base_offset: the segment's base offset.
        scanned: whether the recovery scan ran on it (from the recovery point, ``--all``,
            a missing index, or a resumed run).
        size / valid_bytes / invalid_bytes: of the ``.log`` before recovery.
        batches: valid batches (scanned segments only).
        last_valid_offset: last offset of the last valid batch (None when none).
        index_entries_rebuilt / time_index_entries_rebuilt: entries written to a rebuilt
            ``.index`` / ``.timeindex`` (None when that file is kept).
        files_removed: files of this segment deleted (to quarantine).
        removed: the whole segment is removed (it followed a truncation, or a ``.swap``
            replaced it).
        replaced_by: the ``.swap`` file that replaces this segment (None: not replaced).
        lost_offsets: ``(first, last)`` offsets recovery drops from this segment (absolute,
            inclusive; read from the batch headers of the bytes dropped, so a range may
            hold gaps), None when it drops none it can name.
        lost_bytes: ``(position, size)`` of the ``.log`` bytes recovery drops (to the
            quarantine), None when none.
        dropped_regions: (``--salvage``) each corrupt region dropped: ``(position, size,
            reason, (first, last) offsets or None)``, positions in the original ``.log``;
            None without salvage.
        kept_batches: (``--salvage``) each batch kept: ``(position, size, first offset,
            last offset)``; None without salvage.
        error: why the scan stopped before the end ("" if it did not).
        notes: other findings, one line each.
    """

    log: str
    base_offset: int
    scanned: bool = False
    size: int = 0
    valid_bytes: int | None = None
    invalid_bytes: int = 0
    batches: int | None = None
    last_valid_offset: int | None = None
    index_entries_rebuilt: int | None = None
    time_index_entries_rebuilt: int | None = None
    files_removed: list[str] = field(default_factory=list)
    removed: bool = False
    replaced_by: str | None = None
    lost_offsets: tuple[int, int] | None = None
    lost_bytes: tuple[int, int] | None = None
    dropped_regions: list[tuple] | None = None
    kept_batches: list[tuple[int, int, int, int]] | None = None
    error: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The JSON object (docs/json.md, ``recover.json``)."""
        return {
            "file": self.log, "baseOffset": self.base_offset, "scanned": self.scanned,
            "size": self.size, "validBytes": self.valid_bytes,
            "invalidBytes": self.invalid_bytes, "batches": self.batches,
            "lastValidOffset": self.last_valid_offset,
            "indexEntriesRebuilt": self.index_entries_rebuilt,
            "timeIndexEntriesRebuilt": self.time_index_entries_rebuilt,
            "filesRemoved": list(self.files_removed), "removed": self.removed,
            "replacedBy": self.replaced_by,
            "lostOffsets": None if self.lost_offsets is None else
            {"first": self.lost_offsets[0], "last": self.lost_offsets[1]},
            "lostBytes": None if self.lost_bytes is None else
            {"position": self.lost_bytes[0], "bytes": self.lost_bytes[1]},
            "salvage": None if self.kept_batches is None else {
                "dropped": [{"position": p, "bytes": n, "reason": why,
                             "lostOffsets": None if lost is None else
                             {"first": lost[0], "last": lost[1]}}
                            for p, n, why, lost in self.dropped_regions],
                "kept": [{"position": p, "bytes": n, "firstOffset": a, "lastOffset": b}
                         for p, n, a, b in self.kept_batches]},
            "error": self.error or None, "notes": list(self.notes),
        }


@dataclass
class PartitionReport:
    """Recovery of one partition directory: its segments, the plan and what happened.

    Attributes:
        directory: the partition directory.
        log_dir: its log directory (the parent).
        clean_shutdown: the log dir has ``.kafka_cleanshutdown`` (the broker would skip
            recovery; kafkalog then scans only what ``--all`` or a missing index asks).
        recovery_point: from ``recovery-point-offset-checkpoint`` (None when absent).
        log_start_offset: from ``log-start-offset-checkpoint`` (None when absent).
        log_end_offset: after recovery.
        segments: per-segment reports.
        actions: the plan, in order.
        notes: partition-level findings.
        quarantine: the quarantine session directory (after ``--truncate``), or None.
        applied: the plan was carried out.
    """

    directory: str
    log_dir: str
    clean_shutdown: bool = False
    recovery_point: int | None = None
    log_start_offset: int | None = None
    log_end_offset: int | None = None
    segments: list[SegmentReport] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    quarantine: str | None = None
    applied: bool = False
    #: offsets to write into the log dir's checkpoints: name -> offset (internal)
    checkpoint_updates: dict[str, int] = field(default_factory=dict)
    #: bases whose indexes the plan rewrites (journalled so a rerun after a crash
    #: finishes them; internal)
    rebuild_bases: list[int] = field(default_factory=list)

    @property
    def work_needed(self) -> bool:
        return bool(self.actions or self.checkpoint_updates)

    def lost_offset_ranges(self) -> list[tuple[int, int]]:
        """The offsets recovery drops, per segment merged into ``(first, last)`` ranges
        (inclusive, ascending; a range may hold gaps the log already had)."""
        out: list[list[int]] = []
        lost = [s.lost_offsets for s in self.segments if s.lost_offsets]
        lost += [r[3] for s in self.segments for r in s.dropped_regions or () if r[3]]
        for first, last in sorted(lost):
            if out and first <= out[-1][1] + 1:
                out[-1][1] = max(out[-1][1], last)
            else:
                out.append([first, last])
        return [(a, b) for a, b in out]

    def to_dict(self) -> dict:
        """The JSON object (docs/json.md, ``recover.json``)."""
        tp = parse_partition_dir_name(os.path.basename(self.directory))
        return {
            "partitionDir": self.directory, "logDir": self.log_dir,
            "topic": None if tp is None else tp.topic,
            "partition": None if tp is None else tp.partition,
            "cleanShutdown": self.clean_shutdown, "recoveryPoint": self.recovery_point,
            "logStartOffset": self.log_start_offset, "logEndOffset": self.log_end_offset,
            "workNeeded": self.work_needed, "applied": self.applied,
            "quarantine": self.quarantine,
            "checkpointUpdates": dict(self.checkpoint_updates),
            "lostOffsetRanges": [{"first": a, "last": b} for a, b in self.lost_offset_ranges()],
            "segments": [s.to_dict() for s in self.segments],
            "actions": [a.to_dict() for a in self.actions],
            "notes": list(self.notes),
        }


@dataclass
class RecoveryResult:
    """The result of :func:`kafkalog_cli.recovery.recover` for every partition.

    ``dry_run``: nothing was changed. ``work_needed``: some partition needs (or needed)
    changes. ``ok``: nothing needed doing, or recovery completed (false: a dry run found
    work, a finding).
    """

    dry_run: bool
    partitions: list[PartitionReport] = field(default_factory=list)

    @property
    def work_needed(self) -> bool:
        return any(p.work_needed for p in self.partitions)

    @property
    def ok(self) -> bool:
        return not (self.dry_run and self.work_needed)

    def summary(self) -> dict:
        """Counts over every partition (docs/json.md's ``recover`` summary):
        ``segmentsRemoved`` / ``removedBytes`` count every segment recovery removes,
        those a ``.swap`` replaces (``segmentsReplaced``) included; ``lostOffsetRanges``
        the partitions' merged ranges of dropped offsets."""
        segs = [s for p in self.partitions for s in p.segments]
        return {
            "partitions": len(self.partitions),
            "partitionsWithWork": sum(1 for p in self.partitions if p.work_needed),
            "segments": len(segs),
            "segmentsScanned": sum(1 for s in segs if s.scanned),
            "segmentsTruncated": sum(1 for s in segs if s.invalid_bytes and not s.removed
                                     and s.kept_batches is None),
            "segmentsSalvaged": sum(1 for s in segs if s.kept_batches is not None),
            "segmentsRemoved": sum(1 for s in segs if s.removed),
            "segmentsReplaced": sum(1 for s in segs if s.replaced_by),
            "invalidBytes": sum(s.invalid_bytes for s in segs if not s.removed),
            "removedBytes": sum(s.size for s in segs if s.removed),
            "lostOffsetRanges": sum(len(p.lost_offset_ranges()) for p in self.partitions),
            "actions": sum(len(p.actions) for p in self.partitions),
        }

    def to_dict(self) -> dict:
        """The JSON object (docs/json.md, ``recover.json``)."""
        return {"dryRun": self.dry_run, "workNeeded": self.work_needed, "ok": self.ok,
                "summary": self.summary(),
                "partitions": [p.to_dict() for p in self.partitions]}
