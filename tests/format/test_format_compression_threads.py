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
