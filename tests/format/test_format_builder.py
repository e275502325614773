"""Builder round trips (hypothesis): what build_batch writes decodes identically with our
reader and with kafka-python's."""

from __future__ import annotations

import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record import MemoryRecords

from kafkalog_cli.constants import CODEC_GZIP, CODEC_LZ4, CODEC_NONE, CODEC_SNAPPY, CODEC_ZSTD
from kafkalog_cli.format.builder import (
    build_batch,
    build_control_batch,
    build_legacy_message,
    build_legacy_wrapper,
    set_base_offset,
    set_partition_leader_epoch,
)
from kafkalog_cli.format.records import FileRecords

T0 = 1_700_000_000_000
opt_bytes = st.none() | st.binary(max_size=300)
header = st.tuples(st.text(max_size=20), opt_bytes)
record = st.tuples(st.integers(T0 - 10**7, T0 + 10**7), opt_bytes, opt_bytes,
                   st.lists(header, max_size=4).map(tuple))
codecs = st.sampled_from([CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD])


def _norm(recs):
    return [(r.offset, r.timestamp, None if r.key is None else bytes(r.key),
             None if r.value is None else bytes(r.value),
             tuple((k, None if v is None else bytes(v)) for k, v in r.headers)) for r in recs]


def _kafka_python(data: bytes):
    out = []
    batches = []
    mr = MemoryRecords(data)
    while (b := mr.next_batch()) is not None:
        batches.append(b)
        assert b.validate_crc()  # before iterating, as kafka-python requires
        for r in b:
            out.append((r.offset, r.timestamp, r.key, r.value, tuple(r.headers)))
    return batches, out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=st.lists(record, min_size=1, max_size=30), codec=codecs,
       base_offset=st.integers(0, 2**40), pid=st.integers(-1, 2**40),
       epoch=st.integers(-1, 32767), seq=st.integers(-1, 2**31 - 1),
       leader_epoch=st.integers(-1, 1000), txn=st.booleans())
def test_build_batch_round_trip(recs, codec, base_offset, pid, epoch, seq, leader_epoch, txn):
    raw = build_batch(recs, base_offset=base_offset, compression_type=codec, producer_id=pid,
                      producer_epoch=epoch, base_sequence=seq,
                      partition_leader_epoch=leader_epoch, is_transactional=txn)
    (b,) = FileRecords(raw).batches()
    assert b.is_valid and b.size == len(raw)
    assert (b.base_offset, b.last_offset, b.count, b.compression) == \
        (base_offset, base_offset + len(recs) - 1, len(recs), codec)
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.partition_leader_epoch,
            b.is_transactional, b.is_control) == (pid, epoch, seq, leader_epoch, txn, False)
    assert b.base_timestamp == recs[0][0]
    assert b.max_timestamp == max(r[0] for r in recs)
    expected = [(base_offset + i, ts, k, v, tuple(h)) for i, (ts, k, v, h) in enumerate(recs)]
    assert _norm(b.records()) == expected

    (kb,), theirs = _kafka_python(raw)
    assert (kb.base_offset, kb.producer_id, kb.producer_epoch, kb.base_sequence,
            kb.compression_type, kb.is_transactional, kb.max_timestamp) == \
        (base_offset, pid, epoch, seq, codec, txn, b.max_timestamp)
    assert theirs == expected


@settings(max_examples=40, deadline=None)
@given(batches=st.lists(st.tuples(st.lists(record, min_size=1, max_size=5), codecs),
                        min_size=1, max_size=6))
def test_concatenated_batches_with_assigned_offsets(batches):
    data = bytearray()
    offset = 0
    for recs, codec in batches:
        b = bytearray(build_batch(recs, compression_type=codec))
        set_base_offset(b, offset)       # outside the CRC: still valid
        set_partition_leader_epoch(b, 5)
        data += b
        offset += len(recs)
    ours = []
    for b in FileRecords(bytes(data)).batches():
        assert b.is_valid and b.partition_leader_epoch == 5
        ours += _norm(b.records())
    _, theirs = _kafka_python(bytes(data))
    assert ours == theirs
    assert [r[0] for r in ours] == list(range(offset))


def test_log_append_time_overrides_record_timestamps():
    raw = build_batch([(T0, b"a", b"b", ()), (T0 + 5, b"c", b"d", ())], log_append_time=T0 + 99)
    (b,) = FileRecords(raw).batches()
    assert b.timestamp_type == "LogAppendTime" and b.max_timestamp == T0 + 99
    assert [r.timestamp for r in b.records()] == [T0 + 99, T0 + 99]
    _, theirs = _kafka_python(raw)
    assert [r[1] for r in theirs] == [T0 + 99, T0 + 99]


def test_delete_horizon():
    raw = build_batch([(T0 + 7, b"a", b"b", ())], delete_horizon_ms=T0)
    (b,) = FileRecords(raw).batches()
    assert b.has_delete_horizon and b.delete_horizon_ms == T0 and b.base_timestamp == T0
    assert b.records()[0].timestamp == T0 + 7


def test_control_batch_bytes():
    raw = build_control_batch(1, base_offset=9, timestamp=T0, producer_id=11, producer_epoch=2,
                              coordinator_epoch=6)
    (b,) = FileRecords(raw).batches()
    assert b.is_control and b.is_transactional and b.count == 1 and b.is_valid
    (r,) = b.records()
    # ControlRecordKey v0 type 1 (COMMIT); EndTransactionMarker v0 coordinatorEpoch 6
    assert bytes(r.key) == struct.pack(">hh", 0, 1)
    assert bytes(r.value) == struct.pack(">hi", 0, 6)
    (kb,), _ = _kafka_python(raw)
    assert kb.is_control_batch and kb.producer_id == 11


@settings(max_examples=60, deadline=None)
@given(msgs=st.lists(st.tuples(st.integers(0, 2**41), opt_bytes, opt_bytes), min_size=1,
                     max_size=6),
       magic=st.sampled_from([0, 1]), first=st.integers(0, 2**40),
       codec=st.sampled_from([CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4]))
def test_legacy_round_trip(msgs, magic, first, codec):
    if magic == 0 and codec == CODEC_LZ4:
        codec = CODEC_GZIP  # kafka-python needs xxhash for magic-0 lz4 (Kafka's broken HC)
    plain = b"".join(build_legacy_message(first + i, k, v, magic=magic, timestamp=ts)
                     for i, (ts, k, v) in enumerate(msgs))
    wrapper_first = first + len(msgs)
    wrapper = build_legacy_wrapper(wrapper_first, msgs, magic=magic, compression_type=codec)
    data = plain + wrapper
    ours = []
    for b in FileRecords(data).batches():
        assert b.is_valid
        ours += _norm(b.records())
    _, theirs = _kafka_python(data)
    theirs = [(o, -1 if ts is None else ts, k, v, h) for o, ts, k, v, h in theirs]
    assert ours == theirs
    expected_offsets = list(range(first, first + 2 * len(msgs)))
    assert [r[0] for r in ours] == expected_offsets
