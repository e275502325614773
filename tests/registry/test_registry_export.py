"""``export --value-decoder``: typed Parquet columns from the topic's newest schema, every
record read through Avro schema resolution; checked against fastavro reading the same
payloads with the same reader schema (its logical types converted by fastavro)."""

from __future__ import annotations

import io
import json
import uuid
from decimal import Decimal

import pytest
from registry_testkit import RegistryStub, compile_proto, need, write_topic

V1 = {"type": "record", "name": "Reading", "namespace": "iot", "fields": [
    {"name": "sensor", "type": "string"},
    {"name": "value", "type": "double"},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "tod", "type": {"type": "int", "logicalType": "time-millis"}},
    {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9,
                               "scale": 2}},
    {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "attrs", "type": {"type": "map", "values": "long"}},
    {"name": "level", "type": {"type": "enum", "name": "Level", "symbols": ["LO", "HI"]}},
    {"name": "opt", "type": ["null", "int"], "default": None},
    {"name": "either", "type": ["null", "string", "long"], "default": None},
    {"name": "where", "type": {"type": "record", "name": "Pos", "fields": [
        {"name": "lat", "type": "float"}, {"name": "fix", "type": {
            "type": "fixed", "name": "Fix", "size": 2}}]}},
]}
# v2: a new field with a default, read into every record of v1
V2 = dict(V1, fields=V1["fields"] + [{"name": "unit", "type": "string", "default": "C"}])


def reading(i: int) -> dict:
    return {"sensor": f"s{i % 7}", "value": i / 4, "day": 19000 + i % 400,
            "at": 1_700_000_000_000 + i, "at_us": 1_700_000_000_000_000 + i,
            "tod": (i * 997) % 86_400_000, "price": Decimal(i % 100000) / 100,
            "id": str(uuid.UUID(int=i)), "tags": [f"t{i % 3}"] * (i % 3),
            "attrs": {"a": i, "b": -i} if i % 2 else {}, "level": "HI" if i % 2 else "LO",
            "opt": None if i % 5 == 0 else i, "either": [None, "x", i][i % 3],
            "where": {"lat": 0.5, "fix": bytes([i % 256, 7])}}


def framed(fastavro, sid: int, schema, datum) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), datum)
    return b"\x00" + sid.to_bytes(4, "big") + buf.getvalue()


_PARSED: dict = {}


def _parsed(fastavro, schema):
    key = json.dumps(schema, sort_keys=True)
    if key not in _PARSED:
        _PARSED[key] = fastavro.parse_schema(schema)
    return _PARSED[key]


def oracle(fastavro, writer, reader, payload: bytes):
    """fastavro's reading of a frame with the reader schema, in the shape pyarrow gives
    back (uuid as text; a union of several branches as Spark's member struct)."""
    d = fastavro.schemaless_reader(io.BytesIO(payload[5:]), _parsed(fastavro, writer),
                                   _parsed(fastavro, reader))
    d["id"] = str(d["id"])
    e = d["either"]
    d["either"] = None if e is None else ({"member0": e, "member1": None}
                                          if isinstance(e, str) else
                                          {"member0": None, "member1": e})
    d["attrs"] = list(d["attrs"].items())
    return d


def fields(struct) -> dict:
    return {f.name: f.type for f in struct}


def export_table(cli, log, out, *args):
    pq = need("pyarrow.parquet")
    r = cli("export", str(log), "--to", str(out), "--engine", "local", "-o", "json", *args)
    # (the whole log directory is exported: _schemas is written too, not decoded)
    files = sorted(out.glob("topic=readings/*/*.parquet"))
    return r, (pq.read_table(files[0]) if files else None)


def _log(tmp_path, values, stub) -> object:
    log = tmp_path / "logs"
    write_topic(log, "readings-0", [(None, v) for v in values], one_batch_each=False)
    stub.write_schemas(log)
    return log


def test_typed_columns_and_schema_resolution(cli, tmp_path):
    fastavro = need("fastavro")
    pa = need("pyarrow")
    stub = RegistryStub()
    stub.register("readings-value", json.dumps(V1))
    stub.register("readings-value", json.dumps(V2))
    values = [framed(fastavro, 1, V1, reading(i)) for i in range(40)]
    values += [framed(fastavro, 2, V2, dict(reading(i), unit="F")) for i in range(40, 60)]
    r, t = export_table(cli, _log(tmp_path, values, stub), tmp_path / "out", "--value-decoder",
                        "schema-registry")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["undecodedRecords"] == 0
    typ = fields(t.schema.field("value").type)
    assert typ["day"] == pa.date32()
    assert typ["at"] == pa.timestamp("ms", tz="UTC")
    assert typ["at_us"] == pa.timestamp("us", tz="UTC")
    assert typ["tod"] == pa.time32("ms")
    assert typ["price"] == pa.decimal128(9, 2)
    assert typ["attrs"] == pa.map_(pa.string(), pa.int64())
    assert typ["level"] == pa.string()
    assert fields(typ["where"])["fix"] == pa.binary(2)
    assert typ["unit"] == pa.string()
    got = t.column("value").to_pylist()
    want = [oracle(fastavro, V1 if i < 40 else V2, V2, v) for i, v in enumerate(values)]
    assert got == want
    assert got[0]["unit"] == "C" and got[45]["unit"] == "F"  # v1 read with v2's default
    assert t.column("valueSchemaId").to_pylist() == [1] * 40 + [2] * 20
    assert t.column("valueRaw").null_count == 60


def test_unresolvable_and_undecodable_records_keep_bytes(cli, tmp_path):
    fastavro = need("fastavro")
    # v2 adds a field without a default: v1's records cannot be read as v2
    v2 = dict(V1, fields=V1["fields"] + [{"name": "must", "type": "int"}])
    stub = RegistryStub()
    stub.register("readings-value", json.dumps(V1))
    stub.register("readings-value", json.dumps(v2))
    values = [framed(fastavro, 1, V1, reading(0)), framed(fastavro, 2, v2,
                                                          dict(reading(1), must=5)),
              b"\x00\x00\x00\x00\x09xyz", b"not framed"]
    r, t = export_table(cli, _log(tmp_path, values, stub), tmp_path / "out", "--value-decoder",
                        "avro")
    assert r.returncode == 1
    res = json.loads(r.stdout)
    assert res["undecodedRecords"] == 3 and not res["ok"]
    assert any("schema id 9 not found" in p for p in res["problems"])
    assert t.column("valueRaw").to_pylist() == [values[0], None, values[2], values[3]]
    assert t.column("value").to_pylist()[1]["must"] == 5
    assert t.column("valueSchemaId").to_pylist() == [None, 2, None, None]


def test_protobuf_and_json_schema_columns(cli, tmp_path):
    pa = need("pyarrow")
    proto = ('syntax = "proto3";\npackage m;\nmessage Ev { string id = 1; int64 n = 2; '
             'repeated uint32 xs = 3; map<string, bool> flags = 4; Kind kind = 5; '
             'Sub sub = 6; enum Kind { A = 0; B = 1; } message Sub { double d = 1; } }\n')
    classes = compile_proto(tmp_path, "ev.proto", proto)
    stub = RegistryStub()
    p = stub.register("evs-value", proto, "PROTOBUF")
    j = stub.register("docs-value", json.dumps({"type": "object"}), "JSON")
    ev = classes["Ev"](id="a", n=-(2**40), xs=[1, 2], flags={"f": True}, kind=1)
    ev.sub.d = 0.25
    head = b"\x00" + p["id"].to_bytes(4, "big") + b"\x00"
    log = tmp_path / "logs"
    write_topic(log, "evs-0", [(None, head + ev.SerializeToString()),
                               (None, head + classes["Ev"]().SerializeToString())])
    write_topic(log, "docs-0", [(None, b"\x00" + j["id"].to_bytes(4, "big") + b'{"a": [1]}')])
    stub.write_schemas(log)
    r, _ = export_table(cli, log, tmp_path / "out", "--value-decoder", "schema-registry",
                        "--topic", "evs", "--topic", "docs")
    assert r.returncode == 0, r.stderr
    pq = need("pyarrow.parquet")
    evs = pq.read_table(next((tmp_path / "out" / "topic=evs").rglob("*.parquet")))
    typ = fields(evs.schema.field("value").type)
    assert typ["n"] == pa.int64() and typ["xs"] == pa.list_(pa.uint32())
    assert typ["flags"] == pa.map_(pa.string(), pa.bool_())
    assert evs.column("value").to_pylist() == [
        {"id": "a", "n": -(2**40), "xs": [1, 2], "flags": [("f", True)], "kind": "B",
         "sub": {"d": 0.25}},
        {"id": "", "n": 0, "xs": [], "flags": [], "kind": "A", "sub": None}]
    docs = pq.read_table(next((tmp_path / "out" / "topic=docs").rglob("*.parquet")))
    assert docs.schema.field("value").type == pa.string()
    assert json.loads(docs.column("value")[0].as_py()) == {"a": [1]}


def test_jsonl_export_of_decoded_values(cli, tmp_path):
    fastavro = need("fastavro")
    stub = RegistryStub()
    stub.register("readings-value", json.dumps(V1))
    values = [framed(fastavro, 1, V1, reading(3))]
    out = tmp_path / "out"
    r = cli("export", str(_log(tmp_path, values, stub)), "--to", str(out), "--engine",
            "local", "--format", "jsonl", "--value-decoder", "schema-registry", "-o", "json")
    assert r.returncode == 0, r.stderr
    [row] = [json.loads(x) for f in out.glob("topic=readings/*/*.jsonl")
             for x in f.read_text().splitlines()]
    v = row["value"]
    import datetime

    day = datetime.date(1970, 1, 1) + datetime.timedelta(days=19003)
    assert v["day"] == day.isoformat() and v["price"] == "0.03" and v["sensor"] == "s3"
    assert v["at"].startswith("2023-11-14T22:13:20.003") and row["valueSchemaId"] == 1


SMALL_V1 = {"type": "record", "name": "Tick", "fields": [
    {"name": "sym", "type": "string"}, {"name": "px", "type": "double"},
    {"name": "qty", "type": ["null", "long"], "default": None},
    {"name": "side", "type": {"type": "enum", "name": "Side", "symbols": ["B", "S"]}}]}
SMALL_V2 = dict(SMALL_V1, fields=SMALL_V1["fields"] + [
    {"name": "venue", "type": "string", "default": "X"}])


@pytest.mark.slow
def test_100k_records_against_fastavro(cli, tmp_path):
    """100,000 records of two schema versions, exported and compared value by value with
    fastavro's own reading of the same payloads (the newest schema as the reader's)."""
    fastavro = need("fastavro")
    from kafkalog_testkit import raw_batch, raw_record

    stub = RegistryStub()
    stub.register("readings-value", json.dumps(SMALL_V1))
    stub.register("readings-value", json.dumps(SMALL_V2))
    p1, p2 = fastavro.parse_schema(SMALL_V1), fastavro.parse_schema(SMALL_V2)
    d = tmp_path / "logs" / "readings-0"
    d.mkdir(parents=True)
    values = []
    with open(d / "00000000000000000000.log", "wb") as f:
        for base in range(0, 100_000, 1000):
            block = []
            for i in range(base, base + 1000):
                buf = io.BytesIO()
                tick = {"sym": f"S{i % 97}", "px": i / 8, "qty": None if i % 4 == 0 else i,
                        "side": "BS"[i % 2]}
                if i % 3:
                    fastavro.schemaless_writer(buf, p1, tick)
                    values.append(b"\x00\x00\x00\x00\x01" + buf.getvalue())
                else:
                    fastavro.schemaless_writer(buf, p2, dict(tick, venue=f"V{i % 5}"))
                    values.append(b"\x00\x00\x00\x00\x02" + buf.getvalue())
                block.append(raw_record(i - base, 0, None, values[-1]))
            f.write(raw_batch(base, block))
    stub.write_schemas(tmp_path / "logs")
    r, t = export_table(cli, tmp_path / "logs", tmp_path / "out", "--value-decoder",
                        "schema-registry")
    assert r.returncode == 0, r.stderr
    assert t.num_rows == 100_000 and json.loads(r.stdout)["undecodedRecords"] == 0
    got = t.column("value").to_pylist()
    reader = fastavro.schemaless_reader
    for i, v in enumerate(values):
        want = reader(io.BytesIO(v[5:]), p2 if i % 3 == 0 else p1, p2)
        assert got[i] == want, i
    assert t.column("valueSchemaId").to_pylist()[:3] == [2, 1, 1]
