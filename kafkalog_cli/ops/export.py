"""``kafkalog export``: records of log directories to Parquet or JSON Lines.

Output layout (both formats, both engines): hive-style directories
``OUT/topic=<topic>/partition=<n>/`` holding the other columns of Spark's Kafka source
(``key, value, offset, timestamp, timestampType`` and ``headers`` unless disabled, plus
batch metadata on request). Read it back with the partition columns typed::

    import pyarrow.dataset as ds
    part = ds.partitioning(pa.schema([("topic", pa.string()), ("partition", pa.int32())]),
                           flavor="hive")
    table = ds.dataset(OUT, format="parquet", partitioning=part).to_table()

or ``spark.read.parquet(OUT)``.

Engines:

* ``local``: this process, one partition after the other; Arrow batches stream into one
  ``ParquetWriter`` per partition (``part-00000.parquet``, a row group a batch, written
  from the pieces the rows were decoded in, never combined into one copy) or one JSON
  Lines file (``part-00000.jsonl``). Memory stays at a batch of 64k rows or 8 MiB of
  records (``spark.rows.BATCH_ROWS``, ``BATCH_BYTES``) and the writer's pages.
* ``spark``: the ``kafkalog`` data source on ``local[*]`` (or ``--master`` /
  ``$SPARK_MASTER``), written with ``partitionBy("topic", "partition")`` (file names are
  Spark's, ``.parquet`` / ``.json``).
* ``auto`` (default): spark when a master is named, or the input holds at least
  :data:`~kafkalog_cli.ops.engine.AUTO_LOCAL_MAX_BYTES` (1 GiB) of ``.log`` and pyspark
  is installed; local otherwise. On a few cores local is faster (no JVM start-up, no
  per-task cost); Spark pays off with many cores or a cluster.

Both engines decode with :mod:`kafkalog_cli.spark.rows`, so they write the same rows.
Parquet keeps Spark's types (``timestamp`` a Spark/Parquet timestamp). JSON Lines
(``export-row.json`` in docs/json.md): ``key``, ``value`` and header values in base64 (as
Spark writes binary), ``timestamp`` in epoch milliseconds (as every kafkalog JSON, -1 for
Kafka's NO_TIMESTAMP), nulls written as ``null``.

With ``keyDecoder`` / ``valueDecoder`` (``--key-decoder`` / ``--value-decoder``), keys
and values in Schema Registry's wire format are written as typed columns, Arrow types
derived from each topic's newest schema (:mod:`kafkalog_cli.spark.decoded`,
:mod:`kafkalog_cli.registry.arrow`), with ``valueSchemaId`` and ``valueRaw`` (the bytes
of the records that did not decode, counted in ``undecodedRecords``) beside them; JSON
Lines write the decoded values as JSON (dates, times and timestamps in ISO-8601,
decimals as strings, bytes in base64).
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import (
    InvalidArgumentError,
    SparkJobDataLossError,
    SparkJobError,
    SparkJobFailedError,
    SparkJobUsageError,
    UnreadableError,
)
from ..storage.location import RemotePath, as_path, has_magic, is_uri, resolve
from .engine import choose_engine

FORMATS = ("parquet", "jsonl")

#: Columns of the local engine's Parquet files that hold a handful of distinct values
#: (dictionary-encoded; Parquet column paths). The others (key, value, offset, timestamp,
#: header values, baseSequence) are mostly distinct: a dictionary there is built and then
#: thrown away (pyarrow falls back to plain past 1 MiB of dictionary) or, in a row group of
#: 64k rows of short keys or of offsets, kept though it saves nothing.
PARQUET_DICTIONARY_COLUMNS = ("timestampType", "headers.list.element.key", "producerId",
                              "producerEpoch", "partitionLeaderEpoch")
#: Columns written DELTA_BINARY_PACKED: offsets go up by one, timestamps by a few ms, so
#: the deltas take a few bits (both int64; a standard Parquet encoding that parquet-mr,
#: Spark's vectorized reader since 3.3, pyarrow and DuckDB read).
PARQUET_DELTA_COLUMNS = ("offset", "timestamp")
#: Columns with no min/max statistics: record payloads, whose bounds prune nothing and
#: cost a comparison per value.
PARQUET_NO_STATISTICS = ("value", "headers.list.element.value")


def parquet_writer_options(schema) -> dict:
    """Keyword arguments of ``pyarrow.parquet.ParquetWriter`` for the local engine's files
    of ``schema`` (a pyarrow schema of the Kafka-source columns): Snappy (the codec of
    Spark and pyarrow by default), dictionaries only where values repeat
    (:data:`PARQUET_DICTIONARY_COLUMNS`), delta encoding of offsets and timestamps
    (:data:`PARQUET_DELTA_COLUMNS`), statistics on every column but the payloads
    (:data:`PARQUET_NO_STATISTICS`). Row groups are the Arrow batches (64k rows, or
    8 MiB of records), so memory stays at a few batches."""
    paths = []
    for f in schema:
        if f.name == "headers":
            paths += ["headers.list.element.key", "headers.list.element.value"]
        else:
            paths.append(f.name)
    return {
        "compression": "snappy",
        "use_dictionary": [c for c in PARQUET_DICTIONARY_COLUMNS if c in paths],
        "column_encoding": {c: "DELTA_BINARY_PACKED" for c in PARQUET_DELTA_COLUMNS
                            if c in paths},
        "write_statistics": [c for c in paths if c not in PARQUET_NO_STATISTICS],
    }


@dataclass
class ExportResult:
    """What an export wrote."""

    engine: str
    format: str
    out: str
    partitions: int = 0
    rows: int = 0
    files: int = 0
    input_bytes: int = 0
    seconds: float = 0.0
    corrupt_batches: int = 0
    partial_tail_bytes: int = 0
    aborted_records: int = 0
    lost_offsets: int = 0
    skipped: list[dict] = field(default_factory=list)
    #: ``.log`` files holding no whole batch from their first byte: not Kafka logs
    not_kafka_files: list[str] = field(default_factory=list)
    #: keys or values that a --key-decoder/--value-decoder could not decode
    undecoded_records: int = 0
    #: what decoding could not use (a schema id not found, a type with no Arrow type)
    problems: list[str] = field(default_factory=list)

    @property
    def unreadable(self) -> bool:
        """An input ``.log`` is not a Kafka log (exit 3)."""
        return bool(self.not_kafka_files)

    @property
    def records_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0

    @property
    def ok(self) -> bool:
        """Nothing was lost: no corrupt batch skipped, no offset missing, every key and
        value asked to be decoded decoded."""
        return not (self.corrupt_batches or self.lost_offsets or self.undecoded_records)

    def take_read_stats(self, stats) -> None:
        """The rows read and what the read skipped, from the read's
        :class:`~kafkalog_cli.spark.rows.ReadStats` (either engine's)."""
        self.rows = stats.rows
        self.corrupt_batches = stats.corrupt_batches
        self.partial_tail_bytes = stats.partial_tail_bytes
        self.aborted_records = stats.aborted_records
        self.lost_offsets = stats.lost_offsets
        self.undecoded_records = stats.undecoded_records
        self.skipped = stats.skipped
        self.not_kafka_files = stats.not_kafka_files

    def to_dict(self) -> dict:
        """The JSON object (docs/json.md, ``export.json``)."""
        return {
            "engine": self.engine, "format": self.format, "outputDir": self.out,
            "ok": self.ok, "partitions": self.partitions, "records": self.rows,
            "files": self.files, "inputBytes": self.input_bytes,
            "elapsedMs": round(self.seconds * 1000, 3),
            "recordsPerSecond": round(self.records_per_second),
            "corruptBatches": self.corrupt_batches,
            "partialTailBytes": self.partial_tail_bytes,
            "abortedRecords": self.aborted_records, "lostOffsets": self.lost_offsets,
            "undecodedRecords": self.undecoded_records, "skipped": self.skipped,
            "problems": self.problems,
        }


def _prepare_out(out, overwrite: bool) -> None:
    """Refuse an existing, non-empty ``out`` (a Path or a RemotePath) unless
    ``overwrite``, then delete it."""
    if not out.exists():
        return
    if out.is_dir() and not any(out.iterdir()):
        return
    if not overwrite:
        raise InvalidArgumentError(f"{out} already exists (use --overwrite to replace it)")
    if isinstance(out, RemotePath):
        try:
            if out.is_dir():
                out.fs.delete_dir(out.path)
            else:
                out.fs.delete_file(out.path)
        except OSError as e:
            raise UnreadableError(" ".join(str(e).split()), file=str(out)) from None
    elif out.is_dir():
        shutil.rmtree(out)
    else:
        out.unlink()


def _refuse_overlap(out, inputs, overwrite: bool) -> None:
    """Refuse an output that is, contains or is inside an input (real paths, so symlinks
    and ``..`` do not hide it; URIs compared by name). Spark refuses the same for
    overwrite ("Cannot overwrite a path that is also being read from"); here the check
    runs before anything is deleted, and also without ``--overwrite`` (writing into a log
    directory is never wanted)."""
    remote = isinstance(out, RemotePath)
    real_out = str(out).rstrip("/") if remote else os.path.realpath(out)
    for p in inputs:
        if is_uri(p) != remote:
            continue   # a URI and a local path never overlap
        real_in = str(p).rstrip("/") if remote else os.path.realpath(p)
        if remote:
            overlap = (real_out == real_in or real_out.startswith(real_in + "/")
                       or real_in.startswith(real_out + "/"))
        else:
            try:
                common = os.path.commonpath([real_out, real_in])
            except ValueError:  # different drives
                continue
            overlap = common in (real_out, real_in)
        if overlap:
            verb = "overwrite" if overwrite else "write to"
            raise InvalidArgumentError(
                f"cannot {verb} a path that is also being read from: --to {out} overlaps "
                f"the input {p}")


def _refuse_same_partition_twice(parts) -> None:
    """Refuse a topic-partition found in more than one log directory (replicas of one
    partition on several brokers, or a backup beside its source): its rows would go to one
    ``topic=T/partition=P/`` with every offset twice, from different logs.

    Raises:
        InvalidArgumentError: naming the partition and its directories.
    """
    seen: dict[tuple[str, int], list[str]] = {}
    for pd in parts:
        seen.setdefault((pd.topic, pd.partition), []).append(pd.directory)
    for (topic, partition), dirs in seen.items():
        if len(dirs) > 1:
            raise InvalidArgumentError(
                f"{topic}-{partition} is in more than one log directory ({', '.join(dirs)}): "
                "its rows would be merged into one topic=/partition= directory; export each "
                "log directory to its own --to")


def export(paths, out, *, fmt: str = "parquet", engine: str = "auto",
           master: str | None = None, options: dict | None = None,
           overwrite: bool = False, verbose: bool = False, progress=None,
           own_process: bool = False) -> ExportResult:
    """Export the records under ``paths`` to ``out``.

    ``options`` are the data source's read options (``subscribe``, ``subscribePattern``,
    ``assign``, ``startingOffsets``, ``endingOffsets``, ``startingTimestamp``,
    ``endingTimestamp``, ``includeHeaders`` (default true here), ``includeBatchMetadata``,
    ``failOnDataLoss``, ``isolationLevel``, ``maxDecompressedBytes``; ``keyDecoder``,
    ``valueDecoder``, ``schemas``, ``schemaRegistry``, ``schemaRegistryUserInfo``: see
    :mod:`kafkalog_cli.spark.decoded`). ``progress(done_bytes,
    total_bytes)``, if given, is called after each partition the local engine exports
    (bytes of the slices read). ``own_process``: the caller owns this process and
    imports nothing after (the CLI); the local engine then keeps numpy out of it when
    the compiled core is in use (:func:`~kafkalog_cli.format.vectorized.without_numpy`).

    Raises:
        InvalidArgumentError: a bad option or format, ``out`` exists, or a topic-partition
            is in more than one of the log directories given.
        DataLossError: a corrupt batch with ``failOnDataLoss`` true.
        MissingDependencyError: pyarrow (or pyspark for the spark engine) is missing.
    """
    from ..spark import require

    if fmt not in FORMATS:
        raise InvalidArgumentError(f"unknown format {fmt!r} (parquet or jsonl)")
    from ..spark.decoded import registry_options
    from ..spark.plan import discover, parse_options, split_paths

    opts = {"includeHeaders": "true", **{k: str(v) for k, v in (options or {}).items()}}
    ropts = parse_options(opts)
    registry = registry_options(opts)
    path_list = [resolve(p) for p in split_paths([str(p) for p in paths])]
    parts = discover(path_list)
    _refuse_same_partition_twice(parts)
    total = sum(pd.bytes for pd in parts)
    engine = choose_engine(engine, total, master)
    if engine == "local" and own_process:
        from ..format.vectorized import without_numpy

        without_numpy()   # before pyarrow's first import
        _without_cloudpickle()
    require("pyarrow")
    out = as_path(resolve(out))   # a local directory, or a URI written through pyarrow
    # before anything is deleted: the output must not overlap an input
    _refuse_overlap(out, [p for p in path_list if not has_magic(p)]
                    + [pd.directory for pd in parts], overwrite)
    _prepare_out(out, overwrite)
    t0 = time.perf_counter()
    if engine == "local":
        result = _export_local(parts, out, fmt, ropts, progress, registry)
    else:
        result = _export_spark(path_list, out, fmt, opts, master, verbose)
    result.input_bytes = total
    result.seconds = time.perf_counter() - t0
    return result


# -- local ---------------------------------------------------------------------------------

def _without_cloudpickle() -> None:
    """Keep cloudpickle out of this process (a ``None`` entry in ``sys.modules``, unless
    it is imported already): pyarrow imports it when it is installed, for pickling its
    types, and falls back to the standard ``pickle`` without it; the local export pickles
    nothing. Its import (with typing_extensions and logging) was ~15 ms of CPU, measured:
    8% of an export's fixed cost. Only for a caller that owns the process (the CLI)."""
    import sys

    sys.modules.setdefault("cloudpickle", None)


def _export_local(parts, out: Path, fmt: str, ropts, progress=None,
                  registry=None) -> ExportResult:
    import pyarrow.parquet as pq

    from ..spark.decoded import BatchDecoder
    from ..spark.plan import plan_slices
    from ..spark.rows import ReadStats, read_slices

    ropts.min_partitions = 1
    splits, _ = plan_slices(parts, ropts)
    groups: dict[tuple[str, int], list] = {}
    for split in splits:
        for s in split:
            groups.setdefault((s.topic, s.partition), []).append(s)
    result = ExportResult("local", fmt, str(out))
    stats = ReadStats()
    stats.add_plan_losses(ropts.plan_losses)
    if not isinstance(out, RemotePath):   # object stores have no directories to create
        out.mkdir(parents=True, exist_ok=True)
    total = sum(s.end - s.start for sl in groups.values() for s in sl)
    done = 0
    decoder = None if registry is None else BatchDecoder(
        registry, {t: sl[0].directory for (t, _), sl in groups.items()})
    for (topic, partition), slices in groups.items():
        d = out / f"topic={topic}" / f"partition={partition}"
        writer = None
        jf = None
        sink = None
        try:
            # Parquet takes the rows in the pieces they were decoded in (a table; one
            # row group a batch as before), never copied into one record batch
            for rb in read_slices(slices, ropts, stats,
                                  combine=decoder is not None or fmt != "parquet"):
                if decoder is not None:
                    rb = decoder.apply(rb)
                rb = rb.drop_columns(["topic", "partition"])
                if fmt == "parquet":
                    if writer is None:
                        sink = _output_stream(d, "part-00000.parquet")
                        writer = pq.ParquetWriter(sink, rb.schema,
                                                  **parquet_writer_options(rb.schema))
                    # a table of pieces or a record batch (decoded); one row group each
                    writer.write(rb, row_group_size=max(rb.num_rows, 1))
                else:
                    if jf is None:
                        sink = _output_stream(d, "part-00000.jsonl")
                        jf = io.TextIOWrapper(sink, encoding="utf-8")
                    jf.writelines(json_lines(rb))
                del rb   # not held while the next batch is read (its memory twice over)
        finally:
            # the writer first (its footer), then the stream: closing it is what
            # completes an upload, and its errors must reach the caller
            if writer is not None:
                writer.close()
            if jf is not None:
                jf.close()
            elif sink is not None:
                sink.close()
        if writer is not None or jf is not None:
            result.partitions += 1
            result.files += 1
        done += sum(s.end - s.start for s in slices)
        if progress is not None:
            progress(done, total)
    result.take_read_stats(stats)
    if decoder is not None:
        result.undecoded_records = decoder.undecoded
        result.problems = decoder.problems + _decode_problems(decoder)
    return result


def _decode_problems(decoder) -> list[str]:
    """What the schema sources' replays skipped, and the schema ids not found."""
    out = list(decoder.registry.replay_problems())
    for c in decoder._columns.values():
        out.extend(c._dec.problems())
    return out


def _output_stream(directory, name: str):
    """A binary stream writing ``directory/name`` (created with its parents): a local
    file, or an object written through pyarrow's filesystem (uploaded as it is written,
    in parts)."""
    if isinstance(directory, RemotePath):
        try:
            return directory.fs.open_output_stream(f"{directory.path}/{name}")
        except OSError as e:
            raise UnreadableError(" ".join(str(e).split()), file=f"{directory}/{name}") from None
    directory.mkdir(parents=True, exist_ok=True)
    return open(directory / name, "wb")


def _b64(b) -> str | None:
    return None if b is None else base64.b64encode(b).decode("ascii")


def json_lines(rb):
    """JSON Lines of an Arrow batch of the Kafka-source columns (see module docstring)."""
    import pyarrow as pa

    names = rb.schema.names
    cols = []
    for n in names:
        col = rb.column(n)
        if n == "timestamp":
            # microseconds in Arrow (Spark's type) -> epoch ms, floored as unix_millis
            cols.append([None if v is None else v // 1000
                         for v in col.cast("int64").to_pylist()])
        elif pa.types.is_binary(col.type):  # key, value (or a decoded side's Raw)
            cols.append([_b64(v) for v in col.to_pylist()])
        elif n == "headers":
            cols.append([None if h is None else [{"key": e["key"], "value": _b64(e["value"])}
                                                 for e in h] for h in col.to_pylist()])
        else:
            cols.append(col.to_pylist())
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False,
                             default=_json_default).encode
    for row in zip(*cols, strict=True):
        yield dumps(dict(zip(names, row, strict=True))) + "\n"


def _json_default(v):
    """JSON of the Python values of a decoded typed column: dates, times and timestamps
    as ISO-8601, decimals as strings, bytes in base64 (a map is a list of [key, value]
    pairs, as pyarrow gives it)."""
    import datetime
    from decimal import Decimal

    if isinstance(v, datetime.date | datetime.time):
        return v.isoformat()
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, bytes | bytearray):
        return base64.b64encode(v).decode("ascii")
    raise TypeError(f"{type(v).__name__} is not JSON serializable")


# -- spark ---------------------------------------------------------------------------------

def _export_spark(paths: list[str], out, fmt: str, opts: dict, master, verbose
                  ) -> ExportResult:
    from ..spark.executor import new_stats_accumulator
    from ..spark.rows import ReadStats
    from ..spark.session import default_min_partitions, get_session

    spark = get_session(master, verbose=verbose, app_name="kafkalog export")
    # what the tasks read and skipped comes back through Spark (an accumulator merged from
    # each successful task once), whichever node ran them
    acc = new_stats_accumulator(spark)
    reader = (spark.read.format("kafkalog").options(**opts)
              .option("statsAccumulator", str(acc.aid)))
    if "minPartitions" not in opts:
        reader = reader.option("minPartitions", str(default_min_partitions(spark)))
    df = reader.load(paths)
    if fmt != "parquet":
        from pyspark.sql import functions as F

        # JSON Lines: epoch ms, as every kafkalog JSON (Parquet keeps the timestamp)
        df = df.withColumn("timestamp", F.unix_millis("timestamp"))
    if isinstance(out, RemotePath):
        _check_hadoop_filesystem(spark, out)
    w = df.write.mode("overwrite").partitionBy("topic", "partition")
    try:
        if fmt == "parquet":
            w.parquet(str(out))
        else:
            w.option("ignoreNullFields", "false").json(str(out))
    except Exception as e:  # noqa: BLE001 - Spark wraps the task's error
        raise unwrap_spark_error(e) from None
    stats = ReadStats.from_value(acc.value)
    result = ExportResult("spark", fmt, str(out))
    _, files, parts = count_output(out, fmt, rows=False)
    result.files, result.partitions = files, parts
    result.take_read_stats(stats)
    return result


def _check_hadoop_filesystem(spark, out) -> None:
    """Spark writes ``--to`` through Hadoop's FileSystem: refuse a scheme this Spark has
    no implementation of, before the job runs.

    Raises:
        InvalidArgumentError: naming the scheme, the connector and ``--engine local``.
    """
    scheme = str(out).split(":", 1)[0].lower()
    try:
        spark._jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(
            scheme, spark._jsc.hadoopConfiguration())
    except Exception:  # noqa: BLE001 - py4j's error: no FileSystem for the scheme
        raise InvalidArgumentError(
            f"--to {out}: this Spark has no Hadoop filesystem for {scheme}:// (Spark writes "
            "the output itself: add the connector, such as hadoop-aws with s3a://, the "
            "GCS connector for gs://, hadoop-azure for abfs://; or use --engine local, "
            "which writes through pyarrow)") from None


def unwrap_spark_error(e: Exception) -> Exception:
    """Spark's exception for a failed task, as one line naming the kafkalog error."""
    text = str(e)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for line in lines:
        if "kafkalog: data loss: " in line:
            return SparkJobDataLossError(line[line.index("kafkalog: data loss: "):])
    for line in reversed(lines):
        if line.startswith("kafkalog_cli.") and "Error: " in line:
            name, msg = line.split(": ", 1)
            usage = any(w in name for w in ("InvalidArgument", "InvalidConfig", "Missing",
                                            "ExecutorEnvironment"))
            damage = any(w in name for w in ("Corrupt", "CrcMismatch", "DataLoss",
                                             "InvalidRecord", "DecompressedSize",
                                             "UnsupportedCompression"))
            return (SparkJobUsageError if usage else SparkJobDataLossError if damage
                    else SparkJobError)(msg)
    return SparkJobFailedError("Spark job failed: " + (lines[0] if lines else repr(e)))


def count_output(out, fmt: str, rows: bool = True) -> tuple[int, int, int]:
    """``(rows, files, partition directories)`` of an export's output (a Path or a
    RemotePath; rows 0 unless ``rows``: counting them reads every file's footer or
    lines)."""
    n = files = 0
    parts = set()
    if isinstance(out, RemotePath):
        import pyarrow.fs as pafs

        found = [(f"{out.root}{i.path}", i.base_name) for i in out.fs.get_file_info(
            pafs.FileSelector(out.path, recursive=True)) if i.type == pafs.FileType.File]
    else:
        found = [(p, p.name) for p in out.rglob("*") if p.is_file()]
    for p, name in found:
        if name.startswith(("_", ".")):
            continue
        suffix = os.path.splitext(name)[1]
        if fmt == "parquet" and suffix == ".parquet":
            if rows:
                import pyarrow.parquet as pq

                n += pq.ParquetFile(as_path(p).open("rb")).metadata.num_rows
        elif fmt == "jsonl" and suffix in (".json", ".jsonl"):
            if rows:
                with as_path(p).open("rb") as f:
                    while chunk := f.read(1 << 20):
                        n += chunk.count(b"\n")
        else:
            continue
        files += 1
        parts.add(str(p).rsplit("/", 1)[0])
    return n, files, len(parts)
