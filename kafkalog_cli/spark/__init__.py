"""kafkalog on Spark: the ``kafkalog`` data source, a session helper, and the pieces the
local engine shares with it.

Importing this package needs neither pyspark nor pyarrow; the modules that do
(:mod:`.datasource`, :mod:`.session`, :mod:`.rows`) are imported on use, and
:func:`require` turns a missing one into a one-line :class:`MissingDependencyError`.

    from kafkalog_cli.spark import get_session, register
    spark = get_session()            # local[*], quiet, kafkalog registered
    df = spark.read.format("kafkalog").load("/var/lib/kafka/data")
"""

from __future__ import annotations

from ..errors import MissingDependencyError

INSTALL_HINT = "pip install 'kafkalog[spark]'"


def require(*modules: str) -> None:
    """Import ``modules`` or raise :class:`MissingDependencyError` naming the install."""
    import importlib

    for m in modules:
        try:
            importlib.import_module(m)
        except ImportError:
            raise MissingDependencyError(
                f"{m} is not installed; install it with: {INSTALL_HINT}") from None


def register(spark) -> None:
    """Register the ``kafkalog`` data source with ``spark``."""
    from .datasource import KafkaLogDataSource

    spark.dataSource.register(KafkaLogDataSource)


def get_session(master: str | None = None, **kwargs):
    """A SparkSession set up for kafkalog (see :func:`.session.get_session`)."""
    from .session import get_session as _get

    return _get(master, **kwargs)


__all__ = ["INSTALL_HINT", "MissingDependencyError", "get_session", "register", "require"]
