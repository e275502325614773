"""The transaction index (``.txnindex``), after ``TransactionIndex``.

One 34-byte :class:`~kafkalog_cli.schema.txn_index.AbortedTxn` per aborted transaction
whose ABORT marker lies in the segment, in marker-offset order. No header, no
preallocation; the file is created on the first append (Kafka opens its channel lazily,
so segments without aborted transactions have no ``.txnindex``).
"""

from __future__ import annotations

import os

from ..constants import TXN_INDEX_ENTRY_SIZE
from ..errors import CorruptIndexError, InvalidArgumentError, UnreadableError
from ..schema.txn_index import AbortedTxn, parse_txn_index
from .fileio import open_for_write
from .location import as_path


class TransactionIndex:
    """Aborted transactions of one segment: the entries in memory; :meth:`load` and
    :meth:`flush` are the persist step (an index built in memory, as recovery plans
    one, never touches its file: :meth:`to_bytes` gives its bytes).

    Attributes:
        path: the ``.txnindex`` file.
        start_offset: the segment's base offset.
        entries: the aborted transactions, in memory.
    """

    def __init__(self, path, start_offset: int):
        self.path = as_path(path)
        self.start_offset = start_offset
        self.entries: list[AbortedTxn] = []
        self._flushed = 0
        self._dirty = False

    @classmethod
    def load(cls, path, start_offset: int) -> TransactionIndex:
        """Read every whole entry (a partial tail is ignored, as Kafka does).

        Raises:
            UnreadableError: the file exists but cannot be read.
        """
        idx = cls(path, start_offset)
        try:
            data = idx.path.read_bytes()
        except FileNotFoundError:
            return idx
        except OSError as e:
            raise UnreadableError(e.strerror or str(e), file=path) from e
        idx.entries = parse_txn_index(data)
        idx._flushed = len(idx.entries)
        return idx

    @property
    def last_offset(self) -> int | None:
        return self.entries[-1].last_offset if self.entries else None

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
        return b"".join(e.to_bytes() for e in self.entries)

    def flush(self, fsync: bool = True) -> None:
        """Append the new entries to the file (creating it), fsync."""
        if not self._dirty:
            return
        data = b"".join(e.to_bytes() for e in self.entries[self._flushed:])
        fd = open_for_write(self.path, os.O_WRONLY | os.O_CREAT)
        try:
            os.pwrite(fd, data, self._flushed * TXN_INDEX_ENTRY_SIZE)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        self._flushed = len(self.entries)
        self._dirty = False

    def sanity_check(self) -> None:
        """TransactionIndex.sanityCheck: every last offset >= the segment's base offset.

        Raises:
            CorruptIndexError: an entry below the base offset.
        """
        for e in self.entries:
            if e.last_offset < self.start_offset:
                raise CorruptIndexError(
                    f"Last offset of aborted transaction {e} in index {self.path} is less "
                    f"than start offset {self.start_offset}", file=self.path)

    def collect_aborted(self, fetch_offset: int,
                        upper_bound: int) -> tuple[list[AbortedTxn], bool]:
        """TransactionIndex.collectAbortedTxns: the aborted transactions overlapping
        ``[fetch_offset, upper_bound)`` (absolute offsets), and whether the search is
        complete (an entry's last stable offset reached ``upper_bound``; else later
        segments' indexes may hold more, a transaction being indexed in the segment of its
        ABORT marker)."""
        out = []
        for e in self.entries:
            if e.last_offset >= fetch_offset and e.first_offset < upper_bound:
                out.append(e)
            if e.last_stable_offset >= upper_bound:
                return out, True
        return out, False
