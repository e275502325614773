"""A minimal append path for ``df.write.format("kafkalog")``, until the append engine
lands: :func:`append_records` is the one function to swap for it.

Appending to a partition (:func:`append_records`):

* the log directory's ``.lock`` is taken (as a broker takes it; a running broker makes
  the append fail with :class:`~kafkalog_cli.errors.LogDirLockedError`);
* the last segment is scanned as recovery does (``rebuild_indexes``): it must end with a
  whole valid batch, and its last offset + 1 is the log end offset (an empty last
  segment's base offset is);
* records become v2 batches (``build_batch``, uncompressed, CreateTime, no producer id)
  with consecutive offsets from the log end offset, stamped with the partition leader
  epoch of the log's last batch (else the last entry of ``leader-epoch-checkpoint``);
* a new segment is rolled when the active one would pass ``segment_bytes``;
* each touched segment's ``.index`` and ``.timeindex`` are rewritten from its ``.log``
  (``rebuild_indexes``), so ``verify-index`` passes.

Checkpoints (recovery point, high watermark) are not updated: a broker started on the
directory recovers the new batches from the ``.log``, as after an unclean shutdown.

Spark's writer (:mod:`kafkalog_cli.spark.datasource`) never appends from a task: each
task stages its rows in an Arrow file under the log directory, and the driver's
``commit`` appends them partition by partition, so two tasks never append to the same
partition at once. :func:`stage_batches`, :func:`append_staged` and
:func:`discard_staged` are those steps.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..constants import INDEX_FILE_SUFFIX, LOCK_FILE_NAME, TIME_INDEX_FILE_SUFFIX
from ..errors import IllegalStateError, InvalidArgumentError, LogDirLockedError
from ..format.builder import build_batch
from ..storage.checkpoints import read_leader_epoch_checkpoint, write_atomically
from ..storage.files import filename_prefix_from_offset, log_file, validate_topic_name
from ..storage.segment import open_view, rebuild_indexes

DEFAULT_SEGMENT_BYTES = 1024 * 1024 * 1024
BATCH_MAX_RECORDS = 1000
BATCH_MAX_BYTES = 1024 * 1024
STAGING_PREFIX = ".kafkalog-staging-"


@dataclass
class AppendResult:
    """What :func:`append_records` appended to one partition."""

    topic: str
    partition: int
    first_offset: int | None = None
    last_offset: int | None = None
    records: int = 0
    batches: int = 0
    segments: list[str] = field(default_factory=list)


class _LogDirLock:
    def __init__(self, log_dir: Path):
        self.path = log_dir / LOCK_FILE_NAME
        self.fd: int | None = None

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self.fd)
            self.fd = None
            raise LogDirLockedError(self.path.parent) from None
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            fcntl.lockf(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)


def _bases(part_dir: Path) -> list[int]:
    return sorted(int(n[:20]) for n in os.listdir(part_dir)
                  if n.endswith(".log") and len(n) == 24 and n[:20].isdigit())


def _write_indexes(part_dir: Path, base: int) -> None:
    view = open_view(log_file(part_dir, base))
    try:
        rebuilt = rebuild_indexes(view, base)
    finally:
        view.release()
    prefix = part_dir / filename_prefix_from_offset(base)
    write_atomically(str(prefix) + INDEX_FILE_SUFFIX, rebuilt.offset_index_bytes(base))
    write_atomically(str(prefix) + TIME_INDEX_FILE_SUFFIX, rebuilt.time_index_bytes(base))


def _chunks(records: Iterable) -> Iterable[list]:
    chunk: list = []
    size = 0
    for r in records:
        chunk.append(r)
        size += 32 + (len(r[1]) if r[1] is not None else 0) + (
            len(r[2]) if r[2] is not None else 0)
        if len(chunk) >= BATCH_MAX_RECORDS or size >= BATCH_MAX_BYTES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def append_records(log_dir, topic: str, partition: int, records: Iterable, *,
                   segment_bytes: int = DEFAULT_SEGMENT_BYTES,
                   lock: bool = True) -> AppendResult:
    """Append ``records`` (``(timestamp ms, key, value, headers)``, in order) to
    ``<log_dir>/<topic>-<partition>``, creating the partition directory when missing.

    Raises:
        InvalidArgumentError: an illegal topic name or a negative partition.
        LogDirLockedError: a broker (or another kafkalog) holds the log directory.
        IllegalStateError: the last segment ends with invalid bytes (repair it first).
    """
    validate_topic_name(topic)
    if partition < 0:
        raise InvalidArgumentError(f"partition {partition} is negative")
    log_dir = Path(log_dir)
    part_dir = log_dir / f"{topic}-{partition}"
    result = AppendResult(topic, partition)
    lock_cm = _LogDirLock(log_dir) if lock else None
    if lock_cm:
        lock_cm.__enter__()
    try:
        part_dir.mkdir(parents=True, exist_ok=True)
        bases = _bases(part_dir)
        base = bases[-1] if bases else 0
        path = log_file(part_dir, base)
        epoch = -1
        if path.exists():
            view = open_view(path)
            try:
                rebuilt = rebuild_indexes(view, base, file=path)
                size = len(view)
            finally:
                view.release()
            if rebuilt.valid_bytes != size:
                raise IllegalStateError(
                    f"{size - rebuilt.valid_bytes} invalid bytes at the end of the log "
                    f"({rebuilt.error or 'a partial batch'}); repair it before appending",
                    file=path, position=rebuilt.valid_bytes)
            next_offset = base if rebuilt.last_offset is None else rebuilt.last_offset + 1
            if rebuilt.epochs:
                epoch = rebuilt.epochs[-1][0]
        else:
            size = 0
            next_offset = base
        if epoch < 0:
            entries = read_leader_epoch_checkpoint(part_dir / "leader-epoch-checkpoint")
            if entries:
                epoch = entries[-1][0]
        touched = {base}
        f = open(log_file(part_dir, base), "ab")
        try:
            for chunk in _chunks(records):
                now = int(time.time() * 1000)
                chunk = [(now if ts is None else int(ts), k, v, tuple(h or ()))
                         for ts, k, v, h in chunk]
                data = build_batch(chunk, base_offset=next_offset,
                                   partition_leader_epoch=epoch)
                if size and size + len(data) > segment_bytes:
                    f.flush()
                    os.fsync(f.fileno())
                    f.close()
                    base = next_offset
                    touched.add(base)
                    f = open(log_file(part_dir, base), "ab")
                    size = 0
                f.write(data)
                size += len(data)
                if result.first_offset is None:
                    result.first_offset = next_offset
                next_offset += len(chunk)
                result.last_offset = next_offset - 1
                result.records += len(chunk)
                result.batches += 1
            f.flush()
            os.fsync(f.fileno())
        finally:
            f.close()
        for b in sorted(touched):
            _write_indexes(part_dir, b)
            result.segments.append(str(log_file(part_dir, b)))
    finally:
        if lock_cm:
            lock_cm.__exit__(None, None, None)
    return result


# -- Kafka's default partitioner -------------------------------------------------------------

def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` (a signed int32)."""
    m = 0x5BD1E995
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    rem = length % 4
    tail = length - rem
    if rem == 3:
        h ^= data[tail + 2] << 16
    if rem >= 2:
        h ^= data[tail + 1] << 8
    if rem >= 1:
        h ^= data[tail]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def default_partition(key: bytes | None, num_partitions: int) -> int:
    """The partition Kafka's producer picks for a keyed record (``toPositive(murmur2(key))
    % numPartitions``); 0 for a null key (the producer's choice then is arbitrary)."""
    if key is None:
        return 0
    return (murmur2(key) & 0x7FFFFFFF) % num_partitions


def partition_count(log_dir, topic: str) -> int:
    """Partition directories of ``topic`` in ``log_dir`` (the highest number + 1)."""
    from ..storage.files import parse_partition_dir_name

    best = -1
    for n in os.listdir(log_dir):
        tp = parse_partition_dir_name(n)
        if tp is not None and tp.topic == topic and "." not in n[len(topic):]:
            best = max(best, tp.partition)
    return best + 1


# -- staging (Spark tasks) ---------------------------------------------------------------------

STAGED_COLUMNS = ("topic", "partition", "timestamp", "key", "value", "headers")


def staging_dir(log_dir, job_id: str) -> Path:
    return Path(log_dir) / f"{STAGING_PREFIX}{job_id}"


def new_job_id() -> str:
    return f"{int(time.time())}-{uuid.uuid4().hex[:12]}"


def stage_batches(log_dir, job_id: str, batches: Iterable, *, topic: str | None = None,
                  ) -> tuple[str | None, int]:
    """Write a task's Arrow record batches (Kafka-source columns) to one Arrow IPC file
    in the job's staging directory. Returns ``(path or None when empty, rows)``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    d = staging_dir(log_dir, job_id)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"task-{uuid.uuid4().hex}.arrow"
    schema = pa.schema([("topic", pa.string()), ("partition", pa.int32()),
                        ("timestamp", pa.int64()), ("key", pa.binary()),
                        ("value", pa.binary()),
                        ("headers", pa.list_(pa.struct([("key", pa.string()),
                                                        ("value", pa.binary())])))])
    rows = 0
    sink = None
    try:
        for rb in batches:
            if rb.num_rows == 0:
                continue
            names = rb.schema.names
            if "value" not in names:
                raise InvalidArgumentError("the DataFrame to write needs a value column")
            n = rb.num_rows
            if topic is not None:
                t = pa.array([topic] * n, pa.string())
            elif "topic" in names:
                t = rb.column("topic").cast(pa.string())
            else:
                raise InvalidArgumentError(
                    "the DataFrame to write needs a topic column (or the option topic)")

            def col(name, typ, default=None, rb=rb, n=n):
                if name in rb.schema.names:
                    return rb.column(name).cast(typ)
                return pa.nulls(n, typ) if default is None else default

            ts = col("timestamp", pa.timestamp("us", tz="UTC"))
            ts_ms = pc.divide(ts.cast(pa.int64()), 1000)   # null: the time of the append
            out = pa.RecordBatch.from_arrays(
                [t, col("partition", pa.int32()), ts_ms, col("key", pa.binary()),
                 col("value", pa.binary()), col("headers", schema.field("headers").type)],
                schema=schema)
            if sink is None:
                sink = pa.ipc.new_file(str(path), schema)
            sink.write_batch(out)
            rows += n
    finally:
        if sink is not None:
            sink.close()
    return (str(path) if rows else None), rows


def append_staged(log_dir, files: list[str], *, segment_bytes: int = DEFAULT_SEGMENT_BYTES,
                  ) -> list[AppendResult]:
    """Append the rows of staged files (in the order given) to their partitions, one
    partition after the other (the single writer). Rows without a partition go where
    Kafka's default partitioner puts their key among the topic's existing partitions."""
    import pyarrow as pa

    groups: dict[tuple[str, int], list] = {}
    counts: dict[str, int] = {}
    for path in files:
        with pa.memory_map(path) as src:
            table = pa.ipc.open_file(src).read_all()
        cols = table.to_pydict()
        for topic, part, ts, key, value, headers in zip(
                *(cols[c] for c in STAGED_COLUMNS), strict=True):
            if topic is None:
                raise InvalidArgumentError("a row to write has a null topic")
            if part is None:
                n = counts.get(topic)
                if n is None:
                    n = counts[topic] = partition_count(log_dir, topic)
                if n == 0:
                    raise InvalidArgumentError(
                        f"topic {topic} has no partition directory in {log_dir}: give the "
                        "partition column for a new topic")
                part = default_partition(key, n)
            hdrs = tuple((h["key"], h["value"]) for h in headers) if headers else ()
            groups.setdefault((topic, part), []).append((ts, key, value, hdrs))
    results = []
    with _LogDirLock(Path(log_dir)):
        for (topic, part), recs in sorted(groups.items()):
            results.append(append_records(log_dir, topic, part, recs,
                                          segment_bytes=segment_bytes, lock=False))
    return results


def discard_staged(log_dir, job_id: str) -> None:
    shutil.rmtree(staging_dir(log_dir, job_id), ignore_errors=True)
