"""Kafka's VerifiableProducer and VerifiableConsumer (what Kafka's own system tests use)
against ``kafkalog serve`` killed with SIGKILL and restarted on the same directory and
port in a loop (issue 27): every acknowledged record is consumed with its offset and
value, in offset order per partition while an assignment lasts, and the idempotent
producer's records are in the log once each.

Loops: ``KAFKALOG_VERIFIABLE_LOOPS`` (default 2, what CI runs; more by hand)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from kafka_testkit import free_port, kafka_tool_process
from kafkalog_testkit import REPO

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

TOPIC, GROUP = "verifiable", "verifiable-group"
LOOPS = int(os.environ.get("KAFKALOG_VERIFIABLE_LOOPS", "2"))
#: the producer's records a second (it runs until the loops are done); acks awaited
#: after each start before the next kill
THROUGHPUT, ACKS_PER_START = 100, 50


class Serve:
    """``kafkalog serve`` on ``port`` in a subprocess, killed and restarted at will."""

    def __init__(self, log_dir, port: int):
        self.log_dir, self.port = log_dir, port
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir", str(self.log_dir),
             "--listen", f"127.0.0.1:{self.port}", "--auto-create-topics",
             "--num-partitions", "2", "--config", "group.initial.rebalance.delay.ms=0",
             "--config", "offsets.topic.num.partitions=2"],
            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
            stderr=subprocess.PIPE, text=True)
        for line in self.proc.stderr:
            if "listening on" in line:
                break
        else:
            raise AssertionError(f"serve did not start (exit {self.proc.wait()})")
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()
        self.starts += 1

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.kill()


class Events:
    """A Verifiable tool's JSON events (stdout), read on a thread."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.events: list[dict] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            if line.startswith("{"):
                self.events.append(json.loads(line))

    def named(self, name: str) -> list[dict]:
        return [e for e in list(self.events) if e.get("name") == name]

    def wait(self, done, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            assert self.proc.poll() is None or done(), f"the tool ended: {what}"
            time.sleep(0.1)

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._thread.join(10)


def test_verifiable_producer_and_consumer_through_kill_9(tmp_path):
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    serve = Serve(log_dir, free_port())
    serve.start()
    bootstrap = f"127.0.0.1:{serve.port}"
    config = tmp_path / "producer.properties"
    config.write_text("enable.idempotence=true\nretries=2147483647\n"
                      "delivery.timeout.ms=300000\nrequest.timeout.ms=5000\n"
                      "reconnect.backoff.max.ms=200\nlinger.ms=5\n")
    logs = [open(tmp_path / f"{n}.log", "w") for n in ("producer", "consumer")]
    producer = consumer = None
    try:
        producer = Events(kafka_tool_process(
            "org.apache.kafka.tools.VerifiableProducer", "--bootstrap-server", bootstrap,
            "--topic", TOPIC, "--max-messages", "-1", "--throughput",
            str(THROUGHPUT), "--acks", "-1", "--producer.config", str(config),
            stderr=logs[0]))
        consumer = Events(kafka_tool_process(
            "org.apache.kafka.tools.VerifiableConsumer", "--bootstrap-server", bootstrap,
            "--topic", TOPIC, "--group-id", GROUP, "--reset-policy", "earliest",
            "--session-timeout", "10000", "--verbose", stderr=logs[1]))
        for loop in range(LOOPS + 1):
            # acks from this start of serve, then kill -9 and start again
            acked = len(producer.named("producer_send_success"))
            producer.wait(lambda a=acked: len(producer.named("producer_send_success")) >=
                          a + ACKS_PER_START, 120, f"acks after start {loop + 1}")
            if loop < LOOPS:
                serve.kill()
                serve.start()
        producer.end()  # SIGTERM: the producer closes, every send acknowledged or failed
        assert producer.named("shutdown_complete")
        acked = {(e["partition"], e["offset"]): e["value"]
                 for e in producer.named("producer_send_success")}
        assert not producer.named("producer_send_error")
        assert len(acked) >= (LOOPS + 1) * ACKS_PER_START
        consumer.wait(lambda: acked.keys() <= {(e["partition"], e["offset"]) for e in
                                                consumer.named("record_data")},
                      300, "every acknowledged record consumed")
    finally:
        for tool in (producer, consumer):
            if tool is not None:
                tool.end()
        serve.stop()
        for f in logs:
            f.close()
    consumed = {}
    for e in consumer.named("record_data"):
        consumed.setdefault((e["partition"], e["offset"]), e["value"])
    assert {k: consumed[k] for k in acked} == acked
    # in offset order per partition while an assignment lasts
    last: dict[int, int] = {}
    for e in consumer.events:
        if e["name"] == "partitions_assigned":
            last = {}
        elif e["name"] == "record_data":
            assert e["offset"] > last.get(e["partition"], -1), e
            last[e["partition"]] = e["offset"]
    # idempotence: each value once in the log (VerifiableProducer's values count from 0)
    where: dict[int, list] = {}
    for tp, v in consumed.items():
        where.setdefault(int(v), []).append(tp)
    twice = {v: tps for v, tps in where.items() if len(tps) > 1}
    assert not twice, f"values twice in the log (partition, offset): {twice}"
    assert sorted(where) == list(range(len(where))), "a value missing from the log"
    assert serve.starts == LOOPS + 1
    print(f"verifiable: {LOOPS} kill -9 loops, {len(acked)} records acknowledged and "
          "consumed", file=sys.stderr)
