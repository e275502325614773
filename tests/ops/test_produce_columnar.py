"""Keyed lines and JSON Lines go through the column builder (``ColumnsChunk`` ->
``_Batcher.add_columns`` -> ``encode_columns``): the same bytes as the record path (one
``InputRecord`` tuple per record, the record loop ``encode_records``), and the same
batches kafka-python's ``DefaultRecordBatchBuilder`` builds from the same records."""

from __future__ import annotations

import io
import json
import random

import pytest

from kafkalog_cli.format.builder import encode_columns, encode_records
from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.inputs import ColumnsChunk
from kafkalog_cli.ops.produce import ProduceOptions, iter_inputs, produce
from kafkalog_cli.storage.clock import ManualClock

T0 = 1_700_000_000_000
TOPIC_ID = "ABEiM0RVZneImaq7zN3u_w"

KEYED = b"".join(b"k%d\t%s\n" % (i % 37, b"v" * (i % 150)) for i in range(1500))
KEYED_EMPTY = b"\tv\nk\t\n\t\nkey\tvalue\twith\ttabs\n" * 50
JSONL_KH = b"".join(
    b'{"key": "k%d", "value": "%s", "headers": {"h": "x", "n%d": null}}\n'
    % (i % 11, b"v" * (i % 90), i % 3) for i in range(1200))
JSONL_MIXED = b"".join(
    (b'{"key": null, "value": "a"}\n', b'{"value": null, "timestamp": %d}\n' % (T0 + 5),
     b'{"key": "\\u00e9", "value": "b", "headers": {}}\n',
     b'{"key": "k", "value": "c", "timestamp": %d, "headers": {"a": "1"}}\n' % (T0 - 3))
    * 300)
CASES = {
    "keyed lines": (KEYED, {"parse_key": True}),
    "keyed lines, empty keys and values": (KEYED_EMPTY, {"parse_key": True}),
    "jsonl keys and headers": (JSONL_KH, {"input_format": "jsonl"}),
    "jsonl nulls and timestamps": (JSONL_MIXED, {"input_format": "jsonl"}),
}


def _produce(d, text: bytes, *, as_records: bool, **kw):
    opts = ProduceOptions(topic="t", topic_id=TOPIC_ID, batch_size=kw.pop("batch_size", 100),
                          **kw)
    chunks = iter_inputs([], opts, stdin=io.BytesIO(text))
    if as_records:  # the record path: every chunk as a list of InputRecord tuples
        chunks = ([*c] if isinstance(c, ColumnsChunk) else c for c in chunks)
    return produce(d, opts, chunks, clock=ManualClock(T0), fsync=False)


def _files(d):
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*"))
            if p.is_file() and p.name != "meta.properties"}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("extra", [{}, {"batch_size": 7}, {"batch_bytes": 900},
                                   {"compression": "lz4"}, {"timestamp": T0 + 1}],
                         ids=["100", "7", "900B", "lz4", "timestamp"])
def test_columnar_path_writes_what_the_record_path_writes(tmp_path, name, extra):
    text, kw = CASES[name]
    chunks = list(iter_inputs([], ProduceOptions(topic="t", **kw), stdin=io.BytesIO(text)))
    assert any(isinstance(c, ColumnsChunk) for c in chunks)  # the path under test
    a = _produce(tmp_path / "cols", text, as_records=False, **kw, **extra)
    b = _produce(tmp_path / "recs", text, as_records=True, **kw, **extra)
    assert a.records == b.records > 0
    fa, fb = _files(tmp_path / "cols"), _files(tmp_path / "recs")
    assert fa.keys() == fb.keys()
    for f in fa:
        assert fa[f] == fb[f], f


def test_keyed_batches_are_kafka_pythons(tmp_path):
    """Every batch of keyed lines equals kafka-python's builder's from its CRC on (the
    base offset, length and leader epoch lie outside the CRC and differ by design)."""
    DefaultRecordBatchBuilder = pytest.importorskip(
        "kafka.record.default_records").DefaultRecordBatchBuilder
    _produce(tmp_path, KEYED, as_records=False, parse_key=True, timestamp=T0)
    lines = KEYED.split(b"\n")[:-1]
    at = 0
    seen = 0
    for log in sorted((tmp_path / "t-0").glob("*.log")):
        for batch in FileRecords(log.read_bytes()).batches():
            kp = DefaultRecordBatchBuilder(magic=2, compression_type=0,
                                           is_transactional=False, producer_id=-1,
                                           producer_epoch=-1, base_sequence=-1,
                                           batch_size=1 << 30)
            for i, ln in enumerate(lines[at:at + batch.count]):
                k, _, v = ln.partition(b"\t")
                kp.append(i, timestamp=T0, key=k, value=v, headers=[])
            assert bytes(batch.raw())[17:] == bytes(kp.build())[17:]
            at += batch.count
            seen += 1
    assert at == len(lines) and seen == 15


def _random_columns(rnd: random.Random):
    n = rnd.choice([1, 2, 5, 100, 300, 4096, 4097])
    klen = rnd.choice([0, 1, 3, 127, 128, 300])
    vlen = rnd.choice([0, 1, 99, 16383, 16384])
    nulls = rnd.random() < 0.3
    keys = None if rnd.random() < 0.2 else [
        None if nulls and rnd.random() < 0.2 else rnd.randbytes(rnd.randint(0, klen))
        for _ in range(n)]
    values = [None if nulls and rnd.random() < 0.2 else b"v" * rnd.randint(0, vlen)
              for _ in range(n)]
    base = rnd.choice([-1, 0, T0])
    ts = [base] * n if rnd.random() < 0.5 else [
        base + rnd.choice([0, 1, -1, 10**9]) for _ in range(n)]
    headers = None if rnd.random() < 0.4 else [
        tuple((rnd.choice(["a", "é", ""]), rnd.choice([None, b"", b"x" * 200]))
              for _ in range(rnd.randint(0, 2))) for _ in range(n)]
    return ts, keys, values, headers, base


@pytest.mark.parametrize("seed", range(300))
def test_encode_columns_is_the_record_loop(seed):
    ts, keys, values, headers, base = _random_columns(random.Random(seed))
    n = len(values)
    want = encode_records(zip(ts, keys or [None] * n, values, headers or [()] * n,
                              strict=True), base)
    assert encode_columns(ts, keys, values, headers, base) == want


def _kafka_python_records(data: bytes) -> list:
    from kafka.record import MemoryRecords

    out, mr = [], MemoryRecords(data)
    while (b := mr.next_batch()) is not None:
        out += [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in b]
    return out


def _aiokafka_records(data: bytes) -> list:
    from aiokafka.record.memory_records import MemoryRecords

    out, mr = [], MemoryRecords(data)
    while (b := mr.next_batch()) is not None:
        assert b.validate_crc()
        out += [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in b]
    return out


JSONL_WIDE = "".join(
    json.dumps({"key": None if i % 9 == 0 else f"clé-{i % 13}", "value": "ü" * (i % 70),
                "headers": {"trace": f"t{i % 4}", "empty": "", "none": None, "ключ": "x"}
                if i % 5 else {}, **({"timestamp": T0 + i} if i % 2 else {})},
               ensure_ascii=i % 3 == 0) + "\n" for i in range(2500)).encode()


@pytest.mark.parametrize("decoder", [_kafka_python_records, _aiokafka_records],
                         ids=["kafka-python", "aiokafka"])
@pytest.mark.parametrize("name", ["jsonl keys and headers", "jsonl nulls and timestamps",
                                  "jsonl wide", "keyed lines"])
def test_batches_read_by_independent_clients(tmp_path, decoder, name):
    """kafka-python's and aiokafka's readers give back every key, value, header and
    timestamp of the input, read here with the json module (or split at the first tab),
    in order from offset 0."""
    text, kw = {"jsonl wide": (JSONL_WIDE, {"input_format": "jsonl"})}.get(name) or CASES[name]
    chunks = list(iter_inputs([], ProduceOptions(topic="t", **kw), stdin=io.BytesIO(text)))
    assert any(isinstance(c, ColumnsChunk) for c in chunks)  # the path under test
    _produce(tmp_path, text, as_records=False, **kw)
    want = []
    for i, ln in enumerate(text.decode().splitlines()):
        if kw.get("parse_key"):
            k, _, v = ln.partition("\t")
            want.append((i, T0, k.encode(), v.encode(), []))
            continue
        o = json.loads(ln)
        enc = [None if x is None else x.encode() for x in (o.get("key"), o.get("value"))]
        want.append((i, o.get("timestamp", T0), *enc,
                     [(hk, None if hv is None else hv.encode())
                      for hk, hv in (o.get("headers") or {}).items()]))
    got = []
    for log in sorted((tmp_path / "t-0").glob("*.log")):
        got += decoder(log.read_bytes())
    assert got == want
