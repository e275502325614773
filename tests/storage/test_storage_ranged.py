"""Ranged reads of a remote segment (storage.ranged) against FileRecords over the whole
file: the same batches at the same positions, the same ``valid_end``/``stop_error``,
whatever the window boundaries, on valid and on hostile bytes; and only the ranges a
read goes through are fetched.

The "remote" filesystem here is pyarrow's LocalFileSystem behind a RemotePath (the same
code path as S3, without a server; the S3 tests run the real client)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

pafs = pytest.importorskip("pyarrow.fs")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kafkalog_cli.format.builder import build_batch  # noqa: E402
from kafkalog_cli.format.records import FileRecords  # noqa: E402
from kafkalog_cli.storage import ranged  # noqa: E402
from kafkalog_cli.storage.location import RemotePath, as_path, require_local  # noqa: E402
from kafkalog_cli.storage.segment import LogSegment, open_view  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logs"


def remote(path: Path) -> RemotePath:
    return RemotePath(pafs.LocalFileSystem(), str(path), "test://")


def _summary(fr, stop_after: int | None = None):
    out = []
    for b in fr.batches():
        out.append((b.position, b.size, b.base_offset if b.magic >= 2 else b.last_offset))
        if stop_after is not None and len(out) >= stop_after:
            break
    err = fr.stop_error
    return out, fr.valid_end, None if err is None else (err.message, err.position)


def _batches(n: int, value: int) -> bytes:
    return b"".join(build_batch([(1_700_000_000_000 + i, b"k", b"v" * value, ())],
                                base_offset=i) for i in range(n))


@pytest.mark.parametrize("window", [17, 18, 61, 100, 4096, 1 << 20])
@pytest.mark.parametrize("name", ["multi-0/00000000000000000000.log",
                                  "legacy-v1-0/00000000000000000000.log",
                                  "corrupt-truncated-0/00000000000000000000.log",
                                  "corrupt-zero-tail-0/00000000000000000000.log",
                                  "gzip-0/00000000000000000000.log"])
def test_same_batches_as_the_whole_file(name, window, monkeypatch):
    monkeypatch.setattr(ranged, "FIRST_WINDOW", window)
    path = FIXTURES / name
    data = path.read_bytes()
    want = _summary(FileRecords(data))
    rf = ranged.RangedFile(remote(path))
    try:
        assert _summary(rf.records()) == want
        starts = sorted({p for p, _, _ in want[0]})
        for s in starts[1:3]:            # from a batch start, to the end or a bound
            assert _summary(rf.records(s)) == _summary(FileRecords(data, s))
            assert _summary(rf.records(0, s)) == _summary(FileRecords(data, 0, s))
    finally:
        rf.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(0, 4000), junk=st.binary(max_size=64), flip=st.integers(0, 3999),
       window=st.sampled_from([18, 64, 333, 1024]), start=st.integers(0, 200),
       whole=st.booleans())
def test_hostile_bytes_end_where_file_records_ends(tmp_path_factory, cut, junk, flip,
                                                   window, start, whole):
    """Truncated, overwritten or garbage-appended segments: RangedRecords stops exactly
    where FileRecords over the whole buffer stops, with the same error (also reading a
    whole range, the next window fetched on a thread)."""
    data = bytearray(_batches(12, 250)[:cut] + junk)
    if data:
        data[flip % len(data)] ^= 0x5A
    d = tmp_path_factory.mktemp("h")
    path = d / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    old = ranged.FIRST_WINDOW, ranged.WHOLE_RANGE_WINDOW
    ranged.FIRST_WINDOW = ranged.WHOLE_RANGE_WINDOW = window
    try:
        rf = ranged.RangedFile(remote(path))
        try:
            s = min(start, len(data))
            got = _summary(rf.records(s, len(data), whole_range=whole))
            assert got == _summary(FileRecords(bytes(data), s))
        finally:
            rf.close()
    finally:
        ranged.FIRST_WINDOW, ranged.WHOLE_RANGE_WINDOW = old


def test_a_batch_size_past_the_end_is_never_fetched(tmp_path):
    """A hostile size (2 GiB) in the 4th batch: the read stops there as FileRecords does,
    having fetched only what came before plus that header, not the 2 GiB it claims (nor
    the rest of the file)."""
    data = bytearray(_batches(10, 1000))
    pos = [b.position for b in FileRecords(bytes(data)).batches()][3]
    struct.pack_into(">i", data, pos + 8, 0x7FFFFFF0)
    data += bytes(1_000_000)                    # more bytes after it, never needed
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    rf = ranged.RangedFile(remote(path))
    try:
        got = _summary(rf.records())
        assert got == _summary(FileRecords(bytes(data)))
        assert got[1] == pos                     # valid_end: the lying batch
        assert rf.fetched <= ranged.FIRST_WINDOW < len(data) // 10
    finally:
        rf.close()


def test_a_seek_fetches_only_what_it_reads(tmp_path):
    """An index seek into a 4 MB segment then three batches: a few KiB fetched, one or
    two requests, not the segment."""
    data = _batches(4000, 1000)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    positions = [b.position for b in FileRecords(data).batches()]
    rf = ranged.RangedFile(remote(path))
    try:
        got = _summary(rf.records(positions[2000]), stop_after=3)[0]
        assert [p for p, _, _ in got] == positions[2000:2003]
        assert rf.fetched <= ranged.FIRST_WINDOW and rf.requests <= 2
        assert rf.size == len(data) > 50 * rf.fetched
        # a second read of the same range fetches nothing new
        before = rf.requests
        _summary(rf.records(positions[2000]), stop_after=3)
        assert rf.requests == before
    finally:
        rf.close()


def test_missing_ranges_are_coalesced(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(bytes(range(256)) * 40)
    rf = ranged.RangedFile(remote(path))
    try:
        rf.ensure(100, 200)
        rf.ensure(300, 400)
        assert rf.missing(0, 1000) == [(0, 100), (200, 300), (400, 1000)]
        rf.ensure(150, 350)
        assert rf.missing(0, 1000) == [(0, 100), (400, 1000)]
        assert bytes(rf.view[100:400]) == path.read_bytes()[100:400]
        assert rf.fetched == 100 + 100 + 100   # each byte fetched once
    finally:
        rf.close()


def test_a_remote_segment_reads_as_a_local_one():
    """LogSegment over a RemotePath: records(), the index seek (translate_offset), the
    timestamp lookup and open_view give what the local segment gives."""
    local = LogSegment(FIXTURES / "multi-0", 88)
    rem = LogSegment(remote(FIXTURES / "multi-0"), 88)
    try:
        assert rem.size == local.size
        assert _summary(rem.records()) == _summary(local.records())
        assert rem.translate_offset(120).position == local.translate_offset(120).position
        ts = local.find_offset_by_timestamp(1_700_000_120_000)
        assert rem.find_offset_by_timestamp(1_700_000_120_000) == ts
        assert bytes(open_view(rem.log_path)) == bytes(local.view)
    finally:
        local.close()
        rem.close()


@pytest.mark.parametrize("uri", ["s3://bucket/logs", "hdfs://nn:8020/kafka", "gs://b/x",
                                 "abfss://c@a.dfs.core.windows.net/x"])
def test_writing_commands_refuse_a_remote_log_dir(uri):
    from kafkalog_cli.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="must be on a local .POSIX. filesystem"):
        require_local(uri, "produce")
    assert require_local("/var/lib/kafka", "produce") == Path("/var/lib/kafka")
    assert as_path("file:///var/lib/kafka") == Path("/var/lib/kafka")


def test_remote_path_names():
    fs = pafs.LocalFileSystem()
    p = RemotePath(fs, "bucket/logs/orders-0/00000000000000000000.log", "s3://",
                   query="region=eu-west-1")
    assert str(p) == "s3://bucket/logs/orders-0/00000000000000000000.log?region=eu-west-1"
    assert (p.name, p.suffix, p.stem) == ("00000000000000000000.log", ".log",
                                          "00000000000000000000")
    assert str(p.parent) == "s3://bucket/logs/orders-0?region=eu-west-1"
    assert str(p.with_suffix(".index")).endswith("00000000000000000000.index?region=eu-west-1")
    assert str(p.parent.parent.parent.parent) == "s3://bucket?region=eu-west-1"
    h = RemotePath(fs, "/kafka", "hdfs://nn:8020")
    assert str(h.parent) == "hdfs://nn:8020/" and str(h.parent / "x") == "hdfs://nn:8020/x"
    from kafkalog_cli.storage.location import has_magic, join

    assert join("s3://b/logs?region=x", "t-0") == "s3://b/logs/t-0?region=x"
    assert not has_magic("s3://b/logs?region=x") and has_magic("s3://b/l*?region=x")


def test_the_log_read_path_fetches_ranges_not_segments(tmp_path):
    """storage.log.Log over a remote partition (the one home of reading by offset and by
    timestamp: LogSegment.index_position, read, find_offset_by_timestamp, batches_from,
    read_next_offset) answers as over the local one, fetching windows after index seeks,
    not the 4 MB segment."""
    from kafkalog_cli.storage.log import Log
    from kafkalog_cli.storage.segment import rebuild_indexes

    data = _batches(4000, 1000)
    d = tmp_path / "t-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(data)
    rebuilt = rebuild_indexes(memoryview(data), 0)
    (d / "00000000000000000000.index").write_bytes(rebuilt.offset_index_bytes(0))
    (d / "00000000000000000000.timeindex").write_bytes(rebuilt.time_index_bytes(0))
    local, rem = Log.open(d), Log.open(remote(d))
    try:
        assert rem.log_end_offset == local.log_end_offset == 4000
        assert rem.log_start_offset == local.log_start_offset == 0
        got, want = rem.read(2000, 3000), local.read(2000, 3000)
        # a local read is a range of the file (FileSlice), a remote one its bytes
        assert (got.records, got.first_offset) == (bytes(want.records), want.first_offset)
        assert rem.fetch_offset_by_timestamp(1_700_000_002_500) == \
            local.fetch_offset_by_timestamp(1_700_000_002_500) == (1_700_000_002_500, 2500)
        first3 = [b.base_offset for (_, b), _ in zip(rem.batches_from(3000), range(3),
                                                    strict=False)]
        assert first3 == [3000, 3001, 3002]
        rf = rem.segments[0]._ranged
        assert rf is not None and rem.segments[0]._view is None   # never fetched whole
        assert rf.fetched < len(data) // 10
    finally:
        local.close()
        rem.close()
