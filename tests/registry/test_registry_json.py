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
