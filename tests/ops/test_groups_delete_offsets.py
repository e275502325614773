"""``groups --delete-offsets`` on hand-built groups (the fixture of test_groups_expire.py):
OffsetDelete as Kafka 4.4's coordinator answers it (OffsetMetadataManager.deleteOffsets):
a partition of a topic the group is subscribed to is refused with
GROUP_SUBSCRIBED_TO_TOPIC and the others' offsets get the OffsetCommit tombstones (keys
written here by hand); a missing group fails with GROUP_ID_NOT_FOUND and nothing is
written. The text is ConsumerGroupService.deleteOffsets' of the 4.4 tool (read from its
bytecode). The bench test (tests/kafka_bench/test_groups_expire_against_kafka.py)
compares text and records with a 4.4 broker's."""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

from kafkalog_testkit import raw_batch, raw_record
from kafkalog_testkit import run_cli_inprocess as cli

sys.path.insert(0, str(Path(__file__).parent))
from test_groups_delete import _records, _validate  # noqa: E402
from test_groups_expire import T0, log_dir  # noqa: E402, F401
from test_groups_kip848 import _write, key, needs_research, value  # noqa: E402

AT = ("--at", str(T0 + 1000))
SUBSCRIBED = ("Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: "
              "Deleting offsets of a topic is forbidden while the consumer group is "
              "actively subscribed to it.")


def _tombstone(group: str, topic: str, partition: int) -> tuple[bytes, None]:
    """OffsetCommitKey v1: int16 type 1, then group, topic (int16-length strings) and
    partition (int32); a null value."""
    return (struct.pack(">hh", 1, len(group)) + group.encode()
            + struct.pack(">h", len(topic)) + topic.encode() + struct.pack(">i", partition),
            None)


@needs_research
def test_subscribed_topics_are_refused_and_the_others_deleted(log_dir):  # noqa: F811
    before = _records(log_dir)
    # "live" (Stable, subscribed to t) has offsets for t-0 and u-0; u:0,3 asks for a
    # partition without an offset too (it succeeds and writes nothing, as the coordinator)
    r = cli("groups", str(log_dir), "--delete-offsets", "--group", "live", "--topic", "t",
            "--topic", "u:0,3", *AT)
    assert r.returncode == 1, r.stderr
    # rows sorted by topic + partition as strings; STATUS padded to 15
    assert r.stdout == (
        "\nError: Encountered some partition-level error, see the follow-up details.\n"
        "\nTOPIC           PARTITION  STATUS         "
        f"\nt               0          {SUBSCRIBED}"
        "\nu               0          Successful     "
        "\nu               3          Successful     \n")
    assert _records(log_dir)[len(before):] == [_tombstone("live", "u", 0)]
    r = cli("groups", str(log_dir), "--describe", "--group", "live", *AT, "-o", "json")
    assert [o["topic"] for o in json.loads(r.stdout)["groups"][0]["offsets"]] == ["t"]
    # "cg", a consumer group (KIP-848) whose member subscribes to t: the same split
    before = _records(log_dir)
    r = cli("groups", str(log_dir), "--delete-offsets", "--group", "cg", "--topic", "u",
            "--topic", "t", *AT, "-o", "json")
    assert r.returncode == 1
    assert json.loads(r.stdout)["partitions"] == [
        {"topic": "t", "partition": 0, "error": "GROUP_SUBSCRIBED_TO_TOPIC"},
        {"topic": "u", "partition": 0, "error": None}]
    assert _records(log_dir)[len(before):] == [_tombstone("cg", "u", 0)]


@needs_research
def test_an_empty_group_loses_its_offsets_and_a_missing_one_fails(log_dir):  # noqa: F811
    before = _records(log_dir)
    r = cli("groups", str(log_dir), "--delete-offsets", "--group", "nope", "--topic", "t",
            *AT)
    assert r.returncode == 1
    assert r.stdout == (
        "\nError: The group id does not exist.\n"
        "\nTOPIC           PARTITION  STATUS         "
        "\nt               0          Error: org.apache.kafka.common.errors."
        "GroupIdNotFoundException: The group id does not exist.\n")
    assert _records(log_dir) == before
    # a topic the directory does not hold: DescribeTopics fails, partition "-"
    r = cli("groups", str(log_dir), "--delete-offsets", "--group", "emptied", "--topic", "t",
            "--topic", "a-topic-name-longer-than-15", *AT, "-o", "json")
    assert r.returncode == 1, r.stderr
    obj = json.loads(r.stdout)
    _validate(obj, "groups-delete-offsets.json")
    assert obj == {"groupId": "emptied", "error": None, "partitions": [
        {"topic": "a-topic-name-longer-than-15", "partition": None,
         "error": "UNKNOWN_TOPIC_OR_PARTITION"},
        {"topic": "t", "partition": 0, "error": None}],
        "appended": {"partition": 0, "offset": len(before)}, "ok": False}
    assert _records(log_dir)[len(before):] == [_tombstone("emptied", "t", 0)]
    # "simple" (no GroupMetadata, offsets of a standalone consumer): a partition
    # without an offset succeeds and writes nothing; the table widens to the longest topic
    r = cli("groups", str(log_dir), "--delete-offsets", "--group", "simple", "--topic",
            "t:1", "--topic", "a-topic-name-longer-than-15:1", *AT)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (
        "Request succeeded for deleting offsets from group simple.\n"
        "\nTOPIC                       PARTITION  STATUS         "
        "\na-topic-name-longer-than-15 1          Successful     "
        "\nt                           1          Successful     \n")
    assert len(_records(log_dir)) == len(before) + 1


@needs_research
def test_a_group_of_another_protocol_with_members_is_refused(tmp_path):
    """ClassicGroup.validateOffsetDelete: Stable and not the consumer protocol (here
    "connect") -> NON_EMPTY_GROUP, every partition failing with it."""
    root = tmp_path / "logs"
    recs = [(key("GroupMetadata", 2, group="w"),
             value("GroupMetadata", 3, protocolType="connect", generation=1,
                   protocol="sessioned", leader="m1", currentStateTimestamp=T0,
                   members=[dict(memberId="m1", groupInstanceId=None, clientId="c",
                                 clientHost="/h", rebalanceTimeout=1000,
                                 sessionTimeout=1000, subscription=b"", assignment=b"")])),
            (key("OffsetCommit", 1, group="w", topic="t", partition=0),
             value("OffsetCommit", 3, offset=5, leaderEpoch=-1, metadata="",
                   commitTimestamp=T0))]
    _write(root / "__consumer_offsets-0",
           [raw_batch(0, [raw_record(i, 0, k, v) for i, (k, v) in enumerate(recs)])])
    _write(root / "t-0", [raw_batch(0, [raw_record(0, 0, None, b"v")])])
    before = _records(root)
    r = cli("groups", str(root), "--delete-offsets", "--group", "w", "--topic", "t", *AT)
    assert r.returncode == 1
    assert r.stdout == (
        "\nError: The group is not empty.\n"
        "\nTOPIC           PARTITION  STATUS         "
        "\nt               0          Error: org.apache.kafka.common.errors."
        "GroupNotEmptyException: The group is not empty.\n")
    assert _records(root) == before


def test_usage(log_dir):  # noqa: F811
    for args in (["--group", "g"], ["--topic", "t"], ["--group", "g", "--group", "h",
                                                      "--topic", "t"],
                 ["--group", "g", "--topic", "t", "--dry-run"]):
        r = cli("groups", str(log_dir), "--delete-offsets", *args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)

