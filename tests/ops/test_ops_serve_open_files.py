"""serve raises its soft limit on open files to the hard limit at start, as the JVM that
runs a broker does (HotSpot's MaxFDLimit): a descriptor per active ``.log``, ``.index``,
``.timeindex`` and connection outgrows a soft limit of 1024 at a few hundred partitions."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kafkalog_testkit import REPO

LOW = 256


def _hard() -> int:
    return resource.getrlimit(resource.RLIMIT_NOFILE)[1]


pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or _hard() != resource.RLIM_INFINITY
    and _hard() <= LOW, reason="needs Linux and a hard RLIMIT_NOFILE above 256")


def _lower_soft():
    resource.setrlimit(resource.RLIMIT_NOFILE, (LOW, _hard()))


def _soft_limit_of(pid: int) -> int:
    limits = Path(f"/proc/{pid}/limits").read_text()
    m = re.search(r"^Max open files\s+(\d+)\s+(\S+)", limits, re.M)
    assert m, limits
    return int(m.group(1))


def test_serve_runs_with_the_hard_limit_on_open_files(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir", str(tmp_path / "logs"),
         "--listen", "127.0.0.1:0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, env=env, preexec_fn=_lower_soft)
    try:
        assert _soft_limit_of(proc.pid) == LOW  # what it was started with
        lines = []
        deadline = time.monotonic() + 120  # a hang bound, not a speed check
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            if "listening on" in line:
                break
        assert any("listening on" in x for x in lines), "".join(lines)
        want = _hard() if _hard() != resource.RLIM_INFINITY else None
        soft = _soft_limit_of(proc.pid)
        assert soft > LOW
        if want is not None:
            assert soft == want
    finally:
        proc.terminate()
        proc.wait(60)
