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

One pass: the entries of both indexes are matched against the batches as the log is
scanned (a broker's indexes are in offset and position order, as its log is), so memory
is a batch and the index files, whatever the number of batches. An entry out of order
(a position or an offset going back) is reported as such and not checked against the log;
in a log whose batch offsets go back (a corrupt log: ``recover`` cuts it there), a
time-index offset is looked for in the first batch whose last offset reaches it.

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

from dataclasses import dataclass, field
from pathlib import Path

from ..constants import INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX
from ..errors import CorruptIndexError, KafkalogError
from ..format.records import FileRecords
from ..storage.offset_index import OffsetIndex
from ..storage.segment import LogSegment, resolve_segments
from ..storage.time_index import TimeIndex
from ..storage.txn_index import TransactionIndex

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


def verify_segment(segment: LogSegment, *, check_offset_index: bool = True,
                   check_time_index: bool = True,
                   check_txn_index: bool = True) -> SegmentVerdict:
    """Verify one segment's indexes against its log (and the sanity of its ``.txnindex``).
    Never raises for bad index or log bytes: they become findings. Raises
    :class:`~kafkalog_cli.errors.UnreadableError` when a file cannot be read.

    One pass over the log: the index entries are matched against the batches as they
    are scanned (both are in offset and position order in a broker's files), so memory
    is a batch and an index file, whatever the number of batches. An entry out of order
    is reported as such and not checked against the log (the walk does not go back)."""
    v = SegmentVerdict(log=str(segment.log_path), base_offset=segment.base_offset)
    has_log = segment.log_path.exists()
    if not has_log:
        v.warnings.append(Finding(str(segment.log_path), "missing-log",
                                  "no .log for this index; only its sanity was checked"))
    size = len(segment.view) if has_log else None
    offsets = times = None
    if check_offset_index:
        idx, n = _open_index(OffsetIndex, segment.index_path, segment.base_offset, v, "Index")
        if idx is not None:
            v.index_entries = n
            _sanity(idx, str(segment.index_path), v)
            offsets = _OffsetEntries(idx, n, segment, size)
    if check_time_index:
        idx, n = _open_index(TimeIndex, segment.time_index_path, segment.base_offset, v,
                             "Time index")
        if idx is not None:
            v.time_index_entries = n
            _sanity(idx, str(segment.time_index_path), v)
            times = _TimeEntries(idx, n, segment, size)
    log_findings: list[Finding] = []
    running = -1  # the largest batch max timestamp so far
    if has_log:
        fr = FileRecords(segment.view, file=segment.log_path)
        for b in fr.batches():
            v.batches += 1
            ts = b.max_timestamp  # a legacy entry's timestamp
            if ts > running:
                running = ts
            if offsets is not None:
                offsets.batch(b)
            if times is not None:
                times.batch(b, running)
        if fr.invalid_bytes:
            why = f" ({fr.stop_error.message})" if fr.stop_error else ""
            if fr.valid_end == 0:
                log_findings.append(Finding(
                    str(segment.log_path), NO_WHOLE_BATCH,
                    f"no whole record batch: {fr.invalid_bytes} bytes are truncated or not "
                    f"a Kafka log{why}", position=0, bytes=fr.invalid_bytes))
            else:
                log_findings.append(Finding(
                    str(segment.log_path), INVALID_BYTES,
                    f"Found {fr.invalid_bytes} invalid bytes at the end of "
                    f"{segment.log_path.name}, from byte {fr.valid_end}{why} (a broker "
                    "truncates them at recovery)", position=fr.valid_end,
                    bytes=fr.invalid_bytes))
    # findings in the order a reader expects them: the log's, then each index's by entry
    problems = log_findings + v.problems
    if offsets is not None:
        problems += offsets.finish()
        v.layouts = sorted(offsets.layouts)
    if times is not None:
        problems += times.finish()
        if has_log and v.batches and running >= 0 and times.last_timestamp != running:
            v.warnings.append(Finding(
                str(segment.time_index_path), "no-final-entry",
                f"the time index has no entry for the segment's largest timestamp {running} "
                "(normal for an active segment or after an unclean shutdown)"))
    v.problems = problems
    if check_txn_index:
        _verify_txn_index(segment, v)
    return v


def _first_offset(b) -> int | None:
    """A batch's first offset; None when a legacy wrapper's records do not decode (its
    first offset is its first inner message's)."""
    if b.magic >= 2 or not b.compression:
        return b.base_offset
    try:
        return b.base_offset
    except KafkalogError:
        return None


class _IndexEntries:
    """The entries of one index file (AbstractIndex's entries), walked in order against
    a segment's batches as they are scanned: :meth:`_advance` moves to the next entry
    the log can check, reporting on the way what the entries alone show (an offset
    below the base offset, an entry out of order). Subclasses read an entry
    (:meth:`_read`), name its order rules (:meth:`_check_order`) and say whether the log
    can check it (:meth:`_take`, which sets ``cur``). Holds one pending entry."""

    def __init__(self, idx, n: int, segment: LogSegment, size: int | None, file: str):
        self.idx, self.n, self.base, self.size = idx, n, segment.base_offset, size
        self.file = file
        self.findings: list[Finding] = []
        self.i = -1
        self.prev: tuple[int, int] | None = None
        self.cur: tuple | None = None

    def _problem(self, kind: str, i: int, message: str) -> None:
        self.findings.append(Finding(self.file, kind, f"entry {i}: {message}", i))

    def _read(self, i: int) -> tuple[int, tuple[int, int]]:
        """Entry ``i``: its absolute offset and the pair the order rules compare."""
        raise NotImplementedError

    def _check_order(self, i: int, entry: tuple[int, int], prev: tuple[int, int]) -> None:
        raise NotImplementedError

    def _take(self, i: int, entry: tuple[int, int]) -> bool:
        raise NotImplementedError

    def _advance(self) -> None:
        """Move to the next entry to check against the log (None at the end)."""
        self.cur = None
        while True:
            self.i += 1
            i = self.i
            if i >= self.n:
                return
            off, entry = self._read(i)
            if off < self.base:
                self._problem("below-base", i, f"offset {off} is below the base offset "
                              f"{self.base}")
                continue
            if self.prev is not None:
                self._check_order(i, entry, self.prev)
            self.prev = entry
            if self.size is not None and self._take(i, entry):
                return


class _OffsetEntries(_IndexEntries):
    """The ``.index`` entries of a segment: each position must be the start of a batch,
    and its offset one the broker indexes there (a layout of the module docstring)."""

    def __init__(self, idx: OffsetIndex, n: int, segment: LogSegment, size: int | None):
        super().__init__(idx, n, segment, size, str(segment.index_path))
        self.layouts: set[str] = set()
        self.last_position = -1
        # cur: entry, offset, position, next entry's position
        self.seek: tuple | None = None  # an entry whose offset is a later batch's
        self._advance()

    def _entry(self, i: int) -> tuple[int, int]:
        rel, pos = self.idx.raw_entry(i)
        return self.base + rel, pos

    def _read(self, i: int) -> tuple[int, tuple[int, int]]:
        entry = self._entry(i)
        return entry[0], entry

    def _check_order(self, i: int, entry: tuple[int, int], prev: tuple[int, int]) -> None:
        (off, pos), (prev_off, prev_pos) = entry, prev
        if off <= prev_off:
            self._problem("offset-order", i, f"offset {off} does not follow {prev_off}")
        if pos <= prev_pos:
            self._problem("position-order", i, f"position {pos} does not follow {prev_pos}")

    def _take(self, i: int, entry: tuple[int, int]) -> bool:
        off, pos = entry
        if pos >= self.size:
            self._problem("past-end", i, f"position {pos} is past the end of the log "
                          f"({self.size} bytes)")
            return False
        if pos <= self.last_position:
            return False  # out of order (reported above): the walk does not go back
        nxt = self._entry(i + 1)[1] if i + 1 < self.n else self.size + 1
        self.last_position = pos
        self.cur = (i, off, pos, nxt)
        return True

    def _mismatch(self, i: int, off: int, pos: int, first, last: int) -> None:
        self._problem("offset-mismatch", i, f"offset {off} at position {pos} is not what a "
                      f"broker indexes there (batch offsets {first}..{last})")

    def batch(self, b) -> None:
        while True:
            if self.seek is not None:
                # append-last-offset: a batch before the next entry's position whose last
                # offset is the entry's (lasts increase: the first at or above it decides)
                i, off, pos, nxt, first, last = self.seek
                if b.position < nxt:
                    if b.last_offset < off:
                        return
                    if b.last_offset == off:
                        self.layouts.add("append-last-offset")
                    else:
                        self._mismatch(i, off, pos, first, last)
                else:
                    self._mismatch(i, off, pos, first, last)
                self.seek = None
                self._advance()
                continue
            cur = self.cur
            if cur is None:
                return
            i, off, pos, nxt = cur
            if b.position < pos:
                return
            if b.position > pos:
                self._problem("not-batch-start", i, f"position {pos} is not the start of a "
                              "batch")
                self._advance()
                continue
            last = b.last_offset
            first = None
            if off == last:
                self.layouts.add("batch-last-offset")
            elif off == (first := _first_offset(b)):
                self.layouts.add("first-offset")
            elif off > last:
                self.seek = (i, off, pos, nxt, first, last)
                return
            else:
                self._mismatch(i, off, pos, first, last)
            self._advance()

    def finish(self) -> list[Finding]:
        """The findings, by entry, once every batch has been seen."""
        if self.seek is not None:
            i, off, pos, _, first, last = self.seek
            self._mismatch(i, off, pos, first, last)
            self.seek = None
            self._advance()
        while self.cur is not None:
            i, _, pos, _ = self.cur
            self._problem("not-batch-start", i, f"position {pos} is not the start of a batch")
            self._advance()
        self.findings.sort(key=lambda f: f.entry)
        return self.findings


class _TimeEntries(_IndexEntries):
    """The ``.timeindex`` entries of a segment: each offset must lie in a batch whose max
    timestamp is the entry's and the largest so far."""

    def __init__(self, idx: TimeIndex, n: int, segment: LogSegment, size: int | None):
        super().__init__(idx, n, segment, size, str(segment.time_index_path))
        self.last_offset = None  # offset of the last entry checked against the log
        # cur: entry, timestamp, offset
        self.last_timestamp = self.idx.entry(n - 1).timestamp if n else None
        self._advance()

    def _read(self, i: int) -> tuple[int, tuple[int, int]]:
        ts, rel = self.idx.raw_entry(i)
        return self.base + rel, (ts, self.base + rel)

    def _check_order(self, i: int, entry: tuple[int, int], prev: tuple[int, int]) -> None:
        (ts, off), (prev_ts, prev_off) = entry, prev
        if ts <= prev_ts:
            self._problem("timestamp-order", i, f"timestamp {ts} does not follow {prev_ts}")
        if off < prev_off:
            self._problem("offset-order", i, f"offset {off} goes back from {prev_off}")

    def _take(self, i: int, entry: tuple[int, int]) -> bool:
        ts, off = entry
        if self.last_offset is not None and off < self.last_offset:
            return False  # goes back (reported above): the walk does not go back
        self.last_offset = off
        self.cur = (i, ts, off)
        return True

    def batch(self, b, running: int) -> None:
        """``running``: the largest max timestamp up to and including ``b``."""
        while self.cur is not None:
            i, ts, off = self.cur
            last = b.last_offset
            if off > last:
                return
            first = _first_offset(b)
            if first is not None and first > off:
                self._problem("offset-not-found", i, f"indexed offset {off} is not found in "
                              "the log")
            elif b.max_timestamp != ts or running != ts:
                self._problem("timestamp-mismatch", i, f"timestamp {ts} at offset {off}, but "
                              f"the log's batch there has max timestamp {b.max_timestamp} and "
                              f"the largest timestamp up to it is {running}")
            self._advance()

    def finish(self) -> list[Finding]:
        while self.cur is not None:
            i, _, off = self.cur
            self._problem("offset-not-found", i, f"indexed offset {off} is not found in the "
                          "log")
            self._advance()
        self.findings.sort(key=lambda f: f.entry)
        return self.findings


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
