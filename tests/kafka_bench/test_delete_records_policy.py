"""``kafkalog delete-records`` against kafka-delete-records.sh (DeleteRecordsCommand) on
the bench broker for each ``cleanup.policy``: Partition.deleteRecordsOnLeader refuses a
topic whose policy is ``compact`` without ``delete`` (POLICY_VIOLATION), and Kafka 4.4.0
allows an empty one. The topic configs are the broker's ``ConfigRecord`` s in its
``__cluster_metadata`` (an override set, one set then deleted), read by kafkalog from a
copy of the partitions and the metadata log (the shared broker keeps running).
"""

from __future__ import annotations

import json
import shutil

import pytest
from kafka_testkit import kafka_tool
from kafkalog_testkit import run_cli_inprocess as cli

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

DRC = "org.apache.kafka.tools.DeleteRecordsCommand"
POLICIES = {"drp-compact": "compact", "drp-empty": "", "drp-both": "compact,delete",
            "drp-default": None, "drp-was-compact": "compact"}


def test_delete_records_refused_by_the_cleanup_policy_as_the_broker_refuses(kafka_broker,
                                                                            tmp_path):
    pytest.importorskip("confluent_kafka")
    from confluent_kafka import Producer
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    b = kafka_broker
    for topic, policy in POLICIES.items():
        b.create_topic(topic, configs={} if policy is None else {"cleanup.policy": policy})
    res = ConfigResource("TOPIC", "drp-was-compact", incremental_configs=[ConfigEntry(
        "cleanup.policy", None, incremental_operation=AlterConfigOpType.DELETE)])
    admin = b.admin()
    for f in admin.incremental_alter_configs([res]).values():
        f.result(30)
    p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 0})
    for topic in POLICIES:
        for i in range(3):
            p.produce(topic, b"v", b"k%d" % i)
    p.flush(30)
    spec = tmp_path / "delete.json"
    spec.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": 0, "offset": 1} for t in POLICIES]}))
    theirs = kafka_tool(DRC, "--bootstrap-server", b.bootstrap, "--offset-json-file", str(spec))
    assert theirs.exit == 0, theirs.stderr

    copy = tmp_path / "logs"
    copy.mkdir()
    shutil.copy(b.log_dir / "meta.properties", copy)
    for name in [*(f"{t}-0" for t in POLICIES), "__cluster_metadata-0"]:
        shutil.copytree(b.log_dir / name, copy / name)
    mine = cli("delete-records", str(copy), "--offset-json-file", str(spec))
    # 4.4.0's admin client gathers the partitions' futures with
    # Collectors.toUnmodifiableMap: the tool's line order is new in each JVM (its SALT)
    assert sorted(mine.stdout.splitlines()) == sorted(theirs.stdout.splitlines())
    assert theirs.stdout.count("PolicyViolationException: Request parameters do not satisfy "
                               "the configured policy.") == 1
    assert mine.returncode == 1
    assert ("drp-compact-0: Records of partition drp-compact-0 can not be deleted due to the "
            "configured policy\n") in mine.stderr
