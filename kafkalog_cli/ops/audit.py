"""``kafkalog audit``: one row of health figures per partition of many log directories.

Per partition: segments, batches, records, bytes, first/last offset, first/last and max
timestamp, codecs and magic values seen, CRC failures, invalid bytes at segment ends,
index problems and warnings (``ops.verify.verify_segment``, as ``verify-index`` reports
them), transactional and control batches.

A partition has problems (``ok`` false, exit 1 from the CLI) when a batch fails its CRC,
does not decode, or has offsets that do not follow the previous batch's in its segment,
when a segment ends with invalid bytes (a broker would truncate them at recovery: data
that no consumer saw; counted here as ``invalid_bytes``, not as an index problem), when
verify-index finds an index problem, or when a file the broker parses as it loads the
log does not parse (``leader-epoch-checkpoint``, ``partition.metadata``, ``quorum-state``,
the log directory's ``meta.properties`` and offset checkpoints; see
:func:`~kafkalog_cli.storage.dir_files.partition_file_problems`).

With ``registry`` (``--key-decoder`` / ``--value-decoder``), each partition's keys and
values are also decoded through Schema Registry (:mod:`kafkalog_cli.registry`):
``decodedRecords``, ``undecodedRecords`` (a problem: one line per schema id not found,
one for the others) and the ``schemaIds`` seen; null when not asked. Kafka's internal
topics and ``_schemas`` are not decoded.

Engines: ``local`` audits the partitions one after the other in this process; ``spark``
distributes them, several per task, balanced by bytes. Both run
:func:`audit_partition`, so they give the same rows.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from ..constants import DEFAULT_MAX_DECOMPRESSED_BYTES, INT32_MAX, NO_TIMESTAMP
from ..errors import InvalidRecordError, KafkalogError
from ..format.record import decode_records_into
from ..format.records import FileRecords
from ..storage.dir_files import log_dir_file_problems, partition_file_problems
from ..storage.files import segment_bases
from ..storage.segment import LogSegment
from .engine import AUTO_LOCAL_MAX_BYTES, choose_engine  # noqa: F401 - audit's names too
from .verify import INVALID_BYTES, NO_WHOLE_BATCH, verify_segment


@dataclass
class PartitionAudit:
    """Figures for one partition directory (offsets and timestamps None when empty;
    timestamps in ms)."""

    log_dir: str | None
    topic: str
    partition: int
    directory: str
    segments: int = 0
    batches: int = 0
    records: int = 0
    bytes: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    first_timestamp: int | None = None
    last_timestamp: int | None = None
    max_timestamp: int | None = None
    codecs: list[str] = field(default_factory=list)
    magics: list[int] = field(default_factory=list)
    corrupt_batches: int = 0
    invalid_bytes: int = 0
    index_problems: int = 0
    index_warnings: int = 0
    transactional_batches: int = 0
    control_batches: int = 0
    control_records: int = 0
    problems: list[str] = field(default_factory=list)
    #: ``.log`` files holding no whole batch from their first byte (not Kafka logs:
    #: exit 3); each is also one of :attr:`problems`
    not_kafka_files: list[str] = field(default_factory=list)
    #: with --key-decoder/--value-decoder: records whose keys and values decoded, those
    #: with one that did not, the schema ids seen (None: not asked)
    decoded_records: int | None = None
    undecoded_records: int | None = None
    schema_ids: list[int] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        """The JSON object (docs/json.md, ``audit.json``: Kafka's camelCase names)."""
        return {
            "logDir": self.log_dir, "topic": self.topic, "partition": self.partition,
            "partitionDir": self.directory, "segments": self.segments,
            "batches": self.batches, "records": self.records, "bytes": self.bytes,
            "firstOffset": self.first_offset, "lastOffset": self.last_offset,
            "firstTimestamp": self.first_timestamp, "lastTimestamp": self.last_timestamp,
            "maxTimestamp": self.max_timestamp, "codecs": self.codecs, "magics": self.magics,
            "corruptBatches": self.corrupt_batches, "invalidBytes": self.invalid_bytes,
            "indexProblems": self.index_problems, "indexWarnings": self.index_warnings,
            "transactionalBatches": self.transactional_batches,
            "controlBatches": self.control_batches, "controlRecords": self.control_records,
            "decodedRecords": self.decoded_records,
            "undecodedRecords": self.undecoded_records, "schemaIds": self.schema_ids,
            "problems": self.problems, "ok": self.ok,
        }


@dataclass
class AuditResult:
    partitions: list[PartitionAudit] = field(default_factory=list)
    engine: str = "local"
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.partitions)

    @property
    def unreadable(self) -> bool:
        """A ``.log`` is not a Kafka log (exit 3, as dump-segment and read say)."""
        return any(p.not_kafka_files for p in self.partitions)

    def partitions_by_log_dir(self) -> list[PartitionAudit]:
        return sorted(self.partitions, key=lambda p: (p.log_dir or "", p.topic, p.partition))

    def to_dict(self) -> dict:
        return {"ok": self.ok, "engine": self.engine,
                "partitions": [p.to_dict() for p in self.partitions]}


def _first_ts(b) -> int:
    if b.magic >= 2 and b.timestamp_type == "CreateTime" and not b.has_delete_horizon:
        return b.base_timestamp
    return b.max_timestamp


#: A group of records blocks is decoded once it holds this many bytes or this many
#: batches: each queued batch costs ~600 bytes besides its block (the batch tuple, the
#: block's bytes object, its record positions), so a segment of small batches would
#: otherwise queue them all (1 GB for 1.64 M one-record batches). The group and its joined
#: copy are both held while it decodes: at 64 MiB, audit's peak anonymous RSS on a 1 GiB
#: segment was 167 MB; at 8 MiB 33 MB, with no more CPU (issue 28: under 64 MiB)
_GROUP_BYTES = 8 << 20
_GROUP_BATCHES = 8192
#: Records a process decodes one block at a time (``decode_records_into``) before its first
#: group decode: the group path imports numpy and pyarrow (0.13 s of CPU, measured), more
#: than the per-record path spends on this many records (0.013 s in pure Python, 0.0014 s
#: with the compiled core, 100-record blocks); a small input never pays it, and a large
#: one loses at most that much. tests/ops/test_ops_audit_group_path.py spends the budget
#: (``_direct_left``) to compare both paths.
DIRECT_RECORDS = 20_000
_direct_left = DIRECT_RECORDS


class _RecordsCheck:
    """Decodes the records of v2 batches as ``export`` (:mod:`kafkalog_cli.spark.rows`)
    and a consumer do, into nothing: a batch whose CRC matches can still hold a block that
    does not decompress, or fewer or more records than ``recordsCount`` declares.

    Blocks are queued and decoded a group at a time by
    :func:`~kafkalog_cli.format.vectorized.decode_group` (numpy; no Python per record); a
    group it refuses (a longer varint, headers, a malformed record), any block outside
    its shape, and the groups of the process's first :data:`DIRECT_RECORDS` records are
    decoded by ``decode_records_into``, whose errors are the reference.
    ``failed`` collects ``(batch, records, message)`` of the batches that do not decode.
    """

    def __init__(self):
        from ..format import vectorized

        self.fast = vectorized if vectorized.AVAILABLE else None
        self.failed: list[tuple] = []
        self._clear()

    def _clear(self) -> None:
        self.group: list[tuple] = []  # (batch, data)
        self.positions: list[int] = []
        self.size = 0

    def add(self, b, data) -> None:
        """Queue (or decode) batch ``b`` with its decompressed block ``data``."""
        count = b[14]
        if self.fast is not None and count > 0 and self.fast.scan_lengths(
                data, count, self.positions):
            self.group.append((b, data))
            self.size += len(data)
            if self.size > _GROUP_BYTES or len(self.group) >= _GROUP_BATCHES:
                self.flush()
        else:
            self._decode(b, data)

    def _decode(self, b, data) -> None:
        sink: list = []
        try:
            decode_records_into(data, b[14], b[2], b[9], b[10] if b[7] & 8 else None,
                                sink, sink, sink, sink, None)
        except KafkalogError as e:
            self.failed.append((b, b[14], f"batch does not decode ({e.message})"))

    def flush(self) -> None:
        global _direct_left
        group = self.group
        if not group:
            return
        if len(self.positions) <= _direct_left:
            _direct_left -= len(self.positions)
            self._clear()
            for b, data in group:
                self._decode(b, data)
            return
        _direct_left = 0
        bases = [0]
        for _, data in group[:-1]:
            bases.append(bases[-1] + len(data))
        got = self.fast.decode_group(b"".join(d for _, d in group), self.positions, bases,
                                     [b[14] for b, _ in group])
        self._clear()
        if got is None:
            for b, data in group:
                self._decode(b, data)


def _check_v2(b, check: _RecordsCheck, max_bytes: int) -> None:
    """Queue v2 batch ``b`` on ``check`` when its decompressed block fits in a piece
    (``RecordBatch.small_block``); decode a larger one now, a run of whole records at a
    time (``RecordBatch.record_pieces``), into nothing, so memory stays a piece whatever
    the block's size. Raises as ``iter_records``."""
    if b[14] < 0:
        raise InvalidRecordError(f"Found invalid record count {b[14]} in magic v2 batch")
    data = b.small_block(max_bytes)
    if data is not None:
        check.add(b, data)
        return
    from ..format.vectorized import check_block

    for data, k, _ in b.record_pieces(max_bytes):
        check_block(data, k)


def audit_partition(log_dir: str | None, topic: str, partition: int,
                    directory: str, bases=None, *,
                    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
                    ) -> PartitionAudit:
    """Audit one partition directory. Never raises for bad bytes (they are counted); an
    unreadable file becomes a problem. A batch whose records decompress to more than
    ``max_decompressed_bytes`` is a corrupt batch."""
    a = PartitionAudit(log_dir, topic, partition, directory)
    # the small files a broker parses when it loads the log (a corrupt one takes the log
    # directory offline): the log directory's, then the partition's
    if log_dir is not None:
        a.problems += [str(e) for e in log_dir_file_problems(log_dir)]
    a.problems += [str(e) for e in partition_file_problems(directory)]
    if bases is None:
        bases = segment_bases(directory, (".log",))
    codecs: set[str] = set()
    magics: set[int] = set()
    max_ts: int | None = None
    check = _RecordsCheck()
    for base in bases:
        seg = LogSegment(directory, base)
        try:
            a.segments += 1
            verdict = verify_segment(seg)
            for p in verdict.problems:
                if p.kind in (INVALID_BYTES, NO_WHOLE_BATCH):
                    continue  # the .log's own bytes: counted below, as invalid_bytes
                a.index_problems += 1
                a.problems.append(f"{p.file}: {p.message}")
            a.index_warnings += len(verdict.warnings)
            view = seg.view
            a.bytes += len(view)
            fr = FileRecords(view, file=seg.log_path)
            prev_last = None
            for b in fr.batches():
                a.batches += 1
                magics.add(b.magic)
                codecs.add(b.compression_name)
                if not b.is_valid:
                    a.corrupt_batches += 1
                    a.problems.append(f"{seg.log_path} at byte {b.position}: batch CRC "
                                      f"mismatch (stored {b.crc}, computed {b.compute_crc()})")
                    continue
                try:
                    if b.magic >= 2:
                        # decode every v2 batch, as export and a consumer do: a valid
                        # CRC does not make the records block decodable
                        _check_v2(b, check, max_decompressed_bytes)
                        n = b.records_count
                        first = b.base_offset
                    else:
                        # records, keys and values, as a consumer reads them: a message
                        # whose key or value overruns it is whole but does not decode
                        n = 0
                        for r in b.iter_records(max_decompressed_bytes):
                            if not n:
                                first = r[0]
                            n += 1
                except KafkalogError as e:
                    a.corrupt_batches += 1
                    a.problems.append(f"{seg.log_path} at byte {b.position}: batch does not "
                                      f"decode ({e.message})")
                    continue
                last = b.last_offset
                if (first < base or last < first or last - base > INT32_MAX
                        or (prev_last is not None and first <= prev_last)):
                    a.corrupt_batches += 1
                    a.problems.append(f"{seg.log_path} at byte {b.position}: batch offsets "
                                      f"{first}..{last} do not follow offset {prev_last}")
                    continue
                prev_last = last
                a.records += n
                if b.is_transactional:
                    a.transactional_batches += 1
                if b.is_control:
                    a.control_batches += 1
                    a.control_records += n
                if a.first_offset is None:
                    a.first_offset = first
                a.last_offset = b.last_offset
                # -1 is NO_TIMESTAMP (magic 0, or a producer that set none): not a time
                if b.max_timestamp != NO_TIMESTAMP:
                    if a.first_timestamp is None:
                        a.first_timestamp = _first_ts(b)
                    a.last_timestamp = b.max_timestamp
                    max_ts = b.max_timestamp if max_ts is None else max(max_ts, b.max_timestamp)
            check.flush()  # the blocks may be views of this segment
            for b, n, msg in check.failed:
                a.corrupt_batches += 1
                a.records -= n
                a.problems.append(f"{seg.log_path} at byte {b.position}: {msg}")
            check.failed.clear()
            if fr.invalid_bytes:
                a.invalid_bytes += fr.invalid_bytes
                why = f" ({fr.stop_error.message})" if fr.stop_error else ""
                if fr.valid_end == 0:
                    a.not_kafka_files.append(str(seg.log_path))
                    a.problems.append(f"{seg.log_path} at byte 0: no whole record batch: "
                                      f"{fr.invalid_bytes} bytes are truncated or not a "
                                      f"Kafka log{why}")
                else:
                    a.problems.append(f"{seg.log_path} at byte {fr.valid_end}: "
                                      f"{fr.invalid_bytes} invalid bytes at the end{why}")
        except KafkalogError as e:
            a.problems.append(str(e))
        finally:
            seg.close()
    a.max_timestamp = max_ts
    a.codecs = sorted(codecs)
    a.magics = sorted(magics)
    return a


def audit_decoding(a: PartitionAudit, registry,
                   max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> None:
    """Decode ``a``'s partition's keys and values through Schema Registry (``registry``:
    a :class:`~kafkalog_cli.registry.decoder.SchemaRegistryOptions`) and set its
    decoding figures; what does not decode is a problem (a record of a corrupt batch was
    counted as such already, and is not decoded)."""
    from ..format.record_batch import RecordBatch
    from ..storage.log import Log
    from ..storage.segment import iter_records_of

    if a.topic.startswith("__") or a.topic == "_schemas":
        return
    try:
        dec = registry.decoder(a.topic, a.directory)
    except KafkalogError as e:
        a.problems.append(f"{a.directory}: {e}")
        return
    ok = bad = 0
    ids: set[int] = set()
    log = Log.open(a.directory)
    try:
        for seg, b in log.batches_from(0):
            if type(b) is RecordBatch and b.is_control:
                continue
            try:
                for r in iter_records_of(b, seg.log_path, max_decompressed_bytes):
                    d = dec.decode(None if r[2] is None else bytes(r[2]),
                                   None if r[3] is None else bytes(r[3]))
                    if d.warnings:
                        bad += 1
                        continue
                    ok += 1
                    ids.update(f.meta.schema_id for f in (d.key, d.value) if f is not None)
            except KafkalogError:
                continue  # counted by the audit's own scan
    finally:
        log.close()
    a.decoded_records, a.undecoded_records, a.schema_ids = ok, bad, sorted(ids)
    a.problems += [f"{a.directory}: {line}" for line in dec.problems()]


def _audit_group(group, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
                 registry=None) -> list[dict]:
    out = []
    for item in group:
        a = audit_partition(*item, max_decompressed_bytes=max_decompressed_bytes)
        if registry:
            audit_decoding(a, registry, max_decompressed_bytes)
        out.append(asdict(a))
    return out


def _from_dict(d: dict) -> PartitionAudit:
    return PartitionAudit(**d)


def pack_by_bytes(items: list, sizes: list[int], n: int) -> list[list]:
    """Spread ``items`` over ``n`` groups, largest first onto the lightest group."""
    n = max(1, min(n, len(items)))
    groups: list[list] = [[] for _ in range(n)]
    loads = [0] * n
    for item, size in sorted(zip(items, sizes, strict=True), key=lambda t: -t[1]):
        i = loads.index(min(loads))
        groups[i].append(item)
        loads[i] += size + 4096
    return [g for g in groups if g]


def audit(paths, *, engine: str = "auto", master: str | None = None,
          verbose: bool = False, progress=None,
          max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
          registry=None) -> AuditResult:
    """Audit every partition under ``paths`` (log directories, partition directories or
    globs), sorted by topic, partition and directory. A batch whose records decompress
    to more than ``max_decompressed_bytes`` is counted as corrupt. ``progress(done_bytes,
    total_bytes)``, if given, is called after each partition the local engine audits.
    ``registry`` (a :class:`~kafkalog_cli.registry.decoder.SchemaRegistryOptions`)
    decodes keys and values too (see the module docstring).

    Raises:
        NotAKafkaFileError / UnreadableError: a path is not Kafka-like or unreadable.
        MissingDependencyError: ``engine="spark"`` without pyspark.
    """
    from ..spark.plan import discover

    t0 = time.perf_counter()
    parts = discover(paths)
    items = [(pd.log_dir, pd.topic, pd.partition, pd.directory, list(pd.bases))
             for pd in parts]
    engine = choose_engine(engine, sum(pd.bytes for pd in parts), master)
    result = AuditResult(engine=engine)
    if engine == "local":
        total, done = sum(pd.bytes for pd in parts), 0
        for it, pd in zip(items, parts, strict=True):
            a = audit_partition(*it, max_decompressed_bytes=max_decompressed_bytes)
            if registry:
                audit_decoding(a, registry, max_decompressed_bytes)
            result.partitions.append(a)
            done += pd.bytes
            if progress is not None:
                progress(done, total)
    else:
        from ..spark.executor import Checked, driver_environment
        from ..spark.session import get_session

        spark = get_session(master, verbose=verbose, app_name="kafkalog audit")
        sc = spark.sparkContext
        groups = pack_by_bytes(items, [pd.bytes for pd in parts],
                               3 * max(1, sc.defaultParallelism))
        # the figures come back as the tasks' results (collect), whichever node ran them
        task = Checked("kafkalog_cli.ops.audit:_audit_group", driver_environment(),
                       max_decompressed_bytes, registry or None)
        try:
            rows = sc.parallelize(groups, len(groups)).flatMap(task).collect()
        except Exception as e:  # noqa: BLE001 - Spark wraps the task's error
            from .export import unwrap_spark_error

            raise unwrap_spark_error(e) from None
        result.partitions = [_from_dict(d) for d in rows]
    result.partitions.sort(key=lambda p: (p.topic, p.partition, p.directory))
    result.seconds = time.perf_counter() - t0
    return result


#: The ``--report`` Parquet columns: the JSON object's keys (timestamps as Parquet
#: timestamps, ms, UTC, as Spark's timestamp type).
REPORT_COLUMNS = [
    ("logDir", "string"), ("topic", "string"), ("partition", "int32"),
    ("partitionDir", "string"), ("segments", "int32"), ("batches", "int64"),
    ("records", "int64"), ("bytes", "int64"), ("firstOffset", "int64"),
    ("lastOffset", "int64"), ("firstTimestamp", "ts"), ("lastTimestamp", "ts"),
    ("maxTimestamp", "ts"), ("codecs", "list"), ("magics", "intlist"),
    ("corruptBatches", "int64"), ("invalidBytes", "int64"), ("indexProblems", "int64"),
    ("indexWarnings", "int64"), ("transactionalBatches", "int64"),
    ("controlBatches", "int64"), ("controlRecords", "int64"),
    ("decodedRecords", "int64"), ("undecodedRecords", "int64"), ("schemaIds", "intlist"),
    ("problems", "list"), ("ok", "bool"),
]


def report_schema():
    import pyarrow as pa

    types = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(),
             "ts": pa.timestamp("ms", tz="UTC"), "list": pa.list_(pa.string()),
             "intlist": pa.list_(pa.int32()), "bool": pa.bool_()}
    return pa.schema([(n, types[t]) for n, t in REPORT_COLUMNS])


def write_report(result: AuditResult, path) -> None:
    """The audit as a Parquet file, one row per partition (timestamps in ms, UTC)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = report_schema()
    rows = [p.to_dict() for p in result.partitions]
    cols = {n: [r[n] for r in rows] for n, _ in REPORT_COLUMNS}
    table = pa.table({n: pa.array(cols[n], schema.field(n).type) for n in schema.names},
                     schema=schema)
    pq.write_table(table, str(path))
