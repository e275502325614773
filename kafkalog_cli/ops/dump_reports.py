"""The reports DumpLogSegments prints after the last file (index-vs-log mismatches, the
time-index errors), their diagnostic kinds, and the iteration order of the Java HashMap
its tool keeps them in (:func:`java_hash_map_order`). The non-consecutive offsets report
and the holding back of all of them are :mod:`kafkalog_cli.ops.dump`'s."""

from __future__ import annotations

from ..storage.location import as_path

# -- the reports DumpLogSegments prints after the last file ------------------------------------

NON_CONSECUTIVE = "non_consecutive_offsets"
CORRUPT_SNAPSHOT = "corrupt_snapshot"
INDEX_MISMATCH = "index_mismatch"
TIME_INDEX_MISMATCH = "time_index_mismatch"
TIME_INDEX_OUT_OF_ORDER = "time_index_out_of_order"
TIME_INDEX_NOT_FOUND = "time_index_offset_not_found"

#: the diagnostics Kafka 4's tool collects in maps keyed by a file's absolute path and
#: prints after the last file, in this order (``main``: the index mismatches, then
#: ``TimeIndexDumpErrors.printErrors``, then the non-consecutive offsets)
DEFERRED_KINDS = (INDEX_MISMATCH, TIME_INDEX_MISMATCH, TIME_INDEX_OUT_OF_ORDER,
                  TIME_INDEX_NOT_FOUND, NON_CONSECUTIVE)


def _java_string_hash(s: str) -> int:
    """``String.hashCode`` (over UTF-16 code units, int32 arithmetic), unsigned."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def java_hash_map_order(calls: list[tuple[str, int]]) -> list[str]:
    """The iteration order of a ``java.util.HashMap<String, ...>`` filled by
    ``computeIfAbsent``: ``calls`` is ``[(key, number of calls in a row)]`` in call order.
    Buckets in index order; computeIfAbsent puts a new key at the head of its bucket, and
    a resize splits each bucket keeping its order. The table starts at 16 buckets and
    doubles when a call finds more entries than 0.75 of them (before it inserts). Tree
    bins (8 keys in one bucket) are not modelled."""
    cap = 0
    buckets: list[list[str]] = []
    seen: set[str] = set()

    def spread(k: str) -> int:
        h = _java_string_hash(k)
        return h ^ (h >> 16)

    def resize() -> None:
        nonlocal cap, buckets
        new_cap = 16 if cap == 0 else cap * 2
        new: list[list[str]] = [[] for _ in range(new_cap)]
        for bucket in buckets:
            for k in bucket:
                new[spread(k) & (new_cap - 1)].append(k)
        cap, buckets = new_cap, new

    for key, n in calls:
        for i in range(min(n, 2)):  # after one resize a further call cannot resize
            if cap == 0 or len(seen) > cap * 3 // 4:
                resize()
            if i == 0 and key not in seen:
                seen.add(key)
                buckets[spread(key) & (cap - 1)].insert(0, key)
    return [k for bucket in buckets for k in bucket]


def index_mismatch_event(file: str, mismatches: list[tuple[int, int]]) -> dict:
    """``Mismatches in :F`` / ``  Index offset: A, log offset: B`` of DumpLogSegments
    .dumpIndex: its map is a TreeMap in reverse order, so the lines run by index offset,
    highest first, one per index offset (the last log offset found for it)."""
    key = str(as_path(file).absolute())
    pairs = dict(mismatches)
    lines = [f"Mismatches in :{key}"]
    lines += [f"  Index offset: {a}, log offset: {pairs[a]}"
              for a in sorted(pairs, reverse=True)]
    return {"type": "diagnostic", "stream": "stderr", "kind": INDEX_MISMATCH,
            "file": file, "key": key, "calls": len(mismatches), "message": "\n".join(lines),
            "mismatches": [{"indexOffset": a, "logOffset": b} for a, b in mismatches]}


_TIME_INDEX_TEXT = {
    TIME_INDEX_MISMATCH: ("Found timestamp mismatch in :{}",
                          "  Index timestamp: {}, log timestamp: {}"),
    TIME_INDEX_OUT_OF_ORDER: ("Found out of order timestamp in :{}",
                              "  Index timestamp: {}, Previously indexed timestamp: {}"),
    TIME_INDEX_NOT_FOUND: ("The following indexed offsets are not found in :{}",
                           "Indexed offset: {}, found log offset: {}"),
}


def time_index_event(kind: str, file: str, entries: list[tuple[int, int]]) -> dict:
    """One of ``TimeIndexDumpErrors``' reports for a ``.timeindex`` (Kafka 4.4's text)."""
    key = str(as_path(file).absolute())
    head, line = _TIME_INDEX_TEXT[kind]
    lines = [head.format(key)] + [line.format(a, b) for a, b in entries]
    return {"type": "diagnostic", "stream": "stderr", "kind": kind,
            "file": file, "key": key, "calls": len(entries), "message": "\n".join(lines),
            "entries": [list(e) for e in entries]}
