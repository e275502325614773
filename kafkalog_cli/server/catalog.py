"""What the single node knows about its log directory: topics, partitions, topic ids,
topic configs, producer ids; and the files a clean shutdown leaves.

* Topics are the partition directories (``<topic>-<partition>``); directories being
  deleted or moved (``.<uuid>-delete|-future|-stray``) and ``__cluster_metadata`` are
  not served.
* Topic ids come from ``partition.metadata``; a topic without one gets a new random id,
  written to its partitions' ``partition.metadata`` (as a broker writes it when it first
  learns the id), so ids are stable across restarts.
* The cluster id comes from ``meta.properties``; without one, a random id is used for this
  run and nothing is written (a broker needs a formatted directory anyway).
* ``kafkalog-serve.json`` (a file of the log directory; brokers ignore files there) keeps
  the next producer id block and the topic config overrides given to CreateTopics::

      {"version": 1, "nextProducerIdBlock": 2000, "topicConfigs": {"t": {"k": "v"}}}

  Producer ids are handed out from blocks of 1000 (as ``ProducerIdManager``), and the next
  block start is persisted before the first id of a block is used, so no id is reused
  after a crash. Without the file, the first block starts after the largest producer id
  found in the partitions' ``.snapshot`` files.
* Startup deletes ``.kafka_cleanshutdown``; :meth:`LogDirCatalog.close` seals the active
  segments, writes ``recovery-point-offset-checkpoint``, ``replication-offset-checkpoint``
  and ``log-start-offset-checkpoint``, then the clean-shutdown marker, as
  ``LogManager.shutdown`` does.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import uuid
from pathlib import Path

from ..constants import (
    CLEAN_SHUTDOWN_FILE_NAME,
    LOG_START_OFFSET_CHECKPOINT,
    PRODUCER_SNAPSHOT_FILE_SUFFIX,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
)
from ..ops.paths import partition_dirs
from ..storage.checkpoints import format_offset_checkpoint, read_offset_checkpoint, write_atomically
from ..storage.dir_files import (
    random_kafka_uuid,
    read_meta_properties,
    read_partition_metadata,
    write_clean_shutdown,
    write_partition_metadata,
)
from ..storage.files import TopicPartition, parse_partition_dir_name, validate_topic_name
from . import configs
from .storage_adapter import StandInPartitionLog

log = logging.getLogger("kafkalog.serve")

STATE_FILE = "kafkalog-serve.json"
PRODUCER_ID_BLOCK = 1000
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
METADATA_TOPIC = "__cluster_metadata"
_MOVED = re.compile(r"\.[0-9a-f]{32}-(delete|future|stray)$")


def is_internal(topic: str) -> bool:
    """Topic.isInternal."""
    return topic in INTERNAL_TOPICS


class Topic:
    __slots__ = ("name", "topic_id", "partitions", "overrides")

    def __init__(self, name: str, topic_id: str, overrides: dict[str, str] | None = None):
        self.name = name
        self.topic_id = topic_id
        self.partitions: dict[int, StandInPartitionLog] = {}
        self.overrides = dict(overrides or {})


class LogDirCatalog:
    """The served state of one log directory (call :meth:`open`, then :meth:`close`)."""

    def __init__(self, log_dir, *, node_id: int = 0, server_configs: dict | None = None):
        self.log_dir = Path(log_dir)
        self.node_id = node_id
        self.server_configs = dict(server_configs or {})
        self.topics: dict[str, Topic] = {}
        self.by_id: dict[str, Topic] = {}
        self.cluster_id = ""
        self._next_pid = 0
        self._block_end = 0
        self._topic_overrides: dict[str, dict[str, str]] = {}

    # -- opening -------------------------------------------------------------------------

    def open(self) -> LogDirCatalog:
        meta = read_meta_properties(self.log_dir) or {}
        self.cluster_id = meta.get("cluster.id") or random_kafka_uuid()
        marker = self.log_dir / CLEAN_SHUTDOWN_FILE_NAME
        state = self._read_state()
        self._topic_overrides = {t: dict(c) for t, c in state.get("topicConfigs", {}).items()}
        starts = read_offset_checkpoint(self.log_dir / LOG_START_OFFSET_CHECKPOINT) or {}
        by_topic: dict[str, list[tuple[int, Path]]] = {}
        for d in partition_dirs(self.log_dir):
            if _MOVED.search(d.name):
                continue
            tp = parse_partition_dir_name(d.name)
            if tp.topic == METADATA_TOPIC:
                continue
            by_topic.setdefault(tp.topic, []).append((tp.partition, d))
        try:
            for name, parts in by_topic.items():
                topic = Topic(name, self._topic_id(parts), self._topic_overrides.get(name))
                cfg = configs.append_config(self.effective_configs(topic))
                for p, d in parts:
                    topic.partitions[p] = StandInPartitionLog(
                        d, cfg, log_start_offset=starts.get(TopicPartition(name, p)))
                self._add(topic)
        except BaseException:
            self.close(clean=False)
            raise
        self._next_pid = self._block_end = int(state.get("nextProducerIdBlock", 0)) or \
            self._producer_id_floor()
        if marker.exists():
            marker.unlink()
        return self

    def _add(self, topic: Topic) -> None:
        self.topics[topic.name] = topic
        self.by_id[topic.topic_id] = topic

    def _topic_id(self, parts: list[tuple[int, Path]]) -> str:
        ids = [m.get("topic_id") for _, d in parts if (m := read_partition_metadata(d))]
        topic_id = next((i for i in ids if i), None) or random_kafka_uuid()
        for _, d in parts:
            if not (read_partition_metadata(d) or {}).get("topic_id"):
                write_partition_metadata(d, topic_id)
        return topic_id

    def _producer_id_floor(self) -> int:
        from ..schema.producer_snapshot import parse_snapshot

        top = -1
        for topic in self.topics.values():
            for part in topic.partitions.values():
                for snap in part.directory.glob("*" + PRODUCER_SNAPSHOT_FILE_SUFFIX):
                    try:
                        entries = parse_snapshot(snap.read_bytes())
                    except Exception:  # a bad snapshot only costs us the floor
                        continue
                    top = max([top] + [e.producer_id for e in entries])
        return (top // PRODUCER_ID_BLOCK + 1) * PRODUCER_ID_BLOCK if top >= 0 else 0

    # -- state file ----------------------------------------------------------------------

    def _read_state(self) -> dict:
        try:
            return json.loads((self.log_dir / STATE_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except ValueError:
            log.warning("%s is not JSON; starting producer ids after the snapshots",
                        self.log_dir / STATE_FILE)
            return {}

    def _write_state(self) -> None:
        data = {"version": 1, "nextProducerIdBlock": self._block_end,
                "topicConfigs": self._topic_overrides}
        write_atomically(self.log_dir / STATE_FILE, json.dumps(data, indent=1, sort_keys=True))

    # -- producer ids ----------------------------------------------------------------------

    def allocate_producer_id(self) -> int:
        if self._next_pid >= self._block_end:
            self._block_end = self._next_pid + PRODUCER_ID_BLOCK
            self._write_state()
        pid = self._next_pid
        self._next_pid += 1
        return pid

    # -- topics ----------------------------------------------------------------------------

    def effective_configs(self, topic: Topic) -> dict[str, str]:
        return configs.effective(self.server_configs, topic.overrides)

    def partition(self, topic: str, partition: int) -> StandInPartitionLog | None:
        t = self.topics.get(topic)
        return None if t is None else t.partitions.get(partition)

    def create_topic(self, name: str, num_partitions: int,
                     overrides: dict[str, str] | None = None) -> Topic:
        """Create the partition directories (empty segment, partition.metadata).

        Raises:
            InvalidArgumentError: an illegal name (callers check existence and counts).
        """
        validate_topic_name(name)
        topic = Topic(name, random_kafka_uuid(), overrides)
        cfg = configs.append_config(self.effective_configs(topic))
        for p in range(num_partitions):
            d = self.log_dir / f"{name}-{p}"
            d.mkdir(exist_ok=True)
            write_partition_metadata(d, topic.topic_id)
            topic.partitions[p] = StandInPartitionLog(d, cfg)
        if topic.overrides:
            self._topic_overrides[name] = dict(topic.overrides)
            self._write_state()
        self._add(topic)
        return topic

    def delete_topic(self, topic: Topic) -> None:
        """Rename each partition directory ``<tp>.<uuid>-delete`` (as the broker marks it)
        and remove it."""
        self.topics.pop(topic.name, None)
        self.by_id.pop(topic.topic_id, None)
        for p, part in topic.partitions.items():
            part.close()
            target = self.log_dir / f"{topic.name}-{p}.{uuid.uuid4().hex}-delete"
            part.directory.rename(target)
            shutil.rmtree(target, ignore_errors=True)
        if self._topic_overrides.pop(topic.name, None) is not None:
            self._write_state()

    # -- closing -----------------------------------------------------------------------------

    def close(self, *, clean: bool = True) -> None:
        """Seal every partition, write the checkpoints and (``clean``) the marker."""
        ends: dict[TopicPartition, int] = {}
        starts: dict[TopicPartition, int] = {}
        for topic in self.topics.values():
            for p, part in topic.partitions.items():
                tp = TopicPartition(topic.name, p)
                ends[tp] = part.log_end_offset
                if part.log_start_offset > part.segments[0].base_offset:
                    starts[tp] = part.log_start_offset
                part.close()
        if not clean:
            return
        write_atomically(self.log_dir / RECOVERY_POINT_CHECKPOINT, format_offset_checkpoint(ends))
        write_atomically(self.log_dir / REPLICATION_OFFSET_CHECKPOINT,
                         format_offset_checkpoint(ends))
        write_atomically(self.log_dir / LOG_START_OFFSET_CHECKPOINT,
                         format_offset_checkpoint(starts))
        write_clean_shutdown(self.log_dir)
