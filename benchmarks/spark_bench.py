"""Spark benchmark: the kafkalog data source vs a trivial Arrow source, local[1] vs
local[2], and ``export --engine local`` vs a plain pyarrow Parquet write.

    python benchmarks/spark_bench.py [--runs 2]   # writes benchmarks/results/spark.md

Data: ~2 M records of ~100 B value (+ 8 B key) in 8 partitions of 4 segments each,
generated once into ``benchmarks/data/spark/`` (gitignored) with the library's
``build_batch`` (batches of 200 records, uncompressed) and indexes from
``rebuild_indexes``.

Each Spark figure is the best of 4 ``count()`` runs after one warm-up run, the two
sources taking turns (so the shared machine's load hits both alike), in a fresh
process per master (``local[1]``, ``local[2]``; ``--runs`` alternating pairs of
processes, the best of each master counts), with the same number of input
partitions (``minPartitions=6``) for both sources. The trivial source reads the same
``.log`` files and slices them into rows of the same shape (the feasibility probe's
reader), so it is a ceiling for a Python source on this machine: Spark's per-row and
per-task costs without Kafka decoding.

``--one MASTER`` runs one master in this process and prints JSON; ``--kafkalog DIR`` makes
the driver and Spark's Python workers import ``kafkalog_cli`` from another checkout (the
worker's import is checked with a probe source), ``--sources`` picks the sources
(``kafkalog``, ``trivial``, and ``arrowfile``: the same rows as kafkalog's read, written
once to Arrow IPC files and memory-mapped, a Python source whose read costs next to
nothing), and ``--read-cpu`` adds the CPU time of the reader's own ``read()`` of every
input partition, in this process. ``benchmarks/run_all.py --only spark`` uses these to
compare two checkouts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

DATA = HERE / "data" / "spark"
RESULTS = HERE / "results" / "spark.md"
PARTITIONS = 8
SEGMENTS = 4
ARROW = DATA / "arrow"
RECORDS = 2_000_000
BATCH = 200
VALUE = 100
T0 = 1_700_000_000_000
MIN_PARTITIONS = 6
#: the rows of the trivial and arrowfile sources: the kafkalog source's default columns
ROW_SCHEMA = ("key binary, value binary, topic string, partition int, offset long, "
              "timestamp timestamp, timestampType int")
ROUNDS = 4


# -- data ----------------------------------------------------------------------------------

def generate() -> Path:
    from kafkalog_cli.format.builder import build_batch
    from kafkalog_cli.storage.segment import rebuild_indexes

    log = DATA / "kafka-logs"
    marker = DATA / f"done-{RECORDS}-{PARTITIONS}-{SEGMENTS}"
    if marker.exists():
        return log
    import shutil

    shutil.rmtree(DATA, ignore_errors=True)
    per_part = RECORDS // PARTITIONS
    per_seg = per_part // SEGMENTS
    filler = bytes(range(256)) * 4
    for p in range(PARTITIONS):
        d = log / f"bench-{p}"
        d.mkdir(parents=True)
        offset = 0
        for _ in range(SEGMENTS):
            base = offset
            chunks = []
            end = base + per_seg
            while offset < end:
                n = min(BATCH, end - offset)
                recs = [(T0 + o, b"key%05d" % (o % 100000),
                         filler[o % 256:o % 256 + VALUE], ()) for o in range(offset, offset + n)]
                chunks.append(build_batch(recs, base_offset=offset))
                offset += n
            data = b"".join(chunks)
            prefix = d / f"{base:020d}"
            prefix.with_suffix(".log").write_bytes(data)
            rb = rebuild_indexes(data, base)
            prefix.with_suffix(".index").write_bytes(rb.offset_index_bytes(base))
            prefix.with_suffix(".timeindex").write_bytes(rb.time_index_bytes(base))
    marker.write_text("ok\n")
    return log


def generate_arrow() -> Path:
    """kafkalog's rows of the data, as its data source's input partitions hold them
    (``minPartitions``), one Arrow IPC file a partition (``part-<i>.arrow``), the record
    batches as ``read()`` yields them; written once with this checkout's kafkalog."""
    import pyarrow as pa

    from kafkalog_cli.spark.datasource import KafkaLogDataSource

    log = generate()
    marker = ARROW / f"done-{RECORDS}-{MIN_PARTITIONS}"
    if marker.exists():
        return ARROW
    import shutil

    shutil.rmtree(ARROW, ignore_errors=True)
    ARROW.mkdir(parents=True)
    reader = KafkaLogDataSource({"path": str(log), "minPartitions": str(MIN_PARTITIONS)}
                                ).reader(None)
    for i, part in enumerate(reader.partitions()):
        writer = None
        for rb in reader.read(part):
            if writer is None:
                writer = pa.ipc.new_file(str(ARROW / f"part-{i}.arrow"), rb.schema)
            writer.write_batch(rb)
        if writer is not None:
            writer.close()
    marker.write_text("ok\n")
    return ARROW


# -- the trivial source ----------------------------------------------------------------------

def trivial_source():
    import pyarrow as pa
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class TrivialReader(DataSourceReader):
        def __init__(self, options):
            self.path = options["path"]

        def partitions(self):
            files = sorted(str(p) for p in Path(self.path).rglob("*.log"))
            n = MIN_PARTITIONS
            return [InputPartition(files[i::n]) for i in range(n)]

        def read(self, part):
            from spark_bench import trivial_batches

            yield from trivial_batches(part.value)

    class TrivialSource(DataSource):
        @classmethod
        def name(cls):
            return "trivialbench"

        def schema(self):
            return ROW_SCHEMA

        def reader(self, schema):
            return TrivialReader(self.options)

    return TrivialSource, pa


def arrowfile_source():
    """``format("arrowfile")``: the record batches of ``generate_arrow``'s files, each
    input partition one file, memory-mapped (the batches reference the map: no copy, no
    decoding). What a worker spends on a query of it is pyspark's own cost of a Python
    source of these rows (planning, tasks, the Arrow stream to the JVM)."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class ArrowFileReader(DataSourceReader):
        def __init__(self, options):
            self.path = options["path"]

        def partitions(self):
            return [InputPartition(str(p)) for p in sorted(Path(self.path).glob("*.arrow"))]

        def read(self, part):
            import pyarrow as pa

            with pa.memory_map(part.value) as src:
                f = pa.ipc.open_file(src)
                for i in range(f.num_record_batches):
                    yield f.get_batch(i)

    class ArrowFileSource(DataSource):
        @classmethod
        def name(cls):
            return "arrowfile"

        def schema(self):
            return ROW_SCHEMA

        def reader(self, schema):
            return ArrowFileReader(self.options)

    return ArrowFileSource


def probe_source():
    """``format("kafkalogprobe")``: one row from a Python worker naming the
    ``kafkalog_cli`` it imports and whether its compiled core is loaded."""
    from pyspark.sql.datasource import DataSource, DataSourceReader

    class ProbeReader(DataSourceReader):
        def read(self, part):
            import kafkalog_cli
            from kafkalog_cli.format import records

            yield (kafkalog_cli.__file__, bool(getattr(records, "SPEEDUPS", False)))

    class ProbeSource(DataSource):
        @classmethod
        def name(cls):
            return "kafkalogprobe"

        def schema(self):
            return "file string, speedups boolean"

        def reader(self, schema):
            return ProbeReader()

    return ProbeSource


def trivial_batches(files):
    """Rows of the kafkalog schema sliced out of the files (no Kafka decoding)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    per_file = RECORDS // (PARTITIONS * SEGMENTS)
    step = VALUE + 8
    for f in files:
        data = Path(f).read_bytes()
        for lo in range(0, per_file, 65536):
            hi = min(per_file, lo + 65536)
            keys = [data[i * step:i * step + 8] for i in range(lo, hi)]
            values = [data[i * step + 8:i * step + step] for i in range(lo, hi)]
            n = hi - lo
            ts = pc.multiply(pa.array([T0 + i for i in range(lo, hi)], pa.int64()), 1000)
            yield pa.RecordBatch.from_arrays(
                [pa.array(keys, pa.binary()), pa.array(values, pa.binary()),
                 pa.array(["bench"] * n, pa.string()), pa.array([0] * n, pa.int32()),
                 pa.array(range(lo, hi), pa.int64()), ts.cast(pa.timestamp("us", tz="UTC")),
                 pa.array([0] * n, pa.int32())],
                names=["key", "value", "topic", "partition", "offset", "timestamp",
                       "timestampType"])


# -- one master (run in its own process) -------------------------------------------------------

def _process_cpu() -> tuple[float, float]:
    """CPU seconds used so far by this process's Spark JVM (all threads) and by the Python
    workers under it (the pyspark daemons and their forked workers, exited ones included,
    and any worker the JVM ran and reaped itself: the JVM's only children are Python
    workers, so its children's times count as workers'), from /proc (Linux; zeros
    elsewhere)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    stats = {}
    for d in Path("/proc").glob("[0-9]*"):
        try:
            raw = (d / "stat").read_text()
        except OSError:
            continue
        name, rest = raw[raw.index("(") + 1:raw.rindex(")")], raw[raw.rindex(")") + 2:].split()
        # fields after the name: state ppid ... utime(11) stime(12) cutime(13) cstime(14)
        stats[int(d.name)] = (name, int(rest[1]), [int(x) for x in rest[11:15]])
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    jvm = py = 0.0
    todo = list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        name, _, t = stats[pid]
        if name == "java":
            jvm += (t[0] + t[1]) / tick
            py += (t[2] + t[3]) / tick
        elif name.startswith("python"):
            py += sum(t) / tick
        todo.extend(children.get(pid, []))
    return jvm, py


SOURCES = {"trivial": "trivialbench", "kafkalog": "kafkalog", "arrowfile": "arrowfile"}


def read_cpu(log: Path, loops: int = 3) -> float:
    """CPU seconds of the kafkalog reader's ``read()`` of every input partition, in this
    process (best of ``loops``): the part of a query's Python-worker CPU that is
    kafkalog's read, the rest being pyspark's worker and planning."""
    from kafkalog_cli.spark.datasource import KafkaLogDataSource

    reader = KafkaLogDataSource({"path": str(log), "minPartitions": str(MIN_PARTITIONS)}
                                ).reader(None)
    parts = reader.partitions()
    best = float("inf")
    for _ in range(loops):
        c = time.process_time()
        for p in parts:
            for _ in reader.read(p):
                pass
        best = min(best, time.process_time() - c)
    return best


def run_master(master: str, sources: tuple[str, ...] = ("trivial", "kafkalog"),
               rounds: int = ROUNDS, kafkalog_root: Path = ROOT,
               with_read_cpu: bool = False) -> dict:
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(HERE), str(kafkalog_root), *filter(None, [os.environ.get("PYTHONPATH")])])
    import kafkalog_cli
    from kafkalog_cli.spark import get_session

    log = generate()
    arrow = generate_arrow() if "arrowfile" in sources else None
    t = time.perf_counter()
    spark = get_session(master)
    start = time.perf_counter() - t
    for make in (trivial_source, arrowfile_source, probe_source):
        src = make()
        spark.dataSource.register(src[0] if isinstance(src, tuple) else src)
    probe = spark.read.format("kafkalogprobe").load().collect()[0]
    out = {"master": master, "session_start_s": round(start, 2), "rounds": rounds,
           "driver_kafkalog": kafkalog_cli.__file__, "worker_kafkalog": probe["file"],
           "worker_speedups": probe["speedups"]}
    opts = {"kafkalog": {"minPartitions": str(MIN_PARTITIONS)}}
    times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in sources}
    # one warm-up query each, then ``rounds`` rounds running the sources in turn, so the
    # shared machine's load hits them alike; the best round of each counts
    for i in range(rounds + 1):
        for name in sources:
            path = arrow if name == "arrowfile" else log
            jvm0, py0 = _process_cpu()
            t = time.perf_counter()
            rows = (spark.read.format(SOURCES[name]).options(**opts.get(name, {}))
                    .load(str(path)).count())
            dt = time.perf_counter() - t
            jvm1, py1 = _process_cpu()
            out[f"{name}_rows"] = rows
            if i:
                times[name].append((dt, jvm1 - jvm0, py1 - py0))
            else:
                out[f"{name}_first_s"] = round(dt, 2)
    for name in sources:
        best, jvm, py = min(times[name])
        out[f"{name}_best_s"] = round(best, 3)
        out[f"{name}_rows_per_s"] = round(out[f"{name}_rows"] / best)
        # CPU of that best query: the JVM's (Arrow to rows, count) and the Python workers'
        out[f"{name}_jvm_cpu_s"] = round(jvm, 3)
        out[f"{name}_py_cpu_s"] = round(py, 3)
        out[f"{name}_cores_used"] = round((jvm + py) / best, 2)
        # every timed query's (seconds, JVM CPU s, workers' CPU s), for the spread
        out[f"{name}_queries"] = [[round(x, 3) for x in q] for q in times[name]]
    spark.stop()
    if with_read_cpu:
        out["kafkalog_read_cpu_s"] = round(read_cpu(log), 3)
    return out


# -- local engine ----------------------------------------------------------------------------

def run_local() -> dict:
    import shutil
    import tempfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    from kafkalog_cli.ops.export import export

    log = generate()
    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-bench-"))
    try:
        best = None
        for i in range(3):
            res = export([str(log)], tmp / f"out{i}", engine="local",
                         options={"includeHeaders": "false"})
            best = res if best is None or res.seconds < best.seconds else best
        # baseline: the same rows, already in memory, written by pyarrow alone
        table = pa.concat_tables(
            pq.read_table(p) for p in sorted((tmp / "out0").rglob("*.parquet")))
        t = time.perf_counter()
        with pq.ParquetWriter(str(tmp / "plain.parquet"), table.schema) as w:
            for rb in table.to_batches(max_chunksize=65536):
                w.write_batch(rb)
        plain = time.perf_counter() - t
        prof = decode_share(log / "bench-0")
        from kafkalog_cli.format import vectorized as fastdecode

        return {**prof, "numpy": fastdecode.AVAILABLE, "export_rows": best.rows, "export_s": round(best.seconds, 3),
                "export_rows_per_s": round(best.records_per_second),
                "input_bytes": best.input_bytes, "plain_write_s": round(plain, 3),
                "plain_rows_per_s": round(table.num_rows / plain)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def decode_share(part_dir: Path) -> dict:
    """Share of the local read's CPU time spent decoding records (the rows layer's group
    path, ``format/vectorized.py``, or its list path, ``decode_records_into``), measured
    with cProfile on one partition."""
    import cProfile
    import pstats

    from kafkalog_cli.spark import plan
    from kafkalog_cli.spark.rows import read_slices

    opts = plan.parse_options({"minPartitions": "1"})
    splits, _ = plan.plan_slices(plan.discover([str(part_dir)]), opts)
    prof = cProfile.Profile()
    prof.enable()
    for sp in splits:
        for _ in read_slices(sp, opts):
            pass
    prof.disable()
    st = pstats.Stats(prof)
    total = st.total_tt
    # cumulative time of the decode entry points (none calls another): the group path's
    # length scan and vectorised decode, the list path's loop, legacy/control records()
    # (the record loop is rendered from format/records.py's template, under its own name)
    entry = {("vectorized.py", "scan_lengths"), ("vectorized.py", "decode_group"),
             ("<kafkalog_cli.format.record._DECODE_LOOP:_decode_block_into>",
              "_decode_block_into"), ("records.py", "records")}
    decode = sum(v[3] for k, v in st.stats.items()
                 if (os.path.basename(k[0]), k[2]) in entry)
    return {"decode_share": round(decode / total, 3) if total else 0.0}


def _sub(arg: str) -> dict:
    p = subprocess.run([sys.executable, __file__, "--one", arg], capture_output=True,
                       text=True, cwd=ROOT)
    if p.returncode:
        sys.stderr.write(p.stderr)
        raise SystemExit(f"benchmark step {arg} failed")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", help="run one master (or 'local': the local engine) in this "
                                  "process and print JSON")
    ap.add_argument("--kafkalog", type=Path, default=ROOT,
                    help="with --one: the checkout whose kafkalog_cli the driver and the "
                         "Python workers import (default: this one)")
    ap.add_argument("--sources", default="trivial,kafkalog",
                    help="with --one: comma list of " + ",".join(SOURCES))
    ap.add_argument("--rounds", type=int, default=ROUNDS,
                    help=f"with --one: timed rounds after the warm-up (default {ROUNDS})")
    ap.add_argument("--read-cpu", action="store_true",
                    help="with --one: also the CPU time of kafkalog's read() in process")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--runs", type=int, default=2,
                    help="alternating local[1]/local[2] processes (default 2)")
    a = ap.parse_args()
    if a.one:
        if a.one == "local":
            print(json.dumps(run_local()))
            return
        root = a.kafkalog.resolve()
        sys.path.insert(0, str(root))
        sources = tuple(x for x in a.sources.split(",") if x)
        unknown = set(sources) - set(SOURCES)
        if unknown:
            ap.error(f"unknown sources: {', '.join(sorted(unknown))}")
        print(json.dumps(run_master(a.one, sources, a.rounds, root, a.read_cpu)))
        return
    t0 = time.perf_counter()
    generate()
    gen_s = time.perf_counter() - t0
    local = _sub("local")
    # the two masters in alternating processes, best of --runs each: the shared machine's
    # load drifts over minutes, and this keeps a quiet or busy spell from favouring one
    runs: dict[str, list[dict]] = {"local[1]": [], "local[2]": []}
    for _ in range(a.runs):
        for master in runs:
            runs[master].append(_sub(master))
    m1, m2 = (max(runs[m], key=lambda r: r["kafkalog_rows_per_s"]) for m in runs)
    all_speedups = sorted(r2["kafkalog_rows_per_s"] / r1["kafkalog_rows_per_s"]
                          for r1, r2 in zip(runs["local[1]"], runs["local[2]"], strict=True))
    ratio1 = m1["kafkalog_rows_per_s"] / m1["trivial_rows_per_s"]
    ratio2 = m2["kafkalog_rows_per_s"] / m2["trivial_rows_per_s"]
    speedup = m2["kafkalog_rows_per_s"] / m1["kafkalog_rows_per_s"]
    trivial_speedup = m2["trivial_rows_per_s"] / m1["trivial_rows_per_s"]
    load = os.getloadavg()
    cpu_rows = "\n".join(
        f"| {m['master']} | {name} | {m[name + '_jvm_cpu_s']} | {m[name + '_py_cpu_s']} | "
        f"{m[name + '_jvm_cpu_s'] / m[name + '_rows'] * 1e9:.0f} | {m[name + '_cores_used']} |"
        for m in (m1, m2) for name in ("trivial", "kafkalog"))
    jvm_ns = m1["kafkalog_jvm_cpu_s"] / m1["kafkalog_rows"] * 1e9
    md = f"""# Spark benchmark (`benchmarks/spark_bench.py`)

Machine: {os.cpu_count()} cores, Python {platform.python_version()}, load average during the
run {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f} (other work shared the machine; figures vary
by +-50% between runs). Data: {local['export_rows']:,} records of {VALUE} B values and 8 B
keys, {PARTITIONS} partitions x {SEGMENTS} segments, {local['input_bytes'] / 1e6:.0f} MB of
`.log` (generated in {gen_s:.1f} s, cached in `benchmarks/data/spark/`).

## Spark `count()` (best of {ROUNDS} after a warm-up, sources in turn; {MIN_PARTITIONS} input partitions)

| master | trivial Arrow source | kafkalog source | kafkalog / trivial | first query (kafkalog) |
|---|---:|---:|---:|---:|
| local[1] | {m1['trivial_rows_per_s']:,} rows/s ({m1['trivial_best_s']} s) | {m1['kafkalog_rows_per_s']:,} rows/s ({m1['kafkalog_best_s']} s) | **{ratio1:.2f}** | {m1['kafkalog_first_s']} s |
| local[2] | {m2['trivial_rows_per_s']:,} rows/s ({m2['trivial_best_s']} s) | {m2['kafkalog_rows_per_s']:,} rows/s ({m2['kafkalog_best_s']} s) | **{ratio2:.2f}** | {m2['kafkalog_first_s']} s |

- kafkalog local[2] / local[1] speed-up: **{speedup:.2f}x** (trivial source: {trivial_speedup:.2f}x)
- session start: local[1] {m1['session_start_s']} s, local[2] {m2['session_start_s']} s

Where the CPU goes (the best query of each; from /proc: the Spark JVM's threads, and the
Python workers the JVM forks):

| master | source | JVM CPU s | Python workers CPU s | JVM ns/row | cores in use |
|---|---|---:|---:|---:|---:|
{cpu_rows}

Each Spark task of a Python data source is a pipeline of two processes: the Python worker
decodes and sends Arrow batches while the task's JVM thread reads them and turns them
into rows (about {jvm_ns:.0f} ns of JVM CPU per row here, for either source). So local[1]
already keeps {m1['kafkalog_cores_used']} cores busy, not 1, and on this {os.cpu_count()}-core machine the
room left for local[2] is what the second task can add to that. Speed-up of each
local[1]/local[2] pair of processes, run one after the other: {', '.join(f'{x:.2f}x' for x in all_speedups)}.

## Local engine

| what | rows/s | time |
|---|---:|---:|
| `export --engine local` to Parquet (decode + write, one process) | **{local['export_rows_per_s']:,}** | {local['export_s']} s |
| plain pyarrow `ParquetWriter` of the same rows already in memory | {local['plain_rows_per_s']:,} | {local['plain_write_s']} s |

Where the local read's CPU time goes (cProfile, one partition): **{local['decode_share']:.0%}**
decoding records: the rows layer's group path (`format/vectorized.py`: a Python walk of
the record lengths, then numpy over the whole group and pyarrow `take` for keys and
values), or its list path (`format/records.py` `decode_records_into`) for batches not in
the common shape (headers, varints of 3+ bytes, legacy, corrupt). The rest is CRC checks,
batch iteration and Arrow batch building in `kafkalog_cli/spark/rows.py`. numpy
available: {local['numpy']}.

## Targets

| target | measured | met |
|---|---:|---|
| kafkalog / trivial >= 0.6 (local[2]) | {ratio2:.2f} | {'yes' if ratio2 >= 0.6 else 'no'} |
| local[2] / local[1] >= 1.6x | {speedup:.2f}x | {'yes' if speedup >= 1.6 else 'no'} |
| export local >= 0.5 M records/s | {local['export_rows_per_s'] / 1e6:.2f} M/s | {'yes' if local['export_rows_per_s'] >= 500_000 else 'no'} |

Raw: `{json.dumps({"local": local, "local[1]": m1, "local[2]": m2})}`
"""
    print(md)
    if not a.no_save:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(md)


if __name__ == "__main__":
    main()
