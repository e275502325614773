"""ops.produce's failure guarantees with compression: a bad input line leaves every
complete batch before it written, a failed append leaves nothing after it written (the
records counted as dropped)."""

import io
import random

import pytest

from kafkalog_cli.errors import ProduceError
from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.ops.produce import ProduceOptions, iter_inputs, produce
from kafkalog_cli.ops.verify import verify_index
from kafkalog_cli.storage.clock import ManualClock
from kafkalog_cli.storage.config import LogConfig

T0 = 1_700_000_000_000


def run(d, text: bytes, **kw):
    opts = ProduceOptions(topic="t", topic_id="ABEiM0RVZneImaq7zN3u_w", **kw)
    return produce(d, opts, iter_inputs([], opts, stdin=io.BytesIO(text)),
                   clock=ManualClock(T0), fsync=False)


def values(d):
    out = []
    for p in sorted((d / "t-0").glob("*.log")):
        for b in FileRecords(p.read_bytes()).batches():
            out.extend(r.value for r in b.records())
    return out


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_bad_line_keeps_every_batch_before_it(tmp_path, codec):
    good = b"".join(b'{"key": "k", "value": "v%d"}\n' % i for i in range(1000))
    with pytest.raises(ProduceError) as e:
        run(tmp_path, good + b"{oops\n", input_format="jsonl", batch_size=30,
            compression=codec)
    assert "<stdin>:1001" in str(e.value)
    res = e.value.result
    # produce's contract: every record before the bad line is written, the last,
    # partial batch too (as kafka-console-producer has sent them)
    assert (res.records, res.dropped_records) == (1000, 0)
    assert values(tmp_path) == [b"v%d" % i for i in range(1000)]
    assert verify_index([tmp_path]).ok


@pytest.mark.parametrize("codec", ["lz4", "snappy"])
def test_failed_append_writes_nothing_after_it(tmp_path, codec):
    # record 200 is too large for max.message.bytes: its batch (records 200-249) is
    # refused whole and nothing after it is appended
    lines = [b"v%d" % i for i in range(600)]
    rng = random.Random(3)
    lines[200] = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(9000))
    cfg = LogConfig.from_properties({"max.message.bytes": "5000"})
    with pytest.raises(ProduceError, match="exceeds the maximum") as e:
        run(tmp_path, b"\n".join(lines) + b"\n", batch_size=50, compression=codec,
            config=cfg)
    assert values(tmp_path) == lines[:200]
    # the refused batch is counted as dropped
    res = e.value.result
    assert (res.records, res.dropped_records) == (200, 50)
    assert verify_index([tmp_path]).ok
