"""``verify-index``: check each segment's ``.index`` and ``.timeindex`` against its ``.log``.

Two kinds of checks:

* sanity, as the indexes' ``sanityCheck`` (what ``kafka-dump-log.sh
  --index-sanity-check`` runs) plus the entry order the lookups rely on: the length is
  a whole number of entries; offsets are >= the base offset and strictly increasing;
  positions strictly increasing and inside the log; timestamps strictly increasing (the
  broker only appends a larger one). A zero-filled tail (the preallocated file of an
  active segment that was not trimmed, left by an unclean shutdown) passes
  ``OffsetIndex.sanityCheck`` and is accepted in a ``.index``; in a ``.timeindex`` its
  last slot reads as timestamp 0, which fails ``TimeIndex.sanityCheck`` and is a
  problem: a broker that trusted the file (the segment below the recovery point) would
  take 0 as the segment's largest timestamp and delete it by retention.
* consistency with the log: every offset-index position is the start of a batch, and its
  offset is one the broker could have indexed there; every time-index offset lies in a
  batch of the log whose max timestamp is the entry's and is the largest seen so far.

Kafka versions differ in what they index, and all of these layouts are accepted:

* ``batch-last-offset``: the batch's last offset (Kafka 3.x recovery and appends after
  KAFKA-806, every append of one batch);
* ``append-last-offset``: the last offset of a multi-batch append starting at that batch
  (follower and log-cleaner appends before KAFKA-806), so a later batch's last offset;
* ``first-offset``: the first offset of the message set (Kafka 0.10 and earlier);
* time index offsets: shallow (the batch's last offset) or deep (the record holding the
  max timestamp, Kafka 0.10.1 to 3.7).

A missing index file is reported as a warning: the broker rebuilds it at start-up.

Bytes after the last whole batch of a ``.log`` (a partial batch, a zero-filled tail,
garbage, a batch whose offsets overflow int64) are a problem (``invalid-bytes``, with
their ``position`` and length in ``bytes``): the broker's recovery truncates them, so no
consumer ever sees what they hold. A non-empty ``.log`` holding no whole batch at all (a
file that is not a Kafka log) is ``no-whole-batch``: not readable as a log, as
dump-segment says too (the CLI exits 3).

When a whole segment is checked, its ``.txnindex`` (if any) gets the broker's
``TransactionIndex.sanityCheck``: an aborted transaction whose last offset is below the
segment's base offset is a problem (``txnindex-sanity``); the broker then recovers the
segment even after a clean shutdown.
"""

from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass, field
from pathlib import Path

from ..constants import INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX
from ..errors import CorruptIndexError, KafkalogError
from ..format.records import FileRecords, batch_at
from ..storage.offset_index import OffsetIndex
from ..storage.segment import LogSegment
from ..storage.time_index import TimeIndex
from ..storage.txn_index import TransactionIndex
from .paths import resolve_segments

#: Finding kinds about the ``.log`` itself.
INVALID_BYTES = "invalid-bytes"
NO_WHOLE_BATCH = "no-whole-batch"


@dataclass
class Finding:
    """One problem or warning: ``file``, ``kind`` (a short code), ``message``, the
    entry number (0-based) when it concerns one entry, and the byte ``position`` and
    length (``bytes``) when it concerns a range of the file (invalid bytes)."""

    file: str
    kind: str
    message: str
    entry: int | None = None
    position: int | None = None
    bytes: int | None = None

    def to_dict(self) -> dict:
        return {"file": self.file, "kind": self.kind, "message": self.message,
                "entry": self.entry, "position": self.position, "bytes": self.bytes}


@dataclass
class SegmentVerdict:
    """The verdict for one segment.

    Attributes:
        log: path of the ``.log``.
        base_offset: the segment's base offset.
        batches: whole batches in the log.
        index_entries / time_index_entries: entries checked (None when the file is missing).
        preallocated_slots: zero-filled slots accepted at the end of the two indexes.
        layouts: the offset-index layouts seen (see the module docstring).
        problems: findings that make the index disagree with the log, or the log
            unsound (invalid bytes after its last whole batch).
        warnings: findings that do not (missing index, a time index without its final
            entry).
    """

    log: str
    base_offset: int
    batches: int = 0
    index_entries: int | None = None
    time_index_entries: int | None = None
    preallocated_slots: int = 0
    layouts: list[str] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        """The JSON object (docs/json.md, ``verify-index.json``)."""
        return {"file": self.log, "baseOffset": self.base_offset, "batches": self.batches,
                "indexEntries": self.index_entries,
                "timeIndexEntries": self.time_index_entries,
                "preallocatedSlots": self.preallocated_slots, "layouts": self.layouts,
                "problems": [f.to_dict() for f in self.problems],
                "warnings": [f.to_dict() for f in self.warnings], "ok": self.ok}


@dataclass
class VerifyResult:
    """Verdicts for every segment checked; ``ok`` when no segment has a problem."""

    segments: list[SegmentVerdict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.segments)

    @property
    def unreadable(self) -> list[str]:
        """The ``.log`` files holding no whole batch at all (not Kafka logs)."""
        return [p.file for s in self.segments for p in s.problems if p.kind == NO_WHOLE_BATCH]

    @property
    def problem_count(self) -> int:
        return sum(len(s.problems) for s in self.segments)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "segments": [s.to_dict() for s in self.segments]}


class _LogMap:
    """Batch boundaries of a .log as compact arrays (positions, first/last offsets, max
    timestamps, running max)."""

    def __init__(self, segment: LogSegment):
        self.view = segment.view
        self.positions = array("q")
        self.first = array("q")   # -1 = unknown (legacy compressed: decompress on demand)
        self.last = array("q")
        self.max_ts = array("q")
        fr = FileRecords(self.view, file=segment.log_path)
        for b in fr.batches():
            self.positions.append(b.position)
            self.last.append(b.last_offset)
            self.max_ts.append(b.max_timestamp)
            if b.magic >= 2 or not b.compression:
                self.first.append(b.base_offset)
            else:
                self.first.append(-1)
        self.valid_end = fr.valid_end
        self.invalid_bytes = fr.invalid_bytes
        self.stop_error = fr.stop_error
        self.size = len(self.view)
        self.running_max = array("q")
        m = -1
        for t in self.max_ts:
            if t > m:
                m = t
            self.running_max.append(m)
        self._slot_of_position = None

    def slot_at(self, position: int) -> int:
        """The batch starting exactly at ``position``, or -1."""
        i = bisect.bisect_left(self.positions, position)
        if i < len(self.positions) and self.positions[i] == position:
            return i
        return -1

    def first_offset(self, slot: int) -> int:
        f = self.first[slot]
        if f == -1:
            f = batch_at(self.view, self.positions[slot]).base_offset
            self.first[slot] = f
        return f

    def slot_containing(self, offset: int) -> int:
        """The batch whose offsets cover ``offset``, or -1."""
        i = bisect.bisect_left(self.last, offset)
        if i < len(self.last) and self.first_offset(i) <= offset:
            return i
        return -1


def verify_segment(segment: LogSegment, *, check_offset_index: bool = True,
                   check_time_index: bool = True,
                   check_txn_index: bool = True) -> SegmentVerdict:
    """Verify one segment's indexes against its log (and the sanity of its ``.txnindex``).
    Never raises for bad index or log bytes: they become findings. Raises
    :class:`~kafkalog_cli.errors.UnreadableError` when a file cannot be read."""
    v = SegmentVerdict(log=str(segment.log_path), base_offset=segment.base_offset)
    if not segment.log_path.exists():
        v.warnings.append(Finding(str(segment.log_path), "missing-log",
                                  "no .log for this index; only its sanity was checked"))
        log = None
    else:
        log = _LogMap(segment)
        v.batches = len(log.positions)
        if log.invalid_bytes:
            why = f" ({log.stop_error.message})" if log.stop_error else ""
            if log.valid_end == 0:
                v.problems.append(Finding(
                    str(segment.log_path), NO_WHOLE_BATCH,
                    f"no whole record batch: {log.invalid_bytes} bytes are truncated or not "
                    f"a Kafka log{why}", position=0, bytes=log.invalid_bytes))
            else:
                v.problems.append(Finding(
                    str(segment.log_path), INVALID_BYTES,
                    f"Found {log.invalid_bytes} invalid bytes at the end of "
                    f"{segment.log_path.name}, from byte {log.valid_end}{why} (a broker "
                    "truncates them at recovery)", position=log.valid_end,
                    bytes=log.invalid_bytes))
    if check_offset_index:
        _verify_offset_index(segment, log, v)
    if check_time_index:
        _verify_time_index(segment, log, v)
    if check_txn_index:
        _verify_txn_index(segment, v)
    return v


def _verify_txn_index(segment: LogSegment, v: SegmentVerdict) -> None:
    """TransactionIndex.sanityCheck, as LogLoader.loadSegmentFiles runs it. A missing
    ``.txnindex`` is normal (segments without aborted transactions have none)."""
    path = segment.txn_index_path
    if not path.exists():
        return
    try:
        TransactionIndex.load(path, segment.base_offset).sanity_check()
    except CorruptIndexError as e:
        v.problems.append(Finding(str(path), "txnindex-sanity", e.message))
    except KafkalogError as e:
        v.problems.append(Finding(str(path), "unreadable", e.message))


def _load(cls, path: Path, base: int, v: SegmentVerdict):
    if not path.exists():
        v.warnings.append(Finding(str(path), "missing-index",
                                  f"{path.name} is missing (a broker rebuilds it at start-up)"))
        return None
    try:
        return cls.load(path, base)
    except KafkalogError as e:
        v.problems.append(Finding(str(path), "unreadable", e.message))
        return None


def _open_index(cls, path: Path, base: int, v: SegmentVerdict, label: str):
    """Load an index for checking: report a length that is not a whole number of entries,
    count the zero-filled preallocated tail as accepted slots. Returns ``(index, entries
    before that tail)``, or ``(None, None)`` when the file is missing or unreadable."""
    idx = _load(cls, path, base, v)
    if idx is None:
        return None, None
    if idx.file_length % idx.entry_size:
        v.problems.append(Finding(str(path), "length", f"{label} file {path.name} is corrupt, "
                                  f"found {idx.file_length} bytes which is neither positive nor "
                                  f"a multiple of {idx.entry_size}"))
    v.preallocated_slots += idx.zero_tail
    return idx, idx.entries - idx.zero_tail


def _sanity(idx, f: str, v: SegmentVerdict) -> None:
    """The index's own ``sanityCheck`` on every slot, the zero tail included (as Kafka
    counts them); a length that is not whole entries is reported by :func:`_open_index`."""
    try:
        idx.sanity_check()
    except CorruptIndexError as e:
        if idx.file_length % idx.entry_size == 0:
            v.problems.append(Finding(f, "sanity", e.message))


def _verify_offset_index(segment: LogSegment, log: _LogMap | None, v: SegmentVerdict) -> None:
    path = segment.index_path
    idx, n = _open_index(OffsetIndex, path, segment.base_offset, v, "Index")
    if idx is None:
        return
    f = str(path)
    v.index_entries = n
    _sanity(idx, f, v)
    entries = idx.entries_list()[:n]
    layouts = set()
    prev = None
    for i, e in enumerate(entries):
        if e.offset < segment.base_offset:
            v.problems.append(Finding(f, "below-base", f"entry {i}: offset {e.offset} is below "
                                      f"the base offset {segment.base_offset}", i))
            continue
        if prev is not None:
            if e.offset <= prev.offset:
                v.problems.append(Finding(f, "offset-order", f"entry {i}: offset {e.offset} "
                                          f"does not follow {prev.offset}", i))
            if e.position <= prev.position:
                v.problems.append(Finding(f, "position-order", f"entry {i}: position "
                                          f"{e.position} does not follow {prev.position}", i))
        prev = e
        if log is None:
            continue
        if e.position >= log.size:
            v.problems.append(Finding(f, "past-end", f"entry {i}: position {e.position} is "
                                      f"past the end of the log ({log.size} bytes)", i))
            continue
        slot = log.slot_at(e.position)
        if slot < 0:
            v.problems.append(Finding(f, "not-batch-start", f"entry {i}: position {e.position} "
                                      "is not the start of a batch", i))
            continue
        layout = _offset_layout(log, slot, e.offset, entries[i + 1].position
                                if i + 1 < n else log.size + 1)
        if layout is None:
            v.problems.append(Finding(
                f, "offset-mismatch",
                f"entry {i}: offset {e.offset} at position {e.position} is not what a broker "
                f"indexes there (batch offsets {log.first_offset(slot)}..{log.last[slot]})", i))
        else:
            layouts.add(layout)
    v.layouts = sorted(layouts)


def _offset_layout(log: _LogMap, slot: int, offset: int, next_position: int) -> str | None:
    if offset == log.last[slot]:
        return "batch-last-offset"
    if offset == log.first_offset(slot):
        return "first-offset"
    if offset > log.last[slot]:
        j = bisect.bisect_left(log.last, offset)
        if j < len(log.last) and log.last[j] == offset and log.positions[j] < next_position:
            return "append-last-offset"
    return None


def _verify_time_index(segment: LogSegment, log: _LogMap | None, v: SegmentVerdict) -> None:
    path = segment.time_index_path
    idx, n = _open_index(TimeIndex, path, segment.base_offset, v, "Time index")
    if idx is None:
        return
    f = str(path)
    v.time_index_entries = n
    _sanity(idx, f, v)
    entries = idx.entries_list()[:n]
    prev = None
    for i, e in enumerate(entries):
        if e.offset < segment.base_offset:
            v.problems.append(Finding(f, "below-base", f"entry {i}: offset {e.offset} is below "
                                      f"the base offset {segment.base_offset}", i))
            continue
        if prev is not None:
            if e.timestamp <= prev.timestamp:
                v.problems.append(Finding(f, "timestamp-order", f"entry {i}: timestamp "
                                          f"{e.timestamp} does not follow {prev.timestamp}", i))
            if e.offset < prev.offset:
                v.problems.append(Finding(f, "offset-order", f"entry {i}: offset {e.offset} "
                                          f"goes back from {prev.offset}", i))
        prev = e
        if log is None:
            continue
        slot = log.slot_containing(e.offset)
        if slot < 0:
            v.problems.append(Finding(f, "offset-not-found", f"entry {i}: indexed offset "
                                      f"{e.offset} is not found in the log", i))
            continue
        if log.max_ts[slot] != e.timestamp or log.running_max[slot] != e.timestamp:
            v.problems.append(Finding(
                f, "timestamp-mismatch",
                f"entry {i}: timestamp {e.timestamp} at offset {e.offset}, but the log's "
                f"batch there has max timestamp {log.max_ts[slot]} and the largest timestamp "
                f"up to it is {log.running_max[slot]}", i))
    if log is not None and log.running_max and log.running_max[-1] >= 0:
        final = log.running_max[-1]
        if not entries or entries[-1].timestamp != final:
            v.warnings.append(Finding(
                f, "no-final-entry",
                f"the time index has no entry for the segment's largest timestamp {final} "
                "(normal for an active segment or after an unclean shutdown)"))


def verify_index(paths, *, check_offset_index: bool = True,
                 check_time_index: bool = True, progress=None) -> VerifyResult:
    """Verify every segment under ``paths`` (index files, segments, partition directories
    or log directories). ``progress(done_bytes, total_bytes)``, if given, is called after
    each segment (bytes of ``.log`` files).

    Raises:
        NotAKafkaFileError / UnreadableError: a path is not a Kafka file or directory, or
            cannot be read.
    """
    result = VerifyResult()
    segments = list(resolve_segments(paths))
    sizes = [_log_size(seg) for seg, _ in segments]
    total, done = sum(sizes), 0
    for (seg, only), size in zip(segments, sizes, strict=True):
        oi = check_offset_index and (only is None or only == INDEX_FILE_SUFFIX)
        ti = check_time_index and (only is None or only == TIME_INDEX_FILE_SUFFIX)
        try:
            result.segments.append(verify_segment(seg, check_offset_index=oi,
                                                  check_time_index=ti,
                                                  check_txn_index=only is None))
        finally:
            seg.close()
        done += size
        if progress is not None:
            progress(done, total)
    return result


def _log_size(seg: LogSegment) -> int:
    try:
        return seg.log_path.stat().st_size
    except OSError:
        return 0
