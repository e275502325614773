"""The APIs ``kafkalog serve`` answers, with the versions it advertises in ApiVersions.

Header versions follow ``ApiKeys.requestHeaderVersion`` / ``responseHeaderVersion``: a
flexible request version uses request header v2 (else v1) and its response header v1
(else v0), except ApiVersions, whose response header is always v0 (a client must read it
before it knows which versions the broker speaks).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from ..schema.messages import Message
from .messages import admin, connection, groups, log, security, txn


class ApiKeys(IntEnum):
    """The API keys of the served APIs (``org.apache.kafka.common.protocol.ApiKeys``)."""

    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    DESCRIBE_LOG_DIRS = 35
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    DELETE_GROUPS = 42
    INCREMENTAL_ALTER_CONFIGS = 44
    LIST_PARTITION_REASSIGNMENTS = 46
    OFFSET_DELETE = 47
    DESCRIBE_CLIENT_QUOTAS = 48
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    DESCRIBE_CLUSTER = 60
    DESCRIBE_PRODUCERS = 61
    DESCRIBE_TRANSACTIONS = 65
    LIST_TRANSACTIONS = 66
    DESCRIBE_TOPIC_PARTITIONS = 75


@dataclass(frozen=True)
class Api:
    """One served API: its key, request/response declarations and served versions."""

    key: ApiKeys
    request: Message
    response: Message
    min_version: int
    max_version: int

    def serves(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version

    def is_flexible(self, version: int) -> bool:
        return version in self.request.flexible

    def request_header_version(self, version: int) -> int:
        return 2 if self.is_flexible(version) else 1

    def response_header_version(self, version: int) -> int:
        if self.key == ApiKeys.API_VERSIONS:
            return 0
        return 1 if self.is_flexible(version) else 0


#: Served APIs by key, with the versions advertised (see docs/serve.md for the reasons).
APIS: dict[int, Api] = {a.key: a for a in (
    Api(ApiKeys.PRODUCE, log.ProduceRequest, log.ProduceResponse, 3, 13),
    Api(ApiKeys.FETCH, log.FetchRequest, log.FetchResponse, 4, 18),
    Api(ApiKeys.LIST_OFFSETS, log.ListOffsetsRequest, log.ListOffsetsResponse, 1, 11),
    Api(ApiKeys.METADATA, admin.MetadataRequest, admin.MetadataResponse, 0, 13),
    Api(ApiKeys.OFFSET_COMMIT, groups.OffsetCommitRequest, groups.OffsetCommitResponse, 2, 8),
    Api(ApiKeys.OFFSET_FETCH, groups.OffsetFetchRequest, groups.OffsetFetchResponse, 1, 8),
    Api(ApiKeys.FIND_COORDINATOR, groups.FindCoordinatorRequest,
        groups.FindCoordinatorResponse, 0, 6),
    Api(ApiKeys.JOIN_GROUP, groups.JoinGroupRequest, groups.JoinGroupResponse, 0, 9),
    Api(ApiKeys.HEARTBEAT, groups.HeartbeatRequest, groups.HeartbeatResponse, 0, 4),
    Api(ApiKeys.LEAVE_GROUP, groups.LeaveGroupRequest, groups.LeaveGroupResponse, 0, 5),
    Api(ApiKeys.SYNC_GROUP, groups.SyncGroupRequest, groups.SyncGroupResponse, 0, 5),
    Api(ApiKeys.API_VERSIONS, connection.ApiVersionsRequest, connection.ApiVersionsResponse, 0, 5),
    Api(ApiKeys.CREATE_TOPICS, admin.CreateTopicsRequest, admin.CreateTopicsResponse, 2, 7),
    Api(ApiKeys.DELETE_TOPICS, admin.DeleteTopicsRequest, admin.DeleteTopicsResponse, 1, 6),
    Api(ApiKeys.INIT_PRODUCER_ID, txn.InitProducerIdRequest, txn.InitProducerIdResponse, 0, 4),
    Api(ApiKeys.DESCRIBE_CONFIGS, admin.DescribeConfigsRequest,
        admin.DescribeConfigsResponse, 1, 4),
    Api(ApiKeys.DESCRIBE_GROUPS, groups.DescribeGroupsRequest,
        groups.DescribeGroupsResponse, 0, 6),
    Api(ApiKeys.LIST_GROUPS, groups.ListGroupsRequest, groups.ListGroupsResponse, 0, 5),
    Api(ApiKeys.DELETE_RECORDS, log.DeleteRecordsRequest, log.DeleteRecordsResponse, 0, 2),
    Api(ApiKeys.ALTER_CONFIGS, admin.AlterConfigsRequest, admin.AlterConfigsResponse, 0, 2),
    Api(ApiKeys.DESCRIBE_LOG_DIRS, admin.DescribeLogDirsRequest,
        admin.DescribeLogDirsResponse, 1, 5),
    Api(ApiKeys.CREATE_PARTITIONS, admin.CreatePartitionsRequest, admin.CreatePartitionsResponse,
        0, 3),
    Api(ApiKeys.DELETE_GROUPS, groups.DeleteGroupsRequest, groups.DeleteGroupsResponse, 0, 3),
    Api(ApiKeys.INCREMENTAL_ALTER_CONFIGS, admin.IncrementalAlterConfigsRequest,
        admin.IncrementalAlterConfigsResponse, 0, 1),
    Api(ApiKeys.OFFSET_DELETE, groups.OffsetDeleteRequest, groups.OffsetDeleteResponse, 0, 0),
    Api(ApiKeys.DESCRIBE_CLUSTER, admin.DescribeClusterRequest,
        admin.DescribeClusterResponse, 0, 2),
    # transactions of the classic protocol (TV1): AddPartitionsToTxn v4+ is the brokers'
    # batched verification, EndTxn v5 / TxnOffsetCommit v5 the KIP-890 (TV2) clients',
    # which a client uses only when the broker finalises the transaction.version feature
    Api(ApiKeys.ADD_PARTITIONS_TO_TXN, txn.AddPartitionsToTxnRequest,
        txn.AddPartitionsToTxnResponse, 0, 3),
    Api(ApiKeys.ADD_OFFSETS_TO_TXN, txn.AddOffsetsToTxnRequest, txn.AddOffsetsToTxnResponse, 0, 4),
    Api(ApiKeys.END_TXN, txn.EndTxnRequest, txn.EndTxnResponse, 0, 4),
    Api(ApiKeys.TXN_OFFSET_COMMIT, txn.TxnOffsetCommitRequest, txn.TxnOffsetCommitResponse, 0, 4),
    Api(ApiKeys.DESCRIBE_TRANSACTIONS, txn.DescribeTransactionsRequest,
        txn.DescribeTransactionsResponse, 0, 0),
    Api(ApiKeys.LIST_TRANSACTIONS, txn.ListTransactionsRequest,
        txn.ListTransactionsResponse, 0, 2),
    Api(ApiKeys.OFFSET_FOR_LEADER_EPOCH, log.OffsetForLeaderEpochRequest,
        log.OffsetForLeaderEpochResponse, 2, 4),
    Api(ApiKeys.LIST_PARTITION_REASSIGNMENTS, admin.ListPartitionReassignmentsRequest,
        admin.ListPartitionReassignmentsResponse, 0, 0),
    Api(ApiKeys.DESCRIBE_CLIENT_QUOTAS, admin.DescribeClientQuotasRequest,
        admin.DescribeClientQuotasResponse, 0, 1),
    Api(ApiKeys.DESCRIBE_PRODUCERS, log.DescribeProducersRequest, log.DescribeProducersResponse,
        0, 0),
    Api(ApiKeys.DESCRIBE_TOPIC_PARTITIONS, admin.DescribeTopicPartitionsRequest,
        admin.DescribeTopicPartitionsResponse, 0, 0),
    # security (server/security/): advertised on every listener, as a broker does; on a
    # listener without SASL a SaslHandshake is answered ILLEGAL_SASL_STATE, and without an
    # authorizer the ACL APIs answer SECURITY_DISABLED. The ACL APIs' v0 went in Kafka 4.0.
    Api(ApiKeys.SASL_HANDSHAKE, security.SaslHandshakeRequest,
        security.SaslHandshakeResponse, 0, 1),
    Api(ApiKeys.SASL_AUTHENTICATE, security.SaslAuthenticateRequest,
        security.SaslAuthenticateResponse, 0, 2),
    Api(ApiKeys.DESCRIBE_ACLS, security.DescribeAclsRequest, security.DescribeAclsResponse, 1, 3),
    Api(ApiKeys.CREATE_ACLS, security.CreateAclsRequest, security.CreateAclsResponse, 1, 3),
    Api(ApiKeys.DELETE_ACLS, security.DeleteAclsRequest, security.DeleteAclsResponse, 1, 3),
    Api(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, security.DescribeUserScramCredentialsRequest,
        security.DescribeUserScramCredentialsResponse, 0, 0),
    Api(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, security.AlterUserScramCredentialsRequest,
        security.AlterUserScramCredentialsResponse, 0, 0),
)}


def api_versions_table() -> list[dict]:
    """The ``apiKeys`` array of an ApiVersions response."""
    return [{"apiKey": int(a.key), "minVersion": a.min_version, "maxVersion": a.max_version}
            for a in sorted(APIS.values(), key=lambda a: a.key)]
