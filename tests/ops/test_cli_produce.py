"""``kafkalog produce`` end to end through the CLI."""

import json
import os
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from kafkalog_cli.cli.app import app, main

runner = CliRunner()


def invoke(args, stdin=b""):
    return runner.invoke(app, args, input=stdin)


def test_produce_json_summary_and_dump(tmp_path):
    r = invoke(["produce", "--log-dir", str(tmp_path / "l"), "--topic", "t", "--batch-size",
                "10", "--config", "segment.bytes=1000", "-o", "json"],
               b"".join(b"line %d\n" % i for i in range(100)))
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert (out["records"], out["firstOffset"], out["lastOffset"]) == (100, 0, 99)
    assert out["segmentsRolled"] >= 1
    r = invoke(["dump-segment", str(tmp_path / "l/t-0"), "--print-data-log", "-o", "json"])
    assert r.exit_code == 0
    payloads = [json.loads(x).get("value") for x in r.stdout.splitlines()]
    assert [p for p in payloads if p is not None] == [f"line {i}" for i in range(100)]
    r = invoke(["verify-index", str(tmp_path / "l"), "-o", "json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["ok"]


def test_bad_config_names_key(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["produce", "--log-dir", str(tmp_path / "l"), "--topic", "t", "--config",
              "segment.ms=0"])
    assert e.value.code == 2
    assert "segment.ms" in capsys.readouterr().err


def test_config_file_and_jsonl_suffix(tmp_path):
    (tmp_path / "server.properties").write_text("log.segment.bytes=1000\nnum.partitions=3\n")
    data = tmp_path / "in.ndjson"
    data.write_text("".join(json.dumps({"value": "x" * 50}) + "\n" for _ in range(50)))
    r = invoke(["produce", "--log-dir", str(tmp_path / "l"), "--topic", "t", "--config-file",
                str(tmp_path / "server.properties"), "--batch-size", "5", str(data),
                "-o", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["segmentsRolled"] >= 2


def test_malformed_line_exits_nonzero_with_summary(tmp_path, capsys):
    # produce's contract: with -o json the summary is on stdout whether the run completed
    # or stopped (the error line on stderr)
    data = tmp_path / "in.jsonl"
    data.write_text('{"value": "a"}\n{"value": "b"}\nnot json\n')
    with pytest.raises(SystemExit) as e:
        main(["produce", "--log-dir", str(tmp_path / "l"), "--topic", "t", str(data),
              "--batch-size", "1", "-o", "json"])
    assert e.value.code == 1
    out, err = capsys.readouterr()
    assert f"{data}:3" in err and err.count("\n") == 1
    summary = json.loads(out)
    assert summary["records"] == 2 and summary["error"] and not summary["ok"]


_HOLDER = """
import fcntl, os, sys, time
fd = os.open(os.path.join(sys.argv[1], ".lock"), os.O_RDWR | os.O_CREAT)
fcntl.lockf(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(30)
"""


def test_held_lock_refuses(tmp_path, capsys):
    d = tmp_path / "l"
    d.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(d)], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"locked"
        (tmp_path / "in.txt").write_text("a record\n")
        with pytest.raises(SystemExit) as e:
            main(["produce", "--log-dir", str(d), "--topic", "t", str(tmp_path / "in.txt")])
        assert e.value.code == 1
        assert "Failed to acquire lock" in capsys.readouterr().err
        assert not (d / "t-0").exists()
    finally:
        holder.kill()
        holder.wait()


def test_second_concurrent_produce_refused(tmp_path):
    d = tmp_path / "l"
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    slow = subprocess.Popen(
        [sys.executable, "-m", "kafkalog_cli", "produce", "--log-dir", str(d), "--topic", "t",
         "-o", "json"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=env)
    try:
        # one whole input chunk (1 MiB): the first produce has read records, so it holds
        # the lock (nothing is created before a record was read) and waits for more
        first = b"x" * 99 + b"\n"
        slow.stdin.write(first * ((1 << 20) // len(first) + 1))
        slow.stdin.flush()
        for _ in range(200):
            if (d / "t-0").exists():
                break
            time.sleep(0.05)
        second = subprocess.run(
            [sys.executable, "-m", "kafkalog_cli", "produce", "--log-dir", str(d), "--topic",
             "t"], input=b"second\n", capture_output=True, env=env)
        assert second.returncode == 1
        assert b"Failed to acquire lock" in second.stderr
    finally:
        out, _ = slow.communicate(b"", timeout=60)
    assert json.loads(out)["records"] == (1 << 20) // len(first) + 1


@pytest.mark.parametrize("args", [
    ["--timestamp", "99999999999999999999"], ["--timestamp", str(2**63)],
    ["--timestamp", "-2"], ["--partition", "99999999999"], ["--partition", str(2**31)],
    ["--producer-id", str(2**63)], ["--leader-epoch", str(2**31)],
])
def test_out_of_range_numbers_are_usage_errors(tmp_path, args):
    r = invoke(["produce", "--log-dir", str(tmp_path / "l"), "--topic", "t", *args], b"x\n")
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and args[0] in r.output
    assert not (tmp_path / "l").exists()


def test_int64_and_int32_maxima_accepted(tmp_path):
    r = invoke(["produce", "--log-dir", str(tmp_path / "l"), "--topic", "t", "--timestamp",
                str(2**63 - 1), "--partition", str(2**31 - 1), "--config",
                f"message.timestamp.after.max.ms={2**63 - 1}", "-o", "json"], b"x\n")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "l" / f"t-{2**31 - 1}").is_dir()


@pytest.mark.parametrize("args", [
    ["--topic", "a/b"], ["--topic", ".."], ["--topic", "t", "--topic-id", "nonsense"],
    ["--topic", "t", "--config", "segment.ms=0"], ["--topic", "t", "--key-separator", ""],
    # Uuid.RESERVED: ZERO_UUID and ONE_UUID (METADATA_TOPIC_ID)
    ["--topic", "t", "--topic-id", "AAAAAAAAAAAAAAAAAAAAAA"],
    ["--topic", "t", "--topic-id", "AAAAAAAAAAAAAAAAAAAAAQ"],
])
def test_bad_arguments_create_nothing(tmp_path, args):
    d = tmp_path / "l"
    with pytest.raises(SystemExit) as e:
        main(["produce", "--log-dir", str(d), *args, os.devnull])
    assert e.value.code == 2
    assert not d.exists()


def test_refused_first_batch_leaves_no_empty_partition(tmp_path):
    d = tmp_path / "l"
    r = invoke(["produce", "--log-dir", str(d), "--topic", "t", "--config",
                "max.message.bytes=10", "-o", "json"], b"x\n")
    assert r.exit_code != 0
    assert not (d / "t-0").exists()
    assert not list(d.glob("t-0*"))
    # an existing partition is kept, with its records
    assert invoke(["produce", "--log-dir", str(d), "--topic", "t"], b"a\n").exit_code == 0
    r = invoke(["produce", "--log-dir", str(d), "--topic", "t", "--config",
                "max.message.bytes=10"], b"x\n")
    assert r.exit_code != 0
    r = invoke(["dump-segment", str(d / "t-0"), "--print-data-log", "-o", "json"])
    assert [json.loads(x).get("value") for x in r.stdout.splitlines()
            if '"record"' in x] == ["a"]


@pytest.mark.parametrize("args,message", [
    (["--config", "max.message.bytes=10"], "exceeds the maximum"),
    (["--config", "segment.bytes=14"], "segment"),
    (["--config", "message.timestamp.before.max.ms=1000", "--timestamp", "5"], "Timestamp 5"),
    (["--config", "cleanup.policy=compact"], "Compacted topic"),
])
def test_refused_records_exit_1(tmp_path, capsys, args, message):
    data = tmp_path / "in.txt"
    data.write_bytes(b"x\n")
    with pytest.raises(SystemExit) as e:
        main(["produce", "--log-dir", str(tmp_path / "l"), "--topic", "t", *args, str(data)])
    assert e.value.code == 1
    assert message in capsys.readouterr().err


def test_help_documents_exit_status():
    r = invoke(["produce", "--help"])
    assert "Exit status" in r.stdout and "usage error" in r.stdout


@pytest.mark.parametrize("key", ["nosuch.key", "message.timestamp.difference.max.ms"])
def test_unknown_config_key_refused(tmp_path, capsys, key):
    with pytest.raises(SystemExit) as e:
        main(["produce", "--log-dir", str(tmp_path / "l"), "--topic", "t", "--config",
              f"{key}=1", os.devnull])
    assert e.value.code == 2
    assert f"Unknown topic config name: {key}" in capsys.readouterr().err
    assert not (tmp_path / "l").exists()


def test_known_topic_keys_without_effect_accepted(tmp_path):
    r = invoke(["produce", "--log-dir", str(tmp_path / "l"), "--topic", "t",
                "--config", "retention.ms=1000", "--config", "min.insync.replicas=2",
                "--config", "log.roll.hours=1", "-o", "json"], b"x\n")
    assert r.exit_code == 0, r.output


def test_config_file_read_as_java_properties(tmp_path, capsys):
    # Properties.load: a backslash continues the line, whitespace separates key and value
    (tmp_path / "s.properties").write_bytes(b"log.segment.bytes=1\\\n    00\nlog.roll.ms 99999\n")
    r = invoke(["produce", "--log-dir", str(tmp_path / "l"), "--topic", "t", "--config-file",
                str(tmp_path / "s.properties"), "--batch-size", "1", "-o", "json"],
               b"".join(b"%d\n" % i for i in range(20)))
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["segmentsRolled"] >= 10
    (tmp_path / "bad.properties").write_bytes(b"a=\\u12\n")
    with pytest.raises(SystemExit) as e:
        main(["produce", "--log-dir", str(tmp_path / "m"), "--topic", "t", "--config-file",
              str(tmp_path / "bad.properties")])
    assert e.value.code == 2
    assert "Malformed \\uxxxx encoding" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_explicit_format_wins_over_the_file_name(tmp_path):
    """--format lines on a *.jsonl file reads lines (each whole line a value); without
    --format the name picks jsonl."""
    data = tmp_path / "x.jsonl"
    data.write_text('{"value":"a","key":"k"}\n')
    for fmt, want in ((["--format", "lines"], '{"value":"a","key":"k"}'), ([], "a")):
        d = tmp_path / ("l" + str(len(fmt)))
        r = invoke(["produce", "--log-dir", str(d), "--topic", "t", *fmt, str(data)])
        assert r.exit_code == 0, r.output
        r = invoke(["dump-segment", str(d / "t-0"), "--print-data-log", "-o", "json"])
        payloads = [json.loads(x).get("value") for x in r.stdout.splitlines()]
        assert [p for p in payloads if p is not None] == [want]
    plain = tmp_path / "y.ndjson"
    plain.write_text("plain text\n")
    r = invoke(["produce", "--log-dir", str(tmp_path / "l9"), "--topic", "t", "--format",
                "lines", str(plain)])
    assert r.exit_code == 0, r.output


def test_ctrl_c_closes_cleanly_and_prints_the_summary(tmp_path):
    """SIGINT while produce waits for more input: what was appended stays complete (the
    directory closes cleanly and verifies), the summary goes to stdout (-o json) with
    error "interrupted", and the exit status is 130."""
    import signal

    d = tmp_path / "l"
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    p = subprocess.Popen(
        [sys.executable, "-m", "kafkalog_cli", "produce", "--log-dir", str(d), "--topic", "t",
         "--batch-size", "100", "-o", "json"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=env,
        # a test run in the background (nohup, CI) inherits SIGINT ignored, and Python
        # then never installs its KeyboardInterrupt handler: restore the default
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        p.stdin.write(b"".join(b"%07d" % i + b"x" * 92 + b"\n" for i in range(30000)))
        p.stdin.flush()
        log = d / "t-0" / f"{0:020d}.log"
        # wait until every whole chunk is appended and produce blocks reading stdin for
        # the rest (the signal then lands between appends, not inside one)
        deadline = time.monotonic() + 30
        size, stable_since = -1, time.monotonic()
        while True:
            assert time.monotonic() < deadline and p.poll() is None
            now = log.stat().st_size if log.exists() else 0
            if now != size:
                size, stable_since = now, time.monotonic()
            elif size > 0 and time.monotonic() - stable_since > 0.5:
                break
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err
    summary = json.loads(out.decode().splitlines()[0])
    assert summary["error"] == "interrupted" and summary["cleanShutdown"]
    assert 0 < summary["records"] <= 30000
    assert (d / ".kafka_cleanshutdown").exists()
    r = invoke(["verify-index", str(d), "-o", "json"])
    assert r.exit_code == 0, r.output
    r = invoke(["dump-segment", str(d / "t-0"), "-o", "json"])
    counts = [json.loads(x).get("count", 0) for x in r.stdout.splitlines()]
    assert sum(counts) == summary["records"]


@pytest.mark.corpus
def test_decoded_internal_records_of_a_dump_are_refused(tmp_path, corpus_root):
    """A dump of __cluster_metadata with --print-data-log holds the decoders' JSON, not
    the records' bytes: produce refuses it (it wrote 12,156 records of the corpus back as
    JSON text before), naming the line, and writes nothing; read -o json is refused the
    same way, and --no-decode output is taken (the bytes come back)."""
    tried = 0
    for part in sorted(corpus_root.rglob("__cluster_metadata-0")):
        out = tmp_path / part.parent.name
        dumped = invoke(["dump-segment", str(part), "--print-data-log", "--max-bytes",
                         "20000", "-o", "json"]).stdout
        objs = [json.loads(x) for x in dumped.splitlines()]
        first = next((i for i, o in enumerate(objs, 1)
                      if o["type"] == "record" and "controlType" not in o), None)
        if first is None:
            continue  # only snapshots and control records
        tried += 1
        assert objs[first - 1]["keyType"] is not None
        r = invoke(["produce", "--log-dir", str(out), "--topic", "copy", "--format", "jsonl",
                    "-o", "json"], dumped.encode())
        from kafkalog_cli.cli.exit_codes import for_error

        assert for_error(r.exception) == 1
        assert str(r.exception).startswith(f"<stdin>:{first}: a decoded record of an "
                                           "internal topic")
        assert json.loads(r.stdout)["records"] == 0
        if tried == 2:
            break
        raw = invoke(["read", str(part), "--no-decode", "--max-records", "100",
                      "-o", "json"]).stdout
        r = invoke(["produce", "--log-dir", str(out), "--topic", "raw", "--format", "jsonl",
                    "-o", "json"], raw.encode())
        assert r.exit_code == 0 and json.loads(r.stdout)["records"] == len(raw.splitlines())
    assert tried >= 2
