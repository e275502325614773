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

* ``local``: this process, one partition after the other; Arrow record batches stream
  into one ``ParquetWriter`` per partition (``part-00000.parquet``) or one JSON Lines
  file (``part-00000.jsonl``). Memory stays at a few batches of 64k rows.
* ``spark``: the ``kafkalog`` data source on ``local[*]`` (or ``--master`` /
  ``$SPARK_MASTER``), written with ``partitionBy("topic", "partition")`` (file names are
  Spark's, ``.parquet`` / ``.json``).
* ``auto`` (default): spark when a master is named, or the input holds at least
  :data:`~kafkalog_cli.ops.audit.AUTO_LOCAL_MAX_BYTES` (1 GiB) of ``.log`` and pyspark
  is installed; local otherwise. On a few cores local is faster (no JVM start-up, no
  per-task cost); Spark pays off with many cores or a cluster.

Both engines decode with :mod:`kafkalog_cli.spark.rows`, so they write the same rows.
Parquet keeps Spark's types (``timestamp`` a Spark/Parquet timestamp). JSON Lines
(``export-row.json`` in docs/json.md): ``key``, ``value`` and header values in base64 (as
Spark writes binary), ``timestamp`` in epoch milliseconds (as every kafkalog JSON, -1 for
Kafka's NO_TIMESTAMP), nulls written as ``null``.
"""

from __future__ import annotations

import base64
import glob
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import (
    InvalidArgumentError,
    SparkJobError,
    SparkJobFailedError,
    SparkJobUsageError,
)
from .audit import choose_engine

FORMATS = ("parquet", "jsonl")


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

    @property
    def records_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0

    @property
    def ok(self) -> bool:
        """Nothing was lost: no corrupt batch skipped, no offset missing."""
        return not (self.corrupt_batches or self.lost_offsets)

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
            "skipped": self.skipped,
        }


def _prepare_out(out: Path, overwrite: bool) -> None:
    if out.exists():
        if out.is_dir() and not any(out.iterdir()):
            return
        if not overwrite:
            raise InvalidArgumentError(f"{out} already exists (use --overwrite to replace it)")
        if out.is_dir():
            shutil.rmtree(out)
        else:
            out.unlink()


def _refuse_overlap(out: Path, inputs, overwrite: bool) -> None:
    """Refuse an output that is, contains or is inside an input (real paths, so symlinks
    and ``..`` do not hide it). Spark refuses the same for overwrite ("Cannot overwrite a
    path that is also being read from"); here the check runs before anything is deleted,
    and also without ``--overwrite`` (writing into a log directory is never wanted)."""
    real_out = os.path.realpath(out)
    for p in inputs:
        real_in = os.path.realpath(p)
        try:
            common = os.path.commonpath([real_out, real_in])
        except ValueError:  # different drives
            continue
        if common in (real_out, real_in):
            verb = "overwrite" if overwrite else "write to"
            raise InvalidArgumentError(
                f"cannot {verb} a path that is also being read from: --to {out} overlaps "
                f"the input {p}")


def export(paths, out, *, fmt: str = "parquet", engine: str = "auto",
           master: str | None = None, options: dict | None = None,
           overwrite: bool = False, verbose: bool = False, progress=None) -> ExportResult:
    """Export the records under ``paths`` to ``out``.

    ``options`` are the data source's read options (``subscribe``, ``subscribePattern``,
    ``assign``, ``startingOffsets``, ``endingOffsets``, ``startingTimestamp``,
    ``endingTimestamp``, ``includeHeaders`` (default true here), ``includeBatchMetadata``,
    ``failOnDataLoss``, ``isolationLevel``, ``maxDecompressedBytes``). ``progress(done_bytes,
    total_bytes)``, if given, is called after each partition the local engine exports
    (bytes of the slices read).

    Raises:
        InvalidArgumentError: a bad option or format, or ``out`` exists.
        DataLossError: a corrupt batch with ``failOnDataLoss`` true.
        MissingDependencyError: pyarrow (or pyspark for the spark engine) is missing.
    """
    from ..spark import require

    if fmt not in FORMATS:
        raise InvalidArgumentError(f"unknown format {fmt!r} (parquet or jsonl)")
    require("pyarrow")
    from ..spark.plan import discover, parse_options, split_paths

    opts = {"includeHeaders": "true", **{k: str(v) for k, v in (options or {}).items()}}
    ropts = parse_options(opts)
    path_list = [os.path.abspath(p) for p in split_paths([str(p) for p in paths])]
    parts = discover(path_list)
    total = sum(pd.bytes for pd in parts)
    engine = choose_engine(engine, total, master)
    out = Path(out).absolute()
    # before anything is deleted: the output must not overlap an input
    _refuse_overlap(out, [p for p in path_list if not glob.has_magic(p)]
                    + [pd.directory for pd in parts], overwrite)
    _prepare_out(out, overwrite)
    t0 = time.perf_counter()
    if engine == "local":
        result = _export_local(parts, out, fmt, ropts, progress)
    else:
        result = _export_spark(path_list, out, fmt, opts, master, verbose)
    result.input_bytes = total
    result.seconds = time.perf_counter() - t0
    return result


# -- local ---------------------------------------------------------------------------------

def _export_local(parts, out: Path, fmt: str, ropts, progress=None) -> ExportResult:
    import pyarrow.parquet as pq

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
    out.mkdir(parents=True, exist_ok=True)
    total = sum(s.end - s.start for sl in groups.values() for s in sl)
    done = 0
    for (topic, partition), slices in groups.items():
        d = out / f"topic={topic}" / f"partition={partition}"
        writer = None
        jf = None
        try:
            for rb in read_slices(slices, ropts, stats):
                rb = rb.drop_columns(["topic", "partition"])
                if fmt == "parquet":
                    if writer is None:
                        d.mkdir(parents=True, exist_ok=True)
                        writer = pq.ParquetWriter(str(d / "part-00000.parquet"), rb.schema)
                    writer.write_batch(rb)
                else:
                    if jf is None:
                        d.mkdir(parents=True, exist_ok=True)
                        jf = open(d / "part-00000.jsonl", "w", encoding="utf-8")
                    jf.writelines(json_lines(rb))
        finally:
            if writer is not None:
                writer.close()
            if jf is not None:
                jf.close()
        if writer is not None or jf is not None:
            result.partitions += 1
            result.files += 1
        done += sum(s.end - s.start for s in slices)
        if progress is not None:
            progress(done, total)
    result.rows = stats.rows
    result.corrupt_batches = stats.corrupt_batches
    result.partial_tail_bytes = stats.partial_tail_bytes
    result.aborted_records = stats.aborted_records
    result.lost_offsets = stats.lost_offsets
    result.skipped = stats.skipped
    return result


def _b64(b) -> str | None:
    return None if b is None else base64.b64encode(b).decode("ascii")


def json_lines(rb):
    """JSON Lines of an Arrow batch of the Kafka-source columns (see module docstring)."""
    names = rb.schema.names
    cols = []
    for n in names:
        col = rb.column(n)
        if n == "timestamp":
            # microseconds in Arrow (Spark's type) -> epoch ms, floored as unix_millis
            cols.append([None if v is None else v // 1000
                         for v in col.cast("int64").to_pylist()])
        elif n in ("key", "value"):
            cols.append([_b64(v) for v in col.to_pylist()])
        elif n == "headers":
            cols.append([None if h is None else [{"key": e["key"], "value": _b64(e["value"])}
                                                 for e in h] for h in col.to_pylist()])
        else:
            cols.append(col.to_pylist())
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    for row in zip(*cols, strict=True):
        yield dumps(dict(zip(names, row, strict=True))) + "\n"


# -- spark ---------------------------------------------------------------------------------

def _export_spark(paths: list[str], out: Path, fmt: str, opts: dict, master, verbose
                  ) -> ExportResult:
    from ..spark.rows import read_loss_reports
    from ..spark.session import default_min_partitions, get_session

    spark = get_session(master, verbose=verbose, app_name="kafkalog export")
    loss_dir = tempfile.mkdtemp(prefix="kafkalog-dataloss-")
    try:
        reader = spark.read.format("kafkalog").options(**opts).option("dataLossPath", loss_dir)
        if "minPartitions" not in opts:
            reader = reader.option("minPartitions", str(default_min_partitions(spark)))
        df = reader.load(paths)
        if fmt != "parquet":
            from pyspark.sql import functions as F

            # JSON Lines: epoch ms, as every kafkalog JSON (Parquet keeps the timestamp)
            df = df.withColumn("timestamp", F.unix_millis("timestamp"))
        w = df.write.mode("overwrite").partitionBy("topic", "partition")
        try:
            if fmt == "parquet":
                w.parquet(str(out))
            else:
                w.option("ignoreNullFields", "false").json(str(out))
        except Exception as e:  # noqa: BLE001 - Spark wraps the task's error
            raise _unwrap_spark_error(e) from None
        stats = read_loss_reports(loss_dir)
    finally:
        shutil.rmtree(loss_dir, ignore_errors=True)
    result = ExportResult("spark", fmt, str(out))
    rows, files, parts = count_output(out, fmt)
    result.rows, result.files, result.partitions = rows, files, parts
    result.corrupt_batches = stats.corrupt_batches
    result.partial_tail_bytes = stats.partial_tail_bytes
    result.lost_offsets = stats.lost_offsets
    result.skipped = stats.skipped
    return result


def _unwrap_spark_error(e: Exception) -> Exception:
    """Spark's exception for a failed task, as one line naming the kafkalog error."""
    text = str(e)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for line in lines:
        if "kafkalog: data loss: " in line:
            return SparkJobError(line[line.index("kafkalog: data loss: "):])
    for line in reversed(lines):
        if line.startswith("kafkalog_cli.") and "Error: " in line:
            name, msg = line.split(": ", 1)
            usage = any(w in name for w in ("InvalidArgument", "InvalidConfig", "Missing"))
            return (SparkJobUsageError if usage else SparkJobError)(msg)
    return SparkJobFailedError("Spark job failed: " + (lines[0] if lines else repr(e)))


def count_output(out: Path, fmt: str) -> tuple[int, int, int]:
    """``(rows, files, partition directories)`` of an export's output."""
    rows = files = 0
    parts = set()
    for p in out.rglob("*"):
        if not p.is_file() or p.name.startswith(("_", ".")):
            continue
        if fmt == "parquet" and p.suffix == ".parquet":
            import pyarrow.parquet as pq

            rows += pq.ParquetFile(str(p)).metadata.num_rows
        elif fmt == "jsonl" and p.suffix in (".json", ".jsonl"):
            with open(p, "rb") as f:
                rows += sum(1 for _ in f)
        else:
            continue
        files += 1
        parts.add(p.parent)
    return rows, files, len(parts)
