"""The Java ecosystem against serve and the bench broker of the wire suite, for the same
state: Kafka's Java producer (idempotent with every codec, transactional with offsets
sent to a group), its consumer (read_committed), and Kafka's command-line tools
(kafka-topics, kafka-configs, kafka-get-offsets, kafka-consumer-groups --describe /
--reset-offsets, kafka-delete-records, kafka-transactions, kafka-log-dirs), each side's
calls in one JVM (``ToolBatch``). Their outputs must be equal after replacing what
differs by nature: topic ids, the log directory's path, the transaction's clock values."""

from __future__ import annotations

import base64
import json
import re

import pytest
from kafka_testkit import kafka_tools_batch

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

T0 = 1_700_000_000_000
TOPIC, GROUP, TXN = "je-t", "je-g", "je-tx"
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def _specs() -> list[dict]:
    """One idempotent producer per codec (a record to each partition), then a
    transactional one: a record to partition 0 and the group's offsets, committed."""
    specs = [{"producer": {"compression.type": codec, "enable.idempotence": "true",
                           "acks": "all", "linger.ms": "60000"},
              "steps": [*({"op": "send", "topic": TOPIC, "partition": p,
                           "timestamp": T0 + 10 * i + p, "key": f"k{i}",
                           "value": f"{codec}-{p}" * 20, "headers": [["h", codec]]}
                          for p in (0, 1)), {"op": "flush"}]}
             for i, codec in enumerate(CODECS)]
    specs.append({"producer": {"transactional.id": TXN, "linger.ms": "60000"}, "steps": [
        {"op": "begin"},
        {"op": "send", "topic": TOPIC, "partition": 0, "timestamp": T0 + 100, "key": None,
         "value": "txn", "headers": []},
        {"op": "sendOffsets", "group": GROUP, "offsets": [
            {"topic": TOPIC, "partition": 0, "offset": 3},
            {"topic": TOPIC, "partition": 1, "offset": 2}]},
        {"op": "commit"}]})
    return specs


def _calls(bootstrap: str, tmp) -> list[tuple[str, list[str]]]:
    b = ["--bootstrap-server", bootstrap]
    files = []
    for i, spec in enumerate(_specs()):
        f = tmp / f"spec-{i}.json"
        f.write_text(json.dumps(spec))
        files.append(str(f))
    deletion = tmp / "delete.json"
    deletion.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": TOPIC, "partition": 1, "offset": 2}]}))
    tools = "org.apache.kafka.tools."
    groups = tools + "consumer.group.ConsumerGroupCommand"
    return [
        (tools + "TopicCommand", [*b, "--create", "--topic", TOPIC, "--partitions", "2",
                                  "--config", "retention.ms=86400000"]),
        *(("KafkalogClient", ["produce", bootstrap, f]) for f in files),
        ("KafkalogClient", ["consume", bootstrap, TOPIC, "read_committed", "20000"]),
        (tools + "TopicCommand", [*b, "--describe", "--topic", TOPIC]),
        (tools + "ConfigCommand", [*b, "--describe", "--entity-type", "topics",
                                   "--entity-name", TOPIC]),
        (tools + "ConfigCommand", [*b, "--alter", "--entity-type", "topics",
                                   "--entity-name", TOPIC, "--add-config", "segment.ms=600000"]),
        (tools + "ConfigCommand", [*b, "--describe", "--entity-type", "topics",
                                   "--entity-name", TOPIC]),
        (tools + "GetOffsetShell", [*b, "--topic", TOPIC]),
        (groups, [*b, "--describe", "--group", GROUP]),
        (groups, [*b, "--reset-offsets", "--group", GROUP, "--topic", TOPIC,
                  "--to-earliest", "--execute"]),
        (tools + "DeleteRecordsCommand", [*b, "--offset-json-file", str(deletion)]),
        (tools + "GetOffsetShell", [*b, "--topic", TOPIC, "--time", "-2"]),
        (groups, [*b, "--describe", "--group", GROUP, "--offsets"]),
        (tools + "TransactionsCommand", [*b, "describe", "--transactional-id", TXN]),
        (tools + "TransactionsCommand", [*b, "describe-producers", "--topic", TOPIC,
                                         "--partition", "0"]),
        (tools + "LogDirsCommand", [*b, "--describe", "--topic-list", TOPIC]),
    ]


def _normalise(text: str, log_dir: str) -> str:
    return re.sub(r"TopicId: \S+", "TopicId: <id>", text.replace(log_dir, "<logDir>"))


def _mask_clock(text: str, columns: tuple[str, ...]) -> str:
    """A tool's table with the named columns' clock values (after 2020) replaced."""
    rows = [line.split("\t") for line in text.strip().splitlines()]
    at = [rows[0].index(c) for c in columns]
    for row in rows[1:]:
        for i in at:
            if row[i].strip().isdigit() and int(row[i]) > 1_600_000_000_000:
                row[i] = "<time>"
    return "\n".join("\t".join(r) for r in rows)


def test_java_clients_and_tools_see_serve_as_the_broker(wire_pair, tmp_path):
    sides = {"broker": (wire_pair.broker.bootstrap, str(wire_pair.broker.log_dir)),
             "serve": (f"127.0.0.1:{wire_pair.server.port}", str(wire_pair.serve_dir))}
    out = {}
    for name, (bootstrap, log_dir) in sides.items():
        (tmp_path / name).mkdir()
        calls = _calls(bootstrap, tmp_path / name)
        results = kafka_tools_batch(calls)
        out[name] = [(f"{i}: {m.rsplit('.', 1)[-1]} {a[0] if m == 'KafkalogClient' else a[2]}",
                      r.exit, _normalise(r.stdout, log_dir))
                     for i, ((m, a), r) in enumerate(zip(calls, results, strict=True))]
    for side in out.values():
        # the transaction's clock values: its start time and duration, the marker's time
        side[-3] = (*side[-3][:2], _mask_clock(side[-3][2], (
            "CurrentTransactionStartTimeMs", "TransactionDurationMs")))
        side[-2] = (*side[-2][:2], _mask_clock(side[-2][2], ("LastTimestamp",)))
        side[-3] = (*side[-3][:2], re.sub(r"(<time>\s*)\t\d+", r"\1\t<ms>", side[-3][2]))
    for b, s in zip(out["broker"], out["serve"], strict=True):
        assert s == b, f"{b[0]}: serve differs:\n{s[2]}\nbroker:\n{b[2]}"
    # and what they say is what was written (values known from the specs)
    records = [json.loads(line) for line in out["serve"][7][2].splitlines()]
    assert [(r["partition"], r["offset"], r["timestamp"]) for r in records] == [
        *((0, i, T0 + 10 * i) for i in range(5)), (0, 5, T0 + 100),
        *((1, i, T0 + 10 * i + 1) for i in range(5))]
    assert [base64.b64decode(r["value"]) for r in records if r["partition"] == 1] == [
        (f"{c}-1" * 20).encode() for c in CODECS]
    # the commit's markers take offset 6 of partition 0; DeleteRecords moved 1's start
    assert out["serve"][12][2].split() == ["je-t:0:7", "je-t:1:5"]
    assert out["serve"][16][2].split() == ["je-t:0:0", "je-t:1:2"]
