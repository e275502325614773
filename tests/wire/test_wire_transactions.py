"""Transactions, differentially (TV1 on the bench broker, as serve implements):
FindCoordinator, InitProducerId, AddPartitionsToTxn, transactional Produce (the
issue's differences 1-4), EndTxn, AddOffsetsToTxn, TxnOffsetCommit, fencing,
DescribeTransactions / ListTransactions, and what read_committed then sees."""

from __future__ import annotations

import time

import pytest
from wire_testkit import batch, decode, fetch_body, list_offsets_body, produce_body

from kafkalog_cli.protocol.wire import encode_request

pytestmark = pytest.mark.kafka

TXN = "wire-txn-1"
OTHER = "wire-txn-2"


@pytest.fixture(scope="module")
def pair(wire_pair):
    wire_pair.create_topic("tx-a", 2)
    wire_pair.create_topic("tx-b", 1)
    wire_pair.create_topic("tx-c", 1)
    for txn_id in (TXN, OTHER):
        for side in wire_pair.sides.values():
            side.values[txn_id] = wire_pair.init_producer_id(side, txn_id)
    return wire_pair


def pid(txn_id):
    return lambda side: side.values[txn_id][0]


def epoch(txn_id):
    return lambda side: side.values[txn_id][1]


def add_partitions(txn_id, parts, version=3, *, epoch_delta=0):
    topics: dict[str, list[int]] = {}
    for t, p in parts:
        topics.setdefault(t, []).append(p)
    return lambda side: {
        "v3AndBelowTransactionalId": txn_id, "v3AndBelowProducerId": side.values[txn_id][0],
        "v3AndBelowProducerEpoch": side.values[txn_id][1] + epoch_delta,
        "v3AndBelowTopics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}


def txn_batch(txn_id, n=2, seq=0, *, epoch_delta=0, **kw):
    return lambda side: batch(n, pid=side.values[txn_id][0],
                              epoch=side.values[txn_id][1] + epoch_delta, seq=seq, txn=True,
                              **kw)


def produce(parts, txn_id, **kw):
    """A produce body of ``parts`` = ``[(topic, partition, records or a side function)]``."""
    return lambda side: produce_body(
        [(t, p, r(side) if callable(r) else r) for t, p, r in parts], txn_id=txn_id, **kw)


def end_txn(txn_id, commit, *, epoch_delta=0, pid_delta=0):
    return lambda side: {"transactionalId": txn_id,
                         "producerId": side.values.get(txn_id, (5, 0))[0] + pid_delta,
                         "producerEpoch": side.values.get(txn_id, (5, 0))[1] + epoch_delta,
                         "committed": commit}


def wait_complete(pair, txn_id):
    """Set-up: wait until the broker's transaction is complete (TV1's EndTxn answers once
    PrepareCommit/PrepareAbort is logged; the markers and CompleteCommit follow)."""
    side = pair.sides["broker"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        side.correlation += 1
        side.send(encode_request(65, 0, side.correlation, {"transactionalIds": [txn_id]},
                                 "wire"))
        state = decode(65, 0, side.recv())["transactionStates"][0]["transactionState"]
        if state in ("CompleteCommit", "CompleteAbort"):
            return
        time.sleep(0.05)
    raise AssertionError(f"the broker's transaction {txn_id} does not complete")


def test_find_coordinator_transaction(pair):
    for v in range(0, 5):
        body = ({"key": TXN, "keyType": 1} if v < 4 else
                {"keyType": 1, "coordinatorKeys": [TXN, OTHER]})
        pair.same(10, v, body)


def test_init_producer_id_unknown_pid_epoch(pair):
    # v3+: a producerId/epoch the coordinator never gave: INVALID_PRODUCER_EPOCH
    pair.same(22, 4, {"transactionalId": "wire-txn-never", "transactionTimeoutMs": 60000,
                      "producerId": 77, "producerEpoch": 3})


@pytest.mark.parametrize("timeout_ms", [0, -1, 900001], ids=["zero", "negative", "over-max"])
def test_init_producer_id_bad_timeout(pair, timeout_ms):
    pair.same(22, 4, {"transactionalId": "wire-txn-timeout", "transactionTimeoutMs": timeout_ms,
                      "producerId": -1, "producerEpoch": -1})


def test_init_producer_id_empty_transactional_id(pair):
    pair.same(22, 4, {"transactionalId": "", "transactionTimeoutMs": 60000,
                      "producerId": -1, "producerEpoch": -1})


def test_add_partitions(pair):
    pair.same(24, 3, add_partitions(TXN, [("tx-a", 0)]))


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_add_partitions_versions_unknown_topic(pair, version):
    pair.same(24, version, add_partitions(TXN, [("tx-nope", 0), ("tx-a", 0)], version))


def test_add_partitions_wrong_epoch(pair):
    pair.same(24, 3, add_partitions(TXN, [("tx-b", 0)], epoch_delta=-1))


def test_add_partitions_unknown_txn(pair):
    pair.same(24, 3, lambda side: {
        "v3AndBelowTransactionalId": "wire-txn-unknown", "v3AndBelowProducerId": 5,
        "v3AndBelowProducerEpoch": 0,
        "v3AndBelowTopics": [{"name": "tx-a", "partitions": [0]}]})


def test_produce_to_added_partition(pair):
    pair.same(0, 11, produce([("tx-a", 0, txn_batch(TXN))], TXN))


@pytest.mark.parametrize("version", [3, 9, 10, 11])
def test_produce_to_partition_not_added(pair, version):
    """Difference 4: Partition was not added to the transaction (v<=10: 48 with Kafka's
    message; v11: TRANSACTION_ABORTABLE)."""
    pair.same(0, version, produce([("tx-a", 1, txn_batch(TXN, seq=0))], TXN))


def test_not_added_with_bad_acks(pair):
    """Difference 3: the verification comes before the acks check."""
    pair.same(0, 11, produce([("tx-a", 1, txn_batch(TXN, seq=0))], TXN, acks=2))


def test_transactional_records_without_transactional_id_and_corrupt(pair):
    """Difference 1: hasTransactionalRecords stops at the first transactional batch: 53
    for every partition, though tx-b-0's batch is corrupt."""
    corrupt = bytearray(batch(2))
    corrupt[-1] ^= 0xFF
    pair.same(0, 11, produce([("tx-a", 0, txn_batch(TXN, seq=2)),
                              ("tx-b", 0, bytes(corrupt))], None))


def test_transactional_and_corrupt_with_transactional_id(pair):
    """Difference 1 with a transactionalId: per partition, tx-a-1 (not added) 48 and the
    corrupt tx-b-0 CORRUPT_MESSAGE."""
    corrupt = bytearray(batch(2))
    corrupt[-1] ^= 0xFF
    pair.same(0, 10, produce([("tx-a", 1, txn_batch(TXN, seq=0)),
                              ("tx-b", 0, bytes(corrupt))], TXN))


def test_more_than_one_producer_id(pair):
    """Difference 2: transactional batches of two producers in one request: the whole
    request fails with 49 and Kafka's message, nothing written."""
    pair.same(24, 3, add_partitions(OTHER, [("tx-c", 0)]))
    pair.same(0, 11, produce([("tx-a", 0, txn_batch(TXN, seq=2)),
                              ("tx-c", 0, txn_batch(OTHER, seq=0))], TXN))
    pair.same(2, 7, list_offsets_body("tx-a", [0, 1], -1))
    pair.same(2, 7, list_offsets_body("tx-c", [0], -1))


def test_idempotent_batch_in_transactional_request(pair):
    pair.same(0, 11, produce([("tx-b", 0, batch(1))], TXN))


def test_transactional_sequences(pair):
    pair.same(0, 11, produce([("tx-a", 0, txn_batch(TXN, seq=2))], TXN))
    pair.same(0, 11, produce([("tx-a", 0, txn_batch(TXN, seq=2))], TXN))  # duplicate
    pair.same(0, 11, produce([("tx-a", 0, txn_batch(TXN, seq=9))], TXN))  # gap
    pair.same(0, 11, produce([("tx-a", 0, txn_batch(TXN, seq=4, epoch_delta=-1))], TXN))


def test_read_uncommitted_and_committed_while_open(pair):
    for isolation in (0, 1):
        pair.same(1, 12, fetch_body("tx-a", [0, 1], 0, isolation=isolation))
        pair.same(2, 7, list_offsets_body("tx-a", [0, 1], -1, isolation=isolation))


def test_add_offsets_and_txn_offset_commit(pair):
    pair.same(25, 3, lambda side: {"transactionalId": TXN, "producerId": side.values[TXN][0],
                                   "producerEpoch": side.values[TXN][1], "groupId": "wire-g"})
    pair.same(28, 3, lambda side: {
        "transactionalId": TXN, "groupId": "wire-g", "producerId": side.values[TXN][0],
        "producerEpoch": side.values[TXN][1], "generationId": -1, "memberId": "",
        "groupInstanceId": None, "topics": [{"name": "tx-a", "partitions": [
            {"partitionIndex": 0, "committedOffset": 3, "committedLeaderEpoch": -1,
             "committedMetadata": "m"}]}]})


def test_txn_offset_commit_not_added_group(pair):
    pair.same(28, 3, lambda side: {
        "transactionalId": TXN, "groupId": "wire-g-other", "producerId": side.values[TXN][0],
        "producerEpoch": side.values[TXN][1], "generationId": -1, "memberId": "",
        "groupInstanceId": None, "topics": [{"name": "tx-a", "partitions": [
            {"partitionIndex": 0, "committedOffset": 3, "committedLeaderEpoch": -1,
             "committedMetadata": None}]}]})


def test_describe_and_list_transactions_ongoing(pair):
    pair.same(65, 0, {"transactionalIds": [TXN, "wire-txn-unknown"]}, normal_time=True)
    pair.same(66, 1, {"stateFilters": ["Ongoing"], "producerIdFilters": [],
                      "durationFilter": -1})


def test_end_txn_errors(pair):
    pair.same(26, 3, end_txn(TXN, True, epoch_delta=-1))
    pair.same(26, 3, end_txn(TXN, True, pid_delta=1000))
    pair.same(26, 3, end_txn("wire-txn-unknown", True))


def test_commit_then_read(pair):
    pair.same(26, 3, end_txn(TXN, True))
    wait_complete(pair, TXN)
    pair.same(26, 3, end_txn(TXN, True))  # a retry of the commit: NONE
    pair.same(26, 3, end_txn(TXN, False))  # abort after commit: INVALID_TXN_STATE
    for isolation in (0, 1):
        pair.same(1, 12, fetch_body("tx-a", [0, 1], 0, isolation=isolation))
        pair.same(2, 7, list_offsets_body("tx-a", [0, 1], -1, isolation=isolation))
    pair.same(9, 7, {"groups": [{"groupId": "wire-g", "topics": None}],
                     "requireStable": True})


def test_abort_then_aborted_transactions_in_fetch(pair):
    pair.same(26, 3, end_txn(OTHER, False))
    wait_complete(pair, OTHER)
    for isolation in (0, 1):
        pair.same(1, 12, fetch_body("tx-c", [0], 0, isolation=isolation))
    # a second transaction: data then abort, on tx-a-1
    pair.same(24, 3, add_partitions(TXN, [("tx-a", 1)]))
    pair.same(0, 11, produce([("tx-a", 1, txn_batch(TXN, seq=0))], TXN))
    pair.same(26, 3, end_txn(TXN, False))
    wait_complete(pair, TXN)
    for isolation in (0, 1):
        pair.same(1, 12, fetch_body("tx-a", [1], 0, isolation=isolation))
        pair.same(1, 12, fetch_body("tx-a", [1], 1, isolation=isolation))


def test_fencing(pair):
    """A second InitProducerId bumps the epoch; the old epoch is fenced everywhere."""
    for side in pair.sides.values():
        side.values["old"] = side.values[TXN]
        side.values[TXN] = pair.init_producer_id(side, TXN)
    assert pair.sides["broker"].values[TXN] == pair.sides["serve"].values[TXN]
    pair.same(24, 3, lambda side: {
        "v3AndBelowTransactionalId": TXN, "v3AndBelowProducerId": side.values["old"][0],
        "v3AndBelowProducerEpoch": side.values["old"][1],
        "v3AndBelowTopics": [{"name": "tx-a", "partitions": [0]}]})
    pair.same(26, 3, lambda side: {"transactionalId": TXN, "producerId": side.values["old"][0],
                                   "producerEpoch": side.values["old"][1], "committed": True})
    pair.same(0, 11, produce([("tx-a", 0, lambda side: batch(
        1, pid=side.values["old"][0], epoch=side.values["old"][1], seq=5, txn=True))], TXN))


def test_describe_and_list_transactions_after(pair):
    pair.same(65, 0, {"transactionalIds": [TXN, OTHER]}, normal_time=True)
    pair.same(66, 1, {"stateFilters": [], "producerIdFilters": [], "durationFilter": -1})
