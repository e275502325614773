"""The JSON of Schema Registry decoding validates against the package's JSON Schemas:
read and dump-segment records (decoded, and kept as bytes), produce's schemas, export's
summary and rows."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
from registry_testkit import need


def validator(name: str):
    s = json.loads(resources.files("kafkalog_cli.schemas").joinpath(f"{name}.json")
                   .read_text())
    return jsonschema.Draft202012Validator(s)


def valid(name: str, objs: list) -> None:
    v = validator(name)
    assert objs
    for o in objs:
        errors = [e.message for e in v.iter_errors(o)]
        assert not errors, (name, o, errors[:3])


def test_decoded_json_validates(cli, tmp_path):
    need("fastavro")
    avsc = tmp_path / "a.avsc"
    avsc.write_text(json.dumps({"type": "record", "name": "R", "fields": [
        {"name": "a", "type": "int"}, {"name": "b", "type": ["null", "string"]}]}))
    data = tmp_path / "in.json"
    data.write_text('{"a": 1, "b": {"string": "x"}}\n{"a": 2, "b": null}\n')
    log = tmp_path / "kl"
    r = cli("produce", "--log-dir", str(log), "--topic", "t", "--no-fsync", "-o", "json",
            "--value-serializer", "avro", "--value-schema", str(avsc), str(data))
    assert r.returncode == 0, r.stderr
    valid("produce", [json.loads(r.stdout)])
    # a record that does not decode, beside the two that do
    r = cli("produce", "--log-dir", str(log), "--topic", "t", "--no-fsync", "-o", "json",
            "--format", "raw", str(avsc))
    assert r.returncode == 0, r.stderr
    r = cli("read", str(log), "-t", "t", "--value-decoder", "schema-registry", "-o", "json")
    recs = [json.loads(x) for x in r.stdout.splitlines()]
    assert [o["valueEncoding"] for o in recs] == ["avro", "avro", "base64"]
    valid("consumer-record", recs)
    r = cli("dump-segment", str(log / "t-0"), "--value-decoder", "schema-registry", "-o",
            "json")
    valid("dump-event", [o for o in map(json.loads, r.stdout.splitlines())
                         if o["type"] == "record"])
    need("pyarrow")
    out = tmp_path / "out"
    r = cli("export", str(log), "--to", str(out), "--topic", "t", "--engine", "local",
            "--format", "jsonl", "--value-decoder", "schema-registry", "-o", "json")
    assert r.returncode == 1  # the raw record: counted
    valid("export", [json.loads(r.stdout)])
    rows = [json.loads(x) for f in out.rglob("*.jsonl") for x in f.read_text().splitlines()]
    valid("export-row", rows)
    assert rows[0]["value"] == {"a": 1, "b": "x"} and rows[2]["valueRaw"]


def test_audit_value_decoder(cli, tmp_path):
    """audit --value-decoder: per partition the records that decode, those that do not
    (a problem, exit 1) and the schema ids seen; the JSON validates, the --report has the
    columns."""
    need("fastavro")
    avsc = tmp_path / "a.avsc"
    avsc.write_text('"string"')
    data = tmp_path / "in.json"
    data.write_text('"x"\n"y"\n')
    log = tmp_path / "kl"
    assert cli("produce", "--log-dir", str(log), "--topic", "t", "--no-fsync",
               "--value-serializer", "avro", "--value-schema", str(avsc),
               str(data)).returncode == 0
    r = cli("audit", str(log), "--value-decoder", "schema-registry", "-o", "json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    valid("audit", [res])
    by_topic = {p["topic"]: p for p in res["partitions"]}
    assert (by_topic["t"]["decodedRecords"], by_topic["t"]["undecodedRecords"],
            by_topic["t"]["schemaIds"]) == (2, 0, [1])
    assert by_topic["_schemas"]["decodedRecords"] is None
    assert cli("produce", "--log-dir", str(log), "--topic", "t", "--no-fsync",
               str(data)).returncode == 0  # two plain lines: not framed
    need("pyarrow")
    report = tmp_path / "audit.parquet"
    r = cli("audit", str(log), "--value-decoder", "avro", "-o", "json", "--report",
            str(report))
    assert r.returncode == 1
    t = json.loads(r.stdout)["partitions"]
    p = next(x for x in t if x["topic"] == "t")
    assert (p["decodedRecords"], p["undecodedRecords"]) == (2, 2) and not p["ok"]
    assert any("2 keys or values of t did not decode" in x for x in p["problems"])
    import pyarrow.parquet as pq

    rows = pq.read_table(report).to_pylist()
    assert {(x["topic"], x["decodedRecords"]) for x in rows} == {("t", 2), ("_schemas", None)}
