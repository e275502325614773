"""kafkalog on a real Spark cluster: a standalone master and two workers on 127.0.0.1
(separate JVMs, executors whose working directory is not the driver's), each driver a
process of its own, as a user runs ``kafkalog export --master spark://...`` or a script.

Every figure is checked against the local engine (one process, no Spark) on the same
data: the rows, the counts of what was skipped, the audit rows. Slow (a Spark
application starts in 10-30 s here); the cluster is shared by the session.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from spark_fixtures import REPO, T0, arrow_rows, build_log_dir, reference_rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]

HERE = Path(__file__).resolve().parent


# -- helpers -----------------------------------------------------------------------------------

def _driver_env(root: Path, *, defaults: str = "", **extra) -> dict:
    """The environment of a driver process: this checkout importable, Spark's temporary
    files and Python's in ``root`` (so the test sees what a run leaves behind), executors
    of 512m (spark-defaults.conf in SPARK_CONF_DIR, as a user configures spark-submit)."""
    conf = root / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "spark-defaults.conf").write_text(
        "spark.executor.memory 512m\nspark.executor.cores 1\n" + defaults)
    for d in ("tmp", "local"):
        (root / d).mkdir(exist_ok=True)
    env = dict(os.environ)
    env.pop("SPARK_MASTER", None)
    env.update({"PYTHONPATH": str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
                "SPARK_CONF_DIR": str(conf), "TMPDIR": str(root / "tmp"),
                "SPARK_LOCAL_DIRS": str(root / "local"), "SPARK_LOCAL_IP": "127.0.0.1",
                "PYSPARK_PYTHON": sys.executable})
    env.update(extra)
    return env


def _run(args: list[str], env: dict, cwd: Path, timeout: float = 420
         ) -> subprocess.CompletedProcess:
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def _kafkalog(*args: str) -> list[str]:
    return [sys.executable, "-m", "kafkalog_cli", *args]


def _read_export(out: Path):
    import pyarrow as pa
    import pyarrow.dataset as ds

    part = ds.partitioning(pa.schema([("topic", pa.string()), ("partition", pa.int32())]),
                           flavor="hive")
    return ds.dataset(str(out), format="parquet", partitioning=part).to_table()


def _left_behind(root: Path) -> list[Path]:
    """kafkalog's own leftovers of a driver run: shipped package zips, staging dirs."""
    return sorted(p for pat in ("kafkalog-pyfiles-*", ".kafkalog-staging-*")
                  for p in root.rglob(pat))


def _corrupt_one_batch(part_dir: Path) -> tuple[Path, int]:
    from kafkalog_cli.format.records import FileRecords

    log = sorted(part_dir.glob("*.log"))[1]
    data = bytearray(log.read_bytes())
    pos = list(FileRecords(bytes(data)).batches())[3].position
    data[pos + 70] ^= 0xFF
    log.write_bytes(bytes(data))
    return log, pos


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    return build_log_dir(tmp_path_factory.mktemp("cluster-logs"))


# -- export and audit through the CLI ------------------------------------------------------------

def test_export_on_the_cluster_equals_the_local_engine(cluster, logs, tmp_path):
    """``kafkalog export --master spark://...``: the rows and every count (corrupt batches
    skipped, records of aborted transactions, offsets below the log start) equal the
    local engine's, though the tasks ran in executors on other JVMs (the counts travel
    through Spark, not through the driver's disk), and the driver leaves nothing
    behind."""
    from kafkalog_cli.ops.export import export

    data = tmp_path / "kafka-logs"
    shutil.copytree(logs, data)
    _corrupt_one_batch(data / "orders-1")
    options = {"failOnDataLoss": "false", "isolationLevel": "read_committed",
               "startingOffsets": json.dumps({"orders": {"2": 5}})}
    (data / "log-start-offset-checkpoint").write_text("0\n1\norders 2 9\n")
    local = export([str(data)], tmp_path / "local", engine="local", options=options).to_dict()
    assert local["corruptBatches"] == 1 and local["abortedRecords"] > 0
    assert local["lostOffsets"] == 4

    drv = tmp_path / "driver"
    r = _run(_kafkalog("export", str(data), "--to", str(tmp_path / "cluster"),
                       "--master", cluster.master, "--skip-corrupt",
                       "--isolation-level", "read_committed",
                       "--starting-offsets", options["startingOffsets"], "-o", "json"),
             _driver_env(drv), cwd=tmp_path)
    assert r.returncode == 1, r.stderr[-3000:]          # findings: a batch was skipped
    remote = json.loads(r.stdout)
    assert remote["engine"] == "spark"
    for k in ("records", "partitions", "corruptBatches", "partialTailBytes",
              "abortedRecords", "lostOffsets", "inputBytes"):
        assert remote[k] == local[k], k
    assert sorted(map(json.dumps, remote["skipped"])) == sorted(map(json.dumps,
                                                                    local["skipped"]))
    assert arrow_rows(_read_export(tmp_path / "cluster")) == arrow_rows(
        _read_export(tmp_path / "local"))
    assert cluster.executor_dirs(), "no executor ran"
    assert _left_behind(drv) == []


def test_audit_on_the_cluster_equals_the_local_engine(cluster, logs, tmp_path):
    from kafkalog_cli.ops.audit import audit

    data = tmp_path / "kafka-logs"
    shutil.copytree(logs, data)
    _corrupt_one_batch(data / "orders-0")
    local = audit([str(data)], engine="local").to_dict()
    drv = tmp_path / "driver"
    r = _run(_kafkalog("audit", "kafka-logs", "--master", cluster.master, "-o", "json"),
             _driver_env(drv), cwd=tmp_path)      # a relative path, as a user types it
    assert r.returncode == 1, r.stderr[-3000:]    # orders-0 has a corrupt batch
    remote = json.loads(r.stdout)
    assert remote["engine"] == "spark" and local["engine"] == "local"
    assert remote["partitions"] == local["partitions"]
    assert _left_behind(drv) == []


# -- the data source with relative paths, reading and writing ----------------------------------

def test_source_and_writer_with_relative_paths(cluster, logs, tmp_path):
    """``load("in/kafka-logs")`` and ``save("out-logs")`` mean the driver's directory, as
    for Spark's file sources: the executors (whose working directory is the worker's)
    read and stage there; the rows equal the library's decode, the written partitions
    hold the same records with dense offsets, no staging directory is left anywhere, and
    the skip counts come back through the statistics accumulator."""
    from kafkalog_cli.ops.verify import verify_index

    cwd = tmp_path / "cwd"
    shutil.copytree(logs, cwd / "in" / "kafka-logs")
    shutil.copytree(logs / "orders-1", cwd / "bad" / "orders-1")
    _corrupt_one_batch(cwd / "bad" / "orders-1")
    (cwd / "out-logs").mkdir()
    spec = {"read": ["in/kafka-logs"], "rows_out": str(tmp_path / "rows.parquet"),
            "write_to": "out-logs", "skip_corrupt": ["bad/orders-1"],
            "conf": cluster.app_conf()}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    drv = tmp_path / "driver"
    r = _run([sys.executable, str(HERE / "cluster_app.py"), cluster.master,
              str(tmp_path / "spec.json")], _driver_env(drv), cwd=cwd)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["defaultParallelism"] == 2                # two executors, one core each

    import pyarrow.parquet as pq

    dirs = sorted(p for p in (cwd / "in" / "kafka-logs").iterdir() if p.is_dir())
    want = reference_rows(dirs)
    assert arrow_rows(pq.read_table(tmp_path / "rows.parquet")) == want

    written = reference_rows(sorted(p for p in (cwd / "out-logs").iterdir() if p.is_dir()))
    strip = sorted(((t, p, ts, k, v, h) for t, p, _, ts, k, v, h in want), key=repr)
    assert sorted(((t, p, ts, k, v, h) for t, p, _, ts, k, v, h in written),
                  key=repr) == strip
    for t, p in {(r[0], r[1]) for r in written}:
        assert [r[2] for r in written if (r[0], r[1]) == (t, p)] == list(
            range(sum(1 for r in written if (r[0], r[1]) == (t, p))))
    assert verify_index([cwd / "out-logs"]).ok
    assert _left_behind(cwd) == [] and _left_behind(drv) == []
    assert not [p for w in cluster.work_dirs for p in w.rglob(".kafkalog-staging-*")]

    # failOnDataLoss=false on the cluster: counted as the local read counts
    from kafkalog_cli.spark import plan, rows

    o = plan.parse_options({"failOnDataLoss": "false"})
    st = rows.ReadStats()
    n = sum(rb.num_rows for sp in plan.plan_slices(
        plan.discover([str(cwd / "bad" / "orders-1")]), o)[0] for rb in rows.read_slices(
            sp, o, st))
    stats = got["skip_corrupt"]["stats"]
    assert got["skip_corrupt"]["count"] == stats["rows"] == n
    assert (stats["corrupt_batches"], stats["corrupt_bytes"]) == (st.corrupt_batches,
                                                                  st.corrupt_bytes) == (
        1, st.corrupt_bytes)
    assert [s["position"] for s in stats["skipped"]] == [s["position"] for s in st.skipped]


# -- a worker killed mid-export ------------------------------------------------------------------

def _big_log_dir(root: Path, partitions: int = 6, records: int = 60_000) -> Path:
    """``partitions`` x ``records`` records of ~100 B, 2 segments each (enough work for
    several tasks per executor)."""
    from kafkalog_cli.format.builder import build_batch
    from kafkalog_cli.storage.segment import rebuild_indexes

    log = root / "big-logs"
    filler = bytes(range(256)) * 2
    for p in range(partitions):
        d = log / f"big-{p}"
        d.mkdir(parents=True)
        half = records // 2
        for base in (0, half):
            batches = []
            for o in range(base, base + half, 500):
                batches.append(build_batch(
                    [(T0 + i, b"k%07d" % i, filler[i % 256:i % 256 + 100], ())
                     for i in range(o, o + 500)], base_offset=o))
            data = b"".join(batches)
            prefix = d / f"{base:020d}"
            prefix.with_suffix(".log").write_bytes(data)
            rebuilt = rebuild_indexes(data, base, 4096)
            prefix.with_suffix(".index").write_bytes(rebuilt.offset_index_bytes(base))
            prefix.with_suffix(".timeindex").write_bytes(rebuilt.time_index_bytes(base))
    return log


def test_a_worker_killed_mid_export_changes_nothing(cluster, tmp_path):
    """``kill -9`` of a worker (and its executor) while ``export`` runs: Spark runs the
    lost tasks again on the other executor; the output holds every record exactly once
    and the count reported (merged from successful tasks only) is exact."""
    data = _big_log_dir(tmp_path)
    from kafkalog_cli.ops.export import export

    local = export([str(data)], tmp_path / "local", engine="local")
    out = tmp_path / "cluster"
    drv = tmp_path / "driver"
    proc = subprocess.Popen(
        _kafkalog("export", str(data), "--to", str(out), "--master", cluster.master,
                  "-o", "json"), env=_driver_env(drv), cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = False
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            # the first task's committed output: the job is under way
            if list(out.glob("_temporary/*/task_*/**/*.parquet")) or list(
                    out.glob("_temporary/*/*/task_*/**/*.parquet")):
                cluster.kill_worker(0)
                killed = True
                break
            time.sleep(0.05)
        stdout, stderr = proc.communicate(timeout=400)
    finally:
        if proc.poll() is None:
            proc.kill()
        cluster.start_worker(0)       # the next tests get both workers back
    assert killed, "the export ended before a worker could be killed"
    assert proc.returncode == 0, stderr[-3000:]
    remote = json.loads(stdout)
    assert remote["records"] == local.rows == 360_000
    got = arrow_rows(_read_export(out))
    assert len(got) == len(set(got)) == 360_000
    assert got == arrow_rows(_read_export(tmp_path / "local"))


# -- executors without kafkalog's packages -------------------------------------------------------

def test_an_executor_without_a_dependency_fails_with_one_line(cluster, logs, tmp_path):
    """Executors whose Python lacks crc32c (a wrapper shadows it in the workers'
    directories only, so the driver's node, where Spark plans the read, has it): export
    fails with kafkalog's one-line error naming the host and the package (exit 2), raised
    at task start, not a ModuleNotFoundError traceback from unpickling the task."""
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "crc32c.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'crc32c'\", name='crc32c')\n")
    wrapper = tmp_path / "python-without-crc32c-on-workers"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'case "$PWD" in {cluster.root}/worker-*) PYTHONPATH="{stub}:$PYTHONPATH"; '
        "export PYTHONPATH;; esac\n"
        f'exec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    env = _driver_env(tmp_path / "driver", PYSPARK_PYTHON=str(wrapper),
                      defaults="spark.task.maxFailures 1\n")   # no retries of the same
    r = _run(_kafkalog("export", str(logs / "orders-0"), "--to", str(tmp_path / "o"),
                       "--master", cluster.master), env, cwd=tmp_path)
    assert r.returncode == 2, r.stderr[-3000:]
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
    assert "kafkalog cannot run in Spark's Python on host " in lines[0]
    assert "crc32c is not importable (No module named 'crc32c')" in lines[0]
    assert "PYSPARK_PYTHON" in lines[0]
