"""README: exactly two set-up commands, .ci/run runs the second verbatim, examples work."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

from kafkalog_testkit import REPO, run_cli_inprocess


def _setup_commands():
    text = (REPO / "README.md").read_text()
    section = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return [b.strip() for b in re.findall(r"```sh\n(.*?)```", section, re.S)]


def test_two_setup_commands_and_ci_runs_the_second():
    cmds = _setup_commands()
    assert len(cmds) == 2 and all("\n" not in c for c in cmds)
    assert cmds[0].startswith("pip install . && kafkalog ")
    assert cmds[1] == "pip install -e '.[test]' && python -m pytest"
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert ci[0] == "#!/usr/bin/env bash"
    assert "set -euo pipefail" in ci
    assert cmds[1] in ci
    assert os.access(REPO / ".ci" / "run", os.X_OK)


def test_first_command_runs_on_the_fixtures():
    kafkalog_part = _setup_commands()[0].split("&&", 1)[1].strip()
    args = shlex.split(kafkalog_part)[1:]
    r = run_cli_inprocess(*args, "--output", "kafka")
    assert r.returncode == 0 and "endTxnMarker: COMMIT" in r.stdout


def test_usage_examples_run():
    """Every README example that reads the bundled fixtures runs (examples on other paths,
    such as a broker's /var/lib/kafka/data or a long-running serve, are illustrations)."""
    text = (REPO / "README.md").read_text()
    lines = [ln for ln in re.findall(r"^kafkalog (.+?)(?:\s+#.*)?$", text, re.M)
             if "fixtures/" in ln]
    assert len(lines) >= 5
    for line in lines:
        args = shlex.split(line.split("|")[0])
        r = run_cli_inprocess(*args)
        assert r.returncode in (0, 1), (line, r.stderr)


def test_library_snippet_runs():
    text = (REPO / "README.md").read_text()
    code = re.findall(r"```python\n(.*?)```", text, re.S)[0]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
