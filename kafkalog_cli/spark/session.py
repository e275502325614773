"""A SparkSession set up for kafkalog: quiet, local-safe, with the data source registered.

* master: the argument, else ``$SPARK_MASTER``, else ``local[*]``;
* local mode: ``SPARK_LOCAL_IP=127.0.0.1`` (unless set; an unresolvable host name kills
  the JVM otherwise), ``spark.driver.host``/``bindAddress`` 127.0.0.1, and Python workers
  run this interpreter (``PYSPARK_PYTHON``) so they see the same pyarrow;
* workers import ``kafkalog_cli`` even when it is not pip-installed: its parent directory
  is put first on ``PYTHONPATH`` (inherited by local workers); on a cluster the package is
  also shipped as a zip with ``addPyFile``, written under the context's own temporary
  directory, which Spark removes when the context stops;
* ``conf={"spark.pyspark.python": PY}`` also sets ``PYSPARK_PYTHON`` (pyspark's RDD
  API, which ``audit`` uses, reads only the variable), before the context starts;
* quiet unless ``verbose``: kafkalog's ``log4j2.properties`` (errors only), no progress
  bars, no UI;
* ``spark.sql.session.timeZone=UTC`` and Parquet timestamps as INT64 microseconds, so
  Spark's Parquet equals the local engine's;
* ``spark.driver.memory`` 2g by default (local-mode executors live in the driver JVM).

Extra JVM options (for example a class-data-sharing archive, ``-XX:SharedArchiveFile=``)
can be given in ``$KAFKALOG_SPARK_JAVA_OPTS``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from pathlib import Path

from . import register, require

LOG4J = Path(__file__).with_name("log4j2.properties")


def package_root() -> str:
    """The directory holding the ``kafkalog_cli`` package."""
    import kafkalog_cli

    return str(Path(kafkalog_cli.__file__).resolve().parent.parent)


def _prepend_pythonpath(root: str) -> None:
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if not parts or parts[0] != root:
        os.environ["PYTHONPATH"] = os.pathsep.join([root] + [p for p in parts if p != root])


def _package_zip(directory: str) -> str:
    """``kafkalog_cli`` as a zip in a new directory under ``directory``."""
    root = Path(package_root())
    out = Path(tempfile.mkdtemp(prefix="kafkalog-pyfiles-", dir=directory)) / "kafkalog_cli.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted((root / "kafkalog_cli").rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                z.write(p, p.relative_to(root))
    return str(out)


def _ship_package(sc) -> None:
    """``addPyFile`` the package once per SparkContext. The zip is written under the
    context's own files directory (``SparkFiles.getRootDirectory()``, inside the
    driver's ``spark-<uuid>`` temporary directory), which Spark deletes when the context
    stops or the JVM exits: a session leaves nothing behind."""
    from pyspark import SparkFiles

    if getattr(sc, "_kafkalog_shipped", False):
        return
    sc.addPyFile(_package_zip(SparkFiles.getRootDirectory()))
    sc._kafkalog_shipped = True


def java_options(verbose: bool = False) -> str:
    opts = []
    if not verbose:
        opts.append(f"-Dlog4j.configurationFile=file:{LOG4J}")
    extra = os.environ.get("KAFKALOG_SPARK_JAVA_OPTS")
    if extra:
        opts.append(extra)
    return " ".join(opts)


def get_session(master: str | None = None, *, verbose: bool = False,
                app_name: str = "kafkalog", driver_memory: str = "2g",
                conf: dict | None = None):
    """Create (or get) the SparkSession and register ``kafkalog``.

    Raises:
        MissingDependencyError: pyspark or pyarrow is missing.
    """
    require("pyspark", "pyarrow")
    from pyspark.sql import SparkSession

    master = master or os.environ.get("SPARK_MASTER") or "local[*]"
    local = master.startswith("local")
    python = (conf or {}).get("spark.pyspark.python")
    if python:
        # pyspark's RDD API (audit's tasks) takes the executors' Python from this variable
        # only (SparkContext.pythonExec)
        os.environ["PYSPARK_PYTHON"] = python
    _prepend_pythonpath(package_root())
    b = (SparkSession.builder.master(master).appName(app_name)
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
         .config("spark.driver.memory", driver_memory))
    if local:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        b = (b.config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1"))
    jopts = java_options(verbose)
    if jopts:
        b = (b.config("spark.driver.extraJavaOptions", jopts)
             .config("spark.executor.extraJavaOptions", jopts))
    for k, v in (conf or {}).items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    if not verbose:
        spark.sparkContext.setLogLevel("ERROR")
    if not local:
        _ship_package(spark.sparkContext)
    register(spark)
    return spark


def default_min_partitions(spark) -> int:
    """Input partitions to aim at: 3 per core the session has."""
    return 3 * max(1, spark.sparkContext.defaultParallelism)
