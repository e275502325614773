"""``groups`` runs the group coordinator's expiration pass (GroupCoordinatorShard.
cleanupGroupMetadata, OffsetMetadataManager.cleanupExpiredOffsets, Kafka 4.4.0) at
``--at``, with ``--config offsets.retention.minutes=1`` (60,000 ms) here.

The records are built from Kafka's JSON message definitions (the encoder of
test_groups_kip848.py, independent of kafkalog's declarations); each expected outcome is
the 4.4 rule applied by hand to the timestamps written (see each case). The bench test
(tests/kafka_bench/test_toolbox_against_kafka.py) compares with a broker's own pass."""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import pytest
from kafkalog_testkit import raw_batch, raw_record
from kafkalog_testkit import run_cli_inprocess as cli

sys.path.insert(0, str(Path(__file__).parent))
from test_groups_kip848 import _write, key, needs_research, value  # noqa: E402

MINUTE = ("--config", "offsets.retention.minutes=1")
T0 = 1_000_000  # the commits' timestamp (ms)


def _subscription(*topics: str) -> bytes:
    """ConsumerProtocolSubscription v0 (version, topics, null user data), by hand."""
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", -1)


def _commit(group: str, topic: str, ts: int = T0, expire: int | None = None):
    k = key("OffsetCommit", 1, group=group, topic=topic, partition=0)
    if expire is None:
        return k, value("OffsetCommit", 3, offset=5, leaderEpoch=-1, metadata="",
                        commitTimestamp=ts)
    return k, value("OffsetCommit", 1, offset=5, metadata="", commitTimestamp=ts,
                    expireTimestamp=expire)


def _classic(group: str, state_ts: int, members: list[tuple[str, bytes]]):
    return (key("GroupMetadata", 2, group=group),
            value("GroupMetadata", 3, protocolType="consumer", generation=1,
                  protocol="range" if members else None,
                  leader=members[0][0] if members else None, currentStateTimestamp=state_ts,
                  members=[dict(memberId=m, groupInstanceId=None, clientId="c",
                                clientHost="/h", rebalanceTimeout=1000, sessionTimeout=1000,
                                subscription=sub, assignment=b"") for m, sub in members]))


@pytest.fixture
def log_dir(tmp_path) -> Path:
    root = tmp_path / "logs"
    recs = [
        # a standalone consumer's commit: no GroupMetadata, base = the commit timestamp
        _commit("simple", "t"),
        # an Empty classic group: base = its currentStateTimestamp (later than the commit)
        _classic("emptied", T0 + 500_000, []), _commit("emptied", "t"),
        # a legacy value (v1) whose expireTimestamp wins over the retention
        _commit("legacy", "t", expire=T0 + 200_000),
        # a Stable classic group subscribed to t: only u's offset can expire
        _classic("live", T0, [("m1", _subscription("t"))]),
        _commit("live", "t"), _commit("live", "u"),
        # a consumer group whose member subscribes to t: only u's offset can expire
        (key("ConsumerGroupMemberMetadata", 5, groupId="cg", memberId="m1"),
         value("ConsumerGroupMemberMetadata", clientId="c", clientHost="/h",
               subscribedTopicNames=["t"], rebalanceTimeoutMs=1000)),
        (key("ConsumerGroupMetadata", 3, groupId="cg"), value("ConsumerGroupMetadata", epoch=1)),
        _commit("cg", "t"), _commit("cg", "u"),
        # an Empty classic group without offsets: deleted at the first pass
        _classic("bare", T0, []),
    ]
    _write(root / "__consumer_offsets-0",
           [raw_batch(0, [raw_record(i, 0, k, v) for i, (k, v) in enumerate(recs)])])
    for t in ("t", "u"):
        _write(root / f"{t}-0", [raw_batch(0, [raw_record(i, 0, None, b"v")
                                               for i in range(9)])])
    return root


def _offsets(log_dir: Path, at: int) -> dict[str, set[str]]:
    r = cli("groups", str(log_dir), "--describe", "--all-groups", "--at", str(at), *MINUTE,
            "-o", "json")
    assert r.returncode == 0, r.stderr
    return {g["groupId"]: {o["topic"] for o in g["offsets"] if o["currentOffset"] is not None}
            for g in json.loads(r.stdout)["groups"]}


@needs_research
def test_offsets_expire_at_the_retention_of_their_base_timestamp(log_dir):
    # one ms before the retention of the commits has passed: every offset is there
    # ("bare", Empty without offsets, is deleted by any pass)
    assert _offsets(log_dir, T0 + 59_999) == {
        "simple": {"t"}, "emptied": {"t"}, "legacy": {"t"}, "live": {"t", "u"},
        "cg": {"t", "u"}}
    # now - commitTimestamp >= 60,000: the standalone offset and the unsubscribed topics
    # go; the Empty classic group counts from its currentStateTimestamp, the legacy
    # offset from its expireTimestamp
    assert _offsets(log_dir, T0 + 60_000) == {
        "emptied": {"t"}, "legacy": {"t"}, "live": {"t"}, "cg": {"t"}}
    assert _offsets(log_dir, T0 + 200_000) == {"emptied": {"t"}, "live": {"t"}, "cg": {"t"}}
    # currentStateTimestamp + 60,000: the Empty group loses its last offset and is deleted
    assert _offsets(log_dir, T0 + 559_999) == {"emptied": {"t"}, "live": {"t"}, "cg": {"t"}}
    assert _offsets(log_dir, T0 + 560_000) == {"live": {"t"}, "cg": {"t"}}


@needs_research
def test_an_expired_group_is_gone_from_list_and_describe(log_dir):
    r = cli("groups", str(log_dir), "--list", "--at", str(T0 + 60_000), *MINUTE)
    assert sorted(r.stdout.split()) == ["cg", "emptied", "legacy", "live"]
    r = cli("groups", str(log_dir), "--describe", "--group", "simple",
            "--at", str(T0 + 60_000), *MINUTE)
    assert r.returncode == 1
    assert r.stdout.endswith("GroupIdNotFoundException: Group simple not found.\n")
    # the default retention (7 days) keeps them at the same time
    r = cli("groups", str(log_dir), "--list", "--at", str(T0 + 60_000))
    assert sorted(r.stdout.split()) == ["cg", "emptied", "legacy", "live", "simple"]


@pytest.mark.parametrize("config, message", [
    ("offsets.retention.minutes=0", "Invalid value 0 for configuration "
     "offsets.retention.minutes: Value must be at least 1"),
    ("offsets.retention.minutes=x", "Invalid value x for configuration "
     "offsets.retention.minutes: Not a number of type INT"),
    ("log.retention.ms=1", "not a config kafkalog groups uses"),
])
def test_bad_configs_are_usage_errors(tmp_path, config, message):
    r = cli("groups", str(tmp_path), "--list", "--config", config)
    assert r.returncode == 2
    assert message in r.stderr
