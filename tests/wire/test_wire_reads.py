"""Metadata, ListOffsets and Fetch, differentially: every served version, known and
unknown topics and partitions, auto-creation, internal topics, the special timestamps
(-1 latest, -2 earliest, -3 max timestamp, -4 earliest local, -5 latest tiered), real
timestamps, isolation levels, max bytes, out-of-range offsets, leader epochs, topic ids."""

from __future__ import annotations

import pytest
from wire_testkit import TS, batch, fetch_body, list_offsets_body, produce_body

from kafkalog_cli.constants import CODEC_GZIP
from kafkalog_cli.schema.flexible import ZERO_UUID

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def pair(wire_pair):
    wire_pair.create_topic("rd-a", 3)
    wire_pair.create_topic("rd-b", 1, {"message.timestamp.type": "LogAppendTime"})
    wire_pair.create_topic("rd.c", 1)
    # rd-a-0: 3 batches (timestamps TS.., TS+100.., TS+50..) of 2, 3 and 4 records
    for n, ts in ((2, TS), (3, TS + 100), (4, TS + 50)):
        wire_pair.same(0, 11, produce_body([("rd-a", 0, batch(n, ts=ts))]))
    wire_pair.same(0, 11, produce_body([("rd-a", 1, batch(5, codec=CODEC_GZIP,
                                                          value_size=500))]))
    wire_pair.same(0, 11, produce_body([("rd-b", 0, batch(2))]))
    # rd-a-2 stays empty
    return wire_pair


def metadata(names, version, *, auto=False, ops=False):
    if names is None:
        topics = None
    elif version >= 10:
        topics = [{"topicId": ZERO_UUID, "name": n} for n in names]
    else:
        topics = [{"name": n} for n in names]
    return {"topics": topics, "allowAutoTopicCreation": auto,
            "includeClusterAuthorizedOperations": ops, "includeTopicAuthorizedOperations": ops}


@pytest.mark.parametrize("version", range(0, 13))
def test_metadata_known_and_unknown(pair, version):
    # v0-3 have no allowAutoTopicCreation (true): only known names there
    names = ["rd-a", "rd.c"] if version < 4 else ["rd-a", "rd-nope", "rd.c"]
    pair.same(3, version, metadata(names, version))


@pytest.mark.parametrize("version", [0, 1])
def test_metadata_all_topics(pair, version):
    pair.same(3, version, metadata([] if version == 0 else None, version))


def test_metadata_auto_creation(pair):
    """Kept difference (docs/serve.md): the broker answers the first ask
    UNKNOWN_TOPIC_OR_PARTITION and creates the topic asynchronously; serve creates it at
    once and answers it. Then both answer alike."""
    b, s = pair.both(3, 12, metadata(["rd-auto"], 12, auto=True))
    assert b["topics"][0]["errorCode"] in (3, 5) and s["topics"][0]["errorCode"] == 0
    pair.wait_leaders("rd-auto", 1)
    pair.learn_topic_ids("rd-auto")
    pair.same(3, 12, metadata(["rd-auto"], 12, auto=True))
    pair.same(3, 3, metadata(["rd-auto"], 3))


@pytest.mark.parametrize("version", [4, 8, 10, 12])
def test_metadata_authorized_operations(pair, version):
    pair.same(3, version, metadata(["rd-a"], version, ops=True))


@pytest.mark.parametrize("name", ["bad name", "", "a" * 250, "..", "__consumer_offsets",
                                  "rd_c"], ids=["space", "empty", "long", "dots", "internal",
                                                "collides"])
def test_metadata_odd_names(pair, name):
    pair.same(3, 12, metadata([name], 12))


def test_metadata_unknown_topic_id(pair):
    pair.same(3, 12, {"topics": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "name": None}],
                      "allowAutoTopicCreation": False, "includeTopicAuthorizedOperations": False})


def test_metadata_topic_id_below_v12(pair):
    pair.same(3, 11, {"topics": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "name": "rd-a"}],
                      "allowAutoTopicCreation": False, "includeTopicAuthorizedOperations": False})


def test_metadata_known_topic_id(pair):
    pair.same(3, 12, lambda side: {"topics": [{"topicId": next(
        i for i, n in side.topic_ids.items() if n == "rd-a"), "name": None}],
        "allowAutoTopicCreation": False, "includeTopicAuthorizedOperations": False})


# -- ListOffsets ---------------------------------------------------------------------------

SPECIAL = {"latest": -1, "earliest": -2, "max-timestamp": -3, "earliest-local": -4,
           "latest-tiered": -5}


@pytest.mark.parametrize("version", range(1, 10))
@pytest.mark.parametrize("which", list(SPECIAL))
def test_list_offsets_special(pair, version, which):
    pair.same(2, version, list_offsets_body("rd-a", [0, 1, 2], SPECIAL[which]))


@pytest.mark.parametrize("ts", [TS - 1, TS, TS + 1, TS + 50, TS + 60, TS + 102, TS + 103,
                                TS + 10_000],
                         ids=lambda ts: f"TS{ts - TS:+d}")
def test_list_offsets_by_timestamp(pair, ts):
    pair.same(2, 7, list_offsets_body("rd-a", [0, 1, 2], ts))


def test_list_offsets_log_append_time(pair):
    # the max timestamp of a LogAppendTime topic is the clock's: masked
    pair.same(2, 7, list_offsets_body("rd-b", [0], -3), mask=("timestamp",))
    pair.same(2, 7, list_offsets_body("rd-b", [0], -1))


def test_list_offsets_errors(pair):
    pair.same(2, 7, list_offsets_body("rd-nope", [0], -1))
    pair.same(2, 7, list_offsets_body("rd-a", [9], -1))
    body = list_offsets_body("rd-a", [0, 0], -1)  # a partition twice: INVALID_REQUEST
    pair.same(2, 7, body)
    for epoch in (0, 5, -1):  # the leader epoch: 0 current, above unknown, none
        body = list_offsets_body("rd-a", [0], -1)
        body["topics"][0]["partitions"][0]["currentLeaderEpoch"] = epoch
        pair.same(2, 7, body)


def test_list_offsets_v0_max_num_offsets(pair):
    pair.same(2, 1, list_offsets_body("rd-a", [0], -2))


# -- Fetch ---------------------------------------------------------------------------------

@pytest.mark.parametrize("version", range(4, 13))
def test_fetch_versions(pair, version):
    pair.same(1, version, fetch_body("rd-a", [0, 1, 2], 0))


@pytest.mark.parametrize("version", [13, 14, 15, 16])
def test_fetch_versions_topic_ids(pair, version):
    pair.same(1, version, lambda side: fetch_body("rd-a", [0, 1], 0, topic_id=next(
        i for i, n in side.topic_ids.items() if n == "rd-a")))


@pytest.mark.parametrize("offset", [0, 1, 2, 5, 8, 9, 10, -1], ids=lambda o: f"at{o}")
def test_fetch_offsets(pair, offset):
    pair.same(1, 12, fetch_body("rd-a", [0], offset))


@pytest.mark.parametrize("limits", [(1, 1 << 20), (100, 1 << 20), (1 << 20, 1), (1 << 20, 150),
                                    (200, 200), (0, 0)],
                         ids=lambda lim: f"max{lim[0]}-part{lim[1]}")
def test_fetch_max_bytes(pair, limits):
    pair.same(1, 12, fetch_body("rd-a", [0, 1], 0, max_bytes=limits[0],
                                partition_max_bytes=limits[1]))


def _with_epoch(epoch):
    body = fetch_body("rd-a", [0], 0)
    body["topics"][0]["partitions"][0]["currentLeaderEpoch"] = epoch
    return body


FETCH_ERRORS = {
    "unknown-topic": (12, lambda: fetch_body("rd-nope", [0], 0)),
    "unknown-partition": (12, lambda: fetch_body("rd-a", [7], 0)),
    "unknown-topic-id": (13, lambda: fetch_body("rd-a", [0], 0,
                                                topic_id="AAAAAAAAAAAAAAAAAAAAAQ")),
    "current-epoch": (12, lambda: _with_epoch(0)),
    "unknown-epoch": (12, lambda: _with_epoch(3)),
    "out-of-range-read-committed": (12, lambda: fetch_body("rd-a", [0], 99, isolation=1)),
}


@pytest.mark.parametrize("case", list(FETCH_ERRORS))
def test_fetch_errors(pair, case):
    version, body = FETCH_ERRORS[case]
    pair.same(1, version, body())


def test_fetch_read_committed_no_transactions(pair):
    pair.same(1, 12, fetch_body("rd-a", [0, 1, 2], 0, isolation=1))


def test_fetch_log_append_time(pair):
    pair.same(1, 12, fetch_body("rd-b", [0], 0))


def test_fetch_min_bytes_answers_at_max_wait(pair):
    pair.same(1, 12, fetch_body("rd-a", [2], 0, max_wait_ms=100, min_bytes=1))


def test_fetch_topic_without_partitions(pair):
    body = fetch_body("rd-a", [0], 0)
    body["topics"][0]["partitions"] = []
    pair.same(1, 12, body)


@pytest.mark.parametrize("version", [12, 13])
def test_fetch_partitions_named_again(pair, version):
    """FetchRequest.fetchData is keyed by topic-partition (issue 24): a partition named
    again is read once, where it was first named, with the values named last; the
    response groups consecutive partitions of a topic."""
    def body(side):
        tid = next(i for i, n in side.topic_ids.items() if n == "rd-a") if version >= 13 \
            else ZERO_UUID
        b = fetch_body("rd-a", [0, 1], 0, topic_id=tid)
        again = fetch_body("rd-a", [0], 5, topic_id=tid)["topics"][0]
        other = fetch_body("rd-b", [0], 0, topic_id=next(
            (i for i, n in side.topic_ids.items() if n == "rd-b"), ZERO_UUID)
            if version >= 13 else ZERO_UUID)["topics"][0]
        b["topics"] += [other, again, again]
        return b
    pair.same(1, version, body)
