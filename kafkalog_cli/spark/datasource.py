"""The ``kafkalog`` Python data source for Spark (``pyspark.sql.datasource``).

Reading::

    spark.dataSource.register(KafkaLogDataSource)
    df = spark.read.format("kafkalog").option("subscribe", "orders").load("/data/kafka")

``load()`` takes a log directory, a partition directory, a comma-separated list or a
glob of them, or a list (``load([a, b])``). The schema is Spark's Kafka source's; the
options are named as its options are (see :mod:`kafkalog_cli.spark.plan` and
``docs/spark.md``).

With ``.option("valueDecoder", "schema-registry")`` (``keyDecoder``; ``avro``,
``protobuf``, ``json-schema`` to insist), values in Schema Registry's wire format come as
a typed column from the topic's newest schema, with ``valueSchemaId`` and ``valueRaw``
(:mod:`kafkalog_cli.spark.decoded`; schemas from each log directory's ``_schemas``, or
``schemas``, ``schemaRegistry``, ``schemaRegistryUserInfo``).

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

import dataclasses
import os
import socket

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)

from ..errors import InvalidArgumentError
from .executor import add_stats, check_executor, driver_environment

# Only the standard library, pyspark and kafkalog's light modules are imported here: the
# reader, the writer and the input partitions are unpickled on executors before
# ``check_executor`` can name a missing package (see :mod:`.executor`); the rest of
# kafkalog is imported inside the methods.


class KafkaLogPartition(InputPartition):
    """A split: its slices as plain tuples (the fields of
    :class:`~kafkalog_cli.spark.plan.Slice`: absolute paths and byte ranges) and, on the
    first split only, the offsets the planning found missing (``plan_losses``), so that
    they are counted once, by a task, as every other loss."""

    def __init__(self, index: int, slices: list, plan_losses: list | None = None):
        super().__init__([dataclasses.astuple(s) for s in slices])
        self.index = index
        self.plan_losses = plan_losses or []


class KafkaLogDataSource(DataSource):
    """``format("kafkalog")``: Kafka log directories read offline."""

    @classmethod
    def name(cls) -> str:
        return "kafkalog"

    def schema(self) -> str:
        # the first of kafkalog's code Spark runs, in a Python worker on the driver's node
        check_executor(driver_environment())
        from . import plan
        from .rows import schema_ddl

        o = plan.parse_options(self.options)
        from .decoded import registry_options

        registry = registry_options(self.options)
        if registry is not None:
            return decoded_schema(self.options, o, registry)
        return schema_ddl(o.include_headers, o.include_batch_metadata)

    def reader(self, schema) -> KafkaLogReader:
        return KafkaLogReader(dict(self.options))

    def writer(self, schema, overwrite: bool) -> KafkaLogWriter:
        check_executor(driver_environment())
        if overwrite:
            raise InvalidArgumentError(
                "kafkalog only appends to a log directory: use mode(\"append\")")
        return KafkaLogWriter(dict(self.options))


def decoded_schema(options: dict, o, registry):
    """The StructType of a read with keyDecoder/valueDecoder: the decoded sides typed
    from the subscribed topics' newest schemas (one type across the topics).

    Raises:
        InvalidArgumentError: topics whose decoded sides have different types.
    """
    import pyarrow as pa
    from pyspark.sql.pandas.types import from_arrow_schema

    from . import plan
    from .decoded import BatchDecoder, decodes
    from .rows import arrow_schema

    parts = [pd for pd in plan.discover(plan.split_paths(options))
             if o.wants(pd.topic, pd.partition)]
    internal = sorted({pd.topic for pd in parts if not decodes(pd.topic)})
    if internal:
        raise InvalidArgumentError(
            f"keyDecoder/valueDecoder: the read includes {', '.join(internal)}, whose "
            "records are not decoded: subscribe to the topics to decode")
    decoder = BatchDecoder(registry, {pd.topic: pd.directory for pd in parts}, spark=True)
    types: dict = {}
    for topic in dict.fromkeys(pd.topic for pd in parts):
        for side, t in decoder.fields(topic):
            if types.setdefault(side, t) != t:
                raise InvalidArgumentError(
                    f"option {side}Decoder: the topics read have {side}s of different "
                    "types: read one topic at a time (subscribe)")
    fields = []
    for f in arrow_schema(o.include_headers, o.include_batch_metadata):
        if f.name in ("key", "value") and getattr(registry, f"{f.name}_decoder"):
            fields += [pa.field(f.name, types.get(f.name, pa.string())),
                       pa.field(f.name + "SchemaId", pa.int32()),
                       pa.field(f.name + "Raw", pa.binary())]
        else:
            fields.append(f)
    return from_arrow_schema(pa.schema(fields))


class KafkaLogReader(DataSourceReader):
    """Plans on the driver (``partitions()``), reads on executors (``read()``). Holds only
    the options (parsed again where needed), the driver's environment and the statistics
    accumulator's id (option ``statsAccumulator``)."""

    def __init__(self, options: dict):
        from . import plan

        self.options = options
        plan.parse_options(options)  # refuse bad options before any task runs
        self.env = driver_environment()
        acc = {str(k).lower(): v for k, v in options.items()}.get("statsaccumulator")
        self.stats_id = None if acc in (None, "") else int(acc)

    def partitions(self) -> list[KafkaLogPartition]:
        from . import plan

        opts = plan.parse_options(self.options)
        parts = plan.discover(plan.split_paths(self.options))
        splits, _ = plan.plan_slices(parts, opts)
        if not splits:
            return [KafkaLogPartition(0, [], opts.plan_losses)]
        return [KafkaLogPartition(i, s, opts.plan_losses if i == 0 else None)
                for i, s in enumerate(splits)]

    def read(self, partition: KafkaLogPartition):
        check_executor(self.env)
        from . import plan
        from .rows import ReadStats, read_slices

        opts = plan.parse_options(self.options)
        stats = ReadStats()
        stats.add_plan_losses(partition.plan_losses)
        slices = [plan.Slice(*t) for t in partition.value]
        from .decoded import BatchDecoder, registry_options

        registry = registry_options(self.options)
        if registry is None:
            yield from read_slices(slices, opts, stats)
        else:
            decoder = BatchDecoder(registry, {s.topic: s.directory for s in slices},
                                   spark=True)
            for rb in read_slices(slices, opts, stats):
                yield decoder.apply(rb)
            stats.undecoded_records += decoder.undecoded
        if self.stats_id is not None:
            add_stats(self.stats_id, stats.to_value())


class _Staged(WriterCommitMessage):
    """A task's staged file (None when it had no rows), its rows and the executor's host."""

    def __init__(self, path: str | None, rows: int, host: str):
        self.path = path
        self.rows = rows
        self.host = host


class KafkaLogWriter(DataSourceArrowWriter):
    """Created on the driver, which resolves the log directory once (a relative path is
    relative to the driver's working directory, as for Spark's file sinks); tasks stage
    their rows under it, the driver's ``commit`` appends them and removes the staging
    directory (also when the commit fails, and in ``abort``)."""

    def __init__(self, options: dict):
        from .writer import new_job_id

        o = {k.lower(): v for k, v in options.items()}
        if not o.get("path"):
            raise InvalidArgumentError("save() needs a log directory")
        from ..storage.location import require_local

        require_local(str(o["path"]), 'df.write.format("kafkalog")')
        self.log_dir = os.path.abspath(str(o["path"]))
        self.topic = o.get("topic")
        sb = o.get("segmentbytes")
        self.segment_bytes = int(sb) if sb is not None else None  # else the topic default
        self.job_id = new_job_id()
        self.env = driver_environment()

    def write(self, iterator) -> _Staged:
        check_executor(self.env)
        from .writer import stage_batches

        path, rows = stage_batches(self.log_dir, self.job_id, iterator, topic=self.topic)
        return _Staged(path, rows, socket.gethostname())

    def commit(self, messages) -> None:
        from .writer import append_staged, discard_staged

        try:
            staged = [m for m in messages if m is not None and m.path]
            append_staged(self.log_dir, [m.path for m in staged],
                          segment_bytes=self.segment_bytes,
                          hosts=[m.host for m in staged])
        finally:
            discard_staged(self.log_dir, self.job_id)

    def abort(self, messages) -> None:
        from .writer import discard_staged

        discard_staged(self.log_dir, self.job_id)
