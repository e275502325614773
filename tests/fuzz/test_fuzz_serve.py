"""serve's request handler under hostile requests.

Frames are parsed by ``protocol.wire.parse_request`` and the parsed request dispatched to
``KafkaApis.handle`` over a log directory (a copy of fixture partitions), in the fuzz
worker, the reply encoded by ``wire.build_response``; as the server's connection loop
does. A request must end as the broker ends it: an answer (whatever its error codes), a
closed connection (``InvalidRequest``, ``CloseConnection``), no response (acks=0), or
still waiting (a delayed fetch, a join waiting for its group: legitimate) - never an
unhandled exception, nor an engine exception turned into UNKNOWN_SERVER_ERROR.

Requests are made three ways:

* every served API at every served version, its body drawn from the API's own message
  declaration (``Message`` fields: integers at their edges, strings, nulls, arrays, the
  topic names the directory holds, tagged fields), encoded with ``wire.encode_request``;
* the same frames with byte-level mutations (malformed bodies, headers, lengths);
* Produce requests whose records are fixture and corpus batches mutated byte by byte or
  structure-aware (CRCs fixed), or small decompression bombs.
"""

from __future__ import annotations

import pytest
from fuzz_client import check
from fuzz_testkit import (
    all_seeds,
    bomb_batch,
    fixture_seeds,
    fuzz_settings,
    mutate,
    mutate_structured,
    mutations,
    structured,
    walk,
)
from hypothesis import given
from hypothesis import strategies as st

from kafkalog_cli.protocol.apis import APIS, ApiKeys
from kafkalog_cli.protocol.wire import encode_request
from kafkalog_cli.schema.messages import Field

pytestmark = pytest.mark.fuzz

#: the log directory served: a few fixture partitions (topics plain, txn, gzip, legacy-v1)
SERVED = ("plain-0", "txn-0", "gzip-0", "legacy-v1-0", "headers-0")
TOPICS = ["plain", "txn", "gzip", "legacy-v1", "headers", "new-topic", "", "x" * 250,
          "__consumer_offsets", "bad/name", "..", "t\x00"]
GROUPS = ["g", "", "group-" + "x" * 300]

INT_EDGES = {
    "int8": [-(1 << 7), -1, 0, 1, (1 << 7) - 1],
    "int16": [-(1 << 15), -1, 0, 1, 3, (1 << 15) - 1],
    "uint16": [0, 1, (1 << 16) - 1],
    "int32": [-(1 << 31), -2, -1, 0, 1, 100, 1 << 20, (1 << 31) - 1],
    "uint32": [0, 1, (1 << 32) - 1],
    "int64": [-(1 << 63), -2, -1, 0, 1, 3, 1_700_000_000_000, (1 << 63) - 1],
}
INT_RANGE = {"int8": 7, "int16": 15, "uint16": 16, "int32": 31, "uint32": 32, "int64": 63}


def _int(t: str):
    bits = INT_RANGE[t]
    lo, hi = (0, (1 << bits) - 1) if t.startswith("uint") else (-(1 << bits), (1 << bits) - 1)
    return st.one_of(st.sampled_from(INT_EDGES[t]), st.integers(lo, hi))


def _records():
    """A records field: fixture/corpus batches, mutated or not, a small bomb, or bytes."""
    seeds = [s for s in all_seeds() if any(n.endswith(".log") and d for n, d in s.files)]

    def batches(seed):
        data = next(d for n, d in seed.files if n.endswith(".log") and d)
        return [data[e.position:e.position + e.size] for e in walk(data)] or [data[:100]]

    # one batch (what a producer sends), or a few (the broker refuses more than one v2)
    one = st.sampled_from(seeds).flatmap(lambda s: st.sampled_from(batches(s)))
    plain = st.one_of(one, one, st.lists(one, min_size=2, max_size=3).map(b"".join))
    return st.one_of(
        plain, plain,
        st.tuples(plain, mutations(3)).map(lambda t: mutate(*t)),
        st.tuples(plain, structured(2)).map(lambda t: mutate_structured(*t)),
        st.sampled_from([1, 2, 3, 4]).map(lambda c: bomb_batch(c, 300_000)),
        st.binary(max_size=200),
    )


def _value(f: Field, version: int, depth: int):
    nullable = version in f.nullable
    if f.is_array:
        elem = _element(f, version, depth)
        arr = st.lists(elem, max_size=3 if depth < 2 else 1)
        return st.one_of(st.none(), arr) if nullable else arr
    v = _element(f, version, depth)
    return st.one_of(st.none(), v) if nullable else v


#: fields whose values decide whether a request reaches the engine: drawn near the values
#: clients send most of the time (a partition that exists, acks a broker accepts, waits
#: short enough not to park the handler), at their edges otherwise
LIKELY = {
    "acks": [-1, 0, 1], "index": [0, 0, 1], "partitionIndex": [0, 0, 1], "partition": [0, 1],
    "maxWaitMs": [0, 10], "minBytes": [0, 1], "timeoutMs": [0, 100],
    "sessionTimeoutMs": [10, 6000], "rebalanceTimeoutMs": [10, 100], "fetchOffset": [0, 1, 5],
    "timestamp": [-1, -2, -3, 0, 1_700_000_000_000], "producerId": [-1, 0, 1000],
    "producerEpoch": [-1, 0], "isolationLevel": [0, 1], "maxBytes": [1 << 20, 0, 1],
    "partitionMaxBytes": [1 << 20, 0], "currentLeaderEpoch": [-1, 0], "replicaId": [-1],
    "transactionTimeoutMs": [1000, 60000], "numPartitions": [1, -1, 0, 3],
    "replicationFactor": [1, -1], "generationId": [-1, 0, 1], "logStartOffset": [-1, 0],
}


def _element(f: Field, version: int, depth: int):
    if f.is_struct:
        return body(f.fields, version, depth + 1)
    t = f.element
    if t in INT_RANGE:
        likely = LIKELY.get(f.name)
        if likely is not None:
            return st.one_of(st.sampled_from(likely), st.sampled_from(likely), _int(t))
        return _int(t)
    if t == "bool":
        return st.booleans()
    if t == "float64":
        return st.floats(allow_nan=True)
    if t == "uuid":
        return st.sampled_from(["AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ",
                                "_____________________w"])
    if t == "records":
        return _records()
    if t == "bytes":
        return st.binary(max_size=64)
    name = f.name.lower()
    if name in ("name", "topic", "topicname") or name.endswith("topic"):
        return st.one_of(st.sampled_from(TOPICS[:5]), st.sampled_from(TOPICS),
                         st.text(max_size=20))
    if name == "transactionalid":
        return st.one_of(st.none(), st.none(), st.none(), st.text(max_size=8))
    if "group" in name:
        return st.one_of(st.sampled_from(GROUPS), st.text(max_size=10))
    return st.one_of(st.sampled_from(["", "kafkalog", "range", "consumer", "x" * 300]),
                     st.text(max_size=16))


def body(fields, version: int, depth: int = 0):
    """A dict for a message's ``fields`` at ``version``: each regular field drawn; tagged
    fields sometimes present."""
    present = [f for f in fields if version in f.versions]
    regular = {f.name: _value(f, version, depth) for f in present
               if version not in f.tagged}
    tagged = [f for f in present if version in f.tagged]
    base = st.fixed_dictionaries(regular)
    if not tagged:
        return base
    extra = st.fixed_dictionaries({}, optional={f.name: _value(f, version, depth)
                                                for f in tagged})
    return st.tuples(base, extra).map(lambda t: {**t[0], **t[1]})


def request(api=None):
    """``(api key, version, body)`` of a served API at a served version."""
    apis = [APIS[api]] if api is not None else list(APIS.values())
    return st.sampled_from(apis).flatmap(lambda a: st.integers(
        a.min_version, a.max_version).flatmap(
        lambda v: st.tuples(st.just(int(a.key)), st.just(v), body(a.request.fields, v))))


def _frame(api_key, version, b, cid=7) -> bytes | None:
    try:
        return encode_request(api_key, version, cid, b)[4:]
    except Exception:  # a value the declaration cannot encode (a drawn float, a long string)
        return None


@pytest.fixture(scope="module")
def served(fuzz_worker):
    seeds = {s.name: s for s in fixture_seeds()}
    layout = {}
    for name in SERVED:
        layout.update(seeds[name].layout())
    fuzz_worker.serve_open(layout)
    return fuzz_worker


def _short(b) -> str:
    return repr(b)[:1500]


def _serve(worker, frame: bytes, what: str):
    res = worker.serve(frame, wait=0.5)
    check({"serve": res}, what=what)
    return res


@fuzz_settings(short=150)
@given(request())
def test_every_api_with_drawn_bodies(served, req):
    key, version, b = req
    frame = _frame(key, version, b)
    if frame is not None:
        _serve(served, frame, f"{ApiKeys(key).name} v{version} {_short(b)}")


@fuzz_settings(short=150)
@given(request(), mutations(3))
def test_every_api_with_mutated_frames(served, req, ops):
    key, version, b = req
    frame = _frame(key, version, b)
    if frame is not None:
        _serve(served, mutate(frame, ops), f"{ApiKeys(key).name} v{version} {ops} {_short(b)}")


@fuzz_settings(short=60)
@given(request(ApiKeys.PRODUCE))
def test_produce_with_hostile_batches(served, req):
    key, version, b = req
    frame = _frame(key, version, b)
    if frame is not None:
        _serve(served, frame, f"PRODUCE v{version} {_short(b)}")


@fuzz_settings(short=60)
@given(st.binary(min_size=8, max_size=64), st.integers(0, 40), st.integers(-2, 20))
def test_raw_frames(served, tail, key, version):
    """Headers of every key (served or not) and version, bodies of random bytes."""
    import struct

    frame = struct.pack(">hhi", key, version, 1) + tail
    _serve(served, frame, f"key {key} v{version}")
