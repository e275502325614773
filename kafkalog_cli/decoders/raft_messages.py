"""Declarations of the KRaft control-record values (Raft's generated messages in
``clients/.../common/message``), read from control batches of ``__cluster_metadata``
and of KRaft snapshots.

    ControlRecordType  value message          first field
    2 LEADER_CHANGE    LeaderChangeMessage    version => Int16
    3 SNAPSHOT_HEADER  SnapshotHeaderRecord   version => Int16
    4 SNAPSHOT_FOOTER  SnapshotFooterRecord   version => Int16
    5 KRAFT_VERSION    KRaftVersionRecord     version => Int16
    6 KRAFT_VOTERS     VotersRecord           version => Int16

All are flexible from version 0. Kafka's ControlRecordUtils reads each at its current
version; the value's own ``version`` field says which version wrote it.
"""

from __future__ import annotations

from ..schema.messages import Message, fields, registry

#: LeaderChangeMessage's common struct Voter.
_LEADER_CHANGE_VOTER = fields("""
    voterId           int32  0+
    voterDirectoryId  uuid   1+
""")

LeaderChangeMessage = Message("LeaderChangeMessage", valid="0-1", flexible="0+", fields=fields("""
    version         int16    0+
    leaderId        int32    0+
    voters          []Voter  0+
    grantingVoters  []Voter  0+
""", Voter=_LEADER_CHANGE_VOTER))

SnapshotHeaderRecord = Message("SnapshotHeaderRecord", valid="0", flexible="0+", fields=fields("""
    version                    int16  0+
    lastContainedLogTimestamp  int64  0+
"""))

SnapshotFooterRecord = Message("SnapshotFooterRecord", valid="0", flexible="0+", fields=fields("""
    version  int16  0+
"""))

KRaftVersionRecord = Message("KRaftVersionRecord", valid="0", flexible="0+", fields=fields("""
    version       int16  0+
    kRaftVersion  int16  0+
"""))

VotersRecord = Message("VotersRecord", valid="0", flexible="0+", fields=fields("""
    version                  int16                0+
    voters                   []Voter              0+
      voterId                int32                0+
      voterDirectoryId       uuid                 0+
      endpoints              []Endpoint           0+
        name                 string               0+
        host                 string               0+
        port                 uint16               0+
      kRaftVersionFeature    KRaftVersionFeature  0+
        minSupportedVersion  int16                0+
        maxSupportedVersion  int16                0+
"""))

MESSAGES = registry(LeaderChangeMessage, SnapshotHeaderRecord, SnapshotFooterRecord,
                    KRaftVersionRecord, VotersRecord)
