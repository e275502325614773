"""The Produce fast paths (protocol/produce_codec.py) against the generic codec, which
follows Kafka's message JSON: same body, client id, correlation id and element count for
every request they take, the same response bytes, and None (the generic codec decides)
for anything else."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog_cli.protocol import produce_codec
from kafkalog_cli.protocol.apis import APIS
from kafkalog_cli.protocol.wire import encode_request, parse_request

VERSIONS = range(produce_codec.FIRST_VERSION, produce_codec.LAST_VERSION + 1)
PRODUCE = APIS[0]


def _generic_parse(frame: bytes):
    """parse_request with the fast path bypassed."""
    saved = produce_codec.parse_request
    produce_codec.parse_request = lambda *a: None
    try:
        return parse_request(frame, 10_000)
    finally:
        produce_codec.parse_request = saved


def _body(topics, txn=None, acks=-1):
    return {"transactionalId": txn, "acks": acks, "timeoutMs": 30000,
            "topicData": [{"name": n, "partitionData": [{"index": i, "records": r}
                                                         for i, r in parts]}
                          for n, parts in topics]}


CASES = [
    _body([("t", [(0, b"\x00" * 70)])], acks=1),
    _body([("orders", [(0, b"abc"), (3, None)]), ("u", [])], txn="tx-1"),
    _body([], acks=0),
    _body([("t" * 130, [(i, bytes([i]) * (i * 40)) for i in range(130)])]),
]

names = st.text(st.characters(min_codepoint=32, max_codepoint=0x24F), max_size=8)
bodies = st.builds(
    _body,
    st.lists(st.tuples(names, st.lists(st.tuples(st.integers(-2**31, 2**31 - 1),
                                                 st.none() | st.binary(max_size=40)),
                                       max_size=3)), max_size=3),
    st.none() | names, st.sampled_from([-1, 0, 1]))


def _check_request(body, version, client_id="producer-1"):
    frame = encode_request(0, version, 12345, body, client_id)[4:]
    generic = _generic_parse(frame)
    fast = produce_codec.parse_request(frame, version, 10_000)
    ascii_only = all(s is None or s.isascii()
                     for s in [client_id, body["transactionalId"],
                               *(t["name"] for t in body["topicData"])])
    if not ascii_only:
        assert fast is None
        return
    assert fast == (generic.correlation_id, generic.client_id, generic.body,
                    generic.elements)
    assert parse_request(frame, 10_000).body == generic.body
    # every truncation: the fast path gives up (the generic codec refuses or reads less)
    for cut in range(len(frame) - 1, 8, -max(1, len(frame) // 40)):
        assert produce_codec.parse_request(frame[:cut], version, 10_000) is None


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_request_equals_generic(version, case):
    _check_request(CASES[case], version)
    _check_request(CASES[case], version, client_id=None)


@settings(max_examples=60, deadline=None)
@given(bodies, st.sampled_from(list(VERSIONS)))
def test_request_equals_generic_any(body, version):
    _check_request(body, version)


def test_request_over_the_element_bound_is_left_to_the_generic_codec():
    frame = encode_request(0, 9, 1, CASES[3], "p")[4:]
    assert produce_codec.parse_request(frame, 9, 100) is None
    assert produce_codec.parse_request(frame, 9, 131)[3] == 131


def test_request_with_tagged_fields_is_left_to_the_generic_codec():
    frame = bytearray(encode_request(0, 9, 1, CASES[0], "p")[4:])
    frame[-1] = 1  # one top-level tagged field (its bytes missing: the generic codec refuses)
    assert produce_codec.parse_request(bytes(frame), 9, 100) is None


def _slot(i, **extra):
    return {"index": i, "errorCode": 0, "baseOffset": 10 * i, "logAppendTimeMs": -1,
            "logStartOffset": 0, **extra}


RESPONSES = [
    {"responses": [{"name": "t", "partitionResponses": [_slot(0)]}], "throttleTimeMs": 0},
    {"responses": [{"name": "a", "partitionResponses": [_slot(0), _slot(5, errorCode=3)]},
                   {"name": "b", "partitionResponses": []}], "throttleTimeMs": 7},
    {"responses": [], "throttleTimeMs": 0},
    {"responses": [{"name": "t", "partitionResponses": [
        _slot(1, recordErrors=[], errorMessage=None)]}], "throttleTimeMs": 0},
]
LEFT = [  # shapes the fast path leaves to the generic codec
    {"responses": [{"name": "t", "partitionResponses": [
        _slot(0, recordErrors=[{"batchIndex": 0, "batchIndexErrorMessage": "x"}],
              errorMessage="bad")]}], "throttleTimeMs": 0},
    {"responses": [{"name": "t\u00e9", "partitionResponses": [_slot(0)]}], "throttleTimeMs": 0},
    {"responses": [{"name": "t", "partitionResponses": [_slot(0)] * 200}], "throttleTimeMs": 0},
]


@pytest.mark.parametrize("version", VERSIONS)
def test_response_equals_generic(version):
    for body in RESPONSES:
        assert produce_codec.build_response(body, version) == \
            PRODUCE.response.build(body, version)
    for body in LEFT:
        if version >= 8 or body is not LEFT[0]:
            assert produce_codec.build_response(body, version) is None
