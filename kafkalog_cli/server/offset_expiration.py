"""Committed offsets' expiration in serve's group coordinator, after Kafka 4.4's
``GroupCoordinatorShard.cleanupGroupMetadata``, ``OffsetMetadataManager
.cleanupExpiredOffsets``, ``ClassicGroup.offsetExpirationCondition`` /
``isSubscribedToTopic`` and ``GroupMetadataManager.maybeDeleteGroup``, run every
``offsets.retention.check.interval.ms`` (default 600000) with ``offsets.retention.minutes``
(default 10080):

* a classic group with a protocol type that is Empty: its offsets expire
  ``offsets.retention.minutes`` after the group became Empty (``currentStateTimestamp``),
  or after their commit when that time is unknown;
* a Stable group of the consumer protocol whose subscriptions are known: the offsets of
  topics it no longer subscribes to expire that long after their commit;
* any other state (a rebalance, a protocol other than consumer): nothing expires;
* a group without a protocol type (offsets committed by a standalone consumer): each
  offset that long after its commit;
* an offset with a pending transactional commit (TxnOffsetCommit without its marker) and
  the offsets of subscribed topics never expire;
* an Empty group left with no offsets and no open transaction is deleted.

Expired offsets get tombstones in ``__consumer_offsets``, a deleted group its
GroupMetadata tombstone after them (:meth:`~.classic_group.GroupStore.offsets_deleted`).
The clock is the caller's (``now_ms``): the broker passes the wall clock, tests a fake one.

Differences: Kafka appends the whole pass's records of a ``__consumer_offsets`` partition
as one batch; here each group's records are one batch. OffsetCommitValue v1's
``expireTimestamp`` (kept by no 4.x broker) is not read back, so such offsets follow the
rules above.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from .classic_group import DEAD, EMPTY, STABLE, Group, OffsetAndMetadata

log = logging.getLogger("kafkalog.serve")

#: offsets.retention.minutes' default (GroupCoordinatorConfig), in ms
DEFAULT_RETENTION_MS = 10080 * 60_000
#: offsets.retention.check.interval.ms' default
DEFAULT_CHECK_INTERVAL_MS = 600_000


def is_subscribed_to_topic(group: Group, topic: str) -> bool:
    """ClassicGroup.isSubscribedToTopic: in the members' subscriptions when they are
    known (the consumer protocol), else whether the group uses the consumer protocol."""
    if group.subscribed_topics is None:
        return group.uses_consumer_protocol()
    return topic in group.subscribed_topics


def expiration_base(group: Group) -> Callable[[OffsetAndMetadata], int] | None:
    """ClassicGroup.offsetExpirationCondition: the start of an offset's retention period
    (a function of the offset, epoch ms), or None when the group's offsets do not expire
    in its present state (see the module docstring)."""
    if not group.protocol_type:
        return _commit_timestamp
    if group.state == EMPTY:
        ts = group.current_state_timestamp
        return _commit_timestamp if ts is None else (lambda o: ts)
    if group.uses_consumer_protocol() and group.subscribed_topics is not None \
            and group.state == STABLE:
        return _commit_timestamp
    return None


def _commit_timestamp(o: OffsetAndMetadata) -> int:
    return o.commit_timestamp_ms


def cleanup_group_metadata(coordinator, now_ms: int, retention_ms: int = DEFAULT_RETENTION_MS
                           ) -> tuple[list[tuple[str, str, int]], list[str]]:
    """One pass over ``coordinator``'s groups (a :class:`~.groups.GroupCoordinator`) at
    ``now_ms`` (epoch ms) with ``retention_ms`` (``offsets.retention.minutes`` in ms):
    expired offsets removed and tombstoned, Empty groups left without offsets deleted.
    Returns ``(expired (group, topic, partition) in the groups' order, deleted group
    ids)``."""
    pending = {(gid, t, p) for by_group in coordinator.pending_txn_offsets.values()
               for gid, offs in by_group.items() for t, p in offs}
    open_txn = {gid for gid, _, _ in pending}
    expired: list[tuple[str, str, int]] = []
    deleted: list[str] = []
    for gid, group in list(coordinator.groups.items()):
        gone, all_expired = _expired_offsets(group, now_ms, retention_ms, pending)
        for tp in gone:
            del group.offsets[tp]
        expired += [(gid, t, p) for t, p in gone]
        delete = all_expired and gid not in open_txn and group.state == EMPTY
        if delete:
            group.transition(DEAD, now_ms)
            del coordinator.groups[gid]
            deleted.append(gid)
        if gone or delete:
            coordinator.store.offsets_deleted(gid, gone, group=delete)
    if expired or deleted:
        log.info("removed %d expired offsets and %d groups", len(expired), len(deleted))
    return expired, deleted


def _expired_offsets(group: Group, now_ms: int, retention_ms: int, pending: set
                     ) -> tuple[list[tuple[str, int]], bool]:
    """OffsetMetadataManager.cleanupExpiredOffsets of one group: its expired
    ``(topic, partition)`` and whether every offset it had expired (True with none)."""
    if not group.offsets:
        return [], True
    base = expiration_base(group)
    if base is None:
        return [], False
    gone, all_expired = [], True
    for (t, p), o in group.offsets.items():
        if is_subscribed_to_topic(group, t) or (group.group_id, t, p) in pending:
            all_expired = False
        elif now_ms - base(o) >= retention_ms:
            gone.append((t, p))
        else:
            all_expired = False
    return gone, all_expired


def wall_clock_ms() -> int:
    """The broker's clock for the passes (epoch ms)."""
    return int(time.time() * 1000)


async def run_offset_expiration(coordinator, clock: Callable[[], int] | None = None) -> None:
    """The coordinator's scheduled cleanupGroupMetadata: a pass every
    ``offsets.retention.check.interval.ms`` (``coordinator.config``), at ``clock()``
    (epoch ms; default :func:`wall_clock_ms`, looked up at each pass), until cancelled.
    A failed pass is logged; the next one runs on time."""
    cfg = coordinator.config
    while True:
        await asyncio.sleep(cfg.offsets_retention_check_interval_ms / 1000)
        try:
            now_ms = clock() if clock is not None else wall_clock_ms()
            cleanup_group_metadata(coordinator, now_ms, cfg.offsets_retention_ms)
        except Exception as e:  # keep serving; say so
            log.error("expiring committed offsets failed: %s", e)
