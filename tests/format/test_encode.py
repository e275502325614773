"""The compiled record encoder (``kafkalog_cli/format/_encode.c``) against the Python loops
it replaces (``encoder.encode_records`` / ``encode_columns`` /
``encode_values``), byte for byte, errors included, on random records: keys, values
and header values null or bytes of any length (varint length boundaries 63/64, 8191/8192),
header keys str (non-ASCII, lone surrogates) or bytes, timestamps anywhere in int64 and
beyond, offset deltas from any start, and what the C declines (other sequence and field
types, ints beyond int64), which must then give the Python loop's result or error.

And the batches it builds against two independent decoders, kafka-python's
``MemoryRecords`` and aiokafka's (its C reader when built): the same keys, values,
headers, timestamps and offsets. Those run on either implementation (under
``KAFKALOG_PURE_PYTHON=1``, CI's second run, they check the Python loops).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog_cli.format import builder, encoder
from kafkalog_cli.format.builder import build_batch

compiled = pytest.mark.skipif(not builder.SPEEDUPS, reason="the compiled encoder is not in use")

INT64 = st.integers(-(2**63), 2**63 - 1)
SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# lengths around the varint boundaries (1 -> 2 bytes at 64, 2 -> 3 at 8192)
LENGTHS = st.sampled_from([0, 1, 63, 64, 65, 127, 128, 8191, 8192, 8193]) | \
    st.integers(0, 300)
FIELD = st.none() | LENGTHS.flatmap(lambda n: st.binary(min_size=n, max_size=n))
# bytearrays too: PySpark gives binary columns as bytearray (spark/writer.py builds those)
FIELD_ANY = FIELD | st.binary(max_size=100).map(bytearray)
HEADER_KEY = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8) | \
    st.sampled_from(["é", "h", ""]) | st.binary(max_size=8) | \
    st.text(max_size=3)  # lone surrogates too: str.encode's error
UTF8_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
HEADER = st.tuples(HEADER_KEY | st.binary(max_size=4).map(bytearray),
                   st.none() | st.binary(max_size=70) | st.binary(max_size=9).map(bytearray))
HEADERS = st.none() | st.lists(HEADER, max_size=3).map(tuple) | st.lists(HEADER, max_size=2)
# what the C declines: a str or memoryview field, a header value that is str, a headers
# object of another type, a bool or an int beyond int64 for a timestamp
ODD_FIELD = st.sampled_from(["str", memoryview(b"mv"), 7])
ODD_HEADERS = st.sampled_from([[("a", "str")], [("a",)], "ab", [["k", b"v"]], 0, b"", {}])
ODD_TS = st.sampled_from([True, 2**63, -(2**63) - 1, 2**70, 1.5])


def outcome(fn, *args):
    """``("ok", value)`` or ``("err", class name, message)``."""
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - any exception must match
        return ("err", type(e).__name__, str(e))


@st.composite
def records(draw, odd: bool = False):
    """(records, base timestamp, start): mostly what the C takes; with ``odd``, a quarter
    of the cases hold fields it declines, and some timestamps anywhere in int64 (deltas
    that may overflow)."""
    n = draw(st.integers(0, 40))
    base = draw(INT64 | st.sampled_from([-1, 0, 1_700_000_000_000]))
    near = st.integers(-(2**40), 2**40).map(lambda d: base + d)
    odd = odd and draw(st.integers(0, 3)) == 0
    ts = (st.just(base) | near | INT64) if odd else (st.just(base) | near)
    recs = []
    for _ in range(n):
        rec = [draw(ts), draw(FIELD_ANY), draw(FIELD_ANY), draw(HEADERS)]
        if odd and draw(st.integers(0, 9)) == 0:
            i = draw(st.integers(0, 3))
            rec[i] = draw((ODD_TS, ODD_FIELD, ODD_FIELD, ODD_HEADERS)[i])
        recs.append(tuple(rec) if draw(st.booleans()) else rec)
    return recs, base, draw(st.sampled_from([0, 1, 4095, 4096, 2**31 - 50] +
                                            ([2**31] if odd else [])))


@compiled
@SETTINGS
@given(records(odd=True))
def test_encode_records_is_the_python_loop(case):
    recs, base, start = case
    c = outcome(builder.encode_records, recs, base, start)
    p = outcome(encoder.encode_records, recs, base, start)
    assert c == p


@compiled
@SETTINGS
@given(records(odd=True), st.booleans(), st.booleans())
def test_encode_columns_is_the_python_loop(case, no_keys, no_headers):
    recs, base, _ = case
    if not recs:
        return
    ts, keys, values, headers = (list(c) for c in zip(*recs, strict=True))
    keys = None if no_keys else keys
    headers = None if no_headers else headers
    c = outcome(builder.encode_columns, ts, keys, values, headers, base)
    p = outcome(encoder.encode_columns, ts, keys, values, headers, base)
    assert c == p


@compiled
@SETTINGS
@given(st.lists(FIELD_ANY, max_size=60), st.integers(-(2**40), 2**40) | INT64)
def test_encode_values_is_the_python_loop(values, delta):
    assert outcome(builder.encode_values, values, delta) == \
        outcome(encoder.encode_values, values, delta)


@compiled
def test_the_c_declines_what_it_does_not_take():
    """None (the caller then runs the Python loop) rather than a guess."""
    c = builder._c
    assert c.encode_records([(0, memoryview(b"k"), b"v", ())], 0, 0) is None
    assert c.encode_records([(0, b"k", b"v", [("\ud800", b"x")])], 0, 0) is None
    assert c.encode_records([(2**63, b"k", b"v", ())], 0, 0) is None
    assert c.encode_records([(2**62, b"k", b"v", ())], -(2**62) - 1, 0) is None  # delta
    assert c.encode_records([(0, None, None, None)], 0, 2**31) is None  # offset delta
    assert c.encode_records(iter([]), 0, 0) is None
    assert c.encode_columns([0, 0], None, [b"a"], None, 0, 0) is None  # unequal columns
    # DefaultRecord by hand: length 7 (zigzag 14), attributes 0, timestampDelta 0,
    # offsetDelta 0, key null (-1: 1), value length 1 (2) "a", no headers (0)
    assert c.encode_columns(0, None, [b"a"], None, 0, 0) == (b"\x0e\x00\x00\x00\x01\x02a\x00",
                                                              1, 0, 0)


def _kafka_python(batch: bytes) -> list:
    from kafka.record import MemoryRecords

    b = MemoryRecords(batch).next_batch()
    return [(r.offset, r.timestamp, r.key, r.value, [(k, v) for k, v in r.headers])
            for r in b]


def _aiokafka(batch: bytes) -> list:
    from aiokafka.record.memory_records import MemoryRecords

    b = MemoryRecords(batch).next_batch()
    b.validate_crc()
    return [(r.offset, r.timestamp, r.key, r.value, [(k, v) for k, v in r.headers])
            for r in b]


@pytest.mark.parametrize("decoder", [_kafka_python, _aiokafka], ids=["kafka-python",
                                                                      "aiokafka"])
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_batches_decode_with_independent_readers(decoder, data):
    """kafka-python and aiokafka read back every key, value, header (str keys: their
    decoders give header keys as str), timestamp and offset of a built batch."""
    n = data.draw(st.integers(1, 30))
    base = data.draw(st.integers(0, 2**50))
    recs = [(base + data.draw(st.integers(-1000, 10**9)), data.draw(FIELD), data.draw(FIELD),
             tuple(data.draw(st.lists(st.tuples(UTF8_TEXT, st.none() | st.binary(max_size=40)),
                                      max_size=3))))
            for _ in range(n)]
    offset = data.draw(st.integers(0, 2**40))
    batch = build_batch(recs, base_offset=offset)
    want = [(offset + i, ts, k, v, list(h)) for i, (ts, k, v, h) in enumerate(recs)]
    assert decoder(batch) == want
