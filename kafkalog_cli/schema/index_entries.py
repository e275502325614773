"""Index entries, after ``OffsetIndex`` and ``TimeIndex``.

    OffsetIndexEntry (8 bytes) =>
      RelativeOffset => Int32         (offset - segment base offset)
      Position => Int32               (byte position of a batch start in the .log)

    TimeIndexEntry (12 bytes) =>
      Timestamp => Int64              (ms; the largest timestamp seen up to Offset)
      RelativeOffset => Int32

Neither file has a header or a checksum: the broker rebuilds both after a crash.
"""

from __future__ import annotations

import construct as c

OffsetIndexEntry = c.Struct(
    "relative_offset" / c.Int32sb,
    "position" / c.Int32sb,
)

TimeIndexEntry = c.Struct(
    "timestamp" / c.Int64sb,
    "relative_offset" / c.Int32sb,
)

OffsetIndexFile = c.GreedyRange(OffsetIndexEntry)
TimeIndexFile = c.GreedyRange(TimeIndexEntry)
