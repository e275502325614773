"""Decoder of ``__remote_log_metadata`` records (tiered storage, KIP-405), after
DumpLogSegments' RemoteMetadataLogMessageParser and RemoteLogMetadataSerde.

Values are framed as KRaft metadata records (:mod:`.remote_messages`); keys are null.
The JSON shape is the metadata one (``{"type": "REMOTE_LOG_SEGMENT_METADATA_RECORD",
"version": 0, "data": {...}}``). Kafka's tool prints instead the ``toString`` of the
object RemoteLogMetadataSerde builds (:func:`metadata_text`), and ``Error at offset X,
skipping. <message>`` where the serde or that object's constructor throws: an unknown
state id (``state can not be null``), a negative start offset, an end offset below the
start, no leader epochs.
"""

from __future__ import annotations

import base64

from ..errors import (
    MetadataObjectError,
)
from . import remote_messages as rmm
from .cluster_metadata import FramedMetadataDecoder
from .decoded import DecodedRecord

#: The message of the NullPointerException RemoteMetadataLogMessageParser throws on a
#: null value (``record.value().remaining()``; JDK 17's helpful NPE text; the Record
#: interface is ``org.apache.kafka.common.record.internal.Record`` in Kafka 4.4, the pinned
#: broker, ``org.apache.kafka.common.record.Record`` before).
NULL_VALUE_MESSAGE = ('Cannot invoke "java.nio.ByteBuffer.remaining()" because the return '
                      'value of "org.apache.kafka.common.record.internal.Record.value()" is null')


def _topic_id_partition(tip: dict) -> str:
    """TopicIdPartition.toString: ``<topic id>:<topic>-<partition>``."""
    return f"{tip['id']}:{tip['name']}-{tip['partition']}"


def _to_string(class_name: str, **fields) -> str:
    """A Java ``toString`` of the usual form ``Name{field=value, ...}``, the fields in
    the order given."""
    return class_name + "{" + ", ".join(f"{k}={v}" for k, v in fields.items()) + "}"


def _segment_id(entry: dict) -> str:
    """RemoteLogSegmentId.toString."""
    return _to_string("RemoteLogSegmentId",
                      topicIdPartition=_topic_id_partition(entry["topicIdPartition"]),
                      id=entry["id"])


def _custom_metadata(data) -> str:
    """``Optional<CustomMetadata>`` as Java prints it (base64 in the JSON shape)."""
    if data is None:
        return "Optional.empty"
    return f"Optional[CustomMetadata{{{len(base64.b64decode(data))} bytes}}]"


def _leader_epochs(entries: list) -> str:
    """The leader-epoch map (a HashMap copied into a TreeMap) as Java prints it."""
    epochs: dict[int, int] = {}
    for e in entries:
        epochs[e["leaderEpoch"]] = e["offset"]  # a repeated epoch: the last one wins
    if not epochs:
        raise MetadataObjectError("segmentLeaderEpochs can not be null or empty")
    return "{" + ", ".join(f"{k}={epochs[k]}" for k in sorted(epochs)) + "}"


def _segment_state(state_id: int) -> str:
    name = rmm.SEGMENT_STATES.get(state_id)
    if name is None:  # RemoteLogSegmentState.forId gives null
        raise MetadataObjectError("state can not be null")
    return name


def _bool(v: bool) -> str:
    return "true" if v else "false"


def metadata_text(api_key: int, data: dict) -> str:
    """The ``toString`` of the RemoteLogMetadata object RemoteLogMetadataSerde builds from
    a record's JSON shape (``data``).

    :raises MetadataObjectError: where the object's constructor throws; its message is
        what Kafka's tool prints after ``skipping.``.
    """
    if api_key == 0:  # RemoteLogSegmentMetadataTransform.fromApiMessageAndVersion
        start, end = data["startOffset"], data["endOffset"]
        if start < 0:
            raise MetadataObjectError(f"Unexpected start offset = {start}. StartOffset for a "
                                      "remote segment cannot be negative")
        if end < start:
            raise MetadataObjectError(f"Unexpected end offset = {end}. EndOffset for a remote "
                                      f"segment cannot be less than startOffset = {start}")
        epochs = _leader_epochs(data["segmentLeaderEpochs"])
        state = _segment_state(data["remoteLogSegmentState"])
        return _to_string(
            "RemoteLogSegmentMetadata", remoteLogSegmentId=_segment_id(data["remoteLogSegmentId"]),
            startOffset=start, endOffset=end, brokerId=data["brokerId"],
            maxTimestampMs=data["maxTimestampMs"], eventTimestampMs=data["eventTimestampMs"],
            segmentLeaderEpochs=epochs, segmentSizeInBytes=data["segmentSizeInBytes"],
            customMetadata=_custom_metadata(data["customMetadata"]), state=state,
            txnIdxEmpty=_bool(data.get("txnIndexEmpty", False)))
    if api_key == 1:
        state = _segment_state(data["remoteLogSegmentState"])
        return _to_string(
            "RemoteLogSegmentMetadataUpdate",
            remoteLogSegmentId=_segment_id(data["remoteLogSegmentId"]),
            customMetadata=_custom_metadata(data["customMetadata"]), state=state,
            eventTimestampMs=data["eventTimestampMs"], brokerId=data["brokerId"])
    if api_key == 2:
        state = rmm.PARTITION_DELETE_STATES.get(data["remotePartitionDeleteState"])
        if state is None:  # Objects.requireNonNull(state): no message
            raise MetadataObjectError("null")
        return _to_string(
            "RemotePartitionDeleteMetadata",
            topicPartition=_topic_id_partition(data["topicIdPartition"]), state=state,
            eventTimestampMs=data["eventTimestampMs"], brokerId=data["brokerId"])
    # 3: RemoteLogSegmentMetadataSnapshot
    state = _segment_state(data["remoteLogSegmentState"])
    epochs = _leader_epochs(data["segmentLeaderEpochs"])
    return _to_string(
        "RemoteLogSegmentMetadataSnapshot", segmentId=data["segmentId"],
        startOffset=data["startOffset"], endOffset=data["endOffset"],
        maxTimestampMs=data["maxTimestampMs"], segmentLeaderEpochs=epochs,
        segmentSizeInBytes=data["segmentSizeInBytes"],
        customMetadata=_custom_metadata(data["customMetadata"]), state=state,
        txnIdxEmpty=_bool(data.get("txnIndexEmpty", False)))

class RemoteLogMetadataDecoder(FramedMetadataDecoder):
    """Decodes ``__remote_log_metadata`` values (RemoteLogMetadataSerde,
    RemoteMetadataLogMessageParser: ``Error at offset X, skipping.``). Never raises."""

    topic = "__remote_log_metadata"
    by_api_key = rmm.BY_API_KEY
    at_offset = True

    def _null_value(self, key, warnings: list[str]) -> DecodedRecord:
        warnings.append("remote log metadata record without a value")
        return DecodedRecord(None, None, None, warnings, tombstone=True, keyless=True,
                             failure=self._failure(NULL_VALUE_MESSAGE))

    def _text(self, record: DecodedRecord, message, data: dict) -> None:
        try:
            record.text = metadata_text(message.api_key, data)
        except MetadataObjectError as e:
            record.warnings.append(f"Kafka's RemoteLogMetadataSerde refuses this "
                                   f"{message.name}: {e}")
            record.failure = self._failure(str(e))
