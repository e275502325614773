"""Clocks, after Kafka's ``Time``: the engine never reads the wall clock itself.

Every decision that depends on time (segment.ms rolls, LogAppendTime, the timestamp
window, flush.ms) takes ``clock.milliseconds()``; tests pass a :class:`ManualClock`.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """Milliseconds since the epoch (``Time.milliseconds``)."""

    def milliseconds(self) -> int: ...


class SystemClock:
    """The wall clock (``Time.SYSTEM``)."""

    def milliseconds(self) -> int:
        return time.time_ns() // 1_000_000


class ManualClock:
    """A clock that moves only when told (``MockTime``).

    Args:
        now_ms: the starting time in ms.
        auto_tick_ms: added after every read (0: frozen).
    """

    def __init__(self, now_ms: int = 1_700_000_000_000, auto_tick_ms: int = 0):
        self.now_ms = now_ms
        self.auto_tick_ms = auto_tick_ms

    def milliseconds(self) -> int:
        now = self.now_ms
        self.now_ms += self.auto_tick_ms
        return now

    def sleep(self, ms: int) -> None:
        self.now_ms += ms


SYSTEM = SystemClock()
