"""ops.produce with compression in a worker thread: same files as inline compression,
and the failure guarantees hold with batches still staged or being compressed: a bad
input line leaves every complete batch before it written, a failed append leaves nothing
after it written (the records counted as dropped)."""

import hashlib
import io
import random

import pytest

from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.ops import produce as produce_mod
from kafkalog_cli.ops.produce import ProduceError, ProduceOptions, iter_inputs, produce
from kafkalog_cli.ops.verify import verify_index
from kafkalog_cli.storage.clock import ManualClock
from kafkalog_cli.storage.config import LogConfig

T0 = 1_700_000_000_000


def run(d, text: bytes, **kw):
    opts = ProduceOptions(topic="t", topic_id="ABEiM0RVZneImaq7zN3u_w", **kw)
    return produce(d, opts, iter_inputs([], opts, stdin=io.BytesIO(text)),
                   clock=ManualClock(T0), fsync=False)


def digest(d) -> str:
    h = hashlib.sha256()
    for p in sorted(q for q in d.rglob("*") if q.is_file()
                    and q.name not in (".lock", "meta.properties")):
        h.update(str(p.relative_to(d)).encode() + p.read_bytes())
    return h.hexdigest()


def values(d):
    out = []
    for p in sorted((d / "t-0").glob("*.log")):
        for b in FileRecords(p.read_bytes()).batches():
            out.extend(r.value for r in b.records())
    return out


@pytest.fixture
def small_groups(monkeypatch):
    # several groups in flight even for small inputs
    monkeypatch.setattr(produce_mod, "_GROUP_BYTES", 3000)


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_worker_thread_writes_the_same_files(tmp_path, small_groups, codec):
    text = b"".join(b"%d:" % i + b"x" * (i % 500) + b"\n" for i in range(5000))
    cfg = LogConfig.from_properties({"segment.bytes": "100000"})
    for threads in (0, 1):
        run(tmp_path / str(threads), text, compression=codec, batch_size=50,
            compression_threads=threads, config=cfg, producer_id=4)
    assert digest(tmp_path / "0") == digest(tmp_path / "1")


@pytest.mark.parametrize("threads", [0, 1])
def test_bad_line_keeps_every_batch_before_it(tmp_path, small_groups, threads):
    good = b"".join(b'{"key": "k", "value": "v%d"}\n' % i for i in range(1000))
    with pytest.raises(ProduceError) as e:
        run(tmp_path, good + b"{oops\n", input_format="jsonl", batch_size=30,
            compression="gzip", compression_threads=threads)
    assert "<stdin>:1001" in str(e.value)
    res = e.value.result
    assert (res.records, res.dropped_records) == (990, 10)
    assert values(tmp_path) == [b"v%d" % i for i in range(990)]
    assert verify_index([tmp_path]).ok


@pytest.mark.parametrize("threads", [0, 1])
def test_failed_append_writes_nothing_after_it(tmp_path, small_groups, threads):
    # record 200 is too large for max.message.bytes: its batch fails; later ones are
    # dropped even though they were already built (and compressed)
    lines = [b"v%d" % i for i in range(600)]
    rng = random.Random(3)
    lines[200] = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(9000))
    cfg = LogConfig.from_properties({"max.message.bytes": "5000"})
    with pytest.raises(ProduceError, match="exceeds the maximum") as e:
        run(tmp_path, b"\n".join(lines) + b"\n", batch_size=50, compression="lz4",
            compression_threads=threads, config=cfg)
    assert values(tmp_path) == lines[:200]
    # the failing batch and whatever was built after it are counted as dropped
    res = e.value.result
    assert res.records == 200 and res.dropped_records >= 50
    assert verify_index([tmp_path]).ok
