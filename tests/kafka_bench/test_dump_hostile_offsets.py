"""dump-segment against the pinned DumpLogSegments on batches whose lastOffset leaves
int64 below (baseOffset near INT64_MIN, a negative lastOffsetDelta): the tool prints
DefaultRecordBatch.lastOffset, a Java long add that wraps, and kafkalog must print the
same bytes (one JVM, ~2.5 s; the unit tests are tests/format/test_last_offset_wraps.py)."""

from __future__ import annotations

import pytest
from kafka_testkit import kafka_tools_batch
from kafkalog_testkit import raw_batch, raw_record, run_cli_inprocess, write_partition

pytestmark = pytest.mark.kafka

INT64_MIN = -(1 << 63)
INT32_MAX = (1 << 31) - 1


def test_dump_segment_prints_the_tools_wrapped_last_offsets(tmp_path):
    cases = [(INT64_MIN, -1), (INT64_MIN, -INT32_MAX - 1), (INT64_MIN + 5, -7),
             (INT64_MIN + INT32_MAX + 1, -INT32_MAX - 1), (INT64_MIN, 0)]
    log = b"".join(raw_batch(base, [raw_record(0, 0, b"k", b"v")], last_delta=delta)
                   for base, delta in cases)
    seg = write_partition(tmp_path, "hostile-0", log) / "00000000000000000000.log"
    flag_sets = [(), ("--deep-iteration",)]
    results = kafka_tools_batch([("org.apache.kafka.tools.DumpLogSegments",
                                  [*flags, "--files", str(seg)]) for flags in flag_sets])
    for flags, kafka in zip(flag_sets, results, strict=True):
        ours = run_cli_inprocess("dump-segment", "-o", "kafka", *flags, "--files", str(seg))
        assert kafka.exit == 0, kafka.stderr
        assert " lastOffset: 9223372036854775807 " in kafka.stdout  # the wrap, as run
        assert (ours.returncode, ours.stdout) == (0, kafka.stdout), ours.stderr
