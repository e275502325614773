"""What the internal-topic decoders return: :class:`DecodedRecord`, and
:class:`DecodeFailure` for what Kafka's DumpLogSegments parsers print where they give up.

The message layouts themselves are declared with :mod:`kafkalog_cli.schema.messages`.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from decimal import Decimal


def _b64(data) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


#: What DumpLogSegments prints for a tombstone (a null value) of a compacted internal topic.
DELETE_MARKER = "<DELETE>"


@dataclass(frozen=True)
class DecodeFailure:
    """Why DumpLogSegments' parser gives up on a record, and what it prints instead.

    Attributes:
        kind: ``"unknown_type"`` (a coordinator record type the serde does not know:
            ``Unknown record type N at offset X, skipping.`` as the key, no payload),
            ``"error"`` (any other exception: ``Error at offset X, skipping. <message>`` as
            the key, no payload; for ``__cluster_metadata``, :attr:`in_payload`:
            ``Error at X, skipping. <message>`` as the payload, no key) or
            ``"missing_key"`` (a coordinator record without a key: the parser throws and
            Kafka's tool stops with exit 1).
        message: the exception's ``getMessage()`` (``"null"`` when it has none).
        record_type: the unknown record type (``"unknown_type"``).
        in_payload: printed as the payload (ClusterMetadataLogMessageParser,
            RemoteMetadataLogMessageParser), with no key.
        at_offset: ``Error at offset X`` (the coordinator parsers and
            RemoteMetadataLogMessageParser) rather than ``Error at X``
            (ClusterMetadataLogMessageParser); None: ``not in_payload``.
    """

    kind: str
    message: str | None = None
    record_type: int | None = None
    in_payload: bool = False
    at_offset: bool | None = None

    def text(self, offset: int) -> str:
        """The line part DumpLogSegments prints for the record at ``offset``."""
        if self.kind == "unknown_type":
            return f"Unknown record type {self.record_type} at offset {offset}, skipping."
        if self.kind == "missing_key":
            return (f"Failed to decode message at offset {offset} using the specified "
                    "decoder (message had a missing key)")
        at_offset = (not self.in_payload) if self.at_offset is None else self.at_offset
        where = f"offset {offset}" if at_offset else str(offset)
        return f"Error at {where}, skipping. {self.message}"

    def kafka_key_and_payload(self, offset: int) -> tuple[str | None, str | None]:
        """``(key text, payload text)`` as DumpLogSegments prints them (None: not printed;
        a ``missing_key`` failure prints neither)."""
        if self.kind == "missing_key":
            return None, None
        if self.in_payload:
            return None, self.text(offset)
        return self.text(offset), None


@dataclass
class DecodedRecord:
    """One record of an internal topic, decoded as DumpLogSegments decodes it.

    Attributes:
        key: the key's JSON shape (e.g. ``{"type": "1", "data": {...}}``), None when the
            record has no key (``__cluster_metadata``), or ``{"raw": base64}`` when the key
            could not be decoded.
        value: the value's JSON shape, None for a tombstone, or ``{"raw": base64}``.
        key_type: the decoded type's name (``"OffsetCommitKey"``, ``"TopicRecord"``,
            ``"SnapshotHeader"``, ...), None when unknown.
        warnings: why something was left raw, and tagged fields without a declaration.
        tombstone: the value is null (the coordinator parsers print ``<DELETE>``).
        failure: when Kafka's parser would fail on this record, how (what its tool prints
            instead of the key and payload); None when it decodes.
        keyless: Kafka's parser prints no key for this topic (``__cluster_metadata``,
            ``__remote_log_metadata``: their records have null keys).
        text: the payload as Kafka's parser prints it when that is not the value's JSON
            (RemoteMetadataLogMessageParser prints the metadata object's ``toString``).
        layout: the earlier layout the value was read with (``Message.layout``), None
            for the current one.
        kafka_value: the value as Kafka's tool prints it, when :attr:`value` holds more
            (bytes kafkalog decodes and Kafka's tool leaves as base64); None: ``value``.
    """

    key: dict | None
    value: dict | None
    key_type: str | None
    warnings: list[str] = field(default_factory=list)
    tombstone: bool = False
    failure: DecodeFailure | None = None
    keyless: bool = False
    text: str | None = None
    layout: str | None = None
    kafka_value: dict | None = None

    @property
    def ok(self) -> bool:
        """Decoded without any warning."""
        return not self.warnings

    def key_json(self) -> str | None:
        """The key as compact JSON (Jackson's ``ObjectNode.toString``), or None."""
        return None if self.key is None else to_json_text(self.key)

    def value_json(self) -> str | None:
        """The value as Kafka's tool prints it: compact JSON (:attr:`kafka_value` when
        set), ``"<DELETE>"`` for a tombstone, or None."""
        if self.tombstone:
            return DELETE_MARKER
        value = self.value if self.kafka_value is None else self.kafka_value
        return None if value is None else to_json_text(value)

    def kafka_text(self, offset: int) -> tuple[str | None, str | None]:
        """``(key, payload)`` as DumpLogSegments' parser prints them for the record at
        ``offset`` (None: not printed): the key and value JSON (``<DELETE>`` for a
        coordinator tombstone), the metadata's ``toString`` for ``__remote_log_metadata``,
        or, where Kafka's parser fails, what it prints instead."""
        if self.failure is not None:
            return self.failure.kafka_key_and_payload(offset)
        payload = self.text if self.text is not None else self.value_json()
        return (None if self.keyless else self.key_json()), payload


def to_json_text(obj) -> str:
    """Compact JSON as Jackson writes it: no spaces, non-ASCII kept. A value holding
    doubles needs :func:`to_java_json_text`."""
    return _dumps(obj)


_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def to_java_json_text(obj) -> str:
    """:func:`to_json_text` with doubles as Java's ``Double.toString`` writes them
    (:func:`java_double`: ``1.048576E7``, ``1.0E-4``), as Jackson prints a DoubleNode.
    Pure Python: for the values of messages with a float64 field."""
    return _JavaDoubles().encode(obj)


def java_double(x: float) -> str:
    """``Double.toString``: plain notation with at least one decimal for 1e-3 <= |x| < 1e7
    (and zero), else ``d.dddE<n>``; the shortest digits that read back as ``x`` (Python's
    ``repr``); ``NaN``, ``Infinity`` and ``-Infinity`` as Jackson writes them."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    exact = Decimal(repr(x))
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        text = format(exact, "f")
        return text if "." in text else text + ".0"
    sign, digit_tuple, exponent = exact.as_tuple()
    digits = "".join(map(str, digit_tuple))
    exp10 = len(digits) + exponent - 1
    digits = digits.rstrip("0") or "0"
    return f"{'-' if sign else ''}{digits[0]}.{digits[1:] or '0'}E{exp10}"


class _JavaDoubles(json.JSONEncoder):
    """A JSON encoder writing floats with :func:`java_double`."""

    def __init__(self):
        super().__init__(separators=(",", ":"), ensure_ascii=False)

    def iterencode(self, o, _one_shot=False):
        return json.encoder._make_iterencode(
            {}, self.default, json.encoder.py_encode_basestring, self.indent, java_double,
            self.key_separator, self.item_separator, self.sort_keys, self.skipkeys,
            _one_shot)(o, 0)


def raw_json(data) -> dict | None:
    """The ``{"raw": base64}`` fallback for bytes that could not be decoded (None stays None)."""
    return None if data is None else {"raw": _b64(data)}


def unknown_tag_warnings(unknown: list) -> list[str]:
    """Warnings naming each ``(path, tag, bytes)`` collected by :meth:`Message.to_json`."""
    return [f"{path}: unknown tagged field {tag} kept raw ({_b64(data)})"
            for path, tag, data in unknown]
