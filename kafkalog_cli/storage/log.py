"""A partition's log, after ``LocalLog``/``UnifiedLog``: the segments of one partition
directory, keyed by base offset (``LogSegments``).

Read side here; the append engine extends it with append and roll.
"""

from __future__ import annotations

from pathlib import Path

from ..constants import LOG_FILE_SUFFIX
from ..errors import NotAKafkaFileError, UnreadableError
from .files import TopicPartition, is_segment_file_name, parse_partition_dir_name
from .segment import LogSegment


class Log:
    """The segments of a partition directory, in base-offset order.

    Attributes:
        directory: the partition directory.
        topic_partition: parsed from the directory name, or None when it does not parse.
        segments: :class:`LogSegment` s sorted by base offset (one per ``.log`` file).
    """

    def __init__(self, directory):
        self.directory = Path(directory)
        self.topic_partition: TopicPartition | None = parse_partition_dir_name(self.directory.name)
        self.segments: list[LogSegment] = []

    @classmethod
    def open(cls, directory) -> Log:
        """Open a partition directory read-only.

        Raises:
            UnreadableError: the directory cannot be listed.
            NotAKafkaFileError: ``directory`` is not a directory.
        """
        d = Path(directory)
        if not d.is_dir():
            raise NotAKafkaFileError("not a partition directory", file=d)
        log = cls(d)
        try:
            names = sorted(p.name for p in d.iterdir())
        except OSError as e:
            raise UnreadableError(e.strerror or str(e), file=d) from e
        bases = sorted(int(n[:20]) for n in names
                       if n.endswith(LOG_FILE_SUFFIX) and is_segment_file_name(n))
        log.segments = [LogSegment(d, b) for b in bases]
        return log

    @property
    def topic(self) -> str | None:
        return self.topic_partition.topic if self.topic_partition else None

    @property
    def partition(self) -> int | None:
        return self.topic_partition.partition if self.topic_partition else None

    def segment_for(self, offset: int) -> LogSegment | None:
        """The segment whose range holds ``offset`` (floor entry of the segment map)."""
        found = None
        for seg in self.segments:
            if seg.base_offset <= offset:
                found = seg
            else:
                break
        return found

    def close(self) -> None:
        for s in self.segments:
            s.close()

    def __repr__(self) -> str:
        return f"Log({str(self.directory)!r}, segments={len(self.segments)})"
