"""The iteration order of Java's ``HashMap`` / ``HashSet`` over ``String`` keys, where a
broker's answer lists things in it (the mechanisms of SaslHandshake, the users of
DescribeUserScramCredentials and AlterUserScramCredentials): by bucket ``(h ^ h >>> 16) &
(capacity - 1)`` of ``String.hashCode``, in insertion order within a bucket (a resize
keeps that order). Trees of 8+ colliding keys are not modelled."""

from __future__ import annotations

from ..coordinator_log import java_string_hash


def hash_map_capacity(n: int) -> int:
    """The table size of a default ``new HashMap<>()`` holding ``n`` keys (16, doubled
    whenever the size passes 0.75 of it)."""
    cap = 16
    while n > cap * 0.75:
        cap <<= 1
    return cap


def hash_set_from_collection_capacity(n: int) -> int:
    """The table size of ``new HashSet<>(collection of n)``: ``tableSizeFor(max(n / .75f
    + 1, 16))``, grown further if needed."""
    wanted = max(int(n / 0.75) + 1, 16)
    cap = 1
    while cap < wanted:
        cap <<= 1
    return max(cap, hash_map_capacity(n))


def java_order(keys, capacity: int | None = None) -> list[str]:
    """The distinct ``keys`` (first insertion kept) in the iteration order of a Java hash
    table of ``capacity`` (default: a default HashMap's for their count)."""
    distinct = list(dict.fromkeys(keys))
    cap = capacity or hash_map_capacity(len(distinct))

    def bucket(s: str) -> int:
        h = java_string_hash(s) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (cap - 1)

    return sorted(distinct, key=bucket)
