"""Declarations of the ``__remote_log_metadata`` records (``storage/src/main/resources/
message``): what TopicBasedRemoteLogMetadataManager writes about tiered segments
(KIP-405).

Every value is framed as a KRaft metadata record (BytesApiMessageSerde over
AbstractApiMessageSerde; keys are null)::

    RemoteLogMetadata =>
      FrameVersion => UnsignedVarint   (1)
      ApiKey => UnsignedVarint         (the remote MetadataRecordType id below)
      Version => UnsignedVarint
      Data => the record at Version    (must end exactly at the value's end)

    api key  record                                   RemoteLogMetadataSerde turns it into
    0        RemoteLogSegmentMetadataRecord           RemoteLogSegmentMetadata
    1        RemoteLogSegmentMetadataUpdateRecord     RemoteLogSegmentMetadataUpdate
    2        RemotePartitionDeleteMetadataRecord      RemotePartitionDeleteMetadata
    3        RemoteLogSegmentMetadataSnapshotRecord   RemoteLogSegmentMetadataSnapshot

The states are RemoteLogSegmentState (0 COPY_SEGMENT_STARTED, 1 COPY_SEGMENT_FINISHED,
2 DELETE_SEGMENT_STARTED, 3 DELETE_SEGMENT_FINISHED) and RemotePartitionDeleteState
(0 DELETE_PARTITION_MARKED, 1 DELETE_PARTITION_STARTED, 2 DELETE_PARTITION_FINISHED).
"""

from __future__ import annotations

from ..schema.messages import Field, Message, fields, registry

_TOPIC_ID_PARTITION = fields("""
    name       string  0+
    id         uuid    0+
    partition  int32   0+
""")

_REMOTE_LOG_SEGMENT_ID = fields("""
    topicIdPartition  TopicIdPartitionEntry  0+
    id                uuid                   0+
""", TopicIdPartitionEntry=_TOPIC_ID_PARTITION)

#: the fields RemoteLogSegmentMetadataRecord and its snapshot form
#: (RemoteLogSegmentMetadataSnapshotRecord) both carry after the segment's id
_SEGMENT_METADATA = fields("""
    startOffset              int64                      0+
    endOffset                int64                      0+
    brokerId                 int32                      0+
    maxTimestampMs           int64                      0+
    eventTimestampMs         int64                      0+
    segmentLeaderEpochs      []SegmentLeaderEpochEntry  0+
      leaderEpoch            int32                      0+
      offset                 int64                      0+
    segmentSizeInBytes       int32                      0+
    customMetadata           bytes                      0+  nullable=0+ default=null
    remoteLogSegmentState    int8                       0+
    txnIndexEmpty            bool                       0+  tagged=0+ tag=0
""")


def _record(name: str, api_key: int, fields, valid: str = "0") -> Message:
    """A remote metadata record: flexible from version 0, ``api_key`` its remote
    MetadataRecordType id."""
    return Message(name, valid=valid, flexible="0+", api_key=api_key, kind="metadata",
                   fields=fields)


RemoteLogSegmentMetadataRecord = _record("RemoteLogSegmentMetadataRecord", 0, fields=[
    Field("remoteLogSegmentId", "RemoteLogSegmentIdEntry", "0+", fields=_REMOTE_LOG_SEGMENT_ID),
    *_SEGMENT_METADATA,
])

RemoteLogSegmentMetadataUpdateRecord = _record("RemoteLogSegmentMetadataUpdateRecord", 1, fields("""
    remoteLogSegmentId     RemoteLogSegmentIdEntry  0+
    brokerId               int32                    0+
    eventTimestampMs       int64                    0+
    customMetadata         bytes                    0+  nullable=0+ default=null
    remoteLogSegmentState  int8                     0+
""", RemoteLogSegmentIdEntry=_REMOTE_LOG_SEGMENT_ID))

RemotePartitionDeleteMetadataRecord = _record("RemotePartitionDeleteMetadataRecord", 2, fields("""
    topicIdPartition            TopicIdPartitionEntry  0+
    brokerId                    int32                  0+
    eventTimestampMs            int64                  0+
    remotePartitionDeleteState  int8                   0+
""", TopicIdPartitionEntry=_TOPIC_ID_PARTITION))

RemoteLogSegmentMetadataSnapshotRecord = _record("RemoteLogSegmentMetadataSnapshotRecord", 3, [
    Field("segmentId", "uuid", "0+"),
    *_SEGMENT_METADATA,
])

MESSAGES = registry(RemoteLogSegmentMetadataRecord, RemoteLogSegmentMetadataUpdateRecord,
                    RemotePartitionDeleteMetadataRecord, RemoteLogSegmentMetadataSnapshotRecord)

#: ``{api key: message}`` (the remote MetadataRecordType).
BY_API_KEY: dict[int, Message] = {m.api_key: m for m in MESSAGES.values()}

#: RemoteLogSegmentState ids and names.
SEGMENT_STATES = {0: "COPY_SEGMENT_STARTED", 1: "COPY_SEGMENT_FINISHED",
                  2: "DELETE_SEGMENT_STARTED", 3: "DELETE_SEGMENT_FINISHED"}

#: RemotePartitionDeleteState ids and names.
PARTITION_DELETE_STATES = {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED",
                           2: "DELETE_PARTITION_FINISHED"}
