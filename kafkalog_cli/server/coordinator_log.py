"""The coordinators' internal topics, ``__consumer_offsets`` and ``__transaction_state``:
which partition a group or transactional id lives in, creating the topic, appending the
coordinator's records and reading them back at start-up (the parts of Kafka's
``CoordinatorRuntime`` / ``CoordinatorPartitionWriter``, ``GroupMetadataManager`` and
``TransactionStateManager`` that touch the log).

* Partitioning: ``Utils.abs(key.hashCode()) % partitions`` with Java's ``String.hashCode``
  (over UTF-16 code units, 32-bit wrap-around) and ``Utils.abs`` (``Integer.MIN_VALUE``
  -> 0), as ``GroupCoordinatorService.partitionFor`` and
  ``TransactionStateManager.partitionFor``. The partition count is that of the topic on
  disk when it exists, else ``offsets.topic.num.partitions`` /
  ``transaction.state.log.num.partitions`` (50 each).
* The topic is created on the first write (a broker creates it when a client first looks
  for a coordinator), with ``cleanup.policy=compact`` and ``segment.bytes`` from
  ``offsets.topic.segment.bytes`` / ``transaction.state.log.segment.bytes`` (100 MiB), as
  ``AutoTopicCreationManager`` creates it.
* Records are written one batch per call, uncompressed, CreateTime ``now``, appended with
  origin COORDINATOR through the append engine (offsets, indexes, producer state, roll),
  as ``CoordinatorPartitionWriter.append`` does; a transactional batch (TxnOffsetCommit)
  carries the producer id and epoch.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

from ..errors import AppendError
from ..format.builder import build_batch
from ..format.record import Record
from ..javaorder import java_string_hash
from ..storage.log import UnifiedLog
from .catalog import ABSENT, LogDirCatalog
from .storage_adapter import append_error

log = logging.getLogger("kafkalog.serve")

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_TOPIC = "__transaction_state"
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1


def partition_for(key: str, partitions: int) -> int:
    """``Utils.abs(key.hashCode()) % partitions`` (``Utils.abs(Integer.MIN_VALUE)`` is 0)."""
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


class CoordinatorTopic:
    """One internal topic a coordinator writes (see the module docstring).

    ``partitions_config`` / ``segment_bytes_config``: the broker config names of its
    partition count and segment size. ``on_append``: called after each append (the server
    wakes the fetches waiting for data). ``base_sequence``: what its batches carry — 0
    from the group coordinator's runtime (CoordinatorRuntime builds every batch with
    baseSequence 0, transactional or not), -1 (NO_SEQUENCE) from the transaction
    coordinator's TransactionStateManager (``MemoryRecords.withRecords``).
    """

    def __init__(self, catalog: LogDirCatalog, name: str, partitions_config: str,
                 segment_bytes_config: str, on_append=None, *, base_sequence: int = -1):
        self.catalog = catalog
        self.base_sequence = base_sequence
        self.name = name
        self.partitions_config = partitions_config
        self.segment_bytes_config = segment_bytes_config
        self.on_append = on_append

    @property
    def num_partitions(self) -> int:
        """The topic's partition count on disk, else the configured one."""
        t = self.catalog.topics.get(self.name)
        if t is not None and (t.partitions or t.offline):
            return max(t.partitions.keys() | t.offline.keys()) + 1
        return self.catalog.broker_configs.int_value(self.partitions_config)

    def partition_for(self, key: str) -> int:
        return partition_for(key, self.num_partitions)

    def exists(self) -> bool:
        return self.name in self.catalog.topics

    def ensure(self) -> None:
        """Create the topic unless it exists (AutoTopicCreationManager), at once (the
        server creates it off the event loop before the APIs that write it)."""
        if self.exists():
            return
        self.catalog.create_topic(self.name, self.num_partitions, self.overrides())
        log.info("created %s with %d partitions", self.name, self.num_partitions)

    def overrides(self) -> dict[str, str]:
        """The topic's configs when created: compacted, segment.bytes from the broker."""
        return {"cleanup.policy": "compact",
                "segment.bytes": self.catalog.broker_configs.value(self.segment_bytes_config)}

    def append(self, key: str, records: list[tuple[bytes, bytes | None]], *,
               producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH,
               transactional: bool = False) -> int:
        """Append ``records`` (``(key bytes, value bytes or None for a tombstone)``) as one
        batch to the partition of ``key`` (a group id or transactional id), creating the
        topic first when needed. Returns the batch's last offset.

        Raises:
            AppendError: the partition is offline, or the engine refused or failed the
                write (its Kafka error: KAFKA_STORAGE_ERROR for a disk error,
                INVALID_PRODUCER_EPOCH for a fenced transactional write, ...).
        """
        self.ensure()
        p = self.partition_for(key)
        part = self.catalog.partition(self.name, p)
        if part is None:
            raise AppendError(self.catalog.partition_error(self.name, p),
                              f"{self.name}-{p} is not available")
        now = int(time.time() * 1000)
        batch = build_batch([(now, k, v, ()) for k, v in records],
                            is_transactional=transactional, producer_id=producer_id,
                            producer_epoch=producer_epoch, base_sequence=self.base_sequence)
        try:
            info = part.log.append_as_leader(batch, leader_epoch=part.leader_epoch,
                                             origin="coordinator")
        except Exception as e:
            raise append_error(e) from e
        if self.on_append is not None:
            self.on_append()
        return info.last_offset

    def append_marker(self, key: str, *, producer_id: int, producer_epoch: int,
                      commit: bool) -> None:
        """A COMMIT / ABORT marker for ``producer_id`` in the partition of ``key`` (the
        marker a transaction's TxnOffsetCommit records in this topic get).

        Raises:
            AppendError: as :meth:`append`.
        """
        part = self.catalog.partition(self.name, self.partition_for(key))
        if part is None:
            return
        write_marker(part.log, producer_id=producer_id, producer_epoch=producer_epoch,
                     commit=commit, leader_epoch=part.leader_epoch)
        if self.on_append is not None:
            self.on_append()

    def scan(self) -> Iterator[tuple[int, object, list[Record]]]:
        """Every batch of every partition, in offset order per partition:
        ``(partition, batch, its records)`` (a control batch's records too).

        Raises:
            KafkalogError: a batch whose records do not decode (naming the file).
        """
        t = self.catalog.topics.get(self.name)
        if t is None:
            return
        for p in sorted(t.partitions):
            lg = t.partitions[p].log
            for _seg, batch in lg.batches_from(lg.log_start_offset):
                yield p, batch, batch.records()

    def offline(self) -> dict[int, str]:
        """Partitions of the topic that did not open (partition -> why); not the absent
        ones (:meth:`create_absent`)."""
        t = self.catalog.topics.get(self.name)
        return {p: why for p, why in t.offline.items() if why != ABSENT} if t else {}

    def create_absent(self) -> list[int]:
        """Create the partitions absent from the log directory (a copy of one broker of
        a cluster holds only some): the coordinator of a key whose partition is absent
        then starts it empty, as a broker made its leader creates the log. Returns them.

        Raises:
            IllegalStateError: the catalog is read-only.
        """
        absent = self.catalog.absent(self.name)
        for p in absent:
            self.catalog.create_partition(self.catalog.topics[self.name], p)
        return absent

    def unavailable(self, key: str) -> str | None:
        """Why the coordinator of ``key`` is not available here (its partition is offline
        or absent: a read-only node cannot create it), else None."""
        t = self.catalog.topics.get(self.name)
        if t is None:
            return None
        p = self.partition_for(key)
        why = t.offline.get(p)
        if why is None:
            return None
        if why == ABSENT and self.catalog.read_only:
            return f"{self.name}-{p} is {ABSENT} and --read-only does not create it"
        return f"{self.name}-{p} is offline: {why}"


def write_marker(lg: UnifiedLog, *, producer_id: int, producer_epoch: int, commit: bool,
                 coordinator_epoch: int = 0, leader_epoch: int = 0) -> int:
    """Append a COMMIT / ABORT control batch to ``lg`` (WriteTxnMarkers ->
    ``UnifiedLog.appendAsLeader`` with origin COORDINATOR). Returns its offset.

    Raises:
        AppendError: the engine refused it (INVALID_PRODUCER_EPOCH,
            TRANSACTION_COORDINATOR_FENCED) or failed (KAFKA_STORAGE_ERROR).
    """
    try:
        info = lg.append_end_txn_marker(producer_id=producer_id, producer_epoch=producer_epoch,
                                        commit=commit, coordinator_epoch=coordinator_epoch,
                                        leader_epoch=leader_epoch)
    except Exception as e:
        raise append_error(e) from e
    return info.last_offset
