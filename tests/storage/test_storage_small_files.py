"""The small files of a log directory read with a bound whatever their size (issue 24,
item 5): checkpoints, properties, partition.metadata, quorum-state and the clean-shutdown
marker are read a line at a time up to a cap, quoting at most a short excerpt of a bad
line; a producer snapshot and a .txnindex are streamed; an index's zero-filled tail is
counted, not held; an object of object storage whose listed size lies is read no further
than the cap. Memory is measured with tracemalloc (what Python allocates while reading);
sparse files keep the inflated inputs cheap."""

from __future__ import annotations

import struct
import tracemalloc

import crc32c
import pytest

from kafkalog_cli.errors import (
    CorruptCheckpointError,
    CorruptIndexError,
    CorruptSnapshotError,
    KafkalogError,
)
from kafkalog_cli.storage import checkpoints as cp
from kafkalog_cli.storage import dir_files as df

MiB = 1 << 20


def _sparse(path, size: int, head: bytes = b""):
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


def _peak(fn, *args):
    """``(result or the KafkalogError raised, peak bytes Python allocated meanwhile)``."""
    tracemalloc.start()
    try:
        try:
            out = fn(*args)
        except KafkalogError as e:
            out = e
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# -- text files ---------------------------------------------------------------------------

def test_a_zero_filled_checkpoint_is_quoted_in_a_short_excerpt(tmp_path):
    """describe printed the 1 MiB line whole (JSON-escaped: 6 MB), once per partition."""
    p = tmp_path / "recovery-point-offset-checkpoint"
    p.write_bytes(bytes(MiB))
    with pytest.raises(CorruptCheckpointError) as e:
        cp.read_offset_checkpoint(p)
    assert len(str(e.value)) < 300, str(e.value)[:300]
    assert e.value.line == 1 and "'\\x00\\x00" in str(e.value)


@pytest.mark.parametrize("size", [64 * MiB, 1 << 30])
def test_an_inflated_checkpoint_is_read_a_line_at_a_time(tmp_path, size):
    """64 MiB (the cap itself): one line of zeros, refused once it passes the longest
    line read; 1 GiB: refused by its size, unread."""
    p = _sparse(tmp_path / "leader-epoch-checkpoint", size, b"0\n1\n")
    err, peak = _peak(cp.read_leader_epoch_checkpoint, p)
    assert isinstance(err, CorruptCheckpointError), err
    if size > cp.MAX_CHECKPOINT_BYTES:
        assert f"is {size} bytes, more than the {cp.MAX_CHECKPOINT_BYTES} bytes" in str(err)
    else:
        assert err.line == 3 and f"line longer than {cp.MAX_LINE_BYTES} bytes" in str(err)
    assert len(str(err)) < 300
    assert peak < 2 * MiB, f"{peak} bytes allocated reading a {size}-byte checkpoint"


def test_a_large_valid_checkpoint_still_reads(tmp_path):
    """A checkpoint of 50,000 partitions of a 60-character topic (3.4 MB) reads."""
    n = 50_000
    topic = "t" * 60
    p = tmp_path / "replication-offset-checkpoint"
    p.write_text(f"0\n{n}\n" + "".join(f"{topic} {i} {i * 7}\n" for i in range(n)))
    got = cp.read_offset_checkpoint(p)
    assert len(got) == n
    assert got[cp.TopicPartition(topic, 12345)] == 12345 * 7


@pytest.mark.parametrize("name, reader", [
    ("meta.properties", lambda d: df.read_meta_properties(d, validate=True)),
    ("partition.metadata", df.read_partition_metadata),
    ("quorum-state", lambda d: df.read_quorum_state(d / "quorum-state")),
    (".kafka_cleanshutdown", df.read_clean_shutdown),
])
def test_the_other_small_text_files_are_capped(tmp_path, name, reader):
    _sparse(tmp_path / name, 64 * MiB, b"version=1\n" if name == "meta.properties" else b"")
    err, peak = _peak(reader, tmp_path)
    assert isinstance(err, CorruptCheckpointError), err
    assert f"is {64 * MiB} bytes, more than the {cp.MAX_SMALL_FILE_BYTES} bytes" in str(err)
    assert peak < MiB


def test_a_long_partition_metadata_line_is_quoted_short(tmp_path):
    (tmp_path / "partition.metadata").write_bytes(b"version: x" + b"9" * 60_000)
    with pytest.raises(CorruptCheckpointError) as e:
        df.read_partition_metadata(tmp_path)
    assert len(str(e.value)) < 300 and "(60010 characters)" in str(e.value)


@pytest.mark.parametrize("data", [b"[" * 30_000, b'{"a":' * 10_000])
def test_deeply_nested_quorum_state_is_corrupt_not_a_recursion_error(tmp_path, data):
    p = tmp_path / "quorum-state"
    p.write_bytes(data)
    with pytest.raises(CorruptCheckpointError, match="nested too deeply"):
        df.read_quorum_state(p)
    (tmp_path / ".kafka_cleanshutdown").write_bytes(data)
    assert df.read_clean_shutdown(tmp_path) == {}   # the broker: a marker without epoch


# -- producer snapshots ---------------------------------------------------------------------

def _snapshot(n: int) -> bytes:
    """A version-1 snapshot of ``n`` producers, built with struct and crc32c."""
    body = struct.pack(">i", n) + b"".join(
        struct.pack(">qhiqiqiq", pid, 0, 4, 100 + pid, 4, 1_700_000_000_000, -1, -1)
        for pid in range(n))
    return struct.pack(">hI", 1, crc32c.crc32c(body)) + body


def test_a_snapshot_is_read_a_piece_at_a_time(tmp_path):
    from kafkalog_cli.storage.producer_state import read_snapshot

    p = tmp_path / "00000000000000000100.snapshot"
    p.write_bytes(_snapshot(30_000))     # 1.4 MB; listed as entries, ~6 MB
    seen, peak = _peak(lambda: sum(1 for _ in read_snapshot(p)))
    assert seen == 30_000
    assert peak < MiB, f"{peak} bytes allocated walking a 1.4 MB snapshot"


def test_an_inflated_snapshot_is_refused_unread(tmp_path):
    """ProducerStateManager.load_readable, the readers' entry point: a snapshot larger
    than the cap is passed over (as a corrupt one is), without reading it."""
    from kafkalog_cli.storage.producer_state import (
        MAX_SNAPSHOT_BYTES,
        ProducerStateManager,
        read_snapshot,
    )

    (tmp_path / "00000000000000000010.snapshot").write_bytes(_snapshot(3))
    big = _sparse(tmp_path / "00000000000000000020.snapshot", 300 * MiB, _snapshot(3)[:10])
    with pytest.raises(CorruptSnapshotError, match=f"more than the {MAX_SNAPSHOT_BYTES}"):
        read_snapshot(big)
    m = ProducerStateManager(tmp_path)
    off, peak = _peak(m.load_readable, 0, 30)
    assert off == 10 and sorted(m.producers) == [0, 1, 2]
    assert peak < MiB


# -- transaction indexes ----------------------------------------------------------------------

def test_a_txnindex_is_walked_a_piece_at_a_time(tmp_path):
    """recover took 5.3 GB over 41 s on a 1 GiB .txnindex: the entries were listed."""
    from kafkalog_cli.storage.txn_index import TransactionIndex

    n = 100_000     # 3.4 MB: listed as AbortedTxn objects, ~15 MB
    p = _sparse(tmp_path / "00000000000000000000.txnindex", n * 34)

    def walk():
        idx = TransactionIndex.load(p, 0)
        idx.sanity_check()      # every last offset (0) >= the base offset (0)
        return idx.collect_aborted(5, 10), sum(1 for _ in idx.iter_entries())

    (found, count), peak = _peak(walk)
    assert found == ([], False) and count == n
    assert peak < 2 * MiB, f"{peak} bytes allocated walking {n} entries"


def test_an_inflated_txnindex_is_corrupt(tmp_path):
    from kafkalog_cli.storage.txn_index import TransactionIndex

    p = _sparse(tmp_path / "00000000000000000000.txnindex", 1 << 30)
    with pytest.raises(CorruptIndexError, match=f"is {1 << 30} bytes, more than"):
        TransactionIndex.load(p, 0)


# -- offset and time indexes --------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["index", "timeindex"])
def test_a_zero_filled_index_tail_is_counted_not_held(tmp_path, kind):
    """An index preallocated to 64 MiB (segment.index.bytes) holding two entries: its
    8 M slots are what the broker counts; the zeros are not read into memory."""
    from kafkalog_cli.storage.offset_index import OffsetIndex
    from kafkalog_cli.storage.time_index import TimeIndex

    cls, head = ((OffsetIndex, struct.pack(">iiii", 3, 4096, 9, 8192)) if kind == "index"
                 else (TimeIndex, struct.pack(">qiqi", 1000, 3, 2000, 9)))
    p = _sparse(tmp_path / f"00000000000000000100.{kind}", 64 * MiB, head)
    idx, peak = _peak(cls.load, p, 100)
    size = cls.ENTRY.size
    assert idx.entries == 64 * MiB // size and idx.zero_tail == idx.entries - 2
    assert idx.file_length == 64 * MiB
    assert peak < 2 * MiB, f"{peak} bytes allocated loading a 64 MiB index"
    assert idx.raw_entry(idx.entries - 1) == (0, 0)      # a tail slot reads as zeros
    assert list(idx.iter_raw_entries(idx.entries - idx.zero_tail))[1][1] in (8192, 9)
    # the read path leaves the tail out (LogSegment.usable_indexes), then looks up
    idx.truncate_to_entries(idx.entries - idx.zero_tail)
    if kind == "index":
        assert idx.lookup(105).position == 4096 and idx.lookup(200).position == 8192
    else:
        assert idx.lookup(1500).offset == 103


def test_an_index_over_the_cap_is_corrupt(tmp_path):
    from kafkalog_cli.storage.index import MAX_INDEX_BYTES
    from kafkalog_cli.storage.offset_index import OffsetIndex

    p = _sparse(tmp_path / "00000000000000000000.index", 1 << 30)
    with pytest.raises(CorruptIndexError, match=f"more than the {MAX_INDEX_BYTES} bytes"):
        OffsetIndex.load(p, 0)


# -- object storage: a size that lies --------------------------------------------------------

class _Endless:
    """A file object that claims ``claimed`` bytes and reads zeros forever."""

    def __init__(self, claimed: int):
        self.claimed, self.pos = claimed, 0
        self.closed = False

    def seek(self, pos, whence=0):
        self.pos = pos if whence == 0 else self.pos + pos if whence == 1 else self.claimed
        return self.pos

    def tell(self):
        return self.pos

    def read(self, n=-1):
        n = 1 << 20 if n is None or n < 0 else n
        self.pos += n
        return bytes(n)

    def readable(self):
        return True

    def seekable(self):
        return True

    def close(self):
        self.closed = True


def _lying_root(claimed: int):
    pafs = pytest.importorskip("pyarrow.fs")
    pa = pytest.importorskip("pyarrow")
    from kafkalog_cli.storage.location import RemotePath

    class Handler(pafs.FileSystemHandler):
        def get_type_name(self):
            return "lying"

        def normalize_path(self, path):
            return path

        def get_file_info(self, paths):
            return [pafs.FileInfo(p, pafs.FileType.Directory if p == "bucket"
                                  else pafs.FileType.File, size=claimed) for p in paths]

        def get_file_info_selector(self, selector):
            return []

        def open_input_file(self, path):
            return pa.PythonFile(_Endless(claimed), mode="r")

        def open_input_stream(self, path):
            return self.open_input_file(path)

        def __getattr__(self, name):   # the writing half: never called
            raise NotImplementedError(name)

        create_dir = delete_dir = delete_dir_contents = delete_root_dir_contents = \
            delete_file = move = copy_file = open_output_stream = open_append_stream = \
            lambda self, *a, **k: (_ for _ in ()).throw(NotImplementedError())

    return RemotePath(pafs.PyFileSystem(Handler()), "bucket", "lying://")


@pytest.mark.parametrize("claimed", [100, 64 * MiB])
def test_an_object_whose_size_lies_is_read_no_further_than_the_cap(claimed):
    """An object listed as 100 bytes that reads zeros forever (or as 64 MiB): each reader
    stops at its cap (a line at the longest line), whatever the listing says."""
    root = _lying_root(claimed)
    for fn in (lambda: cp.read_offset_checkpoint(root / "recovery-point-offset-checkpoint"),
               lambda: df.read_meta_properties(root),
               lambda: df.read_clean_shutdown(root)):
        err, peak = _peak(fn)
        assert isinstance(err, CorruptCheckpointError), err
        assert peak < 4 * MiB, f"{peak} bytes allocated reading a lying object"


@pytest.mark.parametrize("claimed", [100, 1 << 40])
def test_a_segment_object_whose_size_lies_is_read_by_ranges(claimed):
    """A .log object listed as 100 bytes or 1 TiB that reads zeros forever: its batches
    are read a window at a time from what the listing says (ranged reads), and it holds
    no batch: the read stops at its first bytes."""
    from kafkalog_cli.storage.segment import LogSegment

    root = _lying_root(claimed)
    seg = LogSegment(root, 0, log_path=root / "00000000000000000000.log")

    def walk():
        fr = seg.records()
        return list(fr.batches()), fr.stop_error

    (batches, stop), peak = _peak(walk)
    seg.close()
    assert batches == [] and stop is not None and stop.position == 0
    assert peak < 4 * MiB
