"""The time index, after ``TimeIndex``.

A sparse map from timestamps to offsets. Entries are ``(timestamp int64, relative offset
int32)`` (12 bytes). Timestamps only grow: an entry is appended only when the segment's
largest timestamp so far grows (``maybeAppend``); its offset is where that timestamp was
reached (the last offset of the batch holding it). When a segment is rolled, closed or
recovered, a final entry for its largest timestamp is appended even when the index is
full (``skipFullCheck``); so the index reports full one slot early.

To find the first offset with a timestamp >= T, look up the largest entry with
timestamp < T... (LogSegment.findOffsetByTimestamp: largest entry <= T, then scan).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..constants import NO_TIMESTAMP, TIME_INDEX_ENTRY_SIZE
from ..errors import CorruptIndexError, IllegalStateError, InvalidArgumentError
from .index import AbstractIndex


@dataclass(frozen=True)
class TimestampOffset:
    """A time index entry resolved: timestamp (ms) and absolute offset."""

    timestamp: int
    offset: int


UNKNOWN = TimestampOffset(NO_TIMESTAMP, -1)


class TimeIndex(AbstractIndex):
    """Entries ``(timestamp, relative offset)``; see the module docstring."""

    ENTRY = struct.Struct(">qi")
    KEY_FIELD = 0
    assert ENTRY.size == TIME_INDEX_ENTRY_SIZE

    def _key(self, slot: int) -> int:
        return self.raw_entry(slot)[0]

    def entry(self, n: int) -> TimestampOffset:
        ts, rel = self.raw_entry(n)
        return TimestampOffset(ts, self.base_offset + rel)

    def entries_list(self) -> list[TimestampOffset]:
        base = self.base_offset
        return [TimestampOffset(t, base + r) for t, r in self.raw_entries()]

    @property
    def is_full(self) -> bool:
        """TimeIndex.isFull: one slot is kept for the entry appended at roll/close."""
        return self.entries >= self.max_entries - 1

    @property
    def last_entry(self) -> TimestampOffset:
        """The last entry, or ``(-1, base offset)`` when empty (TimeIndex.lastEntry)."""
        if self.entries == 0:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self.entry(self.entries - 1)

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """TimeIndex.lookup: the entry with the largest timestamp <= ``target_timestamp``,
        or ``(-1, base_offset)`` when there is none."""
        slot = self.largest_lower_bound_slot(target_timestamp)
        if slot == -1:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self.entry(slot)

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> bool:
        """TimeIndex.maybeAppend: append ``(timestamp, offset)`` when ``timestamp`` is larger
        than the last entry's. Returns True when appended.

        Raises:
            IllegalStateError: the index is full (unless ``skip_full_check``).
            InvalidArgumentError: the offset or timestamp would go backwards.
        """
        if not skip_full_check and self.is_full:
            raise IllegalStateError(f"Attempt to append to a full time index (size = "
                                    f"{self.entries}).", file=self.path)
        last = self.last_entry
        if self.entries and offset < last.offset:
            raise InvalidArgumentError(
                f"Attempt to append an offset ({offset}) to slot {self.entries} no larger than "
                f"the last offset appended ({last.offset}) to {self.path}.")
        if self.entries and timestamp < last.timestamp:
            raise InvalidArgumentError(
                f"Attempt to append a timestamp ({timestamp}) to slot {self.entries} no larger "
                f"than the last timestamp appended ({last.timestamp}) to {self.path}.")
        if timestamp > last.timestamp:
            self._append_raw(timestamp, offset - self.base_offset)
            return True
        return False

    def truncate_to(self, offset: int) -> None:
        """Remove entries with offset >= ``offset`` (TimeIndex.truncateTo)."""
        n = self.entries
        while n > 0 and self.entry(n - 1).offset >= offset:
            n -= 1
        self.truncate_to_entries(n)

    def sanity_check(self) -> None:
        """TimeIndex.sanityCheck.

        Raises:
            CorruptIndexError: the last timestamp is below the first, the last offset is
                below the base offset, or the length is not a multiple of 12.
        """
        if self.entries:
            first = self.entry(0)
            last = self.last_entry
            if last.timestamp < first.timestamp:
                raise CorruptIndexError(
                    f"Corrupt time index found, time index file ({self.path}) has non-zero size "
                    f"but the last timestamp is {last.timestamp} which is less than the first "
                    f"timestamp {first.timestamp}", file=self.path)
            if last.offset < self.base_offset:
                raise CorruptIndexError(
                    f"Corrupt time index found, time index file ({self.path}) has non-zero size "
                    f"but the last offset is {last.offset} which is less than the first offset "
                    f"{self.base_offset}", file=self.path)
        self._check_whole_entries("Time index file")
