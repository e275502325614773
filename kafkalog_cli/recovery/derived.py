"""Files derived from the log, rebuilt by recovery: the leader-epoch cache, producer state
(``<offset>.snapshot``) and the transaction index (``.txnindex``).

Written in terms of the shared schema modules (``schema.producer_snapshot``,
``schema.txn_index``, ``storage.checkpoints``). The append engine's classes
(``storage.producer_state.ProducerStateManager``, ``storage.leader_epoch
.LeaderEpochFileCache``, ``storage.txn_index.TransactionIndex``) are not used here,
because as they stand they would change recovery's output or its purity:

* ``LeaderEpochFileCache.assign``/``truncate_from_end`` write the checkpoint file on
  every change (the planner must only read), it has no ``truncateFromStart``, and
  ``assign`` raises on a negative epoch or offset where recovery skips the batch.
* ``ProducerStateManager.replay_batch`` stamps an end-transaction marker with the batch's
  ``max_timestamp`` and its last offset; the broker (``ProducerAppendInfo.append``) and
  this module use the marker record's timestamp and the batch's base offset. It applies
  a marker whose value is shorter than 6 bytes with coordinator epoch -1; this module
  skips such a marker (and an undecodable one) entirely.
* ``ProducerStateManager.load`` takes the newest snapshot file at or below an offset and
  raises on a corrupt one; the planner chooses the start snapshot itself (corrupt ones
  quarantined, the newest at or below the first ``.txnindex`` to rebuild). Its
  ``ProducerEntry.from_snapshot`` drops last sequence / offset delta of an entry whose
  last offset is -1, which this module writes back as read.
* ``replay_batch`` needs a decoded ``RecordBatch`` per batch; this module reads the
  61-byte header in place (the replay runs over every producer batch of the log).
* ``TransactionIndex`` is a file-backed appender; here the ``.txnindex`` is built as
  bytes for a planned write (its ``sanity_check`` is used by the planner).

Leader epochs follow ``LeaderEpochFileCache``: ``assign(epoch, startOffset)`` appends
when the epoch differs from the latest or starts earlier, first removing entries whose
epoch is >= the new one or whose start offset is >= the new one; recovery calls it for a
v2 batch whose epoch is >= 0 and above the cache's latest epoch; after loading, the cache
is truncated from the end at the log end offset (entries starting at or after it go) and
from the start at the log start offset (entries wholly before it go, the last of them is
moved to start at the log start offset).

Producer state follows ``ProducerAppendInfo``/``ProducerStateEntry`` for REPLICATION
appends: a data batch sets the producer's epoch, last sequence, last offset, offset delta
and timestamp, and opens a transaction when transactional; an end-transaction marker
sets the epoch, coordinator epoch and timestamp, closes the transaction and, for a
non-empty one, completes it. An ABORT completes into an ``AbortedTxn`` in the
``.txnindex`` of the segment holding the marker, with the last stable offset the broker
computes (the first offset of the earliest other open transaction, else marker + 1).
Producers are not expired (the broker expires them by wall-clock time when it loads a
snapshot; keeping them is harmless and keeps a rerun deterministic).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..constants import NO_SEQUENCE
from ..format.records import RecordBatch
from ..schema.producer_snapshot import ProducerStateEntry
from ..schema.txn_index import AbortedTxn

_HEADER = struct.Struct(">qiibIhiqqqhii")


# -- leader epochs ----------------------------------------------------------------------

def epoch_assign(entries: list[tuple[int, int]], epoch: int, start_offset: int) -> None:
    """LeaderEpochFileCache.assign on a list of ``(epoch, start offset)`` (in place)."""
    if entries:
        le, ls = entries[-1]
        if epoch == le and start_offset >= ls:
            return
    while entries and (entries[-1][0] >= epoch or entries[-1][1] >= start_offset):
        entries.pop()
    entries.append((epoch, start_offset))


def epoch_truncate_from_end(entries: list[tuple[int, int]], end_offset: int) -> None:
    """truncateFromEnd: drop entries starting at or after ``end_offset``."""
    while entries and entries[-1][1] >= end_offset:
        entries.pop()


def epoch_truncate_from_start(entries: list[tuple[int, int]], start_offset: int) -> None:
    """truncateFromStart: drop entries wholly before ``start_offset``; the last dropped
    one is kept, moved to start at ``start_offset``."""
    removed = None
    while entries and entries[0][1] <= start_offset:
        removed = entries.pop(0)
    if removed is not None:
        entries.insert(0, (removed[0], start_offset))


# -- producer state -----------------------------------------------------------------------

@dataclass
class _Producer:
    producer_id: int
    epoch: int = -1
    last_sequence: int = NO_SEQUENCE
    last_offset: int = -1
    offset_delta: int = 0
    timestamp: int = -1
    coordinator_epoch: int = -1
    txn_first_offset: int = -1

    def entry(self) -> ProducerStateEntry:
        return ProducerStateEntry(self.producer_id, self.epoch, self.last_sequence,
                                  self.last_offset, self.offset_delta, self.timestamp,
                                  self.coordinator_epoch, self.txn_first_offset)


class ProducerStateBuilder:
    """Producer state replayed from the log (and optionally a snapshot to start from)."""

    def __init__(self, entries: list[ProducerStateEntry] = ()):
        self.producers: dict[int, _Producer] = {}
        for e in entries:
            self.producers[e.producer_id] = _Producer(
                e.producer_id, e.producer_epoch, e.last_sequence, e.last_offset,
                e.offset_delta, e.timestamp, e.coordinator_epoch, e.current_txn_first_offset)
        #: aborted transactions completed during the replay, in marker order
        self.aborted: list[AbortedTxn] = []

    def apply(self, view, position: int) -> None:
        """Apply the v2 batch at ``position`` of ``view`` (it carries a producer id)."""
        (base, _len, _ple, _magic, _crc, attrs, delta, _bts, max_ts, pid, pepoch, bseq,
         _count) = _HEADER.unpack_from(view, position)
        p = self.producers.get(pid)
        if p is None:
            p = self.producers[pid] = _Producer(pid)
        if attrs & 0x20:  # control batch: an end-transaction marker
            batch = RecordBatch.__new__(RecordBatch, (view, position) + _HEADER.unpack_from(
                view, position))
            try:
                rec = next(iter(batch.iter_records()), None)  # the marker: the first record
            except Exception:  # noqa: BLE001 - an undecodable marker is skipped
                return
            if rec is None:
                return  # an empty control batch: the transaction was cleaned away
            key, value = rec.key, rec.value
            if key is None or len(key) < 4:
                return
            ctype = struct.unpack_from(">h", key, 2)[0]
            if ctype not in (0, 1) or value is None or len(value) < 6:
                return
            coord = struct.unpack_from(">i", value, 2)[0]
            if p.txn_first_offset >= 0:
                if ctype == 0:
                    self.aborted.append(AbortedTxn(pid, p.txn_first_offset, base,
                                                   self._lso(pid, base)))
            if pepoch != p.epoch:
                p.last_sequence, p.last_offset, p.offset_delta = NO_SEQUENCE, -1, 0
            p.epoch = pepoch
            p.coordinator_epoch = coord
            p.timestamp = rec.timestamp
            p.txn_first_offset = -1
            return
        last = base + delta
        p.epoch = pepoch
        p.last_sequence = NO_SEQUENCE if bseq == NO_SEQUENCE else _inc(bseq, delta)
        p.last_offset = last
        p.offset_delta = delta
        p.timestamp = max_ts
        if attrs & 0x10 and p.txn_first_offset < 0:
            p.txn_first_offset = base

    def _lso(self, pid: int, marker_offset: int) -> int:
        firsts = [q.txn_first_offset for q in self.producers.values()
                  if q.producer_id != pid and q.txn_first_offset >= 0]
        return min(firsts) if firsts else marker_offset + 1

    def entries(self) -> list[ProducerStateEntry]:
        """The snapshot entries, by producer id."""
        return [self.producers[k].entry() for k in sorted(self.producers)]


def _inc(seq: int, delta: int) -> int:
    if seq > 2**31 - 1 - delta:
        return delta - (2**31 - 1 - seq) - 1
    return seq + delta


def txn_index_bytes(aborted: list[AbortedTxn]) -> bytes:
    return b"".join(a.to_bytes() for a in aborted)
