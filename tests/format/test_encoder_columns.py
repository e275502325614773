"""format.encoder.encode_columns (the pure-Python encoder) gives exactly encode_records'
result (block, count, max
timestamp, offset delta of the max) for keys, nulls, headers (cached or not, null header
values, non-ASCII names), mixed timestamps, large fields and unhashable headers."""

import random

import pytest

from kafkalog_cli.format import encoder
from kafkalog_cli.format.encoder import encode_columns, encode_records


def _rand_records(rng, n):
    base = 1_700_000_000_000
    same_ts = rng.random() < 0.5
    pool_h = [(), (("h", b"x"),), (("é", None), ("b", b"")), (("k", b"v" * 200),) * 3]
    out = []
    for _ in range(n):
        ts = base if same_ts else base + rng.choice([-5, 0, 3, 10**6, 2**40])
        key = None if rng.random() < 0.2 else bytes(rng.randrange(0, 300))
        value = None if rng.random() < 0.1 else b"v" * rng.choice([0, 1, 63, 64, 127, 128,
                                                                   5000, 17000])
        hdrs = rng.choice(pool_h) if rng.random() < 0.7 else \
            tuple((f"h{j}", bytes(rng.randrange(40))) for j in range(rng.randrange(3)))
        out.append((ts, key, value, hdrs))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_same_as_encode_records(seed):
    rng = random.Random(seed)
    recs = _rand_records(rng, rng.choice([1, 2, 50, 100, 300, 4097]))
    cols = [list(c) for c in zip(*recs, strict=True)]
    base = recs[0][0]
    assert encode_columns(*cols, base) == encode_records(recs, base)


def test_unhashable_headers_and_no_timestamps(monkeypatch):
    monkeypatch.setattr(encoder, "_HDR_CACHE_MAX", 2)
    recs = [(-1, b"k", b"v", [("a", b"b")]), (-1, None, b"w", ())]
    cols = [list(c) for c in zip(*recs, strict=True)]
    assert encode_columns(*cols, -1) == encode_records(recs, -1)
    recs = [(-1, b"k", b"v", (("a", b"b"),)), (-1, None, None, ())]
    cols = [list(c) for c in zip(*recs, strict=True)]
    assert encode_columns(*cols, -1) == encode_records(recs, -1)
    for i in range(10):
        recs = [(5, b"k", b"v", ((f"h{i}", b"b"),))]
        cols = [list(c) for c in zip(*recs, strict=True)]
        assert encode_columns(*cols, 5) == encode_records(recs, 5)
    assert len(encoder._HDR_CACHE) <= 4
