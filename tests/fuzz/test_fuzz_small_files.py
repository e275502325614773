"""Every offline command on every small file of a log directory (and the segments of
``__consumer_offsets`` and ``_schemas`` that groups and the Schema Registry decoder
replay), inflated (a sparse 64 MiB and 1 GiB of zeros) or replaced by what is not a
regular file (a FIFO, a link to ``/dev/zero`` or ``/dev/urandom``, a directory, a
socket): none may hang, exceed 128 MiB of resident memory, print a traceback or a
runaway output, and a command that reads the file refuses a special one with a one-line
error naming it (issue 24, items 5 and 7).

One subprocess per variant (:mod:`small_files` run as a script, under ``RLIMIT_AS`` and a
timeout) puts every command of :data:`small_files.COMMANDS` through every kind of
:data:`small_files.KINDS`, each command timed by an alarm and its peak resident memory
read from the kernel (``VmHWM``, reset before it).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import pytest
import small_files as sf
from kafkalog_testkit import REPO

pytestmark = [pytest.mark.fuzz, pytest.mark.slow]

#: the subprocess's address space: Python, kafkalog and pyarrow (export), with room for a
#: reader that would grow with the file to fail with MemoryError instead of swapping
ADDRESS_SPACE = 3 << 30
#: the most a command may print for one bad file (describe printed 277 MB of JSON for a
#: 1 MiB zero-filled checkpoint)
MAX_STDOUT = 1 << 20
MAX_STDERR = 16 << 10

_ALL = {"describe", "audit", "verify-index", "read", "dump-segment", "dump-segment FILE",
        "groups", "get-offsets", "export", "recover", "produce", "delete-records",
        "recover --truncate"}
#: the commands that read every partition's segments
_EVERY_LOG = {"describe", "audit", "verify-index", "get-offsets", "export", "recover",
              "recover --truncate"}
_INDEX_READERS = {"audit", "verify-index", "dump-segment FILE", "recover", "produce",
                  "recover --truncate"}
#: kind -> the commands that read it, so refuse it when it is not a regular file (exit 1
#: for describe and audit, which report unreadable files as findings; 3 for the others).
#: The others may leave it aside, as the broker's readers do (an offset index is a hint
#: to read; a checkpoint that does not read is treated as empty)
READERS = {
    "meta.properties": {"describe", "audit", "groups", "get-offsets"},
    "recovery-point-offset-checkpoint": {"describe", "audit"},
    "log-start-offset-checkpoint": {"describe", "audit"},
    "replication-offset-checkpoint": {"describe", "audit"},
    "cleaner-offset-checkpoint": {"describe", "audit"},
    ".kafka_cleanshutdown": {"describe"},
    ".lock": {"describe", "recover", "produce", "recover --truncate"},
    "leader-epoch-checkpoint": {"describe", "audit", "get-offsets", "recover", "produce",
                                "delete-records", "recover --truncate"},
    "partition.metadata": {"describe", "audit", "recover", "produce", "recover --truncate"},
    ".snapshot": {"dump-segment FILE", "recover", "produce", "recover --truncate"},
    ".txnindex": _INDEX_READERS | {"describe"},
    ".index": _INDEX_READERS,
    ".timeindex": _INDEX_READERS,
    ".log": _ALL,
    "quorum-state": {"describe", "audit"},
    "KRaft snapshot": {"describe", "dump-segment FILE"},
    # replayed by the group coordinator's and Schema Registry's readers
    "__consumer_offsets .log": _EVERY_LOG | {"groups"},
    "_schemas .log": _EVERY_LOG | {"read --value-decoder"},
}
assert set(READERS) == set(sf.KINDS)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("small-files")
    env = dict(os.environ, PYTHONPATH=str(REPO))

    def run(*argv, stdin=b""):
        subprocess.run([sys.executable, "-m", "kafkalog_cli", *argv], input=stdin, env=env,
                       check=True, capture_output=True, cwd=root)

    sf.build_base(root, run)
    return root


def _run_case(root, variant: str) -> list[dict]:
    results = root / f"{variant}.jsonl"

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
        os.setsid()

    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("COLUMNS", None)
    p = subprocess.Popen([sys.executable, sf.__file__, variant, str(root), str(results)],
                         env=env, cwd=root, preexec_fn=limit, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    # every command has its own alarm; this bounds the case should one not be interruptible
    budget = sf.COMMAND_SECONDS * 4 + 60 * len(sf.KINDS)
    try:
        _, err = p.communicate(timeout=budget)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        p.communicate()
        err = b"(killed after %d s)" % budget
    lines = [json.loads(ln) for ln in results.read_text().splitlines()] \
        if results.exists() else []
    done = [r for r in lines if not r.get("started")]
    if p.returncode != 0:
        last = lines[-1] if lines else None
        pytest.fail(f"the case's process ended with {p.returncode} while running {last}: "
                    f"{err.decode('utf-8', 'replace')[-3000:]}")
    return done


@pytest.mark.parametrize("variant", sf.VARIANTS)
def test_every_command_on_every_small_file(base, variant):
    results = _run_case(base, variant)
    expected = {(k, name) for k in sf.KINDS
                for name, _ in sf.commands(base / "x", k)}
    assert {(r["kind"], r["command"]) for r in results} == expected
    bad = []
    for r in results:
        where = f"{r['kind']} -> {variant}: {r['command']}"
        err = r["stderr"]
        if r["hung"]:
            bad.append(f"{where}: still running after {sf.COMMAND_SECONDS} s")
            continue
        if r["peakKib"] > sf.PEAK_RSS_KIB:
            bad.append(f"{where}: peak resident memory {r['peakKib'] // 1024} MiB")
        if "Traceback" in err or r["exit"] not in (0, 1, 3):
            bad.append(f"{where}: exit {r['exit']}: {err[-1500:]}")
        if r["stdoutBytes"] > MAX_STDOUT or r["stderrBytes"] > MAX_STDERR:
            bad.append(f"{where}: printed {r['stdoutBytes']} + {r['stderrBytes']} bytes")
        errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
        if any(len(ln) > 600 for ln in errors):
            bad.append(f"{where}: an error line of {max(map(len, errors))} characters")
        if variant in sf.SPECIAL and r["command"] in READERS[r["kind"]]:
            name = sf.KINDS[r["kind"]].rsplit("/", 1)[-1]
            if r["exit"] == 0 or name not in r["stdout"] + err:
                bad.append(f"{where}: exit {r['exit']} without naming the file "
                           f"({(err or r['stdout'])[:300]!r})")
    assert not bad, f"{len(bad)} of {len(results)} runs:\n" + "\n".join(bad)
