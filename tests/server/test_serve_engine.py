"""The server over the append engine: what persists across restarts (offsets, producer
state in .snapshot files, topic ids, configs), the files a clean close leaves, the
engine's validation errors as ProduceResponses (with recordErrors), index entries on
disk after every acknowledgement, topic configs as LogConfig, refusal of a torn tail."""

from __future__ import annotations

import pytest
from serve_testkit import RawClient, create_topic
from test_serve_produce_errors import TS, batch, part, produce

from kafkalog_cli.constants import CLEAN_SHUTDOWN_FILE_NAME
from kafkalog_cli.errors import CorruptRecordError, LogDirLockedError
from kafkalog_cli.format.builder import build_batch
from kafkalog_cli.ops.verify import verify_index
from kafkalog_cli.protocol.errors import Errors
from kafkalog_cli.schema.producer_snapshot import parse_snapshot
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions
from kafkalog_cli.storage.checkpoints import read_offset_checkpoint
from kafkalog_cli.storage.dir_files import read_meta_properties
from kafkalog_cli.storage.files import TopicPartition
from kafkalog_cli.storage.lock import is_locked
from kafkalog_cli.storage.log import Log
from kafkalog_cli.storage.offset_index import OffsetIndex
from kafkalog_cli.storage.segment import rebuild_indexes
from kafkalog_cli.storage.time_index import TimeIndex


def _pid(c) -> int:
    r = c.request(22, 4, {"transactionalId": None, "transactionTimeoutMs": 1000})
    assert r["errorCode"] == 0
    return r["producerId"]


def _serve(log_dir, **kw):
    return ServerThread(log_dir, ServerOptions(port=0), **kw)


def test_clean_close_files_and_restart_continues_offsets_and_sequences(log_dir):
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        create_topic(c, "t", 2)
        p = _pid(c)
        assert part(produce(c, "t", batch(3, pid=p, epoch=0, seq=0)))["baseOffset"] == 0
        assert part(produce(c, "t", batch(2, pid=p, epoch=0, seq=3)))["baseOffset"] == 3
        c.close()
    # LogManager.close: snapshot at the log end, checkpoints, marker; lock released
    d = log_dir / "t-0"
    snap = d / "00000000000000000005.snapshot"
    [entry] = parse_snapshot(snap.read_bytes())
    assert (entry.producer_id, entry.producer_epoch, entry.last_sequence,
            entry.last_offset) == (p, 0, 4, 4)
    assert (log_dir / CLEAN_SHUTDOWN_FILE_NAME).exists()
    assert read_offset_checkpoint(log_dir / "recovery-point-offset-checkpoint") == {
        TopicPartition("t", 0): 5, TopicPartition("t", 1): 0}
    assert read_offset_checkpoint(log_dir / "replication-offset-checkpoint") == {
        TopicPartition("t", 0): 5, TopicPartition("t", 1): 0}
    assert (d / "leader-epoch-checkpoint").read_text() == "0\n1\n0 0\n"
    assert read_meta_properties(log_dir)["node.id"] == "0"
    assert not is_locked(log_dir)
    assert verify_index([log_dir]).ok
    with _serve(log_dir) as s:
        assert not (log_dir / CLEAN_SHUTDOWN_FILE_NAME).exists()  # removed while serving
        c = RawClient(s.port)
        # a retry of the last batch before the restart: known from the snapshot
        assert part(produce(c, "t", batch(2, pid=p, epoch=0, seq=3)))["baseOffset"] == 3
        assert part(produce(c, "t", batch(1, pid=p, epoch=0, seq=5)))["baseOffset"] == 5
        assert part(produce(c, "t", batch(1, pid=p, epoch=0, seq=9)))["errorCode"] == \
            Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
        assert part(produce(c, "t", batch(1, pid=p, epoch=1, seq=0)))["baseOffset"] == 6
        assert part(produce(c, "t", batch(1, pid=p, epoch=0, seq=6)))["errorCode"] == \
            Errors.INVALID_PRODUCER_EPOCH
        assert _pid(c) > p
        assert part(produce(c, "t", batch(2), partition=1))["baseOffset"] == 0
        c.close()


def test_unclean_stop_rebuilds_producer_state_from_the_log(log_dir):
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        create_topic(c, "t")
        p = _pid(c)
        for i in range(4):
            assert part(produce(c, "t", batch(2, pid=p, epoch=0, seq=2 * i)))[
                "baseOffset"] == 2 * i
        c.close()
        # as if the process died: files released, nothing written
        s.call(lambda: s.server.catalog.close(clean=False))
    assert not (log_dir / CLEAN_SHUTDOWN_FILE_NAME).exists()
    assert not list((log_dir / "t-0").glob("*.snapshot"))
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        # every retained batch (up to 5) is known again, replayed from the .log
        assert part(produce(c, "t", batch(2, pid=p, epoch=0, seq=2)))["baseOffset"] == 2
        assert part(produce(c, "t", batch(2, pid=p, epoch=0, seq=8)))["baseOffset"] == 8
        c.close()
    # the directory was never checked by a recovery: no clean-shutdown marker is claimed
    assert not (log_dir / CLEAN_SHUTDOWN_FILE_NAME).exists()


def test_index_entries_are_on_disk_after_each_acknowledgement(log_dir):
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        create_topic(c, "t", configs={"index.interval.bytes": "100"})
        for _ in range(20):
            assert part(produce(c, "t", batch(3, size=60)))["errorCode"] == 0
        # read the files while serving: entries written through, zeros after them
        seg = log_dir / "t-0" / "00000000000000000000"
        data = (seg.parent / (seg.name + ".log")).read_bytes()
        rebuilt = rebuild_indexes(memoryview(data), 0, 100)
        idx = OffsetIndex.load(seg.parent / (seg.name + ".index"), 0)
        assert len(rebuilt.offset_entries) > 10
        n = len(rebuilt.offset_entries)
        # the first n slots of the preallocated file (listing all 1.3M zero slots of the
        # 10 MiB file to slice n took 16 s of the test's 17)
        assert idx.entries > n
        assert [idx.entry(i) for i in range(n)] == rebuilt.offset_entries
        assert set(idx.to_bytes()[n * 8:]) == {0}  # preallocated tail
        tidx = TimeIndex.load(seg.parent / (seg.name + ".timeindex"), 0)
        # the final entry for the largest timestamp is added at close, as the broker does
        k = len(rebuilt.time_entries) - 1
        assert tidx.entries > k
        assert [tidx.entry(i) for i in range(k)] == rebuilt.time_entries[:-1]
        c.close()
    assert verify_index([log_dir]).ok


def test_topic_configs_drive_the_engine(log_dir):
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        create_topic(c, "small", configs={"segment.bytes": "1000"})
        for i in range(10):
            assert part(produce(c, "small", batch(3, size=100)))["baseOffset"] == 3 * i
        bases = [seg.base_offset for seg in Log.open(log_dir / "small-0").segments]
        assert len(bases) > 3 and bases[0] == 0
        # a roll snapshots the producer state at the new segment's base offset
        assert {int(p.name[:20]) for p in (log_dir / "small-0").glob("*.snapshot")} == \
            set(bases[1:])
        res = c.request(32, 4, {"resources": [{"resourceType": 2, "resourceName": "small",
                                               "configurationKeys": None}],
                                "includeSynonyms": False})
        cfg = {e["name"]: e["value"] for e in res["results"][0]["configs"]}
        assert cfg["segment.bytes"] == "1000"
        assert cfg["message.timestamp.after.max.ms"] == "3600000"  # Kafka 4.0 default
        assert cfg["compression.zstd.level"] == "3"
        # bad values are refused as LogConfig refuses them
        res = c.request(19, 7, {"topics": [{"name": "bad", "numPartitions": 1,
                                            "replicationFactor": 1, "assignments": [],
                                            "configs": [{"name": "segment.bytes",
                                                         "value": "13"}]}],
                                "timeoutMs": 100})
        assert res["topics"][0]["errorCode"] == Errors.INVALID_CONFIG
        # broker-side recompression (compression.type)
        create_topic(c, "z", configs={"compression.type": "gzip"})
        assert part(produce(c, "z", batch(4)))["baseOffset"] == 0
        c.close()
    [b] = list(Log.open(log_dir / "z-0").segments[0].records().batches())
    assert b.compression_name == "gzip" and b.last_offset == 3
    assert verify_index([log_dir]).ok


def test_record_errors_and_engine_error_codes(raw):
    c = raw()
    create_topic(c, "ts", configs={"message.timestamp.after.max.ms": "1000"})
    far = 4_000_000_000_000
    recs = [(TS, b"k0", b"v", ()), (far, b"k1", b"v", ()), (TS, b"k2", b"v", ()),
            (far + 1, b"k3", b"v", ())]
    r = part(produce(c, "ts", build_batch(recs)))
    assert r["errorCode"] == Errors.INVALID_TIMESTAMP
    assert r["logStartOffset"] == 0 and r["baseOffset"] == -1
    assert [e["batchIndex"] for e in r["recordErrors"]] == [1, 3]
    assert r["recordErrors"][0]["batchIndexErrorMessage"].startswith(
        f"Timestamp {far} of message with offset 1 is out of range.")
    assert r["errorMessage"] == "One or more records have been rejected due to invalid " \
        "timestamp"
    # a client claiming LogAppendTime: every record
    b = bytearray(build_batch(recs[:2]))
    b[22] |= 0x08
    from kafkalog_cli.format.record_batch import crc32c

    b[17:21] = crc32c(memoryview(b)[21:]).to_bytes(4, "big")
    r = part(produce(c, "ts", bytes(b)))
    assert r["errorCode"] == Errors.INVALID_TIMESTAMP
    assert [e["batchIndex"] for e in r["recordErrors"]] == [0, 1]

    create_topic(c, "cmp", configs={"cleanup.policy": "compact"})
    recs = [(TS, b"k", b"v", ()), (TS, None, b"v", ()), (TS, None, b"v", ())]
    r = part(produce(c, "cmp", build_batch(recs)))
    assert r["errorCode"] == Errors.INVALID_RECORD
    assert [e["batchIndex"] for e in r["recordErrors"]] == [1, 2]
    assert r["errorMessage"].startswith("One or more records have been rejected due to 2 "
                                        "record errors in total")
    assert part(produce(c, "cmp", build_batch(recs[:1])))["baseOffset"] == 0

    create_topic(c, "tiny", configs={"segment.bytes": "100"})
    r = part(produce(c, "tiny", batch(3, size=100)))
    assert (r["errorCode"], r["logStartOffset"], r["recordErrors"], r["errorMessage"]) == (
        Errors.RECORD_LIST_TOO_LARGE, -1, [], None)
    # a batch whose records do not parse (valid CRC): InvalidRecordException
    good = bytearray(batch(2))
    good[-3:] = b"\xff\xff\xff"
    good[17:21] = crc32c(memoryview(good)[21:]).to_bytes(4, "big")
    r = part(produce(c, "tiny", bytes(good)))
    assert (r["errorCode"], r["logStartOffset"]) == (Errors.INVALID_RECORD, 0)


def test_delete_topic_forgets_checkpoints(log_dir):
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        create_topic(c, "gone")
        create_topic(c, "kept")
        produce(c, "gone", batch(2))
        produce(c, "kept", batch(2))
        s.call(s.server.catalog.checkpoint)
        assert TopicPartition("gone", 0) in read_offset_checkpoint(
            log_dir / "replication-offset-checkpoint")
        res = c.request(20, 6, {"topics": [{"name": "gone", "topicId":
                                            "AAAAAAAAAAAAAAAAAAAAAA"}], "timeoutMs": 100})
        assert res["responses"][0]["errorCode"] == 0
        assert not (log_dir / "gone-0").exists()
        c.close()
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        assert read_offset_checkpoint(log_dir / name) == {TopicPartition("kept", 0): 2}
    assert [p.name for p in log_dir.iterdir() if p.name.startswith("gone")] == []


def test_torn_tail_is_refused_and_the_lock_released(log_dir):
    with _serve(log_dir) as s:
        c = RawClient(s.port)
        create_topic(c, "t")
        produce(c, "t", batch(3))
        c.close()
    with open(log_dir / "t-0" / "00000000000000000000.log", "ab") as f:
        f.write(batch(2)[:30])  # a torn write
    with pytest.raises(CorruptRecordError, match="run recovery first"):
        _serve(log_dir).start()
    assert not is_locked(log_dir)


def test_locked_directory_is_refused(log_dir):
    with _serve(log_dir):
        with pytest.raises(LogDirLockedError):
            _serve(log_dir).start()


def test_periodic_checkpoints_while_serving(log_dir):
    import time

    with ServerThread(log_dir, ServerOptions(port=0), checkpoint_interval=0.1) as s:
        c = RawClient(s.port)
        create_topic(c, "t", configs={"segment.bytes": "1000"})
        for _ in range(6):
            produce(c, "t", batch(3, size=100))
        leo = part(produce(c, "t", batch(1)))["baseOffset"] + 1
        tp = TopicPartition("t", 0)
        bases = [seg.base_offset for seg in Log.open(log_dir / "t-0").segments]
        assert len(bases) > 2

        def files():
            hw = read_offset_checkpoint(log_dir / "replication-offset-checkpoint") or {}
            rp = read_offset_checkpoint(log_dir / "recovery-point-offset-checkpoint") or {}
            return hw.get(tp), rp.get(tp)

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and files() != (leo, bases[-1]):
            time.sleep(0.05)
        # the high watermark, and the recovery point at the last roll (all below is fsynced)
        assert files() == (leo, bases[-1])
        c.close()
