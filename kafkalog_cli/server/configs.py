"""Topic configs ``kafkalog serve`` knows: Kafka's names, defaults (``LogConfig`` /
``ServerLogConfigs``, Kafka 4.0) and the ConfigType DescribeConfigs reports; and the few
broker (socket server) configs it obeys, :data:`BROKER_CONFIGS`.

A topic's effective config is the default, then the server's ``--config`` overrides, then
the topic's own (from CreateTopics, kept in the serve state file). The append engine obeys
what :class:`~kafkalog_cli.storage.config.LogConfig` models (segment.bytes, segment.ms,
max.message.bytes, message.timestamp.*, index.interval.bytes, flush.*, compression.*,
preallocate, and cleanup.policy=compact's key check); :func:`log_config` builds it. The
others (retention, min.insync.replicas, ...) are reported, and min.insync.replicas is
checked by Produce; nothing deletes old segments.
"""

from __future__ import annotations

from ..errors import InvalidConfigError
from ..storage.config import LogConfig

# ConfigType of DescribeConfigsResponse (ConfigDef.Type order)
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = range(1, 10)

#: name -> (default, ConfigType)
TOPIC_CONFIGS: dict[str, tuple[str, int]] = {
    "cleanup.policy": ("delete", LIST),
    "compression.gzip.level": ("-1", INT),
    "compression.lz4.level": ("9", INT),
    "compression.type": ("producer", STRING),
    "compression.zstd.level": ("3", INT),
    "delete.retention.ms": ("86400000", LONG),
    "file.delete.delay.ms": ("60000", LONG),
    "flush.messages": ("9223372036854775807", LONG),
    "flush.ms": ("9223372036854775807", LONG),
    "index.interval.bytes": ("4096", INT),
    "max.message.bytes": ("1048588", INT),
    "message.timestamp.after.max.ms": ("3600000", LONG),
    "message.timestamp.before.max.ms": ("9223372036854775807", LONG),
    "message.timestamp.type": ("CreateTime", STRING),
    "min.cleanable.dirty.ratio": ("0.5", DOUBLE),
    "min.compaction.lag.ms": ("0", LONG),
    "min.insync.replicas": ("1", INT),
    "preallocate": ("false", BOOLEAN),
    "retention.bytes": ("-1", LONG),
    "retention.ms": ("604800000", LONG),
    "segment.bytes": ("1073741824", INT),
    "segment.index.bytes": ("10485760", INT),
    "segment.jitter.ms": ("0", LONG),
    "segment.ms": ("604800000", LONG),
    "unclean.leader.election.enable": ("false", BOOLEAN),
}

_MINIMUM = {"min.insync.replicas": 1}


def validate(name: str, value: str | None) -> str:
    """The value normalised, or :class:`InvalidConfigError` (-> INVALID_CONFIG). Keys the
    engine models are checked by :class:`LogConfig`'s own rules."""
    spec = TOPIC_CONFIGS.get(name)
    if spec is None:
        raise InvalidConfigError(name, value, f"Unknown topic config name: {name}")
    if value is None:
        return spec[0]
    if name in LogConfig.KEYS:
        parsed = LogConfig.KEYS[name][1](name, value)
        return ("true" if parsed else "false") if isinstance(parsed, bool) else str(parsed)
    kind = spec[1]
    if kind in (INT, LONG, SHORT):
        try:
            n = int(value.strip())
        except ValueError:
            raise InvalidConfigError(name, value, "Expected value to be a number") from None
        if n < _MINIMUM.get(name, -(2**63)):
            raise InvalidConfigError(name, value, f"Value must be at least {_MINIMUM[name]}")
        return str(n)
    if kind == BOOLEAN:
        if value.strip().lower() not in ("true", "false"):
            raise InvalidConfigError(name, value, "Expected value to be either true or false")
        return value.strip().lower()
    return value


def effective(*layers: dict[str, str]) -> dict[str, str]:
    out = {k: v for k, (v, _) in TOPIC_CONFIGS.items()}
    for layer in layers:
        out.update(layer)
    return out


def log_config(cfg: dict[str, str]) -> LogConfig:
    """The engine's LogConfig of an effective topic config (unmodelled keys in ``extra``).

    Raises:
        InvalidConfigError: a value LogConfig rejects (validated on the way in already).
    """
    return LogConfig.from_properties(cfg)


# -- broker configs (SocketServerConfigs) -------------------------------------------------

#: socket.request.max.bytes: the largest request frame (larger: the connection is closed)
SOCKET_REQUEST_MAX_BYTES = "socket.request.max.bytes"
#: queued.max.request.bytes: request bytes read and not yet handled, over all connections
QUEUED_MAX_REQUEST_BYTES = "queued.max.request.bytes"
#: connections.max.idle.ms: a connection with no byte read or written for this long is
#: closed (a negative value: never)
CONNECTIONS_MAX_IDLE_MS = "connections.max.idle.ms"

#: name -> (default, ConfigType). The defaults are the broker's except
#: queued.max.request.bytes: the broker's -1 (no bound) leaves memory to the number of
#: connections, so serve bounds it at 256 MiB (-1 or 0 still means no bound).
BROKER_CONFIGS: dict[str, tuple[str, int]] = {
    SOCKET_REQUEST_MAX_BYTES: ("104857600", INT),
    QUEUED_MAX_REQUEST_BYTES: ("268435456", LONG),
    CONNECTIONS_MAX_IDLE_MS: ("600000", LONG),
}


def is_broker_config(name: str) -> bool:
    return name in BROKER_CONFIGS


def validate_broker(name: str, value) -> int:
    """One broker config's value as an integer.

    Raises:
        InvalidConfigError: an unknown name, not a number (of 32 bits for an INT), or a
            socket.request.max.bytes below 1.
    """
    if name not in BROKER_CONFIGS:
        raise InvalidConfigError(name, value, f"Unknown broker config name: {name}")
    try:
        n = int(str(value).strip())
    except ValueError:
        raise InvalidConfigError(name, value, "Expected value to be a number") from None
    if BROKER_CONFIGS[name][1] == INT and not -(2**31) <= n < 2**31:
        raise InvalidConfigError(name, value, "Expected value to be a 32-bit integer")
    if name == SOCKET_REQUEST_MAX_BYTES and n < 1:
        raise InvalidConfigError(name, value, "Value must be at least 1")
    return n


def broker_configs(overrides: dict[str, str] | None = None) -> dict[str, int]:
    """The broker configs as integers: defaults, then ``overrides`` (name -> string).

    Raises:
        InvalidConfigError: an unknown name, a value that is not a number, a
            socket.request.max.bytes below 1, or a queued.max.request.bytes that is
            positive and smaller than socket.request.max.bytes (KafkaConfig's rule).
    """
    out = {k: int(v) for k, (v, _) in BROKER_CONFIGS.items()}
    for name, value in (overrides or {}).items():
        out[name] = validate_broker(name, value)
    queued = out[QUEUED_MAX_REQUEST_BYTES]
    if 0 < queued < out[SOCKET_REQUEST_MAX_BYTES]:
        raise InvalidConfigError(QUEUED_MAX_REQUEST_BYTES, str(queued),
                                 f"{QUEUED_MAX_REQUEST_BYTES} must be larger or equal to "
                                 f"{SOCKET_REQUEST_MAX_BYTES}")
    return out
