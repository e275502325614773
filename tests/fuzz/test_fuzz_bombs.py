"""Decompression bombs in every codec through every read-side target, in bounded memory.

Each bomb is one batch in a partition of its own, built here with the codec libraries
(:func:`fuzz_testkit.stream_compress`), and run in the fuzz worker (address space capped)
with the peak of resident memory each target adds measured by the kernel:

* ``records``: many seven-byte records (the issue's bomb; 7 bytes decompressed each, all
  offsetDelta 0): memory must not grow with them (:data:`RECORDS_PEAK_KIB`);
* ``count``: the same block under a ``recordsCount`` of 1 or 2^31-1 - corrupt
  (DefaultRecordBatch's iterator checks), found without holding the records;
* ``big``: one record longer than any decode piece: held whole, as Kafka holds a record,
  so memory is a small multiple of its size (:data:`BIG_FACTOR`);
* ``legacy``: a v0/v1 wrapper of many inner messages;
* ``bound``: a bomb over ``--max-decompressed-bytes`` (a typed error or a finding);
* raw snappy blocks (no xerial framing, as librdkafka writes them), real and lying about
  their length.

Sizes: the short run uses bombs small enough for CI; ``KAFKALOG_FUZZ_BOMB_RECORDS`` (the
long run: 4 M by default, 38 M is the issue's) makes them larger.
"""

from __future__ import annotations

import os

import pytest
from fuzz_client import check
from fuzz_testkit import (
    LONG,
    SEVEN,
    big_record_batch,
    bomb_batch,
    compress,
    legacy_wrapper,
    raw_snappy_bomb,
    v2_batch,
)
from kafkalog_testkit import uvarint

pytestmark = pytest.mark.fuzz

MiB = 1 << 20
SEG = "00000000000000000000.log"
CODECS = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
#: records of the ``records`` bombs
N = int(os.environ.get("KAFKALOG_FUZZ_BOMB_RECORDS", 4_000_000 if LONG else 1_000_000))
#: records of the bombs that the slow targets decode in the short run
N_DEEP = N if LONG else 150_000
#: what a target may add to resident memory on a bomb of small records: a few pieces of
#: 1 MiB decoded (~150,000 records each), never the batch's records
RECORDS_PEAK_KIB = 64 * 1024
#: a record longer than a piece is held whole (as Kafka's iterators hold it); a target may
#: add this many times its size (the decompressed block, the value, their renderings:
#: base64 for JSON, the terminal's escapes at up to 4 characters a byte)
BIG_FACTOR = 16
BIG = (64 if LONG else 8) * MiB

#: targets that decode every record, and those that read headers (or N records)
DECODING = ("dump", "audit", "export")
HEADERS = ("read", "describe", "verify", "recover_plan", "files", "catalog")


def _run(worker, batch: bytes, targets, params=None, *, peak_kib=RECORDS_PEAK_KIB,
         name="bomb-0"):
    res = worker.run_dir({f"{name}/{SEG}": batch}, targets, {"max_records": 2, **(params or {})},
                         timeout=1800)
    check(res, peak_kib=peak_kib, what=f"{name}: {len(batch)} bytes")
    return res


def _bomb(codec: str, n: int) -> bytes:
    return raw_snappy_bomb(n) if codec == "snappy-raw" else bomb_batch(CODECS[codec], n)


@pytest.mark.parametrize("codec", [*CODECS, "snappy-raw"])
def test_records_bomb_header_targets(fuzz_worker, codec):
    """read --max-records 2, describe, verify-index, recover, the file readers and serve's
    start-up read headers (or two records): quick, small, whatever the batch holds. A
    raw snappy block is decompressed whole (it has no streaming form) but decoded a piece
    at a time (it was decoded whole: MemoryError at 64 MiB)."""
    res = _run(fuzz_worker, _bomb(codec, N), HEADERS)
    assert res["read"]["value"] == 4  # two records, in each isolation level
    assert res["describe"]["value"] == 1


@pytest.mark.parametrize("codec", [*CODECS, "snappy-raw"])
def test_records_bomb_audit(fuzz_worker, codec):
    """audit decodes every record of the bomb (a valid CRC does not make a block
    decodable), a piece at a time."""
    res = _run(fuzz_worker, _bomb(codec, N), ["audit"])
    assert res["audit"]["value"] == N


@pytest.mark.slow
@pytest.mark.parametrize("codec", [c for c in CODECS if LONG or c == "zstd"])
def test_records_bomb_dump_and_export(fuzz_worker, codec):
    """dump-segment --print-data-log prints, and export writes, every record, holding a
    piece of them at a time (all codecs in the long run)."""
    res = _run(fuzz_worker, bomb_batch(CODECS[codec], N_DEEP), ["dump", "export"])
    assert res["dump"]["value"] == N_DEEP and res["export"]["value"] == N_DEEP


@pytest.mark.slow
@pytest.mark.parametrize("count", [1, 2, (1 << 31) - 1])
@pytest.mark.parametrize("codec", CODECS)
def test_records_bomb_with_a_lying_count(fuzz_worker, codec, count):
    """A recordsCount that the block does not hold: corrupt, found after at most a piece
    (records left after the count) or at the block's end (too few)."""
    import struct

    import crc32c

    b = bytearray(bomb_batch(CODECS[codec], N_DEEP))
    struct.pack_into(">i", b, 57, count)
    struct.pack_into(">i", b, 23, count - 1)
    struct.pack_into(">I", b, 17, crc32c.crc32c(bytes(b[21:])))
    res = _run(fuzz_worker, bytes(b), ("read", "audit", "dump"))
    assert res["audit"]["value"] == 0 or res["audit"]["outcome"] == "typed"


@pytest.mark.parametrize("count", [1 << 20, (1 << 31) - 1])
def test_a_lying_count_on_a_small_plain_block(fuzz_worker, count):
    """Eight records, uncompressed, under a recordsCount of millions: corrupt to every
    decoding target, which must not size anything from the count (the compiled core's
    group decode once allocated its Arrow buffers from it: export took 610 MB for this
    60-byte block). The compressed bombs above do not reach that path with a count this
    far above the block: the count is checked against the decompressed size first."""
    import struct

    import crc32c

    b = bytearray(v2_batch(SEVEN * 8, codec=0, count=8))
    struct.pack_into(">i", b, 57, count)
    struct.pack_into(">i", b, 23, count - 1)
    struct.pack_into(">I", b, 17, crc32c.crc32c(bytes(b[21:])))
    res = _run(fuzz_worker, bytes(b), ("read", "audit", "dump", "export"),
               peak_kib=16 * 1024, name="lying-0")
    assert res["audit"]["value"] == 0 or res["audit"]["outcome"] == "typed"


@pytest.mark.parametrize("codec", CODECS)
def test_one_record_larger_than_a_piece(fuzz_worker, codec):
    res = _run(fuzz_worker, big_record_batch(CODECS[codec], BIG), HEADERS + DECODING,
               peak_kib=BIG_FACTOR * BIG // 1024, name="big-0")
    assert res["audit"]["value"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4"])
def test_legacy_wrapper_of_many_messages(fuzz_worker, codec, magic):
    """A v0/v1 compressed wrapper holding many inner messages (describe and recover count
    them: a legacy wrapper's offsets are in its inner messages)."""
    n = N_DEEP if LONG else 40_000
    res = _run(fuzz_worker, legacy_wrapper(CODECS[codec], n, magic=magic),
               HEADERS + DECODING, name="legacy-0")
    assert res["audit"]["value"] == n and res["dump"]["value"] == n


@pytest.mark.parametrize("codec", CODECS)
def test_bomb_over_the_bound(fuzz_worker, codec):
    """--max-decompressed-bytes 1 MiB: every decoding target reports the batch (a finding
    or a typed error), none decodes it."""
    res = _run(fuzz_worker, bomb_batch(CODECS[codec], N), HEADERS + DECODING,
               {"max_decompressed_bytes": MiB})
    assert res["audit"]["value"] == 0


# -- raw snappy blocks ---------------------------------------------------------------------------

def _raw_snappy_batch(block: bytes, count: int) -> bytes:
    return v2_batch(block, codec=2, count=count)


@pytest.mark.slow
def test_raw_snappy_block(fuzz_worker):
    """One raw snappy block (librdkafka's framing) of many records: Java's
    SnappyInputStream reads it whole, and so does kafkalog; snappy expands at most ~21x,
    so the block costs at most that multiple of the batch (and --max-decompressed-bytes
    bounds it)."""
    import cramjam

    n = N_DEEP
    raw = bytes(cramjam.snappy.compress_raw(bytes.fromhex("0c000000010100") * n))
    res = _run(fuzz_worker, _raw_snappy_batch(raw, n), HEADERS + DECODING,
               peak_kib=max(RECORDS_PEAK_KIB, 3 * 7 * n // 1024))
    assert res["audit"]["value"] == n


@pytest.mark.parametrize("claimed", [1 << 20, 200 * MiB, (1 << 32) - 1])
def test_raw_snappy_block_lying_about_its_length(fuzz_worker, claimed):
    """A raw snappy block whose length preamble claims more than its few bytes can
    expand to: corrupt, and nothing of the claimed size is allocated."""
    body = uvarint(claimed) + b"\x00" * 8
    res = _run(fuzz_worker, _raw_snappy_batch(body, 1), HEADERS + DECODING,
               name="lying-0")
    assert res["audit"]["value"] == 0


def test_compressed_blocks_built_here_decode(fuzz_worker):
    """The builders are what they claim: a block of ten records per codec decodes to ten
    records (a bomb test passing because its batch is unreadable would prove nothing)."""
    for codec in CODECS.values():
        block = compress(codec, bytes.fromhex("0c000000010100") * 10)
        res = fuzz_worker.run_dir({f"ten-0/{SEG}": v2_batch(block, codec=codec, count=10)},
                                  ["audit"])
        assert res["audit"]["value"] == 10, (codec, res)
