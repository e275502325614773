"""A partition's log, after ``LocalLog``/``UnifiedLog``: the segments of one partition
directory, keyed by base offset (``LogSegments``).

:class:`Log` is the read side, the one home of reading a partition for ``read``,
``serve`` (Fetch, ListOffsets) and the Spark source: the log start and end offsets, a
read by offset (``UnifiedLog.read`` / ``LocalLog.read``) and by timestamp
(``fetchOffsetByTimestamp``), the aborted transactions of a range
(``collectAbortedTransactions``) and the producer state replayed from the log (hence the
last stable offset). :class:`UnifiedLog` extends it with appending and rolling. The log
directory they sit in, Kafka's ``LogManager``, is :mod:`kafkalog_cli.storage.log_manager`.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import TYPE_CHECKING

from ..constants import LOG_FILE_SUFFIX, LOG_START_OFFSET_CHECKPOINT
from ..errors import (
    CorruptRecordError,
    IllegalStateError,
    InvalidArgumentError,
    KafkalogError,
    NotAKafkaFileError,
    RecordBatchTooLargeError,
    UnreadableError,
)
from ..format.records import batch_at
from .checkpoints import read_offset_checkpoint
from .clock import SYSTEM
from .dir_files import random_kafka_uuid, read_partition_metadata, write_partition_metadata
from .files import (
    TopicPartition,
    is_segment_file_name,
    parse_partition_dir_name,
    validate_topic_name,
)
from .location import as_path, require_local
from .segment import (
    FetchDataInfo,
    LogOffsetMetadata,
    LogSegment,
    TimestampAndOffset,
    WritableLogSegment,
)

# The append side's own modules (LogConfig, the roll rules, the leader epoch cache) are
# imported by the UnifiedLog methods that use them, and the log directory's (LogManager, its
# lock) live in storage/log_manager.py: the readers of a log (read, audit, the Spark source)
# never load them. So are the producer state and the .txnindex: a read_uncommitted read
# needs neither.
if TYPE_CHECKING:
    from ..schema.txn_index import AbortedTxn
    from .producer_state import ProducerStateManager

#: storage.validator.validate, once an append has imported it (an import statement per
#: append costs a lookup through the import machinery)
_validate = None


class Log:
    """The segments of a partition directory, in base-offset order.

    Attributes:
        directory: the partition directory.
        topic_partition: parsed from the directory name, or None when it does not parse.
        segments: :class:`LogSegment` s sorted by base offset (one per ``.log`` file).
    """

    def __init__(self, directory):
        self.directory = as_path(directory)
        self.topic_partition: TopicPartition | None = parse_partition_dir_name(self.directory.name)
        self.segments: list[LogSegment] = []
        #: what opening the log could not use, one line each naming the file (a
        #: log-start-offset-checkpoint that does not parse, read as empty)
        self.problems: list[str] = []
        #: ``.log`` files a read found holding no whole batch from their first byte (not
        #: a Kafka log: the commands exit 3)
        self.not_kafka_files: list[str] = []

    @classmethod
    def open(cls, directory) -> Log:
        """Open a partition directory read-only.

        Raises:
            UnreadableError: the directory cannot be listed.
            NotAKafkaFileError: ``directory`` is not a directory.
        """
        d = as_path(directory)
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

    # -- offsets (read from the files; UnifiedLog keeps them as it appends) -----------------

    @cached_property
    def log_end_offset(self) -> int:
        """The offset after the last batch of the last segment (``readNextOffset``), that
        segment's base offset when it holds no batch, 0 without segments."""
        if not self.segments:
            return 0
        last = self.segments[-1]
        nxt = last.read_next_offset()
        return last.base_offset if nxt is None else nxt

    @cached_property
    def log_start_offset(self) -> int:
        """``max(log-start-offset-checkpoint entry, first segment's base offset)``, as the
        broker's LogLoader computes it (0 without segments). A checkpoint that does not
        parse counts as empty, as ``LogManager.loadLogs`` resets it; the error (file and
        line) goes to :attr:`problems`."""
        ckpt = 0
        tp = self.topic_partition
        if tp is not None:
            try:
                entries = read_offset_checkpoint(self.directory.parent /
                                                 LOG_START_OFFSET_CHECKPOINT)
            except KafkalogError as e:
                entries = None
                self.problems.append(f"{e}; the log start offset is the first segment's base "
                                     "offset, as the broker resets it")
            if entries:
                ckpt = entries.get(TopicPartition(tp.topic, tp.partition), 0)
        first = self.segments[0].base_offset if self.segments else 0
        return max(ckpt, first)

    def segment_index_for(self, offset: int) -> int:
        """The index in :attr:`segments` of the floor segment of ``offset`` (0 when every
        segment starts above it)."""
        i = 0
        for j, seg in enumerate(self.segments):
            if seg.base_offset <= offset:
                i = j
            else:
                break
        return i

    # -- reading by offset (UnifiedLog.read / LocalLog.read) ---------------------------------

    def batches_from(self, offset: int, *, check_crcs: bool = False,
                     problems: list | None = None, skipped: list | None = None
                     ) -> Iterator[tuple[LogSegment, object]]:
        """Every batch from the one holding ``offset`` (absolute; or the first after it) to
        the end of the log, with its segment: the floor segment's offset index gives the
        start (:meth:`LogSegment.batches_from`), so at most one index interval is scanned
        before it.

        With ``check_crcs`` each batch's CRC is checked first, as a consumer with
        ``check.crcs=true`` does. With ``problems`` (a list), each segment whose scan
        reaches bytes after its last whole batch adds one line for them (file, position,
        length: a broker would truncate them at recovery, so no consumer ever receives
        what they hold); a non-empty segment read from its first byte that holds no
        whole batch is also named in :attr:`not_kafka_files`.

        With ``skipped`` (a list: ``--skip-corrupt``), each segment is read past damage
        (:meth:`LogSegment.salvage_records`): only batches with a valid CRC and plausible
        offsets are yielded, and each byte range passed over is appended to ``skipped``
        as a :class:`~kafkalog_cli.format.salvage.SkippedBytes` as the read reaches it.

        Raises:
            CrcMismatchError: (``check_crcs``, without ``skipped``) a batch whose stored
                CRC differs, naming the file and byte position.
        """
        segs = self.segments
        if not segs:
            return
        last = None
        for seg in segs[self.segment_index_for(offset):]:
            if not seg.size:
                continue
            if skipped is not None:
                start = seg.index_position(offset) if offset > seg.base_offset else 0
                fr = seg.salvage_records(start, after_offset=last)
            else:
                fr = seg.batches_from(offset)
            told = 0
            for b in fr.batches():
                if skipped is not None and len(fr.skipped) > told:
                    skipped.extend(fr.skipped[told:])
                    told = len(fr.skipped)
                last = b.last_offset
                if last >= offset:
                    if check_crcs:
                        b.ensure_valid(seg.log_path)
                    yield seg, b
            if skipped is not None:
                skipped.extend(fr.skipped[told:])
            if fr.invalid_bytes and problems is not None:
                if fr.valid_end == 0 and fr.start == 0 and not getattr(fr, "skipped", ()):
                    self.not_kafka_files.append(str(seg.log_path))
                    problems.append(str(CorruptRecordError(
                        f"no whole record batch: {fr.invalid_bytes} bytes are truncated or "
                        "not a Kafka log", file=seg.log_path, position=0)))
                    continue
                why = f" ({fr.stop_error.message})" if fr.stop_error is not None else ""
                problems.append(str(CorruptRecordError(
                    f"{fr.invalid_bytes} invalid bytes after the last whole batch{why}",
                    file=seg.log_path, position=fr.valid_end)))

    def read(self, fetch_offset: int, max_bytes: int, *, min_one_message: bool = True,
             max_offset: LogOffsetMetadata | None = None) -> FetchDataInfo | None:
        """LocalLog.read: whole batches from the one holding ``fetch_offset`` (absolute),
        at most ``max_bytes`` (the first batch whole with ``min_one_message``), from the
        floor segment on (a segment without such a batch passes the read to the next),
        not past ``max_offset`` (its position, in its segment: the last stable offset of
        a read_committed fetch). The records are a :class:`~.segment.FileSlice` (not
        read). None when no batch holds the offset or a later one. The caller checks
        ``fetch_offset`` against the log start and end offsets."""
        segs = self.segments
        for seg in segs[self.segment_index_for(fetch_offset):]:
            max_position = None
            if max_offset is not None and max_offset.segment_base_offset == seg.base_offset:
                max_position = max_offset.position
            info = seg.read(fetch_offset, max_bytes, max_position=max_position,
                            min_one_message=min_one_message)
            if info is not None:
                return info
        return None

    def offset_metadata(self, offset: int) -> LogOffsetMetadata:
        """``LogOffsetMetadata`` of ``offset`` (absolute, at most the log end offset): the
        segment and byte position of the batch holding it (the first batch after it in a
        gap), or for the log end offset the last segment's size
        (``UnifiedLog.convertToOffsetMetadataOrThrow`` / ``LocalLog.logEndOffsetMetadata``).
        An offset no batch holds or follows is placed at the log's end."""
        segs = self.segments
        if segs and offset < self.log_end_offset:
            for seg in segs[self.segment_index_for(offset):]:
                batch = seg.translate_offset(offset)
                if batch is not None:
                    return LogOffsetMetadata(offset, seg.base_offset, batch.position)
        if not segs:
            return LogOffsetMetadata(offset, 0, 0)
        return LogOffsetMetadata(offset, segs[-1].base_offset, segs[-1].size)

    # -- reading by timestamp (UnifiedLog.fetchOffsetByTimestamp) ----------------------------

    def fetch_offset_by_timestamp(self, timestamp: int, start_offset: int | None = None
                                  ) -> TimestampAndOffset | None:
        """The first record (in offset order, control records included) whose timestamp is
        >= ``timestamp`` (ms, >= 0) and offset >= ``start_offset`` (default the log start
        offset): the first segment that may hold it (a rolled segment whose time index says
        its largest timestamp is below ``timestamp`` is passed over), searched with
        :meth:`LogSegment.find_offset_by_timestamp`. None when there is none.

        Raises:
            CorruptRecordError: a batch to decode does not (naming file and position).
        """
        if start_offset is None:
            start_offset = self.log_start_offset
        segs = self.segments
        for i, seg in enumerate(segs):
            if i + 1 < len(segs) and segs[i + 1].base_offset <= start_offset:
                continue
            if i + 1 < len(segs):
                largest = seg.largest_timestamp_in_index()
                if largest is not None and largest < timestamp:
                    continue
            found = seg.find_offset_by_timestamp(timestamp, start_offset)
            if found is not None:
                return found
        return None

    def max_timestamp_and_offset(self) -> TimestampAndOffset | None:
        """ListOffsets' MAX_TIMESTAMP (``fetchOffsetByTimestamp``): the record holding the
        largest timestamp of the log (the first batch holding it, its first record with
        that timestamp, else the batch's last offset); None when no batch has a timestamp
        >= 0."""
        best = None
        for seg in self.segments:
            for b in seg.records(whole_range=True).batches():
                if best is None or b.max_timestamp > best.max_timestamp:
                    best = b
        if best is None or best.max_timestamp < 0:
            return None
        off = next((r.offset for r in best.iter_records() if r.timestamp == best.max_timestamp),
                   best.last_offset)
        return TimestampAndOffset(best.max_timestamp, off)

    def leader_epoch_of(self, offset: int) -> int:
        """The partition leader epoch stamped on the batch holding ``offset`` (absolute;
        the first batch after it in a compaction gap), -1 when unknown (no such batch, a
        legacy batch, or no epoch stamped)."""
        seg = self.segment_for(offset)
        batch = None if seg is None else seg.translate_offset(offset)
        epoch = -1 if batch is None else batch.partition_leader_epoch
        return epoch if epoch >= 0 else -1

    # -- transactions ------------------------------------------------------------------------

    def replay_producer_state(self, state: ProducerStateManager | None = None,
                              start_offset: int = 0, *, txn_indexes: dict | None = None
                              ) -> ProducerStateManager:
        """Replay the batches ending at or after ``start_offset`` through ``state`` (a
        fresh in-memory :class:`~.producer_state.ProducerStateManager` by default):
        ``ProducerStateManager.replay_batch``, the one per-batch step of the engine, of
        recovery and of the readers. Each segment's batches are read up to its first
        bytes that are not a whole batch. With ``txn_indexes`` (a dict), each segment's
        aborted transactions go to ``txn_indexes[base offset]``, an in-memory
        :class:`~.txn_index.TransactionIndex` (what recovery would write to its
        ``.txnindex``). A segment holding control batches the replay skips (no
        end-transaction marker parses) adds one line to :attr:`problems`. Returns
        ``state``."""
        from .producer_state import ProducerStateManager
        from .txn_index import TransactionIndex

        if state is None:
            state = ProducerStateManager()
        segs = self.segments
        for i, seg in enumerate(segs):
            if i + 1 < len(segs) and segs[i + 1].base_offset <= start_offset:
                continue
            idx = None
            if txn_indexes is not None:
                idx = txn_indexes[seg.base_offset] = TransactionIndex(seg.txn_index_path,
                                                                      seg.base_offset)
            replay = state.replay_batch
            skipped, state.first_skipped_marker = state.skipped_markers, None
            for b in seg.records(whole_range=True).batches():
                if b.last_offset >= start_offset:
                    aborted = replay(b)
                    if aborted is not None and idx is not None:
                        idx.append(aborted, check=False)
            if state.skipped_markers > skipped:
                e = state.first_skipped_marker
                self.problems.append(str(CorruptRecordError(
                    f"{state.skipped_markers - skipped} control batch(es) without an "
                    f"end-transaction marker that parses, the first: {e.message}; their "
                    "transactions stay open", file=seg.log_path, position=e.position)))
        return state

    def load_producer_state(self) -> ProducerStateManager:
        """The producer state as the broker loads it (``LogLoader`` /
        ``ProducerStateManager.truncateAndReload``), writing nothing: the newest snapshot
        between the log start offset (exclusive) and the log end offset that parses
        (:meth:`~.producer_state.ProducerStateManager.load_readable`), then the batches
        after it replayed (:meth:`replay_producer_state`); its ``first_unstable_offset``
        is where a read_committed consumer stops.

        Raises:
            UnreadableError: a ``.log`` cannot be read.
        """
        from .producer_state import ProducerStateManager

        state = ProducerStateManager(self.directory)
        start = state.load_readable(self.log_start_offset, self.log_end_offset)
        return self.replay_producer_state(state, start)

    def collect_aborted_transactions(self, start_offset: int, upper_bound: int,
                                     txn_indexes: dict | None = None, *,
                                     from_segment: LogSegment | None = None
                                     ) -> list[AbortedTxn]:
        """LocalLog.collectAbortedTransactions: the aborted transactions overlapping
        ``[start_offset, upper_bound)`` (absolute offsets), from the transaction index of
        ``from_segment`` (the segment a read returned, as ``LocalLog.read`` passes it;
        default the floor segment of ``start_offset``) on, until one says the search is
        complete
        (``TransactionIndex.collectAbortedTxns``: an aborted transaction is indexed in the
        segment of its ABORT marker, which may come after the records read).

        The indexes are ``txn_indexes`` (base offset -> :class:`~.txn_index
        .TransactionIndex`, e.g. rebuilt by :meth:`replay_producer_state`) when given,
        else each segment's own (the ``.txnindex`` file; the active segment's in memory);
        a segment whose file cannot be read has none."""
        out: list[AbortedTxn] = []
        first = (self.segment_index_for(start_offset) if from_segment is None
                 else self.segments.index(from_segment))
        for seg in self.segments[first:]:
            if txn_indexes is not None:
                idx = txn_indexes.get(seg.base_offset)
            else:
                try:
                    idx = seg.txn_index
                except UnreadableError:
                    idx = None
            if idx is None:
                continue
            found, complete = idx.collect_aborted(start_offset, upper_bound)
            out += found
            if complete:
                break
        return out

    def close(self) -> None:
        for s in self.segments:
            s.close()

    def __repr__(self) -> str:
        return f"Log({str(self.directory)!r}, segments={len(self.segments)})"


# -- the append side (UnifiedLog / LocalLog) --------------------------------------------------

class LogAppendInfo:
    """What one append did (LogAppendInfo): offsets absolute, sizes in bytes.

    Attributes:
        first_offset / last_offset: offsets of the appended batch.
        records: record count; size: bytes written.
        max_timestamp: its max timestamp after validation (ms).
        log_append_time: the append time with LogAppendTime, else -1.
        segment_base_offset: the segment it went to.
        rolled: roll reasons when a new segment was started for it (else empty).
        duplicate: the broker recognised a retried batch and wrote nothing.
    """

    __slots__ = ("first_offset", "last_offset", "records", "size", "max_timestamp",
                 "log_append_time", "segment_base_offset", "rolled", "duplicate")

    def __init__(self, first_offset, last_offset, records, size, max_timestamp,
                 log_append_time, segment_base_offset, rolled=(), duplicate=False):
        self.first_offset = first_offset
        self.last_offset = last_offset
        self.records = records
        self.size = size
        self.max_timestamp = max_timestamp
        self.log_append_time = log_append_time
        self.segment_base_offset = segment_base_offset
        self.rolled = list(rolled)
        self.duplicate = duplicate

    def __repr__(self) -> str:
        return (f"LogAppendInfo(first_offset={self.first_offset}, last_offset={self.last_offset}"
                f", records={self.records}, size={self.size}, rolled={self.rolled})")


class UnifiedLog(Log):
    """A partition's log opened for appending, after ``UnifiedLog`` + ``LocalLog``.

    Owns the segments, the log end offset, the recovery point (everything below it is
    fsynced), the log start offset, the leader epoch cache and the producer state. Open
    it with :meth:`open`; the log directory's lock, ``meta.properties``, the checkpoints
    and the clean-shutdown marker belong to :class:`~kafkalog_cli.storage.log_manager.LogManager`.

    Not thread-safe (the broker holds the log's lock around the same steps).
    """

    def __init__(self, directory, config, clock, *, fsync: bool = True, rng=None):
        super().__init__(directory)
        self.config = config
        self.clock = clock
        self.fsync = fsync
        self.rng = rng
        self.active = None
        self.log_end_offset = 0
        self.recovery_point = 0
        self.log_start_offset = 0
        self.last_flush_ms = clock.milliseconds()
        self.leader_epoch_cache = None
        self.producer_state = None
        self.rolled_segments = 0
        self.closed = False
        #: write new index entries to the files after each append (as the broker's mmap
        #: does) instead of only at flush/roll/close; set by a server for crash safety
        self.index_write_through = False

    @classmethod
    def open(cls, directory, config=None, clock=None, *, topic_id: str | None = None,
             log_start_offset: int | None = None, recovery_point: int | None = None,
             fsync: bool = True, rng=None, recovered: bool = False) -> UnifiedLog:
        """Open (creating when needed) a partition directory for appending.

        Creates the directory and ``partition.metadata`` (a random topic id unless
        ``topic_id`` is given), reopens the last segment (or creates the first one at
        the log start offset), loads ``leader-epoch-checkpoint`` and the newest producer
        snapshot at or below the log end offset, replaying batches written after it
        (snapshots above the log end offset are deleted). ``recovered``: the log recovery
        has just run (and written a snapshot at the log end offset): the producer state
        is replayed from the newest snapshot below the log end offset, as the broker's
        ``LogLoader`` rebuilds it after an unclean shutdown, so that the last five batches
        of each producer are known again (a retry of a batch whose answer the crash lost
        is then a duplicate, not an out-of-order sequence).

        Raises:
            InvalidArgumentError: an illegal topic name, or a ``topic_id`` that differs
                from the one in partition.metadata.
            CorruptCheckpointError: partition.metadata or leader-epoch-checkpoint does
                not parse (nothing is written; ``kafkalog recover`` rebuilds them).
            CorruptRecordError: the last segment ends in invalid bytes (run recovery).
            UnsafePathError: the active segment's files are symbolic links.
        """
        from .config import LogConfig
        from .leader_epoch import LeaderEpochFileCache
        from .roll import random_segment_jitter

        config = config or LogConfig()
        clock = clock or SYSTEM
        d = require_local(directory, "appending")
        tp = parse_partition_dir_name(d.name)
        if tp is None:
            raise InvalidArgumentError(f"{d.name!r} is not a <topic>-<partition> directory name")
        validate_topic_name(tp.topic)
        d.mkdir(parents=True, exist_ok=True)
        # the files the broker parses as it loads the log, before anything is written:
        # one that does not parse refuses this partition (the broker takes its log dir
        # offline), with a one-line error naming the file and line
        meta = read_partition_metadata(d)
        epoch_cache = LeaderEpochFileCache.load(d, fsync=fsync)
        if meta is None:
            write_partition_metadata(d, topic_id or random_kafka_uuid())
        elif topic_id is not None and meta.get("topic_id") != topic_id:
            raise InvalidArgumentError(
                f"Tried to assign topic ID {topic_id} to log for topic partition {tp}, but "
                f"log already contained topic ID {meta.get('topic_id')}")
        log = cls(d, config, clock, fsync=fsync, rng=rng)
        ro = Log.open(d)
        bases = [s.base_offset for s in ro.segments]
        log.segments = list(ro.segments)
        jitter = random_segment_jitter(config.segment_jitter_ms, config.segment_ms, rng)
        if bases:
            prev_last = None
            if len(bases) > 1:
                prev_last = _last_offset_of(ro.segments[-2])
            active = WritableLogSegment.open_for_append(
                d, bases[-1], config, clock, roll_jitter_ms=jitter, fsync=fsync,
                previous_last_offset=prev_last)
            log.segments[-1] = active
            log.log_end_offset = active.next_offset
            log.log_start_offset = bases[0] if log_start_offset is None else log_start_offset
        else:
            start = log_start_offset or 0
            active = WritableLogSegment.create(d, start, config, clock, roll_jitter_ms=jitter,
                                               fsync=fsync)
            log.segments = [active]
            log.log_end_offset = start
            log.log_start_offset = start
        log.active = active
        log.recovery_point = min(log.log_end_offset,
                                 log.log_end_offset if recovery_point is None else recovery_point)
        log.leader_epoch_cache = epoch_cache
        log.leader_epoch_cache.truncate_from_end(log.log_end_offset)
        from .producer_state import ProducerStateManager

        ps = ProducerStateManager(d, fsync=fsync)
        snap = ps.load(log.log_end_offset, below_end=recovered)
        if snap < log.log_end_offset:
            # rebuild from the batches after the snapshot (LogLoader / loadProducerState)
            segs = log.segments
            for i, seg in enumerate(segs):
                if i + 1 < len(segs) and segs[i + 1].base_offset <= snap:
                    continue
                for batch in seg.records().batches():
                    if batch.last_offset >= snap:
                        ps.replay_batch(batch)
        ps.update_map_end_offset(log.log_end_offset)
        log.producer_state = ps
        return log

    # -- appending --------------------------------------------------------------------------

    def append_as_leader(self, records, *, leader_epoch: int = 0, origin: str = "client",
                         summary=None) -> LogAppendInfo:
        """UnifiedLog.appendAsLeader for one v2 batch: validate, assign offsets from the
        log end offset, check producer state (sequences, epochs; a marker's epochs too),
        roll if needed, append, update indexes, epochs, producer state and transaction
        index, flush per flush.messages/flush.ms. A batch the producer state refuses
        writes nothing. The same as :meth:`validate_append` then :meth:`append_validated`.

        Args:
            records: the producer's batch bytes (baseOffset 0).
            leader_epoch: stamped as partitionLeaderEpoch (and put in the epoch cache).
            origin: ``"client"`` or ``"coordinator"`` (control markers).
            summary: a :class:`~.validator.RecordsSummary` from the builder, if known.

        Raises:
            see :func:`kafkalog_cli.storage.validator.validate`, plus
            RecordBatchTooLargeError (over segment.bytes) and the producer-state errors.
        """
        info = self.validate_append(records, leader_epoch=leader_epoch, origin=origin,
                                    summary=summary)
        return self.append_validated(info, leader_epoch=leader_epoch)

    def validate_append(self, records, *, leader_epoch: int = 0, origin: str = "client",
                        summary=None):
        """The validation half of :meth:`append_as_leader` (``analyzeAndValidateRecords``
        and ``LogValidator.validateMessagesAndAssignOffsets``): offsets assigned from the
        current log end offset, timestamps checked against the clock. It reads the log's
        config, clock and log end offset and changes nothing, so a server may run it on
        another thread (the CPU-heavy part of an append) while the log is not appended to,
        then pass the result to :meth:`append_validated` on its own thread.

        Returns:
            a :class:`~.validator.ValidationResult`.

        Raises:
            IllegalStateError: the log is closed.
            see :func:`kafkalog_cli.storage.validator.validate`; for a record error on a
            compacted topic the message names the topic partition, as LogValidator's.
        """
        if self.closed:
            raise IllegalStateError("append to a closed log", file=self.directory)
        global _validate
        if _validate is None:
            # imported on the first append: crc32c and the builder cost readers ~50 ms
            from .validator import validate as _validate
        return _validate(records, offset=self.log_end_offset,
                        now=self.clock.milliseconds(), config=self.config,
                        partition_leader_epoch=leader_epoch, origin=origin,
                        summary=summary,
                        topic_partition=None if self.topic_partition is None
                        else str(self.topic_partition))

    def append_validated(self, info, *, leader_epoch: int = 0) -> LogAppendInfo:
        """The write half of :meth:`append_as_leader` for a :meth:`validate_append` result
        taken at the current log end offset: producer state, roll, the segment append,
        indexes, epochs, transaction index, flush.

        Raises:
            IllegalStateError: the log is closed, or was appended to since ``info`` was
                validated (its first offset is not the log end offset); nothing is written.
            RecordBatchTooLargeError: the batch is over segment.bytes.
            the producer-state errors (nothing is written).
        """
        if self.closed or info.first_offset != self.log_end_offset:
            raise IllegalStateError(
                "append to a closed log" if self.closed else
                f"stale validation: offsets assigned from {info.first_offset}, the log end "
                f"offset is now {self.log_end_offset}", file=self.directory)
        now = self.clock.milliseconds()
        size = len(info.batch)
        if size > self.config.segment_bytes:
            raise RecordBatchTooLargeError(
                f"Message batch size is {size} bytes in append to partition "
                f"{self.topic_partition}, which exceeds the maximum configured segment size of "
                f"{self.config.segment_bytes}.")
        # UnifiedLog.append: the epoch cache and the roll come before the producer-state
        # check (analyzeAndValidateProducerState): a duplicate or a rejected batch that would
        # not fit the active segment leaves a rolled, empty one
        if leader_epoch >= 0:
            self.leader_epoch_cache.assign(leader_epoch, info.first_offset)
        rolled = self.maybe_roll(size, info.max_timestamp, info.last_offset, now)
        ps = self.producer_state
        pid = info.producer_id
        pending = None
        completed = None
        if pid >= 0:
            if info.is_control:
                # UnifiedLog.analyzeAndValidateProducerState (appendEndTxnMarker's checks)
                # runs before localLog.append: a fenced marker must not reach the log
                pending, completed = ps.prepare_control_batch(
                    batch_at(memoryview(info.batch), 0))
            else:
                dup = ps.find_duplicate(pid, info.producer_epoch, info.base_sequence,
                                        info.last_sequence)
                if dup is not None:
                    return LogAppendInfo(dup.first_offset, dup.last_offset,
                                         dup.last_offset - dup.first_offset + 1, 0,
                                         dup.timestamp, -1, self.active.base_offset,
                                         duplicate=True)
                pending = ps.prepare_data_batch(
                    pid, info.producer_epoch, info.base_sequence, info.last_sequence,
                    info.max_timestamp, info.first_offset, info.last_offset,
                    info.is_transactional, check_sequence=info.origin == "client")
        seg = self._write(info.batch, size, info.last_offset, info.max_timestamp,
                          pending, completed, now)
        return LogAppendInfo(info.first_offset, info.last_offset, info.records, size,
                             info.max_timestamp, info.log_append_time, seg.base_offset, rolled)

    def _write(self, batch, size: int, last_offset: int, max_timestamp: int,
               pending, completed, now: int):
        """The write step every append shares after its roll (LocalLog.append and what
        follows it in UnifiedLog.append): the segment append and its indexes, the log end
        offset, the producer state and transaction index, flush per flush.messages /
        flush.ms. Returns the segment written to."""
        seg = self.active
        seg.append(batch, last_offset, batches=[(size, last_offset, max_timestamp)])
        self.log_end_offset = last_offset + 1
        if self.index_write_through:
            seg.write_index_entries()
        ps = self.producer_state
        if pending is not None:
            ps.update(pending)
        if completed is not None:
            seg.update_txn_index(completed, ps.last_stable_offset(completed))
            ps.complete_txn(completed)
        ps.update_map_end_offset(self.log_end_offset)
        if (self.unflushed_messages >= self.config.flush_messages
                or now - self.last_flush_ms >= self.config.flush_ms):
            self.flush()
        return seg

    def append_as_follower(self, batch) -> LogAppendInfo:
        """UnifiedLog.appendAsFollower for one batch (v2 or a legacy entry) that already
        carries its offsets, as a follower appends what it fetched from the leader
        (AppendOrigin.REPLICATION): nothing is re-validated or re-assigned, the bytes are
        written as they are. Its CRC is checked and its first offset must not be below the
        log end offset (compacted logs leave gaps); the leader epoch cache takes the
        batch's partitionLeaderEpoch (v2); the producer state is updated without sequence
        checks; the roll rules, the segment's indexes and the transaction index are the
        leader append's (:meth:`_write`).

        Raises:
            IllegalStateError: the log is closed, or the batch starts below the log end
                offset (UnexpectedAppendOffsetException); nothing is written.
            CrcMismatchError / CorruptRecordError: the bytes are not one whole valid batch.
            RecordBatchTooLargeError: the batch is over segment.bytes.
        """
        from ..format.legacy import LegacyRecordBatch

        if self.closed:
            raise IllegalStateError("append to a closed log", file=self.directory)
        view = memoryview(batch)
        b = batch_at(view, 0)
        if b is None or b.size != len(view):
            raise CorruptRecordError(f"{len(view)} bytes are not one whole batch",
                                     file=self.directory)
        b.ensure_valid(self.directory)
        legacy = isinstance(b, LegacyRecordBatch)
        last = b.last_offset
        try:  # a legacy wrapper's first offset is its first inner message's
            first = b.base_offset
        except KafkalogError:
            first = last
        if first < self.log_end_offset:
            raise IllegalStateError(
                f"Unexpected offset in append to {self.topic_partition}. First offset {first} "
                f"is less than the next offset {self.log_end_offset}.", file=self.directory)
        size = len(view)
        if size > self.config.segment_bytes:
            raise RecordBatchTooLargeError(
                f"Message batch size is {size} bytes in append to partition "
                f"{self.topic_partition}, which exceeds the maximum configured segment size of "
                f"{self.config.segment_bytes}.")
        now = self.clock.milliseconds()
        # UnifiedLog.append: the epoch cache and the roll come before the producer state
        if not legacy and b.partition_leader_epoch >= 0:
            self.leader_epoch_cache.assign(b.partition_leader_epoch, first)
        rolled = self.maybe_roll(size, b.max_timestamp, last, now)
        pending = completed = None
        if not legacy and b.producer_id >= 0:
            ps = self.producer_state
            if b.is_control:
                pending, completed = ps.prepare_control_batch(b)
            else:
                pending = ps.prepare_data_batch(
                    b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence,
                    b.max_timestamp, first, last, b.is_transactional, check_sequence=False)
        records = last - first + 1 if legacy else b.count
        seg = self._write(view, size, last, b.max_timestamp, pending, completed, now)
        return LogAppendInfo(first, last, records, size, b.max_timestamp, -1,
                             seg.base_offset, rolled)

    def append_end_txn_marker(self, *, producer_id: int, producer_epoch: int, commit: bool,
                              coordinator_epoch: int = 0, leader_epoch: int = 0
                              ) -> LogAppendInfo:
        """Write a COMMIT or ABORT marker for a producer (what the transaction coordinator
        sends with WriteTxnMarkers, appended with origin COORDINATOR).

        Raises:
            InvalidProducerEpochError: ``producer_epoch`` is below the producer's last
                epoch (nothing is written).
            TransactionCoordinatorFencedError: ``coordinator_epoch`` is below the one of
                the producer's last marker (nothing is written).
        """
        # imported here: the builder's tables cost readers ~30 ms of start-up
        from ..format.builder import build_control_batch

        batch = build_control_batch(1 if commit else 0, timestamp=self.clock.milliseconds(),
                                    producer_id=producer_id, producer_epoch=producer_epoch,
                                    coordinator_epoch=coordinator_epoch)
        return self.append_as_leader(batch, leader_epoch=leader_epoch, origin="coordinator")

    # -- rolling ----------------------------------------------------------------------------

    @property
    def unflushed_messages(self) -> int:
        """LocalLog.unflushedMessages: the offsets past the recovery point (``log end
        offset - recovery point``; a roll moves the recovery point to the new segment)."""
        return self.log_end_offset - self.recovery_point

    def roll_params(self, messages_size: int, max_timestamp: int, max_offset: int, now: int):
        from .roll import RollParams

        seg = self.active
        return RollParams(
            max_segment_ms=self.config.segment_ms, max_segment_bytes=self.config.segment_bytes,
            max_timestamp_in_messages=max_timestamp, max_offset_in_messages=max_offset,
            messages_size=messages_size, now=now, segment_size=seg.size,
            segment_base_offset=seg.base_offset,
            rolling_based_timestamp=seg.rolling_based_timestamp, created_ms=seg.created_ms,
            roll_jitter_ms=seg.roll_jitter_ms, offset_index_full=seg.offset_index.is_full,
            time_index_full=seg.time_index.is_full)

    def maybe_roll(self, messages_size: int, max_timestamp: int, max_offset: int,
                   now: int | None = None) -> list[str]:
        """UnifiedLog.maybeRoll: roll when :func:`~.roll.should_roll` says so; the new
        segment's base offset is the append's first offset (= the log end offset).
        Returns the roll reasons (empty when no roll)."""
        now = self.clock.milliseconds() if now is None else now
        config = self.config
        if not self.active.should_roll(config.segment_bytes, config.segment_ms, messages_size,
                                       max_timestamp, max_offset, now):
            return []
        from .roll import roll_reasons

        # a roll: its reasons, by name, from the full RollParams (once per segment)
        reasons = roll_reasons(self.roll_params(messages_size, max_timestamp, max_offset, now))
        if self.active.size == 0 and self.active.base_offset == self.log_end_offset:
            # KAFKA-6388: an empty active segment whose index is "full" (tiny
            # segment.index.bytes) is replaced by an identical one; append into it.
            return []
        self.roll(self.log_end_offset)
        return reasons

    def roll(self, expected_next_offset: int | None = None):
        """UnifiedLog.roll / LocalLog.roll: close the active segment (final time entry,
        trimmed indexes, fsync), create the next one at ``max(expected, log end offset)``,
        snapshot the producer state at that offset, advance the recovery point."""
        from .roll import random_segment_jitter

        new_offset = max(expected_next_offset or 0, self.log_end_offset)
        old = self.active
        if new_offset <= old.base_offset and old.size:
            raise IllegalStateError(
                f"Trying to roll a new log segment with start offset {new_offset} lower than "
                f"start offset of the active segment {old.base_offset}", file=self.directory)
        old.close()
        # the closed segment becomes a plain read-side segment
        self.segments[-1] = LogSegment(self.directory, old.base_offset)
        jitter = random_segment_jitter(self.config.segment_jitter_ms, self.config.segment_ms,
                                       self.rng)
        new = WritableLogSegment.create(self.directory, new_offset, self.config, self.clock,
                                        roll_jitter_ms=jitter, fsync=self.fsync)
        self.segments.append(new)
        self.active = new
        self.rolled_segments += 1
        self.producer_state.update_map_end_offset(new_offset)
        self.producer_state.take_snapshot()
        self.producer_state.update_map_end_offset(self.log_end_offset)
        self.recovery_point = max(self.recovery_point, new_offset)
        return new

    # -- log start offset and config ----------------------------------------------------------

    def maybe_increment_log_start_offset(self, new_log_start_offset: int) -> bool:
        """UnifiedLog.maybeIncrementLogStartOffset (reason ClientRecordDeletion): move the
        log start offset up to ``new_log_start_offset`` (absolute offset; records below it
        are no longer served), trimming the leader epoch cache from the start and telling
        the producer state. The high watermark is the log end offset here. Segments
        wholly below the new start stay on disk until a retention pass deletes them (the
        broker's ``deleteLogStartOffsetBreachedSegments``); the offset reaches
        ``log-start-offset-checkpoint`` with :meth:`~kafkalog_cli.storage.log_manager.LogManager.checkpoint`.

        Returns:
            True when the log start offset moved.

        Raises:
            OffsetOutOfRangeError: the offset is above the high watermark.
        """
        from ..errors import OffsetOutOfRangeError

        if new_log_start_offset > self.log_end_offset:
            raise OffsetOutOfRangeError(new_log_start_offset, self.log_start_offset,
                                        self.log_end_offset, file=self.directory)
        if new_log_start_offset <= self.log_start_offset:
            return False
        self.log_start_offset = new_log_start_offset
        self.leader_epoch_cache.truncate_from_start(new_log_start_offset)
        self.producer_state.on_log_start_offset_incremented(new_log_start_offset)
        return True

    def update_config(self, config) -> None:
        """UnifiedLog.updateConfig: later appends, rolls and flushes follow ``config``; the
        active segment keeps the index size and interval it was created with (a broker
        sizes a segment's indexes when it opens them)."""
        self.config = config

    # -- flushing and closing ---------------------------------------------------------------

    def flush(self) -> None:
        """UnifiedLog.flush(log end offset): fsync the active segment and its indexes;
        the recovery point becomes the log end offset."""
        self.active.flush()
        self.recovery_point = self.log_end_offset
        self.last_flush_ms = self.clock.milliseconds()

    def close(self) -> None:
        """UnifiedLog.close: snapshot the producer state at the log end offset, close the
        active segment (final time entry, trimmed indexes, fsync)."""
        if self.closed:
            return
        self.producer_state.update_map_end_offset(self.log_end_offset)
        self.producer_state.take_snapshot()
        self.active.close()
        self.recovery_point = self.log_end_offset
        self.closed = True
        for s in self.segments:
            s.close()

    def abandon(self) -> None:
        """Release files without the close steps (used when the process must stop at once);
        what is on disk stays as the last flush left it, for recovery to finish."""
        if not self.closed:
            self.active.abandon()
            self.closed = True


def _last_offset_of(segment: LogSegment) -> int | None:
    """The last offset of the segment's last whole batch (None when it holds none),
    reading every batch header; the segment's files are released after."""
    last = None
    for b in segment.records().batches():
        last = b.last_offset
    segment.close()
    return last

