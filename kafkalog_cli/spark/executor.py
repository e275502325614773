"""What every kafkalog task on a Spark executor runs first, and how its counts get back.

This module imports nothing beyond the standard library (and pyspark, which an executor
has), so that an executor missing one of kafkalog's packages can import it, and the task
fails with kafkalog's one-line :class:`~kafkalog_cli.errors.ExecutorEnvironmentError`
naming the host and the package, not with a ``ModuleNotFoundError`` raised while Spark
unpickles the task. What a task ships (the data source's reader and input partitions,
audit's task function) is therefore made of plain values and of classes from here; the
rest of kafkalog is imported after :func:`check_executor` passed.

* :func:`driver_environment` is captured on the driver (the pyspark version) and travels
  with the task; :func:`check_executor` compares it with the executor's and imports the
  packages kafkalog needs there (:data:`REQUIRED`), once per Python worker process.
* :class:`Checked` wraps a task function named ``"module:function"``: check, then import.
* Read statistics (what ``failOnDataLoss=false`` skipped, partial tails, aborted records,
  rows) travel back through a Spark accumulator (:func:`new_stats_accumulator` on the
  driver, :func:`add_stats` in a task): Spark merges the updates of successful tasks
  only, each task's once (a task run again after a lost executor counts once), whatever
  node it ran on. Nothing goes through a file on the driver's disk.
"""

from __future__ import annotations

import importlib
import socket
import sys
from dataclasses import dataclass

#: (import name, what to install) of every package a kafkalog task imports: CRC-32C,
#: the codecs (imported when a batch of that codec is met, so checked up front), the
#: schema engine, Arrow. numpy is optional (it only speeds up decoding).
REQUIRED = (("crc32c", "crc32c"), ("lz4", "lz4"), ("zstandard", "zstandard"),
            ("cramjam", "cramjam"), ("construct", "construct"), ("pyarrow", "pyarrow"))

INSTALL_HINT = ("install kafkalog's dependencies into the executors' Python on every node "
                "(pip install 'kafkalog[spark]'), or point the executors at a Python that "
                "has them (PYSPARK_PYTHON, or spark.pyspark.python through spark-submit)")


@dataclass(frozen=True)
class DriverEnvironment:
    """What the executors must match: the driver's pyspark version (None when unknown)."""

    pyspark: str | None


def driver_environment() -> DriverEnvironment:
    """The environment of this process (call it on the driver)."""
    try:
        import pyspark

        version = pyspark.__version__
    except ImportError:  # pragma: no cover - the driver of a Spark job has pyspark
        version = None
    return DriverEnvironment(version)


_checked: set[DriverEnvironment] = set()


def check_executor(env: DriverEnvironment) -> None:
    """Check this Python worker against ``env`` and import :data:`REQUIRED` (once per
    process and environment). Tasks call it first; so does the data source's planning,
    which Spark runs in a Python worker of the driver's node started with the executors'
    Python (``spark.pyspark.python`` / ``PYSPARK_PYTHON``), not in the driver's process.

    Raises:
        ExecutorEnvironmentError: a required package does not import, or pyspark's version
            is not the driver's; the message names this host, the package and the Python.
    """
    if env in _checked:
        return
    problems = []
    for module, package in REQUIRED:
        try:
            importlib.import_module(module)
        except ImportError as e:  # ModuleNotFoundError, or a broken binary wheel
            problems.append(f"{package} is not importable ({e})")
    try:
        import pyspark

        here = pyspark.__version__
    except ImportError as e:  # pragma: no cover - the Python worker runs pyspark
        here = f"none ({e})"
    if env.pyspark is not None and here != env.pyspark:
        problems.append(f"pyspark is {here}, the driver's is {env.pyspark}")
    if problems:
        from ..errors import ExecutorEnvironmentError

        raise ExecutorEnvironmentError(
            f"kafkalog cannot run in Spark's Python on host {socket.gethostname()} "
            f"({sys.executable}): " + "; ".join(problems) + f"; {INSTALL_HINT}")
    _checked.add(env)


class Checked:
    """A task function that checks the executor first: ``Checked("pkg.mod:fn", env, *b)(*a)``
    runs :func:`check_executor`, then imports ``pkg.mod`` and returns ``fn(*a, *b)``.
    Pickled by reference to this module (``b`` must be plain values), so an executor
    without kafkalog's packages can load it; use it instead of a lambda over ``fn``."""

    def __init__(self, target: str, env: DriverEnvironment, *bound):
        self.target = target
        self.env = env
        self.bound = bound

    def __call__(self, *args):
        check_executor(self.env)
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)(*args, *self.bound)


# -- read statistics through an accumulator --------------------------------------------------

#: the counters of :class:`~kafkalog_cli.spark.rows.ReadStats`, and its list of skips
STATS_COUNTERS = ("corrupt_batches", "corrupt_bytes", "partial_tail_bytes",
                  "aborted_records", "rows", "lost_offsets")


def zero_stats() -> dict:
    """An empty statistics value: every counter 0, no skips."""
    return {**dict.fromkeys(STATS_COUNTERS, 0), "skipped": [], "not_kafka_files": []}


class StatsParam:
    """The accumulator's AccumulatorParam: counters add up, skips (and the files that are
    not Kafka logs) are concatenated."""

    def zero(self, value: dict) -> dict:
        return zero_stats()

    def addInPlace(self, value1: dict, value2: dict) -> dict:  # noqa: N802 - pyspark's name
        for k in STATS_COUNTERS:
            value1[k] = value1.get(k, 0) + value2.get(k, 0)
        for k in ("skipped", "not_kafka_files"):
            value1[k] = list(value1.get(k, ())) + list(value2.get(k, ()))
        return value1


def new_stats_accumulator(spark):
    """A statistics accumulator of ``spark``'s context (call on the driver). Pass its id
    as the read option ``statsAccumulator``; after the action, ``acc.value`` is a dict of
    :data:`STATS_COUNTERS` and ``skipped``."""
    return spark.sparkContext.accumulator(zero_stats(), StatsParam())


def add_stats(accumulator_id: int, stats: dict) -> None:
    """Add a task's ``stats`` to the driver's accumulator ``accumulator_id`` (call in a
    task: the update goes back with the task's result)."""
    from pyspark.accumulators import _deserialize_accumulator

    # the function pyspark itself uses to unpickle an accumulator in a task: it registers
    # the accumulator with this worker, which sends its value back when the task ends
    _deserialize_accumulator(accumulator_id, zero_stats(), StatsParam()).add(stats)
