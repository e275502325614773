"""Compression per codec, against independent encoders: gzip (stdlib), snappy (python-snappy,
kafka-python's xerial framing), lz4 (lz4.frame), zstd (zstandard)."""

from __future__ import annotations

import gzip
import struct

import lz4.frame
import pytest
import snappy
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.codec import snappy_encode

from kafkalog_cli.constants import CODEC_GZIP, CODEC_LZ4, CODEC_SNAPPY, CODEC_ZSTD
from kafkalog_cli.errors import CorruptRecordError, UnsupportedCompressionError
from kafkalog_cli.format import compression
from kafkalog_cli.format.builder import build_batch
from kafkalog_cli.format.records import FileRecords

DATA = b"".join(b"record %d of a kafka batch; " % i for i in range(3000))  # ~90 KB


@pytest.mark.parametrize("codec", [CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD])
def test_round_trip(codec):
    packed = compression.compress(codec, DATA)
    assert len(packed) < len(DATA)
    assert compression.decompress(codec, packed) == DATA


def test_gzip_independent_and_multi_member():
    assert compression.decompress(CODEC_GZIP, gzip.compress(DATA)) == DATA
    two = gzip.compress(b"abc") + gzip.compress(b"def")
    assert compression.decompress(CODEC_GZIP, two) == b"abcdef"
    assert gzip.decompress(compression.compress(CODEC_GZIP, DATA)) == DATA


def test_snappy_xerial_framing_from_kafka_python():
    framed = snappy_encode(DATA, xerial_compatible=True, xerial_blocksize=32 * 1024)
    assert framed[:8] == b"\x82SNAPPY\x00"
    assert compression.decompress(CODEC_SNAPPY, framed) == DATA


def test_snappy_our_framing_is_xerial():
    ours = compression.compress(CODEC_SNAPPY, DATA)
    assert ours[:16] == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    # walk the blocks with python-snappy
    pos, out = 16, b""
    while pos < len(ours):
        (n,) = struct.unpack_from(">i", ours, pos)
        out += snappy.uncompress(ours[pos + 4:pos + 4 + n])
        pos += 4 + n
    assert out == DATA


def test_plain_snappy_block():
    assert compression.decompress(CODEC_SNAPPY, snappy.compress(DATA)) == DATA


def test_lz4_frame_independent():
    frame = lz4.frame.compress(DATA)
    assert compression.decompress(CODEC_LZ4, frame, magic=2) == DATA
    assert lz4.frame.decompress(compression.compress(CODEC_LZ4, DATA)) == DATA


def test_lz4_default_level_is_the_fast_compressor():
    """Lz4BlockOutputStream uses lz4-java's fastCompressor at the default level 9 and the HC
    compressor at any other level: level 9 must not be LZ4HC's level 9."""
    kw = dict(block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
              content_checksum=False, block_checksum=False, store_size=False)
    assert compression.compress(CODEC_LZ4, DATA) == lz4.frame.compress(
        DATA, compression_level=0, **kw)
    assert compression.compress(CODEC_LZ4, DATA, level=9) == compression.compress(
        CODEC_LZ4, DATA)
    hc = compression.compress(CODEC_LZ4, DATA, level=12)
    assert hc == lz4.frame.compress(DATA, compression_level=12, **kw)
    assert hc != compression.compress(CODEC_LZ4, DATA)
    assert compression.decompress(CODEC_LZ4, hc) == DATA


def test_lz4_batches_of_real_java_producers_recompress_byte_identical(corpus_root):
    """Every lz4 batch in the real-broker corpus (written by Java clients at the default
    level) comes out byte for byte the same when its records are compressed again."""
    from kafkalog_testkit import corpus_log_files

    seen = 0
    for path in corpus_log_files():
        for b in FileRecords(path.read_bytes(), file=path).batches():
            if b.magic != 2 or b.attributes & 0x7 != CODEC_LZ4:
                continue
            block = bytes(b.view[b.position + 61:b.position + b.size])
            assert compression.compress(CODEC_LZ4, compression.decompress(CODEC_LZ4, block)) \
                == block, f"{path} batch at byte {b.position}"
            seen += 1
    if not seen:
        pytest.skip("no lz4 batches in the corpus")


@pytest.mark.parametrize("level", [None, 1, 9])
def test_gzip_bytes_equal_javas_gzip_output_stream(tmp_path, level):
    """The JDK (the broker's runtime) compresses the same blocks, as Kafka's
    GzipCompression wraps GZIPOutputStream (tests/format/java/KafkaGzip.java); the member
    bytes must be identical, header included."""
    import random
    import shutil
    import subprocess
    from pathlib import Path

    java = shutil.which("java")
    if java is None or shutil.which("javac") is None:  # a single-file launch compiles
        pytest.skip("no JDK (java and javac) on PATH")
    rng = random.Random(7)
    blocks = [DATA, bytes(rng.getrandbits(8) for _ in range(20000)) + DATA[:5000], b"x",
              build_batch([(1_700_000_000_000 + i, b"k%d" % i, b"value %d" % i, ())
                           for i in range(300)])[61:]]
    args = []
    for i, block in enumerate(blocks):
        (tmp_path / f"in{i}").write_bytes(block)
        args += [str(tmp_path / f"in{i}"), str(tmp_path / f"out{i}")]
    src = Path(__file__).parent / "java" / "KafkaGzip.java"
    subprocess.run([java, str(src), str(-1 if level is None else level), *args], check=True,
                   capture_output=True, timeout=120)
    for i, block in enumerate(blocks):
        assert compression.compress(CODEC_GZIP, block, level=level) == \
            (tmp_path / f"out{i}").read_bytes(), f"block {i}"


def test_zstd_frame_is_streamed_like_zstd_jni():
    """Kafka's ZstdCompression writes through ZstdOutputStreamNoFinalizer, which never
    pledges the input size: the frame header descriptor has no content-size field, no
    checksum, no single-segment flag (0x00), and a window descriptor follows (level 3's
    default window, 2 MiB: exponent 11 -> 0x58)."""
    frame = compression.compress(CODEC_ZSTD, DATA)
    assert frame[:4] == bytes.fromhex("28b52ffd")
    assert frame[4] == 0x00
    assert frame[5] == 0x58
    params = zstandard.get_frame_parameters(frame)
    assert params.content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert not params.has_checksum
    assert zstandard.ZstdDecompressor().decompressobj().decompress(frame) == DATA
    assert compression.decompress(CODEC_ZSTD, frame) == DATA


def _broken_header_checksum_frame(data: bytes) -> bytes:
    """An LZ4 frame whose header checksum byte is wrong, as Kafka 0.8-0.9 (magic 0) wrote
    them (it hashed the magic number too)."""
    frame = bytearray(lz4.frame.compress(data, store_size=False, block_linked=False))
    flg = frame[4]
    hc_pos = 6 + (8 if flg & 0x08 else 0)
    frame[hc_pos] ^= 0x5A
    return bytes(frame)


def test_lz4_magic0_broken_header_checksum():
    frame = _broken_header_checksum_frame(DATA)
    with pytest.raises(RuntimeError):
        lz4.frame.decompress(frame)  # a checking reader rejects it
    assert compression.decompress(CODEC_LZ4, frame, magic=0) == DATA
    with pytest.raises(CorruptRecordError):
        compression.decompress(CODEC_LZ4, frame, magic=1)


def test_zstd_with_and_without_content_size():
    with_size = zstandard.ZstdCompressor(write_content_size=True).compress(DATA)
    no_size = zstandard.ZstdCompressor(write_content_size=False).compress(DATA)
    assert compression.decompress(CODEC_ZSTD, with_size) == DATA
    assert compression.decompress(CODEC_ZSTD, no_size) == DATA


@pytest.mark.parametrize("codec", [CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD])
def test_decompression_bound(codec):
    packed = compression.compress(codec, DATA)
    with pytest.raises(CorruptRecordError, match="exceeds the bound of 1000 bytes"):
        compression.decompress(codec, packed, max_bytes=1000)
    assert compression.decompress(codec, packed, max_bytes=len(DATA)) == DATA


def test_zstd_bound_without_content_size():
    no_size = zstandard.ZstdCompressor(write_content_size=False).compress(DATA)
    with pytest.raises(CorruptRecordError):
        compression.decompress(CODEC_ZSTD, no_size, max_bytes=1000)


def test_lz4_magic0_bound():
    with pytest.raises(CorruptRecordError):
        compression.decompress(CODEC_LZ4, _broken_header_checksum_frame(DATA), magic=0,
                               max_bytes=1000)


@pytest.mark.parametrize("codec", [CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD])
def test_crafted_batch_exceeding_max_bytes(codec):
    # a small batch that inflates to ~1 MB of records
    batch = build_batch([(0, None, bytes(1 << 20), ())], compression_type=codec)
    assert len(batch) < 60_000
    (b,) = FileRecords(batch).batches()
    with pytest.raises(CorruptRecordError):
        b.records(max_bytes=64 * 1024)
    assert len(b.records()[0].value) == 1 << 20


@pytest.mark.parametrize("codec", [CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD])
def test_garbage_raises_corrupt_record(codec):
    with pytest.raises(CorruptRecordError):
        compression.decompress(codec, b"\x82SNAPPY\x00" + b"\x00\x00\x00\x01" * 2 + b"\xff" * 40
                               if codec == CODEC_SNAPPY else b"\x00garbage that is not " * 3)


def test_unknown_codec():
    with pytest.raises(UnsupportedCompressionError):
        compression.decompress(5, b"x")
    with pytest.raises(UnsupportedCompressionError):
        compression.compress(7, b"x")


# -- compressing a piece at a time (build_batch streams its records into the codec) ---------

@settings(max_examples=60, deadline=None)
@given(st.sampled_from([(1, None), (1, 1), (2, None), (3, None), (3, 10), (4, None), (4, 9)]),
       st.integers(0, 300_000), st.lists(st.integers(0, 300_000), max_size=6))
def test_compressor_equals_compress_however_the_input_is_cut(codec_level, size, cuts):
    """compression.Compressor fed pieces gives compress()'s bytes: gzip's member with
    Java's header, xerial snappy's 32 KiB blocks, LZ4's independent 64 KiB blocks, zstd's
    frame - whatever the cuts (an empty input too)."""
    codec, level = codec_level
    data = b"".join(b"rec-%06d|" % i + bytes([i % 251]) * (i % 29) for i in range(size // 20))
    data = data[:size]
    points = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    c = compression.Compressor(codec, level=level)
    got = b"".join(c.compress(data[a:b]) for a, b in zip(points, points[1:], strict=False))
    got += c.flush()
    assert got == compression.compress(codec, data, level=level)
    assert compression.decompress(codec, got) == data


@pytest.mark.parametrize("size", [10, 100_000, 300_000])
def test_zstd_frame_ends_as_the_java_producer_ends_it(size):
    """kafka-clients' ZstdCompression closes its stream through a BufferedOutputStream,
    whose close flushes first: the data's last block is not marked last, and the frame
    ends with an empty raw last block (3 bytes: 01 00 00). Read from the frame's block
    headers (RFC 8878 3.1.1.2: bit 0 last, bits 1-2 type, bits 3-23 size)."""
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    frame = compression.compress(4, data)
    assert frame[:4] == b"\x28\xb5\x2f\xfd" and frame[4] == 0  # no content size, window
    pos, blocks = 6, []
    while True:
        header = int.from_bytes(frame[pos:pos + 3], "little")
        last, kind, bsize = header & 1, (header >> 1) & 3, header >> 3
        blocks.append((last, kind, bsize))
        pos += 3 + (1 if kind == 1 else bsize)
        if last:
            break
    assert pos == len(frame)
    assert blocks[-1] == (1, 0, 0) and all(not b[0] for b in blocks[:-1]) and len(blocks) > 1
