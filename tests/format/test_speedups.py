"""The compiled core (``kafkalog_cli/format/_speedups.c``) against the pure-Python loops
it replaces, in one process (:func:`compiled.load_pure_python`): on random bytes, on
batches built by hand (``raw_record`` / ``raw_batch``, independent of kafkalog's builder)
then mutated, on the fixtures and on every batch of the real corpus. Values must be equal
and errors the same (class, message, file, position).

The Python loops are the reference: they follow DefaultRecord.readFrom and
FileLogInputStream, and their own tests check them against Kafka's rules, kafka-python,
aiokafka and the corpus. Skipped when the core is not in use (not built, or
``KAFKALOG_PURE_PYTHON=1``: CI's second run).
"""

from __future__ import annotations

import struct
from array import array

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafkalog_testkit import corpus_log_files, fixture_log_files, raw_batch, raw_record

from kafkalog_cli.format import compiled, record, record_batch, records

pytestmark = pytest.mark.skipif(not compiled.SPEEDUPS, reason="the compiled core is not in use")

#: the pure-Python twins of the modules (None when the core is not in use)
P_RECORD, P_BATCH, P_FILE = ((compiled.load_pure_python("record"),
                              compiled.load_pure_python("record_batch"),
                              compiled.load_pure_python("records"))
                             if compiled.SPEEDUPS else (None, None, None))

INT64 = st.integers(-(2**63), 2**63 - 1)
SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def outcome(fn, *args):
    """``("ok", value)`` or ``("err", class name, message, file, position)``."""
    try:
        value = fn(*args)
    except Exception as e:  # noqa: BLE001 - any exception must match
        return ("err", type(e).__name__, str(e), getattr(e, "file", None),
                getattr(e, "position", None))
    return ("ok", value)


def plain(x):
    """Records and batches as plain tuples (the two modules' classes differ); a batch's
    view is dropped (the same buffer on both sides)."""
    if isinstance(x, list):
        return [plain(r) for r in x]
    if isinstance(x, tuple):
        if x and isinstance(x[0], memoryview):
            return tuple(x[1:])
        return tuple(x)
    return x


def decode_both(data, count, base_offset, base_ts, at=0):
    c = outcome(record._decode_block, data, count, base_offset, base_ts, at)
    p = outcome(P_RECORD._py_decode_block, data, count, base_offset, base_ts, at)
    if c[0] == "ok":
        assert all(type(r) is record.Record for r in c[1])
        c = ("ok", plain(c[1]))
        p = ("ok", plain(p[1])) if p[0] == "ok" else p
    assert c == p
    return c


def into_both(data, count, base_offset, base_ts, with_headers, arrays):
    """decode_block_into with list columns (appended to directly) or array('q') columns
    (called), headers kept or dropped: what was appended, and the error."""
    def run(fn):
        cols = ([array("q"), array("q")] if arrays else [[], []]) + [[], [], []]
        app = [c.append for c in cols]
        r = outcome(fn, data, count, base_offset, base_ts, 0, app[0], app[1], app[2], app[3],
                    app[4] if with_headers else None)
        return r, [list(c) for c in cols]

    if arrays and not all(-(2**63) <= v < 2**63 for v in (base_offset, base_ts)):
        return
    c, p = run(record._decode_block_into), run(P_RECORD._py_decode_block_into)
    if arrays and c[0][0] == "err" and c[0][1] == "OverflowError":
        # an offset past int64 does not fit array('q'): the same error, maybe after a
        # different number of appends (none here: both raise at the same record)
        assert p[0][:2] == c[0][:2]
        return
    assert c == p


@st.composite
def blocks(draw):
    """A records block of 0-5 records (keys, values, headers with any bytes, header keys
    not always UTF-8), its count, and base offset / timestamp."""
    recs = []
    for i in range(draw(st.integers(0, 5))):
        key = draw(st.none() | st.binary(max_size=20))
        value = draw(st.none() | st.binary(max_size=300))
        headers = draw(st.lists(st.tuples(st.binary(max_size=6),
                                          st.none() | st.binary(max_size=10)), max_size=3))
        ts_delta = draw(st.integers(-(2**40), 2**40) | st.integers(-3, 3))
        off_delta = draw(st.integers(-(2**31), 2**31 - 1) | st.just(i))
        recs.append(raw_record(off_delta, ts_delta, key, value, headers))
    return b"".join(recs), len(recs), draw(INT64 | st.integers(0, 1000)), draw(INT64)


def mutate(draw, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "set"]))
        if kind == "flip" and b:
            i = draw(st.integers(0, len(b) - 1))
            b[i] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set" and b:
            i = draw(st.integers(0, len(b) - 1))
            b[i] = draw(st.sampled_from([0, 1, 0x7F, 0x80, 0xFF, 0xFE]))
        elif kind == "cut" and b:
            del b[draw(st.integers(0, len(b) - 1)):]
        elif kind == "insert":
            i = draw(st.integers(0, len(b)))
            b[i:i] = draw(st.binary(min_size=1, max_size=4))
    return bytes(b)


# -- the record decode loop ------------------------------------------------------------------

@SETTINGS
@given(st.binary(max_size=200), st.integers(-2, 6), INT64, INT64, st.integers(0, 1 << 40))
def test_decode_random_bytes(data, count, base_offset, base_ts, at):
    decode_both(data, count, base_offset, base_ts, at)


@SETTINGS
@given(st.data(), blocks())
def test_decode_blocks_and_mutations(data, block):
    raw, count, base_offset, base_ts = block
    assert decode_both(raw, count, base_offset, base_ts)[0] == "ok"
    bad = mutate(data.draw, raw)
    decode_both(bad, count + data.draw(st.integers(-1, 1)), base_offset, base_ts)
    into_both(bad, count, base_offset, base_ts, data.draw(st.booleans()),
              data.draw(st.booleans()))


def test_decode_arguments_past_int64_take_the_python_loop():
    raw = raw_record(0, 0, b"k", b"v")
    assert decode_both(raw, 1, 2**70, -(2**70))[0] == "ok"
    assert decode_both(raw, 1, 2**63 - 1, 0) == ("ok", [(2**63 - 1, 0, b"k", b"v", ())])
    # offsetDelta 1 past int64: a Python int, as Python adds; a timestamp is a Java long,
    # baseTimestamp + timestampDelta wraps (DefaultRecord.readFrom)
    raw = raw_record(1, -1, None, None)
    assert decode_both(raw, 1, 2**63 - 1, -(2**63)) == ("ok", [(2**63, 2**63 - 1, None,
                                                                 None, ())])


@pytest.mark.parametrize("block, count", [
    (b"", 1), (b"\x80", 1), (b"\xff\xff\xff\xff\x7f", 1), (b"\xff\xff\xff\xff\xff", 1),
    (b"\x02\x00", 1), (b"\x0e\x00\x00\x00\x02\x00\x02\x00", 1),
    (raw_record(0, 0, b"k", b"v", [(b"\xed\xa0\x80\xff", b"x")]), 1),
    (raw_record(0, 0, b"k", b"v") + b"\x00", 1), (raw_record(0, 0, b"k", b"v"), 2),
    (raw_record(0, 2**62, None, None), 1),
    (b"\x0c\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 1),
])
def test_decode_edge_cases(block, count):
    decode_both(block, count, 5, 1000, 7)
    into_both(block, count, 5, 1000, True, False)


# -- the group decode of format/vectorized.py (Arrow buffers) -------------------------------

def group_both(blocks_counts):
    """scan_lengths of each block, then decode_group of the blocks joined, both ways."""
    from kafkalog_cli.format import vectorized as V

    out = []
    for scan, group in ((V.scan_lengths, V.decode_group),
                        (V._py_scan_lengths, V._py_decode_group)):
        positions, bases, counts, joined, oks = [], [], [], [], []
        size = 0
        for data, count in blocks_counts:
            n0 = len(positions)
            ok = scan(data, count, positions)
            oks.append((ok, positions[n0:]))
            if ok:
                bases.append(size)
                counts.append(count)
                joined.append(data)
                size += len(data)
        got = group(b"".join(joined), positions, bases, counts) if positions else None
        if got is not None:
            got = (got[0].tolist(), got[1].tolist(), got[2].to_pylist(), got[3].to_pylist())
        out.append((oks, got))
    assert out[0] == out[1]
    return out[0]


def blocks_both(blocks_counts, positions_kind):
    """scan_lengths of each block (into a list or the core's bytearray), then
    decode_blocks of the blocks as they are, both ways; and, when every block scanned,
    the same as decode_group of the blocks joined."""
    from kafkalog_cli.format import vectorized as V

    out = []
    for scan, blocks_fn, group_fn, positions in (
            (V.scan_lengths, V.decode_blocks, V.decode_group,
             V.new_positions() if positions_kind == "new" else []),
            (V._py_scan_lengths, V._py_decode_blocks, V._py_decode_group, [])):
        blocks, counts = [], []
        for data, count in blocks_counts:
            if scan(data, count, positions):
                blocks.append(data)
                counts.append(count)
        got = blocks_fn(blocks, positions, counts) if counts else None
        if counts:
            bases = [sum(len(b) for b in blocks[:j]) for j in range(len(blocks))]
            joined = group_fn(b"".join(blocks), positions, bases, counts)
            assert (got is None) == (joined is None)
            if got is not None:
                assert [x.tolist() for x in got[:2]] == [x.tolist() for x in joined[:2]]
                assert got[2].equals(joined[2]) and got[3].equals(joined[3])
        if got is not None:
            got = (got[0].tolist(), got[1].tolist(), got[2].to_pylist(), got[3].to_pylist())
        out.append(got)
    assert out[0] == out[1]
    return out[0]


def rows_both(bl, append_times):
    """decode_rows of blocks ``(data, count, base_offset, base_ts)``: the core (which walks
    the lengths itself) and the Python twin (scan_lengths of each block first; None when
    one is refused, as the core refuses the whole call) give the same columns."""
    from kafkalog_cli.format import vectorized as V

    args = ([b[0] for b in bl], [b[1] for b in bl], [b[2] for b in bl], [b[3] for b in bl],
            append_times)
    positions: list[int] = []
    scanned = all(V._py_scan_lengths(b[0], b[1], positions) for b in bl)
    want = V._py_decode_rows(args[0], positions, *args[1:]) if scanned else None
    got = V._core_decode_rows(args[0], V.new_positions(), *args[1:])
    if want is not None:
        want = [a.to_pylist() for a in want]
    if got is not None:
        got = [a.to_pylist() for a in got]
    assert got == want
    return got


@SETTINGS
@given(st.data(), st.lists(blocks(), min_size=1, max_size=4))
def test_decode_rows_both_ways(data, bl):
    """Absolute offsets and microsecond timestamps (LogAppendTime batches taking their
    maxTimestamp; bases up to and past +-2**62, where the product wraps as numpy's), on
    random blocks and mutations."""
    pytest.importorskip("pyarrow")
    pytest.importorskip("numpy")
    near = st.integers(-(2**62) - 2, -(2**62) + 2) | st.integers(2**62 - 2, 2**62 + 2)
    bases = [(data.draw(st.integers(0, 2**40) | near), data.draw(INT64 | near))
             for _ in bl]
    lats = [data.draw(st.none() | INT64 | near) for _ in bl]
    rows_both([(raw, count, o, t) for (raw, count, _, _), (o, t) in zip(bl, bases, strict=True)], lats)
    rows_both([(mutate(data.draw, raw), count + data.draw(st.integers(-1, 1)), o, t)
               for (raw, count, _, _), (o, t) in zip(bl, bases, strict=True)], lats)


def test_decode_rows_values():
    """Hand-computed values: offsets base + delta, timestamps (base + delta) * 1000 us,
    a LogAppendTime batch's maxTimestamp for each of its records, null keys and values;
    a block with headers makes the whole call None."""
    pytest.importorskip("pyarrow")
    recs = [raw_record(i, i * 3, None if i == 2 else b"k%d" % i, None if i == 3 else b"v" * i)
            for i in range(6)]
    got = rows_both([(b"".join(recs[:4]), 4, 100, 5000), (b"".join(recs[4:]), 2, 200, 7000)],
                    [None, 9999])
    assert got == [[100, 101, 102, 103, 204, 205],
                   [5_000_000, 5_003_000, 5_006_000, 5_009_000, 9_999_000, 9_999_000],
                   [b"k0", b"k1", None, b"k3", b"k4", b"k5"],
                   [b"", b"v", b"vv", None, b"vvvv", b"vvvvv"]]
    with_header = raw_record(0, 0, b"k", b"v", [(b"h", b"x")])
    assert rows_both([(b"".join(recs[:4]), 4, 0, 0), (with_header, 1, 4, 0)],
                     [None, None]) is None


@SETTINGS
@given(st.data(), st.lists(blocks(), min_size=1, max_size=4), st.sampled_from(["new", "list"]))
def test_decode_blocks_in_place(data, bl, kind):
    """decode_blocks (the group read in place, positions as native int64s) gives what
    the Python twin gives, and what decode_group gives on the blocks joined."""
    pytest.importorskip("pyarrow")
    pytest.importorskip("numpy")
    blocks_both([(raw, count) for raw, count, _, _ in bl], kind)
    blocks_both([(mutate(data.draw, raw), count + data.draw(st.integers(-1, 1)))
                 for raw, count, _, _ in bl], kind)


def test_decode_blocks_takes_the_common_shape():
    pytest.importorskip("pyarrow")
    recs = [raw_record(i, i * 3, None if i == 2 else b"k%d" % i, None if i == 3 else b"v" * i)
            for i in range(6)]
    got = blocks_both([(b"".join(recs[:4]), 4), (b"".join(recs[4:]), 2)], "new")
    assert got == ([0, 3, 6, 9, 12, 15], [0, 1, 2, 3, 4, 5],
                   [b"k0", b"k1", None, b"k3", b"k4", b"k5"],
                   [b"", b"v", b"vv", None, b"vvvv", b"vvvvv"])


@SETTINGS
@given(st.data(), st.lists(blocks(), min_size=1, max_size=4))
def test_group_decode_on_blocks_and_mutations(data, bl):
    pytest.importorskip("pyarrow")
    pytest.importorskip("numpy")
    group_both([(raw, count) for raw, count, _, _ in bl])
    group_both([(mutate(data.draw, raw), count + data.draw(st.integers(-1, 1)))
                for raw, count, _, _ in bl])


def test_group_decode_takes_the_common_shape():
    pytest.importorskip("pyarrow")
    recs = [raw_record(i, i * 3, None if i == 2 else b"k%d" % i, None if i == 3 else b"v" * i)
            for i in range(6)]
    oks, got = group_both([(b"".join(recs[:4]), 4), (b"".join(recs[4:]), 2)])
    assert got == ([0, 3, 6, 9, 12, 15], [0, 1, 2, 3, 4, 5],
                   [b"k0", b"k1", None, b"k3", b"k4", b"k5"],
                   [b"", b"v", b"vv", None, b"vvvv", b"vvvvv"])


# -- batches: the walk, the CRC, records() ---------------------------------------------------

def _scan(mod, buf, start, end):
    s = mod.scan_batches(buf, start, end, file="x.log")
    err = s.stop_error
    return (s.batches, s.records, s.legacy, s.invalid, s.first_offset, s.last_offset,
            s.valid_end, None if err is None else (type(err).__name__, str(err), err.position))


def batches_both(buf: bytes, start: int = 0, end=None):
    """FileRecords.batches(), is_valid, records() and scan_batches on both sides."""
    out = []
    for mod in (records, P_FILE):
        fr = mod.FileRecords(buf, start, end, file="x.log")
        got = []
        for b in fr.batches():
            got.append((plain(b), b.is_valid, plain(outcome(b.records))
                        if b.__class__ is mod.RecordBatch else None))
        err = fr.stop_error
        out.append((got, fr.valid_end,
                    None if err is None else (type(err).__name__, str(err), err.position),
                    outcome(_scan, mod, buf, start, end)))
    assert out[0] == out[1]
    return out[0]


@st.composite
def segments(draw):
    """Hand-built v2 batches (valid CRCs, any header fields), then mutated."""
    buf = b""
    for _ in range(draw(st.integers(0, 4))):
        raw, count, base_offset, base_ts = draw(blocks())
        buf += raw_batch(draw(st.integers(0, 2**40) | st.sampled_from(
            [2**63 - 1, 2**63 - 2**31, 2**63 - 2**31 - 1])), [raw] if raw else [],
            base_ts=base_ts, attrs=draw(st.sampled_from([0, 0, 8, 16, 32, 48, 1])),
            count=draw(st.just(count) | st.integers(-2, 6)),
            last_delta=draw(st.none() | st.integers(-1, 2**31 - 1)),
            magic=draw(st.sampled_from([2, 2, 2, 3, 1, 0, -1])))
    return buf


@SETTINGS
@given(st.data(), segments())
def test_walk_and_scan_on_mutated_batches(data, buf):
    batches_both(buf)
    batches_both(mutate(data.draw, buf))


@SETTINGS
@given(st.binary(max_size=300), st.integers(0, 80))
def test_walk_and_scan_on_random_bytes(buf, start):
    batches_both(buf, start)
    # a v2 header in front: the bytes after it decide
    head = struct.pack(">qiibI", 0, len(buf) + 49, 0, 2, 0) + b"\x00" * 40
    batches_both(head + buf, 0, len(head) + len(buf) // 2)


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("how", ["close", "drop", "exhaust", "unstarted"])
def test_batch_iterator_ends_where_the_generator_ends(legacy, how):
    """valid_end after a consumer stops early (close(), or dropping the iterator), runs
    to the end, or never starts: as the Python generator's ``finally`` sets it."""
    from kafkalog_cli.format.builder import build_legacy_message

    recs = [raw_record(0, 0, b"k", b"v")]
    parts = [build_legacy_message(i, b"k", b"v") if legacy and i % 3 == 1 else raw_batch(i, recs)
             for i in range(200)]
    buf = b"".join(parts) + b"\x00" * 30  # a partial tail
    got = []
    for mod in (records, P_FILE):
        fr = mod.FileRecords(buf, file="x.log")
        it = fr.batches()
        b = None
        if how != "unstarted":
            for b in it:
                if how != "exhaust" and b.position > len(buf) // 2:
                    break
        if how == "close":
            it.close()
        del it
        err = fr.stop_error
        got.append((fr.valid_end, None if b is None else b.position,
                    None if err is None else (type(err), str(err), err.position)))
    assert got[0] == got[1]


def test_is_valid_on_odd_tuples_takes_the_python_property():
    b = next(iter(records.FileRecords(raw_batch(0, [raw_record(0, 0, b"k", b"v")])).batches()))
    odd = tuple.__new__(record_batch.RecordBatch, (b[0], 2**70) + tuple(b[2:]))
    assert odd.is_valid is P_BATCH.RecordBatch._is_valid(odd)


def _views(raw: bytes):
    """The buffers a batch's view can be: the core exports a C-contiguous memoryview in
    place (sliced, cast, read-only or not) and takes anything else through the buffer
    protocol (a strided memoryview has none in the simple form: the Python path's)."""
    import mmap

    pad = b"\x00" * 8
    m = mmap.mmap(-1, len(raw) + 8)
    m[:len(raw)] = raw
    return {
        "bytes": raw, "bytearray": bytearray(raw), "memoryview": memoryview(raw),
        "sliced": memoryview(pad + raw + pad)[8:8 + len(raw)],
        "cast": memoryview(bytearray(raw + pad)).cast("B", (len(raw) + 8,))[:len(raw)],
        "cast-q": memoryview(bytearray(raw + pad[:(-len(raw)) % 8])).cast("q"),
        "strided": memoryview(bytes(b for x in raw for b in (x, 0)))[::2],
        "mmap": memoryview(m)[:len(raw)], "map": m,
    }


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "sliced", "cast",
                                  "cast-q", "strided", "mmap"])
def test_batches_of_every_kind_of_view(kind):
    """The same batches, verdicts and records whatever buffer holds them, on both sides;
    a memoryview exported in place is released after each call (it can be released, and
    its mmap closed, once the batches are dropped)."""
    recs = [raw_record(i, i, b"k%d" % i, b"v" * i) for i in range(3)]
    raw = b"".join(raw_batch(i * 3, recs) for i in range(4))
    bad = bytearray(raw)
    bad[-1] ^= 1  # the last batch's CRC fails
    for data in (raw, bytes(bad)):
        views = _views(data)
        view = views[kind]
        out = []
        for mod in (records, P_FILE):
            got = []

            def walk(mod=mod, got=got, view=view):
                for b in mod.FileRecords(view, file="x.log").batches():
                    got.append((plain(b), outcome(lambda b=b: b.is_valid),
                                plain(outcome(b.records))))

            out.append((outcome(walk), got))
        assert out[0] == out[1]
        if kind not in ("strided", "cast-q"):  # whose len() counts items, not bytes
            got = out[0][1]
            assert [g[1] for g in got] == [("ok", True)] * 3 + [("ok", data == raw)]
            assert len(got[0][2][1]) == 3
        out = got = None  # the batches, and their exports of the view, dropped
        if isinstance(view, memoryview):
            view.release()  # raises BufferError if the core left an export behind
        views["mmap"].release()
        views["map"].close()  # raises BufferError while an export of it is alive


def test_a_released_view_fails_as_in_python():
    """A batch whose memoryview was released: is_valid and records() raise what the
    Python path raises (the core does not read through a released view)."""
    raw = raw_batch(0, [raw_record(0, 0, b"k", b"v")])
    out = []
    for mod in (records, P_FILE):
        mv = memoryview(bytearray(raw))
        b = next(iter(mod.FileRecords(mv).batches()))
        mv.release()
        out.append((outcome(lambda b=b: b.is_valid), outcome(b.records)))
    assert out[0] == out[1] and out[0][0][0] == "err"


#: header ints at the edges of the core's in-place read (one and two 30-bit digits,
#: either sign) and past it, and an int subclass
_EDGE_INTS = [0, 1, -1, 2**30 - 1, 2**30, -(2**30), 2**60 - 1, 2**60, -(2**60) + 1, -(2**60),
              2**62, 2**63 - 1, -(2**63), 2**64, True]


@pytest.mark.parametrize("field", [1, 2, 3, 6, 7, 9, 10, 14])
def test_odd_header_ints_both_ways(field):
    """A RecordBatch tuple whose position, base offset, length, crc, attributes,
    timestamps or count is any of :data:`_EDGE_INTS`: is_valid and records() give what
    the Python path gives (the core reads small ints in place and hands the rest over)."""
    raw = raw_batch(5, [raw_record(i, i, b"k", b"v%d" % i) for i in range(2)])
    b = next(iter(records.FileRecords(raw).batches()))
    for value in _EDGE_INTS:
        items = list(b)
        items[field] = value
        cb = tuple.__new__(record_batch.RecordBatch, items)
        pb = tuple.__new__(P_BATCH.RecordBatch, items)
        assert outcome(lambda cb=cb: cb.is_valid) == outcome(P_BATCH.RecordBatch._is_valid, pb)
        assert plain(outcome(cb.records)) == plain(outcome(pb.records)), (field, value)


def test_is_valid_is_a_read_only_attribute():
    b = next(iter(records.FileRecords(raw_batch(0, [raw_record(0, 0, b"k", b"v")])).batches()))
    assert b.is_valid is True and "CRC" in record_batch.RecordBatch.is_valid.__doc__
    with pytest.raises(AttributeError):
        b.is_valid = False


def test_batches_use_the_crc32c_packages_own_c_function():
    """The core computes no CRC itself: with the crc32c package on the crc32 instruction it
    calls the package's C function (found in the loaded extension), else its Python one."""
    import crc32c

    want = "C function" if crc32c.hardware_based else "Python function"
    assert compiled._c.crc_source() == f"crc32c package, {want}"


@pytest.mark.parametrize("size", [4000, 4096 - 61 + 21, 5000, 70000])
def test_crc_of_large_batches(size):
    """Large batches (the crc32c package's C function): same verdicts as the Python path."""
    batch = bytearray(raw_batch(7, [raw_record(0, 0, b"k", b"v" * size)]))
    assert batches_both(bytes(batch))[0][0][1] is True
    batch[-1] ^= 1
    got = batches_both(bytes(batch))
    assert got[0][0][1] is False and got[3][1][3] == [0]


def test_free_lists_keep_the_types_reference_counts():
    """The core recycles Record and RecordBatch tuples; every other tuple of those types
    (another size, a Python subclass with a __dict__ in a cycle) is freed as CPython
    frees it, and the types' reference counts end where they started."""
    import gc
    import sys

    class SubBatch(record_batch.RecordBatch):
        pass

    class SubRecord(record.Record):
        pass

    buf = b"".join(raw_batch(i, [raw_record(0, 0, b"k", b"v")]) for i in range(5000))
    gc.collect()
    before = (sys.getrefcount(record_batch.RecordBatch), sys.getrefcount(record.Record))
    for _ in range(3):
        bs = list(records.FileRecords(buf).batches())
        rs = [b.records() for b in bs]
        subs = [tuple.__new__(SubBatch, tuple(b)) for b in bs[:100]]
        srs = [tuple.__new__(SubRecord, tuple(r[0])) for r in rs[:100]]
        for x in srs:
            x.me = x  # a cycle through the instance's __dict__
        odd = [tuple.__new__(record.Record, (1, 2)) for _ in range(100)]
        assert rs[7][0] == (7, 1000, b"k", b"v", ()) and subs[3][2] == 3 and srs[5].me is srs[5]
        del bs, rs, subs, srs, odd, x
        gc.collect()
    assert (sys.getrefcount(record_batch.RecordBatch), sys.getrefcount(record.Record)) == before


def _compare_files(paths):
    n = 0
    for path in paths:
        got = batches_both(path.read_bytes())
        n += len(got[0])
    return n


def test_fixtures_both_implementations():
    assert _compare_files(fixture_log_files()) > 0


@pytest.mark.corpus
@pytest.mark.slow
def test_corpus_both_implementations():
    files = corpus_log_files()
    if not files:
        pytest.skip("real corpus not present at ../shared/corpus/real")
    assert _compare_files(files) > 0


# -- what the core shares or recycles: records(), iteration, ints ------------------------------

def test_records_is_a_method_of_the_class():
    """records() is the core's method descriptor: called bound, unbound, with max_bytes
    (the Python method's path), on a subclass, with the Python method's results."""
    raw = raw_batch(5, [raw_record(i, i, b"k", b"v%d" % i) for i in range(3)])
    cb = next(iter(records.FileRecords(raw).batches()))
    pb = next(iter(P_FILE.FileRecords(raw).batches()))
    want = plain(pb.records())
    assert want == [(5 + i, 1000 + i, b"k", b"v%d" % i, ()) for i in range(3)]

    class SubBatch(record_batch.RecordBatch):
        pass

    sub = tuple.__new__(SubBatch, tuple(cb))
    for got in (cb.records(), record_batch.RecordBatch.records(cb), cb.records(max_bytes=1 << 20),
                cb.records(1 << 20), sub.records()):
        assert type(got) is list and plain(got) == want
    assert outcome(cb.records, 1, 2) == outcome(pb.records, 1, 2)
    assert outcome(lambda: cb.records(nope=1))[:2] == outcome(lambda: pb.records(nope=1))[:2]


@pytest.mark.parametrize("make", [
    lambda: record._decode_block(raw_record(0, 0, b"k", b"v", [(b"h", b"x")]), 1, 9, 10, 0)[0],
    lambda: next(iter(records.FileRecords(raw_batch(3, [raw_record(0, 0, None, b"v")])).batches())),
    lambda: tuple.__new__(record.Record, (1, 2)),
    lambda: tuple.__new__(record.Record, ()),
])
def test_iterating_records_and_batches(make):
    """The core's iterator of Record and RecordBatch yields what tuple's does: unpacking,
    list(), a second pass, an exhausted iterator, its length hint, many alive at once."""
    x = make()
    want = list(tuple.__iter__(x))
    assert list(x) == want and list(x) == want and [*x] == want
    it = iter(x)
    assert it.__length_hint__() == len(want)
    assert list(it) == want and list(it) == [] and it.__length_hint__() == 0
    its = [iter(x) for _ in range(200)]  # beyond the free list
    assert all(list(i) == want for i in its)
    del its
    if len(want) == 5:
        offset, timestamp, key, value, headers = x
        assert (offset, timestamp, key, value, headers) == tuple(want)


def test_an_iterator_someone_holds_is_theirs():
    """Unpacking reuses one iterator while no one else holds it: an iterator kept (half
    read, or read inside another unpacking's loop) yields its own record's items whatever
    is unpacked meanwhile; one dropped half read releases its record at the next
    unpacking; an item whose __del__ keeps an iterator, freed while the shared one is
    rebound, keeps one of its own."""
    import sys

    recs = record._decode_block(b"".join(raw_record(i, i, b"k%d" % i, b"v%d" % i)
                                    for i in range(3)), 3, 10, 100, 0)
    r0, r1, r2 = recs
    it = iter(r0)
    assert next(it) == 10
    offset, timestamp, key, value, headers = r1
    assert (offset, key) == (11, b"k1")
    inner = [tuple(x for x in r2) for _ in range(3)]  # iterators made while ``it`` is held
    assert inner == [tuple(r2)] * 3
    assert list(it) == [100, b"k0", b"v0", ()]

    del it
    held = tuple.__new__(record.Record, ("a", "b", "c", "d", "e"))
    base = sys.getrefcount(held)
    it = iter(held)
    next(it)
    del it  # dropped half read: the shared iterator still holds ``held``
    a, b, c, d, e = r2
    assert sys.getrefcount(held) == base and (a, e) == (12, ())

    kept = []

    class Iterates:
        def __del__(self):
            inner = iter(r1)
            next(inner)
            kept.append(inner)

    doomed = tuple.__new__(record.Record, (Iterates(), 2, 3, 4, 5))
    it = iter(doomed)
    next(it)
    del it, doomed  # the shared iterator holds the last reference to ``doomed``
    offset, timestamp, key, value, headers = r0  # rebinding frees doomed: __del__ iterates
    assert (offset, key) == (10, b"k0")
    assert list(kept.pop()) == [101, b"k1", b"v1", ()]


def test_shared_ints_have_the_values_of_the_python_loop():
    """Records sharing a timestamp (or a batch's base offset and timestamps) may share one
    int: values equal the Python loop's, LogAppendTime included, and an int subclass
    passed as a base is never handed out as a record's field."""
    recs = [raw_record(d, t, b"k", None) for d, t in ((0, 0), (1, 0), (2, 5), (3, 5), (4, 0))]
    block = b"".join(recs)
    got = decode_both(block, 5, 100, 2000)
    assert got == ("ok", [(100, 2000, b"k", None, ()), (101, 2000, b"k", None, ()),
                          (102, 2005, b"k", None, ()), (103, 2005, b"k", None, ()),
                          (104, 2000, b"k", None, ())])
    for attrs in (0, 8):  # CreateTime, LogAppendTime (every timestamp maxTimestamp)
        batches_both(raw_batch(7, recs, attrs=attrs))
    out = record._decode_block(raw_record(0, 0, None, None), 1, True, True, 0)
    assert [type(v) for v in out[0][:2]] == [int, int] and out[0][:2] == (1, 1)
    into_both(block, 5, 100, 2000, True, False)
    into_both(block, 5, 100, 2000, True, True)


@pytest.mark.parametrize("size", [0, 1, 255, 256, 769, 3 * 8192 + 5, 100_000])
def test_batch_crc_verdicts_agree_with_the_crc32c_package(size):
    """A batch's CRC through the core's call of the package's C function, at lengths
    around the package's three-stream runs, against the package's Python function."""
    import crc32c

    batch = raw_batch(3, [raw_record(0, 0, b"k", bytes(range(256)) * (size // 256) +
                                     bytes(size % 256))])
    b = next(iter(records.FileRecords(batch).batches()))
    assert b.compute_crc() == crc32c.crc32c(batch[21:])
    assert b.is_valid is True


@pytest.mark.parametrize("blocks, counts, positions", [
    # an empty block between or after blocks: no bytes (taken) or some (not: the joined
    # record would run through them)
    ([b"A", b"", b"B"], [1, 0, 1], [0, 0]),
    ([b"A", b"xy", b"B"], [1, 0, 1], [0, 0]),
    ([b"A", b"B", b""], [1, 1, 0], [0, 0]),
    ([b"A", b"B", b"z"], [1, 1, 0], [0, 0]),
    # a later block's first record not at its start
    ([b"A", b"\x00B"], [1, 1], [0, 1]),
])
def test_decode_blocks_block_edges(blocks, counts, positions):
    """Hand-placed blocks and positions (not from scan_lengths): the core and the Python
    twin agree on which groups they take, and on the values."""
    pytest.importorskip("pyarrow")
    from kafkalog_cli.format import vectorized as V

    a, b = raw_record(0, 0, b"k", b"v"), raw_record(1, 2, None, b"w")
    real = [a if x == b"A" else b if x == b"B" else b"\x00" + b if x == b"\x00B" else x
            for x in blocks]
    got = []
    for fn in (V.decode_blocks, V._py_decode_blocks):
        r = fn(real, list(positions), counts)
        got.append(None if r is None else (r[0].tolist(), r[1].tolist(), r[2].to_pylist(),
                                           r[3].to_pylist()))
    assert got[0] == got[1]
    assert (got[0] is None) == (blocks[1] not in (b"", b"B") or blocks[-1] == b"z")
