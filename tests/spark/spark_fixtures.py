"""Helpers of the Spark tests: generated log directories and a reference decode."""

from __future__ import annotations

from pathlib import Path

from kafkalog_cli.constants import CODEC_GZIP, CODEC_LZ4, CODEC_NONE, CODEC_SNAPPY, CODEC_ZSTD
from kafkalog_cli.format.builder import (
    build_batch,
    build_control_batch,
    build_legacy_message,
    build_legacy_wrapper,
)
from kafkalog_cli.storage.segment import LogSegment, rebuild_indexes

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / ".." / "shared" / "corpus" / "real"
T0 = 1_700_000_000_000


def corpus_partition_dirs(corpus: Path) -> list[Path]:
    """Every partition directory of the corpus (a directory whose name parses and that
    holds a .log)."""
    from kafkalog_cli.storage.files import parse_partition_dir_name

    out = set()
    for log in corpus.rglob("*.log"):
        if parse_partition_dir_name(log.parent.name) is not None:
            out.add(log.parent)
    return sorted(out)


# -- generated log directories ------------------------------------------------------------------

def write_segment(part_dir: Path, base: int, batches: list[bytes], interval: int = 512) -> None:
    part_dir.mkdir(parents=True, exist_ok=True)
    data = b"".join(batches)
    prefix = part_dir / f"{base:020d}"
    prefix.with_suffix(".log").write_bytes(data)
    rebuilt = rebuild_indexes(data, base, interval)
    prefix.with_suffix(".index").write_bytes(rebuilt.offset_index_bytes(base))
    prefix.with_suffix(".timeindex").write_bytes(rebuilt.time_index_bytes(base))


def _records(offset: int, n: int, *, headers: bool, tag: str) -> list:
    out = []
    for i in range(n):
        o = offset + i
        key = None if o % 7 == 0 else f"k{o % 13}".encode()
        value = None if o % 11 == 5 else (f"{tag}-{o}-" + "x" * (o % 40)).encode()
        hdrs = ((("h1", f"v{o}".encode()), ("h2", None)) if headers and o % 3 == 0 else ())
        out.append((T0 + o * 10, key, value, hdrs))
    return out


CODECS = [CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD]


def build_log_dir(root: Path) -> Path:
    """A log directory: orders-0..2 (3 segments each, mixed codecs, headers, one
    LogAppendTime batch), legacy-0 (v0/v1 messages, a gzip v1 wrapper) and txn-0
    (aborted, committed and open transactions; markers in a later segment)."""
    log = root / "kafka-logs"
    for p in range(3):
        d = log / f"orders-{p}"
        offset = 0
        for s in range(3):
            base = offset
            batches = []
            for b in range(25):
                n = 1 + (b * 7 + p) % 30
                recs = _records(offset, n, headers=True, tag=f"o{p}")
                lat = T0 + 99_999 if (s, b) == (1, 3) else None
                batches.append(build_batch(recs, base_offset=offset,
                                           compression_type=CODECS[(b + p) % len(CODECS)],
                                           log_append_time=lat, partition_leader_epoch=s))
                offset += n
            write_segment(d, base, batches)
    d = log / "legacy-0"
    msgs = [build_legacy_message(0, b"k0", b"v0", magic=0),
            build_legacy_message(1, None, b"v1", magic=0),
            build_legacy_message(2, b"k2", b"v2", magic=1, timestamp=T0 + 2),
            build_legacy_wrapper(3, [(T0 + 3, b"k3", b"v3"), (T0 + 4, None, b"v4"),
                                     (T0 + 5, b"k5", None)], magic=1,
                                 compression_type=CODEC_GZIP),
            build_legacy_message(6, b"k6", b"v6", magic=1, timestamp=T0 + 6)]
    write_segment(d, 0, msgs)
    build_txn_partition(log / "txn-0")
    return log


def build_txn_partition(d: Path) -> None:
    """txn-0: 0-2 plain, 3-5 pid 7 (aborted), 6-7 pid 8 (committed), 8-9 plain | new
    segment | 10 ABORT pid 7, 11 COMMIT pid 8, 12-13 pid 9 (never ended), 14 plain."""
    def data(o, n):
        return [(T0 + o + i, f"k{o + i}".encode(), f"t{o + i}".encode(), ()) for i in range(n)]

    seg0 = [build_batch(data(0, 3), base_offset=0),
            build_batch(data(3, 3), base_offset=3, is_transactional=True, producer_id=7,
                        producer_epoch=0, base_sequence=0),
            build_batch(data(6, 2), base_offset=6, is_transactional=True, producer_id=8,
                        producer_epoch=0, base_sequence=0),
            build_batch(data(8, 2), base_offset=8)]
    seg1 = [build_control_batch(0, base_offset=10, timestamp=T0 + 10, producer_id=7,
                                producer_epoch=0),
            build_control_batch(1, base_offset=11, timestamp=T0 + 11, producer_id=8,
                                producer_epoch=0),
            build_batch(data(12, 2), base_offset=12, is_transactional=True, producer_id=9,
                        producer_epoch=0, base_sequence=0),
            build_batch(data(14, 1), base_offset=14)]
    write_segment(d, 0, seg0, interval=64)
    write_segment(d, 10, seg1, interval=64)


# -- the reference: the library's read path, record by record ---------------------------------

def reference_rows(part_dirs) -> list[tuple]:
    """``(topic, partition, offset, timestamp ms, key, value, headers)`` of every non-control
    record, decoded with FileRecords/.records() directly."""
    from kafkalog_cli.storage.files import parse_partition_dir_name, segment_bases

    rows = []
    for d in part_dirs:
        tp = parse_partition_dir_name(Path(d).name)
        for base in segment_bases(Path(d), (".log",)):
            with LogSegment(d, base) as seg:
                for b in seg.records().batches():
                    if b.is_control:
                        continue
                    for r in b.records():
                        rows.append((tp.topic, tp.partition, r.offset, r.timestamp,
                                     None if r.key is None else bytes(r.key),
                                     None if r.value is None else bytes(r.value),
                                     tuple((k, None if v is None else bytes(v))
                                           for k, v in r.headers)))
    return sorted(rows, key=_key)


def _key(r):
    return (r[0], r[1], r[2], r[3], r[4] or b"", r[5] or b"", repr(r[6]))


def arrow_rows(table) -> list[tuple]:
    """The same tuples from an Arrow table of the Kafka-source columns."""
    cols = table.to_pydict()
    ts = table.column("timestamp").cast("int64").to_pylist()
    heads = cols.get("headers") or [None] * table.num_rows
    rows = []
    for t, p, o, tsu, k, v, h in zip(cols["topic"], cols["partition"], cols["offset"], ts,
                                     cols["key"], cols["value"], heads, strict=True):
        rows.append((t, p, o, tsu // 1000 if tsu >= 0 else -((-tsu) // 1000), k, v,
                     tuple((e["key"], e["value"]) for e in h) if h else ()))
    return sorted(rows, key=_key)
