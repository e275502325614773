"""Fixtures of the Spark tests: ONE local[2] session for the whole run, generated log
directories, and the real corpus (skipped when absent)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from spark_fixtures import CORPUS, build_log_dir


@pytest.fixture(scope="session")
def spark(request):
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    from kafkalog_cli.spark import get_session

    try:
        # the local S3 server first, so that the JVM and its Python workers (executors)
        # inherit its variables, as executors configured the standard way do
        request.getfixturevalue("s3_server")
    except pytest.skip.Exception:
        pass   # without moto: the object-storage tests skip, the others run

    s = get_session("local[2]", conf={"spark.sql.shuffle.partitions": "2",
                                      "spark.default.parallelism": "2"})
    yield s
    s.stop()


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("shared/corpus/real is absent")
    return CORPUS.resolve()


@pytest.fixture(scope="session")
def log_dir(tmp_path_factory) -> Path:
    return build_log_dir(tmp_path_factory.mktemp("gen"))


@pytest.fixture
def log_dir_copy(log_dir, tmp_path) -> Path:
    dst = tmp_path / "kafka-logs"
    shutil.copytree(log_dir, dst)
    return dst


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    """A Spark standalone cluster on 127.0.0.1 (a master and two 1-core workers started
    from pyspark's spark-class, see :mod:`standalone`), shared by the session's cluster
    tests and stopped (by pid) at its end."""
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    from standalone import StandaloneCluster

    c = StandaloneCluster(tmp_path_factory.mktemp("cluster"), workers=2)
    with c:
        yield c
