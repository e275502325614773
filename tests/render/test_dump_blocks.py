"""dump-segment's records events that carry their batch's block (``ops.dump._dense_block``:
the compiled core walks the block, no Record tuple per record) render the bytes of the
reference Python loops (``kafka_record_lines``, ``json_record_lines`` on the decoded
records), on batches built by kafka-python's builder (a peer's bytes): null keys and
values, odd UTF-8, headers, LogAppendTime, base sequences that wrap; and a block the walk
does not take (offsets that are not dense, corrupt bytes) gets no block event."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog_cli.crc import crc32c
from kafkalog_cli.format import records as R
from kafkalog_cli.ops import dump as D
from kafkalog_cli.render import dump as rd

kp = pytest.importorskip("kafka.record.default_records")

pytestmark = pytest.mark.skipif(D._block_is_dense is None or rd._c is None,
                                reason="the compiled core is not in use")

ODD = [b"\xc0\x80", b"\xed\xa0\x80", b"\xff", b"\xe2\x82", "\u20ac".encode(),
       "\U0001f600".encode(), b'"\\\x00\x1f\n', b"plain"]
data = st.one_of(st.none(), st.sampled_from(ODD), st.binary(max_size=40))
record = st.tuples(data, data, st.lists(st.tuples(st.sampled_from(["h", "\u00e9", "a,b", ""]),
                                                  data), max_size=3),
                   st.integers(-(1 << 40), 1 << 40))


def build(recs, *, base_offset=0, base_sequence=-1, log_append=False, deltas=None):
    b = kp.DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                     producer_id=7 if base_sequence >= 0 else -1,
                                     producer_epoch=0, base_sequence=base_sequence,
                                     batch_size=1 << 20)
    for i, (k, v, hs, ts) in enumerate(recs):
        b.append(i if deltas is None else deltas[i], timestamp=1_700_000_000_000 + ts,
                 key=k, value=v, headers=hs)
    raw = bytearray(b.build())
    raw[0:8] = base_offset.to_bytes(8, "big")
    if log_append:  # attributes bit 3, and the CRC over attributes.. again
        raw[22] |= 8
        raw[17:21] = crc32c(bytes(raw[21:])).to_bytes(4, "big")
    return next(R.FileRecords(bytes(raw)).batches())


def events(batch):
    opts = D.DumpOptions(print_data_log=True)
    return list(D._record_blocks(batch, opts, "f"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(record, min_size=1, max_size=6), st.sampled_from([-1, 0, (1 << 31) - 3]),
       st.booleans(), st.sampled_from([0, 5, (1 << 62)]))
def test_block_events_render_the_reference_bytes(recs, base_seq, log_append, base_offset):
    batch = build(recs, base_offset=base_offset, base_sequence=base_seq, log_append=log_append)
    [ev] = events(batch)
    assert "block" in ev
    ref = {"type": "records", "file": "f", "batch": batch,
           "records": batch.iter_records()}
    for skip in (False, True):
        for with_data in (False, True):
            got = rd.kafka_record_bytes(dict(ev), skip, with_data)
            want = rd.kafka_record_lines(ref, skip, with_data)
            assert (got if isinstance(got, str) else got.decode()) == want
    for enc in ("utf8", "base64", "hex"):
        got = rd.json_record_bytes(dict(ev), enc, True)
        want = rd.json_record_lines(ref, enc, True)
        assert (got if isinstance(got, str) else got.decode()) == want


def test_offsets_not_dense_or_corrupt_take_the_record_path():
    recs = [(b"k", b"v", [], 0), (None, b"w", [], 1)]
    assert "block" not in events(build(recs, deltas=[0, 2]))[0]  # a compacted batch
    batch = build(recs)
    block = batch.small_block()
    assert D._block_is_dense(block, 2)
    assert not D._block_is_dense(block, 3) and not D._block_is_dense(block, 1)
    assert not D._block_is_dense(block[:-1], 2)
    assert not D._block_is_dense(block + b"\x00", 2)


def test_header_key_not_utf8_falls_back_to_the_reference():
    batch = build([(b"k", b"v", [("hh", b"x")], 0)])
    raw = bytearray(batch.raw())
    i = raw.index(b"hh")
    raw[i:i + 2] = b"\xff\xfe"  # Utils.utf8 replaces them: the Python loop's job
    raw[17:21] = crc32c(bytes(raw[21:])).to_bytes(4, "big")
    batch = next(R.FileRecords(bytes(raw)).batches())
    [ev] = events(batch)
    assert rd._c.kafka_block(ev["block"], 1, 0, batch.base_timestamp, None, "CreateTime", -1,
                             False, True, rd.java_string) is None
    ref = {"type": "records", "file": "f", "batch": batch, "records": batch.iter_records()}
    assert rd.kafka_record_bytes(ev, False, True) == rd.kafka_record_lines(ref, False, True)
    assert "\ufffd" in rd.kafka_record_lines(ref, False, True)


# -- runs of batches: the batch lines formatted in C too (``batches`` events) -----------------

_ENC = __import__("json").JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def patched(batch, *, ple, attrs, pid, epoch, max_ts, bad_crc):
    """``batch`` with its header fields set (the records block left as it is: the codec
    bits only name a codec, the run carries the block), the CRC recomputed or broken."""
    raw = bytearray(batch.raw())
    raw[12:16] = ple.to_bytes(4, "big", signed=True)
    raw[21:23] = (int.from_bytes(raw[21:23], "big") | attrs).to_bytes(2, "big")
    raw[35:43] = max_ts.to_bytes(8, "big", signed=True)
    raw[43:51] = pid.to_bytes(8, "big", signed=True)
    raw[51:53] = epoch.to_bytes(2, "big", signed=True)
    raw[17:21] = ((crc32c(bytes(raw[21:])) ^ bad_crc) & 0xFFFFFFFF).to_bytes(4, "big")
    return next(R.FileRecords(bytes(raw)).batches())


header = st.fixed_dictionaries({
    "ple": st.sampled_from([-1, 0, 7, (1 << 31) - 1]),
    "attrs": st.sets(st.sampled_from([1, 2, 3, 4, 0x10, 0x40])).map(
        lambda s: (max((a for a in s if a < 8), default=0)) | sum(a for a in s if a >= 8)),
    "pid": st.sampled_from([-1, 0, (1 << 63) - 1]),
    "epoch": st.sampled_from([-1, 0, 32767]),
    "max_ts": st.integers(-(1 << 63), (1 << 63) - 1),
    "bad_crc": st.sampled_from([0, 0, 1]),
})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.lists(record, min_size=1, max_size=4), header,
                          st.sampled_from([-1, 0, (1 << 31) - 2]), st.booleans(),
                          st.sampled_from([0, 5, (1 << 62)])), min_size=1, max_size=3),
       st.sampled_from(["f", "d/\u00e9 \"q\"\\.log"]))
def test_batch_runs_render_the_reference_bytes(batches, file):
    """kafka_run / json_run (each batch's DumpLogSegments line or batch object, then its
    records' lines) give the bytes of the reference loops: kafka_batch_line and the JSON
    encoder on batch_event, kafka_record_lines / json_record_lines on the records."""
    runs, refs = [], []
    for recs, hdr, base_seq, log_append, base_offset in batches:
        batch = patched(build(recs, base_offset=base_offset, base_sequence=base_seq,
                              log_append=log_append), **hdr)
        block = bytes(batch.view[batch.position + 61:batch.position + batch.size])
        runs.append((batch, batch.is_valid, block))
        refs.append((D.batch_event(batch, file), {"type": "records", "file": file,
                                                  "batch": batch, "block": block}))
    ev = {"type": "batches", "file": file, "runs": runs}
    for skip in (False, True):
        for with_data in (False, True):
            want = "".join(rd.kafka_batch_line(b) + "\n"
                           + rd.kafka_record_lines(r, skip, with_data) for b, r in refs)
            got = rd._c.kafka_run(runs, skip, with_data, rd.java_string)
            if all(not any(h[0] == "\u00e9" for rec in recs for h in rec[2])
                   for recs, *_ in batches):
                assert got is not None
            if got is not None:
                assert got.decode() == want
            pieces = rd.kafka_run_bytes(ev, skip, with_data)
            assert "".join(p if isinstance(p, str) else p.decode() for p in pieces) == want
    for enc in ("utf8", "base64", "hex"):
        want = "".join(_ENC(rd.json_event(b, enc)) + "\n" + rd.json_record_lines(r, enc, True)
                       for b, r in refs)
        pieces = rd.json_run_bytes(ev, enc, True, _ENC)
        assert len(pieces) == 1  # the compiled run
        assert pieces[0].decode() == want


def test_batch_runs_stand_for_the_batch_and_records_events(tmp_path):
    """A .log's ``batches`` events hold what the ``batch`` and ``records`` events of the
    reference path hold, a batch failing its CRC check among them is a finding, and the
    kafka text of the dump is the same either way."""
    import io

    recs = [(b"k", b"v", [("h", b"x")], 0), (None, b"w", [], 1)]
    raws = []
    for i, bad in enumerate([0, 1, 0]):
        b = patched(build(recs, base_offset=2 * i), ple=0, attrs=0, pid=-1, epoch=-1,
                    max_ts=1_700_000_000_001, bad_crc=bad)
        raws.append(b.raw())
    log = tmp_path / "t-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(b"".join(raws))
    texts, findings = [], []
    for runs in (False, True):
        opts = D.DumpOptions(print_data_log=True, record_blocks=True, batch_runs=runs)
        f = D.DumpFindings()
        evs = list(f.watch(D.dump([log], opts)))
        assert ("batches" in {e["type"] for e in evs}) is runs
        out = io.StringIO()
        rd.write_kafka(evs, with_data=True, out=out)
        texts.append(out.getvalue())
        findings.append(f.bad_crc)
    assert texts[0] == texts[1] and "isvalid: false" in texts[0]
    assert findings[0] == findings[1] == {str(log): [len(raws[0])]}
