"""What a task checks on an executor before anything else, and what it ships: no Spark
session needed (the cluster tests run the same on real executors)."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from spark_fixtures import REPO

from kafkalog_cli.errors import ExecutorEnvironmentError
from kafkalog_cli.spark import executor


def test_a_different_pyspark_is_named_with_both_versions():
    pytest.importorskip("pyspark")
    import pyspark

    env = executor.DriverEnvironment("3.5.1")
    with pytest.raises(ExecutorEnvironmentError) as ei:
        executor.check_executor(env)
    msg = str(ei.value)
    assert f"pyspark is {pyspark.__version__}, the driver's is 3.5.1" in msg
    assert msg.startswith("kafkalog cannot run in Spark's Python on host ")
    assert "\n" not in msg
    from kafkalog_cli.cli.exit_codes import for_error

    assert for_error(ei.value) == 2   # a setup problem, like a missing optional package
    executor.check_executor(executor.driver_environment())   # the same pyspark: fine


def test_a_missing_package_is_named(monkeypatch):
    monkeypatch.setattr(executor, "REQUIRED",
                        executor.REQUIRED + (("kafkalog_no_such_module", "nosuch"),))
    executor._checked.clear()
    with pytest.raises(ExecutorEnvironmentError,
                       match=r"nosuch is not importable \(No module named "
                             r"'kafkalog_no_such_module'\).*PYSPARK_PYTHON"):
        executor.check_executor(executor.DriverEnvironment(None))


def test_stats_merge_adds_counters_and_keeps_every_skip():
    p = executor.StatsParam()
    a = p.zero(None)
    p.addInPlace(a, {**executor.zero_stats(), "rows": 5, "corrupt_batches": 1,
                     "skipped": [{"position": 1}]})
    p.addInPlace(a, {**executor.zero_stats(), "rows": 7, "lost_offsets": 3,
                     "skipped": [{"position": 2}]})
    assert (a["rows"], a["corrupt_batches"], a["lost_offsets"]) == (12, 1, 3)
    assert a["skipped"] == [{"position": 1}, {"position": 2}]


_UNPICKLE = """
import pickle, sys
obj = pickle.loads(sys.stdin.buffer.read())
try:
    {call}
except Exception as e:
    print(type(e).__name__ + ": " + str(e))
"""


def _unpickle_without_crc32c(tmp_path: Path, obj, call: str) -> str:
    """Unpickle ``obj`` in a Python where ``import crc32c`` fails (a stub shadows it), as
    on an executor missing the package, then run ``call``; returns what it printed."""
    stub = tmp_path / "stub"
    stub.mkdir(exist_ok=True)
    (stub / "crc32c.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'crc32c'\", name='crc32c')\n")
    r = subprocess.run([sys.executable, "-c", _UNPICKLE.format(call=call)],
                       input=pickle.dumps(obj), capture_output=True, timeout=120,
                       env={"PYTHONPATH": f"{stub}:{REPO}", "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    return r.stdout.decode()


def test_what_a_task_ships_loads_without_kafkalogs_packages(tmp_path):
    """The reader, its input partitions, the writer and audit's task function unpickle on
    an executor lacking crc32c; running them gives kafkalog's error, not Python's
    ModuleNotFoundError raised while Spark unpickles the task."""
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    from kafkalog_cli.spark import plan
    from kafkalog_cli.spark.datasource import KafkaLogPartition, KafkaLogReader, KafkaLogWriter

    logs = str(REPO / "fixtures" / "logs" / "plain-0")
    reader = KafkaLogReader({"path": logs})
    parts = reader.partitions()
    assert all(isinstance(t, tuple) for p in parts for t in p.value)
    assert plan.Slice(*parts[0].value[0]).directory == logs     # absolute, as planned
    got = _unpickle_without_crc32c(tmp_path, (reader, parts[0]),
                                   "list(obj[0].read(obj[1]))")
    assert got.startswith("ExecutorEnvironmentError: kafkalog cannot run in Spark's ")
    assert "crc32c is not importable (No module named 'crc32c')" in got
    writer = KafkaLogWriter({"path": str(tmp_path / "w")})
    got = _unpickle_without_crc32c(tmp_path, writer, "obj.write(iter([]))")
    assert "crc32c is not importable" in got
    task = executor.Checked("kafkalog_cli.ops.audit:_audit_group",
                            executor.driver_environment(), 1 << 20)
    got = _unpickle_without_crc32c(tmp_path, task, "obj([])")
    assert "crc32c is not importable" in got
    assert isinstance(KafkaLogPartition(0, []).value, list)


def test_relative_paths_are_resolved_when_planned(tmp_path, monkeypatch):
    """The driver plans with absolute paths, and the writer keeps an absolute log
    directory: an executor's working directory is not the driver's."""
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    from kafkalog_cli.spark import plan
    from kafkalog_cli.spark.datasource import KafkaLogReader, KafkaLogWriter

    monkeypatch.chdir(REPO / "fixtures")
    parts = KafkaLogReader({"path": "logs/plain-0"}).partitions()
    dirs = {plan.Slice(*t).directory for p in parts for t in p.value}
    assert dirs == {str(REPO / "fixtures" / "logs" / "plain-0")}
    assert [d.directory for d in plan.discover(["logs/plain-*"])] == [
        str(REPO / "fixtures" / "logs" / "plain-0")]
    monkeypatch.chdir(tmp_path)
    assert KafkaLogWriter({"path": "out"}).log_dir == str(tmp_path / "out")


@pytest.mark.spark
def test_spark_pyspark_python_given_to_get_session_reaches_the_rdd_api(spark, monkeypatch,
                                                                       tmp_path):
    """pyspark's RDD API (audit's tasks) takes the executors' Python from PYSPARK_PYTHON
    only (SparkContext.pythonExec), so a spark.pyspark.python given to get_session had no
    effect on them: it now sets the variable, as spark-submit does."""
    from kafkalog_cli.spark import get_session

    monkeypatch.setenv("PYSPARK_PYTHON", "/nonexistent/python")
    python = tmp_path / "python3"
    python.symlink_to(sys.executable)
    get_session("local[2]", conf={"spark.pyspark.python": str(python)})
    import os

    assert os.environ["PYSPARK_PYTHON"] == str(python)


def test_the_writer_refuses_a_remote_log_dir_on_the_driver():
    """df.write.format("kafkalog").save("s3://...") stops on the driver, before any task
    stages rows: a log directory needs appends, renames and a lock."""
    pytest.importorskip("pyspark")
    from kafkalog_cli.errors import InvalidArgumentError
    from kafkalog_cli.spark.datasource import KafkaLogWriter

    with pytest.raises(InvalidArgumentError, match=r"s3://bucket/logs: df.write.format"):
        KafkaLogWriter({"path": "s3://bucket/logs"})
