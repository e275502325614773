"""kafkalog's declarations against Apache Kafka's own JSON message definitions.

For every definition in ``../shared/research/kafka-messages`` (skipped when absent):

* **agreement**: kafkalog declares the same record name, type id, versions, flexible
  versions and fields (names, types, version ranges, nullable versions, tagged versions
  and tags, defaults, nested structs), either as the current layout or as one of its
  ``earlier`` layouts; what kafkalog adds (tagged fields and versions of Kafka's later
  trees) is listed in :data:`NEWER` and must be exactly that;
* **golden bytes**: records of every version are built from the definition by the
  generic encoder in :mod:`kafka_json_messages` (independent of kafkalog) with three
  value sets (non-default values everywhere with tagged fields set, nulls, empties),
  framed as the topic frames them, decoded by kafkalog's decoder for that topic and
  compared field by field with the JSON Kafka's converters write.

The later definitions kafkalog also declares (:data:`LATER_DEFINITIONS`, transcribed in
Kafka's JSON shape from the apache/kafka commits named there) go through the same two
checks.
"""

from __future__ import annotations

import struct

import pytest
from kafka_json_messages import (
    RESEARCH,
    default,
    definition,
    encode,
    has,
    load,
    research_files,
    sample,
    snake_upper,
    to_json,
    uvarint,
)

from kafkalog_cli.decoders import (
    ClusterMetadataDecoder,
    ConsumerOffsetsDecoder,
    RemoteLogMetadataDecoder,
    ShareGroupStateDecoder,
    TransactionLogDecoder,
    decode_control_record,
)
from kafkalog_cli.decoders import group_messages as gm
from kafkalog_cli.decoders import metadata_messages as mm
from kafkalog_cli.decoders import raft_messages as rm
from kafkalog_cli.decoders import remote_messages as rmm
from kafkalog_cli.decoders import share_messages as sm
from kafkalog_cli.decoders import txn_messages as tm
from kafkalog_cli.decoders.cluster_metadata import KRAFT_CONTROL_MESSAGES

FILES = research_files()
needs_research = pytest.mark.skipif(not FILES, reason=f"no definitions at {RESEARCH}")

#: the KRaft control records' type ids (ControlRecordType), by message name
CONTROL_TYPES = {m.name: t for t, (_, m) in KRAFT_CONTROL_MESSAGES.items()}

#: What kafkalog declares beyond the research folder's (December 2024) definitions, from
#: later Kafka trees: ``{message: {field path: "source"}}`` for added fields and
#: ``{message: {"validVersions": range}}`` for added versions. Anything else that differs
#: fails the agreement test.
NEWER = {
    "ConsumerGroupMetadataValue": {"metadataHash": "KIP-1101, apache/kafka 266ed84",
                                   "creationTimeMs": "KIP-1282, apache/kafka 266ed84"},
    "ConsumerGroupCurrentMemberAssignmentValue": {
        "assignedPartitions.assignmentEpochs": "KIP-1251, apache/kafka 6541f94",
        "partitionsPendingRevocation.assignmentEpochs": "KIP-1251, apache/kafka 6541f94"},
    "ConsumerGroupTargetAssignmentMetadataValue": {
        "assignmentTimestamp": "KIP-1263, apache/kafka 07b06d0"},
    "StreamsGroupTargetAssignmentMetadataValue": {"assignmentTimestamp": "KIP-1263"},
    # OffsetCommit v10's topic ids: a 4.4.0 broker writes it (tests/ops/test_groups.py)
    "OffsetCommitValue": {"topicId": "KIP-848 OffsetCommit v10, Kafka 4.1"},
    "RemoteLogSegmentMetadataRecord": {"brokerLeaderEpoch": "apache/kafka 1acb523",
                                       "validVersions": (0, 1)},
}

#: Messages whose research definition is one of kafkalog's ``earlier`` layouts: Kafka
#: changed them incompatibly, at the same version, after December 2024.
EARLIER = {"ShareGroupMetadataValue", "ShareGroupStatePartitionMetadataValue",
           "StreamsGroupMetadataValue", "ShareSnapshotValue", "ShareUpdateValue"}

#: The later definitions kafkalog declares as current layouts, in Kafka's JSON shape.
LATER_DEFINITIONS = [
    ("group-coordinator", {  # apache/kafka 266ed84
        "apiKey": 3, "type": "coordinator-value", "name": "ConsumerGroupMetadataValue",
        "validVersions": "0", "flexibleVersions": "0+", "fields": [
            {"name": "Epoch", "versions": "0+", "type": "int32"},
            {"name": "MetadataHash", "versions": "0+", "type": "int64", "default": 0,
             "taggedVersions": "0+", "tag": 0},
            {"name": "CreationTimeMs", "versions": "0+", "type": "int64", "default": -1,
             "taggedVersions": "0+", "tag": 1}]}),
    ("group-coordinator", {  # apache/kafka 31f85dd
        "apiKey": 11, "type": "coordinator-value", "name": "ShareGroupMetadataValue",
        "validVersions": "0", "flexibleVersions": "0+", "fields": [
            {"name": "Epoch", "type": "int32", "versions": "0+"},
            {"name": "MetadataHash", "versions": "0+", "type": "int64"}]}),
    ("group-coordinator", {  # apache/kafka 25002b6
        "apiKey": 15, "type": "coordinator-value",
        "name": "ShareGroupStatePartitionMetadataValue", "validVersions": "0",
        "flexibleVersions": "0+", "fields": [
            {"name": "InitializingTopics", "versions": "0+", "type": "[]TopicPartitionsInfo"},
            {"name": "InitializedTopics", "versions": "0+", "type": "[]TopicPartitionsInfo"},
            {"name": "DeletingTopics", "versions": "0+", "type": "[]TopicInfo"}],
        "commonStructs": [
            {"name": "TopicPartitionsInfo", "versions": "0+", "fields": [
                {"name": "TopicId", "type": "uuid", "versions": "0+"},
                {"name": "TopicName", "type": "string", "versions": "0+"},
                {"name": "Partitions", "type": "[]int32", "versions": "0+"},
                {"name": "CreateTimestamp", "type": "int64", "versions": "0+"}]},
            {"name": "TopicInfo", "versions": "0+", "fields": [
                {"name": "TopicId", "type": "uuid", "versions": "0+"},
                {"name": "TopicName", "type": "string", "versions": "0+"}]}]}),
    ("group-coordinator", {  # apache/kafka 6541f94
        "apiKey": 8, "type": "coordinator-value",
        "name": "ConsumerGroupCurrentMemberAssignmentValue", "validVersions": "0",
        "flexibleVersions": "0+", "fields": [
            {"name": "MemberEpoch", "versions": "0+", "type": "int32"},
            {"name": "PreviousMemberEpoch", "versions": "0+", "type": "int32"},
            {"name": "State", "versions": "0+", "type": "int8"},
            {"name": "AssignedPartitions", "versions": "0+", "type": "[]TopicPartitions"},
            {"name": "PartitionsPendingRevocation", "versions": "0+",
             "type": "[]TopicPartitions"}],
        "commonStructs": [{"name": "TopicPartitions", "versions": "0+", "fields": [
            {"name": "TopicId", "type": "uuid", "versions": "0+"},
            {"name": "Partitions", "type": "[]int32", "versions": "0+"},
            {"name": "AssignmentEpochs", "versions": "0+", "nullableVersions": "0+",
             "taggedVersions": "0+", "tag": 0, "type": "[]int32", "default": "null"}]}]}),
    ("share-coordinator", {  # apache/kafka 0c9eef5
        "apiKey": 1, "type": "coordinator-value", "name": "ShareUpdateValue",
        "validVersions": "0", "flexibleVersions": "0+", "fields": [
            {"name": "SnapshotEpoch", "type": "int32", "versions": "0+"},
            {"name": "LeaderEpoch", "type": "int32", "versions": "0+"},
            {"name": "StartOffset", "type": "int64", "versions": "0+"},
            {"name": "DeliveryCompleteCount", "type": "int32", "versions": "0+",
             "taggedVersions": "0+", "tag": 0, "default": "-1"},
            {"name": "StateBatches", "type": "[]StateBatch", "versions": "0+", "fields": [
                {"name": "FirstOffset", "type": "int64", "versions": "0+"},
                {"name": "LastOffset", "type": "int64", "versions": "0+"},
                {"name": "DeliveryState", "type": "int8", "versions": "0+"},
                {"name": "DeliveryCount", "type": "int16", "versions": "0+"}]}]}),
    ("storage", {  # apache/kafka 1acb523, the fields after RemoteLogSegmentState
        "apiKey": 0, "type": "metadata", "name": "RemoteLogSegmentMetadataRecord",
        "validVersions": "0-1", "flexibleVersions": "0+", "fields": [
            {"name": "RemoteLogSegmentId", "type": "RemoteLogSegmentIdEntry", "versions": "0+",
             "fields": [
                 {"name": "TopicIdPartition", "type": "TopicIdPartitionEntry",
                  "versions": "0+", "fields": [
                      {"name": "Name", "type": "string", "versions": "0+"},
                      {"name": "Id", "type": "uuid", "versions": "0+"},
                      {"name": "Partition", "type": "int32", "versions": "0+"}]},
                 {"name": "Id", "type": "uuid", "versions": "0+"}]},
            {"name": "StartOffset", "type": "int64", "versions": "0+"},
            {"name": "EndOffset", "type": "int64", "versions": "0+"},
            {"name": "BrokerId", "type": "int32", "versions": "0+"},
            {"name": "MaxTimestampMs", "type": "int64", "versions": "0+"},
            {"name": "EventTimestampMs", "type": "int64", "versions": "0+"},
            {"name": "SegmentLeaderEpochs", "type": "[]SegmentLeaderEpochEntry",
             "versions": "0+", "fields": [
                 {"name": "LeaderEpoch", "type": "int32", "versions": "0+"},
                 {"name": "Offset", "type": "int64", "versions": "0+"}]},
            {"name": "SegmentSizeInBytes", "type": "int32", "versions": "0+"},
            {"name": "CustomMetadata", "type": "bytes", "default": "null", "versions": "0+",
             "nullableVersions": "0+"},
            {"name": "RemoteLogSegmentState", "type": "int8", "versions": "0+"},
            {"name": "TxnIndexEmpty", "type": "bool", "versions": "0+",
             "taggedVersions": "0+", "tag": 0},
            {"name": "BrokerLeaderEpoch", "type": "int32", "versions": "1+",
             "taggedVersions": "1+", "tag": 1}]}),
]


# -- where kafkalog declares each definition --------------------------------------------------------

#: folder -> (decoder, {type id: (key message, value message)}) for the coordinator topics
COORDINATORS = {
    "group-coordinator": (ConsumerOffsetsDecoder, gm.RECORD_TYPES),
    "share-coordinator": (ShareGroupStateDecoder, sm.RECORD_TYPES),
    "transaction-coordinator": (TransactionLogDecoder, tm.RECORD_TYPES),
}
#: folder -> (decoder, {api key: message}) for the metadata-framed topics
FRAMED = {"metadata": (ClusterMetadataDecoder, mm.BY_API_KEY),
          "storage": (RemoteLogMetadataDecoder, rmm.BY_API_KEY)}


def _key_type_ids(folder: str) -> dict[str, int]:
    """{key or value name: record type} for a coordinator folder; a ``data`` key's type id
    is its only version (the research README), and its value has the key's id."""
    return {m.name: t for t, pair in COORDINATORS[folder][1].items() for m in pair}


def type_id(folder: str, d: dict) -> int:
    """The record type Kafka's definition gives a message: its apiKey, or for the
    ``data`` keys of December 2024 their validVersions (and the value its key's)."""
    if folder == "clients":
        return CONTROL_TYPES[d["name"]]
    if "apiKey" in d:
        return d["apiKey"]
    if d["name"].endswith("Key"):
        return d["_valid"][0]
    return _key_type_ids(folder)[d["name"]]


def declared(folder: str, d: dict):
    """kafkalog's declaration of definition ``d`` of ``folder`` (by type id and role)."""
    tid = type_id(folder, d)
    if folder in COORDINATORS:
        key, value = COORDINATORS[folder][1][tid]
        return key if d["name"].endswith("Key") else value
    if folder in FRAMED:
        return FRAMED[folder][1][tid]
    return KRAFT_CONTROL_MESSAGES[tid][1]


# -- agreement -----------------------------------------------------------------------------------

def _rng(v) -> tuple[int, int]:
    return (v.low, v.high)


def compare_fields(theirs: list, ours, where: str, newer: dict, prefix: str = "") -> list[str]:
    """Differences between a definition's fields and kafkalog's (``Field`` objects)."""
    problems = []
    by_name = {f.name: f for f in ours}
    for f in theirs:
        path = f"{prefix}{f['_name']}"
        mine = by_name.pop(f["_name"], None)
        if mine is None:
            problems.append(f"{where}: {path} not declared")
            continue
        checks = [("type", f["type"], mine.type),
                  ("versions", f["_versions"], _rng(mine.versions)),
                  ("nullableVersions", f["_nullable"], _rng(mine.nullable)),
                  ("taggedVersions", f["_tagged"], _rng(mine.tagged))]
        if f["_tagged"][0] <= f["_tagged"][1]:
            checks.append(("tag", int(f["tag"]), mine.tag))
        for what, a, b in checks:
            if a != b:
                problems.append(f"{where}: {path} {what} {a} != {b}")
        v = f["_versions"][0]
        if f["_fields"] is None:
            if default(f) != mine.default(v):
                problems.append(f"{where}: {path} default {default(f)!r} != "
                                f"{mine.default(v)!r}")
        elif not mine.is_struct:
            problems.append(f"{where}: {path} is a struct, declared {mine.type}")
        else:
            problems += compare_fields(f["_fields"], mine.fields, where, newer, path + ".")
        if f["_fields"] is None and mine.is_struct:
            problems.append(f"{where}: {path} declared as a struct")
    for name in by_name:
        if f"{prefix}{name}" not in newer:
            problems.append(f"{where}: {prefix}{name} declared, not in Kafka's definition")
    return problems


def agreement(d: dict, message) -> list[str]:
    """Differences between definition ``d`` and one kafkalog layout ``message``."""
    where = d["name"]
    newer = NEWER.get(d["name"], {})
    problems = []
    if message.name != d["name"]:
        problems.append(f"{where}: declared as {message.name}")
    valid = _rng(message.valid)
    if valid != d["_valid"] and newer.get("validVersions") != valid:
        problems.append(f"{where}: validVersions {d['_valid']} != {valid}")
    if _rng(message.flexible) != d["_flexible"]:
        problems.append(f"{where}: flexibleVersions {d['_flexible']} != "
                        f"{_rng(message.flexible)}")
    if "apiKey" in d and message.api_key != d["apiKey"]:
        problems.append(f"{where}: apiKey {d['apiKey']} != {message.api_key}")
    return problems + compare_fields(d["_fields"], message.fields, where, newer)


RESEARCH_DEFS = [(p.parent.name, load(p)) for p in FILES]
LATER_DEFS = [(folder, definition(d)) for folder, d in LATER_DEFINITIONS]


@needs_research
@pytest.mark.parametrize(("folder", "d"), RESEARCH_DEFS,
                         ids=[f"{f}/{d['name']}" for f, d in RESEARCH_DEFS])
def test_kafkalog_declares_kafkas_definition(folder, d):
    message = declared(folder, d)
    results = [(layout, agreement(d, layout)) for layout in message.layouts]
    agreeing = [layout for layout, problems in results if not problems]
    assert agreeing, "\n".join(results[0][1])
    if d["name"] in EARLIER:
        # Kafka changed it after December 2024: the research layout is an earlier one
        assert agreeing[0] is not message and agreeing[0].layout
    else:
        assert agreeing[0] is message


@pytest.mark.parametrize(("folder", "d"), LATER_DEFS, ids=[d["name"] for _, d in LATER_DEFS])
def test_kafkalog_declares_kafkas_later_definitions(folder, d):
    """The later definitions are kafkalog's current layouts, with nothing added."""
    message = declared(folder, d)
    saved = NEWER.pop(d["name"], None)
    try:
        problems = agreement(d, message)
    finally:
        if saved is not None:
            NEWER[d["name"]] = saved
    assert problems == [], "\n".join(problems)


@needs_research
def test_every_declaration_has_a_definition():
    """Each record kafkalog declares for these topics is in Kafka's definitions (the
    consumer embedded protocol excepted: it is not a topic record)."""
    names = {d["name"] for _, d in RESEARCH_DEFS}
    ours = {m.name for registry in (gm, sm, tm, mm, rmm, rm) for m in registry.MESSAGES.values()}
    assert ours - names == {"ConsumerProtocolSubscription", "ConsumerProtocolAssignment"}
    assert names - ours == set()
    assert len(RESEARCH_DEFS) == 92


# -- golden bytes ------------------------------------------------------------------------------------

VARIANTS = ("values", "nulls", "empty")


def _cases(defs):
    out = []
    for folder, d in defs:
        for v in range(d["_valid"][0], d["_valid"][1] + 1):
            for variant in VARIANTS:
                out.append((folder, d, v, variant))
    return out


GOLDEN = _cases(RESEARCH_DEFS)
LATER_GOLDEN = _cases(LATER_DEFS)


def _values(folder: str, d: dict, version: int, variant: str) -> dict:
    values = sample(d["_fields"], version, variant, d["name"])
    if folder == "clients":
        values["version"] = version  # a control record's value names its own version
    return values


def _pair(folder: str, d: dict, defs) -> dict:
    """The definition of the other half (key or value) of a coordinator record."""
    tid = type_id(folder, d)
    for f, other in defs:
        if f == folder and other is not d and type_id(f, other) == tid and \
                other["name"].endswith("Key") != d["name"].endswith("Key"):
            return other
    raise AssertionError(f"no pair for {d['name']}")


def check_golden(folder: str, d: dict, version: int, variant: str, defs) -> None:
    values = _values(folder, d, version, variant)
    body = encode(d, values, version)
    expected = to_json(d["_fields"], values, version)
    if folder in COORDINATORS:
        decoder = COORDINATORS[folder][0]()
        tid = type_id(folder, d)
        if d["name"].endswith("Key"):
            key, value = struct.pack(">h", tid) + body, None
        else:
            k = _pair(folder, d, defs)
            kv = k["_valid"][0]
            key = struct.pack(">h", tid) + encode(k, sample(k["_fields"], kv, "values"), kv)
            value = struct.pack(">h", version) + body
        r = decoder.decode(key, value)
        assert r.warnings == [] and r.failure is None, r.warnings
        if value is None:
            assert r.key == {"type": str(tid), "data": expected}
            assert r.tombstone and r.kafka_text(5)[1] == "<DELETE>"
        else:
            assert r.value == {"version": str(version), "data": expected}
    elif folder in FRAMED:
        decoder = FRAMED[folder][0]()
        value = uvarint(1) + uvarint(d["apiKey"]) + uvarint(version) + body
        r = decoder.decode(None, value)
        if folder == "metadata":
            assert r.warnings == [] and r.failure is None, r.warnings
        assert r.value == {"type": snake_upper(d["name"]), "version": version,
                           "data": expected}
        assert r.key_type == d["name"]
    else:
        key = struct.pack(">hh", 0, CONTROL_TYPES[d["name"]])
        r = decode_control_record(None, key, body)
        assert r.warnings == [], r.warnings
        assert r.value == expected


@needs_research
@pytest.mark.parametrize(("folder", "d", "version", "variant"), GOLDEN,
                         ids=[f"{d['name']}-v{v}-{x}" for _, d, v, x in GOLDEN])
def test_golden_record_decodes_field_for_field(folder, d, version, variant):
    check_golden(folder, d, version, variant, RESEARCH_DEFS)


@needs_research
@pytest.mark.parametrize(("folder", "d", "version", "variant"), LATER_GOLDEN,
                         ids=[f"{d['name']}-v{v}-{x}" for _, d, v, x in LATER_GOLDEN])
def test_golden_record_of_later_definitions(folder, d, version, variant):
    check_golden(folder, d, version, variant, RESEARCH_DEFS + LATER_DEFS)


def test_the_cases_cover_every_topic():
    if not FILES:
        pytest.skip("no research folder")
    folders = {folder for folder, *_ in GOLDEN}
    assert folders == {"clients", "group-coordinator", "metadata", "share-coordinator",
                       "storage", "transaction-coordinator"}
    # every version of every definition, three value sets each
    assert len(GOLDEN) == 3 * sum(d["_valid"][1] - d["_valid"][0] + 1
                                  for _, d in RESEARCH_DEFS)
    assert all(has(d["_valid"], v) for _, d, v, _ in GOLDEN)
