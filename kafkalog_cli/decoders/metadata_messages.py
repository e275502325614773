"""Declarations of the KRaft metadata records (``metadata/src/main/resources/common/metadata``),
the values of ``__cluster_metadata`` records and of KRaft snapshot records.

Every value is framed by AbstractApiMessageSerde::

    MetadataRecord =>
      FrameVersion => UnsignedVarint   (1)
      ApiKey => UnsignedVarint         (MetadataRecordType id, the ``api_key`` below)
      Version => UnsignedVarint
      Data => the record at Version    (must end exactly at the value's end)

All metadata records are flexible from version 0. DumpLogSegments names a record by
``MetadataRecordType.toString``, the enum constant: the message name in upper snake case
(:func:`metadata_type_name`).
"""

from __future__ import annotations

from ..schema.messages import Message, fields, registry

RegisterBrokerRecord = Message(
    "RegisterBrokerRecord", valid="0-4", flexible="0+", api_key=0, kind="metadata", fields=fields("""
    brokerId               int32             0+
    isMigratingZkBroker    bool              2+  default=false
    incarnationId          uuid              0+
    brokerEpoch            int64             0+
    endPoints              []BrokerEndpoint  0+
      name                 string            0+
      host                 string            0+
      port                 uint16            0+
      securityProtocol     int16             0+
    features               []BrokerFeature   0+
      name                 string            0+
      minSupportedVersion  int16             0+
      maxSupportedVersion  int16             0+
    rack                   string            0+  nullable=0+
    fenced                 bool              0+  default=true
    inControlledShutdown   bool              1+  default=false
    logDirs                []uuid            3+  tagged=3+ tag=0
    cordonedLogDirs        []uuid            4+  nullable=4+ tagged=4+ tag=1 default=null
"""))

UnregisterBrokerRecord = Message(
    "UnregisterBrokerRecord", valid="0", flexible="0+", api_key=1, kind="metadata", fields=fields("""
    brokerId     int32  0+
    brokerEpoch  int64  0+
"""))

TopicRecord = Message(
    "TopicRecord", valid="0", flexible="0+", api_key=2, kind="metadata", fields=fields("""
    name     string  0+
    topicId  uuid    0+
"""))

PartitionRecord = Message(
    "PartitionRecord", valid="0-2", flexible="0+", api_key=3, kind="metadata", fields=fields("""
    partitionId             int32    0+  default=-1
    topicId                 uuid     0+
    replicas                []int32  0+
    isr                     []int32  0+
    removingReplicas        []int32  0+
    addingReplicas          []int32  0+
    leader                  int32    0+  default=-1
    leaderRecoveryState     int8     0+  tagged=0+ tag=0 default=0
    leaderEpoch             int32    0+  default=-1
    partitionEpoch          int32    0+  default=-1
    directories             []uuid   1+
    eligibleLeaderReplicas  []int32  2+  nullable=2+ tagged=2+ tag=1 default=null
    lastKnownElr            []int32  2+  nullable=2+ tagged=2+ tag=2 default=null
"""))

ConfigRecord = Message(
    "ConfigRecord", valid="0", flexible="0+", api_key=4, kind="metadata", fields=fields("""
    resourceType  int8    0+
    resourceName  string  0+
    name          string  0+
    value         string  0+  nullable=0+
"""))

PartitionChangeRecord = Message(
    "PartitionChangeRecord", valid="0-2", flexible="0+", api_key=5, kind="metadata", fields=fields("""
    partitionId             int32    0+  default=-1
    topicId                 uuid     0+
    isr                     []int32  0+  nullable=0+ tagged=0+ tag=0 default=null
    leader                  int32    0+  tagged=0+ tag=1 default=-2
    replicas                []int32  0+  nullable=0+ tagged=0+ tag=2 default=null
    removingReplicas        []int32  0+  nullable=0+ tagged=0+ tag=3 default=null
    addingReplicas          []int32  0+  nullable=0+ tagged=0+ tag=4 default=null
    leaderRecoveryState     int8     0+  tagged=0+ tag=5 default=-1
    directories             []uuid   1+  nullable=1+ tagged=1+ tag=8 default=null
    eligibleLeaderReplicas  []int32  2+  nullable=2+ tagged=2+ tag=6 default=null
    lastKnownElr            []int32  2+  nullable=2+ tagged=2+ tag=7 default=null
"""))

FenceBrokerRecord = Message(
    "FenceBrokerRecord", valid="0", flexible="0+", api_key=7, kind="metadata", fields=fields("""
    id     int32  0+
    epoch  int64  0+
"""))

UnfenceBrokerRecord = Message(
    "UnfenceBrokerRecord", valid="0", flexible="0+", api_key=8, kind="metadata", fields=fields("""
    id     int32  0+
    epoch  int64  0+
"""))

RemoveTopicRecord = Message(
    "RemoveTopicRecord", valid="0", flexible="0+", api_key=9, kind="metadata", fields=fields("""
    topicId  uuid  0+
"""))

DelegationTokenRecord = Message(
    "DelegationTokenRecord", valid="0", flexible="0+", api_key=10, kind="metadata", fields=fields("""
    owner                string    0+
    requester            string    0+
    renewers             []string  0+
    issueTimestamp       int64     0+
    maxTimestamp         int64     0+
    expirationTimestamp  int64     0+
    tokenId              string    0+
"""))

UserScramCredentialRecord = Message(
    "UserScramCredentialRecord", valid="0", flexible="0+", api_key=11, kind="metadata", fields=fields("""
    name        string  0+
    mechanism   int8    0+
    salt        bytes   0+
    storedKey   bytes   0+
    serverKey   bytes   0+
    iterations  int32   0+
"""))

FeatureLevelRecord = Message(
    "FeatureLevelRecord", valid="0", flexible="0+", api_key=12, kind="metadata", fields=fields("""
    name          string  0+
    featureLevel  int16   0+
"""))

ClientQuotaRecord = Message(
    "ClientQuotaRecord", valid="0", flexible="0+", api_key=14, kind="metadata", fields=fields("""
    entity        []EntityData  0+
      entityType  string        0+
      entityName  string        0+  nullable=0+
    key           string        0+
    value         float64       0+
    remove        bool          0+
"""))

ProducerIdsRecord = Message(
    "ProducerIdsRecord", valid="0", flexible="0+", api_key=15, kind="metadata", fields=fields("""
    brokerId        int32  0+
    brokerEpoch     int64  0+  default=-1
    nextProducerId  int64  0+
"""))

BrokerRegistrationChangeRecord = Message(
    "BrokerRegistrationChangeRecord", valid="0-3", flexible="0+", api_key=17, kind="metadata", fields=fields("""
    brokerId              int32   0+
    brokerEpoch           int64   0+
    fenced                int8    0+  tagged=0+ tag=0
    inControlledShutdown  int8    1+  tagged=1+ tag=1
    logDirs               []uuid  2+  tagged=2+ tag=2
    cordonedLogDirs       []uuid  3+  nullable=3+ tagged=3+ tag=3 default=null
"""))

AccessControlEntryRecord = Message(
    "AccessControlEntryRecord", valid="0", flexible="0+", api_key=18, kind="metadata", fields=fields("""
    id              uuid    0+
    resourceType    int8    0+
    resourceName    string  0+
    patternType     int8    0+
    principal       string  0+
    host            string  0+
    operation       int8    0+
    permissionType  int8    0+
"""))

RemoveAccessControlEntryRecord = Message(
    "RemoveAccessControlEntryRecord", valid="0", flexible="0+", api_key=19, kind="metadata", fields=fields("""
    id  uuid  0+
"""))

NoOpRecord = Message(
    "NoOpRecord", valid="0", flexible="0+", api_key=20, kind="metadata", fields=[
    ])

ZkMigrationStateRecord = Message(
    "ZkMigrationStateRecord", valid="0", flexible="0+", api_key=21, kind="metadata", fields=fields("""
    zkMigrationState  int8  0+
"""))

RemoveUserScramCredentialRecord = Message(
    "RemoveUserScramCredentialRecord", valid="0", flexible="0+", api_key=22, kind="metadata", fields=fields("""
    name       string  0+
    mechanism  int8    0+
"""))

BeginTransactionRecord = Message(
    "BeginTransactionRecord", valid="0", flexible="0+", api_key=23, kind="metadata", fields=fields("""
    name  string  0+  nullable=0+ tagged=0+ tag=0 default=null
"""))

EndTransactionRecord = Message(
    "EndTransactionRecord", valid="0", flexible="0+", api_key=24, kind="metadata", fields=[
    ])

AbortTransactionRecord = Message(
    "AbortTransactionRecord", valid="0", flexible="0+", api_key=25, kind="metadata", fields=fields("""
    reason  string  0+  nullable=0+ tagged=0+ tag=0 default=null
"""))

RemoveDelegationTokenRecord = Message(
    "RemoveDelegationTokenRecord", valid="0", flexible="0+", api_key=26, kind="metadata", fields=fields("""
    tokenId  string  0+
"""))

RegisterControllerRecord = Message(
    "RegisterControllerRecord", valid="0", flexible="0+", api_key=27, kind="metadata", fields=fields("""
    controllerId           int32                 0+
    incarnationId          uuid                  0+
    zkMigrationReady       bool                  0+
    endPoints              []ControllerEndpoint  0+
      name                 string                0+
      host                 string                0+
      port                 uint16                0+
      securityProtocol     int16                 0+
    features               []ControllerFeature   0+
      name                 string                0+
      minSupportedVersion  int16                 0+
      maxSupportedVersion  int16                 0+
"""))

ClearElrRecord = Message(
    "ClearElrRecord", valid="0", flexible="0+", api_key=28, kind="metadata", fields=fields("""
    topicName  string  0+
"""))

UnregisterControllerRecord = Message(
    "UnregisterControllerRecord", valid="0", flexible="0+", api_key=29, kind="metadata", fields=fields("""
    controllerId  int32  0+
"""))

MESSAGES = registry(
    RegisterBrokerRecord, UnregisterBrokerRecord, TopicRecord, PartitionRecord, ConfigRecord,
    PartitionChangeRecord, FenceBrokerRecord, UnfenceBrokerRecord, RemoveTopicRecord,
    DelegationTokenRecord, UserScramCredentialRecord, FeatureLevelRecord, ClientQuotaRecord,
    ProducerIdsRecord, BrokerRegistrationChangeRecord, AccessControlEntryRecord,
    RemoveAccessControlEntryRecord, NoOpRecord, ZkMigrationStateRecord,
    RemoveUserScramCredentialRecord, BeginTransactionRecord, EndTransactionRecord,
    AbortTransactionRecord, RemoveDelegationTokenRecord, RegisterControllerRecord,
    ClearElrRecord, UnregisterControllerRecord,
)

#: ``{api key: message}``.
BY_API_KEY: dict[int, Message] = {m.api_key: m for m in MESSAGES.values()}


def metadata_type_name(message_name: str) -> str:
    """MetadataRecordType's constant for a message name, as MessageGenerator.toSnakeCase
    upper-cased: ``"TopicRecord"`` -> ``"TOPIC_RECORD"``."""
    out = []
    prev_upper = True
    for ch in message_name:
        if ch.isupper():
            if not prev_upper:
                out.append("_")
            out.append(ch.lower())
            prev_upper = True
        else:
            out.append(ch)
            prev_upper = False
    return "".join(out).upper()
