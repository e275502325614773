"""``read --format``: kcat's ``-f`` output. The oracle is kcat itself (librdkafka)
consuming the same partitions from ``kafkalog serve --read-only``: the bytes must be
equal, token for token (null and empty keys and values, headers with null and empty
values, v0/v1 messages, binary bytes)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from kafka_testkit import skip_or_fail
from kafkalog_testkit import run_cli_inprocess as cli

from kafkalog_cli.errors import InvalidArgumentError
from kafkalog_cli.render.read import parse_kcat_format

PARTITIONS = ["headers-0", "nulls-0", "plain-0", "legacy-v0-0", "legacy-v1-0", "lz4-0"]
#: every token and escape kcat takes; the last literal ends at the NUL that \\0 makes
FORMATS = [
    r"%t|%p|%o|%k|%K|%s|%S|%T|%h|%R\x41\102\t\\%%\0x43\xZZ,%o\n",
    r"Topic %t [%p] at offset %o: key %k: %s\n",
]


def _read(*args: str) -> tuple[int, bytes, str]:
    """``kafkalog read ARGS`` in this process: (status, stdout bytes, stderr)."""
    from typer.testing import CliRunner

    from kafkalog_cli.cli import main

    with CliRunner().isolation() as (out, err, _):
        code = 0
        try:
            main(["read", *args])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 0
        return code, out.getvalue(), err.getvalue().decode()


def _kcat():
    exe = shutil.which("kcat") or shutil.which("kafkacat")
    if exe is None:
        skip_or_fail("kcat is not installed (apt-get install -y kcat)")
    return exe


@pytest.mark.slow
def test_read_format_equals_kcat(tmp_path, fixtures_root):
    from kafkalog_cli.server.broker import ServerThread
    from kafkalog_cli.server.kafka_apis import ServerOptions

    exe = _kcat()
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    shutil.copy(fixtures_root / "meta.properties", log_dir)
    for p in PARTITIONS:
        shutil.copytree(fixtures_root / p, log_dir / p)
    (log_dir / ".kafka_cleanshutdown").write_text("")
    with ServerThread(log_dir, ServerOptions(port=0, read_only=True)) as s:
        for part in PARTITIONS:
            topic = part.rsplit("-", 1)[0]
            for fmt in FORMATS[:1] if part != "headers-0" else FORMATS:
                r = subprocess.run([exe, "-b", s.bootstrap, "-C", "-t", topic, "-p", "0",
                                    "-o", "beginning", "-e", "-q", "-f", fmt],
                                   capture_output=True, timeout=60)
                assert r.returncode == 0, r.stderr
                code, out, err = _read(str(log_dir / part), "--format", fmt)
                assert code == 0, err
                assert out == r.stdout, (part, fmt)


def test_format_tokens_by_hand(fixtures_root):
    """Hand-computed lines of nulls-0 (null key, null value, both null, empty key and
    value, non-UTF-8 bytes): %k/%s print nothing for null or empty, %K/%S -1 for null
    and 0 for empty."""
    code, out, _ = _read(str(fixtures_root / "nulls-0"), "--format", r"%o:%K:%S:[%k][%s]\n")
    assert out.splitlines() == [b"0:-1:8:[][null key]", b"1:10:-1:[null value][]",
                                b"2:-1:-1:[][]", b"3:0:0:[][]",
                                b"4:2:15:[\xff\xfe][\x00\x01\x02 not utf-8 \xc3]"]


def test_format_errors_are_kcats():
    with pytest.raises(InvalidArgumentError, match="Unsupported formatter: %c"):
        parse_kcat_format("%c")  # not one of kcat's tokens (1.7.1 and its master)
    with pytest.raises(InvalidArgumentError, match="Empty formatter"):
        parse_kcat_format("%o%")
    r = cli("read", "fixtures/logs/plain-0", "--format", "%q")
    assert r.returncode == 2 and "Unsupported formatter: %q" in r.stderr
    r = cli("read", "fixtures/logs/plain-0", "--format", "%o", "-o", "json")
    assert r.returncode == 2
