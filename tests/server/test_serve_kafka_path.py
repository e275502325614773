"""``scripts/kafka-path``: a KAFKA_PATH whose ``bin/*.sh`` run Kafka's tool classes from
the pinned jars (what librdkafka's test suite calls: ``test_kafka_topics()`` runs
``$KAFKA_PATH/bin/kafka-topics.sh --bootstrap-server ...``), checked through the shell
scripts themselves against ``serve``: Kafka's TopicCommand creates, lists and describes a
topic, its output as the tool prints it for a broker. And ``scripts/librdkafka-suite``'s
reading of librdkafka's test-runner output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader

import pytest
from kafka_testkit import REPO, require_bench
from serve_testkit import NO_GROUP_DELAY

from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions

KAFKA_PATH = str(REPO / "scripts" / "kafka-path")


def _load(script):
    """A script of scripts/ (no .py suffix) as a module."""
    loader = SourceFileLoader(script.replace("-", "_"), str(REPO / "scripts" / script))
    module = module_from_spec(spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def kafka_path(tmp_path_factory):
    require_bench()
    target = tmp_path_factory.mktemp("kafka-path")
    done = subprocess.run([sys.executable, KAFKA_PATH, str(target), "--json"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.kafka
def test_kafka_path_scripts_name_kafka_4_classes(kafka_path):
    # Kafka 4.x's bin/kafka-topics.sh, kafka-configs.sh and kafka-acls.sh (the scripts
    # librdkafka's tests call) start these classes; the Scala ones are gone from 4.x
    scripts = kafka_path["scripts"]
    assert scripts["kafka-topics"] == "org.apache.kafka.tools.TopicCommand"
    assert scripts["kafka-configs"] == "org.apache.kafka.tools.ConfigCommand"
    assert scripts["kafka-acls"] == "org.apache.kafka.tools.AclCommand"
    bin_dir = os.path.join(kafka_path["kafkaPath"], "bin")
    for name in ("kafka-run-class", *scripts):
        assert os.access(os.path.join(bin_dir, f"{name}.sh"), os.X_OK), name


@pytest.mark.kafka
def test_kafka_run_class_sh_puts_classpath_before_the_jars(kafka_path):
    # librdkafka's java/run-class.sh runs its own programs as
    # CLASSPATH=<its dir> $KAFKA_PATH/bin/kafka-run-class.sh CLASS ARGS, as Kafka's script
    # allows; KafkalogClient (the bench's program) needs Jackson and kafka-clients from libs
    script = os.path.join(kafka_path["kafkaPath"], "bin", "kafka-run-class.sh")
    env = {**os.environ, "CLASSPATH": str(require_bench().classes)}
    done = subprocess.run([script, "KafkalogClient"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("usage: KafkalogClient produce BOOTSTRAP")
    assert done.stdout == ""


def test_kafka_path_refuses_the_checkout():
    done = subprocess.run([sys.executable, KAFKA_PATH, str(REPO / "kafka-path")],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "inside the checkout" in done.stderr
    assert not os.path.exists(str(REPO / "kafka-path"))


def _topics(kafka_path, bootstrap, *args):
    script = os.path.join(kafka_path["kafkaPath"], "bin", "kafka-topics.sh")
    # as librdkafka's test_kafka_topics() runs it: one shell command line
    cmd = f"{script} --bootstrap-server {bootstrap} {' '.join(args)}"
    return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=120)


@pytest.mark.kafka
@pytest.mark.slow  # three tool JVMs: about 7 s of CPU
def test_kafka_topics_sh_create_list_describe_against_serve(kafka_path, tmp_path):
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    with ServerThread(log_dir, ServerOptions(port=0), server_configs=NO_GROUP_DELAY) as s:
        bootstrap = f"127.0.0.1:{s.port}"
        created = _topics(kafka_path, bootstrap, '--create --topic "stamps"',
                          "--replication-factor 1 --partitions 3",
                          "--config message.timestamp.type=LogAppendTime")
        assert created.returncode == 0, created.stderr
        assert created.stdout == "Created topic stamps.\n"
        assert sorted(p.name for p in log_dir.glob("stamps-*")) == [
            "stamps-0", "stamps-1", "stamps-2"]

        listed = _topics(kafka_path, bootstrap, "--list")
        assert listed.returncode == 0, listed.stderr
        assert "stamps" in listed.stdout.splitlines()

        described = _topics(kafka_path, bootstrap, "--describe --topic stamps")
        assert described.returncode == 0, described.stderr
        head, *partitions = described.stdout.splitlines()
        fields = dict(f.split(": ", 1) for f in head.split("\t"))
        assert fields["Topic"] == "stamps"
        assert fields["PartitionCount"] == "3"
        assert fields["ReplicationFactor"] == "1"
        assert fields["Configs"] == "message.timestamp.type=LogAppendTime"
        assert [p.split("\t")[2] for p in partitions] == [
            "Partition: 0", "Partition: 1", "Partition: 2"]



# librdkafka's test-runner output, as v2.15.0 prints it (colours, summary table, and a
# failure that aborts the runner before its table)
RUNNER_OK = """\
[0045_subscribe_update_topic_remove/ 30.053s] \x1b[32m[ do_test_topic_remove:367: Topic \
removal testing: PASS (30.05s) ]\x1b[0m
|\x1b[32m <MAIN>                                   |     PASSED |  51.069s \x1b[0m|
|\x1b[33m 0045_subscribe_update                    |    SKIPPED |   0.000s \x1b[0m|
|\x1b[32m 0045_subscribe_update_topic_remove       |     PASSED |  30.054s \x1b[0m|
"""
RUNNER_ABORTED = """\
[0077_compaction             / 31.734s] TEST FAILURE
### Test "0077_compaction" failed at test.c:4607:test_msgver_verify_compare0() at now: ###
### Test "<MAIN>" failed at test.c:1946:test_wait_exit() at now: ###
"""


def test_librdkafka_suite_reads_the_runners_verdicts():
    suite = _load("librdkafka-suite")
    ok = suite.verdicts(RUNNER_OK)
    assert ok == {"entries": {"0045_subscribe_update": "SKIPPED",
                              "0045_subscribe_update_topic_remove": "PASSED"},
                  "subtests": {"do_test_topic_remove:367: Topic removal testing": "PASS"}}
    assert suite.verdicts(RUNNER_ABORTED) == {"entries": {"0077_compaction": "FAILED"},
                                              "subtests": {}}
    # an entry listed by two scenarios counts once, by the run that ran it
    other = {"entries": {"0045_subscribe_update": "PASSED",
                         "0045_subscribe_update_topic_remove": "SKIPPED"}, "subtests": {}}
    assert suite.totals([ok, other, suite.verdicts(RUNNER_ABORTED)]) == {
        "entries": {"PASSED": 2, "FAILED": 1}, "subtests": {"PASS": 1}}
