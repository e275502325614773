"""Which engine runs ``audit`` and ``export``: this process (``local``) or Spark.

Its own module so that ``export`` chooses without importing ``audit``'s checks.
"""

from __future__ import annotations

import os

#: Inputs below this many bytes of .log are read locally by ``--engine auto``.
AUTO_LOCAL_MAX_BYTES = 1024 ** 3


def choose_engine(engine: str, total_bytes: int, master: str | None) -> str:
    """``auto``: spark when a master is named (``master`` or ``$SPARK_MASTER``) or the
    input reaches :data:`AUTO_LOCAL_MAX_BYTES` (``total_bytes`` of .log) and pyspark is
    installed; local otherwise. ``local`` and ``spark`` are returned as given."""
    if engine in ("local", "spark"):
        return engine
    if master or os.environ.get("SPARK_MASTER"):
        return "spark"
    if total_bytes >= AUTO_LOCAL_MAX_BYTES:
        import importlib.util

        if importlib.util.find_spec("pyspark") is not None:
            return "spark"
    return "local"
