"""The kafkalog data source against the library's own decode: corpus and generated logs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from spark_fixtures import T0, arrow_rows, corpus_partition_dirs, reference_rows

pytestmark = pytest.mark.spark


def _read(spark, path, **options):
    r = spark.read.format("kafkalog")
    for k, v in options.items():
        r = r.option(k, str(v) if not isinstance(v, bool) else str(v).lower())
    return r.load(path)


def _catalog_non_control_records(corpus: Path) -> int:
    """CATALOG.md's record total counts control records; subtract them (the data source,
    like Spark's Kafka source, never returns control records)."""
    text = (corpus / "CATALOG.md").read_text()
    m = re.search(r"segment \.log files: \d+ .*?, \d+ batches, (\d+) records", text)
    total = int(m.group(1))
    ctl = re.search(r"control records in \.log files: (.*)", text).group(1)
    control = sum(int(n) for n in re.findall(r": (\d+)", ctl))
    return total - control


@pytest.mark.corpus
def test_corpus_rows_equal_local_decode(spark, corpus):
    dirs = corpus_partition_dirs(corpus)
    assert len(dirs) == 174  # 176 partition dirs, 2 of them hold index files only
    df = _read(spark, [str(d) for d in dirs], includeHeaders=True, minPartitions=8)
    table = df.toArrow()
    assert table.num_rows == _catalog_non_control_records(corpus) == 704672
    assert arrow_rows(table) == reference_rows(dirs)


@pytest.mark.corpus
def test_corpus_glob_and_log_dirs(spark, corpus):
    # a glob of log directories, comma-separated with a partition directory
    inv = corpus / "dipendrasaini__kafka-learnning-series" / "tmp"
    df = _read(spark, f"{inv}/kafka-logs*,{corpus}/iechenyb__data/kafka-logs/test-0921-0")
    got = {(r["topic"], r["partition"]): r["count"]
           for r in df.groupBy("topic", "partition").count().collect()}
    assert got == {("invoice", 0): 100294 * 2, ("invoice", 1): 99523, ("invoice", 2): 99939,
                   ("invoice", 3): 100577, ("invoice", 4): 99667, ("test-0921", 0): 1521}


def test_generated_rows_equal_local_decode_with_split_segments(spark, log_dir):
    from kafkalog_cli.spark import plan

    parts = plan.discover([str(log_dir)])
    opts = plan.parse_options({"maxPartitionBytes": "3000"})
    splits, _ = plan.plan_slices(parts, opts)
    assert any(s.start > 0 for sp in splits for s in sp), "no segment was cut"
    dirs = [Path(p.directory) for p in parts]
    df = _read(spark, str(log_dir), includeHeaders=True, maxPartitionBytes=3000)
    assert df.rdd.getNumPartitions() == len(splits)
    assert arrow_rows(df.toArrow()) == reference_rows(dirs)


def test_schema_and_types(spark, log_dir):
    df = _read(spark, str(log_dir / "legacy-0"), includeHeaders=True,
               includeBatchMetadata=True)
    assert df.schema.simpleString() == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,"
        "timestamp:timestamp,timestampType:int,headers:array<struct<key:string,"
        "value:binary>>,producerId:bigint,producerEpoch:int,baseSequence:int,"
        "partitionLeaderEpoch:int,isTransactional:boolean>")
    rows = {r["offset"]: r for r in df.collect()}
    assert rows[0]["timestampType"] == -1          # v0: NoTimestampType, timestamp -1 ms
    assert rows[0]["headers"] is None
    assert rows[2]["timestampType"] == 0 and rows[4]["key"] is None
    assert sorted(rows) == list(range(7))
    assert _read(spark, str(log_dir / "orders-0")).columns == [
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]


def test_log_append_time_batch(spark, log_dir):
    df = _read(spark, str(log_dir / "orders-0")).where("timestampType = 1")
    ts = {int(r["ts"]) for r in df.selectExpr("unix_millis(timestamp) as ts").collect()}
    assert ts == {T0 + 99_999}


def test_topic_and_offset_selection(spark, log_dir):
    base = str(log_dir)
    assert {r["topic"] for r in _read(spark, base, subscribe="txn,legacy")
            .select("topic").distinct().collect()} == {"txn", "legacy"}
    assert {r["topic"] for r in _read(spark, base, subscribePattern="ord.*")
            .select("topic").distinct().collect()} == {"orders"}
    offs = json.dumps({"orders": {"0": 40, "1": -2}})
    ends = json.dumps({"orders": {"0": 300, "1": 5, "2": -1}})
    df = _read(spark, base, subscribe="orders", startingOffsets=offs, endingOffsets=ends)
    got = {}
    for r in df.groupBy("partition").agg({"offset": "min", "*": "count"}).collect():
        got[r["partition"]] = (r["min(offset)"], r["count(1)"])
    ref = reference_rows([log_dir / "orders-2"])
    assert got == {0: (40, 260), 1: (0, 5), 2: (0, len(ref))}
    # startingTimestamp: first record with timestamp >= T per partition, then everything
    t = T0 + 10 * 500
    df = _read(spark, base, subscribe="orders", assign=json.dumps({"orders": [1]}),
               startingTimestamp=t)
    ref = reference_rows([log_dir / "orders-1"])
    first = min(r[2] for r in ref if r[3] >= t)
    assert first < 500  # the LogAppendTime batch (timestamps T0 + 99999) comes first
    got = sorted(r["offset"] for r in df.select("offset").collect())
    assert got == [r[2] for r in ref if r[2] >= first]


def test_load_list_of_paths(spark, log_dir):
    df = spark.read.format("kafkalog").load([str(log_dir / "orders-0"),
                                             str(log_dir / "legacy-0")])
    assert df.count() == len(reference_rows([log_dir / "orders-0", log_dir / "legacy-0"]))


def test_read_committed_drops_aborted_and_open_transactions(spark, log_dir):
    path = str(log_dir / "txn-0")
    # small splits: the markers are in the next segment, read ahead by the task
    unc = sorted(r["offset"] for r in _read(spark, path, maxPartitionBytes=100).collect())
    com = sorted(r["offset"] for r in _read(spark, path, isolationLevel="read_committed",
                                             maxPartitionBytes=100).collect())
    assert unc == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14]   # never control records
    # 3-5 aborted; 12-13 a transaction still open at the end: the last stable offset is
    # 12, where a read_committed consumer stops (14, not transactional, is past it)
    assert com == [0, 1, 2, 6, 7, 8, 9]


def _corrupt(part_dir: Path) -> tuple[Path, int]:
    """Flip a byte inside the 4th batch of the second segment; return (file, position)."""
    from kafkalog_cli.format.records import FileRecords

    log = sorted(part_dir.glob("*.log"))[1]
    data = bytearray(log.read_bytes())
    batches = list(FileRecords(bytes(data)).batches())
    pos = batches[3].position
    data[pos + 70] ^= 0xFF
    log.write_bytes(bytes(data))
    return log, pos


def test_fail_on_data_loss_both_ways(spark, log_dir_copy, tmp_path):
    from kafkalog_cli.spark.executor import new_stats_accumulator

    part = log_dir_copy / "orders-1"
    ref = reference_rows([part])
    log, pos = _corrupt(part)
    with pytest.raises(Exception) as ei:
        _read(spark, str(part)).count()
    msg = str(ei.value)
    assert "kafkalog: data loss" in msg and f"{log} at byte {pos}" in msg
    acc = new_stats_accumulator(spark)
    rows = _read(spark, str(part), failOnDataLoss=False, statsAccumulator=acc.aid,
                 includeHeaders=True).toArrow()
    stats = acc.value   # merged from the tasks through Spark, not through a file
    assert stats["corrupt_batches"] == 1 and stats["skipped"][0]["position"] == pos
    assert stats["rows"] == rows.num_rows
    got = arrow_rows(rows)
    assert 0 < len(ref) - len(got) <= 30 and set(got) <= set(ref)
