"""Decoders of Kafka's internal topics, producing what DumpLogSegments prints.

    topic                   flag (dump-segment, read)       decoder                   Kafka class followed
    __consumer_offsets      --offsets-decoder               ConsumerOffsetsDecoder    OffsetsMessageParser
    __transaction_state     --transaction-log-decoder       TransactionLogDecoder     TransactionLogMessageParser
    __share_group_state     --share-group-state-decoder     ShareGroupStateDecoder    ShareGroupStateMessageParser
    __cluster_metadata      --cluster-metadata-decoder      ClusterMetadataDecoder    ClusterMetadataLogMessageParser
    __remote_log_metadata   --remote-log-metadata-decoder   RemoteLogMetadataDecoder  RemoteMetadataLogMessageParser
    (control batches)                                       decode_control_record     ControlRecordUtils / EndTransactionMarker

Each decoder has ``decode(key, value) -> DecodedRecord`` and never raises: bytes it cannot
decode (unknown record type or version, truncated data) come back as ``{"raw": base64}``
with a warning, and with a :class:`~kafkalog_cli.decoders.decoded.DecodeFailure` telling
what Kafka's parser does with them instead (``Unknown record type N at offset X,
skipping.``, ``Error at offset X, skipping. <message>`` for the coordinator topics and
``__remote_log_metadata``, ``Error at X, skipping. <message>`` for ``__cluster_metadata``);
:meth:`DecodedRecord.kafka_text` gives the key and payload Kafka's tool prints. Message
layouts are declared once in ``*_messages.py`` with the declarative
:class:`~kafkalog_cli.schema.messages.Message` and compiled per version.
"""

from __future__ import annotations

import re

from ..constants import DECODER_NAMES
from ..schema.messages import Field, Message
from .cluster_metadata import ClusterMetadataDecoder, control_text, decode_control_record
from .consumer_offsets import ConsumerOffsetsDecoder
from .decoded import DELETE_MARKER, DecodedRecord, DecodeFailure
from .remote_log_metadata import RemoteLogMetadataDecoder
from .share_group_state import ShareGroupStateDecoder
from .transaction_log import TransactionLogDecoder, format_text

__all__ = [
    "DECODER_NAMES",
    "DELETE_MARKER",
    "ClusterMetadataDecoder",
    "ConsumerOffsetsDecoder",
    "DecodeFailure",
    "DecodedRecord",
    "Field",
    "Message",
    "RemoteLogMetadataDecoder",
    "ShareGroupStateDecoder",
    "TransactionLogDecoder",
    "control_text",
    "decode_control_record",
    "decoder_for_name",
    "decoder_for_topic",
    "format_text",
]

_DECODERS = {cls.topic: cls for cls in (
    ConsumerOffsetsDecoder, TransactionLogDecoder, ShareGroupStateDecoder,
    ClusterMetadataDecoder, RemoteLogMetadataDecoder)}

_PARTITION_SUFFIX = re.compile(r"-\d+$")


def decoder_for_topic(topic: str):
    """The decoder for an internal topic, or None for any other topic.

    :param topic: a topic name (``"__consumer_offsets"``) or a partition directory name
        (``"__consumer_offsets-7"``).
    :returns: a new decoder (see the table above), or None.
    """
    cls = _DECODERS.get(topic) or _DECODERS.get(_PARTITION_SUFFIX.sub("", topic))
    return cls() if cls is not None else None


def decoder_for_name(name: str):
    """The decoder a DumpLogSegments decoder flag names (a key of :data:`DECODER_NAMES`).

    :raises KeyError: an unknown name.
    """
    return _DECODERS[DECODER_NAMES[name]]()
