"""The one producer state (ProducerStateManager) and leader-epoch cache: the append engine,
``kafkalog recover`` and the readers replay the log through the same code, with Kafka's
rules (``LogSegment.updateProducerState``, ``ProducerAppendInfo.append``,
``ProducerStateManager.readSnapshot`` / ``writeSnapshot``, ``LeaderEpochFileCache``)."""

import struct

import crc32c
import pytest

from kafkalog_cli.errors import IllegalStateError, InvalidArgumentError
from kafkalog_cli.format.builder import build_batch, build_control_batch
from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.recovery import recover
from kafkalog_cli.schema.producer_snapshot import (
    ProducerStateEntry,
    build_snapshot,
    parse_snapshot,
)
from kafkalog_cli.storage.clock import ManualClock
from kafkalog_cli.storage.config import LogConfig
from kafkalog_cli.storage.leader_epoch import LeaderEpochCache, LeaderEpochFileCache
from kafkalog_cli.storage.log import UnifiedLog
from kafkalog_cli.storage.producer_state import ProducerStateManager

T0 = 1_700_000_000_000
PID = 5


def _patch(batch: bytes, fmt: str, position: int, value) -> bytes:
    """``batch`` with one header field replaced (DefaultRecordBatch offsets) and its
    CRC-32C recomputed over attributes..end."""
    b = bytearray(batch)
    struct.pack_into(fmt, b, position, value)
    struct.pack_into(">I", b, 17, crc32c.crc32c(bytes(b[21:])))
    return bytes(b)


def _txn_data(base: int, epoch: int = 0) -> bytes:
    return build_batch([(T0 + base, b"k", b"v", ())], base_offset=base, is_transactional=True,
                       producer_id=PID, producer_epoch=epoch, base_sequence=base)


def _control(base: int, key, value, *, epoch: int = 1) -> bytes:
    return build_batch([(T0 + base, key, value, ())], base_offset=base, is_transactional=True,
                       is_control=True, producer_id=PID, producer_epoch=epoch)


def _replay(*batches: bytes) -> tuple[ProducerStateManager, list]:
    state = ProducerStateManager()
    aborted = []
    for b in FileRecords(b"".join(batches)).batches():
        a = state.replay_batch(b)
        if a is not None:
            aborted.append(a)
    return state, aborted


def _write_partition(tmp_path, *batches: bytes):
    d = tmp_path / "logs" / "t-0"
    d.mkdir(parents=True)
    (d / "00000000000000000000.log").write_bytes(b"".join(batches))
    return d


def _engine_snapshot(d, leo: int) -> list:
    """The producer state UnifiedLog.open rebuilds from the log (no snapshot on disk), as
    the snapshot it takes at close."""
    log = UnifiedLog.open(d, LogConfig(), ManualClock(T0), fsync=False)
    try:
        assert log.log_end_offset == leo
        return parse_snapshot(log.producer_state.snapshot_bytes())
    finally:
        log.abandon()


def _recovered_snapshot(d, leo: int) -> list:
    recover([d], truncate=True, all_segments=True)
    return parse_snapshot((d / f"{leo:020d}.snapshot").read_bytes())


def test_a_marker_takes_the_records_timestamp_and_the_batchs_base_offset(tmp_path):
    """ProducerAppendInfo.append: appendEndTxnMarker(marker, batch.producerEpoch(),
    batch.baseOffset(), record.timestamp()) - not the batch's maxTimestamp or last
    offset (the engine's replay used both)."""
    marker = build_control_batch(0, base_offset=1, timestamp=T0 + 1, producer_id=PID,
                                 producer_epoch=0, coordinator_epoch=4)
    marker = _patch(marker, ">q", 35, T0 + 999)  # maxTimestamp
    marker = _patch(marker, ">i", 23, 1)         # lastOffsetDelta: last offset 2
    state, aborted = _replay(_txn_data(0), marker)
    (a,) = aborted
    assert (a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset) == \
        (PID, 0, 1, 2)
    entry = state.producers[PID]
    assert (entry.last_timestamp, entry.coordinator_epoch) == (T0 + 1, 4)
    assert state.last_map_offset == 3 and state.first_unstable_offset is None
    d = _write_partition(tmp_path, _txn_data(0), marker)
    for entries in (_engine_snapshot(d, 3), _recovered_snapshot(d, 3)):
        (e,) = entries
        assert (e.timestamp, e.coordinator_epoch, e.current_txn_first_offset) == (T0 + 1, 4, -1)


HOSTILE_MARKERS = {
    "key of 3 bytes": (b"\x00\x00\x00", struct.pack(">hi", 0, 7)),
    "key of a negative version": (struct.pack(">hh", -1, 0), struct.pack(">hi", 0, 7)),
    "LEADER_CHANGE in a transaction": (struct.pack(">hh", 0, 2), struct.pack(">hi", 0, 7)),
    "value of 5 bytes": (struct.pack(">hh", 0, 0), b"\x00\x00\x00\x00\x07"),
    "value of a negative version": (struct.pack(">hh", 0, 0), struct.pack(">hi", -1, 7)),
    "null value": (struct.pack(">hh", 0, 1), None),
}


@pytest.mark.parametrize("key,value", HOSTILE_MARKERS.values(), ids=HOSTILE_MARKERS)
def test_a_marker_that_does_not_parse_is_skipped_by_every_replay(tmp_path, key, value):
    """EndTransactionMarker.deserialize throws for these (the broker's loader would stop);
    every replay skips the marker: the transaction stays open and the producer keeps its
    epoch. (The engine's replay closed the transaction for a value under 6 bytes, with
    coordinator epoch -1, where recovery skipped it.)"""
    state, aborted = _replay(_txn_data(0), _control(1, key, value))
    assert aborted == []
    assert state.first_unstable_offset == 0
    assert state.producers[PID].producer_epoch == 0
    d = _write_partition(tmp_path, _txn_data(0), _control(1, key, value))
    engine, recovered = _engine_snapshot(d, 2), _recovered_snapshot(d, 2)
    assert engine == recovered
    (e,) = engine
    assert (e.producer_epoch, e.current_txn_first_offset, e.coordinator_epoch) == (0, 0, -1)


def test_an_empty_control_batch_creates_the_producers_entry_only(tmp_path):
    """ProducerAppendInfo.append returns nothing for a control batch without records
    (its transaction was cleaned away), and ProducerStateManager.update still adds the
    producer, with ProducerStateEntry.empty's fields."""
    empty = build_batch([], base_offset=0, is_transactional=True, is_control=True,
                        producer_id=PID, producer_epoch=3)
    empty = _patch(empty, ">i", 23, 0)  # one offset, as the cleaner leaves it
    state, aborted = _replay(empty)
    assert aborted == [] and list(state.producers) == [PID]
    d = _write_partition(tmp_path, empty)
    for entries in (_engine_snapshot(d, 1), _recovered_snapshot(d, 1)):
        assert entries == [ProducerStateEntry(PID, -1, -1, -1, 0, -1, -1, -1)]


def test_a_snapshot_entry_without_a_last_offset_is_read_and_written_as_kafka(tmp_path):
    """ProducerStateManager.readSnapshot keeps no BatchMetadata for an entry whose last
    offset is negative, so writeSnapshot writes NO_SEQUENCE and offset delta 0 for it
    (recovery used to write the entry back as it read it)."""
    odd = ProducerStateEntry(9, 2, 7, -1, 3, T0, 1, -1)
    state = ProducerStateManager()
    state.load_entries([odd], 0)
    assert state.entries() == [ProducerStateEntry(9, 2, -1, -1, 0, T0, 1, -1)]
    d = _write_partition(tmp_path, build_batch([(T0, b"k", b"v", ())], producer_id=PID,
                                               producer_epoch=0, base_sequence=0))
    # a snapshot at the log start offset is not loaded by recovery: truncateAndReload
    # removes every snapshot at or below the log start offset (``snapshot.offset <=
    # logStartOffset``), as the broker's recovery on the bench does (tests/recovery)
    (d / "00000000000000000000.snapshot").write_bytes(build_snapshot([odd]))
    by_pid = {e.producer_id: e for e in _recovered_snapshot(d, 1)}
    assert 9 not in by_pid and not (d / "00000000000000000000.snapshot").exists()
    assert by_pid[PID].last_sequence == 0 and by_pid[PID].last_offset == 0


def test_an_in_memory_state_writes_no_file(tmp_path):
    state, _ = _replay(_txn_data(0))
    with pytest.raises(IllegalStateError):
        state.take_snapshot()
    with pytest.raises(IllegalStateError):
        state.load(10)


# -- the leader epoch cache (LeaderEpochFileCacheTest's cases) ------------------------------

def test_assign_appends_a_new_epoch_or_an_earlier_start_only():
    c = LeaderEpochCache()
    assert c.assign(2, 10)
    assert not c.assign(2, 11)           # same epoch, later offset: no entry
    assert c.assign(3, 20)
    assert c.assign(3, 15)               # same epoch, earlier offset: replaces it
    assert c.epochs == [(2, 10), (3, 15)]
    assert c.assign(1, 16)               # an older epoch truncates what it contradicts
    assert c.epochs == [(1, 16)]
    with pytest.raises(InvalidArgumentError):
        c.assign(-1, 0)


def test_truncations_and_lookups():
    c = LeaderEpochCache([(0, 0), (1, 60), (2, 150)])
    assert [c.epoch_for_offset(o) for o in (0, 59, 60, 149, 150, 999)] == [0, 0, 1, 1, 2, 2]
    assert LeaderEpochCache([(4, 10)]).epoch_for_offset(9) == -1
    assert c.end_offset_for(1, 200) == (1, 150) and c.end_offset_for(2, 200) == (2, 200)
    assert not c.truncate_from_end(151) and not c.truncate_from_end(-1)
    assert c.truncate_from_end(150) and c.epochs == [(0, 0), (1, 60)]
    assert c.truncate_from_start(70) and c.epochs == [(1, 70)]
    assert not c.truncate_from_start(70) and not c.truncate_from_start(5)


def test_end_offset_for_follows_leader_epoch_file_cache():
    """LeaderEpochFileCache.endOffsetFor's cases, values derived by hand from its code:
    an epoch between two entries, below the first (the requested epoch and the first
    entry's start), above every entry but not the latest, -1, and an empty cache."""
    c = LeaderEpochCache([(2, 10), (5, 40), (7, 90)])
    assert c.end_offset_for(3, 100) == (2, 40)   # floor 2, next start 40
    assert c.end_offset_for(5, 100) == (5, 90)
    assert c.end_offset_for(1, 100) == (1, 10)   # below every entry
    assert c.end_offset_for(8, 100) == (-1, -1)  # above the latest: undefined
    assert c.end_offset_for(7, 100) == (7, 100)  # the latest ends at the log end
    assert c.end_offset_for(-1, 100) == (-1, -1)
    assert LeaderEpochCache().end_offset_for(0, 5) == (-1, -1)


def test_only_the_file_cache_writes(tmp_path):
    mem = LeaderEpochCache()
    mem.assign(0, 0)
    assert not (tmp_path / "leader-epoch-checkpoint").exists()
    f = LeaderEpochFileCache(tmp_path, fsync=False)
    f.assign(0, 0)
    f.assign(1, 5)
    f.truncate_from_start(3)
    assert (tmp_path / "leader-epoch-checkpoint").read_text() == "0\n2\n0 3\n1 5\n"
    assert LeaderEpochFileCache.load(tmp_path).epochs == [(0, 3), (1, 5)]
