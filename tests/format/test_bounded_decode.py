"""Bounded decoding: records blocks are streamed a piece at a time, with Kafka's count
checks, so memory never grows with ``recordsCount`` or the decompressed size.

References: the plaintext each test compresses (it knows what went in), kafka-python's
decoders (an independent implementation), and the rules of Kafka's
``DefaultRecordBatch.RecordIterator`` (count, then "records still remaining" /
"premature EOF"), ``AbstractLegacyRecordBatch.DeepRecordsIterator`` (v1 wrapper offsets)
and issue 16's decompression bomb.
"""

from __future__ import annotations

import gzip
import struct
import tracemalloc
import zlib

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafkalog_testkit import (
    BOMB_SMALL_RECORDS,
    raw_batch,
    raw_record,
    zstd_bomb_batch,
)

from kafkalog_cli.constants import DECODE_CHUNK_BYTES, INT64_MAX
from kafkalog_cli.errors import CorruptRecordError, DecompressedSizeError, InvalidRecordError
from kafkalog_cli.format import compression
from kafkalog_cli.format.legacy import LegacyRecordBatch
from kafkalog_cli.format.record import _record_pieces
from kafkalog_cli.format.record_batch import RecordBatch
from kafkalog_cli.format.records import FileRecords, scan_batches

CODECS = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def _batch(data: bytes) -> RecordBatch:
    (b,) = list(FileRecords(data).batches())
    return b


def _plaintext(n: int) -> bytes:
    """``n`` bytes that compress well but not to nothing."""
    out = bytearray()
    i = 0
    while len(out) < n:
        out += b"record-%08d;" % i + bytes([i % 251]) * (i % 37)
        i += 1
    return bytes(out[:n])


# -- decompression in pieces ---------------------------------------------------------------

def _compressed(name: str, plain: bytes) -> bytes:
    """Compressed by each codec's own library, as a Java producer frames it."""
    if name == "gzip":
        return gzip.compress(plain)
    if name == "zstd":
        import zstandard
        o = zstandard.ZstdCompressor(write_content_size=False).compressobj()
        return o.compress(plain) + o.flush()
    if name == "lz4":
        import lz4.frame
        return lz4.frame.compress(plain, block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                                  block_linked=False, content_checksum=False)
    import cramjam  # snappy: xerial framing, 32 KiB blocks (SnappyOutputStream)
    parts = [b"\x82SNAPPY\x00", struct.pack(">ii", 1, 1)]
    for i in range(0, len(plain), 32 * 1024):
        blk = bytes(cramjam.snappy.compress_raw(plain[i:i + 32 * 1024]))
        parts += [struct.pack(">i", len(blk)), blk]
    return b"".join(parts)


@pytest.mark.parametrize("name", CODECS)
@pytest.mark.parametrize("size", [0, 1000, 3 * DECODE_CHUNK_BYTES + 12345])
def test_pieces_join_to_the_plaintext(name, size):
    plain = _plaintext(size)
    pieces = list(compression.decompress_chunks(CODECS[name], _compressed(name, plain)))
    assert b"".join(pieces) == plain
    assert all(0 < len(p) <= DECODE_CHUNK_BYTES for p in pieces)
    assert len(pieces) == -(-size // DECODE_CHUNK_BYTES) or name == "snappy"


def test_gzip_members_are_read_one_after_the_other():
    """GZIPInputStream reads concatenated members; a piece boundary may fall anywhere."""
    a, b = _plaintext(DECODE_CHUNK_BYTES + 5), _plaintext(777)
    data = gzip.compress(a) + gzip.compress(b)
    assert b"".join(compression.decompress_chunks(1, data)) == a + b


def test_lz4_magic0_frames_stream_block_by_block():
    import lz4.frame
    plain = _plaintext(2 * DECODE_CHUNK_BYTES)
    # independent blocks, as KafkaLZ4BlockOutputStream wrote them
    frame = lz4.frame.compress(plain, block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                               block_linked=False)
    assert b"".join(compression.decompress_chunks(3, frame, magic=0)) == plain


@pytest.mark.parametrize("name", CODECS)
def test_the_bound_stops_the_stream(name):
    plain = _plaintext(3 * DECODE_CHUNK_BYTES)
    bound = DECODE_CHUNK_BYTES + 100
    got = 0
    with pytest.raises(DecompressedSizeError) as e:
        for p in compression.decompress_chunks(CODECS[name], _compressed(name, plain),
                                               max_bytes=bound):
            got += len(p)
    assert got <= bound and e.value.limit == bound
    assert isinstance(e.value, CorruptRecordError)


@pytest.mark.parametrize("name", CODECS)
def test_garbage_is_corrupt(name):
    with pytest.raises(CorruptRecordError):
        b"".join(compression.decompress_chunks(CODECS[name], b"\x82SNAPPY\x00garbage" * 9))


# -- v2 records, streamed ----------------------------------------------------------------

def _kafka_python_batch(codec: int, n: int, headers: bool) -> bytes:
    from kafka.record.default_records import DefaultRecordBatchBuilder
    bld = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False,
                                    producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                    batch_size=1 << 30)
    for i in range(n):
        bld.append(i, timestamp=1_700_000_000_000 + i, key=b"key-%d" % i if i % 5 else None,
                   value=_plaintext(60 + i % 90) if i % 7 else None,
                   headers=[("h", b"v%d" % i), ("n", None)] if headers and i % 3 else [])
    buf = bytearray(bld.build())
    buf[0:8] = (5000).to_bytes(8, "big")  # a base offset, outside the CRC
    return bytes(buf)


def _kafka_python_records(data: bytes) -> list[tuple]:
    from kafka.record.memory_records import MemoryRecords
    b = MemoryRecords(data).next_batch()
    return [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in b]


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("headers", [False, True])
def test_big_blocks_stream_the_records_kafka_python_reads(codec, headers):
    """A records block of several pieces: iter_records is lazy (not a list) and gives
    kafka-python's records; records() the same list."""
    data = _kafka_python_batch(codec, 30_000, headers)
    want = _kafka_python_records(data)
    b = _batch(data)
    it = b.iter_records()
    assert not isinstance(it, list)
    got = [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in it]
    assert got == want
    assert [tuple(r) for r in b.records()] == got
    pieces = list(b.record_pieces())
    assert len(pieces) > 1 and sum(k for _, k, _ in pieces) == len(want)


def _block(records: list[bytes]) -> bytes:
    return b"".join(records)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=st.lists(st.integers(0, 300), min_size=1, max_size=40),
       cuts=st.lists(st.integers(1, 400), min_size=0, max_size=12),
       delta=st.sampled_from([0, -1, 1]))
def test_any_cut_of_the_block_gives_the_same_records_or_kafkas_error(sizes, cuts, delta):
    """However the block is cut into pieces, the records are those that were encoded,
    and a recordsCount off by one fails as Kafka's RecordIterator does."""
    recs = [raw_record(i, i, b"k%d" % i, b"v" * n) for i, n in enumerate(sizes)]
    block = _block(recs)
    pieces, pos = [], 0
    for c in cuts:
        if pos + c < len(block):
            pieces.append(block[pos:pos + c])
            pos += c
    pieces.append(block[pos:])
    count = len(recs) + delta
    try:
        got = [r for data, k, at in _record_pieces(iter(pieces), count)
               for r in _batch(raw_batch(0, [data], count=k)).records()]
    except InvalidRecordError as e:
        msg = str(e)
        assert delta != 0
        assert ("records still remaining" in msg) if delta < 0 else ("premature EOF" in msg)
        return
    assert delta == 0
    assert [(r.offset, r.timestamp, r.key, r.value) for r in got] == \
        [(i, 1000 + i, b"k%d" % i, b"v" * n) for i, n in enumerate(sizes)]


def _big_batch(records: list[bytes], count: int) -> bytes:
    """An uncompressed batch of more than a piece."""
    return raw_batch(0, records, count=count, last_delta=count - 1)


def test_streamed_count_checks_as_kafka():
    """DefaultRecordBatch: after recordsCount records nothing may remain; the block may
    not end before them. Both hold for a block streamed in pieces."""
    recs = [raw_record(i, 0, None, b"x" * 200) for i in range(12_000)]  # ~2.5 MiB
    assert len(_block(recs)) > 2 * DECODE_CHUNK_BYTES
    assert sum(1 for _ in _batch(_big_batch(recs, 12_000)).iter_records()) == 12_000
    with pytest.raises(InvalidRecordError, match="records still remaining"):
        for _ in _batch(_big_batch(recs, 11_999)).iter_records():
            pass
    with pytest.raises(InvalidRecordError, match="premature EOF"):
        for _ in _batch(_big_batch(recs, 12_001)).iter_records():
            pass
    cut = _block(recs)[:-50]  # the last record cut short
    data = raw_batch(0, [cut], count=12_000)
    with pytest.raises(InvalidRecordError, match="Invalid record size|premature EOF"):
        for _ in _batch(data).iter_records():
            pass


def test_negative_record_size_in_a_streamed_block():
    recs = [raw_record(i, 0, None, b"x" * 200) for i in range(8000)]
    recs[6000] = b"\x03" + recs[6000][1:]  # zigzag -2
    with pytest.raises(InvalidRecordError, match="Invalid record size -2"):
        for _ in _batch(_big_batch(recs, 8000)).iter_records():
            pass


# -- the decompression bomb ----------------------------------------------------------------

@pytest.fixture(scope="module")
def small_bomb() -> RecordBatch:
    return _batch(zstd_bomb_batch(BOMB_SMALL_RECORDS))


def test_bomb_first_records_cost_a_piece(small_bomb):
    """issue 16: reading two records of a batch of 2 M (or 38 M) seven-byte records
    decodes one piece, not the batch."""
    tracemalloc.start()
    it = iter(small_bomb.iter_records())
    first = [next(it), next(it)]
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [(r.offset, r.key, r.value, r.headers) for r in first] == [(0, None, None, ())] * 2
    assert peak < 48 << 20, peak


@pytest.mark.slow
def test_bomb_streams_in_bounded_memory(small_bomb):
    """Every one of the 2 M records, counted as Kafka's iterator counts them, with memory
    for a piece at a time (a list of them would take ~300 MB)."""
    tracemalloc.start()
    n = sum(k for _, k, _ in small_bomb.record_pieces())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert n == BOMB_SMALL_RECORDS
    assert peak < 16 << 20, peak


def test_bomb_over_the_bound(small_bomb):
    with pytest.raises(DecompressedSizeError, match="exceeds the bound of 1048576 bytes"):
        for _ in small_bomb.iter_records(max_bytes=1 << 20):
            pass


def test_bomb_with_a_lying_count(tmp_path):
    """One more or one fewer record declared than the block holds: corrupt (the broker's
    iterator throws), found once the stream reaches the end."""
    for count, msg in ((BOMB_SMALL_RECORDS - 1, "records still remaining"),
                       (BOMB_SMALL_RECORDS + 1, "premature EOF")):
        b = _batch(zstd_bomb_batch(BOMB_SMALL_RECORDS, count=count))
        with pytest.raises(InvalidRecordError, match=msg):
            for _ in b.record_pieces():
                pass


# -- legacy wrappers -----------------------------------------------------------------------

def _legacy_wrapper(n: int, wrapper_offset: int | None) -> bytes:
    from kafka.record.legacy_records import LegacyRecordBatchBuilder
    bld = LegacyRecordBatchBuilder(magic=1, compression_type=1, batch_size=1 << 30)
    for i in range(n):
        bld.append(i, timestamp=1000 + i, key=None, value=_plaintext(100 + i % 50))
    buf = bytearray(bld.build())
    if wrapper_offset is not None:
        buf[0:8] = wrapper_offset.to_bytes(8, "big")
    return bytes(buf)


def test_big_legacy_wrapper_streams_absolute_offsets():
    """A v1 gzip wrapper whose message set spans several pieces: offsets resolved against
    the wrapper (its offset is the last inner one's), as kafka-python reads them."""
    from kafka.record.memory_records import MemoryRecords
    data = _legacy_wrapper(20_000, 120_000 + 19_999)
    want = [(r.offset, r.timestamp, r.value) for r in MemoryRecords(data).next_batch()]
    (b,) = list(FileRecords(data).batches())
    assert isinstance(b, LegacyRecordBatch)
    got = [(r.offset, r.timestamp, r.value) for r in b.iter_records()]
    assert got == want and got[0][0] == 120_000
    assert b.base_offset == 120_000


def test_legacy_wrapper_offset_zero_means_zero():
    """DeepRecordsIterator: a wrapper offset of 0 (some librdkafka versions, and
    kafka-python's builder) gives absolute offsets from 0, as kafka-python decodes it."""
    from kafka.record.memory_records import MemoryRecords
    data = _legacy_wrapper(3, None)
    assert data[:8] == bytes(8)
    want = [r.offset for r in MemoryRecords(data).next_batch()]
    (b,) = list(FileRecords(data).batches())
    assert [r.offset for r in b.iter_records()] == want == [0, 1, 2]


def test_legacy_wrapper_below_its_last_inner_offset_is_invalid():
    (b,) = list(FileRecords(_legacy_wrapper(3, 1)).batches())
    with pytest.raises(InvalidRecordError, match="wrapper offset '1' is less than the last "
                                                 "inner message offset '2'"):
        b.records()


def _legacy_gzip_wrapper_of(inner: bytes, offset: int) -> bytes:
    """A v1 wrapper (gzip) around the raw message set ``inner``."""
    value = gzip.compress(inner)
    body = struct.pack(">bbq", 1, 1, 1000) + struct.pack(">i", -1) + \
        struct.pack(">i", len(value)) + value
    msg = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(msg)) + msg


def test_legacy_inner_size_below_overhead_is_corrupt():
    """DataLogInputStream: an inner size below the v0 overhead is corrupt (and never
    walks backwards)."""
    inner = struct.pack(">qi", 0, -40) + bytes(60)
    (b,) = list(FileRecords(_legacy_gzip_wrapper_of(inner, 5)).batches())
    with pytest.raises(CorruptRecordError, match="minimum record overhead"):
        b.records()


# -- offsets past int64 --------------------------------------------------------------------

def _with_base(data: bytes, base: int) -> bytes:
    return struct.pack(">q", base) + data[8:]  # the base offset is outside the CRC


@pytest.mark.parametrize("last", [INT64_MAX, INT64_MAX + 1, INT64_MAX + 5])
def test_batch_offsets_past_int64_end_the_batches(last):
    """A batch whose next offset (last + 1) does not fit int64 is corrupt: iteration
    stops there and says why, as for a size below the minimum overhead; the bytes from
    it are invalid."""
    good = raw_batch(0, [raw_record(0, 0, b"k", b"v")])
    bad = _with_base(raw_batch(0, [raw_record(i, 0, b"k", b"v") for i in range(6)]),
                     last - 5)
    fr = FileRecords(good + bad + good)
    assert [b.position for b in fr.batches()] == [0]
    assert fr.valid_end == len(good) and fr.invalid_bytes == len(bad) + len(good)
    assert "overflow int64" in fr.stop_error.message
    assert str(last) not in fr.stop_error.message or last <= INT64_MAX
    scan = scan_batches(good + bad + good)
    assert (scan.batches, scan.valid_end) == (1, len(good))


def test_batch_ending_just_below_int64_is_whole():
    data = _with_base(raw_batch(0, [raw_record(i, 0, b"k", b"v") for i in range(3)]),
                      INT64_MAX - 3)
    (b,) = list(FileRecords(data).batches())
    assert b.last_offset == INT64_MAX - 1
    assert [r.offset for r in b.records()] == [INT64_MAX - 3, INT64_MAX - 2, INT64_MAX - 1]


def test_record_offset_past_int64_is_invalid():
    """A record whose offsetDelta reaches past int64 (beyond lastOffsetDelta)."""
    data = _with_base(raw_batch(0, [raw_record(40, 0, b"k", b"v")], last_delta=0),
                      INT64_MAX - 10)
    (b,) = list(FileRecords(data).batches())
    with pytest.raises(InvalidRecordError, match="overflows int64"):
        b.records()


def test_crc_still_covers_what_it_covers():
    """Editing the base offset keeps the CRC valid (it starts at attributes)."""
    data = _with_base(raw_batch(0, [raw_record(0, 0, b"k", b"v")]), 123)
    (b,) = list(FileRecords(data).batches())
    assert b.is_valid and crc32c.crc32c(data[21:]) == b.crc


# -- snappy blocks larger than a piece (found by the fuzz harness) ------------------------------

def _raw_snappy_bomb(n: int) -> RecordBatch:
    """``n`` seven-byte records in one raw snappy block (no xerial framing, as librdkafka
    writes it), snappy compressed by cramjam."""
    import cramjam

    block = bytes(cramjam.snappy.compress_raw(bytes.fromhex("0c000000010100") * n))
    return _batch(raw_batch(0, [block], attrs=2, count=n, last_delta=n - 1))


@pytest.mark.parametrize("framing", ["raw", "one xerial block"])
def test_a_snappy_block_larger_than_a_piece_is_decoded_a_piece_at_a_time(framing):
    """A raw snappy block (or one xerial block) has no streaming form: it is decompressed
    whole, as snappy-java's SnappyInputStream does. It was also handed on whole, so the
    records of a 64 MiB block were all decoded at once: read --max-records 2 and audit
    died with MemoryError (1.2 GB) under the fuzz harness's 1.5 GiB address space. Now it
    comes in pieces of DECODE_CHUNK_BYTES, so two records cost a piece."""
    import cramjam

    n = 3 * DECODE_CHUNK_BYTES // 7 + 5
    plain = bytes.fromhex("0c000000010100") * n
    block = bytes(cramjam.snappy.compress_raw(plain))
    if framing != "raw":
        block = b"\x82SNAPPY\x00" + struct.pack(">iii", 1, 1, len(block)) + block
    pieces = list(compression.decompress_chunks(2, block))
    assert b"".join(pieces) == plain
    assert all(0 < len(p) <= DECODE_CHUNK_BYTES for p in pieces) and len(pieces) == 4


def test_two_records_of_a_raw_snappy_bomb_cost_a_piece():
    b = _raw_snappy_bomb(700_000)
    tracemalloc.start()
    it = iter(b.iter_records())
    first = [next(it), next(it)]
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [r.offset for r in first] == [0, 0]
    assert peak < 40 << 20, peak  # ~100 MB before (the 700,000 records of the block)


@pytest.mark.parametrize("claimed", [100 << 20, (1 << 32) - 1])
def test_a_snappy_length_preamble_beyond_what_the_block_can_hold(claimed):
    """Snappy expands at most 64/3 times (a 3-byte copy of 64 bytes): a raw block whose
    preamble claims more than that is corrupt before anything is allocated for it."""
    pre = bytearray()
    v = claimed
    while True:
        pre.append((v & 0x7F) | (0x80 if v >> 7 else 0))
        v >>= 7
        if not v:
            break
    with pytest.raises(CorruptRecordError, match="more than snappy can expand it to"):
        list(compression.decompress_chunks(2, bytes(pre) + b"\x00" * 100,
                                           max_bytes=1 << 33))
