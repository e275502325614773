"""The iteration order of the Java collections Kafka's tools and coordinators print from,
so kafkalog's text lists things in the order Kafka's own tools do.

Kafka's tools print many lists straight from a hash map (``kafka-log-dirs.sh``'s JSON from
``HashMap`` s, ``kafka-consumer-groups.sh --reset-offsets`` from ``HashMap<TopicPartition,
...>``, ``--list`` from the group coordinator's ``TimelineHashMap`` per
``__consumer_offsets`` partition, in the order of the coordinator runtime's
``ConcurrentHashMap``). Their order is a function of the keys' ``hashCode`` and the
order of insertion; these functions compute it:

* :func:`hash_map_order`: ``java.util.HashMap`` (``hash ^ hash >>> 16``, power-of-two
  tables from 16 doubling past a 0.75 load; a bin keeps insertion order, resizes keep it).
  Bins turned into trees (8 colliding keys in a table of 64 or more) are not modelled.
* :func:`concurrent_hash_map_order`: ``java.util.concurrent.ConcurrentHashMap`` (its
  ``transfer`` reverses part of a bin when the table grows).
* :class:`BaseHashTable`: ``org.apache.kafka.timeline.BaseHashTable`` (the table under
  ``TimelineHashMap``: a multiplicative hash, slots holding arrays in insertion order,
  iterated from each slot's last key).

Hash codes: :func:`java_string_hash` (``String.hashCode``) and
:func:`topic_partition_hash` (``TopicPartition.hashCode``). Nothing here imports the
rest of the package.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF


def _int32(h: int) -> int:
    h &= _MASK32
    return h - (1 << 32) if h >= 1 << 31 else h


def java_string_hash(s: str) -> int:
    """``java.lang.String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` over the UTF-16
    code units, as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _MASK32
    return _int32(h)


def topic_partition_hash(topic: str, partition: int) -> int:
    """``TopicPartition.hashCode``: ``31 * (31 + partition) + topic.hashCode()``."""
    return _int32(31 * (31 + partition) + java_string_hash(topic))


def _spread(h: int) -> int:
    h &= _MASK32
    return h ^ (h >> 16)


def hash_map_order(keys: Iterable[Hashable], hash_code: Callable[[object], int] = None,
                   *, capacity: int = 16) -> list:
    """The iteration order of a ``java.util.HashMap`` (``new HashMap<>()``, or
    ``Collectors.toMap``) into which ``keys`` were put in this order (repeats ignored).

    :param hash_code: the key's Java ``hashCode`` (default: :func:`java_string_hash` for
        ``str`` keys).
    :param capacity: the initial table size (16 for ``new HashMap<>()``).
    """
    hc = hash_code or java_string_hash
    seen: dict = {}
    for k in keys:
        seen.setdefault(k, len(seen))
    n = capacity
    while len(seen) > n * 3 // 4:
        n *= 2
    return sorted(seen, key=lambda k: (_spread(hc(k)) & (n - 1), seen[k]))


def concurrent_hash_map_order(keys: Iterable[Hashable],
                              hash_code: Callable[[object], int]) -> list:
    """The iteration order of a ``java.util.concurrent.ConcurrentHashMap`` (default
    constructor) into which ``keys`` were put in this order: bins by
    ``(h ^ h >>> 16) & 0x7fffffff`` modulo the table size, each bin in its list order,
    which ``transfer`` keeps for the tail run that moves together and reverses before it.
    """
    n = 16
    table: list[list] = [[] for _ in range(n)]
    count = 0
    present: set = set()
    for k in keys:
        if k in present:
            continue
        present.add(k)
        h = _spread(hash_code(k)) & 0x7FFFFFFF
        table[h & (n - 1)].append((h, k))
        count += 1
        if count >= n - (n >> 2):  # addCount: s >= sizeCtl -> transfer
            table = _transfer(table, n)
            n *= 2
    return [k for b in table for _, k in b]


def _transfer(table: list[list], n: int) -> list[list]:
    new: list[list] = [[] for _ in range(2 * n)]
    for i, b in enumerate(table):
        if not b:
            continue
        # lastRun: the longest tail whose nodes all go to the same new bin
        run_bit = b[-1][0] & n
        start = len(b) - 1
        while start > 0 and (b[start - 1][0] & n) == run_bit:
            start -= 1
        ln: list = []
        hn: list = []
        (hn if run_bit else ln).extend(b[start:])
        for node in b[:start]:  # prepended one by one: reversed before the run
            (hn if node[0] & n else ln).insert(0, node)
        new[i] = ln
        new[i + n] = hn
    return new


class BaseHashTable:
    """``org.apache.kafka.timeline.BaseHashTable`` (what ``TimelineHashMap`` and
    ``TimelineHashSet`` iterate): slot ``(hashCode * -7046029254386353131) >>> (65 -
    log2size)`` over 64 bits, tables from 2 slots doubling before a 0.75 load, a slot's
    keys in insertion order (a rehash walks the old slots in order).

    :param hash_code: the key's Java ``hashCode`` (default :func:`java_string_hash`).
    """

    _MULT = -7046029254386353131 & _MASK64

    def __init__(self, hash_code: Callable[[object], int] | None = None):
        self.hash_code = hash_code or java_string_hash
        self.slots: list[list] = [[], []]
        self.size = 0

    def _slot(self, key, n: int) -> int:
        log2size = n.bit_length()  # 32 - numberOfLeadingZeros(n)
        h = self.hash_code(key) & _MASK64  # the int, sign-extended to a long
        return ((h * self._MULT) & _MASK64) >> (65 - log2size)

    def add(self, key) -> None:
        """``baseAddOrReplace``: a key already present keeps its place."""
        n = len(self.slots)
        if (self.size + 1) * 0.75 > n:
            old = self.slots
            n *= 2
            self.slots = [[] for _ in range(n)]
            for s in old:
                for k in s:
                    self.slots[self._slot(k, n)].append(k)
        slot = self.slots[self._slot(key, n)]
        if key not in slot:
            slot.append(key)
            self.size += 1

    def remove(self, key) -> None:
        slot = self.slots[self._slot(key, len(self.slots))]
        if key in slot:
            slot.remove(key)
            self.size -= 1

    def __iter__(self):
        """Slots in order, each slot's keys last-inserted first (the iterators of
        ``SnapshottableHashTable`` take a slot's keys from the end of its list)."""
        for s in self.slots:
            yield from reversed(s)

    def __len__(self) -> int:
        return self.size
