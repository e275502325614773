"""Producer-state snapshot (``<offset>.snapshot``), after ``ProducerStateManager`` and
``ProducerSnapshot.json`` (version 1).

    ProducerSnapshot =>
      Version => Int16                (1)
      Crc => Uint32                   (CRC-32C over ProducerEntries, i.e. bytes 6..end)
      ProducerEntries => [ProducerEntry]   (Int32 count)

    ProducerEntry (46 bytes) =>
      ProducerId => Int64
      Epoch => Int16
      LastSequence => Int32
      LastOffset => Int64
      OffsetDelta => Int32            (lastSequence - firstSequence of the last batch)
      Timestamp => Int64              (max timestamp of the last batch, ms)
      CoordinatorEpoch => Int32
      CurrentTxnFirstOffset => Int64  (-1 when no transaction is open)

The file name is the snapshot's offset: the log end offset when it was taken.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..errors import CorruptSnapshotError
from . import declared_lazily

VERSION = 1
PRODUCER_ENTRIES_OFFSET = 6


def _declare() -> dict:
    """The construct declarations (on first use: :func:`~kafkalog_cli.schema.declared_lazily`)."""
    import construct as c

    ProducerEntry = c.Struct(
        "producer_id" / c.Int64sb,
        "epoch" / c.Int16sb,
        "last_sequence" / c.Int32sb,
        "last_offset" / c.Int64sb,
        "offset_delta" / c.Int32sb,
        "timestamp" / c.Int64sb,
        "coordinator_epoch" / c.Int32sb,
        "current_txn_first_offset" / c.Int64sb,
    )

    ProducerSnapshot = c.Struct(
        "version" / c.Int16sb,
        "crc" / c.Int32ub,
        "producer_entries" / c.PrefixedArray(c.Int32sb, ProducerEntry),
    )
    return {"ProducerEntry": ProducerEntry, "ProducerSnapshot": ProducerSnapshot}


__getattr__ = declared_lazily(globals(), ("ProducerEntry", "ProducerSnapshot"), _declare)

_ENTRY = struct.Struct(">qhiqiqiq")
assert _ENTRY.size == 46


@dataclass(frozen=True)
class ProducerStateEntry:
    """One producer's state as a snapshot stores it (ProducerStateEntry + its last
    BatchMetadata). Offsets absolute; timestamp in ms."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int = -1


HEADER = struct.Struct(">hIi")
#: bytes of a :class:`ProducerStateEntry` in a snapshot
ENTRY_SIZE = _ENTRY.size


def check_header(head: bytes, size: int, file=None) -> tuple[int, int]:
    """``(stored crc, entry count)`` from the first 10 bytes of a snapshot file of ``size``
    bytes, checked as Kafka 4.4's ``readSnapshot`` checks them, with its messages: the
    version first, then the generated message's read (a ``SchemaException``, or the
    ``BufferUnderflowException`` whose message is ``null``, behind ``Snapshot failed
    schema validation:``); the CRC over bytes 6..end is the caller's.

    Raises:
        CorruptSnapshotError: unknown version or bad layout.
    """
    def invalid(why: str) -> CorruptSnapshotError:
        return CorruptSnapshotError(f"Snapshot failed schema validation: {why}", file=file)

    if size < 2 or len(head) < 2:
        raise invalid("null")
    (version,) = struct.unpack_from(">h", head, 0)
    if version != VERSION:
        raise invalid(f"Snapshot contained an unknown file version {version}")
    if size < HEADER.size or len(head) < HEADER.size:
        raise invalid("null")
    crc, count = struct.unpack_from(">Ii", head, 2)
    remaining = size - HEADER.size
    if count < 0:
        raise invalid("non-nullable field producerEntries was serialized as null")
    if count > remaining:
        raise invalid(f"Tried to allocate a collection of size {count}, but there are only "
                      f"{remaining} bytes remaining.")
    if count * _ENTRY.size > remaining:
        raise invalid("null")
    return crc, count


def crc_mismatch(stored: int, computed: int, file=None) -> CorruptSnapshotError:
    return CorruptSnapshotError(f"Snapshot is corrupt (CRC is no longer valid). Stored crc: "
                                f"{stored}. Computed crc: {computed}", file=file)


def entries_of(data) -> list[ProducerStateEntry]:
    """The entries packed in ``data`` (whole 46-byte entries, no header)."""
    return [ProducerStateEntry(*t) for t in _ENTRY.iter_unpack(data)]


def parse_snapshot(data: bytes, file=None) -> list[ProducerStateEntry]:
    """Parse a snapshot file's bytes (ProducerStateManager.readSnapshot), with the messages
    of Kafka 4.4's reader: the version first, then the generated message's read (a
    ``SchemaException``, or the ``BufferUnderflowException`` whose message is ``null``,
    behind ``Snapshot failed schema validation:``), then the CRC over bytes 6..end.

    Raises:
        CorruptSnapshotError: unknown version, bad layout or CRC mismatch (``file`` set).
    """
    crc, count = check_header(data, len(data), file)
    from ..crc import crc32c

    computed = crc32c(memoryview(data)[PRODUCER_ENTRIES_OFFSET:])
    if computed != crc:
        raise crc_mismatch(crc, computed, file)
    return entries_of(memoryview(data)[HEADER.size:HEADER.size + count * _ENTRY.size])


def build_snapshot(entries: list[ProducerStateEntry]) -> bytes:
    """The bytes of a snapshot holding ``entries`` (ProducerStateManager.writeSnapshot)."""
    body = struct.pack(">i", len(entries)) + b"".join(
        _ENTRY.pack(e.producer_id, e.producer_epoch, e.last_sequence, e.last_offset,
                    e.offset_delta, e.timestamp, e.coordinator_epoch,
                    e.current_txn_first_offset) for e in entries)
    from ..crc import crc32c

    return struct.pack(">hI", VERSION, crc32c(body)) + body
