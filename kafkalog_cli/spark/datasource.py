"""The ``kafkalog`` Python data source for Spark (``pyspark.sql.datasource``).

Reading::

    spark.dataSource.register(KafkaLogDataSource)
    df = spark.read.format("kafkalog").option("subscribe", "orders").load("/data/kafka")

``load()`` takes a log directory, a partition directory, a comma-separated list or a
glob of them, or a list (``load([a, b])``). The schema is Spark's Kafka source's; the
options are named as its options are (see :mod:`kafkalog_cli.spark.plan` and
``docs/spark.md``).

Planning (``partitions()``) runs on the driver and lists directories and file sizes; it
packs many segments into each input partition and cuts large segments at offset-index
positions. Each task decodes its byte ranges with the library's read path and yields
Arrow record batches.

Writing::

    df.write.format("kafkalog").mode("append").save("/data/kafka")

appends the rows (``topic``, ``partition``, ``key``, ``value``, ``headers``,
``timestamp``) to the log directory's partitions: tasks stage rows, the driver's commit
appends them, one partition at a time (:mod:`kafkalog_cli.spark.writer`).
"""

from __future__ import annotations

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)

from ..errors import InvalidArgumentError
from . import plan as _plan


class KafkaLogPartition(InputPartition):
    """A split: a list of :class:`~kafkalog_cli.spark.plan.Slice` (paths and byte ranges)."""

    def __init__(self, index: int, slices: list):
        super().__init__(slices)
        self.index = index


class KafkaLogDataSource(DataSource):
    """``format("kafkalog")``: Kafka log directories read offline."""

    @classmethod
    def name(cls) -> str:
        return "kafkalog"

    def schema(self) -> str:
        from .rows import schema_ddl

        o = _plan.parse_options(self.options)
        return schema_ddl(o.include_headers, o.include_batch_metadata)

    def reader(self, schema) -> KafkaLogReader:
        return KafkaLogReader(dict(self.options))

    def writer(self, schema, overwrite: bool) -> KafkaLogWriter:
        if overwrite:
            raise InvalidArgumentError(
                "kafkalog only appends to a log directory: use mode(\"append\")")
        return KafkaLogWriter(dict(self.options))


class KafkaLogReader(DataSourceReader):
    def __init__(self, options: dict):
        self.options = options
        self.opts = _plan.parse_options(options)

    def partitions(self) -> list[KafkaLogPartition]:
        parts = _plan.discover(_plan.split_paths(self.options))
        splits, _ = _plan.plan_slices(parts, self.opts)
        if self.opts.plan_losses and self.opts.data_loss_path:
            from .rows import ReadStats, write_loss_report

            st = ReadStats()
            st.add_plan_losses(self.opts.plan_losses)
            write_loss_report(self.opts.data_loss_path, st)
        if not splits:
            return [KafkaLogPartition(0, [])]
        return [KafkaLogPartition(i, s) for i, s in enumerate(splits)]

    def read(self, partition: KafkaLogPartition):
        from .rows import read_slices

        yield from read_slices(partition.value, self.opts)


class _Staged(WriterCommitMessage):
    def __init__(self, path: str | None, rows: int):
        self.path = path
        self.rows = rows


class KafkaLogWriter(DataSourceArrowWriter):
    def __init__(self, options: dict):
        from .writer import new_job_id

        o = {k.lower(): v for k, v in options.items()}
        self.log_dir = o.get("path")
        if not self.log_dir:
            raise InvalidArgumentError("save() needs a log directory")
        self.topic = o.get("topic")
        sb = o.get("segmentbytes")
        self.segment_bytes = int(sb) if sb is not None else None  # else the topic default
        self.job_id = new_job_id()

    def write(self, iterator) -> _Staged:
        from .writer import stage_batches

        path, rows = stage_batches(self.log_dir, self.job_id, iterator, topic=self.topic)
        return _Staged(path, rows)

    def commit(self, messages) -> None:
        from .writer import append_staged, discard_staged

        try:
            files = [m.path for m in messages if m is not None and m.path]
            append_staged(self.log_dir, files, segment_bytes=self.segment_bytes)
        finally:
            discard_staged(self.log_dir, self.job_id)

    def abort(self, messages) -> None:
        from .writer import discard_staged

        discard_staged(self.log_dir, self.job_id)
