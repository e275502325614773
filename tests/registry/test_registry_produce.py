"""``produce --value-serializer/--key-serializer``: JSON input framed in Schema Registry's
wire format, the schema registered in the log directory's ``_schemas`` as the registry
would; read back by kafkalog (the round trip) and by confluent-kafka's own deserializers
against a registry stub serving the ``_schemas`` records kafkalog wrote."""

from __future__ import annotations

import json

import pytest
from registry_testkit import RegistryStub, confluent_serializers, need

AVSC = {"type": "record", "name": "Trade", "namespace": "mkt", "fields": [
    {"name": "sym", "type": "string"},
    {"name": "qty", "type": ["null", "long"], "default": None},
    {"name": "px", "type": "double"},
    {"name": "raw", "type": "bytes"},
    {"name": "side", "type": {"type": "enum", "name": "Side", "symbols": ["BUY", "SELL"]}},
]}
TRADES = [  # Avro's JSON encoding, as kafka-avro-console-producer takes it
    {"sym": "ACME", "qty": {"long": 10}, "px": 1.25, "raw": "\u0000\u00fe", "side": "BUY"},
    {"sym": "\u00c5S", "qty": None, "px": -0.5, "raw": "", "side": "SELL"},
]
PROTO = ('syntax = "proto3";\npackage mkt;\n'
         'message Quote { string sym = 1; int64 bid = 2; repeated int32 lots = 3; }\n')
QUOTES = [{"sym": "X", "bid": "9007199254740993", "lots": [1, 2]},
          {"sym": "", "bid": "0", "lots": []}]
JSCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def _write(tmp_path, name, lines):
    p = tmp_path / name
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(p)


def produce(cli, log, topic, *args):
    return cli("produce", "--log-dir", str(log), "--topic", topic, "--no-fsync", "-o", "json",
               *args)


def read_values(cli, log, topic, *extra):
    r = cli("read", str(log), "-t", topic, "--value-decoder", "schema-registry", "-o",
            "json", *extra)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def schemas_records(cli, log) -> list[tuple[dict, dict | None]]:
    """The _schemas records, parsed as JSON by the test (kafkalog only reads bytes)."""
    r = cli("read", str(log), "-t", "_schemas", "-o", "json")
    assert r.returncode == 0, r.stderr
    out = []
    for line in r.stdout.splitlines():
        o = json.loads(line)
        out.append((json.loads(o["key"]), None if o["value"] is None else json.loads(o["value"])))
    return out


@pytest.fixture
def avsc(tmp_path):
    p = tmp_path / "trade.avsc"
    p.write_text(json.dumps(AVSC, indent=2))
    return str(p)


def test_avro_round_trip_and_the_registry_records(cli, tmp_path, avsc):
    need("fastavro")
    log = tmp_path / "kl"
    r = produce(cli, log, "trades", "--value-serializer", "avro", "--value-schema", avsc,
                _write(tmp_path, "in.json", TRADES))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["schemas"] == [
        {"side": "value", "subject": "trades-value", "id": 1, "version": 1,
         "registered": True}]
    recs = read_values(cli, log, "trades")
    assert [o["value"] for o in recs] == TRADES
    assert {(o["valueSchemaId"], o["valueSubject"]) for o in recs} == {(1, "trades-value")}
    [(key, value)] = schemas_records(cli, log)
    assert list(key) == ["keytype", "subject", "version", "magic"]
    assert key == {"keytype": "SCHEMA", "subject": "trades-value", "version": 1, "magic": 1}
    assert value["id"] == 1 and value["schemaType"] == "AVRO" and not value["deleted"]
    assert json.loads(value["schema"]) == AVSC


def test_ids_and_versions_as_the_registry_allocates_them(cli, tmp_path, avsc):
    need("fastavro")
    log = tmp_path / "kl"
    data = _write(tmp_path, "in.json", TRADES[:1])
    assert produce(cli, log, "trades", "--value-serializer", "avro", "--value-schema", avsc,
                   data).returncode == 0
    # the same schema again: its id and version, nothing written to _schemas
    r = produce(cli, log, "trades", "--value-serializer", "avro", "--value-schema", avsc, data)
    assert json.loads(r.stdout)["schemas"][0]  == {
        "side": "value", "subject": "trades-value", "id": 1, "version": 1,
        "registered": False}
    # the same schema under another subject: the same id, that subject's version 1
    r = produce(cli, log, "other", "--value-serializer", "avro", "--value-schema", avsc, data)
    assert (json.loads(r.stdout)["schemas"][0]["id"], json.loads(r.stdout)["schemas"][0][
        "version"]) == (1, 1)
    # a new schema: the next id, the subject's next version
    v2 = dict(AVSC, fields=AVSC["fields"] + [{"name": "n", "type": "int", "default": 0}])
    p2 = tmp_path / "v2.avsc"
    p2.write_text(json.dumps(v2))
    r = produce(cli, log, "trades", "--value-serializer", "avro", "--value-schema", str(p2),
                _write(tmp_path, "in2.json", [dict(TRADES[0], n=3)]))
    assert json.loads(r.stdout)["schemas"][0] == {
        "side": "value", "subject": "trades-value", "id": 2, "version": 2, "registered": True}
    # no schema file: the subject's latest (use.latest.version)
    r = produce(cli, log, "trades", "--value-serializer", "avro",
                _write(tmp_path, "in3.json", [dict(TRADES[1], n=4)]))
    assert json.loads(r.stdout)["schemas"][0]["id"] == 2
    recs = read_values(cli, log, "trades")
    assert [o["valueSchemaId"] for o in recs] == [1, 1, 2, 2]
    assert recs[3]["value"]["n"] == 4
    assert [k["subject"] for k, _ in schemas_records(cli, log)] == [
        "trades-value", "other-value", "trades-value"]


def test_reregistering_after_a_subject_delete(cli, tmp_path, avsc):
    """After DELETE_SUBJECT the same schema gets the next version with its old id, and
    the soft-deleted version holding that id is tombstoned, as the registry does."""
    need("fastavro")
    log = tmp_path / "kl"
    data = _write(tmp_path, "in.json", TRADES[:1])
    assert produce(cli, log, "trades", "--value-serializer", "avro", "--value-schema", avsc,
                   data).returncode == 0
    # append a DELETE_SUBJECT to _schemas by hand (a second segment)
    seg = log / "_schemas-0"
    from kafkalog_testkit import raw_batch, raw_record

    (seg / "00000000000000000001.log").write_bytes(raw_batch(1, [raw_record(
        0, 0, b'{"keytype":"DELETE_SUBJECT","subject":"trades-value","magic":0}',
        b'{"subject":"trades-value","version":1}')]))
    for f in seg.glob("*.snapshot"):
        f.unlink()
    (log / ".kafka_cleanshutdown").unlink(missing_ok=True)
    r = produce(cli, log, "trades", "--value-serializer", "avro", "--value-schema", avsc, data)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["schemas"][0]  == {
        "side": "value", "subject": "trades-value", "id": 1, "version": 2,
        "registered": True}
    recs = schemas_records(cli, log)
    assert recs[-2] == ({"keytype": "SCHEMA", "subject": "trades-value", "version": 1,
                         "magic": 1}, None)
    assert recs[-1][0]["version"] == 2 and recs[-1][1]["id"] == 1


def test_confluent_deserializers_read_what_produce_wrote(cli, tmp_path, avsc):
    """confluent-kafka's Avro, Protobuf and JSON deserializers, asking a registry stub
    that serves the _schemas records kafkalog wrote, decode kafkalog's frames."""
    need("fastavro")
    log = tmp_path / "kl"
    proto = tmp_path / "q.proto"
    proto.write_text(PROTO)
    js = tmp_path / "a.json"
    js.write_text(json.dumps(JSCHEMA))
    assert produce(cli, log, "trades", "--value-serializer", "avro", "--value-schema", avsc,
                   _write(tmp_path, "t.json", TRADES)).returncode == 0
    r = produce(cli, log, "quotes", "--value-serializer", "protobuf", "--value-schema",
                str(proto), _write(tmp_path, "q.json", QUOTES))
    assert r.returncode == 0, r.stderr
    r = produce(cli, log, "evs", "--value-serializer", "json-schema", "--value-schema", str(js),
                "--key-serializer", "json-schema", "--key-schema", str(js), "--format", "jsonl",
                _write(tmp_path, "e.jsonl", [{"key": {"a": 1}, "value": {"a": 2}}]))
    assert r.returncode == 0, r.stderr
    stub = RegistryStub()
    for key, value in schemas_records(cli, log):
        v = dict(value, references=value.get("references", []))
        stub.versions[(key["subject"], key["version"])] = v
        stub.ids.setdefault(v["id"], v)
    assert sorted(stub.ids) == [1, 2, 3]

    def raw_values(topic):
        import base64

        r = cli("read", str(log), "-t", topic, "-o", "json", "--data-encoding", "base64")
        return [(base64.b64decode(o["key"]) if o["key"] else None, base64.b64decode(o["value"]))
                for o in map(json.loads, r.stdout.splitlines())]

    with stub.running() as reg:
        _, _, _, client, Ctx, Field = confluent_serializers(reg.url)
        from confluent_kafka.schema_registry.avro import AvroDeserializer
        from confluent_kafka.schema_registry.json_schema import JSONDeserializer
        from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
        from registry_testkit import compile_proto

        ad = AvroDeserializer(client)
        got = [ad(v, Ctx("trades", Field.VALUE)) for _, v in raw_values("trades")]
        assert [g["sym"] for g in got] == ["ACME", "\u00c5S"]
        assert got[0]["raw"] == b"\x00\xfe" and got[0]["qty"] == 10 and got[1]["qty"] is None
        cls = compile_proto(tmp_path, "q.proto", PROTO)["Quote"]
        pd = ProtobufDeserializer(cls, {"use.deprecated.format": False})
        got = [pd(v, Ctx("quotes", Field.VALUE)) for _, v in raw_values("quotes")]
        assert [(g.sym, g.bid, list(g.lots)) for g in got] == [
            ("X", 9007199254740993, [1, 2]), ("", 0, [])]
        jd = JSONDeserializer(json.dumps(JSCHEMA), schema_registry_client=client)
        [(k, v)] = raw_values("evs")
        assert jd(k, Ctx("evs", Field.KEY)) == {"a": 1}
        assert jd(v, Ctx("evs", Field.VALUE)) == {"a": 2}


def test_read_output_is_produce_input(cli, tmp_path, avsc):
    """read --value-decoder -o json | produce --format jsonl --value-serializer: the same
    values in another topic."""
    need("fastavro")
    log = tmp_path / "kl"
    assert produce(cli, log, "trades", "--value-serializer", "avro", "--value-schema", avsc,
                   _write(tmp_path, "in.json", TRADES)).returncode == 0
    dump = tmp_path / "dump.jsonl"
    r = cli("read", str(log), "-t", "trades", "--value-decoder", "schema-registry", "-o", "json")
    dump.write_text(r.stdout)
    r = produce(cli, log, "copy", "--format", "jsonl", "--value-serializer", "avro",
                "--value-subject", "trades-value", str(dump))
    assert r.returncode == 0, r.stderr
    assert [o["value"] for o in read_values(cli, log, "copy")] == TRADES


def test_bad_input_and_bad_schemas(cli, tmp_path, avsc):
    need("fastavro")
    log = tmp_path / "kl"
    bad = _write(tmp_path, "bad.json", [TRADES[0], {"sym": 1}])
    r = produce(cli, log, "trades", "--value-serializer", "avro", "--value-schema", avsc, bad)
    assert r.returncode == 1
    assert "input:2: value does not match the Avro schema" in r.stderr
    assert json.loads(r.stdout)["records"] == 1  # the records before it are written
    broken = tmp_path / "broken.avsc"
    broken.write_text('{"type": "record", "name": "X", "fields": [{"name": "a"}]}')
    r = produce(cli, tmp_path / "kl2", "t", "--value-serializer", "avro", "--value-schema",
                str(broken), _write(tmp_path, "x.json", [{"a": 1}]))
    assert r.returncode == 2 and "does not parse" in r.stderr
    assert not (tmp_path / "kl2").exists()
    r = produce(cli, tmp_path / "kl3", "t", "--value-subject", "s",
                _write(tmp_path, "y.json", [{"a": 1}]))
    assert r.returncode == 2 and "--value-serializer" in r.stderr


def test_a_read_only_subject_refuses(cli, tmp_path, avsc):
    need("fastavro")
    from registry_testkit import write_topic

    log = tmp_path / "kl"
    write_topic(log, "_schemas-0", [(b'{"keytype":"MODE","subject":"trades-value","magic":0}',
                                     b'{"subject":"trades-value","mode":"READONLY"}')])
    r = produce(cli, log, "trades", "--value-serializer", "avro", "--value-schema", avsc,
                _write(tmp_path, "in.json", TRADES))
    assert r.returncode == 2 and "read-write mode" in r.stderr
