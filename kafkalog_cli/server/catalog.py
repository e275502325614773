"""What the single node knows about its log directory: topics, partitions, topic ids,
topic configs, producer ids - over the append engine's :class:`~kafkalog_cli.storage.log.
LogManager`, which owns the ``.lock``, ``meta.properties``, the clean-shutdown marker,
``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint`` and each partition's
:class:`~kafkalog_cli.storage.log.UnifiedLog` (segments, indexes, ``leader-epoch-checkpoint``,
producer ``.snapshot`` files). The catalog owns only what a broker's ReplicaManager and
controller would: ``replication-offset-checkpoint`` (the high watermarks) and
``kafkalog-serve.json``.

* Topics are the partition directories (``<topic>-<partition>``); directories being
  deleted or moved (``.<uuid>-delete|-future|-stray``) and ``__cluster_metadata`` are
  not served.
* Topic ids come from ``partition.metadata``; a topic without one gets a new random id,
  written to its partitions' ``partition.metadata`` (as a broker writes it when it first
  learns the id), so ids are stable across restarts.
* The cluster id comes from ``meta.properties`` (LogManager writes one, with this node's
  id, into a new empty directory); without one, a random id is used for this run.
* ``kafkalog-serve.json`` (a file of the log directory; brokers ignore files there) keeps
  the next producer id block, the topic config overrides (CreateTopics, AlterConfigs,
  IncrementalAlterConfigs: what a KRaft controller keeps as ``ConfigRecord``s), the
  dynamic broker configs (AlterConfigs on the BROKER resource ``""`` or ``"<node id>"``)
  and the GROUP resource configs::

      {"version": 1, "nextProducerIdBlock": 2000, "topicConfigs": {"t": {"k": "v"}},
       "brokerConfigs": {"": {"log.retention.ms": "1000"}, "0": {}},
       "groupConfigs": {"g": {"consumer.session.timeout.ms": "50000"}}}

  It is rewritten (tmp + fsync + rename) before a config change is acknowledged, and the
  change is applied to the served logs at once (``LogManager.updateTopicConfig`` /
  ``DynamicLogConfig``: the next append, roll and flush follow it).

  Producer ids are handed out from blocks of 1000 (as ``ProducerIdManager``), and the next
  block start is persisted before the first id of a block is used, so no id is reused
  after a crash. Without the file, the first block starts after the largest producer id
  in the partitions' producer state (snapshots + the batches after them).
* Opening removes ``.kafka_cleanshutdown`` (LogManager.open); :meth:`LogDirCatalog.close`
  writes ``replication-offset-checkpoint`` then closes the LogManager: every log closed
  (final time-index entry, trimmed indexes, fsync, producer snapshot), both offset
  checkpoints, then the clean-shutdown marker, as ``LogManager.shutdown`` does - when the
  directory had the marker, was new, or was recovered just before (``recovered``: serve's
  start-up recovery, :func:`kafkalog_cli.ops.serve.recover_at_startup`).
* A directory holding only some partitions of a topic (a copy of one broker of a
  cluster): the topic has partitions 0..N-1, N one more than the highest found; the
  absent ones are served as offline (:data:`ABSENT`, one start-up line names them).
* ``read_only`` (``serve --read-only``): no LogManager, no lock taken, nothing written:
  each partition is a :class:`~.storage_adapter.ReadOnlyPartition` over the files as they
  are, topics without a ``partition.metadata`` get an id for this run only, and creating
  or deleting topics and allocating producer ids are refused (the caller answers
  :data:`~.storage_adapter.READ_ONLY_ERROR`).
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
from pathlib import Path

from ..constants import (
    CLEAN_SHUTDOWN_FILE_NAME,
    INT64_MAX,
    LOG_START_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
)
from ..errors import (
    CorruptCheckpointError,
    CorruptRecordError,
    IllegalStateError,
    KafkalogError,
    UnreadableError,
)
from ..protocol.errors import Errors
from ..storage.checkpoints import (
    MAX_CHECKPOINT_BYTES,
    format_offset_checkpoint,
    read_offset_checkpoint,
    too_large,
    write_atomically,
)
from ..storage.dir_files import random_kafka_uuid, read_meta_properties, read_partition_metadata
from ..storage.files import (
    TopicPartition,
    parse_partition_dir_name,
    partition_dir_kind,
    partition_dirs_of,
    validate_topic_name,
)
from ..storage.location import read_bytes_if_exists
from ..storage.lock import is_locked
from ..storage.log_manager import LogManager, rename_deleted
from . import configs
from .storage_adapter import READ_ONLY_MESSAGE, ReadOnlyPartition, ServedPartition

log = logging.getLogger("kafkalog.serve")

STATE_FILE = "kafkalog-serve.json"
#: threads opening the partitions at start-up (LogManager.loadLogs)
LOAD_THREADS = 8
PRODUCER_ID_BLOCK = 1000
#: why an absent partition (below the highest of its topic found here) is offline
ABSENT = "absent from the log directory"
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
METADATA_TOPIC = "__cluster_metadata"


def is_internal(topic: str) -> bool:
    """Topic.isInternal."""
    return topic in INTERNAL_TOPICS


class Topic:
    """A served topic: its partitions, and those that are offline (partition -> why: a
    file the broker parses as it loads the log does not parse, a segment file to append
    to is a symbolic link, or it is :data:`ABSENT`: another broker's). An offline partition is listed in Metadata without a
    leader (``LEADER_NOT_AVAILABLE``, this node in ``offlineReplicas``) and answers
    ``KAFKA_STORAGE_ERROR`` to Produce, Fetch and ListOffsets, as
    ``ReplicaManager.getPartitionOrError`` answers for ``HostedPartition.Offline`` (an
    absent one ``NOT_LEADER_OR_FOLLOWER``, as for ``HostedPartition.None`` of a partition
    the metadata knows)."""

    __slots__ = ("name", "topic_id", "partitions", "overrides", "offline")

    def __init__(self, name: str, topic_id: str, overrides: dict[str, str] | None = None):
        self.name = name
        self.topic_id = topic_id
        self.partitions: dict[int, ServedPartition] = {}
        self.overrides = dict(overrides or {})
        self.offline: dict[int, str] = {}


def partition_count(topic: Topic) -> int:
    """The topic's partition count: one more than its highest partition, served or offline
    (a log directory holding only some partitions of a topic still numbers them from 0)."""
    return max(topic.partitions.keys() | topic.offline.keys(), default=-1) + 1


class LogDirCatalog:
    """The served state of one log directory (call :meth:`open`, then :meth:`close`).

    Raises (from :meth:`open`):
        LogDirLockedError: a broker or another kafkalog holds the directory.
        CorruptRecordError: a partition's active segment ends in invalid bytes (run
            ``kafkalog recover`` first).
        CorruptCheckpointError: meta.properties does not parse (a broker does not start
            on it). A partition's own leader-epoch-checkpoint or partition.metadata that
            does not parse takes only that partition offline (:class:`Topic`).
    """

    def __init__(self, log_dir, *, node_id: int = 0, server_configs: dict | None = None,
                 fsync: bool = True, read_only: bool = False, recovered: bool = False,
                 lock=None):
        self.log_dir = Path(log_dir)
        #: the log recovery ran just before opening (serve's start-up recovery)
        self.recovered = recovered
        #: the directory's lock when the caller holds it already (LogManager takes it)
        self._lock = lock
        self.read_only = read_only
        self.node_id = node_id
        #: the broker-level config layers; ``server_configs`` (``--config``) is the static
        #: one (topic config names stand for their broker synonym)
        self.broker_configs = configs.BrokerConfigLayers(
            static=configs.static_broker_configs(dict(server_configs or {})))
        self.broker_configs.static.update({"node.id": str(node_id), "broker.id": str(node_id),
                                           "log.dirs": str(self.log_dir.absolute())})
        self.fsync = fsync
        self.topics: dict[str, Topic] = {}
        self.by_id: dict[str, Topic] = {}
        self.cluster_id = ""
        self.manager: LogManager | None = None
        self._next_pid = 0
        self._block_end = 0
        self._topic_overrides: dict[str, dict[str, str]] = {}
        #: GROUP resource configs (KIP-848 groups' settings; stored and described only)
        self.group_configs: dict[str, dict[str, str]] = {}
        self._other_brokers: dict[str, dict[str, str]] = {}
        self._deleted: set[TopicPartition] = set()
        #: names of topics being created (partitions made one at a time): not served yet,
        #: but taken
        self.creating: set[str] = set()
        self._files = threading.Lock()  # checkpoint files: worker thread vs close

    # -- opening -------------------------------------------------------------------------

    def open(self) -> LogDirCatalog:
        if self.read_only:
            return self._open_read_only()
        self.manager = LogManager.open(self.log_dir, node_id=self.node_id, fsync=self.fsync,
                                       recovered=self.recovered, lock=self._lock)
        # appends leave the index entries in the files at once, as the broker's mmap does
        self.manager.index_write_through = True
        try:
            # a broker does not start on a log dir whose meta.properties it cannot read
            meta = read_meta_properties(self.log_dir, validate=True) or {}
            self.cluster_id = meta.get("cluster.id") or random_kafka_uuid()
            state = self._load_configs()
            topics = []
            jobs = []
            for name, parts in self._served_partition_dirs().items():
                topic = Topic(name, self._topic_id(parts), self._topic_overrides.get(name))
                cfg = configs.log_config(self.effective_configs(topic))
                topics.append(topic)
                jobs += [(topic, p, cfg) for p, _ in parts]
            for (topic, p, _), (lg, error) in zip(jobs, self._open_logs(jobs), strict=True):
                if error is None:
                    topic.partitions[p] = ServedPartition(self.manager.add_log(lg))
                else:
                    # the broker takes the log dir offline; this node serves the other
                    # partitions and answers for this one as for an offline one (a file
                    # that does not parse, is too large to be one, is a FIFO or a device,
                    # NotRegularFileError, or a link it would write to)
                    topic.offline[p] = str(error)
                    log.error("partition %s-%d is offline: %s", topic.name, p, error)
            for topic in topics:
                self._add(topic)
            self._note_absent()
            self._sort_moved_dirs()
            self._next_pid = self._block_end = int(state.get("nextProducerIdBlock", 0)) or \
                self._producer_id_floor()
        except BaseException:
            self.manager.abandon()
            raise
        return self

    def _sort_moved_dirs(self) -> None:
        """LogManager.loadLog's other directories: a ``-delete`` one (a partition deleted
        before the stop) is removed, as the broker's delete thread removes it
        (``addLogToBeDeleted``; after ``file.delete.delay.ms`` there, at start here); a
        ``-stray`` or ``-future`` one stays on disk unserved (the broker keeps a stray
        log aside, and a future replica is only served once it replaces the current
        one). One log line each."""
        for d in partition_dirs_of(self.log_dir):
            kind = partition_dir_kind(d.name)
            if kind == "delete" and not d.is_symlink():
                log.info("removing %s: a partition deleted before the last stop", d)
                shutil.rmtree(d, ignore_errors=True)
            elif kind is not None:
                log.warning("not serving %s: a %s replica", d, kind)

    def _open_logs(self, jobs: list) -> list:
        """LogManager.loadLogs: open each ``(topic, partition, config)`` of ``jobs`` on up
        to :data:`LOAD_THREADS` threads (``num.recovery.threads.per.data.dir``: their
        reads overlap), returning ``(log, None)`` or ``(None, error)`` for each, in
        order; a partition whose files do not load is an error, not a failure of the
        others.

        Raises:
            CorruptRecordError: an active segment ends in invalid bytes (``open``'s
                refusal); else the first error that is not a KafkalogError (after
                abandoning every log opened).
        """
        def one(job):
            topic, p, cfg = job
            try:
                return self.manager.open_log(topic.name, p, cfg, topic_id=topic.topic_id), None
            except CorruptRecordError:  # a torn active segment: recovery first, no serving
                raise
            except KafkalogError as e:
                return None, e

        if len(jobs) <= 1:
            return [one(j) for j in jobs]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(LOAD_THREADS, len(jobs)),
                                thread_name_prefix="kafkalog-load") as pool:
            futures = [pool.submit(one, j) for j in jobs]
        failed = next((f.exception() for f in futures if f.exception() is not None), None)
        if failed is not None:
            for f in futures:
                if f.exception() is None and f.result()[0] is not None:
                    f.result()[0].abandon()
            raise failed
        return [f.result() for f in futures]

    def _served_partition_dirs(self) -> dict[str, list[tuple[int, Path]]]:
        """``{topic: [(partition, directory)]}`` of the partitions this node serves: every
        partition directory of the log dir but those being moved or deleted
        (``-delete``, ``-future``, ``-stray``) and the metadata topic's."""
        by_topic: dict[str, list[tuple[int, Path]]] = {}
        for d in partition_dirs_of(self.log_dir):
            if partition_dir_kind(d.name) is not None:
                continue
            tp = parse_partition_dir_name(d.name)
            if tp.topic == METADATA_TOPIC:
                continue
            by_topic.setdefault(tp.topic, []).append((tp.partition, d))
        return by_topic

    def _open_read_only(self) -> LogDirCatalog:
        """Open every partition read-only: nothing is created, locked or written (a broker
        holding the lock is only warned about: what it writes may show up half-done)."""
        locked = is_locked(self.log_dir)
        if locked:
            log.warning("%s is locked by a running broker or kafkalog: serving it read-only "
                        "may show batches being written", self.log_dir)
        meta = read_meta_properties(self.log_dir) or {}
        self.cluster_id = meta.get("cluster.id") or random_kafka_uuid()
        self._load_configs()
        try:
            starts = read_offset_checkpoint(self.log_dir / LOG_START_OFFSET_CHECKPOINT) or {}
        except (CorruptCheckpointError, UnreadableError) as e:  # loadLogs: read as empty
            log.warning("%s; log start offsets are the first segments' base offsets", e)
            starts = {}
        for name, parts in self._served_partition_dirs().items():
            topic = Topic(name, self._topic_id(parts), self._topic_overrides.get(name))
            for p, d in parts:
                try:
                    topic.partitions[p] = ReadOnlyPartition(d, starts.get(TopicPartition(name,
                                                                                         p)))
                except KafkalogError as e:
                    # as when serving it writable: this partition is offline, not the node
                    topic.offline[p] = str(e)
                    log.error("partition %s-%d is offline: %s", name, p, e)
            self._add(topic)
        self._note_absent()
        if not locked and self.topics and not (self.log_dir /
                                               CLEAN_SHUTDOWN_FILE_NAME).exists():
            log.warning("%s has no %s: a broker would run the log recovery before serving "
                        "it; --read-only serves the files as they are (a batch a crash left "
                        "half-written may be served: run kafkalog recover first)",
                        self.log_dir, CLEAN_SHUTDOWN_FILE_NAME)
        return self

    def _note_absent(self) -> None:
        """Each topic's partitions below its highest that are not here: offline,
        :data:`ABSENT` (one start-up line names them)."""
        lines = []
        for name, topic in sorted(self.topics.items()):
            absent = [p for p in range(partition_count(topic))
                      if p not in topic.partitions and p not in topic.offline]
            for p in absent:
                topic.offline[p] = ABSENT
            if absent:
                lines.append(f"{name} {_ranges(absent)}")
        if lines:
            log.warning("partitions %s (served as offline partitions): %s", ABSENT,
                        "; ".join(lines))

    def absent(self, topic: str) -> list[int]:
        """The :data:`ABSENT` partitions of ``topic``."""
        t = self.topics.get(topic)
        return [] if t is None else sorted(p for p, why in t.offline.items() if why == ABSENT)

    def _add(self, topic: Topic) -> None:
        self.topics[topic.name] = topic
        self.by_id[topic.topic_id] = topic

    @staticmethod
    def _topic_id(parts: list[tuple[int, Path]]) -> str:
        """The id in the first partition.metadata of the partitions that has one (a new
        one when none has it; the engine writes it into those that lack it, and refuses a
        partition whose id differs)."""
        for _, d in parts:
            try:
                m = read_partition_metadata(d)
            except KafkalogError:  # that partition goes offline when it is opened
                continue
            if m and m.get("topic_id"):
                return m["topic_id"]
        return random_kafka_uuid()

    def _producer_id_floor(self) -> int:
        top = max((pid for t in self.topics.values() for part in t.partitions.values()
                   for pid in part.log.producer_state.producers), default=-1)
        return (top // PRODUCER_ID_BLOCK + 1) * PRODUCER_ID_BLOCK if top >= 0 else 0

    # -- state file ----------------------------------------------------------------------

    def _read_state(self) -> dict:
        return read_serve_state(self.log_dir)

    def _load_configs(self) -> dict:
        """The state file's config layers (topic overrides, dynamic broker configs of this
        node and the cluster, group configs); returns the whole state."""
        state = self._read_state()
        self._topic_overrides = {t: dict(c) for t, c in state.get("topicConfigs", {}).items()}
        self.group_configs = {g: dict(c) for g, c in state.get("groupConfigs", {}).items()}
        dynamic = state.get("brokerConfigs", {})
        self.broker_configs.dynamic_default = dict(dynamic.get("", {}))
        self.broker_configs.dynamic_broker = dict(dynamic.get(str(self.node_id), {}))
        self._other_brokers = {k: v for k, v in dynamic.items()
                               if k not in ("", str(self.node_id))}
        return state

    def _write_state(self) -> None:
        brokers = dict(self._other_brokers)
        if self.broker_configs.dynamic_default:
            brokers[""] = self.broker_configs.dynamic_default
        if self.broker_configs.dynamic_broker:
            brokers[str(self.node_id)] = self.broker_configs.dynamic_broker
        data = {"version": 1, "nextProducerIdBlock": self._block_end,
                "topicConfigs": self._topic_overrides, "brokerConfigs": brokers,
                "groupConfigs": self.group_configs}
        write_atomically(self.log_dir / STATE_FILE, json.dumps(data, indent=1, sort_keys=True),
                         fsync=self.fsync)

    # -- producer ids ----------------------------------------------------------------------

    def allocate_producer_id(self) -> int:
        """The next producer id (blocks persisted in kafkalog-serve.json).

        Raises:
            IllegalStateError: the catalog is read-only.
        """
        self._check_writable()
        if self._next_pid >= self._block_end:
            self._block_end = self._next_pid + PRODUCER_ID_BLOCK
            self._write_state()
        pid = self._next_pid
        self._next_pid += 1
        return pid

    # -- topics ----------------------------------------------------------------------------

    def effective_configs(self, topic: Topic) -> dict[str, str]:
        """Every topic config of ``topic`` (see :mod:`.configs` for the layers)."""
        return configs.effective(self.broker_configs.topic_defaults(), topic.overrides)

    def set_topic_configs(self, topic: Topic, overrides: dict[str, str]) -> None:
        """Replace ``topic``'s overrides (validated by the caller): persisted, then applied
        to its logs (``LogManager.updateTopicConfig``).

        Raises:
            IllegalStateError: the catalog is read-only.
        """
        self._check_writable()
        topic.overrides = dict(overrides)
        if overrides:
            self._topic_overrides[topic.name] = dict(overrides)
        else:
            self._topic_overrides.pop(topic.name, None)
        self._write_state()
        self._apply(topic)

    def set_group_configs(self, group_id: str, values: dict[str, str]) -> None:
        """Replace a group's GROUP resource configs (validated by the caller): persisted.

        Raises:
            IllegalStateError: the catalog is read-only.
        """
        self._check_writable()
        if values:
            self.group_configs[group_id] = dict(values)
        else:
            self.group_configs.pop(group_id, None)
        self._write_state()

    def set_broker_configs(self, per_broker: bool, values: dict[str, str]) -> None:
        """Replace the dynamic broker configs of this node (``per_broker``) or the
        cluster-wide ones: persisted, then every topic's logs follow the new defaults
        (``DynamicLogConfig.reconfigure``).

        Raises:
            IllegalStateError: the catalog is read-only.
        """
        self._check_writable()
        if per_broker:
            self.broker_configs.dynamic_broker = dict(values)
        else:
            self.broker_configs.dynamic_default = dict(values)
        self._write_state()
        for topic in self.topics.values():
            self._apply(topic)

    def _apply(self, topic: Topic) -> None:
        cfg = configs.log_config(self.effective_configs(topic))
        for part in topic.partitions.values():
            part.log.update_config(cfg)

    def partition(self, topic: str, partition: int) -> ServedPartition | None:
        """The served partition (None: unknown, or offline)."""
        t = self.topics.get(topic)
        return None if t is None else t.partitions.get(partition)

    def exists(self, topic: str, partition: int) -> bool:
        """The partition is known (served or offline), as the metadata cache knows it."""
        t = self.topics.get(topic)
        return t is not None and (partition in t.partitions or partition in t.offline)

    def topic_id_of(self, topic: str) -> str | None:
        """The topic's id (Kafka's base64 Uuid text), None when the topic is unknown."""
        t = self.topics.get(topic)
        return None if t is None else t.topic_id

    def partition_error(self, topic: str, partition: int) -> Errors:
        """The error for a request to a partition :meth:`partition` does not return:
        ``KAFKA_STORAGE_ERROR`` when it is offline (``HostedPartition.Offline``), else
        ``UNKNOWN_TOPIC_OR_PARTITION``."""
        t = self.topics.get(topic)
        if t is not None and partition in t.offline:
            if t.offline[partition] == ABSENT:
                return Errors.NOT_LEADER_OR_FOLLOWER
            return Errors.KAFKA_STORAGE_ERROR
        return Errors.UNKNOWN_TOPIC_OR_PARTITION

    def create_topic(self, name: str, num_partitions: int,
                     overrides: dict[str, str] | None = None) -> Topic:
        """Create the partition directories (partition.metadata, an empty first segment)
        and serve the topic: :meth:`new_topic`, :meth:`create_partition` for each,
        :meth:`add_topic` (a server creating many partitions calls them itself, pausing
        between partitions).

        Raises:
            InvalidArgumentError: an illegal name (callers check existence and counts).
            IllegalStateError: the catalog is read-only.
        """
        topic = self.new_topic(name, overrides)
        for p in range(num_partitions):
            self.create_partition(topic, p)
        self.add_topic(topic)
        return topic

    def new_topic(self, name: str, overrides: dict[str, str] | None = None) -> Topic:
        """A new topic (a random id), not served until :meth:`add_topic`; its name is in
        :attr:`creating` meanwhile (the caller removes it).

        Raises:
            InvalidArgumentError: an illegal name.
            IllegalStateError: the catalog is read-only.
        """
        self._check_writable()
        validate_topic_name(name)
        return Topic(name, random_kafka_uuid(), overrides)

    def create_partition(self, topic: Topic, p: int) -> None:
        """Create partition ``p`` of ``topic`` and serve it: :meth:`open_partition` then
        :meth:`serve_partition`.

        Raises:
            IllegalStateError: the catalog is read-only.
        """
        self.serve_partition(topic, p, self.open_partition(topic, p))

    def open_partition(self, topic: Topic, p: int):
        """Create (or open) partition ``p`` of ``topic`` through the engine with the
        topic's id and config (partition.metadata, an empty first segment: seconds of
        fsyncs for many partitions), as a broker creates the log of a partition it leads.
        Changes nothing of the catalog's, so it may run on another thread; returns the log
        for :meth:`serve_partition`.

        Raises:
            IllegalStateError: the catalog is read-only.
        """
        self._check_writable()
        cfg = configs.log_config(self.effective_configs(topic))
        return self.manager.open_log(topic.name, p, cfg, topic_id=topic.topic_id)

    def serve_partition(self, topic: Topic, p: int, log) -> None:
        """Serve partition ``p`` of ``topic`` from ``log`` (:meth:`open_partition`); a
        served topic serves it at once (an absent one no longer offline)."""
        topic.partitions[p] = ServedPartition(self.manager.add_log(log))
        topic.offline.pop(p, None)

    def add_topic(self, topic: Topic) -> None:
        """Serve ``topic`` (made by :meth:`new_topic`), its overrides persisted."""
        if topic.overrides:
            self._topic_overrides[topic.name] = dict(topic.overrides)
            self._write_state()
        self._add(topic)

    def delete_topic(self, topic: Topic) -> None:
        """Stop serving the topic (:meth:`forget_topic`), then rename each partition
        directory ``<tp>.<uuid>-delete`` (as the broker marks it) and remove it
        (:meth:`delete_partition`, :func:`remove_partition_dir`).

        Raises:
            IllegalStateError: the catalog is read-only.
        """
        self.forget_topic(topic)
        for p in list(topic.partitions):
            remove_partition_dir(self.delete_partition(topic, p), self.fsync)

    def forget_topic(self, topic: Topic) -> None:
        """Stop serving ``topic`` (its overrides dropped); its partitions stay until
        :meth:`delete_partition`.

        Raises:
            IllegalStateError: the catalog is read-only.
        """
        self._check_writable()
        self.topics.pop(topic.name, None)
        self.by_id.pop(topic.topic_id, None)
        if self._topic_overrides.pop(topic.name, None) is not None:
            self._write_state()

    def delete_partition(self, topic: Topic, p: int) -> Path:
        """Release partition ``p`` of a forgotten topic (LogManager.detach_log: it leaves
        the checkpoints written next); returns its directory, for
        :func:`remove_partition_dir` (which may run on another thread)."""
        self._deleted.add(TopicPartition(topic.name, p))
        return self.manager.detach_log(topic.name, p)

    def _check_writable(self) -> None:
        if self.read_only:
            raise IllegalStateError(READ_ONLY_MESSAGE, file=self.log_dir)

    # -- checkpoints and closing ---------------------------------------------------------------

    def _high_watermarks(self) -> dict[TopicPartition, int]:
        return {TopicPartition(t.name, p): part.log_end_offset
                for t in self.topics.values() for p, part in t.partitions.items()}

    def _write_high_watermarks(self, hw: dict[TopicPartition, int],
                               deleted: set[TopicPartition]) -> None:
        """replication-offset-checkpoint: the high watermark of every partition (= its log
        end offset on a single node), as ReplicaManager.checkpointHighWatermarks."""
        path = self.log_dir / REPLICATION_OFFSET_CHECKPOINT
        try:
            current = read_offset_checkpoint(path) or {}
        except KafkalogError as e:
            log.warning("%s; rewritten with the served partitions' high watermarks", e)
            current = {}
        merged = {tp: o for tp, o in current.items() if tp not in deleted}
        merged.update(hw)
        write_atomically(path, format_offset_checkpoint(merged), fsync=self.fsync)

    def prepare_checkpoint(self):
        """On the event-loop thread: the time-based flush (flush.ms, as
        LogManager.flushDirtyLogs), then the offsets as they are now. Returns a function that
        writes replication-offset-checkpoint, recovery-point-offset-checkpoint and
        log-start-offset-checkpoint; it touches no log, so the server runs it on a worker
        thread (the broker's scheduler threads do the same, off the request path). Read-only:
        a function that writes nothing."""
        if self.read_only:
            return lambda: None
        now = self.manager.clock.milliseconds()
        for lg in self.manager.logs.values():
            if lg.unflushed_messages and now - lg.last_flush_ms >= lg.config.flush_ms:
                lg.flush()
        hw, deleted = self._high_watermarks(), set(self._deleted)
        write_offsets = self.manager.prepare_checkpoint()

        def write() -> None:
            with self._files:
                self._write_high_watermarks(hw, deleted)
                write_offsets()

        return write

    def checkpoint(self) -> None:
        self.prepare_checkpoint()()

    def close(self, *, clean: bool = True) -> None:
        """``clean``: high watermarks, then LogManager.close (logs closed, checkpoints,
        clean-shutdown marker, lock released). Otherwise release the files and the lock
        and write nothing (the next start recovers). Read-only: release the files."""
        if self.read_only:
            for t in self.topics.values():
                for part in t.partitions.values():
                    part.close()
            return
        if self.manager is None or self.manager.closed:
            return
        if not clean:
            self.manager.abandon()
            return
        with self._files:  # after a checkpoint still being written by a worker thread
            try:
                self._write_high_watermarks(self._high_watermarks(), self._deleted)
            finally:
                self.manager.close()


def read_serve_state(log_dir) -> dict:
    """``kafkalog-serve.json``, keeping what has the documented shape (a
    ``nextProducerIdBlock`` that is a producer id; ``topicConfigs``, ``groupConfigs``
    and ``brokerConfigs`` mapping names to ``{config: value}`` strings); the rest is
    ignored with a warning (a missing file: ``{}``)."""
    path = Path(log_dir) / STATE_FILE
    try:
        raw = read_bytes_if_exists(path, limit=MAX_CHECKPOINT_BYTES,
                                   too_large=lambda n: too_large(path, n,
                                                                 MAX_CHECKPOINT_BYTES,
                                                                 "state file"))
        if raw is None:
            return {}
        state = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError, CorruptCheckpointError):  # UnicodeDecodeError too
        log.warning("%s is not JSON (or too large); starting producer ids after the "
                    "snapshots", path)
        return {}
    if not isinstance(state, dict):
        log.warning("%s is not a JSON object; ignored", path)
        return {}
    out = {}
    block = state.get("nextProducerIdBlock")
    if isinstance(block, int) and not isinstance(block, bool) and \
            0 <= block <= INT64_MAX - PRODUCER_ID_BLOCK:
        out["nextProducerIdBlock"] = block
    elif block is not None:
        log.warning("%s: nextProducerIdBlock %r is not a producer id; ignored", path, block)
    for key, what in (("topicConfigs", "topic"), ("groupConfigs", "group"),
                      ("brokerConfigs", "broker")):
        configs_ = state.get(key, {})
        if isinstance(configs_, dict) and all(
                isinstance(t, str) and isinstance(c, dict)
                and all(isinstance(k, str) and isinstance(v, str) for k, v in c.items())
                for t, c in configs_.items()):
            out[key] = configs_
        else:
            log.warning("%s: %s is not {%s: {config: value}}; ignored", path, key, what)
    return out


def remove_partition_dir(d: Path, fsync: bool = True) -> None:
    """Rename a partition directory released by :meth:`LogDirCatalog.delete_partition`
    ``<tp>.<uuid>-delete`` (as the broker marks it; durable) and remove it (what
    LogManager's delete thread does; a ``-delete`` directory left by a stop is not
    served). Touches nothing of the catalog's: it may run on another thread."""
    target = rename_deleted(d, fsync=fsync)
    if target is not None:
        shutil.rmtree(target, ignore_errors=True)


def _ranges(numbers: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2, 5"`` (sorted input)."""
    out = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out)
