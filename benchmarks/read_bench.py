#!/usr/bin/env python3
"""Read-path benchmark: kafkalog vs kafka-python vs aiokafka (C), side by side.

One run, the same files, the same operations for every reader:

* ``scan``   - walk the batches of a segment, unpack each header and check its CRC-32C;
* ``decode`` - scan, decompress, then touch offset, timestamp, key, value and headers of
  every record (the CRC is checked for every reader, kafka-python and aiokafka included).

Data (built deterministically with kafka-python's ``DefaultRecordBatchBuilder`` into
``benchmarks/data/``, gitignored; 10-byte key, ~100-byte JSON-like value, consecutive
offsets, no headers unless said):

* ``a``  200,000 batches x 1 record;
* ``b``  2,000 batches x 100 records;
* ``c_<codec>``  ``b`` compressed with gzip, snappy, lz4, zstd;
* ``h``  ``b`` with 2 headers per record (not a target shape: kafkalog's decoder has a
  no-header fast path, this row shows the other path).

Every reader's result (batches, records, sum of offsets, sum of timestamps, key+value
bytes, header count) is checked against kafkalog's before any number is reported.
Timing (CPU time of the process): one warm-up each, then ``--repeat`` (3) rounds in which every reader runs
once in turn (so a shared machine's load hits all alike); the best round counts.

Usage::

    python benchmarks/read_bench.py                 # all shapes, all readers
    python benchmarks/read_bench.py --shapes a,b --readers kafkalog
    python benchmarks/read_bench.py --out benchmarks/results/read.md
    python benchmarks/read_bench.py --files ../shared/corpus/real/<dir>/00000000000000000000.log

``--files`` times existing segments instead (a real broker's, legacy v0/v1 ones included),
each named by its file; ``--cpu`` times CPU time (``time.process_time``) instead of wall time.

Peers come with the ``test`` extra (``pip install -e .[test]``); a missing peer is skipped.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

DATA = HERE / "data"
RESULTS = HERE / "results"

BASE_TS = 1_700_000_000_000
CODECS = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
#: name -> (batches, records per batch, codec id, headers per record)
SHAPES = {
    "a": (200_000, 1, 0, 0),
    "b": (2_000, 100, 0, 0),
    **{f"c_{name}": (2_000, 100, cid, 0) for name, cid in CODECS.items()},
    "h": (2_000, 100, 0, 2),
}
DATA_VERSION = "1"


# -- data ------------------------------------------------------------------------------------

def build(path: Path, nbatches: int, nrec: int, codec: int, nheaders: int) -> None:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    out = bytearray()
    off = 0
    headers = [(f"h{i}", b"header-value-%d" % i) for i in range(nheaders)]
    for _ in range(nbatches):
        bld = DefaultRecordBatchBuilder(
            magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
            producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
        for i in range(nrec):
            bld.append(i, timestamp=BASE_TS + off + i, key=b"key-%06d" % (off + i),
                       value=b'{"id": %08d, "payload": "' % (off + i) + b"x" * 70 + b'"}',
                       headers=headers)
        buf = bytearray(bld.build())
        buf[0:8] = off.to_bytes(8, "big")  # consecutive base offsets, outside the CRC
        out += buf
        off += nrec
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(out)
    tmp.replace(path)


def ensure_data(shapes: list[str], regen: bool = False) -> dict[str, Path]:
    DATA.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name in shapes:
        p = DATA / f"{name}.v{DATA_VERSION}.log"
        if regen or not p.exists():
            print(f"# building {p.relative_to(ROOT)}", file=sys.stderr)
            build(p, *SHAPES[name])
        paths[name] = p
    return paths


# -- readers ---------------------------------------------------------------------------------
# Each returns (batches, records, offset_sum, timestamp_sum, kv_bytes, headers).

def kafkalog_scan(data, _records=None):
    if _records is None:
        from kafkalog_cli.format import records as _records
    FileRecords = _records.FileRecords

    n = 0
    for batch in FileRecords(data).batches():
        if not batch.is_valid:
            raise AssertionError("crc")
        n += 1
    return n


def kafkalog_scan_fast(data, _records=None):
    if _records is None:
        from kafkalog_cli.format import records as _records

    s = _records.scan_batches(data)
    if s.invalid:
        raise AssertionError("crc")
    return s.batches


def kafkalog_decode(data, _records=None):
    if _records is None:
        from kafkalog_cli.format import records as _records
    FileRecords = _records.FileRecords

    nb = nr = osum = tsum = kv = nh = 0
    for batch in FileRecords(data).batches():
        if not batch.is_valid:
            raise AssertionError("crc")
        nb += 1
        for offset, ts, key, value, headers in batch.records():
            nr += 1
            osum += offset
            tsum += ts
            if key is not None:
                kv += len(key)
            if value is not None:
                kv += len(value)
            nh += len(headers)
    return nb, nr, osum, tsum, kv, nh


def _peer_scan(mr_cls):
    def scan(data):
        mr = mr_cls(data)
        n = 0
        while mr.has_next():
            batch = mr.next_batch()
            if not batch.validate_crc():
                raise AssertionError("crc")
            n += 1
        return n
    return scan


def _peer_decode(mr_cls):
    def decode(data):
        mr = mr_cls(data)
        nb = nr = osum = tsum = kv = nh = 0
        while mr.has_next():
            batch = mr.next_batch()
            if not batch.validate_crc():
                raise AssertionError("crc")
            nb += 1
            for rec in batch:
                nr += 1
                osum += rec.offset
                tsum += rec.timestamp
                key = rec.key
                value = rec.value
                if key is not None:
                    kv += len(key)
                if value is not None:
                    kv += len(value)
                nh += len(rec.headers)
        return nb, nr, osum, tsum, kv, nh
    return decode


def readers(selected: set[str]) -> dict[str, dict]:
    out = {}
    if "kafkalog" in selected:
        out["kafkalog"] = {"scan": kafkalog_scan, "decode": kafkalog_decode}
        try:
            from kafkalog_cli.format.records import scan_batches  # noqa: F401
            out["kafkalog"]["scan_batches"] = kafkalog_scan_fast
        except ImportError:
            pass
        from kafkalog_cli.format import compiled

        if compiled.SPEEDUPS:
            # the compiled core is in use: time the pure-Python loops beside it
            pure = compiled.load_pure_python()
            out["kafkalog[py]"] = {
                "scan": lambda d: kafkalog_scan(d, pure),
                "scan_batches": lambda d: kafkalog_scan_fast(d, pure),
                "decode": lambda d: kafkalog_decode(d, pure)}
    if "kafka-python" in selected:
        try:
            from kafka.record import MemoryRecords as KpMemoryRecords
            out["kafka-python"] = {"scan": _peer_scan(KpMemoryRecords),
                                   "decode": _peer_decode(KpMemoryRecords)}
        except ImportError:
            print("# kafka-python not installed: skipped", file=sys.stderr)
    if "aiokafka" in selected:
        try:
            from aiokafka.record.memory_records import MemoryRecords as AioMemoryRecords
            name = "aiokafka[C]" if "_crecords" in AioMemoryRecords.__module__ else "aiokafka[py]"
            out[name] = {"scan": _peer_scan(AioMemoryRecords),
                         "decode": _peer_decode(AioMemoryRecords)}
        except ImportError:
            print("# aiokafka not installed: skipped", file=sys.stderr)
    return out


# -- timing ----------------------------------------------------------------------------------

def calibrate(fn, data, min_time: float) -> tuple[object, int]:
    """Warm up ``fn`` (imports, codec contexts) and pick how many calls one timing makes
    so that it lasts at least ``min_time`` seconds."""
    t = time.perf_counter()
    result = fn(data)
    once = time.perf_counter() - t
    return result, max(1, int(min_time / max(once, 1e-6)) + 1) if once < min_time else 1


CLOCK = time.perf_counter


def time_round(fn, data, loops: int) -> float:
    """Seconds of one call by ``CLOCK`` (process time with ``--cpu``: a shared machine's
    other work is not counted)."""
    gc.collect()
    t = CLOCK()
    for _ in range(loops):
        fn(data)
    return (CLOCK() - t) / loops


def fmt_rate(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e3:
        return f"{x / 1e3:.0f}k"
    return f"{x:.0f}"


def fmt_mb(x: float) -> str:
    return f"{x / 1e3:.2f} GB/s" if x >= 1e3 else f"{x:.0f} MB/s"


def env_lines() -> list[str]:
    lines = [f"python {platform.python_version()} {platform.python_implementation()}, "
             f"{platform.platform()}, nproc {os.cpu_count()}"]
    try:
        lines.append(f"load average (1 min) {os.getloadavg()[0]:.2f}")
    except OSError:
        pass
    vers = []
    for mod in ("kafkalog_cli", "kafka", "aiokafka", "crc32c", "cramjam", "lz4", "zstandard"):
        try:
            m = __import__(mod)
            vers.append(f"{mod} {getattr(m, '__version__', '?')}")
        except ImportError:
            vers.append(f"{mod} (absent)")
    lines.append(", ".join(vers))
    try:
        import crc32c
        lines.append(f"crc32c hardware_based={crc32c.hardware_based}")
    except ImportError:
        pass
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma list of " + ",".join(SHAPES))
    ap.add_argument("--readers", default="kafkalog,kafka-python,aiokafka")
    ap.add_argument("--ops", default="scan,scan_batches,decode")
    ap.add_argument("--repeat", type=int, default=3, help="timed rounds (best is kept)")
    ap.add_argument("--min-time", type=float, default=0.05,
                    help="seconds one timing lasts at least (short ops are looped)")
    ap.add_argument("--regen", action="store_true", help="rebuild the data files")
    ap.add_argument("--files", default="",
                    help="comma list of existing .log files to time instead of --shapes")
    ap.add_argument("--cpu", action="store_true", help="time CPU time, not wall time")
    ap.add_argument("--out", default=str(RESULTS / "read.md"),
                    help="markdown file for the tables ('' for stdout only)")
    args = ap.parse_args(argv)

    global CLOCK
    if args.cpu:
        CLOCK = time.process_time
    ops = [o for o in args.ops.split(",") if o]
    if args.files:
        paths = {str(p): Path(p) for p in args.files.split(",") if p}
        shapes = list(paths)
    else:
        shapes = [s for s in args.shapes.split(",") if s]
        paths = ensure_data(shapes, args.regen)
    rds = readers(set(args.readers.split(",")))

    rows = []  # (reader, op, shape, batches, records, nbytes, best, worst)
    results: dict[tuple[str, str], dict[str, float]] = {}
    for shape in shapes:
        data = paths[shape].read_bytes()
        nbytes = len(data)
        # Warm up every reader, then time them in interleaved rounds, so that the load of
        # a shared machine falls on all of them alike; keep each one's best round.
        jobs = []
        for rname, fns in rds.items():
            for op in ops:
                fn = fns.get(op)
                if fn is not None:
                    res, loops = calibrate(fn, data, args.min_time)
                    jobs.append([rname, op, fn, res, loops, []])
        for _ in range(args.repeat):
            for job in jobs:
                job[5].append(time_round(job[2], data, job[4]))
        expected = next((j[3] for j in jobs if j[1] == "decode"), None)
        for rname, op, _fn, res, _loops, times in jobs:
            best, worst = min(times), max(times)
            if op == "decode":
                if res != expected:
                    raise SystemExit(f"{rname} {shape}: decode result {res} != {expected}")
                nb, nr = res[0], res[1]
            else:
                nb = res
                nr = nb * SHAPES[shape][1] if shape in SHAPES else \
                    (expected[1] if expected is not None else nb)
                if expected is not None and nb != expected[0]:
                    raise SystemExit(f"{rname} {shape}: scan counted {nb} batches")
            rows.append((rname, op, shape, nb, nr, nbytes, best, worst))
            results.setdefault((shape, op), {})[rname] = nr / best
            print(f"# {rname:13} {op:12} {shape:9} {nr / best / 1e3:9.0f}k rec/s "
                  f"{nb / best / 1e3:9.0f}k batches/s {nbytes / best / 1e6:8.0f} MB/s",
                  file=sys.stderr)
        del data

    out = ["# Read benchmark", ""]
    out += [f"- {line}" for line in env_lines()]
    try:
        out.append(f"- load average (1 min) at the end {os.getloadavg()[0]:.2f}")
    except OSError:
        pass
    out += [f"- best of {args.repeat} interleaved rounds after one warm-up "
            f"({'CPU' if args.cpu else 'wall'} time; ops shorter than "
            f"{args.min_time}s looped); MB/s counts segment bytes (compressed size for c_*); "
            "spread = (worst-best)/best", ""]
    out += ["| reader | op | data | batches/s | records/s | MB/s | best s | spread |",
            "|---|---|---|--:|--:|--:|--:|--:|"]
    for rname, op, shape, nb, nr, nbytes, best, worst in rows:
        out.append(f"| {rname} | {op} | {shape} | {fmt_rate(nb / best)} | {fmt_rate(nr / best)} "
                   f"| {fmt_mb(nbytes / best / 1e6)} | {best:.4f} | {(worst - best) / best:.0%} |")
    out += ["", "Ratios (kafkalog records/s divided by the peer's, same op and data):", ""]
    peers = [r for r in rds if r != "kafkalog"]
    # (kafkalog[py], when present, is kafkalog's own pure-Python fallback)
    if "kafkalog" in rds and peers:
        out.append("| op | data | " + " | ".join(f"vs {p}" for p in peers) + " |")
        out.append("|---|---|" + "--:|" * len(peers))
        for (shape, op), d in results.items():
            if "kafkalog" not in d:
                continue
            cells = []
            for p in peers:
                base = d.get(p) if op != "scan_batches" else results[(shape, "scan")].get(p)
                cells.append(f"{d['kafkalog'] / base:.2f}x" if base else "-")
            out.append(f"| {op} | {shape} | " + " | ".join(cells) + " |")
        out += ["", "(`scan_batches` ratios are against the peer's `scan`.)"]
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
