"""The optional compiled core is built where it must be, and off when asked."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from kafkalog_testkit import REPO

from kafkalog_cli.format import builder, compiled


def test_ci_builds_the_core():
    """Under .ci/run (KAFKALOG_BUILD_STRICT=1) the core is in use unless the run forces
    pure Python: a build that silently fell back would test the fallback twice."""
    if os.environ.get("KAFKALOG_BUILD_STRICT") != "1":
        pytest.skip("not a strict (CI) build")
    on = os.environ.get("KAFKALOG_PURE_PYTHON", "") in ("", "0")
    assert compiled.SPEEDUPS == on
    assert builder.SPEEDUPS == on  # the record encoder, _encode.c


def test_pure_python_env_var_turns_the_core_off():
    code = ("from kafkalog_cli.format import builder as b, compiled as r; "
            "print(r.SPEEDUPS, r._c, b.SPEEDUPS, b._c)")
    env = {**os.environ, "KAFKALOG_PURE_PYTHON": "1"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=REPO, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "None", "False", "None"]
