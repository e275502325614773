"""Read-side commands never write: every byte and mtime of a fixture copy is unchanged."""

from __future__ import annotations

import os
import time


def _snapshot(root):
    out = {}
    for p in sorted(root.rglob("*")):
        st = os.stat(p)
        out[p.relative_to(root).as_posix()] = (
            p.read_bytes() if p.is_file() else None, st.st_mtime_ns, st.st_size)
    return out


def test_dump_and_verify_leave_files_untouched(cli, fixtures_copy):
    # age every mtime so that a rewrite within the same clock tick would still show
    old = time.time_ns() - 10**12
    for p in fixtures_copy.rglob("*"):
        os.utime(p, ns=(old, old))
    before = _snapshot(fixtures_copy)
    for args in (
        ["dump-segment", str(fixtures_copy), "-o", "json", "--print-data-log"],
        ["dump-segment", str(fixtures_copy / "multi-0"), "--start-offset", "90", "-o", "kafka"],
        ["dump-segment", *(str(p) for p in sorted(fixtures_copy.rglob("*.index"))),
         "--verify-index-only", "-o", "kafka"],
        ["dump-segment", *(str(p) for p in sorted(fixtures_copy.rglob("*.timeindex"))),
         "-o", "kafka"],
        ["dump-segment", *(str(p) for p in sorted(fixtures_copy.rglob("*.index"))),
         "--index-sanity-check", "-o", "kafka"],
        ["verify-index", str(fixtures_copy), "-o", "json"],
        ["verify-index", str(fixtures_copy), "-o", "text"],
    ):
        cli(*args)
    assert _snapshot(fixtures_copy) == before
