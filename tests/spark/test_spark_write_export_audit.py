"""Writing through the data source, export with both engines, audit against verify-index."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from spark_fixtures import T0, arrow_rows, corpus_partition_dirs, reference_rows

from kafkalog_cli.cli.exit_codes import for_error

pytestmark = pytest.mark.spark

WRITE_SCHEMA = ("key binary, value binary, topic string, partition int, timestamp timestamp, "
                "headers array<struct<key:string,value:binary>>")


def _ts(ms: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=ms)


def _verify_ok(path: Path) -> None:
    from kafkalog_cli.ops.verify import verify_index

    result = verify_index([path])
    assert result.segments and result.ok, [s.problems for s in result.segments if s.problems]


def test_write_then_read_same_rows(spark, tmp_path):
    log = tmp_path / "out-logs"
    log.mkdir()
    rows = []
    for i in range(500):
        hdrs = [("h", f"{i}".encode())] if i % 4 == 0 else None
        rows.append((None if i % 9 == 0 else f"k{i}".encode(), f"value-{i}".encode(),
                     "w" if i % 3 else "z", i % 2, _ts(T0 + i), hdrs))
    df = spark.createDataFrame(rows, WRITE_SCHEMA).repartition(3)
    df.write.format("kafkalog").mode("append").save(str(log))
    df.write.format("kafkalog").mode("append").save(str(log))   # appends continue offsets
    _verify_ok(log)
    assert not list(log.glob(".kafkalog-staging-*"))
    back = spark.read.format("kafkalog").option("includeHeaders", "true").load(str(log))
    got = arrow_rows(back.toArrow())
    want = sorted(((t, p, k, v, tuple(h or ()), ts) for k, v, t, p, ts, h in rows * 2),
                  key=repr)
    assert sorted(((t, p, k, v, h, _ts(ms)) for t, p, o, ms, k, v, h in got),
                  key=repr) == want
    for t in ("w", "z"):
        for p in (0, 1):
            offs = [r[2] for r in got if r[0] == t and r[1] == p]
            assert offs == list(range(len(offs)))   # dense offsets from 0


def test_write_appends_to_existing_partition(spark, log_dir_copy):
    part = log_dir_copy / "orders-2"
    before = reference_rows([part])
    df = spark.createDataFrame(
        [(b"nk", b"nv", "orders", 2, _ts(T0 + 123_456), None),
         (None, b"nv2", "orders", None, _ts(T0), None)],          # no partition: murmur2
        WRITE_SCHEMA)
    df.coalesce(1).write.format("kafkalog").mode("append").save(str(log_dir_copy))
    _verify_ok(log_dir_copy)
    after = reference_rows([part])
    assert after[:len(before)] == before
    new = after[len(before):]
    assert new[0][2] == before[-1][2] + 1 and new[0][4:6] == (b"nk", b"nv")
    # the null-key row without a partition goes to partition 0
    assert reference_rows([log_dir_copy / "orders-0"])[-1][5] == b"nv2"


def test_overwrite_mode_is_refused(spark, tmp_path):
    df = spark.createDataFrame([(b"k", b"v", "t", 0, _ts(T0), None)], WRITE_SCHEMA)
    with pytest.raises(Exception, match="only appends"):
        df.write.format("kafkalog").mode("overwrite").save(str(tmp_path))


def _read_export(out: Path):
    import pyarrow as pa
    import pyarrow.dataset as ds

    part = ds.partitioning(pa.schema([("topic", pa.string()), ("partition", pa.int32())]),
                           flavor="hive")
    return ds.dataset(str(out), format="parquet", partitioning=part).to_table()


def test_export_parquet_both_engines_same_rows(spark, log_dir, tmp_path):
    import pyarrow as pa

    from kafkalog_cli.ops.export import export
    from kafkalog_cli.spark.rows import arrow_schema

    dirs = sorted(p for p in log_dir.iterdir() if p.is_dir())
    ref = reference_rows(dirs)
    tables = {}
    for engine in ("local", "spark"):
        out = tmp_path / engine
        res = export([str(log_dir)], out, engine=engine)
        assert res.engine == engine and res.rows == len(ref)
        assert (out / "topic=orders" / "partition=1").is_dir()
        tables[engine] = t = _read_export(out)
        want = arrow_schema(include_headers=True)
        assert pa.schema([t.schema.field(n) for n in want.names]).equals(want)
        assert arrow_rows(t) == ref
    assert res.partitions == 5


def test_local_export_parquet_read_by_spark(spark, log_dir, tmp_path):
    """The local engine's writer options (no dictionary on key/value/offset/timestamp,
    DELTA_BINARY_PACKED offsets and timestamps, no statistics on payloads) give files that
    Spark's own Parquet reader (not pyarrow, which wrote them) reads back to the records
    decoded from the segments, with and without its vectorized reader."""
    import pyarrow.parquet as pq

    from kafkalog_cli.ops.export import export

    dirs = sorted(p for p in log_dir.iterdir() if p.is_dir())
    out = tmp_path / "local"
    export([str(log_dir)], out, engine="local", options={"includeBatchMetadata": "true"})
    for vectorized in ("true", "false"):
        spark.conf.set("spark.sql.parquet.enableVectorizedReader", vectorized)
        try:
            df = spark.read.parquet(str(out)).select(
                "topic", "partition", "offset", "timestamp", "key", "value", "headers")
            assert arrow_rows(df.toArrow()) == reference_rows(dirs)
        finally:
            spark.conf.unset("spark.sql.parquet.enableVectorizedReader")
    md = pq.ParquetFile(out / "topic=orders" / "partition=1" / "part-00000.parquet").metadata
    cols = {md.row_group(0).column(i).path_in_schema: md.row_group(0).column(i)
            for i in range(md.num_columns)}
    assert "DELTA_BINARY_PACKED" in cols["offset"].encodings
    assert "DELTA_BINARY_PACKED" in cols["timestamp"].encodings
    assert "RLE_DICTIONARY" not in cols["value"].encodings
    assert "RLE_DICTIONARY" in cols["timestampType"].encodings
    assert cols["offset"].statistics.has_min_max and cols["value"].statistics is None


def test_export_jsonl_both_engines_same_lines(spark, log_dir, tmp_path):
    import json

    from kafkalog_cli.ops.export import export

    lines = {}
    for engine in ("local", "spark"):
        out = tmp_path / engine
        export([str(log_dir / "legacy-0"), str(log_dir / "orders-0")], out, fmt="jsonl",
               engine=engine, options={"subscribePattern": "legacy|orders"})
        got = []
        for f in sorted(out.rglob("part-*")):
            if f.suffix in (".json", ".jsonl"):
                got.extend(json.loads(x) for x in f.read_text().splitlines())
        lines[engine] = sorted(got, key=lambda d: (d["offset"], d["value"] or ""))
    assert lines["local"] == lines["spark"]
    first = [d for d in lines["local"] if d["offset"] == 0 and d["timestampType"] == -1]
    # NO_TIMESTAMP (-1) in epoch ms, as every kafkalog JSON writes timestamps
    assert first and first[0]["timestamp"] == -1


@pytest.mark.corpus
def test_audit_engines_agree_and_match_verify_index(spark, corpus):
    from kafkalog_cli.ops.audit import audit
    from kafkalog_cli.ops.verify import verify_index

    dirs = [str(d) for d in corpus_partition_dirs(corpus)]
    local = audit(dirs, engine="local")
    remote = audit(dirs, engine="spark")
    assert [p.to_dict() for p in local.partitions] == [p.to_dict() for p in remote.partitions]
    assert sum(p.records for p in local.partitions) == 704676   # CATALOG.md, control incl.
    assert sum(p.batches for p in local.partitions) == 101203
    assert sum(p.control_records for p in local.partitions) == 4
    assert local.ok
    for p in local.partitions:
        v = verify_index([p.directory])
        assert p.index_problems == v.problem_count
        assert p.segments == len([s for s in v.segments if Path(s.log).exists()])


def test_audit_finds_corruption(log_dir_copy):
    from kafkalog_cli.ops.audit import audit

    log = sorted((log_dir_copy / "orders-0").glob("*.log"))[0]
    data = bytearray(log.read_bytes())
    data[200] ^= 0xFF
    log.write_bytes(bytes(data) + b"\x00\x00\x00")
    res = audit([str(log_dir_copy)], engine="local")
    bad = {f"{p.topic}-{p.partition}": p for p in res.partitions if not p.ok}
    assert set(bad) == {"orders-0"} and not res.ok
    assert bad["orders-0"].corrupt_batches == 1 and bad["orders-0"].invalid_bytes == 3


def test_export_spark_data_loss_is_one_line(spark, log_dir_copy, tmp_path):
    from kafkalog_cli.errors import SparkJobError
    from kafkalog_cli.format.records import FileRecords
    from kafkalog_cli.ops.export import export

    log = sorted((log_dir_copy / "orders-0").glob("*.log"))[2]
    data = bytearray(log.read_bytes())
    pos = list(FileRecords(bytes(data)).batches())[2].position
    data[pos + 80] ^= 0xFF
    log.write_bytes(bytes(data))
    with pytest.raises(SparkJobError) as ei:
        export([str(log_dir_copy / "orders-0")], tmp_path / "o", engine="spark")
    assert for_error(ei.value) == 1  # damaged data: 1, as the local engine (exit_codes)
    assert str(ei.value).startswith(f"kafkalog: data loss: {log} at byte {pos}: ")
    assert "\n" not in str(ei.value)
    res = export([str(log_dir_copy / "orders-0")], tmp_path / "o2", engine="spark",
                 options={"failOnDataLoss": "false"})
    assert res.corrupt_batches == 1 and res.skipped[0]["position"] == pos


def test_append_records_splits_batches_before_max_message_bytes(tmp_path):
    """Two 600,000-byte values fit max.message.bytes (1048588) one per batch, as a
    producer's accumulator puts them; together they would not. A record larger than the
    limit alone is refused by the engine (RecordTooLarge), as the broker refuses it."""
    from kafkalog_cli.errors import RecordTooLargeError
    from kafkalog_cli.format.records import FileRecords
    from kafkalog_cli.spark.writer import append_records

    big = [(T0, b"k%d" % i, bytes([65 + i]) * 600_000, ()) for i in range(2)]
    res = append_records(tmp_path / "logs", "big", 0, big)
    assert (res.records, res.batches) == (2, 2)
    (log,) = (tmp_path / "logs" / "big-0").glob("*.log")
    got = [(r.key, r.value) for b in FileRecords(log.read_bytes()).batches()
           for r in b.records()]
    assert got == [(k, v) for _, k, v, _ in big]
    with pytest.raises(RecordTooLargeError):
        append_records(tmp_path / "logs", "big", 0, [(T0, None, b"x" * 1_100_000, ())])


def test_export_and_source_start_at_the_log_start_offset(spark, log_dir_copy, tmp_path):
    """Spark's Kafka source starts ``earliest`` at each partition's log start offset
    (log-start-offset-checkpoint; the consumer's seekToBeginning), not at the first
    segment's base: records below it are not exported by either engine, nor read by the
    data source, and their absence is not data loss."""
    from kafkalog_cli.ops.export import export

    parts = [log_dir_copy / f"orders-{p}" for p in range(3)]
    ref = reference_rows(parts)
    orders1 = [r[2] for r in ref if r[1] == 1]
    lso = orders1[len(orders1) // 2]          # inside the second segment of orders-1
    (log_dir_copy / "log-start-offset-checkpoint").write_text(f"0\n1\norders 1 {lso}\n")
    want = [r for r in ref if r[1] != 1 or r[2] >= lso]
    assert len(want) < len(ref)
    for engine in ("local", "spark"):
        res = export([str(p) for p in parts], tmp_path / engine, engine=engine)
        assert (res.rows, res.lost_offsets, res.corrupt_batches) == (len(want), 0, 0)
        assert arrow_rows(_read_export(tmp_path / engine)) == want, engine
    df = (spark.read.format("kafkalog").option("includeHeaders", "true")
          .load([str(p) for p in parts]))
    assert arrow_rows(df.toArrow()) == want
