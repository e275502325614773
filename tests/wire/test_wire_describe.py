"""What one node tells beyond Metadata, differentially: OffsetForLeaderEpoch (the
leader-epoch cache), DescribeProducers (the producer state), DescribeTopicPartitions
(paged Metadata), ListPartitionReassignments and DescribeClientQuotas (none on either
side), and Produce v13 (topics by id)."""

from __future__ import annotations

import pytest
from wire_testkit import batch, produce_body

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def pair(wire_pair):
    wire_pair.create_topic("ds-a", 2)
    wire_pair.create_topic("ds-b", 3)
    for side in wire_pair.sides.values():
        side.values["ds-pid"] = wire_pair.init_producer_id(side)
    # ds-a-0: 3 records without a producer id, then 2 + 2 idempotent; ds-a-1 empty
    wire_pair.same(0, 11, produce_body([("ds-a", 0, batch(3))]))
    for seq in (0, 2):
        wire_pair.same(0, 11, lambda side, seq=seq: produce_body([("ds-a", 0, batch(
            2, pid=side.values["ds-pid"][0], epoch=side.values["ds-pid"][1], seq=seq))],
            acks=-1))
    return wire_pair


def _id(side, name):
    return next(i for i, n in side.topic_ids.items() if n == name)


# -- OffsetForLeaderEpoch ------------------------------------------------------------------

def epoch_body(parts, *, version=4, current=-1):
    topics: dict[str, list] = {}
    for topic, partition, epoch in parts:
        topics.setdefault(topic, []).append(
            {"partition": partition, "currentLeaderEpoch": current, "leaderEpoch": epoch})
    return {"replicaId": -1, "topics": [{"topic": t, "partitions": p}
                                        for t, p in topics.items()]}


@pytest.mark.parametrize("version", [2, 3, 4])
def test_offset_for_leader_epoch_versions(pair, version):
    pair.same(23, version, epoch_body([("ds-a", 0, 0), ("ds-a", 1, 0)]))


@pytest.mark.parametrize("epoch", [-1, 0, 1, 7])
def test_offset_for_leader_epoch_epochs(pair, epoch):
    pair.same(23, 4, epoch_body([("ds-a", 0, epoch)]))


@pytest.mark.parametrize("current", [0, 1, -1])
def test_offset_for_leader_epoch_fencing(pair, current):
    pair.same(23, 4, epoch_body([("ds-a", 0, 0)], current=current))


def test_offset_for_leader_epoch_unknown(pair):
    pair.same(23, 4, epoch_body([("ds-a", 9, 0), ("ds-nope", 0, 0), ("bad name", 0, 0)]))


# -- DescribeProducers ---------------------------------------------------------------------

def test_describe_producers(pair):
    pair.same(61, 0, {"topics": [{"name": "ds-a", "partitionIndexes": [0, 1, 7]}]})


def test_describe_producers_unknown_topics(pair):
    pair.same(61, 0, {"topics": [{"name": "ds-nope", "partitionIndexes": [0]},
                                 {"name": "bad name", "partitionIndexes": [0, 1]}]})


# -- DescribeTopicPartitions ---------------------------------------------------------------

def dtp(names, limit=2000, cursor=None):
    return {"topics": [{"name": n} for n in names], "responsePartitionLimit": limit,
            "cursor": None if cursor is None else {"topicName": cursor[0],
                                                   "partitionIndex": cursor[1]}}


@pytest.mark.parametrize("case", [
    (["ds-a", "ds-b"], 2000, None), (["ds-b", "ds-a", "ds-nope"], 2, None),
    (["ds-a", "ds-b"], 2, ("ds-b", 1)), (["ds-a", "ds-b"], 1, ("ds-a", 1)),
    (["ds-a", "ds-b", "bad name"], 0, None), (["ds-a"], 5, ("ds-b", 0)),
    (["ds-a"], 5, ("ds-a", -1)), (["__consumer_offsets", "ds-a"], 3, ("ds-a", 0))],
    ids=["all", "limit", "cursor", "cursor-limit", "zero-limit", "cursor-not-listed",
         "cursor-negative", "internal"])
def test_describe_topic_partitions(pair, case):
    pair.same(75, 0, dtp(*case))


# -- ListPartitionReassignments, DescribeClientQuotas --------------------------------------

def test_list_partition_reassignments(pair):
    pair.same(46, 0, {"timeoutMs": 5000, "topics": None})
    pair.same(46, 0, {"timeoutMs": 5000, "topics": [
        {"name": "ds-a", "partitionIndexes": [0, 1]}, {"name": "ds-nope",
                                                       "partitionIndexes": [0]}]})


def quota(*components, strict=False):
    return {"components": [{"entityType": t, "matchType": m, "match": v}
                           for t, m, v in components], "strict": strict}


@pytest.mark.parametrize("body", [
    quota(), quota(strict=True), quota(("user", 0, "alice")), quota(("client-id", 1, None)),
    quota(("user", 2, None), ("client-id", 0, "c")), quota(("ip", 0, "1.2.3.4")),
    quota(("ip", 2, None), ("user", 2, None)), quota(("group", 0, "g")),
    quota(("user", 0, None)), quota(("user", 1, "x")), quota(("user", 2, "x")),
    quota(("user", 3, None)), quota(("", 0, "x")), quota(("user", 0, "a"), ("user", 2, None))],
    ids=["empty", "strict", "exact", "default", "specified", "ip", "ip-and-user",
         "unknown-type", "exact-null", "default-named", "specified-named", "bad-match",
         "empty-type", "twice"])
@pytest.mark.parametrize("version", [0, 1])
def test_describe_client_quotas(pair, body, version):
    pair.same(48, version, body)


# -- Produce v13: topics by id -------------------------------------------------------------

def test_produce_v13_topic_ids(pair):
    def body(side):
        b = produce_body([("ds-b", 0, batch(2)), ("ds-b", 1, batch(1))])
        b["topicData"][0]["topicId"] = _id(side, "ds-b")
        return b
    pair.same(0, 13, body)

    def unknown(side):
        b = produce_body([("ds-b", 0, batch(1))])
        b["topicData"][0]["topicId"] = "AAAAAAAAAAAAAAAAAAAAAQ"
        return b
    pair.same(0, 13, unknown)
