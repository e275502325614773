"""When to roll a segment: ``RollParams`` and ``LogSegment.shouldRoll``, as pure functions.

A segment rolls before an append when any of these holds (Kafka 4.0):

* ``size > segment.bytes - incoming size`` (the append would not fit);
* ``size > 0`` and the time waited for roll exceeds ``segment.ms - jitter``, where the time
  waited is the incoming max timestamp minus the segment's first batch max timestamp when
  that is >= 0, else ``now - created`` (``LogSegment.timeWaitedForRoll``);
* the offset index is full, or the time index is full (it keeps one slot for the entry
  written at roll);
* the incoming last offset cannot be stored relative to the segment's base offset.

Jitter is ``abs(random) % min(segment.jitter.ms, segment.ms)``, drawn once per segment
(``LogConfig.randomSegmentJitter``); pass ``rng`` to make it deterministic.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..constants import INT32_MAX


@dataclass(frozen=True)
class RollParams:
    """The inputs of a roll decision (``RollParams`` plus the segment's state).

    Attributes:
        max_segment_ms: segment.ms.
        max_segment_bytes: segment.bytes.
        max_timestamp_in_messages: the incoming append's max timestamp (ms, -1 none).
        max_offset_in_messages: the incoming append's last offset.
        messages_size: the incoming append's size in bytes.
        now: the clock (ms).
        segment_size: bytes in the active segment.
        segment_base_offset: its base offset.
        rolling_based_timestamp: its first batch's max timestamp (None when empty).
        created_ms: when the segment object was created (ms).
        roll_jitter_ms: its jitter (ms).
        offset_index_full / time_index_full: the indexes' ``is_full``.
    """

    max_segment_ms: int
    max_segment_bytes: int
    max_timestamp_in_messages: int
    max_offset_in_messages: int
    messages_size: int
    now: int
    segment_size: int
    segment_base_offset: int
    rolling_based_timestamp: int | None
    created_ms: int
    roll_jitter_ms: int = 0
    offset_index_full: bool = False
    time_index_full: bool = False


def time_waited_for_roll(p: RollParams) -> int:
    """LogSegment.timeWaitedForRoll: ms since the first batch (by timestamps), or since
    the segment was created when the first batch has no timestamp."""
    ts = -1 if p.rolling_based_timestamp is None else p.rolling_based_timestamp
    if ts >= 0:
        return p.max_timestamp_in_messages - ts
    return p.now - p.created_ms


def roll_reasons(p: RollParams) -> list[str]:
    """Every roll condition that holds, by name: ``segment.bytes``, ``segment.ms``,
    ``offset-index-full``, ``time-index-full``, ``offset-overflow``."""
    out = []
    if p.segment_size > p.max_segment_bytes - p.messages_size:
        out.append("segment.bytes")
    if p.segment_size > 0 and time_waited_for_roll(p) > p.max_segment_ms - p.roll_jitter_ms:
        out.append("segment.ms")
    if p.offset_index_full:
        out.append("offset-index-full")
    if p.time_index_full:
        out.append("time-index-full")
    rel = p.max_offset_in_messages - p.segment_base_offset
    if not 0 <= rel <= INT32_MAX:
        out.append("offset-overflow")
    return out


def should_roll(p: RollParams) -> bool:
    """LogSegment.shouldRoll."""
    return bool(roll_reasons(p))


def random_segment_jitter(segment_jitter_ms: int, segment_ms: int,
                          rng: random.Random | None = None) -> int:
    """LogConfig.randomSegmentJitter: 0 when jitter is 0, else
    ``abs(random long) % min(jitter, segment.ms)``."""
    if segment_jitter_ms == 0:
        return 0
    r = (rng or random).getrandbits(63)
    return r % min(segment_jitter_ms, segment_ms)
