"""The construct schemas (the declared format) and the fast reader in format/records.py
must agree on every batch of the fixtures and of the real corpus."""

from __future__ import annotations

import construct as c
import pytest
from kafkalog_testkit import corpus_log_files, corpus_snapshot_files, fixture_log_files

from kafkalog_cli.format import compression
from kafkalog_cli.format.record_batch import RecordBatch
from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.schema.legacy import LegacyLogEntry, LegacyMessageSet
from kafkalog_cli.schema.record import Records
from kafkalog_cli.schema.record_batch import RecordBatch as SchemaBatch
from kafkalog_cli.schema.record_batch import RecordBatchHeader

#: construct decodes records ~100x slower than the fast path; on the corpus records are
#: compared for the first batches of every file (headers and CRCs for all of them)
CORPUS_RECORD_BATCHES_PER_FILE = 8


def _check_v2(batch: RecordBatch, with_records: bool) -> int:
    raw = batch.raw()
    try:
        # the whole batch, CRC-32C checked; its header is RecordBatchHeader's fields
        parsed = SchemaBatch.parse(raw)
        schema_valid = True
        prefix, crc, hh = parsed.prefix, parsed.crc, parsed.covered.value.header
    except c.CheckError:
        parsed, schema_valid = None, False
        h = RecordBatchHeader.parse(raw)
        prefix, crc, hh = h.prefix, h.crc, h.header
    assert schema_valid == batch.is_valid
    a = hh.attributes
    attrs = (a.compression | a.timestamp_type << 3 | a.is_transactional << 4
             | a.is_control_batch << 5 | a.has_delete_horizon_ms << 6)
    assert (prefix.base_offset, prefix.length, prefix.partition_leader_epoch,
            prefix.magic, crc) == (batch.base_offset, batch.length,
                                   batch.partition_leader_epoch, batch.magic, batch.crc)
    assert attrs == batch.attributes & 0x7F
    assert (hh.last_offset_delta, hh.base_timestamp, hh.max_timestamp, hh.producer_id,
            hh.producer_epoch, hh.base_sequence, hh.records_count) == (
        batch.last_offset_delta, batch.base_timestamp, batch.max_timestamp, batch.producer_id,
        batch.producer_epoch, batch.base_sequence, batch.records_count)
    if not with_records or not schema_valid:
        return 0
    block = parsed.covered.value.records
    if a.compression:
        block = compression.decompress(a.compression, block)
    recs = Records.parse(block)
    assert len(recs) == hh.records_count
    lat = hh.max_timestamp if a.timestamp_type else None
    expected = [(prefix.base_offset + r.offset_delta,
                 lat if lat is not None else hh.base_timestamp + r.timestamp_delta,
                 r.key, r.value, tuple((x.key, x.value) for x in r.headers)) for r in recs]
    fast = [(r.offset, r.timestamp, None if r.key is None else bytes(r.key),
             None if r.value is None else bytes(r.value),
             tuple((k, None if v is None else bytes(v)) for k, v in r.headers))
            for r in batch.records()]
    assert fast == expected
    return len(fast)


def _check_legacy(batch) -> int:
    e = LegacyLogEntry.parse(batch.raw())
    body = e.message.body.value
    assert (e.offset, e.message.crc, body.magic, body.attributes) == \
        (batch.offset, batch.crc, batch.magic, batch.attributes)
    assert (-1 if body.timestamp is None else body.timestamp) == batch.timestamp
    assert (body.key, body.value) == (batch.key, batch.value)
    assert batch.is_valid
    codec = body.attributes & 7
    if not codec:
        return 1
    inner = LegacyMessageSet.parse(compression.decompress(codec, body.value, magic=body.magic))
    fast = batch.inner()
    assert len(inner) == len(fast)
    n = len(inner)
    for i, (s, f) in enumerate(zip(inner, fast, strict=True)):
        sb = s.message.body.value
        # v0 inner offsets are absolute; v1 relative to the wrapper's (last) offset
        off = s.offset if body.magic == 0 else e.offset - (inner[-1].offset - s.offset)
        assert f.offset == off
        assert f.offset == (e.offset - n + 1 + i if body.magic == 1 else s.offset)
        assert (sb.key, sb.value, s.message.crc) == (f.key, f.value, f.crc)
        ts = -1 if sb.timestamp is None else sb.timestamp
        if body.attributes & 8:  # LogAppendTime: inner records take the wrapper's
            ts = body.timestamp
        assert f.timestamp == ts
    return n


def _twin(path, record_batches: int | None) -> tuple[int, int]:
    data = path.read_bytes()
    fr = FileRecords(data)
    batches = records = 0
    for i, b in enumerate(fr.batches()):
        batches += 1
        if isinstance(b, RecordBatch):
            records += _check_v2(b, record_batches is None or i < record_batches)
        else:
            records += _check_legacy(b)
    return batches, records


@pytest.mark.parametrize("path", fixture_log_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_twin_on_fixtures(path):
    batches, _ = _twin(path, None)
    assert batches > 0


def test_twin_detects_the_flipped_byte(fixtures_root):
    fr = FileRecords((fixtures_root / "corrupt-crc-0" / "00000000000000000000.log").read_bytes())
    valid = [b.is_valid for b in fr.batches()]
    assert valid.count(False) == 1 and not valid[2]


@pytest.mark.corpus
@pytest.mark.slow
def test_twin_on_corpus(corpus_root):
    files = corpus_log_files() + corpus_snapshot_files()
    assert len(files) > 300
    total = 0
    for f in files:
        b, _ = _twin(f, CORPUS_RECORD_BATCHES_PER_FILE)
        total += b
    # CATALOG.md: 101203 batches in the .log files (snapshots add more)
    assert total > 101203
