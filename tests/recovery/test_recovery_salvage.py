"""``recover --salvage``: every valid batch after a corrupt region kept at its offsets,
the dry run naming each region dropped and each batch kept, ``--undo`` restoring the
input byte for byte, and a kill at any step completed by a rerun to the result of an
uninterrupted run.

Oracles: the batches as :func:`make_batches` built them (offsets, bytes), kafka-python's
reading of the salvaged ``.log`` (an independent decoder), and the uninterrupted run for
the kill tests (its own correctness is the first tests' and the bench's:
``test_recovery_vs_broker.py`` has the broker open salvaged directories).
"""

from __future__ import annotations

import io
import os
import shutil
import struct

import pytest
from kafka.record.default_records import DefaultRecordBatch
from recovery_helpers import make_batches, tree_bytes, write_partition
from rich.console import Console

from kafkalog_cli.format.builder import build_control_batch
from kafkalog_cli.ops.read import read
from kafkalog_cli.recovery import quarantine, recover, undo
from kafkalog_cli.render.recover import render_recover


def _partition(root):
    """Segment 0: 30 one-record batches (offsets 0-29); segment 30: 20 three-record
    batches of an idempotent producer (offsets 30-89). Returns (pdir, batches per
    segment)."""
    seg0 = make_batches(0, 30, value_size=60)
    seg1 = []
    for i in range(20):
        seg1 += make_batches(30 + 3 * i, 1, records=3, producer_id=11, producer_epoch=0,
                             base_sequence=3 * i, epoch=1)
    pdir = write_partition(root, [seg0, seg1])
    # the producer snapshots a recovered broker leaves (at 30 and 90): salvage must
    # replace those past the damage
    recover([pdir], truncate=True, all_segments=True, keep=False)
    shutil.rmtree(pdir / ".kafkalog-quarantine", ignore_errors=True)
    assert sorted(p.name[:20] for p in pdir.glob("*.snapshot")) == [f"{30:020d}", f"{90:020d}"]
    return pdir, [seg0, seg1]


def _damage(pdir, segs):
    """A flipped record byte in batch 10 of segment 0 (offset 10) and a size field of 5
    in batch 4 of segment 30 (offsets 42-44): two corrupt regions, valid batches after
    each."""
    logs = sorted(pdir.glob("*.log"))
    d0 = bytearray(logs[0].read_bytes())
    at0 = sum(map(len, segs[0][:10]))
    d0[at0 + len(segs[0][10]) - 2] ^= 0x10
    logs[0].write_bytes(bytes(d0))
    d1 = bytearray(logs[1].read_bytes())
    at1 = sum(map(len, segs[1][:4]))
    d1[at1 + 8:at1 + 12] = struct.pack(">i", 5)
    logs[1].write_bytes(bytes(d1))
    return at0, at1


def _kp_offsets(data: bytes) -> list[int]:
    """Offsets of the records kafka-python reads from a .log, checking each CRC."""
    out, pos = [], 0
    while pos < len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0]
        batch = DefaultRecordBatch(data[pos:pos + 12 + size])
        assert batch.validate_crc()
        out += [r.offset for r in batch]
        pos += 12 + size
    return out


def test_salvage_keeps_every_batch_after_the_damage(tmp_path):
    pdir, segs = _partition(tmp_path)
    at0, at1 = _damage(pdir, segs)
    dry = recover([pdir], salvage=True, all_segments=True)
    rep = dry.partitions[0]
    by_base = {s.base_offset: s for s in rep.segments}
    assert [r[:2] for r in by_base[0].dropped_regions] == [(at0, len(segs[0][10]))]
    assert by_base[0].dropped_regions[0][3] == (10, 10)
    assert [k[2] for k in by_base[0].kept_batches] == [i for i in range(30) if i != 10]
    # the bad size field: the region runs to the next batch that reads as valid
    assert by_base[30].dropped_regions[0][0] == at1
    assert by_base[30].dropped_regions[0][3] == (42, 44)
    assert [k[2] for k in by_base[30].kept_batches] == [30 + 3 * i for i in range(20) if i != 4]
    assert rep.lost_offset_ranges() == [(10, 10), (42, 44)]
    assert dry.summary()["segmentsSalvaged"] == 2 and dry.summary()["segmentsRemoved"] == 0
    buf = io.StringIO()
    render_recover(dry, Console(file=buf, width=200, color_system=None))
    text = buf.getvalue()
    assert "would drop bytes" in text and "(offsets 42-44)" in text
    assert "would keep 10 batch(es) of 00000000000000000000.log: offsets 0-9" in text
    assert "would keep 19 batch(es) of 00000000000000000000.log: offsets 11-29" in text

    before = tree_bytes(tmp_path)
    done = recover([pdir], truncate=True, salvage=True, all_segments=True)
    assert done.ok
    logs = sorted(pdir.glob("*.log"))
    assert _kp_offsets(logs[0].read_bytes()) == [i for i in range(30) if i != 10]
    assert _kp_offsets(logs[1].read_bytes()) == [o for o in range(30, 90) if not 42 <= o <= 44]
    assert logs[0].read_bytes() == b"".join(b for i, b in enumerate(segs[0]) if i != 10)
    # the broker's rules find nothing more to do, and a rerun of salvage neither
    assert not recover([pdir], all_segments=True).work_needed
    assert not recover([pdir], salvage=True, all_segments=True).work_needed
    res = undo(done.partitions[0].quarantine)
    assert res.ok
    assert tree_bytes(tmp_path) == before


def _salvage_in_child(pdir, n: int) -> int:
    """A salvage run dying after its n-th durable step (137), or finishing (0)."""
    pid = os.fork()
    if pid == 0:
        try:
            quarantine._steps.update(n=0, limit=n)
            recover([pdir], truncate=True, salvage=True, all_segments=True)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.slow
def test_salvage_killed_at_every_step_completes_and_undoes(tmp_path):
    _kill_at_every_step(tmp_path, _damaged)


def _damaged(root):
    pdir, segs = _partition(root)
    _damage(pdir, segs)
    return pdir


def _kill_at_every_step(tmp_path, make):
    """``make(root)``: a damaged partition directory under ``root``."""
    ref_root = tmp_path / "ref"
    pdir = make(ref_root)
    recover([pdir], truncate=True, salvage=True, all_segments=True)
    reference = tree_bytes(ref_root)
    n = 0
    while True:
        n += 1
        root = tmp_path / f"n{n}"
        pdir = make(root)
        before = tree_bytes(root)
        code = _salvage_in_child(pdir, n)
        assert code in (0, 137)
        again = recover([pdir], truncate=True, salvage=True, all_segments=True)
        assert again.ok
        assert tree_bytes(root) == reference, f"killed after step {n}"
        sessions = list((pdir / ".kafkalog-quarantine").iterdir())
        assert len(sessions) == 1, sessions
        assert undo(sessions[0]).ok
        assert tree_bytes(root) == before, f"undo after a kill at step {n}"
        if code == 0:
            break
        assert n < 200
    assert n > 10


def _txn_partition(root):
    """Segment 0, one transactional producer (id 7, epoch 0): transaction A (offsets 0-2)
    and its COMMIT (3); B (4-6) and its ABORT (7); C (8-10) and its ABORT (11); D (12-14)
    and its COMMIT (15). Segment 16: ten plain batches (16-25). Returns (pdir, segment 0's
    batches)."""
    def data(base, seq):
        return make_batches(base, 1, records=3, producer_id=7, producer_epoch=0,
                            base_sequence=seq, is_transactional=True)[0]

    def marker(kind, off):
        return build_control_batch(kind, base_offset=off, timestamp=1_700_000_000_000 + off,
                                   producer_id=7, producer_epoch=0)
    seg0 = [data(0, 0), marker(1, 3), data(4, 3), marker(0, 7), data(8, 6), marker(0, 11),
            data(12, 9), marker(1, 15)]
    return write_partition(root, [seg0, make_batches(16, 10)]), seg0


def _damaged_txn(root):
    """:func:`_txn_partition` with a flipped byte in B's data batch and in C's ABORT."""
    pdir, seg0 = _txn_partition(root)
    log0 = sorted(pdir.glob("*.log"))[0]
    d = bytearray(log0.read_bytes())
    at_b = sum(map(len, seg0[:2]))
    at_c_abort = sum(map(len, seg0[:5]))
    d[at_b + len(seg0[2]) - 3] ^= 0x04
    d[at_c_abort + len(seg0[5]) - 1] ^= 0x01
    log0.write_bytes(bytes(d))
    return pdir


def test_salvage_stops_where_a_lost_marker_would_change_a_transaction(tmp_path):
    """A flipped byte in transaction B's data (its ABORT follows: salvage keeps the rest)
    and in C's ABORT marker, followed by the producer's next transaction: keeping D would
    make C's aborted records (8-10) part of D, committed with it (ProducerStateManager
    keeps a transaction ongoing until a marker). Salvage stops at C's marker and truncates
    there as the broker does; read_committed never shows an aborted record."""
    pdir = _damaged_txn(tmp_path)
    log0 = sorted(pdir.glob("*.log"))[0]
    before = tree_bytes(tmp_path)
    done = recover([pdir], truncate=True, salvage=True, all_segments=True)
    assert done.ok
    rep = done.partitions[0]
    assert rep.log_end_offset == 11
    assert rep.lost_offset_ranges() == [(4, 6), (11, 25)]
    assert any("transaction is open" in r[2] for s in rep.segments for r in s.dropped_regions)
    assert [p.name[:20] for p in sorted(pdir.glob("*.log"))] == [f"{0:020d}"]
    assert _kp_offsets(log0.read_bytes()) == [0, 1, 2, 3, 7, 8, 9, 10]
    committed = read(pdir, decode="none", isolation_level="read_committed")
    try:
        # B was dropped, C is open at the log end (the last stable offset is 8)
        assert [r.offset for r in committed.records] == [0, 1, 2]
    finally:
        committed.close()
    assert undo(rep.quarantine).ok
    assert tree_bytes(tmp_path) == before


@pytest.mark.slow
def test_salvage_stopped_by_a_transaction_killed_at_every_step(tmp_path):
    """The stop's mix of salvage, truncation and segment removal: a kill after any step
    and a rerun end as an uninterrupted run; --undo restores the input."""
    _kill_at_every_step(tmp_path, _damaged_txn)
