"""The schema store replays ``_schemas`` as Schema Registry's KafkaStoreMessageHandler
applies each record to its lookup cache: records written here as the registry writes
them (literal JSON), and the real corpus' two ``_schemas`` topics."""

from __future__ import annotations

import json

import pytest
from registry_testkit import schema_key, schema_value, write_topic

from kafkalog_cli.registry.store import SchemaStore, find_schemas_partition, load_store

CORPUS_SCHEMAS = {
    # the two log directories of CATALOG.md holding _schemas: 42 and 63 records
    "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data": 42,
    "mscaldas2012__kafka-connect-spooldir/kafka-data": 63,
}
S1 = '{"type":"record","name":"A","fields":[{"name":"x","type":"int"}]}'
S2 = '{"type":"record","name":"A","fields":[{"name":"x","type":"long"}]}'


def replay(records) -> SchemaStore:
    s = SchemaStore(source="test")
    for off, (k, v) in enumerate(records):
        s.apply(k if k is None or isinstance(k, bytes) else k.encode(),
                v if v is None or isinstance(v, bytes) else v.encode(), off)
    return s


def test_schema_versions_ids_and_subjects():
    s = replay([
        ('{"keytype":"NOOP","magic":0}', None),
        (schema_key("t-value", 1), schema_value("t-value", 1, 1, S1)),
        (schema_key("t-value", 2), schema_value("t-value", 2, 2, S2)),
        (schema_key("u-value", 1), schema_value("u-value", 1, 1, S1)),
    ])
    assert s.by_id(1).schema == S1 and s.by_id(2).schema == S2
    assert s.subjects_of(1) == ["t-value", "u-value"]
    assert s.latest("t-value").version == 2 and s.version("t-value", 1).id == 1
    assert s.max_id() == 2 and s.problems == []


def test_soft_delete_keeps_the_id_and_hides_the_version():
    s = replay([
        (schema_key("t-value", 1), schema_value("t-value", 1, 1, S1)),
        (schema_key("t-value", 2), schema_value("t-value", 2, 2, S2)),
        (schema_key("t-value", 2), schema_value("t-value", 2, 2, S2, deleted=True)),
    ])
    assert s.by_id(2) is not None and s.by_id(2).deleted
    assert s.latest("t-value").version == 1


def test_hard_delete_tombstone_drops_the_id_unless_another_subject_holds_it():
    s = replay([
        (schema_key("t-value", 1), schema_value("t-value", 1, 1, S1)),
        (schema_key("u-value", 1), schema_value("u-value", 1, 1, S1)),
        (schema_key("t-value", 2), schema_value("t-value", 2, 2, S2)),
        (schema_key("t-value", 2), schema_value("t-value", 2, 2, S2, deleted=True)),
        (schema_key("t-value", 2), None),
        (schema_key("t-value", 1), schema_value("t-value", 1, 1, S1, deleted=True)),
        (schema_key("t-value", 1), None),
    ])
    assert s.by_id(2) is None
    assert s.by_id(1).subject == "u-value"
    assert s.versions("t-value", include_deleted=True) == []
    # the largest id seen stays the generator's floor (IncrementalIdGenerator)
    assert s.max_id() == 2


def test_delete_subject_and_clear_subject():
    s = replay([
        (schema_key("t-value", 1), schema_value("t-value", 1, 1, S1)),
        (schema_key("t-value", 2), schema_value("t-value", 2, 2, S2)),
        ('{"keytype":"DELETE_SUBJECT","subject":"t-value","magic":0}',
         '{"subject":"t-value","version":2}'),
    ])
    assert s.latest("t-value") is None
    assert [v.deleted for v in s.versions("t-value", include_deleted=True)] == [True, True]
    assert s.by_id(1) is not None  # soft-deleted: still served by id
    s.apply(b'{"keytype":"CLEAR_SUBJECT","subject":"t-value","magic":0}',
            b'{"subject":"t-value"}', 3)
    assert s.versions("t-value", include_deleted=True) == [] and s.by_id(1) is None


def test_config_and_mode_set_and_tombstoned():
    s = replay([
        ('{"keytype":"CONFIG","subject":null,"magic":0}', '{"compatibilityLevel":"FULL"}'),
        ('{"keytype":"CONFIG","subject":"t-value","magic":0}',
         '{"subject":"t-value","compatibilityLevel":"NONE"}'),
        ('{"keytype":"MODE","subject":"t-value","magic":0}',
         '{"subject":"t-value","mode":"READONLY"}'),
    ])
    assert s.configs[None]["compatibilityLevel"] == "FULL"
    assert s.configs["t-value"]["compatibilityLevel"] == "NONE"
    assert s.modes["t-value"] == "READONLY"
    s.apply(b'{"keytype":"MODE","subject":"t-value","magic":0}', None, 3)
    assert "t-value" not in s.modes


def test_duplicate_id_with_another_schema_is_refused():
    s = replay([
        (schema_key("t-value", 1), schema_value("t-value", 1, 1, S1)),
        (schema_key("u-value", 1), schema_value("u-value", 1, 1, S2)),
    ])
    assert s.by_id(1).schema == S1 and s.version("u-value", 1) is None
    assert len(s.problems) == 1 and "duplicate ID 1" in s.problems[0]


@pytest.mark.parametrize("key,value,why", [
    (b"not json", None, "Failed to deserialize the schema or config key"),
    (b'{"keytype":"BOGUS","magic":0}', None, "unknown schema registry key type"),
    (b'{"keytype":"SCHEMA","subject":"t","version":1,"magic":2}', b"{}", "magic byte 2"),
    (schema_key("t", 1), b'{"subject":"t","version":1,"id":"x","schema":"1"}',
     "is not an int32"),
    (None, b"{}", "without a key"),
])
def test_records_the_registry_would_skip_are_named(key, value, why):
    s = replay([(key, value)])
    assert len(s.problems) == 1 and why in s.problems[0] and "offset 0" in s.problems[0]
    assert len(s) == 0


def test_contexts_have_their_own_ids():
    s = replay([
        (schema_key(":.ctx:t-value", 1), schema_value(":.ctx:t-value", 1, 1, S2)),
        (schema_key("t-value", 1), schema_value("t-value", 1, 1, S1)),
    ])
    assert s.by_id(1).schema == S1 and s.by_id(1, ".ctx").schema == S2
    assert s.problems == []


def test_replayed_from_a_partition(tmp_path):
    write_topic(tmp_path, "_schemas-0", [
        (b'{"keytype":"NOOP","magic":0}', None),
        (schema_key("t-value", 1), schema_value("t-value", 1, 1, S1)),
        (b"{", b"x"),
    ])
    assert find_schemas_partition(tmp_path) == tmp_path / "_schemas-0"
    s = load_store(tmp_path / "_schemas-0")
    assert s.records == 3 and s.by_id(1).subject == "t-value"
    assert len(s.problems) == 1 and str(tmp_path / "_schemas-0") in s.problems[0]


@pytest.mark.corpus
@pytest.mark.parametrize("rel", sorted(CORPUS_SCHEMAS))
def test_corpus_schemas_topics(rel, cli):
    from kafkalog_testkit import CORPUS

    d = CORPUS / rel
    if not d.is_dir():
        pytest.skip("real corpus not present at ../shared/corpus/real")
    s = load_store(find_schemas_partition(d))
    # both hold NOOP records only (the registry's start-up writes, no schema registered)
    assert s.records == CORPUS_SCHEMAS[rel]
    assert len(s) == 0 and s.problems == []
    # their Connect topics hold JSON, not framed records: kept as they are, each named
    r = cli("read", str(d), "-t", "docker-connect-configs", "--value-decoder",
            "schema-registry", "-o", "json")
    assert r.returncode == 1
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    framed = [o for o in recs if o["value"] is not None]
    assert framed and all("unknown magic byte 123" in o["decodeWarnings"][0] for o in framed)
    assert "Traceback" not in r.stderr
