"""The append engine: append == recovery for the indexes, validation as LogValidator,
producer state, transactions, epochs, reopening, the lock."""

import os
import random
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog_cli.cli.exit_codes import for_error
from kafkalog_cli.errors import (
    CrcMismatchError,
    InvalidProducerEpochError,
    InvalidRecordError,
    InvalidTimestampError,
    LogDirLockedError,
    OutOfOrderSequenceError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    RejectedRecordError,
    TransactionCoordinatorFencedError,
)
from kafkalog_cli.format.builder import build_batch
from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.schema.producer_snapshot import parse_snapshot
from kafkalog_cli.schema.txn_index import parse_txn_index
from kafkalog_cli.storage.checkpoints import read_leader_epoch_checkpoint, read_offset_checkpoint
from kafkalog_cli.storage.clock import ManualClock
from kafkalog_cli.storage.config import LogConfig
from kafkalog_cli.storage.lock import is_locked
from kafkalog_cli.storage.log_manager import LogManager
from kafkalog_cli.storage.segment import open_view, rebuild_indexes

T0 = 1_700_000_000_000


def check_append_equals_recovery(partition_dir, interval):
    n = 0
    for p in sorted(partition_dir.glob("*.log")):
        base = int(p.name[:20])
        r = rebuild_indexes(open_view(p) if p.stat().st_size else b"", base, interval)
        assert r.error is None
        assert r.valid_bytes == p.stat().st_size
        assert p.with_suffix(".index").read_bytes() == r.offset_index_bytes(base), p
        assert p.with_suffix(".timeindex").read_bytes() == r.time_index_bytes(base), p
        n += 1
    return n


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    interval=st.sampled_from([0, 1, 100, 700, 4096]),
    segment_bytes=st.sampled_from([400, 1500, 5000, 1 << 20]),
    codec=st.sampled_from([0, 1, 2, 3, 4]),
    batches=st.lists(st.tuples(st.integers(1, 12), st.integers(-3000, 3000),
                               st.integers(0, 200)), min_size=1, max_size=30),
    reopen_every=st.sampled_from([0, 3, 7]),
    data=st.randoms(use_true_random=False),
)
def test_append_equals_recovery(tmp_path_factory, interval, segment_bytes, codec, batches,
                                reopen_every, data):
    """Indexes written while appending == indexes rebuilt from the .log alone, over
    configs, codecs, out-of-order timestamps and reopen points."""
    root = tmp_path_factory.mktemp("h")
    clock = ManualClock(T0, auto_tick_ms=1)
    cfg = LogConfig.from_properties({"index.interval.bytes": interval,
                                     "segment.bytes": segment_bytes,
                                     "message.timestamp.after.max.ms": str(2**62)})
    m = LogManager.open(root, clock=clock, fsync=False)
    log = m.get_or_create_log("t", 0, cfg)
    for i, (n, dts, vsize) in enumerate(batches):
        if reopen_every and i and i % reopen_every == 0:
            m.close()
            m = LogManager.open(root, clock=clock, fsync=False)
            log = m.get_or_create_log("t", 0, cfg)
        recs = [(T0 + dts + data.randint(-50, 50), None, data.randbytes(vsize), ())
                for _ in range(n)]
        b = build_batch(recs, compression_type=codec)
        if len(b) > segment_bytes:
            with pytest.raises(RecordBatchTooLargeError):
                log.append_as_leader(b)
            continue
        log.append_as_leader(b)
    m.close()
    assert check_append_equals_recovery(root / "t-0", interval) >= 1


def _open(tmp_path, clock=None, **cfg):
    m = LogManager.open(tmp_path / "d", clock=clock or ManualClock(T0), fsync=False)
    return m, m.get_or_create_log("t", 0, LogConfig.from_properties(cfg) if cfg else None)


def test_offsets_epoch_and_files(tmp_path):
    m, log = _open(tmp_path)
    for _ in range(3):
        log.append_as_leader(build_batch([(T0, b"k", b"v", ())] * 4), leader_epoch=5)
    m.close()
    d = tmp_path / "d" / "t-0"
    batches = list(FileRecords((d / "00000000000000000000.log").read_bytes()).batches())
    assert [b.base_offset for b in batches] == [0, 4, 8]
    assert all(b.partition_leader_epoch == 5 and b.is_valid for b in batches)
    assert read_leader_epoch_checkpoint(d / "leader-epoch-checkpoint") == [(5, 0)]
    assert (d / "leader-epoch-checkpoint").read_text() == "0\n1\n5 0\n"
    assert (d / "partition.metadata").read_text().startswith("version: 0\ntopic_id: ")
    root = tmp_path / "d"
    from kafkalog_cli.storage.files import TopicPartition

    assert read_offset_checkpoint(root / "recovery-point-offset-checkpoint") == {
        TopicPartition("t", 0): 12}
    assert (root / "log-start-offset-checkpoint").read_text() == "0\n0\n"
    assert (root / ".kafka_cleanshutdown").read_text() == '{"version":0,"brokerEpoch":-1}'
    assert "cluster.id=" in (root / "meta.properties").read_text()
    assert (d / "00000000000000000012.snapshot").read_bytes() == parse_empty()


def parse_empty():
    from kafkalog_cli.schema.producer_snapshot import build_snapshot

    return build_snapshot([])


def test_active_index_files_preallocated_then_trimmed(tmp_path):
    m, log = _open(tmp_path, **{"segment.index.bytes": "1000", "index.interval.bytes": "0"})
    for i in range(3):
        log.append_as_leader(build_batch([(T0 + i, None, b"v", ())]))
    log.flush()
    d = tmp_path / "d" / "t-0"
    assert (d / "00000000000000000000.index").stat().st_size == 1000 // 8 * 8
    assert (d / "00000000000000000000.timeindex").stat().st_size == 1000 // 12 * 12
    m.close()
    assert (d / "00000000000000000000.index").stat().st_size == 16
    assert (d / "00000000000000000000.timeindex").stat().st_size == 24


def test_log_append_time(tmp_path):
    clock = ManualClock(T0 + 777)
    m, log = _open(tmp_path, clock, **{"message.timestamp.type": "LogAppendTime"})
    log.append_as_leader(build_batch([(T0, None, b"v", ())] * 3))
    m.close()
    (b,) = FileRecords((tmp_path / "d/t-0/00000000000000000000.log").read_bytes()).batches()
    assert b.timestamp_type == "LogAppendTime" and b.max_timestamp == T0 + 777 and b.is_valid
    assert {r.timestamp for r in b.records()} == {T0 + 777}


def test_validation_errors(tmp_path):
    m, log = _open(tmp_path, **{"max.message.bytes": "200", "segment.bytes": "300"})
    with pytest.raises(RecordTooLargeError):
        log.append_as_leader(build_batch([(T0, None, b"x" * 300, ())]))
    bad = bytearray(build_batch([(T0, None, b"v", ())]))
    bad[-1] ^= 1
    with pytest.raises(CrcMismatchError):
        log.append_as_leader(bytes(bad))
    two = build_batch([(T0, None, b"v", ())]) * 2
    with pytest.raises(InvalidRecordError, match="more than one batch"):
        log.append_as_leader(two)
    with pytest.raises(InvalidRecordError, match="baseOffset"):
        log.append_as_leader(build_batch([(T0, None, b"v", ())], base_offset=3))
    with pytest.raises(InvalidTimestampError, match="out of range"):
        log.append_as_leader(build_batch([(T0 + 3600001, None, b"v", ())]))
    with pytest.raises(InvalidTimestampError, match="LogAppendTime"):
        log.append_as_leader(build_batch([(T0, None, b"v", ())], log_append_time=-1))
    assert log.log_end_offset == 0
    m.close()
    m, log = _open(tmp_path, **{"max.message.bytes": "2000", "segment.bytes": "300"})
    with pytest.raises(RecordBatchTooLargeError):
        log.append_as_leader(build_batch([(T0, None, b"x" * 400, ())]))
    m.close()


def test_timestamp_before_window(tmp_path):
    m, log = _open(tmp_path, **{"message.timestamp.before.max.ms": "1000"})
    with pytest.raises(InvalidTimestampError, match=r"offset 1 is out of range"):
        log.append_as_leader(build_batch([(T0, None, b"v", ()), (T0 - 1001, None, b"v", ())]))
    m.close()


@pytest.mark.parametrize("target", ["gzip", "snappy", "lz4", "zstd", "uncompressed"])
def test_recompression_when_compression_type_differs(tmp_path, target):
    m, log = _open(tmp_path, **{"compression.type": target})
    src = 0 if target != "uncompressed" else 3
    recs = [(T0 + i, b"k%d" % i, b"value-%d" % i, [("h", b"x")]) for i in range(20)]
    info = log.append_as_leader(build_batch(recs, compression_type=src))
    m.close()
    (b,) = FileRecords((tmp_path / "d/t-0/00000000000000000000.log").read_bytes()).batches()
    assert b.compression_name == ("none" if target == "uncompressed" else target)
    assert b.is_valid and info.size == b.size
    assert [(r.timestamp, r.key, r.value) for r in b.records()] == [r[:3] for r in recs]


def test_idempotent_sequences_and_snapshot(tmp_path):
    m, log = _open(tmp_path)
    ps = log.producer_state
    for _ in range(3):
        seq = ps.next_sequence(42, 1)
        log.append_as_leader(build_batch([(T0, None, b"v", ())] * 5, producer_id=42,
                                         producer_epoch=1, base_sequence=seq))
    with pytest.raises(OutOfOrderSequenceError):
        log.append_as_leader(build_batch([(T0, None, b"v", ())], producer_id=42,
                                         producer_epoch=1, base_sequence=99))
    dup = log.append_as_leader(build_batch([(T0, None, b"v", ())] * 5, producer_id=42,
                                           producer_epoch=1, base_sequence=10))
    assert dup.duplicate and dup.first_offset == 10 and log.log_end_offset == 15
    m.close()
    snap = parse_snapshot((tmp_path / "d/t-0/00000000000000000015.snapshot").read_bytes())
    assert len(snap) == 1
    e = snap[0]
    assert (e.producer_id, e.producer_epoch, e.last_sequence, e.last_offset, e.offset_delta) \
        == (42, 1, 14, 14, 4)
    m, log = _open(tmp_path)
    assert log.producer_state.next_sequence(42, 1) == 15
    assert log.producer_state.next_sequence(42, 2) == 0
    m.close()


def test_aborted_transaction_goes_to_txnindex(tmp_path):
    m, log = _open(tmp_path)
    log.append_as_leader(build_batch([(T0, None, b"a", ())] * 3, producer_id=7,
                                     producer_epoch=0, base_sequence=0, is_transactional=True))
    info = log.append_end_txn_marker(producer_id=7, producer_epoch=0, commit=False,
                                     coordinator_epoch=3)
    assert info.first_offset == 3
    log.append_as_leader(build_batch([(T0, None, b"b", ())], producer_id=7, producer_epoch=0,
                                     base_sequence=3, is_transactional=True))
    log.append_end_txn_marker(producer_id=7, producer_epoch=0, commit=True,
                              coordinator_epoch=3)
    m.close()
    d = tmp_path / "d/t-0"
    (txn,) = parse_txn_index((d / "00000000000000000000.txnindex").read_bytes())
    assert (txn.producer_id, txn.first_offset, txn.last_offset, txn.last_stable_offset) == \
        (7, 0, 3, 4)
    batches = list(FileRecords((d / "00000000000000000000.log").read_bytes()).batches())
    assert [b.is_control for b in batches] == [False, True, False, True]
    assert batches[1].records()[0].key == struct.pack(">hh", 0, 0)
    assert batches[3].records()[0].key == struct.pack(">hh", 0, 1)
    (e,) = parse_snapshot((d / "00000000000000000006.snapshot").read_bytes())
    assert e.current_txn_first_offset == -1 and e.coordinator_epoch == 3


def test_reopen_continues_and_replays_producer_state(tmp_path):
    m, log = _open(tmp_path, **{"index.interval.bytes": "100"})
    for i in range(10):
        log.append_as_leader(build_batch([(T0 + i, None, b"v" * 30, ())] * 3, producer_id=1,
                                         producer_epoch=0, base_sequence=3 * i))
    m.close()
    d = tmp_path / "d/t-0"
    os.unlink(d / "00000000000000000030.snapshot")  # force a replay from the log
    m, log = _open(tmp_path, **{"index.interval.bytes": "100"})
    assert log.log_end_offset == 30
    assert log.producer_state.next_sequence(1, 0) == 30
    log.append_as_leader(build_batch([(T0 + 50, None, b"v" * 30, ())], producer_id=1,
                                     producer_epoch=0, base_sequence=30))
    m.close()
    assert check_append_equals_recovery(d, 100) == 1


def test_torn_tail_refused(tmp_path):
    m, log = _open(tmp_path)
    log.append_as_leader(build_batch([(T0, None, b"v", ())]))
    m.close()
    p = tmp_path / "d/t-0/00000000000000000000.log"
    with open(p, "ab") as f:
        f.write(build_batch([(T0, None, b"v", ())])[:30])
    size = p.stat().st_size
    with pytest.raises(Exception, match="run recovery first"):
        with LogManager.open(tmp_path / "d", fsync=False) as m:
            m.get_or_create_log("t", 0)
    assert not is_locked(tmp_path / "d")
    assert p.stat().st_size == size  # nothing truncated: recovery's job


def test_lock_refuses_second_writer(tmp_path):
    m, _ = _open(tmp_path)
    with pytest.raises(LogDirLockedError):
        LogManager.open(tmp_path / "d")
    m.close()
    LogManager.open(tmp_path / "d").close()


def test_unclean_directory_keeps_marker_absent(tmp_path):
    m, log = _open(tmp_path)
    log.append_as_leader(build_batch([(T0, None, b"v", ())]))
    m.abandon()  # a crash: no checkpoints, no marker
    assert not (tmp_path / "d/.kafka_cleanshutdown").exists()
    m, log = _open(tmp_path)
    assert not m.writes_clean_shutdown
    m.close()
    assert not (tmp_path / "d/.kafka_cleanshutdown").exists()


def test_flush_messages(tmp_path):
    m, log = _open(tmp_path, **{"flush.messages": "2"})
    log.append_as_leader(build_batch([(T0, None, b"v", ())]))
    assert log.recovery_point == 0
    log.append_as_leader(build_batch([(T0, None, b"v", ())]))
    assert log.recovery_point == 2
    m.close()


def test_flush_messages_counts_from_the_roll(tmp_path):
    """LocalLog.unflushedMessages is ``log end offset - recovery point``: a roll moves the
    recovery point to the new segment, so what came before it no longer counts (kafkalog
    once kept counting: flush.messages=3 flushed at the first record after a roll)."""
    value = b"v" * 300
    m, log = _open(tmp_path, **{"flush.messages": "3", "segment.bytes": "1000"})
    for _ in range(2):
        log.append_as_leader(build_batch([(T0, None, value, ())]))
    assert (log.recovery_point, log.unflushed_messages) == (0, 2)
    log.append_as_leader(build_batch([(T0, None, value, ())]))  # 3 x 370 > 1000: a roll
    assert [s.base_offset for s in log.segments] == [0, 2]
    assert (log.recovery_point, log.unflushed_messages) == (2, 1)
    log.append_as_leader(build_batch([(T0, None, value, ())]))
    assert (log.recovery_point, log.unflushed_messages) == (2, 2)
    log.append_as_leader(build_batch([(T0, None, value, ())]))  # the next roll
    assert [s.base_offset for s in log.segments] == [0, 2, 4]
    assert (log.recovery_point, log.unflushed_messages) == (4, 1)
    m.close()


def test_flush_ms(tmp_path):
    clock = ManualClock(T0)
    m, log = _open(tmp_path, clock, **{"flush.ms": "100"})
    log.append_as_leader(build_batch([(T0, None, b"v", ())]))
    assert log.recovery_point == 0
    clock.sleep(100)
    log.append_as_leader(build_batch([(T0, None, b"v", ())]))
    assert log.recovery_point == 2
    m.close()


def test_preallocate(tmp_path):
    m, log = _open(tmp_path, **{"preallocate": "true", "segment.bytes": "4096"})
    log.append_as_leader(build_batch([(T0, None, b"v", ())]))
    p = tmp_path / "d/t-0/00000000000000000000.log"
    assert p.stat().st_size == 4096
    m.close()
    assert p.stat().st_size == len(build_batch([(T0, None, b"v", ())]))
    m, log = _open(tmp_path, **{"preallocate": "true", "segment.bytes": "4096"})
    log.append_as_leader(build_batch([(T0, None, b"w", ())]))
    m.close()
    assert len(list(FileRecords(p.read_bytes()).batches())) == 2


def test_random_segment_roll_rng_is_used(tmp_path):
    m = LogManager.open(tmp_path / "r", fsync=False, rng=random.Random(1))
    log = m.get_or_create_log("t", 0, LogConfig.from_properties(
        {"segment.jitter.ms": "1000", "segment.ms": "5000"}))
    assert log.active.roll_jitter_ms == random.Random(1).getrandbits(63) % 1000
    m.close()


def test_marker_with_stale_producer_epoch_writes_nothing(tmp_path):
    """UnifiedLog.analyzeAndValidateProducerState runs appendEndTxnMarker's epoch check
    before localLog.append: a fenced marker leaves the log and the state untouched."""
    m, log = _open(tmp_path)
    log.append_as_leader(build_batch([(T0, b"k", b"v", ())], producer_id=7, producer_epoch=5,
                                     base_sequence=0, is_transactional=True))
    size = log.active.size
    with pytest.raises(InvalidProducerEpochError):
        log.append_end_txn_marker(producer_id=7, producer_epoch=3, commit=False)
    assert (log.log_end_offset, log.active.size) == (1, size)
    assert log.producer_state.ongoing == {0: 7}
    e = log.producer_state.entry(7)
    assert (e.producer_epoch, e.current_txn_first_offset) == (5, 0)
    log.append_end_txn_marker(producer_id=7, producer_epoch=5, commit=True)
    m.close()
    batches = list(FileRecords((tmp_path / "d/t-0/00000000000000000000.log").read_bytes())
                   .batches())
    assert [(b.base_offset, b.is_control, b.producer_epoch) for b in batches] == \
        [(0, False, 5), (1, True, 5)]


def test_marker_from_fenced_coordinator_refused(tmp_path):
    """ProducerAppendInfo.checkCoordinatorEpoch: a marker whose coordinator epoch is below
    the producer's last one is a zombie's (TransactionCoordinatorFencedException) and is
    refused before it is written; an equal or newer coordinator epoch is accepted."""
    m, log = _open(tmp_path)

    def txn(seq):
        return build_batch([(T0, b"k", b"v", ())], producer_id=7, producer_epoch=0,
                           base_sequence=seq, is_transactional=True)

    log.append_as_leader(txn(0))
    log.append_end_txn_marker(producer_id=7, producer_epoch=0, commit=True,
                              coordinator_epoch=5)
    log.append_as_leader(txn(1))
    size = log.active.size
    with pytest.raises(TransactionCoordinatorFencedError) as ei:
        log.append_end_txn_marker(producer_id=7, producer_epoch=0, commit=False,
                                  coordinator_epoch=3)
    assert (ei.value.producer_id, ei.value.coordinator_epoch,
            ei.value.current_coordinator_epoch) == (7, 3, 5)
    assert for_error(ei.value) == 1
    assert "3 (zombie), 5 (current)" in str(ei.value)
    assert (log.log_end_offset, log.active.size) == (3, size)
    e = log.producer_state.entry(7)
    assert (e.coordinator_epoch, e.current_txn_first_offset) == (5, 2)
    assert log.producer_state.ongoing == {2: 7}
    log.append_end_txn_marker(producer_id=7, producer_epoch=0, commit=False,
                              coordinator_epoch=5)
    assert log.producer_state.ongoing == {}
    m.close()
    # replaying the log (origin REPLICATION) does not fence
    from kafkalog_cli.storage.producer_state import ProducerStateManager

    ps = ProducerStateManager(tmp_path / "x", fsync=False)
    ps.append_end_txn_marker(7, 0, 1, 5, 10, T0, check=False)
    ps.append_end_txn_marker(7, 0, 0, 3, 11, T0, check=False)
    assert ps.entry(7).coordinator_epoch == 3


def test_sequence_after_marker_must_start_at_zero(tmp_path):
    """ProducerAppendInfo.checkSequence: an entry of the same epoch without batches (the
    coordinator's marker bumped the epoch) has last sequence -1, so the next batch must
    start at 0; only an entry with no epoch at all accepts any sequence."""
    m, log = _open(tmp_path)
    log.append_as_leader(build_batch([(T0, b"k", b"v", ())] * 2, producer_id=7,
                                     producer_epoch=0, base_sequence=0, is_transactional=True))
    log.append_end_txn_marker(producer_id=7, producer_epoch=1, commit=False)
    e = log.producer_state.entry(7)
    assert (e.producer_epoch, list(e.batches)) == (1, [])
    with pytest.raises(OutOfOrderSequenceError, match="5 \\(incoming seq. number\\), -1"):
        log.append_as_leader(build_batch([(T0, b"k", b"v", ())], producer_id=7,
                                         producer_epoch=1, base_sequence=5))
    assert log.log_end_offset == 3
    assert log.append_as_leader(build_batch([(T0, b"k", b"v", ())], producer_id=7,
                                            producer_epoch=1, base_sequence=0)).first_offset == 3
    # an unknown producer (no epoch) may start anywhere
    assert log.append_as_leader(build_batch([(T0, b"k", b"v", ())], producer_id=8,
                                            producer_epoch=0, base_sequence=42)).first_offset == 4
    m.close()


def test_snapshot_above_log_end_deleted_on_open(tmp_path):
    """ProducerStateManager.truncateAndReload deletes snapshots above the log end offset:
    a stray one must not come back as a phantom producer when a later open replays from
    the newest snapshot on disk."""
    from kafkalog_cli.schema.producer_snapshot import ProducerStateEntry, build_snapshot
    from kafkalog_cli.storage.producer_state import snapshot_path

    m, log = _open(tmp_path)
    for _ in range(5):
        log.append_as_leader(build_batch([(T0, b"k", b"v", ())]))
    m.close()
    d = tmp_path / "d/t-0"
    stray = snapshot_path(d, 10)
    stray.write_bytes(build_snapshot([ProducerStateEntry(99, 3, 41, 9, 0, T0, 0, 7)]))
    m, log = _open(tmp_path)
    assert log.log_end_offset == 5 and log.producer_state.producers == {}
    assert not stray.exists()
    assert (d / "00000000000000000005.snapshot").exists()
    for _ in range(10):
        log.append_as_leader(build_batch([(T0, b"k", b"v", ())]))
    m.abandon()  # no snapshot at 15: the next open replays from the newest one
    m, log = _open(tmp_path)
    ps = log.producer_state
    assert log.log_end_offset == 15
    assert (ps.producers, ps.ongoing, ps.first_unstable_offset) == ({}, {}, None)
    m.close()


def test_compacted_topic_key_checked_before_timestamp():
    """LogValidator.validateRecord checks a record's key first (its timestamp is then not
    checked); processRecordErrors raises InvalidTimestampException when any record has a
    timestamp error, else InvalidRecordException, listing every record's error."""
    from kafkalog_cli.storage.validator import validate

    cfg = LogConfig.from_properties({"cleanup.policy": "compact",
                                     "message.timestamp.after.max.ms": "1000"})
    future = T0 + 3_600_000

    def check(recs):
        with pytest.raises(InvalidRecordError) as ei:
            validate(build_batch(recs), offset=0, now=T0, config=cfg, partition_leader_epoch=0)
        return ei.value

    e = check([(future, None, b"v", ())])
    # InvalidRecordException (not InvalidTimestampException): our refusal of it is typed
    assert type(e) is RejectedRecordError and isinstance(e, InvalidRecordError)
    assert [(i, m.startswith("Compacted topic cannot accept message without key"))
            for i, m in e.record_errors] == [(0, True)]
    e = check([(future, None, b"v", ()), (future, b"k", b"v", ()), (T0, None, b"v", ()),
               (T0, b"k", b"v", ())])
    assert type(e) is InvalidTimestampError
    assert [i for i, _ in e.record_errors] == [0, 1, 2]
    assert e.record_errors[0][1].startswith("Compacted topic")
    assert e.record_errors[1][1].startswith(f"Timestamp {future} of message with offset 1 ")
    assert e.record_errors[2][1].startswith("Compacted topic")
    e = check([(T0, b"k", b"v", ()), (future, b"k", b"v", ())])
    assert type(e) is InvalidTimestampError and [i for i, _ in e.record_errors] == [1]


def test_client_log_append_time_batch(tmp_path):
    """LogValidator.validateTimestamp: a record of a batch with the LogAppendTime attribute
    has the batch's maxTimestamp; on a CreateTime topic that timestamp is range-checked
    like any other and the batch is written as CreateTime (setMaxTimestamp, CRC
    recomputed; records rebuilt only when recompressed). It is refused when the topic uses
    LogAppendTime or the timestamp is -1."""
    recs = [(T0 - 5, b"a", b"v", ()), (T0 - 3, b"b", b"vv", ())]
    m, log = _open(tmp_path)
    info = log.append_as_leader(build_batch(recs, log_append_time=T0))
    assert (info.max_timestamp, info.log_append_time) == (T0, -1)
    with pytest.raises(InvalidTimestampError) as ei:
        log.append_as_leader(build_batch(recs, log_append_time=-1))
    assert ei.value.record_errors == (
        (0, "Invalid timestamp type in message DefaultRecord(offset=0, timestamp=-1, key=1 "
            "bytes, value=1 bytes). Producer should not set timestamp type to LogAppendTime."),
        (1, "Invalid timestamp type in message DefaultRecord(offset=1, timestamp=-1, key=1 "
            "bytes, value=2 bytes). Producer should not set timestamp type to LogAppendTime."))
    with pytest.raises(InvalidTimestampError) as ei:
        log.append_as_leader(build_batch(recs, log_append_time=T0 + 3_600_001))
    assert [m.split(" is out")[0] for _, m in ei.value.record_errors] == [
        f"Timestamp {T0 + 3_600_001} of message with offset 0",
        f"Timestamp {T0 + 3_600_001} of message with offset 1"]
    assert log.log_end_offset == 2
    m.close()
    (b,) = FileRecords((tmp_path / "d/t-0/00000000000000000000.log").read_bytes()).batches()
    assert (b.timestamp_type, b.max_timestamp, b.is_valid) == ("CreateTime", T0, True)
    assert [r.timestamp for r in b.records()] == [T0 - 5, T0 - 3]

    m, log = _open(tmp_path / "gz", **{"compression.type": "gzip"})
    log.append_as_leader(build_batch(recs, log_append_time=T0))
    m.close()
    (b,) = FileRecords((tmp_path / "gz/d/t-0/00000000000000000000.log").read_bytes()).batches()
    assert (b.timestamp_type, b.max_timestamp, b.compression_name) == ("CreateTime", T0, "gzip")
    assert [r.timestamp for r in b.records()] == [T0, T0]

    m, log = _open(tmp_path / "lat", **{"message.timestamp.type": "LogAppendTime"})
    with pytest.raises(InvalidTimestampError, match="should not set timestamp type") as ei:
        log.append_as_leader(build_batch(recs, log_append_time=T0))
    assert [i for i, _ in ei.value.record_errors] == [0, 1]
    m.close()


def test_delete_log_with_longest_topic_name(tmp_path):
    """LocalLog.logDeleteDirName caps the topic prefix so '<topic>-<p>.<uuid>-delete' is
    at most 255 characters (a 249-character topic would not fit otherwise)."""
    import re

    from kafkalog_cli.storage.files import TopicPartition, log_delete_dir_name

    name = log_delete_dir_name(TopicPartition("foo", 3))
    assert re.fullmatch(r"foo-3\.[0-9a-f]{32}-delete", name)
    name = log_delete_dir_name(TopicPartition("n" + "o" * 248, 5))
    assert len(name) == 255 and re.fullmatch(r"no{212}-5\.[0-9a-f]{32}-delete", name)
    topic = "t" * 249
    m = LogManager.open(tmp_path / "d", clock=ManualClock(T0), fsync=False)
    m.get_or_create_log(topic, 0).append_as_leader(build_batch([(T0, None, b"v", ())]))
    m.delete_log(topic, 0)
    assert sorted(p.name for p in (tmp_path / "d").iterdir() if p.is_dir()) == []
    m.close()


def test_log_start_offset_increment_truncates_epochs_and_checkpoints(tmp_path):
    """UnifiedLog.maybeIncrementLogStartOffset: refused above the high watermark (the log
    end offset), a no-op at or below the current start; LeaderEpochFileCache.
    truncateFromStart keeps the epoch of the new start; the checkpoint keeps the offset
    (LogManager.checkpointLogStartOffsets, above the first segment's base only) and a
    reopened log starts there."""
    from kafkalog_cli.errors import OffsetOutOfRangeError
    from kafkalog_cli.storage.files import TopicPartition

    d = tmp_path / "logs"
    with LogManager.open(d) as m:
        lg = m.get_or_create_log("t", 0)
        for epoch in (0, 2, 5):
            lg.append_as_leader(build_batch([(1000 + i, None, b"v", ()) for i in range(4)]),
                                leader_epoch=epoch)
        with pytest.raises(OffsetOutOfRangeError):
            lg.maybe_increment_log_start_offset(13)
        assert lg.maybe_increment_log_start_offset(6) is True
        assert lg.maybe_increment_log_start_offset(6) is False
        assert lg.maybe_increment_log_start_offset(2) is False
        assert lg.log_start_offset == 6
        # (2, 4) becomes (2, 6); (5, 8) stays; (0, 0) is gone - in memory and on disk
        assert lg.leader_epoch_cache.epochs == [(2, 6), (5, 8)]
        assert read_leader_epoch_checkpoint(d / "t-0" / "leader-epoch-checkpoint") == [
            (2, 6), (5, 8)]
        m.checkpoint()
        assert read_offset_checkpoint(d / "log-start-offset-checkpoint") == {
            TopicPartition("t", 0): 6}
        assert lg.maybe_increment_log_start_offset(12) is True  # the log end offset itself
    with LogManager.open(d) as m:
        lg = m.get_or_create_log("t", 0)
        assert (lg.log_start_offset, lg.log_end_offset) == (12, 12)
        # LogLoader's truncateFromEnd(log end offset) drops an entry starting at the end
        assert lg.leader_epoch_cache.epochs == []


def test_update_config_applies_to_later_appends(tmp_path):
    """UnifiedLog.updateConfig: the next append rolls and validates by the new config."""
    with LogManager.open(tmp_path / "logs") as m:
        lg = m.get_or_create_log("t", 0)
        big = build_batch([(1000, b"k", b"v" * 300, ())])
        lg.append_as_leader(big)
        lg.update_config(LogConfig(segment_bytes=400, max_message_bytes=1000))
        lg.append_as_leader(big)
        assert [s.base_offset for s in lg.segments] == [0, 1]
        lg.update_config(LogConfig(max_message_bytes=100))
        with pytest.raises(RecordTooLargeError):
            lg.append_as_leader(big)
