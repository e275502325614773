"""A Spark application the cluster tests run as a driver process of its own (one
SparkContext per process), with a current directory of the test's choosing:

    python cluster_app.py MASTER SPEC.json

SPEC: ``{"read": [relative paths], "rows_out": "/abs/rows.parquet", "write_to":
"relative log dir", "skip_corrupt": [relative paths]}``. It reads ``read`` through the
kafkalog source (relative paths, as a user in this directory gives them), saves the rows
as Parquet for the test to compare, appends them to ``write_to`` (relative) through
``df.write.format("kafkalog")``, reads ``skip_corrupt`` with ``failOnDataLoss=false`` and
a statistics accumulator, and prints one JSON object: what it saw.
"""

from __future__ import annotations

import json
import sys


def main(master: str, spec_path: str) -> None:
    import pyarrow.parquet as pq

    from kafkalog_cli.spark import get_session
    from kafkalog_cli.spark.executor import new_stats_accumulator

    spec = json.loads(open(spec_path).read())
    spark = get_session(master, conf=spec.get("conf"))
    out: dict = {"defaultParallelism": spark.sparkContext.defaultParallelism}
    try:
        df = (spark.read.format("kafkalog").option("includeHeaders", "true")
              .load(spec["read"]))
        table = df.toArrow()
        pq.write_table(table, spec["rows_out"])
        out["rows"] = table.num_rows
        if spec.get("write_to"):
            (df.select("key", "value", "topic", "partition", "timestamp", "headers")
             .repartition(3).write.format("kafkalog").mode("append").save(spec["write_to"]))
        if spec.get("skip_corrupt"):
            acc = new_stats_accumulator(spark)
            n = (spark.read.format("kafkalog").option("failOnDataLoss", "false")
                 .option("statsAccumulator", acc.aid).load(spec["skip_corrupt"]).count())
            out["skip_corrupt"] = {"count": n, "stats": acc.value}
    finally:
        spark.stop()
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
