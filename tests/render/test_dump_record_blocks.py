"""dump-segment's fast path (``DumpOptions.record_blocks``: ``records`` events rendered
per block, no dict per record) writes exactly what the reference path (a ``record`` event
per record, ``kafka_record_line`` / ``json_event``) writes: every output mode and option
combination, on every fixture and every real-broker segment."""

from __future__ import annotations

import io
from itertools import product

import pytest
from kafkalog_testkit import corpus_log_files, fixture_log_files

from kafkalog_cli.ops.dump import DumpFindings, DumpOptions, dump, record_events_of
from kafkalog_cli.render.dump import write_json, write_kafka

FIXTURES = fixture_log_files()
CORPUS = corpus_log_files()

#: (deep_iteration, print_data_log, skip_record_metadata, start/end offsets, bound)
OPTIONS = [
    dict(deep_iteration=d, print_data_log=p, skip_record_metadata=s)
    for d, p, s in product([False, True], [False, True], [False, True])
] + [
    dict(print_data_log=True, start_offset=3, end_offset=5),
    dict(print_data_log=True, start_offset=1),
    dict(deep_iteration=True, end_offset=2),
    dict(print_data_log=True, max_decompressed_bytes=200),
    dict(print_data_log=True, decoder="none"),
]


def _render(paths, opts: DumpOptions, mode: str, encoding: str) -> tuple[str, str, bool]:
    out, err = io.StringIO(), io.StringIO()
    findings = DumpFindings()
    events = findings.watch(dump(paths, opts))
    if mode == "kafka":
        write_kafka(events, skip_record_metadata=opts.skip_record_metadata,
                    with_data=opts.print_data_log, out=out, err=err)
    else:
        write_json(events, encoding=encoding, with_data=opts.print_data_log, out=out,
                   err=err)
    return out.getvalue(), err.getvalue(), findings.ok


def _both(paths, mode: str, encoding: str, **kw):
    ref = _render(paths, DumpOptions(**kw), mode, encoding)
    fast = _render(paths, DumpOptions(record_blocks=True, **kw), mode, encoding)
    return ref, fast


@pytest.mark.parametrize("kw", OPTIONS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
@pytest.mark.parametrize("mode,encoding", [("kafka", "utf8"), ("json", "utf8"),
                                           ("json", "base64"), ("json", "hex")])
def test_fast_path_is_the_reference_on_the_fixtures(mode, encoding, kw):
    for log in FIXTURES:
        ref, fast = _both([log], mode, encoding, **kw)
        assert fast == ref, log


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS, reason="real corpus not present at ../shared/corpus/real")
@pytest.mark.parametrize("kw", [dict(print_data_log=True), dict(deep_iteration=True),
                                dict(print_data_log=True, skip_record_metadata=True),
                                dict(print_data_log=True, start_offset=10, end_offset=40)],
                         ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
@pytest.mark.parametrize("mode", ["kafka", "json"])
def test_fast_path_is_the_reference_on_the_corpus(mode, kw):
    for log in CORPUS:
        ref, fast = _both([log], mode, "utf8", **kw)
        assert fast == ref, log


def test_the_fast_path_is_taken_and_blocks_are_bounded(tmp_path):
    """A plain fixture's records come as ``records`` events, and a block never holds
    more than RECORD_BLOCK records; expanded, they are the reference's record events."""
    from kafkalog_cli.ops import dump as dump_mod

    log = next(p for p in FIXTURES if p.parent.name == "headers-0")
    kinds = [ev["type"] for ev in dump([log], DumpOptions(print_data_log=True,
                                                          record_blocks=True))]
    assert "records" in kinds and "record" not in kinds
    blocks = [ev for ev in dump([log], DumpOptions(print_data_log=True, record_blocks=True))
              if ev["type"] == "records"]
    expanded = [r for ev in blocks for r in record_events_of(ev, True)]
    ref = [ev for ev in dump([log], DumpOptions(print_data_log=True))
           if ev["type"] == "record"]
    assert expanded == ref
    assert all(len(ev["records"]) <= dump_mod.RECORD_BLOCK for ev in blocks)


@pytest.mark.parametrize("kw", [dict(print_data_log=True), dict(deep_iteration=True),
                                dict(print_data_log=True, end_offset=3),
                                dict(print_data_log=True, start_offset=0)],
                         ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
@pytest.mark.parametrize("mode", ["kafka", "json"])
def test_fast_path_is_the_reference_on_hostile_offsets(tmp_path, mode, kw):
    """Negative and out-of-order offsets, a sequence wrapping past INT32_MAX, bytes that
    are not UTF-8: the same lines (and the same non-consecutive offsets report)."""
    from kafkalog_testkit import raw_batch, raw_record

    recs = [raw_record(d, 0, k, v, h) for d, k, v, h in (
        (0, b"k", b"\xff\xfe", ()), (-5, None, b"v", ((b"h", b"\xc3"),)),
        (2, b"\xe2\x82", None, ((b"a", None), (b"\xff", b"x"))), (1, b"", b"", ()))]
    log = tmp_path / "t-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(raw_batch(-3, recs, base_seq=2**31 - 2, pid=7, epoch=0, last_delta=3)
                    + raw_batch(10, recs[:2]))
    for enc in (("utf8", "base64") if mode == "json" else ("utf8",)):
        ref, fast = _both([log], mode, enc, **kw)
        assert fast == ref
