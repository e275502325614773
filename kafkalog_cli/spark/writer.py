"""The append side of ``df.write.format("kafkalog")``: rows go through the append engine
(:class:`~kafkalog_cli.storage.log_manager.LogManager` / ``UnifiedLog.append_as_leader``), so the
partitions written are what a broker's storage layer writes for the same batches: offsets
from the log end offset, leader epoch continued from the partition's epoch cache, rolls,
sparse indexes, producer snapshots, checkpoints and the clean-shutdown marker.

Spark's writer (:mod:`kafkalog_cli.spark.datasource`) never appends from a task: each
task stages its rows in an Arrow file under the log directory, and the driver's
``commit`` appends them partition by partition (:func:`append_staged`, one
``LogManager`` holding the log directory's ``.lock``), so two tasks never append to the
same partition at once. :func:`stage_batches`, :func:`append_staged` and
:func:`discard_staged` are those steps.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InvalidArgumentError
from ..format.builder import build_batch
from ..schema.record_batch import RECORD_BATCH_OVERHEAD
from ..storage.config import LogConfig
from ..storage.files import parse_partition_dir_name
from ..storage.log_manager import LogManager

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
    rolled: int = 0


def _record_size_bound(r) -> int:
    """An upper bound of one ``(timestamp, key, value, headers)`` record's bytes in a v2
    batch: the fixed fields and varints at their longest (40), key, value, and each header
    (its key as UTF-8, value, two length varints)."""
    n = 40 + (len(r[1]) if r[1] is not None else 0) + (len(r[2]) if r[2] is not None else 0)
    for hk, hv in r[3] or ():
        n += 10 + len(hk.encode("utf-8")) + (len(hv) if hv is not None else 0)
    return n


def _chunks(records: Iterable, max_bytes: int = BATCH_MAX_BYTES) -> Iterable[list]:
    """Records grouped into batches of at most BATCH_MAX_RECORDS records and ``max_bytes``
    bytes, closing a batch before a record that would overflow it, as the producer's
    accumulator does (a record too large on its own goes alone: the broker refuses it
    with RecordTooLarge, as it would a producer's)."""
    chunk: list = []
    size = 0
    for r in records:
        n = _record_size_bound(r)
        if chunk and size + n > max_bytes:
            yield chunk
            chunk, size = [], 0
        chunk.append(r)
        size += n
        if len(chunk) >= BATCH_MAX_RECORDS:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def _append_to_log(log, topic: str, partition: int, records: Iterable, now) -> AppendResult:
    result = AppendResult(topic, partition)
    latest = log.leader_epoch_cache.latest_epoch if log.leader_epoch_cache else None
    epoch = latest if latest is not None and latest >= 0 else 0
    rolled_before = log.rolled_segments
    limit = min(BATCH_MAX_BYTES, log.config.max_message_bytes - RECORD_BATCH_OVERHEAD)
    for chunk in _chunks(records, limit):
        ms = now()
        chunk = [(ms if ts is None else int(ts), k, v, tuple(h or ())) for ts, k, v, h in chunk]
        info = log.append_as_leader(build_batch(chunk), leader_epoch=epoch)
        if result.first_offset is None:
            result.first_offset = info.first_offset
        result.last_offset = info.last_offset
        result.records += len(chunk)
        result.batches += 1
    result.segments = [str(s.log_path) for s in log.segments]
    result.rolled = log.rolled_segments - rolled_before
    return result


def append_records(log_dir, topic: str, partition: int, records: Iterable, *,
                   segment_bytes: int | None = None, manager=None) -> AppendResult:
    """Append ``records`` (``(timestamp ms or None, key, value, headers)``, in order) to
    ``<log_dir>/<topic>-<partition>`` through the append engine, creating the partition
    (and a new log directory's ``meta.properties``) when missing. ``segment_bytes``
    overrides the topic's ``segment.bytes``; ``manager`` is an open LogManager to use
    (its lock held by the caller), else one is opened and closed here.

    Raises:
        InvalidArgumentError: an illegal topic name or a negative partition.
        LogDirLockedError: a broker (or another kafkalog) holds the log directory.
        CorruptRecordError: the last segment ends with invalid bytes (run recovery first).
    """
    config = None
    if segment_bytes is not None:
        config = LogConfig.from_properties({"segment.bytes": segment_bytes})
    own = manager is None
    mgr = LogManager.open(Path(log_dir)) if own else manager
    try:
        log = mgr.get_or_create_log(topic, partition, config)
        return _append_to_log(log, topic, partition, records,
                              lambda: mgr.clock.milliseconds())
    except BaseException:
        if own:
            mgr.abandon()
            own = False
        raise
    finally:
        if own:
            mgr.close()


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
    ok = False
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
        ok = True
    finally:
        if sink is not None:
            sink.close()
        if not ok:  # a failed task leaves nothing behind (a retry stages afresh)
            path.unlink(missing_ok=True)
    return (str(path) if rows else None), rows


def append_staged(log_dir, files: list[str], *, segment_bytes: int | None = None,
                  hosts: list[str] | None = None) -> list[AppendResult]:
    """Append the rows of staged files (in the order given) to their partitions, one
    partition after the other (the single writer). Rows without a partition go where
    Kafka's default partitioner puts their key among the topic's existing partitions.
    ``hosts`` names the host that staged each file (for the error below).

    Raises:
        UnreadableError: a staged file is not there: the task that wrote it ran on a host
            that does not share the log directory with the driver.
    """
    import pyarrow as pa

    for i, path in enumerate(files):
        if not os.path.isfile(path):
            from ..errors import UnreadableError

            host = f" on host {hosts[i]}" if hosts else ""
            raise UnreadableError(
                f"a task{host} staged its rows here, but the driver cannot see them: the "
                "log directory written by df.write.format(\"kafkalog\") must be one "
                "directory shared by the driver and every executor, at the same path "
                "(a network filesystem)", file=path)
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
    with LogManager.open(Path(log_dir)) as mgr:
        for (topic, part), recs in sorted(groups.items()):
            results.append(append_records(log_dir, topic, part, recs,
                                          segment_bytes=segment_bytes, manager=mgr))
    return results


def discard_staged(log_dir, job_id: str) -> None:
    shutil.rmtree(staging_dir(log_dir, job_id), ignore_errors=True)
