"""``kafkalog --version`` answers from the console script without loading Typer or the
library (its speed is measured in ``benchmarks/run_all.py``'s start-up rows, not here); the
library API imports lazily."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from kafkalog_testkit import REPO

import kafkalog_cli


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    return env


def test_version_from_the_console_script():
    # the console script next to this interpreter (a pyenv shim on PATH adds its own cost)
    exe = os.path.join(os.path.dirname(sys.executable), "kafkalog")
    if not os.path.exists(exe):
        exe = shutil.which("kafkalog")
    cmd = [exe, "--version"] if exe else [sys.executable, "-m", "kafkalog_cli", "--version"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=30)
    assert r.returncode == 0
    assert r.stdout == f"kafkalog {kafkalog_cli.__version__}\n"
    assert r.stderr == ""


def test_version_does_not_import_typer_or_the_library():
    code = ("import sys; from kafkalog_cli.cli import main; main(['--version']); "
            "print(sorted(m for m in sys.modules if m.startswith(('typer', 'rich', 'construct',"
            " 'kafkalog_cli.format', 'kafkalog_cli.ops'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=_env(), timeout=30)
    assert r.stdout.splitlines()[-1] == "[]"


def test_public_api_names():
    from kafkalog_cli import (  # noqa: F401
        DumpOptions,
        FileRecords,
        Log,
        LogSegment,
        OffsetIndex,
        TimeIndex,
        build_batch,
        dump,
        rebuild_indexes,
        verify_index,
    )
    from kafkalog_cli.format.records import FileRecords as FR

    assert FileRecords is FR
    assert set(kafkalog_cli.__all__) <= set(dir(kafkalog_cli))
    try:
        kafkalog_cli.no_such_name  # noqa: B018
    except AttributeError:
        pass
    else:
        raise AssertionError("unknown names must raise AttributeError")


def test_import_is_lazy():
    r = subprocess.run([sys.executable, "-c", "import sys, kafkalog_cli; "
                        "print(any(m.startswith('kafkalog_cli.') and m != 'kafkalog_cli._version'"
                        " for m in sys.modules))"],
                       capture_output=True, text=True, env=_env(), timeout=30)
    assert r.stdout.strip() == "False"


def test_library_round_trip(fixtures_root):
    from kafkalog_cli import DumpOptions, dump, verify_index

    evs = list(dump([fixtures_root / "plain-0"], DumpOptions(deep_iteration=True)))
    assert sum(e["type"] == "record" for e in evs) == 8
    assert verify_index([fixtures_root / "plain-0"]).ok
