"""The rows layer's vectorised group path (format/vectorized.py) gives exactly the rows,
statistics and errors of the list path (decode_records_into, the reference), on
generated data, the fixtures and the real corpus. No Spark session: read_slices runs in
this process, once as shipped and once with the group path turned off."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from spark_fixtures import T0, build_log_dir, build_txn_partition, write_segment

pa = pytest.importorskip("pyarrow")
np = pytest.importorskip("numpy")

from kafkalog_cli.constants import CODEC_GZIP, CODEC_LZ4, CODEC_NONE, CODEC_ZSTD  # noqa: E402
from kafkalog_cli.errors import KafkalogError  # noqa: E402
from kafkalog_cli.format import vectorized as fastdecode  # noqa: E402
from kafkalog_cli.format.builder import build_batch  # noqa: E402
from kafkalog_cli.format.record import decode_records_into  # noqa: E402
from kafkalog_cli.format.records import FileRecords  # noqa: E402
from kafkalog_cli.spark import plan, rows  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / ".." / "shared" / "corpus" / "real"


def plain_log_dir(root: Path) -> Path:
    """No headers (the group path's shape), every codec, null keys and values, one
    LogAppendTime batch, one batch with a 9 KiB value (3-byte varints: the list path)
    and one whose timestamps step by 10 s (3-byte deltas)."""
    log = root / "kafka-logs"
    rnd = random.Random(5)
    for p in range(2):
        d = log / f"plain-{p}"
        offset = 0
        for s in range(3):
            base = offset
            batches = []
            for b in range(30):
                n = rnd.randint(1, 60)
                step = 10_000 if (s, b) == (2, 4) else 3
                recs = [(T0 + (offset + i) * step, None if (offset + i) % 5 == 0 else
                         b"k%d" % (offset + i),
                         None if (offset + i) % 9 == 4 else
                         b"v" * ((offset + i) * 7 % 300), ()) for i in range(n)]
                if (p, s, b) == (1, 1, 7):
                    recs[0] = (recs[0][0], b"big", b"x" * 9000, ())
                codec = [CODEC_NONE, CODEC_GZIP, CODEC_LZ4, CODEC_ZSTD][(b + p) % 4]
                lat = T0 + 5 if (s, b) == (0, 2) else None
                batches.append(build_batch(recs, base_offset=offset, compression_type=codec,
                                           log_append_time=lat, partition_leader_epoch=s,
                                           producer_id=40 + p, producer_epoch=1,
                                           base_sequence=offset))
                offset += n
            write_segment(d, base, batches, interval=256)
    build_txn_partition(log / "txn-0")
    return log


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Path:
    return plain_log_dir(tmp_path_factory.mktemp("plain"))


def read_all(paths, options: dict, fast: bool, monkeypatch):
    """(table, stats) of read_slices over every split, or the error (type, text)."""
    monkeypatch.setattr(fastdecode, "AVAILABLE", fast)
    monkeypatch.setattr(fastdecode, "ROWS", fast)
    opts = plan.parse_options({"minPartitions": "3", **options})
    splits, _ = plan.plan_slices(plan.discover([str(p) for p in paths]), opts)
    stats = rows.ReadStats()
    try:
        batches = [rb for split in splits for rb in rows.read_slices(split, opts, stats)]
    except KafkalogError as e:
        return "error", (type(e).__name__, str(e))
    table = pa.Table.from_batches(batches, rows.arrow_schema(opts.include_headers,
                                                              opts.include_batch_metadata))
    return table, (stats.rows, stats.corrupt_batches, stats.corrupt_bytes,
                   stats.partial_tail_bytes, stats.aborted_records, stats.skipped)


def same(paths, options, monkeypatch):
    slow = read_all(paths, options, False, monkeypatch)
    fast = read_all(paths, options, True, monkeypatch)
    if slow[0] == "error":
        assert fast == slow
    else:
        assert fast[1] == slow[1]
        assert fast[0].equals(slow[0]), "rows differ"
    return slow


OPTIONS = [
    {},
    {"includeHeaders": "true", "includeBatchMetadata": "true"},
    {"startingOffsets": '{"plain":{"0":17,"1":-2}}', "endingOffsets": '{"plain":{"0":400}}'},
    {"startingOffsets": '{"plain":{"1":1000}}', "includeHeaders": "true"},
    {"isolationLevel": "read_committed"},
]


@pytest.mark.parametrize("options", OPTIONS)
def test_generated_plain(plain, options, monkeypatch):
    table, stats = same([plain], options, monkeypatch)
    assert table.num_rows == stats[0] > 0


@pytest.mark.parametrize("options", OPTIONS[:2])
def test_generated_with_headers_and_legacy(tmp_path, options, monkeypatch):
    same([build_log_dir(tmp_path)], options, monkeypatch)


def test_group_path_is_taken(plain, monkeypatch):
    calls = []
    real = fastdecode.decode_rows
    def spy(*a):
        calls.append(real(*a) is not None)
        return real(*a)

    monkeypatch.setattr(fastdecode, "decode_rows", spy)
    table, _ = read_all([plain / "plain-0"], {}, True, monkeypatch)
    assert any(calls) and table.num_rows


@pytest.mark.parametrize("fail", ["true", "false"])
def test_corrupt_records_same_losses(plain, tmp_path, fail, monkeypatch):
    """Corrupt records blocks (with valid CRCs: the decode must catch them), a bad CRC
    and a torn tail: same rows, same skipped list (in file order), same error."""
    import shutil

    from kafkalog_cli.format.record_batch import crc32c

    d = tmp_path / "kafka-logs" / "plain-0"
    shutil.copytree(plain / "plain-0", d)
    seg = sorted(d.glob("*.log"))[1]
    data = bytearray(seg.read_bytes())
    batches = list(FileRecords(bytes(data)).batches())
    plain_batches = [b for b in batches[:24] if not b.compression][:3]
    assert len(plain_batches) == 3
    for i, b in enumerate(plain_batches):
        p = b.position
        if i == 0:
            data[p + 61] = 0x01  # first record's length -1
        else:  # recordsCount one too many / too few
            data[p + 57:p + 61] = (b.count + (1 if i == 1 else -1)).to_bytes(4, "big")
        data[p + 17:p + 21] = crc32c(bytes(data[p + 21:p + 12 + b.length])).to_bytes(4, "big")
    data[batches[25].position + 30] ^= 1  # CRC mismatch
    seg.write_bytes(bytes(data[:-7]))
    out = same([d.parent], {"failOnDataLoss": fail}, monkeypatch)
    if fail == "false":
        # 3 blocks, a CRC and the torn tail: the segment is not the partition's last, so
        # its torn end is data loss, not a partial tail
        assert out[1][1] == 5 and out[1][3] == 0


# -- decode_group against decode_records_into, block by block -------------------------------

def blocks_of(log: bytes):
    for b in FileRecords(log).batches():
        if b.magic >= 2 and not b.is_control:
            yield b


def group_vs_list(blocks):
    """decode_group over ``blocks`` ((data, count, base_offset, base_ts)) vs the list path:
    equal when the group path accepts, and it accepts every block in its shape."""
    positions, bases, counts, size = [], [], [], 0
    for data, count, _, _ in blocks:
        if not fastdecode.scan_lengths(data, count, positions):
            return None
        bases.append(size)
        counts.append(count)
        size += len(data)
    got = fastdecode.decode_group(b"".join(b[0] for b in blocks), positions, bases, counts)
    o, t, k, v, h = [], [], [], [], []
    try:
        for data, count, _, _ in blocks:
            n0 = len(o)
            decode_records_into(data, count, 0, 0, None, o, t, k, v, h)
            assert len(o) - n0 == count
    except KafkalogError:
        assert got is None
        return None
    if any(h):
        assert got is None
        return None
    if got is None:  # only longer varints are refused
        assert any(not -8192 <= x < 8192 for x in o + t) or any(
            len(x) >= 8192 for x in k + v if x is not None)
        return None
    ts, od, keys, values = got
    assert list(ts) == t and list(od) == o
    assert keys.to_pylist() == k and values.to_pylist() == v
    return len(o)


def test_decode_group_random_blocks():
    rnd = random.Random(11)
    for _ in range(40):
        blocks = []
        for _ in range(rnd.randint(1, 6)):
            n = rnd.randint(1, 40)
            recs = [(T0 + rnd.choice([0, 1, 100, 9000, -70]) * i,
                     rnd.choice([None, b"", b"k" * rnd.randint(1, 70)]),
                     rnd.choice([None, b"", b"v" * rnd.randint(1, 9000)]),
                     rnd.choice([(), (), (("h", b"1"),)])) for i in range(n)]
            raw = build_batch(recs)
            b = next(FileRecords(raw).batches())
            blocks.append((b.records_block(), b.count, 0, 0))
        group_vs_list(blocks)


def test_decode_group_every_byte_flip_and_cut():
    recs = [(T0 + i, b"k%d" % i if i % 3 else None, b"v" * (i * 13), ()) for i in range(12)]
    b = next(FileRecords(build_batch(recs)).batches())
    block = b.records_block()
    assert group_vs_list([(block, 12, 0, 0)]) == 12
    for i in range(len(block)):
        for x in (0x00, 0x01, 0x7F, 0x80, 0xFF):
            m = bytearray(block)
            m[i] = x
            group_vs_list([(bytes(m), 12, 0, 0), (block, 12, 0, 0)])
        group_vs_list([(block[:i], 12, 0, 0)])
        group_vs_list([(block, 12, 0, 0), (block[:i], 12, 0, 0)])
    for count in (0, 11, 13, -1):
        assert group_vs_list([(block, count, 0, 0)]) is None


def corpus_logs():
    return sorted(CORPUS.rglob("*.log")) if CORPUS.is_dir() else []


@pytest.mark.corpus
@pytest.mark.skipif(not corpus_logs(), reason="real corpus absent")
def test_decode_group_on_corpus():
    n = 0
    for path in corpus_logs():
        blocks = []
        for b in blocks_of(path.read_bytes()):
            try:
                blocks.append((b.records_block(), b.count, 0, 0))
            except KafkalogError:
                continue
        for i in range(0, len(blocks), 50):
            n += group_vs_list(blocks[i:i + 50]) or 0
    assert n


@pytest.mark.corpus
@pytest.mark.skipif(not corpus_logs(), reason="real corpus absent")
def test_read_slices_on_corpus(monkeypatch):
    from spark_fixtures import corpus_partition_dirs

    dirs = corpus_partition_dirs(CORPUS.resolve())
    same(dirs, {"failOnDataLoss": "false", "includeHeaders": "true"}, monkeypatch)


def test_fixture_logs(monkeypatch):
    from spark_fixtures import corpus_partition_dirs

    dirs = corpus_partition_dirs(REPO / "fixtures" / "logs")
    assert dirs
    same(dirs, {"failOnDataLoss": "false", "includeHeaders": "true"}, monkeypatch)

