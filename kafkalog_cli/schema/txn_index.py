"""Transaction index (``.txnindex``), after ``TransactionIndex`` and ``AbortedTxn``.

    AbortedTxn (34 bytes) =>
      Version => Int16                (0)
      ProducerId => Int64
      FirstOffset => Int64            (first offset of the aborted transaction)
      LastOffset => Int64             (offset of its ABORT marker)
      LastStableOffset => Int64       (the LSO when the marker was written)

No header and no preallocation; a partial entry at the end is ignored. Entries are in
increasing LastOffset order.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..constants import TXN_INDEX_ENTRY_SIZE
from . import declared_lazily


def _declare() -> dict:
    """The construct declarations (on first use: :func:`~kafkalog_cli.schema.declared_lazily`)."""
    import construct as c

    AbortedTxnEntry = c.Struct(
        "version" / c.Int16sb,
        "producer_id" / c.Int64sb,
        "first_offset" / c.Int64sb,
        "last_offset" / c.Int64sb,
        "last_stable_offset" / c.Int64sb,
    )
    return {"AbortedTxnEntry": AbortedTxnEntry}


__getattr__ = declared_lazily(globals(), ("AbortedTxnEntry",), _declare)

ENTRY = struct.Struct(">hqqqq")
assert ENTRY.size == TXN_INDEX_ENTRY_SIZE


@dataclass(frozen=True)
class AbortedTxn:
    """An aborted transaction: producer id and its offsets (absolute)."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    version: int = 0

    def to_bytes(self) -> bytes:
        return ENTRY.pack(self.version, self.producer_id, self.first_offset,
                           self.last_offset, self.last_stable_offset)


def parse_txn_index(data: bytes) -> list[AbortedTxn]:
    """Every whole entry of a ``.txnindex`` (a partial tail is ignored, as Kafka does)."""
    n = len(data) // TXN_INDEX_ENTRY_SIZE
    out = []
    for i in range(n):
        v, pid, first, last, lso = ENTRY.unpack_from(data, i * TXN_INDEX_ENTRY_SIZE)
        out.append(AbortedTxn(pid, first, last, lso, v))
    return out
