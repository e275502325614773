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
false (``export --skip-corrupt``), the read goes on at the next position where a whole
batch with a valid CRC and plausible offsets starts (:mod:`kafkalog_cli.format.salvage`,
the resynchronisation ``read`` and ``dump-segment`` use too), and each byte range passed
over is logged and counted (:class:`ReadStats`). A ``.log`` holding no whole batch from
its first byte is not a Kafka log (``not_kafka_files``; export exits 3). A partial batch at the
very end of the partition's last segment (a crash while appending; the broker truncates
it at recovery) is not data loss: it is skipped and counted in ``partial_tail_bytes``.
Anywhere else, bytes that are not whole batches are data loss.

Isolation: with ``read_committed``, records of aborted transactions are dropped. The fate
of a transactional batch is the first ABORT/COMMIT marker of its producer id after it in
the partition (markers in the log are authoritative; ``.txnindex`` files are not needed),
found by replaying the producer state from the slice on
(``ProducerStateManager.replay_batch``, as every replay: a control batch whose marker does
not parse is passed over). When a slice ends before that marker, the task scans ahead,
headers only, through the rest of the partition. A transaction with no marker at all
(still open when the files were copied) is treated as not committed; the planner ends
the read at the last stable offset, as a live consumer stops there.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pyarrow as pa

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

from ..constants import CONTROL_FLAG_MASK, INT32_MAX, LOG_FILE_SUFFIX
from ..errors import CorruptRecordError, DataLossError, KafkalogError, UnreadableError
from ..format import vectorized as _fast
from ..format.record import decode_records_into
from ..format.record_batch import RecordBatch, batch_records_into
from ..schema.record_batch import LENGTH_OFFSET
from ..storage.files import segment_bases
from ..storage.producer_state import ProducerStateManager
from ..storage.segment import LogSegment
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
#: A batch is also emitted once its rows' records blocks (decompressed) reach this many
#: bytes: rows alone let a batch of 100 KB records reach 6.5 GB (a 200 MB segment of
#: 2,000 such records was one batch, a 524 MB pyarrow pool peak in export; 38 MB now).
BATCH_BYTES = 8 << 20
#: Rows the list path (records the group cannot take: with headers, legacy, or without
#: the compiled core and numpy) holds as Python objects before it turns them into an
#: Arrow piece. A record with 2 headers is ~700 bytes of Python objects (its key and value
#: bytes, offset and timestamp ints, a headers list of tuples of str and bytes; 46 MB for
#: 65,536 such records, measured), ~200 in Arrow: pieces of BATCH_ROWS kept ~45 MB of
#: Python heap for a batch of ~13 MB.
LIST_PIECE_ROWS = 4096


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
    #: offsets below the log start offset that a startingOffsets asked for
    lost_offsets: int = 0
    #: ``.log`` files holding no whole batch from their first byte (not a Kafka log)
    not_kafka_files: list[str] = field(default_factory=list)
    #: keys or values a keyDecoder/valueDecoder could not decode (kept as bytes)
    undecoded_records: int = 0

    def add_plan_losses(self, losses: list[dict]) -> None:
        for d in losses:
            self.lost_offsets += d["offsets"]
            self.skipped.append(d)

    def add(self, other: ReadStats) -> None:
        self.corrupt_batches += other.corrupt_batches
        self.corrupt_bytes += other.corrupt_bytes
        self.partial_tail_bytes += other.partial_tail_bytes
        self.aborted_records += other.aborted_records
        self.rows += other.rows
        self.lost_offsets += other.lost_offsets
        self.undecoded_records += other.undecoded_records
        self.skipped.extend(other.skipped)
        self.not_kafka_files.extend(other.not_kafka_files)

    def to_value(self) -> dict:
        """The counters and skips as the statistics accumulator carries them
        (:mod:`kafkalog_cli.spark.executor`)."""
        return {"corrupt_batches": self.corrupt_batches, "corrupt_bytes": self.corrupt_bytes,
                "partial_tail_bytes": self.partial_tail_bytes,
                "aborted_records": self.aborted_records, "rows": self.rows,
                "lost_offsets": self.lost_offsets,
                "undecoded_records": self.undecoded_records, "skipped": list(self.skipped),
                "not_kafka_files": list(self.not_kafka_files)}

    @classmethod
    def from_value(cls, value: dict) -> ReadStats:
        """The inverse of :meth:`to_value` (an accumulator's value on the driver)."""
        return cls(**value)


class _Columns:
    """Rows decoded but not yet emitted, kept as columns.

    v2 batches wait in a *group* (with the compiled core, or numpy): their decompressed records
    blocks, the position of each record
    (:func:`~kafkalog_cli.format.vectorized.scan_lengths`) and one entry per batch; the
    group is decoded at once by :func:`~kafkalog_cli.format.vectorized.decode_blocks`,
    which takes the common shape only (short varints, no headers); the offset range is
    applied to the group's rows as the list path applies it.
    Other batches are decoded by ``batch_records_into`` into column lists, turned into a
    piece every :data:`LIST_PIECE_ROWS` rows. Either kind is turned into Arrow *pieces*
    in batch order; :meth:`build` joins them.

    ``loss`` is called as ``loss(err, size)`` for a batch of the group that does not
    decode (the group then falls back to the list path); callers flush the group
    (:meth:`flush_group`) before reporting any other loss, so losses keep file order.
    """

    def __init__(self, opts: ReadOptions, loss=None):
        self.headers = opts.include_headers
        self.meta = opts.include_batch_metadata
        self.schema = arrow_schema(self.headers, self.meta)
        self.loss = loss
        self.fast = _fast.ROWS
        self.pieces: list[pa.RecordBatch] = []
        #: rows pending (pieces, group, lists), and the bytes of their records blocks
        self.n = 0
        self.bytes = 0
        self._clear_lists()
        self._clear_group()

    # -- the list path ---------------------------------------------------------------------

    def _clear_lists(self) -> None:
        self.keys: list = []
        self.values: list = []
        self.offsets: list = []
        self.ts: list = []
        self.hdrs: list | None = [] if self.headers else None
        self.runs: list[tuple] = []  # (batch, topic, partition, rows)

    def add_records(self, topic: str, partition: int, batch, lo: int | None = None,
                    hi: int | None = None, data: bytes | None = None,
                    count: int | None = None) -> int:
        """Decode ``batch`` (a v2 batch with ``data``: its decompressed records block,
        or a run of ``count`` of its records, see ``RecordBatch.record_pieces``; or an
        uncompressed legacy entry) into the column lists, after any pending group;
        returns the rows added. Raises as ``batch.records()``."""
        self.flush_group()
        offs, tss, keys, vals, hdrs = self.offsets, self.ts, self.keys, self.values, self.hdrs
        n0 = len(offs)
        self.bytes += batch.size if data is None else len(data)
        if data is None:
            k = batch_records_into(batch, offs, tss, keys, vals, hdrs)
        else:
            k = decode_records_into(data, batch[14] if count is None else count,
                                    batch[2], batch[9],
                                    batch[10] if batch[7] & 8 else None,  # LogAppendTime
                                    offs, tss, keys, vals, hdrs)
        k = self._keep(topic, partition, batch, n0, k, lo, hi)
        if len(offs) >= LIST_PIECE_ROWS:
            self._finish_lists()
        return k

    def add_streamed(self, topic: str, partition: int, batch, lo: int | None,
                     hi: int | None, path, max_bytes: int) -> Iterator[None]:
        """Add a v2 batch whose records block is larger than a piece
        (``RecordBatch.small_block`` gave None), or a compressed legacy wrapper, without
        holding all its rows: the records are decoded once into nothing, so a batch that
        does not decode raises before any row is added (as for the other paths), then
        again, a run of whole records at a time (``RecordBatch.record_pieces``: the
        group path takes them as it takes blocks). This yields after each run so the
        caller can emit full Arrow batches in between."""
        self.flush_group()
        if batch.__class__ is not RecordBatch:
            for _ in batch.iter_records(max_bytes):
                pass
            yield from self._add_legacy_streamed(topic, partition, batch, lo, hi, max_bytes)
            return
        for data, k, _ in batch.record_pieces(max_bytes):
            _fast.check_block(data, k)
        for data, k, _ in batch.record_pieces(max_bytes):
            if self.add_fast(topic, partition, batch, lo, hi, path, data, k) is None:
                self.add_records(topic, partition, batch, lo, hi, data, k)
            yield

    def _add_legacy_streamed(self, topic: str, partition: int, batch, lo: int | None,
                             hi: int | None, max_bytes: int) -> Iterator[None]:
        offs, tss, keys, vals, hdrs = self.offsets, self.ts, self.keys, self.values, self.hdrs
        n0 = len(offs)
        for r in batch.iter_records(max_bytes):
            offs.append(r[0])
            tss.append(r[1])
            keys.append(r[2])
            vals.append(r[3])
            if hdrs is not None:
                hdrs.append(r[4])
            self.bytes += (0 if r[2] is None else len(r[2])) + (0 if r[3] is None
                                                                 else len(r[3]))
            if len(offs) >= LIST_PIECE_ROWS or self.bytes >= BATCH_BYTES:
                self._keep(topic, partition, batch, n0, len(offs) - n0, lo, hi)
                self._finish_lists()
                yield
                offs, tss, keys, vals, hdrs = (self.offsets, self.ts, self.keys, self.values,
                                               self.hdrs)
                n0 = len(offs)
        self._keep(topic, partition, batch, n0, len(offs) - n0, lo, hi)
        yield

    def _keep(self, topic: str, partition: int, batch, n0: int, k: int, lo: int | None,
              hi: int | None) -> int:
        """Keep the ``k`` rows added from ``n0`` that lie in ``[lo, hi)``; returns how
        many."""
        offs, tss, keys, vals, hdrs = self.offsets, self.ts, self.keys, self.values, self.hdrs
        if k and ((lo is not None and offs[n0] < lo) or (hi is not None and offs[-1] >= hi)):
            keep = [i for i in range(n0, n0 + k)
                    if (lo is None or offs[i] >= lo) and (hi is None or offs[i] < hi)]
            for col in (offs, tss, keys, vals, hdrs):
                if col is not None:
                    col[n0:] = [col[i] for i in keep]
            k = len(keep)
        if k:
            self.runs.append((batch, topic, partition, k))
            self.n += k
        return k

    def _finish_lists(self) -> None:
        if not self.runs:
            return
        ts = _timestamps_us(self.ts)
        hdrs = None
        if self.headers:
            hdrs = pa.array([h or None for h in self.hdrs], HEADER_TYPE)
        self.pieces.append(self._piece(pa.array(self.keys, pa.binary()),
                                       pa.array(self.values, pa.binary()),
                                       pa.array(self.offsets, pa.int64()), ts, hdrs,
                                       self.runs))
        self._clear_lists()

    # -- the group (vectorised) path ---------------------------------------------------------

    def _clear_group(self) -> None:
        self.blocks: list[bytes] = []
        self.size = 0
        self.positions = _fast.new_positions()
        self.group: list[tuple] = []  # (batch, topic, partition, rows, lo, hi, data, path)

    def add_fast(self, topic: str, partition: int, batch, lo: int | None, hi: int | None,
                 path, data: bytes, count: int | None = None) -> int | None:
        """Queue a v2 batch with its decompressed records block ``data`` (or a run of
        ``count`` of its records) for the group; None when it is not in the group's
        shape (the caller then uses :meth:`add_records`)."""
        if not self.fast or batch.__class__ is not RecordBatch:
            return None
        count = batch[14] if count is None else count
        if (count <= 0
                or not -_TS_LIMIT < batch[9] < _TS_LIMIT
                or not -_TS_LIMIT < batch[10] < _TS_LIMIT
                or not 0 <= batch[2] < _TS_LIMIT):
            return None
        if self.size > _GROUP_BYTES:
            self.flush_group()
        if not (_fast.SCANS_LENGTHS or _fast.scan_lengths(data, count, self.positions)):
            return None
        if self.runs:
            self._finish_lists()
        self.blocks.append(data)
        self.size += len(data)
        self.group.append((batch, topic, partition, count, lo, hi, data, path))
        self.n += count
        self.bytes += len(data)
        return count

    def drop_group(self) -> None:
        """Forget the pending group (its segment is gone: a read that failed)."""
        self.n -= sum(g[3] for g in self.group)
        self.bytes -= self.size
        self._clear_group()

    def full(self) -> bool:
        """Whether the pending rows make a batch: :data:`BATCH_ROWS` rows or
        :data:`BATCH_BYTES` of records."""
        return self.n >= BATCH_ROWS or self.bytes >= BATCH_BYTES

    def flush_group(self) -> None:
        """Decode the pending group into a piece (falling back to the list path)."""
        group = self.group
        if not group:
            return
        counts = [g[3] for g in group]
        lat = [g[0][10] if g[0][7] & 8 else None for g in group]  # LogAppendTime
        got = _fast.decode_rows(self.blocks, self.positions, counts,
                                [g[0][2] for g in group], [g[0][9] for g in group], lat)
        self.n -= sum(counts)
        size = self.size
        self.bytes -= size
        self._clear_group()
        if got is None:
            # not the fast shape (or corrupt): decode batch by batch, which gives the
            # reference values and errors; later batches of this read go there directly
            self.fast = False
            for b, topic, partition, k, lo, hi, data, path in group:
                try:
                    self.add_records(topic, partition, b, lo, hi, data, k)
                except CorruptRecordError as e:
                    self.loss(CorruptRecordError(f"batch does not decode: {e.message}",
                                                 file=path, position=b.position), b.size)
            return
        offsets, ts, keys, values = got
        runs = [(g[0], g[1], g[2], g[3]) for g in group]
        # offset bounds, as the list path: a batch whose first or last record is out of
        # [lo, hi) keeps only its records inside
        if any(g[4] is not None or g[5] is not None for g in group):
            cut = _kept_spans(offsets, group)
            if cut is not None:
                spans, kept = cut
                offsets, ts, keys, values = (_take_spans(a, spans)
                                             for a in (offsets, ts, keys, values))
                runs = [r[:3] + (k,) for r, k in zip(runs, kept, strict=True) if k]
        if not len(offsets):
            return
        self.n += len(offsets)
        self.bytes += size
        hdrs = pa.nulls(len(offsets), HEADER_TYPE) if self.headers else None
        self.pieces.append(self._piece(keys, values, offsets, ts.view(TIMESTAMP_TYPE), hdrs,
                                       runs))

    # -- pieces ------------------------------------------------------------------------------

    def _piece(self, keys, values, offsets, ts, hdrs, runs) -> pa.RecordBatch:
        """A record batch of the schema; the per-batch columns repeat over ``runs``."""
        n = len(offsets)
        topics = [r[1] for r in runs]
        if len(set(topics)) == 1:
            topic = pa.repeat(pa.scalar(topics[0], pa.string()), n)
        else:
            topic = pa.array([t for r in runs for t in [r[1]] * r[3]], pa.string())

        def per_batch(vals, typ):
            # one value a run of rows: a repeated scalar when all runs agree (the usual)
            if vals.count(vals[0]) == len(vals):
                return pa.repeat(pa.scalar(vals[0], typ), n)
            return pa.array([v for v, r in zip(vals, runs, strict=True)
                             for v in [v] * r[3]], typ)

        arrays = [keys, values, topic, per_batch([r[2] for r in runs], pa.int32()), offsets,
                  ts, per_batch([TIMESTAMP_TYPE_IDS[r[0].timestamp_type] for r in runs],
                                pa.int32())]
        if self.headers:
            arrays.append(hdrs)
        if self.meta:
            arrays.append(per_batch([r[0].producer_id for r in runs], pa.int64()))
            arrays.append(per_batch([r[0].producer_epoch for r in runs], pa.int32()))
            arrays.append(per_batch([r[0].base_sequence for r in runs], pa.int32()))
            arrays.append(per_batch([r[0].partition_leader_epoch for r in runs], pa.int32()))
            arrays.append(per_batch([r[0].is_transactional for r in runs], pa.bool_()))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def build(self) -> pa.RecordBatch | None:
        """The pending rows as one record batch (None when every row was filtered)."""
        self.flush_group()
        self._finish_lists()
        pieces = self.pieces
        self.pieces = []
        self.n = 0
        self.bytes = 0
        if not pieces:
            return None
        if len(pieces) == 1:
            return pieces[0]
        return pa.Table.from_batches(pieces, self.schema).combine_chunks().to_batches()[0]


def _kept_spans(offsets: pa.Array, group: list):
    """The rows of a decoded group inside each batch's ``[lo, hi)`` (``group`` entries
    ``(batch, topic, partition, count, lo, hi, ...)``, their rows in order in
    ``offsets``): ``(spans, kept)``, the ``(start, stop)`` spans of row indexes kept and
    each batch's count of rows kept; None when every row is inside. Only a batch whose
    first or last record is out is looked at record by record (the list path's rule);
    the offsets are read through a view of the int64 buffer, so this needs neither numpy
    nor pyarrow.compute."""
    offs = memoryview(offsets.buffers()[1]).cast("q")[offsets.offset:]
    spans: list[list[int]] = []
    kept: list[int] = []
    a = 0
    for g in group:
        lo, hi, z = g[4], g[5], a + g[3]
        if (lo is not None and offs[a] < lo) or (hi is not None and offs[z - 1] >= hi):
            inside = [i for i in range(a, z) if (lo is None or offs[i] >= lo)
                      and (hi is None or offs[i] < hi)]
        else:
            inside = None
        for i, j in ((a, z),) if inside is None else ((i, i + 1) for i in inside):
            if spans and spans[-1][1] == i:
                spans[-1][1] = j
            else:
                spans.append([i, j])
        kept.append(g[3] if inside is None else len(inside))
        a = z
    return None if sum(kept) == a else (spans, kept)


def _take_spans(arr: pa.Array, spans: list[list[int]]) -> pa.Array:
    """The rows of ``arr`` in ``spans``, in order (slices joined: no pyarrow.compute)."""
    if not spans:
        return arr.slice(0, 0)
    if len(spans) == 1:
        return arr.slice(spans[0][0], spans[0][1] - spans[0][0])
    return pa.concat_arrays([arr.slice(s, e - s) for s, e in spans])


def _timestamps_us(ms) -> pa.Array:
    """Epoch milliseconds (int64: a list or a numpy array) as the timestamp column
    (microseconds), the product wrapping in int64 (numpy's, pyarrow.compute's unchecked
    multiply). The int64 array is viewed as timestamps (the same buffer) rather than cast:
    a cast, or the product, through pyarrow.compute costs its ~50 ms import, which every
    export paid for this one column; pyarrow.compute only without numpy."""
    if np is not None:
        return _fast.int64_array(np.asarray(ms, np.int64) * 1000).view(TIMESTAMP_TYPE)
    import pyarrow.compute as pc

    return pc.multiply(pa.array(ms, pa.int64()), 1000).cast(TIMESTAMP_TYPE)


#: A group is decoded once it holds this many bytes of records blocks.
_GROUP_BYTES = 64 << 20
#: Base offsets and timestamps beyond this take the list path (int64 arithmetic of the
#: group could otherwise wrap where Python ints would not).
_TS_LIMIT = 1 << 62


def _later_segments(s: Slice) -> list[int]:
    """Base offsets of the partition's segments after the slice's (none when the
    directory cannot be listed)."""
    try:
        bases = segment_bases(s.directory, (LOG_FILE_SUFFIX,))
    except UnreadableError:
        return []
    return [b for b in bases if b > s.base_offset]


def _aborted_positions(s: Slice, seg: LogSegment, batches: Iterable) -> set[int]:
    """Positions (in this slice's segment) of transactional batches whose transaction was
    aborted or never ended: the producer state replayed from the slice's first batch
    (``ProducerStateManager.replay_batch``, the one per-batch step of every replay), then
    ahead, headers and markers only, until each transaction the slice holds has ended."""
    state = ProducerStateManager()
    pending: dict[int, list[int]] = {}
    dropped: set[int] = set()

    def feed(batch, own: bool) -> None:
        pid = batch.producer_id
        if pid < 0:
            return
        aborted = state.replay_batch(batch)
        if state.producers[pid].current_txn_first_offset is None:
            waiting = pending.pop(pid, None)  # its transaction ended here
            if waiting and aborted is not None:
                dropped.update(waiting)
        elif own and batch.is_transactional and not batch.is_control:
            pending.setdefault(pid, []).append(batch.position)

    for b in batches:
        feed(b, True)
    if pending:
        def ahead() -> Iterator:
            yield from seg.records(s.end).batches()
            for base in _later_segments(s):
                later = LogSegment(s.directory, base)
                try:
                    yield from later.records().batches()
                except KafkalogError:
                    return
                finally:
                    later.close()

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
        # the segment's bytes through LogSegment.records: a memory map, or for a remote
        # .log ranged reads of [start, end) only
        size = seg.size
        end = min(s.end, size)
        start = s.start
        lo, hi = s.start_offset, s.end_offset
        if lo is not None and lo > s.base_offset:
            # the offset index's entry for lo (LogSegment.index_position: one that does
            # not land on a batch holding offsets <= lo is not used), checked whole
            pos = seg.index_position(lo)
            if start < pos < end and _batch_ok(seg, pos):
                start = pos
        # two passes over the headers rather than a list of every batch of the slice;
        # with failOnDataLoss=false (--skip-corrupt) read past damage: from a batch that
        # fails, on at the next good one (format.salvage), each range skipped a loss
        salvage = not opts.fail_on_data_loss

        def records():
            return (seg.salvage_records(start, end) if salvage
                    else seg.records(start, end, whole_range=True))

        dropped = _aborted_positions(s, seg, records().batches()) \
            if opts.read_committed else ()
        fr = records()
        told = 0
        limit = opts.max_decompressed_bytes
        topic, partition = s.topic, s.partition
        seg_base = s.base_offset
        prev_last = None
        cols.fast = _fast.ROWS  # turned off for the slice by a batch it cannot take
        it = fr.batches()
        for b in it:
            if salvage and len(fr.skipped) > told:
                told = _report_skipped(fr, told, cols, stats, opts, path)
            # The CRC and offset-order checks come before the [lo, hi) bounds: the base
            # offset is outside the CRC, so a corrupt one must not end the read early
            # (or skip a batch) silently. A Kafka consumer validates every batch it
            # iterates (check.crcs) and fails on it whatever the wanted range.
            if not b.is_valid:
                cols.flush_group()
                _record_loss(stats, opts, CorruptRecordError(
                    f"Record is corrupt (stored crc = {b.crc}, computed crc = "
                    f"{b.compute_crc()})", file=path, position=b.position), b.size)
                continue
            v2 = b.__class__ is RecordBatch
            if v2:  # the fields by index: properties cost ~0.1 us each, 20k batches a GB
                first = b[2]
                last = first + b[8]
            else:
                first = last = b.last_offset
            if (first < seg_base or last < first or last - seg_base > INT32_MAX
                    or (prev_last is not None and first <= prev_last)):
                cols.flush_group()
                _record_loss(stats, opts, CorruptRecordError(
                    f"batch offsets {first}..{last} do not follow the previous batch's "
                    f"last offset {prev_last} in the segment based at {seg_base}",
                    file=path, position=b.position), b.size)
                continue
            prev_last = last
            if lo is not None and last < lo:
                continue
            if hi is not None and b.magic >= 2 and first >= hi:
                break
            if (b[7] & CONTROL_FLAG_MASK) if v2 else b.is_control:
                continue
            if dropped and b.position in dropped:
                stats.aborted_records += b.records_count if isinstance(b, RecordBatch) else 1
                continue
            try:
                if v2:
                    # an uncompressed block is read where it lies in the map (a copy of
                    # each 12 KB block cost more than decoding it: fresh heap pages); the
                    # group drops these views before the segment closes
                    data = b.small_block(limit, view=True)
                    big = data is None
                else:
                    data = None
                    big = bool(b.compression)
                if big:  # streamed, emitting full Arrow batches as the rows come
                    for _ in cols.add_streamed(topic, partition, b, lo, hi, path, limit):
                        if cols.full():
                            yield from _emit(cols, stats)
                    continue
                k = None if data is None else cols.add_fast(topic, partition, b, lo, hi,
                                                            path, data)
                if k is None:
                    cols.fast = False
                    k = cols.add_records(topic, partition, b, lo, hi, data)
            except CorruptRecordError as e:
                cols.flush_group()
                _record_loss(stats, opts, CorruptRecordError(
                    f"batch does not decode: {e.message}", file=path, position=b.position),
                    b.size)
                continue
            if cols.full():
                yield from _emit(cols, stats)
        for _ in it:  # after a stop at ``hi``: the rest of the slice's headers, so that
            pass      # bytes that are not whole batches further on are still reported
        if salvage:
            _report_skipped(fr, told, cols, stats, opts, path)
        _report_slice_end(fr, s, cols, stats, opts, end, size)
        cols.flush_group()  # the group's batches are views of this segment
    except BaseException:
        cols.drop_group()
        raise
    finally:
        seg.close()


def _report_skipped(fr, told: int, cols: _Columns, stats: ReadStats, opts: ReadOptions,
                    path: str) -> int:
    """The ranges a salvaging read passed over since the ``told`` first, each a loss (in
    file order: the pending group is flushed first); returns how many are told."""
    if len(fr.skipped) > told:
        cols.flush_group()
        for k in fr.skipped[told:]:
            _record_loss(stats, opts, CorruptRecordError(
                k.reason, file=path, position=k.position), k.size)
    return len(fr.skipped)


def _report_slice_end(fr, s: Slice, cols: _Columns, stats: ReadStats, opts: ReadOptions,
                      end: int, size: int) -> None:
    """What the slice's read left after its last whole batch (``fr``: its records, read
    to ``end`` of the ``size``-byte segment): a file that is not a Kafka log, a stop
    error, a partial tail at the partition's end, or bytes hiding later batches (a
    loss)."""
    path = s.log_path
    if s.start == 0 and fr.valid_end == 0 and fr.invalid_bytes and \
            not getattr(fr, "skipped", None):
        # not a Kafka log at all (no whole batch from its first byte): neither a tail
        # nor data loss; the export exits 3, as dump-segment and read
        stats.not_kafka_files.append(path)
    elif fr.stop_error is not None:
        cols.flush_group()
        err = fr.stop_error
        err.file = err.file or path
        _record_loss(stats, opts, err, fr.invalid_bytes)
    elif fr.invalid_bytes and s.last_segment and end == size:
        stats.partial_tail_bytes += fr.invalid_bytes
        log.info("kafkalog: %s: %d bytes of a partial batch at the end skipped", path,
                 fr.invalid_bytes)
    elif fr.invalid_bytes:
        # Only the partition's last segment, at its end, can hold a partial batch (a
        # broker appends only to the active segment, and recovery truncates it). Bytes
        # that are not whole batches anywhere else (a batch size running past the end
        # of a rolled segment or of this slice) hide the batches after them: data loss.
        cols.flush_group()
        _record_loss(stats, opts, _not_batches(fr.view, fr.valid_end, end, size, path),
                     fr.invalid_bytes)


def _not_batches(view, pos: int, end: int, size: int, path: str) -> CorruptRecordError:
    """The error for bytes ``[pos, end)`` (read already) of a ``size``-byte segment that
    are not whole batches and are not a partial tail (see :func:`read_slice`)."""
    where = ("the end of a segment that is not the partition's last" if end == size
             else "the next split's first batch")
    n = end - pos
    if n >= 12:
        size = struct.unpack_from(">i", view, pos + LENGTH_OFFSET)[0]
        what = f"a batch size of {size} runs past byte {end}, {where}"
    else:
        what = f"too short for a batch header before {where}"
    return CorruptRecordError(f"{n} bytes are not a whole batch: {what}", file=path,
                              position=pos)


def _batch_ok(seg: LogSegment, pos: int) -> bool:
    for b in seg.records(pos).batches():
        return b.is_valid
    return False


def read_slices(slices: Iterable[Slice], opts: ReadOptions,
                stats: ReadStats | None = None) -> Iterator[pa.RecordBatch]:
    """Arrow record batches of every slice, in order: up to :data:`BATCH_ROWS` rows, and
    about :data:`BATCH_BYTES` of records (a batch ends after the block that reaches it)."""
    stats = stats if stats is not None else ReadStats()
    cols = _Columns(opts, lambda err, size: _record_loss(stats, opts, err, size))
    for s in slices:
        yield from read_slice(s, opts, cols, stats)
    if cols.n:
        yield from _emit(cols, stats)


def _emit(cols: _Columns, stats: ReadStats) -> Iterator[pa.RecordBatch]:
    """The pending rows as one batch, if any row is left. A generator of its own, so no
    frame of the reading generators keeps the batch once the consumer is done with it: a
    batch held while the next one is built would double the Arrow memory of a read."""
    rb = cols.build()
    if rb is not None:
        stats.rows += rb.num_rows
        yield rb
