#!/usr/bin/env python3
"""Schema Registry decoding benchmark: ``read --value-decoder schema-registry -o json`` and
``export --value-decoder schema-registry`` (local engine, Parquet) against fastavro's own
decode loop over the same payloads (issue 31's target: within 1.5x).

Data (built deterministically into ``benchmarks/data/registry/``, gitignored): one
partition of ``--records`` (50,000) Avro records of ~1 KB each (a flat record of 24
fields: strings, longs, doubles, a nullable union, an enum, an array of strings), framed
in Schema Registry's wire format (id 1), 100 records a batch, and a ``_schemas``
partition holding the schema, as the registry writes it.

Timed, CPU seconds of this process (``time.process_time``), in-process:

* ``fastavro``: ``schemaless_reader(BytesIO(payload), schema)`` for every payload (the
  frames already in memory: the decode alone);
* ``read -o json``: ``ops.read.read(..., registry=...)`` rendered by
  ``render.read.write_json`` into /dev/null (the log read, the decode, Avro's JSON
  encoding, the JSON lines);
* ``export``: ``ops.export.export(..., engine="local")`` with ``valueDecoder`` into a
  temporary directory (the log read, the decode, the typed Arrow column, Parquet).

One warm-up each, then ``--rounds`` (3) rounds in which each runs once in turn; the best
round counts. The ratio is kafkalog's CPU time over fastavro's.

Usage::

    python benchmarks/registry_bench.py [--records 50000] [--rounds 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

DATA = HERE / "data" / "registry"

SCHEMA = {"type": "record", "name": "Event", "namespace": "bench", "fields": [
    *({"name": f"s{i}", "type": "string"} for i in range(10)),
    *({"name": f"n{i}", "type": "long"} for i in range(6)),
    *({"name": f"d{i}", "type": "double"} for i in range(4)),
    {"name": "opt", "type": ["null", "string"], "default": None},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "flag", "type": "boolean"},
]}


def datum(i: int) -> dict:
    d = {f"s{k}": f"value-{k}-{i:08d}-" + "x" * 70 for k in range(10)}
    d.update({f"n{k}": i * (k + 1) for k in range(6)})
    d.update({f"d{k}": i / (k + 3) for k in range(4)})
    d.update(opt=None if i % 2 else f"o{i}", kind="ABC"[i % 3],
             tags=[f"t{i % 7}", "tag"], flag=bool(i % 2))
    return d


def build(n: int) -> tuple[Path, list[bytes]]:
    """The log directory (built once per ``n``) and the framed payloads."""
    import fastavro

    from kafkalog_cli.format.builder import build_batch
    from kafkalog_cli.registry.records import SchemaValue, schema_key_bytes, schema_value_bytes

    parsed = fastavro.parse_schema(SCHEMA)
    values = []
    for i in range(n):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, datum(i))
        values.append(b"\x00\x00\x00\x00\x01" + buf.getvalue())
    log = DATA / f"n{n}"
    stamp = log / "built"
    if not stamp.exists():
        shutil.rmtree(log, ignore_errors=True)
        part = log / "events-0"
        part.mkdir(parents=True)
        with open(part / "00000000000000000000.log", "wb") as f:
            for base in range(0, n, 100):
                f.write(build_batch([(1_700_000_000_000, None, v, ())
                                     for v in values[base:base + 100]], base_offset=base))
        sp = log / "_schemas-0"
        sp.mkdir()
        sv = SchemaValue("events-value", 1, 1, json.dumps(SCHEMA))
        (sp / "00000000000000000000.log").write_bytes(build_batch(
            [(1_700_000_000_000, schema_key_bytes("events-value", 1),
              schema_value_bytes(sv), ())]))
        stamp.write_text("ok")
    return log, values


def run_fastavro(values: list[bytes]) -> int:
    import fastavro

    parsed = fastavro.parse_schema(SCHEMA)
    reader = fastavro.schemaless_reader
    n = 0
    for v in values:
        reader(io.BytesIO(v[5:]), parsed)
        n += 1
    return n


def run_read(log: Path) -> int:
    from kafkalog_cli.ops.read import read
    from kafkalog_cli.registry.decoder import SchemaRegistryOptions
    from kafkalog_cli.render.read import write_json

    reg = SchemaRegistryOptions(value_decoder="schema-registry")
    res = read(log, topic="events", partition=0, registry=reg)
    with open(os.devnull, "w") as out:
        n = write_json(res.records, out=out)
    res.close()
    assert not res.problems, res.problems
    return n


def run_export(log: Path) -> int:
    from kafkalog_cli.ops.export import export

    out = Path(tempfile.mkdtemp(prefix="kl-registry-bench-"))
    try:
        r = export([str(log)], str(out / "x"), engine="local",
                   options={"valueDecoder": "schema-registry", "subscribe": "events"})
        assert r.ok and not r.undecoded_records, r.to_dict()
        return r.rows
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    log, values = build(args.records)
    size = sum(map(len, values)) / len(values)
    jobs = {"fastavro": lambda: run_fastavro(values), "read -o json": lambda: run_read(log),
            "export": lambda: run_export(log)}
    best = {k: float("inf") for k in jobs}
    for k, job in jobs.items():  # warm-up (imports, schema parse, page cache)
        assert job() == args.records, k
    for _ in range(args.rounds):
        for k, job in jobs.items():
            gc.collect()
            t0 = time.process_time()
            job()
            best[k] = min(best[k], time.process_time() - t0)
    load = os.getloadavg()[0]
    lines = [f"Schema Registry decoding: {args.records:,} Avro records of {size:.0f} bytes "
             f"(CPU seconds, best of {args.rounds}; load average {load:.1f})", "",
             "| job | CPU s | records/s | x fastavro (target <= 1.5) |",
             "|---|---:|---:|---:|"]
    for k, t in best.items():
        lines.append(f"| {k} | {t:.3f} | {args.records / t:,.0f} | "
                     f"{t / best['fastavro']:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
