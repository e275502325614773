#!/usr/bin/env python3
"""How far the ``decode`` row of ``read_bench.py`` can go: instruction counts by callgrind.

``read_bench.py``'s decode loop touches offset, timestamp, key, value and headers of every
record. The loop itself (Python bytecode: unpacking, five sums, two ``len`` calls) is paid
by every reader, so it bounds the ratio peer / kafkalog even if kafkalog decoded for free.
This script counts, with valgrind's callgrind, the instructions of one decode of the same
data by:

* ``peer``  - aiokafka's C reader (``read_bench._peer_decode``), the row's peer;
* ``ours``  - kafkalog (``read_bench.kafkalog_decode``), C core;
* ``loop``  - ``read_bench``'s loop body alone, over kafkalog's own records made beforehand
  (a list of ``(is_valid, records)`` per batch): what is left when decoding costs nothing.

One decode's count is (warm-up + 2 decodes) minus (warm-up + 1 decode), each in its own
process, so imports, the file read and the warm-up cancel out. The table gives each
count, kafkalog's decode share (``ours - loop``), the ratio peer / ours, and the bound
peer / loop: the ratio at a decode of zero instructions. A target above the bound cannot
be met by any decoder under this loop.

Usage::

    python benchmarks/decode_bound.py                 # shapes a and b (~6 min, one core)
    python benchmarks/decode_bound.py --shapes b --out ''

Needs valgrind and aiokafka's C extension; exits with a reason when either is missing.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import read_bench  # noqa: E402

VARIANTS = ("peer", "ours", "loop")
TARGETS = {"a": 1.5, "b": 2.0}  # issue 28's decode targets

_CHILD = r"""
import sys
sys.path.insert(0, {here!r}); sys.path.insert(0, {root!r})
import read_bench as rb
from kafkalog_cli.format import records as R
from aiokafka.record.memory_records import MemoryRecords
variant, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(path, "rb").read()

def loop_only(pre):
    # read_bench.kafkalog_decode's loop body, over records made beforehand
    nb = nr = osum = tsum = kv = nh = 0
    for valid, recs in pre:
        if not valid:
            raise AssertionError("crc")
        nb += 1
        for offset, ts, key, value, headers in recs:
            nr += 1
            osum += offset
            tsum += ts
            if key is not None:
                kv += len(key)
            if value is not None:
                kv += len(value)
            nh += len(headers)
    return nb, nr, osum, tsum, kv, nh

if variant == "peer":
    peer = rb._peer_decode(MemoryRecords)
    f = lambda: peer(data)
elif variant == "ours":
    f = lambda: rb.kafkalog_decode(data)
else:
    pre = [(b.is_valid, list(b.records())) for b in R.FileRecords(data).batches()]
    f = lambda: loop_only(pre)
expected = rb.kafkalog_decode(data)
if f() != expected:
    raise SystemExit(variant + ": result differs from kafkalog_decode's")
for _ in range(n):
    f()
"""


def instructions(script: Path, variant: str, path: Path, n: int) -> int:
    """Instructions callgrind collects for one child process (its whole life)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
             sys.executable, str(script), variant, str(path), str(n)],
            capture_output=True, text=True, check=True)
    m = re.search(r"Collected : (\d+)", out.stderr)
    if m is None:
        raise SystemExit(f"callgrind gave no count for {variant}:\n{out.stderr[-2000:]}")
    return int(m.group(1))


def measure(shape: str, path: Path, script: Path) -> dict[str, int]:
    """One decode's instructions per variant: (warm-up + 2) - (warm-up + 1)."""
    counts = {}
    for variant in VARIANTS:
        one = instructions(script, variant, path, 1)
        two = instructions(script, variant, path, 2)
        counts[variant] = two - one
        print(f"# {shape} {variant}: {counts[variant] / 1e6:,.1f} M", file=sys.stderr)
    return counts


def table(rows: dict[str, dict[str, int]]) -> list[str]:
    out = ["| data | aiokafka[C] | kafkalog | loop alone | kafkalog's decode share "
           "| ratio | bound (decode = 0) | target |",
           "|---|--:|--:|--:|--:|--:|--:|--:|"]
    for shape, c in rows.items():
        nb, nr = read_bench.SHAPES[shape][:2]
        share = c["ours"] - c["loop"]
        out.append(
            f"| {shape} ({nb:,} x {nr}) | {c['peer'] / 1e6:,.1f} M | {c['ours'] / 1e6:,.1f} M "
            f"| {c['loop'] / 1e6:,.1f} M | {share / 1e6:,.1f} M ({share / nb:,.0f} per batch) "
            f"| {c['peer'] / c['ours']:.2f}x | {c['peer'] / c['loop']:.2f}x "
            f"| {TARGETS.get(shape, 0):.1f}x |")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="a,b")
    ap.add_argument("--out", default=str(HERE / "results" / "decode_bound.md"),
                    help="markdown file for the table ('' for stdout only)")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("decode_bound: valgrind is not installed (apt-get install valgrind)")
    try:
        from aiokafka.record import _crecords  # noqa: F401
    except ImportError:
        raise SystemExit("decode_bound: aiokafka's C extension is not importable") from None
    shapes = [s for s in args.shapes.split(",") if s]
    paths = read_bench.ensure_data(shapes)
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "decode_child.py"
        script.write_text(_CHILD.format(here=str(HERE), root=str(ROOT)))
        env_note = os.environ.get("KAFKALOG_PURE_PYTHON")
        if env_note:
            raise SystemExit("decode_bound: unset KAFKALOG_PURE_PYTHON (this counts the C core)")
        rows = {shape: measure(shape, paths[shape], script) for shape in shapes}
    lines = ["# decode: instructions of one decode, and the bound the loop sets", ""]
    lines += [f"- {line}" for line in read_bench.env_lines()]
    lines += ["- callgrind instruction counts of one decode: (warm-up + 2 decodes) - "
              "(warm-up + 1 decode), each in its own process", ""]
    lines += table(rows)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
