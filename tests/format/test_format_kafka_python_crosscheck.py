"""Our reader vs kafka-python's (``kafka.record.MemoryRecords``, test-only) on every ``.log``
and KRaft snapshot of the corpus and of the fixtures; totals vs the corpus CATALOG.md."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest
from kafka.errors import CorruptRecordError as KPCorruptRecordError
from kafka.record import MemoryRecords
from kafkalog_testkit import CORPUS, corpus_log_files, corpus_snapshot_files, fixture_log_files

from kafkalog_cli.format.records import FileRecords


def _b(v):
    return None if v is None else bytes(v)


def ours(data: bytes) -> tuple[list, int]:
    out = []
    fr = FileRecords(data)
    batches = 0
    for b in fr.batches():
        batches += 1
        for r in b.records():
            out.append((r.offset, r.timestamp, _b(r.key), _b(r.value),
                        tuple((k, _b(v)) for k, v in r.headers)))
    return out, batches


def theirs(data: bytes) -> tuple[list, int]:
    out = []
    batches = 0
    mr = MemoryRecords(data)
    try:
        while True:
            b = mr.next_batch()
            if b is None:
                break
            batches += 1
            for r in b:
                # kafka-python gives v0 messages timestamp None; Kafka says NO_TIMESTAMP (-1)
                ts = -1 if r.timestamp is None else r.timestamp
                out.append((r.offset, ts, r.key, r.value, tuple(r.headers)))
    except KPCorruptRecordError:
        pass  # a zero-filled tail: kafka-python raises where we stop (stop_error)
    return out, batches


def _id(p):
    return "/".join(p.parts[-2:])


@pytest.mark.parametrize("path", fixture_log_files(), ids=_id)
def test_fixture_records_equal_kafka_python(path):
    data = path.read_bytes()
    mine, nb = ours(data)
    kp, kb = theirs(data)
    assert mine == kp
    assert nb == kb and nb > 0


@pytest.mark.corpus
def test_corpus_records_equal_kafka_python(corpus_root):
    files = corpus_log_files() + corpus_snapshot_files()
    assert len(files) >= 190 + 130
    differing = []
    for f in files:
        data = f.read_bytes()
        if ours(data) != theirs(data):
            differing.append(str(f.relative_to(corpus_root)))
    assert differing == []


def _catalog_rows(section: str) -> list[list[str]]:
    text = (CORPUS / "CATALOG.md").read_text()
    body = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in body.splitlines():
        if line.startswith("| `"):
            rows.append([c.strip().strip("`") for c in line.strip().strip("|").split("|")])
    return rows


@pytest.mark.corpus
def test_corpus_segment_totals_equal_catalog(corpus_root):
    rows = _catalog_rows("Segment files")
    assert len(rows) >= 190
    summary = (corpus_root / "CATALOG.md").read_text()
    m = re.search(r"segment \.log files: (\d+) .*?, (\d+) batches, (\d+) records", summary)
    n_files, n_batches, n_records = map(int, m.groups())
    assert len(rows) == n_files
    tb = tr = 0
    for row in rows:
        path, batches, records = corpus_root / row[0], int(row[2]), int(row[5])
        data = path.read_bytes()
        recs, nb = ours(data)
        assert (nb, len(recs)) == (batches, records), row[0]
        tb += nb
        tr += len(recs)
    assert (tb, tr) == (n_batches, n_records)


@pytest.mark.corpus
def test_corpus_snapshot_totals_equal_catalog(corpus_root):
    rows = _catalog_rows("KRaft snapshot files (aggregated per partition directory)")
    assert rows
    per_dir = defaultdict(lambda: [0, 0, 0])
    for f in corpus_snapshot_files():
        recs, nb = ours(f.read_bytes())
        d = per_dir[f.parent.relative_to(corpus_root).as_posix()]
        d[0] += 1
        d[1] += nb
        d[2] += len(recs)
    for row in rows:
        assert per_dir[row[0]] == [int(row[1]), int(row[2]), int(row[3])], row[0]


def test_zigzag14_table_is_kafka_pythons_varint_decode():
    """records.ZIGZAG14[b0 & 0x7F | b1 << 7] is the value of a one- or two-byte varint;
    kafka-python's decode_varint reads the same bytes."""
    from kafka.record.util import decode_varint

    from kafkalog_cli.format.record import ZIGZAG14

    assert len(ZIGZAG14) == 1 << 14
    for v in range(1 << 14):
        raw = bytes([v]) if v < 0x80 else bytes([v & 0x7F | 0x80, v >> 7])
        assert ZIGZAG14[v] == decode_varint(bytearray(raw), 0)[0]
