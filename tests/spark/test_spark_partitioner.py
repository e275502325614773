"""The producer's keyed partition, ``Utils.toPositive(Utils.murmur2(key)) % numPartitions``
(BuiltInPartitioner.partitionForKey), pinned on the murmur2 values of Kafka's own UtilsTest
(testMurmur2), most of them negative; ``toPositive`` is ``h & 0x7fffffff`` (not
``Math.abs``: -973932308 gives 1173551340, where abs would give 973932308). The partitions
are worked out by hand from those values."""

from __future__ import annotations

import pytest

from kafkalog_cli.spark.writer import default_partition, murmur2

#: (key, murmur2 from Kafka's UtilsTest, toPositive(h), toPositive % 50, toPositive % 7)
CASES = [
    (b"21", -973932308, 1173551340, 40, 3),
    (b"foobar", -790332482, 1357151166, 16, 0),
    (b"a-little-bit-long-string", -985981536, 1161502112, 12, 1),
    (b"a-little-bit-longer-string", -1486304829, 661178819, 19, 0),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971, 2088585677, 27, 3),
    (b"abc", 479470107, 479470107, 7, 4),
]


@pytest.mark.parametrize(("key", "h", "positive", "p50", "p7"), CASES,
                         ids=[c[0].decode()[:12] for c in CASES])
def test_keyed_partition_uses_to_positive(key, h, positive, p50, p7):
    assert murmur2(key) == h
    assert positive == (2**31 + h if h < 0 else h)  # the hand computation, checked
    assert default_partition(key, 50) == p50
    assert default_partition(key, 7) == p7


def test_null_key_is_partition_zero():
    assert default_partition(None, 7) == 0
