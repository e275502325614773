"""Every declared message at every version: build a sample with construct, parse it back.

The samples give every field a non-default value (so tagged fields are written) and,
in a second variant, null for every nullable field, so both branches of each encoding
are exercised.
"""

from __future__ import annotations

import pytest

from kafkalog_cli.decoders import (
    group_messages,
    metadata_messages,
    raft_messages,
    remote_messages,
    share_messages,
    txn_messages,
)
from kafkalog_cli.schema import flexible as fx
from kafkalog_cli.schema.messages import Field, Message, Versions

ALL_MESSAGES: list[Message] = [
    layout
    for registry in (group_messages, txn_messages, metadata_messages, raft_messages,
                     share_messages, remote_messages)
    for message in registry.MESSAGES.values()
    for layout in message.layouts  # earlier layouts too
]
CASES = [(m, v) for m in ALL_MESSAGES for v in m.versions]

_SCALARS = {
    "bool": True, "int8": -7, "int16": 300, "uint16": 65000, "int32": -70000,
    "uint32": 4_000_000_000, "int64": 1_700_000_000_123, "float64": 1.5,
    "uuid": fx.uuid_to_string(bytes(range(1, 17))), "string": "näme",
    "bytes": b"\x00\x01\xff", "records": b"\x02",
}


def sample(fields, version: int, nulls: bool) -> dict:
    out = {}
    for f in fields:
        if version not in f.versions:
            continue
        if nulls and version in f.nullable:
            out[f.name] = None
            continue
        out[f.name] = _sample_value(f, version, nulls)
    return out


def _sample_value(f: Field, version: int, nulls: bool):
    if f.is_struct:
        one = sample(f.fields, version, nulls)
        return [one, sample(f.fields, version, not nulls)] if f.is_array else one
    value = _SCALARS[f.element]
    if f.is_array:
        return [value, value] if f.element != "bool" else [True, False]
    return value


def test_there_are_many_cases():
    # 25 __consumer_offsets record types (50 messages; 3 of them retired in Kafka 4.4)
    # and the consumer protocol (2), __transaction_state (2), 27 metadata records, 5 KRaft
    # control records, 4 __share_group_state and 4 __remote_log_metadata messages, and 5
    # earlier layouts; their versions as Kafka 4.4 has them
    assert len(ALL_MESSAGES) == 99
    assert len(CASES) == 126


@pytest.mark.parametrize("nulls", [False, True], ids=["values", "nulls"])
@pytest.mark.parametrize(("message", "version"), CASES,
                         ids=[f"{m.name}-v{v}" for m, v in CASES])
def test_round_trip(message: Message, version: int, nulls: bool):
    obj = sample(message.fields, version, nulls)
    data = message.build(obj, version)
    parsed, end = message.parse(data, version)
    assert end == len(data)
    assert parsed == obj
    assert message.build(parsed, version) == data
    # the JSON form names every non-tagged field of the version
    as_json = message.to_json(parsed, version)
    for f in message.fields:
        if version in f.versions and version not in f.tagged:
            assert f.name in as_json


@pytest.mark.parametrize(("message", "version"), CASES,
                         ids=[f"{m.name}-v{v}" for m, v in CASES])
def test_defaults_round_trip_and_tagged_defaults_are_omitted(message: Message, version: int):
    """A message built from nothing carries the defaults; tagged defaults are not written
    and Kafka's JSON converter leaves them out."""
    data = message.build({}, version)
    parsed, end = message.parse(data, version)
    assert end == len(data)
    as_json = message.to_json(parsed, version)
    for f in message.fields:
        if version in f.versions:
            assert parsed[f.name] == f.default(version)
            assert (f.name in as_json) == (version not in f.tagged)


def test_versions_text():
    assert 3 in Versions("0+") and 0 in Versions("0+")
    assert 2 not in Versions("0-1") and 1 in Versions("0-1")
    assert 1 in Versions("1") and 0 not in Versions("1")
    assert Versions("none").empty
    assert repr(Versions("4+")) == "4+" and repr(Versions("1-3")) == "1-3"


def test_struct_is_cached_per_version():
    m = group_messages.OffsetCommitValue
    assert m.struct(3) is m.struct(3)
    assert m.struct(3) is not m.struct(4)
    with pytest.raises(KeyError):
        m.struct(99)


def test_flexible_and_non_flexible_layouts_differ():
    """OffsetCommitValue v3 uses int16 string lengths, v4 compact ones plus tags."""
    obj = {"offset": 5, "leaderEpoch": -1, "metadata": "m", "commitTimestamp": 7}
    v3 = group_messages.OffsetCommitValue.build(obj, 3)
    v4 = group_messages.OffsetCommitValue.build(obj, 4)
    assert v3.hex() == "0000000000000005" "ffffffff" "00016d" "0000000000000007"
    assert v4.hex() == "0000000000000005" "ffffffff" "026d" "0000000000000007" "00"


def test_unknown_tags_survive_round_trip():
    m = metadata_messages.TopicRecord
    data = bytes.fromhex("04666f6f") + bytes(16) + bytes.fromhex("01" "09" "01" "2a")
    parsed, end = m.parse(data, 0)
    assert end == len(data)
    assert parsed[fx.UNKNOWN_TAGS] == [(9, b"*")]
    assert m.build(parsed, 0) == data
    unknown: list = []
    assert m.to_json(parsed, 0, unknown) == {"name": "foo", "topicId": fx.ZERO_UUID}
    assert unknown == [("TopicRecord", 9, b"*")]
