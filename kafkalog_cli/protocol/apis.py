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
from . import schemas as s


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
    OFFSET_DELETE = 47
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    DESCRIBE_CLUSTER = 60
    DESCRIBE_TRANSACTIONS = 65
    LIST_TRANSACTIONS = 66


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
    Api(ApiKeys.PRODUCE, s.ProduceRequest, s.ProduceResponse, 3, 11),
    Api(ApiKeys.FETCH, s.FetchRequest, s.FetchResponse, 4, 16),
    Api(ApiKeys.LIST_OFFSETS, s.ListOffsetsRequest, s.ListOffsetsResponse, 1, 9),
    Api(ApiKeys.METADATA, s.MetadataRequest, s.MetadataResponse, 0, 12),
    Api(ApiKeys.OFFSET_COMMIT, s.OffsetCommitRequest, s.OffsetCommitResponse, 0, 8),
    Api(ApiKeys.OFFSET_FETCH, s.OffsetFetchRequest, s.OffsetFetchResponse, 1, 8),
    Api(ApiKeys.FIND_COORDINATOR, s.FindCoordinatorRequest, s.FindCoordinatorResponse, 0, 4),
    Api(ApiKeys.JOIN_GROUP, s.JoinGroupRequest, s.JoinGroupResponse, 0, 9),
    Api(ApiKeys.HEARTBEAT, s.HeartbeatRequest, s.HeartbeatResponse, 0, 4),
    Api(ApiKeys.LEAVE_GROUP, s.LeaveGroupRequest, s.LeaveGroupResponse, 0, 5),
    Api(ApiKeys.SYNC_GROUP, s.SyncGroupRequest, s.SyncGroupResponse, 0, 5),
    Api(ApiKeys.API_VERSIONS, s.ApiVersionsRequest, s.ApiVersionsResponse, 0, 4),
    Api(ApiKeys.CREATE_TOPICS, s.CreateTopicsRequest, s.CreateTopicsResponse, 2, 7),
    Api(ApiKeys.DELETE_TOPICS, s.DeleteTopicsRequest, s.DeleteTopicsResponse, 1, 6),
    Api(ApiKeys.INIT_PRODUCER_ID, s.InitProducerIdRequest, s.InitProducerIdResponse, 0, 4),
    Api(ApiKeys.DESCRIBE_CONFIGS, s.DescribeConfigsRequest, s.DescribeConfigsResponse, 0, 4),
    Api(ApiKeys.DESCRIBE_GROUPS, s.DescribeGroupsRequest, s.DescribeGroupsResponse, 0, 5),
    Api(ApiKeys.LIST_GROUPS, s.ListGroupsRequest, s.ListGroupsResponse, 0, 5),
    Api(ApiKeys.DELETE_RECORDS, s.DeleteRecordsRequest, s.DeleteRecordsResponse, 0, 2),
    Api(ApiKeys.ALTER_CONFIGS, s.AlterConfigsRequest, s.AlterConfigsResponse, 0, 2),
    Api(ApiKeys.DESCRIBE_LOG_DIRS, s.DescribeLogDirsRequest, s.DescribeLogDirsResponse, 0, 4),
    Api(ApiKeys.CREATE_PARTITIONS, s.CreatePartitionsRequest, s.CreatePartitionsResponse,
        0, 3),
    Api(ApiKeys.DELETE_GROUPS, s.DeleteGroupsRequest, s.DeleteGroupsResponse, 0, 2),
    Api(ApiKeys.INCREMENTAL_ALTER_CONFIGS, s.IncrementalAlterConfigsRequest,
        s.IncrementalAlterConfigsResponse, 0, 1),
    Api(ApiKeys.OFFSET_DELETE, s.OffsetDeleteRequest, s.OffsetDeleteResponse, 0, 0),
    Api(ApiKeys.DESCRIBE_CLUSTER, s.DescribeClusterRequest, s.DescribeClusterResponse, 0, 1),
    # transactions of the classic protocol (TV1): AddPartitionsToTxn v4+ is the brokers'
    # batched verification, EndTxn v5 / TxnOffsetCommit v5 the KIP-890 (TV2) clients',
    # which a client uses only when the broker finalises the transaction.version feature
    Api(ApiKeys.ADD_PARTITIONS_TO_TXN, s.AddPartitionsToTxnRequest,
        s.AddPartitionsToTxnResponse, 0, 3),
    Api(ApiKeys.ADD_OFFSETS_TO_TXN, s.AddOffsetsToTxnRequest, s.AddOffsetsToTxnResponse, 0, 4),
    Api(ApiKeys.END_TXN, s.EndTxnRequest, s.EndTxnResponse, 0, 4),
    Api(ApiKeys.TXN_OFFSET_COMMIT, s.TxnOffsetCommitRequest, s.TxnOffsetCommitResponse, 0, 4),
    Api(ApiKeys.DESCRIBE_TRANSACTIONS, s.DescribeTransactionsRequest,
        s.DescribeTransactionsResponse, 0, 0),
    Api(ApiKeys.LIST_TRANSACTIONS, s.ListTransactionsRequest, s.ListTransactionsResponse, 0, 1),
    # security (server/security/): advertised on every listener, as a broker does; on a
    # listener without SASL a SaslHandshake is answered ILLEGAL_SASL_STATE, and without an
    # authorizer the ACL APIs answer SECURITY_DISABLED. The ACL APIs' v0 went in Kafka 4.0.
    Api(ApiKeys.SASL_HANDSHAKE, s.SaslHandshakeRequest, s.SaslHandshakeResponse, 0, 1),
    Api(ApiKeys.SASL_AUTHENTICATE, s.SaslAuthenticateRequest, s.SaslAuthenticateResponse,
        0, 2),
    Api(ApiKeys.DESCRIBE_ACLS, s.DescribeAclsRequest, s.DescribeAclsResponse, 1, 3),
    Api(ApiKeys.CREATE_ACLS, s.CreateAclsRequest, s.CreateAclsResponse, 1, 3),
    Api(ApiKeys.DELETE_ACLS, s.DeleteAclsRequest, s.DeleteAclsResponse, 1, 3),
    Api(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, s.DescribeUserScramCredentialsRequest,
        s.DescribeUserScramCredentialsResponse, 0, 0),
    Api(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, s.AlterUserScramCredentialsRequest,
        s.AlterUserScramCredentialsResponse, 0, 0),
)}


def api_versions_table() -> list[dict]:
    """The ``apiKeys`` array of an ApiVersions response."""
    return [{"apiKey": int(a.key), "minVersion": a.min_version, "maxVersion": a.max_version}
            for a in sorted(APIS.values(), key=lambda a: a.key)]
