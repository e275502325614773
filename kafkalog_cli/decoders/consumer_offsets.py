"""Decoder of ``__consumer_offsets`` records, after DumpLogSegments' OffsetsMessageParser.

    Key =>
      RecordType => Int16          (GroupCoordinatorRecordSerde; also the key's version)
      Data => the key message at version RecordType
    Value (null = tombstone, printed "<DELETE>") =>
      Version => Int16
      Data => the value message at Version

Output shapes (as DumpLogSegments prints them)::

    key   {"type": "<record type>", "data": {...}}
    value {"version": "<version>", "data": {...}}

For a GroupMetadataValue with protocolType "consumer", each member's ``subscription`` and
``assignment`` are replaced by the decoded ConsumerProtocolSubscription /
ConsumerProtocolAssignment (int16 version + message); when that fails the base64 bytes
stay, as Kafka keeps the original bytes.
"""

from __future__ import annotations

from ..schema.flexible import java_message
from ..schema.messages import PARSE_ERRORS, Message
from . import group_messages as gm
from .decoded import DecodedRecord, DecodeFailure, raw_json, unknown_tag_warnings

#: ConsumerProtocol.PROTOCOL_TYPE
CONSUMER_PROTOCOL_TYPE = "consumer"


def _int16(data) -> int:
    return int.from_bytes(data[:2], "big", signed=True)


def decode_versioned(message: Message, data, version: int, warnings: list[str],
                     what: str, errors: list[str] | None = None) -> dict | None:
    """Parse ``data[2:]`` as ``message`` at ``version`` into Kafka's JSON shape.

    Returns None (after appending a warning, and to ``errors`` the message of the
    exception Kafka's CoordinatorRecordSerde.readMessage throws) when the version is
    unknown or the bytes do not parse; trailing bytes after the message are reported but
    tolerated, as Kafka's coordinator serde ignores them.
    """
    if version not in message.valid:
        warnings.append(f"{what}: unknown {message.name} version {version} "
                        f"(known: {message.valid}), kept raw")
        if errors is not None:
            errors.append(_serde_error(version, what,
                                       f"Can't read version {version} of {message.name}"))
        return None
    try:
        obj, end = message.parse(data, version, offset=2)
    except PARSE_ERRORS as e:
        warnings.append(f"{what}: could not read {message.name} v{version}: {e}")
        if errors is not None:
            errors.append(_serde_error(version, what, java_message(e)))
        return None
    if end != len(data):
        warnings.append(f"{what}: {len(data) - end} bytes after {message.name} v{version}")
    unknown: list = []
    out = message.to_json(obj, version, unknown)
    warnings.extend(unknown_tag_warnings(unknown))
    if message is gm.GroupMetadataValue:
        _decode_consumer_protocol(out, obj)
    return out


def _decode_consumer_protocol(out: dict, obj: dict) -> None:
    """Replace members' subscription/assignment by their decoded form (in place)."""
    if out.get("protocolType") != CONSUMER_PROTOCOL_TYPE:
        return
    for member_json, member in zip(out.get("members") or (), obj.get("members") or (),
                                   strict=True):
        for name, message in (("subscription", gm.ConsumerProtocolSubscription),
                              ("assignment", gm.ConsumerProtocolAssignment)):
            decoded = decode_embedded(message, member.get(name))
            if decoded is not None:
                member_json[name] = decoded


def decode_embedded(message: Message, data) -> dict | None:
    """An int16 version followed by ``message`` at that version, in JSON shape; None when
    the bytes are absent, the version unknown or the bytes do not parse."""
    if data is None or len(data) < 2:
        return None
    version = _int16(data)
    if version not in message.valid:
        return None
    try:
        obj, _ = message.parse(data, version, offset=2)
    except PARSE_ERRORS:
        return None
    return message.to_json(obj, version)


def _serde_error(version: int, what: str, cause: str) -> str:
    """CoordinatorRecordSerde.readMessage's wrapping of a reader's exception."""
    return f"Could not read record with version {version} from {what}'s buffer due to: {cause}."


def short_version_failure(what: str) -> DecodeFailure:
    """CoordinatorRecordSerde.readVersion on fewer than 2 bytes."""
    return DecodeFailure("error", f"Could not read version from {what}'s buffer.")


class ConsumerOffsetsDecoder:
    """Decodes ``__consumer_offsets`` keys and values (OffsetsMessageParser). Never raises:
    what cannot be decoded is returned as ``{"raw": base64}`` with a warning."""

    topic = "__consumer_offsets"

    def decode(self, key: bytes | None, value: bytes | None) -> DecodedRecord:
        """Decode one record.

        :param key: the record key (required by the format; None gives a raw record).
        :param value: the record value, None for a tombstone.
        """
        warnings: list[str] = []
        if key is None or len(key) < 2:
            warnings.append("missing or short key: not a group coordinator record")
            failure = (DecodeFailure("missing_key") if key is None
                       else short_version_failure("key"))
            return DecodedRecord(raw_json(key), raw_json(value), None, warnings,
                                 tombstone=value is None, failure=failure)
        record_type = _int16(key)
        types = gm.RECORD_TYPES.get(record_type)
        if types is None:
            warnings.append(f"Unknown record type {record_type}, kept raw")
            return DecodedRecord(raw_json(key), raw_json(value), None, warnings,
                                 tombstone=value is None,
                                 failure=DecodeFailure("unknown_type", record_type=record_type))
        key_msg, value_msg = types
        errors: list[str] = []
        key_data = decode_versioned(key_msg, key, record_type, warnings, "key", errors)
        key_json = (raw_json(key) if key_data is None
                    else {"type": str(record_type), "data": key_data})
        key_type = key_msg.name if key_data is not None else None
        failure = DecodeFailure("error", errors[0]) if errors else None
        if value is None:
            return DecodedRecord(key_json, None, key_type, warnings, tombstone=True,
                                 failure=failure)
        if len(value) < 2:
            warnings.append("value shorter than its version, kept raw")
            return DecodedRecord(key_json, raw_json(value), key_type, warnings,
                                 failure=failure or short_version_failure("value"))
        version = _int16(value)
        value_data = decode_versioned(value_msg, value, version, warnings, "value", errors)
        value_json = (raw_json(value) if value_data is None
                      else {"version": str(version), "data": value_data})
        # Kafka's serde stops at the first exception: the key's, else the value's
        failure = failure or (DecodeFailure("error", errors[0]) if errors else None)
        return DecodedRecord(key_json, value_json, key_type, warnings, failure=failure)
