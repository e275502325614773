"""Decoder of ``__cluster_metadata`` records (and KRaft snapshots), after DumpLogSegments'
ClusterMetadataLogMessageParser and MetadataRecordSerde, plus the control records of
control batches (ControlRecordUtils). The metadata framing (AbstractApiMessageSerde) is
:class:`FramedMetadataDecoder`, which ``__remote_log_metadata`` shares.

    MetadataRecord (the value; keys are null) =>
      FrameVersion => UnsignedVarint   (1; 0 was KRaft's 2.8 preview, refused)
      ApiKey => UnsignedVarint         (MetadataRecordType id)
      Version => UnsignedVarint
      Data => the record message at Version, ending exactly at the value's end

    Control record (in a control batch) =>
      Key: ControlRecordKey (version Int16, type Int16)        (schema/control.py)
      Value: ABORT/COMMIT -> EndTransactionMarker (version Int16, coordinatorEpoch Int32);
             LEADER_CHANGE .. KRAFT_VOTERS -> a flexible message whose first field is its
             Int16 version (raft_messages.py)

Output shapes::

    metadata value  {"type": "TOPIC_RECORD", "version": 0, "data": {...}}
    control key     {"version": 0, "type": 3}
    control value   {"version": 0, "coordinatorEpoch": 5}        (ABORT / COMMIT)
                    {"version": 0, "lastContainedLogTimestamp": ...}  (KRaft: the message)
"""

from __future__ import annotations

import functools

import construct as c

from ..schema.control import ControlRecordKey, EndTransactionMarker, control_type_name
from ..schema.messages import PARSE_ERRORS
from . import raft_messages as rm
from .decoded import (
    DecodedRecord,
    DecodeFailure,
    raw_json,
    to_java_json_text,
    to_json_text,
    unknown_tag_warnings,
)
from .metadata_messages import BY_API_KEY, metadata_type_name

#: AbstractApiMessageSerde.DEFAULT_FRAME_VERSION
FRAME_VERSION = 1

#: Control types with a KRaft message value: ``{type id: (DumpLogSegments label, message)}``.
KRAFT_CONTROL_MESSAGES = {
    2: ("LeaderChange", rm.LeaderChangeMessage),
    3: ("SnapshotHeader", rm.SnapshotHeaderRecord),
    4: ("SnapshotFooter", rm.SnapshotFooterRecord),
    5: ("KRaftVersion", rm.KRaftVersionRecord),
    6: ("KRaftVoters", rm.VotersRecord),
}


def _read_unsigned_varint(data, pos: int) -> tuple[int, int]:
    value = 0
    for i in range(5):
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << (7 * i)
        if b < 0x80:
            return value, pos
    raise ValueError("Varint is too long, the most significant bit in the 5th byte is set")


def read_frame(value) -> tuple[int, int, int, int]:
    """The metadata frame of ``value``: (frame version, api key, version, data position).

    :raises ValueError: a varint is too long, too large for a short, or runs off the end.
    """
    try:
        frame, pos = _read_unsigned_varint(value, 0)
        api_key, pos = _read_unsigned_varint(value, pos)
        version, pos = _read_unsigned_varint(value, pos)
    except IndexError:
        raise ValueError("metadata record frame runs past the end of the value") from None
    for what, v in (("frame version", frame), ("type", api_key), ("version", version)):
        if v > 0x7FFF:
            raise ValueError(f"Value for {what} was too large.")
    return frame, api_key, version, pos


@functools.cache
def _type_name(message_name: str) -> str:
    return metadata_type_name(message_name)


class FramedMetadataDecoder:
    """Decodes values framed by AbstractApiMessageSerde (a KRaft metadata record: frame
    version, api key, version, the record): ``__cluster_metadata`` and
    ``__remote_log_metadata``. Never raises: what cannot be decoded is returned as
    ``{"raw": base64}`` with a warning and, in ``failure``, what Kafka's parser prints.

    Subclasses set :attr:`topic`, :attr:`by_api_key` (``{api key: message}``) and
    :attr:`at_offset` (``Error at offset X`` rather than ``Error at X``), and may
    override :meth:`_text` (the payload Kafka's tool prints, when not the JSON).
    """

    topic = ""
    by_api_key: dict = {}
    at_offset = False

    def _failure(self, message: str) -> DecodeFailure:
        """What the parser prints as the payload when the serde throws (a
        MetadataParseException with ``message``)."""
        return DecodeFailure("error", message, in_payload=True, at_offset=self.at_offset)

    def _frame_failure(self, value) -> DecodeFailure | None:
        """AbstractApiMessageSerde.read's checks of the frame, in its order (frame
        version, type, version), or None when the frame reads."""
        if value is None:  # a null buffer: reading the frame version throws
            return self._failure("Error while reading frame version")
        pos = 0
        for what in ("frame version", "type", "version"):
            try:
                v, pos = _read_unsigned_varint(value, pos)
            except (IndexError, ValueError):
                return self._failure(f"Error while reading {what}")
            if v > 0x7FFF:
                return self._failure(f"Value for {what} was too large.")
            if what == "frame version":
                if v == 0:
                    return self._failure(
                        "Could not deserialize metadata record with frame version 0. Note "
                        "that upgrades from the preview release of KRaft in 2.8 to newer "
                        "versions are not supported.")
                if v != FRAME_VERSION:
                    return self._failure(
                        f"Could not deserialize metadata record due to unknown frame version "
                        f"{v}(only frame version {FRAME_VERSION} is supported)")
        return None

    def _null_value(self, key, warnings: list[str]) -> DecodedRecord:
        warnings.append("metadata record without a value")
        return DecodedRecord(raw_json(key), None, None, warnings, tombstone=True,
                             failure=self._frame_failure(None), keyless=True)

    def decode(self, key: bytes | None, value: bytes | None) -> DecodedRecord:
        """Decode one (non-control) record; ``key`` is ignored (these keys are null)."""
        warnings: list[str] = []
        if value is None:
            return self._null_value(key, warnings)

        def raw(message_name=None, failure=None) -> DecodedRecord:
            return DecodedRecord(raw_json(key), raw_json(value), message_name, warnings,
                                 failure=failure, keyless=True)

        try:
            frame, api_key, version, pos = read_frame(value)
        except ValueError as e:
            warnings.append(f"could not read the metadata frame: {e}")
            return raw(failure=self._frame_failure(value) or self._failure(str(e)))
        if frame != FRAME_VERSION:
            warnings.append(f"unknown frame version {frame} (only frame version "
                            f"{FRAME_VERSION} is supported), kept raw")
            return raw(failure=self._frame_failure(value))
        message = self.by_api_key.get(api_key)
        if message is None:
            warnings.append(f"unknown metadata record type {api_key} version {version}, "
                            "kept raw")
            # MetadataRecordType.fromId throws; MetadataParseException(e) takes its toString
            return raw(failure=self._failure(
                "org.apache.kafka.common.errors."
                f"UnsupportedVersionException: Unknown metadata id {api_key}"))
        # a reader's exception, unknown versions included, is reported without its cause
        read_failure = self._failure(f"Failed to deserialize record with type {api_key}")
        if all(version not in layout.valid for layout in message.layouts):
            warnings.append(f"unknown {message.name} version {version} "
                            f"(known: {message.valid}), kept raw")
            return raw(message.name, read_failure)
        try:
            layout, obj, end = message.parse_layouts(value, version, offset=pos)
        except PARSE_ERRORS as e:
            warnings.append(f"Failed to deserialize record with type {api_key}: {e}")
            return raw(message.name, read_failure)
        if end != len(value):
            warnings.append(f"Found {len(value) - end} byte(s) of garbage after {api_key}, "
                            "kept raw")
            return raw(message.name, self._failure(
                f"Found {len(value) - end} byte(s) of garbage after {api_key}"))
        unknown: list = []
        data = layout.to_json(obj, version, unknown)
        warnings.extend(unknown_tag_warnings(unknown))
        out = {"type": _type_name(message.name), "version": version, "data": data}
        record = DecodedRecord(None if key is None else raw_json(key), out, message.name,
                               warnings, keyless=True, layout=layout.layout
                               if layout is not message else None)
        if message.has_float64:  # ClientQuotaRecord: Jackson prints Double.toString
            record.text = to_java_json_text(out)
        self._text(record, message, data)
        return record

    def _text(self, record: DecodedRecord, message, data: dict) -> None:
        """Set ``record.text`` (or ``record.failure``) when Kafka's tool prints something
        other than the value's JSON for a decoded record (nothing by default)."""


class ClusterMetadataDecoder(FramedMetadataDecoder):
    """Decodes ``__cluster_metadata`` values (MetadataRecordSerde,
    ClusterMetadataLogMessageParser: ``Error at X, skipping.``)."""

    topic = "__cluster_metadata"
    by_api_key = BY_API_KEY


def decode_control_record(type_id: int | None, key: bytes | None,
                          value: bytes | None) -> DecodedRecord:
    """Decode a record of a control batch.

    :param type_id: the ControlRecordType id, or None to read it from ``key``.
    :param key: the ControlRecordKey bytes.
    :param value: the value (EndTransactionMarker or a KRaft control message).
    :returns: ``key_type`` is ``"ABORT"``/``"COMMIT"`` for markers, the DumpLogSegments
        label (``"LeaderChange"``, ``"SnapshotHeader"``, ``"SnapshotFooter"``,
        ``"KRaftVersion"``, ``"KRaftVoters"``) for KRaft records, None when unknown.
        Never raises.
    """
    warnings: list[str] = []
    key_json = raw_json(key)
    try:
        k = ControlRecordKey.parse(bytes(key)) if key is not None else None
    except c.ConstructError as e:
        warnings.append(f"could not read the control record key: {e}")
        k = None
    if k is not None:
        key_json = {"version": k.version, "type": k.type}
        if k.version < 0:
            warnings.append(f"Invalid version found for control record: {k.version}")
        if type_id is None:
            type_id = k.type
    if type_id is None:
        if not warnings:
            warnings.append("control record without a key")
        return DecodedRecord(key_json, raw_json(value), None, warnings)
    name = control_type_name(type_id)
    if name in ("ABORT", "COMMIT"):
        try:
            marker = EndTransactionMarker.parse(bytes(value))
        except (c.ConstructError, TypeError) as e:
            warnings.append(f"could not read the {name} marker: {e}")
            return DecodedRecord(key_json, raw_json(value), name, warnings)
        return DecodedRecord(key_json, {"version": marker.version,
                                        "coordinatorEpoch": marker.coordinator_epoch},
                             name, warnings)
    entry = KRAFT_CONTROL_MESSAGES.get(type_id)
    if entry is None:
        warnings.append(f"unknown control record type {type_id}, kept raw")
        return DecodedRecord(key_json, raw_json(value), None, warnings)
    label, message = entry
    if value is None or len(value) < 2:
        warnings.append(f"{label} control record without a value")
        return DecodedRecord(key_json, raw_json(value), label, warnings)
    version = int.from_bytes(value[:2], "big", signed=True)
    if version not in message.valid:
        warnings.append(f"unknown {message.name} version {version} "
                        f"(known: {message.valid}), kept raw")
        return DecodedRecord(key_json, raw_json(value), label, warnings)
    try:
        obj, end = message.parse(value, version)
    except PARSE_ERRORS as e:
        warnings.append(f"could not read {message.name} v{version}: {e}")
        return DecodedRecord(key_json, raw_json(value), label, warnings)
    if end != len(value):
        warnings.append(f"{len(value) - end} bytes after {message.name} v{version}")
    unknown: list = []
    data = message.to_json(obj, version, unknown)
    warnings.extend(unknown_tag_warnings(unknown))
    return DecodedRecord(key_json, data, label, warnings)


def control_text(record: DecodedRecord) -> str:
    """What DumpLogSegments appends for a control record: ``endTxnMarker: COMMIT
    coordinatorEpoch: 0``, ``SnapshotHeader {...}``, or ``controlType: NAME(id)``."""
    if record.key_type in ("ABORT", "COMMIT") and "coordinatorEpoch" in (record.value or {}):
        return (f"endTxnMarker: {record.key_type} "
                f"coordinatorEpoch: {record.value['coordinatorEpoch']}")
    if record.key_type in {label for label, _ in KRAFT_CONTROL_MESSAGES.values()} and \
            record.value is not None and "raw" not in record.value:
        # Kafka's tool prints "LeaderChange: {...}" but "SnapshotHeader {...}" etc.
        sep = ": " if record.key_type == "LeaderChange" else " "
        return f"{record.key_type}{sep}{to_json_text(record.value)}"
    type_id = record.key.get("type") if isinstance(record.key, dict) else None
    return f"controlType: {control_type_name(type_id) if type_id is not None else 'UNKNOWN'}" \
           f"({type_id})"
