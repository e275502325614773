"""The leader epoch cache, after ``LeaderEpochFileCache``: ``(epoch, start offset)`` pairs
kept in ``leader-epoch-checkpoint`` (see :mod:`.checkpoints` for the text format).

:class:`LeaderEpochCache` is the cache in memory, the one implementation of its rules for
the append engine, ``kafkalog recover`` and ``serve``: ``assign(epoch, start)`` adds an
entry when the epoch changes or the start offset moves back, first removing the entries it
contradicts (from the end: an epoch >= the new one, or a start offset >= the new one);
``truncate_from_end`` / ``truncate_from_start`` follow the log's end and start.
:class:`LeaderEpochFileCache` adds the persist step: every change is written to the
checkpoint file (tmp + fsync + rename), as the broker's cache writes it.
"""

from __future__ import annotations

from pathlib import Path

from ..constants import LEADER_EPOCH_CHECKPOINT
from ..errors import InvalidArgumentError
from .checkpoints import (
    format_leader_epoch_checkpoint,
    read_leader_epoch_checkpoint,
    write_atomically,
)


class LeaderEpochCache:
    """Epoch -> start offset of one partition, in memory (``LeaderEpochFileCache``'s
    entries and rules, without its file).

    Attributes:
        epochs: ``[(epoch, start_offset)]``, both increasing (absolute offsets).
    """

    def __init__(self, epochs: list[tuple[int, int]] | None = None):
        self.epochs: list[tuple[int, int]] = list(epochs or [])

    @property
    def latest(self) -> tuple[int, int] | None:
        return self.epochs[-1] if self.epochs else None

    @property
    def latest_epoch(self) -> int | None:
        return self.epochs[-1][0] if self.epochs else None

    @property
    def earliest(self) -> tuple[int, int] | None:
        return self.epochs[0] if self.epochs else None

    def assign(self, epoch: int, start_offset: int) -> bool:
        """LeaderEpochFileCache.assign: add ``(epoch, start_offset)`` unless the latest
        entry has that epoch and starts at or before it; entries it contradicts are
        removed from the end first (``maybeTruncateNonMonotonicEntries``). Returns True
        when the cache changed.

        Raises:
            InvalidArgumentError: a negative epoch or offset.
        """
        if epoch < 0 or start_offset < 0:
            raise InvalidArgumentError(
                f"Received invalid partition leader epoch entry ({epoch}, {start_offset})")
        epochs = self.epochs
        if epochs and epoch == epochs[-1][0] and start_offset >= epochs[-1][1]:
            return False
        while epochs and (epochs[-1][0] >= epoch or epochs[-1][1] >= start_offset):
            epochs.pop()
        epochs.append((epoch, start_offset))
        return True

    def truncate_from_end(self, end_offset: int) -> bool:
        """LeaderEpochFileCache.truncateFromEnd: remove the entries starting at or after
        ``end_offset`` (nothing for a negative one). Returns True when the cache changed."""
        epochs = self.epochs
        if end_offset < 0 or not epochs or epochs[-1][1] < end_offset:
            return False
        while epochs and epochs[-1][1] >= end_offset:
            epochs.pop()
        return True

    def truncate_from_start(self, start_offset: int) -> bool:
        """LeaderEpochFileCache.truncateFromStart: remove the entries starting at or before
        ``start_offset`` and put the last of them back starting at ``start_offset`` (the
        epoch of the new first offset is kept). Returns True when the cache changed."""
        epochs = self.epochs
        n = 0
        while n < len(epochs) and epochs[n][1] <= start_offset:
            n += 1
        if not n:
            return False
        first = (epochs[n - 1][0], start_offset)
        if n == 1 and epochs[0] == first:
            return False  # the first entry starts there already
        epochs[:n] = [first]
        return True

    def epoch_for_offset(self, offset: int) -> int:
        """LeaderEpochFileCache.epochForOffset: the epoch of the entry holding ``offset``
        (absolute), -1 when none does."""
        found = -1
        for epoch, start in self.epochs:
            if start == offset:
                return epoch
            if start > offset:
                return found
            found = epoch
        return found

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """LeaderEpochFileCache.endOffsetFor: ``(epoch found, its end offset)``, both
        absolute: the latest epoch ends at ``log_end_offset``; an older one at the start
        of the next greater epoch, reported as the greatest epoch at or below it (as the
        requested one when none is: the log's start is gone); ``(-1, -1)`` (undefined)
        for -1, an empty cache or an epoch above every entry."""
        epochs = self.epochs
        if epoch == -1 or not epochs:
            return -1, -1
        if epoch == epochs[-1][0]:
            return epoch, log_end_offset
        floor = None
        for e, start in epochs:
            if e > epoch:  # higherEntry
                return (epoch if floor is None else floor), start
            floor = e
        return -1, -1

    def text(self) -> str:
        """The ``leader-epoch-checkpoint`` text of the entries."""
        return format_leader_epoch_checkpoint(self.epochs)


class LeaderEpochFileCache(LeaderEpochCache):
    """The cache of a partition directory: :class:`LeaderEpochCache` whose every change
    is written to ``leader-epoch-checkpoint`` (the persist step).

    Attributes:
        path: ``<partition dir>/leader-epoch-checkpoint``.
    """

    def __init__(self, partition_dir, epochs: list[tuple[int, int]] | None = None, *,
                 fsync: bool = True):
        super().__init__(epochs)
        self.path = Path(partition_dir) / LEADER_EPOCH_CHECKPOINT
        self.fsync = fsync

    @classmethod
    def load(cls, partition_dir, *, fsync: bool = True) -> LeaderEpochFileCache:
        """Read the checkpoint (empty when absent).

        Raises:
            CorruptCheckpointError: the file is not version/count/entries.
        """
        c = cls(partition_dir, fsync=fsync)
        c.epochs = read_leader_epoch_checkpoint(c.path) or []
        return c

    def assign(self, epoch: int, start_offset: int) -> bool:
        """:meth:`LeaderEpochCache.assign`, then the file is written when it changed."""
        changed = super().assign(epoch, start_offset)
        if changed:
            self.flush()
        return changed

    def truncate_from_end(self, end_offset: int) -> bool:
        """:meth:`LeaderEpochCache.truncate_from_end`, written when it changed."""
        changed = super().truncate_from_end(end_offset)
        if changed:
            self.flush()
        return changed

    def truncate_from_start(self, start_offset: int) -> bool:
        """:meth:`LeaderEpochCache.truncate_from_start`, written when it changed."""
        changed = super().truncate_from_start(start_offset)
        if changed:
            self.flush()
        return changed

    def flush(self) -> None:
        """Write the checkpoint file (tmp + fsync + rename)."""
        write_atomically(self.path, self.text(), fsync=self.fsync)
