"""produce on hostile input (issue 24, items 8 and 9): a record is not read further than
max.message.bytes can take (a 300 MB line reached 1.25 GB of RSS before its batch was
refused), and JSON nested too deeply for the parser is a malformed line, not a
RecursionError traceback (or, with orjson before 3.9.15, a segmentation fault)."""

from __future__ import annotations

import pytest
from kafkalog_testkit import run_cli_measured

#: the bound of these runs: Python and kafkalog (~25 MB), not the 64 MiB input line
PEAK_KIB = 48 * 1024
LINE = 64 << 20


def _sparse_input(path, head: bytes, size: int = LINE):
    """``head`` then NUL bytes up to ``size``: one long line after ``head``, written as a
    sparse file (no block of zeros written)."""
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


@pytest.mark.parametrize("fmt, args, head", [
    ("lines", [], b"first\n"),
    ("--parse-key", ["--parse-key"], b"k\tfirst\nk\t"),
    ("jsonl", ["--format", "jsonl"], b'{"value": "first"}\n{"value": "'),
    ("console properties", ["--property", "parse.headers=true"], b"h:1\tfirst\n"),
])
def test_a_line_is_not_read_past_what_max_message_bytes_can_take(tmp_path, fmt, args, head):
    src = _sparse_input(tmp_path / "input", head)
    r = run_cli_measured("produce", "--log-dir", str(tmp_path / "logs"), "--topic", "t",
                         "--no-fsync", "-o", "json", *args, str(src), timeout=120)
    assert r.returncode == 1, r.stderr
    # the record before it is written; the long line is named, not read whole
    assert '"records":1' in r.stdout, r.stdout
    assert r.stderr.startswith(f"error: {src}:2: a line of more than "), r.stderr
    assert "max.message.bytes" in r.stderr and len(r.stderr.splitlines()) == 1
    assert r.peak_rss_kib < PEAK_KIB, f"{r.peak_rss_kib} KiB for a {LINE}-byte line"


def test_a_raw_file_is_not_read_past_max_message_bytes(tmp_path):
    src = _sparse_input(tmp_path / "input", b"")
    r = run_cli_measured("produce", "--log-dir", str(tmp_path / "logs"), "--topic", "t",
                         "--no-fsync", "-o", "json", "--format", "raw", str(src),
                         timeout=120)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith(f"error: {src}: more than 1048588 bytes"), r.stderr
    assert r.peak_rss_kib < PEAK_KIB, f"{r.peak_rss_kib} KiB for a {LINE}-byte file"
    assert not (tmp_path / "logs").exists()   # nothing was read: nothing created


def test_the_limit_follows_the_topic_config(tmp_path):
    """``--config max.message.bytes``: a line within it is written; a line past it is not
    read further (a record holds at least its value: such a line can never be one)."""
    src = _sparse_input(tmp_path / "input", b"a" * 2000 + b"\n", 2 << 20)
    r = run_cli_measured("produce", "--log-dir", str(tmp_path / "logs"), "--topic", "t",
                         "--no-fsync", "-o", "json", "--config", "max.message.bytes=3000",
                         str(src), timeout=120)
    assert r.returncode == 1
    assert '"records":1' in r.stdout
    assert r.stderr.startswith(f"error: {src}:2: a line of more than 3000 bytes"), r.stderr


@pytest.mark.parametrize("line", [
    b"[" * 200_000,
    b'{"value": ' + b"[" * 200_000 + b"1" + b"]" * 200_000 + b"}",
    b'{"value": "a", "headers": ' + b'{"k":' * 100_000 + b"1" + b"}" * 100_000 + b"}",
], ids=["bare arrays", "a value of nested arrays", "headers of nested objects"])
def test_deeply_nested_json_is_a_malformed_line(tmp_path, line):
    src = tmp_path / "input.jsonl"
    src.write_bytes(b'{"value": "before"}\n' + line + b"\n")
    r = run_cli_measured("produce", "--log-dir", str(tmp_path / "logs"), "--topic", "t",
                         "--no-fsync", "-o", "json", str(src), timeout=120)
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    assert r.stderr.strip() == f"error: {src}:2: malformed JSON: arrays or objects nested " \
        "too deeply to parse", r.stderr[-2000:]
    assert '"records":1' in r.stdout


def test_deeply_nested_json_is_a_malformed_line_with_a_serializer(tmp_path):
    """The JSON value a serializer takes (``--value-serializer``) goes through the same
    parser: 200,000 ``[`` are a malformed line there too."""
    schema = tmp_path / "schema.json"
    schema.write_bytes(b'{"type": "object"}')
    src = tmp_path / "input.jsonl"
    src.write_bytes(b'{"value": {"a": 1}}\n{"value": ' + b"[" * 200_000 + b"1" +
                    b"]" * 200_000 + b"}\n")
    r = run_cli_measured("produce", "--log-dir", str(tmp_path / "logs"), "--topic", "t",
                         "--no-fsync", "-o", "json", "--value-serializer", "json-schema",
                         "--value-schema", str(schema), str(src), timeout=120)
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    assert r.stderr.strip() == f"error: {src}:2: malformed JSON: arrays or objects nested " \
        "too deeply to parse", r.stderr[-2000:]
    assert '"records":1' in r.stdout
