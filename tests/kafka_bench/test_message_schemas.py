"""kafkalog's declarations of Kafka's internal-topic messages against the pinned Kafka's
generated classes.

``MessageSchemas.java`` reads, from the Kafka 4.4.0 jars, every generated message
kafkalog declares (``kafkalog_cli/decoders/*_messages.py``): its supported versions and,
per version, the ``SCHEMAS`` Kafka reads and writes it with (field names, types, nullable
and compact forms, tagged fields and their tags, nested structs); and the record-type
enums of the coordinators and of KRaft's metadata. The test holds kafkalog's
declarations to them: the same versions, the same layout at every version, the same
record type ids. (tests/decoders/test_kafka_definitions.py holds them against Kafka's
JSON definitions of December 2024; this one against the broker the bench runs.)
Defaults are not in ``SCHEMAS``: the dump-segment differential suite checks what they
change, the JSON Kafka's converters print.
"""

from __future__ import annotations

import json

import pytest
from kafka_testkit import kafka_tool

from kafkalog_cli.decoders import group_messages as gm
from kafkalog_cli.decoders import metadata_messages as mm
from kafkalog_cli.decoders import raft_messages as rm
from kafkalog_cli.decoders import remote_messages as rmm
from kafkalog_cli.decoders import share_messages as sm
from kafkalog_cli.decoders import txn_messages as tm

pytestmark = pytest.mark.kafka

#: kafkalog's message registries and the package of Kafka's generated classes for each
PACKAGES = [
    (gm.MESSAGES, "org.apache.kafka.coordinator.group.generated"),
    (tm.MESSAGES, "org.apache.kafka.coordinator.transaction.generated"),
    (sm.MESSAGES, "org.apache.kafka.coordinator.share.generated"),
    (mm.MESSAGES, "org.apache.kafka.common.metadata"),
    (rm.MESSAGES, "org.apache.kafka.common.message"),
    (rmm.MESSAGES, "org.apache.kafka.server.log.remote.metadata.storage.generated"),
]
#: messages of the group coordinator's registry that Kafka generates elsewhere
ELSEWHERE = {"ConsumerProtocolSubscription": "org.apache.kafka.common.message",
             "ConsumerProtocolAssignment": "org.apache.kafka.common.message"}
#: the messages of record types Kafka 4.4 no longer has (kafkalog decodes what brokers
#: before it wrote, for JSON): Kafka 4.4 must indeed lack them
GONE_IN_KAFKA_4_4 = {m.name for pair in gm.RETIRED_RECORD_TYPES.values() for m in pair}

RECORD_TYPE_ENUMS = {
    "group": "org.apache.kafka.coordinator.group.generated.CoordinatorRecordType",
    "transaction": "org.apache.kafka.coordinator.transaction.generated.CoordinatorRecordType",
    "share": "org.apache.kafka.coordinator.share.generated.CoordinatorRecordType",
    "metadata": "org.apache.kafka.common.metadata.MetadataRecordType",
}

_PLAIN = {"int8": "INT8", "int16": "INT16", "uint16": "UINT16", "int32": "INT32",
          "uint32": "UINT32", "int64": "INT64", "float64": "FLOAT64", "bool": "BOOLEAN",
          "uuid": "UUID"}


def snake_case(name: str) -> str:
    """Kafka's MessageGenerator.toSnakeCase (the Schema field names) of the JSON name
    kafkalog's camelCase name comes from (``kRaftVersion``: ``KRaftVersion``,
    ``kraft_version``)."""
    out, prev_capital = [], True
    for ch in name[:1].upper() + name[1:]:
        if ch.isupper():
            if not prev_capital:
                out.append("_")
            out.append(ch.lower())
            prev_capital = True
        else:
            out.append(ch)
            prev_capital = False
    return "".join(out)


def _our_type(f, version: int, flexible: bool, *, element: bool = False) -> tuple:
    nullable = version in f.nullable and not element
    if f.is_array and not element:
        name = ("COMPACT_" if flexible else "") + ("NULLABLE_" if nullable else "") + "ARRAY"
        return ("array", name, nullable, _our_type(f, version, flexible, element=True))
    if f.is_struct:
        return ("struct", _our_fields(f.fields, version, flexible))
    t = f.element
    if t in _PLAIN:
        return ("plain", _PLAIN[t], False)
    if t == "records":
        return ("plain", "COMPACT_RECORDS" if flexible else "RECORDS", True)
    name = ("COMPACT_" if flexible else "") + ("NULLABLE_" if nullable else "") + t.upper()
    return ("plain", name, nullable)


def _our_fields(fields, version: int, flexible: bool) -> list:
    out, tagged = [], {}
    for f in fields:
        if version not in f.versions:
            continue
        if version in f.tagged:
            tagged[f.tag] = (snake_case(f.name), _our_type(f, version, True))
        else:
            out.append((snake_case(f.name), _our_type(f, version, flexible)))
    if flexible:
        out.append(("_tagged_fields", dict(sorted(tagged.items()))))
    return out


def _kafka_type(t: dict) -> tuple:
    if t["kind"] == "array":
        return ("array", t["name"], t["nullable"], _kafka_type(t["element"]))
    if t["kind"] == "struct":
        return ("struct", _kafka_fields(t["fields"]))
    return ("plain", t["name"], t["nullable"])


def _kafka_fields(fields: list) -> list:
    out = []
    for f in fields:
        if "tagged" in f:
            out.append(("_tagged_fields", {int(tag): (t["name"], _kafka_type(t["type"]))
                                           for tag, t in sorted(f["tagged"].items(),
                                                                key=lambda kv: int(kv[0]))}))
        else:
            out.append((f["name"], _kafka_type(f["type"])))
    return out


def ours(message, version: int) -> list:
    """kafkalog's layout of ``message`` at ``version``, in the shape of :func:`_kafka_fields`."""
    return _our_fields(message.fields, version, version in message.flexible)


def _class_names() -> dict[str, str]:
    names = {}
    for registry, package in PACKAGES:
        for name in registry:
            names[name] = f"{ELSEWHERE.get(name, package)}.{name}"
    return names


@pytest.fixture(scope="module")
def kafka_schemas(kafka_bench) -> dict:
    names = _class_names()
    r = kafka_tool("MessageSchemas", *names.values())
    assert r.exit == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def kafka_record_types(kafka_bench) -> dict:
    r = kafka_tool("MessageSchemas", "--record-types", *RECORD_TYPE_ENUMS.values())
    assert r.exit == 0, r.stderr
    return json.loads(r.stdout)


def _all_messages():
    seen = {}
    for registry, _ in PACKAGES:
        seen.update(registry)
    return seen


@pytest.mark.parametrize("name", sorted(_all_messages()))
def test_declaration_is_kafkas(kafka_schemas, name):
    message = _all_messages()[name]
    kafka = kafka_schemas[name]
    if name in GONE_IN_KAFKA_4_4:
        assert kafka.get("missing"), f"{name} is in Kafka 4.4 after all"
        return
    assert not kafka.get("missing"), f"Kafka 4.4 has no {name}"
    if message.kind == "coordinator-key":
        # one layout, version 0 in Kafka; kafkalog's version is the one the serde reads
        # it at, the record type (coordinator.key_read_version)
        assert (kafka["lowest"], kafka["highest"]) == (0, 0)
        assert ours(message, message.valid.high) == _kafka_fields(kafka["versions"]["0"])
        return
    assert (message.valid.low, message.valid.high) == (kafka["lowest"], kafka["highest"]), \
        f"{name}: versions {message.valid} in kafkalog, {kafka['lowest']}-{kafka['highest']} " \
        "in Kafka 4.4"
    for version, fields in kafka["versions"].items():
        assert ours(message, int(version)) == _kafka_fields(fields), \
            f"{name} v{version} differs from Kafka 4.4's"


def _our_record_types() -> dict[str, dict[int, list]]:
    return {
        "group": {t: [k.name, v.name] for t, (k, v) in gm.RECORD_TYPES.items()},
        "transaction": {t: [k.name, v.name] for t, (k, v) in tm.RECORD_TYPES.items()},
        "share": {t: [k.name, v.name] for t, (k, v) in sm.RECORD_TYPES.items()},
        "metadata": {m.api_key: [m.name, None] for m in mm.MESSAGES.values()},
    }


@pytest.mark.parametrize("coordinator", sorted(RECORD_TYPE_ENUMS))
def test_record_types_are_kafkas(kafka_record_types, coordinator):
    kafka = {int(t): [None if c is None else c.rsplit(".", 1)[1] for c in pair]
             for t, pair in kafka_record_types[RECORD_TYPE_ENUMS[coordinator]].items()}
    ours_ = _our_record_types()[coordinator]
    if coordinator == "group":  # type 0 is the legacy offset commit, as Kafka 4.4 maps it
        ours_ = {t: pair for t, pair in ours_.items() if t in kafka or t != 0}
    assert dict(sorted(ours_.items())) == dict(sorted(kafka.items()))
