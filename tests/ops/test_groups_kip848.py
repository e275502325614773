"""``groups`` on KIP-848 consumer-group records and a transactional offset commit, built
byte by byte from Kafka's own JSON message definitions (``../shared/research/
kafka-messages``, the generic encoder of tests/decoders/kafka_json_messages.py,
independent of kafkalog's declarations). The expected states are ConsumerGroup's rules
applied by hand: a member whose epoch is behind the target assignment's epoch makes the
group Reconciling; a group whose member, assignment and metadata records are tombstoned
is gone. (The bench test in tests/kafka compares the same with a 4.4.0 broker.)"""

from __future__ import annotations

import base64
import json
import struct
import sys
from pathlib import Path

import pytest
from kafkalog_testkit import raw_batch, raw_record
from kafkalog_testkit import run_cli_inprocess as cli

sys.path.insert(0, str(Path(__file__).parents[1] / "decoders"))
from kafka_json_messages import RESEARCH, default, encode, has, load  # noqa: E402

TOPIC_ID = "Uj5wn_FqTXirEASvVZRY1w"
needs_research = pytest.mark.skipif(not RESEARCH.is_dir(), reason=f"no definitions at {RESEARCH}")


def _msg(name: str, values: dict, version: int = 0) -> bytes:
    """The message at ``version``; fields not given take their definition's default."""
    d = load(RESEARCH / "group-coordinator" / f"{name}.json")
    full = {f["_name"]: default(f) for f in d["_fields"] if has(f["_versions"], version)}
    return encode(d, {**full, **values}, version)


def key(name: str, record_type: int, **values) -> bytes:
    return struct.pack(">h", record_type) + _msg(name + "Key", values)


def value(name: str, version: int = 0, **values) -> bytes:
    return struct.pack(">h", version) + _msg(name + "Value", values, version)


def _write(d: Path, batches: list[bytes], topic_id: str | None = None) -> None:
    d.mkdir(parents=True)
    (d / f"{0:020d}.log").write_bytes(b"".join(batches))
    if topic_id:
        (d / "partition.metadata").write_text(f"version: 0\ntopic_id: {topic_id}\n")


@pytest.fixture
def log_dir(tmp_path) -> Path:
    root = tmp_path / "logs"
    tid = list(base64.urlsafe_b64decode(TOPIC_ID + "=="))
    tp = {"topicId": TOPIC_ID}
    member = dict(groupId="g848", memberId="m1")
    recs = [
        (key("ConsumerGroupMemberMetadata", 5, **member),
         value("ConsumerGroupMemberMetadata", clientId="c1", clientHost="/10.0.0.1",
               subscribedTopicNames=["t"], rebalanceTimeoutMs=300000)),
        (key("ConsumerGroupMetadata", 3, groupId="g848"), value("ConsumerGroupMetadata", epoch=3)),
        (key("ConsumerGroupTargetAssignmentMember", 7, **member),
         value("ConsumerGroupTargetAssignmentMember",
               topicPartitions=[{**tp, "partitions": [0, 1]}])),
        (key("ConsumerGroupTargetAssignmentMetadata", 6, groupId="g848"),
         value("ConsumerGroupTargetAssignmentMetadata", assignmentEpoch=3)),
        (key("ConsumerGroupCurrentMemberAssignment", 8, **member),
         value("ConsumerGroupCurrentMemberAssignment", memberEpoch=2, previousMemberEpoch=1,
               state=0, assignedPartitions=[{**tp, "partitions": [0]}],
               partitionsPendingRevocation=[])),
        (key("OffsetCommit", 1, group="g848", topic="t", partition=0),
         value("OffsetCommit", 3, offset=5, leaderEpoch=-1, metadata="", commitTimestamp=1)),
        # a group that left and was deleted: tombstones, as the coordinator writes them
        (key("ConsumerGroupMemberMetadata", 5, groupId="gone", memberId="m9"),
         value("ConsumerGroupMemberMetadata", clientId="c9", clientHost="/h",
               subscribedTopicNames=["t"])),
        (key("ConsumerGroupMetadata", 3, groupId="gone"), value("ConsumerGroupMetadata", epoch=1)),
        (key("ConsumerGroupCurrentMemberAssignment", 8, groupId="gone", memberId="m9"), None),
        (key("ConsumerGroupMemberMetadata", 5, groupId="gone", memberId="m9"), None),
        (key("ConsumerGroupMetadata", 3, groupId="gone"), None),
    ]
    assert tid  # the topic id is the one partition.metadata names
    plain = raw_batch(0, [raw_record(i, 0, k, v) for i, (k, v) in enumerate(recs)])
    # a transactional commit of t-1 by producer 7, then its COMMIT marker
    n = len(recs)
    txn = raw_batch(n, [raw_record(0, 0, key("OffsetCommit", 1, group="g848", topic="t",
                                              partition=1),
                                   value("OffsetCommit", 3, offset=8, leaderEpoch=-1,
                                         metadata="", commitTimestamp=2))],
                    attrs=0x10, pid=7, epoch=0)
    marker = raw_batch(n + 1, [raw_record(0, 0, struct.pack(">hh", 0, 1),
                                          struct.pack(">hi", 0, 0))],
                       attrs=0x30, pid=7, epoch=0)
    _write(root / "__consumer_offsets-0", [plain, txn, marker])
    for p, count in ((0, 9), (1, 12)):
        _write(root / f"t-{p}", [raw_batch(0, [raw_record(i, 0, None, b"v")
                                               for i in range(count)])], TOPIC_ID)
    return root


@needs_research
def test_consumer_group_replay(log_dir):
    r = cli("groups", str(log_dir), "--list", "--type", "--state")
    assert r.stdout.splitlines() == [
        "GROUP                     TYPE                 STATE               ",
        "g848                      Consumer             Reconciling         "]
    r = cli("groups", str(log_dir), "--describe", "--group", "g848")
    assert r.stderr == "\nWarning: Consumer group 'g848' is rebalancing.\n"
    assert r.stdout == (
        "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG      "
        "       CONSUMER-ID     HOST            CLIENT-ID\n"
        "g848            t               0          5               9               4        "
        "       m1              /10.0.0.1       c1\n"
        "g848            t               1          8               12              4        "
        "       -               -               -\n")
    r = cli("groups", str(log_dir), "--describe", "--group", "g848", "--members", "--verbose")
    assert r.stdout == (
        "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     "
        "CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT   \n"
        "g848            m1              /10.0.0.1       c1              1               "
        "2               t:0                  3               t:0,1               \n")
    r = cli("groups", str(log_dir), "--describe", "--group", "g848", "--state", "--verbose",
            "-o", "json")
    (g,) = json.loads(r.stdout)["groups"]
    assert (g["groupEpoch"], g["targetAssignmentEpoch"], g["assignmentStrategy"]) == (
        3, 3, "uniform")
    r = cli("groups", str(log_dir), "--describe", "--group", "gone")
    assert r.stdout.endswith("GroupIdNotFoundException: Group gone not found.\n")
