"""recover with little space (issue 16, case 10): the quarantine keeps what is cut, not a
preallocated index's zero tail (``AbstractIndex`` preallocates ``segment.index.bytes``,
10 MiB by default, rounded down to whole entries: ``RandomAccessFile.setLength``), and
undo gives back the exact file, zero tail included; temp files of interrupted writes are
cleaned (into the quarantine, like anything recovery removes)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from recovery_helpers import make_batches, quarantined_bytes, tree_bytes, write_partition

from kafkalog_cli.recovery import recover, undo

INDEX_BYTES = 10 * 1024 * 1024  # segment.index.bytes


def _preallocated_partition(root: Path) -> Path:
    """Two segments; the active one was being written when the broker died: its
    .index/.timeindex still preallocated (zero tail) and a torn batch after its last."""
    pdir = write_partition(root, [make_batches(0, 40, value_size=200),
                                  make_batches(40, 40, value_size=200)])
    active = pdir / "00000000000000000040"
    for suffix, entry in ((".index", 8), (".timeindex", 12)):
        with open(str(active) + suffix, "r+b") as f:
            f.truncate(INDEX_BYTES // entry * entry)
    with open(str(active) + ".log", "ab") as f:
        f.write(make_batches(80, 1, value_size=200)[0][:102])
    return pdir


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _session_bytes(session: Path) -> int:
    return sum(p.stat().st_blocks * 512 for p in session.rglob("*") if p.is_file())


def test_the_quarantine_keeps_live_entries_and_undo_restores_the_zero_tail(tmp_path):
    pdir = _preallocated_partition(tmp_path)
    before = {p.name: _sha(p) for p in pdir.iterdir()}
    sizes = {p.name: p.stat().st_size for p in pdir.iterdir()}
    res = recover([pdir], truncate=True)
    assert res.ok
    session = Path(res.partitions[0].quarantine)
    entries = json.loads((session / "manifest.json").read_text())["entries"]
    rewrites = {Path(e["original"]).name: e for e in entries if e["action"] == "rewrite"}
    for suffix in (".index", ".timeindex"):
        e = rewrites["00000000000000000040" + suffix]
        assert e["size"] == sizes["00000000000000000040" + suffix] > INDEX_BYTES - 12
        stored = Path(e["quarantine"]).stat().st_size
        assert 0 < stored < 4096  # the live entries, not 10 MiB
        assert hashlib.sha256(quarantined_bytes(e)).hexdigest() == e["sha256"] == \
            before["00000000000000000040" + suffix]
    cut = next(e for e in entries if e["action"] == "cut")
    assert cut["range"][1] - cut["range"][0] == 102
    assert _session_bytes(session) < 64 * 1024
    # undo: byte for byte, the 10 MiB files included
    assert undo(session).ok
    assert {p.name: _sha(p) for p in pdir.iterdir() if p.is_file()} == before
    assert {p.name: p.stat().st_size for p in pdir.iterdir() if p.is_file()} == sizes


def test_stale_temp_files_are_cleaned_into_the_quarantine(tmp_path):
    pdir = write_partition(tmp_path, [make_batches(0, 10)])
    (pdir / "00000000000000000010.snapshot.tmp").write_bytes(b"\x00\x01half a snapshot")
    (pdir / "leader-epoch-checkpoint.tmp").write_bytes(b"0\n1\n0 0")
    (pdir / "00000000000000000000.index.kafkalog-undo.tmp").write_bytes(b"\x00" * 8)
    (pdir / "notes.tmp").write_bytes(b"not a Kafka file: left alone")
    # the log directory's: an interrupted checkpoint write
    (tmp_path / "recovery-point-offset-checkpoint.tmp").write_bytes(b"0\n1\ntopic 0")
    before = tree_bytes(tmp_path)
    dry = recover([pdir]).partitions[0]
    deleted = sorted(os.path.basename(a.path) for a in dry.actions if a.kind == "delete")
    assert deleted == ["00000000000000000000.index.kafkalog-undo.tmp",
                       "00000000000000000010.snapshot.tmp", "leader-epoch-checkpoint.tmp",
                       "recovery-point-offset-checkpoint.tmp"]
    assert tree_bytes(tmp_path) == before  # a dry run changes nothing
    res = recover([pdir], truncate=True)
    assert res.ok
    left = sorted(p.name for p in tmp_path.rglob("*.tmp") if ".kafkalog-quarantine" not in
                  p.parts)
    assert left == ["notes.tmp"]
    assert not recover([pdir]).work_needed
    assert undo(res.partitions[0].quarantine).ok
    assert tree_bytes(tmp_path) == before


def _mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                       capture_output=True)
    return r.returncode == 0


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 4 MiB tmpfs (root only; skipped elsewhere)."""
    mnt = tmp_path / "mnt"
    if os.geteuid() != 0 or shutil.which("mount") is None or not _mount_tmpfs(mnt, "4m"):
        pytest.skip("needs root to mount a small tmpfs")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(mnt: Path, leave: int) -> None:
    """Fill the file system but ``leave`` bytes."""
    st = os.statvfs(mnt)
    free = st.f_bavail * st.f_frsize
    with open(mnt / "filler", "wb") as f:
        n = max(0, free - leave)
        while n:
            chunk = min(n, 1 << 20)
            f.write(b"\x55" * chunk)
            n -= chunk
    os.sync()


def test_recover_and_undo_with_300_kb_free(small_tmpfs):
    """On tmpfs a preallocated index (``ftruncate``, as ``setLength`` makes it) takes no
    space, but a copy of it would take 10 MiB: recovery must not copy it."""
    pdir = _preallocated_partition(small_tmpfs / "logs")
    before = tree_bytes(small_tmpfs / "logs")
    _fill(small_tmpfs, 300 * 1024)
    res = recover([pdir], truncate=True)
    assert res.ok and res.partitions[0].applied
    assert not recover([pdir]).work_needed
    assert undo(res.partitions[0].quarantine).ok
    assert tree_bytes(small_tmpfs / "logs") == before
