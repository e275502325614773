"""kafkajs (npm, Node) against the server on 127.0.0.1: ``kafkajs/produce_consume.mjs``
produces N records per topic with codecs none and gzip (kafkajs needs plugins for
snappy, lz4 and zstd: not covered) and acks 0 / 1 / -1 (idempotent), consumes them back
with a group consumer (fromBeginning, auto commit), seeks, and reads offsets with the admin
client; afterwards the log directory passes verify-index, decodes with kafka-python's
reader to exactly the records produced, and every segment's indexes equal what recovery
rebuilds. ``kafkajs/transactions.mjs``: kafkajs' transactional producer (commit, abort,
sendOffsets) and its read_committed group consumer.

``npm ci`` runs once per session in ``tests/server/kafkajs`` when ``node_modules`` is
missing (kafkajs pinned by package-lock.json). Without node/npm the test skips, or fails
under ``CI=true``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from serve_testkit import check_log_dir

from kafkalog_cli.ops.verify import verify_index
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions

HERE = Path(__file__).parent / "kafkajs"
N = 150
BASE_TS = 1_700_000_000_000
CODECS = {"none": 0, "gzip": 1}
ACKS = {"0": 0, "1": 1, "all": -1}


def _missing(what: str):
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{what} (install Node.js >= 18 with npm)")
    pytest.skip(what)


@pytest.fixture(scope="session")
def kafkajs_node():
    """The ``node`` executable, with kafkajs installed in tests/server/kafkajs."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        _missing("node/npm are not installed")
    if not (HERE / "node_modules" / "kafkajs" / "package.json").exists():
        r = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=HERE,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"npm ci failed:\n{r.stdout}\n{r.stderr}"
    return node


def _expected():
    return [(b"key-%d" % i, b"value-%05d-" % i + b"x" * (i % 50), BASE_TS + i * 10)
            for i in range(N)]


def test_kafkajs_produce_consume(log_dir, kafkajs_node):
    with ServerThread(log_dir, ServerOptions(port=0)) as s:
        r = subprocess.run([kafkajs_node, str(HERE / "produce_consume.mjs"), s.bootstrap,
                            str(N), str(BASE_TS)], cwd=HERE, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    topics = [f"kjs-{c}-{a}" for c in CODECS for a in ACKS]
    assert out["created"] is True
    assert sorted(out["produced"]) == sorted(topics)
    expected = _expected()
    for topic in topics:
        # five sends of 30 records: acks=0 gets no offsets back
        offsets = out["produced"][topic]
        assert offsets == ([None] * 5 if topic.endswith("-0") else [0, 30, 60, 90, 120])
        got = out["consumed"][topic]
        assert [(o, p) for o, p, *_ in got] == [(i, 0) for i in range(N)], topic
        assert [(k.encode(), v.encode(), ts) for _, _, k, v, ts in got] == expected, topic
        assert out["committed"][topic] == [[0, N]]  # the group's commit after consuming
    assert out["ends"] == [[0, 0, N]]  # fetchTopicOffsets: [partition, low, high]
    assert out["byTime"] == [[0, 42]]  # fetchTopicOffsetsByTimestamp
    assert out["afterSeek"] == 77
    check_log_dir(log_dir, dict.fromkeys(topics, N), records=dict.fromkeys(topics, expected),
                  codecs={t: CODECS[t.split("-")[1]] for t in topics})


def test_kafkajs_transactions(log_dir, kafkajs_node):
    """kafkajs' own transactions (no plugin): commit and abort across two partitions,
    sendOffsets; its read_committed consumer and kafka-python's see only the committed
    records, and the offsets committed in the transaction are the group's."""
    from serve_testkit import NO_GROUP_DELAY
    from test_serve_transactions import _kafka_python_read

    with ServerThread(log_dir, ServerOptions(port=0), server_configs=NO_GROUP_DELAY) as s:
        r = subprocess.run([kafkajs_node, str(HERE / "transactions.mjs"), s.bootstrap],
                           cwd=HERE, capture_output=True, text=True, timeout=90)
        assert r.returncode == 0, r.stderr
        committed = sorted([b"committed-%d" % i for i in range(4)] + [b"last-0"])
        assert _kafka_python_read(s.bootstrap, "kjs-txn", "read_committed") == committed
    out = json.loads(r.stdout)
    assert out["seen"] == sorted(v.decode() for v in committed)
    (t,) = out["committed"]
    assert sorted((p["partition"], p["offset"]) for p in t["partitions"]) == \
        [(0, "3"), (1, "-1")]
    assert verify_index([log_dir]).ok


def test_kafkajs_over_secured_listeners(tmp_path, kafkajs_node):
    """kafkajs over SASL_SSL with SCRAM-SHA-512 and SCRAM-SHA-256, SASL_PLAINTEXT with
    PLAIN, SSL with a client certificate: each creates a topic, produces and consumes it
    back with a group; a wrong password fails with kafkajs' authentication error."""
    from security_testkit import (
        PLAIN_USERS,
        SCRAM_USERS,
        add_scram_args,
        listener_configs,
        make_certs,
    )

    from kafkalog_cli.server.security.scram import parse_add_scram

    certs = make_certs(tmp_path / "certs")
    (tmp_path / "logs").mkdir()
    users = [parse_add_scram(a) for a in add_scram_args()]
    with ServerThread(tmp_path / "logs", ServerOptions(port=0),
                      server_configs={"group.initial.rebalance.delay.ms": "0"},
                      security_configs=listener_configs(certs), add_scram=users) as s:
        def case(name, listener, *, sasl=None, cert=None, expect_failure=False):
            ssl = None
            if "SSL" in listener:
                ssl = {"ca": certs.path("ca.pem")}
                if cert:
                    ssl.update(cert=certs.path(f"{cert}.crt"), key=certs.path(f"{cert}.key"))
            return {"name": name, "broker": f"127.0.0.1:{s.listener_port(listener)}",
                    "ssl": ssl, "sasl": sasl, "topic": f"kjs-sec-{name}",
                    "expectFailure": expect_failure}

        def scram(mech, password=None):
            return {"mechanism": mech, "username": "alice",
                    "password": password or SCRAM_USERS["alice"]}

        cases = [case("scram512", "SASL_SSL", sasl=scram("scram-sha-512")),
                 case("scram256", "SASL_SSL", sasl=scram("scram-sha-256")),
                 case("plain", "SASL_PLAINTEXT", sasl={"mechanism": "plain", "username": "bob",
                                                       "password": PLAIN_USERS["bob"]}),
                 case("mtls", "SSL", cert="alice"),
                 case("wrong", "SASL_SSL", sasl=scram("scram-sha-512", "wrong"),
                      expect_failure=True)]
        r = subprocess.run([kafkajs_node, str(HERE / "security.mjs"), json.dumps(cases)],
                           cwd=HERE, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for name in ("scram512", "scram256", "plain", "mtls"):
        assert out[name] == {"values": [f"kjs-sec-{name}-{i}" for i in range(3)]}, name
    assert out["wrong"]["error"] == "KafkaJSSASLAuthenticationError"
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in out["wrong"]["message"]
