"""Topic and broker configs ``kafkalog serve`` knows: Kafka's names, defaults (``LogConfig``
/ ``ServerLogConfigs`` / ``GroupCoordinatorConfig``, Kafka 4.0), ConfigType, the topic
configs' broker synonyms, and the layers a value comes from - as ``ConfigHelper`` describes
them and ``DynamicBrokerConfig`` / ``LogConfig.fromProps`` resolve them; and the socket
server's limits (:data:`SOCKET_CONFIGS`) as integers for
:class:`~kafkalog_cli.server.broker.KafkaServer`.

Layers, lowest priority first (``ConfigSource`` of DescribeConfigs in brackets):

1. defaults [DEFAULT_CONFIG 5] - the broker configs' own defaults (``log.roll.hours=168``);
2. static broker configs [STATIC_BROKER_CONFIG 4] - ``kafkalog serve --config`` (the
   server's ``server.properties``); a topic config name given there
   (``--config segment.bytes=4096``) stands for its first broker synonym
   (``log.segment.bytes``), as a broker's ``log.*`` settings are topic defaults;
3. dynamic cluster-wide broker configs [DYNAMIC_DEFAULT_BROKER_CONFIG 3] - AlterConfigs /
   IncrementalAlterConfigs on the BROKER resource ``""``;
4. dynamic per-broker configs [DYNAMIC_BROKER_CONFIG 2] - on the BROKER resource
   ``"<node id>"``;
5. a topic's overrides [TOPIC_CONFIG 1] - CreateTopics configs, AlterConfigs /
   IncrementalAlterConfigs on the TOPIC resource.

A topic config's value is its override, else its first broker synonym (in
``ServerTopicConfigSynonyms`` order: ``log.roll.ms`` before ``log.roll.hours``, hours
converted to ms) found in the merged broker layers, else the default. Layers 3-5 are
persisted by :class:`~kafkalog_cli.server.catalog.LogDirCatalog` in ``kafkalog-serve.json``.

The append engine obeys what :class:`~kafkalog_cli.storage.config.LogConfig` models
(segment.bytes, segment.ms, max.message.bytes, message.timestamp.*, index.interval.bytes,
flush.*, compression.*, preallocate, and cleanup.policy=compact's key check); the others
(min.insync.replicas, compaction, ...) are reported (min.insync.replicas is capped at the
one replica, as Kafka >= 3.7 caps it), cleanup.policy is checked by DeleteRecords;
retention.ms, retention.bytes, cleanup.policy and file.delete.delay.ms drive the log
retention task (:mod:`~kafkalog_cli.server.retention_task`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from ..errors import (
    GroupConfigError,
    InvalidArgumentError,
    InvalidConfigError,
    UnknownTopicConfigError,
)
from ..storage.config import LogConfig
from .security import config as security_config

# ConfigType of DescribeConfigsResponse (ConfigDef.Type order)
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = range(1, 10)

_LONG_MAX = str(2**63 - 1)
_INT_MAX = str(2**31 - 1)


class ConfigSource(IntEnum):
    """DescribeConfigsResponse.ConfigSource."""

    UNKNOWN = 0
    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5


#: Topic config name -> (default, ConfigType): every key of Kafka 4.4's ``LogConfig``.
TOPIC_CONFIGS: dict[str, tuple[str, int]] = {
    "cleanup.policy": ("delete", LIST),
    "compression.gzip.level": ("-1", INT),
    "compression.lz4.level": ("9", INT),
    "compression.type": ("producer", STRING),
    "compression.zstd.level": ("3", INT),
    "delete.retention.ms": ("86400000", LONG),
    "errors.deadletterqueue.group.enable": ("false", BOOLEAN),
    "file.delete.delay.ms": ("60000", LONG),
    "flush.messages": (_LONG_MAX, LONG),
    "flush.ms": (_LONG_MAX, LONG),
    "follower.replication.throttled.replicas": ("", LIST),
    "index.interval.bytes": ("4096", INT),
    "leader.replication.throttled.replicas": ("", LIST),
    "local.retention.bytes": ("-2", LONG),
    "local.retention.ms": ("-2", LONG),
    "max.compaction.lag.ms": (_LONG_MAX, LONG),
    "max.decompressed.message.bytes": (str(2**31 - 1 - 8), INT),
    "max.message.bytes": ("1048588", INT),
    "message.timestamp.after.max.ms": ("3600000", LONG),
    "message.timestamp.before.max.ms": (_LONG_MAX, LONG),
    "message.timestamp.type": ("CreateTime", STRING),
    "min.cleanable.dirty.ratio": ("0.5", DOUBLE),
    "min.compaction.lag.ms": ("0", LONG),
    "min.insync.replicas": ("1", INT),
    "preallocate": ("false", BOOLEAN),
    "remote.copy.lag.bytes": ("-1", LONG),
    "remote.copy.lag.ms": ("0", LONG),
    "remote.log.copy.disable": ("false", BOOLEAN),
    "remote.log.delete.on.disable": ("false", BOOLEAN),
    "remote.storage.enable": ("false", BOOLEAN),
    "retention.bytes": ("-1", LONG),
    "retention.ms": ("604800000", LONG),
    "segment.bytes": ("1073741824", INT),
    "segment.index.bytes": ("10485760", INT),
    "segment.jitter.ms": ("0", LONG),
    "segment.ms": ("604800000", LONG),
    "unclean.leader.election.enable": ("false", BOOLEAN),
}

#: Lowest accepted value of the numeric topic configs LogConfig does not model (its
#: ``atLeast`` validators; retention.bytes has none).
_AT_LEAST = {"delete.retention.ms": 0, "file.delete.delay.ms": 0, "local.retention.bytes": -2,
             "local.retention.ms": -2, "max.compaction.lag.ms": 1, "min.compaction.lag.ms": 0,
             "min.insync.replicas": 1, "retention.ms": -1, "remote.copy.lag.bytes": -1,
             "remote.copy.lag.ms": -1, "max.decompressed.message.bytes": 1}

_HOUR_MS, _MINUTE_MS = 3_600_000, 60_000

#: Topic config -> its broker synonyms, highest priority first, with the factor that
#: turns the broker value into the topic's unit (ServerTopicConfigSynonyms). Topic
#: configs missing here have no broker default (LogConfig.CONFIGS_WITH_NO_SERVER_DEFAULTS).
TOPIC_SYNONYMS: dict[str, tuple[tuple[str, int], ...]] = {
    "segment.bytes": (("log.segment.bytes", 1),),
    "segment.ms": (("log.roll.ms", 1), ("log.roll.hours", _HOUR_MS)),
    "segment.jitter.ms": (("log.roll.jitter.ms", 1), ("log.roll.jitter.hours", _HOUR_MS)),
    "segment.index.bytes": (("log.index.size.max.bytes", 1),),
    "flush.messages": (("log.flush.interval.messages", 1),),
    "flush.ms": (("log.flush.interval.ms", 1), ("log.flush.scheduler.interval.ms", 1)),
    "retention.bytes": (("log.retention.bytes", 1),),
    "retention.ms": (("log.retention.ms", 1), ("log.retention.minutes", _MINUTE_MS),
                     ("log.retention.hours", _HOUR_MS)),
    "max.message.bytes": (("message.max.bytes", 1),),
    "index.interval.bytes": (("log.index.interval.bytes", 1),),
    "delete.retention.ms": (("log.cleaner.delete.retention.ms", 1),),
    "min.compaction.lag.ms": (("log.cleaner.min.compaction.lag.ms", 1),),
    "max.compaction.lag.ms": (("log.cleaner.max.compaction.lag.ms", 1),),
    "file.delete.delay.ms": (("log.segment.delete.delay.ms", 1),),
    "min.cleanable.dirty.ratio": (("log.cleaner.min.cleanable.ratio", 1),),
    "cleanup.policy": (("log.cleanup.policy", 1),),
    "unclean.leader.election.enable": (("unclean.leader.election.enable", 1),),
    "min.insync.replicas": (("min.insync.replicas", 1),),
    "compression.type": (("compression.type", 1),),
    "compression.gzip.level": (("compression.gzip.level", 1),),
    "compression.lz4.level": (("compression.lz4.level", 1),),
    "compression.zstd.level": (("compression.zstd.level", 1),),
    "preallocate": (("log.preallocate", 1),),
    "message.timestamp.type": (("log.message.timestamp.type", 1),),
    "message.timestamp.before.max.ms": (("log.message.timestamp.before.max.ms", 1),),
    "message.timestamp.after.max.ms": (("log.message.timestamp.after.max.ms", 1),),
    "local.retention.ms": (("log.local.retention.ms", 1),),
    "local.retention.bytes": (("log.local.retention.bytes", 1),),
    "remote.copy.lag.ms": (("log.remote.copy.lag.ms", 1),),
    "remote.copy.lag.bytes": (("log.remote.copy.lag.bytes", 1),),
    "max.decompressed.message.bytes": (("max.decompressed.message.bytes", 1),),
}


@dataclass(frozen=True)
class BrokerConfig:
    """A broker config this server reports: its default (None: no default), ConfigType,
    whether AlterConfigs may change it (``DynamicBrokerConfig.AllDynamicConfigs``) and the
    topic config it is a synonym of."""

    default: str | None
    type: int
    dynamic: bool = False
    topic: str | None = None


def _broker_configs() -> dict[str, BrokerConfig]:
    out: dict[str, BrokerConfig] = {}
    hours = {"log.roll.hours": "168", "log.roll.jitter.hours": "0",
             "log.retention.hours": "168"}
    for topic, synonyms in TOPIC_SYNONYMS.items():
        default, kind = TOPIC_CONFIGS[topic]
        for i, (name, factor) in enumerate(synonyms):
            if factor != 1:
                # the hours/minutes forms: INT, not dynamic (only the first synonym is)
                out[name] = BrokerConfig(hours.get(name), INT, False, topic)
            elif i == 0 and name in ("log.roll.ms", "log.roll.jitter.ms", "log.retention.ms",
                                     "log.flush.interval.ms"):
                out[name] = BrokerConfig(None, LONG, True, topic)  # null: the next synonym
            else:
                out[name] = BrokerConfig(default, kind, i == 0, topic)
    out.update({
        "node.id": BrokerConfig(None, INT),
        "broker.id": BrokerConfig("-1", INT),
        "log.dirs": BrokerConfig(None, STRING),
        "num.partitions": BrokerConfig("1", INT),
        "auto.create.topics.enable": BrokerConfig("true", BOOLEAN),
        "default.replication.factor": BrokerConfig("1", INT),
        "group.initial.rebalance.delay.ms": BrokerConfig("3000", INT),
        "group.min.session.timeout.ms": BrokerConfig("6000", INT),
        "group.max.session.timeout.ms": BrokerConfig("1800000", INT),
        "group.max.size": BrokerConfig(_INT_MAX, INT),
        "offset.metadata.max.bytes": BrokerConfig("4096", INT),
        "socket.request.max.bytes": BrokerConfig("104857600", INT),
        "queued.max.request.bytes": BrokerConfig("268435456", LONG),
        "connections.max.idle.ms": BrokerConfig("600000", LONG),
        # Fetch: the response's bound (KafkaApis.handleFetchRequest); the bound a
        # follower's fetcher asks for (a follower's setting: a leader does not apply it)
        "fetch.max.bytes": BrokerConfig(str(55 * 1024 * 1024), INT),
        "replica.fetch.response.max.bytes": BrokerConfig(str(10 * 1024 * 1024), INT),
        # the coordinators' internal topics (GroupCoordinatorConfig, TransactionLogConfig,
        # TransactionStateManagerConfig)
        "offsets.topic.num.partitions": BrokerConfig("50", INT),
        "offsets.topic.segment.bytes": BrokerConfig("104857600", INT),
        "offsets.retention.minutes": BrokerConfig("10080", INT),
        "offsets.retention.check.interval.ms": BrokerConfig("600000", LONG),
        "transaction.state.log.num.partitions": BrokerConfig("50", INT),
        "transaction.state.log.segment.bytes": BrokerConfig("104857600", INT),
        "transaction.max.timeout.ms": BrokerConfig("900000", INT),
        "transaction.abort.timed.out.transaction.cleanup.interval.ms":
            BrokerConfig("10000", INT),
        # the log cleaner (CleanerConfig; LogCleaner.ReconfigurableConfigs are dynamic)
        "log.cleaner.enable": BrokerConfig("true", BOOLEAN),
        "log.cleaner.backoff.ms": BrokerConfig("15000", LONG, True),
        "log.cleaner.dedupe.buffer.size": BrokerConfig("134217728", LONG, True),
        "log.cleaner.io.buffer.load.factor": BrokerConfig("0.9", DOUBLE, True),
        "log.cleaner.threads": BrokerConfig("1", INT, True),
        # LogManager's retention task (storage/retention.py, server/retention_task.py)
        "log.retention.check.interval.ms": BrokerConfig("300000", LONG),
    })
    return out


#: ConfigDef's atLeast of the broker configs above that have one
_BROKER_AT_LEAST = {"fetch.max.bytes": 1024, "replica.fetch.response.max.bytes": 0,
                    "offsets.topic.num.partitions": 1, "offsets.topic.segment.bytes": 1,
                    "offsets.retention.minutes": 1, "offsets.retention.check.interval.ms": 1,
                    "transaction.state.log.num.partitions": 1,
                    "transaction.state.log.segment.bytes": 1, "transaction.max.timeout.ms": 1,
                    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 1,
                    "log.cleaner.backoff.ms": 0, "log.cleaner.threads": 0,
                    "log.retention.check.interval.ms": 1}
#: Internal broker configs (ConfigDef.defineInternal) serve obeys: accepted by ``--config``,
#: described only when set (ConfigHelper lists originals plus non-internal values); name ->
#: (default, atLeast)
INTERNAL_BROKER_CONFIGS = {"log.initial.task.delay.ms": ("30000", 0)}


#: Broker config name -> :class:`BrokerConfig` (the subset this server reports), the
#: security configs included (:mod:`.security.config`; PASSWORD ones are described with a
#: null value and ``isSensitive``).
BROKER_CONFIGS: dict[str, BrokerConfig] = _broker_configs() | {
    name: BrokerConfig(default, kind)
    for name, (default, kind) in security_config.SECURITY_CONFIGS.items()}
#: Broker configs set from the command line (``--node-id``, ``--log-dir``, ...), refused
#: in ``--config``.
_FROM_OPTIONS = frozenset({"node.id", "broker.id", "log.dirs", "num.partitions",
                           "auto.create.topics.enable"})


# -- values ------------------------------------------------------------------------------

_TYPE_NAMES = {INT: "INT", LONG: "LONG", SHORT: "SHORT"}


def _number(name: str, value: str, lo: int | None = None, kind: int = LONG) -> str:
    """ConfigDef.parseType for INT/LONG/SHORT, then its atLeast validator (``lo``)."""
    try:
        n = int(value.strip())
    except ValueError:
        raise InvalidConfigError(name, value,
                                 f"Not a number of type {_TYPE_NAMES[kind]}") from None
    if lo is not None and n < lo:
        raise InvalidConfigError(name, value, f"Value must be at least {lo}")
    return str(n)


def _list(value: str) -> list[str]:
    """ConfigDef.parseType(LIST): comma-separated, trimmed, empty string = empty list."""
    v = value.strip()
    return [] if not v else [p.strip() for p in v.split(",")]


def validate(name: str, value: str | None) -> str:
    """A topic config value normalised as ``ConfigDef.convertToString`` prints it, or
    :class:`InvalidConfigError` (-> INVALID_CONFIG). Keys the engine models are checked by
    :class:`LogConfig`'s own rules; the others by ``LogConfig``'s validators.

    Raises:
        InvalidConfigError: an unknown name (``Unknown topic config name``) or bad value.
    """
    spec = TOPIC_CONFIGS.get(name)
    if spec is None:
        raise UnknownTopicConfigError(name)
    if value is None:
        return spec[0]
    if name in LogConfig.KEYS:
        parsed = LogConfig.KEYS[name][1](name, value)
        return ("true" if parsed else "false") if isinstance(parsed, bool) else str(parsed)
    kind = spec[1]
    if kind in (INT, LONG, SHORT):
        return _number(name, value, _AT_LEAST.get(name), kind)
    if kind == BOOLEAN:
        if value.strip().lower() not in ("true", "false"):
            raise InvalidConfigError(name, value, "Expected value to be either true or false")
        return value.strip().lower()
    if kind == DOUBLE:
        try:
            d = float(value.strip())
        except ValueError:
            raise InvalidConfigError(name, value, "Expected value to be a double") from None
        if not 0 <= d <= 1:
            raise InvalidConfigError(name, value, "Value must be between 0 and 1")
        return repr(d)
    if kind == LIST:
        items = _list(value)
        if name == "cleanup.policy":
            bad = [i for i in items if i not in ("compact", "delete")]
            if bad:
                raise InvalidConfigError(name, value, "String must be one of: compact, delete")
        elif items != ["*"] and any(not _is_throttled_replica(i) for i in items):
            raise InvalidConfigError(name, value, "must be the literal '*' or a list of "
                                     "replicas in the following format: "
                                     "[partitionId]:[brokerId],[partitionId]:[brokerId],...")
        return ",".join(items)
    return value


def _is_throttled_replica(item: str) -> bool:
    p, sep, b = item.partition(":")
    return bool(sep) and p.strip().isdigit() and b.strip().isdigit()


def validate_topic_configs(props: dict[str, str],
                           topic_defaults: dict[str, str] | None = None) -> dict[str, str]:
    """A topic's whole override set, as ``LogConfig.validate`` checks it: each name and
    value, then the rules across keys over the effective config (``topic_defaults``: what
    the broker layers give, :meth:`BrokerConfigLayers.topic_defaults`). Returns the
    normalised values.

    Raises:
        InvalidConfigError: the first problem.
    """
    out = {k: validate(k, v) for k, v in props.items()}
    eff = effective(topic_defaults or {}, out)
    lo, hi = int(eff["min.compaction.lag.ms"]), int(eff["max.compaction.lag.ms"])
    if lo > hi:
        raise InvalidConfigError("min.compaction.lag.ms", lo,
                                 f"conflict topic config setting min.compaction.lag.ms ({lo}) "
                                 f"> max.compaction.lag.ms ({hi})")
    if eff["remote.storage.enable"] == "true":
        raise InvalidConfigError("remote.storage.enable", "true",
                                 "Tiered Storage functionality is disabled in the broker. "
                                 "Topic cannot be configured with remote log storage.")
    return out


def validate_broker(name: str, value: str) -> str:
    """A broker config value (a known name's type is checked; unknown names are kept as
    given, as a broker keeps unknown properties).

    Raises:
        InvalidConfigError: a value its type refuses.
    """
    spec = BROKER_CONFIGS.get(name)
    if spec is None:
        return value
    if spec.topic is not None and TOPIC_SYNONYMS[spec.topic][0][0] == name:
        return validate(spec.topic, value)
    if spec.type in (INT, LONG):
        return _number(name, value, _BROKER_AT_LEAST.get(name), spec.type)
    if spec.type == BOOLEAN:
        if value.strip().lower() not in ("true", "false"):
            raise InvalidConfigError(name, value, "Expected value to be either true or false")
        return value.strip().lower()
    return value


def static_broker_configs(items: dict[str, str]) -> dict[str, str]:
    """``--config`` entries as static broker configs: a topic config name becomes its first
    broker synonym; broker names are kept.

    Raises:
        InvalidArgumentError: an unknown name, a topic config without a broker synonym, a
            config set by a command-line option, or a bad value.
    """
    out = {}
    for name, value in items.items():
        if name in TOPIC_CONFIGS:
            if name not in TOPIC_SYNONYMS:
                raise InvalidArgumentError(f"{name} has no broker-level default "
                                           "(LogConfig.CONFIGS_WITH_NO_SERVER_DEFAULTS)")
            out[TOPIC_SYNONYMS[name][0][0]] = validate(name, value)
        elif name in BROKER_CONFIGS and name not in _FROM_OPTIONS:
            out[name] = validate_broker(name, value)
        elif name in INTERNAL_BROKER_CONFIGS:
            out[name] = _number(name, value, INTERNAL_BROKER_CONFIGS[name][1], LONG)
        elif name in _FROM_OPTIONS:
            raise InvalidArgumentError(f"{name} is set by a command-line option")
        else:
            raise UnknownTopicConfigError(name)
    return out


def effective(topic_defaults: dict[str, str], overrides: dict[str, str]) -> dict[str, str]:
    """Every topic config: the override, else ``topic_defaults`` (from the broker layers,
    :meth:`BrokerConfigLayers.topic_defaults`), else Kafka's default."""
    out = {k: v for k, (v, _) in TOPIC_CONFIGS.items()}
    out.update(topic_defaults)
    out.update(overrides)
    return out


def records_deletable(cleanup_policy: str) -> bool:
    """Partition.deleteRecordsOnLeader (Kafka 4.4.0): DeleteRecords is refused
    (POLICY_VIOLATION) for a topic whose ``cleanup.policy`` holds ``compact`` and not
    ``delete`` (LogConfig lower-cases the list); an empty policy allows it (before 4.2 and
    KAFKA-19112's empty policy, anything without ``delete`` was refused)."""
    policy = [p.strip().lower() for p in cleanup_policy.split(",")]
    return "delete" in policy or "compact" not in policy


def records_not_deletable_message(topic: str, partition: int) -> str:
    """The broker's PolicyViolationException text for :func:`records_deletable`."""
    return (f"Records of partition {topic}-{partition} can not be deleted due to the "
            "configured policy")


def log_config(cfg: dict[str, str]) -> LogConfig:
    """The engine's LogConfig of an effective topic config (unmodelled keys in ``extra``).

    Raises:
        InvalidConfigError: a value LogConfig rejects (validated on the way in already).
    """
    return LogConfig.from_properties(cfg)


# -- group configs ---------------------------------------------------------------------------

#: GROUP resource configs (KIP-848's GroupConfig, Kafka 4.0): name -> (default, lowest,
#: highest), all INT. The defaults and bounds are the broker's group.consumer.* /
#: group.share.* defaults; they configure KIP-848 consumer and share groups, which this
#: server does not run: stored and described only.
GROUP_CONFIGS: dict[str, tuple[int, int, int]] = {
    "consumer.heartbeat.interval.ms": (5000, 5000, 15000),
    "consumer.session.timeout.ms": (45000, 45000, 60000),
    "share.heartbeat.interval.ms": (5000, 5000, 15000),
    "share.record.lock.duration.ms": (30000, 15000, 60000),
    "share.session.timeout.ms": (45000, 45000, 60000),
}
#: the broker config each group config's bound comes from
_GROUP_BOUND_NAMES = {
    "consumer.heartbeat.interval.ms": "group.consumer.{}.heartbeat.interval.ms",
    "consumer.session.timeout.ms": "group.consumer.{}.session.timeout.ms",
    "share.heartbeat.interval.ms": "group.share.{}.heartbeat.interval.ms",
    "share.record.lock.duration.ms": "group.share.{}.record.lock.duration.ms",
    "share.session.timeout.ms": "group.share.{}.session.timeout.ms",
}


def validate_group_configs(props: dict[str, str]) -> dict[str, str]:
    """A group's whole override set, as ``GroupConfig.validate`` checks it: names, INT
    values, the broker's bounds, session timeouts above heartbeat intervals. Returns the
    normalised values.

    Raises:
        InvalidConfigError: the first problem.
    """
    out = {}
    for name, value in props.items():
        if name not in GROUP_CONFIGS:
            raise GroupConfigError(name, value, f"Unknown group config name: {name}")
        out[name] = _number(name, value, 1)
    eff = {n: int(out.get(n, d)) for n, (d, _, _) in GROUP_CONFIGS.items()}
    for name, (_, lo, hi) in GROUP_CONFIGS.items():
        if eff[name] < lo:
            raise GroupConfigError(name, eff[name], f"{name} must be greater than or equal "
                                   f"to {_GROUP_BOUND_NAMES[name].format('min')}")
        if eff[name] > hi:
            raise GroupConfigError(name, eff[name], f"{name} must be less than or equal "
                                   f"to {_GROUP_BOUND_NAMES[name].format('max')}")
    for kind in ("consumer", "share"):
        if eff[f"{kind}.session.timeout.ms"] <= eff[f"{kind}.heartbeat.interval.ms"]:
            raise GroupConfigError(f"{kind}.session.timeout.ms",
                                   eff[f"{kind}.session.timeout.ms"],
                                   f"{kind}.session.timeout.ms must be greater than "
                                   f"{kind}.heartbeat.interval.ms")
    return out


def describe_group(overrides: dict[str, str], keys: list[str] | None,
                   include_synonyms: bool) -> list[dict]:
    """The entries of a GROUP resource (ConfigHelper.createGroupConfigEntry): every group
    config, its source GROUP_CONFIG (8) when set for the group, else DEFAULT_CONFIG, and
    that one synonym."""
    out = []
    for name, (default, _, _) in sorted(GROUP_CONFIGS.items()):
        if keys and name not in keys:
            continue
        value = overrides.get(name, str(default))
        source = GROUP_CONFIG_SOURCE if name in overrides else int(ConfigSource.DEFAULT_CONFIG)
        out.append({"name": name, "value": value, "readOnly": False,
                    "isDefault": name not in overrides, "configSource": source,
                    "isSensitive": False,
                    "synonyms": [{"name": name, "value": value, "source": source}]
                    if include_synonyms else [],
                    "configType": INT, "documentation": None})
    return out


#: ConfigSource.GROUP_CONFIG
GROUP_CONFIG_SOURCE = 8


# -- layers --------------------------------------------------------------------------------

@dataclass
class BrokerConfigLayers:
    """The broker-level layers (see the module docstring), by broker config name."""

    static: dict[str, str] = field(default_factory=dict)
    dynamic_default: dict[str, str] = field(default_factory=dict)
    dynamic_broker: dict[str, str] = field(default_factory=dict)

    def merged(self) -> dict[str, str]:
        """DynamicBrokerConfig: static, then cluster-wide dynamic, then per-broker dynamic."""
        return self.static | self.dynamic_default | self.dynamic_broker

    def value(self, name: str) -> str | None:
        """A broker config's current value (None: unset and no default)."""
        merged = self.merged()
        if name in merged:
            return merged[name]
        spec = BROKER_CONFIGS.get(name)
        return spec.default if spec else None

    def int_value(self, name: str) -> int:
        return int(self.value(name))

    def topic_defaults(self) -> dict[str, str]:
        """Topic config -> the value the broker layers give it (first synonym present,
        converted to the topic's unit); topic configs the broker does not set are left
        out (they take Kafka's default)."""
        merged = self.merged()
        out = {}
        for topic, synonyms in TOPIC_SYNONYMS.items():
            for name, factor in synonyms:
                if name in merged:
                    v = merged[name]
                    out[topic] = str(int(v) * factor) if factor != 1 else v
                    break
        return out

    def synonyms(self, name: str, *, per_broker: bool = True) -> list[dict]:
        """ConfigHelper.configSynonyms(name, brokerSynonyms(name)): each layer in turn
        (per-broker, cluster-wide, static, default), each synonym of ``name`` in it, then
        everything before the first entry named ``name`` dropped."""
        group = broker_config_synonyms(name)
        layers = [(self.dynamic_broker, ConfigSource.DYNAMIC_BROKER_CONFIG),
                  (self.dynamic_default, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
                  (self.static, ConfigSource.STATIC_BROKER_CONFIG),
                  (_DEFAULTS, ConfigSource.DEFAULT_CONFIG)]
        out = []
        for layer, source in layers:
            for n in group:
                if n in layer:
                    out.append({"name": n, "value": layer[n], "source": int(source)})
        while out and out[0]["name"] != name:
            out.pop(0)
        if not per_broker:
            out = [s for s in out if s["source"] == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
        return out


def broker_config_synonyms(name: str) -> list[str]:
    """DynamicBrokerConfig.brokerConfigSynonyms: the ms/minutes/hours families of the roll,
    jitter and retention times, log.flush.interval.ms with log.flush.scheduler.interval.ms;
    any other name alone."""
    if name == "log.flush.interval.ms":
        return ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"]
    for family in _SYNONYM_FAMILIES:
        if name in family:
            return list(family)
    return [name]


_SYNONYM_FAMILIES = (("log.roll.ms", "log.roll.hours"),
                     ("log.roll.jitter.ms", "log.roll.jitter.hours"),
                     ("log.retention.ms", "log.retention.minutes", "log.retention.hours"))

#: The broker configs' defaults that exist (``staticDefaultConfigs``: null defaults left out).
_DEFAULTS = {n: s.default for n, s in BROKER_CONFIGS.items() if s.default is not None}


def describe_topic(layers: BrokerConfigLayers, overrides: dict[str, str],
                   keys: list[str] | None, include_synonyms: bool) -> list[dict]:
    """The DescribeConfigsResourceResult entries of a topic (ConfigHelper.
    createTopicConfigEntry): value, source = the first synonym's (TOPIC_CONFIG for an
    override), synonyms when asked, never read-only."""
    eff = effective(layers.topic_defaults(), overrides)
    out = []
    for k in sorted(eff):
        if keys and k not in keys:
            continue
        synonyms = []
        if k in overrides:
            synonyms.append({"name": k, "value": overrides[k],
                             "source": int(ConfigSource.TOPIC_CONFIG)})
        if k in TOPIC_SYNONYMS:
            synonyms += layers.synonyms(TOPIC_SYNONYMS[k][0][0])
        source = synonyms[0]["source"] if synonyms else int(ConfigSource.DEFAULT_CONFIG)
        out.append({"name": k, "value": eff[k], "readOnly": False,
                    "isDefault": source == ConfigSource.DEFAULT_CONFIG,
                    "configSource": source, "isSensitive": False,
                    "synonyms": synonyms if include_synonyms else [],
                    "configType": TOPIC_CONFIGS[k][1], "documentation": None})
    return out


def describe_broker(layers: BrokerConfigLayers, *, per_broker: bool,
                    keys: list[str] | None, include_synonyms: bool) -> list[dict]:
    """The entries of a BROKER resource (ConfigHelper.createBrokerConfigEntry): for this
    node every known broker config (value null when unset without a default, as
    ``log.retention.ms``) and every dynamic one set, read-only unless dynamic; for ``""``
    (the cluster-wide default) only the dynamic defaults set."""
    if per_broker:
        names = sorted(set(BROKER_CONFIGS) | set(layers.merged()))
    else:
        names = sorted(layers.dynamic_default)
    out = []
    for n in names:
        if keys and n not in keys:
            continue
        spec = BROKER_CONFIGS.get(n, BrokerConfig(None, 0, True))
        value = layers.dynamic_default[n] if not per_broker else layers.value(n)
        synonyms = layers.synonyms(n, per_broker=per_broker)
        source = synonyms[0]["source"] if synonyms else int(ConfigSource.DEFAULT_CONFIG)
        sensitive = spec.type == PASSWORD or security_config.is_sensitive(n)
        if sensitive:  # ConfigHelper: a PASSWORD's value (and its synonyms') is null
            value = None
            synonyms = [dict(syn, value=None) for syn in synonyms]
        out.append({"name": n, "value": value, "readOnly": not spec.dynamic,
                    "isDefault": source == ConfigSource.DEFAULT_CONFIG,
                    "configSource": source, "isSensitive": sensitive,
                    "synonyms": synonyms if include_synonyms else [],
                    "configType": spec.type, "documentation": None})
    return out


# -- socket server configs (SocketServerConfigs) -------------------------------------------

#: socket.request.max.bytes: the largest request frame (larger: the connection is closed)
SOCKET_REQUEST_MAX_BYTES = "socket.request.max.bytes"
#: queued.max.request.bytes: request bytes read and not yet handled, over all connections
QUEUED_MAX_REQUEST_BYTES = "queued.max.request.bytes"
#: connections.max.idle.ms: a connection with no byte read or written for this long is
#: closed (a negative value: never)
CONNECTIONS_MAX_IDLE_MS = "connections.max.idle.ms"
#: The broker configs the socket server (:class:`~kafkalog_cli.server.broker.KafkaServer`)
#: obeys; they are in :data:`BROKER_CONFIGS` with the broker's defaults, except
#: queued.max.request.bytes: the broker's -1 (no bound) leaves memory to the number of
#: connections, so serve bounds it at 256 MiB (-1 or 0 still means no bound).
SOCKET_CONFIGS = (SOCKET_REQUEST_MAX_BYTES, QUEUED_MAX_REQUEST_BYTES, CONNECTIONS_MAX_IDLE_MS)


def is_socket_config(name: str) -> bool:
    return name in SOCKET_CONFIGS


def socket_config_value(name: str, value) -> int:
    """One socket server config's value as an integer.

    Raises:
        InvalidConfigError: an unknown name, not a number (of 32 bits for an INT), or a
            socket.request.max.bytes below 1.
    """
    if name not in SOCKET_CONFIGS:
        raise InvalidConfigError(name, value, f"Unknown broker config name: {name}")
    try:
        n = int(str(value).strip())
    except ValueError:
        raise InvalidConfigError(name, value, "Expected value to be a number") from None
    if BROKER_CONFIGS[name].type == INT and not -(2**31) <= n < 2**31:
        raise InvalidConfigError(name, value, "Expected value to be a 32-bit integer")
    if name == SOCKET_REQUEST_MAX_BYTES and n < 1:
        raise InvalidConfigError(name, value, "Value must be at least 1")
    return n


def broker_configs(overrides: dict[str, str] | None = None) -> dict[str, int]:
    """The socket server configs as integers: defaults, then ``overrides`` (name ->
    string).

    Raises:
        InvalidConfigError: an unknown name, a value that is not a number, a
            socket.request.max.bytes below 1, or a queued.max.request.bytes that is
            positive and smaller than socket.request.max.bytes (KafkaConfig's rule).
    """
    out = {k: int(BROKER_CONFIGS[k].default) for k in SOCKET_CONFIGS}
    for name, value in (overrides or {}).items():
        out[name] = socket_config_value(name, value)
    queued = out[QUEUED_MAX_REQUEST_BYTES]
    if 0 < queued < out[SOCKET_REQUEST_MAX_BYTES]:
        raise InvalidConfigError(QUEUED_MAX_REQUEST_BYTES, str(queued),
                                 f"{QUEUED_MAX_REQUEST_BYTES} must be larger or equal to "
                                 f"{SOCKET_REQUEST_MAX_BYTES}")
    return out
