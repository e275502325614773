"""The codecs may be used from several threads at once (serve validates Produce batches on
worker threads): python-zstandard's contexts are not thread-safe, so each thread has its
own. Eight threads decompressing and compressing large zstd frames at once must each get
their own bytes back (a shared context crashes the interpreter or mixes outputs)."""

from __future__ import annotations

import threading

from kafkalog_cli.constants import CODEC_ZSTD
from kafkalog_cli.format import compression


def test_zstd_from_many_threads():
    blocks = [bytes([65 + i]) * (4 << 20) + bytes(range(256)) * 64 for i in range(8)]
    frames = [compression.compress(CODEC_ZSTD, b) for b in blocks]
    failures = []

    def work(i):
        try:
            for _ in range(12):
                if compression.decompress(CODEC_ZSTD, frames[i]) != blocks[i]:
                    failures.append((i, "decompress"))
                if compression.decompress(CODEC_ZSTD,
                                          compression.compress(CODEC_ZSTD, blocks[i])) \
                        != blocks[i]:
                    failures.append((i, "round trip"))
        except Exception as e:  # reported below
            failures.append((i, repr(e)))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not failures


def test_zstd_streams_interleaved_and_in_threads():
    """decompress_chunks is lazy: two batches' streams may be open at once in one thread
    (a reader suspended in one while it reads the other) and in several threads; each
    gets its own bytes (a zstd context serves one operation at a time)."""
    blocks = [bytes([97 + i]) * (3 << 20) + bytes(range(256)) * 512 for i in range(4)]
    frames = [compression.compress(CODEC_ZSTD, b) for b in blocks]

    def interleaved(a, b):
        ga = compression.decompress_chunks(CODEC_ZSTD, frames[a], chunk_bytes=1 << 16)
        gb = compression.decompress_chunks(CODEC_ZSTD, frames[b], chunk_bytes=1 << 16)
        out = {a: [], b: []}
        live = [(a, ga), (b, gb)]
        while live:  # one piece of each open stream in turn
            for k, g in list(live):
                piece = next(g, None)
                if piece is None:
                    live.remove((k, g))
                else:
                    out[k].append(piece)
        return b"".join(out[a]) == blocks[a] and b"".join(out[b]) == blocks[b]

    assert interleaved(0, 1)
    results = []
    threads = [threading.Thread(target=lambda i=i: results.append(interleaved(i, (i + 1) % 4)))
               for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert results == [True] * 4
