"""Idempotent and transactional producer state, after ``ProducerStateManager``,
``ProducerAppendInfo`` and ``ProducerStateEntry``.

Per producer id: its epoch, the metadata of its last (up to 5) batches (last sequence,
last offset, offset delta, max timestamp), the coordinator epoch, and the first offset of
its open transaction. The state is checkpointed in ``<offset>.snapshot`` files
(:mod:`kafkalog_cli.schema.producer_snapshot`), named by the log end offset at the time:
the broker takes one when a segment is rolled (named by the new segment's base offset) and
when the log is closed.

Sequence rules (``ProducerAppendInfo.checkSequence``): a new epoch must start at sequence
0 (unless the producer is unknown); within an epoch the first sequence must follow the
last one (wrapping at Int.MAX), and must be 0 when the epoch has no batch yet (a marker
bumped it); a producer with no known epoch may start anywhere. A batch
whose sequences equal one of the last 5 batches is a duplicate: the broker acknowledges it
without appending (:meth:`ProducerStateManager.find_duplicate`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from ..constants import (
    INT32_MAX,
    NO_PRODUCER_EPOCH,
    NO_SEQUENCE,
    PRODUCER_SNAPSHOT_FILE_SUFFIX,
)
from ..errors import (
    CorruptSnapshotError,
    IllegalStateError,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    KafkalogError,
    OutOfOrderSequenceError,
    TransactionCoordinatorFencedError,
    UnreadableError,
)
from ..format.control import read_end_txn_marker
from ..schema.producer_snapshot import (
    ENTRY_SIZE,
    HEADER,
    PRODUCER_ENTRIES_OFFSET,
    build_snapshot,
    check_header,
    crc_mismatch,
    entries_of,
)
from ..schema.producer_snapshot import ProducerStateEntry as SnapshotEntry
from ..schema.txn_index import AbortedTxn
from .checkpoints import write_atomically
from .files import filename_prefix_from_offset, offset_prefix
from .location import as_path, listdir, open_regular, opened_size, read_up_to

NUM_BATCHES_TO_RETAIN = 5


@dataclass
class BatchMetadata:
    """One appended batch of a producer (BatchMetadata): sequences and offsets absolute."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return _decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


def _decrement_sequence(seq: int, dec: int) -> int:
    if seq < dec:
        return INT32_MAX - (dec - seq) + 1
    return seq - dec


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


@dataclass
class ProducerEntry:
    """ProducerStateEntry: the state of one producer id."""

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    batches: deque = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    current_txn_first_offset: int | None = None

    @property
    def is_empty(self) -> bool:
        return not self.batches

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_data_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    @property
    def last_offset_delta(self) -> int:
        return self.batches[-1].offset_delta if self.batches else 0

    def maybe_update_epoch(self, epoch: int) -> None:
        if self.producer_epoch != epoch:
            self.batches.clear()
            self.producer_epoch = epoch

    def add_batch(self, epoch: int, last_seq: int, last_offset: int, offset_delta: int,
                  timestamp: int) -> None:
        self.maybe_update_epoch(epoch)
        self.batches.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def copy(self) -> ProducerEntry:
        return ProducerEntry(self.producer_id, self.producer_epoch,
                             deque(self.batches, maxlen=NUM_BATCHES_TO_RETAIN),
                             self.coordinator_epoch, self.last_timestamp,
                             self.current_txn_first_offset)

    def to_snapshot(self) -> SnapshotEntry:
        return SnapshotEntry(self.producer_id, self.producer_epoch, self.last_seq,
                             self.last_data_offset, self.last_offset_delta, self.last_timestamp,
                             self.coordinator_epoch,
                             -1 if self.current_txn_first_offset is None
                             else self.current_txn_first_offset)

    @classmethod
    def from_snapshot(cls, e: SnapshotEntry) -> ProducerEntry:
        out = cls(e.producer_id, e.producer_epoch, coordinator_epoch=e.coordinator_epoch,
                  last_timestamp=e.timestamp,
                  current_txn_first_offset=None if e.current_txn_first_offset < 0
                  else e.current_txn_first_offset)
        if e.last_offset >= 0:
            out.batches.append(BatchMetadata(e.last_sequence, e.last_offset, e.offset_delta,
                                             e.timestamp))
        return out


@dataclass(frozen=True)
class CompletedTxn:
    """A transaction ended by a marker (CompletedTxn): offsets absolute."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


def snapshot_path(partition_dir, offset: int) -> Path:
    """LogFileUtils.producerSnapshotFile: ``<20-digit offset>.snapshot``."""
    return as_path(partition_dir) / (filename_prefix_from_offset(offset) +
                                     PRODUCER_SNAPSHOT_FILE_SUFFIX)


def list_snapshots(partition_dir) -> list[int]:
    """Offsets of the ``.snapshot`` files of a partition directory (a local one or a
    remote one, :mod:`~kafkalog_cli.storage.location`), ascending."""
    out = []
    try:
        names = listdir(as_path(partition_dir))
    except FileNotFoundError:
        return []
    for n in names:
        off = offset_prefix(n, PRODUCER_SNAPSHOT_FILE_SUFFIX)
        if off is not None:
            out.append(off)
    return sorted(out)


#: the largest producer snapshot kafkalog reads: 5.8 million producers of 46 bytes (a
#: broker expires idle producers after ``producer.id.expiration.ms``, a day); a larger
#: file is corrupt
MAX_SNAPSHOT_BYTES = 256 << 20


def read_snapshot(path):
    """The entries of the snapshot file ``path``
    (:class:`~kafkalog_cli.schema.producer_snapshot.ProducerStateEntry` s), as
    ``ProducerStateManager.readSnapshot`` reads them: the version, the layout and the CRC
    are checked before this returns (the file read a piece at a time), then the returned
    iterator reads the entries a piece at a time: the file is never held whole.

    Raises:
        NotRegularFileError: a FIFO, a device, a socket or a directory.
        CorruptSnapshotError: unknown version, bad layout, CRC mismatch, or a file over
            :data:`MAX_SNAPSHOT_BYTES`.
        UnreadableError: it cannot be read (missing included).
    """
    from ..crc import crc32c

    try:
        f = open_regular(path)
    except FileNotFoundError as e:
        raise UnreadableError(e.strerror or str(e), file=path) from e
    try:
        size = opened_size(f, path)
        if size > MAX_SNAPSHOT_BYTES:
            raise CorruptSnapshotError(f"is {size} bytes, more than the {MAX_SNAPSHOT_BYTES} "
                                       "bytes kafkalog reads of a producer snapshot",
                                       file=path)
        head = read_up_to(f, HEADER.size, path)
        stored, count = check_header(head, size, path)
        computed = crc32c(head[PRODUCER_ENTRIES_OFFSET:])
        got = len(head)
        while True:
            chunk = read_up_to(f, _SNAPSHOT_CHUNK, path)
            if not chunk:
                break
            got += len(chunk)
            if got > size:
                break
            computed = crc32c(chunk, computed)
        if got != size:   # it changed size, or a remote object's size lied
            raise CorruptSnapshotError(f"Snapshot failed schema validation: {got} bytes "
                                       f"read, {size} expected", file=path)
        if computed != stored:
            raise crc_mismatch(stored, computed, path)
        f.seek(HEADER.size)
    except BaseException:
        f.close()
        raise
    return _snapshot_entries(f, path, count)


#: bytes of whole entries read at a time
_SNAPSHOT_CHUNK = ENTRY_SIZE * 1424


def _snapshot_entries(f, path, count: int):
    try:
        left = count
        while left > 0:
            data = read_up_to(f, min(left, _SNAPSHOT_CHUNK // ENTRY_SIZE) * ENTRY_SIZE, path)
            n = len(data) // ENTRY_SIZE
            if not n:
                raise CorruptSnapshotError("Snapshot failed schema validation: the file "
                                           "ended early", file=path)
            yield from entries_of(data[:n * ENTRY_SIZE])
            left -= n
    finally:
        f.close()


class ProducerStateManager:
    """Producer ids -> :class:`ProducerEntry`, ongoing transactions, snapshots.

    The one implementation of the producer state, for appends (:meth:`prepare_data_batch`,
    :meth:`prepare_end_txn_marker`, :meth:`update`: origin CLIENT / COORDINATOR, every
    check) and for rebuilding it from the log (:meth:`replay_batch`: origin REPLICATION,
    no check), which the append engine, ``kafkalog recover``, ``read`` and the Spark
    source all use. The state itself is in memory (a manager without a ``directory``
    never touches a file); :meth:`load` and :meth:`take_snapshot` are the persist step,
    reading and writing ``<offset>.snapshot`` files.

    Attributes:
        directory: the partition directory (None: in memory only).
        producers: producer id -> entry.
        ongoing: first offset of each open transaction -> producer id.
        last_map_offset: the offset up to which the state is current (exclusive).
        last_snap_offset: offset of the newest snapshot written or loaded.
    """

    def __init__(self, directory=None, *, fsync: bool = True):
        self.directory = None if directory is None else as_path(directory)
        self.producers: dict[int, ProducerEntry] = {}
        self.ongoing: dict[int, int] = {}
        self.last_map_offset = 0
        self.last_snap_offset = 0
        self.fsync = fsync
        #: control batches :meth:`replay_batch` skipped (no end-transaction marker parses),
        #: and why the first of them was (its position is the batch's)
        self.skipped_markers = 0
        self.first_skipped_marker: KafkalogError | None = None

    # -- loading ----------------------------------------------------------------------------

    def load_entries(self, entries, offset: int) -> None:
        """Make the state that of a snapshot taken at ``offset`` holding ``entries``
        (:class:`~kafkalog_cli.schema.producer_snapshot.ProducerStateEntry` s), as
        ``ProducerStateManager.loadFromSnapshot`` does after ``readSnapshot`` (an entry
        whose last offset is negative keeps no batch metadata). Producers are not
        expired (the broker expires them by wall-clock time; keeping them keeps a rerun
        deterministic)."""
        self.producers.clear()
        self.ongoing.clear()
        for e in entries:
            entry = ProducerEntry.from_snapshot(e)
            self.producers[e.producer_id] = entry
            if entry.current_txn_first_offset is not None:
                self.ongoing[entry.current_txn_first_offset] = e.producer_id
        self.last_map_offset = self.last_snap_offset = offset

    def load(self, log_end_offset: int, *, below_end: bool = False) -> int:
        """Load the newest snapshot file at or below ``log_end_offset`` (``below_end``:
        below it, the one at it kept); returns its offset (0 when none). Snapshots above the log end offset are stray (the log tail they saw
        is gone) and are deleted, as ``ProducerStateManager.truncateAndReload`` does, so
        a later load cannot pick one up; the caller replays batches from the returned
        offset to the log end (:meth:`replay_batch`).

        Raises:
            CorruptSnapshotError: the chosen snapshot fails its CRC or schema.
            OSError: a stray snapshot cannot be deleted.
            IllegalStateError: the manager has no directory.
        """
        self._require_directory()
        offs = []
        for o in list_snapshots(self.directory):
            if o > log_end_offset:
                # truncateAndReload: remove every snapshot above the log end offset
                snapshot_path(self.directory, o).unlink(missing_ok=True)
            elif o < log_end_offset or not below_end:
                offs.append(o)
        if not offs:
            self.load_entries((), 0)
            return 0
        off = offs[-1]
        self.load_entries(read_snapshot(snapshot_path(self.directory, off)), off)
        return off

    def load_readable(self, log_start_offset: int, log_end_offset: int) -> int:
        """:meth:`load` for a reader, writing nothing: the newest snapshot file above
        ``log_start_offset`` and at or below ``log_end_offset`` that parses (the ones
        ``truncateAndReload`` keeps; a corrupt one is passed over for the next older, as
        ``loadFromSnapshot`` does after deleting it); returns its offset, or
        ``log_start_offset`` when none is usable (the state is then empty). The caller
        replays the batches from the returned offset (:meth:`replay_batch`).

        Raises:
            IllegalStateError: the manager has no directory.
        """
        self._require_directory()
        for off in reversed(list_snapshots(self.directory)):
            if not log_start_offset < off <= log_end_offset:
                continue
            try:
                entries = read_snapshot(snapshot_path(self.directory, off))
            except (OSError, KafkalogError):
                continue
            try:
                self.load_entries(entries, off)
            except (OSError, KafkalogError):   # the file changed under the second read
                continue
            return off
        self.load_entries((), log_start_offset)
        return log_start_offset

    def replay_batch(self, batch) -> AbortedTxn | None:
        """Apply a batch already in the log (``LogSegment.updateProducerState``: origin
        REPLICATION, so nothing is checked): a data batch sets its producer's epoch, last
        sequence, last offset, offset delta and timestamp (its max timestamp) and opens a
        transaction when transactional; an end-transaction marker (the control batch's
        first record, read by :func:`~kafkalog_cli.format.control.read_end_txn_marker`)
        sets the epoch, coordinator epoch and timestamp (the marker record's), and
        completes the open transaction, ended at the batch's base offset. The map end
        offset moves past the batch. Every batch with a producer id creates its
        producer's entry, as ``prepareUpdate`` + ``update`` do.

        A control batch whose marker does not parse (undecodable records, a key or value
        that is not an ABORT / COMMIT marker) is skipped: the broker's loader would stop
        there (``EndTransactionMarker.deserialize`` throws); kafkalog's rule keeps the
        transaction open, and counts it in :attr:`skipped_markers`. An empty control batch (its transaction cleaned away) changes
        nothing, as in Kafka.

        Returns:
            the :class:`~kafkalog_cli.schema.txn_index.AbortedTxn` for the segment's
            transaction index when the batch completes an aborted transaction (its last
            stable offset as ``lastStableOffset(completedTxn)``: the first offset of
            another open transaction, else the marker's offset + 1), else None.
        """
        pid = batch.producer_id
        if pid < 0:
            self.last_map_offset = batch.last_offset + 1
            return None
        entry = self.producers.get(pid)
        if entry is None:
            entry = self.producers[pid] = ProducerEntry(pid)
        aborted = None
        if batch.is_control:
            try:
                marker = read_end_txn_marker(batch)
            except KafkalogError as e:
                marker = None  # not an end-transaction marker: skipped (see above)
                self.skipped_markers += 1
                if self.first_skipped_marker is None:
                    e.position = batch.position
                    self.first_skipped_marker = e
            if marker is not None:
                first = entry.current_txn_first_offset
                offset = batch.base_offset
                entry.maybe_update_epoch(batch.producer_epoch)
                entry.coordinator_epoch = marker.coordinator_epoch
                entry.last_timestamp = marker.timestamp
                entry.current_txn_first_offset = None
                if first is not None:
                    if marker.is_abort:
                        aborted = AbortedTxn(pid, first, offset, self._lso(pid, offset))
                    self.ongoing.pop(first, None)
        else:
            base = batch.base_offset
            last = batch.last_offset
            entry.add_batch(batch.producer_epoch, batch.last_sequence, last, last - base,
                            batch.max_timestamp)
            if entry.current_txn_first_offset is None and batch.is_transactional:
                entry.current_txn_first_offset = base
                self.ongoing.setdefault(base, pid)
        self.last_map_offset = batch.last_offset + 1
        return aborted

    def _require_directory(self) -> None:
        if self.directory is None:
            raise IllegalStateError("this producer state is in memory only: it has no "
                                    "partition directory for snapshot files")

    def _lso(self, producer_id: int, marker_offset: int) -> int:
        others = [o for o, pid in self.ongoing.items() if pid != producer_id]
        return min(others) if others else marker_offset + 1

    # -- appends ----------------------------------------------------------------------------

    def entry(self, producer_id: int) -> ProducerEntry | None:
        return self.producers.get(producer_id)

    def next_sequence(self, producer_id: int, epoch: int) -> int:
        """The sequence a producer's next batch must start with (0 for a new epoch)."""
        e = self.producers.get(producer_id)
        if e is None or e.producer_epoch != epoch or e.is_empty:
            return 0
        return 0 if e.last_seq == INT32_MAX else e.last_seq + 1

    def find_duplicate(self, producer_id: int, epoch: int, first_seq: int,
                       last_seq: int) -> BatchMetadata | None:
        """ProducerStateEntry.findDuplicateBatch: a retained batch with these sequences."""
        e = self.producers.get(producer_id)
        if e is None or e.producer_epoch != epoch:
            return None
        for b in e.batches:
            if b.first_seq == first_seq and b.last_seq == last_seq:
                return b
        return None

    def prepare_data_batch(self, producer_id: int, epoch: int, first_seq: int, last_seq: int,
                           timestamp: int, first_offset: int, last_offset: int,
                           is_transactional: bool, *, check: bool = True,
                           check_sequence: bool = True) -> ProducerEntry:
        """ProducerAppendInfo.appendDataBatch: the producer's entry after this batch (not yet
        applied; pass it to :meth:`update` once the batch is in the log).
        ``check_sequence`` False: origin COORDINATOR (a transactional offset commit has no
        sequence numbers), whose epoch is checked but not its sequence
        (``maybeValidateDataBatch``).

        Raises:
            InvalidProducerEpochError / OutOfOrderSequenceError / InvalidTxnStateError.
        """
        current = self.producers.get(producer_id)
        updated = current.copy() if current else ProducerEntry(producer_id)
        if check:
            if epoch < updated.producer_epoch:
                raise InvalidProducerEpochError(
                    f"Epoch of producer {producer_id} at offset {first_offset} is {epoch}, "
                    f"which is smaller than the last seen epoch {updated.producer_epoch}")
            if not check_sequence:
                pass
            elif epoch != updated.producer_epoch:
                if first_seq != 0 and updated.producer_epoch != NO_PRODUCER_EPOCH:
                    raise OutOfOrderSequenceError(
                        f"Invalid sequence number for new epoch of producer {producer_id} at "
                        f"offset {first_offset}: {epoch} (request epoch), {first_seq} (seq. "
                        f"number), {updated.producer_epoch} (current producer epoch)")
            else:
                # ProducerAppendInfo.checkSequence: only an entry without an epoch accepts
                # any sequence; one without batches (e.g. after a marker) has last seq -1
                last = updated.last_seq
                if not (updated.producer_epoch == NO_PRODUCER_EPOCH
                        or _in_sequence(last, first_seq)):
                    raise OutOfOrderSequenceError(
                        f"Out of order sequence number for producer {producer_id} at offset "
                        f"{first_offset}: {first_seq} (incoming seq. number), {last} (current "
                        "end sequence number)")
        updated.add_batch(epoch, last_seq, last_offset, last_offset - first_offset, timestamp)
        if updated.current_txn_first_offset is not None and not is_transactional:
            if check:
                raise InvalidTxnStateError(
                    f"Expected transactional write from producer {producer_id} at offset "
                    f"{first_offset}")
        elif updated.current_txn_first_offset is None and is_transactional:
            updated.current_txn_first_offset = first_offset
        return updated

    def prepare_end_txn_marker(self, producer_id: int, epoch: int, control_type: int,
                               coordinator_epoch: int, offset: int, timestamp: int, *,
                               check: bool = True
                               ) -> tuple[ProducerEntry, CompletedTxn | None]:
        """ProducerAppendInfo.appendEndTxnMarker: the producer's entry after this marker and
        the transaction it completes (None for a marker without data), not yet applied.
        Nothing changes here, so a rejected marker can be refused before it is written
        (UnifiedLog.analyzeAndValidateProducerState runs before localLog.append); pass
        the entry to :meth:`update` once the marker is in the log.

        With ``check`` False (replaying the log, origin REPLICATION) neither epoch is
        checked.

        Raises:
            InvalidProducerEpochError: an epoch below the last one seen.
            TransactionCoordinatorFencedError: a coordinator epoch below the producer's
                last one (checkCoordinatorEpoch).
        """
        current = self.producers.get(producer_id)
        updated = current.copy() if current else ProducerEntry(producer_id)
        if check and epoch < updated.producer_epoch:
            raise InvalidProducerEpochError(
                f"Epoch of producer {producer_id} at offset {offset} is {epoch}, which is "
                f"smaller than the last seen epoch {updated.producer_epoch}")
        if check and updated.coordinator_epoch > coordinator_epoch:
            # ProducerAppendInfo.checkCoordinatorEpoch: a zombie coordinator's marker
            raise TransactionCoordinatorFencedError(
                producer_id, coordinator_epoch, updated.coordinator_epoch, offset=offset)
        completed = None
        if updated.current_txn_first_offset is not None:
            completed = CompletedTxn(producer_id, updated.current_txn_first_offset, offset,
                                     control_type == 0)
        updated.maybe_update_epoch(epoch)
        updated.coordinator_epoch = coordinator_epoch
        updated.last_timestamp = timestamp
        updated.current_txn_first_offset = None
        return updated, completed

    def prepare_control_batch(self, batch) -> tuple[ProducerEntry, CompletedTxn | None]:
        """ProducerAppendInfo.append for a control ``batch`` being appended (origin
        COORDINATOR): its end-transaction marker (the first record) through
        :meth:`prepare_end_txn_marker`, at the batch's base offset with the record's
        timestamp. An empty control batch leaves the producer's entry as it is.

        Raises:
            InvalidRecordError: the batch's first record is not an ABORT / COMMIT marker
                (``EndTransactionMarker.deserialize``).
            as :meth:`prepare_end_txn_marker`.
        """
        marker = read_end_txn_marker(batch)
        pid = batch.producer_id
        if marker is None:
            current = self.producers.get(pid)
            return (current.copy() if current else ProducerEntry(pid)), None
        return self.prepare_end_txn_marker(pid, batch.producer_epoch, marker.control_type,
                                           marker.coordinator_epoch, batch.base_offset,
                                           marker.timestamp)

    def append_end_txn_marker(self, producer_id: int, epoch: int, control_type: int,
                              coordinator_epoch: int, offset: int, timestamp: int, *,
                              check: bool = True) -> CompletedTxn | None:
        """:meth:`prepare_end_txn_marker` applied at once (the marker is already in the
        log). Returns the completed transaction (None for a marker without data).

        Raises:
            as :meth:`prepare_end_txn_marker`.
        """
        updated, completed = self.prepare_end_txn_marker(
            producer_id, epoch, control_type, coordinator_epoch, offset, timestamp,
            check=check)
        self.producers[producer_id] = updated
        return completed

    def update(self, entry: ProducerEntry) -> None:
        """ProducerStateManager.update: make ``entry`` current, track its transaction."""
        self.producers[entry.producer_id] = entry
        if entry.current_txn_first_offset is not None:
            self.ongoing.setdefault(entry.current_txn_first_offset, entry.producer_id)

    def last_stable_offset(self, completed: CompletedTxn) -> int:
        """ProducerStateManager.lastStableOffset: the first offset of another open
        transaction, else ``completed.last_offset + 1``."""
        return self._lso(completed.producer_id, completed.last_offset)

    def complete_txn(self, completed: CompletedTxn) -> None:
        self.ongoing.pop(completed.first_offset, None)

    @property
    def first_unstable_offset(self) -> int | None:
        return min(self.ongoing) if self.ongoing else None

    # -- snapshots --------------------------------------------------------------------------

    def on_log_start_offset_incremented(self, log_start_offset: int) -> None:
        """ProducerStateManager.onLogStartOffsetIncremented: the state is current at least
        from the new log start offset; the last snapshot is the newest on disk (else the
        log start offset). Open transactions stay (the engine keeps no completed,
        unreplicated ones, which the broker forgets here)."""
        if self.last_map_offset < log_start_offset:
            self.last_map_offset = log_start_offset
        snaps = list_snapshots(self.directory)
        self.last_snap_offset = snaps[-1] if snaps else log_start_offset

    def update_map_end_offset(self, offset: int) -> None:
        self.last_map_offset = offset

    def entries(self) -> list[SnapshotEntry]:
        """The snapshot entries of the current state, in producer-id order
        (``ProducerStateManager.writeSnapshot``)."""
        return [self.producers[p].to_snapshot() for p in sorted(self.producers)]

    def snapshot_bytes(self) -> bytes:
        """The snapshot of the current state (entries in producer-id order)."""
        return build_snapshot(self.entries())

    def take_snapshot(self) -> Path | None:
        """ProducerStateManager.takeSnapshot: write ``<last_map_offset>.snapshot`` unless a
        snapshot at that offset or later was already taken (``lastMapOffset > lastSnapOffset``).
        Returns the path written.

        Raises:
            IllegalStateError: the manager has no directory.
        """
        if self.last_map_offset <= self.last_snap_offset:
            return None
        self._require_directory()
        path = snapshot_path(self.directory, self.last_map_offset)
        write_atomically(path, self.snapshot_bytes(), fsync=self.fsync)
        self.last_snap_offset = self.last_map_offset
        return path
