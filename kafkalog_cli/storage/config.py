"""Topic-level log configuration, after ``LogConfig`` (Kafka's key names and defaults).

Only the keys that decide what the storage layer writes are modelled. The other topic
keys Kafka 4.0 defines (:data:`IGNORED_TOPIC_KEYS`: retention, cleaner, replication and
tiered-storage settings) are accepted and kept in :attr:`LogConfig.extra` without effect
on appends (``cleanup.policy=compact`` only makes keyless records refused, as a broker
does); the retention keys are read from there by :mod:`~kafkalog_cli.storage.retention`.
Broker-level names (``log.segment.bytes``, ``log.roll.ms``, ``log.index.interval.bytes``,
``log.cleanup.policy``, ...) are mapped to the topic keys, in the priority order of
``ServerTopicConfigSynonyms``, as ``LogConfig.fromProps`` does with a broker's defaults. With ``strict=True`` (a topic's own overrides, ``--config``) any other key is
refused as Kafka's ``LogConfig.validateNames`` does ("Unknown topic config name: ...");
without it (a ``server.properties``, where most keys are not about logs) other keys are
kept in ``extra`` and ignored.

Defaults (``LogConfig.java`` / ``ServerLogConfigs``, Kafka 4.0)::

    segment.bytes                     1073741824   >= 14 (LegacyRecord.RECORD_OVERHEAD_V0)
    segment.ms                        604800000    >= 1
    segment.jitter.ms                 0            >= 0
    segment.index.bytes               10485760     >= 4
    index.interval.bytes              4096         >= 0
    max.message.bytes                 1048588      >= 0
    message.timestamp.type            CreateTime   CreateTime | LogAppendTime
    message.timestamp.before.max.ms   Long.MAX     >= 0
    message.timestamp.after.max.ms    3600000      >= 0   (Long.MAX before Kafka 4.0)
    flush.messages                    Long.MAX     >= 1
    flush.ms                          Long.MAX     >= 0
    preallocate                       false
    compression.type                  producer     uncompressed|zstd|lz4|snappy|gzip|producer
    compression.{gzip,lz4,zstd}.level -1 / 9 / 3

Kafka 4's 1 MiB floor on ``segment.bytes`` (KIP-1030) binds brokers; this tool keeps the
older floor of 14 bytes so tests can use tiny segments (a documented difference).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from ..constants import CODEC_GZIP, CODEC_IDS, CODEC_LZ4, CODEC_NONE, CODEC_ZSTD, INT64_MAX
from ..errors import (
    InvalidArgumentError,
    InvalidConfigError,
    UnknownConfigError,
    UnreadableError,
)

LONG_MAX = INT64_MAX
INT_MAX = 2**31 - 1

#: Broker-level names (server.properties) -> topic-level names.
BROKER_KEYS = {
    "log.segment.bytes": "segment.bytes",
    "log.roll.ms": "segment.ms",
    "log.roll.jitter.ms": "segment.jitter.ms",
    "log.index.size.max.bytes": "segment.index.bytes",
    "log.index.interval.bytes": "index.interval.bytes",
    "message.max.bytes": "max.message.bytes",
    "log.message.timestamp.type": "message.timestamp.type",
    "log.message.timestamp.before.max.ms": "message.timestamp.before.max.ms",
    "log.message.timestamp.after.max.ms": "message.timestamp.after.max.ms",
    "log.flush.interval.messages": "flush.messages",
    "log.flush.interval.ms": "flush.ms",
    "log.preallocate": "preallocate",
}
#: Topic keys Kafka 4.0 defines (TopicConfig / LogConfig / QuotaConfig) that change nothing
#: kafkalog writes: accepted, kept in ``LogConfig.extra``.
IGNORED_TOPIC_KEYS = frozenset({
    "cleanup.policy", "delete.retention.ms", "file.delete.delay.ms",
    "follower.replication.throttled.replicas", "leader.replication.throttled.replicas",
    "local.retention.bytes", "local.retention.ms", "max.compaction.lag.ms",
    "message.downconversion.enable", "min.cleanable.dirty.ratio", "min.compaction.lag.ms",
    "min.insync.replicas", "remote.log.copy.disable", "remote.log.delete.on.disable",
    "remote.storage.enable", "retention.bytes", "retention.ms",
    "unclean.leader.election.enable",
})
#: Topic keys Kafka 4.0 removed: refused (strict) with a hint.
REMOVED_TOPIC_KEYS = {
    "message.timestamp.difference.max.ms": "removed in Kafka 4.0: use "
    "message.timestamp.before.max.ms and message.timestamp.after.max.ms",
    "message.format.version": "removed in Kafka 4.0: the v2 record format is always written",
}
#: log.roll.hours / log.roll.jitter.hours, used when the *.ms key is absent.
_HOUR_KEYS = {"log.roll.hours": "segment.ms", "log.roll.jitter.hours": "segment.jitter.ms"}
#: Lowest-priority broker synonyms (ServerTopicConfigSynonyms lists them last): used only
#: when neither the topic key nor the first synonym is given (KafkaConfig.logFlushIntervalMs
#: falls back to log.flush.scheduler.interval.ms).
_FALLBACK_BROKER_KEYS = {"log.flush.scheduler.interval.ms": "flush.ms"}
#: Broker names of unmodelled topic keys (ServerTopicConfigSynonyms): stored in ``extra``
#: under the topic key unless the topic key itself is given.
BROKER_EXTRA_KEYS = {"log.cleanup.policy": "cleanup.policy"}

_GZIP_LEVELS = range(1, 10)  # plus -1 (default)
_LZ4_LEVELS = range(1, 18)
_ZSTD_LEVELS = range(-131072, 23)


def check_topic_config_names(props) -> None:
    """Refuse keys that are neither a topic config Kafka defines nor a mapped broker key
    (``log.segment.bytes``, ``log.roll.hours``, ...).

    Raises:
        UnknownConfigError: naming the first unknown key.
    """
    for k in props:
        if not (k in LogConfig.KEYS or k in IGNORED_TOPIC_KEYS or k in BROKER_KEYS
                or k in _HOUR_KEYS or k in _FALLBACK_BROKER_KEYS or k in BROKER_EXTRA_KEYS):
            raise UnknownConfigError(k, REMOVED_TOPIC_KEYS.get(k))


def _int(key: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool):
        raise InvalidConfigError(key, value, "expected a number")
    if isinstance(value, int):
        v = value
    else:
        try:
            v = int(str(value).strip())
        except ValueError:
            kind = "int" if hi == INT_MAX else "long"
            raise InvalidConfigError(key, value, f"expected a {kind}") from None
    if v > hi:
        raise InvalidConfigError(key, value, f"Value must be at most {hi}")
    if v < lo:
        raise InvalidConfigError(key, value, f"Value must be at least {lo}")
    return v


def _bool(key: str, value) -> bool:
    if isinstance(value, bool):
        return value
    s = str(value).strip().lower()
    if s in ("true", "false"):
        return s == "true"
    raise InvalidConfigError(key, value, "Expected value to be either true or false")


def _choice(key: str, value, allowed: tuple[str, ...]) -> str:
    s = str(value).strip()
    if s not in allowed:
        raise InvalidConfigError(key, value, f"String must be one of: {', '.join(allowed)}")
    return s


@dataclass(frozen=True)
class LogConfig:
    """A topic's storage configuration (``LogConfig``); sizes in bytes, times in ms.

    Build with :meth:`from_properties` (validates) or the constructor (trusted values;
    call :meth:`validate`). Field names are the Kafka keys with dots as underscores.
    """

    segment_bytes: int = 1073741824
    segment_ms: int = 604800000
    segment_jitter_ms: int = 0
    segment_index_bytes: int = 10485760
    index_interval_bytes: int = 4096
    max_message_bytes: int = 1048588
    message_timestamp_type: str = "CreateTime"
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = 3600000
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    preallocate: bool = False
    compression_type: str = "producer"
    compression_gzip_level: int = -1
    compression_lz4_level: int = 9
    compression_zstd_level: int = 3
    extra: dict = field(default_factory=dict, compare=False)

    #: Kafka key -> (field, parser)
    KEYS = {
        "segment.bytes": ("segment_bytes", lambda k, v: _int(k, v, 14, INT_MAX)),
        "segment.ms": ("segment_ms", lambda k, v: _int(k, v, 1, LONG_MAX)),
        "segment.jitter.ms": ("segment_jitter_ms", lambda k, v: _int(k, v, 0, LONG_MAX)),
        "segment.index.bytes": ("segment_index_bytes", lambda k, v: _int(k, v, 4, INT_MAX)),
        "index.interval.bytes": ("index_interval_bytes", lambda k, v: _int(k, v, 0, INT_MAX)),
        "max.message.bytes": ("max_message_bytes", lambda k, v: _int(k, v, 0, INT_MAX)),
        "message.timestamp.type": ("message_timestamp_type",
                                   lambda k, v: _choice(k, v, ("CreateTime", "LogAppendTime"))),
        "message.timestamp.before.max.ms": ("message_timestamp_before_max_ms",
                                            lambda k, v: _int(k, v, 0, LONG_MAX)),
        "message.timestamp.after.max.ms": ("message_timestamp_after_max_ms",
                                           lambda k, v: _int(k, v, 0, LONG_MAX)),
        "flush.messages": ("flush_messages", lambda k, v: _int(k, v, 1, LONG_MAX)),
        "flush.ms": ("flush_ms", lambda k, v: _int(k, v, 0, LONG_MAX)),
        "preallocate": ("preallocate", _bool),
        "compression.type": ("compression_type", lambda k, v: _choice(
            k, v, ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"))),
        "compression.gzip.level": ("compression_gzip_level", lambda k, v: _level(
            k, v, _GZIP_LEVELS, allow_default=True)),
        "compression.lz4.level": ("compression_lz4_level", lambda k, v: _level(
            k, v, _LZ4_LEVELS)),
        "compression.zstd.level": ("compression_zstd_level", lambda k, v: _level(
            k, v, _ZSTD_LEVELS)),
    }

    @classmethod
    def from_properties(cls, props: dict, base: LogConfig | None = None, *,
                        strict: bool = False) -> LogConfig:
        """A LogConfig from ``{key: value}`` (strings as in a properties file, or typed).

        Topic keys win over broker keys (``segment.bytes`` over ``log.segment.bytes``);
        ``log.roll.hours`` applies when no ms key is given, ``log.flush.scheduler.interval.ms``
        when neither ``flush.ms`` nor ``log.flush.interval.ms`` is. ``log.cleanup.policy``
        becomes ``extra["cleanup.policy"]`` unless ``cleanup.policy`` is given. Other keys
        go to ``extra``; with ``strict`` only :data:`IGNORED_TOPIC_KEYS` may (see the
        module docstring).

        Raises:
            InvalidConfigError: a value is malformed or out of range; ``key`` names it.
            UnknownConfigError: ``strict`` and a key Kafka does not define for topics.
        """
        if strict:
            check_topic_config_names(props)
        values: dict = {}
        extra = dict(base.extra) if base else {}
        for k, v in props.items():
            # ServerTopicConfigSynonyms: each topic key's broker synonyms, in priority order
            if k in _HOUR_KEYS:
                topic_key = _HOUR_KEYS[k]
                hours = _int(k, v, 0 if "jitter" in k else 1, INT_MAX)
                values.setdefault(("fallback", topic_key), (k, hours * 3600000))
            elif k in _FALLBACK_BROKER_KEYS:
                values.setdefault(("fallback", _FALLBACK_BROKER_KEYS[k]), (k, v))
            elif k in BROKER_KEYS:
                values.setdefault(("broker", BROKER_KEYS[k]), (k, v))
            elif k in cls.KEYS:
                values[("topic", k)] = (k, v)
            elif k in BROKER_EXTRA_KEYS:
                if BROKER_EXTRA_KEYS[k] not in props:
                    extra[BROKER_EXTRA_KEYS[k]] = v
            else:
                extra[k] = v
        out = {}
        for prio in ("fallback", "broker", "topic"):
            for (p, topic_key), (orig_key, v) in values.items():
                if p != prio:
                    continue
                name, parse = cls.KEYS[topic_key]
                out[name] = parse(orig_key, v)
        cfg = replace(base, **out, extra=extra) if base else cls(**out, extra=extra)
        cfg.validate()
        return cfg

    def validate(self) -> None:
        """Re-check every field (constructor values are trusted otherwise).

        Raises:
            InvalidConfigError: naming the first bad key.
        """
        for key, (name, parse) in self.KEYS.items():
            parse(key, getattr(self, name))

    def to_properties(self) -> dict[str, str]:
        """The modelled keys as Kafka names -> strings (``true``/``false`` for booleans)."""
        out = {}
        for key, (name, _) in self.KEYS.items():
            v = getattr(self, name)
            out[key] = ("true" if v else "false") if isinstance(v, bool) else str(v)
        return out

    # -- derived values -------------------------------------------------------------------

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == "LogAppendTime"

    def target_codec(self, source_codec: int) -> int:
        """BrokerCompressionType.targetCompression: the producer's codec for ``producer``,
        else the configured one (``uncompressed`` is codec 0)."""
        if self.compression_type == "producer":
            return source_codec
        if self.compression_type == "uncompressed":
            return CODEC_NONE
        return CODEC_IDS[self.compression_type]

    def compression_level(self, codec: int) -> int | None:
        """The configured level for ``codec`` (None: the codec's default)."""
        if codec == CODEC_GZIP:
            return None if self.compression_gzip_level == -1 else self.compression_gzip_level
        if codec == CODEC_LZ4:
            return self.compression_lz4_level
        if codec == CODEC_ZSTD:
            return self.compression_zstd_level
        return None


def _level(key, value, allowed: range, allow_default: bool = False) -> int:
    v = _int(key, value, -(2**31), INT_MAX)
    if v in allowed or (allow_default and v == -1):
        return v
    raise InvalidConfigError(key, value,
                             f"Value must be between {allowed.start} and {allowed.stop - 1}")


def parse_properties_text(text: str, *, file=None) -> dict[str, str]:
    """The entries of a java.util.Properties file as ``Properties.load`` reads it (``text``
    decoded as ISO-8859-1, as load(InputStream) does): natural lines end at ``\\n``,
    ``\\r`` or ``\\r\\n``; leading whitespace (space, tab, form feed) is skipped; a line
    whose first non-blank character is ``#`` or ``!`` is a comment; a line ending in an odd
    number of backslashes continues on the next (the backslash, the line break and the next
    line's leading whitespace dropped); the key ends at the first unescaped ``=``, ``:`` or
    whitespace, followed by optional whitespace, at most one ``=``/``:`` and more
    whitespace; escapes ``\\t \\n \\r \\f \\uXXXX`` and ``\\`` before any other
    character (that character). A later duplicate key wins.

    Raises:
        InvalidArgumentError: a malformed ``\\uXXXX`` escape (IllegalArgumentException).
    """
    out = {}
    for line in _properties_lines(text):
        # Properties.load0: the key ends at the first unescaped separator or whitespace
        n = len(line)
        key_len, value_start, has_sep, bs = 0, n, False, False
        while key_len < n:
            c = line[key_len]
            if c in "=:" and not bs:
                value_start, has_sep = key_len + 1, True
                break
            if c in " \t\f" and not bs:
                value_start = key_len + 1
                break
            bs = (not bs) if c == "\\" else False
            key_len += 1
        while value_start < n:
            c = line[value_start]
            if c not in " \t\f":
                if has_sep or c not in "=:":
                    break
                has_sep = True
            value_start += 1
        out[_load_convert(line[:key_len], file)] = _load_convert(line[value_start:], file)
    return out


def _properties_lines(text: str):
    """The logical lines of ``text``, as Properties.LineReader.readLine returns them."""
    i, n = 0, len(text)
    while True:
        buf: list[str] = []
        skip_ws, appended_line_begin, bs = True, False, False
        while True:
            if i >= n:  # EOF: a trailing odd backslash is dropped
                if buf:
                    yield "".join(buf[:-1] if bs else buf)
                return
            c = text[i]
            i += 1
            if skip_ws:
                if c in " \t\f" or (not appended_line_begin and c in "\r\n"):
                    continue
                skip_ws = appended_line_begin = False
            if not buf and c in "#!":  # a comment (only at the start of a logical line)
                while i < n and text[i] not in "\r\n":
                    i += 1
                if i >= n:
                    return
                i += 1
                skip_ws = True
                continue
            if c not in "\r\n":
                buf.append(c)
                bs = (not bs) if c == "\\" else False
                continue
            if not buf:
                skip_ws = True
                continue
            if i >= n:
                yield "".join(buf[:-1] if bs else buf)
                return
            if not bs:
                yield "".join(buf)
                break
            # continuation: drop the backslash and the next line's leading whitespace
            buf.pop()
            skip_ws = appended_line_begin = True
            bs = False
            if c == "\r" and text[i] == "\n":
                i += 1


_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}
_HEX = frozenset("0123456789abcdefABCDEF")


def _load_convert(s: str, file) -> str:
    """Properties.loadConvert: resolve backslash escapes."""
    if "\\" not in s:
        return s
    out = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        i += 1
        if c != "\\" or i >= n:
            out.append(c)
            continue
        c = s[i]
        i += 1
        if c == "u":
            digits = s[i:i + 4]
            if len(digits) < 4 or not set(digits) <= _HEX:
                raise InvalidArgumentError("Malformed \\uxxxx encoding.", file=file)
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(c, c))
    r = "".join(out)
    if any("\ud800" <= ch <= "\udfff" for ch in r):
        # Java strings are UTF-16: a \\uD83D\\uDE00 pair is one character
        r = r.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return r


def parse_config_overrides(items: list[str]) -> dict[str, str]:
    """``["key=value", ...]`` (``--config``) as a dict.

    Raises:
        InvalidConfigError: an item without ``=``.
    """
    out = {}
    for item in items:
        if "=" not in item:
            raise InvalidConfigError(item, item, "expected key=value")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


FIELD_NAMES = tuple(f.name for f in fields(LogConfig))


#: the most bytes of a ``--config-file`` read (a server.properties is a few kilobytes)
MAX_CONFIG_FILE_BYTES = 1 << 20


def topic_config(config_file=None, overrides: list[str] = ()) -> LogConfig:
    """The LogConfig of ``produce``: a server.properties-style ``config_file`` (``log.*``
    and topic keys; other broker keys ignored), then ``overrides`` (``--config
    key=value``, topic config names only) over it.

    Raises:
        UnreadableError: ``config_file`` cannot be read.
        UnknownConfigError / InvalidConfigError: an unknown key or a bad value.
    """
    props: dict = {}
    if config_file is not None:
        try:
            # the user's own file: a pipe (``<(...)``) is fine, read no further than a
            # server.properties could be
            with open(config_file, "rb") as f:
                raw = f.read(MAX_CONFIG_FILE_BYTES + 1)
        except OSError as e:
            raise UnreadableError(e.strerror or str(e), file=config_file) from e
        if len(raw) > MAX_CONFIG_FILE_BYTES:
            raise UnreadableError(f"more than the {MAX_CONFIG_FILE_BYTES} bytes kafkalog "
                                  "reads of a config file", file=config_file)
        props.update(parse_properties_text(raw.decode("latin-1"), file=config_file))
    extra = parse_config_overrides(list(overrides))
    check_topic_config_names(extra)  # a server.properties may hold any broker key
    props.update(extra)
    return LogConfig.from_properties(props)
