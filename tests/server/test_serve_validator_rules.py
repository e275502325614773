"""Every rule of ``ProduceRequest.validateRecords``, ``analyzeAndValidateRecords`` and
``LogValidator`` through serve's Produce: the ProduceResponse carries Kafka's error code,
``recordErrors`` and ``errorMessage`` only for ``RecordValidationException`` (timestamps,
keys), and the log start offset when ``ReplicaManager.processFailedRecord`` ran; nothing
is appended. Cases: ``tests/log_validator_cases.py``."""

from __future__ import annotations

import re
import time

import pytest
from log_validator_cases import CASES, EXACT_ERROR_MESSAGE, TOPIC
from serve_testkit import create_topic
from test_serve_produce_errors import batch, part, produce

from kafkalog_cli.protocol.errors import Errors


def _now() -> int:
    return int(time.time() * 1000)


def _check(slot: dict, case) -> None:
    assert slot["errorCode"] == Errors[case.error], (Errors(slot["errorCode"]).name, slot)
    assert (slot["index"], slot["baseOffset"], slot["logAppendTimeMs"]) == (0, -1, -1)
    assert slot["logStartOffset"] == case.log_start, slot
    got = [(e["batchIndex"], e["batchIndexErrorMessage"]) for e in slot["recordErrors"]]
    assert len(got) == len(case.record_errors), got
    for (i, message), (want_i, pattern) in zip(got, case.record_errors, strict=True):
        assert i == want_i and re.fullmatch(pattern, message), (i, message)
    if case.id in EXACT_ERROR_MESSAGE:
        assert slot["errorMessage"] == EXACT_ERROR_MESSAGE[case.id]
    elif case.error_message is None:
        assert slot["errorMessage"] is None, slot
    else:
        assert re.fullmatch(case.error_message, slot["errorMessage"]), slot


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_produce_refuses(raw, case):
    c = raw()
    create_topic(c, TOPIC, configs=case.configs)
    _check(part(produce(c, TOPIC, case.build(_now()), version=9)), case)
    # nothing was appended: the next good batch gets offset 0
    assert part(produce(c, TOPIC, batch(1, ts=_now(), size=1)))["baseOffset"] == 0


@pytest.mark.parametrize("case", [c for c in CASES if c.request_level], ids=lambda c: c.id)
@pytest.mark.parametrize("version", range(3, 12))
def test_every_produce_version_needs_one_v2_batch(raw, case, version):
    """Produce v3+ (all that serve accepts) takes exactly one magic-2 batch per partition."""
    c = raw()
    create_topic(c, TOPIC)
    slot = part(produce(c, TOPIC, case.build(_now()), version=version))
    assert slot["errorCode"] == Errors.INVALID_RECORD and slot["baseOffset"] == -1


@pytest.mark.parametrize("case", [c for c in CASES if c.id in (
    "magic-v1", "base-offset", "keyless-on-compacted", "timestamp-after-max")],
    ids=lambda c: c.id)
def test_acks0_closes_the_connection(raw, case):
    """acks=0: no response; a refused batch closes the connection (the producer sees the
    error as a disconnect), and nothing is appended."""
    from kafkalog_cli.protocol.wire import encode_request

    c = raw()
    create_topic(c, TOPIC, configs=case.configs)
    body = {"transactionalId": None, "acks": 0, "timeoutMs": 1000, "topicData": [
        {"name": TOPIC, "partitionData": [{"index": 0, "records": case.build(_now())}]}]}
    c.send_raw(encode_request(0, 9, 77, body))
    assert c.recv_frame() is None
    assert part(produce(raw(), TOPIC, batch(1, ts=_now(), size=1)))["baseOffset"] == 0


def test_timestamp_difference_max_ms_is_gone(raw):
    """Kafka 4.0 removed message.timestamp.difference.max.ms (KIP-937: before/after.max.ms
    replace it); a topic config of that name is unknown (INVALID_CONFIG) and nothing is
    created."""
    c = raw()
    body = {"topics": [{"name": TOPIC, "numPartitions": 1, "replicationFactor": 1,
                        "assignments": [], "configs": [
                            {"name": "message.timestamp.difference.max.ms", "value": "1000"}]}],
            "timeoutMs": 1000}
    (res,) = c.request(19, 7, body)["topics"]
    assert res["errorCode"] == Errors.INVALID_CONFIG
    assert "Unknown topic config name: message.timestamp.difference.max.ms" in res["errorMessage"]
    assert c.request(3, 12, {"topics": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAA", "name": TOPIC}],
                             "allowAutoTopicCreation": False})["topics"][0]["errorCode"] == \
        Errors.UNKNOWN_TOPIC_OR_PARTITION
