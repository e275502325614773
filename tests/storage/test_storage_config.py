import pytest

from kafkalog_cli.cli.exit_codes import for_error
from kafkalog_cli.errors import InvalidConfigError
from kafkalog_cli.storage.config import (
    LogConfig,
    parse_config_overrides,
    parse_properties_text,
)


def test_defaults_are_kafkas():
    c = LogConfig()
    assert c.segment_bytes == 1073741824
    assert c.segment_ms == 604800000
    assert c.segment_jitter_ms == 0
    assert c.index_interval_bytes == 4096
    assert c.segment_index_bytes == 10485760
    assert c.max_message_bytes == 1048588
    assert c.message_timestamp_type == "CreateTime"
    assert c.flush_messages == 2**63 - 1 and c.flush_ms == 2**63 - 1
    assert c.preallocate is False
    assert c.compression_type == "producer"


def test_from_properties_topic_and_broker_keys():
    c = LogConfig.from_properties({"log.segment.bytes": "2048", "segment.ms": "10",
                                   "log.roll.hours": "1", "preallocate": "true",
                                   "cleanup.policy": "compact"})
    assert c.segment_bytes == 2048
    assert c.segment_ms == 10  # the topic key wins over log.roll.hours
    assert c.preallocate is True
    assert c.extra["cleanup.policy"] == "compact"
    assert LogConfig.from_properties({"log.roll.hours": "2"}).segment_ms == 7200000


@pytest.mark.parametrize("key,value", [
    ("segment.bytes", "13"), ("segment.bytes", "abc"), ("segment.ms", "0"),
    ("segment.index.bytes", "3"), ("index.interval.bytes", "-1"),
    ("message.timestamp.type", "Whenever"), ("flush.messages", "0"), ("preallocate", "yes"),
    ("compression.type", "brotli"), ("compression.zstd.level", "99"),
    ("segment.bytes", str(2**31)),
])
def test_bad_values_name_the_key(key, value):
    with pytest.raises(InvalidConfigError) as e:
        LogConfig.from_properties({key: value})
    assert e.value.key == key
    assert key in str(e.value)


def test_small_segments_allowed():
    assert LogConfig.from_properties({"segment.bytes": "14"}).segment_bytes == 14


def test_properties_text_and_overrides():
    text = "# c\n! c\nlog.segment.bytes=100\nsegment.ms : 5\n\n"
    assert parse_properties_text(text) == {"log.segment.bytes": "100", "segment.ms": "5"}
    assert parse_config_overrides(["a=b=c"]) == {"a": "b=c"}
    with pytest.raises(InvalidConfigError):
        parse_config_overrides(["novalue"])


def test_target_codec():
    assert LogConfig().target_codec(3) == 3
    assert LogConfig(compression_type="uncompressed").target_codec(3) == 0
    assert LogConfig(compression_type="zstd").target_codec(0) == 4


def test_strict_refuses_unknown_topic_keys_with_kafkas_wording():
    from kafkalog_cli.errors import UnknownConfigError

    with pytest.raises(UnknownConfigError) as e:
        LogConfig.from_properties({"segment.bytes": "100", "nosuch.key": "1"}, strict=True)
    assert str(e.value) == "Unknown topic config name: nosuch.key"
    assert e.value.key == "nosuch.key" and for_error(e.value) == 2
    with pytest.raises(UnknownConfigError, match="removed in Kafka 4.0"):
        LogConfig.from_properties({"message.timestamp.difference.max.ms": "5"}, strict=True)
    with pytest.raises(UnknownConfigError):
        LogConfig.from_properties({"num.partitions": "3"}, strict=True)


def test_strict_accepts_every_kafka_topic_key_and_mapped_broker_keys():
    from kafkalog_cli.storage.config import IGNORED_TOPIC_KEYS

    ignored = {k: "1" for k in IGNORED_TOPIC_KEYS}
    c = LogConfig.from_properties({**ignored, "log.segment.bytes": "2048",
                                   "log.roll.hours": "1", "segment.ms": "10"}, strict=True)
    assert c.segment_bytes == 2048 and c.segment_ms == 10
    assert c.extra == ignored
    assert LogConfig.from_properties(LogConfig().to_properties(), strict=True) == LogConfig()


def test_lenient_keeps_broker_file_keys():
    c = LogConfig.from_properties({"num.partitions": "3", "log.dirs": "/x"})
    assert c == LogConfig() and c.extra["num.partitions"] == "3"


def test_broker_synonyms_cleanup_policy_and_flush_scheduler():
    """ServerTopicConfigSynonyms: log.cleanup.policy is cleanup.policy's broker name;
    flush.ms takes log.flush.interval.ms, else log.flush.scheduler.interval.ms."""
    c = LogConfig.from_properties({"log.cleanup.policy": "compact"})
    assert c.extra["cleanup.policy"] == "compact"
    for props in ({"log.cleanup.policy": "compact", "cleanup.policy": "delete"},
                  {"cleanup.policy": "delete", "log.cleanup.policy": "compact"}):
        assert LogConfig.from_properties(props).extra["cleanup.policy"] == "delete"
    assert LogConfig.from_properties({"log.flush.scheduler.interval.ms": "1000"}).flush_ms \
        == 1000
    for props in ({"log.flush.scheduler.interval.ms": "1000", "log.flush.interval.ms": "7"},
                  {"log.flush.interval.ms": "7", "log.flush.scheduler.interval.ms": "1000"}):
        assert LogConfig.from_properties(props).flush_ms == 7
    assert LogConfig.from_properties({"log.flush.scheduler.interval.ms": "1000",
                                      "flush.ms": "3"}).flush_ms == 3
    with pytest.raises(InvalidConfigError) as e:
        LogConfig.from_properties({"log.flush.scheduler.interval.ms": "x"})
    assert e.value.key == "log.flush.scheduler.interval.ms"


def test_log_cleanup_policy_makes_keyless_records_refused():
    from kafkalog_cli.errors import InvalidRecordError
    from kafkalog_cli.format.builder import build_batch
    from kafkalog_cli.storage.validator import validate

    cfg = LogConfig.from_properties({"log.cleanup.policy": "compact"})
    now = 1_700_000_000_000
    with pytest.raises(InvalidRecordError, match="without key"):
        validate(build_batch([(now, None, b"v", ())]), offset=0, now=now, config=cfg,
                 partition_leader_epoch=0)


# -- java.util.Properties.load, checked against the JDK ------------------------------------

_JAVA_DUMP = __import__("pathlib").Path(__file__).parent / "java" / "PropertiesDump.java"

_PROPERTIES_CASES = [
    "log.segment.bytes=1024\\\n    576\n",  # continuation: next line's indent dropped
    "a=b\\\r\n  c\r\nd:e\rf g\n",  # \r\n and lone \r line ends
    "log.segment.bytes 100\n",  # whitespace separator
    "k \t = : v\n",  # whitespace, one '=', then ':' is part of the value
    "k::v\nk2==v\nk3 v w\n",
    "  # comment\n\t! comment\n#x\\\nnot.a.comment=1\n",  # a comment does not continue
    "a\\=b=c\na\\ b=c\n\\#k=v\n",  # escaped separators and '#'
    "u=\\u0041\\u00e9\\ud83d\\ude00\\ud800\n",  # \uXXXX, a surrogate pair, a lone one
    "e=\\t\\n\\r\\f\\x\\\\\\q\n",  # escapes; '\' before anything else is that char
    "x=a\\\n\n y=b\n",  # an empty continuation line ends the value
    "x=a\\\\\ny=b\\\\\\\nz\n",  # even backslashes do not continue, odd ones do
    "\\\n#c\n",  # a continuation then '#' at the start of the logical line
    "\\\n",
    "\\",
    "k=v\\",  # a trailing backslash at EOF is dropped
    "k\n",  # no value
    "=v\n:w\n",  # empty key
    "dup=1\ndup=2\n",
    "f\x0cg=h\x0c\n\x0ci=\x85\xe9\x0b\n",  # form feed is whitespace; NEL, VT are not
    "bad=\\u12\n",  # malformed \uXXXX
    "bad=\\u12g4\n",
    "bad=\\u\n",
]


def _units(s: str) -> str:
    return "x" + s.encode("utf-16-be", "surrogatepass").hex()


def _python_view(data: bytes):
    from kafkalog_cli.errors import InvalidArgumentError

    try:
        d = parse_properties_text(data.decode("latin-1"))
    except InvalidArgumentError as e:
        return "ERROR " + e.message
    return {_units(k): _units(v) for k, v in d.items()}


def _java_views(tmp_path, cases: list[bytes]) -> list:
    import shutil
    import subprocess

    if not (shutil.which("java") and shutil.which("javac")):
        pytest.skip("no JDK (java/javac)")
    paths = []
    for i, data in enumerate(cases):
        p = tmp_path / f"{i}.properties"
        p.write_bytes(data)
        paths.append(str(p))
    out = subprocess.run(["java", str(_JAVA_DUMP), *paths], capture_output=True, text=True,
                         check=True, timeout=300).stdout
    views: list = []
    for line in out.splitlines():
        if line.startswith("FILE "):
            views.append({})
        elif line.startswith("ERROR "):
            views[-1] = line
        else:
            k, v = line.split(" ")
            views[-1][k] = v
    assert len(views) == len(cases)
    return views


def _random_properties(rng) -> bytes:
    pieces = ["a", "k", "=", ":", " ", "\t", "\x0c", "\n", "\r", "\r\n", "\\", "\\\\", "#",
              "!", "\\u0041", "\\u00", "\\ud83d", "u", "0", "F", "g", "\xe9", "\x85", "\x0b",
              "\\\n", "\\\r\n", "   ", "key.name", "=value"]
    return "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 40))).encode("latin-1")


def test_properties_match_the_jdk(tmp_path):
    import random

    rng = random.Random(20240611)
    cases = [c.encode("latin-1") for c in _PROPERTIES_CASES]
    cases += [_random_properties(rng) for _ in range(600)]
    for data, java in zip(cases, _java_views(tmp_path, cases), strict=True):
        assert _python_view(data) == java, data


def test_properties_continuation_and_separators():
    text = "log.segment.bytes=1024\\\n    576\nlog.roll.ms 5\nk\\:x : v\\u0041\n"
    assert parse_properties_text(text) == {"log.segment.bytes": "1024576",
                                           "log.roll.ms": "5", "k:x": "vA"}
