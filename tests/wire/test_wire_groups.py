"""The classic group protocol, differentially: JoinGroup (member id required, the leader,
static members, bad timeouts, protocol mismatches), SyncGroup, Heartbeat, OffsetCommit /
OffsetFetch (every served version, unknown members, stale generations), LeaveGroup,
DescribeGroups, ListGroups, OffsetDelete, DeleteGroups. Member ids are random on both
sides: each side's own go into its requests, the answers compare them by order of
appearance (wire_testkit.normalise)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.kafka

G = "wire-group-1"
PROTOCOLS = [{"name": "range", "metadata": b"\x00\x01meta"},
             {"name": "roundrobin", "metadata": b"\x00\x02"}]


@pytest.fixture(scope="module")
def pair(wire_pair):
    wire_pair.create_topic("gr-a", 2)
    return wire_pair


def member(key):
    return lambda side: side.values.get(key, "")


def join_body(group, key, *, version=9, session=10000, rebalance=10000, instance=None,
              protocol_type="consumer", protocols=PROTOCOLS):
    return lambda side: {"groupId": group, "sessionTimeoutMs": session,
                         "rebalanceTimeoutMs": rebalance, "memberId": side.values.get(key, ""),
                         "groupInstanceId": instance, "protocolType": protocol_type,
                         "protocols": protocols, "reason": None}


def join(pair, group, key, version=9, **kw):
    """JoinGroup on both, compared; each side keeps the member id it handed out."""
    ex = pair.send(11, version, join_body(group, key, version=version, **kw))
    for name, side in pair.sides.items():
        answer = getattr(ex, name)
        if answer["memberId"]:
            side.values[key] = answer["memberId"]
        side.values[key + ".gen"] = answer["generationId"]
    from wire_testkit import _diff, normalise
    b = normalise(ex.broker, pair.sides["broker"])
    s = normalise(ex.serve, pair.sides["serve"])
    assert s == b, _diff(b, s)
    return b


def gen(key):
    return lambda side: side.values.get(key + ".gen", -1)


def test_join_member_id_required_then_leader(pair):
    assert join(pair, G, "m1")["errorCode"] == 79  # MEMBER_ID_REQUIRED
    assert join(pair, G, "m1")["errorCode"] == 0


def test_sync_group_leader(pair):
    pair.same(14, 5, lambda side: {
        "groupId": G, "generationId": side.values["m1.gen"], "memberId": side.values["m1"],
        "groupInstanceId": None, "protocolType": "consumer", "protocolName": "range",
        "assignments": [{"memberId": side.values["m1"], "assignment": b"\x00\x00assigned"}]})


@pytest.mark.parametrize("version", range(0, 5))
def test_heartbeat_versions(pair, version):
    pair.same(12, version, lambda side: {"groupId": G, "generationId": side.values["m1.gen"],
                                         "memberId": side.values["m1"],
                                         "groupInstanceId": None})


HEARTBEAT_ERRORS = {
    "unknown-member": lambda side: {"groupId": G, "generationId": side.values["m1.gen"],
                                    "memberId": "nobody", "groupInstanceId": None},
    "old-generation": lambda side: {"groupId": G, "generationId": side.values["m1.gen"] - 1,
                                    "memberId": side.values["m1"], "groupInstanceId": None},
    "unknown-group": lambda side: {"groupId": "wire-nogroup", "generationId": 1,
                                   "memberId": "x", "groupInstanceId": None},
    "empty-group-id": lambda side: {"groupId": "", "generationId": 1, "memberId": "x",
                                    "groupInstanceId": None},
}


@pytest.mark.parametrize("case", list(HEARTBEAT_ERRORS))
def test_heartbeat_errors(pair, case):
    pair.same(12, 4, HEARTBEAT_ERRORS[case])


def commit_body(group, key, offset, *, version=8, gen_delta=0, member_override=None,
                partitions=(0, 1), topic="gr-a", metadata="md"):
    return lambda side: {
        "groupId": group,
        "generationIdOrMemberEpoch": side.values.get(key + ".gen", -1) + gen_delta,
        "memberId": member_override if member_override is not None else
        side.values.get(key, ""), "groupInstanceId": None, "retentionTimeMs": -1,
        "topics": [{"name": topic, "partitions": [
            {"partitionIndex": p, "committedOffset": offset + p, "committedLeaderEpoch": -1,
             "commitTimestamp": -1, "committedMetadata": metadata} for p in partitions]}]}


@pytest.mark.parametrize("version", range(2, 9))
def test_offset_commit_versions(pair, version):
    pair.same(8, version, commit_body(G, "m1", 10 + version, version=version))


OFFSET_COMMIT_ERRORS = {
    "unknown-member": commit_body(G, "m1", 1, member_override="nobody"),
    "stale-generation": commit_body(G, "m1", 1, gen_delta=-1),
    "future-generation": commit_body(G, "m1", 1, gen_delta=5),
    "unknown-topic": commit_body(G, "m1", 1, topic="gr-nope"),
    "unknown-partition": commit_body(G, "m1", 1, partitions=(9,)),
    "metadata-too-large": commit_body(G, "m1", 1, metadata="x" * 5000),
    "null-metadata": commit_body(G, "m1", 1, metadata=None),
    "simple-group-new": commit_body("wire-simple", "none", 3),
    "simple-group-with-member": commit_body("wire-simple", "none", 3, member_override="m"),
    "empty-group-id": commit_body("", "none", 3),
}


@pytest.mark.parametrize("case", list(OFFSET_COMMIT_ERRORS))
def test_offset_commit_cases(pair, case):
    pair.same(8, 8, OFFSET_COMMIT_ERRORS[case])


@pytest.mark.parametrize("version", range(1, 9))
def test_offset_fetch_versions(pair, version):
    if version >= 8:
        body = {"groups": [{"groupId": G, "topics": [{"name": "gr-a", "partitionIndexes":
                                                      [0, 1, 5]}]},
                           {"groupId": "wire-simple", "topics": None},
                           {"groupId": "wire-none", "topics": None}], "requireStable": True}
    else:
        body = {"groupId": G, "topics": [{"name": "gr-a", "partitionIndexes": [0, 1, 5]},
                                         {"name": "gr-nope", "partitionIndexes": [0]}],
                "requireStable": False}
    pair.same(9, version, body)


@pytest.mark.parametrize("version", [2, 7])
def test_offset_fetch_all_topics(pair, version):
    pair.same(9, version, {"groupId": G, "topics": None, "requireStable": False})


@pytest.mark.parametrize("version", range(0, 6))
def test_describe_groups_versions(pair, version):
    pair.same(15, version, {"groups": [G, "wire-simple", "wire-none"],
                            "includeAuthorizedOperations": version >= 3})


@pytest.mark.parametrize("version", range(0, 6))
def test_list_groups_versions(pair, version):
    b = pair.same(16, version, {"statesFilter": [], "typesFilter": []})
    assert {g["groupId"] for g in b["groups"]} >= {G, "wire-simple"}


@pytest.mark.parametrize("states", [["Stable"], ["Empty"], ["stable"], ["Dead"]])
def test_list_groups_state_filter(pair, states):
    pair.same(16, 4, {"statesFilter": states, "typesFilter": []})


@pytest.mark.parametrize("types", [["classic"], ["consumer"], ["Classic"]])
def test_list_groups_type_filter(pair, types):
    pair.same(16, 5, {"statesFilter": [], "typesFilter": types})


JOIN_ERRORS = {
    "session-too-small": dict(session=10),
    "session-too-large": dict(session=10_000_000),
    "empty-protocol-type": dict(protocol_type=""),
    "no-protocols": dict(protocols=[]),
    "other-protocol-type": dict(protocol_type="connect"),
    "unknown-member": dict(),
}


@pytest.mark.parametrize("case", list(JOIN_ERRORS))
def test_join_errors(pair, case):
    key = "unknown" if case == "unknown-member" else "fresh-" + case
    for side in pair.sides.values():
        if case == "unknown-member":
            side.values[key] = "nobody-here"
    join(pair, G, key, **JOIN_ERRORS[case])


@pytest.mark.parametrize("version", [0, 3, 4, 7])
def test_join_new_group_versions(pair, version):
    join(pair, f"wire-join-v{version}", f"jv{version}", version=version)


def test_static_member_join_and_fenced(pair):
    join(pair, "wire-static", "s1", instance="inst-1")
    pair.same(14, 5, lambda side: {
        "groupId": "wire-static", "generationId": side.values["s1.gen"],
        "memberId": side.values["s1"], "groupInstanceId": "inst-1", "protocolType": "consumer",
        "protocolName": "range",
        "assignments": [{"memberId": side.values["s1"], "assignment": b"a"}]})
    # a heartbeat with the instance id and another member id: FENCED_INSTANCE_ID
    pair.same(12, 4, lambda side: {"groupId": "wire-static",
                                   "generationId": side.values["s1.gen"],
                                   "memberId": "someone-else", "groupInstanceId": "inst-1"})


def test_offset_delete(pair):
    pair.same(47, 0, {"groupId": "wire-simple", "topics": [
        {"name": "gr-a", "partitions": [{"partitionIndex": 0}, {"partitionIndex": 7}]}]})
    pair.same(47, 0, {"groupId": G, "topics": [
        {"name": "gr-a", "partitions": [{"partitionIndex": 1}]}]})  # subscribed: in use
    pair.same(47, 0, {"groupId": "wire-none", "topics": [
        {"name": "gr-a", "partitions": [{"partitionIndex": 0}]}]})


@pytest.mark.parametrize("version", [0, 3, 5])
def test_leave_group(pair, version):
    if version < 3:
        body = lambda side: {"groupId": "wire-join-v0", "memberId": side.values["jv0"]}  # noqa
        group = "wire-join-v0"
    else:
        group = f"wire-join-v{4 if version == 3 else 7}"
        key = "jv4" if version == 3 else "jv7"
        body = lambda side: {"groupId": group, "members": [  # noqa
            {"memberId": side.values[key], "groupInstanceId": None, "reason": "bye"},
            {"memberId": "unknown", "groupInstanceId": None, "reason": None}]}
    pair.same(13, version, body)
    pair.same(15, 5, {"groups": [group], "includeAuthorizedOperations": False})


def test_delete_groups(pair):
    for v in (0, 1, 2):
        pair.same(42, v, {"groupsNames": [f"wire-join-v{'0' if v == 0 else '4'}", G,
                                          "wire-none", ""]})
    pair.same(16, 4, {"statesFilter": [], "typesFilter": []})
