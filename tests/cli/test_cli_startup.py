"""Start-up: a command imports what it uses and nothing heavy besides.

Behaviour, not timing: a command run on a tiny fixture in a fresh interpreter must leave
pydantic (Typer's value converter), rich (terminal views), pyarrow, pyspark, numpy, the
compression codecs, construct (the schemas' declarations), the crc32c package's own import
(importlib.metadata; kafkalog_cli.crc loads its extension alone), jsonschema, the server,
the Spark modules, the internal-topic decoders and the other commands' modules out of
``sys.modules``; the read-only commands also logging, hashlib and the append side of the
storage layer. Each of these was once imported at start-up, costing from ~2 ms to
~0.15 s of CPU; a module-level import that brings one back fails here instead of
silently slowing every command. And the pydantic-free option converter
(``cli/coercion.py``) must give every option of every command the value, or the error,
Typer's own converter gives.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from kafkalog_cli.cli import COMMANDS
from kafkalog_cli.cli.app import app
from kafkalog_cli.format import builder

ROOT = Path(__file__).resolve().parents[2]
PLAIN = "fixtures/logs/plain-0"
SEGMENT = f"{PLAIN}/00000000000000000000.log"

HEAVY = ("pydantic", "pydantic_core", "rich", "pyarrow", "pyspark", "numpy", "zstandard",
         "lz4", "cramjam", "snappy", "typer._adapters", "kafkalog_cli.decoders",
         "kafkalog_cli.cli.app", "construct", "crc32c", "importlib.metadata", "jsonschema",
         "kafkalog_cli.server", "kafkalog_cli.protocol", "kafkalog_cli.spark")
#: what a command that writes nothing does not need either
READ_ONLY = ("logging", "hashlib", "kafkalog_cli.format.builder", "kafkalog_cli.storage.config",
             "kafkalog_cli.storage.roll", "kafkalog_cli.storage.validator")
#: what a command needs of the above: audit discovers partitions as export does
NEEDED = {"audit": {"kafkalog_cli.spark", "kafkalog_cli.spark.plan"}}


def _loaded(modules: set[str], names) -> list[str]:
    return sorted(m for m in modules for h in names if m == h or m.startswith(h + "."))

PROBE = """
import contextlib, io, json, sys
from kafkalog_cli.cli import main
out = io.StringIO()
code = 0
try:
    with contextlib.redirect_stdout(out):
        main()   # as the console script: the arguments from sys.argv, the process its own
except SystemExit as e:
    code = e.code or 0
# loaded modules only: a None entry is a module kept out (``import`` of it raises)
print(json.dumps({"code": code, "modules": sorted(m for m, v in sys.modules.items()
                                                  if v is not None)}))
"""


def _modules_after(*args: str, probe: str = PROBE) -> tuple[int, set[str]]:
    p = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True,
                       cwd=ROOT, check=True)
    got = json.loads(p.stdout.strip().splitlines()[-1])
    return got["code"], set(got["modules"])


@pytest.mark.parametrize("args", [
    ("verify-index", "-o", "json", PLAIN),
    ("verify-index", PLAIN),  # piped: JSON by default, no rich
    ("dump-segment", "-o", "json", SEGMENT),
    ("dump-segment", "-o", "kafka", SEGMENT),
    ("dump-segment", "--print-data-log", "-o", "kafka", SEGMENT),
    ("dump-segment", "--print-data-log", "-o", "json", SEGMENT),
    ("describe", "-o", "json", PLAIN),
    ("read", "-o", "json", PLAIN),
    ("audit", "-o", "json", PLAIN),
    ("recover", "-o", "json", PLAIN),
], ids=lambda a: " ".join(a[:3]))
def test_a_command_on_a_tiny_fixture_imports_nothing_heavy(args):
    code, modules = _modules_after(*args)
    assert code in (0, 1)
    heavy = set(_loaded(modules, HEAVY + READ_ONLY)) - NEEDED.get(args[0], set())
    assert sorted(heavy) == []
    # only the command that runs is registered
    others = {f"kafkalog_cli.cli.commands.{m}" for n, m in COMMANDS.items() if n != args[0]}
    if args[0] != "audit":  # audit shares export's options
        assert not others & modules


#: the storage modules a command reading a .log does not need, kept out of its start-up
#: (imported by the functions that read those files; each costs dataclasses built at
#: import): the producer state and its snapshots, the indexes, the recovery scan
SEGMENT_EXTRAS = ("kafkalog_cli.storage.producer_state", "kafkalog_cli.schema.producer_snapshot",
                  "kafkalog_cli.storage.offset_index", "kafkalog_cli.storage.time_index",
                  "kafkalog_cli.storage.txn_index", "kafkalog_cli.schema.txn_index",
                  "kafkalog_cli.storage.recovery_scan")


@pytest.mark.parametrize("args, used", [
    (("dump-segment", "-o", "kafka", SEGMENT), ()),
    (("dump-segment", "--print-data-log", "-o", "json", SEGMENT), ()),
    (("describe", "-o", "json", PLAIN), ()),
    # a read seeks through the indexes; read_uncommitted needs no producer state
    (("read", "-o", "json", PLAIN), ("kafkalog_cli.storage.offset_index",
                                     "kafkalog_cli.storage.time_index")),
], ids=["dump-segment -o kafka", "dump-segment -o json", "describe", "read"])
def test_a_log_read_leaves_the_other_segment_files_modules_out(args, used):
    code, modules = _modules_after(*args)
    assert code == 0
    assert _loaded(modules, SEGMENT_EXTRAS) == sorted(used)


def test_produce_imports_nothing_heavy(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("a\nb\n")
    code, modules = _modules_after("produce", "--log-dir", str(tmp_path / "d"), "--topic",
                                   "t", str(src), "-o", "json")
    assert code == 0
    assert _loaded(modules, HEAVY + ("logging", "hashlib")) == []
    # the compiled encoder needs none of the pure-Python encoder's tables (~8 ms to build)
    assert ("kafkalog_cli.format.encoder" in modules) == (not builder.SPEEDUPS)


def test_export_json_imports_no_rich(tmp_path):
    """export needs pyarrow (and numpy with it, without the compiled core) but, with
    -o json, no terminal views."""
    pytest.importorskip("pyarrow")
    code, modules = _modules_after("export", "--engine", "local", "--to",
                                   str(tmp_path / "out"), PLAIN, "-o", "json")
    assert code == 0 and "pyarrow" in modules
    assert _loaded(modules, ("rich", "pydantic", "pyspark", "numpy.ma")) == []
    # pyarrow imports cloudpickle when it is installed (~15 ms of CPU, issue 28); the
    # local export pickles nothing, and pyarrow takes the standard pickle without it;
    # logging is imported by the read's first skipped batch, not up front
    assert _loaded(modules, ("cloudpickle", "logging")) == []


@pytest.mark.parametrize("starting", [None, 2])
def test_export_keeps_numpy_out_with_the_compiled_core(tmp_path, starting):
    """pyarrow runs without numpy, and the compiled core decodes into Arrow buffers
    without it: the CLI's local export leaves numpy unimported (its import is ~50 ms of
    CPU, a fifth of a small export) and writes the rows an export with numpy writes;
    a starting offset inside a batch (2: the first batch holds 0-2) keeps its records
    from that offset, as a Kafka consumer's fetch position does."""
    pq = pytest.importorskip("pyarrow.parquet")
    from kafkalog_cli.format import compiled
    from kafkalog_cli.ops.export import export

    extra = () if starting is None else (
        "--starting-offsets", json.dumps({"plain": {"0": starting}}))
    code, modules = _modules_after("export", "--engine", "local", "--to",
                                   str(tmp_path / "cli"), PLAIN, "-o", "json", *extra)
    assert code == 0 and "pyarrow" in modules
    assert ("numpy" in modules) == (compiled._c is None)
    # a host's process keeps its numpy: the library call, and main(argv) in process
    options = {} if starting is None else {"startingOffsets": extra[1]}
    export([str(ROOT / PLAIN)], str(tmp_path / "lib"), engine="local", options=options)
    assert sys.modules.get("numpy") is not None
    code, modules = _modules_after("export", "--engine", "local", "--to",
                                   str(tmp_path / "host"), PLAIN, "-o", "json", *extra,
                                   probe=PROBE.replace("main()", "main(sys.argv[1:])"))
    assert code == 0 and "numpy" in modules
    cli = pq.read_table(tmp_path / "cli")
    assert cli.equals(pq.read_table(tmp_path / "lib"))
    export([str(ROOT / PLAIN)], str(tmp_path / "all"), engine="local")
    offsets = cli.column("offset").to_pylist()
    assert offsets == [o for o in pq.read_table(tmp_path / "all").column("offset").to_pylist()
                       if starting is None or o >= starting]
    assert offsets[0] == (starting or 0) and len(offsets) > 3


ALLOCATOR_ENV = """
import os, sys
from kafkalog_cli.cli import main
try:
    main(["verify-index", "-o", "json", sys.argv[1]])
except SystemExit:
    pass
print(os.environ.get("OPENBLAS_NUM_THREADS"), os.environ.get("MIMALLOC_ARENA_EAGER_COMMIT"),
      os.environ.get("MIMALLOC_PURGE_DELAY"))
"""


@pytest.mark.parametrize("given", [None, "4"])
def test_cli_sets_blas_threads_and_arena_commit_unless_told(given):
    """numpy's OpenBLAS threads spin-wait after start-up (CPU for nothing: kafkalog does
    no linear algebra), and pyarrow's mimalloc commits its arena as huge pages zeroed
    whole, and keeps freed pages 10 ms (a freed Arrow batch resident beside the next:
    export's anonymous RSS over 64 MiB, issue 28): the CLI asks for one BLAS thread,
    on-demand commits and freed pages given back at once, unless the user chose."""
    import os

    names = ("OPENBLAS_NUM_THREADS", "MIMALLOC_ARENA_EAGER_COMMIT", "MIMALLOC_PURGE_DELAY")
    env = {k: v for k, v in os.environ.items() if k not in names}
    if given:
        env.update(dict.fromkeys(names, given))
    p = subprocess.run([sys.executable, "-c", ALLOCATOR_ENV, PLAIN], capture_output=True,
                       text=True, cwd=ROOT, env=env, check=True)
    assert p.stdout.strip().splitlines()[-1].split() == (
        [given] * 3 if given else ["1", "0", "0"])


def test_the_dispatch_table_names_every_command():
    assert set(COMMANDS) == set(typer.main.get_command(app).commands)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_module_registers_its_command(name):
    code = ("import sys, typer.main\n"
            "from importlib import import_module\n"
            "from kafkalog_cli.cli import COMMANDS\n"
            "from kafkalog_cli.cli.root import app\n"
            f"import_module('kafkalog_cli.cli.commands.' + COMMANDS[{name!r}])\n"
            "print(' '.join(typer.main.get_command(app).commands))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=ROOT, check=True)
    assert name in p.stdout.split()


# -- the pydantic-free converter gives Typer's values and errors ----------------------------

SAMPLES = ["0", "1", "-1", "+5", "012", "1_000", " 7", "7 ", "1.5", "1e3", "", "x", "-",
           "2147483647", "2147483648", "9223372036854775807", "9223372036854775808",
           "json", "JSON", "text", "kafka", "none", "gzip", "utf8", "base64", "earliest",
           "a/b/", "./x", "read_committed", "local", "auto", "parquet"]


def _outcome(runtime, value, param, ctx):
    try:
        got = runtime._coerce_value(value, param=param, ctx=ctx)
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return ("error", type(e).__name__, str(e))
    return ("value", type(got).__name__, got)


def _params():
    cmd = typer.main.get_command(app)
    for name, sub in sorted(cmd.commands.items()):
        for p in sub.params:
            if hasattr(p, "type_descriptor"):
                yield name, sub, p


@pytest.mark.skipif(not hasattr(typer.main, "get_command"), reason="no Typer command model")
def test_plain_converter_matches_typers_on_every_option():
    _coercion = pytest.importorskip("typer._coercion")
    if not hasattr(_coercion, "build_runtime_param"):
        pytest.skip("this Typer converts through click (no pydantic)")
    checked = 0
    for name, sub, p in _params():
        ctx = sub.make_context(name, [], resilient_parsing=True)
        p._runtime_param = None
        ours = p.get_runtime_param()
        theirs = _coercion.build_runtime_param(p.type_descriptor)
        multi = p.multiple or p.nargs == -1
        for s in SAMPLES:
            value = (s,) if multi else s
            assert _outcome(ours, value, p, ctx) == _outcome(theirs, value, p, ctx), \
                (name, p.name, s)
            checked += 1
    assert checked > 500


#: PROBE without json (the module list printed as a Python literal): for what json loads
PROBE_NO_JSON = PROBE.replace("import contextlib, io, json, sys", "import contextlib, io, sys") \
    .replace('print(json.dumps({"code": code, "modules": sorted(',
             'print(repr({"code": code, "modules": sorted(')


def test_dump_segment_kafka_text_loads_only_what_a_log_dump_needs():
    """dump-segment -o kafka of a .log: no json package (only -o json and decoded
    records use it), no index/snapshot/.txnindex dumps, no control-record names (a
    control batch's records import them)."""
    import ast

    p = subprocess.run([sys.executable, "-c", PROBE_NO_JSON, "dump-segment",
                        "--print-data-log", "-o", "kafka", SEGMENT],
                       capture_output=True, text=True, cwd=ROOT, check=True)
    got = ast.literal_eval(p.stdout.strip().splitlines()[-1])
    assert got["code"] == 0
    assert _loaded(set(got["modules"]), ("json", "kafkalog_cli.ops.dump_indexes",
                                         "kafkalog_cli.schema.control")) == []
