"""Nothing recover (or undo) does is written outside the partition directory it works on
(issue 16, cases 4 and 5): planted manifests, symbolic links in the quarantine, symbolic
links as segment files, planted temp-file links.

The broker's rules used: ``LogLoader`` lists a partition directory with ``File.isFile``,
which follows links (a linked ``.log`` is a segment); the broker never writes through a
link kafkalog refuses, nothing here depends on kafkalog's own output."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from kafkalog_testkit import run_cli_inprocess
from recovery_helpers import standard_partition, tree_bytes

from kafkalog_cli.errors import UnreadableError, UnsafePathError
from kafkalog_cli.recovery import recover, undo


def _session(tmp_path: Path) -> tuple[Path, Path, dict]:
    """``<tmp>/data/topic-0`` recovered once (a cut, rewritten indexes, a checkpoint
    change): its partition dir, its quarantine session and the session's manifest."""
    log_dir = tmp_path / "data"
    log_dir.mkdir()
    pdir = standard_partition(log_dir)
    with open(sorted(pdir.glob("*.log"))[-1], "ab") as f:
        f.write(b"\x07" * 100)
    res = recover([pdir], truncate=True)
    session = Path(res.partitions[0].quarantine)
    return pdir, session, json.loads((session / "manifest.json").read_text())


def _plant(session: Path, manifest: dict, entry: dict, *, first: bool = False) -> None:
    """Add ``entry`` to the manifest (undo applies the last entry first)."""
    entries = manifest["entries"]
    entries.insert(0, entry) if first else entries.append(entry)
    (session / "manifest.json").write_text(json.dumps(manifest))


def _state(root: Path) -> dict[str, object]:
    """Every file's bytes and every link's target under ``root`` (links not followed)."""
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + dirnames:
            p = Path(dirpath) / name
            if p.is_symlink():
                out[str(p.relative_to(root))] = ("->", os.readlink(p))
            elif p.is_file():
                out[str(p.relative_to(root))] = p.read_bytes()
    return out


def _outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir(exist_ok=True)
    (d / "victim").write_bytes(b"precious")
    return d


def _assert_refused(tmp_path: Path, session: Path, pdir: Path, what: str) -> None:
    """undo refuses, and not one byte changed anywhere (log dir, session, outside)."""
    before = tree_bytes(tmp_path, skip_quarantine=False)
    with pytest.raises(UnsafePathError) as ex:
        undo(session)
    assert what in str(ex.value) and "manifest.json" in str(ex.value)
    assert tree_bytes(tmp_path, skip_quarantine=False) == before
    r = run_cli_inprocess("recover", "--undo", str(session))
    assert r.returncode == 3 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "manifest.json" in r.stderr
    assert tree_bytes(tmp_path, skip_quarantine=False) == before


# -- case 4: undo writes only where the manifest's partition dir is ----------------------

def test_undo_refuses_an_absolute_path_elsewhere(tmp_path):
    pdir, session, m = _session(tmp_path)
    out = _outside(tmp_path)
    cut = next(e for e in m["entries"] if e["action"] == "cut")
    # append the quarantined bytes to a file outside, and create a file in another dir
    _plant(session, m, dict(cut, original=str(out / "victim"), range=[8, 108]))
    _plant(session, m, {"action": "remove", "original": str(out / "created"),
                        "quarantine": cut["quarantine"], "sha256": None, "size": 100})
    _assert_refused(tmp_path, session, pdir, "is outside")
    assert not (out / "created").exists() and (out / "victim").read_bytes() == b"precious"


def test_undo_refuses_dot_dot(tmp_path):
    pdir, session, m = _session(tmp_path)
    (tmp_path / "data" / "other-0").mkdir()
    cut = next(e for e in m["entries"] if e["action"] == "cut")
    _plant(session, m, {"action": "remove",
                        "original": str(pdir) + "/../other-0/00000000000000000000.log",
                        "quarantine": cut["quarantine"], "sha256": None, "size": 100})
    _assert_refused(tmp_path, session, pdir, "not a normalised path")
    assert not list((tmp_path / "data" / "other-0").iterdir())


def test_undo_refuses_a_relative_path_that_climbs(tmp_path):
    """Relative paths (old manifests) are placed by file name only, never joined."""
    pdir, session, m = _session(tmp_path)
    out = _outside(tmp_path)
    cut = next(e for e in m["entries"] if e["action"] == "cut")
    _plant(session, m, dict(cut, original="../../outside/victim"))
    # placed by its name in the partition dir: a file that does not exist there -> a
    # conflict, and the file outside is not touched
    res = undo(session)
    assert any("victim" in c for c in res.conflicts)
    assert (out / "victim").read_bytes() == b"precious"


def test_undo_refuses_a_symlinked_target(tmp_path):
    pdir, session, m = _session(tmp_path)
    out = _outside(tmp_path)
    os.symlink(out / "victim", pdir / "00000000000000000150.log.link")
    cut = next(e for e in m["entries"] if e["action"] == "cut")
    _plant(session, m, dict(cut, original=str(pdir / "00000000000000000150.log.link"),
                            range=[8, 108]))
    _assert_refused(tmp_path, session, pdir, "is a symbolic link")
    assert (out / "victim").read_bytes() == b"precious"


def test_undo_refuses_a_symlinked_parent(tmp_path):
    pdir, session, m = _session(tmp_path)
    out = _outside(tmp_path)
    os.symlink(out, pdir / "sub")
    cut = next(e for e in m["entries"] if e["action"] == "cut")
    _plant(session, m, {"action": "remove", "original": str(pdir / "sub" / "created"),
                        "quarantine": cut["quarantine"], "sha256": None, "size": 100})
    _assert_refused(tmp_path, session, pdir, "is outside")
    assert sorted(p.name for p in out.iterdir()) == ["victim"]


def test_undo_refuses_a_quarantine_copy_outside_the_session(tmp_path):
    """A copy read from elsewhere would put another file's bytes (e.g. /etc/shadow) into
    the partition directory."""
    pdir, session, m = _session(tmp_path)
    out = _outside(tmp_path)
    _plant(session, m, {"action": "remove", "original": str(pdir / "leak"),
                        "quarantine": str(out / "victim"), "sha256": None, "size": 8})
    _assert_refused(tmp_path, session, pdir, "quarantine")
    assert not (pdir / "leak").exists()


def test_undo_refuses_a_checkpoint_entry_naming_another_file(tmp_path):
    pdir, session, m = _session(tmp_path)
    ck = next(e for e in m["entries"] if e["action"] == "checkpoint")
    _plant(session, m, dict(ck, original=str(pdir.parent / "meta.properties")))
    _assert_refused(tmp_path, session, pdir, "is not one of")


def test_a_bad_entry_anywhere_refuses_the_whole_undo(tmp_path):
    """Validated before the first write: the bad entry is the last undo would reach."""
    pdir, session, m = _session(tmp_path)
    out = _outside(tmp_path)
    cut = next(e for e in m["entries"] if e["action"] == "cut")
    _plant(session, m, dict(cut, original=str(out / "victim")), first=True)
    _assert_refused(tmp_path, session, pdir, "is outside")


def test_a_valid_session_still_undoes(tmp_path):
    pdir, session, _ = _session(tmp_path)
    res = undo(session)
    assert res.ok and res.restored


# -- case 5: links in the quarantine -----------------------------------------------------------

def _damaged(tmp_path: Path) -> Path:
    log_dir = tmp_path / "data"
    log_dir.mkdir()
    pdir = standard_partition(log_dir)
    with open(sorted(pdir.glob("*.log"))[-1], "ab") as f:
        f.write(b"\x07" * 100)
    return pdir


def test_a_symlinked_quarantine_is_refused(tmp_path):
    pdir = _damaged(tmp_path)
    out = tmp_path / "outside"
    out.mkdir()
    os.symlink(out, pdir / ".kafkalog-quarantine")
    before = tree_bytes(tmp_path)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        recover([pdir], truncate=True)
    assert not list(out.iterdir())
    assert tree_bytes(tmp_path) == before
    r = run_cli_inprocess("recover", str(pdir), "--truncate")
    assert r.returncode == 3 and ".kafkalog-quarantine" in r.stderr
    assert not list(out.iterdir())


def test_a_symlinked_session_is_refused(tmp_path):
    """An in-progress session (the next run resumes it) that is a link elsewhere."""
    pdir = _damaged(tmp_path)
    out = tmp_path / "outside"
    (out / "files").mkdir(parents=True)
    (out / "manifest.json").write_text(json.dumps(
        {"version": 1, "partition_dir": str(pdir.resolve()), "state": "in-progress",
         "keep": True, "intents": {"rebuild_bases": []}, "entries": []}))
    (pdir / ".kafkalog-quarantine").mkdir()
    os.symlink(out, pdir / ".kafkalog-quarantine" / "20990101T000000.000000Z")
    before = tree_bytes(tmp_path)
    with pytest.raises(UnsafePathError):
        recover([pdir], truncate=True)
    assert tree_bytes(tmp_path) == before
    assert not list((out / "files").iterdir())


# -- case 5: linked segment files --------------------------------------------------------------

def _linked_segment(tmp_path: Path) -> tuple[Path, Path]:
    """A partition whose last segment's .log is a link to a file in another directory
    (its indexes are regular files in the partition directory)."""
    pdir = standard_partition(tmp_path / "data")
    log = sorted(pdir.glob("*.log"))[-1]
    store = tmp_path / "store"
    store.mkdir()
    target = store / log.name
    os.rename(log, target)
    os.symlink(target, log)
    return pdir, log


def test_a_symlinked_log_is_a_segment_as_the_broker_sees_it(tmp_path):
    pdir, log = _linked_segment(tmp_path)
    target = Path(os.readlink(log))
    data = target.read_bytes()
    base = int(log.name[:20])
    index = log.with_suffix(".index").read_bytes()
    time_index = log.with_suffix(".timeindex").read_bytes()
    # the indexes of a linked .log are not orphans
    rep = recover([pdir], all_segments=True).partitions[0]
    touched = {os.path.basename(a.path) for a in rep.actions}
    assert log.with_suffix(".index").name not in touched
    assert log.with_suffix(".timeindex").name not in touched
    assert any(s.base_offset == base and s.scanned for s in rep.segments)
    res = recover([pdir], truncate=True, all_segments=True)
    assert res.ok
    assert log.is_symlink() and target.read_bytes() == data
    assert log.with_suffix(".index").read_bytes() == index
    assert log.with_suffix(".timeindex").read_bytes() == time_index


def test_a_symlinked_log_that_needs_a_cut_is_refused_whole(tmp_path):
    pdir, log = _linked_segment(tmp_path)
    target = Path(os.readlink(log))
    with open(target, "ab") as f:
        f.write(b"\x07" * 50)
    before = tree_bytes(tmp_path)
    dry = recover([pdir], all_segments=True).partitions[0]
    assert any("symbolic link" in n for n in dry.notes)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        recover([pdir], truncate=True, all_segments=True)
    assert tree_bytes(tmp_path) == before
    assert not (pdir / ".kafkalog-quarantine").exists()


@pytest.mark.parametrize("kind", ["dangling", "directory"])
def test_a_symlinked_log_to_no_file_is_unreadable_input(tmp_path, kind):
    pdir, log = _linked_segment(tmp_path)
    target = Path(os.readlink(log))
    target.unlink()
    if kind == "directory":
        target.mkdir()
    before = _state(tmp_path)
    with pytest.raises(UnreadableError, match="symbolic link"):
        recover([pdir], truncate=True)
    assert _state(tmp_path) == before
    r = run_cli_inprocess("recover", str(pdir))
    assert r.returncode == 3 and log.name in r.stderr


def test_a_planted_tmp_link_is_never_written_through(tmp_path):
    """recover rewrites leader-epoch-checkpoint through ``<name>.tmp``: a link planted
    there is removed (quarantined as a stale temp file), never opened for writing."""
    pdir = _damaged(tmp_path)
    out = _outside(tmp_path)
    (pdir / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")  # epochs 1, 2 missing
    os.symlink(out / "victim", pdir / "leader-epoch-checkpoint.tmp")
    res = recover([pdir], truncate=True)
    assert res.partitions[0].applied
    assert (out / "victim").read_bytes() == b"precious"
    assert not os.path.lexists(pdir / "leader-epoch-checkpoint.tmp")
    assert not (pdir / "leader-epoch-checkpoint").is_symlink()
