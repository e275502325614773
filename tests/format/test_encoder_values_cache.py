"""format.encoder.encode_values (the pure-Python encoder): the cached-heads path gives the bytes of encode_records for
fixed, few and many distinct value lengths, large values, nulls and big batches."""

import random

import pytest

from kafkalog_cli.format import encoder
from kafkalog_cli.format.encoder import encode_records, encode_values


def _ref(values, delta=0):
    return encode_records([(delta, None, v, ()) for v in values], 0)[0]


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 127, 128, 129, 1000, 4096, 4097])
@pytest.mark.parametrize("length", [0, 1, 63, 64, 127, 128, 8191, 8192, 15999, 16000, 20000])
def test_fixed_length(n, length):
    vs = [bytes([i % 251]) * length for i in range(n)]
    assert encode_values(vs) == _ref(vs)


def test_mixed_lengths_nulls_and_cache_bound(monkeypatch):
    monkeypatch.setattr(encoder, "_HEADS", {})
    monkeypatch.setattr(encoder, "_heads_cached", 0)
    monkeypatch.setattr(encoder, "_HEADS_MAX", 2000)
    rng = random.Random(7)
    for t in range(400):
        n = rng.choice([1, 5, 100, 300])
        pool = rng.sample(range(0, 600), rng.choice([1, 3, 9, 50]))
        vs = [bytes(rng.choice(pool)) for _ in range(n)]
        if t % 10 == 0:
            vs[rng.randrange(n)] = None
        assert encode_values(vs) == _ref(vs)
        assert encode_values(vs[:20], 3) == _ref(vs[:20], 3)
    assert encoder._heads_cached <= 2000
