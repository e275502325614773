"""audit's records check: a process's first ``DIRECT_RECORDS`` records are decoded block by
block (``decode_records_into``), later groups by the vectorised group decode. Both must
count and report the same, corrupt blocks included (a valid CRC over records that do not
decode, as Kafka's DefaultRecordBatch iterator refuses them)."""

from __future__ import annotations

import struct

import crc32c
import pytest

from kafkalog_cli.format.builder import build_batch
from kafkalog_cli.ops import audit as A

pytest.importorskip("numpy")
pytest.importorskip("pyarrow")


def _recount(batch: bytes, count: int) -> bytes:
    """``batch`` declaring ``count`` records, its CRC-32C recomputed (attributes..end)."""
    b = bytearray(batch)
    struct.pack_into(">i", b, 57, count)
    struct.pack_into(">I", b, 17, crc32c.crc32c(bytes(b[21:])))
    return bytes(b)


@pytest.fixture
def partition(tmp_path):
    d = tmp_path / "t-0"
    d.mkdir()
    out, offset = [], 0
    for i in range(30):
        n = 1 + i % 7
        b = build_batch([(1_700_000_000_000 + j, b"k%d" % j, b"v" * (i + j), [])
                         for j in range(n)], base_offset=offset)
        if i in (4, 17):
            b = _recount(b, n + 1)  # one record more declared than written
        if i == 23:
            b = _recount(b, n - 1)  # records left over
        out.append(b)
        offset += n
    (d / "00000000000000000000.log").write_bytes(b"".join(out))
    return d


def _audit(d):
    a = A.audit_partition(None, "t", 0, str(d))
    return a.to_dict()


def test_direct_and_group_paths_report_the_same(partition, monkeypatch):
    monkeypatch.setattr(A, "_direct_left", A.DIRECT_RECORDS)
    direct = _audit(partition)
    monkeypatch.setattr(A, "_direct_left", 0)
    from kafkalog_cli.format import vectorized

    accepted = []
    real = vectorized.decode_group

    def spy(*args):
        got = real(*args)
        accepted.append(got is not None)
        return got

    monkeypatch.setattr(vectorized, "decode_group", spy)
    grouped = _audit(partition)
    assert accepted == [True]  # the 27 sound blocks, decoded as one group
    assert grouped == direct
    assert direct["corruptBatches"] == 3
    assert sum("does not decode" in p for p in direct["problems"]) == 3


def test_a_small_input_spends_the_direct_budget(partition, monkeypatch):
    monkeypatch.setattr(A, "_direct_left", A.DIRECT_RECORDS)
    _audit(partition)
    assert 0 < A.DIRECT_RECORDS - A._direct_left < A.DIRECT_RECORDS
