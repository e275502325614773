"""``groups``, ``get-offsets`` and ``describe --log-dirs-json`` against Kafka's own tools
(ConsumerGroupCommand, GetOffsetShell, LogDirsCommand) on the same broker state: the
tools run against a live 4.4.0 broker (classic and KIP-848 consumer groups, live and
empty, a simple group, a deleted one), the broker is stopped cleanly, and kafkalog reads
its log directory; stdout (and the tools' stderr notes) must be equal.

A fresh bench broker (``kafka_broker_factory``: its own log directory, stopped with
SIGTERM), the tools run in one JVM (``kafka_tools_batch``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest
from kafka_testkit import kafka_tools_batch
from kafkalog_testkit import run_cli_inprocess as cli

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

CGC = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
GOS = "org.apache.kafka.tools.GetOffsetShell"
LDC = "org.apache.kafka.tools.LogDirsCommand"

#: the client side: topics, records with recent timestamps, classic and KIP-848 groups
#: that commit and leave, a simple group, a deleted group; then (second argument) two
#: consumers that stay in their groups until the process is killed
SCENARIO = textwrap.dedent('''
    import sys, time
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic
    bs, ready = sys.argv[1], sys.argv[2]
    admin = AdminClient({"bootstrap.servers": bs})
    for f in admin.create_topics([NewTopic("t1", 3, 1), NewTopic("t2", 1, 1)]).values():
        f.result()
    p = Producer({"bootstrap.servers": bs, "linger.ms": 0})
    now = int(time.time() * 1000) - 60000
    for part in range(3):
        for i in range(10):
            p.produce("t1", b"v%d" % i, b"k", partition=part, timestamp=now + part * 100 + i)
    for i in range(5):
        p.produce("t2", b"x%d" % i, partition=0, timestamp=now + 1000 + i)
    p.flush()

    def consume(group, topics, n, protocol="classic", close=True, client="c"):
        conf = {"bootstrap.servers": bs, "group.id": group, "client.id": client,
                "auto.offset.reset": "earliest", "enable.auto.commit": False}
        if protocol == "consumer":
            conf["group.protocol"] = "consumer"
        c = Consumer(conf)
        c.subscribe(topics)
        got, deadline = 0, time.time() + 60
        while got < n and time.time() < deadline:
            m = c.poll(0.5)
            if m is not None and not m.error():
                got += 1
        assert got == n, (group, got)
        c.commit(asynchronous=False)
        if close:
            c.close()
        return c

    consume("gc", ["t1"], 12, client="client-gc")
    live = [consume("gc-live", ["t2"], 3, close=False, client="client-gc-live")]
    consume("gn", ["t1"], 7, protocol="consumer", client="client-gn")
    live.append(consume("gn-live", ["t1", "t2"], 20, protocol="consumer", close=False,
                        client="client-gn-live"))
    c = Consumer({"bootstrap.servers": bs, "group.id": "gs", "enable.auto.commit": False})
    c.commit(offsets=[TopicPartition("t1", 1, 4), TopicPartition("t2", 0, 2)],
             asynchronous=False)
    c.close()
    consume("gd", ["t2"], 2, client="client-gd")
    for f in admin.delete_consumer_groups(["gd"]).values():
        f.result()
    open(ready, "w").write("ready")
    time.sleep(600)
''')


def _notes(stderr: str) -> str:
    """The tool's own stderr lines (log4j / SLF4J set-up lines dropped)."""
    return "".join(line for line in stderr.splitlines(keepends=True)
                   if not line.startswith(("SLF4J", "WARNING", "log4j")))


def test_groups_get_offsets_and_log_dirs_equal_kafkas_tools(kafka_broker_factory, tmp_path):
    pytest.importorskip("confluent_kafka")
    broker = kafka_broker_factory({"offsets.topic.num.partitions": "5"})
    bs = broker.bootstrap
    ready = tmp_path / "ready"
    script = tmp_path / "scenario.py"
    script.write_text(SCENARIO)
    clients = subprocess.Popen([sys.executable, str(script), bs, str(ready)])
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert clients.poll() is None, "the client scenario failed"
            assert time.monotonic() < deadline, "the client scenario did not finish"
            time.sleep(0.2)
        calls: list[tuple[tuple, str, list[str]]] = []
        for case in [("--list",), ("--list", "--type", "--state"),
                     ("--describe", "--all-groups"),
                     ("--describe", "--all-groups", "--verbose"),
                     ("--describe", "--all-groups", "--members"),
                     ("--describe", "--all-groups", "--members", "--verbose"),
                     ("--describe", "--all-groups", "--state"),
                     ("--describe", "--all-groups", "--state", "--verbose"),
                     ("--describe", "--group", "nope"),
                     ("--reset-offsets", "--group", "gc", "--group", "gs", "--all-topics",
                      "--to-earliest", "--dry-run"),
                     ("--reset-offsets", "--group", "gc-live", "--all-topics",
                      "--to-latest", "--dry-run")]:
            calls.append((("groups", *case), CGC, ["--bootstrap-server", bs, *case]))
        for t in ["-1", "-2", "-3", "-4", "-5", str(int(time.time() * 1000) - 59950)]:
            calls.append((("get-offsets", t), GOS, ["--bootstrap-server", bs, "--time", t]))
        calls.append((("get-offsets", "tp"), GOS, ["--bootstrap-server", bs,
                                                   "--topic-partitions", "t1:1-,t2",
                                                   "--exclude-internal-topics"]))
        calls.append((("log-dirs",), LDC, ["--bootstrap-server", bs, "--describe"]))
        calls.append((("log-dirs", "t"), LDC, ["--bootstrap-server", bs, "--describe",
                                               "--topic-list", "t1,t2"]))
        results = kafka_tools_batch([(main, args) for _, main, args in calls])
        live = {key: (r.exit, r.stdout, r.stderr) for (key, _, _), r in zip(calls, results,
                                                                               strict=True)}
        broker.stop()  # SIGTERM: a clean shutdown, as the log directory is read after it
    finally:
        clients.kill()
        clients.wait()

    log_dir = str(broker.log_dir)
    for key, (code, out, err) in live.items():
        if key[0] == "groups":
            args = list(key[1:])
            if "--state" in args and "--describe" in args:
                args += ["--coordinator", bs]
            mine = cli("groups", log_dir, *args)
            assert mine.stdout == out, key
            if "\tat " not in err:  # a stack trace (the tool's error): kafkalog names it once
                assert mine.stderr == _notes(err), key
        elif key[0] == "get-offsets":
            args = ["--time", key[1]] if key[1] != "tp" else [
                "--topic-partitions", "t1:1-,t2", "--exclude-internal-topics"]
            mine = cli("get-offsets", log_dir, *args)
            assert (mine.stdout, code) == (out, 0), key
        else:
            args = ["--topic-list", "t1,t2"] if len(key) > 1 else []
            mine = cli("describe", log_dir, "--log-dirs-json", *args)
            assert _log_dirs(mine.stdout) == _log_dirs(out), key


def _log_dirs(text: str) -> list:
    """kafka-log-dirs' output, its JSON line parsed with each log dir's partitions in
    name order: the broker lists them from a hash map, where partitions sharing a bucket
    come in the order the log loading threads opened them (it differs from run to run)."""
    out = []
    for line in text.splitlines():
        if line.startswith("{"):
            doc = json.loads(line)
            for b in doc.get("brokers", []):
                for d in b.get("logDirs", []):
                    d["partitions"] = sorted(d.get("partitions", []), key=lambda p: p["partition"])
            out.append(doc)
        else:
            out.append(line)
    return out
