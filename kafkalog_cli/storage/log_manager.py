"""A log directory opened for writing, after Kafka's ``LogManager``: its ``.lock``, its
``meta.properties`` when new, the clean-shutdown marker, the
``recovery-point-offset-checkpoint`` / ``log-start-offset-checkpoint`` files, and the
:class:`~kafkalog_cli.storage.log.UnifiedLog` of each partition it opens, creates or
deletes (``getOrCreateLog``, ``loadLog``, ``asyncDelete``: a deleted partition's directory
renamed ``<topic>-<partition>.<uuid>-delete``).

Also the topic ids a directory's partitions carry on disk (``partition.metadata``), which
``LogManager.loadLog`` checks against the topic's.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ..constants import (
    CLEAN_SHUTDOWN_FILE_NAME,
    LOG_START_OFFSET_CHECKPOINT,
    META_PROPERTIES_FILE_NAME,
    RECOVERY_POINT_CHECKPOINT,
)
from ..errors import InvalidArgumentError, KafkalogError, NotAKafkaFileError
from .checkpoints import format_offset_checkpoint, read_offset_checkpoint, write_atomically
from .clock import SYSTEM
from .dir_files import (
    random_kafka_uuid,
    read_partition_metadata,
    write_clean_shutdown,
    write_meta_properties,
)
from .files import (
    TopicPartition,
    is_live_partition_dir_name,
    log_delete_dir_name,
    parse_partition_dir_name,
    validate_topic_name,
)
from .location import require_local
from .log import UnifiedLog

if TYPE_CHECKING:
    from .lock import LogDirLock


class LogManager:
    """One log directory opened for writing, after ``LogManager``: the ``.lock``,
    ``meta.properties`` for a new directory, the clean-shutdown marker, and the
    ``recovery-point-offset-checkpoint`` / ``log-start-offset-checkpoint`` files.

    Use as a context manager; :meth:`close` closes every log, writes both checkpoints
    (merging with the entries of partitions it did not open), then writes
    ``.kafka_cleanshutdown`` so a broker skips recovery - only when the directory was new
    or had the marker when opened (otherwise its earlier state was never checked and the
    broker must recover it, so the marker stays absent).

    Raises (from :meth:`open`):
        LogDirLockedError: a broker or another kafkalog holds the ``.lock``.
    """

    def __init__(self, log_dir, *, clock=None, fsync: bool = True, rng=None):
        self.log_dir = require_local(log_dir, "appending")
        self.clock = clock or SYSTEM
        self.fsync = fsync
        self.rng = rng
        self.logs: dict = {}
        self.lock = None
        self.created = False
        #: passed to each log opened (see UnifiedLog.index_write_through)
        self.index_write_through = False
        self._deleted: set = set()
        #: topic -> the topic id given to partitions this manager creates
        self._topic_ids: dict[str, str] = {}
        self.had_clean_shutdown = False
        #: the caller ran the log recovery before opening (serve's start-up recovery):
        #: the state is checked, so a clean close writes the marker again
        self.recovered = False
        self.closed = False
        self._warned: set[str] = set()
        #: checkpoint file name -> its entries, read once (see :meth:`_checkpoint`)
        self._checkpoints: dict[str, dict] = {}
        #: :meth:`open_log` runs on the loading threads: the first read is under this
        self._checkpoints_lock = threading.Lock()

    @classmethod
    def open(cls, log_dir, *, create: bool = True, cluster_id: str | None = None,
             node_id: int = 1, clock=None, fsync: bool = True, rng=None,
             recovered: bool = False, lock: LogDirLock | None = None) -> LogManager:
        """Lock ``log_dir`` (creating it and its meta.properties when new) and remove the
        clean-shutdown marker before anything is written, as a starting broker does.
        ``recovered``: the caller has just run the log recovery on the directory (what
        ``LogLoader`` does when the marker is missing), so :meth:`close` writes the marker.
        ``lock``: the directory's lock, already held by the caller (it becomes this
        manager's, released by :meth:`close` / :meth:`abandon`).

        Raises:
            LogDirLockedError: the lock is held.
            NotAKafkaFileError: ``log_dir`` is missing and ``create`` is False.
        """
        from .lock import LogDirLock

        m = cls(log_dir, clock=clock, fsync=fsync, rng=rng)
        m.recovered = recovered
        d = m.log_dir
        if not d.exists():
            if not create:
                raise NotAKafkaFileError("log directory does not exist", file=d)
            d.mkdir(parents=True)
        m.lock = lock if lock is not None else LogDirLock(d).acquire()
        try:
            visible = [p for p in d.iterdir() if p.name != ".lock"]
            m.created = not visible
            if not (d / META_PROPERTIES_FILE_NAME).exists() and m.created:
                write_meta_properties(d, cluster_id=cluster_id or random_kafka_uuid(),
                                      node_id=node_id)
            marker = d / CLEAN_SHUTDOWN_FILE_NAME
            m.had_clean_shutdown = marker.exists()
            if m.had_clean_shutdown:
                marker.unlink()
                _fsync_dir(d, fsync)
        except BaseException:
            m.lock.release()
            raise
        return m

    def _checkpoint(self, name: str) -> dict:
        """A log-dir checkpoint's entries (do not modify: shared), read once per manager,
        as ``LogManager.loadLogs`` reads each checkpoint once per directory, then kept as
        this manager writes it (nothing else writes it while the manager holds the lock).
        One that does not parse counts as empty, as ``LogManager.loadLogs`` resets it (the
        recovery point to 0, the log start offset to the first segment's base), with a
        one-line warning; the next checkpoint rewrites it."""
        entries = self._checkpoints.get(name)
        if entries is None:
            with self._checkpoints_lock:
                entries = self._checkpoints.get(name)
                if entries is None:
                    entries = self._checkpoints[name] = self._read_checkpoint(name)
        return entries

    def _read_checkpoint(self, name: str) -> dict:
        try:
            return read_offset_checkpoint(self.log_dir / name) or {}
        except KafkalogError as e:
            if name not in self._warned:
                self._warned.add(name)
                import logging  # here: only this rare warning needs it

                logging.getLogger("kafkalog").warning(
                    "kafkalog: %s; treated as empty, as the broker does", e)
            return {}

    def get_or_create_log(self, topic: str, partition: int, config=None, *,
                          topic_id: str | None = None) -> UnifiedLog:
        """The :class:`UnifiedLog` of ``<topic>-<partition>`` (opened once):
        :meth:`open_log` then :meth:`add_log`.

        Raises:
            InvalidArgumentError: an illegal topic name or negative partition.
        """
        tp = _topic_partition(topic, partition)
        if tp in self.logs:
            return self.logs[tp]
        if topic_id is None:
            topic_id = self.topic_id_for(topic)
        return self.add_log(self.open_log(topic, partition, config, topic_id=topic_id))

    def open_log(self, topic: str, partition: int, config=None, *,
                 topic_id: str) -> UnifiedLog:
        """Open (creating when needed) ``<topic>-<partition>`` with its checkpointed
        offsets, without adding it to :attr:`logs`: it touches nothing of the manager's
        but reads, so it may run on another thread (creating a partition is seconds of
        fsyncs for many) while the manager's thread goes on; that thread then adds it
        (:meth:`add_log`).

        Raises:
            InvalidArgumentError: an illegal topic name or negative partition.
        """
        tp = _topic_partition(topic, partition)
        start = self._checkpoint(LOG_START_OFFSET_CHECKPOINT).get(tp)
        rp = self._checkpoint(RECOVERY_POINT_CHECKPOINT).get(tp)
        if tp in self._deleted:
            start = rp = None
        # LogLoader: segment files a stop left renamed for deletion go first
        from .retention import remove_leftover_deleted_files

        remove_leftover_deleted_files(self.log_dir / str(tp))
        return UnifiedLog.open(self.log_dir / str(tp), config, self.clock, topic_id=topic_id,
                               log_start_offset=start, recovery_point=rp, fsync=self.fsync,
                               rng=self.rng, recovered=self.recovered)

    def add_log(self, log: UnifiedLog) -> UnifiedLog:
        """Keep ``log`` (from :meth:`open_log`) as its partition's log; returns it."""
        tp = log.topic_partition
        log.index_write_through = self.index_write_through
        self._deleted.discard(tp)
        self.logs[tp] = log
        return log

    def add_closed_log(self, tp: TopicPartition, log: UnifiedLog) -> None:
        """A log of this directory written and closed by the caller (a copy renamed into
        place, :mod:`~.copy`): its recovery point and log start offset go into the
        checkpoints :meth:`close` writes, as a log this manager opened would."""
        self._deleted.discard(tp)
        self.logs[tp] = log

    def topic_id_for(self, topic: str) -> str:
        """The topic id for a new partition of ``topic``: the one in the partition.metadata
        of its existing partitions, else one random id per topic shared by every partition
        this manager creates. A broker refuses a partition whose topic id differs from the
        topic's (InconsistentTopicIdException, LogManager.loadLog / UnifiedLog).

        Raises:
            InvalidArgumentError: the existing partitions disagree about the id.
        """
        tid = self._topic_ids.get(topic)
        if tid is None:
            tid = topic_id_on_disk(self.log_dir, topic) or random_kafka_uuid()
            self._topic_ids[topic] = tid
        return tid

    def delete_log(self, topic: str, partition: int) -> None:
        """LogManager.asyncDelete, done at once: :meth:`detach_log`, then
        :func:`rename_deleted` and the renamed directory removed."""
        import shutil

        target = rename_deleted(self.detach_log(topic, partition), fsync=self.fsync)
        if target is not None:
            shutil.rmtree(target, ignore_errors=True)

    def detach_log(self, topic: str, partition: int) -> Path:
        """Release the log's files (no flush, as the broker only closes handlers) and drop
        the partition from the checkpoints written next; returns its directory, for
        :func:`rename_deleted` (which may run on another thread)."""
        tp = TopicPartition(topic, partition)
        log = self.logs.pop(tp, None)
        if log is not None:
            log.abandon()
            for s in log.segments:
                s.close()
        self._deleted.add(tp)
        return self.log_dir / str(tp)

    def checkpoint(self) -> None:
        """Write recovery-point-offset-checkpoint and log-start-offset-checkpoint, keeping
        the entries of other partitions (LogManager.checkpointLogRecoveryOffsets /
        checkpointLogStartOffsets: the start offset only when above the first segment's
        base offset)."""
        self.prepare_checkpoint()()

    def prepare_checkpoint(self):
        """Take the offsets of :meth:`checkpoint` now; returns a function without arguments
        that writes the two files (it touches no log, so it may run on another thread, as
        the broker's scheduler writes checkpoints off the request path)."""
        deleted = set(self._deleted)
        taken = []
        for tp, log in self.logs.items():
            first_base = log.segments[0].base_offset if log.segments else log.log_start_offset
            taken.append((tp, log.recovery_point, log.log_start_offset, first_base))

        def write() -> None:
            rp = dict(self._checkpoint(RECOVERY_POINT_CHECKPOINT))
            ls = dict(self._checkpoint(LOG_START_OFFSET_CHECKPOINT))
            for tp in deleted:
                rp.pop(tp, None)
                ls.pop(tp, None)
            for tp, recovery_point, log_start, first_base in taken:
                rp[tp] = recovery_point
                if log_start > first_base:
                    ls[tp] = log_start
                else:
                    ls.pop(tp, None)
            write_atomically(self.log_dir / RECOVERY_POINT_CHECKPOINT,
                             format_offset_checkpoint(rp), fsync=self.fsync)
            write_atomically(self.log_dir / LOG_START_OFFSET_CHECKPOINT,
                             format_offset_checkpoint(ls), fsync=self.fsync)
            # replaced whole (another thread may be reading the previous dicts)
            self._checkpoints[RECOVERY_POINT_CHECKPOINT] = rp
            self._checkpoints[LOG_START_OFFSET_CHECKPOINT] = ls

        return write

    @property
    def writes_clean_shutdown(self) -> bool:
        return self.created or self.had_clean_shutdown or self.recovered

    def close(self) -> None:
        """Close every log, write the checkpoints, the clean-shutdown marker (see the class
        docstring), release the lock. The logs are closed on up to
        :data:`CLOSE_THREADS` threads, as ``LogManager.shutdown`` closes them on
        ``num.recovery.threads.per.data.dir`` threads: each close is fsyncs of its own
        files (a directory of thousands of partitions closed one by one takes as many
        times ~10 ms).

        Raises:
            the first error of a log's close (the others are closed all the same; no
            checkpoint or marker is written then).
        """
        if self.closed:
            return

        try:
            _close_all(list(self.logs.values()))
            self.checkpoint()
            if self.writes_clean_shutdown:
                write_clean_shutdown(self.log_dir)
        finally:
            self.closed = True
            if self.lock is not None:
                self.lock.release()

    def abandon(self) -> None:
        """Release files and the lock without closing cleanly (no checkpoints, no marker):
        the broker (or ``kafkalog recover``) will recover from the last recovery point."""
        if self.closed:
            return
        for log in self.logs.values():
            log.abandon()
        self.closed = True
        if self.lock is not None:
            self.lock.release()

    def __enter__(self) -> LogManager:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()


def _topic_partition(topic: str, partition: int) -> TopicPartition:
    """``<topic>-<partition>`` after the checks a log's name must pass.

    Raises:
        InvalidArgumentError: an illegal topic name or negative partition.
    """
    validate_topic_name(topic)
    if partition < 0:
        raise InvalidArgumentError(f"partition must be >= 0, got {partition}")
    return TopicPartition(topic, partition)


#: threads closing logs at once (LogManager.close)
CLOSE_THREADS = 8


def _close_all(logs: list) -> None:
    """``log.close()`` of every log, on up to :data:`CLOSE_THREADS` threads (their fsyncs
    overlap); the first error is raised once all are done."""
    if len(logs) <= 1:
        for lg in logs:
            lg.close()
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(CLOSE_THREADS, len(logs)),
                            thread_name_prefix="kafkalog-close") as pool:
        futures = [pool.submit(lg.close) for lg in logs]
    errors = [f.exception() for f in futures if f.exception() is not None]
    if errors:
        raise errors[0]


def rename_deleted(d: Path, *, fsync: bool = True) -> Path | None:
    """Rename a partition directory ``<tp>.<uuid>-delete`` (the topic cut to keep the
    name within 255 characters, LocalLog.logDeleteDirName), the rename made durable;
    returns the new path (None: there was no directory). The caller removes it."""
    tp = parse_partition_dir_name(d.name)
    if tp is None or not d.exists():
        return None
    target = d.parent / log_delete_dir_name(tp)
    d.rename(target)
    _fsync_dir(d.parent, fsync)
    return target


def topic_ids_on_disk(log_dir, topic: str) -> dict[int, str]:
    """Partition -> the topic id in partition.metadata of each live ``<topic>-<N>``
    directory of ``log_dir`` (directories without the file, or whose file does not parse,
    are left out: a corrupt file concerns its own partition only, which refuses to open)."""
    out: dict[int, str] = {}
    d = Path(log_dir)
    if not d.is_dir():
        return out
    for p in d.iterdir():
        if not p.name.startswith(topic) or not is_live_partition_dir_name(p.name):
            continue
        tp = parse_partition_dir_name(p.name)
        if tp is None or tp.topic != topic or not p.is_dir():
            continue
        try:
            meta = read_partition_metadata(p)
        except KafkalogError:
            continue
        if meta and meta.get("topic_id"):
            out[tp.partition] = meta["topic_id"]
    return out


def topic_id_on_disk(log_dir, topic: str) -> str | None:
    """The one topic id of ``topic``'s existing partitions in ``log_dir`` (None: none has
    partition.metadata).

    Raises:
        InvalidArgumentError: partitions disagree (a broker would refuse the directory
            with InconsistentTopicIdException).
    """
    ids = topic_ids_on_disk(log_dir, topic)
    distinct = sorted(set(ids.values()))
    if len(distinct) > 1:
        listing = ", ".join(f"{topic}-{p}: {i}" for p, i in sorted(ids.items()))
        raise InvalidArgumentError(
            f"the partitions of topic {topic} in {log_dir} have different topic ids "
            f"({listing}); a broker refuses such a log directory (InconsistentTopicIdException)")
    return distinct[0] if distinct else None


def _fsync_dir(d: Path, fsync: bool) -> None:
    import os

    if not fsync:
        return
    fd = os.open(d, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
