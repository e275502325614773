"""Topic configs ``kafkalog serve`` knows: Kafka's names, defaults (``LogConfig`` /
``ServerLogConfigs``) and the ConfigType DescribeConfigs reports.

A topic's effective config is the default, then the server's ``--config`` overrides, then
the topic's own (from CreateTopics, kept in the serve state file). The append obeys the
keys :class:`~.storage_adapter.AppendConfig` lists; the others are reported only.
"""

from __future__ import annotations

from ..errors import InvalidConfigError
from .storage_adapter import AppendConfig

# ConfigType of DescribeConfigsResponse (ConfigDef.Type order)
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = range(1, 10)

#: name -> (default, ConfigType)
TOPIC_CONFIGS: dict[str, tuple[str, int]] = {
    "cleanup.policy": ("delete", LIST),
    "compression.type": ("producer", STRING),
    "delete.retention.ms": ("86400000", LONG),
    "file.delete.delay.ms": ("60000", LONG),
    "flush.messages": ("9223372036854775807", LONG),
    "flush.ms": ("9223372036854775807", LONG),
    "index.interval.bytes": ("4096", INT),
    "max.message.bytes": ("1048588", INT),
    "message.timestamp.after.max.ms": ("9223372036854775807", LONG),
    "message.timestamp.before.max.ms": ("9223372036854775807", LONG),
    "message.timestamp.type": ("CreateTime", STRING),
    "min.cleanable.dirty.ratio": ("0.5", DOUBLE),
    "min.compaction.lag.ms": ("0", LONG),
    "min.insync.replicas": ("1", INT),
    "retention.bytes": ("-1", LONG),
    "retention.ms": ("604800000", LONG),
    "segment.bytes": ("1073741824", INT),
    "segment.index.bytes": ("10485760", INT),
    "segment.jitter.ms": ("0", LONG),
    "segment.ms": ("604800000", LONG),
    "unclean.leader.election.enable": ("false", BOOLEAN),
}

_MINIMUM = {"segment.bytes": 14, "segment.index.bytes": 4, "min.insync.replicas": 1,
            "max.message.bytes": 0, "index.interval.bytes": 0}


def validate(name: str, value: str | None) -> str:
    """The value normalised, or :class:`InvalidConfigError` (-> INVALID_CONFIG)."""
    spec = TOPIC_CONFIGS.get(name)
    if spec is None:
        raise InvalidConfigError(name, value, f"Unknown topic config name: {name}")
    if value is None:
        return spec[0]
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
    if name == "message.timestamp.type" and value not in ("CreateTime", "LogAppendTime"):
        raise InvalidConfigError(name, value, "String must be one of: CreateTime, LogAppendTime")
    return value


def effective(*layers: dict[str, str]) -> dict[str, str]:
    out = {k: v for k, (v, _) in TOPIC_CONFIGS.items()}
    for layer in layers:
        out.update(layer)
    return out


def append_config(cfg: dict[str, str]) -> AppendConfig:
    return AppendConfig(
        max_message_bytes=int(cfg["max.message.bytes"]),
        segment_bytes=int(cfg["segment.bytes"]),
        segment_index_bytes=int(cfg["segment.index.bytes"]),
        index_interval_bytes=int(cfg["index.interval.bytes"]),
        log_append_time=cfg["message.timestamp.type"] == "LogAppendTime",
        timestamp_before_max_ms=int(cfg["message.timestamp.before.max.ms"]),
        timestamp_after_max_ms=int(cfg["message.timestamp.after.max.ms"]),
    )
