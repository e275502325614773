"""Decoding :class:`~kafkalog_cli.spark.plan.Slice` s into Arrow record batches with the
columns of Spark's Kafka source.

Used by the Spark data source on executors and by ``kafkalog export --engine local``, so
both engines produce the same rows. Needs pyarrow, not pyspark.

Columns (``schema_ddl``): ``key binary, value binary, topic string, partition int,
offset long, timestamp timestamp, timestampType int``, then ``headers
array<struct<key:string,value:binary>>`` with ``includeHeaders`` and ``producerId long,
producerEpoch int, baseSequence int, partitionLeaderEpoch int, isTransactional boolean``
with ``includeBatchMetadata``.

As in Spark's Kafka source: ``timestampType`` is 0 CreateTime, 1 LogAppendTime and -1
NoTimestampType (magic v0 messages), whose ``timestamp`` is then -1 ms
(1969-12-31 23:59:59.999 UTC), the value a consumer reports; ``headers`` is null for a
record without headers; control records (transaction markers, KRaft control records)
are never returned.

Integrity: every batch's CRC is checked, and its offsets must follow the previous
batch's inside the segment (as recovery's strict checks: the base offset, outside the CRC,
is not trusted blindly). A corrupt batch (CRC mismatch, offsets out of order, records
that do not decode, or bytes that are not a batch) fails the read with :class:`DataLossError`
naming the file and byte position when ``failOnDataLoss`` is true (the default); when
false, it is skipped, logged and counted (:class:`ReadStats`). A partial batch at the
very end of a segment (a crash while appending; the broker truncates it at recovery) is
not data loss: it is skipped and counted in ``partial_tail_bytes``.

Isolation: with ``read_committed``, records of aborted transactions are dropped. The fate
of a transactional batch is the first ABORT/COMMIT marker of its producer id after it in
the partition (markers in the log are authoritative; ``.txnindex`` files are not needed).
When a slice ends before that marker, the task scans ahead, headers only, through the rest
of the partition. A transaction with no marker at all (still open when the files were
copied) is treated as not committed, but records after it are still returned, unlike a
live consumer that stops at the last stable offset.
"""

from __future__ import annotations

import json
import logging
import os
import struct
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from ..constants import INT32_MAX, LOG_FILE_SUFFIX
from ..errors import CorruptRecordError, KafkalogError
from ..format.records import FileRecords, RecordBatch
from ..storage.segment import LogSegment, open_view
from .plan import ReadOptions, Slice

log = logging.getLogger("kafkalog.spark")

BASE_DDL = ("key binary, value binary, topic string, partition int, offset long, "
            "timestamp timestamp, timestampType int")
HEADERS_DDL = "headers array<struct<key:string,value:binary>>"
METADATA_DDL = ("producerId long, producerEpoch int, baseSequence int, "
                "partitionLeaderEpoch int, isTransactional boolean")

HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
TIMESTAMP_TYPE = pa.timestamp("us", tz="UTC")
BASE_FIELDS = [
    pa.field("key", pa.binary()),
    pa.field("value", pa.binary()),
    pa.field("topic", pa.string()),
    pa.field("partition", pa.int32()),
    pa.field("offset", pa.int64()),
    pa.field("timestamp", TIMESTAMP_TYPE),
    pa.field("timestampType", pa.int32()),
]
HEADERS_FIELD = pa.field("headers", HEADER_TYPE)
METADATA_FIELDS = [
    pa.field("producerId", pa.int64()),
    pa.field("producerEpoch", pa.int32()),
    pa.field("baseSequence", pa.int32()),
    pa.field("partitionLeaderEpoch", pa.int32()),
    pa.field("isTransactional", pa.bool_()),
]
TIMESTAMP_TYPE_IDS = {"CreateTime": 0, "LogAppendTime": 1, "NoTimestampType": -1}
BATCH_ROWS = 65536
_CONTROL_KEY = struct.Struct(">hh")


def schema_ddl(include_headers: bool = False, include_batch_metadata: bool = False) -> str:
    parts = [BASE_DDL]
    if include_headers:
        parts.append(HEADERS_DDL)
    if include_batch_metadata:
        parts.append(METADATA_DDL)
    return ", ".join(parts)


def arrow_schema(include_headers: bool = False,
                 include_batch_metadata: bool = False) -> pa.Schema:
    fields = list(BASE_FIELDS)
    if include_headers:
        fields.append(HEADERS_FIELD)
    if include_batch_metadata:
        fields.extend(METADATA_FIELDS)
    return pa.schema(fields)


class DataLossError(CorruptRecordError):
    """A corrupt batch met while ``failOnDataLoss`` is true."""

    def __str__(self) -> str:
        return ("kafkalog: data loss: " + super().__str__()
                + " (failOnDataLoss=false, or --skip-corrupt, skips corrupt batches)")


@dataclass
class ReadStats:
    """What a read skipped: corrupt batches (with ``failOnDataLoss=false``), partial
    batches at segment ends, and the records dropped by ``read_committed``."""

    corrupt_batches: int = 0
    corrupt_bytes: int = 0
    partial_tail_bytes: int = 0
    aborted_records: int = 0
    rows: int = 0
    skipped: list[dict] = field(default_factory=list)

    def add(self, other: ReadStats) -> None:
        self.corrupt_batches += other.corrupt_batches
        self.corrupt_bytes += other.corrupt_bytes
        self.partial_tail_bytes += other.partial_tail_bytes
        self.aborted_records += other.aborted_records
        self.rows += other.rows
        self.skipped.extend(other.skipped)


class _Columns:
    """Column buffers of the rows not yet emitted."""

    def __init__(self, opts: ReadOptions):
        self.headers = opts.include_headers
        self.meta = opts.include_batch_metadata
        self.schema = arrow_schema(self.headers, self.meta)
        self.clear()

    def clear(self) -> None:
        self.keys: list = []
        self.values: list = []
        self.topics: list = []
        self.parts: list = []
        self.offsets: list = []
        self.ts: list = []
        self.tstype: list = []
        self.hdrs: list = []
        self.m: list[list] = [[], [], [], [], []]
        self.n = 0

    def add(self, topic: str, partition: int, batch, recs: list) -> None:
        k = len(recs)
        if not k:
            return
        offs, tss, keys, vals, hdrs = zip(*recs, strict=True)
        self.offsets.extend(offs)
        self.ts.extend(tss)
        self.keys.extend(keys)
        self.values.extend(vals)
        self.topics.extend([topic] * k)
        self.parts.extend([partition] * k)
        self.tstype.extend([TIMESTAMP_TYPE_IDS[batch.timestamp_type]] * k)
        if self.headers:
            self.hdrs.extend(h or None for h in hdrs)
        if self.meta:
            m = self.m
            m[0].extend([batch.producer_id] * k)
            m[1].extend([batch.producer_epoch] * k)
            m[2].extend([batch.base_sequence] * k)
            m[3].extend([batch.partition_leader_epoch] * k)
            m[4].extend([batch.is_transactional] * k)
        self.n += k

    def build(self) -> pa.RecordBatch:
        ts = pa.array(self.ts, pa.int64())
        arrays = [
            pa.array(self.keys, pa.binary()),
            pa.array(self.values, pa.binary()),
            pa.array(self.topics, pa.string()),
            pa.array(self.parts, pa.int32()),
            pa.array(self.offsets, pa.int64()),
            pc.multiply(ts, 1000).cast(TIMESTAMP_TYPE),
            pa.array(self.tstype, pa.int32()),
        ]
        if self.headers:
            arrays.append(pa.array(self.hdrs, HEADER_TYPE))
        if self.meta:
            arrays.append(pa.array(self.m[0], pa.int64()))
            arrays.append(pa.array(self.m[1], pa.int32()))
            arrays.append(pa.array(self.m[2], pa.int32()))
            arrays.append(pa.array(self.m[3], pa.int32()))
            arrays.append(pa.array(self.m[4], pa.bool_()))
        rb = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        self.clear()
        return rb


def _control_type(batch) -> int | None:
    """ControlRecordType of a control batch's first record (0 ABORT, 1 COMMIT)."""
    try:
        recs = batch.records()
    except KafkalogError:
        return None
    if not recs or recs[0][2] is None or len(recs[0][2]) < 4:
        return None
    return _CONTROL_KEY.unpack_from(recs[0][2])[1]


def _later_segments(s: Slice) -> list[str]:
    try:
        names = sorted(n for n in os.listdir(s.directory) if n.endswith(LOG_FILE_SUFFIX))
    except OSError:
        return []
    return [os.path.join(s.directory, n) for n in names
            if n[:20].isdigit() and int(n[:20]) > s.base_offset]


def _aborted_positions(s: Slice, view, batches: list) -> set[int]:
    """Positions (in this slice's segment) of transactional batches whose transaction was
    aborted or never ended."""
    pending: dict[int, list[int]] = {}
    dropped: set[int] = set()

    def feed(batch, own: bool) -> None:
        if not batch.is_transactional:
            return
        pid = batch.producer_id
        if batch.is_control:
            waiting = pending.pop(pid, None)
            if waiting and _control_type(batch) != 1:  # not COMMIT: ABORT (or unknown)
                dropped.update(waiting)
        elif own:
            pending.setdefault(pid, []).append(batch.position)

    for b in batches:
        feed(b, True)
    if pending:
        def ahead() -> Iterator:
            yield from FileRecords(view, s.end).batches()
            for path in _later_segments(s):
                try:
                    v = open_view(path)
                except KafkalogError:
                    return
                yield from FileRecords(v).batches()

        for b in ahead():
            feed(b, False)
            if not pending:
                break
    for waiting in pending.values():
        dropped.update(waiting)
    return dropped


def _record_loss(stats: ReadStats, opts: ReadOptions, err: CorruptRecordError,
                 size: int) -> None:
    if opts.fail_on_data_loss:
        raise DataLossError(err.message, file=err.file, position=err.position) from err
    stats.corrupt_batches += 1
    stats.corrupt_bytes += size
    stats.skipped.append({"file": err.file, "position": err.position, "bytes": size,
                          "error": err.message})
    log.warning("kafkalog: skipped a corrupt batch (failOnDataLoss=false): %s", err)


def read_slice(s: Slice, opts: ReadOptions, cols: _Columns, stats: ReadStats,
               ) -> Iterator[pa.RecordBatch]:
    """Decode one slice into ``cols``, yielding full Arrow batches as they fill."""
    path = s.log_path
    seg = LogSegment(s.directory, s.base_offset)
    try:
        view = seg.view
        end = min(s.end, len(view))
        start = s.start
        lo, hi = s.start_offset, s.end_offset
        if lo is not None and lo > s.base_offset:
            idx = seg.offset_index
            if idx is not None:
                pos = idx.lookup(lo).position
                if start < pos < end and _batch_ok(view, pos):
                    start = pos
        fr = FileRecords(view, start, end, file=path)
        batches = list(fr.batches())
        dropped = _aborted_positions(s, view, batches) if opts.read_committed else ()
        topic, partition = s.topic, s.partition
        seg_base = s.base_offset
        prev_last = None
        for b in batches:
            if lo is not None and b.last_offset < lo:
                continue
            if hi is not None and b.magic >= 2 and b.base_offset >= hi:
                break
            if not b.is_valid:
                _record_loss(stats, opts, CorruptRecordError(
                    f"Record is corrupt (stored crc = {b.crc}, computed crc = "
                    f"{b.compute_crc()})", file=path, position=b.position), b.size)
                continue
            first = b.base_offset if b.magic >= 2 else b.last_offset
            last = b.last_offset
            if (first < seg_base or last < first or last - seg_base > INT32_MAX
                    or (prev_last is not None and first <= prev_last)):
                _record_loss(stats, opts, CorruptRecordError(
                    f"batch offsets {first}..{last} do not follow the previous batch's "
                    f"last offset {prev_last} in the segment based at {seg_base}",
                    file=path, position=b.position), b.size)
                continue
            prev_last = last
            if b.is_control:
                continue
            if b.position in dropped:
                stats.aborted_records += b.records_count if isinstance(b, RecordBatch) else 1
                continue
            try:
                recs = b.records()
            except CorruptRecordError as e:
                _record_loss(stats, opts, CorruptRecordError(
                    f"batch does not decode: {e.message}", file=path, position=b.position),
                    b.size)
                continue
            if (lo is not None and recs and recs[0][0] < lo) or (
                    hi is not None and recs and recs[-1][0] >= hi):
                recs = [r for r in recs if (lo is None or r[0] >= lo)
                        and (hi is None or r[0] < hi)]
            cols.add(topic, partition, b, recs)
            stats.rows += len(recs)
            if cols.n >= BATCH_ROWS:
                yield cols.build()
        if fr.stop_error is not None:
            err = fr.stop_error
            err.file = err.file or path
            _record_loss(stats, opts, err, fr.invalid_bytes)
        elif fr.invalid_bytes and end == len(view):
            stats.partial_tail_bytes += fr.invalid_bytes
            log.info("kafkalog: %s: %d bytes of a partial batch at the end skipped", path,
                     fr.invalid_bytes)
    finally:
        seg.close()


def _batch_ok(view, pos: int) -> bool:
    for b in FileRecords(view, pos).batches():
        return b.is_valid
    return False


def read_slices(slices: Iterable[Slice], opts: ReadOptions,
                stats: ReadStats | None = None) -> Iterator[pa.RecordBatch]:
    """Arrow record batches (up to 64k rows) of every slice, in order."""
    stats = stats if stats is not None else ReadStats()
    cols = _Columns(opts)
    for s in slices:
        yield from read_slice(s, opts, cols, stats)
    if cols.n:
        yield cols.build()
    if opts.data_loss_path and (stats.corrupt_batches or stats.partial_tail_bytes):
        write_loss_report(opts.data_loss_path, stats)


def write_loss_report(directory: str, stats: ReadStats) -> None:
    """One JSON file per task in ``directory``: what it skipped (``dataLossPath``)."""
    os.makedirs(directory, exist_ok=True)
    name = f"task-{int(time.time() * 1000)}-{uuid.uuid4().hex[:12]}.json"
    tmp = os.path.join(directory, "." + name)
    with open(tmp, "w") as f:
        json.dump({"corrupt_batches": stats.corrupt_batches,
                   "corrupt_bytes": stats.corrupt_bytes,
                   "partial_tail_bytes": stats.partial_tail_bytes,
                   "skipped": stats.skipped}, f)
    os.replace(tmp, os.path.join(directory, name))


def read_loss_reports(directory: str) -> ReadStats:
    """Sum the reports :func:`write_loss_report` left in ``directory``."""
    total = ReadStats()
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return total
    for n in names:
        if n.startswith("task-") and n.endswith(".json"):
            with open(os.path.join(directory, n)) as f:
                d = json.load(f)
            total.corrupt_batches += d["corrupt_batches"]
            total.corrupt_bytes += d["corrupt_bytes"]
            total.partial_tail_bytes += d["partial_tail_bytes"]
            total.skipped.extend(d["skipped"])
    return total
