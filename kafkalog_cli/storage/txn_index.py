"""The transaction index (``.txnindex``), after ``TransactionIndex``.

One 34-byte :class:`~kafkalog_cli.schema.txn_index.AbortedTxn` per aborted transaction
whose ABORT marker lies in the segment, in marker-offset order. No header, no
preallocation; the file is created on the first append (Kafka opens its channel lazily,
so segments without aborted transactions have no ``.txnindex``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from ..constants import TXN_INDEX_ENTRY_SIZE
from ..errors import CorruptIndexError, InvalidArgumentError, UnreadableError
from ..schema.txn_index import ENTRY, AbortedTxn, parse_txn_index
from .fileio import open_for_write
from .location import as_path, open_regular, opened_size, read_up_to

#: the largest ``.txnindex`` kafkalog reads: 493,447 aborted transactions whose markers
#: lie in one segment; a larger file is corrupt (recovery rebuilds it)
MAX_TXN_INDEX_BYTES = 16 << 20
#: bytes of whole entries read at a time
_CHUNK = TXN_INDEX_ENTRY_SIZE * 1927


class TransactionIndex:
    """Aborted transactions of one segment. The entries of the file are read a piece at a
    time whenever they are walked (:meth:`iter_entries`, as ``TransactionIndex``
    iterates its channel), never held; those appended since are held in memory until
    :meth:`flush` writes them (an index built in memory, as recovery plans one, never
    touches its file: :meth:`to_bytes` gives its bytes).

    Attributes:
        path: the ``.txnindex`` file.
        start_offset: the segment's base offset.
        entries: the aborted transactions appended in memory (after the file's).
    """

    def __init__(self, path, start_offset: int):
        self.path = as_path(path)
        self.start_offset = start_offset
        self.entries: list[AbortedTxn] = []
        self._on_disk = 0            # whole entries in the file when loaded
        self._last_on_disk: AbortedTxn | None = None
        self._flushed = 0            # of ``entries``, those written to the file
        self._dirty = False

    @classmethod
    def load(cls, path, start_offset: int) -> TransactionIndex:
        """Open the file (a partial tail is ignored, as Kafka does): its size and last
        entry are read, not its entries.

        Raises:
            NotRegularFileError: a FIFO, a device, a socket or a directory.
            CorruptIndexError: the file is larger than :data:`MAX_TXN_INDEX_BYTES`.
            UnreadableError: the file exists but cannot be read.
        """
        idx = cls(path, start_offset)
        try:
            f = open_regular(idx.path)
        except FileNotFoundError:
            return idx
        with f:
            size = opened_size(f, path)
            _check_size(path, size)
            n = size // TXN_INDEX_ENTRY_SIZE
            if n:
                f.seek((n - 1) * TXN_INDEX_ENTRY_SIZE)
                last = parse_txn_index(read_up_to(f, TXN_INDEX_ENTRY_SIZE, path))
                if not last:       # shorter than it said (a remote object's size lied)
                    raise UnreadableError(f"the file ends before byte {size}", file=path)
                idx._last_on_disk = last[0]
        idx._on_disk = n
        return idx

    def iter_entries(self) -> Iterator[AbortedTxn]:
        """Every entry, in order: the file's (the whole entries it held when loaded, read
        a piece at a time), then those appended in memory.

        Raises:
            NotRegularFileError / UnreadableError: the file can no longer be read.
        """
        for t in self._iter_raw():
            yield AbortedTxn(t[1], t[2], t[3], t[4], t[0])

    def _iter_raw(self) -> Iterator[tuple]:
        """:meth:`iter_entries` as ``(version, producer id, first offset, last offset,
        last stable offset)`` tuples (no object per entry: a walk of the largest file
        kafkalog reads takes a tenth of a second)."""
        if self._on_disk:
            left = self._on_disk * TXN_INDEX_ENTRY_SIZE
            try:
                f = open_regular(self.path)
            except FileNotFoundError as e:
                raise UnreadableError(e.strerror or str(e), file=self.path) from e
            with f:
                while left > 0:
                    data = read_up_to(f, min(left, _CHUNK), self.path)
                    if len(data) < TXN_INDEX_ENTRY_SIZE:
                        break
                    left -= len(data)
                    yield from ENTRY.iter_unpack(data[:len(data) - len(data) % ENTRY.size])
        for e in self.entries:
            yield e.version, e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset

    @property
    def last_offset(self) -> int | None:
        if self.entries:
            return self.entries[-1].last_offset
        return self._last_on_disk.last_offset if self._last_on_disk is not None else None

    def append(self, txn: AbortedTxn, *, check: bool = True) -> None:
        """TransactionIndex.append (``check`` False: an index rebuilt in memory from a log
        whose offsets need not grow, as a reader replays one, takes every entry).

        Raises:
            InvalidArgumentError: (``check``) ``txn.last_offset`` is not above the last
                entry's.
        """
        last = self.last_offset
        if check and last is not None and last >= txn.last_offset:
            raise InvalidArgumentError(
                f"The last offset of appended transactions must increase sequentially, but "
                f"{txn.last_offset} is not greater than current last offset {last} of index "
                f"{self.path}")
        self.entries.append(txn)
        self._dirty = True

    def to_bytes(self) -> bytes:
        """The ``.txnindex`` bytes of every entry."""
        return b"".join(e.to_bytes() for e in self.iter_entries())

    def flush(self, fsync: bool = True) -> None:
        """Append the new entries to the file (creating it), fsync."""
        if not self._dirty:
            return
        data = b"".join(e.to_bytes() for e in self.entries[self._flushed:])
        fd = open_for_write(self.path, os.O_WRONLY | os.O_CREAT)
        try:
            os.pwrite(fd, data, (self._on_disk + self._flushed) * TXN_INDEX_ENTRY_SIZE)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        self._flushed = len(self.entries)
        self._dirty = False

    def sanity_check(self) -> None:
        """TransactionIndex.sanityCheck: every last offset >= the segment's base offset
        (the file walked a piece at a time).

        Raises:
            CorruptIndexError: an entry below the base offset.
        """
        start = self.start_offset
        for t in self._iter_raw():
            if t[3] < start:
                e = AbortedTxn(t[1], t[2], t[3], t[4], t[0])
                raise CorruptIndexError(
                    f"Last offset of aborted transaction {e} in index {self.path} is less "
                    f"than start offset {start}", file=self.path)

    def collect_aborted(self, fetch_offset: int,
                        upper_bound: int) -> tuple[list[AbortedTxn], bool]:
        """TransactionIndex.collectAbortedTxns: the aborted transactions overlapping
        ``[fetch_offset, upper_bound)`` (absolute offsets), and whether the search is
        complete (an entry's last stable offset reached ``upper_bound``; else later
        segments' indexes may hold more, a transaction being indexed in the segment of its
        ABORT marker)."""
        out = []
        for t in self._iter_raw():
            if t[3] >= fetch_offset and t[2] < upper_bound:
                out.append(AbortedTxn(t[1], t[2], t[3], t[4], t[0]))
            if t[4] >= upper_bound:
                return out, True
        return out, False


def _check_size(path, size: int) -> None:
    if size > MAX_TXN_INDEX_BYTES:
        raise CorruptIndexError(f"is {size} bytes, more than the {MAX_TXN_INDEX_BYTES} bytes "
                                "kafkalog reads of a transaction index", file=path)
