"""The consumer groups' requests (Kafka's ``GroupCoordinator`` behind ``KafkaApis``):
FindCoordinator, JoinGroup, Heartbeat, LeaveGroup, SyncGroup, OffsetCommit, OffsetFetch,
ListGroups, DescribeGroups, DeleteGroups and OffsetDelete - Kafka's generated
``FindCoordinatorRequestData``, ``JoinGroupRequestData``, ``OffsetCommitRequestData``, ...
and their responses.

Declared with the DSL of :mod:`kafkalog_cli.schema.messages` as
:mod:`kafkalog_cli.protocol.messages` says.
"""

from __future__ import annotations

from ...schema.messages import Message, fields

# -- FindCoordinator (key 10) -----------------------------------------------------------------

FindCoordinatorRequest = Message("FindCoordinatorRequest", valid="0-6", flexible="3+", fields=fields("""
    key              string    0-3
    keyType          int8      1+   default=0
    coordinatorKeys  []string  4+
"""))

FindCoordinatorResponse = Message("FindCoordinatorResponse", valid="0-6", flexible="3+",
                                  fields=fields("""
    throttleTimeMs  int32          1+
    errorCode       int16          0-3
    errorMessage    string         1-3  nullable=1-3 default=null
    nodeId          int32          0-3
    host            string         0-3
    port            int32          0-3
    coordinators    []Coordinator  4+
      key           string         4+
      nodeId        int32          4+
      host          string         4+
      port          int32          4+
      errorCode     int16          4+
      errorMessage  string         4+   nullable=4+ default=null
"""))

# -- JoinGroup (key 11) -----------------------------------------------------------------------

JoinGroupRequest = Message("JoinGroupRequest", valid="0-9", flexible="6+", fields=fields("""
    groupId             string                      0+
    sessionTimeoutMs    int32                       0+
    rebalanceTimeoutMs  int32                       1+  default=-1
    memberId            string                      0+
    groupInstanceId     string                      5+  nullable=5+ default=null
    protocolType        string                      0+
    protocols           []JoinGroupRequestProtocol  0+
      name              string                      0+
      metadata          bytes                       0+
    reason              string                      8+  nullable=8+ default=null
"""))

JoinGroupResponse = Message("JoinGroupResponse", valid="0-9", flexible="6+", fields=fields("""
    throttleTimeMs     int32                      2+
    errorCode          int16                      0+
    generationId       int32                      0+  default=-1
    protocolType       string                     7+  nullable=7+ default=null
    protocolName       string                     0+  nullable=7+
    leader             string                     0+
    skipAssignment     bool                       9+  default=false
    memberId           string                     0+
    members            []JoinGroupResponseMember  0+
      memberId         string                     0+
      groupInstanceId  string                     5+  nullable=5+ default=null
      metadata         bytes                      0+
"""))

# -- Heartbeat (key 12) -----------------------------------------------------------------------

HeartbeatRequest = Message("HeartbeatRequest", valid="0-4", flexible="4+", fields=fields("""
    groupId          string  0+
    generationId     int32   0+
    memberId         string  0+
    groupInstanceId  string  3+  nullable=3+ default=null
"""))

HeartbeatResponse = Message("HeartbeatResponse", valid="0-4", flexible="4+", fields=fields("""
    throttleTimeMs  int32  1+
    errorCode       int16  0+
"""))

# -- LeaveGroup (key 13) ----------------------------------------------------------------------

LeaveGroupRequest = Message("LeaveGroupRequest", valid="0-5", flexible="4+", fields=fields("""
    groupId            string            0+
    memberId           string            0-2
    members            []MemberIdentity  3+
      memberId         string            3+
      groupInstanceId  string            3+   nullable=3+ default=null
      reason           string            5+   nullable=5+ default=null
"""))

LeaveGroupResponse = Message("LeaveGroupResponse", valid="0-5", flexible="4+", fields=fields("""
    throttleTimeMs     int32             1+
    errorCode          int16             0+
    members            []MemberResponse  3+
      memberId         string            3+
      groupInstanceId  string            3+  nullable=3+
      errorCode        int16             3+
"""))

# -- SyncGroup (key 14) -----------------------------------------------------------------------

SyncGroupRequest = Message("SyncGroupRequest", valid="0-5", flexible="4+", fields=fields("""
    groupId          string                        0+
    generationId     int32                         0+
    memberId         string                        0+
    groupInstanceId  string                        3+  nullable=3+ default=null
    protocolType     string                        5+  nullable=5+ default=null
    protocolName     string                        5+  nullable=5+ default=null
    assignments      []SyncGroupRequestAssignment  0+
      memberId       string                        0+
      assignment     bytes                         0+
"""))

SyncGroupResponse = Message("SyncGroupResponse", valid="0-5", flexible="4+", fields=fields("""
    throttleTimeMs  int32   1+
    errorCode       int16   0+
    protocolType    string  5+  nullable=5+ default=null
    protocolName    string  5+  nullable=5+ default=null
    assignment      bytes   0+
"""))

# -- OffsetCommit (key 8) ---------------------------------------------------------------------

OffsetCommitRequest = Message("OffsetCommitRequest", valid="0-9", flexible="8+", fields=fields("""
    groupId                    string                          0+
    generationIdOrMemberEpoch  int32                           1+   default=-1
    memberId                   string                          1+
    groupInstanceId            string                          7+   nullable=7+ default=null
    retentionTimeMs            int64                           2-4  default=-1
    topics                     []OffsetCommitRequestTopic      0+
      name                     string                          0+
      partitions               []OffsetCommitRequestPartition  0+
        partitionIndex         int32                           0+
        committedOffset        int64                           0+
        committedLeaderEpoch   int32                           6+   default=-1
        commitTimestamp        int64                           1    default=-1
        committedMetadata      string                          0+   nullable=0+
"""))

OffsetCommitResponse = Message("OffsetCommitResponse", valid="0-9", flexible="8+", fields=fields("""
    throttleTimeMs      int32                            3+
    topics              []OffsetCommitResponseTopic      0+
      name              string                           0+
      partitions        []OffsetCommitResponsePartition  0+
        partitionIndex  int32                            0+
        errorCode       int16                            0+
"""))

# -- OffsetFetch (key 9) ----------------------------------------------------------------------

OffsetFetchRequest = Message("OffsetFetchRequest", valid="0-9", flexible="6+", fields=fields("""
    groupId               string                      0-7
    topics                []OffsetFetchRequestTopic   0-7  nullable=2-7
      name                string                      0-7
      partitionIndexes    []int32                     0-7
    groups                []OffsetFetchRequestGroup   8+
      groupId             string                      8+
      memberId            string                      9+   nullable=9+ default=null
      memberEpoch         int32                       9+   default=-1
      topics              []OffsetFetchRequestTopics  8+   nullable=8+
        name              string                      8+
        partitionIndexes  []int32                     8+
    requireStable         bool                        7+   default=false
"""))

_OFFSET_FETCH_PARTITION = fields("""
    partitionIndex        int32   0+
    committedOffset       int64   0+
    committedLeaderEpoch  int32   5+  default=-1
    metadata              string  0+  nullable=0+
    errorCode             int16   0+
""")

OffsetFetchResponse = Message("OffsetFetchResponse", valid="0-9", flexible="6+", fields=fields("""
    throttleTimeMs  int32                            3+
    topics          []OffsetFetchResponseTopic       0-7
      name          string                           0-7
      partitions    []OffsetFetchResponsePartition   0-7
    errorCode       int16                            2-7  default=0
    groups          []OffsetFetchResponseGroup       8+
      groupId       string                           8+
      topics        []OffsetFetchResponseTopics      8+
        name        string                           8+
        partitions  []OffsetFetchResponsePartitions  8+
      errorCode     int16                            8+   default=0
""", OffsetFetchResponsePartition=_OFFSET_FETCH_PARTITION, OffsetFetchResponsePartitions=_OFFSET_FETCH_PARTITION))

# -- ListGroups (key 16) ----------------------------------------------------------------------

ListGroupsRequest = Message("ListGroupsRequest", valid="0-5", flexible="3+", fields=fields("""
    statesFilter  []string  4+
    typesFilter   []string  5+
"""))

ListGroupsResponse = Message("ListGroupsResponse", valid="0-5", flexible="3+", fields=fields("""
    throttleTimeMs  int32          1+
    errorCode       int16          0+
    groups          []ListedGroup  0+
      groupId       string         0+
      protocolType  string         0+
      groupState    string         4+
      groupType     string         5+
"""))

# -- DescribeGroups (key 15) ------------------------------------------------------------------

DescribeGroupsRequest = Message("DescribeGroupsRequest", valid="0-6", flexible="5+", fields=fields("""
    groups                       []string  0+
    includeAuthorizedOperations  bool      3+
"""))

DescribeGroupsResponse = Message("DescribeGroupsResponse", valid="0-6", flexible="5+", fields=fields("""
    throttleTimeMs          int32                   1+
    groups                  []DescribedGroup        0+
      errorCode             int16                   0+
      errorMessage          string                  6+  nullable=6+ default=null
      groupId               string                  0+
      groupState            string                  0+
      protocolType          string                  0+
      protocolData          string                  0+
      members               []DescribedGroupMember  0+
        memberId            string                  0+
        groupInstanceId     string                  4+  nullable=4+ default=null
        clientId            string                  0+
        clientHost          string                  0+
        memberMetadata      bytes                   0+
        memberAssignment    bytes                   0+
      authorizedOperations  int32                   3+  default=-2147483648
"""))

# -- DeleteGroups (key 42) --------------------------------------------------------------------

DeleteGroupsRequest = Message("DeleteGroupsRequest", valid="0-3", flexible="2+", fields=fields("""
    groupsNames  []string  0+
"""))

DeleteGroupsResponse = Message("DeleteGroupsResponse", valid="0-3", flexible="2+", fields=fields("""
    throttleTimeMs  int32                   0+
    results         []DeletableGroupResult  0+
      groupId       string                  0+
      errorCode     int16                   0+
      errorMessage  string                  3+  nullable=3+ default=null
"""))

# -- OffsetDelete (key 47) --------------------------------------------------------------------

OffsetDeleteRequest = Message("OffsetDeleteRequest", valid="0", flexible="none", fields=fields("""
    groupId             string                          0+
    topics              []OffsetDeleteRequestTopic      0+
      name              string                          0+
      partitions        []OffsetDeleteRequestPartition  0+
        partitionIndex  int32                           0+
"""))

OffsetDeleteResponse = Message("OffsetDeleteResponse", valid="0", flexible="none", fields=fields("""
    errorCode           int16                            0+
    throttleTimeMs      int32                            0+
    topics              []OffsetDeleteResponseTopic      0+
      name              string                           0+
      partitions        []OffsetDeleteResponsePartition  0+
        partitionIndex  int32                            0+
        errorCode       int16                            0+
"""))

