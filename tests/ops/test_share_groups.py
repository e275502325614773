"""``share-groups`` on a share group built from its records: a member with an assignment
(the bench test in tests/kafka_bench/test_groups_expire_against_kafka.py has none) and a
share-partition whose state comes from a snapshot then an update.

The records whose 4.4 layout the research definitions (2024) do not have are written by
hand from Kafka 4.4's message definitions: ShareGroupMetadataValue (with its
MetadataHash), ShareGroupStatePartitionMetadataValue
(initializing, initialized, deleting topics), ShareSnapshotValue / ShareUpdateValue (with
the tagged DeliveryCompleteCount of KIP-1226). The expected text is the format strings of
4.4's ShareGroupCommand (``%-15s`` columns, ``#PARTITIONS %-12s``, ``MEMBER-EPOCH
%-13s``, ``START-OFFSET %-13s``); the expected lag is GroupCoordinatorService's
``end offset - start offset - deliveryCompleteCount`` by hand: 12 - 4 - 3 = 5."""

from __future__ import annotations

import base64
import json
import struct
import sys
from pathlib import Path

from kafkalog_testkit import raw_batch, raw_record
from kafkalog_testkit import run_cli_inprocess as cli

sys.path.insert(0, str(Path(__file__).parent))
from test_groups_kip848 import TOPIC_ID, _write, key, needs_research, value  # noqa: E402

TID = base64.urlsafe_b64decode(TOPIC_ID + "==")


def _uvarint(n: int) -> bytes:
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def _cstr(s: str) -> bytes:
    return _uvarint(len(s) + 1) + s.encode()


def _state_partition_metadata() -> bytes:
    """ShareGroupStatePartitionMetadataValue v0: no initializing topic, t's partitions 0
    and 1 initialized, no deleting topic."""
    initialized = _uvarint(2) + TID + _cstr("t") + _uvarint(3) + struct.pack(">ii", 0, 1) + b"\0"
    return struct.pack(">h", 0) + _uvarint(1) + initialized + _uvarint(1) + b"\0"


def _share_key(rtype: int, partition: int) -> bytes:
    return struct.pack(">hh", rtype, 2) + b"sg" + TID + struct.pack(">i", partition)


def _batch_bytes(first: int, last: int) -> bytes:
    return struct.pack(">qqbh", first, last, 2, 1) + b"\0"


def _snapshot(start: int, leader_epoch: int) -> bytes:
    """ShareSnapshotValue v0 (4.4): snapshot epoch, state epoch, leader epoch, start
    offset, create and write timestamps, one state batch; no DeliveryCompleteCount."""
    return (struct.pack(">hiiiqqq", 0, 0, 1, leader_epoch, start, 5, 5)
            + _uvarint(2) + _batch_bytes(start, start + 1) + b"\0")


def _update(start: int, leader_epoch: int, delivery_complete: int) -> bytes:
    """ShareUpdateValue v0 (4.4) with the tagged DeliveryCompleteCount (tag 0, 4 bytes)."""
    tags = _uvarint(1) + _uvarint(0) + _uvarint(4) + struct.pack(">i", delivery_complete)
    return (struct.pack(">hiiq", 0, 0, leader_epoch, start) + _uvarint(2)
            + _batch_bytes(start, start + 3) + tags)


def _log_dir(tmp_path) -> Path:
    root = tmp_path / "logs"
    member = dict(groupId="sg", memberId="m1")
    recs = [
        (key("ShareGroupMemberMetadata", 10, **member),
         value("ShareGroupMemberMetadata", clientId="c1", clientHost="/10.0.0.1",
               subscribedTopicNames=["t"])),
        # ShareGroupMetadataValue v0 (4.4: epoch, metadataHash), by hand
        (key("ShareGroupMetadata", 11, groupId="sg"), struct.pack(">hiq", 0, 5, 0) + b"\0"),
        (key("ShareGroupTargetAssignmentMetadata", 12, groupId="sg"),
         value("ShareGroupTargetAssignmentMetadata", assignmentEpoch=5)),
        (key("ShareGroupCurrentMemberAssignment", 14, **member),
         value("ShareGroupCurrentMemberAssignment", memberEpoch=5, previousMemberEpoch=4,
               state=0, assignedPartitions=[{"topicId": TOPIC_ID, "partitions": [1, 0]}])),
        (key("ShareGroupStatePartitionMetadata", 15, groupId="sg"),
         _state_partition_metadata()),
    ]
    _write(root / "__consumer_offsets-0",
           [raw_batch(0, [raw_record(i, 0, k, v) for i, (k, v) in enumerate(recs)])])
    state = [(_share_key(0, 0), _snapshot(2, 7)), (_share_key(1, 0), _update(4, -1, 3))]
    _write(root / "__share_group_state-0",
           [raw_batch(0, [raw_record(i, 0, k, v) for i, (k, v) in enumerate(state)])])
    (root / "meta.properties").write_text("version=1\nnode.id=3\n")
    for p in (0, 1):
        _write(root / f"t-{p}", [raw_batch(0, [raw_record(i, 0, None, b"v")
                                               for i in range(12)])], TOPIC_ID)
    return root


@needs_research
def test_share_group_describe(tmp_path):
    d = str(_log_dir(tmp_path))
    r = cli("share-groups", d, "--describe", "--group", "sg", "--verbose")
    assert r.stdout == (
        "\nGROUP           TOPIC           PARTITION  LEADER-EPOCH  START-OFFSET  LAG\n"
        "sg              t               0          7             4             5\n"
        "sg              t               1          -             -             -\n")
    r = cli("share-groups", d, "--describe", "--group", "sg", "--members", "--verbose")
    assert (r.stdout, r.stderr) == (
        "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS  "
        "MEMBER-EPOCH  ASSIGNMENT\n"
        "sg              m1              /10.0.0.1       c1              2            "
        "5             t:0,1\n", "")
    r = cli("share-groups", d, "--describe", "--group", "sg", "--state", "--verbose")
    assert r.stdout == (
        "\nGROUP           COORDINATOR (ID)          STATE           GROUP-EPOCH  "
        "ASSIGNMENT-EPOCH  #MEMBERS\n"
        "sg              -  (3)                    Stable          5            5       "
        "          1\n")
    r = cli("share-groups", d, "--list")
    assert r.stdout == "sg\n"
    # not a consumer group for kafka-consumer-groups, not listed by it
    r = cli("groups", d, "--describe", "--group", "sg")
    assert r.stdout.endswith("GroupIdNotFoundException: Group sg is not a consumer group.\n")
    assert cli("groups", d, "--list").stdout == ""


@needs_research
def test_share_group_json_validates(tmp_path):
    from importlib import resources

    import jsonschema

    schema = json.loads(resources.files("kafkalog_cli.schemas").joinpath(
        "share-groups.json").read_text())
    d = str(_log_dir(tmp_path))
    for args in (["--list"], ["--describe", "--all-groups"], ["--describe", "--group", "x"]):
        obj = json.loads(cli("share-groups", d, *args, "-o", "json").stdout)
        jsonschema.validate(obj, schema)
    (g,) = obj["groups"]
    assert (g["type"], g["state"], obj["ok"]) == (None, "Dead", False)
