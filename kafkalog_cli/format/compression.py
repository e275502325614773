"""Compression codecs of Kafka's record formats, through well-kept bindings.

Follows ``org.apache.kafka.common.compress``. Ids: none 0, gzip 1, snappy 2, lz4 3, zstd 4.
Bindings were chosen by measured speed per 12 KB batch on this project's machine
(``benchmarks/codec_bench.py``, figures in ``benchmarks/README.md``):
gzip ``zlib`` with gzip wbits (36 us, vs 52-62 us for GzipFile); lz4 ``lz4.frame``
(5.3 us, vs 10 us for cramjam; its output bound is grown in steps, see below); zstd a reused ``zstandard`` decompressor (16 us, vs 29 us
for cramjam); snappy ``cramjam`` (9 us).

Formats as Kafka's Java client writes them:

* gzip: a GZIPOutputStream member (several members are read, as GZIPInputStream does);
* snappy: xerial framing (``\\x82SNAPPY\\x00``, int32 version, int32 compatible version,
  then ``{int32 length, raw snappy block}*``), or a plain raw snappy block;
* lz4: the LZ4 frame format with independent blocks; for magic 0, Kafka wrote a broken
  header checksum and skips checking it on read, so magic-0 frames are walked block by
  block without the check;
* zstd: a standard frame, often without a content size.

Every decompression is bounded by ``max_bytes`` so a crafted batch cannot exhaust memory;
exceeding it raises :class:`~kafkalog_cli.errors.CorruptRecordError`.
:func:`decompress` returns the whole block; :func:`decompress_chunks` streams it in pieces
of at most ``chunk_bytes`` (as Kafka's ``DefaultRecordBatch.streamingIterator`` reads a
compressed batch through an ``InputStream``), so a block of any size costs a chunk of
memory at a time.
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Iterator

from ..constants import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NAMES,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    DECODE_CHUNK_BYTES,
    DEFAULT_MAX_DECOMPRESSED_BYTES,
)
from ..errors import CorruptRecordError, DecompressedSizeError, UnsupportedCompressionError

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = 16
_BE_INT32 = struct.Struct(">i")
_LE_UINT32 = struct.Struct("<I")
LZ4_FRAME_MAGIC = 0x184D2204
#: the 10-byte gzip member header java.util.zip.GZIPOutputStream writes (JDK 16+):
#: magic, CM deflate, no flags, MTIME 0, XFL 0, OS 255
_GZIP_JAVA_HEADER = bytes.fromhex("1f8b08000000000000ff")
#: compression.lz4.level's default (CompressionType.LZ4.defaultLevel())
LZ4_DEFAULT_LEVEL = 9
#: Upper bound on LZ4's expansion (output/input); its format caps it near 255.
_LZ4_MAX_RATIO = 260

#: zstd contexts are reused (their setup costs more than a small frame) but are not
#: thread-safe (python-zstandard: an instance must not be used by two threads at once,
#: and serve validates batches on worker threads): one set per thread
_zstd = threading.local()


def _zstd_decompressor():
    d = getattr(_zstd, "decompressor", None)
    if d is None:
        import zstandard

        d = _zstd.decompressor = zstandard.ZstdDecompressor()
    return d


def _zstd_compressor(level: int | None):
    """The ``zstandard.ZstdCompressor`` of ``level`` (None: Kafka's default, 3), made once
    per level per thread. It writes no content size: Kafka streams zstd like
    ZstdOutputStreamNoFinalizer, never pledging the size."""
    lvl = 3 if level is None else level
    compressors = getattr(_zstd, "compressors", None)
    if compressors is None:
        compressors = _zstd.compressors = {}
    c = compressors.get(lvl)
    if c is None:
        import zstandard

        c = compressors[lvl] = zstandard.ZstdCompressor(level=lvl, write_content_size=False)
    return c


def _lz4_frame_options(level: int | None) -> dict:
    """Lz4BlockOutputStream's frame as python-lz4's arguments: 64 KiB independent blocks,
    no checksums. The default level (9) uses lz4-java's fastCompressor
    (LZ4_compress_default, python-lz4's level 0); any other level the HC compressor."""
    import lz4.frame

    lvl = LZ4_DEFAULT_LEVEL if level is None else level
    return {"block_size": lz4.frame.BLOCKSIZE_MAX64KB, "block_linked": False,
            "content_checksum": False, "block_checksum": False,
            "compression_level": 0 if lvl == LZ4_DEFAULT_LEVEL else lvl}


def _too_large(max_bytes: int) -> DecompressedSizeError:
    return DecompressedSizeError(
        f"decompressed batch exceeds the bound of {max_bytes} bytes (--max-decompressed-bytes)",
        limit=max_bytes)


def decompress(codec: int, data, *, magic: int = 2,
               max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> bytes:
    """Decompress one batch's records block.

    Args:
        codec: compression id from the batch attributes (1-4).
        data: the compressed bytes (bytes, bytearray or memoryview).
        magic: the batch's magic; only changes lz4 handling (magic 0's broken checksum).
        max_bytes: upper bound on the decompressed size, in bytes.

    Returns:
        the decompressed bytes.

    Raises:
        UnsupportedCompressionError: ``codec`` is not 1-4.
        CorruptRecordError: the data does not decompress.
        DecompressedSizeError: it exceeds ``max_bytes``.
    """
    try:
        if codec == CODEC_GZIP:
            return _gunzip(data, max_bytes)
        if codec == CODEC_LZ4:
            return _lz4_decompress(data, magic, max_bytes)
        if codec == CODEC_ZSTD:
            return _zstd_decompress(data, max_bytes)
        if codec == CODEC_SNAPPY:
            return _snappy_decompress(data, max_bytes)
    except CorruptRecordError:
        raise
    except Exception as e:  # the bindings raise their own error types
        raise CorruptRecordError(f"{CODEC_NAMES[codec]} data does not decompress: {e}") from e
    raise UnsupportedCompressionError(f"unknown compression codec id {codec}")


def _gunzip(data, max_bytes: int) -> bytes:
    out = []
    total = 0
    while True:
        d = zlib.decompressobj(47)  # 32 + 15: gzip or zlib header, auto-detected
        chunk = d.decompress(data, max_bytes - total + 1)
        total += len(chunk)
        if total > max_bytes:
            raise _too_large(max_bytes)
        out.append(chunk)
        if not d.eof:
            raise CorruptRecordError("gzip data is truncated")
        data = d.unused_data
        if not data:
            break
    return out[0] if len(out) == 1 else b"".join(out)


def _xerial_blocks(mv: memoryview) -> Iterator[memoryview]:
    """The compressed blocks of xerial-framed snappy (SnappyOutputStream: a 16-byte
    header, then blocks each prefixed by its int32 length), one at a time.

    Raises:
        CorruptRecordError: a block length is truncated, negative or overruns the data
            (raised when the walk reaches it).
    """
    pos = _XERIAL_HEADER
    end = len(mv)
    while pos < end:
        if pos + 4 > end:
            raise CorruptRecordError("xerial snappy block length is truncated")
        (n,) = _BE_INT32.unpack_from(mv, pos)
        pos += 4
        if n < 0 or pos + n > end:
            raise CorruptRecordError(f"xerial snappy block of {n} bytes overruns the data")
        yield mv[pos:pos + n]
        pos += n


def _snappy_decompress(data, max_bytes: int) -> bytes:

    mv = memoryview(data)
    if bytes(mv[:8]) != XERIAL_MAGIC:
        return _snappy_raw(mv, max_bytes)
    out = []
    total = 0
    for compressed in _xerial_blocks(mv):
        block = _snappy_raw(compressed, max_bytes - total)
        total += len(block)
        out.append(block)
    return b"".join(out)


#: Snappy's largest expansion: a 3-byte copy (2-byte offset) of 64 bytes; no element of
#: the raw format yields more per byte (a literal 1, a 1-byte-offset copy 5.5, a 4-byte-
#: offset copy 12.8)
SNAPPY_MAX_RATIO = 64 / 3


def _snappy_raw(mv, max_bytes: int) -> bytes:
    """:func:`_snappy_raw_buffer` as bytes."""
    return bytes(_snappy_raw_buffer(mv, max_bytes))


def _snappy_raw_buffer(mv, max_bytes: int):
    """One raw snappy block, whole (the format has no streaming form: its copies may reach
    back anywhere before them, and snappy-java's SnappyInputStream reads an unframed
    block whole too). Its length preamble is checked first: above ``max_bytes``, or more
    than the block's bytes can expand to (:data:`SNAPPY_MAX_RATIO`), nothing is
    allocated."""
    import cramjam

    # The raw format starts with the uncompressed length as an unsigned varint.
    length = shift = 0
    for i in range(min(5, len(mv))):
        b = mv[i]
        length |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    if length > max_bytes:
        raise _too_large(max_bytes)
    if length > SNAPPY_MAX_RATIO * len(mv):
        raise CorruptRecordError(f"snappy block of {len(mv)} bytes declares {length} bytes "
                                 "decompressed, more than snappy can expand it to")
    return cramjam.snappy.decompress_raw(mv)


def _lz4_decompress(data, magic: int, max_bytes: int) -> bytes:
    if magic == 0:
        return _lz4_frame_unchecked(memoryview(data), max_bytes)
    import lz4.frame

    if _LZ4_MAX_RATIO * len(data) + 65536 <= max_bytes:
        # LZ4 expands at most ~255x (a run of zeros: 243x), so the bound cannot be
        # exceeded: the one-shot call is twice as fast as a decompressor object.
        return lz4.frame.decompress(data)
    # LZ4FrameDecompressor allocates max_length bytes up front (a 256 MiB bound made every
    # batch cost 25-55 us instead of 4): ask for a likely size first, then grow in steps.
    d = lz4.frame.LZ4FrameDecompressor()
    out = d.decompress(data, max_length=min(max_bytes + 1, 4 * len(data) + 65536))
    if d.eof:
        if len(out) > max_bytes:
            raise _too_large(max_bytes)
        return out
    parts = [out]
    total = len(out)
    while not d.eof:
        if total > max_bytes:
            raise _too_large(max_bytes)
        chunk = d.decompress(b"", max_length=min(max_bytes + 1 - total, max(total, 1 << 20)))
        if not chunk:
            raise CorruptRecordError("lz4 frame is truncated")
        parts.append(chunk)
        total += len(chunk)
    if total > max_bytes:
        raise _too_large(max_bytes)
    return b"".join(parts)


def _lz4_frame_unchecked(mv: memoryview, max_bytes: int) -> bytes:
    """Walk an LZ4 frame block by block without checking its header checksum
    (KafkaLZ4BlockInputStream with ignoreFlagDescriptorChecksum, used for magic 0)."""
    out = []
    total = 0
    for chunk in _lz4_frame_unchecked_chunks(mv):
        total += len(chunk)
        if total > max_bytes:
            raise _too_large(max_bytes)
        out.append(chunk)
    return b"".join(out)


def _zstd_decompress(data, max_bytes: int) -> bytes:
    import zstandard

    decompressor = _zstd_decompressor()
    size = zstandard.frame_content_size(data)
    if 0 <= size <= max_bytes:
        return decompressor.decompress(data)
    if size > max_bytes:
        raise _too_large(max_bytes)
    # Java (zstd-jni) frames carry no content size: stream, bounded.
    out = []
    total = 0
    for chunk in decompressor.read_to_iter(data, read_size=len(data) or 1,
                                                 write_size=256 * 1024):
        total += len(chunk)
        if total > max_bytes:
            raise _too_large(max_bytes)
        out.append(chunk)
    return out[0] if len(out) == 1 else b"".join(out)


def decompress_chunks(codec: int, data, *, magic: int = 2,
                      max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
                      chunk_bytes: int = DECODE_CHUNK_BYTES) -> Iterator[bytes]:
    """Decompress one batch's records block in pieces, lazily.

    Yields non-empty ``bytes`` of at most ``chunk_bytes`` each (but for an LZ4 block of
    a magic-0 frame, up to 4 MiB); their concatenation is what :func:`decompress`
    returns. A block that fits in one chunk comes as one piece. A raw, unframed snappy
    block, which has no streaming form, is decompressed whole (at most
    :data:`SNAPPY_MAX_RATIO` times its size, and ``max_bytes``) and yielded in pieces.

    Raises (when the piece concerned is reached):
        UnsupportedCompressionError: ``codec`` is not 1-4.
        CorruptRecordError: the data does not decompress.
        DecompressedSizeError: its total exceeds ``max_bytes``.
    """
    if codec == CODEC_GZIP:
        gen = _gunzip_chunks(data, chunk_bytes)
    elif codec == CODEC_LZ4:
        gen = (_lz4_frame_unchecked_chunks(memoryview(data)) if magic == 0 else
               _lz4_chunks(data, chunk_bytes))
    elif codec == CODEC_ZSTD:
        gen = _zstd_chunks(data, chunk_bytes)
    elif codec == CODEC_SNAPPY:
        gen = _snappy_chunks(data, max_bytes, chunk_bytes)
    else:
        raise UnsupportedCompressionError(f"unknown compression codec id {codec}")
    total = 0
    try:
        for chunk in gen:
            total += len(chunk)
            if total > max_bytes:
                raise _too_large(max_bytes)
            if chunk:
                yield chunk
    except CorruptRecordError:
        raise
    except Exception as e:  # the bindings raise their own error types
        raise CorruptRecordError(f"{CODEC_NAMES[codec]} data does not decompress: {e}") from e
    finally:
        gen.close()


def _gunzip_chunks(data, chunk_bytes: int) -> Iterator[bytes]:
    """GZIPInputStream: concatenated members are read one after the other."""
    while True:
        d = zlib.decompressobj(47)
        out = d.decompress(data, chunk_bytes)
        while True:
            yield out
            if d.eof:
                break
            tail = d.unconsumed_tail
            out = d.decompress(tail, chunk_bytes)
            if not out and not d.eof and len(d.unconsumed_tail) == len(tail):
                raise CorruptRecordError("gzip data is truncated")
        data = d.unused_data
        if not data:
            return


def _lz4_chunks(data, chunk_bytes: int) -> Iterator[bytes]:
    import lz4.frame

    if _LZ4_MAX_RATIO * len(data) + 65536 <= chunk_bytes:
        yield lz4.frame.decompress(data)  # cannot exceed a chunk (see _lz4_decompress)
        return
    d = lz4.frame.LZ4FrameDecompressor()
    out = d.decompress(data, max_length=chunk_bytes)
    while True:
        yield out
        if d.eof:
            return
        out = d.decompress(b"", max_length=chunk_bytes)
        if not out and not d.eof:
            raise CorruptRecordError("lz4 frame is truncated")


def _lz4_frame_unchecked_chunks(mv: memoryview) -> Iterator[bytes]:
    """:func:`_lz4_frame_unchecked` a block (at most 4 MiB, the frame's largest) at a
    time."""
    import lz4.block

    if len(mv) < 7 or _LE_UINT32.unpack_from(mv, 0)[0] != LZ4_FRAME_MAGIC:
        raise CorruptRecordError("not an lz4 frame")
    flg, bd = mv[4], mv[5]
    pos = 6 + (8 if flg & 0x08 else 0) + 1  # content size (optional), header checksum
    block_max = 1 << (8 + 2 * ((bd >> 4) & 0x7))
    block_checksum = 4 if flg & 0x10 else 0
    while True:
        (n,) = _LE_UINT32.unpack_from(mv, pos)
        pos += 4
        if n == 0:
            return
        raw = n & 0x80000000
        n &= 0x7FFFFFFF
        block = mv[pos:pos + n]
        yield bytes(block) if raw else lz4.block.decompress(block, uncompressed_size=block_max)
        pos += n + block_checksum


def _zstd_chunks(data, chunk_bytes: int) -> Iterator[bytes]:
    import zstandard

    size = zstandard.frame_content_size(data)
    if 0 <= size <= chunk_bytes:
        yield _zstd_decompressor().decompress(data)
        return
    if size < 0:
        # Java (zstd-jni) frames carry no content size: one call of the thread's context
        # bounded by a chunk (a producer's batch decompresses to far less), without
        # setting up a context per batch
        try:
            out = _zstd_decompressor().decompress(data, max_output_size=chunk_bytes)
        except zstandard.ZstdError:
            out = None  # larger than a chunk (or corrupt: the stream below says why)
        if out is not None:
            yield out
            return
    # a larger one is streamed with its own context: this generator may be suspended
    # while another stream (or thread) decompresses, and a context serves one operation
    # at a time
    yield from zstandard.ZstdDecompressor().read_to_iter(data, read_size=len(data) or 1,
                                                        write_size=chunk_bytes)


def _slices(block, chunk_bytes: int) -> Iterator[bytes]:
    """``block`` (bytes or a buffer) as bytes of at most ``chunk_bytes``."""
    mv = memoryview(block)
    if len(mv) <= chunk_bytes:
        yield bytes(mv)
        return
    for i in range(0, len(mv), chunk_bytes):
        yield bytes(mv[i:i + chunk_bytes])


def _snappy_chunks(data, max_bytes: int, chunk_bytes: int) -> Iterator[bytes]:
    """xerial blocks (32 KiB each as SnappyOutputStream writes them) grouped into pieces
    of up to ``chunk_bytes``. A raw block, or a xerial block larger than a piece, is
    decompressed whole (at most :data:`SNAPPY_MAX_RATIO` times its size, and
    ``max_bytes``) and handed on in pieces of ``chunk_bytes``, so what is decoded from
    it is still a piece at a time."""
    mv = memoryview(data)
    if bytes(mv[:8]) != XERIAL_MAGIC:
        yield from _slices(_snappy_raw_buffer(mv, max_bytes), chunk_bytes)
        return
    out: list[bytes] = []
    held = 0
    total = 0
    for compressed in _xerial_blocks(mv):
        try:
            block = _snappy_raw_buffer(compressed, max_bytes - total)
        except DecompressedSizeError:
            raise _too_large(max_bytes) from None
        total += len(block)
        if held and held + len(block) > chunk_bytes:
            yield out[0] if len(out) == 1 else b"".join(out)
            out = []
            held = 0
        if len(block) > chunk_bytes:
            yield from _slices(block, chunk_bytes)
            continue
        block = bytes(block)
        out.append(block)
        held += len(block)
    if out:
        yield out[0] if len(out) == 1 else b"".join(out)


class Compressor:
    """:func:`compress` fed a piece at a time (as Kafka's producer writes records into a
    compressing ``OutputStream``): ``compress(piece)`` returns what is ready,
    ``flush()`` the rest. The concatenation equals :func:`compress` of the concatenated
    pieces, byte for byte, however the input is cut, so a block never has to be held
    uncompressed.

    Raises:
        UnsupportedCompressionError: ``codec`` is not 1-4.
    """

    def __init__(self, codec: int, *, level: int | None = None):
        self.codec = codec
        self._held = b""  # snappy: input short of a 32 KiB block; gzip: the header
        if codec == CODEC_GZIP:
            self._obj = zlib.compressobj(6 if level is None else level, zlib.DEFLATED, 31)
            self._header_done = False
        elif codec == CODEC_SNAPPY:
            self._started = False
        elif codec == CODEC_LZ4:
            import lz4.frame

            self._obj = lz4.frame.LZ4FrameCompressor(**_lz4_frame_options(level))
            self._held = self._obj.begin()  # the frame header, handed out first
        elif codec == CODEC_ZSTD:
            self._obj = _zstd_compressor(level).compressobj()
        else:
            raise UnsupportedCompressionError(f"unknown compression codec id {codec}")

    def compress(self, data) -> bytes:
        codec = self.codec
        if codec == CODEC_GZIP:
            return self._gzip(self._obj.compress(data))
        if codec == CODEC_SNAPPY:
            return self._snappy(data, final=False)
        if codec == CODEC_LZ4:
            out = self._obj.compress(data)
            if self._held:
                out, self._held = self._held + out, b""
            return out
        return self._obj.compress(data)

    def flush(self) -> bytes:
        codec = self.codec
        if codec == CODEC_GZIP:
            return self._gzip(self._obj.flush())
        if codec == CODEC_SNAPPY:
            return self._snappy(b"", final=True)
        if codec == CODEC_LZ4:
            out, self._held = self._held + self._obj.flush(), b""
            return out
        return _zstd_java_end(self._obj)

    def _gzip(self, out: bytes) -> bytes:
        # zlib's member header says XFL by level and OS 3 (Unix); Java's GZIPOutputStream
        # writes XFL 0 and OS 255 (see compress): patched in its first 10 bytes
        if self._header_done:
            return out
        self._held += out
        if len(self._held) < 10:
            return b""
        self._header_done = True
        out, self._held = _GZIP_JAVA_HEADER + self._held[10:], b""
        return out

    def _snappy(self, data, final: bool) -> bytes:
        import cramjam

        parts = []
        if not self._started:
            self._started = True
            parts += [XERIAL_MAGIC, _BE_INT32.pack(1), _BE_INT32.pack(1)]
        held = self._held + bytes(data) if self._held else bytes(data)
        block = 32 * 1024
        whole = len(held) if final else len(held) - len(held) % block
        mv = memoryview(held)
        for i in range(0, whole, block):
            b = bytes(cramjam.snappy.compress_raw(mv[i:i + block]))
            parts += [_BE_INT32.pack(len(b)), b]
        self._held = held[whole:]
        return b"".join(parts)


def _zstd_java_end(o) -> bytes:
    """The end of a zstd frame as Kafka's Java producer ends it: streamed like
    ZstdOutputStreamNoFinalizer (the size is never pledged, so the frame has no content
    size and the level's window, 21 bits at level 3), closed through the
    BufferedOutputStream around it, whose close flushes first (ZSTD_e_flush: the data's
    last block is not marked last) and then ends the frame (ZSTD_e_end: an empty last
    block, 3 bytes). Checked against kafka-clients 4.4.0's ZstdCompression on the bench
    (tests/kafka_bench/test_disk_differential.py)."""
    import zstandard

    return o.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK) + o.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH)


def compress(codec: int, data, *, level: int | None = None, magic: int = 2) -> bytes:
    """Compress a records block as Kafka's Java producer does for ``codec``.

    gzip: a single gzip member (level 6 unless given, Kafka's default -1 equals 6) with
    the header Java's GZIPOutputStream writes;
    snappy: xerial framing with 32 KiB blocks; lz4: a frame with independent 64 KiB
    blocks and no checksums (as Lz4BlockOutputStream), made with LZ4's fast compressor at
    Kafka's default level 9 (as lz4-java's ``fastCompressor``, so the bytes equal a Java
    producer's) and with the HC compressor at any other level (1-17); zstd: a frame at
    level 3, streamed and closed as the Java producer's ZstdOutputStreamNoFinalizer
    writes it (:func:`_zstd_java_end`: no content size, the level's default window, the
    data's blocks then an empty last block).

    Raises:
        UnsupportedCompressionError: ``codec`` is not 0-4.
    """
    if codec == CODEC_NONE:
        return bytes(data)
    if codec == CODEC_GZIP:
        c = zlib.compressobj(6 if level is None else level, zlib.DEFLATED, 31)
        out = c.compress(data) + c.flush()
        # zlib's member header says XFL by level and OS 3 (Unix); Java's GZIPOutputStream
        # writes XFL 0 and OS 255 (unknown). The deflate stream and trailer are the same.
        return _GZIP_JAVA_HEADER + out[10:]
    if codec == CODEC_SNAPPY:
        import cramjam

        mv = memoryview(data)
        parts = [XERIAL_MAGIC, _BE_INT32.pack(1), _BE_INT32.pack(1)]
        for i in range(0, len(mv), 32 * 1024):
            block = bytes(cramjam.snappy.compress_raw(mv[i:i + 32 * 1024]))
            parts.append(_BE_INT32.pack(len(block)))
            parts.append(block)
        return b"".join(parts)
    if codec == CODEC_LZ4:
        import lz4.frame

        return lz4.frame.compress(data, store_size=False, **_lz4_frame_options(level))
    if codec == CODEC_ZSTD:
        o = _zstd_compressor(level).compressobj()
        return o.compress(data) + _zstd_java_end(o)
    raise UnsupportedCompressionError(f"unknown compression codec id {codec}")
