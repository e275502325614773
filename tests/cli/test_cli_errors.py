"""Bad input: one line on stderr naming the file (and byte position), no traceback, exit 2
for usage errors and 3 for unreadable input; ``--debug`` shows the traceback. These run a
real subprocess (exit status and streams as a shell sees them)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from kafkalog_testkit import REPO, run_cli

SEG0 = "00000000000000000000"


def _one_error_line(r, *needles):
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: ")
    for n in needles:
        assert n in lines[0]
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("command", ["dump-segment", "verify-index"])
def test_missing_path(command, tmp_path):
    missing = tmp_path / "nope" / f"{SEG0}.log"
    r = run_cli(command, str(missing))
    assert r.returncode == 3
    _one_error_line(r, str(missing), "No such file")


@pytest.mark.parametrize("command", ["dump-segment", "verify-index"])
def test_name_not_a_base_offset(command, tmp_path):
    p = tmp_path / "segment.log"
    p.write_bytes(b"\x00" * 100)
    r = run_cli(command, str(p))
    assert r.returncode == 3
    _one_error_line(r, str(p), "20-digit")


@pytest.mark.parametrize("command", ["dump-segment", "verify-index"])
def test_empty_directory(command, tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    r = run_cli(command, str(d))
    assert r.returncode == 3
    _one_error_line(r, str(d), "not a partition directory or log directory")


def test_not_a_kafka_file_suffix(tmp_path):
    """dump-segment skips a file of an unknown kind as Kafka's tool does (not an error);
    verify-index still refuses it."""
    p = tmp_path / "notes.txt"
    p.write_text("hello")
    r = run_cli("dump-segment", str(p))
    assert r.returncode == 0
    assert r.stdout == f"Dumping {p}\n"
    assert r.stderr == f"Ignoring unknown file {p}\n"
    r = run_cli("verify-index", str(p))
    assert r.returncode == 3
    _one_error_line(r, str(p), "not a Kafka segment file")


def test_not_a_kafka_log_content(tmp_path):
    p = tmp_path / f"{SEG0}.log"
    p.write_text("this is a text file, not a record batch\n" * 3)
    r = run_cli("dump-segment", str(p), "-o", "kafka")
    assert r.returncode == 3
    _one_error_line(r, str(p), "at byte 0", "not a Kafka log")
    assert "Found 120 invalid bytes at the end of" in r.stdout


def test_truncated_file(fixtures_root, tmp_path):
    p = tmp_path / f"{SEG0}.log"
    p.write_bytes((fixtures_root / "plain-0" / f"{SEG0}.log").read_bytes()[:100])
    r = run_cli("dump-segment", str(p), "-o", "json")
    assert r.returncode == 3
    _one_error_line(r, str(p), "at byte 0", "truncated")
    assert r.stdout.splitlines()[-1].startswith('{"type":"invalidBytes"')


def test_truncated_tail_is_a_finding(fixtures_root):
    r = run_cli("dump-segment", str(fixtures_root / "corrupt-truncated-0"), "-o", "kafka")
    assert r.returncode == 1
    _one_error_line(r, "corrupt-truncated-0", "at byte 5005")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root reads files whatever their mode")
@pytest.mark.parametrize("command", ["dump-segment", "verify-index"])
def test_permission_denied(command, fixtures_root, tmp_path):
    d = tmp_path / "plain-0"
    shutil.copytree(fixtures_root / "plain-0", d)
    log = d / f"{SEG0}.log"
    log.chmod(0)
    try:
        r = run_cli(command, str(log))
    finally:
        log.chmod(0o644)
    assert r.returncode == 3
    _one_error_line(r, str(log), "Permission denied")


def test_usage_errors_exit_2():
    r = run_cli("dump-segment", "--no-such-option", "x")
    assert r.returncode == 2
    assert "No such option" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("dump-segment")
    assert r.returncode == 2 and "Missing argument" in r.stderr
    r = run_cli("dump-segment", "fixtures/logs/plain-0", "--start-offset", "5",
                "--end-offset", "2")
    assert r.returncode == 2 and r.stdout == ""
    r = run_cli("dump-segment", "fixtures/logs/plain-0", "--data-encoding", "rot13")
    assert r.returncode == 2


def test_debug_shows_traceback(tmp_path):
    missing = tmp_path / "nope.log"
    r = run_cli("--debug", "dump-segment", str(missing))
    assert r.returncode != 0
    assert "Traceback (most recent call last)" in r.stderr
    assert "UnreadableError" in r.stderr


def test_stdout_and_stderr_are_separate(fixtures_root):
    r = run_cli("dump-segment", str(fixtures_root / "corrupt-timeindex-0" /
                                    f"{SEG0}.timeindex"), "-o", "kafka")
    assert r.returncode == 0  # Kafka's tool's report, exit 0 as the tool (verify-index: 1)
    assert "Found timestamp mismatch in :" in r.stderr and "mismatch" not in r.stdout
    assert r.stdout.startswith("Dumping ") and "timestamp: " in r.stdout
    r = run_cli("dump-segment", str(fixtures_root / "corrupt-index-position-0" /
                                    f"{SEG0}.index"), "-o", "kafka")
    assert r.returncode == 1  # a damaged index: Kafka's tool dies at the bad entry
    assert "no whole batch starts there" in r.stderr and "batch" not in r.stdout
    assert r.stdout.startswith("Dumping ") and "offset: " in r.stdout


def test_no_output_option_when_piped_is_kafka_lines(fixtures_root):
    r = run_cli("dump-segment", str(fixtures_root / "plain-0"))
    assert r.stdout.splitlines()[1] == "Log starting offset: 0"
    r = run_cli("verify-index", str(fixtures_root / "plain-0"))
    assert r.stdout.startswith("{") and r.returncode == 0


def test_os_error_from_any_command_is_one_line_exit_3(tmp_path):
    # /proc does not allow creating directories: produce cannot create its log dir (once
    # it has read a record: nothing is created for an empty input)
    (tmp_path / "in.txt").write_text("a record\n")
    r = run_cli("produce", "--log-dir", "/proc/kafkalog-test", "--topic", "t", "in.txt",
                cwd=tmp_path)
    assert r.returncode == 3
    assert r.stderr.strip().count("\n") == 0
    assert "/proc/kafkalog-test" in r.stderr and "Traceback" not in r.stderr


def _closed_early(args, unbuffered: bool, lines: int = 1):
    """Run ``kafkalog ARGS`` with stdout on a pipe whose reader takes ``lines`` lines and
    closes it (as ``| head -1``); returns (exit status, stderr)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    p = subprocess.Popen([sys.executable, "-m", "kafkalog_cli", *args], cwd=REPO, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(lines):
        assert p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode()
    p.stderr.close()
    return p.wait(timeout=120), err


@pytest.mark.parametrize("unbuffered", [False, True])
@pytest.mark.parametrize("output", ["kafka", "json", "text"])
def test_closed_stdout_pipe_exits_0_quietly(output, unbuffered):
    """Far more output than a pipe buffers (the multi-0 dump, 20 times), so the command is
    still writing when its reader goes away: exit 0, nothing on stderr but what Kafka's
    tool prints there too (the later segments' 'Non-consecutive offsets', if the dump
    got that far)."""
    args = ["dump-segment", *["fixtures/logs/multi-0"] * 20, "--deep-iteration", "-o", output]
    rc, err = _closed_early(args, unbuffered)
    kafka_diagnostic = re.compile(r"Non-consecutive offsets in .*|  -?\d+ is followed by \d+")
    assert rc == 0
    assert all(kafka_diagnostic.fullmatch(ln) for ln in err.splitlines()), err


def test_closed_stdout_pipe_version():
    """The fast ``--version`` path: the reader is gone before the process writes."""
    rc, err = _closed_early(["--version"], False, lines=0)
    assert (rc, err) == (0, "")


def test_negative_magic_is_corrupt_data_not_a_traceback(tmp_path):
    """A batch whose magic byte is 0xFF is a legacy batch with magic -1 (Kafka reads the
    magic as a signed byte), whose CRC-32 fails: every command reports it in one line
    naming the file and the byte position, and none shows a traceback."""
    from kafkalog_testkit import raw_batch, raw_record

    d = tmp_path / "negmagic-0"
    d.mkdir()
    good = raw_batch(0, [raw_record(0, 0, b"k", b"v")])
    bad = bytearray(raw_batch(1, [raw_record(0, 0, b"k", b"v")]))
    bad[16] = 0xFF
    log = d / f"{SEG0}.log"
    log.write_bytes(good + bytes(bad))
    at = f"{log} at byte {len(good)}"
    for output in ("kafka", "json", "text"):
        for extra in ((), ("--deep-iteration",), ("--print-data-log",)):
            r = run_cli("dump-segment", str(log), "-o", output, *extra)
            assert "Traceback" not in r.stderr, r.stderr
            assert r.returncode == 1, r.stderr
            assert f"error: {at}: record batch fails its CRC check" in r.stderr
    r = run_cli("dump-segment", str(log), "-o", "kafka")
    assert "magic: -1" in r.stdout and "isvalid: false" in r.stdout
    r = run_cli("read", str(d))
    assert r.returncode == 1  # damaged data: the status dump-segment gives it too
    _one_error_line(r, at, "Record is corrupt")
    for command in ("describe", "verify-index"):
        r = run_cli(command, str(d), "-o", "json")
        assert "Traceback" not in r.stderr and r.returncode in (0, 1), r.stderr
