#!/usr/bin/env python3
"""Decompression bindings per codec: microseconds per batch on the ``c_<codec>`` files of
:mod:`read_bench` (2,000 batches of 100 records, ~12 KB uncompressed each).

Each candidate decompresses every batch's records block; outputs are checked equal to
``kafkalog_cli.format.compression.decompress`` (the chosen binding, listed first).
Best of 5 after a warm-up. Run ``read_bench.py`` first to build the data files.
"""

from __future__ import annotations

import struct
import sys
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from kafkalog_cli.format import compression  # noqa: E402
from kafkalog_cli.format.records import FileRecords  # noqa: E402


def blocks(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return [bytes(b.view[b.position + 61:b.next_position]) for b in FileRecords(data).batches()]


def xerial_blocks(data: bytes):
    pos = 16
    while pos < len(data):
        (n,) = struct.unpack_from(">i", data, pos)
        yield data[pos + 4:pos + 4 + n]
        pos += 4 + n


def candidates(codec: str):
    cid = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}[codec]
    yield "kafkalog (chosen)", lambda d: compression.decompress(cid, d)
    if codec == "gzip":
        import gzip
        import io

        yield "zlib.decompress(wbits=47)", lambda d: zlib.decompress(d, 47)
        yield "gzip.GzipFile.read", lambda d: gzip.GzipFile(fileobj=io.BytesIO(d)).read()
        try:
            import cramjam
            yield "cramjam.gzip", lambda d: bytes(cramjam.gzip.decompress(d))
        except ImportError:
            pass
    elif codec == "snappy":
        import cramjam
        yield "cramjam.snappy.decompress_raw per xerial block", lambda d: b"".join(
            bytes(cramjam.snappy.decompress_raw(x)) for x in xerial_blocks(d))
        try:
            import snappy
            yield "python-snappy per xerial block", lambda d: b"".join(
                snappy.uncompress(x) for x in xerial_blocks(d))
        except ImportError:
            pass
    elif codec == "lz4":
        import lz4.frame
        yield "lz4.frame.decompress", lz4.frame.decompress
        import cramjam
        yield "cramjam.lz4.decompress", lambda d: bytes(cramjam.lz4.decompress(d))
    elif codec == "zstd":
        import zstandard
        dctx = zstandard.ZstdDecompressor()
        yield "zstandard reused decompressor", lambda d: b"".join(
            dctx.read_to_iter(d)) if zstandard.frame_content_size(d) < 0 else dctx.decompress(d)
        yield "zstandard new decompressor per batch", lambda d: zstandard.ZstdDecompressor(
        ).decompressobj().decompress(d)
        import cramjam
        yield "cramjam.zstd.decompress", lambda d: bytes(cramjam.zstd.decompress(d))


def main() -> int:
    lines = ["| codec | binding | us/batch | MB/s out |", "|---|---|--:|--:|"]
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        path = HERE / "data" / f"c_{codec}.v1.log"
        if not path.exists():
            print(f"# {path} missing: run read_bench.py first", file=sys.stderr)
            continue
        bs = blocks(path)
        expected = [compression.decompress({"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}[codec],
                                           b) for b in bs]
        out_bytes = sum(map(len, expected))
        for name, fn in candidates(codec):
            if [fn(b) for b in bs] != expected:
                lines.append(f"| {codec} | {name} | differs | |")
                continue
            best = 9e9
            for _ in range(5):
                t = time.perf_counter()
                for b in bs:
                    fn(b)
                best = min(best, time.perf_counter() - t)
            lines.append(f"| {codec} | {name} | {best / len(bs) * 1e6:.1f} | "
                         f"{out_bytes / best / 1e6:.0f} |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
