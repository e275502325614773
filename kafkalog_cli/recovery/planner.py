"""The recovery plan of one partition directory: a pure function of what is on disk.

:func:`plan_partition` reads the directory (never writes) and returns a
:class:`~.model.PartitionReport` whose ``actions`` the executor applies in order. The
order is chosen so that a kill at any point leaves a directory whose fresh plan finishes
the job (see :mod:`.executor`).

The steps follow ``LogLoader.load``:

1. ``removeTempFilesAndCollectSwapFiles``: ``*.deleted`` (not ``.checkpoint.deleted``)
   removed; ``.swap`` files at or above the smallest ``.cleaned`` offset removed (an
   unfinished split); ``.cleaned`` files removed.
2. Interrupted swaps completed: every non-swap file whose offset lies in
   ``[smallest .log.swap base, largest .log.swap next offset)`` removed, then the
   ``.swap`` suffix stripped (the ``.log`` first).
3. ``loadSegmentFiles``: index files (``.index``, ``.timeindex``, ``.txnindex``) without a
   ``.log`` removed; a segment without its ``.index`` is recovered, and so is one whose
   ``.txnindex`` fails ``TransactionIndex.sanityCheck`` (its ``.txnindex`` is rebuilt).
   kafkalog also recovers a segment without its ``.timeindex`` (the broker creates an
   empty one instead: ``LogSegment.sanityCheck(timeIndexFileNewlyCreated)``).
4. ``recoverLog``: unless ``.kafka_cleanshutdown`` is present, every segment from the one
   holding the recovery point is recovered
   (:func:`~kafkalog_cli.storage.recovery_scan.scan_log`); at the first one
   truncated, every later segment is removed. ``--all`` recovers every segment.
5. Derived files: the leader-epoch cache, the producer snapshot at the log end offset
   (stale ones above it removed), ``.txnindex`` of recovered segments; the log dir's
   recovery point set to the log end offset.

kafkalog's rule for index files (so that a second run is a no-op and valid indexes in
other layouts, e.g. those written before KAFKA-806, are kept): a recovered segment's
``.index``/``.timeindex`` is rewritten only when it is missing, the ``.log`` was
truncated, a previous interrupted run meant to rewrite it, or it differs from the rebuilt
bytes *and* fails ``verify-index``. Segments not recovered keep their indexes unless a
cheap sanity check (length, order, positions inside the log) fails, in which case the
segment is recovered (the broker before KAFKA-7283 did the same).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..constants import LEADER_EPOCH_CHECKPOINT, MAGIC_V2, PARTITION_METADATA_FILE
from ..errors import CorruptIndexError, KafkalogError, UnreadableError, UnsafePathError
from ..format.records import batch_at, v2_batch_at
from ..schema.txn_index import parse_txn_index
from ..storage.checkpoints import format_leader_epoch_checkpoint, read_leader_epoch_checkpoint
from ..storage.dir_files import format_partition_metadata, read_partition_metadata
from ..storage.fileio import not_regular
from ..storage.files import (
    filename_prefix_from_offset,
    leading_offset,
    offset_prefix,
    parse_partition_dir_name,
)
from ..storage.index import read_nonzero_prefix
from ..storage.leader_epoch import LeaderEpochCache
from ..storage.location import read_bytes_if_exists
from ..storage.log_manager import topic_ids_on_disk
from ..storage.offset_index import OffsetIndex
from ..storage.producer_state import ProducerStateManager, read_snapshot
from ..storage.recovery_scan import ScanResult, next_offset, scan_log, walk_log
from ..storage.segment import open_view, release_view
from ..storage.time_index import TimeIndex
from ..storage.txn_index import MAX_TXN_INDEX_BYTES, TransactionIndex
from .model import DELETE, RENAME, TRUNCATE, WRITE, Action, PartitionReport, SegmentReport
from .salvage import offsets_in, salvage_segment, unsafe_regions

_INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")


def file_offset(name: str) -> int | None:
    """LogFileUtils.offsetFromFile: the number before the first '.', or None (see
    :func:`~kafkalog_cli.storage.files.leading_offset`)."""
    return leading_offset(name)


def _is_segment_file(name: str, suffix: str) -> bool:
    return offset_prefix(name, suffix) is not None


_SEGMENT_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot")


def check_partition_dir(directory) -> None:
    """Refuse a partition directory where a name recovery reads or (re)writes is a
    directory (or another non-file, or a symbolic link to one, or a dangling link):
    recovery would fail half-way through applying its plan. Cheap (one directory
    listing); run on every partition before any change.

    Raises:
        UnreadableError: naming the first such entry.
    """
    try:
        entries = list(os.scandir(directory))
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=directory) from e
    for entry in entries:
        _check_entry(entry)


def _check_entry(entry: os.DirEntry) -> None:
    if not _recovery_name(entry.name) or entry.is_file():
        return
    try:
        mode = os.stat(entry.path).st_mode   # through a link, as the broker reads it
    except OSError:
        raise UnreadableError("symbolic link to nothing (dangling)", file=entry.path) from None
    raise not_regular(entry.path, mode)   # a directory, a FIFO, a device, a socket


def _recovery_name(name: str) -> bool:
    """A name recovery reads or (re)writes. (Like the broker, recovery ignores other
    directory entries that are not files, e.g. a directory named ``*.deleted``.)"""
    return name in (LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA_FILE) or \
        any(_is_segment_file(name, suf) for suf in _SEGMENT_SUFFIXES)


#: suffix of a temp file a tmp + rename write leaves when it is interrupted (kafkalog's,
#: and the broker's CheckpointFile / PartitionMetadataFile), and of undo's restore copies
_TMP_SUFFIXES = (".tmp", ".kafkalog-undo.tmp")


def _stale_tmp(name: str) -> bool:
    """``<name>.tmp`` (or ``<name>.kafkalog-undo.tmp``) of a file of the partition
    directory: a segment file (``.log``, indexes, ``.snapshot``, with a ``.swap`` /
    ``.cleaned`` / ``.deleted`` suffix or not), ``leader-epoch-checkpoint`` or
    ``partition.metadata``. Other ``*.tmp`` files are not kafkalog's or Kafka's."""
    for suf in reversed(_TMP_SUFFIXES):
        if name.endswith(suf):
            stem = name[:-len(suf)]
            for extra in (".swap", ".cleaned", ".deleted"):
                if stem.endswith(extra):
                    stem = stem[:-len(extra)]
                    break
            return _recovery_name(stem)
    return False


class _VirtualDir:
    """The partition directory as it will be after the actions planned so far: a map from
    file name to the real file holding its bytes.

    A symbolic link to a regular file counts as that file, as the broker's
    ``File.isFile`` / ``listFiles`` see it (a linked ``.log`` is a segment, its indexes
    are not orphans); its name goes to ``links``: recovery reads through it but refuses
    to change it (see :func:`refuse_link_changes`). ``stale`` holds the names of
    interrupted writes' temp files (:func:`_stale_tmp`)."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.files: dict[str, Path] = {}
        self.links: set[str] = set()
        self.stale: list[str] = []
        for entry in os.scandir(directory):
            _check_entry(entry)
            if not entry.is_file():
                continue
            if _stale_tmp(entry.name):
                # a link there holds no data of the partition: the next tmp + rename
                # write of that file unlinks it (never opens it)
                if not entry.is_symlink():
                    self.stale.append(entry.name)
                continue
            if not entry.name.endswith(".tmp"):
                self.files[entry.name] = Path(entry.path)
            else:
                continue
            if entry.is_symlink():
                self.links.add(entry.name)
        self.actions: list[Action] = []
        #: reports of the segments a ``.swap`` replaces (removed before the scan)
        self.replaced: list[SegmentReport] = []
        #: base offsets of the segments an interrupted swap brings in
        self.swapped_in: set[int] = set()

    def delete(self, name: str, reason: str) -> None:
        path = self.files.pop(name)
        self.actions.append(Action(DELETE, str(path), reason))

    def rename(self, name: str, new_name: str, reason: str) -> None:
        if new_name in self.files:
            self.delete(new_name, "replaced by " + name)
        path = self.files.pop(name)
        self.files[new_name] = path
        self.actions.append(Action(RENAME, str(path), reason,
                                   target=str(self.directory / new_name)))

    def real(self, name: str) -> Path:
        """Where ``name``'s bytes are now (may be a ``.swap`` file not yet renamed)."""
        return self.files[name]

    def path(self, name: str) -> str:
        """Where ``name`` will be once the plan is applied."""
        return str(self.directory / name)


_TOO_LARGE = object()


def _read_txn_index(path: Path):
    """The bytes of a ``.txnindex`` to compare with the rebuilt one, or ``_TOO_LARGE``
    for one larger than kafkalog reads (the rebuilt one replaces it)."""
    try:
        data = read_bytes_if_exists(path, limit=MAX_TXN_INDEX_BYTES,
                                    too_large=lambda n: CorruptIndexError("too large"))
    except CorruptIndexError:
        return _TOO_LARGE
    return _TOO_LARGE if data is None else data


def _last_index_entry(path: Path, base: int) -> tuple[int, int] | None:
    """``(relative offset, position)`` of an offset index's last entry before its zero
    tail, None when it has none (or its length is not a whole number of entries).

    Raises:
        CorruptIndexError: the file is larger than kafkalog reads.
    """
    idx = OffsetIndex.load(path, base)
    if idx.file_length % idx.entry_size:
        return None
    n = idx.entries - idx.zero_tail
    if n == 1 and idx.raw_entry(0) == (0, 0):
        n = 0   # all zeros
    return idx.raw_entry(n - 1) if n else None


def _index_sane(cls, path: Path, base: int, log_size: int) -> bool:
    """The cheap sanity check for indexes of segments recovery does not scan (no log
    read): the file is loaded as the broker opens it (:meth:`AbstractIndex.load`: whole
    slots, a zero-filled preallocated tail counted in ``zero_tail``), then

    * the length is a whole number of entries and :meth:`OffsetIndex.sanity_check`
      passes (the broker's own check; ``TimeIndex.sanity_check`` is not used: it counts
      a preallocated zero tail as entries and so rejects the tail this check accepts);
    * entries (before the zero tail) are at or above the base offset and in the order
      the broker appends them: offset index offsets and positions strictly increasing,
      positions inside the log (an all-zero first entry allowed); time index timestamps
      strictly increasing, offsets never going back.

    These are the log-free subset of ``verify-index``'s rules (``ops.verify``), which
    interleaves them with its checks against the log, so they are not shared code.
    """
    try:
        idx = cls.load(path, base)
    except CorruptIndexError:   # larger than kafkalog reads
        return False
    if idx.file_length % idx.entry_size:
        return False
    is_time = cls is TimeIndex
    if not is_time:
        try:
            idx.sanity_check()
        except CorruptIndexError:
            return False
    prev_key = prev_val = None
    for i, (a, b) in enumerate(idx.iter_raw_entries(idx.entries - idx.zero_tail)):
        rel, pos = (b, None) if is_time else (a, b)
        if rel < 0:
            return False
        if is_time:
            if prev_key is not None and (a <= prev_key or rel < prev_val):
                return False
            prev_key, prev_val = a, rel
        else:
            if pos >= max(log_size, 1) and not (i == 0 and rel == 0 and pos == 0):
                return False
            if prev_key is not None and (rel <= prev_key or pos <= prev_val):
                return False
            prev_key, prev_val = rel, pos
    return True


def _last_entry_plausible(path: Path, seg: _Seg) -> bool:
    """The last offset-index entry of a segment recovery does not scan points at a whole
    batch with a valid CRC that holds its offset (one batch read): where
    ``LogSegment.readNextOffset`` starts to find the log end offset. A position inside
    the log that is not a batch start (the log edited after the index was written) would
    make the broker read a header out of record bytes and take its offsets for the log
    end offset, negative ones too; kafkalog recovers that segment instead (a stricter
    check, like the rest of :func:`_index_sane`)."""
    last = _last_index_entry(path, seg.base)
    if last is None:
        return True  # no entry (or _index_sane's business): readNextOffset walks from 0
    rel, pos = last
    view = open_view(seg.view_path)
    try:
        if pos < 0:
            return False
        try:
            batch = batch_at(view, pos)
        except KafkalogError:  # offsets past int64: not a batch
            return False
        if batch is None or batch.magic > MAGIC_V2 or not batch.is_valid:
            return False
        first = batch.base_offset if batch.magic == MAGIC_V2 or not batch.compression \
            else batch.last_offset  # a legacy wrapper's first offset needs its records
        return seg.base <= first and seg.base + rel <= batch.last_offset
    finally:
        release_view(view)


def _txn_index_insane(vd: _VirtualDir, base: int) -> str | None:
    """Why the segment's ``.txnindex`` fails ``TransactionIndex.sanityCheck`` (an entry
    whose last offset is below the base offset), or None (sane, or absent)."""
    name = filename_prefix_from_offset(base) + ".txnindex"
    if name not in vd.files:
        return None
    try:
        TransactionIndex.load(vd.real(name), base).sanity_check()
    except CorruptIndexError as e:
        return e.message
    return None


_OFF = OffsetIndex.ENTRY


class _Seg:
    __slots__ = ("base", "report", "scan", "walk", "view_path", "data")

    def __init__(self, base: int, view_path: Path, report: SegmentReport):
        self.base = base
        self.view_path = view_path
        #: the salvaged ``.log`` bytes (``--salvage``), None: the file as it is
        self.data: bytes | None = None
        self.report = report
        self.scan: ScanResult | None = None
        self.walk: ScanResult | None = None


def _walk(seg: _Seg) -> ScanResult:
    if seg.scan is not None:
        return seg.scan
    if seg.walk is None:
        view = open_view(seg.view_path)
        try:
            seg.walk = walk_log(view, 0, seg.base)
        finally:
            release_view(view)
    return seg.walk


def plan_partition(directory, *, recovery_point: int | None = None,
                   log_start_offset: int | None = None, clean_shutdown: bool = False,
                   all_segments: bool = False, index_interval_bytes: int = 4096,
                   forced_bases: frozenset[int] | set[int] = frozenset(),
                   salvage: bool = False) -> PartitionReport:
    """Compute the recovery plan of one partition directory (reads only).

    Args:
        directory: the partition directory.
        recovery_point: the log dir's recovery point for this partition (None: absent,
            recovery starts at the first segment).
        log_start_offset: the log dir's log start offset for it (None: absent).
        clean_shutdown: the log dir has ``.kafka_cleanshutdown``.
        all_segments: recover every segment (``--all``).
        index_interval_bytes: ``index.interval.bytes`` of the topic.
        forced_bases: segments whose indexes an interrupted run meant to rewrite.
        salvage: keep the valid batches after a corrupt region (``--salvage``, see
            :func:`~kafkalog_cli.recovery.salvage.salvage_segment`) instead of truncating
            at the first one; no segment is removed for following a truncation, unless
            salvage stops at a transaction open at the damage (``unsafe_regions``).

    Raises:
        UnreadableError: a file cannot be read, or a name recovery reads or writes (a
            segment file, a snapshot, ``leader-epoch-checkpoint``) is a directory.
    """
    d = Path(directory)
    rep = PartitionReport(directory=str(d), log_dir=str(d.parent), clean_shutdown=clean_shutdown,
                          recovery_point=recovery_point, log_start_offset=log_start_offset)
    vd = _VirtualDir(d)
    _plan_leftovers(vd, rep)
    # orphan index files
    for name in sorted(vd.files):
        for suf in _INDEX_SUFFIXES:
            if _is_segment_file(name, suf) and name[:20] + ".log" not in vd.files:
                vd.delete(name, "index file without a .log (LogLoader removes orphans)")
    bases = sorted(int(n[:20]) for n in vd.files if _is_segment_file(n, ".log"))
    segs: list[_Seg] = []
    for b in bases:
        prefix = filename_prefix_from_offset(b)
        real = vd.real(prefix + ".log")
        segs.append(_Seg(b, real, SegmentReport(log=vd.path(prefix + ".log"), base_offset=b,
                                                size=real.stat().st_size)))
    if clean_shutdown:
        rep.notes.append("clean shutdown marker present: a broker skips recovery"
                         + ("; --all scans every segment anyway" if all_segments else
                            "; only segments with missing or insane indexes are recovered "
                            "(use --all to check every segment)"))
    # which segments are recovered
    rp = recovery_point if recovery_point is not None else -1
    floor_index = 0
    for i, s in enumerate(segs):
        if s.base <= rp:
            floor_index = i
    in_range = set()
    if all_segments:
        in_range = {s.base for s in segs}
    elif not clean_shutdown:
        in_range = {s.base for s in segs[floor_index:]}
    to_scan = set(in_range) | (set(forced_bases) & {s.base for s in segs})
    # segments LogLoader.loadSegmentFiles recovers on its own (LogSegment.sanityCheck: a
    # missing .index, or TransactionIndex.sanityCheck failing): a truncation found there
    # does not remove the segments after it; recoverLog's second pass over such a segment
    # finds nothing more to truncate
    load_recovered = set()
    for s in segs:
        # LogLoader.loadSegmentFiles -> LogSegment.sanityCheck -> TransactionIndex
        # .sanityCheck, for every segment: a failure recovers the segment (its .txnindex is
        # rebuilt, the old one quarantined), even after a clean shutdown
        txn_why = _txn_index_insane(vd, s.base)
        if txn_why:
            to_scan.add(s.base)
            load_recovered.add(s.base)
            s.report.notes.append(".txnindex fails the sanity check (" + txn_why +
                                  "): recovering the segment and rebuilding it")
        # (a swapped-in segment has an .index: LogLoader opens the .swap segment, which
        # creates its missing index files, empty, before they are renamed with it)
        if filename_prefix_from_offset(s.base) + ".index" not in vd.files and \
                s.base not in vd.swapped_in:
            load_recovered.add(s.base)
    for s in segs:
        if s.base in to_scan:
            continue
        prefix = filename_prefix_from_offset(s.base)
        why = None
        for suf, cls in ((".index", OffsetIndex), (".timeindex", TimeIndex)):
            name = prefix + suf
            if name not in vd.files:
                why = f"{suf} is missing"
                break
            if not _index_sane(cls, vd.real(name), s.base, s.report.size):
                why = f"{suf} fails the sanity check"
                break
            if cls is OffsetIndex and not _last_entry_plausible(vd.real(name), s):
                why = ".index's last entry is not the start of a batch holding its offset"
                break
        if why:
            to_scan.add(s.base)
            s.report.notes.append(why + ": recovering the segment and rebuilding its indexes")
    # the recovery scan
    prev_last: int | None = None
    cut_at = None
    unsafe: dict[int, int] | None = None
    for i, s in enumerate(segs):
        if cut_at is not None:
            break
        if s.base not in to_scan:
            prev_last = _walk(s).last_offset if _walk(s).last_offset is not None else prev_last
            continue
        view = open_view(s.view_path)
        try:
            s.scan = scan_log(view, s.base, index_interval_bytes, previous_last_offset=prev_last)
        finally:
            release_view(view)
        r = s.report
        r.scanned = True
        r.valid_bytes = s.scan.valid_bytes
        r.invalid_bytes = s.scan.invalid_bytes
        r.batches = s.scan.batches
        r.last_valid_offset = s.scan.last_offset
        r.error = s.scan.error or ("partial batch at the end" if s.scan.invalid_bytes else "")
        stop = None
        if salvage and s.scan.invalid_bytes:
            if unsafe is None:
                unsafe = unsafe_regions([(x.base, x.view_path) for x in segs])
            stop = unsafe.get(s.base)
            salvage_segment(s, prev_last, index_interval_bytes, stop_at=stop)
        if s.scan.last_offset is not None:
            prev_last = s.scan.last_offset
        if stop is not None:  # salvage stopped in this segment: the broker's truncation
            cut_at = i
        elif s.scan.invalid_bytes and s.base in in_range and s.base not in load_recovered \
                and not salvage:
            cut_at = i
    removed = segs[cut_at + 1:] if cut_at is not None else []
    remaining = segs[:cut_at + 1] if cut_at is not None else segs
    # remove what follows a truncation, highest first, the .log last
    for s in reversed(removed):
        prefix = filename_prefix_from_offset(s.base)
        s.report.removed = True
        s.report.lost_bytes = (0, s.report.size) if s.report.size else None
        s.report.lost_offsets = offsets_in(s.view_path, 0, s.base)
        for suf in (".txnindex", ".timeindex", ".index", ".log"):
            if prefix + suf in vd.files:
                s.report.files_removed.append(vd.path(prefix + suf))
                vd.delete(prefix + suf, f"follows the segment truncated at offset "
                                        f"{segs[cut_at].base} (LogLoader.recoverLog)")
    salvaged = [s for s in remaining if s.data is not None]
    if salvaged:
        # snapshots past the first salvaged segment count batches --salvage drops: removed
        # before any .log changes (so a rerun after a kill sees none of them), and taken
        # again where the broker takes them
        for name in sorted(vd.files):
            if _is_segment_file(name, ".snapshot") and int(name[:20]) > salvaged[0].base:
                vd.delete(name, "producer snapshot past a salvaged segment (it counts the "
                                "batches dropped)")
    for s in remaining:
        if s.data is not None:
            r = s.report
            vd.actions.append(Action(
                WRITE, r.log, f"salvaged: {len(r.dropped_regions)} corrupt region(s) dropped "
                f"({r.invalid_bytes} bytes), {len(r.kept_batches)} valid batches kept at "
                "their offsets (--salvage)", data=s.data))
        elif s.scan is not None and s.scan.invalid_bytes:
            s.report.lost_bytes = (s.scan.valid_bytes, s.scan.invalid_bytes)
            s.report.lost_offsets = offsets_in(s.view_path, s.scan.valid_bytes, s.base,
                                               after=s.scan.last_offset)
            vd.actions.append(Action(TRUNCATE, s.report.log, s.report.error or "invalid bytes",
                                     size=s.scan.valid_bytes))
    # log end offset
    leo = 0
    if remaining:
        last = remaining[-1]
        leo = next_offset(last.scan, last.base) if last.scan else _leo_unscanned(vd, last)
    elif log_start_offset is not None:
        leo = log_start_offset
    rep.log_end_offset = leo
    _plan_indexes(vd, rep, remaining, forced_bases)
    _plan_derived(vd, rep, d, remaining, leo, log_start_offset,
                  in_range | load_recovered)
    if recovery_point != leo:
        rep.checkpoint_updates["recovery-point-offset-checkpoint"] = leo
    if log_start_offset is not None and log_start_offset > leo:
        rep.checkpoint_updates["log-start-offset-checkpoint"] = leo
        rep.notes.append(f"log start offset {log_start_offset} is above the log end offset "
                         f"{leo}: a broker would delete every segment; kafkalog lowers it")
    rep.segments = vd.replaced + [s.report for s in segs]
    rep.actions = vd.actions
    return rep


def _leo_unscanned(vd: _VirtualDir, seg: _Seg) -> int:
    """LogSegment.readNextOffset of a segment not scanned: from the last index entry."""
    start = 0
    name = filename_prefix_from_offset(seg.base) + ".index"
    try:
        last = _last_index_entry(vd.real(name), seg.base) if name in vd.files else None
    except CorruptIndexError:   # larger than kafkalog reads: walk from the start
        last = None
    if last is not None and 0 <= last[1] < seg.report.size:
        start = last[1]
    view = open_view(seg.view_path)
    try:
        w = walk_log(view, start, seg.base)
        if w.last_offset is None and start:
            w = walk_log(view, 0, seg.base)
    finally:
        release_view(view)
    return seg.base if w.last_offset is None else w.last_offset + 1


def _plan_leftovers(vd: _VirtualDir, rep: PartitionReport) -> None:
    for name in sorted(vd.stale):
        vd.files[name] = vd.directory / name
        vd.delete(name, "temp file of an interrupted write (tmp + rename never finished)")
    names = sorted(vd.files)
    swaps, cleaned = [], []
    min_cleaned = None
    for name in names:
        if name.endswith(".deleted") and not name.endswith(".checkpoint.deleted"):
            vd.delete(name, "stray .deleted file (LogLoader removes it)")
        elif name.endswith(".cleaned"):
            off = file_offset(name)
            if off is not None:
                min_cleaned = off if min_cleaned is None else min(min_cleaned, off)
            cleaned.append(name)
        elif name.endswith(".swap"):
            swaps.append(name)
    valid = []
    for name in swaps:
        off = file_offset(name)
        if min_cleaned is not None and off is not None and off >= min_cleaned:
            vd.delete(name, f"swap file of an unfinished split (at or above the .cleaned "
                            f"offset {min_cleaned})")
        else:
            valid.append(name)
    for name in cleaned:
        vd.delete(name, "stray .cleaned file of an interrupted cleaning")
    lo = hi = None
    for name in valid:
        if not name.endswith(".log.swap") or file_offset(name) is None:
            continue
        base = file_offset(name)
        view = open_view(vd.real(name))
        try:
            w = walk_log(view, 0, base)
        finally:
            release_view(view)
        nxt = base if w.last_offset is None else w.last_offset + 1
        lo = base if lo is None else min(lo, base)
        hi = nxt if hi is None else max(hi, nxt)
        rep.notes.append(f"{name}: interrupted swap, completed by renaming (offsets "
                         f"{base}..{nxt - 1})")
    if lo is not None:
        for name in sorted(vd.files):
            off = file_offset(name)
            if name.endswith(".swap") or off is None:
                continue
            if lo <= off < hi:
                if name.endswith(".log"):
                    _replaced(vd, name, lo, hi)
                vd.delete(name, f"replaced by the swapped-in segment [{lo}, {hi})")
    for name in sorted(valid, key=lambda n: (not n.endswith(".log.swap"), n)):
        if name in vd.files:
            if name.endswith(".log.swap"):
                vd.swapped_in.add(file_offset(name))
                if name[:-len(".swap")] in vd.files:
                    _replaced(vd, name[:-len(".swap")], lo, hi)
            vd.rename(name, name[:-len(".swap")], "interrupted swap completed (LogLoader)")


def _replaced(vd: _VirtualDir, name: str, lo: int, hi: int) -> None:
    """Report the segment ``name`` (a ``.log``) that the swapped-in segments covering
    offsets ``[lo, hi)`` replace: removed, with the offsets it held outside that range as
    lost (an empty ``.swap`` covers none: every offset of the segment it replaces is)."""
    base = file_offset(name)
    path = vd.real(name)
    rep = SegmentReport(log=vd.path(name), base_offset=base, size=path.stat().st_size,
                        removed=True, replaced_by=vd.path(name + ".swap"))
    held = offsets_in(path, 0, base)
    if held is not None:
        first, last = held
        outside = [(first, min(last, lo - 1)), (max(first, hi), last)]
        outside = [(a, b) for a, b in outside if a <= b]
        if outside:
            rep.lost_offsets = (outside[0][0], outside[-1][1])
    rep.lost_bytes = (0, rep.size) if rep.size else None
    rep.files_removed.append(vd.path(name))
    vd.replaced.append(rep)


def _plan_indexes(vd: _VirtualDir, rep: PartitionReport, remaining: list[_Seg],
                  forced: frozenset[int] | set[int]) -> None:
    """LogSegment.recover rebuilds a recovered segment's offset and time indexes from its
    ``.log`` and trims them: every scanned segment gets the rebuilt bytes wherever its
    files differ from them (missing, truncated log, a zero-filled preallocated tail, a
    missing final time-index entry, another ``index.interval.bytes``...)."""
    for s in remaining:
        if s.scan is None:
            continue
        prefix = filename_prefix_from_offset(s.base)
        truncated = s.scan.invalid_bytes > 0
        for suf, data in ((".index", s.scan.offset_index), (".timeindex", s.scan.time_index)):
            name = prefix + suf
            try:
                existing = read_nonzero_prefix(vd.real(name)) if name in vd.files else None
            except CorruptIndexError as e:   # larger than kafkalog reads
                existing, too_large = None, e.message
            else:
                too_large = None
            if existing is not None and existing[1] == len(data) and \
                    data.startswith(existing[0]) and not data[len(existing[0]):].strip(b"\0"):
                continue
            why = (too_large if too_large is not None else "missing" if existing is None
                   else "log truncated" if truncated
                   else "rebuild planned by an interrupted run" if s.base in forced
                   else _index_difference(*existing, data, 8 if suf == ".index" else 12))
            vd.actions.append(Action(WRITE, vd.path(name), f"rebuilt index ({why})", data=data))
            vd.files[name] = vd.directory / name
            if suf == ".index":
                s.report.index_entries_rebuilt = len(data) // 8
            else:
                s.report.time_index_entries_rebuilt = len(data) // 12
            if s.base not in rep.rebuild_bases:
                rep.rebuild_bases.append(s.base)


def _index_difference(prefix: bytes, length: int, rebuilt: bytes, entry_size: int) -> str:
    """Why an existing index differs from the one recovery rebuilds, in a few words: it is
    given as its bytes up to the last non-zero one and its length (a preallocated index
    is megabytes of zeros, never held)."""
    # whole zero entries at the end, counted from the end
    zeros = length - len(prefix)
    n = length - zeros // entry_size * entry_size
    existing = prefix + bytes(max(0, min(length, len(rebuilt) + 1) - len(prefix)))
    if n < length and existing[:n] == rebuilt[:n]:
        return "zero-filled preallocated tail" if n == len(rebuilt) else \
            "zero-filled tail, entries missing"
    if rebuilt.startswith(existing):
        return f"{(len(rebuilt) - len(existing)) // entry_size} entries missing"
    return "differs from the log"


def _plan_derived(vd: _VirtualDir, rep: PartitionReport, d: Path, remaining: list[_Seg],
                  leo: int, log_start_offset: int | None, recovered: set[int]) -> None:
    # -- leader epochs
    ckpt = d / LEADER_EPOCH_CHECKPOINT
    existing = None
    corrupt = False
    if LEADER_EPOCH_CHECKPOINT in vd.files:
        try:
            existing = read_leader_epoch_checkpoint(ckpt)
        except KafkalogError as e:
            corrupt = True
            rep.notes.append(f"{e} (a broker takes the log directory offline): rebuilt "
                             "from the batches")
    if existing is None:
        entries: list[tuple[int, int]] = []
        sources = [_walk(s).epochs for s in remaining]
    else:
        entries = list(existing)
        sources = [s.scan.epochs for s in remaining if s.scan is not None]
    cache = LeaderEpochCache(entries)
    for eps in sources:
        for epoch, start in eps:
            # LogSegment.recover: assign an epoch >= 0 above the cache's latest
            latest = cache.latest_epoch
            if epoch > (-1 if latest is None else latest) and start >= 0:
                cache.assign(epoch, start)
    cache.truncate_from_end(leo)
    cache.truncate_from_start(log_start_offset or 0)
    entries = cache.epochs
    if entries != (existing or []) or corrupt:
        if entries or existing is not None or corrupt:
            vd.actions.append(Action(WRITE, str(ckpt), "leader epochs rebuilt from the log",
                                     data=format_leader_epoch_checkpoint(entries).encode()))
    _plan_partition_metadata(vd, rep, d)
    _plan_producer_state(vd, remaining, leo, log_start_offset, recovered)


def _kept_snapshots(vd: _VirtualDir, bases: list[int], leo: int, new_lso: int
                    ) -> dict[int, list]:
    """Plan the removal of the producer snapshots ``LogLoader.load`` removes (see
    :func:`_plan_producer_state`); the entries of those it keeps, by offset."""
    snaps: dict[int, list] = {}
    for name in sorted(vd.files):
        if _is_segment_file(name, ".snapshot"):
            off = int(name[:20])
            if off > leo:
                vd.delete(name, f"producer snapshot above the log end offset {leo}")
                continue
            try:
                read_snapshot(vd.real(name)).close()   # checked (read a piece at a time)
                snaps[off] = vd.real(name)
            except KafkalogError as e:
                vd.delete(name, f"corrupt producer snapshot ({e.message})")
    strays = [o for o in sorted(snaps) if o not in set(bases)]
    for o in strays[:-1] + [o for o in strays[-1:] if bases and o <= bases[-1]]:
        del snaps[o]
        vd.delete(filename_prefix_from_offset(o) + ".snapshot", "no segment starts at this "
                  "producer snapshot's offset (ProducerStateManager.removeStraySnapshots)")
    for o in [o for o in sorted(snaps) if o <= new_lso]:
        del snaps[o]
        vd.delete(filename_prefix_from_offset(o) + ".snapshot", f"producer snapshot at or "
                  f"below the log start offset {new_lso} (ProducerStateManager."
                  "truncateAndReload)")
    return snaps


def _plan_producer_state(vd: _VirtualDir, remaining: list[_Seg], leo: int,
                         log_start_offset: int | None, recovered: set[int]) -> None:
    """Producer snapshots and ``.txnindex`` files as ``LogLoader.load`` leaves them.

    Snapshots removed: above the log end offset or unreadable
    (``ProducerStateManager.truncateAndReload`` / ``loadFromSnapshot``), not at a segment's
    base offset unless the largest such one above every base (``removeStraySnapshots``),
    at or below the log start offset (``truncateAndReload``). Snapshots written where the
    broker takes them (``LogLoader.recoverSegment``, ``UnifiedLog.rebuildProducerState``)
    and none is: at the base and the next offset of each segment the broker recovers
    (``recovered``: base offsets; not those only kafkalog rescans), at the bases
    of the last two segments when the state is replayed through them, and at the log end
    offset; each holds the state replayed up to its offset."""
    bases = [s.base for s in remaining]
    new_lso = max(log_start_offset or 0, bases[0]) if bases else leo
    snaps = _kept_snapshots(vd, bases, leo, new_lso)
    wanted = {leo}
    for i, s in enumerate(remaining):
        if s.scan is not None and s.base in recovered:
            wanted.add(s.base)
            if i + 1 < len(remaining):
                wanted.add(remaining[i + 1].base)
    replay_from = max((o for o in snaps if o <= leo), default=None)
    wanted.update(b for b in bases[-2:]
                  if (replay_from is None or replay_from < b) and b < leo)
    wanted = {o for o in wanted if o > new_lso} - set(snaps)
    txn_segs = []
    for s in remaining:
        if s.scan is None:
            continue
        name = filename_prefix_from_offset(s.base) + ".txnindex"
        if s.scan.producer_batches or name in vd.files:
            txn_segs.append(s)
    if not wanted and not txn_segs:
        return
    candidates = sorted(wanted)
    if txn_segs:
        candidates.append(txn_segs[0].base)
    start_snap = max((o for o in snaps if o <= min(candidates)), default=None)
    state = ProducerStateManager()  # in memory: the plan writes nothing
    if start_snap is not None:
        state.load_entries(read_snapshot(snaps[start_snap]), start_snap)
    start = start_snap if start_snap is not None else -1
    rebuilt = {s.base: TransactionIndex(vd.path(filename_prefix_from_offset(s.base) +
                                                 ".txnindex"), s.base) for s in txn_segs}
    pending = sorted(wanted)
    taken: dict[int, bytes] = {}
    for s in remaining:
        w = _walk(s)
        if w.last_offset is not None and w.last_offset < start:
            continue
        positions = w.producer_batches
        if not positions:
            continue
        txn_index = rebuilt.get(s.base)
        view = memoryview(s.data) if s.data is not None else open_view(s.view_path)
        try:
            for pos in positions:
                batch = v2_batch_at(view, pos)
                if batch.base_offset < start or batch.base_offset >= leo:
                    continue
                while pending and pending[0] <= batch.base_offset:
                    taken[pending.pop(0)] = state.snapshot_bytes()
                aborted = state.replay_batch(batch)
                if aborted is not None and txn_index is not None:
                    txn_index.append(aborted)
        finally:
            release_view(view)
    for o in pending:
        taken[o] = state.snapshot_bytes()
    for o in sorted(wanted):
        name = filename_prefix_from_offset(o) + ".snapshot"
        vd.actions.append(Action(WRITE, vd.path(name),
                                 f"producer state at offset {o}" +
                                 (" (the log end offset)" if o == leo else "") +
                                 (f" (replayed from snapshot {start_snap})"
                                  if start_snap is not None else " (replayed from the log)"),
                                 data=taken[o]))
    for s in txn_segs:
        if start_snap is not None and s.base < start_snap:
            continue
        name = filename_prefix_from_offset(s.base) + ".txnindex"
        data = rebuilt[s.base].to_bytes()
        old = _read_txn_index(vd.real(name)) if name in vd.files else None
        if old is None and not data:
            continue
        if old not in (None, _TOO_LARGE) and old[:len(old) - len(old) % 34] == data \
                and parse_txn_index(old) == parse_txn_index(data):
            continue
        vd.actions.append(Action(WRITE, vd.path(name), "transaction index rebuilt from the log",
                                 data=data))


def _plan_partition_metadata(vd: _VirtualDir, rep: PartitionReport, d: Path) -> None:
    """A ``partition.metadata`` that does not parse (the broker's ``PartitionMetadataFile
    .read`` throws and takes the log directory offline) is rewritten with the topic id
    every other partition of the topic in the log directory has, else removed (to the
    quarantine): a broker writes the file again from the cluster metadata when it next
    hosts the partition, as for a partition created before topic ids."""
    if PARTITION_METADATA_FILE not in vd.files:
        return
    try:
        read_partition_metadata(d)
        return
    except UnreadableError:
        raise
    except KafkalogError as e:
        why = str(e)
    tp = parse_partition_dir_name(d.name)
    ids = {} if tp is None else topic_ids_on_disk(d.parent, tp.topic)
    ids.pop(tp.partition if tp else None, None)
    distinct = set(ids.values())
    if len(distinct) == 1:
        topic_id = distinct.pop()
        rep.notes.append(f"{why}: rewritten with topic id {topic_id} of the topic's other "
                         "partitions")
        vd.actions.append(Action(WRITE, vd.path(PARTITION_METADATA_FILE),
                                 "partition.metadata rebuilt from the other partitions",
                                 data=format_partition_metadata(topic_id).encode()))
    else:
        rep.notes.append(f"{why}: removed (no other partition of the topic names its id; "
                         "a broker writes the file again from the cluster metadata)")
        vd.delete(PARTITION_METADATA_FILE, "unreadable partition.metadata")


def refuse_link_changes(rep: PartitionReport) -> None:
    """Refuse a plan that would change a symbolic link or write through one: recovery
    reads a linked segment file as the broker does, but never cuts, rewrites, moves or
    removes through a link (the bytes live outside the partition directory).

    Raises:
        UnsafePathError: naming the first such file and where it points.
    """
    for a in rep.actions:
        for p in (a.path, a.target):
            if p is not None and os.path.islink(p):
                raise UnsafePathError(
                    f"is a symbolic link (to {os.readlink(p)}); recovery would {a.kind} it "
                    f"({a.reason}). kafkalog reads through links as the broker does but does "
                    "not change them: replace the link with the file, or recover the "
                    "directory it points into", file=p)


def link_notes(rep: PartitionReport) -> None:
    """Dry-run notes for :func:`refuse_link_changes`."""
    for a in rep.actions:
        if os.path.islink(a.path):
            rep.notes.append(f"{a.path} is a symbolic link: --truncate refuses to {a.kind} "
                             "it (replace the link with the file first)")
