"""Decoder of ``__consumer_offsets`` records, after DumpLogSegments' OffsetsMessageParser
(GroupCoordinatorRecordSerde; record types in :mod:`.group_messages`).

The framing and output shapes are the coordinator's (:mod:`.coordinator`). For a
GroupMetadataValue with protocolType "consumer", each member's ``subscription`` and
``assignment`` are replaced by the decoded ConsumerProtocolSubscription /
ConsumerProtocolAssignment (int16 version + message), as OffsetsMessageParser
.prepareGroupMetadataValue does; when that fails the base64 bytes stay, as Kafka keeps the
original bytes. A ConsumerGroupMemberMetadataValue's classic supported protocols, left
as base64 by Kafka's tool, also get their decoded ConsumerProtocolSubscription in JSON
(:attr:`DecodedRecord.value`; Kafka's text is :attr:`DecodedRecord.kafka_value`).
"""

from __future__ import annotations

import base64

from ..schema.messages import PARSE_ERRORS, Message
from . import group_messages as gm
from .coordinator import CoordinatorDecoder, decode_versioned, int16, short_version_failure

__all__ = ["CONSUMER_PROTOCOL_TYPE", "ConsumerOffsetsDecoder", "decode_embedded",
           "decode_versioned", "short_version_failure"]

#: ConsumerProtocol.PROTOCOL_TYPE
CONSUMER_PROTOCOL_TYPE = "consumer"


def decode_embedded(message: Message, data) -> dict | None:
    """An int16 version followed by ``message`` at that version, in JSON shape; None when
    the bytes are absent, the version unknown or the bytes do not parse."""
    if data is None or len(data) < 2:
        return None
    version = int16(data)
    if version not in message.valid:
        return None
    try:
        obj, _ = message.parse(data, version, offset=2)
    except PARSE_ERRORS:
        return None
    return message.to_json(obj, version)


class ConsumerOffsetsDecoder(CoordinatorDecoder):
    """Decodes ``__consumer_offsets`` keys and values (OffsetsMessageParser). Never raises:
    what cannot be decoded is returned as ``{"raw": base64}`` with a warning."""

    topic = "__consumer_offsets"
    record_types = gm.RECORD_TYPES
    retired_types = gm.RETIRED_RECORD_TYPES

    def _value_json(self, message: Message, data: dict, value: bytes, version: int,
                    warnings: list[str]) -> dict:
        if message is gm.GroupMetadataValue and \
                data.get("protocolType") == CONSUMER_PROTOCOL_TYPE:
            for member in data.get("members") or ():
                for name, embedded in (("subscription", gm.ConsumerProtocolSubscription),
                                       ("assignment", gm.ConsumerProtocolAssignment)):
                    decoded = decode_embedded(embedded, base64.b64decode(member[name]))
                    if decoded is not None:  # else Kafka swallows the error, keeps the bytes
                        member[name] = decoded
        return data

    def _enrich(self, message: Message, data: dict) -> dict | None:
        """ConsumerGroupMemberMetadataValue: a classic member's supported protocols carry
        ConsumerProtocolSubscription bytes (KIP-848's upgrade from the classic protocol),
        which Kafka's tool prints as base64; JSON adds each decoded one as
        ``subscription`` beside its ``metadata``."""
        if message is not gm.ConsumerGroupMemberMetadataValue:
            return None
        classic = data.get("classicMemberMetadata")
        if not classic or not classic.get("supportedProtocols"):
            return None
        protocols = []
        for protocol in classic["supportedProtocols"]:
            decoded = decode_embedded(gm.ConsumerProtocolSubscription,
                                      base64.b64decode(protocol["metadata"]))
            protocols.append(protocol if decoded is None else {**protocol,
                                                               "subscription": decoded})
        return {**data, "classicMemberMetadata": {**classic, "supportedProtocols": protocols}}
