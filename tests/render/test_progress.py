"""Progress for long runs: the library's long operations report (done bytes, total bytes)
and the CLI draws a bar only when stderr is a terminal (never in pipes)."""

from __future__ import annotations

import shutil

import pytest

from kafkalog_cli.render.progress import byte_progress, record_counter


@pytest.fixture
def logs(tmp_path, fixtures_root):
    d = tmp_path / "logs"
    for p in ("plain-0", "multi-0", "headers-0"):
        shutil.copytree(fixtures_root / p, d / p)
    shutil.copy(fixtures_root / "meta.properties", d)
    return d


def _calls(fn):
    calls = []
    fn(lambda done, total: calls.append((done, total)))
    return calls


def _check(calls, logs):
    want = sum(p.stat().st_size for p in logs.rglob("*.log"))
    assert calls and calls[-1] == (want, want)
    dones = [d for d, _ in calls]
    assert dones == sorted(dones) and {t for _, t in calls} == {want}


def test_long_operations_report_bytes(logs, tmp_path):
    from kafkalog_cli.ops.audit import audit
    from kafkalog_cli.ops.describe import describe
    from kafkalog_cli.ops.export import export
    from kafkalog_cli.ops.verify import verify_index
    from kafkalog_cli.recovery import recover

    _check(_calls(lambda p: verify_index([logs], progress=p)), logs)
    _check(_calls(lambda p: describe([logs], progress=p)), logs)
    _check(_calls(lambda p: audit([logs], engine="local", progress=p)), logs)
    _check(_calls(lambda p: recover([logs], progress=p)), logs)
    pytest.importorskip("pyarrow")
    _check(_calls(lambda p: export([logs], tmp_path / "out", fmt="jsonl", engine="local",
                                   progress=p)), logs)


def test_no_bar_unless_stderr_is_a_terminal(monkeypatch):
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    with byte_progress("x", 10) as advance:
        assert advance is None
    with record_counter("x") as update:
        assert update is None
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    with byte_progress("x", 10, streams_stdout=True) as advance:
        assert advance is None  # the data itself scrolls on that terminal


def test_bar_on_a_terminal_leaves_stdout_alone(tmp_path, fixtures_root):
    """stderr on a terminal (util-linux script's pty), stdout to a file: the bar is drawn
    on the terminal and the JSON Lines in the file are exactly those of a plain run."""
    import os
    import subprocess
    import sys

    from kafkalog_testkit import REPO

    script = shutil.which("script")
    if script is None:
        pytest.skip("no script(1) to give the command a terminal")
    out = tmp_path / "out.jsonl"
    cmd = (f"{sys.executable} -m kafkalog_cli dump-segment {fixtures_root / 'multi-0'} "
           f"-o json > {out}")
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="100")
    r = subprocess.run([script, "-qec", cmd, "/dev/null"], env=env, capture_output=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert b"dump-segment" in r.stdout and b"kB" in r.stdout  # the bar, on the terminal
    plain = subprocess.run([sys.executable, "-m", "kafkalog_cli", "dump-segment",
                            str(fixtures_root / "multi-0"), "-o", "json"], env=env,
                           capture_output=True, timeout=120)
    assert out.read_bytes() == plain.stdout and plain.stdout.count(b"\n") > 50
