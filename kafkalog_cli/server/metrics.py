"""Per-topic meters named and counted as ``BrokerTopicStats`` counts them:

* ``MessagesInPerSec``: records appended (``LogAppendInfo.numMessages``), on success only;
* ``BytesInPerSec``: the partition's records bytes of a successful append;
* ``BytesOutPerSec``: records bytes returned to consumers by Fetch;
* ``TotalProduceRequestsPerSec`` / ``FailedProduceRequestsPerSec``: per partition of a
  Produce request that reached the append (failed: errors other than the "known"
  exceptions ReplicaManager does not count, e.g. CORRUPT_MESSAGE);
* ``TotalFetchRequestsPerSec``: per partition fetched.

Each meter keeps a count and a one-minute exponentially weighted rate ticked every 5 s, as
Yammer's ``Meter.oneMinuteRate``; :meth:`BrokerTopicStats.report` gives one line per
topic (plus ``AllTopics``).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict

METERS = ("MessagesInPerSec", "BytesInPerSec", "BytesOutPerSec", "TotalProduceRequestsPerSec",
          "FailedProduceRequestsPerSec", "TotalFetchRequestsPerSec")
TICK = 5.0
_ALPHA = 1 - math.exp(-TICK / 60.0)


class Meter:
    __slots__ = ("count", "_uncounted", "rate", "_initialized", "_last_tick")

    def __init__(self):
        self.count = 0
        self._uncounted = 0
        self.rate = 0.0
        self._initialized = False
        self._last_tick = time.monotonic()

    def mark(self, n: int = 1) -> None:
        self._tick_if_needed()
        self.count += n
        self._uncounted += n

    def _tick_if_needed(self) -> None:
        now = time.monotonic()
        while now - self._last_tick >= TICK:
            instant = self._uncounted / TICK
            self._uncounted = 0
            if self._initialized:
                self.rate += _ALPHA * (instant - self.rate)
            else:
                self.rate, self._initialized = instant, True
            self._last_tick += TICK

    def one_minute_rate(self) -> float:
        self._tick_if_needed()
        return self.rate


class BrokerTopicStats:
    def __init__(self):
        self.topics: dict[str, dict[str, Meter]] = defaultdict(
            lambda: {m: Meter() for m in METERS})
        self.all_topics = {m: Meter() for m in METERS}

    def mark(self, topic: str, meter: str, n: int = 1) -> None:
        self.topics[topic][meter].mark(n)
        self.all_topics[meter].mark(n)

    def report(self) -> list[str]:
        lines = []
        for name, meters in [("AllTopics", self.all_topics), *sorted(self.topics.items())]:
            parts = [f"{m}={meters[m].count} ({meters[m].one_minute_rate():.1f}/s)"
                     for m in METERS if meters[m].count]
            if parts:
                lines.append(f"topic={name} " + " ".join(parts))
        return lines
