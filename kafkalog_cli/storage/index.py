"""The sparse index base, after ``AbstractIndex``: owns the file and the search.

An index is a run of fixed-size entries with no header and no checksum (the broker
rebuilds it after a crash). Kafka memory-maps it; here the entries live in a bytearray
and are written back with ``pwrite`` (the read-side commands open files read-only and
never write).

Preallocation: the active segment's index file is ``segment.index.bytes`` rounded down
to a whole entry, zero-filled; ``entries`` counts only what was appended. When Kafka
opens an existing file it takes ``length / entry_size`` entries, zero slots included;
:meth:`AbstractIndex.load` does the same and :attr:`zero_tail` says how many trailing
slots are all zeros (a preallocated tail the broker accepts).

Lookups follow ``largestLowerBoundSlotFor``: the slot of the largest entry whose key is
<= the target, or -1.

Not thread-safe: callers hold the log's lock, as in Kafka.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator

from ..errors import CorruptIndexError, UnreadableError
from .fileio import open_for_write
from .location import as_path


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
        self._buf = bytearray()
        self.entries = 0
        self.file_length = 0
        self.zero_tail = 0
        self._flushed = 0

    # -- loading ------------------------------------------------------------------------

    @classmethod
    def load(cls, path, base_offset: int, max_index_size: int | None = None):
        """Read an index file the way the broker opens it (every whole slot is an entry).

        Raises:
            UnreadableError: the file cannot be read.
        """
        idx = cls(path, base_offset, max_index_size)
        try:
            with as_path(path).open("rb") as f:   # a local or a remote file
                data = f.read()
        except OSError as e:
            raise UnreadableError(e.strerror or str(e), file=path) from e
        idx.file_length = len(data)
        size = cls.ENTRY.size
        whole = len(data) // size
        idx._buf = bytearray(data[:whole * size])
        idx.entries = whole
        idx._flushed = whole
        # count trailing all-zero slots after the first entry (preallocated tail)
        zero = bytes(size)
        n = whole
        while n > 1 and idx._buf[(n - 1) * size:n * size] == zero:
            n -= 1
        idx.zero_tail = whole - n
        return idx

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
        """The n-th entry as stored (relative offsets unresolved)."""
        return self.ENTRY.unpack_from(self._buf, n * self.ENTRY.size)

    def raw_entries(self) -> list[tuple]:
        """Every entry in use as stored, listed (see :meth:`iter_raw_entries`)."""
        return list(self.iter_raw_entries())

    def iter_raw_entries(self, stop: int | None = None) -> Iterator[tuple]:
        """The first ``stop`` entries (default: all in use) as stored, one at a time: a
        walk over an index without a tuple per entry held at once (listed as
        :class:`~.offset_index.OffsetPosition` s, the 65k entries of a 1 GiB segment of
        16 KB batches were 18 MB of heap; they are 0.5 MB of bytes)."""
        n = self.entries if stop is None else max(0, min(stop, self.entries))
        return self.ENTRY.iter_unpack(bytes(self._buf[:n * self.ENTRY.size]))

    def to_bytes(self) -> bytes:
        """The entries in use, as a trimmed file holds them."""
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
