"""The partitions of one broker's log directories, as the Kafka tools' admin calls see
them (ListTopics, DescribeTopics, ListOffsets), shared by ``groups``, ``get-offsets``,
``delete-records`` and ``describe --log-dirs-json``.

A broker's ``log.dirs`` may be several directories; ``PATH`` arguments name them (or a
directory holding them, searched as every command does). Live partition directories are
taken (``-delete`` / ``-future`` / ``-stray`` ones are the broker's own business), except
``__cluster_metadata`` (KRaft's log, not a topic a broker lists). When the same
topic-partition appears in several directories (copies of several brokers), the replica
with the highest log end offset answers, as the partition leader would after an election
of the most caught-up replica.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..constants import LOG_START_OFFSET_CHECKPOINT, META_PROPERTIES_FILE_NAME
from ..errors import KafkalogError, NotAKafkaFileError
from ..storage.checkpoints import read_offset_checkpoint
from ..storage.dir_files import read_meta_properties, read_partition_metadata
from ..storage.files import (
    LOG_DIR,
    TopicPartition,
    classify_dir,
    find_partition_dirs,
    is_live_partition_dir_name,
    parse_partition_dir_name,
)
from ..storage.location import as_path
from ..storage.log import Log

METADATA_TOPIC = "__cluster_metadata"
#: ConfigResource.Type ids of ConfigRecord.resourceType
RESOURCE_TOPIC, RESOURCE_BROKER = 2, 4
#: Topic.INTERNAL_TOPICS of kafka-clients 4.4.0
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


def is_internal(topic: str) -> bool:
    """``org.apache.kafka.common.internals.Topic.isInternal``."""
    return topic in INTERNAL_TOPICS


@dataclass
class PartitionDir:
    """One replica on disk: its directory, log directory and (opened on first use) log."""

    topic: str
    partition: int
    directory: Path
    log_dir: Path
    _log: Log | None = None

    @property
    def log(self) -> Log:
        if self._log is None:
            self._log = Log.open(self.directory)
        return self._log

    @property
    def log_end_offset(self) -> int:
        """The offset after the last whole batch (the high watermark of a single replica
        once the broker is up: kafkalog's answer for ListOffsets LATEST)."""
        return self.log.log_end_offset

    @property
    def log_start_offset(self) -> int:
        """``max(log-start-offset-checkpoint entry, first segment's base offset)``,
        bounded by the log end offset (LogLoader)."""
        return min(self.log.log_start_offset, self.log_end_offset)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


@dataclass
class BrokerLogDirs:
    """The live partitions of one broker's log directories (see the module docstring).

    Attributes:
        log_dirs: the log directories, in the order given.
        partitions: ``(topic, partition)`` -> :class:`PartitionDir`.
        node_id: ``node.id`` (or ``broker.id``) of the first ``meta.properties`` that has
            one, else -1.
        problems: what could not be used (one line each, naming the file).
    """

    log_dirs: list[Path]
    partitions: dict[tuple[str, int], PartitionDir] = field(default_factory=dict)
    node_id: int = -1
    problems: list[str] = field(default_factory=list)
    #: the ``__cluster_metadata-0`` directories found (KRaft's log: topic configs)
    metadata_dirs: list[Path] = field(default_factory=list)
    _topic_ids: dict[str, str] | None = None
    _configs: tuple | None = None

    @classmethod
    def open(cls, paths) -> BrokerLogDirs:
        """Find the partitions under ``paths`` (log directories, or directories holding
        them).

        Raises:
            NotAKafkaFileError / UnreadableError: a path holds no log directory.
        """
        found: dict[tuple[str, int], PartitionDir] = {}
        dirs: list[Path] = []
        metadata: list[Path] = []
        for raw in paths:
            p = as_path(raw)
            if not p.is_dir():
                raise NotAKafkaFileError("not a log directory", file=p)
            if classify_dir(p) == LOG_DIR and p not in dirs:
                dirs.append(p)   # listed even without partitions, as a broker lists it
            for ld, d in find_partition_dirs(p):
                if ld not in dirs:
                    dirs.append(ld)
                tp = parse_partition_dir_name(d.name)
                if tp == TopicPartition(METADATA_TOPIC, 0) and d.name == str(tp):
                    metadata.append(d)
                if tp is None or tp.topic == METADATA_TOPIC or (
                        d != p and not is_live_partition_dir_name(d.name)):
                    continue   # (a directory named explicitly is taken as it is)
                cand = PartitionDir(tp.topic, tp.partition, d, ld)
                cur = found.get((tp.topic, tp.partition))
                if cur is None or cand.log_end_offset > cur.log_end_offset:
                    found[(tp.topic, tp.partition)] = cand
        out = cls(dirs, dict(sorted(found.items())), metadata_dirs=metadata)
        for ld in dirs:
            if (ld / META_PROPERTIES_FILE_NAME).exists():
                try:
                    props = read_meta_properties(ld) or {}
                except KafkalogError as e:
                    out.problems.append(str(e))
                    continue
                nid = props.get("node.id", props.get("broker.id"))
                if nid is not None and out.node_id == -1:
                    try:
                        out.node_id = int(nid)
                    except ValueError:
                        pass
        return out

    def topics(self) -> list[str]:
        return sorted({t for t, _ in self.partitions})

    def partitions_of(self, topic: str) -> list[int]:
        return sorted(p for t, p in self.partitions if t == topic)

    def get(self, topic: str, partition: int) -> PartitionDir | None:
        return self.partitions.get((topic, partition))

    @property
    def topic_ids(self) -> dict[str, str]:
        """Topic id -> topic name, from the partitions' ``partition.metadata`` (what the
        metadata image maps for topics this broker hosts)."""
        if self._topic_ids is None:
            ids: dict[str, str] = {}
            for pd in self.partitions.values():
                try:
                    meta = read_partition_metadata(pd.directory)
                except KafkalogError as e:
                    self.problems.append(str(e))
                    continue
                if meta and meta.get("topic_id"):
                    ids.setdefault(meta["topic_id"], pd.topic)
            self._topic_ids = ids
        return self._topic_ids

    def topic_configs(self, topic: str) -> dict[str, str]:
        """Every topic config of ``topic`` as the broker resolves it (its overrides, then
        the dynamic broker configs, then Kafka's defaults; a broker's static
        ``server.properties`` is not in the log directory): the ``ConfigRecord`` s of the
        KRaft metadata log (newest snapshot, then the log; a removed topic's configs go
        with it, as ConfigurationsDelta drops them), then what ``kafkalog serve`` stored
        in ``kafkalog-serve.json`` (its overrides of a topic replace the log's). A
        metadata log that cannot be read is a problem noted, not an error."""
        from ..server import configs

        if self._configs is None:
            self._configs = self._load_configs()
        defaults, overrides = self._configs
        return configs.effective(defaults, overrides.get(topic, {}))

    def _load_configs(self) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
        from ..decoders import metadata_messages as mm
        from ..server import configs
        from ..server.catalog import read_serve_state
        from ..server.security.metadata_log import replay_metadata_log

        names: dict = {}   # topic id -> name
        topics: dict[str, dict[str, str]] = {}
        brokers: dict[str, dict[str, str]] = {}

        def visit(message, data: dict) -> None:
            if message is mm.TopicRecord:
                names[data["topicId"]] = data["name"]
            elif message is mm.RemoveTopicRecord:
                topics.pop(names.pop(data["topicId"], None), None)
            elif data["resourceType"] in (RESOURCE_TOPIC, RESOURCE_BROKER):
                kind = topics if data["resourceType"] == RESOURCE_TOPIC else brokers
                entry = kind.setdefault(data["resourceName"], {})
                if data["value"] is None:
                    entry.pop(data["name"], None)
                else:
                    entry[data["name"]] = data["value"]

        types = {m.api_key: m for m in (mm.TopicRecord, mm.RemoveTopicRecord, mm.ConfigRecord)}
        for d in self.metadata_dirs:
            try:
                replay_metadata_log(d, types, visit)
            except (KafkalogError, OSError) as e:
                self.problems.append(f"{d}: topic configs not read: {e}")
        for ld in self.log_dirs:
            state = read_serve_state(ld)
            topics.update(state.get("topicConfigs", {}))
            for k, v in state.get("brokerConfigs", {}).items():
                brokers.setdefault(k, {}).update(v)
        layers = configs.BrokerConfigLayers(dynamic_default=brokers.get("", {}),
                                            dynamic_broker=brokers.get(str(self.node_id), {}))
        try:
            return layers.topic_defaults(), topics
        except ValueError as e:  # a dynamic broker config that is no number where one is
            self.problems.append(f"dynamic broker configs not used: {e}")
            return {}, topics

    def log_start_checkpoints(self) -> dict[Path, dict]:
        """Each log directory's ``log-start-offset-checkpoint`` entries ({} when absent or
        unreadable; the problem is noted)."""
        out = {}
        for ld in self.log_dirs:
            try:
                out[ld] = read_offset_checkpoint(ld / LOG_START_OFFSET_CHECKPOINT) or {}
            except KafkalogError as e:
                self.problems.append(str(e))
                out[ld] = {}
        return out

    def close(self) -> None:
        for pd in self.partitions.values():
            pd.close()


__all__ = ["BrokerLogDirs", "INTERNAL_TOPICS", "PartitionDir", "TopicPartition", "is_internal"]
