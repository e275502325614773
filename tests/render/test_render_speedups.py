"""The compiled record lines (``kafkalog_cli/render/_speedups.c``) give exactly the bytes of
the Python loops they replace (``kafka_record_lines``, ``json_record_lines``: the
reference, which the exactness tests hold to Kafka's DumpLogSegments and to our JSON
vocabulary) on random records: odd UTF-8 (overlong forms, surrogates, truncated
sequences, beyond U+10FFFF), control bytes, null keys and values, headers with null
values, offsets and timestamps at the ends of int64, negative timestamps, base
sequences that wrap. Where the C declines a block (a shape it does not take) it returns
None and the Python loop renders it.

The module is imported directly, so this runs under ``KAFKALOG_PURE_PYTHON=1`` too
(skipped only when the extension was not built)."""

from __future__ import annotations

import importlib

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kafkalog_cli.format.record import Record
from kafkalog_cli.format.record_batch import increment_sequence
from kafkalog_cli.render.dump import json_record_lines, kafka_record_lines
from kafkalog_cli.render.encoding import java_string

try:
    C = importlib.import_module("kafkalog_cli.render._speedups")
except ImportError:  # not built: nothing to compare
    C = None

pytestmark = pytest.mark.skipif(C is None, reason="kafkalog_cli.render._speedups not built")

INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)
INT32_MAX = (1 << 31) - 1


class Batch:
    """What the renderers read of a RecordBatch, with DefaultRecord.sequence's rule."""

    def __init__(self, base_offset: int, base_sequence: int, timestamp_type: str):
        self.base_offset = base_offset
        self.base_sequence = base_sequence
        self.timestamp_type = timestamp_type

    def record_sequence(self, offset_delta: int) -> int:
        if self.base_sequence < 0:
            return -1
        return increment_sequence(self.base_sequence, offset_delta)


#: byte strings that are not well-formed UTF-8, or only just are
ODD_UTF8 = [b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xed\xa0\x80",
            b"\xed\xbf\xbf", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80",
            b"\xff", b"\xfe", b"\x80", b"\xe2\x82", b"\xf0\x9f\x98", b"\xc3",
            "\u00e9".encode(), "\u20ac".encode(), "\U0001f600".encode(),
            "\U0010ffff".encode(), "\ud7ff".encode(), "\ue000".encode(),
            b'"\\/\x00\x01\x08\x09\x0a\x0c\x0d\x1f\x7f', "\u2028\u2029".encode()]

fields = st.one_of(
    st.none(),
    st.binary(max_size=40),
    st.text(max_size=20).map(str.encode),
    st.lists(st.sampled_from(ODD_UTF8 + [b"a", b" ", b"x" * 9]), max_size=8).map(b"".join),
)
header_keys = st.one_of(st.text(max_size=8), st.sampled_from(["", "h0", "\u00e9", '"\\\n',
                                                              "\x00\x1f", "a,b"]))
headers = st.lists(st.tuples(header_keys, fields), max_size=4).map(tuple)
timestamps = st.one_of(st.integers(INT64_MIN, INT64_MAX), st.integers(-2, 2),
                       st.just(1700000000000))


@st.composite
def blocks(draw):
    base = draw(st.one_of(st.integers(0, 1 << 40), st.integers(INT64_MIN, INT64_MAX),
                          st.sampled_from([0, INT64_MAX - INT32_MAX, INT64_MAX])))
    base_seq = draw(st.one_of(st.just(-1), st.integers(-(1 << 31), INT32_MAX),
                              st.sampled_from([0, INT32_MAX - 1, INT32_MAX])))
    n = draw(st.integers(0, 6))
    records = []
    for _ in range(n):
        delta = draw(st.one_of(st.integers(0, 10), st.integers(-(1 << 31), INT32_MAX)))
        off = base + delta  # may leave int64: the C then declines the block
        records.append(Record((off, draw(timestamps), draw(fields), draw(fields),
                               draw(headers))))
    ts_type = draw(st.sampled_from(["CreateTime", "LogAppendTime", "NoTimestampType"]))
    return {"type": "records", "batch": Batch(base, base_seq, ts_type), "records": records}


def _in_int64(ev) -> bool:
    return all(INT64_MIN <= v <= INT64_MAX
               for r in ev["records"] for v in (r[0], r[1]))


def _kafka_c(ev, skip, with_data):
    b = ev["batch"]
    return C.kafka_lines(ev["records"], b.timestamp_type, b.base_offset, b.base_sequence,
                         skip, with_data, java_string)


def _json_c(ev, encoding, with_data):
    b = ev["batch"]
    return C.json_lines(ev["records"], b.base_offset, b.base_sequence, with_data,
                        {"utf8": 0, "base64": 1, "hex": 2}[encoding])


SETTINGS = settings(max_examples=400, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(blocks(), st.booleans(), st.booleans())
@example({"type": "records", "batch": Batch(0, INT32_MAX, "CreateTime"),
          "records": [Record((0, -1, None, None, ())), Record((1, -1, b"", b"", ()))]},
         False, True)
def test_kafka_lines_are_the_python_loops(ev, skip, with_data):
    got = _kafka_c(ev, skip, with_data)
    ref = kafka_record_lines(ev, skip, with_data).encode()
    if _in_int64(ev):
        assert got == ref
    else:  # declined: the Python loop prints Python's ints
        assert got is None


@SETTINGS
@given(blocks(), st.sampled_from(["utf8", "base64", "hex"]), st.booleans())
def test_json_lines_are_the_python_loops(ev, encoding, with_data):
    got = _json_c(ev, encoding, with_data)
    ref = json_record_lines(ev, encoding, with_data).encode()
    if _in_int64(ev):
        assert got == ref
    else:
        assert got is None


def test_out_of_int64_is_declined():
    """Offsets that leave int64 (a hostile base offset near the end): the Python loop
    prints Python's ints."""
    ev = {"type": "records", "batch": Batch(INT64_MAX, -1, "CreateTime"),
          "records": [Record((INT64_MAX + 1, 0, b"k", b"v", ()))]}
    assert _kafka_c(ev, False, True) is None
    assert _json_c(ev, "utf8", True) is None


@pytest.mark.parametrize("bad", [
    [("not a record",)],
    [Record((0, 0, bytearray(b"k"), b"v", ()))],
    [Record((0, 0, b"k", memoryview(b"v"), ()))],
    [Record((0, 0, b"k", b"v", (("h", b"x", b"y"),)))],
    [Record((0, 0, b"k", b"v", ((b"h", b"x"),)))],
    [Record((0, True, b"k", b"v", ()))],
])
def test_shapes_it_does_not_take_are_declined(bad):
    ev = {"type": "records", "batch": Batch(0, -1, "CreateTime"), "records": bad}
    assert _kafka_c(ev, False, True) is None
    assert _json_c(ev, "utf8", True) is None


def test_header_key_without_utf8_is_declined():
    """A str with a lone surrogate has no UTF-8: the Python loop (and the stream's own
    error handler) decides what happens to it."""
    ev = {"type": "records", "batch": Batch(0, -1, "CreateTime"),
          "records": [Record((0, 0, b"k", b"v", (("\udcff", b"x"),)))]}
    assert _kafka_c(ev, False, True) is None
    assert _json_c(ev, "utf8", True) is None


def test_java_string_replaces_malformed_utf8_as_the_jdk():
    """Kafka's StringDecoder is ``new String(bytes, UTF_8)``: malformed sequences become
    U+FFFD as the JDK's decoder splits them (schema/utf8.py, checked against the JDK by
    test_render_encoding.py): an encoded surrogate is one U+FFFD, as is a truncated
    3-byte sequence at the end; a lone continuation byte is one each."""
    ev = {"type": "records", "batch": Batch(0, -1, "CreateTime"),
          "records": [Record((0, 0, b"\xed\xa0\x80", b"a\xe2\x82\xac\x80z", ()))]}
    assert _kafka_c(ev, True, True) == \
        "| key: \ufffd payload: a\u20ac\ufffdz\n".encode()
    ev["records"] = [Record((0, 0, None, b"a\xe2\x82", ()))]
    assert _kafka_c(ev, True, True) == "| payload: a\ufffd\n".encode()


def test_json_escapes_as_the_json_module():
    """JSON strings as json.dumps(ensure_ascii=False) writes them: the C0 controls, '"' and
    '\\' escaped (lowercase \\u00xx), DEL and non-ASCII as they are; bytes that are not
    UTF-8 as base64 with valueEncoding."""
    import json

    value = "\x00\x1f\"\\\x7f\u00e9\u2028\n\t\b\f\r/".encode()
    ev = {"type": "records", "batch": Batch(5, 7, "CreateTime"),
          "records": [Record((6, -1, b"\xff", value, (("\n", None),)))]}
    line = _json_c(ev, "utf8", True)
    assert line.endswith(b"\n")
    obj = json.loads(line)
    assert obj["value"].encode() == value and obj["key"] == "/w=="
    assert obj["keyEncoding"] == "base64" and "valueEncoding" not in obj
    assert obj["sequence"] == 8 and obj["headers"] == [{"key": "\n", "value": None}]
    assert json.dumps(value.decode(), ensure_ascii=False).encode() in line


# -- read -o json ------------------------------------------------------------------------

@st.composite
def consumer_records(draw):
    from kafkalog_cli.ops.read import ConsumerRecord

    n = draw(st.integers(0, 5))
    return [ConsumerRecord(draw(header_keys), draw(st.integers(-1, 1 << 31)),
                           draw(st.integers(0, INT64_MAX)), draw(timestamps),
                           draw(st.sampled_from(["CreateTime", "LogAppendTime",
                                                 "NoTimestampType"])),
                           draw(fields), draw(fields), draw(headers),
                           draw(st.one_of(st.none(), st.integers(0, INT32_MAX))))
            for _ in range(n)]


@SETTINGS
@given(consumer_records(), st.sampled_from(["utf8", "base64", "hex"]))
def test_read_json_lines_are_the_python_loop(records, encoding):
    from kafkalog_cli.render.read import json_line

    got = C.read_json_lines(records, {"utf8": 0, "base64": 1, "hex": 2}[encoding])
    assert got == "".join(json_line(r, encoding) + "\n" for r in records).encode()


def test_read_json_lines_decline_a_decoded_record():
    """A decoded record (an internal topic's) is to_dict's objects: the Python loop."""
    from kafkalog_cli.ops.read import ConsumerRecord

    rec = ConsumerRecord("__consumer_offsets", 0, 0, 0, "CreateTime", b"k", b"v",
                         decoded=object())
    assert C.read_json_lines([rec], 0) is None


def test_read_json_lines_decline_a_huge_field():
    """A value over 1 MiB goes to the Python loop, which holds one record's line at a time
    (the C holds the block's records until its lines are done)."""
    from kafkalog_cli.ops.read import ConsumerRecord

    rec = ConsumerRecord("t", 0, 0, 0, "CreateTime", None, bytes((1 << 20) + 1))
    assert C.read_json_lines([rec], 1) is None
    rec = ConsumerRecord("t", 0, 0, 0, "CreateTime", None, bytes(1 << 20))
    assert C.read_json_lines([rec], 1) is not None
