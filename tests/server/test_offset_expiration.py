"""serve's offset expiration (server/offset_expiration.py) against Kafka 4.4's rules
(GroupCoordinatorShard.cleanupGroupMetadata, OffsetMetadataManager.cleanupExpiredOffsets,
ClassicGroup.offsetExpirationCondition / isSubscribedToTopic,
GroupMetadataManager.maybeDeleteGroup), with a fake clock: every expected value is worked
out by hand from those rules (retention 60,000 ms here), not from kafkalog. No broker:
the rules are checked as the code states them (offsets.retention.minutes is in minutes,
so a bench broker needs over a minute a case)."""

from __future__ import annotations

import struct
import time

from kafkalog_cli.server.classic_group import (
    EMPTY,
    PREPARING,
    STABLE,
    Group,
    GroupStore,
    Member,
    OffsetAndMetadata,
)
from kafkalog_cli.server.groups import GroupCoordinator
from kafkalog_cli.server.offset_expiration import cleanup_group_metadata

RETENTION = 60_000
T0 = 1_700_000_000_000


class RecordingStore(GroupStore):
    def __init__(self):
        self.writes = []

    def offsets_deleted(self, group_id, partitions, *, group=False):
        self.writes.append((group_id, sorted(partitions), group))


def _subscription(*topics: str) -> bytes:
    """ConsumerProtocolSubscription v0: int16 version, int32 count, int16-length names,
    then user data (null)."""
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", -1)


def _offset(commit_ms: int) -> OffsetAndMetadata:
    return OffsetAndMetadata(5, -1, "", commit_ms)


def _group(gid, *, state=EMPTY, protocol_type="consumer", since=None, offsets=(),
           subscribed=()):
    g = Group(gid, protocol_type=protocol_type)
    if state != EMPTY:
        g.protocol = "range"
        g.add(Member("m-1", None, "c", "/h", 30000, 10000, protocol_type or "",
                     [("range", _subscription(*subscribed))]))
    g.state = state
    g.current_state_timestamp = since
    g.subscribed_topics = g.compute_subscribed_topics()
    for (t, p), ms in offsets:
        g.offsets[(t, p)] = _offset(ms)
    return g


def _coordinator(*groups):
    store = RecordingStore()
    c = GroupCoordinator(store=store)
    for g in groups:
        c.groups[g.group_id] = g
    return c, store


def test_an_empty_group_expires_retention_after_it_became_empty():
    """Empty since T0 + 10 s, offsets committed at T0: the base is the state's timestamp,
    not the commit (expired at T0 + 70 s, not T0 + 60 s); then the group goes."""
    g = _group("g", since=T0 + 10_000, offsets=[(("t", 0), T0), (("t", 1), T0)])
    c, store = _coordinator(g)
    assert cleanup_group_metadata(c, T0 + 69_999, RETENTION) == ([], [])
    assert store.writes == []
    assert cleanup_group_metadata(c, T0 + 70_000, RETENTION) == (
        [("g", "t", 0), ("g", "t", 1)], ["g"])
    assert store.writes == [("g", [("t", 0), ("t", 1)], True)]
    assert "g" not in c.groups and g.state == "Dead"


def test_an_empty_group_without_a_state_timestamp_uses_each_commit():
    g = _group("g", since=None, offsets=[(("t", 0), T0), (("t", 1), T0 + 30_000)])
    c, store = _coordinator(g)
    assert cleanup_group_metadata(c, T0 + 60_000, RETENTION) == ([("g", "t", 0)], [])
    assert store.writes == [("g", [("t", 0)], False)]
    assert cleanup_group_metadata(c, T0 + 90_000, RETENTION) == ([("g", "t", 1)], ["g"])
    assert store.writes[-1] == ("g", [("t", 1)], True)


def test_a_stable_consumer_group_expires_only_topics_it_no_longer_subscribes_to():
    g = _group("g", state=STABLE, since=T0, subscribed=("a",),
               offsets=[(("a", 0), T0), (("b", 0), T0), (("b", 1), T0 + 1)])
    c, store = _coordinator(g)
    assert cleanup_group_metadata(c, T0 + 60_000, RETENTION) == ([("g", "b", 0)], [])
    assert cleanup_group_metadata(c, T0 + 10**9, RETENTION) == ([("g", "b", 1)], [])
    assert set(g.offsets) == {("a", 0)} and "g" in c.groups  # Stable: never deleted
    assert store.writes == [("g", [("b", 0)], False), ("g", [("b", 1)], False)]


def test_a_rebalancing_group_or_another_protocol_keeps_its_offsets():
    rebalancing = _group("r", state=PREPARING, since=T0, subscribed=("a",),
                         offsets=[(("b", 0), T0)])
    connect = _group("k", state=STABLE, protocol_type="connect", since=T0,
                     offsets=[(("b", 0), T0)])
    c, store = _coordinator(rebalancing, connect)
    assert cleanup_group_metadata(c, T0 + 10**9, RETENTION) == ([], [])
    assert store.writes == []


def test_a_simple_group_expires_by_commit_and_goes_with_its_last_offset():
    """No protocol type (a standalone consumer's commits): each offset by its commit."""
    g = _group("s", protocol_type=None, since=T0 + 50_000,
               offsets=[(("t", 0), T0), (("t", 1), T0 + 5_000)])
    c, store = _coordinator(g)
    assert cleanup_group_metadata(c, T0 + 60_000, RETENTION) == ([("s", "t", 0)], [])
    assert cleanup_group_metadata(c, T0 + 65_000, RETENTION) == ([("s", "t", 1)], ["s"])
    assert store.writes == [("s", [("t", 0)], False), ("s", [("t", 1)], True)]


def test_a_pending_transactional_commit_keeps_the_offset_and_the_group():
    g = _group("g", since=T0, offsets=[(("t", 0), T0), (("t", 1), T0)])
    c, store = _coordinator(g)
    c.pending_txn_offsets[7] = {"g": {("t", 1): _offset(T0)}}
    assert cleanup_group_metadata(c, T0 + 60_000, RETENTION) == ([("g", "t", 0)], [])
    assert set(g.offsets) == {("t", 1)} and "g" in c.groups


def test_an_empty_group_with_no_offsets_is_deleted_unless_a_transaction_is_open():
    g, h = _group("g", since=T0), _group("h", since=T0)
    c, store = _coordinator(g, h)
    c.pending_txn_offsets[7] = {"h": {("t", 0): _offset(T0)}}
    assert cleanup_group_metadata(c, T0, RETENTION) == ([], ["g"])
    assert store.writes == [("g", [], True)]
    assert "h" in c.groups


# -- in serve: the scheduled pass and its tombstones -------------------------------------------

def test_serve_expires_offsets_on_its_schedule_and_the_tombstones_last(tmp_path, monkeypatch):
    """The groups are made on a server with the default schedule (a pass every 20 ms would
    delete a group between a member's two joins, as Kafka's would); restarted with
    offsets.retention.minutes=1 checked every 20 ms and the pass's clock two minutes on,
    the check is an event (the groups leave the coordinator): a simple group's and an
    Empty consumer group's offsets expire, a Stable group keeps the offset of the topic it
    subscribes to and loses the other. A third start (the records replayed) finds the
    same: the tombstones are in __consumer_offsets."""
    from serve_testkit import NO_GROUP_DELAY, RawClient, create_topic
    from test_serve_group_admin import LEAVE, commit, committed, stable_member

    from kafkalog_cli.server import offset_expiration
    from kafkalog_cli.server.broker import ServerThread
    from kafkalog_cli.server.kafka_apis import ServerOptions

    fast = dict(NO_GROUP_DELAY, **{"offsets.retention.minutes": "1",
                                   "offsets.retention.check.interval.ms": "20"})
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=NO_GROUP_DELAY) as s:
        c = RawClient(s.port)
        create_topic(c, "t")
        create_topic(c, "u")
        assert commit(c, group="simple") == [0]
        mid, gen = stable_member(c, group="empty")
        assert commit(c, mid, gen, group="empty") == [0]
        assert c.request(LEAVE, 3, {"groupId": "empty", "members": [
            {"memberId": mid, "groupInstanceId": None}]})["errorCode"] == 0
        mid, gen = stable_member(c, group="stable")  # subscribes to t
        assert commit(c, mid, gen, offsets=(("t", 0, 5), ("u", 0, 7)), group="stable") == [0, 0]
        c.close()
    real = offset_expiration.wall_clock_ms
    monkeypatch.setattr(offset_expiration, "wall_clock_ms", lambda: real() + 120_000)
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=fast) as s:
        deadline = time.monotonic() + 30  # a hang bound only: the pass runs every 20 ms
        while s.call(lambda: {"simple", "empty"} & set(s.server.apis.groups.groups)):
            assert time.monotonic() < deadline, "no expiration pass removed the groups"
            time.sleep(0.02)
        c = RawClient(s.port)
        assert committed(c, group="stable", topic="u") == [-1]
        assert committed(c, group="stable", topic="t") == [5]
        c.close()
    monkeypatch.setattr(offset_expiration, "wall_clock_ms", real)
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=NO_GROUP_DELAY) as s:
        groups = s.call(lambda: set(s.server.apis.groups.groups))
        assert "simple" not in groups and "empty" not in groups and "stable" in groups
        c = RawClient(s.port)
        assert committed(c, group="simple") == [-1]
        assert committed(c, group="stable", topic="u") == [-1]
        assert committed(c, group="stable", topic="t") == [5]
        c.close()
