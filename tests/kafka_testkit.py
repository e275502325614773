"""The Kafka bench: Apache Kafka's own broker, tools and Java client as the tests' oracle.

One home for everything that runs Kafka's jars (pinned in ``tests/kafka_bench/pom.xml``,
fetched by ``scripts/fetch-kafka`` into ``~/.cache/kafkalog/kafka-<version>``):

* :class:`KafkaBroker` - a KRaft single node in combined mode (``process.roles=broker,
  controller``), its storage formatted by Kafka's own StorageTool, listeners on free
  loopback ports, ``log.dirs`` in a temp dir, log4j into ``server.log`` there (its tail
  is in every failure message), heap 512 MiB; stop cleanly (SIGTERM), kill -9, restart on
  the same dirs, create topics with configs.
* :func:`kafka_tool` - one tool class (DumpLogSegments, TopicCommand, GetOffsetShell,
  ProducerPerformance, VerifiableProducer, ...) in its own JVM: exit status, stdout, stderr;
  :func:`iter_tools_batch` / :func:`kafka_tools_batch` - many invocations in one JVM
  (``ToolBatch.java``), each result yielded as it ends, for the suites that compare
  hundreds of files.
* :func:`java_produce` / :func:`java_consume` - Kafka's Java client driven by a JSON spec
  (``KafkalogClient.java``): exact timestamps, keys, values, headers, partitions, batch
  boundaries (``flush``), idempotence, transactions; records read back as dicts. They work
  against the bench broker and ``kafkalog serve`` alike.

Fixtures (imported into ``tests/conftest.py``): ``kafka_bench`` (the fetched paths),
``kafka_broker`` (one broker per test session, shared: use unique topic names),
``kafka_broker_factory`` (fresh brokers with their own dirs and configs, stopped at the
end of the test). Tests using them are marked ``kafka``. Without Java 17+, javac, Maven
or the network for the first download they skip with the reason, and fail under
``CI=true``.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FETCH_KAFKA = REPO / "scripts" / "fetch-kafka"

#: the broker's heap (the issue's bound for a test broker)
BROKER_HEAP = "512m"
#: how long a broker may take to start before the fixture fails with its log tail (s)
START_TIMEOUT_S = 60.0

#: the broker's log4j2 configuration: everything at INFO into server.log, nothing on stdout
_BROKER_LOG4J = """\
Configuration:
  Appenders:
    File:
      name: FILE
      fileName: "{log}"
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: FILE
    Logger:
      - name: kafka.request.logger
        level: WARN
      - name: org.apache.kafka.controller
        level: WARN
"""

#: the tools' log4j2 configuration, as Kafka's config/tools-log4j2.yaml: WARN to stderr
_TOOLS_LOG4J = """\
Configuration:
  Appenders:
    Console:
      name: STDERR
      target: SYSTEM_ERR
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: WARN
      AppenderRef:
        - ref: STDERR
"""


class BenchUnavailable(Exception):
    """Java, Maven or Kafka's jars are not available here (the reason is the message)."""


class BrokerFailed(Exception):
    """The bench broker did not start or stop as asked; the message ends with its log tail."""


def skip_or_fail(reason: str):
    """Skip the test with ``reason``, or fail it under ``CI=true`` (CI must run it)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: the Kafka bench must run here)", pytrace=False)
    pytest.skip(reason)


@dataclass(frozen=True)
class Bench:
    """Where the pinned Kafka lies: ``libs`` (the jars), ``classes`` (the tests' Java
    programs), ``home`` (both, plus the log4j files)."""

    version: str
    home: Path
    libs: Path
    classes: Path

    @property
    def classpath(self) -> str:
        return f"{self.classes}{os.pathsep}{self.libs}/*"

    def log4j(self, name: str, text: str) -> Path:
        path = self.home / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
        return path


@lru_cache(maxsize=1)
def _fetch() -> Bench | str:
    if not FETCH_KAFKA.is_file():
        return "scripts/fetch-kafka is missing"
    done = subprocess.run([sys.executable, str(FETCH_KAFKA), "--json"], capture_output=True,
                          text=True, timeout=900)
    if done.returncode != 0:
        return (f"the Kafka bench is not available: scripts/fetch-kafka exited "
                f"{done.returncode}: {done.stderr.strip().splitlines()[-1:] or ''}")
    found = json.loads(done.stdout)
    return Bench(found["version"], Path(found["home"]), Path(found["libs"]),
                 Path(found["classes"]))


def bench() -> Bench:
    """The fetched bench (fetching it on first use), or :class:`BenchUnavailable`."""
    found = _fetch()
    if isinstance(found, str):
        raise BenchUnavailable(found)
    return found


def require_bench() -> Bench:
    """:func:`bench`, or skip (fail under CI=true) with the reason."""
    try:
        return bench()
    except BenchUnavailable as e:
        skip_or_fail(str(e))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: JVM options of the short-lived tools and clients, and of the test brokers: the client
#: compiler only and the serial collector halve a tool run's CPU (0.58 against 1.10 s for
#: one DumpLogSegments) on these 2-core machines. kafka-run-class.sh's own flags
#: (G1, -XX:MaxGCPauseMillis=20, ...) are :data:`KAFKA_JVM_PERFORMANCE_OPTS`.
TEST_JVM_OPTS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
#: what bin/kafka-run-class.sh gives a broker (KAFKA_JVM_PERFORMANCE_OPTS): for benchmarks
KAFKA_JVM_PERFORMANCE_OPTS = ("-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                              "-XX:InitiatingHeapOccupancyPercent=35",
                              "-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true")


def _java(bench_: Bench, *args: str, heap: str | None = None,
          jvm_opts: tuple[str, ...] = TEST_JVM_OPTS) -> list[str]:
    java = shutil.which("java") or "java"
    opts = [f"-Xmx{heap}"] if heap else []
    return [java, *opts, *jvm_opts, "-cp", bench_.classpath, *args]


@dataclass
class ToolResult:
    """One run of a Kafka tool class: ``exit`` status, ``stdout``, ``stderr`` (text)."""

    exit: int
    stdout: str
    stderr: str


def kafka_tool(main_class: str, *args: str, timeout: float = 120, heap: str = "256m",
               input: str | None = None) -> ToolResult:
    """Run Kafka's ``main_class`` with ``args`` in its own JVM (tools' log4j: WARN to
    stderr, as Kafka's scripts configure it)."""
    b = require_bench()
    log4j = b.log4j("tools-log4j2.yaml", _TOOLS_LOG4J)
    cmd = _java(b, f"-Dlog4j2.configurationFile={log4j}", main_class, *args, heap=heap)
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, input=input,
                          env=env)
    return ToolResult(done.returncode, done.stdout, done.stderr)


def kafka_tool_process(main_class: str, *args: str, heap: str = "256m",
                       stderr=subprocess.DEVNULL) -> subprocess.Popen:
    """Start Kafka's ``main_class`` with ``args`` in its own JVM, running on (a
    VerifiableProducer, a VerifiableConsumer): its stdout a text pipe, its stderr (the
    tools' WARN log) ``stderr`` (a file); the caller ends it."""
    b = require_bench()
    log4j = b.log4j("tools-log4j2.yaml", _TOOLS_LOG4J)
    cmd = _java(b, f"-Dlog4j2.configurationFile={log4j}", main_class, *args, heap=heap)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr, text=True,
                            env={**os.environ, "LC_ALL": "C.UTF-8"})


def iter_tools_batch(calls: list[tuple[str, list[str]]], timeout: float = 900):
    """Run many ``(main_class, args)`` invocations in ONE JVM (``ToolBatch.java``),
    yielding each one's :class:`ToolResult` as soon as it ends: the caller works on one
    result (e.g. runs kafkalog on the same file) while the JVM runs the next, and only one
    result is in memory at a time. Each invocation gets its own captured stdout/stderr
    (UTF-8) and exit status (``Exit.exit`` caught; an exception escaping ``main`` is
    status 1 with its stack trace on stderr, as the JVM prints it).

    :raises RuntimeError: the JVM died before it answered every call (its stderr tail).
    """
    b = require_bench()
    log4j = b.log4j("tools-log4j2.yaml", _TOOLS_LOG4J)
    with tempfile.TemporaryDirectory(prefix="toolbatch-") as tmp:
        spec = Path(tmp) / "calls.json"
        spec.write_text(json.dumps([{"main": m, "args": list(a)} for m, a in calls]))
        cmd = _java(b, f"-Dlog4j2.configurationFile={log4j}", "ToolBatch", str(spec),
                    heap="512m")
        with open(Path(tmp) / "stderr.txt", "w+b") as err, \
                subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err) as proc:
            deadline = time.monotonic() + timeout
            answered = 0
            try:
                # one JSON object a line; bytes split at b"\n" only: Jackson leaves
                # U+0085, U+2028, ... raw in strings, where str.splitlines would cut
                for line in proc.stdout:
                    r = json.loads(line)
                    answered += 1
                    yield ToolResult(r["exit"], r["stdout"], r["stderr"])
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"ToolBatch ran past {timeout:.0f} s")
                proc.wait(60)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            if proc.returncode != 0 or answered != len(calls):
                err.seek(0)
                tail = err.read()[-2000:].decode(errors="replace")
                raise RuntimeError(f"ToolBatch failed (exit {proc.returncode}) after "
                                   f"{answered} of {len(calls)} calls: {tail}")


def kafka_tools_batch(calls: list[tuple[str, list[str]]], timeout: float = 900) -> list[ToolResult]:
    """:func:`iter_tools_batch` as a list (for a few calls; a suite comparing hundreds of
    files iterates instead)."""
    return list(iter_tools_batch(calls, timeout))


def _b64(value):
    return None if value is None else base64.b64decode(value)


def java_produce(bootstrap: str, spec: dict, timeout: float = 120) -> list[dict]:
    """Kafka's Java producer runs ``spec`` (see ``KafkalogClient.java``) against
    ``bootstrap``; returns the acks ``{topic, partition, offset, timestamp}`` in send order
    (``{error, message}`` for a send that failed)."""
    b = require_bench()
    log4j = b.log4j("tools-log4j2.yaml", _TOOLS_LOG4J)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(spec, f)
    try:
        cmd = _java(b, f"-Dlog4j2.configurationFile={log4j}", "KafkalogClient", "produce",
                    bootstrap, f.name, heap="256m")
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            # the producer's WARN log says what it waited for (a partition without a
            # leader, a coordinator, a retried error), which the bare timeout hides
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr
            raise AssertionError(f"Java producer ran past {timeout:.0f} s against {bootstrap}; "
                                 f"its log:\n{(err or '')[-4000:]}") from None
    finally:
        os.unlink(f.name)
    if done.returncode != 0:
        raise AssertionError(f"Java producer failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return [json.loads(line) for line in done.stdout.splitlines()]


def java_consume(bootstrap: str, topic: str, isolation: str = "read_uncommitted", *,
                 timeout_ms: int = 30_000, configs: dict | None = None) -> list[dict]:
    """Kafka's Java consumer reads every partition of ``topic`` (or of each of several,
    comma-separated: one consumer, printed topic after topic) from the beginning to its
    end offset (under ``read_committed`` the LSO, once it reaches the log end offset -
    EndTxn returns before the markers are written - or after
    ``configs["kafkalog.stable.wait.ms"]``, default 10 s); records as dicts with ``key``,
    ``value`` and header values as bytes (None for null), in partition then offset order."""
    b = require_bench()
    log4j = b.log4j("tools-log4j2.yaml", _TOOLS_LOG4J)
    extra = [f"{k}={v}" for k, v in (configs or {}).items()]
    cmd = _java(b, f"-Dlog4j2.configurationFile={log4j}", "KafkalogClient", "consume",
                bootstrap, topic, isolation, str(timeout_ms), *extra, heap="256m")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_ms / 1000 + 60)
    if done.returncode != 0:
        raise AssertionError(f"Java consumer failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    sys.stderr.write(done.stderr)  # pytest shows it when the test fails
    records = []
    for line in done.stdout.splitlines():
        r = json.loads(line)
        r["key"], r["value"] = _b64(r["key"]), _b64(r["value"])
        r["headers"] = [(k, _b64(v)) for k, v in r["headers"]]
        records.append(r)
    return records


#: the first timestamp of the spec records (:func:`send_step`), in 2023: before any run
#: of the tests, so that a timestamp at or after a test's start came from a clock
SPEC_T0 = 1_700_000_000_000


def send_step(topic: str, partition: int, i: int, **kw) -> dict:
    """A ``send`` step of :func:`java_produce`'s spec, record ``i`` of a suite: timestamp
    ``SPEC_T0 + i``, key ``key-i``, a value of 8 to 250 bytes, two headers (one null);
    ``kw`` overrides any field (``keyBase64``/``valueBase64`` for bytes)."""
    r = {"op": "send", "topic": topic, "partition": partition, "timestamp": SPEC_T0 + i,
         "key": f"key-{i}", "value": f"value {i} " + "x" * (i % 7) * 40,
         "headers": [["h1", f"v{i}"], ["h-null", None]]}
    r.update(kw)
    return r


def new_cluster_id() -> str:
    """A cluster id as Kafka's ``Uuid.randomUuid().toString()`` spells it (base64url, no
    padding), what ``kafka-storage.sh random-uuid`` prints; like ``Uuid.randomUuid`` it
    never starts with "-" (a command line would read it as an option)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


class KafkaBroker:
    """A KRaft single node (broker and controller in one JVM) of the pinned Kafka.

    Args:
        workdir: its home: ``server.properties``, ``log4j2.yaml``, ``server.log``,
            ``stdout.txt`` and the log dir ``logs/`` (``log_dir``).
        configs: broker configs added to (or replacing) the defaults below, Kafka's names.
        format_args: extra StorageTool ``format`` arguments (``["--feature",
            "transaction.version=1"]``).
        heap: the JVM's ``-Xmx`` (and ``-Xms``).
        jvm_opts: the JVM's options (:data:`TEST_JVM_OPTS`; a benchmark passes
            :data:`KAFKA_JVM_PERFORMANCE_OPTS`, what kafka-server-start.sh uses).

    Defaults: node.id 1, listeners PLAINTEXT and CONTROLLER on free loopback ports,
    replication factors 1 for the internal topics, group.initial.rebalance.delay.ms 0,
    log.retention.ms -1 (no time retention: the tests' records carry fixed old timestamps).
    """

    def __init__(self, workdir: Path, configs: dict | None = None, *,
                 format_args: list[str] | None = None, heap: str = BROKER_HEAP,
                 jvm_opts: tuple[str, ...] = TEST_JVM_OPTS):
        self.bench = require_bench()
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log_dir = self.workdir / "logs"
        self.port, self.controller_port = free_port(), free_port()
        self.cluster_id = new_cluster_id()
        self.format_args = list(format_args or [])
        self.heap = heap
        self.jvm_opts = tuple(jvm_opts)
        self.configs = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},"
                         f"CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.log_dir),
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            # the tests write fixed timestamps (2023): under the default 7-day time
            # retention the broker would delete their segments 30 s after it started
            "log.retention.ms": "-1",
            **{k: str(v) for k, v in (configs or {}).items()},
        }
        self.process: subprocess.Popen | None = None
        self._formatted = False

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def server_log(self) -> Path:
        return self.workdir / "server.log"

    def log_tail(self, lines: int = 60) -> str:
        """The last ``lines`` of server.log and of the JVM's stdout/stderr."""
        parts = []
        for path in (self.server_log, self.workdir / "stdout.txt"):
            if path.is_file():
                text = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {path.name} (last {len(text)} lines)\n" + "\n".join(text))
        return "\n".join(parts)

    def _write_configs(self) -> Path:
        props = self.workdir / "server.properties"
        props.write_text("".join(f"{k}={v}\n" for k, v in self.configs.items()))
        return props

    def format(self) -> None:
        """Kafka's StorageTool formats ``log.dirs`` (``meta.properties``, the bootstrap
        checkpoint of ``__cluster_metadata``)."""
        props = self._write_configs()
        result = kafka_tool("kafka.tools.StorageTool", "format", "-t", self.cluster_id,
                            "-c", str(props), *self.format_args)
        if result.exit != 0:
            raise BrokerFailed(f"StorageTool format failed (exit {result.exit}):\n"
                               f"{result.stdout}{result.stderr}")
        self._formatted = True

    def start(self, timeout: float = START_TIMEOUT_S) -> KafkaBroker:
        """Format on first start, start the JVM, wait for "Kafka Server started"."""
        if self.process is not None and self.process.poll() is None:
            return self
        if not self._formatted:
            self.format()
        props = self._write_configs()
        log4j = self.workdir / "log4j2.yaml"
        log4j.write_text(_BROKER_LOG4J.format(log=self.server_log))
        seen = self.server_log.stat().st_size if self.server_log.is_file() else 0
        stdout = open(self.workdir / "stdout.txt", "ab")
        cmd = _java(self.bench, f"-Xms{self.heap}", f"-Dlog4j2.configurationFile={log4j}",
                    "kafka.Kafka", str(props), heap=self.heap, jvm_opts=self.jvm_opts)
        self.process = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        stdout.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrokerFailed(f"the broker exited with {self.process.returncode} while "
                                   f"starting:\n{self.log_tail()}")
            if self.server_log.is_file():
                with open(self.server_log, "rb") as f:
                    f.seek(seen)
                    if b"Kafka Server started" in f.read():
                        return self
            time.sleep(0.1)
        self.kill()
        raise BrokerFailed(f"the broker did not start within {timeout:.0f} s:\n{self.log_tail()}")

    def stop(self, timeout: float = 60) -> None:
        """A clean stop (SIGTERM, as kafka-server-stop.sh): the broker writes its
        checkpoints and ``.kafka_cleanshutdown`` before it exits."""
        if self.process is None or self.process.poll() is not None:
            self.process = None
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise BrokerFailed(f"the broker did not stop within {timeout:.0f} s of SIGTERM:\n"
                               f"{self.log_tail()}") from None
        self.process = None

    def kill(self) -> None:
        """kill -9: no checkpoints, no clean-shutdown marker (a crash)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(30)
        self.process = None

    def restart(self, timeout: float = START_TIMEOUT_S) -> KafkaBroker:
        """Stop cleanly (if running) and start again on the same dirs and ports."""
        self.stop()
        return self.start(timeout)

    def admin(self):
        """A confluent-kafka AdminClient on this broker."""
        from confluent_kafka.admin import AdminClient
        return AdminClient({"bootstrap.servers": self.bootstrap})

    def create_topic(self, name: str, partitions: int = 1, configs: dict | None = None,
                     timeout: float = 30) -> None:
        """Create ``name`` with ``partitions`` and topic ``configs`` (Kafka's names) and
        wait until its leaders are known."""
        from confluent_kafka.admin import NewTopic
        admin = self.admin()
        futures = admin.create_topics([NewTopic(name, partitions, 1, config={
            k: str(v) for k, v in (configs or {}).items()})], operation_timeout=timeout)
        futures[name].result(timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            topic = admin.list_topics(name, timeout=timeout).topics.get(name)
            if topic is not None and topic.error is None and len(topic.partitions) == partitions \
                    and all(p.leader >= 0 for p in topic.partitions.values()):
                return
            time.sleep(0.1)
        raise BrokerFailed(f"topic {name} has no leaders after {timeout} s")

    @classmethod
    def on_log_dir(cls, workdir: Path, configs: dict | None = None, **kw) -> KafkaBroker:
        """A broker (node 1) on the log directory already at ``workdir/logs``: a copy of
        another bench broker's, formatted and with its ``__cluster_metadata``, so it starts
        without formatting and hosts the partitions registered there (on new ports: the
        static quorum keeps no endpoints in the metadata log)."""
        broker = cls(workdir, configs, **kw)
        broker._formatted = True
        return broker

    def topic_id(self, topic: str, partition: int = 0) -> str:
        """The topic id the broker gave ``topic`` (its ``partition.metadata``)."""
        text = (self.log_dir / f"{topic}-{partition}" / "partition.metadata").read_text()
        return dict(line.split(": ", 1) for line in text.splitlines())["topic_id"]


@pytest.fixture(scope="session")
def kafka_bench() -> Bench:
    """The pinned Kafka's jars and the tests' compiled Java programs."""
    return require_bench()


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory, kafka_bench) -> KafkaBroker:
    """One bench broker for the whole session (started on first use, stopped at the end):
    tests share it, so each uses topic names of its own."""
    broker = KafkaBroker(tmp_path_factory.mktemp("kafka-broker"))
    broker.start()
    yield broker
    broker.stop()


class BrokerFactory:
    """Makes fresh brokers with their own dirs: ``factory(configs=None, format_args=None,
    start=True)``; ``brokers`` lists them (the fixture stops them after the test)."""

    def __init__(self, root: Path):
        self.root = root
        self.brokers: list[KafkaBroker] = []

    def __call__(self, configs: dict | None = None, *, format_args: list[str] | None = None,
                 start: bool = True) -> KafkaBroker:
        broker = KafkaBroker(self.root / f"broker-{len(self.brokers)}", configs,
                             format_args=format_args)
        self.brokers.append(broker)
        return broker.start() if start else broker


@pytest.fixture
def kafka_broker_factory(tmp_path, kafka_bench):
    """Fresh brokers for one test (:class:`BrokerFactory`); every one is stopped (killed
    if it will not stop) after the test."""
    factory = BrokerFactory(tmp_path)
    yield factory
    for broker in factory.brokers:
        try:
            broker.stop(timeout=30)
        except BrokerFailed:
            broker.kill()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test that used a bench broker gets the broker's log tail in its report."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    funcargs = getattr(item, "funcargs", {})
    brokers = [funcargs[n] for n in ("kafka_broker",) if n in funcargs]
    if "kafka_broker_factory" in funcargs:
        brokers += funcargs["kafka_broker_factory"].brokers
    for broker in brokers:
        report.sections.append((f"bench broker {broker.workdir}", broker.log_tail()))
