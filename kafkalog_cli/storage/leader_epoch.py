"""The leader epoch cache, after ``LeaderEpochFileCache``: ``(epoch, start offset)`` pairs
kept in ``leader-epoch-checkpoint`` (see :mod:`.checkpoints` for the text format).

``assign(epoch, start)`` adds an entry when the epoch changes or the start offset moves
back; entries it contradicts (an epoch >= the new one, or a start offset >= the new one)
are removed first, and the file is rewritten (tmp + fsync + rename).
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


class LeaderEpochFileCache:
    """Epoch -> start offset of one partition.

    Attributes:
        path: ``<partition dir>/leader-epoch-checkpoint``.
        epochs: ``[(epoch, start_offset)]`` in increasing order.
    """

    def __init__(self, partition_dir, epochs: list[tuple[int, int]] | None = None, *,
                 fsync: bool = True):
        self.path = Path(partition_dir) / LEADER_EPOCH_CHECKPOINT
        self.epochs: list[tuple[int, int]] = list(epochs or [])
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

    @property
    def latest(self) -> tuple[int, int] | None:
        return self.epochs[-1] if self.epochs else None

    @property
    def latest_epoch(self) -> int | None:
        return self.epochs[-1][0] if self.epochs else None

    def assign(self, epoch: int, start_offset: int) -> bool:
        """LeaderEpochFileCache.assign; returns True when the cache (and file) changed.

        Raises:
            InvalidArgumentError: a negative epoch or offset.
        """
        if epoch < 0 or start_offset < 0:
            raise InvalidArgumentError(
                f"Received invalid partition leader epoch entry ({epoch}, {start_offset})")
        latest = self.latest
        if latest is not None and not (epoch != latest[0] or start_offset < latest[1]):
            return False
        self.epochs = [e for e in self.epochs if not (e[0] >= epoch or e[1] >= start_offset)]
        self.epochs.append((epoch, start_offset))
        self.flush()
        return True

    def truncate_from_end(self, end_offset: int) -> None:
        """Remove entries whose start offset is >= ``end_offset`` (truncateFromEndAsyncFlush)."""
        kept = [e for e in self.epochs if e[1] < end_offset]
        if kept != self.epochs:
            self.epochs = kept
            self.flush()

    def truncate_from_start(self, start_offset: int) -> None:
        """LeaderEpochFileCache.truncateFromStart: drop the entries starting at or below
        ``start_offset`` and put the last of them back starting at ``start_offset`` (the
        epoch of the new first offset is kept)."""
        removed = [e for e in self.epochs if e[1] <= start_offset]
        if start_offset < 0 or not removed:
            return
        self.epochs = [(removed[-1][0], start_offset)] + [
            e for e in self.epochs if e[1] > start_offset]
        self.flush()

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """LeaderEpochFileCache.endOffsetFor: ``(epoch found, its end offset)``."""
        if not self.epochs:
            return -1, -1
        if epoch == self.epochs[-1][0]:
            return epoch, log_end_offset
        found = None
        for i, (e, _) in enumerate(self.epochs):
            if e > epoch:
                if found is None:
                    return -1, -1
                return found, self.epochs[i][1]
            found = e
        return found, log_end_offset

    def text(self) -> str:
        return format_leader_epoch_checkpoint(self.epochs)

    def flush(self) -> None:
        write_atomically(self.path, self.text(), fsync=self.fsync)
