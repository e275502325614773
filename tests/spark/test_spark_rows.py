"""Reading slices (``kafkalog_cli.spark.rows`` / ``plan``) with the local engine's code
path: corruption met under offset bounds, segment ends, and the offset specs, checked
against what Spark's Kafka source (a Kafka consumer) does."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")

from kafkalog_cli.format.records import FileRecords  # noqa: E402
from kafkalog_cli.spark import plan, rows  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logs"


def read(paths, **options):
    """``(rows, stats)`` of a read through plan + rows, as ``export --engine local``."""
    o = plan.parse_options({k: (json.dumps(v) if isinstance(v, dict) else str(v))
                            for k, v in options.items()})
    o.min_partitions = 1
    splits, _ = plan.plan_slices(plan.discover([str(p) for p in paths]), o)
    st = rows.ReadStats()
    st.add_plan_losses(o.plan_losses)  # as export does
    out = []
    for sp in splits:
        for rb in rows.read_slices(sp, o, st):
            out.extend(rb.to_pylist())
    return out, st


@pytest.fixture
def multi(tmp_path) -> Path:
    """A copy of fixtures/logs/multi-0 (3 segments: 0, 88, 164)."""
    d = tmp_path / "logs" / "multi-0"
    shutil.copytree(FIXTURES / "multi-0", d)
    return d


def _batch_positions(log: Path) -> list[int]:
    return [b.position for b in FileRecords(log.read_bytes()).batches()]


# -- corrupt base offset under offset bounds -------------------------------------------------

@pytest.mark.parametrize("bound", [{"endingOffsets": {"multi": {"0": 100}}},
                                   {"startingOffsets": {"multi": {"0": 2}}}])
@pytest.mark.parametrize("bad_base", [10**12, -5])
def test_corrupt_base_offset_is_loss_under_offset_bounds(multi, bound, bad_base):
    """The base offset is outside the CRC; a corrupt one must not end (endingOffsets) or
    skip (startingOffsets) the read silently: the offset-order check runs first."""
    log = multi / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    pos = _batch_positions(log)[3]
    struct.pack_into(">q", data, pos, bad_base)
    log.write_bytes(bytes(data))
    with pytest.raises(rows.DataLossError, match=f"at byte {pos}: batch offsets"):
        read([multi], **bound)
    got, st = read([multi], failOnDataLoss="false", **bound)
    assert st.corrupt_batches == 1 and st.skipped[0]["position"] == pos
    want, _ = read([FIXTURES / "multi-0"], **bound)
    lost = {r["offset"] for r in want} - {r["offset"] for r in got}
    assert lost and {r["offset"] for r in got} < {r["offset"] for r in want}


# -- invalid bytes that are not a partial tail ---------------------------------------------

@pytest.mark.parametrize("split", [None, 5000])
def test_bad_size_in_rolled_segment_is_loss_not_partial_tail(multi, split):
    """Only the partition's last segment, at its end, can hold a partial batch (a broker
    appends only to the active segment); a corrupt size in a rolled segment, or one that
    runs past a split, hides later batches: data loss, not a partial tail or nothing."""
    log = multi / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    pos = _batch_positions(log)[3]
    struct.pack_into(">i", data, pos + 8, 100000)
    log.write_bytes(bytes(data))
    opts = {} if split is None else {"maxPartitionBytes": split}
    with pytest.raises(rows.DataLossError, match=f"at byte {pos}: .* not a whole batch"):
        read([multi], **opts)
    got, st = read([multi], failOnDataLoss="false", **opts)
    assert st.corrupt_batches == 1 and st.partial_tail_bytes == 0
    assert st.skipped[0]["position"] == pos and st.corrupt_bytes == st.skipped[0]["bytes"]


def test_partial_batch_at_end_of_last_segment_is_partial_tail(multi):
    log = multi / "00000000000000000164.log"
    full, _ = read([multi])
    with open(log, "ab") as f:
        f.write(FileRecords((multi / "00000000000000000088.log").read_bytes())
                .view[:40].tobytes())
    got, st = read([multi])
    assert got == full and st.partial_tail_bytes == 40 and st.corrupt_batches == 0


# -- directories a consumer never reads ------------------------------------------------------

@pytest.mark.parametrize("kind", ["delete", "future", "stray"])
def test_delete_future_stray_dirs_are_not_partitions(tmp_path, kind):
    """LocalLog names a partition being deleted / a future replica / a stray one
    <topic>-<n>.<uuid>-delete|-future|-stray; a consumer never reads them."""
    from kafkalog_cli.ops.audit import audit

    logs = tmp_path / "logs"
    shutil.copytree(FIXTURES / "plain-0", logs / "plain-0")
    shutil.copytree(FIXTURES / "plain-0",
                    logs / f"plain-0.0123456789abcdef0123456789abcdef-{kind}")
    want, _ = read([FIXTURES / "plain-0"])
    for paths in ([logs], [str(logs / "plain-*")]):
        assert [d.directory for d in plan.discover([str(p) for p in paths])] == [
            str(logs / "plain-0")]
        got, _ = read(paths)
        assert len(got) == len(want)
    assert [p.directory for p in audit([str(logs)], engine="local").partitions] == [
        str(logs / "plain-0")]


# -- starting offsets below the log start offset ---------------------------------------------

@pytest.mark.parametrize("checkpoint", [False, True])
def test_starting_offset_below_log_start_is_data_loss(multi, checkpoint):
    """Spark's consumer runs with auto.offset.reset=none: an offset below the log start
    is "Cannot fetch offset N", data loss, not a silent move to the first offset."""
    if checkpoint:  # log start 100 from the checkpoint, inside the first segment
        (multi.parent / "log-start-offset-checkpoint").write_text("0\n1\nmulti 0 100\n")
        start, first = 95, 100
    else:  # retention removed segment 0: the log starts at 88
        for p in multi.glob("00000000000000000000.*"):
            p.unlink()
        start, first = 10, 88
    spec = {"startingOffsets": {"multi": {"0": start}}}
    with pytest.raises(rows.DataLossError, match=f"Cannot fetch offset {start} .* {first}"):
        read([multi], **spec)
    got, st = read([multi], failOnDataLoss="false", **spec)
    assert st.lost_offsets == first - start and st.skipped[0]["offsets"] == first - start
    assert min(r["offset"] for r in got) == first
    ok, st = read([multi], **{"startingOffsets": {"multi": {"0": first}}})
    assert min(r["offset"] for r in ok) == first and not st.skipped


# -- offset specs a batch query refuses (KafkaSourceProvider.validateBatchOptions) ----------

@pytest.mark.parametrize("options,message", [
    ({"startingOffsets": "latest"}, "starting offset can't be latest for batch queries"),
    ({"startingOffsets": {"multi": {"0": -1}}},
     "startingOffsets for multi-0 can't be latest for batch queries"),
    ({"endingOffsets": "earliest"}, "ending offset can't be earliest for batch queries"),
    ({"endingOffsets": {"multi": {"0": -2}}},
     "ending offset for multi-0 can't be earliest for batch queries"),
    ({"startingOffsets": {"multi": {"0": 150}}, "endingOffsets": {"multi": {"0": 100}}},
     "Beginning offset 150 is after the ending offset 100 for topic multi partition 0"),
])
def test_invalid_batch_offsets_are_refused(multi, options, message):
    from kafkalog_cli.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match=message.replace("(", r"\(")):
        read([multi], **options)


def test_equal_start_and_end_is_an_empty_range(multi):
    got, _ = read([multi], startingOffsets={"multi": {"0": 100}},
                  endingOffsets={"multi": {"0": 100}})
    assert got == []


# -- read_committed stops at the last stable offset ------------------------------------------

def _txn_partition(root: Path, *, close_at_end: bool = False, snapshot: int | None = None,
                   two_segments: bool = False) -> Path:
    """``t-0``: pid 1 commits offsets 0-1 (marker 2); pid 2 opens a transaction at 3-4;
    plain records 5-6; pid 2's COMMIT at 7 when ``close_at_end``. ``snapshot``: a producer
    snapshot at that offset with pid 2's transaction open from 3 (as the broker writes at
    a roll); ``two_segments``: the log rolled at offset 5."""
    from spark_fixtures import write_segment

    from kafkalog_cli.format.builder import build_batch, build_control_batch
    from kafkalog_cli.schema.producer_snapshot import ProducerStateEntry, build_snapshot

    T = 1_700_000_000_000

    def data(base, pid, n, txn):
        return build_batch([(T + base + i, None, b"v%d" % (base + i), ()) for i in range(n)],
                           base_offset=base, is_transactional=txn,
                           producer_id=pid if txn else -1, producer_epoch=0 if txn else -1,
                           base_sequence=0 if txn else -1)

    batches = [data(0, 1, 2, True),
               build_control_batch(1, base_offset=2, timestamp=T, producer_id=1,
                                   producer_epoch=0),
               data(3, 2, 2, True), data(5, 0, 2, False)]
    if close_at_end:
        batches.append(build_control_batch(1, base_offset=7, timestamp=T, producer_id=2,
                                           producer_epoch=0))
    d = root / "t-0"
    if two_segments:
        write_segment(d, 0, batches[:3])
        write_segment(d, 5, batches[3:])
    else:
        write_segment(d, 0, batches)
    if snapshot is not None:
        (d / f"{snapshot:020d}.snapshot").write_bytes(build_snapshot([
            ProducerStateEntry(producer_id=2, producer_epoch=0, last_sequence=1,
                               last_offset=4, offset_delta=1, timestamp=T,
                               coordinator_epoch=0, current_txn_first_offset=3)]))
    return d


def _values(got) -> list[bytes]:
    return [r["value"] for r in got]


@pytest.mark.parametrize("layout", [{}, {"two_segments": True, "snapshot": 5},
                                    {"snapshot": 99}])  # 99: stray, above the log end
def test_read_committed_stops_at_the_last_stable_offset(tmp_path, layout):
    """A consumer with isolation.level=read_committed reads up to the LSO: the first
    offset of pid 2's open transaction (3), so the plain records after it (5-6) are not
    returned either; read_uncommitted returns every data record."""
    d = _txn_partition(tmp_path / "logs", **layout)
    assert plan.last_stable_offset(plan.discover([str(d)])[0]) == 3
    got, _ = read([d], isolationLevel="read_committed")
    assert _values(got) == [b"v0", b"v1"]
    got, _ = read([d], isolationLevel="read_uncommitted")
    assert _values(got) == [b"v0", b"v1", b"v3", b"v4", b"v5", b"v6"]


def test_read_committed_after_the_transaction_ends(tmp_path):
    d = _txn_partition(tmp_path / "logs", close_at_end=True)
    assert plan.last_stable_offset(plan.discover([str(d)])[0]) is None
    got, _ = read([d], isolationLevel="read_committed")
    assert _values(got) == [b"v0", b"v1", b"v3", b"v4", b"v5", b"v6"]


def test_last_stable_offset_walks_only_what_follows_the_snapshot(tmp_path, monkeypatch):
    from kafkalog_cli.storage import segment

    d = _txn_partition(tmp_path / "logs", two_segments=True, snapshot=5)
    opened = []
    real = segment.open_view
    monkeypatch.setattr(segment, "open_view", lambda p: opened.append(Path(p).name) or real(p))
    assert plan.last_stable_offset(plan.discover([str(d)])[0]) == 3
    assert opened == [f"{5:020d}.log"]


# -- earliest is the log start offset ----------------------------------------------------------

def _consumer_offsets_from_beginning(log_dir: Path, topic: str, partition: int) -> list[int]:
    """Offsets a real consumer (kafka-python, seekToBeginning: ListOffsets EARLIEST) reads
    from ``kafkalog serve`` over a copy of ``log_dir``."""
    kafka = pytest.importorskip("kafka")
    from kafkalog_cli.server.broker import ServerThread
    from kafkalog_cli.server.kafka_apis import ServerOptions

    got: list[int] = []
    with ServerThread(log_dir, ServerOptions(port=0)) as s:
        c = kafka.KafkaConsumer(bootstrap_servers=s.bootstrap, enable_auto_commit=False,
                                fetch_max_wait_ms=100, consumer_timeout_ms=3000)
        try:
            tp = kafka.TopicPartition(topic, partition)
            c.assign([tp])
            c.seek_to_beginning(tp)
            end = c.end_offsets([tp])[tp]
            while not got or got[-1] < end - 1:
                polled = c.poll(timeout_ms=2000)
                if not polled:
                    break
                got += [m.offset for recs in polled.values() for m in recs]
        finally:
            c.close()
    return got


def test_earliest_starts_at_the_log_start_offset(multi, tmp_path):
    """Spark's Kafka source starts ``earliest`` at the log start offset (the consumer's
    seekToBeginning; ListOffsets EARLIEST answers UnifiedLog.logStartOffset), which the
    broker keeps in log-start-offset-checkpoint: records below it (DeleteRecords, or
    retention inside a segment) are gone for every consumer even while their segment is
    on disk. The default start, an explicit -2 and a timestamp before it all start there."""
    (multi.parent / "log-start-offset-checkpoint").write_text("0\n1\nmulti 0 100\n")
    served = tmp_path / "served"
    shutil.copytree(multi.parent, served)
    consumer = _consumer_offsets_from_beginning(served, "multi", 0)
    assert consumer and consumer[0] == 100     # the independent client's view
    for spec in ({}, {"startingOffsets": {"multi": {"0": -2}}},
                 {"startingTimestamp": 0},
                 {"startingOffsetsByTimestamp": {"multi": {"0": 0}}}):
        got, st = read([multi], **spec)
        assert [r["offset"] for r in got] == consumer, spec
        assert not st.skipped and st.lost_offsets == 0   # not data loss: the range's start
    # an ending timestamp before the log start offset: nothing (ListOffsets by timestamp
    # searches from logStartOffset, so the end is the log start offset itself)
    got, _ = read([multi], endingTimestamp=0)
    assert got == []


# -- a hostile recordsCount ------------------------------------------------------------------

def test_a_records_count_beyond_the_block_sizes_no_buffer(tmp_path, monkeypatch):
    """recordsCount is read from the batch header (inside the CRC, so a valid CRC proves
    nothing): a batch claiming 2**31 - 1 records in a 60-byte block must not size the
    group's Arrow buffers (it once made a 600 MB read). The batch is corrupt data loss,
    the batches around it are read."""
    import pyarrow as pa

    from kafkalog_cli.crc import load
    from kafkalog_cli.format.builder import build_batch

    crc = load()
    recs = [(1000, b"k", b"v" * 10, ())] * 5
    bad = bytearray(build_batch(recs, base_offset=5))
    struct.pack_into(">i", bad, 57, 2**31 - 1)  # recordsCount
    struct.pack_into(">I", bad, 17, crc(bytes(bad[21:])))  # a valid CRC again
    first = build_batch(recs, base_offset=0)
    d = tmp_path / "logs" / "t-0"
    d.mkdir(parents=True)
    (d / "00000000000000000000.log").write_bytes(
        first + bytes(bad) + build_batch(recs, base_offset=10))
    sizes = []
    real = pa.allocate_buffer
    monkeypatch.setattr(pa, "allocate_buffer", lambda n, *a, **k: (sizes.append(n),
                                                                   real(n, *a, **k))[1])
    got, st = read([d], failOnDataLoss="false")
    assert [r["offset"] for r in got] == [0, 1, 2, 3, 4, 10, 11, 12, 13, 14]
    assert st.corrupt_batches == 1 and st.skipped[0]["position"] == len(first)
    assert max(sizes, default=0) < 1 << 20
    with pytest.raises(rows.DataLossError, match="premature EOF"):
        read([d])


# -- memory of a read ------------------------------------------------------------------------

def _headers_partition(root: Path, n: int, batch: int = 100) -> Path:
    """A partition of ``n`` records with 2 headers each, in uncompressed batches of
    ``batch``: records the group decode does not take (headers), so the list path reads
    them."""
    from kafkalog_cli.format.builder import build_batch

    d = root / "logs" / "h-0"
    d.mkdir(parents=True)
    hs = (("h0", b"header-value-0"), ("h1", b"header-value-1"))
    with open(d / "00000000000000000000.log", "wb") as f:
        for base in range(0, n, batch):
            f.write(build_batch([(1000 + i, b"key-%010d" % i, b"v" * 20, hs)
                                 for i in range(base, min(n, base + batch))],
                                base_offset=base))
    return d


def test_the_list_path_holds_a_piece_of_python_objects_not_a_batch(tmp_path, monkeypatch):
    """A record with headers is ~600 bytes of Python objects on the list path (its key
    and value bytes, ints, a list of tuples of str and bytes), ~100 in Arrow. Held for a
    whole Arrow batch (65,536 rows) they were ~40 MB of heap (46 MB for the ~100-byte
    values of run_all's memory rows: over issue 13's 64 MB with pyarrow's pool); now
    turned into Arrow every LIST_PIECE_ROWS rows. The group decode, which declines
    headers and hands them to the list path after one group, is off here: its first
    group's cost (numpy temporaries without the compiled core) is not the list path's."""
    import tracemalloc

    monkeypatch.setattr(rows._fast, "ROWS", False)
    n = rows.BATCH_ROWS + 4000
    d = _headers_partition(tmp_path, n)
    o = plan.parse_options({"includeHeaders": "true"})
    o.min_partitions = 1
    (split,), _ = plan.plan_slices(plan.discover([str(d)]), o)
    got = 0
    tracemalloc.start()
    try:
        for rb in rows.read_slices(split, o):
            got += rb.num_rows
            assert rb.column("headers")[0].as_py() == [
                {"key": "h0", "value": b"header-value-0"},
                {"key": "h1", "value": b"header-value-1"}]
            del rb
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == n
    assert peak < 12_000_000, peak  # ~40 MB before


def test_a_batch_is_not_held_while_the_next_is_built(tmp_path, monkeypatch):
    """The reading generators dropped their reference to a yielded batch only when the
    next one was built: two batches' Arrow memory at once, and export's loop held it
    too. Each batch is gone (its consumer done with it) before the next build starts."""
    import weakref

    import pyarrow as pa

    monkeypatch.setattr(rows, "BATCH_ROWS", 1000)
    d = _headers_partition(tmp_path, 5000)
    built: list = []
    alive_at_build: list[int] = []
    real = rows._Columns.build

    def build(self, *args):
        alive_at_build.append(sum(w() is not None for w in built))
        rb = real(self, *args)
        if rb is not None:
            built.append(weakref.ref(rb))
        return rb

    monkeypatch.setattr(rows._Columns, "build", build)
    o = plan.parse_options({"includeHeaders": "true"})
    o.min_partitions = 1
    (split,), _ = plan.plan_slices(plan.discover([str(d)]), o)
    offsets = []
    for rb in rows.read_slices(split, o):
        offsets += rb.column("offset").to_pylist()
        del rb
    assert offsets == list(range(5000))
    assert len(built) == 5 and alive_at_build == [0] * 5

    # export's loop (JSON Lines: its writer keeps no Arrow memory): no Arrow memory is in
    # use when a build starts (the previous batch, before)
    from kafkalog_cli.ops.export import export

    pool_at_build: list[int] = []
    sizes: list[int] = []

    def build_export(self, *args):
        pool_at_build.append(pa.total_allocated_bytes())
        rb = real(self, *args)
        if rb is not None:
            sizes.append(rb.nbytes)
        return rb

    monkeypatch.setattr(rows._Columns, "build", build_export)
    r = export([str(d)], tmp_path / "out", fmt="jsonl", engine="local")
    assert r.rows == 5000 and len(sizes) == 5
    assert max(pool_at_build) < min(sizes) / 2, (pool_at_build, sizes)


@pytest.mark.parametrize("per_batch", [10, 100])  # 200 KB blocks; 2 MB ones (streamed)
@pytest.mark.parametrize("headers", [False, True])  # the group decode; the list path
def test_a_batch_of_large_records_is_bounded_by_bytes(tmp_path, monkeypatch, per_batch,
                                                      headers):
    """Rows alone bounded an Arrow batch at 65,536 records: a 200 MB segment of 100 KB
    records became one batch (a 524 MB pyarrow pool, measured). A batch now ends after
    the block that brings its records to BATCH_BYTES (1 MiB here)."""
    from kafkalog_cli.format.builder import build_batch

    monkeypatch.setattr(rows, "BATCH_BYTES", 1 << 20, raising=False)
    d = tmp_path / "logs" / "big-0"
    d.mkdir(parents=True)
    hs = (("h", b"x"),) if headers else ()
    n = 500
    with open(d / "00000000000000000000.log", "wb") as f:
        for base in range(0, n, per_batch):
            f.write(build_batch([(1000 + i, None, bytes([65 + i % 26]) * 20_000, hs)
                                 for i in range(base, base + per_batch)],
                                base_offset=base))
    o = plan.parse_options({"includeHeaders": "true"})
    o.min_partitions = 1
    (split,), _ = plan.plan_slices(plan.discover([str(d)]), o)
    offsets, sizes = [], []
    for rb in rows.read_slices(split, o):
        offsets += rb.column("offset").to_pylist()
        values = rb.column("value").to_pylist()
        assert values == [bytes([65 + i % 26]) * 20_000 for i in offsets[-len(values):]]
        sizes.append(sum(map(len, values)))
    assert offsets == list(range(n))
    # a batch ends after the block (here at most ~1 MiB: streamed runs) reaching 1 MiB
    assert len(sizes) >= 4 and max(sizes) < (1 << 20) + min(per_batch * 20_000, 1 << 20) \
        + 20_000, sizes


def test_planning_splits_walks_the_offset_index_without_a_list(tmp_path):
    """Cutting a segment larger than the split size walks its offset index; the walk
    listed every entry as objects first (~265 bytes an entry: 18 MB of heap for the 65k
    entries of run_all's 1 GiB memory segment, in the driver and in the local export,
    growing with the segment). The cuts are still at index positions that start a batch,
    at least one split size apart."""
    import tracemalloc

    from kafkalog_cli.format.builder import build_batch
    from kafkalog_cli.storage.recovery_scan import scan_log

    d = tmp_path / "logs" / "t-0"
    d.mkdir(parents=True)
    one = build_batch([(1000, None, b"x", ())], base_offset=0)
    n = 150_000
    data = bytearray(one * n)
    for i in range(n):  # base offsets 0, 1, ... (outside the CRC)
        data[i * len(one):i * len(one) + 8] = i.to_bytes(8, "big")
    (d / "00000000000000000000.log").write_bytes(data)
    # an entry for every batch (index.interval.bytes below a batch's size)
    (d / "00000000000000000000.index").write_bytes(
        scan_log(memoryview(data), 0, len(one) - 1).offset_index)
    o = plan.parse_options({"maxPartitionBytes": str(len(data) // 5)})
    parts = plan.discover([str(d)])
    tracemalloc.start()
    try:
        splits, total = plan.plan_slices(parts, o)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert total == len(data)
    cuts = [s.start for sp in splits for s in sp][1:]
    assert len(cuts) >= 4 and all(c % len(one) == 0 for c in cuts)
    assert all(b - a >= len(data) // 5 for a, b in zip([0, *cuts], cuts, strict=False))
    assert peak < 8_000_000, peak  # 40 MB before; the index's bytes are 1.2 MB


def test_export_writes_the_pieces_one_row_group_a_batch(tmp_path, monkeypatch):
    """export's Parquet takes each batch's rows in the pieces they were decoded in (a
    table, not combined into one record batch: the combined copy held the rows twice):
    still one row group a batch, and the rows of the combined read."""
    import pyarrow.parquet as pq

    from kafkalog_cli.ops.export import export

    monkeypatch.setattr(rows, "BATCH_ROWS", 1000)
    monkeypatch.setattr(rows, "LIST_PIECE_ROWS", 300)
    d = _headers_partition(tmp_path, 2500)
    export([d], tmp_path / "out", fmt="parquet", engine="local")
    f = pq.ParquetFile(tmp_path / "out" / "topic=h" / "partition=0" / "part-00000.parquet")
    assert [f.metadata.row_group(i).num_rows for i in range(f.num_row_groups)] == \
        [1000, 1000, 500]
    got = f.read()
    assert got.column("offset").to_pylist() == list(range(2500))
    assert got.column("key").to_pylist() == [b"key-%010d" % i for i in range(2500)]
    assert got.column("value").to_pylist() == [b"v" * 20] * 2500
    assert got.column("timestamp").cast("int64").to_pylist() == \
        [(1000 + i) * 1000 for i in range(2500)]
    assert got.column("headers").to_pylist() == [[
        {"key": "h0", "value": b"header-value-0"},
        {"key": "h1", "value": b"header-value-1"}]] * 2500
