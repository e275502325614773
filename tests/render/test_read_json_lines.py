"""read -o json's line builder (``render.read.json_line``: templates, no dict) writes
exactly ``json.dumps(ConsumerRecord.to_dict())`` (the reference) for every record of
every fixture partition and every real-broker partition, in each data encoding; and the
records before a failure are still written when lines are written a block at a time."""

from __future__ import annotations

import io
import json

import pytest
from kafkalog_testkit import CORPUS, FIXTURES

from kafkalog_cli.errors import KafkalogError
from kafkalog_cli.ops.read import ConsumerRecord, consume, open_partition
from kafkalog_cli.render.read import FormatterConfig, json_line, write_console, write_json

DUMPS = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _partitions(root):
    return sorted({p.parent for p in root.rglob("*.log")}) if root.is_dir() else []


def _records(pdir):
    try:
        log = open_partition(pdir)
        return list(consume(log, log.log_start_offset, check_crcs=False))
    except KafkalogError:
        return []


def _check(pdirs):
    seen = 0
    for pdir in pdirs:
        for rec in _records(pdir):
            for enc in ("utf8", "base64", "hex"):
                assert json_line(rec, enc) == DUMPS(rec.to_dict(enc)), (pdir, rec.offset)
            seen += 1
    return seen


def test_json_line_is_to_dict_on_the_fixtures():
    assert _check(_partitions(FIXTURES)) > 50


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_dir(), reason="real corpus not present")
def test_json_line_is_to_dict_on_the_corpus():
    assert _check(_partitions(CORPUS)) > 1000


def test_odd_bytes_and_headers():
    recs = [ConsumerRecord("t", 0, 1, 5, "CreateTime", b"\xff\x00", "é\n\"".encode(),
                           (("h\u2028", None), ("x", b"\xc3"), ("", b"")), None),
            ConsumerRecord("t\\", 2, 3, -1, "LogAppendTime", None, None, (), 7)]
    for rec in recs:
        for enc in ("utf8", "base64", "hex"):
            assert json_line(rec, enc) == DUMPS(rec.to_dict(enc))


def _failing(n):
    for i in range(n):
        yield ConsumerRecord("t", 0, i, 0, "CreateTime", None, b"v%d" % i)
    raise KafkalogError("boom")


@pytest.mark.parametrize("n", [3, 1500])
def test_records_before_an_error_are_written(n):
    out = io.StringIO()
    with pytest.raises(KafkalogError):
        write_json(_failing(n), out=out)
    assert out.getvalue().count("\n") == n
    bout = io.BytesIO()
    with pytest.raises(KafkalogError):
        write_console(_failing(n), FormatterConfig(), out=bout)
    assert bout.getvalue().count(b"\n") == n
