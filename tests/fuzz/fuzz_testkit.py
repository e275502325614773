"""The fuzz harness's shared parts: run modes, seeds, mutations, decompression bombs.

Run modes (``KAFKALOG_FUZZ_EXAMPLES``):

* unset: the short run of CI. Every property runs a fixed small number of examples with
  ``derandomize=True`` (the same examples every run), so a failure reproduces.
* ``KAFKALOG_FUZZ_EXAMPLES=N``: the long run, N examples per property, random seeds
  (``pytest --hypothesis-seed=S`` fixes them).

Everything a property feeds to kafkalog is made here with code independent of kafkalog's
own: batches are walked with ``struct``, CRCs computed with ``crc32c``/``zlib``, records
blocks compressed and decompressed with the codec libraries directly, so a mutation is
what it says it is whatever kafkalog does with it.

Seeds are the fixture partitions (``fixtures/logs``) and the small partitions of the real
corpus (``../shared/corpus/real``, read in place, never copied into the project).
"""

from __future__ import annotations

import functools
import os
import re
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import crc32c as _crc32c
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from kafkalog_testkit import CORPUS, FIXTURES, zigzag

# -- run modes -----------------------------------------------------------------------------

#: examples per property in the long run (0: the short run of CI)
LONG_EXAMPLES = int(os.environ.get("KAFKALOG_FUZZ_EXAMPLES", "0") or 0)
LONG = LONG_EXAMPLES > 0


def fuzz_settings(short: int, **kw):
    """Hypothesis settings of a fuzz property: ``short`` examples, derandomized, in the
    short run; :data:`LONG_EXAMPLES` random ones in the long run. No deadline (a case
    runs in a worker process whose own time limit is the bound), no example database (a
    failure is reported with its reproducer; a regression gets an ``@example``)."""
    base = dict(deadline=None, database=None, print_blob=True,
                suppress_health_check=list(HealthCheck))
    if LONG:
        base.update(max_examples=LONG_EXAMPLES, derandomize=False)
    else:
        base.update(max_examples=short, derandomize=True)
    base.update(kw)
    return settings(**base)


# -- seeds -----------------------------------------------------------------------------------

#: files of a log directory (not a partition's) that the readers read
LOG_DIR_FILES = ("meta.properties", "recovery-point-offset-checkpoint",
                 "log-start-offset-checkpoint", "replication-offset-checkpoint",
                 "cleaner-offset-checkpoint", ".kafka_cleanshutdown")
#: a partition directory is a seed when all its files hold at most this many bytes
MAX_SEED_BYTES = 128 * 1024


@dataclass(frozen=True)
class Seed:
    """A partition directory to mutate: ``name`` (``<topic>-<n>``), ``files`` its files
    (name -> bytes), ``log_dir_files`` its log directory's own files, ``origin`` where it
    was read."""

    name: str
    files: tuple[tuple[str, bytes], ...]
    log_dir_files: tuple[tuple[str, bytes], ...]
    origin: str

    def layout(self) -> dict[str, bytes]:
        """The seed as a log directory: relative path -> bytes."""
        out = {k: v for k, v in self.log_dir_files}
        out.update({f"{self.name}/{k}": v for k, v in self.files})
        return out

    def file_names(self, suffixes: tuple[str, ...] | None = None) -> list[str]:
        return [k for k, _ in self.files if suffixes is None or k.endswith(suffixes)]


def _read_seed(pdir: Path, origin: str) -> Seed | None:
    files = []
    total = 0
    for p in sorted(pdir.iterdir()):
        if not p.is_file():
            continue
        size = p.stat().st_size
        total += size
        if total > MAX_SEED_BYTES:
            return None
        files.append((p.name, p.read_bytes()))
    if not any(name.endswith((".log", ".checkpoint")) and not name.endswith(
            "leader-epoch-checkpoint") for name, _ in files):
        return None
    ld = [(n, (pdir.parent / n).read_bytes()) for n in LOG_DIR_FILES
          if (pdir.parent / n).is_file()]
    return Seed(pdir.name, tuple(files), tuple(ld), origin)


@functools.cache
def fixture_seeds() -> tuple[Seed, ...]:
    out = []
    for p in sorted(FIXTURES.iterdir()):
        if p.is_dir():
            s = _read_seed(p, f"fixtures/logs/{p.name}")
            if s is not None:
                out.append(s)
    return tuple(out)


@functools.cache
def corpus_seeds() -> tuple[Seed, ...]:
    """Partitions of the real corpus of at most :data:`MAX_SEED_BYTES` (empty when the
    corpus is absent)."""
    if not CORPUS.is_dir():
        return ()
    out = []
    for dirpath, _dirs, names in sorted(os.walk(CORPUS)):
        if not any(n.endswith((".log", ".checkpoint")) for n in names):
            continue
        p = Path(dirpath)
        if "-" not in p.name or not p.name.rsplit("-", 1)[1].isdigit():
            continue
        s = _read_seed(p, str(p.relative_to(CORPUS)))
        if s is not None:
            out.append(s)
    return tuple(out)


def all_seeds() -> tuple[Seed, ...]:
    return fixture_seeds() + corpus_seeds()


def seeds_with(suffix: str) -> tuple[Seed, ...]:
    """Seeds holding a non-empty file whose name ends with ``suffix``."""
    return tuple(s for s in all_seeds() if any(n.endswith(suffix) and d for n, d in s.files))


# -- byte-level mutations ----------------------------------------------------------------------

#: values that break parsers: 0, -1, the edges of int8..int64, as big-endian bytes
INTERESTING = {
    1: [0x00, 0x01, 0x7F, 0x80, 0xFF],
    2: [0, 1, 0x7FFF, 0x8000, 0xFFFF, 0x00FF, 0x0100],
    4: [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x0000FFFF, 0x00010000, 61, 60, 12],
    8: [0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1, (1 << 63) - 2, 1 << 32, 1 << 31],
}


def apply_mutation(data: bytes, op: tuple) -> bytes:
    """One mutation ``op`` of :func:`mutations` applied to ``data`` (positions are taken
    modulo the length, so an op applies to any input)."""
    kind = op[0]
    n = len(data)
    if kind == "insert":
        pos = op[1] % (n + 1)
        return data[:pos] + op[2] + data[pos:]
    if not n:
        return data
    pos = op[1] % n
    if kind == "flip":
        b = bytearray(data)
        b[pos] ^= 1 << op[2]
        return bytes(b)
    if kind == "byte":
        b = bytearray(data)
        b[pos] = op[2]
        return bytes(b)
    if kind == "int":
        width, value = op[2], op[3]
        if pos + width > n:
            pos = max(0, n - width)
        raw = (value & ((1 << 8 * width) - 1)).to_bytes(width, "big")
        return data[:pos] + raw[:n - pos] + data[pos + width:]
    if kind == "truncate":
        return data[:pos]
    if kind == "delete":
        return data[:pos] + data[pos + op[2]:]
    if kind == "duplicate":
        return data[:pos + op[2]] + data[pos:pos + op[2]] + data[pos + op[2]:]
    if kind == "zero_tail":
        return data[:pos] + bytes(n - pos)
    raise ValueError(kind)


def _mutation():
    pos = st.integers(0, 1 << 24)
    return st.one_of(
        st.tuples(st.just("flip"), pos, st.integers(0, 7)),
        st.tuples(st.just("byte"), pos, st.integers(0, 255)),
        st.integers(1, 8).flatmap(lambda w: st.tuples(
            st.just("int"), pos, st.sampled_from([1, 2, 4, 8]),
            st.one_of(st.sampled_from(sorted({v for vs in INTERESTING.values() for v in vs})),
                      st.integers(0, (1 << 64) - 1)))),
        st.tuples(st.just("truncate"), pos),
        st.tuples(st.just("insert"), pos, st.binary(min_size=1, max_size=64)),
        st.tuples(st.just("delete"), pos, st.integers(1, 64)),
        st.tuples(st.just("duplicate"), pos, st.integers(1, 256)),
        st.tuples(st.just("zero_tail"), pos),
    )


def mutations(max_ops: int = 4):
    """A list of 1..``max_ops`` byte-level mutations (bit flips, bytes, interesting
    integers, truncations, inserted, deleted and duplicated bytes, a zeroed tail)."""
    return st.lists(_mutation(), min_size=1, max_size=max_ops)


def mutate(data: bytes, ops) -> bytes:
    for op in ops:
        data = apply_mutation(data, op)
    return data


# -- batches, walked independently of kafkalog -------------------------------------------------

_V2 = struct.Struct(">qiibIhiqqqhii")  # DefaultRecordBatch's 61-byte header
V2_FIELDS = {  # name -> (offset, width) in the batch, after DefaultRecordBatch
    "baseOffset": (0, 8), "length": (8, 4), "partitionLeaderEpoch": (12, 4),
    "magic": (16, 1), "attributes": (21, 2), "lastOffsetDelta": (23, 4),
    "baseTimestamp": (27, 8), "maxTimestamp": (35, 8), "producerId": (43, 8),
    "producerEpoch": (51, 2), "baseSequence": (53, 4), "recordsCount": (57, 4),
}
LEGACY_FIELDS = {  # LegacyRecord after the log entry's offset and size
    "offset": (0, 8), "size": (8, 4), "magic": (16, 1), "attributes": (17, 1),
    "timestamp": (18, 8),
}


@dataclass
class Entry:
    """One batch (magic 2) or legacy message of a log: its bytes' span and magic."""

    position: int
    size: int  # whole bytes, 12-byte log overhead included
    magic: int


def walk(data: bytes) -> list[Entry]:
    """The whole batches from byte 0 (stops at the first that does not frame)."""
    out = []
    pos = 0
    while pos + 17 <= len(data):
        (size,) = struct.unpack_from(">i", data, pos + 8)
        if size < 14 or pos + 12 + size > len(data):
            break
        out.append(Entry(pos, size + 12, data[pos + 16]))
        pos += 12 + size
    return out


def fix_crc(batch: bytearray) -> None:
    """Recompute the CRC of one batch (v2: CRC-32C of attributes..end at byte 17; v0/v1:
    CRC-32 of magic..end at byte 12)."""
    if len(batch) < 17:
        return
    if batch[16] >= 2:
        if len(batch) >= 21:
            struct.pack_into(">I", batch, 17, _crc32c.crc32c(bytes(batch[21:])))
    else:
        struct.pack_into(">I", batch, 12, zlib.crc32(bytes(batch[16:])))


def fix_length(batch: bytearray) -> None:
    struct.pack_into(">i", batch, 8, len(batch) - 12)


# -- codecs, through the libraries directly ----------------------------------------------------

XERIAL = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)


def compress(codec: int, data: bytes) -> bytes:
    """``data`` compressed as Kafka's Java producer frames it (gzip member, xerial snappy
    with 32 KiB blocks, LZ4 frame, zstd frame)."""
    if codec == 0:
        return data
    if codec == 1:
        c = zlib.compressobj(6, zlib.DEFLATED, 31)
        return c.compress(data) + c.flush()
    if codec == 2:
        import cramjam
        parts = [XERIAL]
        for i in range(0, len(data), 32 * 1024):
            b = bytes(cramjam.snappy.compress_raw(data[i:i + 32 * 1024]))
            parts += [struct.pack(">i", len(b)), b]
        return b"".join(parts)
    if codec == 3:
        import lz4.frame
        return lz4.frame.compress(data, block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                                  block_linked=False, content_checksum=False)
    if codec == 4:
        import zstandard
        o = zstandard.ZstdCompressor(level=3, write_content_size=False).compressobj()
        return o.compress(data) + o.flush()
    raise ValueError(codec)


def decompress(codec: int, data: bytes) -> bytes | None:
    """The inverse of :func:`compress` (xerial or raw snappy), None when it fails."""
    try:
        if codec == 0:
            return data
        if codec == 1:
            return zlib.decompress(data, 47)
        if codec == 2:
            import cramjam
            if data[:8] != XERIAL[:8]:
                return bytes(cramjam.snappy.decompress_raw(data))
            out, pos = [], 16
            while pos + 4 <= len(data):
                (n,) = struct.unpack_from(">i", data, pos)
                out.append(bytes(cramjam.snappy.decompress_raw(data[pos + 4:pos + 4 + n])))
                pos += 4 + n
            return b"".join(out)
        if codec == 3:
            import lz4.frame
            return lz4.frame.decompress(data)
        if codec == 4:
            import zstandard
            return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    except Exception:
        return None
    return None


# -- records, walked independently of kafkalog --------------------------------------------------

def read_zigzag(data: bytes, pos: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("varint")
        b = data[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return (v >> 1) ^ -(v & 1), pos
        shift += 7


#: DefaultRecord's fields, in order: (name, kind) with kind "i8", "varint" or "bytes"
RECORD_FIELDS = ("attributes", "timestampDelta", "offsetDelta", "keyLength", "valueLength",
                 "headersCount", "headerKeyLength", "headerValueLength", "length")


def parse_records(block: bytes) -> list[dict] | None:
    """DefaultRecord's fields of every record of a v2 records block, or None when the
    block does not parse."""
    out = []
    pos = 0
    try:
        while pos < len(block):
            length, p = read_zigzag(block, pos)
            end = p + length
            if length < 0 or end > len(block):
                return None
            r = {"attributes": block[p]}
            p += 1
            r["timestampDelta"], p = read_zigzag(block, p)
            r["offsetDelta"], p = read_zigzag(block, p)
            n, p = read_zigzag(block, p)
            r["key"] = None if n < 0 else block[p:p + n]
            p += max(n, 0)
            n, p = read_zigzag(block, p)
            r["value"] = None if n < 0 else block[p:p + n]
            p += max(n, 0)
            n, p = read_zigzag(block, p)
            hs = []
            for _ in range(n):
                kn, p = read_zigzag(block, p)
                k = block[p:p + kn]
                p += kn
                vn, p = read_zigzag(block, p)
                v = None if vn < 0 else block[p:p + vn]
                p += max(vn, 0)
                hs.append((k, v))
            r["headers"] = hs
            if p != end:
                return None
            out.append(r)
            pos = end
    except (ValueError, IndexError):
        return None
    return out


def encode_record(r: dict, overrides: dict | None = None) -> bytes:
    """One record from :func:`parse_records`' fields; ``overrides`` replace a field's
    encoded value (``keyLength`` etc. as the varint written, whatever the bytes that
    follow; ``length`` as the record's length varint)."""
    o = overrides or {}

    def blob(name, b):
        if f"{name}Length" in o:
            return zigzag(o[f"{name}Length"]) + (b or b"")
        return zigzag(-1) if b is None else zigzag(len(b)) + b

    body = bytes([o.get("attributes", r["attributes"]) & 0xFF])
    body += zigzag(o.get("timestampDelta", r["timestampDelta"]))
    body += zigzag(o.get("offsetDelta", r["offsetDelta"]))
    body += blob("key", r["key"]) + blob("value", r["value"])
    hs = r["headers"]
    body += zigzag(o.get("headersCount", len(hs)))
    for i, (k, v) in enumerate(hs):
        hk = {"keyLength": o["headerKeyLength"]} if i == 0 and "headerKeyLength" in o else {}
        hv = {"valueLength": o["headerValueLength"]} if i == 0 and "headerValueLength" in o \
            else {}
        body += (zigzag(hk["keyLength"]) + k) if hk else zigzag(len(k)) + k
        body += (zigzag(hv["valueLength"]) + (v or b"")) if hv else (
            zigzag(-1) if v is None else zigzag(len(v)) + v)
    return zigzag(o.get("length", len(body))) + body


#: varint values that break record parsers
INTERESTING_VARINTS = [0, 1, -1, -2, 63, 64, -65, 127, 128, 255, 1 << 20, (1 << 31) - 1,
                       -(1 << 31), 1 << 31, (1 << 63) - 1, -(1 << 63), 1 << 63, 1 << 70]


# -- structure-aware mutations of a .log -----------------------------------------------------------

def _header_value(field: str, width: int, current: int, choice: int, raw: int) -> int:
    cands = [current + 1, current - 1, 0, -1, *INTERESTING[width]]
    if field == "baseOffset":
        cands += [(1 << 63) - 1, (1 << 63) - 1 - 5, (1 << 63) - 2 ** 31, -(1 << 63)]
    if field in ("baseTimestamp", "maxTimestamp", "timestamp"):
        cands += [-1, -2, (1 << 63) - 1, -(1 << 63), 253402300800000, 253402300799999,
                  -62135596800001]
    if field == "attributes":
        cands += list(range(0, 128))
    if choice < len(cands):
        return cands[choice]
    return raw


def structured(ops_max: int = 3):
    """Mutations that keep each batch's framing and CRC consistent, so they reach the
    record decoders: ``("header", batch, field, choice, raw)``, ``("record", batch, record,
    field, value)``, ``("block", batch, byte-op)`` (a byte-level mutation of the
    decompressed records block, recompressed), ``("count", batch, delta)``,
    ``("codec", batch, codec, recompress)``, ``("drop", batch, record)`` and
    ``("legacy", batch, byte-op)`` (an inner message set of a wrapper)."""
    b = st.integers(0, 1 << 16)
    header = st.tuples(st.just("header"), b, st.sampled_from(sorted(V2_FIELDS)),
                       st.integers(0, 140), st.integers(-(1 << 63), (1 << 63) - 1))
    record = st.tuples(st.just("record"), b, st.integers(0, 1 << 16),
                       st.sampled_from(RECORD_FIELDS),
                       st.one_of(st.sampled_from(INTERESTING_VARINTS),
                                 st.integers(-(1 << 64), 1 << 64)))
    block = st.tuples(st.just("block"), b, _mutation())
    count = st.tuples(st.just("count"), b, st.sampled_from(
        [1, -1, 2, -2, (1 << 31) - 1, -(1 << 31), 1 << 20]))
    codec = st.tuples(st.just("codec"), b, st.integers(0, 7), st.booleans())
    drop = st.tuples(st.just("drop"), b, st.integers(0, 1 << 16))
    legacy = st.tuples(st.just("legacy"), b, _mutation(), st.booleans())
    return st.lists(st.one_of(header, record, block, count, codec, drop, legacy),
                    min_size=1, max_size=ops_max)


def _replace_batch(data: bytes, e: Entry, new: bytes) -> bytes:
    return data[:e.position] + new + data[e.position + e.size:]


def apply_structured(data: bytes, op: tuple) -> bytes:
    """One op of :func:`structured` on a ``.log``'s bytes; an op that does not apply
    (no such batch, a legacy message where a v2 batch is needed) leaves ``data`` as is."""
    entries = walk(data)
    if not entries:
        return data
    kind = op[0]
    e = entries[op[1] % len(entries)]
    batch = bytearray(data[e.position:e.position + e.size])
    if kind == "legacy":
        return _mutate_legacy(data, e, batch, op[2], op[3])
    if e.magic != 2 or len(batch) < 61:
        return data
    if kind == "header":
        field, choice, raw = op[2], op[3], op[4]
        off, width = V2_FIELDS[field]
        cur = int.from_bytes(batch[off:off + width], "big", signed=True)
        v = _header_value(field, width, cur, choice, raw)
        batch[off:off + width] = (v & ((1 << 8 * width) - 1)).to_bytes(width, "big")
        if off >= 21:
            fix_crc(batch)
        return _replace_batch(data, e, bytes(batch))
    if kind == "count":
        (n,) = struct.unpack_from(">i", batch, 57)
        v = max(-(1 << 31), min((1 << 31) - 1, n + op[2])) if abs(op[2]) < 3 else op[2]
        struct.pack_into(">i", batch, 57, v)
        fix_crc(batch)
        return _replace_batch(data, e, bytes(batch))
    (attrs,) = struct.unpack_from(">h", batch, 21)
    codec = attrs & 7
    block = decompress(codec, bytes(batch[61:])) if codec < 5 else None
    if block is None:
        return data
    if kind == "codec":
        new_codec, recompress = op[2], op[3]
        attrs = (attrs & ~7) | new_codec
        struct.pack_into(">h", batch, 21, attrs)
        body = compress(new_codec, block) if recompress and new_codec < 5 else bytes(batch[61:])
        return _replace_batch(data, e, _rebuilt(batch, body))
    if kind == "block":
        new = apply_mutation(block, op[2])
        return _replace_batch(data, e, _rebuilt(batch, compress(codec, new)))
    recs = parse_records(block)
    if not recs:
        return data
    i = op[2] % len(recs)
    if kind == "drop":
        del recs[i]
        new = b"".join(encode_record(r) for r in recs)
        return _replace_batch(data, e, _rebuilt(batch, compress(codec, new)))
    field, value = op[3], op[4]
    if field in ("headerKeyLength", "headerValueLength") and not recs[i]["headers"]:
        field = "headersCount"
    parts = [encode_record(r, {field: value} if j == i else None)
             if field != "attributes" else encode_record(r, {field: value & 0xFF} if j == i
                                                         else None)
             for j, r in enumerate(recs)]
    return _replace_batch(data, e, _rebuilt(batch, compress(codec, b"".join(parts))))


def _rebuilt(batch: bytearray, body: bytes) -> bytes:
    out = bytearray(batch[:61]) + body
    fix_length(out)
    fix_crc(out)
    return bytes(out)


def _mutate_legacy(data: bytes, e: Entry, batch: bytearray, op: tuple, fix_inner: bool
                   ) -> bytes:
    """A byte-level mutation inside a legacy wrapper's decompressed inner message set
    (inner CRCs fixed when ``fix_inner``), recompressed, the wrapper's CRC fixed; for an
    uncompressed message, of its key and value bytes, CRC fixed."""
    if e.magic > 1 or len(batch) < 26:
        return data
    attrs = batch[17]
    codec = attrs & 7
    vpos = 22 if e.magic == 0 else 30  # the key's length field
    try:
        (kn,) = struct.unpack_from(">i", batch, vpos - 4)
        vpos += max(kn, 0)
        (vn,) = struct.unpack_from(">i", batch, vpos)
    except struct.error:
        return data
    value = bytes(batch[vpos + 4:vpos + 4 + max(vn, 0)])
    if codec == 0 or codec > 4:
        new = apply_mutation(bytes(batch[18:]), op)
        out = bytearray(batch[:18]) + new
    else:
        inner = decompress(codec, value)
        if inner is None:
            return data
        inner = apply_mutation(inner, op)
        if fix_inner:
            fixed = bytearray(inner)
            for ie in walk(inner):
                m = bytearray(fixed[ie.position:ie.position + ie.size])
                fix_crc(m)
                fixed[ie.position:ie.position + ie.size] = m
            inner = bytes(fixed)
        comp = compress(codec, inner)
        out = bytearray(batch[:vpos]) + struct.pack(">i", len(comp)) + comp
    fix_length(out)
    fix_crc(out)
    return _replace_batch(data, e, bytes(out))


def mutate_structured(data: bytes, ops) -> bytes:
    for op in ops:
        data = apply_structured(data, op)
    return data


# -- decompression bombs ---------------------------------------------------------------------------

#: one seven-byte DefaultRecord (length 6, attributes 0, deltas 0, null key and value, no
#: headers)
SEVEN = bytes.fromhex("0c000000010100")


def stream_compress(codec: int, parts) -> bytes:
    """The concatenation of the ``parts`` (an iterable of bytes) compressed as Kafka's
    producers frame it (gzip member, xerial snappy in 32 KiB blocks as
    SnappyOutputStream writes them, LZ4 frame of independent 64 KiB blocks, zstd frame
    without a content size), a part at a time: the whole is never in memory. Equal
    snappy blocks are compressed once."""
    if codec == 1:
        c = zlib.compressobj(9, zlib.DEFLATED, 31)
        return b"".join([c.compress(p) for p in parts] + [c.flush()])
    if codec == 2:
        import cramjam
        cache: dict[bytes, bytes] = {}
        out = [XERIAL]
        held = b""
        block = 32 * 1024

        def emit(chunk: bytes) -> None:
            b = cache.get(chunk)
            if b is None:
                b = bytes(cramjam.snappy.compress_raw(chunk))
                if len(cache) < 64:
                    cache[chunk] = b
            out.extend((struct.pack(">i", len(b)), b))

        for p in parts:
            held += p
            while len(held) >= block:
                emit(held[:block])
                held = held[block:]
        if held:
            emit(held)
        return b"".join(out)
    if codec == 3:
        import lz4.frame
        c = lz4.frame.LZ4FrameCompressor(block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                                         block_linked=False)
        return b"".join([c.begin()] + [c.compress(p) for p in parts] + [c.flush()])
    if codec == 4:
        import zstandard
        o = zstandard.ZstdCompressor(level=19, write_content_size=False).compressobj()
        return b"".join([o.compress(p) for p in parts] + [o.flush()])
    raise ValueError(codec)


def _repeat(piece: bytes, total: int):
    """``total`` bytes of ``piece`` repeated, in parts of ``len(piece)``."""
    full, rest = divmod(total, len(piece))
    for _ in range(full):
        yield piece
    if rest:
        yield piece[:rest]


def v2_batch(block: bytes, *, codec: int, count: int, last_delta: int | None = None,
             base_offset: int = 0, base_ts: int = 1_700_000_000_000) -> bytes:
    """A v2 batch around a (compressed) records block, valid CRC-32C."""
    last_delta = count - 1 if last_delta is None else last_delta
    after = struct.pack(">hiqqqhii", codec, last_delta, base_ts, base_ts, -1, -1, -1,
                        count) + block
    body = struct.pack(">ibI", 0, 2, _crc32c.crc32c(after)) + after
    return struct.pack(">qi", base_offset, len(body)) + body


def bomb_batch(codec: int, n_records: int) -> bytes:
    """A batch of ``n_records`` seven-byte records (all offsetDelta 0, as the issue's
    bomb), compressed with ``codec``: ``7 * n_records`` bytes decompressed."""
    piece = SEVEN * (32 * 1024)
    return v2_batch(stream_compress(codec, _repeat(piece, 7 * n_records)), codec=codec,
                    count=n_records)


def big_record_batch(codec: int, value_bytes: int) -> bytes:
    """One record whose value is ``value_bytes`` zero bytes: a block that is one record
    longer than any decode piece."""
    head = b"\x00" + zigzag(0) + zigzag(0) + zigzag(-1) + zigzag(value_bytes)
    prefix = zigzag(len(head) + value_bytes + 1) + head

    def parts():
        yield prefix
        yield from _repeat(bytes(1 << 20), value_bytes)
        yield b"\x00"  # no headers

    return v2_batch(stream_compress(codec, parts()), codec=codec, count=1)


def legacy_wrapper(codec: int, n_inner: int, *, magic: int = 1) -> bytes:
    """A v0/v1 compressed wrapper of ``n_inner`` inner messages with null keys and empty
    values (offsets 0..n-1: relative for v1, the wrapper's offset the last; absolute for
    v0), the inner message set streamed into the codec."""
    def inner(i: int) -> bytes:
        body = bytes([magic, 0]) + (struct.pack(">q", 1000) if magic else b"") \
            + struct.pack(">ii", -1, 0)
        msg = struct.pack(">I", zlib.crc32(body)) + body
        return struct.pack(">qi", i, len(msg)) + msg

    def parts():
        for start in range(0, n_inner, 4096):
            yield b"".join(inner(i) for i in range(start, min(n_inner, start + 4096)))

    block = stream_compress(codec, parts())
    body = bytes([magic, codec]) + (struct.pack(">q", 1000) if magic else b"") \
        + struct.pack(">i", -1) + struct.pack(">i", len(block)) + block
    msg = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", n_inner - 1, len(msg)) + msg


# -- text files: token-level mutations -------------------------------------------------------

#: what a token of a checkpoint, properties or JSON file becomes: numbers Java and Python
#: parse differently, digits that are not ASCII, the edges of int32/int64, long runs
INTERESTING_TOKENS = [
    "", " ", "-1", "0", "+1", "-0", "00", "2147483647", "2147483648", "-2147483649",
    "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1e3", "0x10",
    "1.5", "NaN", "null", "true", "\u00b2", "\uff10", "\u0663", "\u2460", "\u00a0", "\t",
    "1_000", "0" * 5000 + "7", "9" * 5000, "\x00", "\ufeff", "\u202e", "\\u0000", "{}", "[]",
    "\"", "\n", "\r", "=", ":", "#", "!", "\\", "a" * 300,
]

_TOKEN = re.compile(r"[0-9]+|[A-Za-z_.]+|\S")


def text_tokens():
    """``(token index, replacement)``: the replacement one of :data:`INTERESTING_TOKENS` or
    any text."""
    return st.tuples(st.integers(0, 1 << 16),
                     st.one_of(st.sampled_from(INTERESTING_TOKENS),
                               st.text(max_size=12)))


def mutate_text(data: bytes, op: tuple) -> bytes:
    """Replace the ``op[0]``-th token (modulo their number) of ``data`` (as UTF-8, bytes
    that are not kept as they are) with ``op[1]``."""
    text = data.decode("utf-8", "surrogateescape")
    spans = [m.span() for m in _TOKEN.finditer(text)]
    if not spans:
        return (text + op[1]).encode("utf-8", "surrogateescape")
    a, b = spans[op[0] % len(spans)]
    return (text[:a] + op[1] + text[b:]).encode("utf-8", "surrogateescape")


# -- small files inflated or replaced by something that is not a file -------------------------

#: what a small file becomes (``fuzz_worker.make_special`` makes it): its own bytes
#: followed by zeros up to 64 MiB, 1 GiB of zeros (sparse files: no block written), a
#: FIFO, a symbolic link to a character device, a directory, a Unix socket
SMALL_FILE_VARIANTS = ("inflated-64MiB", "zeros-1GiB", "fifo", "link-dev-zero",
                       "link-dev-urandom", "directory", "socket")


def small_file_variant(data: bytes, variant: str) -> tuple:
    """The layout value of ``variant`` for a file that held ``data``."""
    return {"inflated-64MiB": ("sparse", 64 << 20, data),
            "zeros-1GiB": ("sparse", 1 << 30, b""),
            "fifo": ("fifo",), "link-dev-zero": ("link", "/dev/zero"),
            "link-dev-urandom": ("link", "/dev/urandom"), "directory": ("dir",),
            "socket": ("socket",)}[variant]


# -- names: hostile file and directory names -------------------------------------------------

NAME_EDITS = ["digit", "suffix", "append", "prepend", "length"]
#: what a digit of a name may become (Java's Character.digit takes some, Python's int
#: others, a regex's \\d more)
ODD_DIGITS = ["\uff10", "\u0660", "\u00b2", "\u2460", "\u0967", "-", "+", " ", "a"]
ODD_SUFFIXES = [".log", ".LOG", ".index", ".timeindex", ".txnindex", ".snapshot", ".deleted",
                ".cleaned", ".swap", ".tmp", ".log.deleted", ".log.swap", ".log.cleaned",
                ".index.swap", ".snapshot.tmp", ".checkpoint", "", ".", ".log.", ".log\n",
                ".log ", ".kafkalog-undo.tmp"]


def name_edits():
    return st.tuples(st.sampled_from(NAME_EDITS), st.integers(0, 1 << 16),
                     st.sampled_from(ODD_DIGITS + ODD_SUFFIXES + ["\n", " ", "0", "9" * 30]))


def edit_name(name: str, op: tuple) -> str:
    """A hostile variant of a file or directory name (never empty, never with a '/')."""
    kind, i, piece = op
    if kind == "digit":
        digits = [k for k, c in enumerate(name) if c.isdigit()]
        if digits:
            k = digits[i % len(digits)]
            name = name[:k] + piece + name[k + 1:]
    elif kind == "suffix":
        dot = name.find(".")
        name = (name[:dot] if dot > 0 else name) + piece
    elif kind == "append":
        name = name + piece
    elif kind == "prepend":
        name = piece + name
    elif kind == "length":
        dot = name.find(".")
        head, tail = (name[:dot], name[dot:]) if dot > 0 else (name, "")
        n = i % 3
        name = (head[1:] if n == 0 else "0" + head if n == 1 else head + "0") + tail
    name = name.replace("/", "_").replace("\x00", "_")
    return name if name not in ("", ".", "..") else name + "x"


def raw_snappy_bomb(n_records: int) -> bytes:
    """:func:`bomb_batch` with the records in one raw snappy block (no xerial framing,
    as librdkafka writes snappy): a block that has no streaming form."""
    import cramjam
    return v2_batch(bytes(cramjam.snappy.compress_raw(SEVEN * n_records)), codec=2,
                    count=n_records)
