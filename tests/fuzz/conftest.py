"""The fuzz worker, one per test session (see :mod:`fuzz_client`), and a summary of the
cases it ran per target at the end of the run (also appended as one JSON line to
``$KAFKALOG_FUZZ_REPORT`` when set)."""

from __future__ import annotations

import os

import pytest
from fuzz_client import FuzzWorker, write_report

_WORKER: FuzzWorker | None = None


@pytest.fixture(scope="session")
def fuzz_worker():
    global _WORKER
    w = FuzzWorker()
    w.start()
    _WORKER = w
    yield w
    w.stop()
    write_report(w, os.environ.get("KAFKALOG_FUZZ_REPORT"))


def pytest_terminal_summary(terminalreporter):
    if _WORKER is None or not _WORKER.totals:
        return
    rep = _WORKER.report()
    tr = terminalreporter
    tr.section("kafkalog fuzz")
    for name, n in sorted(rep["cases"].items()):
        peak = rep["peakKib"].get(name)
        outs = ", ".join(f"{k.split(':', 1)[1]} {v}" for k, v in rep["outcomes"].items()
                         if k.split(":", 1)[0] == name)
        tr.write_line(f"{name:>17}: {n:6d} cases ({outs}); peak +{peak} KiB; slowest "
                      f"{rep['slowestSeconds'].get(name)} s")
    if os.environ.get("KAFKALOG_FUZZ_VERBOSE"):
        for k, v in rep["typedErrors"].items():
            tr.write_line(f"  {k}: {v}")
