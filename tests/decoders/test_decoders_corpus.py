"""Every record of the real corpus's internal topics decodes to a named type with all its
fields, and none falls back to raw bytes (no warnings).

Reads ``../shared/corpus/real`` relative to the repository (skipped when absent); files
are read in place, never copied.
"""

from __future__ import annotations

import collections
import functools
import re
from pathlib import Path

import pytest

from kafkalog_cli.decoders import (
    ClusterMetadataDecoder,
    ConsumerOffsetsDecoder,
    TransactionLogDecoder,
    control_text,
    decode_control_record,
    decoder_for_topic,
)
from kafkalog_cli.decoders import group_messages as gm
from kafkalog_cli.decoders import metadata_messages as mm
from kafkalog_cli.decoders.cluster_metadata import KRAFT_CONTROL_MESSAGES
from kafkalog_cli.decoders.coordinator import key_read_version
from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.schema.messages import Message

CORPUS = (Path(__file__).parents[2] / "../shared/corpus/real").resolve()
SNAPSHOT_NAME = re.compile(r"^\d{20}-\d{10}\.checkpoint$")

pytestmark = pytest.mark.corpus


def _internal_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    out = []
    for p in sorted(CORPUS.rglob("*")):
        topic = p.parent.name
        if not topic.startswith(("__consumer_offsets-", "__cluster_metadata-",
                                 "__transaction_state-")):
            continue
        if p.suffix == ".log" or SNAPSHOT_NAME.match(p.name):
            out.append(p)
    return out


FILES = _internal_files()
needs_corpus = pytest.mark.skipif(not FILES, reason=f"corpus not found at {CORPUS}")


@functools.cache
def decode_file(path: Path) -> list:
    """[(is_control, DecodedRecord)] of every record of ``path``, in order."""
    decoder = decoder_for_topic(path.parent.name)
    out = []
    with open(path, "rb") as f:
        data = f.read()
    for batch in FileRecords(data).batches():
        for record in batch.records():
            if batch.is_control:
                out.append((True, decode_control_record(None, record.key, record.value)))
            else:
                out.append((False, decoder.decode(record.key, record.value)))
    return out


def assert_all_fields(fields, version: int, data: dict, where: str) -> None:
    """``data`` has every non-tagged field of ``version`` and nothing undeclared."""
    names = {f.name for f in fields if version in f.versions}
    assert set(data) <= names, f"{where}: undeclared keys {set(data) - names}"
    for f in fields:
        if version not in f.versions:
            continue
        if version not in f.tagged:
            assert f.name in data, f"{where}: missing {f.name}"
        value = data.get(f.name)
        if f.is_struct and value is not None and f.name not in ("subscription", "assignment"):
            for i, item in enumerate(value if f.is_array else [value]):
                assert_all_fields(f.fields, version, item, f"{where}.{f.name}[{i}]")


def _message_check(message: Message, version: int, data: dict, where: str) -> None:
    assert version in message.valid
    assert_all_fields(message.fields, version, data, f"{where} {message.name} v{version}")


def _rel(p: Path) -> str:
    return str(p.relative_to(CORPUS))


def test_corpus_has_internal_topics():
    if not FILES:
        pytest.skip(f"corpus not found at {CORPUS}")
    assert any(p.parent.name.startswith("__consumer_offsets-") for p in FILES)
    assert any(p.parent.name.startswith("__cluster_metadata-") for p in FILES)
    assert any(p.suffix == ".checkpoint" for p in FILES)


@needs_corpus
@pytest.mark.parametrize("path", FILES, ids=[_rel(p) for p in FILES])
def test_every_record_decodes(path: Path):
    records = decode_file(path)
    offsets_topic = path.parent.name.startswith("__consumer_offsets-")
    for i, (is_control, d) in enumerate(records):
        where = f"{_rel(path)} record #{i}"
        assert d.warnings == [], f"{where}: {d.warnings}"
        assert d.key_type is not None, where
        if path.parent.name.startswith("__transaction_state-"):
            assert d.key_type == "TransactionLogKey" and "data" in d.value, where
            continue
        if is_control:
            assert control_text(d).split(" ")[0].rstrip(":") in (
                "endTxnMarker:", *(label for label, _ in KRAFT_CONTROL_MESSAGES.values()))
            continue
        if offsets_topic:
            record_type = int(d.key["type"])
            key_msg, value_msg = gm.RECORD_TYPES[record_type]
            assert d.key_type == key_msg.name
            # the key message at its own version (Kafka 4: coordinator keys are at 0)
            _message_check(key_msg, key_read_version(key_msg, record_type), d.key["data"],
                           where)
            if d.tombstone:
                assert d.value is None and d.value_json() == "<DELETE>"
                continue
            _message_check(value_msg, int(d.value["version"]), d.value["data"], where)
            data = d.value["data"]
            if value_msg is gm.GroupMetadataValue and data["protocolType"] == "consumer":
                for m in data["members"]:
                    # the embedded consumer protocol was decoded, not left as base64
                    assert isinstance(m["subscription"], dict), where
                    assert isinstance(m["assignment"], dict), where
        else:
            assert d.key is None
            message = mm.MESSAGES[d.key_type]
            assert d.value["type"] == mm.metadata_type_name(message.name)
            _message_check(message, d.value["version"], d.value["data"], where)


@needs_corpus
def test_record_counts_are_non_zero():
    counts: collections.Counter = collections.Counter()
    for path in FILES:
        topic = ("offsets" if path.parent.name.startswith("__consumer_offsets-") else
                 "transactions" if path.parent.name.startswith("__transaction_state-")
                 else "metadata")
        for is_control, d in decode_file(path):
            counts[topic, d.key_type if is_control else "data"] += 1
    assert counts["offsets", "data"] > 10_000
    assert counts["metadata", "data"] > 40_000
    assert counts["transactions", "data"] == 4  # the catalog's __transaction_state-44
    # control records the corpus catalog lists: LeaderChange in .log files, the rest in
    # KRaft snapshots
    assert counts["metadata", "LeaderChange"] == 3
    assert counts["metadata", "SnapshotHeader"] == 130
    assert counts["metadata", "SnapshotFooter"] == 130
    assert counts["metadata", "KRaftVersion"] == 125
    assert counts["metadata", "KRaftVoters"] == 125


@needs_corpus
def test_metadata_record_types_seen():
    seen = collections.Counter()
    for path in FILES:
        if path.parent.name.startswith("__cluster_metadata-"):
            for is_control, d in decode_file(path):
                if not is_control:
                    seen[d.value["type"]] += 1
    for name in ("TOPIC_RECORD", "PARTITION_RECORD", "CONFIG_RECORD", "FEATURE_LEVEL_RECORD",
                 "REGISTER_BROKER_RECORD", "REGISTER_CONTROLLER_RECORD", "NO_OP_RECORD",
                 "PARTITION_CHANGE_RECORD", "PRODUCER_IDS_RECORD",
                 "BROKER_REGISTRATION_CHANGE_RECORD"):
        assert seen[name] > 0, name


@needs_corpus
def test_snapshot_starts_with_header_and_ends_with_footer():
    snapshots = [p for p in FILES if p.suffix == ".checkpoint"]
    assert snapshots
    for path in snapshots:
        records = decode_file(path)
        assert records[0][0] and records[0][1].key_type == "SnapshotHeader", _rel(path)
        assert records[-1][0] and records[-1][1].key_type == "SnapshotFooter", _rel(path)
        assert records[0][1].value["version"] == 0


@needs_corpus
def test_decoders_match_topics():
    for path in FILES:
        dec = decoder_for_topic(path.parent.name)
        expected = (ConsumerOffsetsDecoder if path.parent.name.startswith("__consumer")
                    else TransactionLogDecoder if path.parent.name.startswith("__transaction")
                    else ClusterMetadataDecoder)
        assert isinstance(dec, expected)


KSQL_COMMAND_TOPIC = next(iter(sorted(CORPUS.glob(
    "*/*/_confluent-ksql-default__command_topic-0/00000000000000000000.log"))), None) \
    if CORPUS.is_dir() else None


@pytest.mark.skipif(KSQL_COMMAND_TOPIC is None, reason="transactional ksql topic not in corpus")
def test_transactional_commit_marker():
    with open(KSQL_COMMAND_TOPIC, "rb") as f:
        data = f.read()
    markers = []
    for batch in FileRecords(data).batches():
        if batch.is_control:
            assert batch.is_transactional
            for record in batch.records():
                markers.append(decode_control_record(None, record.key, record.value))
    assert len(markers) == 1
    (commit,) = markers
    assert commit.warnings == []
    assert commit.key == {"version": 0, "type": 1}
    assert commit.key_type == "COMMIT"
    assert commit.value["version"] == 0
    assert control_text(commit) == f"endTxnMarker: COMMIT coordinatorEpoch: " \
                                   f"{commit.value['coordinatorEpoch']}"
