"""A segment's ``.log`` that is not a regular file (issue 24, item 7): a FIFO made
verify-index and audit block forever, read exit 0 with "Processed a total of 0 messages"
(for links to /dev/zero and /dev/urandom too) and describe exit 0 saying nothing. Every
command now ends at once with one line naming the file (exit 3; describe and audit, which
report unreadable files as findings, exit 1). Every other kind of small file, every
command: tests/fuzz/test_fuzz_small_files.py."""

from __future__ import annotations

import json
import shutil

import pytest
from kafkalog_testkit import FIXTURES, SPECIAL_VARIANTS, make_special, run_cli_measured

VARIANTS = SPECIAL_VARIANTS


@pytest.fixture
def log_dir(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    shutil.copy(FIXTURES / "meta.properties", d)
    for name in ("plain-0", "headers-0"):
        shutil.copytree(FIXTURES / name, d / name)
    return d


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("command, args, code", [
    ("verify-index", ["-o", "json"], 3),
    ("read", ["--from-beginning"], 3),
    ("dump-segment", [], 3),
    ("audit", ["--engine", "local", "-o", "json"], 1),
    ("describe", ["-o", "json"], 1),
])
def test_a_special_log_file_is_a_one_line_error(log_dir, variant, command, args, code):
    seg = log_dir / "plain-0" / "00000000000000000000.log"
    make_special(seg, variant)
    target = log_dir / "plain-0" if command in ("read", "dump-segment") else log_dir
    r = run_cli_measured(command, str(target), *args, timeout=30)
    assert not r.hung, f"{command} still running after 30 s"
    assert r.returncode == code, (r.returncode, r.stdout[-500:], r.stderr[-1000:])
    assert "Traceback" not in r.stderr and "Processed a total of 0" not in r.stderr
    if code == 3:
        assert r.stderr.strip().splitlines()[-1].startswith(f"error: {seg}: is a "), r.stderr
        assert r.stderr.strip().endswith("not a regular file"), r.stderr
        return
    # reported as a finding of the partition, the other partition described as usual
    out = json.loads(r.stdout)
    text = json.dumps(out)
    assert f"{seg}: is a " in text and "not a regular file" in text, text[:2000]
    assert "headers-0" in text
