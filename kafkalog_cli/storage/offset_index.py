"""The offset index, after ``OffsetIndex``.

A sparse map from offsets to byte positions in the segment's ``.log``. Entries are
``(relative offset int32, position int32)`` (8 bytes); offsets are stored relative to the
segment's base offset so they fit 4 bytes. Entries are appended in increasing offset
order, at most one per ``index.interval.bytes`` of log appended. The file has no header
and no checksum: the broker rebuilds it after a crash.

To find an offset, look up the largest entry <= it and scan the log forward from that
position (LogSegment.translateOffset).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..constants import INT32_MAX, OFFSET_INDEX_ENTRY_SIZE
from ..errors import CorruptIndexError, IllegalStateError, InvalidArgumentError
from .index import AbstractIndex


@dataclass(frozen=True)
class OffsetPosition:
    """An offset index entry resolved: absolute offset and byte position in the .log."""

    offset: int
    position: int


class OffsetIndex(AbstractIndex):
    """Entries ``(relative offset, position)``; see the module docstring."""

    ENTRY = struct.Struct(">ii")
    KEY_FIELD = 0
    assert ENTRY.size == OFFSET_INDEX_ENTRY_SIZE

    def _key(self, slot: int) -> int:
        return self.raw_entry(slot)[0] + self.base_offset

    def entry(self, n: int) -> OffsetPosition:
        rel, pos = self.raw_entry(n)
        return OffsetPosition(self.base_offset + rel, pos)

    def entries_list(self) -> list[OffsetPosition]:
        base = self.base_offset
        return [OffsetPosition(base + r, p) for r, p in self.raw_entries()]

    @property
    def last_offset(self) -> int:
        """The last entry's offset, or the base offset when empty (OffsetIndex.lastOffset)."""
        if self.entries == 0:
            return self.base_offset
        return self.entry(self.entries - 1).offset

    def lookup(self, target_offset: int) -> OffsetPosition:
        """OffsetIndex.lookup: the largest entry with offset <= ``target_offset``, or
        ``(base_offset, 0)`` when there is none."""
        slot = self.largest_lower_bound_slot(target_offset)
        if slot == -1:
            return OffsetPosition(self.base_offset, 0)
        return self.entry(slot)

    def can_append_offset(self, offset: int) -> bool:
        """OffsetIndex.canAppendOffset: the offset fits as a relative int32."""
        rel = offset - self.base_offset
        return 0 <= rel <= INT32_MAX

    def append(self, offset: int, position: int) -> None:
        """OffsetIndex.append: add ``(offset, position)``.

        Raises:
            IllegalStateError: the index is full.
            InvalidArgumentError: ``offset`` is not larger than the last entry's
                (InvalidOffsetException) or does not fit relative to the base offset.
        """
        if self.is_full:
            raise IllegalStateError(f"Attempt to append to a full index (size = {self.entries}).",
                                    file=self.path)
        if self.entries and offset <= self.last_offset:
            raise InvalidArgumentError(
                f"Attempt to append an offset ({offset}) to position {self.entries} no larger "
                f"than the last offset appended ({self.last_offset}) to {self.path}.")
        if not self.can_append_offset(offset):
            raise InvalidArgumentError(
                f"offset {offset} cannot be stored relative to base offset {self.base_offset}")
        self._append_raw(offset - self.base_offset, position)

    def truncate_to(self, offset: int) -> None:
        """Remove entries with offset >= ``offset`` (OffsetIndex.truncateTo)."""
        slot = self.largest_lower_bound_slot(offset)
        if slot == -1:
            n = 0
        elif self.entry(slot).offset == offset:
            n = slot
        else:
            n = slot + 1
        self.truncate_to_entries(n)

    def sanity_check(self) -> None:
        """OffsetIndex.sanityCheck, the check the broker runs at start-up.

        Raises:
            CorruptIndexError: the last offset is below the base offset, or the file length
                is not a multiple of 8.
        """
        if self.entries and self.last_offset < self.base_offset:
            raise CorruptIndexError(
                f"Corrupt index found, index file {self.path} has non-zero size but the last "
                f"offset is {self.last_offset} which is less than the base offset "
                f"{self.base_offset}", file=self.path)
        self._check_whole_entries("Index file")
