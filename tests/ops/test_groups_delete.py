"""``groups --delete`` on hand-built groups (the fixture of test_groups_expire.py): an Empty
classic group is deleted with the coordinator's tombstones (its offset's, then its
GroupMetadata's; keys written here by hand), a group with members is refused with the
tool's GroupNotEmptyException line, a missing one with GroupIdNotFoundException, and
nothing is written for them. The bench test (tests/kafka_bench/
test_groups_expire_against_kafka.py) compares text and records with a 4.4 broker's."""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

from kafkalog_testkit import run_cli_inprocess as cli

sys.path.insert(0, str(Path(__file__).parent))
from test_groups_expire import T0, log_dir  # noqa: E402, F401
from test_groups_kip848 import needs_research  # noqa: E402

AT = ("--at", str(T0 + 1000))


def _records(d: Path) -> list[tuple[bytes, bytes | None]]:
    from kafka.record import MemoryRecords

    mr = MemoryRecords((d / "__consumer_offsets-0" / f"{0:020d}.log").read_bytes())
    out = []
    while (batch := mr.next_batch()) is not None:
        out.extend((r.key, r.value) for r in batch)
    return out


@needs_research
def test_delete_an_empty_group_and_refuse_the_others(log_dir):  # noqa: F811
    before = _records(log_dir)
    r = cli("groups", str(log_dir), "--delete", "--group", "live", "--group", "nope", *AT)
    assert r.returncode == 1
    # the tool's HashMap order: "nope".hashCode() 3387254 -> bucket 5, "live" 3322092 -> 14
    assert r.stdout == (
        "\nError: Deletion of some consumer groups failed:\n"
        "* Group 'nope' could not be deleted due to: org.apache.kafka.common.errors."
        "GroupIdNotFoundException: The group id does not exist.\n"
        "* Group 'live' could not be deleted due to: org.apache.kafka.common.errors."
        "GroupNotEmptyException: The group is not empty.\n")
    assert _records(log_dir) == before
    r = cli("groups", str(log_dir), "--delete", "--group", "emptied", *AT, "-o", "json")
    assert r.returncode == 0, r.stderr
    _validate(json.loads(r.stdout))
    assert json.loads(r.stdout) == {"deleted": [{"groupId": "emptied", "partition": 0,
                                                 "offset": len(before)}],
                                    "failed": [], "ok": True}
    # OffsetCommitKey v1 (group, topic, partition), then GroupMetadataKey v2, tombstones
    assert _records(log_dir)[len(before):] == [
        (struct.pack(">hh", 1, 7) + b"emptied" + struct.pack(">h", 1) + b"t"
         + struct.pack(">i", 0), None),
        (struct.pack(">hh", 2, 7) + b"emptied", None)]
    r = cli("groups", str(log_dir), "--list", *AT)
    assert "emptied" not in r.stdout.split() and "live" in r.stdout.split()
    r = cli("groups", str(log_dir), "--delete", "--group", "simple", *AT)
    assert r.stdout == "Deletion of requested consumer groups ('simple') was successful.\n"


def _validate(obj, schema: str = "groups-delete.json") -> None:
    from importlib import resources

    import jsonschema

    jsonschema.validate(obj, json.loads(resources.files("kafkalog_cli.schemas").joinpath(
        schema).read_text()))
