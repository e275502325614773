"""Where ``--salvage`` must stop: a transaction open at a corrupt region.

A transaction ends with a control batch (the COMMIT or ABORT marker the coordinator
writes, ``WriteTxnMarkers``); ``ProducerStateManager`` keeps the producer's transaction
ongoing until it reads one, and ``LogSegment.updateTxnIndex`` records an aborted
transaction from its ABORT marker. When a corrupt region may have held a marker, keeping
the batches after it changes what a ``read_committed`` consumer sees: a lost ABORT
marker followed by the producer's next transaction makes the aborted records part of
that transaction, committed with it (and a lost COMMIT the reverse).

The rule (kafkalog's, the broker has no salvage): a region is *unsafe* when some
producer has a transaction ongoing where the region starts and the producer's next batch
after the region is a data batch, not a marker: its marker was in the region, or the
transaction went on through it, and the batches cannot say which. Salvage stops at an
unsafe region and truncates there, as the broker's recovery does. A producer whose next
batch after the region is a marker has its transaction ended by it (the region held
data of that transaction, or other producers' batches); one with no later batch leaves
its transaction open as the broker's truncation would.
"""

from __future__ import annotations

from pathlib import Path

from ..format.salvage import SalvagedRecords
from ..storage.segment import open_view, release_view


def unsafe_regions(segments: list[tuple[int, Path]]) -> dict[int, int]:
    """The unsafe regions of a partition (module docstring), read past damage as
    ``--salvage`` reads it (:class:`~kafkalog_cli.format.salvage.SalvagedRecords`).

    Args:
        segments: ``(base offset, .log path)`` of every segment, in offset order.

    Returns:
        segment base offset -> byte position of the first unsafe region in that
        segment's ``.log`` (the region's start; a segment with none is absent).
    """
    ongoing: set[int] = set()  # producer ids with a transaction ongoing
    pending: list[tuple[int, int, set[int]]] = []  # (base, position, producers open there)
    unsafe: dict[int, int] = {}
    last: int | None = None
    for base, path in segments:
        view = open_view(path)
        try:
            sr = SalvagedRecords(view, 0, base_offset=base, after_offset=last, file=path)
            seen = 0
            for b in sr.batches():
                for region in sr.skipped[seen:]:
                    if ongoing:
                        pending.append((base, region.position, set(ongoing)))
                seen = len(sr.skipped)
                last = b.last_offset
                if getattr(b, "magic", 0) < 2 or not b.is_transactional:
                    continue
                pid = b.producer_id
                for rbase, rpos, open_ in pending:
                    if pid in open_:
                        open_.discard(pid)
                        if not b.is_control and rpos < unsafe.get(rbase, rpos + 1):
                            unsafe[rbase] = rpos
                if b.is_control:
                    ongoing.discard(pid)
                else:
                    ongoing.add(pid)
            if sr.valid_end < sr.end and ongoing:  # a bad tail: salvage drops it too
                pending.append((base, sr.valid_end, set(ongoing)))
        finally:
            release_view(view)
        pending = [p for p in pending if p[2]]
    return unsafe
