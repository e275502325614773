"""Reading a partition in storage (``Log``): read by offset and by timestamp, the log start
and end offsets, the aborted transactions and the producer state - one implementation that
``read``, ``serve`` (Fetch, ListOffsets) and the Spark source all call, checked here
against brute-force scans and Kafka's rules."""

from __future__ import annotations

import random
import struct
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "read"))

from kafkalog_read_testkit import (  # noqa: E402
    brute_records,
    random_batches,
    txn_batches,
    write_partition,
)

from kafkalog_cli.format.builder import build_batch, build_control_batch  # noqa: E402
from kafkalog_cli.format.records import batch_at  # noqa: E402
from kafkalog_cli.ops import read as read_op  # noqa: E402
from kafkalog_cli.server import reads  # noqa: E402
from kafkalog_cli.server.storage_adapter import ReadOnlyPartition  # noqa: E402
from kafkalog_cli.spark import plan  # noqa: E402
from kafkalog_cli.storage.checkpoints import format_offset_checkpoint  # noqa: E402
from kafkalog_cli.storage.files import TopicPartition  # noqa: E402
from kafkalog_cli.storage.log import Log  # noqa: E402

T0 = 1_700_000_000_000


@pytest.fixture(scope="module")
def events(tmp_path_factory) -> Path:
    """Several segments, compaction gaps, out-of-order timestamps."""
    rng = random.Random(7)
    d = tmp_path_factory.mktemp("logs") / "events-0"
    return write_partition(d, random_batches(rng, n_batches=300, gap_probability=0.3,
                                             jitter=20_000),
                           segment_bytes=12_000, index_interval=700)


def _brute_first_ts(recs, t, start=0):
    for off, ts, _ in recs:
        if ts >= t and off >= start:
            return ts, off
    return None


def test_read_serve_and_spark_find_the_same_record_by_timestamp(events):
    """ListOffsets by timestamp: the first record in offset order whose timestamp is >= T
    (UnifiedLog.fetchOffsetByTimestamp); read, serve and the Spark planner ask the same
    storage method and agree with a brute-force scan."""
    recs = brute_records(events)
    tss = [r[1] for r in recs]
    part = ReadOnlyPartition(events)
    pd = plan.discover([events])[0]
    rng = random.Random(11)
    log = Log.open(events)
    try:
        for t in [min(tss) - 1, max(tss), max(tss) + 1] + rng.sample(range(min(tss), max(tss)),
                                                                        60):
            want = _brute_first_ts(recs, t)
            assert read_op.offset_for_timestamp(log, t) == want, t
            served = reads.offset_for_timestamp(part, t)
            assert (served and served[:2]) == want, t
            assert plan.offset_for_timestamp(pd, t) == (want and want[1]), t
    finally:
        log.close()
        part.close()


def test_read_by_offset_returns_whole_batches_from_the_one_holding_it(events):
    """LocalLog.read / LogSegment.read: the bytes start at the batch holding the offset
    (the next batch in a compaction gap), at most max_bytes unless the first batch is
    larger and min_one_message is set; they are a range of the segment file (FileSlice:
    read from the file only when written), at the batch's position."""
    recs = brute_records(events)
    log = Log.open(events)
    try:
        for off, _, _ in random.Random(5).sample(recs, 80):
            info = log.read(off, 1)
            data = bytes(info.records)
            assert data == info.segment.log_path.read_bytes()[
                info.position:info.position + len(data)]
            b = batch_at(data, 0)
            assert b.base_offset == info.first_offset <= off <= b.last_offset
            assert len(info.records) == b.size  # one whole batch: min_one_message
            assert log.read(off, 0, min_one_message=False).records == b""
            at = info.segment.translate_offset(off).position
            assert len(log.read(off, 5000).records) == min(5000, info.segment.size - at)
        assert log.read(log.log_end_offset, 100) is None
    finally:
        log.close()


def test_log_start_offset_from_the_checkpoint_bounds_every_reader(tmp_path):
    """LogLoader: the log start offset is max(log-start-offset-checkpoint, first segment's
    base offset); ListOffsets by timestamp searches from it (findOffsetByTimestamp(ts,
    logStartOffset)). The Spark planner searched from the first segment's base offset."""
    d = write_partition(tmp_path / "logs" / "t-0",
                        random_batches(random.Random(1), n_batches=40, max_records=1,
                                       jitter=0), segment_bytes=1500)
    (tmp_path / "logs" / "log-start-offset-checkpoint").write_text(
        format_offset_checkpoint({TopicPartition("t", 0): 13}))
    log = Log.open(d)
    assert log.log_start_offset == 13
    first = [r for r in brute_records(d) if r[0] >= 13][0]
    assert read_op.offset_for_timestamp(log, 0) == (first[1], first[0])
    (pd,) = plan.discover([d])
    assert plan.log_start_offset(pd) == 13
    assert plan.offset_for_timestamp(pd, 0) == 13
    log.close()


def test_aborted_transactions_are_the_replays_for_every_reader(tmp_path):
    """read's aborted transactions and last stable offset come from the producer state
    replayed over the log (the .txnindex recovery would write); serve's Fetch collects
    the partition's own .txnindex files (LocalLog.collectAbortedTransactions): after
    ``kafkalog recover`` wrote them, both say the same."""
    from kafkalog_cli.recovery import recover

    batches, exp = txn_batches()
    d = write_partition(tmp_path / "logs" / "p-0", batches, segment_bytes=700,
                        index_interval=100)
    recover([d], truncate=True, all_segments=True)
    log = Log.open(d)
    st = read_op.scan_transactions(log)
    assert st.aborted == {2: [(min(exp["aborted"]), exp["control"][0])]}
    assert st.last_stable_offset == min(exp["open"])
    on_disk = log.collect_aborted_transactions(0, log.log_end_offset)
    indexes: dict = {}
    log.replay_producer_state(txn_indexes=indexes)
    assert log.collect_aborted_transactions(0, log.log_end_offset, indexes) == on_disk
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in on_disk] == \
        [(2, min(exp["aborted"]), exp["control"][0])]
    part = ReadOnlyPartition(d)
    r = reads.read(part, 0, 1 << 20, True, True)
    assert r.aborted == [{"producerId": 2, "firstOffset": min(exp["aborted"])}]
    part.close()
    log.close()


def test_the_search_for_aborted_transactions_goes_on_until_complete(tmp_path):
    """TransactionIndex.collectAbortedTxns / LocalLog.collectAbortedTransactions: an
    aborted transaction is indexed in the segment of its ABORT marker; the search goes on
    through later segments until an entry's last stable offset reaches the upper bound,
    even past segments that start above it."""
    pid_batches = [build_batch([(T0 + i, b"k", b"v", ())], base_offset=i, is_transactional=True,
                               producer_id=4, producer_epoch=0, base_sequence=i)
                   for i in range(3)]
    plain = [build_batch([(T0 + i, b"k", b"v", ())], base_offset=i) for i in range(3, 6)]
    marker = build_control_batch(0, base_offset=6, timestamp=T0 + 6, producer_id=4,
                                 producer_epoch=0)
    d = write_partition(tmp_path / "logs" / "q-0", pid_batches + plain + [marker],
                        segment_bytes=250)
    from kafkalog_cli.recovery import recover

    recover([d], truncate=True, all_segments=True)
    log = Log.open(d)
    assert len(log.segments) > 2
    (t,) = log.collect_aborted_transactions(0, 2)
    assert (t.producer_id, t.first_offset, t.last_offset) == (4, 0, 6)
    log.close()


def test_a_marker_that_does_not_parse_is_a_problem_and_keeps_its_transaction_open(tmp_path):
    """read_committed: the replay skips a control batch whose record is not an
    end-transaction marker (EndTransactionMarker.deserialize would throw); its
    transaction stays open, so the read stops at its first offset, and the skipped batch
    is a problem line naming the file and byte position. (read used to parse the key
    alone and take this batch for an ABORT, where recovery's .txnindex rebuild skipped
    it: the two now replay through the same code.)"""
    data = build_batch([(T0, b"k", b"v", ())], base_offset=0, is_transactional=True,
                       producer_id=4, producer_epoch=0, base_sequence=0)
    bad = build_batch([(T0 + 1, struct.pack(">hh", 0, 0), b"\x00", ())], base_offset=1,
                      is_transactional=True, is_control=True, producer_id=4,
                      producer_epoch=0)
    after = build_batch([(T0 + 2, b"k", b"v", ())], base_offset=2)
    d = write_partition(tmp_path / "logs" / "r-0", [data, bad, after])
    res = read_op.read(d, isolation_level="read_committed")
    try:
        assert res.last_stable_offset == 0
        assert list(res.records) == []
        (problem,) = res.problems
        assert f"{d / '00000000000000000000.log'} at byte {len(data)}" in problem
    finally:
        res.close()
    assert [r.offset for r in read_op.read(d).records] == [0, 2]
