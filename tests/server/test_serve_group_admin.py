"""The group coordinator's admin side and its newer rules (server/groups.py): ListGroups,
DescribeGroups, DeleteGroups, OffsetDelete, static membership (group.instance.id) and
group.initial.rebalance.delay.ms - raw requests for Kafka's error codes, librdkafka
(confluent-kafka) and kafka-python consumers and admin clients for what they see."""

from __future__ import annotations

import threading
import time

from serve_testkit import NO_GROUP_DELAY, RawClient, create_topic

from kafkalog_cli.protocol.errors import Errors
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions

COMMIT, OFFSET_FETCH, JOIN, HEARTBEAT, LEAVE, SYNC = 8, 9, 11, 12, 13, 14
DESCRIBE_GROUPS, LIST_GROUPS, DELETE_GROUPS, OFFSET_DELETE = 15, 16, 42, 47


def _serve(log_dir, configs=None):
    return ServerThread(log_dir, ServerOptions(port=0),
                        server_configs=dict(NO_GROUP_DELAY, **(configs or {})))


def subscription(*topics: str) -> bytes:
    """A ConsumerProtocolSubscription v0: version, topics, user data (null)."""
    out = b"\x00\x00" + len(topics).to_bytes(4, "big")
    for t in topics:
        out += len(t).to_bytes(2, "big") + t.encode()
    return out + b"\xff\xff\xff\xff"


def join(c, member_id="", *, group="g", instance=None, version=5, metadata=None,
         session=10000, rebalance=5000, protocol="range"):
    return c.request(JOIN, version, {
        "groupId": group, "sessionTimeoutMs": session, "rebalanceTimeoutMs": rebalance,
        "memberId": member_id, "groupInstanceId": instance, "protocolType": "consumer",
        "protocols": [{"name": protocol, "metadata": metadata or subscription("t")}],
        "reason": None})


def sync(c, member_id, generation, assignments=(), *, group="g", instance=None, version=5):
    return c.request(SYNC, version, {
        "groupId": group, "generationId": generation, "memberId": member_id,
        "groupInstanceId": instance, "protocolType": "consumer", "protocolName": "range",
        "assignments": [{"memberId": m, "assignment": a} for m, a in assignments]})


def heartbeat(c, member_id, generation, *, group="g", instance=None):
    return c.request(HEARTBEAT, 4, {"groupId": group, "generationId": generation,
                                    "memberId": member_id,
                                    "groupInstanceId": instance})["errorCode"]


def commit(c, member_id="", generation=-1, offsets=(("t", 0, 5),), *, group="g",
           instance=None, version=8):
    res = c.request(COMMIT, version, {
        "groupId": group, "generationIdOrMemberEpoch": generation, "memberId": member_id,
        "groupInstanceId": instance, "topics": [
            {"name": t, "partitions": [{"partitionIndex": p, "committedOffset": o,
                                        "committedLeaderEpoch": -1,
                                        "committedMetadata": ""}]} for t, p, o in offsets]})
    return [p["errorCode"] for t in res["topics"] for p in t["partitions"]]


def committed(c, group="g", topic="t", partitions=(0,)):
    res = c.request(OFFSET_FETCH, 7, {"groupId": group, "topics": [
        {"name": topic, "partitionIndexes": list(partitions)}], "requireStable": False})
    return [p["committedOffset"] for p in res["topics"][0]["partitions"]]


def stable_member(c, *, group="g", instance=None, assignment=b"A", version=5,
                  rebalance=5000):
    """One member alone in a Stable group; returns (member id, generation)."""
    r = join(c, group=group, instance=instance, version=version, rebalance=rebalance)
    if r["errorCode"] == Errors.MEMBER_ID_REQUIRED:
        r = join(c, r["memberId"], group=group, version=version)
    assert r["errorCode"] == 0, r
    mid, gen = r["memberId"], r["generationId"]
    assert sync(c, mid, gen, [(mid, assignment)], group=group, instance=instance)[
        "assignment"] == assignment
    return mid, gen


# -- ListGroups / DescribeGroups ------------------------------------------------------------

def test_list_and_describe_groups_raw(server, raw):
    c = raw()
    create_topic(c, "t", 2)
    mid, gen = stable_member(c, group="active")
    assert commit(c, group="simple") == [0]  # a standalone commit makes a simple group
    r = c.request(LIST_GROUPS, 5, {"statesFilter": [], "typesFilter": []})
    assert sorted((g["groupId"], g["protocolType"], g["groupState"], g["groupType"])
                  for g in r["groups"]) == [("active", "consumer", "Stable", "classic"),
                                            ("simple", "", "Empty", "classic")]
    # states are matched case-insensitively, types too; an unknown type lists nothing
    r = c.request(LIST_GROUPS, 5, {"statesFilter": ["stable"], "typesFilter": ["CLASSIC"]})
    assert [g["groupId"] for g in r["groups"]] == ["active"]
    assert c.request(LIST_GROUPS, 5, {"statesFilter": [], "typesFilter": ["consumer"]})[
        "groups"] == []
    assert sorted(g["groupId"] for g in c.request(LIST_GROUPS, 0, {})["groups"]) == [
        "active", "simple"]
    r = c.request(DESCRIBE_GROUPS, 5, {"groups": ["active", "simple", "nobody"],
                                       "includeAuthorizedOperations": True})
    active, simple, nobody = r["groups"]
    assert (active["errorCode"], active["groupState"], active["protocolType"],
            active["protocolData"]) == (0, "Stable", "consumer", "range")
    [m] = active["members"]
    assert (m["memberId"], m["clientId"], m["clientHost"], m["memberMetadata"],
            m["memberAssignment"], m["groupInstanceId"]) == (
        mid, "raw-test", "/127.0.0.1", subscription("t"), b"A", None)
    # READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS
    assert active["authorizedOperations"] == sum(1 << op for op in (3, 8, 6, 10, 11))
    assert (simple["groupState"], simple["protocolType"], simple["members"]) == ("Empty", "", [])
    # an unknown group is Dead, without an error (GroupMetadataManager.describeGroups)
    assert (nobody["errorCode"], nobody["groupState"], nobody["members"]) == (0, "Dead", [])
    r = c.request(DESCRIBE_GROUPS, 0, {"groups": ["active"]})
    assert r["groups"][0]["members"][0]["memberAssignment"] == b"A"


def test_describe_groups_outside_stable_has_no_protocol_or_metadata(server, raw):
    a, b = raw(), raw()
    ma, gen = stable_member(a)
    result = {}
    t = threading.Thread(target=lambda: result.update(b=join(b, version=3)))
    t.start()
    for _ in range(100):
        if heartbeat(a, ma, gen) == Errors.REBALANCE_IN_PROGRESS:
            break
    r = a.request(DESCRIBE_GROUPS, 5, {"groups": ["g"], "includeAuthorizedOperations": False})
    g = r["groups"][0]
    assert (g["groupState"], g["protocolData"], g["authorizedOperations"]) == (
        "PreparingRebalance", "", -2**31)
    # a (not rejoined yet) and the joining b, without their metadata (describeNoMetadata)
    assert [(m["memberId"] == ma, m["memberMetadata"], m["memberAssignment"])
            for m in g["members"]] == [(True, b"", b"A"), (False, b"", b"")]
    join(a, ma)
    t.join(10)


def test_list_and_describe_groups_with_confluent_and_kafka_python(log_dir):
    from confluent_kafka import Consumer, ConsumerGroupState, Producer
    from confluent_kafka.admin import AdminClient
    from kafka.admin import KafkaAdminClient

    with _serve(log_dir) as s:
        create_topic(RawClient(s.port), "t", 2)
        p = Producer({"bootstrap.servers": s.bootstrap, "log_level": 3})
        p.produce("t", b"x", partition=0)
        p.flush(10)
        c = Consumer({"bootstrap.servers": s.bootstrap, "group.id": "cg", "client.id": "me",
                      "auto.offset.reset": "earliest", "log_level": 3})
        c.subscribe(["t"])
        for _ in range(40):
            if c.poll(0.5) is not None and c.assignment():
                break
        assert sorted(tp.partition for tp in c.assignment()) == [0, 1]
        a = AdminClient({"bootstrap.servers": s.bootstrap, "log_level": 3})
        listed = a.list_consumer_groups().result(10)
        assert [(g.group_id, g.state) for g in listed.valid] == [("cg", ConsumerGroupState.STABLE)]
        d = a.describe_consumer_groups(["cg"])["cg"].result(10)
        assert (d.state, d.is_simple_consumer_group, d.partition_assignor) == (
            ConsumerGroupState.STABLE, False, "range")
        [m] = d.members
        assert (m.client_id, m.host) == ("me", "/127.0.0.1")
        assert sorted(tp.partition for tp in m.assignment.topic_partitions) == [0, 1]
        kp = KafkaAdminClient(bootstrap_servers=s.bootstrap)
        assert kp.list_groups() == [{"group_id": "cg", "protocol_type": "consumer",
                                     "group_state": "Stable", "group_type": "classic"}]
        described = kp.describe_groups(["cg"])["cg"]
        assert (described["group_state"], described["protocol_data"]) == ("Stable", d.partition_assignor)
        kp.close()
        c.close()


# -- DeleteGroups / OffsetDelete -----------------------------------------------------------

def test_delete_groups_and_offset_delete_raw(server, raw):
    c = raw()
    create_topic(c, "t", 2)
    create_topic(c, "u", 1)
    mid, gen = stable_member(c, group="busy")
    assert commit(c, mid, gen, (("t", 0, 3), ("u", 0, 4)), group="busy") == [0, 0]
    assert commit(c, offsets=(("t", 0, 7), ("t", 1, 8)), group="idle") == [0, 0]
    r = c.request(DELETE_GROUPS, 2, {"groupsNames": ["busy", "idle", "nobody", "idle"]})
    assert [(x["groupId"], x["errorCode"]) for x in r["results"]] == [
        ("busy", Errors.NON_EMPTY_GROUP), ("idle", 0), ("nobody", Errors.GROUP_ID_NOT_FOUND)]
    assert committed(c, "idle", "t", (0, 1)) == [-1, -1]
    # OffsetDelete: a consumer group keeps offsets of topics it subscribes to ("t")
    r = c.request(OFFSET_DELETE, 0, {"groupId": "busy", "topics": [
        {"name": "t", "partitions": [{"partitionIndex": 0}, {"partitionIndex": 5}]},
        {"name": "u", "partitions": [{"partitionIndex": 0}]},
        {"name": "gone", "partitions": [{"partitionIndex": 0}]}]})
    assert r["errorCode"] == 0
    assert {(t["name"], p["partitionIndex"]): p["errorCode"] for t in r["topics"]
            for p in t["partitions"]} == {
        ("t", 0): Errors.GROUP_SUBSCRIBED_TO_TOPIC, ("t", 5): Errors.UNKNOWN_TOPIC_OR_PARTITION,
        ("u", 0): 0, ("gone", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION}
    assert committed(c, "busy", "t") == [3] and committed(c, "busy", "u") == [-1]
    r = c.request(OFFSET_DELETE, 0, {"groupId": "nobody", "topics": [
        {"name": "t", "partitions": [{"partitionIndex": 0}]}]})
    assert (r["errorCode"], r["topics"]) == (Errors.GROUP_ID_NOT_FOUND, [])
    assert c.request(OFFSET_DELETE, 0, {"groupId": "", "topics": []})["errorCode"] == \
        Errors.INVALID_GROUP_ID
    # a group of another protocol type must be empty
    r = c.request(JOIN, 5, {"groupId": "conn", "sessionTimeoutMs": 10000,
                            "rebalanceTimeoutMs": 5000, "memberId": "", "groupInstanceId": "i",
                            "protocolType": "connect",
                            "protocols": [{"name": "default", "metadata": b""}],
                            "reason": None})
    assert r["errorCode"] == 0
    r = c.request(OFFSET_DELETE, 0, {"groupId": "conn", "topics": [
        {"name": "t", "partitions": [{"partitionIndex": 0}]}]})
    assert r["errorCode"] == Errors.NON_EMPTY_GROUP
    # once empty the group can be deleted
    c.request(LEAVE, 3, {"groupId": "busy", "members": [
        {"memberId": mid, "groupInstanceId": None}]})
    r = c.request(DELETE_GROUPS, 0, {"groupsNames": ["busy"]})
    assert r["results"][0]["errorCode"] == 0
    assert c.request(LIST_GROUPS, 4, {"statesFilter": ["empty"]})["groups"] == []


def test_delete_groups_and_offsets_with_confluent_and_kafka_python(log_dir):
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient
    from kafka import TopicPartition as KpTP
    from kafka.admin import KafkaAdminClient

    with _serve(log_dir) as s:
        create_topic(RawClient(s.port), "t", 2)
        c = Consumer({"bootstrap.servers": s.bootstrap, "group.id": "cg", "log_level": 3,
                      "enable.auto.commit": False})
        c.assign([TopicPartition("t", 0), TopicPartition("t", 1)])
        c.commit(offsets=[TopicPartition("t", 0, 10), TopicPartition("t", 1, 11)],
                 asynchronous=False)
        c.close()
        kp = KafkaAdminClient(bootstrap_servers=s.bootstrap)
        from kafka.errors import NoError

        assert kp.delete_group_offsets("cg", [KpTP("t", 0)]) == {KpTP("t", 0): NoError}
        offsets = kp.list_group_offsets("cg")["cg"]
        kp.close()
        assert {tp.partition: o.offset for tp, o in offsets.items()} == {1: 11}
        a = AdminClient({"bootstrap.servers": s.bootstrap, "log_level": 3})
        assert a.delete_consumer_groups(["cg"])["cg"].result(10) is None
        r = RawClient(s.port)
        assert committed(r, "cg", "t", (0, 1)) == [-1, -1]
        r.close()


# -- static membership ----------------------------------------------------------------------

def test_static_member_rejoins_without_rebalance_and_fences_its_old_id(server, raw):
    """KIP-345 (updateStaticMemberThenRebalanceOrCompleteJoin): a static member joining
    with an unknown member id takes its old id's place in Stable - same generation, same
    assignment, no rebalance for the others - and requests with the old id are fenced."""
    a, b, a2 = raw(), raw(), raw()
    # the commits go to an existing partition: KafkaApis answers one of an unknown topic
    # UNKNOWN_TOPIC_OR_PARTITION without asking the coordinator (which fences)
    create_topic(a, "t")
    ra = join(a, instance="ia")
    ma = ra["memberId"]
    assert ma.startswith("ia-") and ra["generationId"] == 1
    result = {}
    t = threading.Thread(target=lambda: result.update(b=join(b, instance="ib")))
    t.start()
    for _ in range(100):
        if heartbeat(a, ma, 1, instance="ia") == Errors.REBALANCE_IN_PROGRESS:
            break
    ra = join(a, ma, instance="ia")
    t.join(10)
    mb, gen = result["b"]["memberId"], ra["generationId"]
    assert gen == 2 and ra["leader"] == ma
    assignments = [(ma, b"pa"), (mb, b"pb")]
    t = threading.Thread(target=lambda: result.update(sb=sync(b, mb, gen, instance="ib")))
    t.start()
    sync(a, ma, gen, assignments, instance="ia")
    t.join(10)
    assert result["sb"]["assignment"] == b"pb"
    # b restarts: a new JoinGroup with its instance id and no member id
    rb2 = join(a2, instance="ib")
    mb2 = rb2["memberId"]
    assert (rb2["errorCode"], rb2["generationId"], rb2["leader"], rb2["members"]) == (
        0, gen, ma, [])
    assert mb2 != mb and mb2.startswith("ib-")
    assert sync(a2, mb2, gen, instance="ib")["assignment"] == b"pb"
    assert heartbeat(a, ma, gen, instance="ia") == 0  # no rebalance
    # the old id is fenced wherever it shows up with the instance id
    assert heartbeat(b, mb, gen, instance="ib") == Errors.FENCED_INSTANCE_ID
    assert sync(b, mb, gen, instance="ib")["errorCode"] == Errors.FENCED_INSTANCE_ID
    assert join(b, mb, instance="ib")["errorCode"] == Errors.FENCED_INSTANCE_ID
    assert commit(b, mb, gen, instance="ib") == [Errors.FENCED_INSTANCE_ID]
    assert heartbeat(b, mb, gen) == Errors.UNKNOWN_MEMBER_ID
    # the static leader rejoining (v9) gets the members and skipAssignment
    ra2 = join(a2, instance="ia", version=9)
    assert (ra2["generationId"], ra2["leader"], ra2["skipAssignment"]) == (
        gen, ra2["memberId"], True)
    assert sorted(m["groupInstanceId"] for m in ra2["members"]) == ["ia", "ib"]
    # LeaveGroup by instance id (the admin client's removeMembersFromConsumerGroup)
    r = a.request(LEAVE, 5, {"groupId": "g", "members": [
        {"memberId": "", "groupInstanceId": "ib", "reason": None},
        {"memberId": "", "groupInstanceId": "nobody", "reason": None}]})
    assert [(m["groupInstanceId"], m["errorCode"]) for m in r["members"]] == [
        ("ib", 0), ("nobody", Errors.UNKNOWN_MEMBER_ID)]
    assert heartbeat(a2, ra2["memberId"], gen, instance="ia") == Errors.REBALANCE_IN_PROGRESS


def test_static_member_that_does_not_rejoin_stays_in_the_group(server, raw):
    """completeClassicGroupJoin removes only the dynamic members that did not rejoin."""
    a, b, c = raw(), raw(), raw()
    ma, _ = stable_member(a, instance="ia", rebalance=1000)
    result = {}
    t = threading.Thread(target=lambda: result.update(c=join(c, version=3, rebalance=1000)))
    t.start()
    # a does not rejoin: after the rebalance timeout the generation forms without its join
    t.join(10)
    rc = result["c"]
    assert rc["errorCode"] == 0 and rc["generationId"] == 2
    r = b.request(DESCRIBE_GROUPS, 5, {"groups": ["g"], "includeAuthorizedOperations": False})
    assert sorted(m["groupInstanceId"] or "" for m in r["groups"][0]["members"]) == ["", "ia"]
    assert heartbeat(a, ma, 2, instance="ia") == 0


def test_static_membership_with_librdkafka(log_dir):
    """A librdkafka consumer with group.instance.id closes (a static member sends no
    LeaveGroup) and a new one with the same id takes over its partitions while the other
    member keeps its own, without a rebalance."""
    from confluent_kafka import Consumer

    with _serve(log_dir) as s:
        create_topic(RawClient(s.port), "t", 4)
        assigned = {"a": [], "b": []}

        def consumer(name):
            return Consumer({"bootstrap.servers": s.bootstrap, "group.id": "sg",
                             "group.instance.id": name, "session.timeout.ms": 30000,
                             "log_level": 3})

        def on_assign(name):
            return lambda c, parts: assigned[name].append(sorted(p.partition for p in parts))

        ca, cb = consumer("a"), consumer("b")
        ca.subscribe(["t"], on_assign=on_assign("a"))
        cb.subscribe(["t"], on_assign=on_assign("b"))
        for _ in range(80):
            ca.poll(0.1)
            cb.poll(0.1)
            if assigned["a"] and assigned["b"] and len(ca.assignment()) + len(
                    cb.assignment()) == 4:
                break
        a_parts = sorted(p.partition for p in ca.assignment())
        rebalances_a = len(assigned["a"])
        cb.close()
        cb2 = consumer("b")
        got = []
        cb2.subscribe(["t"], on_assign=lambda c, parts: got.append(sorted(
            p.partition for p in parts)))
        for _ in range(80):
            cb2.poll(0.1)
            ca.poll(0.1)
            if got:
                break
        assert got and sorted(got[-1] + a_parts) == [0, 1, 2, 3]
        for _ in range(10):
            ca.poll(0.1)
        assert len(assigned["a"]) == rebalances_a  # a was not rebalanced
        assert sorted(p.partition for p in ca.assignment()) == a_parts
        ca.close()
        cb2.close()


# -- group.initial.rebalance.delay.ms -------------------------------------------------------

def _join_timers(s: ServerThread) -> list[int]:
    """The delays (ms) of every join timer the server's coordinator schedules from now on
    (the initial-rebalance delay, its extensions, DelayedJoin): what a JoinGroup waits for,
    read without a wall clock that load can stretch."""
    coordinator = s.server.apis.group_apis.groups
    delays, schedule = [], coordinator._schedule_join

    def recording(group, delay_ms, fn, *args):
        delays.append(delay_ms)
        schedule(group, delay_ms, fn, *args)

    coordinator._schedule_join = recording
    return delays


def test_initial_rebalance_delay_waits_for_members(log_dir):
    """prepareRebalance from Empty waits group.initial.rebalance.delay.ms (Kafka's default
    3000 ms), extended while new members arrive, so both members form generation 1."""
    with ServerThread(log_dir, ServerOptions(port=0)) as s:
        timers = _join_timers(s)
        a, b = RawClient(s.port, timeout=20), RawClient(s.port, timeout=20)
        result = {}
        t0 = time.monotonic()
        t = threading.Thread(target=lambda: result.update(a=join(a, version=3,
                                                                 rebalance=20000)))
        t.start()
        time.sleep(1.5)
        rb = join(b, version=3, rebalance=20000)
        t.join(10)
        elapsed = time.monotonic() - t0
        ra = result["a"]
        assert ra["generationId"] == rb["generationId"] == 1
        assert len(ra["members"] or rb["members"]) == 2
        # the second member extended the delay by exactly one more delay (counted, not timed:
        # load lengthens a wait, so only the lower bound is a wall-clock one)
        assert timers == [3000, 3000] and elapsed >= 5.9, (timers, elapsed)
        a.close()
        b.close()


def test_initial_rebalance_delay_is_configurable(log_dir):
    with _serve(log_dir, {"group.initial.rebalance.delay.ms": "700"}) as s:
        timers = _join_timers(s)
        c = RawClient(s.port)
        t0 = time.monotonic()
        r = join(c, version=3)
        elapsed = time.monotonic() - t0
        # the configured delay, not the default 3000 ms; waited in full (a timer never
        # fires early, so this lower bound holds under any load)
        assert r["errorCode"] == 0 and timers == [700] and elapsed >= 0.69, (timers, elapsed)
        sync(c, r["memberId"], 1, [(r["memberId"], b"x")], version=3)
        # a later rebalance (the leader rejoins a Stable group) does not wait: no timer
        r = join(c, r["memberId"], version=3)
        assert r["generationId"] == 2 and timers == [700], timers
        c.close()


def test_deleted_topic_loses_its_committed_offsets(server, raw):
    """OffsetMetadataManager.onPartitionsDeleted: a deleted topic's offsets are gone from
    every group, a recreated topic of the same name starts without them."""
    c = raw()
    create_topic(c, "t")
    create_topic(c, "u")
    assert commit(c, offsets=(("t", 0, 5), ("u", 0, 6))) == [0, 0]
    r = c.request(20, 6, {"topics": [{"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAA"}],
                          "timeoutMs": 1000})
    assert r["responses"][0]["errorCode"] == 0
    create_topic(c, "t")
    assert committed(c, "g", "t") == [-1] and committed(c, "g", "u") == [6]


def test_subscribed_group_takes_new_partitions(log_dir):
    """librdkafka's 0044 / 0069 cases: partitions added by CreatePartitions reach a
    subscribed group - the leader sees them in Metadata, rejoins (a leader's JoinGroup in
    Stable rebalances) and the new assignment covers every partition, eagerly or
    incrementally (cooperative-sticky, 0113's k_add_partition)."""
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient, NewPartitions

    with _serve(log_dir) as s:
        a = AdminClient({"bootstrap.servers": s.bootstrap, "log_level": 3})
        for strategy in ("range", "cooperative-sticky"):
            topic = f"t-{strategy}"
            create_topic(RawClient(s.port), topic, 2)
            c = Consumer({"bootstrap.servers": s.bootstrap, "group.id": f"g-{strategy}",
                          "partition.assignment.strategy": strategy,
                          "topic.metadata.refresh.interval.ms": 500, "log_level": 3})
            c.subscribe([topic])
            for _ in range(60):
                c.poll(0.1)
                if len(c.assignment()) == 2:
                    break
            assert sorted(p.partition for p in c.assignment()) == [0, 1], strategy
            a.create_partitions([NewPartitions(topic, 4)])[topic].result(10)
            for _ in range(100):
                c.poll(0.1)
                if len(c.assignment()) == 4:
                    break
            assert sorted(p.partition for p in c.assignment()) == [0, 1, 2, 3], strategy
            c.close()


def test_offset_commit_of_unknown_topics_does_not_reach_the_coordinator(server, raw):
    """KafkaApis.handleOffsetCommitRequest answers a partition of an unknown topic
    UNKNOWN_TOPIC_OR_PARTITION before the coordinator looks at the member: when no
    partition is left the coordinator is not asked at all, so a stale member id is not
    reported (it is, with a known topic: no such group at generation 7)."""
    c = raw()
    assert commit(c, "no-such-member", 7) == [Errors.UNKNOWN_TOPIC_OR_PARTITION]
    create_topic(c, "t")
    assert commit(c, "no-such-member", 7) == [Errors.ILLEGAL_GENERATION]
