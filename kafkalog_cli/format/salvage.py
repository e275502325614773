"""Reading past damage: the one resynchronisation routine of ``--skip-corrupt``.

Kafka's readers stop at the first batch that fails (a CRC mismatch, a size below the
minimum, a size running past the end): the broker's recovery truncates the log there, a
consumer throws. A salvage read (``read``, ``dump-segment`` and ``export`` with
``--skip-corrupt``, the Spark source with ``failOnDataLoss=false``) goes on instead: from
the failing batch it looks for the next position where a whole batch starts whose CRC
is valid and whose offsets are plausible, reports the bytes in between, and reads on.
This is kafkalog's extension; Kafka has no such reader.

*Plausible offsets* (the base offset is outside the CRC, so a batch found by a byte scan
must also fit where it lies): ``base offset >= the segment's base offset``, ``last offset
>= base offset``, ``last offset - segment base <= 2^31 - 1`` (a segment's relative
offsets are int32), and ``base offset > the last offset read before`` when one was.

The scan prefers the position the failing batch's own size names (a batch whose CRC
fails usually has an intact size); when no good batch starts there it tries every
position after the failing one, candidates found by a regular expression on the header
layout (a magic byte at byte 16, a size that is positive and at least a header's), each
checked by reading the batch there and its CRC.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from ..constants import INT32_MAX, MAGIC_V2
from ..errors import CorruptRecordError, KafkalogError
from ..schema.legacy import MAGIC_OFFSET as LEGACY_MAGIC_OFFSET
from ..schema.legacy import RECORD_OVERHEAD_V0 as LEGACY_RECORD_OVERHEAD_V0
from ..schema.record_batch import LENGTH_OFFSET, MAGIC_OFFSET, MIN_BATCH_LENGTH
from .legacy import LegacyRecordBatch
from .records import FileRecords

assert MAGIC_OFFSET == LEGACY_MAGIC_OFFSET == 16 and LENGTH_OFFSET == 8


class SkippedBytes(NamedTuple):
    """Bytes ``[position, position + size)`` of ``file`` a salvage read passed over, and
    why (the failing batch's error)."""

    file: str | None
    position: int
    size: int
    reason: str

    def message(self) -> str:
        """One line naming the file and byte position, for stderr."""
        return str(KafkalogError(
            f"skipped {self.size} bytes that are not a valid batch ({self.reason}); reading "
            f"resumed at byte {self.position + self.size}", file=self.file,
            position=self.position))

    def to_dict(self) -> dict:
        """The ``invalidBytes`` JSON object of a skipped range (docs/json.md)."""
        return {"type": "invalidBytes", "file": self.file, "position": self.position,
                "bytes": self.size, "reason": self.reason, "skipped": True}


# a candidate batch start: 8 bytes of offset, a non-negative size (its first byte below
# 0x80) that is not below the smallest entry, 4 more bytes, then the magic byte
_V2_CANDIDATE = re.compile(
    rb"(?=.{8}(?!\x00\x00\x00[\x00-" + re.escape(bytes([MIN_BATCH_LENGTH - 1])) + rb"])"
    rb"[\x00-\x7f].{7}\x02)", re.S)
_ANY_CANDIDATE = re.compile(
    rb"(?=.{8}(?!\x00\x00\x00[\x00-" + re.escape(bytes([LEGACY_RECORD_OVERHEAD_V0 - 1]))
    + rb"])[\x00-\x7f].{7}[\x00-\x02])", re.S)


def good_batch_at(view, position: int, end: int, *, base_offset: int = 0,
                  after_offset: int | None = None):
    """The whole batch starting at ``position`` of ``view[:end]`` when its CRC is valid
    and its offsets are plausible for a segment based at ``base_offset`` after offset
    ``after_offset`` (see the module docstring), else None."""
    fr = FileRecords(view, position, end)
    it = fr.batches()
    b = next(it, None)
    it.close()
    if b is None or not b.is_valid:
        return None
    return b if plausible(b, base_offset, after_offset) else None


def plausible(batch, base_offset: int, after_offset: int | None) -> bool:
    """Whether ``batch``'s offsets can lie where it was found (the module docstring)."""
    last = batch.last_offset
    try:
        first = batch.base_offset
    except KafkalogError:  # a legacy wrapper whose inner messages do not read
        return False
    return (base_offset <= first <= last and last - base_offset <= INT32_MAX
            and (after_offset is None or first > after_offset))


def resync(view, start: int, end: int | None = None, *, base_offset: int = 0,
           after_offset: int | None = None, magics: tuple = (0, 1, MAGIC_V2),
           hint: int | None = None) -> int | None:
    """The first position ``>= start`` of ``view[:end]`` where a whole batch with a valid
    CRC and plausible offsets starts (:func:`good_batch_at`), or None when there is none.
    ``hint``, when given and ``>= start``, is tried first (the position the failing
    batch's size names). ``magics``: the batch formats to look for (``(2,)`` in a log of
    v2 batches: a scan of garbage then checks ~1 position in 512)."""
    mv = view if isinstance(view, memoryview) else memoryview(view)
    end = len(mv) if end is None else min(end, len(mv))
    if hint is not None and start <= hint < end and \
            good_batch_at(mv, hint, end, base_offset=base_offset,
                          after_offset=after_offset) is not None:
        return hint
    pattern = _V2_CANDIDATE if tuple(magics) == (MAGIC_V2,) else _ANY_CANDIDATE
    for m in pattern.finditer(mv, start, end):
        q = m.start()
        if mv[q + MAGIC_OFFSET] not in magics:
            continue
        if good_batch_at(mv, q, end, base_offset=base_offset,
                         after_offset=after_offset) is not None:
            return q
    return None


class SalvagedRecords:
    """The batches of ``view[start:end]`` (a segment's ``.log``, based at ``base_offset``)
    read past damage: the interface of :class:`~kafkalog_cli.format.records.FileRecords`
    (``batches()``, ``valid_end``, ``invalid_bytes``, ``stop_error``, ``end``), plus
    :attr:`skipped`, the :class:`SkippedBytes` passed over, filled as iteration goes.

    Every batch yielded has a valid CRC and plausible offsets. A batch failing either,
    or bytes that are not a whole batch, start a skipped range that ends where
    :func:`resync` finds the next good batch; with none after them, they are the
    invalid bytes at the end (``valid_end``, ``stop_error``), as FileRecords reports a
    bad tail. ``after_offset``: the last offset read before ``start`` (None: unknown).
    """

    __slots__ = ("view", "start", "end", "file", "base_offset", "after_offset",
                 "valid_end", "stop_error", "skipped")

    def __init__(self, view, start: int = 0, end: int | None = None, *, base_offset: int = 0,
                 file=None, after_offset: int | None = None):
        self.view = view if isinstance(view, memoryview) else memoryview(view)
        self.start = start
        self.end = len(self.view) if end is None else min(end, len(self.view))
        self.file = None if file is None else str(file)
        self.base_offset = base_offset
        self.after_offset = after_offset
        self.valid_end = start
        self.stop_error = None
        self.skipped: list[SkippedBytes] = []

    @property
    def invalid_bytes(self) -> int:
        """Bytes after the last whole batch that no good batch follows."""
        return self.end - self.valid_end

    def __iter__(self):
        return self.batches()

    def batches(self) -> Iterator:
        view, end, base = self.view, self.end, self.base_offset
        pos = self.start
        last = self.after_offset
        magics: tuple = (0, 1, MAGIC_V2)
        while pos < end:
            fr = FileRecords(view, pos, end, self.file)
            bad = hint = None
            from_batch = False
            for b in fr.batches():
                if not b.is_valid:
                    reason = (f"Record is corrupt (stored crc = {b.crc}, computed crc = "
                              f"{b.compute_crc()})")
                elif not plausible(b, base, last):
                    reason = (f"batch offsets {_first(b)}..{b.last_offset} do not follow "
                              f"offset {last} in the segment based at {base}")
                else:
                    last = b.last_offset
                    magics = (MAGIC_V2,) if b.magic >= MAGIC_V2 else (0, 1)
                    self.valid_end = b.next_position
                    yield b
                    continue
                bad, hint, from_batch = b.position, b.next_position, True
                break
            else:
                self.valid_end = fr.valid_end
                if fr.valid_end >= end:
                    return
                bad = fr.valid_end
                reason = (fr.stop_error.message if fr.stop_error is not None else
                          _partial(view, bad, end))
            nxt = resync(view, bad + 1, end, base_offset=base, after_offset=last,
                         magics=magics, hint=hint)
            if nxt is None:
                # no good batch after it: the invalid bytes at the end, as FileRecords
                # reports them (a partial batch has no stop_error)
                self.valid_end = bad
                self.stop_error = (CorruptRecordError(reason, file=self.file, position=bad)
                                   if from_batch else fr.stop_error)
                return
            self.skipped.append(SkippedBytes(self.file, bad, nxt - bad, reason))
            pos = nxt


def _partial(view, pos: int, end: int) -> str:
    """Why the bytes ``[pos, end)`` that FileRecords stopped at without an error are not a
    batch: a size running past the end, or too few bytes for a header."""
    if end - pos >= LENGTH_OFFSET + 4:
        size = int.from_bytes(view[pos + LENGTH_OFFSET:pos + LENGTH_OFFSET + 4], "big",
                              signed=True)
        return f"a batch size of {size} runs past byte {end}"
    return f"{end - pos} bytes are too short for a batch header"


def _first(b) -> int:
    if isinstance(b, LegacyRecordBatch):
        try:
            return b.base_offset
        except KafkalogError:
            return b.last_offset
    return b.base_offset
