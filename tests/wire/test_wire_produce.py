"""Produce, differentially: the same request bytes to the bench broker and to serve, the
answers (error codes, errorMessage, recordErrors, offsets) equal after the one
normalisation of :mod:`wire_testkit`; then the logs' state compared through ListOffsets
and Fetch."""

from __future__ import annotations

import struct

import pytest
from wire_testkit import TS, batch, decode, fetch_body, list_offsets_body, produce_body

from kafkalog_cli.constants import CODEC_GZIP, CODEC_LZ4, CODEC_SNAPPY, CODEC_ZSTD
from kafkalog_cli.format.builder import build_batch
from kafkalog_cli.protocol.wire import encode_request

pytestmark = pytest.mark.kafka

TOPICS = {
    "pr-plain": (3, {}),
    "pr-compact": (1, {"cleanup.policy": "compact"}),
    "pr-lat": (1, {"message.timestamp.type": "LogAppendTime"}),
    "pr-mir2": (1, {"min.insync.replicas": "2"}),
    "pr-small": (1, {"max.message.bytes": "300"}),
    "pr-ts": (1, {"message.timestamp.before.max.ms": "3600000",
                  "message.timestamp.after.max.ms": "3600000"}),
    "pr-gzip": (1, {"compression.type": "gzip"}),
    "pr-idem": (4, {}),
    "pr-roll": (1, {"segment.bytes": str(1 << 20)}),
}


@pytest.fixture(scope="module")
def pair(wire_pair):
    for name, (n, configs) in TOPICS.items():
        wire_pair.create_topic(name, n, configs)
    return wire_pair


def produce(pair, parts, version=11, **kw):
    return pair.same(0, version, produce_body(parts, **kw))


def corrupt_crc(b: bytes) -> bytes:
    out = bytearray(b)
    out[-1] ^= 0xFF
    return bytes(out)


def with_field(b: bytes, offset: int, fmt: str, value) -> bytes:
    out = bytearray(b)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def legacy_v1() -> bytes:
    # a magic-1 message set of one record (offset, size, crc, magic 1, attributes, ts, key,
    # value), crc left zero: validateRecords refuses it before any CRC check
    body = struct.pack(">bbqi", 1, 0, TS, -1) + struct.pack(">i", 1) + b"x"
    return struct.pack(">qi", 0, 4 + len(body)) + b"\0\0\0\0" + body


# -- one request each: (id, topic, partition, records factory, kwargs) ---------------------------

SINGLE = [
    *[(f"v{v}-plain", "pr-plain", 0, lambda: batch(2), {"version": v}) for v in range(3, 12)],
    ("acks-all", "pr-plain", 1, lambda: batch(1), {"acks": -1}),
    ("acks-2", "pr-plain", 1, lambda: batch(1), {"acks": 2}),
    ("acks-minus-2", "pr-plain", 1, lambda: batch(1), {"acks": -2}),
    ("acks-5", "pr-plain", 1, lambda: batch(1), {"acks": 5}),
    ("unknown-topic", "pr-nope", 0, lambda: batch(1), {}),
    ("unknown-partition", "pr-plain", 7, lambda: batch(1), {}),
    ("negative-partition", "pr-plain", -1, lambda: batch(1), {}),
    ("invalid-topic-name", "pr bad", 0, lambda: batch(1), {}),
    ("empty-records", "pr-plain", 2, lambda: b"", {}),
    ("two-batches", "pr-plain", 2, lambda: batch(1) + batch(1), {}),
    ("magic-1", "pr-plain", 2, legacy_v1, {}),
    ("zstd-v6", "pr-plain", 2, lambda: batch(2, codec=CODEC_ZSTD), {"version": 6}),
    ("zstd-v7", "pr-plain", 2, lambda: batch(2, codec=CODEC_ZSTD), {"version": 7}),
    ("gzip", "pr-plain", 2, lambda: batch(3, codec=CODEC_GZIP), {}),
    ("snappy", "pr-plain", 2, lambda: batch(3, codec=CODEC_SNAPPY), {}),
    ("lz4", "pr-plain", 2, lambda: batch(3, codec=CODEC_LZ4), {}),
    ("codec-7", "pr-plain", 2, lambda: with_field(batch(1), 22, ">h", 7), {}),
    ("corrupt-crc", "pr-plain", 2, lambda: corrupt_crc(batch(2)), {}),
    ("truncated", "pr-plain", 2, lambda: batch(2)[:-5], {}),
    ("size-below-overhead", "pr-plain", 2, lambda: with_field(batch(1), 8, ">i", 4), {}),
    ("bad-magic", "pr-plain", 2, lambda: with_field(batch(1), 16, ">b", 5), {}),
    ("trailing-partial", "pr-plain", 2, lambda: batch(1) + b"\0\0\0", {}),
    ("base-offset-nonzero", "pr-plain", 2, lambda: batch(2, base_offset=77), {}),
    ("leader-epoch-set", "pr-plain", 2, lambda: with_field(batch(1), 12, ">i", 9), {}),
    ("count-mismatch", "pr-plain", 2, lambda: _recrc(with_field(batch(3), 57, ">i", 2)), {}),
    ("last-delta-mismatch", "pr-plain", 2,
     lambda: _recrc(with_field(batch(3), 23, ">i", 5)), {}),
    ("control-from-client", "pr-plain", 2, lambda: _control(), {}),
    ("compact-null-key", "pr-compact", 0, lambda: batch(2, key=None), {}),
    ("compact-keyed", "pr-compact", 0, lambda: batch(2), {}),
    ("compact-null-key-gzip", "pr-compact", 0, lambda: batch(3, key=None, codec=CODEC_GZIP),
     {}),
    ("compact-mixed-keys", "pr-compact", 0, lambda: _mixed_keys(), {}),
    ("log-append-time", "pr-lat", 0, lambda: batch(2), {}),
    ("log-append-time-v4", "pr-lat", 0, lambda: batch(2), {"version": 4}),
    ("min-isr-above-replicas", "pr-mir2", 0, lambda: batch(1), {"acks": -1}),
    ("min-isr-acks-1", "pr-mir2", 0, lambda: batch(1), {"acks": 1}),
    ("too-large", "pr-small", 0, lambda: batch(1, value_size=400), {}),
    ("fits", "pr-small", 0, lambda: batch(1, value_size=50), {}),
    ("ts-too-old", "pr-ts", 0, lambda: batch(2, ts=TS), {}),
    ("ts-too-new", "pr-ts", 0, lambda: batch(2, ts=4_000_000_000_000), {}),
    ("topic-gzip-from-none", "pr-gzip", 0, lambda: batch(2), {}),
    ("topic-gzip-from-lz4", "pr-gzip", 0, lambda: batch(2, codec=CODEC_LZ4), {}),
    ("headers", "pr-plain", 0, lambda: batch(2, headers=(("h", b"x"), ("n", None))), {}),
    ("internal-offsets-topic", "__consumer_offsets", 0, lambda: batch(1), {}),
    ("no-producer-id-with-seq", "pr-plain", 0, lambda: batch(1, seq=0), {}),
]


def _recrc(b: bytes) -> bytes:
    from kafkalog_cli.crc import crc32c
    out = bytearray(b)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


def _control() -> bytes:
    from kafkalog_cli.format.builder import build_control_batch
    return build_control_batch(1, timestamp=TS, producer_id=5, producer_epoch=0)


def _mixed_keys() -> bytes:
    return build_batch([(TS, b"a", b"1", ()), (TS, None, b"2", ()), (TS, b"c", b"3", ()),
                        (TS, None, b"4", ())])


@pytest.mark.parametrize("case", SINGLE, ids=[c[0] for c in SINGLE])
def test_single_produce(pair, case):
    _, topic, partition, records, kw = case
    produce(pair, [(topic, partition, records())], **kw)


def test_every_partition_state_after_single_produces(pair):
    """What the single requests left: the offsets and batches of every partition."""
    for name, (n, _) in TOPICS.items():
        pair.same(2, 7, list_offsets_body(name, range(n), -1))
        pair.same(1, 12, fetch_body(name, range(n), 0))


def test_acks_zero_no_answer_then_next(pair):
    pair.send(0, 11, produce_body([("pr-plain", 1, batch(2))], acks=0), expect_response=False)
    pair.same(2, 7, list_offsets_body("pr-plain", [1], -1))


def test_acks_zero_error_closes(pair):
    pair.send(0, 11, produce_body([("pr-nope", 0, batch(2))], acks=0), expect_response=False)
    assert [side.closed() for side in pair.sides.values()] == [True, True]


def test_several_partitions_one_request(pair):
    produce(pair, [("pr-plain", 0, batch(1)), ("pr-plain", 1, batch(2)),
                   ("pr-plain", 9, batch(1)), ("pr-nope", 0, batch(1)),
                   ("pr-compact", 0, batch(1, key=None)), ("pr-plain", 2, b"")])


def test_same_partition_twice(pair):
    produce(pair, [("pr-plain", 0, batch(1)), ("pr-plain", 0, batch(3))])


# -- idempotent producers ------------------------------------------------------------------

def _init_pid(pair, key):
    """Set-up: a producer id from each side (the broker answers
    COORDINATOR_LOAD_IN_PROGRESS until its first block of ids arrives: asked again)."""
    for side in pair.sides.values():
        side.values[key] = pair.init_producer_id(side)[0]


def _pid_batch(key, n=2, **kw):
    return lambda side: produce_body([("pr-idem", kw.pop("partition", 0),
                                       batch(n, pid=side.values[key], **kw))])


IDEMPOTENT = [
    ("first-seq-0", 0, {"epoch": 0, "seq": 0}),
    ("next-seq", 0, {"epoch": 0, "seq": 2}),
    ("duplicate-last", 0, {"epoch": 0, "seq": 2}),
    ("duplicate-older", 0, {"epoch": 0, "seq": 0}),
    ("gap", 0, {"epoch": 0, "seq": 9}),
    ("seq-overlap", 0, {"epoch": 0, "seq": 3}),
    ("next-after-dup", 0, {"epoch": 0, "seq": 4}),
    ("epoch-bump-seq-nonzero", 0, {"epoch": 1, "seq": 5}),
    ("epoch-bump-seq-0", 0, {"epoch": 1, "seq": 0}),
    ("fenced-epoch", 0, {"epoch": 0, "seq": 6}),
    ("new-partition-seq-nonzero", 1, {"epoch": 0, "seq": 3}),
    ("new-partition-seq-0", 1, {"epoch": 0, "seq": 0}),
    ("negative-seq", 2, {"epoch": 0, "seq": -5}),
    ("no-epoch", 2, {"epoch": -1, "seq": 0}),
]


@pytest.mark.parametrize("case", IDEMPOTENT, ids=[c[0] for c in IDEMPOTENT])
def test_idempotent(pair, case):
    _, partition, kw = case
    if "idem" not in pair.sides["broker"].values:
        _init_pid(pair, "idem")
    pair.same(0, 11, lambda side: produce_body([("pr-idem", partition, batch(
        2, pid=side.values["idem"], **kw))]))


def test_unknown_producer_id(pair):
    pair.same(0, 11, produce_body([("pr-idem", 3, batch(2, pid=987654, epoch=0, seq=7))]))
    pair.same(0, 11, produce_body([("pr-idem", 3, batch(2, pid=987654, epoch=0, seq=0))]))


def test_idempotent_state(pair):
    pair.same(2, 7, list_offsets_body("pr-idem", range(4), -1))
    pair.same(1, 12, fetch_body("pr-idem", range(4), 0))


# -- the roll before the producer-state check (UnifiedLog.append: maybeRoll first) -----------

def test_duplicate_that_would_not_fit_rolls(pair):
    """A duplicate batch that would not fit the active segment: Kafka rolls (an empty
    segment) before it finds the duplicate; the segments of both logs are the same."""
    _init_pid(pair, "roll")
    big = 400_000  # three of these do not fit a segment of 1 MiB (the least Kafka 4 allows)
    for seq in (0, 1):
        pair.same(0, 11, lambda side, seq=seq: produce_body(
            [("pr-roll", 0, batch(1, pid=side.values["roll"], epoch=0, seq=seq, value_size=big))]))
    pair.same(0, 11, lambda side: produce_body(
        [("pr-roll", 0, batch(1, pid=side.values["roll"], epoch=0, seq=1, value_size=big))]))
    pair.same(1, 12, fetch_body("pr-roll", [0], 0))
    assert _segments(pair, "pr-roll-0") == _segments(pair, "pr-roll-0", side="broker")


def _segments(pair, partition_dir, side="serve"):
    d = (pair.serve_dir if side == "serve" else pair.broker.log_dir) / partition_dir
    return sorted(p.name for p in d.iterdir() if p.suffix == ".log")


def test_null_records_kept_difference(pair):
    """Kept difference (docs/serve.md): null records make Kafka 4.4's handleProduceRequest
    throw a NullPointerException (``records().sizeInBytes()``); the request is never
    answered and the connection stays muted. serve answers INVALID_RECORD."""
    body = produce_body([("pr-plain", 2, None)])
    broker, serve = pair.sides["broker"], pair.sides["serve"]
    broker.send(_frame(broker, body))
    assert broker.recv_or_timeout(3) == "timeout"
    broker.close()
    serve.send(_frame(serve, body))
    answer = decode(0, 11, serve.recv())
    assert answer["responses"][0]["partitionResponses"][0]["errorCode"] == 87  # INVALID_RECORD


def _frame(side, body):
    side.correlation += 1
    return encode_request(0, 11, side.correlation, body, "wire")
