"""The sparse index base, after ``AbstractIndex``: owns the file and the search.

An index is a run of fixed-size entries with no header and no checksum (the broker
rebuilds it after a crash). Kafka memory-maps it; here the entries live in a bytearray
and are written back with ``pwrite`` (the read-side commands open files read-only and
never write).

Preallocation: the active segment's index file is ``segment.index.bytes`` rounded down
to a whole entry, zero-filled; ``entries`` counts only what was appended. When Kafka
opens an existing file it takes ``length / entry_size`` entries, zero slots included;
:meth:`AbstractIndex.load` does the same and :attr:`zero_tail` says how many trailing
slots are all zeros (a preallocated tail the broker accepts). Those slots are not held
in memory (they read as zeros; a write fills them in first), so an index preallocated
to hundreds of megabytes costs the memory of its entries; a file larger than
:data:`MAX_INDEX_BYTES` is refused as corrupt.

Lookups follow ``largestLowerBoundSlotFor``: the slot of the largest entry whose key is
<= the target, or -1.

Not thread-safe: callers hold the log's lock, as in Kafka.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator

from ..errors import CorruptIndexError, UnreadableError
from .fileio import nonzero_length, open_for_write
from .location import as_path, open_regular, opened_size

#: the largest index file kafkalog opens: 51 times the default ``segment.index.bytes``
#: (10 MiB; a 1 GiB segment indexed every 4 KiB needs 2 MiB); a larger one is corrupt
#: (recovery rebuilds it)
MAX_INDEX_BYTES = 512 << 20
#: bytes read at a time while looking for the end of a zero-filled tail
_TAIL_CHUNK = 1 << 20


class AbstractIndex:
    """Base of :class:`~.offset_index.OffsetIndex` and :class:`~.time_index.TimeIndex`.

    Subclasses define ``ENTRY`` (a struct.Struct), ``KEY_FIELD`` (which field is searched),
    :meth:`sanity_check` and the meaning of an entry.

    Attributes:
        path: the index file.
        base_offset: the segment's base offset (entries store offsets relative to it).
        max_index_size: the preallocated size in bytes (segment.index.bytes), or None.
        entries: number of entries in use.
    """

    ENTRY: struct.Struct
    KEY_FIELD: int

    def __init__(self, path, base_offset: int, max_index_size: int | None = None):
        self.path = as_path(path)
        self.base_offset = base_offset
        self.max_index_size = max_index_size
        # the slots held in memory: the first len(_buf) // ENTRY.size of ``entries``; the
        # others are a zero-filled tail, read as zeros (_materialize fills them in)
        self._buf = bytearray()
        self.entries = 0
        self.file_length = 0
        self.zero_tail = 0
        self._flushed = 0

    # -- loading ------------------------------------------------------------------------

    @classmethod
    def load(cls, path, base_offset: int, max_index_size: int | None = None):
        """Read an index file the way the broker opens it (every whole slot is an entry);
        the trailing all-zero slots after the first (:attr:`zero_tail`, a preallocated
        tail) are counted, not read into memory.

        Raises:
            NotRegularFileError: a FIFO, a device, a socket or a directory.
            CorruptIndexError: the file is larger than :data:`MAX_INDEX_BYTES`.
            UnreadableError: the file cannot be read.
        """
        idx = cls(path, base_offset, max_index_size)
        size = cls.ENTRY.size
        prefix, length = read_nonzero_prefix(path)
        whole = length // size
        # the slots up to the last non-zero byte, at least the first one
        held = min(whole, max(min(whole, 1), -(-len(prefix) // size)))
        idx.file_length = length
        idx._buf = bytearray(prefix[:held * size])
        idx._buf += bytes(held * size - len(idx._buf))
        idx.entries = whole
        idx._flushed = whole
        idx.zero_tail = whole - held
        return idx

    def _materialize(self) -> None:
        """Hold every slot in memory (the zero-filled tail written out as zeros): before
        anything appends to or writes the entries."""
        want = self.entries * self.ENTRY.size
        if len(self._buf) < want:
            self._buf += bytes(want - len(self._buf))

    @property
    def entry_size(self) -> int:
        return self.ENTRY.size

    def _check_whole_entries(self, what: str) -> None:
        """The length check OffsetIndex.sanityCheck and TimeIndex.sanityCheck end with: the
        file holds a whole number of entries (``what``: how the message names the file).

        Raises:
            CorruptIndexError: the file length is not a multiple of the entry size.
        """
        if self.file_length % self.entry_size:
            raise CorruptIndexError(
                f"{what} {self.path} is corrupt, found {self.file_length} bytes which is "
                f"neither positive nor a multiple of {self.entry_size}", file=self.path)

    @property
    def max_entries(self) -> int:
        """Entries that fit in ``max_index_size`` (unbounded when None)."""
        if self.max_index_size is None:
            return 2**31 - 1
        return self.max_index_size // self.ENTRY.size

    @property
    def is_full(self) -> bool:
        return self.entries >= self.max_entries

    def raw_entry(self, n: int) -> tuple:
        """The n-th entry as stored (relative offsets unresolved; a slot of the zero tail
        not held in memory reads as zeros)."""
        pos = n * self.ENTRY.size
        if pos < len(self._buf):
            return self.ENTRY.unpack_from(self._buf, pos)
        return self.ENTRY.unpack(bytes(self.ENTRY.size))

    def raw_entries(self) -> list[tuple]:
        """Every entry in use as stored, listed (see :meth:`iter_raw_entries`)."""
        return list(self.iter_raw_entries())

    def iter_raw_entries(self, stop: int | None = None) -> Iterator[tuple]:
        """The first ``stop`` entries (default: all in use) as stored, one at a time: a
        walk over an index without a tuple per entry held at once (listed as
        :class:`~.offset_index.OffsetPosition` s, the 65k entries of a 1 GiB segment of
        16 KB batches were 18 MB of heap; they are 0.5 MB of bytes)."""
        n = self.entries if stop is None else max(0, min(stop, self.entries))
        size = self.ENTRY.size
        held = self.ENTRY.iter_unpack(bytes(self._buf[:n * size]))
        virtual = n - len(self._buf) // size
        if virtual <= 0:
            return held
        from itertools import chain, repeat

        return chain(held, repeat(self.ENTRY.unpack(bytes(size)), virtual))

    def to_bytes(self) -> bytes:
        """The entries in use, as a trimmed file holds them."""
        self._materialize()
        return bytes(self._buf[:self.entries * self.ENTRY.size])

    # -- search -----------------------------------------------------------------------------

    def _key(self, slot: int) -> int:
        raise NotImplementedError

    def largest_lower_bound_slot(self, target: int) -> int:
        """AbstractIndex.largestLowerBoundSlotFor: slot of the largest key <= ``target``
        (keys are absolute offsets or timestamps), or -1 when every key is larger."""
        n = self.entries
        if n == 0 or self._key(0) > target:
            return -1
        lo, hi = 0, n - 1
        key = self._key
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            k = key(mid)
            if k > target:
                hi = mid - 1
            elif k < target:
                lo = mid
            else:
                return mid
        return lo

    # -- writing (used by the append engine and recovery, never by read-side commands) ----

    def _append_raw(self, *fields) -> None:
        self._materialize()
        self._buf += self.ENTRY.pack(*fields)
        self.entries += 1

    def reset(self) -> None:
        """Remove every entry (AbstractIndex.reset)."""
        self._buf = bytearray()
        self.entries = 0
        self._flushed = 0

    def truncate_to_entries(self, n: int) -> None:
        n = max(0, min(n, self.entries))
        del self._buf[n * self.ENTRY.size:]
        self.entries = n
        self._flushed = min(self._flushed, n)

    def write(self, *, preallocate: bool = False, fsync: bool = True) -> None:
        """Write the index file: the entries in use, then, with ``preallocate``, zeros up
        to ``max_index_size`` (the active segment's file); without it the file is trimmed
        to its valid size (trimToValidSize). Writes in place, as the broker's mmap does."""
        size = self.ENTRY.size
        self._materialize()
        fd = open_for_write(self.path, os.O_RDWR | os.O_CREAT)
        try:
            start = self._flushed * size
            data = self._buf[start:self.entries * size]
            if data:
                os.pwrite(fd, data, start)
            length = self.entries * size
            if preallocate and self.max_index_size is not None:
                length = max(length, self.max_entries * size)
            os.ftruncate(fd, length)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        self._flushed = self.entries
        self.file_length = length


def read_nonzero_prefix(path) -> tuple[bytes, int]:
    """``(bytes up to the last non-zero byte, length)`` of an index file: a zero-filled
    (preallocated) tail is read backwards a piece at a time to find where it starts, and
    is not held.

    Raises:
        NotRegularFileError: a FIFO, a device, a socket or a directory.
        CorruptIndexError: the file is larger than :data:`MAX_INDEX_BYTES`.
        UnreadableError: the file cannot be read (missing included).
    """
    try:
        with open_regular(as_path(path)) as f:   # a local or a remote file
            length = opened_size(f, path)
            if length > MAX_INDEX_BYTES:
                raise CorruptIndexError(
                    f"is {length} bytes, more than the {MAX_INDEX_BYTES} bytes kafkalog "
                    "reads of an index", file=path)
            read_at = _reader(f)
            end = _nonzero_end(read_at, length)
            prefix = read_at(0, end)
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=path) from e
    if len(prefix) < end:   # shorter than it said (a remote object's size lied)
        length = len(prefix)
    return prefix, length


def _reader(f):
    """``read_at(position, n)`` over a file from :func:`~.location.open_regular` (``pread``
    locally, a ranged read remotely)."""
    if hasattr(f, "read_at"):
        return lambda pos, n: f.read_at(n, pos) if n else b""
    fd = f.fileno()

    def read_at(pos: int, n: int) -> bytes:
        parts = []
        while n > 0:
            b = os.pread(fd, n, pos)
            if not b:
                break
            parts.append(b)
            pos += len(b)
            n -= len(b)
        return b"".join(parts)

    return read_at


def _nonzero_end(read_at, length: int) -> int:
    """The position after the last non-zero byte of the first ``length`` bytes (0 when all
    are zeros), read backwards a piece at a time."""
    end = length
    while end > 0:
        start = max(0, end - _TAIL_CHUNK)
        kept = nonzero_length(read_at(start, end - start))
        if kept:
            return start + kept
        end = start
    return 0
