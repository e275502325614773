"""Inflated and special variants of every small file of a log directory, and a runner that
puts every offline command through them (``test_fuzz_small_files.py``).

A *kind* is a file a log directory or partition directory holds, named by where it is
(:data:`KINDS`); a *variant* replaces it (:func:`apply_variant`): a sparse file of zeros
of 64 MiB or 1 GiB (cheap: no block is written), a FIFO, a symbolic link to
``/dev/zero`` or ``/dev/urandom``, a directory, a Unix socket.

Run as a script, this module is the subprocess of one case: ``python small_files.py
VARIANT ROOT RESULTS`` builds, for every kind, a copy of the base log directory under
``ROOT`` with that kind's file replaced by ``VARIANT``, runs every command of
:data:`COMMANDS` on it through the console script's entry point
(:func:`kafkalog_cli.cli.main`, in this process: one start-up per case), and appends one
JSON line per command to ``RESULTS``: the exit status, the peak resident memory while it
ran (``VmHWM``, reset before each command through ``/proc/self/clear_refs``), the seconds
it took, the bytes it wrote to stdout and stderr and their first lines, and whether it
was stopped by the per-command alarm (a hang). The parent runs it under ``RLIMIT_AS`` and
a timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path

MiB = 1 << 20
#: the bound every command must stay within (peak resident memory)
PEAK_RSS_KIB = 128 * 1024
#: seconds a command may take before it counts as a hang
COMMAND_SECONDS = 30
#: variants: sparse files of zeros, and files that are not regular files
SIZES = {"zeros-64MiB": 64 * MiB, "zeros-1GiB": 1 << 30}
SPECIAL = ("fifo", "link-dev-zero", "link-dev-urandom", "directory", "socket")
VARIANTS = tuple(SIZES) + SPECIAL

TOPIC = "t"
META = "__cluster_metadata-0"
KRAFT_SNAPSHOT = "00000000000000000005-0000000001.checkpoint"
OFFSETS = "__consumer_offsets-0"
SCHEMAS = "_schemas-0"
#: a topic of Avro records in Schema Registry's wire format, their schema in _schemas
AVRO_TOPIC = "s"
AVRO_SCHEMA = b'{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}'
#: kind -> the file's path in the log directory
KINDS = {
    "meta.properties": "meta.properties",
    "recovery-point-offset-checkpoint": "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint": "log-start-offset-checkpoint",
    "replication-offset-checkpoint": "replication-offset-checkpoint",
    "cleaner-offset-checkpoint": "cleaner-offset-checkpoint",
    ".kafka_cleanshutdown": ".kafka_cleanshutdown",
    ".lock": ".lock",
    "leader-epoch-checkpoint": "t-0/leader-epoch-checkpoint",
    "partition.metadata": "t-0/partition.metadata",
    ".snapshot": "t-0/00000000000000000013.snapshot",
    ".txnindex": "t-0/00000000000000000000.txnindex",
    ".index": "t-0/00000000000000000000.index",
    ".timeindex": "t-0/00000000000000000000.timeindex",
    ".log": "t-0/00000000000000000000.log",
    "quorum-state": f"{META}/quorum-state",
    "KRaft snapshot": f"{META}/{KRAFT_SNAPSHOT}",
    # the segments the group coordinator and Schema Registry's KafkaStore replay (groups;
    # read --value-decoder schema-registry)
    "__consumer_offsets .log": f"{OFFSETS}/00000000000000000000.log",
    "_schemas .log": f"{SCHEMAS}/00000000000000000000.log",
}
#: files of a partition that dump-segment takes by name
DUMPABLE = (".snapshot", ".txnindex", ".index", ".timeindex", ".log", "KRaft snapshot")


def commands(log_dir: Path, kind: str) -> list[tuple[str, list[str]]]:
    """``(name, argv)`` of every offline command on ``log_dir`` (the one that writes,
    ``recover --truncate``, last)."""
    part = log_dir / (META if kind in ("quorum-state", "KRaft snapshot") else "t-0")
    out = [("describe", ["describe", str(log_dir), "-o", "json"]),
           ("audit", ["audit", str(log_dir), "--engine", "local", "-o", "json"]),
           ("verify-index", ["verify-index", str(log_dir), "-o", "json"]),
           ("read", ["read", str(part), "--from-beginning", "-o", "json"]),
           ("dump-segment", ["dump-segment", str(part), "--print-data-log"])]
    if kind in DUMPABLE:
        out.append(("dump-segment FILE", ["dump-segment", str(log_dir / KINDS[kind])]))
    out += [("read --value-decoder", ["read", str(log_dir / f"{AVRO_TOPIC}-0"),
                                      "--from-beginning", "--value-decoder",
                                      "schema-registry"]),
            ("groups", ["groups", str(log_dir), "--describe", "--all-groups"]),
            ("get-offsets", ["get-offsets", str(log_dir)]),
            ("export", ["export", str(log_dir), "--to", str(log_dir.parent / "export"),
                        "--format", "jsonl", "--engine", "local", "-o", "json"]),
            ("recover", ["recover", str(log_dir), "-o", "json"]),
            ("produce", ["produce", "--log-dir", str(log_dir), "--topic", TOPIC, "--no-fsync",
                         "-o", "json", str(log_dir.parent / "input.txt")]),
            ("delete-records", ["delete-records", str(log_dir), "--offset-json-file",
                                str(log_dir.parent / "offsets.json"), "-o", "json"]),
            ("recover --truncate", ["recover", str(log_dir), "--truncate", "--all",
                                    "-o", "json"])]
    return out


# -- the base log directory and its variants -------------------------------------------------

QUORUM_STATE = (b'{"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":-1,'
                b'"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}')


def build_base(root: Path, run) -> Path:
    """A log directory holding every kind of small file: ``t-0`` with plain records, an
    aborted and a committed transaction (``.txnindex``, producer snapshots, leader-epoch
    checkpoint, partition.metadata), the log directory's checkpoints, meta.properties and
    clean-shutdown marker, ``.lock``, a ``__cluster_metadata-0`` with a
    ``quorum-state`` and a snapshot file, an Avro record (``s-0``) with its schema in
    ``_schemas-0``, and a group's offset in ``__consumer_offsets-0``. ``run(*argv, stdin=bytes)`` runs the CLI
    (``produce`` writes the partition, as a broker's appends would)."""
    d = root / "base"
    run("produce", "--log-dir", str(d), "--topic", TOPIC, "--no-fsync", stdin=b"1\n2\n3\n4\n5\n")
    for end in ("abort", "commit"):
        run("produce", "--log-dir", str(d), "--topic", TOPIC, "--no-fsync", "--producer-id", "7",
            "--transactional", "--end-txn", end, stdin=b"a\nb\nc\n")
    for name in ("replication-offset-checkpoint", "cleaner-offset-checkpoint"):
        (d / name).write_bytes(b"0\n1\nt 0 13\n")
    # an Avro record and its schema in _schemas, as a serializer registers it
    (root / "r.avsc").write_bytes(AVRO_SCHEMA)
    run("produce", "--log-dir", str(d), "--topic", AVRO_TOPIC, "--no-fsync", "--format",
        "jsonl", "--value-serializer", "avro", "--value-schema", str(root / "r.avsc"),
        stdin=b'{"value": {"a": 1}}\n')
    # a group's committed offset in __consumer_offsets
    (d / OFFSETS).mkdir()
    run("groups", str(d), "--reset-offsets", "--group", "g", "--topic", TOPIC,
        "--to-earliest", "--execute")
    m = d / META
    m.mkdir()
    (m / "quorum-state").write_bytes(QUORUM_STATE)
    (m / "00000000000000000000.log").write_bytes(b"")
    (m / KRAFT_SNAPSHOT).write_bytes((d / KINDS[".log"]).read_bytes())
    (d / ".lock").touch()
    missing = [k for k, rel in KINDS.items() if not (d / rel).exists()]
    assert not missing, f"the base log directory lacks {missing}"
    return d


def apply_variant(path: Path, variant: str) -> None:
    """Replace the file at ``path`` with ``variant``."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    if variant in SIZES:
        with open(path, "wb") as f:
            f.truncate(SIZES[variant])     # sparse: no block written
    elif variant == "fifo":
        os.mkfifo(path)
    elif variant == "link-dev-zero":
        os.symlink("/dev/zero", path)
    elif variant == "link-dev-urandom":
        os.symlink("/dev/urandom", path)
    elif variant == "directory":
        path.mkdir()
    elif variant == "socket":
        bind_socket(path)
    else:
        raise ValueError(variant)


def bind_socket(path: Path) -> None:
    """A Unix socket's file at ``path``, bound by its name from its directory (a socket's
    path may not pass 107 bytes)."""
    cwd = os.getcwd()
    os.chdir(path.parent)
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(path.name)
    finally:
        s.close()
        os.chdir(cwd)


# -- the subprocess of one case --------------------------------------------------------------

class _Hang(BaseException):
    """Raised by the per-command alarm (a BaseException: no except clause swallows it)."""


def _status_kib(name: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _run_one(argv: list[str], out_path: Path, err_path: Path) -> dict:
    from kafkalog_cli.cli import main

    saved = os.dup(1), os.dup(2)
    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    code, hung = None, False
    _reset_peak()
    t = time.monotonic()
    signal.alarm(COMMAND_SECONDS)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(out, 1)
        os.dup2(err, 2)
        try:
            main(list(argv))
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except _Hang:
            hung = True
        except BaseException as e:  # noqa: BLE001 - reported, not raised
            import traceback

            sys.stderr.write("".join(traceback.format_exception(e)))
            code = -1
    finally:
        signal.alarm(0)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - a closed pipe, an encoding error: measured below
            pass
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (out, err, *saved):
            os.close(fd)
    seconds = time.monotonic() - t
    peak = _status_kib("VmHWM")

    def head(p: Path) -> str:
        with open(p, "rb") as f:
            return f.read(64 << 10).decode("utf-8", "replace")

    return {"exit": code, "hung": hung, "seconds": round(seconds, 3), "peakKib": peak,
            "stdoutBytes": out_path.stat().st_size, "stderrBytes": err_path.stat().st_size,
            "stdout": head(out_path), "stderr": head(err_path)}


def _alarm(signum, frame):
    raise _Hang


def main() -> None:
    variant, root, results = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    signal.signal(signal.SIGALRM, _alarm)
    base = root / "base"
    scratch = Path(tempfile.mkdtemp(prefix="case-", dir=root))
    (scratch / "input.txt").write_bytes(b"hello\n")
    (scratch / "offsets.json").write_bytes(
        b'{"partitions": [{"topic": "%s", "partition": 0, "offset": 1}]}' % TOPIC.encode())
    for i, (kind, rel) in enumerate(KINDS.items()):
        # a directory of its own per kind (what one command left, a lock included, is
        # not the next kind's)
        log_dir = scratch / f"logs-{i}"
        shutil.rmtree(scratch / "export", ignore_errors=True)
        shutil.copytree(base, log_dir)
        apply_variant(log_dir / rel, variant)
        for name, argv in commands(log_dir, kind):
            with open(results, "a") as f:   # where it got to, should the case be killed
                f.write(json.dumps({"kind": kind, "command": name, "started": True}) + "\n")
            r = _run_one(argv, scratch / "stdout", scratch / "stderr")
            with open(results, "a") as f:
                f.write(json.dumps({"kind": kind, "command": name, **r}) + "\n")
        shutil.rmtree(log_dir, ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
