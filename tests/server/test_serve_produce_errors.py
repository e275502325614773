"""Produce as KafkaApis.handleProduceRequest / ReplicaManager.appendRecords answer it,
provoked by crafted requests over a socket, with the exact response checked."""

from __future__ import annotations

import struct

import pytest
from serve_testkit import RawClient, create_topic

from kafkalog_cli.constants import CODEC_ZSTD
from kafkalog_cli.format.builder import build_batch
from kafkalog_cli.protocol.errors import Errors
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions

TS = 1_700_000_000_000


def batch(n=3, *, pid=-1, epoch=-1, seq=-1, codec=0, ts=TS, size=10):
    recs = [(ts + i, b"k%d" % i, b"v" * size, ()) for i in range(n)]
    return build_batch(recs, producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                       compression_type=codec)


def produce(client, topic, records, *, acks=1, version=11, partition=0, txn_id=None):
    body = {"transactionalId": txn_id, "acks": acks, "timeoutMs": 1000,
            "topicData": [{"name": topic, "partitionData": [{"index": partition,
                                                             "records": records}]}]}
    return client.request(0, version, body)


def part(res):
    return res["responses"][0]["partitionResponses"][0]


def err(index, code, log_start=-1):
    return {"index": index, "errorCode": int(code), "baseOffset": -1, "logAppendTimeMs": -1,
            "logStartOffset": log_start, "recordErrors": [], "errorMessage": None,
            "currentLeader": {"leaderId": -1, "leaderEpoch": -1}}


def ok(base, log_append=-1):
    return {"index": 0, "errorCode": 0, "baseOffset": base, "logAppendTimeMs": log_append,
            "logStartOffset": 0, "recordErrors": [], "errorMessage": None,
            "currentLeader": {"leaderId": -1, "leaderEpoch": -1}}


def test_success_offsets_and_every_version(raw):
    c = raw()
    create_topic(c, "t")
    assert produce(c, "t", batch(3)) == {
        "responses": [{"name": "t", "partitionResponses": [ok(0)]}], "throttleTimeMs": 0,
        "nodeEndpoints": []}
    for i, v in enumerate(range(3, 12)):
        assert part(produce(c, "t", batch(2), version=v))["baseOffset"] == 3 + 2 * i


def test_unknown_topic_or_partition(raw):
    c = raw()
    create_topic(c, "t")
    assert part(produce(c, "nope", batch())) == err(0, Errors.UNKNOWN_TOPIC_OR_PARTITION)
    assert part(produce(c, "t", batch(), partition=5)) == err(
        5, Errors.UNKNOWN_TOPIC_OR_PARTITION)


@pytest.mark.parametrize("acks", [2, -2, 5])
def test_invalid_required_acks(raw, acks):
    c = raw()
    create_topic(c, "t")
    res = produce(c, "t", batch(), acks=acks)
    assert part(res) == err(0, Errors.INVALID_REQUIRED_ACKS)
    # nothing was appended
    assert part(produce(c, "t", batch()))["baseOffset"] == 0


def test_min_insync_replicas_capped_at_replica_count(raw):
    """Kafka >= 3.7 (KAFKA-15583) caps min.insync.replicas at the replica count: acks=-1
    on a one-replica partition with min.insync.replicas=2 is appended (the bench broker
    answers so too: tests/wire/test_wire_produce.py)."""
    c = raw()
    create_topic(c, "strict", configs={"min.insync.replicas": "2"})
    assert part(produce(c, "strict", batch(), acks=-1)) == ok(0)
    assert part(produce(c, "strict", batch(), acks=1))["baseOffset"] == 3


def test_corrupt_message_bad_crc(raw):
    c = raw()
    create_topic(c, "t")
    b = bytearray(batch())
    b[-1] ^= 0xFF
    assert part(produce(c, "t", bytes(b))) == err(0, Errors.CORRUPT_MESSAGE)
    b = bytearray(batch())
    struct.pack_into(">i", b, 8, 20)  # batchLength below the v2 batch overhead
    assert part(produce(c, "t", bytes(b))) == err(0, Errors.CORRUPT_MESSAGE)
    # below the v0 record overhead (14): MemoryRecords' iterator throws in
    # RequestUtils.hasTransactionalRecords, before anything else; the whole request gets
    # CORRUPT_MESSAGE with the exception's message (RequestHandlerHelper.handleError)
    struct.pack_into(">i", b, 8, 5)
    assert part(produce(c, "t", bytes(b))) == {
        **err(0, Errors.CORRUPT_MESSAGE),
        "errorMessage": "Record size 5 is less than the minimum record overhead (14)"}


def test_invalid_record_shapes(raw):
    c = raw()
    create_topic(c, "t")
    assert part(produce(c, "t", batch() + batch())) == err(0, Errors.INVALID_RECORD)
    assert part(produce(c, "t", batch()[:-3])) == err(0, Errors.INVALID_RECORD)
    assert part(produce(c, "t", b"")) == err(0, Errors.INVALID_RECORD)
    # v6 has no recordErrors/errorMessage/currentLeader
    assert part(produce(c, "t", batch(codec=CODEC_ZSTD), version=6)) == {
        "index": 0, "errorCode": Errors.UNSUPPORTED_COMPRESSION_TYPE, "baseOffset": -1,
        "logAppendTimeMs": -1, "logStartOffset": -1}
    assert part(produce(c, "t", batch(codec=CODEC_ZSTD), version=7))["errorCode"] == 0


def test_internal_topic_rejected(log_dir):
    (log_dir / "__consumer_offsets-0").mkdir()
    with ServerThread(log_dir, ServerOptions(port=0)) as s:
        c = RawClient(s.port)
        try:
            assert part(produce(c, "__consumer_offsets", batch())) == err(
                0, Errors.INVALID_TOPIC_EXCEPTION)
            # the AdminClient's client id may write internal topics
            c2 = RawClient(s.port)
            body = {"transactionalId": None, "acks": 1, "timeoutMs": 1000, "topicData": [
                {"name": "__consumer_offsets", "partitionData": [
                    {"index": 0, "records": batch()}]}]}
            assert part(c2.request(0, 9, body, client_id="__admin_client"))["errorCode"] == 0
            c2.close()
        finally:
            c.close()


def test_message_too_large_and_log_append_time(raw):
    c = raw()
    create_topic(c, "small", configs={"max.message.bytes": "200"})
    assert part(produce(c, "small", batch(5, size=100))) == err(0, Errors.MESSAGE_TOO_LARGE)
    create_topic(c, "lat", configs={"message.timestamp.type": "LogAppendTime"})
    r = part(produce(c, "lat", batch()))
    assert r["errorCode"] == 0 and r["logAppendTimeMs"] > TS


def test_acks0_no_response_and_close_on_error(raw):
    c = raw()
    create_topic(c, "t")
    c.correlation += 1
    from kafkalog_cli.protocol.wire import encode_request

    body = {"transactionalId": None, "acks": 0, "timeoutMs": 1000,
            "topicData": [{"name": "t", "partitionData": [{"index": 0, "records": batch()}]}]}
    c.send_raw(encode_request(0, 9, c.correlation, body))
    # no response to acks=0: the next request's response is the next frame
    assert c.request(18, 0, {})["errorCode"] == 0
    body["topicData"][0]["name"] = "nope"
    c.send_raw(encode_request(0, 9, 99, body))
    assert c.recv_frame() is None  # connection closed, as the broker does
    assert part(produce(raw(), "t", batch()))["baseOffset"] == 3


def test_idempotent_duplicates_gaps_and_epochs(raw):
    c = raw()
    create_topic(c, "t")
    pid = c.request(22, 4, {"transactionalId": None, "transactionTimeoutMs": 1000})
    assert pid["errorCode"] == 0 and pid["producerEpoch"] == 0
    p = pid["producerId"]
    assert part(produce(c, "t", batch(3, pid=p, epoch=0, seq=0)))["baseOffset"] == 0
    assert part(produce(c, "t", batch(2, pid=p, epoch=0, seq=3)))["baseOffset"] == 3
    # a retry of an acknowledged batch: the original offsets, nothing appended;
    # logAppendTime carries the original batch's timestamp (UnifiedLog.append)
    dup = part(produce(c, "t", batch(3, pid=p, epoch=0, seq=0)))
    assert dup == {**ok(0), "logAppendTimeMs": TS + 2}
    # a gap
    assert part(produce(c, "t", batch(1, pid=p, epoch=0, seq=9))) == err(
        0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, log_start=0)
    # a new epoch must start at sequence 0; then the old epoch is fenced
    assert part(produce(c, "t", batch(1, pid=p, epoch=1, seq=5))) == err(
        0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, log_start=0)
    assert part(produce(c, "t", batch(1, pid=p, epoch=1, seq=0)))["baseOffset"] == 5
    assert part(produce(c, "t", batch(1, pid=p, epoch=0, seq=5))) == err(
        0, Errors.INVALID_PRODUCER_EPOCH, log_start=0)
    # next producer id differs; a new transactional id gets the next one, epoch 0
    assert c.request(22, 4, {"transactionalId": None, "transactionTimeoutMs": 1})[
        "producerId"] == p + 1
    r = c.request(22, 4, {"transactionalId": "tx", "transactionTimeoutMs": 1})
    assert (r["errorCode"], r["producerId"], r["producerEpoch"]) == (0, p + 2, 0)
    # TransactionStateManager.validateTransactionTimeoutMs: 0 < timeout <= 900000
    assert c.request(22, 4, {"transactionalId": "tx", "transactionTimeoutMs": 900001})[
        "errorCode"] == Errors.INVALID_TRANSACTION_TIMEOUT


def test_producer_ids_persist_across_restarts(log_dir):
    seen = []
    for _ in range(2):
        with ServerThread(log_dir, ServerOptions(port=0)) as s:
            c = RawClient(s.port)
            seen.append(c.request(22, 1, {"transactionalId": None,
                                          "transactionTimeoutMs": 1})["producerId"])
            c.close()
    assert seen[1] > seen[0]


def test_transactional_batches_refused(raw):
    c = raw()
    create_topic(c, "t")
    b = build_batch([(TS, b"k", b"v", ())], producer_id=5, producer_epoch=0, base_sequence=0,
                    is_transactional=True)
    assert part(produce(c, "t", b)) == err(0, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    # the coordinator's verification: no such transactional id (producer id mapping)
    assert part(produce(c, "t", b, txn_id="tx")) == err(0, Errors.INVALID_PRODUCER_ID_MAPPING)


# -- KafkaApis.handleProduceRequest's order and keys -----------------------------------------

def _request(topic_data, *, acks=1, txn_id=None):
    return {"transactionalId": txn_id, "acks": acks, "timeoutMs": 1000,
            "topicData": [{"name": n, "partitionData": [{"index": i, "records": r}
                                                        for i, r in parts]}
                          for n, parts in topic_data]}


def _txn_batch(n=1):
    return build_batch([(TS + i, b"k", b"v", ()) for i in range(n)], producer_id=5,
                       producer_epoch=0, base_sequence=0, is_transactional=True)


def test_transactional_batch_anywhere_refuses_the_whole_request(raw):
    """RequestUtils.hasTransactionalRecords looks at every partition first (even one of an
    unknown topic); without a transactional id every partition of the request gets
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED (no message: ApiError.fromThrowable leaves out
    the default one) and nothing is appended anywhere."""
    c = raw()
    create_topic(c, "t", 2)
    res = c.request(0, 11, _request([("t", [(0, batch(2)), (1, batch(1))]),
                                    ("nope", [(0, _txn_batch())])]))
    want = {**err(0, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED), "errorMessage": None}
    assert res["responses"] == [
        {"name": "t", "partitionResponses": [want, {**want, "index": 1}]},
        {"name": "nope", "partitionResponses": [want]}]
    assert part(produce(c, "t", batch(1)))["baseOffset"] == 0
    assert part(produce(c, "t", batch(1), partition=1))["baseOffset"] == 0
    # acks=0: the connection is closed instead, still nothing appended
    from kafkalog_cli.protocol.wire import encode_request

    c.send_raw(encode_request(0, 9, 99, _request([("t", [(0, batch(2))]),
                                                  ("t", [(1, _txn_batch())])], acks=0)))
    assert c.recv_frame() is None
    assert part(produce(raw(), "t", batch(1)))["baseOffset"] == 1


def test_transactional_id_refuses_only_transactional_partitions(raw):
    """With a transactional id, a transactional batch needs the coordinator's verification
    (here: no transaction of that id, INVALID_PRODUCER_ID_MAPPING); the request's other
    partitions are appended (ReplicaManager.handleProduceAppend filters only the failed
    ones)."""
    c = raw()
    create_topic(c, "t", 2)
    res = c.request(0, 11, _request([("t", [(0, _txn_batch()), (1, batch(2))])], txn_id="tx"))
    (t,) = res["responses"]
    assert t["partitionResponses"][0] == err(0, Errors.INVALID_PRODUCER_ID_MAPPING)
    assert t["partitionResponses"][1] == {**ok(0), "index": 1}


def test_first_batch_corrupt_size_fails_the_whole_request(raw):
    """A first batch whose size is below 14 bytes (or whose magic is not 0-2) throws out of
    MemoryRecords' iterator in hasTransactionalRecords: CORRUPT_MESSAGE for every partition
    of the request, with the exception's message, even those that were fine."""
    c = raw()
    create_topic(c, "t", 2)
    bad = bytearray(batch())
    bad[16] = 7  # magic
    res = c.request(0, 11, _request([("t", [(0, batch(2)), (1, bytes(bad))])]))
    want = {**err(0, Errors.CORRUPT_MESSAGE), "errorMessage": "Invalid magic found in record: 7"}
    assert res["responses"] == [{"name": "t", "partitionResponses": [
        want, {**want, "index": 1}]}]
    assert part(produce(c, "t", batch(1)))["baseOffset"] == 0


def test_same_partition_twice_is_one_append_and_one_response(raw):
    """The request is keyed by topic-partition (KafkaApis' maps): the partition's last
    batch is appended, once, and answered once, whether the duplicate is in the same
    topic entry or in a second entry of the same topic."""
    c = raw()
    create_topic(c, "t", 2)
    res = c.request(0, 11, _request([("t", [(0, batch(2)), (1, batch(1)), (0, batch(3))])]))
    assert res["responses"] == [{"name": "t", "partitionResponses": [
        ok(0), {**ok(0), "index": 1}]}]
    assert part(produce(c, "t", batch(1)))["baseOffset"] == 3
    res = c.request(0, 11, _request([("t", [(0, batch(4))]), ("t", [(0, batch(5))])]))
    assert res["responses"] == [{"name": "t", "partitionResponses": [ok(4)]}]
    assert part(produce(c, "t", batch(1)))["baseOffset"] == 9


def test_duplicate_batch_counts_its_messages(server, raw):
    """ReplicaManager marks MessagesInPerSec with LogAppendInfo.numMessages, which for a
    recognised duplicate is its offset range: a retried batch of 3 counts 3 again."""
    c = raw()
    create_topic(c, "t")
    p = c.request(22, 4, {"transactionalId": None, "transactionTimeoutMs": 1000})["producerId"]
    stats = server.server.stats
    assert part(produce(c, "t", batch(3, pid=p, epoch=0, seq=0)))["baseOffset"] == 0
    assert part(produce(c, "t", batch(3, pid=p, epoch=0, seq=0)))["baseOffset"] == 0
    assert stats.topics["t"]["MessagesInPerSec"].count == 6
    assert server.server.catalog.partition("t", 0).log_end_offset == 3
