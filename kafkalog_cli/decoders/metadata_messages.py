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

from ..schema.messages import Field, Message, registry

RegisterBrokerRecord = Message(
    "RegisterBrokerRecord", valid="0-3", flexible="0+", api_key=0, kind="metadata", fields=[
        Field("brokerId", "int32", "0+"),
        Field("isMigratingZkBroker", "bool", "2+", default=False),
        Field("incarnationId", "uuid", "0+"),
        Field("brokerEpoch", "int64", "0+"),
        Field("endPoints", "[]BrokerEndpoint", "0+", fields=[
            Field("name", "string", "0+"),
            Field("host", "string", "0+"),
            Field("port", "uint16", "0+"),
            Field("securityProtocol", "int16", "0+"),
        ]),
        Field("features", "[]BrokerFeature", "0+", fields=[
            Field("name", "string", "0+"),
            Field("minSupportedVersion", "int16", "0+"),
            Field("maxSupportedVersion", "int16", "0+"),
        ]),
        Field("rack", "string", "0+", nullable="0+"),
        Field("fenced", "bool", "0+", default=True),
        Field("inControlledShutdown", "bool", "1+", default=False),
        Field("logDirs", "[]uuid", "3+", tagged="3+", tag=0),
    ])

UnregisterBrokerRecord = Message(
    "UnregisterBrokerRecord", valid="0", flexible="0+", api_key=1, kind="metadata", fields=[
        Field("brokerId", "int32", "0+"),
        Field("brokerEpoch", "int64", "0+"),
    ])

TopicRecord = Message(
    "TopicRecord", valid="0", flexible="0+", api_key=2, kind="metadata", fields=[
        Field("name", "string", "0+"),
        Field("topicId", "uuid", "0+"),
    ])

PartitionRecord = Message(
    "PartitionRecord", valid="0-2", flexible="0+", api_key=3, kind="metadata", fields=[
        Field("partitionId", "int32", "0+", default=-1),
        Field("topicId", "uuid", "0+"),
        Field("replicas", "[]int32", "0+"),
        Field("isr", "[]int32", "0+"),
        Field("removingReplicas", "[]int32", "0+"),
        Field("addingReplicas", "[]int32", "0+"),
        Field("leader", "int32", "0+", default=-1),
        Field("leaderRecoveryState", "int8", "0+", tagged="0+", tag=0, default=0),
        Field("leaderEpoch", "int32", "0+", default=-1),
        Field("partitionEpoch", "int32", "0+", default=-1),
        Field("directories", "[]uuid", "1+"),
        Field("eligibleLeaderReplicas", "[]int32", "2+",
              nullable="2+", tagged="2+", tag=1, default=None),
        Field("lastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=2, default=None),
    ])

ConfigRecord = Message(
    "ConfigRecord", valid="0", flexible="0+", api_key=4, kind="metadata", fields=[
        Field("resourceType", "int8", "0+"),
        Field("resourceName", "string", "0+"),
        Field("name", "string", "0+"),
        Field("value", "string", "0+", nullable="0+"),
    ])

PartitionChangeRecord = Message(
    "PartitionChangeRecord", valid="0-2", flexible="0+", api_key=5, kind="metadata", fields=[
        Field("partitionId", "int32", "0+", default=-1),
        Field("topicId", "uuid", "0+"),
        Field("isr", "[]int32", "0+", nullable="0+", tagged="0+", tag=0, default=None),
        Field("leader", "int32", "0+", tagged="0+", tag=1, default=-2),
        Field("replicas", "[]int32", "0+", nullable="0+", tagged="0+", tag=2, default=None),
        Field("removingReplicas", "[]int32", "0+", nullable="0+", tagged="0+", tag=3, default=None),
        Field("addingReplicas", "[]int32", "0+", nullable="0+", tagged="0+", tag=4, default=None),
        Field("leaderRecoveryState", "int8", "0+", tagged="0+", tag=5, default=-1),
        Field("directories", "[]uuid", "1+", nullable="1+", tagged="1+", tag=8, default=None),
        Field("eligibleLeaderReplicas", "[]int32", "2+",
              nullable="2+", tagged="2+", tag=6, default=None),
        Field("lastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=7, default=None),
    ])

FenceBrokerRecord = Message(
    "FenceBrokerRecord", valid="0", flexible="0+", api_key=7, kind="metadata", fields=[
        Field("id", "int32", "0+"),
        Field("epoch", "int64", "0+"),
    ])

UnfenceBrokerRecord = Message(
    "UnfenceBrokerRecord", valid="0", flexible="0+", api_key=8, kind="metadata", fields=[
        Field("id", "int32", "0+"),
        Field("epoch", "int64", "0+"),
    ])

RemoveTopicRecord = Message(
    "RemoveTopicRecord", valid="0", flexible="0+", api_key=9, kind="metadata", fields=[
        Field("topicId", "uuid", "0+"),
    ])

DelegationTokenRecord = Message(
    "DelegationTokenRecord", valid="0", flexible="0+", api_key=10, kind="metadata", fields=[
        Field("owner", "string", "0+"),
        Field("requester", "string", "0+"),
        Field("renewers", "[]string", "0+"),
        Field("issueTimestamp", "int64", "0+"),
        Field("maxTimestamp", "int64", "0+"),
        Field("expirationTimestamp", "int64", "0+"),
        Field("tokenId", "string", "0+"),
    ])

UserScramCredentialRecord = Message(
    "UserScramCredentialRecord", valid="0", flexible="0+", api_key=11, kind="metadata", fields=[
        Field("name", "string", "0+"),
        Field("mechanism", "int8", "0+"),
        Field("salt", "bytes", "0+"),
        Field("storedKey", "bytes", "0+"),
        Field("serverKey", "bytes", "0+"),
        Field("iterations", "int32", "0+"),
    ])

FeatureLevelRecord = Message(
    "FeatureLevelRecord", valid="0", flexible="0+", api_key=12, kind="metadata", fields=[
        Field("name", "string", "0+"),
        Field("featureLevel", "int16", "0+"),
    ])

ClientQuotaRecord = Message(
    "ClientQuotaRecord", valid="0", flexible="0+", api_key=14, kind="metadata", fields=[
        Field("entity", "[]EntityData", "0+", fields=[
            Field("entityType", "string", "0+"),
            Field("entityName", "string", "0+", nullable="0+"),
        ]),
        Field("key", "string", "0+"),
        Field("value", "float64", "0+"),
        Field("remove", "bool", "0+"),
    ])

ProducerIdsRecord = Message(
    "ProducerIdsRecord", valid="0", flexible="0+", api_key=15, kind="metadata", fields=[
        Field("brokerId", "int32", "0+"),
        Field("brokerEpoch", "int64", "0+", default=-1),
        Field("nextProducerId", "int64", "0+"),
    ])

BrokerRegistrationChangeRecord = Message(
    "BrokerRegistrationChangeRecord", valid="0-2", flexible="0+", api_key=17, kind="metadata", fields=[
        Field("brokerId", "int32", "0+"),
        Field("brokerEpoch", "int64", "0+"),
        Field("fenced", "int8", "0+", tagged="0+", tag=0),
        Field("inControlledShutdown", "int8", "1+", tagged="1+", tag=1),
        Field("logDirs", "[]uuid", "2+", tagged="2+", tag=2),
    ])

AccessControlEntryRecord = Message(
    "AccessControlEntryRecord", valid="0", flexible="0+", api_key=18, kind="metadata", fields=[
        Field("id", "uuid", "0+"),
        Field("resourceType", "int8", "0+"),
        Field("resourceName", "string", "0+"),
        Field("patternType", "int8", "0+"),
        Field("principal", "string", "0+"),
        Field("host", "string", "0+"),
        Field("operation", "int8", "0+"),
        Field("permissionType", "int8", "0+"),
    ])

RemoveAccessControlEntryRecord = Message(
    "RemoveAccessControlEntryRecord", valid="0", flexible="0+", api_key=19, kind="metadata", fields=[
        Field("id", "uuid", "0+"),
    ])

NoOpRecord = Message(
    "NoOpRecord", valid="0", flexible="0+", api_key=20, kind="metadata", fields=[
    ])

ZkMigrationStateRecord = Message(
    "ZkMigrationStateRecord", valid="0", flexible="0+", api_key=21, kind="metadata", fields=[
        Field("zkMigrationState", "int8", "0+"),
    ])

RemoveUserScramCredentialRecord = Message(
    "RemoveUserScramCredentialRecord", valid="0", flexible="0+", api_key=22, kind="metadata", fields=[
        Field("name", "string", "0+"),
        Field("mechanism", "int8", "0+"),
    ])

BeginTransactionRecord = Message(
    "BeginTransactionRecord", valid="0", flexible="0+", api_key=23, kind="metadata", fields=[
        Field("name", "string", "0+", nullable="0+", tagged="0+", tag=0, default=None),
    ])

EndTransactionRecord = Message(
    "EndTransactionRecord", valid="0", flexible="0+", api_key=24, kind="metadata", fields=[
    ])

AbortTransactionRecord = Message(
    "AbortTransactionRecord", valid="0", flexible="0+", api_key=25, kind="metadata", fields=[
        Field("reason", "string", "0+", nullable="0+", tagged="0+", tag=0, default=None),
    ])

RemoveDelegationTokenRecord = Message(
    "RemoveDelegationTokenRecord", valid="0", flexible="0+", api_key=26, kind="metadata", fields=[
        Field("tokenId", "string", "0+"),
    ])

RegisterControllerRecord = Message(
    "RegisterControllerRecord", valid="0", flexible="0+", api_key=27, kind="metadata", fields=[
        Field("controllerId", "int32", "0+"),
        Field("incarnationId", "uuid", "0+"),
        Field("zkMigrationReady", "bool", "0+"),
        Field("endPoints", "[]ControllerEndpoint", "0+", fields=[
            Field("name", "string", "0+"),
            Field("host", "string", "0+"),
            Field("port", "uint16", "0+"),
            Field("securityProtocol", "int16", "0+"),
        ]),
        Field("features", "[]ControllerFeature", "0+", fields=[
            Field("name", "string", "0+"),
            Field("minSupportedVersion", "int16", "0+"),
            Field("maxSupportedVersion", "int16", "0+"),
        ]),
    ])

ClearElrRecord = Message(
    "ClearElrRecord", valid="0", flexible="0+", api_key=28, kind="metadata", fields=[
        Field("topicName", "string", "0+"),
    ])

UnregisterControllerRecord = Message(
    "UnregisterControllerRecord", valid="0", flexible="0+", api_key=29, kind="metadata", fields=[
        Field("controllerId", "int32", "0+"),
    ])

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
