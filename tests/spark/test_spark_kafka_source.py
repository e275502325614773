"""Spark's own Kafka source (``spark-sql-kafka-0-10``, from Maven Central) reading a topic
from ``kafkalog serve`` in batch mode gives exactly the rows ``spark.read.format(
"kafkalog")`` gives on the same directory: keys, values, topic, partitions, offsets,
timestamps, timestamp types and headers (issue 27).

The jars are fetched by Maven (``kafka_source/pom.xml``) into the user's cache and added
to the session's class loader (``ADD JAR``): the shared session needs no restart."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from kafka_testkit import skip_or_fail

from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

POM = Path(__file__).parent / "kafka_source" / "pom.xml"
#: the jars Spark's Kafka source needs beyond PySpark's own
NEEDED = ("spark-sql-kafka-0-10", "spark-token-provider-kafka-0-10", "kafka-clients",
          "commons-pool2")
T0 = 1_700_000_000_000


def _cache() -> Path:
    base = os.environ.get("KAFKALOG_CACHE") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kafkalog")
    digest = hashlib.sha256(POM.read_bytes()).hexdigest()[:16]
    return Path(base) / f"spark-kafka-source-{digest}"


def _jars() -> list[Path]:
    libs = _cache() / "libs"
    if not libs.is_dir():
        if shutil.which("mvn") is None:
            skip_or_fail("Maven (mvn) is not installed: Spark's Kafka source cannot be fetched")
        tmp = libs.with_name("libs.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        done = subprocess.run(["mvn", "-q", "-B", "-f", str(POM),
                               "dependency:copy-dependencies", "-DincludeScope=runtime",
                               f"-DoutputDirectory={tmp}"], capture_output=True, text=True,
                              timeout=600)
        if done.returncode != 0:
            skip_or_fail(f"Maven could not fetch Spark's Kafka source: {done.stdout[-1500:]}")
        tmp.rename(libs)
    return sorted(j for j in libs.glob("*.jar") if j.name.startswith(NEEDED))


def _produce(port: int) -> None:
    ck = pytest.importorskip("confluent_kafka")
    p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{port}", "compression.type": "gzip",
                     "linger.ms": 50})
    for i in range(12):
        p.produce("sk", key=None if i % 3 == 0 else b"k%d" % i, value=b"v%d" % i,
                  partition=i % 3, timestamp=T0 + i,
                  headers=[("h", b"x%d" % i), ("n", None)] if i % 2 else None)
    assert p.flush(30) == 0


def test_spark_kafka_source_from_serve_equals_the_kafkalog_source(spark, tmp_path):
    jars = _jars()
    assert len(jars) == len(NEEDED), jars
    for jar in jars:
        spark.sql(f"ADD JAR {jar}")
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    with ServerThread(log_dir, ServerOptions(port=0, auto_create_topics=True,
                                             num_partitions=3)) as s:
        _produce(s.port)
        kafka = (spark.read.format("kafka")
                 .option("kafka.bootstrap.servers", f"127.0.0.1:{s.port}")
                 .option("subscribe", "sk").option("includeHeaders", "true").load())
        via_serve = sorted(kafka.collect(), key=lambda r: (r.partition, r.offset))
    local = (spark.read.format("kafkalog").option("subscribe", "sk")
             .option("includeHeaders", "true").load(str(log_dir)))
    assert kafka.schema == local.schema
    via_files = sorted(local.collect(), key=lambda r: (r.partition, r.offset))
    assert via_serve == via_files
    # and they are the records sent
    assert [(r.partition, r.offset, r.value) for r in via_files] == [
        (i % 3, i // 3, b"v%d" % i) for i in sorted(range(12), key=lambda i: (i % 3, i))]
    assert via_files[1].headers == [("h", b"x3"), ("n", None)]
