"""``partition_for``: ``Utils.abs(key.hashCode()) % partitions`` (GroupCoordinatorService
and TransactionStateManager's partitionFor), pinned on keys whose ``String.hashCode`` is
negative, with the values written out (hash codes from the JDK, the rest by hand):
``Utils.abs`` negates a negative hash (``Math.abs``), unlike the producer's
``Utils.toPositive`` (``h & 0x7fffffff``, tests/spark/test_spark_partitioner.py), and
maps Integer.MIN_VALUE to 0."""

from __future__ import annotations

import pytest

from kafkalog_cli.server.coordinator_log import partition_for


@pytest.mark.parametrize(("key", "partitions", "expected"), [
    # "billing".hashCode() = -109829509: abs 109829509 = 50 * 2196590 + 9 = 7 * 15689929 + 6
    # (toPositive would give 2037654139, % 50 = 39)
    ("billing", 50, 9),
    ("billing", 7, 6),
    # "my-transactional-id".hashCode() = -959806496: abs 959806496 = 50 * 19196129 + 46
    # = 7 * 137115213 + 5 (toPositive: 1187677152, % 50 = 2)
    ("my-transactional-id", 50, 46),
    ("my-transactional-id", 7, 5),
    # "polygenelubricants".hashCode() = Integer.MIN_VALUE: Utils.abs gives 0
    ("polygenelubricants", 50, 0),
    ("polygenelubricants", 7, 0),
    # a positive hash for contrast: "orders-app".hashCode() = 772757305 = 50 * 15455146 + 5
    ("orders-app", 50, 5),
])
def test_partition_for_negative_hash_codes(key, partitions, expected):
    assert partition_for(key, partitions) == expected
