"""The kafkalog data source and ``export --engine spark`` over a log directory on a local
S3 server (moto; pyarrow's S3 client in the executors): the same rows as the same files
read locally, the same counts."""

from __future__ import annotations

import pytest
from spark_fixtures import arrow_rows, reference_rows

pytestmark = pytest.mark.spark


def test_source_reads_s3_as_local(spark, s3_server, log_dir):
    uri = s3_server.upload(log_dir, "spark-src/kafka-logs")
    dirs = sorted(p for p in log_dir.iterdir() if p.is_dir())
    df = (spark.read.format("kafkalog").option("includeHeaders", "true")
          .option("maxPartitionBytes", "3000").load(uri))      # segments cut by the index
    assert arrow_rows(df.toArrow()) == reference_rows(dirs)
    # read_committed, a start offset (index seek), a glob over the bucket
    opts = {"isolationLevel": "read_committed",
            "startingOffsets": '{"orders":{"1":40}}', "subscribe": "orders,txn"}
    local = spark.read.format("kafkalog").options(**opts).load(str(log_dir)).toArrow()
    remote = (spark.read.format("kafkalog").options(**opts)
              .load(f"{uri.rsplit('/', 1)[0]}/kafka-*")).toArrow()
    assert arrow_rows(remote) == arrow_rows(local) and local.num_rows


def test_export_spark_engine_counts_from_s3(spark, s3_server, log_dir_copy, tmp_path):
    from kafkalog_cli.format.records import FileRecords
    from kafkalog_cli.ops.export import export

    log = sorted((log_dir_copy / "orders-2").glob("*.log"))[1]
    data = bytearray(log.read_bytes())
    data[list(FileRecords(bytes(data)).batches())[4].position + 70] ^= 0xFF
    log.write_bytes(bytes(data))
    uri = s3_server.upload(log_dir_copy, "spark-export/kafka-logs")
    opts = {"failOnDataLoss": "false", "isolationLevel": "read_committed"}
    a = export([str(log_dir_copy)], tmp_path / "local", engine="local", options=opts)
    b = export([uri], tmp_path / "spark", engine="spark", options=opts)
    assert (b.rows, b.corrupt_batches, b.aborted_records, b.partitions) == (
        a.rows, a.corrupt_batches, a.aborted_records, a.partitions)
    assert a.corrupt_batches == 1
    assert b.skipped[0]["file"] == f"{uri}/orders-2/{log.name}"


def test_spark_engine_refuses_a_to_its_hadoop_cannot_write(spark, s3_server, log_dir,
                                                           tmp_path):
    """The Spark engine writes --to through Hadoop's FileSystem; pyspark's own jars have
    none for s3:// (nor s3a:// without hadoop-aws): one line before the job runs, naming
    the connector and --engine local."""
    from kafkalog_cli.errors import InvalidArgumentError
    from kafkalog_cli.ops.export import export

    s3_server.filesystem().create_dir("spark-out")
    with pytest.raises(InvalidArgumentError, match=r"no Hadoop filesystem for s3://.*"
                                                   r"--engine local"):
        export([str(log_dir / "orders-0")], "s3://spark-out/x", engine="spark")
