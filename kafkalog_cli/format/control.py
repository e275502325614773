"""Control records as the broker and the consumer read them: the one parser of a control
batch's record, the struct twin of :mod:`kafkalog_cli.schema.control`.

* :func:`control_type` - ``ControlRecordType.parseTypeId``: the type id of a control
  record key (``Version => Int16, Type => Int16``);
* :func:`end_txn_coordinator_epoch` - ``EndTransactionMarker.deserializeValue``: the
  coordinator epoch of an ABORT / COMMIT marker's value;
* :func:`read_end_txn_marker` - ``ProducerAppendInfo.append``'s control branch: the first
  record of a control batch as an end-transaction marker (None for an empty control
  batch, whose transaction was cleaned away).

Each raises :class:`~kafkalog_cli.errors.InvalidRecordError` where Kafka throws; what to
do with a marker that does not parse is the caller's (the producer-state replay skips it,
see :meth:`kafkalog_cli.storage.producer_state.ProducerStateManager.replay_batch`).
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from ..constants import DEFAULT_MAX_DECOMPRESSED_BYTES
from ..errors import InvalidRecordError
from ..schema.control import CONTROL_TYPE_IDS

ABORT = CONTROL_TYPE_IDS["ABORT"]
COMMIT = CONTROL_TYPE_IDS["COMMIT"]

#: ControlRecordKey: version, type (a test checks both against the schema's declarations)
KEY = struct.Struct(">hh")
#: EndTransactionMarker: version, coordinatorEpoch
END_TXN_MARKER = struct.Struct(">hi")


class EndTxnMarker(NamedTuple):
    """An ABORT or COMMIT marker: its ControlRecordType id (0 ABORT, 1 COMMIT), the
    coordinator epoch, and the marker record's timestamp (ms)."""

    control_type: int
    coordinator_epoch: int
    timestamp: int

    @property
    def is_abort(self) -> bool:
        return self.control_type == ABORT


def _versioned(data, layout: struct.Struct, size_of: str, version_of: str) -> tuple:
    """``layout`` unpacked from ``data`` (bytes or None), refused as Kafka's readers refuse
    it: too short (``size_of`` names it), a negative version (``version_of``)."""
    if data is None or len(data) < layout.size:
        raise InvalidRecordError(
            f"Invalid value size found for {size_of}. Must have at least {layout.size} "
            f"bytes, but found only {0 if data is None else len(data)}")
    fields = layout.unpack_from(data)
    if fields[0] < 0:
        raise InvalidRecordError(f"Invalid version found for {version_of}: {fields[0]}. "
                                 "May indicate data corruption")
    return fields


def control_type(key) -> int:
    """ControlRecordType.parseTypeId: the type id of a control record ``key`` (bytes, or
    None). An unknown version >= 0 is read as version 0, as Kafka does.

    Raises:
        InvalidRecordError: a key shorter than 4 bytes (or null), a negative version.
    """
    return _versioned(key, KEY, "end control record key", "control record")[1]


def end_txn_coordinator_epoch(type_id: int, value) -> int:
    """EndTransactionMarker.deserializeValue: the coordinator epoch of an ABORT or COMMIT
    marker's ``value`` (bytes, or None). A version above 0 is read as version 0.

    Raises:
        InvalidRecordError: ``type_id`` is not ABORT or COMMIT, a value shorter than 6
            bytes (or null), a negative version.
    """
    if type_id not in (ABORT, COMMIT):
        raise InvalidRecordError(
            f"Invalid control record type for end transaction marker {type_id}")
    return _versioned(value, END_TXN_MARKER, "end transaction marker",
                      "end transaction marker")[1]


def read_end_txn_marker(batch, max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
                        ) -> EndTxnMarker | None:
    """The end-transaction marker of a control ``batch`` (a
    :class:`~kafkalog_cli.format.records.RecordBatch`): its first record
    (``EndTransactionMarker.deserialize``), or None when the batch holds no record (the
    cleaner removed it with its transaction). Only the first record is decoded.

    Raises:
        InvalidRecordError / CorruptRecordError: records that do not decode, a key or
            value that is not an ABORT / COMMIT marker (see :func:`control_type`,
            :func:`end_txn_coordinator_epoch`).
    """
    rec = next(iter(batch.iter_records(max_bytes)), None)
    if rec is None:
        return None
    type_id = control_type(rec[2])
    return EndTxnMarker(type_id, end_txn_coordinator_epoch(type_id, rec[3]), rec[1])
