"""format/salvage.py: reading past damage (``--skip-corrupt``). The oracle for what a
damaged file still holds is kafka-python's reader (MemoryRecords) run over the undamaged
file: every batch the damage did not touch must come back, with its offsets, and the
bytes in between must be reported as one skipped range."""

from __future__ import annotations

import os
import random
import struct

import pytest
from kafkalog_testkit import kafka_python_batches

from kafkalog_cli.format.salvage import SalvagedRecords, resync

SEG0 = "00000000000000000000"


def _batches_by_kafka_python(data: bytes) -> list[tuple[int, int, int]]:
    """(position, base offset, size) of each batch, read by kafka-python."""
    out = [b[:3] for b in kafka_python_batches(data)]
    assert sum(b[2] for b in out) == len(data)
    return out


def _salvaged(data: bytes, **kw):
    s = SalvagedRecords(data, **kw)
    got = [(b.position, b.base_offset) for b in s.batches()]
    return s, got


def test_a_crc_failure_is_one_skipped_batch(fixtures_root):
    data = (fixtures_root / "multi-0" / f"{SEG0}.log").read_bytes()
    want = _batches_by_kafka_python(data)
    pos, _, size = want[5]
    bad = bytearray(data)
    bad[pos + size - 3] ^= 0x55  # in the records: the CRC no longer matches
    s, got = _salvaged(bytes(bad))
    assert got == [(p, o) for p, o, _ in want if p != pos]
    assert [(k.position, k.size) for k in s.skipped] == [(pos, size)]
    assert s.skipped[0].reason.startswith("Record is corrupt (stored crc = ")
    assert s.invalid_bytes == 0 and s.stop_error is None


def test_a_damaged_size_resyncs_on_the_next_batch(fixtures_root):
    """The size field is outside nothing Kafka checks before reading: one that runs past
    the end (FileRecords stops there) or lands inside the batch is passed over."""
    data = (fixtures_root / "multi-0" / f"{SEG0}.log").read_bytes()
    want = _batches_by_kafka_python(data)
    pos, _, size = want[3]
    for length in (0x7FFF0000, 60, size - 12 + 7, 0):
        bad = bytearray(data)
        bad[pos + 8:pos + 12] = struct.pack(">i", length)
        s, got = _salvaged(bytes(bad))
        assert got == [(p, o) for p, o, _ in want if p != pos], length
        assert [(k.position, k.size) for k in s.skipped] == [(pos, size)], length


@pytest.mark.parametrize("filler", ["random", "zeros", "batch-like"])
def test_garbage_between_batches(fixtures_root, filler):
    data = (fixtures_root / "multi-0" / f"{SEG0}.log").read_bytes()
    want = _batches_by_kafka_python(data)
    cut = want[7][0]
    rng = random.Random(30)
    if filler == "random":
        junk = rng.randbytes(300_000)
    elif filler == "zeros":
        junk = bytes(300_000)
    else:  # headers of v2 batches with sizes that run nowhere and stale CRCs
        junk = b"".join(struct.pack(">qiibI", rng.randrange(1 << 40), rng.randrange(49, 4000),
                                    0, 2, rng.randrange(1 << 32)) + rng.randbytes(40)
                        for _ in range(3000))
    s, got = _salvaged(data[:cut] + junk + data[cut:])
    shifted = [(p if p < cut else p + len(junk), o) for p, o, _ in want]
    assert got == shifted
    assert [(k.position, k.size) for k in s.skipped] == [(cut, len(junk))]


def test_a_batch_inside_a_value_is_not_taken_for_the_next_one(tmp_path):
    """A record whose value holds a whole valid batch (offset 0, as a producer builds it):
    its offsets do not follow the batches read before, so the scan passes it and resyncs
    on the real next batch."""
    from kafkalog_testkit import raw_batch, raw_record

    inner = raw_batch(0, [raw_record(0, 0, b"ik", b"iv")])
    b0 = raw_batch(0, [raw_record(0, 0, b"k", b"v")])
    b1 = bytearray(raw_batch(1, [raw_record(0, 0, b"k", inner)]))
    b1[-1] ^= 0xFF  # break b1's CRC (its last value byte, after the inner batch)
    b2 = raw_batch(2, [raw_record(0, 0, b"k", b"v")])
    s, got = _salvaged(b0 + bytes(b1) + b2)
    assert got == [(0, 0), (len(b0) + len(b1), 2)]
    assert [(k.position, k.size) for k in s.skipped] == [(len(b0), len(b1))]


def test_nothing_good_after_the_damage_is_the_invalid_tail(fixtures_root):
    data = (fixtures_root / "multi-0" / f"{SEG0}.log").read_bytes()
    want = _batches_by_kafka_python(data)
    # a torn last batch: the invalid bytes at the end, as FileRecords reports them
    s, got = _salvaged(data[:-10])
    assert got == [(p, o) for p, o, _ in want[:-1]] and not s.skipped
    assert (s.valid_end, s.invalid_bytes, s.stop_error) == (want[-1][0], want[-1][2] - 10, None)
    # a last batch failing its CRC: not a skip (nothing follows), the tail, with why
    bad = bytearray(data)
    bad[-1] ^= 1
    s, got = _salvaged(bytes(bad))
    assert not s.skipped and s.valid_end == want[-1][0]
    assert s.stop_error.message.startswith("Record is corrupt")


def test_legacy_logs_resync_too(fixtures_root):
    data = (fixtures_root / "legacy-v1-0" / f"{SEG0}.log").read_bytes()
    want = _batches_by_kafka_python(data)
    pos, _, size = want[1]
    bad = bytearray(data)
    bad[pos + size - 1] ^= 0x01
    s, got = _salvaged(bytes(bad))
    # positions only: kafka-python gives a v1 wrapper's own offset as its base offset
    assert [p for p, _ in got] == [p for p, _, _ in want if p != pos]
    assert [(k.position, k.size) for k in s.skipped] == [(pos, size)]


def test_plausible_offsets_of_the_segment(fixtures_root):
    """A batch found by the scan must lie in the segment's offset range: below its base
    offset, or past 2^31 - 1 above it, it is not taken."""
    data = (fixtures_root / "multi-0" / f"{SEG0}.log").read_bytes()
    want = _batches_by_kafka_python(data)
    assert resync(data, 1) == want[1][0]
    assert resync(data, 1, base_offset=10) == want[3][0]  # batches 4..7 and 8..11: below
    assert resync(data, 1, after_offset=50) == next(p for p, o, _ in want if o > 50)
    assert resync(data, 1, base_offset=-(1 << 32)) is None


@pytest.mark.corpus
@pytest.mark.slow  # kafka-python reads 12 real segments (benchmarks/salvage_bench.py: all)
def test_corpus_segments_with_a_damaged_batch(corpus_root):
    """On real brokers' segments (v1 and v2, lz4): damage one batch's bytes at random;
    every other batch comes back, the damaged one is the one skipped range."""
    rng = random.Random(30)
    logs = [p for p in sorted(corpus_root.rglob("*.log"))
            if 20_000 < p.stat().st_size < 2_000_000]
    tried = 0
    for log in rng.sample(logs, min(12, len(logs))):
        data = log.read_bytes()
        want = _batches_by_kafka_python(data)
        if len(want) < 3:
            continue
        i = rng.randrange(1, len(want) - 1)
        pos, _, size = want[i]
        bad = bytearray(data)
        at = pos + rng.randrange(21, size)  # past the CRC field: the CRC fails
        bad[at] ^= 1 + rng.randrange(255)
        s, got = _salvaged(bytes(bad))
        # positions (kafka-python gives a v1 wrapper's own offset as its base offset)
        assert [p for p, _ in got] == [p for p, _, _ in want if p != pos], log
        assert [(k.position, k.size) for k in s.skipped] == [(pos, size)], log
        tried += 1
    assert tried >= 6


def test_speed_of_a_scan_is_bounded(tmp_path):
    """4 MiB of random bytes are scanned in well under a few seconds (the regex finds
    ~1 candidate in 512 positions; each is one header read)."""
    import time

    from kafkalog_testkit import raw_batch, raw_record

    b0 = raw_batch(0, [raw_record(0, 0, b"k", b"v")])
    b1 = raw_batch(1, [raw_record(0, 0, b"k", b"v")])
    data = b0 + os.urandom(4 << 20) + b1
    t = time.process_time()
    s, got = _salvaged(data)
    assert got == [(0, 0), (len(data) - len(b1), 1)]
    assert time.process_time() - t < 10
