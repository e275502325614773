"""Writes never follow a symbolic link out of the log directory (issue 16, case 5: "no
write of any command ever follows a symlink"): the tmp + rename helper every checkpoint,
snapshot and metadata write goes through, and the append path of produce (and serve,
which shares it)."""

from __future__ import annotations

import errno
import os

import pytest
from kafkalog_testkit import run_cli_inprocess

from kafkalog_cli.errors import UnsafePathError
from kafkalog_cli.storage import fileio
from kafkalog_cli.storage.fileio import open_for_write, write_atomically


@pytest.fixture
def victim(tmp_path):
    d = tmp_path / "outside"
    d.mkdir()
    v = d / "victim"
    v.write_bytes(b"precious")
    return v


def test_a_planted_tmp_link_is_unlinked_not_written_through(tmp_path, victim):
    target = tmp_path / "leader-epoch-checkpoint"
    os.symlink(victim, tmp_path / "leader-epoch-checkpoint.tmp")
    write_atomically(target, "0\n1\n0 0\n")
    assert victim.read_bytes() == b"precious"
    assert target.read_bytes() == b"0\n1\n0 0\n" and not target.is_symlink()
    assert not os.path.lexists(tmp_path / "leader-epoch-checkpoint.tmp")


def test_a_failed_write_leaves_the_old_file_and_no_tmp(tmp_path, monkeypatch):
    target = tmp_path / "recovery-point-offset-checkpoint"
    target.write_bytes(b"0\n0\n")

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fileio.os, "write", full)
    with pytest.raises(OSError, match="No space"):
        write_atomically(target, b"0\n1\nt 0 5\n")
    monkeypatch.undo()
    assert target.read_bytes() == b"0\n0\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


def test_open_for_write_refuses_a_link(tmp_path, victim):
    os.symlink(victim, tmp_path / "00000000000000000000.log")
    with pytest.raises(UnsafePathError, match="symbolic link"):
        open_for_write(tmp_path / "00000000000000000000.log", os.O_RDWR | os.O_CREAT)
    assert victim.read_bytes() == b"precious"


def _produce(log_dir, data_file, *extra):
    return run_cli_inprocess("produce", "--log-dir", str(log_dir), "--topic", "t",
                             str(data_file), *extra)


def test_produce_does_not_append_through_a_linked_segment(tmp_path, victim):
    data = tmp_path / "in.txt"
    data.write_text("a\nb\n")
    log_dir = tmp_path / "logs"
    assert _produce(log_dir, data).returncode == 0
    log = log_dir / "t-0" / "00000000000000000000.log"
    victim.write_bytes(log.read_bytes())
    log.unlink()
    os.symlink(victim, log)
    before = victim.read_bytes()
    r = _produce(log_dir, data)
    assert r.returncode == 3 and "symbolic link" in r.stderr and "Traceback" not in r.stderr
    assert victim.read_bytes() == before


def test_produce_does_not_write_through_planted_tmp_links(tmp_path, victim):
    data = tmp_path / "in.txt"
    data.write_text("a\nb\n")
    log_dir = tmp_path / "logs"
    assert _produce(log_dir, data).returncode == 0
    pdir = log_dir / "t-0"
    for name in ("leader-epoch-checkpoint.tmp", "00000000000000000004.snapshot.tmp"):
        os.symlink(victim, pdir / name)
    for name in ("recovery-point-offset-checkpoint.tmp", "log-start-offset-checkpoint.tmp"):
        os.symlink(victim, log_dir / name)
    # a new epoch rewrites leader-epoch-checkpoint; close writes the snapshot at offset 4
    # and both checkpoints
    assert _produce(log_dir, data, "--leader-epoch", "5").returncode == 0
    assert victim.read_bytes() == b"precious"
    assert (pdir / "leader-epoch-checkpoint").read_text() == "0\n2\n0 0\n5 2\n"
    assert (pdir / "00000000000000000004.snapshot").is_file()
