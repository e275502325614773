"""Peak Python heap (tracemalloc) of ``verify-index`` and ``audit`` on one large segment
of one-record batches: the memory of checking indexes against a log must not grow with
its batches.

    python benchmarks/verify_memory_bench.py                 # 1,640,000 batches (~115 MB)
    python benchmarks/verify_memory_bench.py --batches 200000

The segment (minimum-size v2 batches: one record, null key, 1-byte value, 70 bytes each)
and its indexes (every 4096 bytes, as the broker's recovery writes them) are built into
a temp directory with kafkalog's builder, then each command's library entry point runs
under tracemalloc and the peak is printed in MB (and as bytes per batch).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def build(directory: Path, n: int) -> int:
    from kafkalog_cli.format.builder import build_batch
    from kafkalog_cli.storage.recovery_scan import scan_log

    d = directory / "t-0"
    d.mkdir(parents=True)
    one = build_batch([(1_700_000_000_000, None, b"x", ())], base_offset=0)
    size = len(one)
    data = bytearray(one * n)
    # each batch's base offset: its index (the CRC does not cover it)
    for i in range(n):
        data[i * size:i * size + 8] = i.to_bytes(8, "big")
    (d / "00000000000000000000.log").write_bytes(data)
    s = scan_log(memoryview(data), 0, 4096)
    (d / "00000000000000000000.index").write_bytes(s.offset_index)
    (d / "00000000000000000000.timeindex").write_bytes(s.time_index)
    return len(data)


def measure(fn) -> tuple[float, float]:
    tracemalloc.start()
    t = time.perf_counter()
    fn()
    secs = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, secs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=1_640_000)
    args = ap.parse_args()
    from kafkalog_cli.ops.audit import audit
    from kafkalog_cli.ops.verify import verify_index

    root = Path(tempfile.mkdtemp(prefix="kafkalog-verify-mem-"))
    try:
        size = build(root, args.batches)
        print(f"{args.batches} batches, {size / 1e6:.1f} MB")
        r = verify_index([root / "t-0"])
        assert r.ok and r.segments[0].batches == args.batches, r.to_dict()
        for name, fn in (("verify-index", lambda: verify_index([root / "t-0"])),
                         ("audit", lambda: audit([root / "t-0"], engine="local"))):
            peak, secs = measure(fn)
            print(f"{name:>13}: peak {peak / 1e6:7.1f} MB ({peak / args.batches:5.1f} bytes per "
                  f"batch), {secs:.1f} s under tracemalloc")
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
