"""``dump-segment``: every batch, record and index entry of segment files, after Kafka's
``DumpLogSegments`` tool.

:func:`dump` yields plain events (dicts) in file order; the renderers in
:mod:`kafkalog_cli.render.dump` turn them into the Kafka tool's exact text lines, JSON
Lines, or a rich view. Keys follow the Kafka tool's names; the JSON objects
(:func:`kafkalog_cli.render.dump.json_event`, docs/json.md) spell the types in camelCase
(``invalid_bytes`` -> ``invalidBytes``, ...) and a record's ``payload`` as ``value``, the
vocabulary of every command's JSON. Event types:

* ``file``: ``{"type":"file","file":F,"kind":"log|index|timeindex|snapshot|
  producer_snapshot|txnindex|unknown","startOffset":N}`` (``Dumping F`` / ``Log starting
  offset: N``; ``snapshot`` is a KRaft ``.checkpoint``, ``producer_snapshot`` a
  ``.snapshot``);
* ``batch``: the batch header (``baseOffset``, ``lastOffset``, ``count``, ``magic``, ``crc``,
  ``isValid``, ``size``, ``position``, ``compresscodec``, ``timestampType``,
  ``baseTimestamp``, ``maxTimestamp``, producer fields, ``partitionLeaderEpoch``,
  ``isTransactional``, ``isControl``, ``deleteHorizonMs``);
* ``record`` (deep iteration): ``offset``, ``timestamp``, ``keySize``, ``valueSize``,
  ``sequence``, ``headerKeys``; with data: ``key``, ``payload`` (bytes or None) and
  ``headers``; decoded (an internal topic) ``key``/``payload`` are JSON shapes (a
  tombstone's payload None, where Kafka's tool prints ``<DELETE>``), ``{"raw": base64}``
  when they do not decode, with ``decodeWarnings`` and, where Kafka's parser fails,
  ``decodeFailure`` (what its tool prints: ``Unknown record type N at offset X,
  skipping.``, ``Error at offset X, skipping. <message>``; a coordinator record without
  a key also gets a ``corrupt_record`` diagnostic, as Kafka's tool stops there), and
  ``decoded``, the :class:`~kafkalog_cli.decoders.DecodedRecord` (not written to JSON);
  control records add ``controlType`` and, for markers, ``coordinatorEpoch``; legacy
  records add ``isValid`` and ``crc``;
* ``records`` / ``batches`` (:attr:`DumpOptions.record_blocks` / ``batch_runs``, the kafka
  text and JSON renderers' fast paths, not written as such): a block of one batch's
  records, and a run of ordinary v2 batches standing for their ``batch`` and ``records``
  events (:func:`_batch_runs`);
* ``invalid_bytes``: bytes after the last whole batch (``Found N invalid bytes ...``), with
  the ``reason`` iteration stopped there when it was not a partial batch, and
  ``kafkaException`` (``"CorruptRecordException"``) where Kafka's reader throws instead
  (a size below 14 bytes: its tool prints no ``Found`` line and exits 1);
* ``index_entry`` / ``timeindex_entry``: ``offset``/``position`` and ``timestamp``/``offset``;
* ``index_empty``, ``index_sane``: ``F is empty.`` / ``F passed sanity check.``;
* ``producer_snapshot_entry`` (a ``.snapshot``, as DumpLogSegments.dumpProducerIdSnapshot):
  ``producerId``, ``producerEpoch``, ``coordinatorEpoch``, ``currentTxnFirstOffset`` (None
  when no transaction is open), ``lastTimestamp``, and the last batch's ``firstSequence``,
  ``lastSequence``, ``lastOffset``, ``offsetDelta``, ``timestamp`` (all None when the
  entry holds no batch: a stored lastOffset below 0);
* ``txn_index_entry`` (a ``.txnindex``, as dumpTxnIndex): ``version``, ``producerId``,
  ``firstOffset``, ``lastOffset``, ``lastStableOffset``;
* ``diagnostic``: a mismatch or error message for stderr (``stream: "stderr"``); corrupt
  data where Kafka's tool throws (and exits 1) has ``"error": True`` and a ``kind``
  (``corrupt_record``: records of a batch that do not decode, named by file and byte
  position; ``corrupt_index``: an index failing the sanity check, a ``.txnindex`` entry
  of an unknown version), the dump going on; mismatches do not (Kafka exits 0); a file of
  an unknown kind gets one with ``"kind": "ignored_file"`` (``Ignoring unknown file F``) and
  the dump goes on with the next file; with deep iteration, a ``.log`` whose record
  offsets are not consecutive (from -1: a first offset above 0 counts) gets one with
  ``"kind": "non_consecutive_offsets"`` and ``nonConsecutive``: ``[{"offset": A,
  "nextOffset": B}]`` (``Non-consecutive offsets in F`` / ``  A is followed by B``, after
  the file's dump; with ``start_offset``, the first record dumped is not compared).

The read never writes: files are opened read-only.

This module walks the files and a ``.log``'s batches (and keeps the non-consecutive
offsets); the events of one batch are :mod:`~kafkalog_cli.ops.dump_records`', the dumps
of indexes, producer snapshots and ``.txnindex`` files :mod:`~kafkalog_cli.ops
.dump_indexes`', the reports printed after the last file :mod:`~kafkalog_cli.ops
.dump_reports`', and the options and findings :mod:`~kafkalog_cli.ops.dump_options`'.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from operator import itemgetter
from pathlib import Path

from ..constants import (
    CHECKPOINT_FILE_SUFFIX,
    INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    PRODUCER_SNAPSHOT_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
    TXN_INDEX_FILE_SUFFIX,
)
from ..errors import KafkalogError, RecordOverheadError
from ..format.records import FileRecords, LegacyRecordBatch
from ..storage.files import SEGMENT_SUFFIXES, check_exists
from ..storage.location import as_path
from ..storage.segment import LogSegment, open_view, resolve_segments
from .dump_options import DumpFindings, DumpOptions, check_decoder_class  # noqa: F401
from .dump_records import (  # noqa: F401  (re-exported: the events' helpers)
    RECORD_BLOCK,
    _block_is_dense,
    _decoder_for,
    _dense_block,
    _record_blocks,
    _record_events,
    _registry_diagnostics,
    batch_event,
    data_error_event,
    event_records,
    record_events_of,
    skipped_event,
)
from .dump_reports import (  # noqa: F401  (re-exported)
    DEFERRED_KINDS,
    INDEX_MISMATCH,
    NON_CONSECUTIVE,
    index_mismatch_event,
    java_hash_map_order,
    time_index_event,
)

_first = itemgetter(0)


def dump_log(segment: LogSegment, opts: DumpOptions) -> Iterator[dict]:
    """Events for one ``.log`` file (see the module docstring)."""
    file = str(segment.log_path)
    yield {"type": "file", "file": file, "kind": "log", "startOffset": segment.base_offset}
    size = segment.size
    end = size if opts.max_bytes is None else min(size, opts.max_bytes)
    start_pos = 0
    if opts.start_offset is not None and opts.start_offset > segment.base_offset:
        idx = segment.offset_index
        if idx is not None:
            start_pos = idx.lookup(opts.start_offset).position
            if not 0 <= start_pos <= end:  # a corrupt entry: scan from the start
                start_pos = 0
    decoder = (_decoder_for(segment.directory.name, opts, segment.directory)
               if opts.print_data_log else None)
    # the segment's records from start_pos: a remote .log is fetched by ranges as the
    # dump goes (and no further than --end-offset takes it); read past damage whole
    fr = (segment.salvage_records(start_pos, end) if opts.skip_corrupt
          else segment.records(start_pos, end))
    yield from _batch_events(fr, file, opts, decoder)
    yield from _registry_diagnostics(decoder, file)


def dump_snapshot(path: Path, opts: DumpOptions) -> Iterator[dict]:
    """Events for a KRaft metadata snapshot ``<offset>-<epoch>.checkpoint`` (or the
    ``bootstrap.checkpoint``): the same batch format as a ``.log``."""
    file = str(path)
    ev = {"type": "file", "file": file, "kind": "snapshot"}
    m = re.match(r"^(\d{20})-(\d{10})\.checkpoint$", path.name)
    if m:
        ev["snapshotEndOffset"], ev["snapshotEpoch"] = int(m.group(1)), int(m.group(2))
    yield ev
    view = open_view(path)
    end = len(view) if opts.max_bytes is None else min(len(view), opts.max_bytes)
    topic = path.parent.name if m else "__cluster_metadata"
    decoder = _decoder_for(topic, opts) if opts.print_data_log else None
    if opts.skip_corrupt:
        from ..format.salvage import SalvagedRecords

        fr = SalvagedRecords(view, 0, end, file=file)
    else:
        fr = FileRecords(view, 0, end, file=file)
    yield from _batch_events(fr, file, opts, decoder)


def _batch_events(fr, file: str, opts: DumpOptions, decoder) -> Iterator[dict]:
    """Events of the batches of ``fr`` (a FileRecords, or a segment's ranged records)."""
    end = fr.end
    deep = opts.deep
    gaps = OffsetGaps(-1 if opts.start_offset is None else None)
    skipped = getattr(fr, "skipped", None)  # --skip-corrupt: the ranges passed over
    told = 0
    batches = fr.batches()
    if (deep and opts.batch_runs and opts.record_blocks and decoder is None
            and skipped is None and opts.start_offset is None and opts.end_offset is None
            and _block_is_dense is not None):
        yield from _batch_runs(batches, file, opts, gaps)
        batches = ()
    for batch in batches:
        if skipped is not None and len(skipped) > told:
            yield from map(skipped_event, skipped[told:])
            told = len(skipped)
        if opts.start_offset is not None and batch.last_offset < opts.start_offset:
            continue
        if opts.end_offset is not None:
            try:  # a legacy wrapper's first offset is its first inner message's
                first = batch.base_offset
            except KafkalogError:
                first = batch.last_offset
            if first > opts.end_offset:
                break
        yield from _batch_and_records(batch, file, opts, decoder, gaps)
    if skipped is not None and len(skipped) > told:
        yield from map(skipped_event, skipped[told:])
    stopped_early = opts.end_offset is not None and fr.valid_end < end
    if fr.invalid_bytes and opts.max_bytes is None and not stopped_early:
        ev = {"type": "invalid_bytes", "file": file, "position": fr.valid_end,
              "bytes": fr.invalid_bytes}
        if fr.stop_error is not None:
            ev["reason"] = fr.stop_error.message
            if isinstance(fr.stop_error, RecordOverheadError):
                # Kafka's FileLogInputStream throws here: its tool prints no "Found N
                # invalid bytes" line but dies (exit 1) with the exception
                ev["kafkaException"] = "CorruptRecordException"
        yield ev
    if gaps.gaps:
        yield non_consecutive_event(file, gaps.gaps, gaps.dropped, gaps.found)


def _batch_and_records(batch, file: str, opts: DumpOptions, decoder,
                       gaps: OffsetGaps) -> Iterator[dict]:
    """The ``batch`` event of one batch and, with deep iteration, its records' events."""
    deep = opts.deep
    yield batch_event(batch, file)
    if deep and opts.record_blocks and not isinstance(batch, LegacyRecordBatch) \
            and not batch.is_control and (decoder is None or not opts.print_data_log):
        try:
            for ev in _record_blocks(batch, opts, file):
                if "block" in ev:  # offsets baseOffset..lastOffset, every one
                    gaps.add_range(batch.base_offset, batch.last_offset)
                else:
                    gaps.add_records(ev["records"])
                yield ev
        except KafkalogError as e:
            yield data_error_event(file, batch.position, e.message)
    elif deep:
        try:
            for ev in _record_events(batch, opts, file, decoder):
                if ev["type"] == "record":
                    gaps.add(ev["offset"])
                yield ev
        except KafkalogError as e:
            yield data_error_event(file, batch.position, e.message)


#: A ``batches`` event holds up to this many batches, and no more than
#: :data:`RUN_BYTES` of their records blocks once over one batch.
RUN_BATCHES = 64
RUN_BYTES = 1 << 20


def _batch_runs(batches, file: str, opts: DumpOptions, gaps: OffsetGaps) -> Iterator[dict]:
    """The events of ``batches`` with deep iteration, the default flags and no decoder
    (:attr:`DumpOptions.batch_runs`): consecutive ordinary v2 batches whose records block
    :func:`~kafkalog_cli.ops.dump_records._dense_block` takes come as one ``batches``
    event, ``{"type": "batches", "file", "runs": [(RecordBatch, isValid, block), ...],
    "size": their bytes, "invalid": positions of those failing their CRC check}``, which
    stands for each one's ``batch`` event and ``records`` event; any other batch gets
    :func:`_batch_and_records`' events, in place."""
    limit = opts.max_decompressed_bytes
    run: list = []
    held = size = 0
    invalid: list = []
    for batch in batches:
        block = None
        if not isinstance(batch, LegacyRecordBatch) and not batch.is_control:
            try:
                block = _dense_block(batch, limit)
            except KafkalogError:
                block = None  # _batch_and_records reports it, as the reference path
        if block is None:
            if run:
                yield {"type": "batches", "file": file, "runs": run, "size": size,
                       "invalid": invalid}
                run, invalid = [], []
                held = size = 0
            yield from _batch_and_records(batch, file, opts, None, gaps)
            continue
        ok = batch.is_valid
        if not ok:
            invalid.append(batch.position)
        gaps.add_range(batch.base_offset, batch.last_offset)
        run.append((batch, ok, block))
        size += batch.size
        held += len(block)
        if len(run) >= RUN_BATCHES or held >= RUN_BYTES:
            yield {"type": "batches", "file": file, "runs": run, "size": size,
                   "invalid": invalid}
            run, invalid = [], []
            held = size = 0
    if run:
        yield {"type": "batches", "file": file, "runs": run, "size": size,
               "invalid": invalid}


#: Non-consecutive offset pairs kept per file (each costs ~150 bytes until the file's
#: dump ends): a hostile log could otherwise make every record one. Past it, pairs are
#: counted (kafkalog's bound: Kafka's tool keeps them all).
MAX_NON_CONSECUTIVE_PAIRS = 1_000_000


class OffsetGaps:
    """DumpLogSegments' non-consecutive offsets of one ``.log`` (deep iteration): every
    record offset that is not the previous one's + 1. ``last`` starts at -1 (so a first
    offset above 0 counts), or None after a seek (the first record dumped is not
    compared). ``gaps`` maps an offset to the one that follows it, up to
    :data:`MAX_NON_CONSECUTIVE_PAIRS` pairs; ``dropped`` counts the pairs past it."""

    __slots__ = ("gaps", "dropped", "last", "found")

    def __init__(self, last: int | None):
        self.gaps: dict[int, int] = {}
        self.dropped = 0
        self.last = last
        #: every gap seen, kept or not (the tool's map calls, for their order)
        self.found = 0

    def add(self, offset: int) -> None:
        """The next record's (absolute) offset."""
        last = self.last
        if last is not None and offset != last + 1:
            self.found += 1
            if len(self.gaps) < MAX_NON_CONSECUTIVE_PAIRS or last in self.gaps:
                self.gaps[last] = offset
            else:
                self.dropped += 1
        self.last = offset

    def add_range(self, first: int, last: int) -> None:
        """:meth:`add` for every offset of ``first..last`` (inclusive)."""
        self.add(first)
        self.last = last

    def add_records(self, records) -> None:
        """:meth:`add` for the offsets of ``records`` (Record tuples, in order), at C speed
        when they follow the last one and each other (a batch that is not compacted)."""
        if not records:
            return
        offsets = list(map(_first, records))
        first = offsets[0]
        last = self.last
        if last is not None and first == last + 1 and \
                offsets == list(range(first, first + len(offsets))):
            self.last = offsets[-1]
            return
        for off in offsets:
            self.add(off)


def non_consecutive_event(file: str, gaps: dict[int, int], dropped: int = 0,
                          found: int | None = None) -> dict:
    """The ``Non-consecutive offsets in F`` diagnostic of DumpLogSegments for ``gaps``
    (``{offset: the offset that follows it}``): by offset, as its TreeMap prints them;
    ``dropped`` pairs past :data:`MAX_NON_CONSECUTIVE_PAIRS` get one more line (and
    ``nonConsecutiveNotKept``). ``found``: the gaps seen (the tool's map calls; default
    the pairs). :func:`dump` reports it after the last file, as Kafka 4's tool does."""
    pairs = sorted(gaps.items())
    key = str(as_path(file).absolute())
    lines = [f"Non-consecutive offsets in {key}"]
    lines += [f"  {a} is followed by {b}" for a, b in pairs]
    ev = {"type": "diagnostic", "stream": "stderr", "kind": NON_CONSECUTIVE,
          "file": file, "message": "\n".join(lines), "key": key,
          "calls": len(pairs) + dropped if found is None else found,
          "nonConsecutive": [{"offset": a, "nextOffset": b} for a, b in pairs]}
    if dropped:
        ev["message"] += (f"\n  ... and {dropped} more (kafkalog keeps the first "
                          f"{MAX_NON_CONSECUTIVE_PAIRS} pairs of a file)")
        ev["nonConsecutiveNotKept"] = dropped
    return ev


def _deferred_reports(events: Iterator[dict]) -> Iterator[dict]:
    """``events`` with the diagnostics of :data:`DEFERRED_KINDS` held back and yielded
    after the last event, kind by kind, each kind's files in the order of Kafka's
    HashMap (:func:`java_hash_map_order`); a file dumped twice gets one report of each
    kind (its entries merged, as the tool's map merges them)."""
    held: dict[str, dict[str, dict]] = {k: {} for k in DEFERRED_KINDS}
    calls: dict[str, list[tuple[str, int]]] = {k: [] for k in DEFERRED_KINDS}
    for ev in events:
        kind = ev.get("kind") if ev["type"] == "diagnostic" else None
        if kind not in held:
            yield ev
            continue
        key = ev["key"]
        calls[kind].append((key, ev["calls"]))
        prev = held[kind].get(key)
        held[kind][key] = ev if prev is None else _merged(prev, ev)
    for kind in DEFERRED_KINDS:
        for key in java_hash_map_order(calls[kind]):
            yield held[kind][key]


def _merged(a: dict, b: dict) -> dict:
    """Two reports of one kind for one file (the file dumped twice), as one."""
    if a["kind"] == NON_CONSECUTIVE:
        gaps = {e["offset"]: e["nextOffset"] for e in a["nonConsecutive"]}
        gaps.update((e["offset"], e["nextOffset"]) for e in b["nonConsecutive"])
        return non_consecutive_event(a["file"], gaps, a.get("nonConsecutiveNotKept", 0)
                                     + b.get("nonConsecutiveNotKept", 0),
                                     a["calls"] + b["calls"])
    if a["kind"] == INDEX_MISMATCH:
        pairs = {m["indexOffset"]: m["logOffset"] for m in a["mismatches"]}
        pairs.update((m["indexOffset"], m["logOffset"]) for m in b["mismatches"])
        return index_mismatch_event(a["file"], list(pairs.items()))
    return time_index_event(a["kind"], a["file"], a["entries"] + b["entries"])


def dump(paths, opts: DumpOptions | None = None) -> Iterator[dict]:
    """Dump every file under ``paths``, in the order given: ``.log``/``.index``/
    ``.timeindex`` files, KRaft ``.checkpoint`` snapshots, producer ``.snapshot`` files and
    ``.txnindex`` files, or the ``.log`` files of partition and log directories, in offset
    order. A file of any other kind is skipped with an ``ignored_file`` diagnostic, as
    Kafka's tool does.

    Raises:
        UnreadableError / NotAKafkaFileError: a path cannot be read, or a directory is not
            Kafka's, or a segment file's name is not a base offset.
    """
    opts = opts or DumpOptions()
    return _deferred_reports(_dump(paths, opts))


def _dump(paths, opts: DumpOptions) -> Iterator[dict]:
    for raw in paths:
        p = as_path(raw)
        if p.name.endswith(CHECKPOINT_FILE_SUFFIX):
            yield from dump_snapshot(check_exists(p), opts)
            continue
        if check_exists(p).is_file():
            suffix = p.suffix
            if suffix == PRODUCER_SNAPSHOT_FILE_SUFFIX:
                from .dump_indexes import dump_producer_snapshot

                yield from dump_producer_snapshot(p, opts)
                continue
            if suffix == TXN_INDEX_FILE_SUFFIX:
                from .dump_indexes import dump_txn_index

                yield from dump_txn_index(p, opts)
                continue
            if suffix not in SEGMENT_SUFFIXES:
                yield {"type": "file", "file": str(p), "kind": "unknown"}
                yield {"type": "diagnostic", "stream": "stderr", "kind": "ignored_file",
                       "file": str(p), "message": f"Ignoring unknown file {p}"}
                continue
        yield from _dump_segments(p, opts)


def _dump_segments(path: Path, opts: DumpOptions) -> Iterator[dict]:
    for seg, only in resolve_segments([path]):
        try:
            if only == INDEX_FILE_SUFFIX:
                from .dump_indexes import dump_offset_index

                yield from dump_offset_index(seg, opts)
            elif only == TIME_INDEX_FILE_SUFFIX:
                from .dump_indexes import dump_time_index

                yield from dump_time_index(seg, opts)
            elif only in (None, LOG_FILE_SUFFIX):
                if only is None and not seg.log_path.exists():
                    continue
                if opts.end_offset is not None and seg.base_offset > opts.end_offset:
                    continue
                yield from dump_log(seg, opts)
        finally:
            seg.close()
