"""The in-memory consumer-group coordinator (server/groups.py): raw requests at old and
flexible versions, a two-member rebalance, and kafka-python's group consumer."""

from __future__ import annotations

import threading
import time

from serve_testkit import NO_GROUP_DELAY, RawClient, create_topic

from kafkalog_cli.protocol.errors import Errors
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.groups import GroupCoordinator
from kafkalog_cli.server.kafka_apis import ServerOptions

FIND, JOIN, HEARTBEAT, LEAVE, SYNC, COMMIT, OFFSET_FETCH = 10, 11, 12, 13, 14, 8, 9


def _join(c, version, member_id="", group="g", session=10000, rebalance=5000,
          metadata=None):
    if metadata is None:
        metadata = b"m-" + member_id.encode()
    body = {"groupId": group, "sessionTimeoutMs": session, "rebalanceTimeoutMs": rebalance,
            "memberId": member_id, "groupInstanceId": None, "protocolType": "consumer",
            "protocols": [{"name": "range", "metadata": metadata}],
            "reason": None}
    return c.request(JOIN, version, body)


def test_find_coordinator(server, raw):
    c = raw()
    r = c.request(FIND, 0, {"key": "g"})
    assert (r["errorCode"], r["nodeId"], r["port"]) == (0, 0, server.port)
    r = c.request(FIND, 4, {"keyType": 0, "coordinatorKeys": ["a", "b", ""]})
    assert [(x["key"], x["errorCode"], x["port"]) for x in r["coordinators"]] == [
        ("a", 0, server.port), ("b", 0, server.port), ("", Errors.INVALID_REQUEST, -1)]
    # TRANSACTION keys: this node is the transaction coordinator too; SHARE: none here
    r = c.request(FIND, 3, {"key": "tx", "keyType": 1})
    assert (r["errorCode"], r["nodeId"], r["port"]) == (0, 0, server.port)
    # a share key: INVALID_REQUEST before v6, and at v6 from a node without a share
    # coordinator (KafkaApis.getCoordinator)
    for v in (4, 6):
        r = c.request(FIND, v, {"keyType": 2, "coordinatorKeys": ["g:t:0"]})
        assert r["coordinators"][0]["errorCode"] == Errors.INVALID_REQUEST


def test_single_member_lifecycle_and_offsets(server, raw):
    c = raw()
    create_topic(c, "t", 2)
    # v5: a join without a member id gets MEMBER_ID_REQUIRED and an id (KIP-394)
    r = _join(c, 5)
    assert r["errorCode"] == Errors.MEMBER_ID_REQUIRED and r["memberId"]
    mid = r["memberId"]
    assert _join(c, 5, "someone-else")["errorCode"] == Errors.UNKNOWN_MEMBER_ID
    r = _join(c, 5, mid)
    assert (r["errorCode"], r["generationId"], r["leader"], r["protocolName"]) == \
        (0, 1, mid, "range")
    assert r["members"] == [{"memberId": mid, "groupInstanceId": None,
                             "metadata": b"m-" + mid.encode()}]
    r = c.request(HEARTBEAT, 3, {"groupId": "g", "generationId": 1, "memberId": mid})
    assert r["errorCode"] == 0  # CompletingRebalance: heartbeats are fine
    r = c.request(SYNC, 5, {"groupId": "g", "generationId": 1, "memberId": mid,
                            "protocolType": "consumer", "protocolName": "range",
                            "assignments": [{"memberId": mid, "assignment": b"A"}]})
    assert (r["errorCode"], r["assignment"], r["protocolName"]) == (0, b"A", "range")
    assert c.request(HEARTBEAT, 4, {"groupId": "g", "generationId": 0,
                                    "memberId": mid})["errorCode"] == Errors.ILLEGAL_GENERATION
    assert c.request(HEARTBEAT, 4, {"groupId": "g", "generationId": 1,
                                    "memberId": mid})["errorCode"] == 0
    commit = {"groupId": "g", "generationIdOrMemberEpoch": 1, "memberId": mid,
              "topics": [{"name": "t", "partitions": [
                  {"partitionIndex": 0, "committedOffset": 42, "committedLeaderEpoch": 0,
                   "committedMetadata": "meta"},
                  {"partitionIndex": 7, "committedOffset": 1, "committedMetadata": None}]}]}
    r = c.request(COMMIT, 8, commit)
    assert [p["errorCode"] for p in r["topics"][0]["partitions"]] == \
        [0, Errors.UNKNOWN_TOPIC_OR_PARTITION]
    r = c.request(COMMIT, 2, dict(commit, generationIdOrMemberEpoch=0))
    assert r["topics"][0]["partitions"][0]["errorCode"] == Errors.ILLEGAL_GENERATION
    r = c.request(OFFSET_FETCH, 5, {"groupId": "g", "topics": [
        {"name": "t", "partitionIndexes": [0, 1]}]})
    assert [(p["committedOffset"], p["metadata"], p["committedLeaderEpoch"])
            for p in r["topics"][0]["partitions"]] == [(42, "meta", 0), (-1, "", -1)]
    r = c.request(OFFSET_FETCH, 8, {"groups": [{"groupId": "g", "topics": None},
                                               {"groupId": "nobody", "topics": None}]})
    assert [(g["groupId"], [(t["name"], [p["committedOffset"] for p in t["partitions"]])
                            for t in g["topics"]]) for g in r["groups"]] == \
        [("g", [("t", [42])]), ("nobody", [])]
    r = c.request(LEAVE, 3, {"groupId": "g", "members": [
        {"memberId": mid, "groupInstanceId": None}, {"memberId": "x", "groupInstanceId": None}]})
    assert [m["errorCode"] for m in r["members"]] == [0, Errors.UNKNOWN_MEMBER_ID]
    # an empty group takes standalone commits (generation -1, no member id)
    r = c.request(COMMIT, 2, dict(commit, generationIdOrMemberEpoch=-1, memberId=""))
    assert r["topics"][0]["partitions"][0]["errorCode"] == 0
    assert c.request(HEARTBEAT, 0, {"groupId": "g", "generationId": 2, "memberId": mid})[
        "errorCode"] == Errors.UNKNOWN_MEMBER_ID


def test_second_member_triggers_rebalance(server, raw):
    a, b = raw(), raw()
    r = _join(a, 0)  # v0: the id is assigned at once
    ma = r["memberId"]
    assert r["generationId"] == 1
    a.request(SYNC, 0, {"groupId": "g", "generationId": 1, "memberId": ma,
                        "assignments": [{"memberId": ma, "assignment": b"all"}]})
    result = {}
    t = threading.Thread(target=lambda: result.update(b=_join(b, 2)))
    t.start()
    # b waits in JoinGroup until a rejoins; a's heartbeat says so
    for _ in range(50):
        e = a.request(HEARTBEAT, 2, {"groupId": "g", "generationId": 1, "memberId": ma})
        if e["errorCode"] == Errors.REBALANCE_IN_PROGRESS:
            break
    assert e["errorCode"] == Errors.REBALANCE_IN_PROGRESS
    ra = _join(a, 2, ma)
    t.join(10)
    rb = result["b"]
    assert ra["generationId"] == rb["generationId"] == 2
    assert ra["leader"] == rb["leader"] == ma
    assert sorted(m["memberId"] for m in ra["members"]) == sorted([ma, rb["memberId"]])
    assert rb["members"] == []
    # the follower's SyncGroup waits for the leader's
    t = threading.Thread(target=lambda: result.update(sb=b.request(SYNC, 2, {
        "groupId": "g", "generationId": 2, "memberId": rb["memberId"], "assignments": []})))
    t.start()
    sa = a.request(SYNC, 2, {"groupId": "g", "generationId": 2, "memberId": ma, "assignments": [
        {"memberId": ma, "assignment": b"p0"}, {"memberId": rb["memberId"],
                                                "assignment": b"p1"}]})
    t.join(10)
    assert (sa["assignment"], result["sb"]["assignment"]) == (b"p0", b"p1")
    # the leader leaves: b alone rejoins as the leader of generation 3
    a.request(LEAVE, 0, {"groupId": "g", "memberId": ma})
    assert b.request(HEARTBEAT, 2, {"groupId": "g", "generationId": 2,
                                    "memberId": rb["memberId"]})["errorCode"] == \
        Errors.REBALANCE_IN_PROGRESS
    r = _join(b, 2, rb["memberId"])
    assert (r["generationId"], r["leader"]) == (3, rb["memberId"])


def test_kafka_python_group_consumer_commits(log_dir):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    with ServerThread(log_dir, ServerOptions(port=0, auto_create_topics=True),
                      server_configs=NO_GROUP_DELAY) as s:
        p = KafkaProducer(bootstrap_servers=s.bootstrap)
        for i in range(20):
            p.send("grp", b"v%d" % i, partition=0)
        p.flush(10)
        p.close(5)
        c = KafkaConsumer("grp", bootstrap_servers=s.bootstrap, group_id="kp",
                          auto_offset_reset="earliest", enable_auto_commit=False,
                          consumer_timeout_ms=5000, fetch_max_wait_ms=100)
        got = []
        for m in c:
            got.append(m.value)
            if len(got) == 20:
                break
        c.commit()
        tp = TopicPartition("grp", 0)
        assert c.committed(tp) == 20
        c.close()
        # a new member of the group starts from the committed offset
        c = KafkaConsumer("grp", bootstrap_servers=s.bootstrap, group_id="kp",
                          enable_auto_commit=False, consumer_timeout_ms=3000)
        c.poll(timeout_ms=2000)
        assert c.position(tp) == 20
        c.close()
    assert got == [b"v%d" % i for i in range(20)]


def _commit(c, generation, member_id, offset, group="g"):
    r = c.request(COMMIT, 7, {"groupId": group, "generationIdOrMemberEpoch": generation,
                              "memberId": member_id, "groupInstanceId": None,
                              "topics": [{"name": "t", "partitions": [
                                  {"partitionIndex": 0, "committedOffset": offset,
                                   "committedLeaderEpoch": -1, "committedMetadata": ""}]}]})
    return r["topics"][0]["partitions"][0]["errorCode"]


def _stable_single(c, group="g", session=10000, rebalance=5000):
    """A alone in generation 1, Stable; returns its member id."""
    ma = _join(c, 3, group=group, session=session, rebalance=rebalance)["memberId"]
    c.request(SYNC, 3, {"groupId": group, "generationId": 1, "memberId": ma,
                        "groupInstanceId": None,
                        "assignments": [{"memberId": ma, "assignment": b"all"}]})
    return ma


def _await_rebalance(c, generation, member_id, group="g"):
    for _ in range(100):
        e = c.request(HEARTBEAT, 3, {"groupId": group, "generationId": generation,
                                     "memberId": member_id, "groupInstanceId": None})
        if e["errorCode"] == Errors.REBALANCE_IN_PROGRESS:
            return
    raise AssertionError("the group did not start a rebalance")


def test_commit_during_rebalance(server, raw):
    """ClassicGroup.validateOffsetCommit: a commit of the current generation is taken in
    PreparingRebalance (the revoked partitions' offsets), refused in CompletingRebalance."""
    a, b = raw(), raw()
    create_topic(a, "t")
    ma = _stable_single(a)
    result = {}
    t = threading.Thread(target=lambda: result.update(b=_join(b, 3)))
    t.start()
    _await_rebalance(a, 1, ma)
    assert _commit(a, 1, ma, 42) == 0
    ra = _join(a, 3, ma)
    t.join(10)
    assert ra["generationId"] == 2
    assert _commit(a, 2, ma, 43) == Errors.REBALANCE_IN_PROGRESS
    r = a.request(OFFSET_FETCH, 7, {"groupId": "g", "topics": [
        {"name": "t", "partitionIndexes": [0]}], "requireStable": False})
    assert r["topics"][0]["partitions"][0]["committedOffset"] == 42


def test_follower_sync_ends_when_leader_never_syncs(server, raw):
    """GroupMetadataManager.expirePendingSync: the members that did not send SyncGroup
    within the rebalance timeout are removed; a follower waiting for the leader's
    assignment gets REBALANCE_IN_PROGRESS and forms the next generation alone."""
    a, b = raw(), raw()
    ma = _stable_single(a, rebalance=1000)
    result = {}
    t = threading.Thread(target=lambda: result.update(b=_join(b, 3, rebalance=2000)))
    t.start()
    _await_rebalance(a, 1, ma)
    ra = _join(a, 3, ma, rebalance=1000)
    t.join(10)
    mb = result["b"]["memberId"]
    assert (ra["generationId"], ra["leader"]) == (2, ma)
    # the leader never syncs: the follower's SyncGroup ends at the 2 s rebalance timeout
    r = b.request(SYNC, 3, {"groupId": "g", "generationId": 2, "memberId": mb,
                            "groupInstanceId": None, "assignments": []})
    assert r["errorCode"] == Errors.REBALANCE_IN_PROGRESS
    assert a.request(HEARTBEAT, 3, {"groupId": "g", "generationId": 2, "memberId": ma,
                                    "groupInstanceId": None})["errorCode"] == \
        Errors.UNKNOWN_MEMBER_ID
    r = _join(b, 3, mb, rebalance=2000)
    assert (r["errorCode"], r["generationId"], r["leader"]) == (0, 3, mb)


def test_silent_member_expires_while_others_heartbeat(log_dir):
    """expireClassicGroupMemberHeartbeat: a member not heard from within its session
    timeout is removed by its session timer, though the group only sees heartbeats; the
    survivor gets REBALANCE_IN_PROGRESS and forms the next generation alone."""
    configs = dict(NO_GROUP_DELAY, **{"group.min.session.timeout.ms": "100"})
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=configs) as s:
        a, b = RawClient(s.port), RawClient(s.port)
        _silent_member_expires(a, b)


def _silent_member_expires(a, b):
    ma = _stable_single(a, session=3000, rebalance=2000)
    result = {}
    t = threading.Thread(target=lambda: result.update(b=_join(b, 3, session=800)))
    t.start()
    _await_rebalance(a, 1, ma)
    ra = _join(a, 3, ma, session=3000, rebalance=2000)
    t.join(10)
    mb = result["b"]["memberId"]
    assert ra["generationId"] == 2
    a.request(SYNC, 3, {"groupId": "g", "generationId": 2, "memberId": ma,
                        "groupInstanceId": None, "assignments": [
                            {"memberId": ma, "assignment": b"p0"},
                            {"memberId": mb, "assignment": b"p1"}]})
    r = b.request(SYNC, 3, {"groupId": "g", "generationId": 2, "memberId": mb,
                            "groupInstanceId": None, "assignments": []})
    assert r["assignment"] == b"p1"
    # b goes silent; a heartbeats every 0.1 s
    errors, t0 = [], time.monotonic()
    while time.monotonic() - t0 < 2.5:
        errors.append(a.request(HEARTBEAT, 3, {"groupId": "g", "generationId": 2,
                                               "memberId": ma,
                                               "groupInstanceId": None})["errorCode"])
        if errors[-1]:
            break
        time.sleep(0.1)
    assert errors[-1] == Errors.REBALANCE_IN_PROGRESS, errors
    r = _join(a, 3, ma, session=3000, rebalance=2000)
    assert (r["errorCode"], r["generationId"], [m["memberId"] for m in r["members"]]) == \
        (0, 3, [ma])
    assert b.request(HEARTBEAT, 3, {"groupId": "g", "generationId": 2, "memberId": mb,
                                    "groupInstanceId": None})["errorCode"] == \
        Errors.UNKNOWN_MEMBER_ID


def test_rejoin_with_same_metadata_gets_current_generation(server, raw):
    """classicGroupJoinExistingMember: a member re-sending JoinGroup with unchanged
    metadata gets the current generation at once (CompletingRebalance; Stable unless it
    is the leader); changed metadata, or the leader in Stable, starts a rebalance."""
    a, b = raw(), raw()
    r = _join(a, 3, metadata=b"m")
    ma = r["memberId"]
    assert (r["generationId"], r["leader"]) == (1, ma)
    # CompletingRebalance: the leader's repeated join answers generation 1, with members
    r = _join(a, 3, ma, metadata=b"m")
    assert (r["errorCode"], r["generationId"], r["leader"]) == (0, 1, ma)
    assert [m["memberId"] for m in r["members"]] == [ma]
    a.request(SYNC, 3, {"groupId": "g", "generationId": 1, "memberId": ma,
                        "groupInstanceId": None,
                        "assignments": [{"memberId": ma, "assignment": b"all"}]})
    result = {}
    t = threading.Thread(target=lambda: result.update(b=_join(b, 3, metadata=b"m")))
    t.start()
    _await_rebalance(a, 1, ma)
    _join(a, 3, ma, metadata=b"m")
    t.join(10)
    mb = result["b"]["memberId"]
    for c, m in ((a, ma), (b, mb)):
        c.request(SYNC, 3, {"groupId": "g", "generationId": 2, "memberId": m,
                            "groupInstanceId": None, "assignments": [
                                {"memberId": ma, "assignment": b"p0"},
                                {"memberId": mb, "assignment": b"p1"}]})
    # Stable: the follower's repeated join answers generation 2 at once, no rebalance (a
    # join that started one would be held until a rejoined or rebalanceTimeoutMs passed,
    # then answer generation 3; the bound is that configured timeout, not a speed)
    t0 = time.monotonic()
    r = _join(b, 3, mb, metadata=b"m", rebalance=5000)
    assert (r["errorCode"], r["generationId"], r["leader"], r["members"]) == (0, 2, ma, [])
    assert time.monotonic() - t0 < 5.0
    assert a.request(HEARTBEAT, 3, {"groupId": "g", "generationId": 2, "memberId": ma,
                                    "groupInstanceId": None})["errorCode"] == 0
    # changed metadata rebalances
    t = threading.Thread(target=lambda: result.update(b=_join(b, 3, mb, metadata=b"new")))
    t.start()
    _await_rebalance(a, 2, ma)
    r = _join(a, 3, ma, metadata=b"m")
    t.join(10)
    assert r["generationId"] == result["b"]["generationId"] == 3


def test_commit_to_unknown_group_error_by_request():
    """OffsetMetadataManager.validateOffsetCommit: a commit naming a generation to a group
    the coordinator does not know is GROUP_ID_NOT_FOUND from OffsetCommit v9 and
    ILLEGAL_GENERATION before; validateTransactionalOffsetCommit answers
    ILLEGAL_GENERATION at every version. Generation -1 creates a simple group."""
    coordinator = GroupCoordinator()
    commit = {"groupId": "g", "generationIdOrMemberEpoch": 5, "memberId": "m",
              "groupInstanceId": None}
    txn = {"groupId": "g", "generationId": 5, "memberId": "m", "groupInstanceId": None}
    assert coordinator.commit_check(commit, 8) == Errors.ILLEGAL_GENERATION
    assert coordinator.commit_check(commit, 9) == Errors.GROUP_ID_NOT_FOUND
    assert coordinator.txn_commit_check(txn, 3) == Errors.ILLEGAL_GENERATION
    assert coordinator.txn_commit_check(txn, 5) == Errors.ILLEGAL_GENERATION
    assert "g" not in coordinator.groups
    assert coordinator.commit_check(dict(commit, generationIdOrMemberEpoch=-1), 9) == 0
    assert "g" in coordinator.groups
