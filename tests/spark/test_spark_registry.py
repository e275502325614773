"""The Spark source's ``valueDecoder``: the value column typed from the topic's newest
schema in the log directory's ``_schemas``, every version read through Avro schema
resolution, checked against fastavro reading the same payloads."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "registry"))
from registry_testkit import RegistryStub, need, write_topic  # noqa: E402

pytestmark = pytest.mark.spark

V1 = {"type": "record", "name": "Tick", "fields": [
    {"name": "sym", "type": "string"},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "tags", "type": {"type": "array", "items": "string"}}]}
V2 = dict(V1, fields=V1["fields"] + [{"name": "px", "type": ["null", "double"],
                                      "default": None}])


def test_value_decoder_option(spark, tmp_path):
    fastavro = need("fastavro")
    stub = RegistryStub()
    stub.register("ticks-value", json.dumps(V1))
    stub.register("ticks-value", json.dumps(V2))
    p1, p2 = fastavro.parse_schema(V1), fastavro.parse_schema(V2)
    values = []
    for i in range(6):
        buf = io.BytesIO()
        d = {"sym": f"s{i}", "at": 1_700_000_000_000 + i, "tags": ["a"] * i}
        if i % 2:
            fastavro.schemaless_writer(buf, p2, dict(d, px=i / 2))
            values.append(b"\x00\x00\x00\x00\x02" + buf.getvalue())
        else:
            fastavro.schemaless_writer(buf, p1, d)
            values.append(b"\x00\x00\x00\x00\x01" + buf.getvalue())
    values.append(b"not framed")
    log = tmp_path / "logs"
    write_topic(log, "ticks-0", [(None, v) for v in values])
    stub.write_schemas(log)
    df = (spark.read.format("kafkalog").option("subscribe", "ticks")
          .option("valueDecoder", "schema-registry").load(str(log)))
    assert [f.name for f in df.schema.fields][:4] == ["key", "value", "valueSchemaId",
                                                     "valueRaw"]
    rows = df.orderBy("offset").collect()
    for i, v in enumerate(values[:-1]):
        want = fastavro.schemaless_reader(io.BytesIO(v[5:]), p2 if i % 2 else p1, p2)
        got = rows[i]["value"].asDict()
        assert got["sym"] == want["sym"] and got["tags"] == want["tags"]
        assert got["px"] == want["px"]
        assert got["at"].timestamp() == want["at"].timestamp()
    assert [r["valueSchemaId"] for r in rows] == [1, 2, 1, 2, 1, 2, None]
    assert rows[-1]["value"] is None and bytes(rows[-1]["valueRaw"]) == b"not framed"
    # the _schemas topic is not decoded: reading it with the option is refused
    with pytest.raises(Exception, match="subscribe to the topics to decode"):
        _ = (spark.read.format("kafkalog").option("valueDecoder", "schema-registry")
             .load(str(log)).schema)
