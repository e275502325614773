"""A ``.txnindex`` failing ``TransactionIndex.sanityCheck`` (an aborted transaction whose
last offset is below the segment's base offset): LogLoader.loadSegmentFiles recovers the
segment even after a clean shutdown, so recover does too, rebuilding the ``.txnindex`` and
quarantining the old one; verify-index reports it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from recovery_helpers import quarantined_bytes, standard_partition

from kafkalog_cli.ops.verify import verify_index
from kafkalog_cli.recovery import recover, undo
from kafkalog_cli.schema.txn_index import AbortedTxn

BAD = AbortedTxn(producer_id=5, first_offset=3, last_offset=10, last_stable_offset=11)


@pytest.mark.parametrize("base", [60, 150])
def test_insane_txnindex_recovers_the_segment_after_a_clean_shutdown(tmp_path, base):
    pdir = standard_partition(tmp_path)
    recover([pdir], truncate=True)
    (tmp_path / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":1}')
    txn = pdir / f"{base:020d}.txnindex"
    good = txn.read_bytes() if txn.exists() else b""
    bad = BAD.to_bytes() + good
    txn.write_bytes(bad)

    (v,) = [s for s in verify_index([pdir]).segments if s.base_offset == base]
    assert [p.kind for p in v.problems] == ["txnindex-sanity"]
    assert "less than start offset" in v.problems[0].message

    rep = recover([pdir]).partitions[0]
    assert rep.work_needed
    assert [s.scanned for s in rep.segments] == [s.base_offset == base for s in rep.segments]
    (seg,) = [s for s in rep.segments if s.base_offset == base]
    assert any(".txnindex fails the sanity check" in n for n in seg.notes)
    assert [(a.kind, a.path) for a in rep.actions] == [("write", str(txn))]

    rep = recover([pdir], truncate=True).partitions[0]
    assert txn.read_bytes() == good
    assert verify_index([pdir]).ok
    assert not recover([pdir]).work_needed
    # the old bytes are quarantined, and undo puts them back
    m = json.loads((Path(rep.quarantine) / "manifest.json").read_text())
    (e,) = [e for e in m["entries"] if e["original"] == str(txn.absolute())]
    assert e["action"] == "rewrite" and quarantined_bytes(e) == bad
    assert undo(rep.quarantine).ok
    assert txn.read_bytes() == bad


def test_a_sane_txnindex_is_left_alone_after_a_clean_shutdown(tmp_path):
    pdir = standard_partition(tmp_path)
    recover([pdir], truncate=True)
    (tmp_path / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":1}')
    rep = recover([pdir]).partitions[0]
    assert not rep.work_needed and not any(s.scanned for s in rep.segments)


def test_an_inflated_txnindex_is_rebuilt_and_kept_as_holes(tmp_path):
    """A .txnindex larger than kafkalog reads (1 GiB of zeros, sparse) fails the sanity
    check as a corrupt one: the segment is recovered, the file rebuilt from the log (here
    empty), the old one quarantined without writing its zeros (a sparse copy)."""
    pdir = standard_partition(tmp_path)
    recover([pdir], truncate=True)
    (tmp_path / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":1}')
    txn = pdir / "00000000000000000060.txnindex"
    good = txn.read_bytes() if txn.exists() else b""
    with open(txn, "wb") as f:
        f.truncate(1 << 30)
    rep = recover([pdir], truncate=True).partitions[0]
    (seg,) = [s for s in rep.segments if s.base_offset == 60]
    assert any("is 1073741824 bytes, more than" in n for n in seg.notes), seg.notes
    assert txn.read_bytes() == good
    (kept,) = [p for p in Path(rep.quarantine).rglob("*.txnindex*") if p.is_file()]
    assert kept.stat().st_blocks == 0 and kept.stat().st_size == 0
