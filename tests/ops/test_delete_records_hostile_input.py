"""delete-records on hostile files (issue 24, items 5 and 7): its ``--offset-json-file``
and the log directory's ``log-start-offset-checkpoint`` are read with a bound and must
be regular files. Before: a FIFO as the offset file blocked forever, a link to
/dev/zero read until memory ran out (its ``stat`` size, 0, passed the size check), and
a 1 GiB checkpoint was read whole to keep its old bytes for the quarantine (1 GB of RSS)."""

from __future__ import annotations

import shutil

import pytest
from kafkalog_testkit import make_special, run_cli_measured

#: Python and kafkalog (~25-40 MB), far below what reading the files whole takes
PEAK_KIB = 96 * 1024
SPEC = b'{"partitions":[{"topic":"t","partition":0,"offset":1}],"version":1}'


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    d = tmp_path_factory.mktemp("delete-records") / "logs"
    r = run_cli_measured("produce", "--log-dir", str(d), "--topic", "t", "--no-fsync",
                         stdin=b"1\n2\n3\n")
    assert r.returncode == 0, r.stderr
    return d


@pytest.fixture
def log_dir(base, tmp_path):
    return shutil.copytree(base, tmp_path / "logs")


_KIND = {"fifo": "FIFO", "link-dev-zero": "character device", "directory": "directory"}


@pytest.mark.parametrize("variant", sorted(_KIND))
def test_a_special_offset_json_file_is_refused(log_dir, tmp_path, variant):
    spec = tmp_path / "offsets.json"
    make_special(spec, variant)
    r = run_cli_measured("delete-records", str(log_dir), "--offset-json-file", str(spec),
                         timeout=30)
    assert not r.hung, "delete-records still running after 30 s"
    assert r.returncode == 3, (r.returncode, r.stderr[-1000:])
    assert r.stderr.startswith(f"error: {spec}: is a {_KIND[variant]}"), r.stderr[-1000:]
    assert r.stderr.strip().endswith("not a regular file") and len(r.stderr.splitlines()) == 1
    assert r.peak_rss_kib < PEAK_KIB, f"{r.peak_rss_kib} KiB"


def test_an_inflated_offset_json_file_is_refused_unread(log_dir, tmp_path):
    spec = tmp_path / "offsets.json"
    with open(spec, "wb") as f:
        f.write(SPEC)
        f.truncate(1 << 30)
    r = run_cli_measured("delete-records", str(log_dir), "--offset-json-file", str(spec),
                         timeout=30)
    assert r.returncode == 2, (r.returncode, r.stderr[-1000:])
    assert "larger than 16777216 bytes" in r.stderr and len(r.stderr.splitlines()) == 1
    assert r.peak_rss_kib < PEAK_KIB, f"{r.peak_rss_kib} KiB"


def test_an_inflated_log_start_offset_checkpoint_is_not_read_whole(log_dir, tmp_path):
    """The checkpoint that does not parse is read as empty (LogManager.loadLogs) and
    rewritten; a 256 MiB one is not read to keep its bytes (the quarantine copies it a
    piece at a time, its zeros left as holes)."""
    spec = tmp_path / "offsets.json"
    spec.write_bytes(SPEC)
    ckpt = log_dir / "log-start-offset-checkpoint"
    with open(ckpt, "r+b") as f:
        f.truncate(256 << 20)
    r = run_cli_measured("delete-records", str(log_dir), "--offset-json-file", str(spec),
                         "-o", "json", timeout=60)
    assert not r.hung
    assert r.peak_rss_kib < PEAK_KIB, f"{r.peak_rss_kib} KiB for a 256 MiB checkpoint"
    assert r.returncode == 0, (r.returncode, r.stderr[-1000:])
    assert ckpt.read_bytes() == b"0\n1\nt 0 1\n"
