"""Decoders of Kafka's internal topics, producing what DumpLogSegments prints.

    topic                  decoder                   Kafka class followed
    __consumer_offsets     ConsumerOffsetsDecoder    OffsetsMessageParser
    __transaction_state    TransactionLogDecoder     TransactionLog
    __cluster_metadata     ClusterMetadataDecoder    ClusterMetadataLogMessageParser
    (control batches)      decode_control_record     ControlRecordUtils / EndTransactionMarker

Each decoder has ``decode(key, value) -> DecodedRecord`` and never raises: bytes it cannot
decode (unknown record type or version, truncated data) come back as ``{"raw": base64}``
with a warning, and with a :class:`~kafkalog_cli.decoders.decoded.DecodeFailure` telling
what Kafka's parser does with them instead (``Unknown record type N at offset X,
skipping.``, ``Error at offset X, skipping. <message>`` for the coordinator topics,
``Error at X, skipping. <message>`` for ``__cluster_metadata``). Message layouts are declared once in ``*_messages.py`` with the
declarative :class:`~kafkalog_cli.schema.messages.Message` and compiled per version.
"""

from __future__ import annotations

import re

from ..schema.messages import Field, Message
from .cluster_metadata import ClusterMetadataDecoder, control_text, decode_control_record
from .consumer_offsets import ConsumerOffsetsDecoder
from .decoded import DELETE_MARKER, DecodedRecord, DecodeFailure
from .transaction_log import TransactionLogDecoder, format_text

__all__ = [
    "DELETE_MARKER",
    "ClusterMetadataDecoder",
    "ConsumerOffsetsDecoder",
    "DecodeFailure",
    "DecodedRecord",
    "Field",
    "Message",
    "TransactionLogDecoder",
    "control_text",
    "decode_control_record",
    "decoder_for_topic",
    "format_text",
]

_DECODERS = {
    ConsumerOffsetsDecoder.topic: ConsumerOffsetsDecoder,
    TransactionLogDecoder.topic: TransactionLogDecoder,
    ClusterMetadataDecoder.topic: ClusterMetadataDecoder,
}
_PARTITION_SUFFIX = re.compile(r"-\d+$")


def decoder_for_topic(topic: str):
    """The decoder for an internal topic, or None for any other topic.

    :param topic: a topic name (``"__consumer_offsets"``) or a partition directory name
        (``"__consumer_offsets-7"``).
    :returns: a new ConsumerOffsetsDecoder, TransactionLogDecoder or
        ClusterMetadataDecoder, or None.
    """
    cls = _DECODERS.get(topic) or _DECODERS.get(_PARTITION_SUFFIX.sub("", topic))
    return cls() if cls is not None else None
