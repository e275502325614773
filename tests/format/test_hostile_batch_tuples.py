"""A hand-made RecordBatch tuple whose header claims more than its buffer holds: every
reader stops within the buffer, in a number of steps bounded by the bytes there, with
Kafka's error ("premature EOF"), in the compiled core and in pure Python.

Found triaging the perf-decode round's Hypothesis run: a ``length`` near 2^62 over a
88-byte batch made :meth:`RecordBatch.block_pieces` yield an empty piece per 64 KiB of
the claim (2^46 of them), and with a ``recordsCount`` above the records held the record
loop took each one in turn (hours). The rendering core sized its output by the claimed
count (``kafka_block``/``json_block``: 2^31 - 1 records asked for 257 GB, past 2^56 the
size went negative: SystemError). The bounds here are counts of pieces and the process's
peak memory, not time.
"""

from __future__ import annotations

import json
import resource
from itertools import islice

import pytest
from kafkalog_testkit import raw_batch, raw_record

from kafkalog_cli.errors import InvalidRecordError
from kafkalog_cli.format import compiled, record_batch
from kafkalog_cli.format.record_batch import HEADER
from kafkalog_cli.render import dump as render_dump

P_BATCH = compiled.load_pure_python("record_batch")
RAW = raw_batch(0, [raw_record(i, 0, b"k", b"v") for i in range(3)])


def _batch(module, **fields):
    """The tuple of RAW with header fields replaced (names of HEADER_FIELDS' order)."""
    names = ["base_offset", "length", "partition_leader_epoch", "magic", "crc", "attributes",
             "last_offset_delta", "base_timestamp", "max_timestamp", "producer_id",
             "producer_epoch", "base_sequence", "records_count"]
    h = list(HEADER.unpack_from(RAW))
    for name, value in fields.items():
        h[names.index(name)] = value
    return tuple.__new__(module.RecordBatch, [memoryview(RAW), 0, *h])


@pytest.mark.parametrize("module", [record_batch, P_BATCH], ids=["compiled", "python"])
@pytest.mark.parametrize("length", [2**62, 2**31 - 1, 70_000])
def test_a_length_past_the_buffer_ends_with_the_buffer(module, length):
    b = _batch(module, length=length, records_count=100)
    # the bound: the 27 bytes of records in one piece, however much the length claims
    pieces = list(islice(b.block_pieces(), 1000))
    assert pieces == [bytes(RAW[61:])]
    # one run, its count for the decoder to check (record_pieces' contract)
    assert list(islice(b.record_pieces(), 1000)) == [(bytes(RAW[61:]), 100, 0)]
    for read in (b.records, lambda: list(b.iter_records()),
                 lambda: list(module.record_runs_summary(b)),
                 lambda: module.batch_records_into(b, [], [], [], [])):
        with pytest.raises(InvalidRecordError, match="premature EOF"):
            read()


@pytest.mark.parametrize("compiled_render", [True, False], ids=["compiled", "python"])
@pytest.mark.parametrize("count", [2**31 - 1, 2**62, 2**63 - 1])
def test_rendering_a_claimed_count_allocates_for_the_block(monkeypatch, compiled_render,
                                                           count):
    if not compiled_render:
        monkeypatch.setattr(render_dump, "_c", None)
    b = _batch(record_batch, records_count=count)
    ev = {"type": "batches", "file": "f", "runs": [(b, True, bytes(RAW[61:]))]}
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for render in (lambda: render_dump.kafka_run_bytes(ev, False, True),
                   lambda: render_dump.json_run_bytes(ev, "utf8", True, json.dumps)):
        with pytest.raises(InvalidRecordError, match="premature EOF"):
            render()
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 64 * 1024, f"peak memory grew {grown_kib} KiB for a 27-byte block"
