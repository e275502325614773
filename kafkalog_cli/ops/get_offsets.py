"""``kafkalog get-offsets``: ``kafka-get-offsets.sh`` (Kafka 4.4.0's GetOffsetShell)
answered from a broker's log directories.

The partitions are those of the log directories (:mod:`.logdirs`), filtered as the tool
filters the topics a broker lists: ``--topic`` a regular expression the whole name must
match (with the tool's clean-up: commas become ``|``, spaces and surrounding quotes go),
``--partitions`` a list of ids, or ``--topic-partitions`` the tool's rules
(``topic-regex:N``, ``:N-M`` lower inclusive / upper exclusive, ``:N-``, ``:-M``);
``exclude_internal`` leaves out ``Topic.isInternal`` topics.

Each offset is what the broker's ListOffsets answers for ``--time``
(``UnifiedLog.fetchOffsetByTimestamp`` behind ``Partition.fetchOffsetForTimestamp``, the
one implementation in :func:`kafkalog_cli.server.reads.offset_for_timestamp`):
``-1``/latest the log end offset (the high watermark of a single replica), ``-2``/earliest
and ``-4``/earliest-local the log start offset, ``-3``/max-timestamp the offset of the
record with the largest timestamp, ``-5``/latest-tiered and ``-6``/earliest-pending-upload
-1 (no tiered storage), a timestamp the first offset whose record's timestamp is at or
after it. As the tool does, a partition whose answer is -1 (or none) is left out, and the
lines are sorted by ``topic-partition`` text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import InvalidArgumentError, RefusedError
from .logdirs import BrokerLogDirs, is_internal

_SPECIAL = {"earliest": -2, "latest": -1, "max-timestamp": -3, "earliest-local": -4,
            "latest-tiered": -5, "earliest-pending-upload": -6}
#: GetOffsetShell.TOPIC_PARTITION_PATTERN
_RULE = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")
_INT_MAX = 2**31 - 1


def parse_time(text: str) -> int:
    """GetOffsetShell.parseOffsetSpec: a name or a long (-1..-6 are the names' numbers).

    Raises:
        InvalidArgumentError: neither (the tool's message).
    """
    if text in _SPECIAL:
        return _SPECIAL[text]
    try:
        return int(text)
    except ValueError:
        raise InvalidArgumentError(
            f"Malformed time argument {text}. Please use -1 or latest / -2 or earliest / -3 "
            "or max-timestamp / -4 or earliest-local / -5 or latest-tiered / -6 or "
            "earliest-pending-upload, or a specified long format timestamp") from None


def _topic_regex(raw: str):
    """TopicFilter's clean-up and compile."""
    regex = raw.strip().replace(",", "|").replace(" ", "")
    regex = re.sub(r"^[\"']+", "", regex)
    regex = re.sub(r"[\"']+$", "", regex)
    try:
        return re.compile(regex)
    except re.error:
        raise InvalidArgumentError(f"{regex} is an invalid regex.") from None


class _Rule:
    def __init__(self, topic: str | None, lo: int, hi: int, exact: int | None = None,
                 ids: set[int] | None = None):
        self.topic = _topic_regex(topic if topic is not None else ".*")
        self.lo, self.hi, self.exact, self.ids = lo, hi, exact, ids

    def topic_allowed(self, t: str, exclude_internal: bool) -> bool:
        return self.topic.fullmatch(t) is not None and not (exclude_internal and is_internal(t))

    def partition_allowed(self, p: int) -> bool:
        if self.ids is not None:
            return not self.ids or p in self.ids
        if self.exact is not None:
            return p == self.exact
        return self.lo <= p < self.hi


def _rules(topic, partitions, topic_partitions) -> list[_Rule]:
    if topic_partitions is not None:
        if topic is not None or partitions is not None:
            raise InvalidArgumentError("--topic-partitions cannot be used with --topic or "
                                       "--partitions")
        out = []
        for spec in topic_partitions.split(","):
            m = _RULE.fullmatch(spec)
            if m is None:
                raise InvalidArgumentError(f"Invalid rule specification: {spec}")
            g = [x if x else None for x in m.groups()]
            if g[1] is not None:
                out.append(_Rule(g[0], 0, 0, exact=int(g[1])))
            else:
                out.append(_Rule(g[0], int(g[2]) if g[2] else 0,
                                 int(g[3]) if g[3] else _INT_MAX))
        return out
    ids: set[int] = set()
    if partitions:
        try:
            ids = {int(p) for p in partitions.split(",")}
        except ValueError:
            raise InvalidArgumentError("--partitions expects a comma separated list of numeric "
                                       f"partition ids, but received: {partitions}") from None
    return [_Rule(topic, 0, 0, ids=ids)]


@dataclass
class GetOffsetsResult:
    """The offsets found: ``[(topic, partition, offset, timestamp)]`` sorted as the tool
    prints them; ``time`` the ListOffsets timestamp asked."""

    time: int
    offsets: list[tuple[str, int, int, int]]
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        return {"time": self.time,
                "offsets": [{"topic": t, "partition": p, "offset": o, "timestamp": ts}
                            for t, p, o, ts in self.offsets],
                "ok": self.ok, "problems": self.problems}


def get_offsets(paths, *, topic: str | None = None, partitions: str | None = None,
                topic_partitions: str | None = None, time: str | int = "latest",
                exclude_internal: bool = False) -> GetOffsetsResult:
    """GetOffsetShell.fetchOffsets offline (see the module docstring).

    Raises:
        InvalidArgumentError: a malformed ``time``, rule or regex (the tool's messages).
        RefusedError: no partition matches ("Could not match any topic-partitions with the
            specified filters").
        NotAKafkaFileError / UnreadableError: a path holds no log directory.
    """
    from ..server.reads import offset_for_timestamp
    from ..server.storage_adapter import ReadOnlyPartition

    ts = parse_time(time) if isinstance(time, str) else time
    rules = _rules(topic, partitions, topic_partitions)
    dirs = BrokerLogDirs.open(paths)
    try:
        chosen = [tp for tp in dirs.partitions
                  if any(r.topic_allowed(tp[0], exclude_internal) and r.partition_allowed(tp[1])
                         for r in rules)]
        if not chosen:
            raise RefusedError("Could not match any topic-partitions with the specified "
                               "filters")
        out = []
        for t, p in chosen:
            pd = dirs.get(t, p)
            part = ReadOnlyPartition(pd.directory, pd.log.log_start_offset)
            try:
                found = offset_for_timestamp(part, ts)
            finally:
                part.close()
            if found is not None and found[1] != -1:
                out.append((t, p, found[1], found[0]))
        out.sort(key=lambda r: f"{r[0]}-{r[1]}")
        return GetOffsetsResult(ts, out, list(dirs.problems))
    finally:
        dirs.close()
