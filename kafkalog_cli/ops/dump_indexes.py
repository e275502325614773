"""``dump-segment`` of the files beside a ``.log``: the offset index (DumpLogSegments
.dumpIndex), the time index (dumpTimeIndex), a producer-state ``.snapshot``
(dumpProducerIdSnapshot) and a ``.txnindex`` (dumpTxnIndex)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..constants import NO_TIMESTAMP
from ..errors import (
    CorruptIndexError,
    CorruptSnapshotError,
    KafkalogError,
    RecordOverheadError,
    UnreadableError,
)
from ..storage.files import check_exists
from ..storage.location import as_path
from ..storage.segment import LogSegment
from .dump_options import DumpOptions
from .dump_records import data_error_event
from .dump_reports import (
    CORRUPT_SNAPSHOT,
    TIME_INDEX_MISMATCH,
    TIME_INDEX_NOT_FOUND,
    TIME_INDEX_OUT_OF_ORDER,
    index_mismatch_event,
    time_index_event,
)


def dump_offset_index(segment: LogSegment, opts: DumpOptions) -> Iterator[dict]:
    """Events for a ``.index`` file, as DumpLogSegments.dumpIndex."""
    path = segment.index_path
    yield {"type": "file", "file": str(path), "kind": "index"}
    if not segment.log_path.exists():
        yield missing_log_event(segment)
        return
    from ..storage.offset_index import OffsetIndex

    idx = OffsetIndex.load(check_exists(path), segment.base_offset)
    if idx.entries == 0:
        yield {"type": "index_empty", "file": str(path)}
        return
    if opts.index_sanity_check:
        try:
            idx.sanity_check()
        except CorruptIndexError as e:  # OffsetIndex.sanityCheck throws: Kafka exits 1
            yield {"type": "diagnostic", "stream": "stderr", "kind": "corrupt_index",
                   "error": True, "file": str(path), "message": e.message}
            return
        yield {"type": "index_sane", "file": str(path)}
        return
    size = segment.size
    mismatches = []
    for i in range(idx.entries):
        e = idx.entry(i)
        if e.offset == segment.base_offset and i > 0:
            break  # a zero-filled preallocated tail
        first = None
        if 0 <= e.position <= size:
            fr = segment.records(e.position, e.position + opts.max_message_size)
            first = next(iter(fr.batches()), None)
        if first is None:  # the tool's slice(...).batches().iterator().next() throws
            yield _index_entry_error(segment, e, fr.stop_error if 0 <= e.position <= size
                                     else None)
            return
        log_offset = first.last_offset
        if log_offset != e.offset:
            mismatches.append((e.offset, log_offset))
        if not opts.verify_index_only:
            yield {"type": "index_entry", "offset": e.offset, "position": e.position}
    if mismatches:
        yield index_mismatch_event(str(path), mismatches)


def _file_records_text(segment: LogSegment) -> str:
    """FileRecords.toString of the .log as DumpLogSegments opens it."""
    return (f"FileRecords(size={segment.size}, file={as_path(segment.log_path).absolute()}, "
            f"start=0, end=2147483647)")


def _index_entry_error(segment: LogSegment, entry, stop_error) -> dict:
    """The error of an offset index entry at which no whole batch starts: DumpLogSegments
    .dumpIndex dies there (exit 1; nothing more of the file, no mismatch report) with
    FileRecords.slice's IllegalArgumentException (a position outside the log), the
    reader's CorruptRecordException (a size below 14 bytes there) or, where the slice
    holds no whole batch, NoSuchElementException. kafkalog says which, as an error
    naming the entry, and goes on with the next file."""
    pos = entry.position
    if pos < 0:
        why = f"Invalid position: {pos} in read from {_file_records_text(segment)}"
    elif pos > segment.size:
        why = f"Slice from position {pos} exceeds end position of {_file_records_text(segment)}"
    elif isinstance(stop_error, RecordOverheadError):
        why = stop_error.message
    else:
        why = "no whole batch starts there (NoSuchElementException)"
    path = segment.index_path
    return {"type": "diagnostic", "stream": "stderr", "kind": "corrupt_index", "error": True,
            "file": str(path), "message": str(CorruptIndexError(
                f"the entry for offset {entry.offset} points at position {pos} of the .log: "
                f"{why}", file=path))}


def missing_log_event(segment: LogSegment) -> dict:
    """The error of an index dumped without its segment's ``.log``: DumpLogSegments
    .dumpIndex / dumpTimeIndex open the ``.log`` first (``FileRecords.open``) and throw
    NoSuchFileException (exit 1) before they read the index; kafkalog says so and goes on
    with the next file."""
    log = segment.log_path
    return {"type": "diagnostic", "stream": "stderr", "kind": "missing_log", "error": True,
            "file": str(log), "message": str(UnreadableError(
                f"the segment's .log is missing (NoSuchFileException: {as_path(log).absolute()}"
                "): its index entries cannot be checked", file=log))}


def dump_time_index(segment: LogSegment, opts: DumpOptions) -> Iterator[dict]:
    """Events for a ``.timeindex`` file, as DumpLogSegments.dumpTimeIndex."""
    path = segment.time_index_path
    yield {"type": "file", "file": str(path), "kind": "timeindex"}
    if not segment.log_path.exists():
        yield missing_log_event(segment)
        return
    from ..storage.time_index import TimeIndex

    tidx = TimeIndex.load(check_exists(path), segment.base_offset)
    if opts.index_sanity_check:
        try:
            tidx.sanity_check()
        except CorruptIndexError as e:  # TimeIndex.sanityCheck throws: Kafka exits 1
            yield {"type": "diagnostic", "stream": "stderr", "kind": "corrupt_index",
                   "error": True, "file": str(path), "message": e.message}
            return
        yield {"type": "index_sane", "file": str(path)}
        return
    if tidx.entries:
        # dumpTimeIndex reads every batch from each entry's offset-index position to the
        # end of the .log: a size below 14 bytes there kills it before the first entry
        fr = segment.records(segment.index_position(tidx.entry(0).offset))
        for _ in fr.batches():
            pass
        if isinstance(fr.stop_error, RecordOverheadError):
            yield data_error_event(str(segment.log_path), fr.stop_error.position,
                                   fr.stop_error.message)
            return
    # DumpLogSegments.dumpTimeIndex's three checks, printed after the entries
    mismatches, out_of_order, not_found = [], [], []
    prev_ts = -1
    for i in range(tidx.entries):
        e = tidx.entry(i)
        if e.offset == segment.base_offset and i > 0:
            break
        batch = segment.translate_offset(e.offset)
        if batch is None:
            not_found.append((e.offset, -1))
        elif batch.last_offset != e.offset:
            not_found.append((e.offset, batch.last_offset))
        else:
            try:
                # dumpTimeIndex: from NO_TIMESTAMP, max(maxTimestamp, record.timestamp)
                log_ts = NO_TIMESTAMP
                for r in batch.iter_records(opts.max_decompressed_bytes):
                    if r[1] > log_ts:
                        log_ts = r[1]
            except KafkalogError as err:  # Kafka's record iterator throws: exit 1
                yield data_error_event(str(segment.log_path), batch.position, err.message)
            else:
                if log_ts != e.timestamp:
                    mismatches.append((e.timestamp, log_ts))
                if prev_ts >= e.timestamp:
                    out_of_order.append((e.timestamp, prev_ts))
        if not opts.verify_index_only:
            yield {"type": "timeindex_entry", "timestamp": e.timestamp, "offset": e.offset}
        prev_ts = e.timestamp
    for kind, entries in ((TIME_INDEX_MISMATCH, mismatches),
                          (TIME_INDEX_OUT_OF_ORDER, out_of_order),
                          (TIME_INDEX_NOT_FOUND, not_found)):
        if entries:
            yield time_index_event(kind, str(path), entries)


def dump_producer_snapshot(path: Path, opts: DumpOptions) -> Iterator[dict]:
    """Events for a producer-state ``.snapshot``, as DumpLogSegments.dumpProducerIdSnapshot:
    one entry per producer, or a diagnostic with the CorruptSnapshotException message
    (the file checked, then read, a piece at a time: :func:`~kafkalog_cli.storage
    .producer_state.read_snapshot`)."""
    file = str(path)
    yield {"type": "file", "file": file, "kind": "producer_snapshot"}
    try:
        from ..storage.producer_state import read_snapshot

        entries = read_snapshot(path)
    except CorruptSnapshotError as e:
        # Kafka's tool prints the exception's message alone; the line names the file
        yield {"type": "diagnostic", "stream": "stderr", "kind": CORRUPT_SNAPSHOT,
               "message": str(e), "file": file}
        return
    for e in entries:
        ev = {"type": "producer_snapshot_entry", "file": file, "producerId": e.producer_id,
              "producerEpoch": e.producer_epoch, "coordinatorEpoch": e.coordinator_epoch,
              "currentTxnFirstOffset": (e.current_txn_first_offset
                                        if e.current_txn_first_offset >= 0 else None),
              "lastTimestamp": e.timestamp}
        if e.last_offset >= 0:  # ProducerStateManager.readSnapshot: a BatchMetadata
            ev.update(firstSequence=_decrement_sequence(e.last_sequence, e.offset_delta),
                      lastSequence=e.last_sequence, lastOffset=e.last_offset,
                      offsetDelta=e.offset_delta, timestamp=e.timestamp)
        else:
            ev.update(firstSequence=None, lastSequence=None, lastOffset=None,
                      offsetDelta=None, timestamp=None)
        yield ev


def _decrement_sequence(sequence: int, decrement: int) -> int:
    """DefaultRecordBatch.decrementSequence: sequences wrap at Integer.MAX_VALUE."""
    if sequence < decrement:
        return 0x7FFFFFFF - (decrement - sequence) + 1
    return sequence - decrement


def dump_txn_index(path: Path, opts: DumpOptions) -> Iterator[dict]:
    """Events for a ``.txnindex``, as DumpLogSegments.dumpTxnIndex (a partial entry at the
    end is ignored; an entry of an unknown version is a diagnostic, as Kafka's
    TransactionIndex refuses it, and then nothing of the file is printed)."""
    file = str(path)
    yield {"type": "file", "file": file, "kind": "txnindex"}
    from ..storage.txn_index import TransactionIndex

    idx = TransactionIndex.load(check_exists(path), 0)
    for t in idx.iter_entries():   # a first walk: nothing is printed of a refused file
        if t.version > 0:  # AbortedTxn.CURRENT_VERSION; TransactionIndex throws
            yield {"type": "diagnostic", "stream": "stderr", "file": file,
                   "kind": "corrupt_index", "error": True, "message":
                   f"Unexpected aborted transaction version {t.version} in transaction "
                   f"index {path.absolute()}, current version is 0"}
            return
    for t in idx.iter_entries():
        yield {"type": "txn_index_entry", "file": file, "version": t.version,
               "producerId": t.producer_id, "firstOffset": t.first_offset,
               "lastOffset": t.last_offset, "lastStableOffset": t.last_stable_offset}
