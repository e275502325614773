"""One record per internal topic from real broker bytes (``../shared/corpus/real``, skipped
when absent), decoded by hand from the hex below and compared with kafkalog's decoding
and with the text DumpLogSegments prints. The corpus holds no ``__share_group_state`` or
``__remote_log_metadata`` partition; those topics are covered by the golden bytes of
``test_kafka_definitions.py`` and Kafka's own expected texts in ``test_dump_kafka4.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalog_cli.decoders import decoder_for_topic
from kafkalog_cli.format.records import FileRecords

CORPUS = (Path(__file__).parents[2] / "../shared/corpus/real").resolve()

pytestmark = pytest.mark.corpus


def _record(relative: str, offset: int):
    path = CORPUS / relative
    if not path.is_file():
        pytest.skip(f"{relative} not in the corpus")
    for batch in FileRecords(path.read_bytes()).batches():
        for r in batch.records():
            if r.offset == offset:
                return path.parent.name, r
    raise AssertionError(f"no offset {offset} in {relative}")


def test_transaction_state_record():
    """ItumelengMogase's __transaction_state-44, offset 1 (Kafka 3.x, KRaft)::

        key   0000 | 0008 64656661756c745f                  type 0, "default_"
        value 0000                                          version 0
              0000000000000000 0000 0000ea60 01             pid 0, epoch 0, 60000 ms, Ongoing
              00000001 0026 5f636f6e...746f706963           1 topic (38 bytes)
              00000001 00000000                             partitions [0]
              00000192764aef33 00000192764aef33             last update, start
    """
    topic, r = _record("ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/"
                       "kafka-data/__transaction_state-44/00000000000000000000.log", 1)
    d = decoder_for_topic(topic).decode(r.key, r.value)
    assert d.warnings == [] and d.failure is None
    assert d.key == {"type": "0", "data": {"transactionalId": "default_"}}
    assert d.value == {"version": "0", "data": {
        "producerId": 0, "producerEpoch": 0, "transactionTimeoutMs": 60000,
        "transactionStatus": 1,
        "transactionPartitions": [{"topic": "_confluent-ksql-default__command_topic",
                                   "partitionIds": [0]}],
        "transactionLastUpdateTimestampMs": 0x192764AEF33,
        "transactionStartTimestampMs": 0x192764AEF33}}
    assert d.kafka_text(1) == (
        '{"type":"0","data":{"transactionalId":"default_"}}',
        '{"version":"0","data":{"producerId":0,"producerEpoch":0,"transactionTimeoutMs":60000,'
        '"transactionStatus":"Ongoing","transactionPartitions":[{"topic":'
        '"_confluent-ksql-default__command_topic","partitionIds":[0]}],'
        '"transactionLastUpdateTimestampMs":1728561475379,'
        '"transactionStartTimestampMs":1728561475379}}')


def test_consumer_offsets_group_metadata_record():
    """Bheem6005's __consumer_offsets-0, offset 0 (Kafka 3.1): GroupMetadataValue v3 of a
    consumer group, whose member's subscription (22 bytes: v1, topics [cities], userData
    null, no owned partitions) and assignment (26 bytes: v1, cities [0], userData null)
    are decoded as OffsetsMessageParser.prepareGroupMetadataValue does::

        value 0003 | 0008 "consumer" | 00000001 | 0005 "range" | 0035 <leader> |
              0000017f3a85b0fe | 00000001 | 0035 <member> ffff 0010 "console-consumer"
              000e "/192.168.50.45" 000493e0 0000afc8 | 00000016 0001 00000001 0006
              "cities" ffffffff 00000000 | 0000001a 0001 00000001 0006 "cities"
              00000001 00000000 ffffffff
    """
    topic, r = _record("Bheem6005__kafka/kafka-logs/__consumer_offsets-0/"
                       "00000000000000000000.log", 0)
    d = decoder_for_topic(topic).decode(r.key, r.value)
    member = "console-consumer-4fcee79b-493d-41c0-b3ea-633d704faf45"
    assert d.warnings == []
    assert d.key == {"type": "2", "data": {"group": "console-consumer-14897"}}
    assert d.value == {"version": "3", "data": {
        "protocolType": "consumer", "generation": 1, "protocol": "range", "leader": member,
        "currentStateTimestamp": 0x17F3A85B0FE,
        "members": [{"memberId": member, "groupInstanceId": None,
                     "clientId": "console-consumer", "clientHost": "/192.168.50.45",
                     "rebalanceTimeout": 300000, "sessionTimeout": 45000,
                     "subscription": {"topics": ["cities"], "userData": None,
                                      "ownedPartitions": []},
                     "assignment": {"assignedPartitions": [{"topic": "cities",
                                                            "partitions": [0]}],
                                    "userData": None}}]}}
    key, payload = d.kafka_text(0)
    assert key == '{"type":"2","data":{"group":"console-consumer-14897"}}'
    assert payload.startswith('{"version":"3","data":{"protocolType":"consumer",'
                              '"generation":1,"protocol":"range",')
    assert payload.endswith('"subscription":{"topics":["cities"],"userData":null,'
                            '"ownedPartitions":[]},"assignment":{"assignedPartitions":'
                            '[{"topic":"cities","partitions":[0]}],"userData":null}}]}}')


def test_cluster_metadata_record():
    """Rishab-Bo's __cluster_metadata-0, offset 2 (Kafka 3.9 KRaft)::

        value 01 | 0c | 00 | 11 6d657461646174612e76657273696f6e | 001b | 00
              frame 1, FeatureLevelRecord (12) v0, "metadata.version", level 27, no tags
    """
    topic, r = _record("Rishab-Bo__Stream-MA-Prediction-Pipeline/kafka-data/"
                       "__cluster_metadata-0/00000000000000000000.log", 2)
    assert r.value.hex() == "010c00116d657461646174612e76657273696f6e001b00"
    d = decoder_for_topic(topic).decode(r.key, r.value)
    assert d.warnings == []
    assert d.value == {"type": "FEATURE_LEVEL_RECORD", "version": 0,
                       "data": {"name": "metadata.version", "featureLevel": 27}}
    assert d.kafka_text(2) == (None, '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":'
                                     '{"name":"metadata.version","featureLevel":27}}')
