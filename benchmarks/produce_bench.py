"""Batch building and ``kafkalog produce`` end to end.

Data: 200,000 records with 100-byte values (no key, no headers, one timestamp) in
100-record batches, as in the issue.

1. Building the 2,000 batches: kafka-python's ``DefaultRecordBatchBuilder`` (pure
   Python), aiokafka's C builder (``aiokafka.record._crecords``), kafkalog's
   ``build_batch`` (from record tuples) and its ``encode_values`` line path; then the
   same batches compressed with each codec, by the same three builders.
2. ``produce`` end to end from a lines file and JSONL files (values only; keys and
   headers) into a fresh temporary log directory (parsing, batching, validation,
   indexes, fsync at close), per codec, against the codec's own compress speed on the
   same 100-record blocks, and the cost compression adds to produce against that.

The end-to-end cases and the codec-alone timings are interleaved (one round runs every
case once), best of ``--repeat`` rounds, wall time and CPU time (``process_time``) each.
The machine is shared: the load average is reported with the figures.
Writes ``benchmarks/results/produce.md``.

    python benchmarks/produce_bench.py [--repeat 5] [--records 200000]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kafkalog_cli.constants import CODEC_IDS  # noqa: E402
from kafkalog_cli.format import compression  # noqa: E402
from kafkalog_cli.format.builder import build_batch, encode_values  # noqa: E402
from kafkalog_cli.ops.produce import ProduceOptions, iter_inputs, produce  # noqa: E402

TS = 1_700_000_000_000
BATCH = 100


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def values(n: int) -> list[bytes]:
    return [(b"%06d-" % i) + b"v" * 93 for i in range(n)]


def bench_builders(vals, repeat, codec: int = 0):
    """Seconds to build every batch (compressed with ``codec``) per builder, best of
    ``repeat``."""
    batches = [vals[i:i + BATCH] for i in range(0, len(vals), BATCH)]
    out = {}

    from kafka.record.default_records import DefaultRecordBatchBuilder as KP

    def kafka_python():
        for b in batches:
            bb = KP(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                    producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
            for i, v in enumerate(b):
                bb.append(i, timestamp=TS, key=None, value=v, headers=[])
            bb.build()

    out["kafka-python DefaultRecordBatchBuilder"] = best(kafka_python, repeat)
    try:
        from aiokafka.record._crecords import DefaultRecordBatchBuilder as AC

        def aiokafka_c():
            for b in batches:
                bb = AC(2, codec, 0, -1, -1, -1, 1 << 20)
                for i, v in enumerate(b):
                    bb.append(i, TS, None, v, [])
                bb.build()

        out["aiokafka C DefaultRecordBatchBuilder"] = best(aiokafka_c, repeat)
    except ImportError:
        pass

    def kafkalog_build():
        for b in batches:
            build_batch([(TS, None, v, ()) for v in b], compression_type=codec)

    out["kafkalog build_batch (tuples)"] = best(kafkalog_build, repeat)

    from kafkalog_cli.format.builder import assemble_batch

    def kafkalog_values():
        for b in batches:
            block = encode_values(b)
            if codec:
                block = compression.compress(codec, block)
            assemble_batch(block, base_offset=0, partition_leader_epoch=-1,
                           attributes=codec, last_offset_delta=len(b) - 1, base_timestamp=TS,
                           max_timestamp=TS, producer_id=-1, producer_epoch=-1,
                           base_sequence=-1, records_count=len(b))

    out["kafkalog encode_values + assemble_batch"] = best(kafkalog_values, repeat)
    if codec:
        return out
    # same bytes from all three
    kp = KP(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
            producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i, v in enumerate(batches[0]):
        kp.append(i, timestamp=TS, key=None, value=v, headers=[])
    assert bytes(kp.build())[21:] == build_batch([(TS, None, v, ()) for v in batches[0]])[21:]
    return out


def timed(fn) -> tuple[float, float]:
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def produce_once(path: Path, fmt: str, codec: str, tmp: Path):
    def once():
        d = tmp / "logdir"
        shutil.rmtree(d, ignore_errors=True)
        opts = ProduceOptions(topic="bench", input_format=fmt, batch_size=BATCH,
                              batch_bytes=1 << 30, compression=codec, timestamp=TS)
        res = produce(d, opts, iter_inputs([str(path)], opts), fsync=True)
        assert res.records > 0

    return once


def bench_e2e(vals, files: dict, repeat: int, tmp: Path):
    """Interleaved rounds over every case; returns {case: (best wall, best cpu)}."""
    blocks = [encode_values(vals[i:i + BATCH]) for i in range(0, len(vals), BATCH)]
    cases = {}
    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        if codec != "none":
            cid = CODEC_IDS[codec]
            cases[("codec", codec)] = lambda c=cid: [compression.compress(c, b) for b in blocks]
        cases[("lines", codec)] = produce_once(files["lines"], "lines", codec, tmp)
    cases[("jsonl", "none")] = produce_once(files["jsonl"], "jsonl", "none", tmp)
    cases[("jsonl keys+headers", "none")] = produce_once(files["jsonl-kh"], "jsonl", "none",
                                                         tmp)
    best: dict = {}
    for _ in range(repeat):
        for key, fn in cases.items():
            w, c = timed(fn)
            bw, bc = best.get(key, (float("inf"), float("inf")))
            best[key] = (min(bw, w), min(bc, c))
    return best


def bench_cli(path: Path, tmp: Path, repeat: int) -> float:
    def once():
        d = tmp / "clidir"
        shutil.rmtree(d, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "kafkalog_cli", "produce", "--log-dir", str(d),
                        "--topic", "bench", "--batch-size", str(BATCH), "--timestamp", str(TS),
                        str(path), "-o", "json"], check=True, capture_output=True,
                       cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))

    return best(once, repeat)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/produce.md"))
    a = ap.parse_args()
    n = a.records
    vals = values(n)
    tmp = Path(tempfile.mkdtemp(prefix="kl-produce-bench-"))
    load0 = os.getloadavg()[0]
    try:
        files = {"lines": tmp / "in.txt", "jsonl": tmp / "in.jsonl",
                 "jsonl-kh": tmp / "in-kh.jsonl"}
        files["lines"].write_bytes(b"\n".join(vals) + b"\n")
        files["jsonl"].write_bytes(b"".join(b'{"value": "%s"}\n' % v for v in vals))
        files["jsonl-kh"].write_bytes(b"".join(
            b'{"key": "k%d", "value": "%s", "headers": {"h": "x"}}\n' % (i % 1000, v)
            for i, v in enumerate(vals)))
        builders = bench_builders(vals, a.repeat)
        compressed = {c: bench_builders(vals, a.repeat, CODEC_IDS[c])
                      for c in ("gzip", "snappy", "lz4", "zstd")}
        e2e = bench_e2e(vals, files, a.repeat, tmp)
        cli = bench_cli(files["lines"], tmp, max(2, a.repeat // 2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    rate = lambda t: n / t / 1e6  # noqa: E731
    kp = builders["kafka-python DefaultRecordBatchBuilder"]
    md = [f"# produce benchmark ({n:,} records of 100 bytes, {BATCH}-record batches)", "",
          f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}. Load average {load0:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end. Best of {a.repeat} "
          f"interleaved rounds.", "",
          "## Building batches", "",
          "| builder | M records/s | vs kafka-python |", "|---|--:|--:|"]
    for name, t in builders.items():
        md.append(f"| {name} | {rate(t):.2f} | {kp / t:.2f}x |")
    md += ["", "Compressed (the same batches, each codec at Kafka's default level; M records/s, "
           "and the ratio to kafka-python):", "",
           "| codec | " + " | ".join(n.split(" Default")[0].replace("kafkalog encode_values + "
                                                                    "assemble_batch",
                                                                    "kafkalog encode_values")
                                   for n in builders) + " |",
           "|---|" + "--:|" * len(builders)]
    for codec, res in compressed.items():
        kpc = res["kafka-python DefaultRecordBatchBuilder"]
        md.append(f"| {codec} | " + " | ".join(
            f"{rate(res[name]):.2f} ({kpc / res[name]:.1f}x)" if name in res else "-"
            for name in builders) + " |")
    md += ["", "## `produce` end to end into a log directory (in process, fsync at close)", "",
           "Parsing the input file, batching, building (and compressing), validation, "
           "offset assignment, indexes, producer snapshot, checkpoints, fsync. "
           "Wall: M records/s by elapsed time; CPU: by process CPU time. "
           "produce / codec: produce's rate over the codec's own compress rate on the same "
           "blocks. Added / codec: the CPU time compressing adds to produce (this codec's "
           "run minus the uncompressed run) over the codec's own CPU time: 100% means "
           "compression costs produce exactly what the codec itself costs.", "",
           "| input | codec | wall M rec/s | CPU M rec/s | codec alone, M rec/s (wall / CPU) "
           "| produce / codec, wall | CPU | added / codec (CPU) |",
           "|---|---|--:|--:|--:|--:|--:|--:|"]
    none_cpu = e2e[("lines", "none")][1]
    for (fmt, codec), (w, c) in e2e.items():
        if fmt == "codec":
            continue
        if codec == "none":
            md.append(f"| {fmt} | none | {rate(w):.2f} | {rate(c):.2f} | - | - | - | - |")
        else:
            cw, cc = e2e[("codec", codec)]
            md.append(f"| {fmt} | {codec} | {rate(w):.2f} | {rate(c):.2f} | "
                      f"{rate(cw):.2f} / {rate(cc):.2f} | {cw / w:.0%} | {cc / c:.0%} | "
                      f"{(c - none_cpu) / cc:.0%} |")
    md += ["", f"`python -m kafkalog_cli produce` of the lines file as a subprocess (interpreter "
           f"start-up and imports included): {rate(cli):.2f} M records/s ({cli:.2f} s).", ""]
    text = "\n".join(md)
    Path(a.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
