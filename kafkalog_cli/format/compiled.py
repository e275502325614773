"""Which implementation of the read path's hot loops is in use (kafkalog's own: Kafka has
no counterpart): the optional compiled core (``format/_speedups.c``, ``format/_encode.c``,
built by ``setup.py`` when a compiler is present) or the pure-Python loops, the reference
(same values and errors), forced with ``KAFKALOG_PURE_PYTHON=1``.
"""

from __future__ import annotations

import os


def _import_speedups(name: str = "_speedups"):
    """A module of the optional compiled core (``_speedups.c``, ``_encode.c``: built by
    ``setup.py`` when a compiler is present), or None: when it was not built, or
    ``KAFKALOG_PURE_PYTHON=1`` forces the pure-Python loops (the reference; same values
    and errors)."""
    if os.environ.get("KAFKALOG_PURE_PYTHON", "") not in ("", "0"):
        return None
    import importlib

    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ImportError:
        return None


_c = _import_speedups()
#: True when the compiled core is in use (False: the pure-Python loops).
SPEEDUPS = _c is not None


#: the name of the pure-Python twin of this package (see :func:`load_pure_python`)
PURE_PYTHON_PACKAGE = "kafkalog_cli._format_pure_python"


def load_pure_python(module: str = "records"):
    """A second instance of this package's module ``module`` (``records``, ``record``,
    ``record_batch``, ``legacy``), running the pure-Python loops only, beside the one in
    use: for the tests that compare both implementations and the benchmarks that time both
    in one process. The modules it imports from this package are twins too (a package of
    their own, :data:`PURE_PYTHON_PACKAGE`, loaded once), so its classes are its own
    (``Record``, ``RecordBatch``, ``FileRecords``); its errors are
    :mod:`kafkalog_cli.errors`'."""
    import importlib
    import importlib.util
    import sys

    saved = os.environ.get("KAFKALOG_PURE_PYTHON")
    os.environ["KAFKALOG_PURE_PYTHON"] = "1"
    try:
        if PURE_PYTHON_PACKAGE not in sys.modules:
            here = os.path.dirname(os.path.abspath(__file__))
            spec = importlib.util.spec_from_file_location(
                PURE_PYTHON_PACKAGE, os.path.join(here, "__init__.py"),
                submodule_search_locations=[here])
            package = importlib.util.module_from_spec(spec)
            sys.modules[PURE_PYTHON_PACKAGE] = package
            spec.loader.exec_module(package)
        return importlib.import_module(f"{PURE_PYTHON_PACKAGE}.{module}")
    finally:
        if saved is None:
            del os.environ["KAFKALOG_PURE_PYTHON"]
        else:
            os.environ["KAFKALOG_PURE_PYTHON"] = saved
