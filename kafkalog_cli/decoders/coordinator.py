"""The coordinator record decoder shared by ``__consumer_offsets``, ``__transaction_state``
and ``__share_group_state``, after Kafka's CoordinatorRecordSerde and DumpLogSegments'
CoordinatorRecordMessageParser.

    Key =>
      RecordType => Int16          (CoordinatorRecordType id: which key/value messages)
      Data => the key message
    Value (null = tombstone, printed "<DELETE>") =>
      Version => Int16
      Data => the value message at Version (trailing bytes ignored, as the serde does)

Output shapes (as DumpLogSegments prints them)::

    key   {"type": "<record type>", "data": {...}}
    value {"version": "<version>", "data": {...}}

Where the serde throws, :attr:`DecodedRecord.failure` says what Kafka's tool prints
instead (``Unknown record type N at offset X, skipping.``; ``Error at offset X,
skipping. Found an unknown record version V for T type`` for a value version outside
the value message's supported range, which Kafka 4.4's serde checks before it reads;
``Error at offset X, skipping. Could not read record with version V from value's buffer
due to: ...`` for bytes that do not parse).
"""

from __future__ import annotations

from ..schema.flexible import java_message
from ..schema.messages import PARSE_ERRORS, Message
from .decoded import DecodedRecord, DecodeFailure, raw_json, unknown_tag_warnings


def int16(data) -> int:
    """The big-endian int16 at the start of ``data`` (at least 2 bytes)."""
    return int.from_bytes(data[:2], "big", signed=True)


def serde_error(version: int, what: str, cause: str) -> str:
    """CoordinatorRecordSerde.readMessage's wrapping of a reader's exception."""
    return f"Could not read record with version {version} from {what}'s buffer due to: {cause}."


def unknown_version_error(version: int, record_type: int) -> str:
    """Deserializer.UnknownRecordVersionException's message: CoordinatorRecordSerde
    .deserialize throws it for a value version outside the value message's
    ``lowestSupportedVersion()..highestSupportedVersion()`` (Kafka 4.4)."""
    return f"Found an unknown record version {version} for {record_type} type"


def short_version_failure(what: str) -> DecodeFailure:
    """CoordinatorRecordSerde.readVersion on fewer than 2 bytes."""
    return DecodeFailure("error", f"Could not read version from {what}'s buffer.")


def decode_versioned(message: Message, data, version: int, warnings: list[str],
                     what: str, errors: list[str] | None = None,
                     *, read_version: int | None = None,
                     record_type: int | None = None) -> dict | None:
    """Parse ``data[2:]`` as ``message`` at ``version`` into Kafka's JSON shape.

    :param read_version: the version the bytes are read at when it differs from the one
        Kafka's serde names in its messages (a key is read at its only version; the serde
        passes the record type).
    :param record_type: a value's record type: a version the value message does not
        support is then the serde's :func:`unknown_version_error`, checked before the
        bytes are read (a key's unknown version is the reader's ``Can't read version``).
    :returns: the JSON shape, or None (after appending a warning, and to ``errors`` the
        message of the exception Kafka's CoordinatorRecordSerde.readMessage throws) when
        the version is unknown or the bytes do not parse; trailing bytes after the message
        are reported but tolerated, as Kafka's coordinator serde ignores them.
    """
    at = version if read_version is None else read_version
    if all(at not in layout.valid for layout in message.layouts):
        warnings.append(f"{what}: unknown {message.name} version {version} "
                        f"(known: {message.valid}), kept raw")
        if errors is not None:
            errors.append(unknown_version_error(version, record_type)
                          if record_type is not None else
                          serde_error(version, what,
                                      f"Can't read version {version} of {message.name}"))
        return None
    try:
        layout, obj, end = message.parse_layouts(data, at, offset=2)
    except PARSE_ERRORS as e:
        warnings.append(f"{what}: could not read {message.name} v{version}: {e}")
        if errors is not None:
            errors.append(serde_error(version, what, java_message(e)))
        return None
    if end != len(data):
        warnings.append(f"{what}: {len(data) - end} bytes after {message.name} v{version}")
    unknown: list = []
    out = layout.to_json(obj, at, unknown)
    warnings.extend(unknown_tag_warnings(unknown))
    return out


def key_read_version(key: Message, record_type: int) -> int:
    """The version a coordinator key is read at. Kafka's serde reads it at the record type;
    a key has one version whose layout does not depend on the number read at (Kafka's
    ``coordinator-key`` messages are at version 0; December 2024's ``data`` keys at their
    record type)."""
    return record_type if record_type in key.valid else key.valid.high


class CoordinatorDecoder:
    """Decodes the records of one coordinator's topic (CoordinatorRecordSerde). Never
    raises: what cannot be decoded is returned as ``{"raw": base64}`` with a warning.

    Subclasses set :attr:`topic` and :attr:`record_types` (``{record type: (key message,
    value message)}``), may set :attr:`retired_types` (record types the pinned Kafka no
    longer has: decoded for JSON, but Kafka's text is its ``Unknown record type``) and
    may override :meth:`_value_json` (decode embedded bytes as Kafka's tool does) and
    :meth:`_enrich` (decode more, for JSON only).
    """

    topic: str = ""
    record_types: dict[int, tuple[Message, Message]] = {}
    retired_types: dict[int, tuple[Message, Message]] = {}

    def decode(self, key: bytes | None, value: bytes | None) -> DecodedRecord:
        """Decode one record.

        :param key: the record key (required by the format; None gives a raw record).
        :param value: the record value, None for a tombstone.
        """
        warnings: list[str] = []
        if key is None or len(key) < 2:
            warnings.append(f"missing or short key: not a {self.topic} record")
            failure = (DecodeFailure("missing_key") if key is None
                       else short_version_failure("key"))
            return DecodedRecord(raw_json(key), raw_json(value), None, warnings,
                                 tombstone=value is None, failure=failure)
        record_type = int16(key)
        types = self.record_types.get(record_type)
        if types is None and record_type in self.retired_types:
            record = self._decode_typed(self.retired_types[record_type], record_type, key,
                                        value, warnings)
            record.warnings.append(
                f"record type {record_type} ({record.key_type or 'undecodable'}) is not "
                "in Kafka 4.4: its DumpLogSegments prints it as an unknown record type")
            record.failure = DecodeFailure("unknown_type", record_type=record_type)
            return record
        if types is None:
            warnings.append(f"Unknown record type {record_type}, kept raw")
            return DecodedRecord(raw_json(key), raw_json(value), None, warnings,
                                 tombstone=value is None,
                                 failure=DecodeFailure("unknown_type", record_type=record_type))
        return self._decode_typed(types, record_type, key, value, warnings)

    def _decode_typed(self, types: tuple[Message, Message], record_type: int, key: bytes,
                      value: bytes | None, warnings: list[str]) -> DecodedRecord:
        """:meth:`decode` of a record whose type names ``types`` (key and value messages)."""
        key_msg, value_msg = types
        errors: list[str] = []
        read_at = key_read_version(key_msg, record_type)
        key_data = decode_versioned(key_msg, key, record_type, warnings, "key", errors,
                                    read_version=read_at)
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
        version = int16(value)
        value_data = decode_versioned(value_msg, value, version, warnings, "value", errors,
                                      record_type=record_type)
        if value_data is not None:
            value_data = self._value_json(value_msg, value_data, value, version, warnings)
        value_json = (raw_json(value) if value_data is None
                      else {"version": str(version), "data": value_data})
        # Kafka's serde stops at the first exception: the key's, else the value's
        failure = failure or (DecodeFailure("error", errors[0]) if errors else None)
        record = DecodedRecord(key_json, value_json, key_type, warnings, failure=failure)
        enriched = None if value_data is None else self._enrich(value_msg, value_data)
        if enriched is not None:
            record.kafka_value = value_json
            record.value = {"version": str(version), "data": enriched}
        return record

    def _enrich(self, message: Message, data: dict) -> dict | None:
        """A copy of the value's JSON shape with what kafkalog decodes beyond Kafka's tool
        (shown in JSON; Kafka's text keeps ``data``), or None (nothing added)."""
        return None

    def _value_json(self, message: Message, data: dict, value: bytes, version: int,
                    warnings: list[str]) -> dict:
        """The value's JSON shape after the topic's own additions (none by default)."""
        return data
