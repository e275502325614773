"""``kafkalog groups`` on real broker directories.

Oracles: the committed offsets and log end offsets are computed here independently of
kafkalog (kafka-python reads the batches, ``struct`` the OffsetCommit/GroupMetadata keys
and values, last record per key wins, tombstones delete); the text layouts are Kafka
4.4.0's ConsumerGroupCommand output, hand-checked against the tool on a 4.4.0 broker
(the bench test in tests/kafka compares them live); the Java collection orders are the
orders the tool printed there."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
from kafkalog_testkit import run_cli_inprocess as cli

from kafkalog_cli.javaorder import (
    BaseHashTable,
    concurrent_hash_map_order,
    hash_map_order,
    java_string_hash,
    topic_partition_hash,
)

KRAFT = "marioBarbozaA__AIBulb/kafka-data"
#: the corpus' offsets are years old (some with a legacy expireTimestamp): these tests
#: read them as loaded, with the broker's clock before every commit, so that its
#: expiration pass removes nothing (expiration: test_groups_expire.py)
KEEP = ("--at", "0")
ZK = "anchor123__kafka/tmp/kafka-logs"


# -- an independent reader of __consumer_offsets ---------------------------------------------

def _records(partition_dir: Path):
    """(offset, key, value) of every record, with kafka-python's batch reader."""
    from kafka.record import MemoryRecords

    for f in sorted(partition_dir.glob("*.log")):
        mr = MemoryRecords(f.read_bytes())
        while True:
            batch = mr.next_batch()
            if batch is None:
                break
            for r in batch:
                yield r.offset, r.key, r.value


def _string(buf: bytes, pos: int) -> tuple[str | None, int]:
    (n,) = struct.unpack_from(">h", buf, pos)
    if n < 0:
        return None, pos + 2
    return buf[pos + 2:pos + 2 + n].decode(), pos + 2 + n


def expected_state(log_dir: Path) -> tuple[dict, dict]:
    """``({group: {(topic, partition): offset}}, {group: member count})`` of the live groups
    (a GroupMetadata tombstone removes the group; an OffsetCommit tombstone the offset)."""
    offsets: dict = {}
    groups: dict = {}
    for d in sorted(log_dir.glob("__consumer_offsets-*")):
        for _, key, value in _records(d):
            (kind,) = struct.unpack_from(">h", key, 0)
            group, pos = _string(key, 2)
            if kind == 1:
                topic, pos = _string(key, pos)
                (part,) = struct.unpack_from(">i", key, pos)
                if value is None:
                    offsets.get(group, {}).pop((topic, part), None)
                else:
                    (off,) = struct.unpack_from(">q", value, 2)
                    offsets.setdefault(group, {})[(topic, part)] = off
                    groups.setdefault(group, 0)
            elif kind == 2:
                if value is None:
                    groups.pop(group, None)
                    continue
                (version,) = struct.unpack_from(">h", value, 0)
                assert version <= 3
                _, pos = _string(value, 2)  # protocolType
                pos += 4  # generation
                _, pos = _string(value, pos)  # protocol
                _, pos = _string(value, pos)  # leader
                pos += 8 if version >= 2 else 0  # currentStateTimestamp
                (members,) = struct.unpack_from(">i", value, pos)
                groups[group] = members
    return {g: o for g, o in offsets.items() if g in groups}, groups


def log_end_offset(partition_dir: Path) -> int:
    last = -1
    for off, _, _ in _records(partition_dir):
        last = off
    names = sorted(p.name for p in partition_dir.glob("*.log"))
    return last + 1 if last >= 0 else int(names[-1][:20])


@pytest.mark.corpus
@pytest.mark.parametrize("repo", [KRAFT, ZK, "Rishab-Bo__Stream-MA-Prediction-Pipeline/kafka-data",
                                  "DanielMorales9__kafkafun/data/kafka",
                                  "DonaldY__kafka-2.7.1/kafka-logs",
                                  "xpxwo100__bullShit/tmp/kafka-logs"])
def test_describe_all_groups_equals_an_independent_replay(corpus_root, repo):
    log_dir = corpus_root / repo
    offsets, groups = expected_state(log_dir)
    r = cli("groups", *KEEP, str(log_dir), "--describe", "--all-groups", "-o", "json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert {g["groupId"] for g in got["groups"]} == set(groups)
    for g in got["groups"]:
        rows = {(o["topic"], o["partition"]): o for o in g["offsets"]}
        committed = {tp: o["currentOffset"] for tp, o in rows.items()
                     if o["currentOffset"] is not None}
        assert committed == offsets.get(g["groupId"], {}), g["groupId"]
        assert g["state"] == ("Stable" if groups[g["groupId"]] else "Empty")
        assert len(g["members"]) == groups[g["groupId"]]
        for (t, p), o in rows.items():
            d = log_dir / f"{t}-{p}"
            if d.is_dir():
                leo = log_end_offset(d)
                assert o["logEndOffset"] == leo
                if o["currentOffset"] is not None:
                    assert o["lag"] == leo - o["currentOffset"]
            else:
                assert o["logEndOffset"] is None and o["lag"] is None


@pytest.mark.corpus
def test_describe_text_is_the_tools_layout(corpus_root):
    """Values checked by hand with `kafkalog read --offsets-decoder` and kafka-python:
    my-app committed 16 on my-topic-0, whose log ends at 16; the console consumer's group
    has a member (GroupMetadata generation 1) and no committed offset."""
    r = cli("groups", *KEEP, str(corpus_root / KRAFT), "--describe", "--all-groups")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (
        "\n"
        "GROUP                  TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG "
        "            CONSUMER-ID                                           HOST            "
        "CLIENT-ID\n"
        "console-consumer-33452 my-topic        0          -               16              - "
        "              console-consumer-b29d17e4-6486-425f-8e35-cd47ab3e2158 /127.0.0.1      "
        "console-consumer\n"
        "\n"
        "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG       "
        "      CONSUMER-ID                                 HOST            CLIENT-ID\n"
        "my-app          my-topic        0          16              16              0         "
        "      my-app-cd9f6bce-26a9-44b4-8a32-c7a6f117dcee /172.19.0.1     my-app\n")
    r = cli("groups", *KEEP, str(corpus_root / ZK), "--describe", "--group",
            "console-consumer-27984", "--state")
    assert r.stdout == (
        "\nGROUP                  COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE        "
        "        #MEMBERS\n"
        "console-consumer-27984 -  (0)                    -                    Empty        "
        "        0\n")
    assert r.stderr == "\nConsumer group 'console-consumer-27984' has no active members.\n"


@pytest.mark.corpus
def test_deleted_and_unknown_groups(corpus_root):
    """DonaldY's console-consumer-55231: GroupMetadata, then its tombstone (offset 2 of
    __consumer_offsets-17): the group is gone, as the coordinator's removeGroup leaves it."""
    d = corpus_root / "DonaldY__kafka-2.7.1/kafka-logs"
    r = cli("groups", *KEEP, str(d), "--list")
    assert (r.returncode, r.stdout) == (0, "")
    r = cli("groups", *KEEP, str(d), "--describe", "--group", "console-consumer-55231")
    assert r.returncode == 1
    # the tool fails the whole describe on a group the coordinator does not have
    assert r.stdout == ("\nError: Executing consumer group command failed due to org.apache."
                        "kafka.common.errors.GroupIdNotFoundException: Group "
                        "console-consumer-55231 not found.\n")
    r = cli("groups", *KEEP, str(d), "--describe", "--group", "nope", "--group", "nix", "--members")
    # the first missing one in the order of the tool's HashMap of group ids
    assert r.stdout.endswith("Group nope not found.\n")


@pytest.mark.corpus
def test_reset_offsets_plan_execute_and_refusal(corpus_root, tmp_path):
    log_dir = tmp_path / "logs"
    shutil.copytree(corpus_root / ZK, log_dir)
    # a group with a member in the log: refused, as the tool refuses a group not inactive
    r = cli("groups", *KEEP, str(log_dir), "--reset-offsets", "--group", "ai-interview",
            "--all-topics", "--to-earliest", "--execute")
    assert r.returncode == 1
    assert r.stdout == (
        "\nError: Assignments can only be reset if the group 'ai-interview' is inactive, but "
        "the current state is Stable.\n\nGROUP           TOPIC           PARTITION  "
        "NEW-OFFSET\n")
    # an empty group: the plan, then the records
    g = "console-consumer-27984"
    r = cli("groups", *KEEP, str(log_dir), "--reset-offsets", "--group", g, "--topic", "test",
            "--to-offset", "2", "--dry-run")
    assert r.stdout == ("\nGROUP                  TOPIC           PARTITION  NEW-OFFSET\n"
                        f"{g} test            0          2\n")
    before = {p: sorted(f.stat().st_size for f in p.glob("*.log"))
              for p in log_dir.glob("__consumer_offsets-*")}
    r = cli("groups", *KEEP, str(log_dir), "--reset-offsets", "--group", g, "--topic", "test:0",
            "--shift-by", "-1", "--execute", "-o", "json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    # Utils.abs("console-consumer-27984".hashCode()) % 50, computed with the JDK's rule
    h = java_string_hash(g)
    assert res["groups"][0]["appended"]["partition"] == abs(h) % 50 == 21  # where its records are
    assert res["groups"][0]["offsets"] == [{"topic": "test", "partition": 0, "offset": 2}]
    changed = [p for p in before if sorted(f.stat().st_size for f in p.glob("*.log"))
               != before[p]]
    assert [p.name for p in changed] == ["__consumer_offsets-21"]
    offsets, _ = expected_state(log_dir)
    assert offsets[g] == {("test", 0): 2}
    # the record: key v1, value v4 (flexible) with the topic id of partition.metadata
    *_, (off, key, value) = list(_records(log_dir / "__consumer_offsets-21"))
    assert struct.unpack_from(">hq", value, 0) == (4, 2)
    r = cli("groups", *KEEP, str(log_dir), "--describe", "--group", g)
    assert f"{g} test            0          2               9               7" in r.stdout


@pytest.mark.corpus
def test_reset_to_datetime_and_export(corpus_root):
    log_dir = corpus_root / ZK
    r = cli("groups", *KEEP, str(log_dir), "--reset-offsets", "--group", "console-consumer-27984",
            "--all-topics", "--to-datetime", "2100-01-01T00:00:00.000", "--export")
    # no record that late: the tool warns and falls back to the latest offset (9)
    assert r.stdout == ("\nWarn: Partition 0 from topic test is empty. Falling back to "
                        "latest known offset.\ntest,0,9\n\n")
    assert r.stderr.startswith("WARN: No action will be performed")


def test_usage_errors(tmp_path):
    r = cli("groups", *KEEP, str(tmp_path), "--list", "--describe")
    assert r.returncode == 2 and "exactly one action" in r.stderr


# -- Java's collection orders: what Kafka 4.4.0's tools printed -------------------------------

def test_java_orders_as_the_tools_print_them():
    # kafka-log-dirs.sh: {"brokers":...,"version":1}, partition keys in this order
    assert hash_map_order(["version", "brokers"]) == ["brokers", "version"]
    assert hash_map_order(["partition", "size", "offsetLag", "isFuture"]) == [
        "partition", "size", "offsetLag", "isFuture"]
    assert hash_map_order(["logDir", "error", "partitions"]) == ["partitions", "error", "logDir"]
    tps = [("__consumer_offsets", p) for p in range(5)] + [("t1", p) for p in range(3)] + [
        ("t2", 0)]
    assert [f"{t}-{p}" for t, p in hash_map_order(tps, lambda tp: topic_partition_hash(*tp))] == [
        "__consumer_offsets-0", "__consumer_offsets-3", "t1-2", "__consumer_offsets-4",
        "t1-1", "__consumer_offsets-1", "t1-0", "__consumer_offsets-2", "t2-0"]
    # kafka-consumer-groups.sh --list: shards (ConcurrentHashMap), each shard's groups
    # (TimelineHashMap, created in this order, gd deleted), then the admin's HashMap
    shards = concurrent_hash_map_order([("__consumer_offsets", p) for p in range(5)],
                                       lambda tp: topic_partition_hash(*tp))
    assert [p for _, p in shards] == [0, 3, 4, 1, 2]
    t = BaseHashTable()
    for g in ("gc-live", "gn", "gn-live", "gs", "gd"):
        t.add(g)
    t.remove("gd")
    assert list(t) == ["gs", "gn", "gc-live", "gn-live"]
    assert hash_map_order(list(t) + ["gc"]) == ["gn-live", "gc-live", "gn", "gs", "gc"]
    # Utils.abs(Integer.MIN_VALUE) is 0: "polygenelubricants".hashCode() == MIN_VALUE
    assert java_string_hash("polygenelubricants") == -(1 << 31)


@pytest.mark.corpus
def test_bytes_after_the_last_batch_are_named(corpus_root, tmp_path):
    """A torn tail of __consumer_offsets: the groups before it are answered, the bytes
    named (file and position) on stderr, exit 1."""
    log_dir = tmp_path / "logs"
    shutil.copytree(corpus_root / ZK, log_dir)
    seg = log_dir / "__consumer_offsets-21" / f"{0:020d}.log"
    size = seg.stat().st_size
    with seg.open("ab") as f:
        f.write(b"\x00" * 7 + b"\x99torn")
    r = cli("groups", *KEEP, str(log_dir), "--list")
    assert r.returncode == 1
    assert r.stdout.splitlines() == ["console-consumer-27984", "ai-interview"]
    assert f"{seg} at byte {size}: 12 invalid bytes after the last whole batch" in r.stderr


def test_a_record_claiming_a_huge_member_count_is_one_line(tmp_path):
    """A GroupMetadataValue whose members array claims 2^31-1 entries with no bytes
    left: refused when the count is read (no allocation), the record named in one line with
Kafka's message (it was two lines: construct's path, then the message)."""
    import base64

    from kafkalog_testkit import run_cli_measured

    def s(x: str) -> bytes:
        return struct.pack(">h", len(x)) + x.encode()

    key = struct.pack(">h", 2) + s("g")
    value = (struct.pack(">h", 3) + s("consumer") + struct.pack(">i", 1) + s("range") + s("m")
             + struct.pack(">qi", 0, 0x7FFFFFFF))
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"key": base64.b64encode(key).decode(), "keyEncoding": "base64",
                               "value": base64.b64encode(value).decode(),
                               "valueEncoding": "base64"}) + "\n")
    log_dir = tmp_path / "logs"
    (log_dir / "__consumer_offsets-0").mkdir(parents=True)
    assert cli("produce", "--log-dir", str(log_dir), "--topic", "__consumer_offsets",
               "--format", "jsonl", "--no-fsync", str(src)).returncode == 0
    r = run_cli_measured("groups", str(log_dir), "--describe", "--all-groups")
    assert r.returncode == 3
    assert r.stderr == ("error: __consumer_offsets-0: the record at offset 0 does not load: "
                        "Tried to allocate a collection of size 2147483647, but there are "
                        "only 0 bytes remaining.\n")   # Kafka's generated reader's text
    assert r.peak_rss_kib < 96 * 1024
