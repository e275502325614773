"""``read --key-decoder/--value-decoder``: records framed by confluent-kafka's own Avro,
Protobuf and JSON Schema serializers (against a registry stub whose state is written to
``_schemas`` in the registry's record format) print, with no registry running, what the
Confluent console consumers print - computed here with fastavro's Avro JSON encoder, the
protobuf library's JSON mapping and the input document itself."""

from __future__ import annotations

import io
import json

import pytest
from registry_testkit import (
    RegistryStub,
    compile_proto,
    confluent_serializers,
    need,
    schema_key,
    schema_value,
    write_topic,
)

USER_V1 = {"type": "record", "name": "User", "namespace": "ex", "fields": [
    {"name": "name", "type": "string"},
    {"name": "age", "type": ["null", "int"], "default": None},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "raw", "type": "bytes"},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
    {"name": "born", "type": {"type": "int", "logicalType": "date"}},
    {"name": "extra", "type": ["null", "string",
                               {"type": "record", "name": "Pt",
                                "fields": [{"name": "x", "type": "double"}]}],
     "default": None},
    {"name": "m", "type": {"type": "map", "values": ["null", "long"]}},
]}
USERS = [
    {"name": "ann", "age": 31, "tags": ["a", "b"], "raw": b"\x00\xff\x10", "kind": "B",
     "born": 19000, "extra": {"x": 1.5}, "m": {"k": 5, "z": None}},
    {"name": "bob\u00e9", "age": None, "tags": [], "raw": b"", "kind": "A", "born": 0,
     "extra": "s", "m": {}},
]
PROTO = """syntax = "proto3";
package shop;
message Order {
  string id = 1;
  int64 amount = 2;
  repeated string items = 3;
  Status status = 4;
  map<string, int32> counts = 5;
  Line first = 6;
  message Line { string sku = 1; double price = 2; }
  enum Status { NEW = 0; PAID = 1; }
}
message Other { bool flag = 1; }
"""
JSON_SCHEMA = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Ev",
               "type": "object", "properties": {"n": {"type": "integer"},
                                                "s": {"type": "string"}},
               "required": ["n"]}


def avro_json(schema, datum) -> dict:
    """Avro's JSON encoding of ``datum`` by fastavro's own JSON writer (logical types
    printed as their underlying type, as the console consumer prints them)."""
    fastavro = need("fastavro")
    from kafkalog_cli.registry.avro import strip_logical_types

    out = io.StringIO()
    fastavro.json_writer(out, fastavro.parse_schema(strip_logical_types(schema)), [datum])
    return json.loads(out.getvalue())


def read_json(cli, *args) -> tuple[list[dict], object]:
    r = cli("read", *args, "-o", "json")
    return [json.loads(line) for line in r.stdout.splitlines()], r


@pytest.fixture(scope="module")
def confluent_dir(tmp_path_factory):
    """A log directory with Avro, Protobuf and JSON Schema topics written by
    confluent-kafka's serializers, and the stub's _schemas."""
    need("fastavro")
    tmp = tmp_path_factory.mktemp("confluent")
    stub = RegistryStub()
    with stub.running() as reg:
        Avro, Proto, Json, client, Ctx, Field = confluent_serializers(reg.url)
        classes = compile_proto(tmp, "order.proto", PROTO)
        avro = Avro(client, json.dumps(USER_V1))
        avro_key = Avro(client, '"string"')
        proto = Proto(classes["Order"], client, {"use.deprecated.format": False})
        js = Json(json.dumps(JSON_SCHEMA), client)
        users = [(avro_key(u["name"], Ctx("users", Field.KEY)),
                  avro(u, Ctx("users", Field.VALUE))) for u in USERS]
        orders_in = [classes["Order"](id="o1", amount=2**40, items=["x", "y"], status=1,
                                      counts={"a": 1}, first=classes["Order"].Line(
                                          sku="s", price=2.5)),
                     classes["Order"]()]
        orders = [(None, proto(m, Ctx("orders", Field.VALUE))) for m in orders_in]
        events_in = [{"n": 1, "s": "x"}, {"n": 2}]
        events = [(None, js(e, Ctx("events", Field.VALUE))) for e in events_in]
    log = tmp / "logs"
    write_topic(log, "users-0", users)
    write_topic(log, "orders-0", orders, one_batch_each=False)
    write_topic(log, "events-0", events)
    stub.write_schemas(log)
    return {"log": log, "stub": stub, "orders": orders_in, "events": events_in,
            "users": users, "orders_raw": orders}


def test_avro_as_the_avro_console_consumer_prints(cli, confluent_dir):
    recs, r = read_json(cli, str(confluent_dir["log"]), "-t", "users",
                        "--key-decoder", "schema-registry", "--value-decoder",
                        "schema-registry")
    assert r.returncode == 0, r.stderr
    stub = confluent_dir["stub"]
    vid = next(v["id"] for (s, _), v in stub.versions.items() if s == "users-value")
    kid = next(v["id"] for (s, _), v in stub.versions.items() if s == "users-key")
    assert [o["value"] for o in recs] == [avro_json(USER_V1, u) for u in USERS]
    assert [o["key"] for o in recs] == [u["name"] for u in USERS]
    for o in recs:
        assert (o["valueEncoding"], o["valueSchemaId"], o["valueSubject"]) == (
            "avro", vid, "users-value")
        assert (o["keyEncoding"], o["keySchemaId"], o["keySubject"]) == (
            "avro", kid, "users-key")
        assert "decodeWarnings" not in o
    # the union branches and bytes as Avro's JSON encoding spells them
    assert recs[0]["value"]["age"] == {"int": 31}
    assert recs[0]["value"]["extra"] == {"ex.Pt": {"x": 1.5}}
    assert recs[0]["value"]["raw"] == "\u0000\u00ff\u0010"
    assert recs[0]["value"]["m"] == {"k": {"long": 5}, "z": None}


def test_avro_console_text(cli, confluent_dir):
    r = cli("read", str(confluent_dir["log"]), "-t", "users", "--value-decoder", "avro",
            "--property", "print.key=true")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    key0, value0 = lines[0].split("\t", 1)
    assert json.loads(value0) == avro_json(USER_V1, USERS[0])
    # the key was not asked to be decoded: its bytes (the Avro frame) as they are
    assert key0.encode("utf-8", "surrogateescape").startswith(b"\x00")


def test_kcat_format_prints_the_decoded_json(cli, confluent_dir):
    """read --format with --value-decoder: %s is the value's Avro JSON, %S its length
    (kcat -s value=avro prints the JSON), %k the key's bytes as written (not decoded);
    it raised AttributeError once both features met."""
    r = cli("read", str(confluent_dir["log"]), "-t", "users", "--value-decoder", "avro",
            "--format", "%o %S %s\\n")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for i, (line, u) in enumerate(zip(lines, USERS, strict=True)):
        offset, size, value = line.split(" ", 2)
        assert (int(offset), json.loads(value)) == (i, avro_json(USER_V1, u))
        assert int(size) == len(value.encode("utf-8"))


def test_protobuf_as_the_protobuf_console_consumer_prints(cli, confluent_dir):
    need("google.protobuf")
    from google.protobuf import json_format

    recs, r = read_json(cli, str(confluent_dir["log"]), "-t", "orders", "--value-decoder",
                        "schema-registry")
    assert r.returncode == 0, r.stderr
    want = [json_format.MessageToDict(m, always_print_fields_with_no_presence=True)
            for m in confluent_dir["orders"]]
    assert [o["value"] for o in recs] == want
    assert recs[0]["value"]["amount"] == str(2**40)  # int64 as a string, as JsonFormat
    assert recs[1]["value"]["items"] == [] and recs[1]["value"]["status"] == "NEW"
    assert {o["valueEncoding"] for o in recs} == {"protobuf"}
    assert {o["valueSubject"] for o in recs} == {"orders-value"}


def test_json_schema_payload_as_is(cli, confluent_dir):
    recs, r = read_json(cli, str(confluent_dir["log"]), "-t", "events", "--value-decoder",
                        "json-schema")
    assert r.returncode == 0, r.stderr
    assert [o["value"] for o in recs] == confluent_dir["events"]
    assert {o["valueEncoding"] for o in recs} == {"json-schema"}


def test_insisting_on_another_type_keeps_bytes(cli, confluent_dir):
    recs, r = read_json(cli, str(confluent_dir["log"]), "-t", "events", "--value-decoder",
                        "avro")
    assert r.returncode == 1
    assert all(o["valueEncoding"] == "base64" for o in recs)
    assert "is a json-schema schema, not avro" in recs[0]["decodeWarnings"][0]
    import base64

    assert base64.b64decode(recs[0]["value"]) == confluent_dir["users"][0][1][:0] or \
        base64.b64decode(recs[0]["value"])[0] == 0


def test_through_a_live_registry_with_basic_auth(cli, confluent_dir, tmp_path):
    """No _schemas beside the topic: --schema-registry URL, credentials in the URL or as
    basic.auth.user.info."""
    stub = confluent_dir["stub"]
    stub.user_info = "alice:s3cret"
    log = tmp_path / "logs"
    write_topic(log, "users-0", confluent_dir["users"])
    try:
        with stub.running() as reg:
            host = reg.url.split("//")[1]
            recs, r = read_json(cli, str(log), "-t", "users", "--value-decoder",
                                "schema-registry", "--schema-registry",
                                f"http://alice:s3cret@{host}")
            assert r.returncode == 0, r.stderr
            assert [o["value"] for o in recs] == [avro_json(USER_V1, u) for u in USERS]
            recs, r = read_json(cli, str(log), "-t", "users", "--value-decoder",
                                "schema-registry", "--schema-registry", reg.url,
                                "--schema-registry-property",
                                "basic.auth.credentials.source=USER_INFO",
                                "--schema-registry-property", "basic.auth.user.info=alice:s3cret")
            assert r.returncode == 0, r.stderr
            assert recs[1]["value"]["name"] == USERS[1]["name"]
            r = cli("read", str(log), "-t", "users", "--value-decoder", "schema-registry",
                    "--schema-registry", reg.url, "-o", "json")
            assert r.returncode == 3
            assert "HTTP 401" in r.stderr and "Traceback" not in r.stderr
    finally:
        stub.user_info = None


def test_no_schemas_and_no_registry_is_a_usage_error(cli, confluent_dir, tmp_path):
    log = tmp_path / "logs"
    write_topic(log, "users-0", confluent_dir["users"])
    r = cli("read", str(log), "-t", "users", "--value-decoder", "schema-registry")
    assert r.returncode == 2
    assert "--schemas" in r.stderr and "--schema-registry" in r.stderr


def test_corrupt_frames_and_unknown_ids_keep_bytes(cli, confluent_dir, tmp_path):
    log = tmp_path / "logs"
    good = confluent_dir["users"][0][1]
    values = [
        good,
        b"\x00\x00\x00\x03\xe7" + good[5:],   # id 999: not in _schemas
        b"\x00\x00\x00\x03\xe7" + good[5:],
        b"\x00\x00\x00\x00\x07" + good[5:],   # id 7: not in _schemas either
        b"\x01" + good[1:],                    # magic byte 1
        good[:3],                              # shorter than the header
        good[:5] + b"\xff\xff\xff",            # the payload does not decode
        b"plain text",
    ]
    write_topic(log, "users-0", [(None, v) for v in values])
    confluent_dir["stub"].write_schemas(log)
    recs, r = read_json(cli, str(log), "-t", "users", "--value-decoder", "schema-registry")
    assert r.returncode == 1
    assert recs[0]["valueEncoding"] == "avro"
    import base64

    for o, v in zip(recs[1:], values[1:], strict=True):
        assert o["valueEncoding"] == "base64" and base64.b64decode(o["value"]) == v
        assert len(o["decodeWarnings"]) == 1
    assert "schema id 999 not found" in recs[1]["decodeWarnings"][0]
    assert "unknown magic byte 1" in recs[4]["decodeWarnings"][0]
    assert "shorter than the 5-byte header" in recs[5]["decodeWarnings"][0]
    assert "does not decode" in recs[6]["decodeWarnings"][0]
    err = r.stderr.splitlines()
    # one line per missing id (with its count), one for the other failures
    assert sum("schema id 999 not found" in e and "2 records" in e for e in err) == 1
    assert sum("schema id 7 not found" in e and "1 record " in e for e in err) == 1
    assert sum("did not decode" in e and "4 keys or values" in e for e in err) == 1
    assert "Traceback" not in r.stderr


def test_schema_evolution_each_version_by_its_own_id(cli, tmp_path):
    """Records of v1 and v2 of a subject each decode with their writer's schema."""
    fastavro = need("fastavro")
    v2 = json.loads(json.dumps(USER_V1))
    v2["fields"].append({"name": "email", "type": ["null", "string"], "default": None})
    stub = RegistryStub()
    a = stub.register("users-value", json.dumps(USER_V1))
    b = stub.register("users-value", json.dumps(v2))
    assert (a["id"], b["id"], b["version"]) == (1, 2, 2)

    def framed(sid, schema, datum):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), datum)
        return b"\x00" + sid.to_bytes(4, "big") + buf.getvalue()

    u2 = dict(USERS[1], email="e@x")
    log = tmp_path / "logs"
    write_topic(log, "users-0", [(None, framed(1, USER_V1, USERS[0])),
                                 (None, framed(2, v2, u2))])
    stub.write_schemas(log)
    recs, r = read_json(cli, str(log), "-t", "users", "--value-decoder", "schema-registry")
    assert r.returncode == 0, r.stderr
    assert recs[0]["value"] == avro_json(USER_V1, USERS[0])
    assert recs[1]["value"] == avro_json(v2, u2)
    assert [o["valueSchemaId"] for o in recs] == [1, 2]


def test_avro_reference_to_another_subject(cli, tmp_path):
    fastavro = need("fastavro")
    addr = {"type": "record", "name": "Address", "namespace": "ex",
            "fields": [{"name": "city", "type": "string"}]}
    person = {"type": "record", "name": "Person", "namespace": "ex",
              "fields": [{"name": "home", "type": "ex.Address"}]}
    stub = RegistryStub()
    stub.register("address", json.dumps(addr))
    p = stub.register("people-value", json.dumps(person), references=[
        {"name": "ex.Address", "subject": "address", "version": 1}])
    named: dict = {}
    fastavro.parse_schema(addr, named_schemas=named)
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(person, named_schemas=named),
                               {"home": {"city": "Oslo"}})
    log = tmp_path / "logs"
    write_topic(log, "people-0", [(None, b"\x00" + p["id"].to_bytes(4, "big")
                                   + buf.getvalue())])
    stub.write_schemas(log)
    recs, r = read_json(cli, str(log), "-t", "people", "--value-decoder", "avro")
    assert r.returncode == 0, r.stderr
    assert recs[0]["value"] == {"home": {"city": "Oslo"}}


def test_protobuf_reference_and_nested_message_index(cli, tmp_path):
    """An import through a reference, and a nested message picked by the message-index
    list ([0, 0]: the first message's first nested type)."""
    common = 'syntax = "proto3";\npackage c;\nmessage Money { int64 units = 1; string cur = 2; }\n'
    main = ('syntax = "proto3";\npackage p;\nimport "common.proto";\n'
            'message Pay { c.Money amount = 1; message Note { string text = 1; } }\n')
    classes = compile_proto(tmp_path, "pay.proto", main, {"common.proto": common})
    stub = RegistryStub()
    stub.register("common.proto", common, "PROTOBUF")
    p = stub.register("pay-value", main, "PROTOBUF",
                      [{"name": "common.proto", "subject": "common.proto", "version": 1}])
    pay = classes["Pay"]()
    pay.amount.units = 7
    pay.amount.cur = "NOK"
    note = classes["Pay"].Note(text="hi")
    head = b"\x00" + p["id"].to_bytes(4, "big")
    # [0] as the single byte 0; [0, 0] as count 2 then 0, 0 (zigzag varints)
    log = tmp_path / "logs"
    write_topic(log, "pay-0", [(None, head + b"\x00" + pay.SerializeToString()),
                               (None, head + b"\x04\x00\x00" + note.SerializeToString())])
    stub.write_schemas(log)
    recs, r = read_json(cli, str(log), "-t", "pay", "--value-decoder", "protobuf")
    assert r.returncode == 0, r.stderr
    assert recs[0]["value"] == {"amount": {"units": "7", "cur": "NOK"}}
    assert recs[1]["value"] == {"text": "hi"}


def test_soft_and_hard_deletes_seen_as_the_registry_serves_ids(cli, confluent_dir, tmp_path):
    """A soft-deleted schema is still found by id (the registry serves it); a
    hard-deleted one (a tombstone) is not."""
    stub = confluent_dir["stub"]
    (sub, ver), v = next(((k, v) for k, v in stub.versions.items() if k[0] == "users-value"))
    soft = [(schema_key(sub, ver), schema_value(sub, ver, v["id"], v["schema"],
                                                deleted=True))]
    log = tmp_path / "soft"
    write_topic(log, "users-0", confluent_dir["users"])
    stub.write_schemas(log, soft)
    recs, r = read_json(cli, str(log), "-t", "users", "--value-decoder", "schema-registry")
    assert r.returncode == 0 and recs[0]["valueEncoding"] == "avro"
    log = tmp_path / "hard"
    write_topic(log, "users-0", confluent_dir["users"])
    stub.write_schemas(log, soft + [(schema_key(sub, ver), None)])
    recs, r = read_json(cli, str(log), "-t", "users", "--value-decoder", "schema-registry")
    assert r.returncode == 1 and recs[0]["valueEncoding"] == "base64"
    assert f"schema id {v['id']} not found" in r.stderr


def test_dump_segment_value_decoder(cli, confluent_dir):
    """dump-segment --value-decoder: kafka-dump-log.sh's record lines with the decoded
    JSON as the payload, JSON Lines with the decoded value and its labels."""
    part = confluent_dir["log"] / "users-0"
    # (the key decoded too: its raw frame holds a newline, Avro's length byte 10)
    r = cli("dump-segment", str(part), "--key-decoder", "schema-registry", "--value-decoder",
            "schema-registry", "-o", "kafka")
    assert r.returncode == 0, r.stderr
    payloads = [line.split(" payload: ", 1)[1] for line in r.stdout.split("\n")
                if line.startswith("| offset:")]
    assert [json.loads(p) for p in payloads] == [avro_json(USER_V1, u) for u in USERS]
    r = cli("dump-segment", str(part), "--key-decoder", "avro", "--value-decoder", "avro",
            "-o", "json")
    recs = [o for o in map(json.loads, r.stdout.splitlines()) if o["type"] == "record"]
    assert [o["value"] for o in recs] == [avro_json(USER_V1, u) for u in USERS]
    assert [o["key"] for o in recs] == [u["name"] for u in USERS]
    assert {(o["valueEncoding"], o["valueSubject"], o["keySubject"]) for o in recs} == {
        ("avro", "users-value", "users-key")}


def test_dump_segment_names_undecoded_records(cli, confluent_dir, tmp_path):
    log = tmp_path / "logs"
    good = confluent_dir["users"][0][1]
    part = write_topic(log, "users-0", [(None, good), (None, b"\x00\x00\x00\x00\x63xx")])
    confluent_dir["stub"].write_schemas(log)
    r = cli("dump-segment", str(part), "--value-decoder", "schema-registry", "-o", "json")
    assert r.returncode == 1
    recs = [o for o in map(json.loads, r.stdout.splitlines()) if o["type"] == "record"]
    assert recs[1]["valueEncoding"] == "base64" and "schema id 99 not found" in \
        recs[1]["decodeWarnings"][0]
    assert "schema id 99 not found" in r.stderr and "1 record of users" in r.stderr
