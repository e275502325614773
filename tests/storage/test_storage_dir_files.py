"""The small files of log and partition directories are read as the broker reads them
(issue 16, case 6): whatever the broker refuses is a typed error naming the file and line,
never a traceback; whatever it accepts parses.

Expectations follow Kafka's readers (apache/kafka 1eb7644):
``CheckpointFile.CheckpointReadBuffer.read`` (``BufferedReader.readLine`` over strict
UTF-8, ``Integer.parseInt`` of the version and count lines, an empty file or one ending
after the version line has no entries, entries split by ``Pattern.split("\\s+")``, whose
leading empty field makes a line starting with a space malformed), the formatters of
``OffsetCheckpointFile`` (3 fields: topic, ``Integer.parseInt``, ``Long.parseLong``) and
``LeaderEpochCheckpointFile`` (2 fields: ``Integer.parseInt``, ``Long.parseLong``),
``PartitionMetadataReadBuffer`` (two lines split on ``":\\s+"``, version >= 0,
``Uuid.fromString``, not the zero UUID), ``MetaProperties.Builder`` and
``FileQuorumStateStore.readStateFromFile``. The real corpus (written by brokers) must
all parse."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalog_cli.errors import CorruptCheckpointError
from kafkalog_cli.storage.checkpoints import read_leader_epoch_checkpoint, read_offset_checkpoint
from kafkalog_cli.storage.dir_files import (
    log_dir_file_problems,
    partition_file_problems,
    read_meta_properties,
    read_partition_metadata,
    read_quorum_state,
)
from kafkalog_cli.storage.files import TopicPartition, parse_partition_dir_name

TOPIC_ID = "tf4OoFQIT0OIozsfpWKTaQ"  # a real one, from the corpus


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("data, line", [
    (b"0\n1\n\xff\xfe 0\n", 3),           # not UTF-8 (MalformedInputException)
    (b"\xc3\n", 1),                        # a truncated UTF-8 sequence
    (b"0\n1\n1 x\n", 3),                   # Long.parseLong("x")
    (b"0\n1\n1 0 5\n", 3),                 # three fields
    (b"0\n1\n 1 0\n", 3),                  # Pattern.split keeps the leading empty field
    (b"0\n1\n2147483648 0\n", 3),          # the epoch is an int
    (b"0\n1\n1 9223372036854775808\n", 3),  # the offset is a long
    (b"0\n1\n1 0\n\n", 4),                 # an empty line is an entry of one field
    (b"x\n", 1), (b" 0\n0\n", 1), (b"1\n0\n", 1),  # the version line
    (b"0\n\n", 2), (b"0\n-1\n", 2), (b"0\n1_0\n", 2),  # the count line
    (b"0\n2\n1 0\n", None),                # fewer entries than the count
    (b"0\n0\n1 0\n", None),                # more
])
def test_leader_epoch_checkpoint_refused_as_kafka_refuses(tmp_path, data, line):
    p = _write(tmp_path, "leader-epoch-checkpoint", data)
    with pytest.raises(CorruptCheckpointError) as ex:
        read_leader_epoch_checkpoint(p)
    e = ex.value
    assert e.file == str(p) and e.line == line
    assert str(e).startswith(str(p) + (f" line {line}: " if line else ": "))


@pytest.mark.parametrize("data, entries", [
    (b"", []), (b"0\n", []), (b"0\n0\n", []),    # no first or second line: no entries
    (b"0\n1\n3 7", [(3, 7)]),                   # no final line break
    (b"0\r\n1\r\n3 7\r\n", [(3, 7)]),           # readLine ends lines at \r\n and \r
    (b"0\r1\r3 7\r", [(3, 7)]),
    (b"0\n1\n3\t7\n", [(3, 7)]), (b"0\n1\n3 7  \n", [(3, 7)]),  # trailing fields dropped
    (b"0\n2\n+3 -1\n4 12\n", [(3, -1), (4, 12)]),  # parseInt takes a sign
])
def test_leader_epoch_checkpoint_accepted_as_kafka_accepts(tmp_path, data, entries):
    assert read_leader_epoch_checkpoint(_write(tmp_path, "e", data)) == entries


@pytest.mark.parametrize("data, line", [
    (b"0\n1\nt 0\n", 3), (b"0\n1\nt x 5\n", 3), (b"0\n1\nt 0 5 6\n", 3),
    (b"0\n1\nt 2147483648 5\n", 3), (b"0\n1\nt\xff 0 5\n", 3), (b"0\n2\nt 0 5\n", None),
])
def test_offset_checkpoint_refused_as_kafka_refuses(tmp_path, data, line):
    p = _write(tmp_path, "recovery-point-offset-checkpoint", data)
    with pytest.raises(CorruptCheckpointError) as ex:
        read_offset_checkpoint(p)
    assert ex.value.line == line and ex.value.file == str(p)


def test_offset_checkpoint_accepted(tmp_path):
    p = _write(tmp_path, "c", b"0\n2\nt.x 3 9\n__consumer_offsets 12 -1\n")
    assert read_offset_checkpoint(p) == {TopicPartition("t.x", 3): 9,
                                         TopicPartition("__consumer_offsets", 12): -1}


@pytest.mark.parametrize("data, line", [
    (b"version: \ntopic_id: " + TOPIC_ID.encode(), 1),   # an empty version (the issue)
    (b"", 1), (b"version: 0\n", 2),                      # missing lines
    (b"version:0\ntopic_id: " + TOPIC_ID.encode(), 1),   # ":\s+" needs a space
    (b"version: x\ntopic_id: " + TOPIC_ID.encode(), 1),
    (b"version: -1\ntopic_id: " + TOPIC_ID.encode(), 1),
    (b"version: 0\ntopic_id: ", 2), (b"version: 0\ntopic_id: abc", 2),
    (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", 2),  # the zero UUID
    (b"version: 0\ntopic_id: " + b"A" * 25, 2),            # longer than 24 characters
    (b"version: 0\ntopic_id: tf4OoFQIT0OIozsfpWKT+Q", 2),  # not the URL alphabet
    (b"version: 0\ntopic_id: \xfftf4OoFQIT0OIozsfpWKTaQ", 2),
])
def test_partition_metadata_refused_as_kafka_refuses(tmp_path, data, line):
    _write(tmp_path, "partition.metadata", data)
    with pytest.raises(CorruptCheckpointError) as ex:
        read_partition_metadata(tmp_path)
    assert ex.value.line == line
    assert ex.value.file == str(tmp_path / "partition.metadata")


@pytest.mark.parametrize("data, version", [
    (b"version: 0\ntopic_id: " + TOPIC_ID.encode(), 0),
    (b"version: 1\ntopic_id: " + TOPIC_ID.encode() + b"\n", 1),  # >= 0: a later version
    (b"v:  0\nid:\t" + TOPIC_ID.encode(), 0),                      # the keys are not read
    (b"version: 0\r\ntopic_id: " + TOPIC_ID.encode() + b"==", 0),  # padding is allowed
])
def test_partition_metadata_accepted(tmp_path, data, version):
    _write(tmp_path, "partition.metadata", data)
    assert read_partition_metadata(tmp_path) == {"version": version,
                                                 "topic_id": data.split()[-1].decode()}


@pytest.mark.parametrize("text, line", [
    ("version=2\nnode.id=1\n", 1), ("version=x\n", 1),
    ("version=1\ncluster.id=c\nnode.id=one\n", 3), ("version=1\ncluster.id=c\n", None),
    ("version=0\nbroker.id=1.5\n", 2), ("version=1\nnode.id=1\ndirectory.id=nope\n", 3),
])
def test_meta_properties_refused(tmp_path, text, line):
    _write(tmp_path, "meta.properties", text.encode("latin-1"))
    with pytest.raises(CorruptCheckpointError) as ex:
        read_meta_properties(tmp_path, validate=True)
    assert ex.value.line == line
    # read without checking, as before (describe still shows what it holds)
    assert read_meta_properties(tmp_path) is not None


@pytest.mark.parametrize("text", ["", "#only a comment\n", "version=0\ncluster.id=x\n",
                                  "version=1\nnode.id=3\ndirectory.id=" + TOPIC_ID + "\n",
                                  "version = 0\nbroker.id=-1\n\xe9=\xff\n"])
def test_meta_properties_accepted(tmp_path, text):
    _write(tmp_path, "meta.properties", text.encode("latin-1"))
    assert read_meta_properties(tmp_path, validate=True) is not None


@pytest.mark.parametrize("data", [b"", b"\n", b"{", b"[1]", b'{"leaderId": 1}',
                                  b'{"data_version": 2}', b'{"data_version": "0"}',
                                  b'\xff{"data_version": 0}'])
def test_quorum_state_refused(tmp_path, data):
    p = _write(tmp_path, "quorum-state", data)
    with pytest.raises(CorruptCheckpointError) as ex:
        read_quorum_state(p)
    assert ex.value.line == 1


def test_quorum_state_reads_the_first_line_only(tmp_path):
    p = _write(tmp_path, "quorum-state", b'{"data_version":1,"leaderId":3}\ngarbage')
    assert read_quorum_state(p) == {"data_version": 1, "leaderId": 3}


@pytest.mark.corpus
def test_every_file_of_the_real_corpus_parses(corpus_root):
    """Files written by real brokers (Kafka 2.x to 4.x, ZooKeeper and KRaft) all parse."""
    partitions = log_dirs = 0
    seen = set()
    problems = []
    for d in sorted(corpus_root.rglob("*")):
        if not d.is_dir() or parse_partition_dir_name(d.name) is None:
            continue
        if not any(d.glob("*.log")) and not (d / "partition.metadata").exists():
            continue
        partitions += 1
        problems += partition_file_problems(d)
        if d.parent not in seen:
            seen.add(d.parent)
            log_dirs += 1
            problems += log_dir_file_problems(d.parent)
    assert partitions > 100 and log_dirs > 10
    assert problems == []


# -- found by the fuzz harness (tests/fuzz) -----------------------------------------------------

@pytest.mark.parametrize("data, expected", [
    (b'{"version":0,"brokerEpoch":42}', {"version": 0, "brokerEpoch": 42}),
    (b"", {}), (b"\x80", {}), (b"[1]", {}), (b"7", {}), (b'{"brokerEpoch":"x"}', {}),
    (b'{"brokerEpoch":9223372036854775808}', {}), (b'{"version":true}', {}),
    (b'{"brokerEpoch":-1,"other":1}', {"brokerEpoch": -1}),
])
def test_clean_shutdown_file_read_as_kafka_reads_it(tmp_path, data, expected):
    """CleanShutdownFileHandler.read: content that Jackson cannot bind to {int version,
    Long brokerEpoch} gives no broker epoch; the file's presence alone still says the
    shutdown was clean. A byte that is not UTF-8 (``\\x80``) raised UnicodeDecodeError
    in describe, a JSON list AttributeError."""
    from kafkalog_cli.ops.describe import describe
    from kafkalog_cli.storage.dir_files import read_clean_shutdown

    _write(tmp_path, ".kafka_cleanshutdown", data)
    assert read_clean_shutdown(tmp_path) == expected
    (tmp_path / "t-0").mkdir()
    (tmp_path / "t-0" / "00000000000000000000.log").write_bytes(b"")
    (info,) = describe([tmp_path]).log_dirs
    assert info.clean_shutdown and info.broker_epoch == expected.get("brokerEpoch")


@pytest.mark.parametrize("text, value", [
    ("0" * 5000 + "7", 7), ("-" + "0" * 5000 + "7", -7), ("9" * 5000, None),
    ("2147483647", 2147483647), ("2147483648", None), ("\u0663", 3), ("\u00b2", None),
], ids=["zeros-7", "minus-zeros-7", "nines", "int-max", "int-max+1", "arabic-3", "superscript"])
def test_java_int_of_long_digit_runs(text, value):
    """Integer.parseInt takes any number of leading zeros; Python's int() refuses a
    string of more than 4300 digits with ValueError (which escaped every checkpoint
    reader). Unicode decimal digits parse in both (Character.digit, int)."""
    from kafkalog_cli.storage.checkpoints import java_int

    assert java_int(text) == value


def test_a_checkpoint_line_of_5000_digits_is_corrupt_not_a_crash(tmp_path):
    p = _write(tmp_path, "recovery-point-offset-checkpoint", b"0\n1\nt 0 " + b"9" * 5000 + b"\n")
    with pytest.raises(CorruptCheckpointError):
        read_offset_checkpoint(p)
    p = _write(tmp_path, "leader-epoch-checkpoint", b"0\n1\n" + b"0" * 5000 + b"3 5\n")
    assert read_leader_epoch_checkpoint(p) == [(3, 5)]


@pytest.mark.parametrize("version, node, expected", [
    ("\u00b2", "1", (None, 1)), ("1", "--5", (1, None)), ("1", "\u00b2", (1, None)),
    ("0", " -5 ", (0, -5))])
def test_describe_meta_properties_numbers_that_are_not_ints(tmp_path, version, node, expected):
    """describe read ``version`` and ``node.id`` with ``str.isdigit`` then ``int()``:
    '\\u00b2' is a digit to the first and not to the second (ValueError), and '--5'
    passed ``lstrip('-')``. Now as MetaProperties parses them: not a number -> null."""
    from kafkalog_cli.ops.describe import describe

    _write(tmp_path, "meta.properties", f"version={version}\nnode.id={node}\n".encode())
    (tmp_path / "t-0").mkdir()
    (tmp_path / "t-0" / "00000000000000000000.log").write_bytes(b"")
    (info,) = describe([tmp_path]).log_dirs
    assert (info.meta_version, info.node_id) == expected


@pytest.mark.parametrize("name", ["\uff10" + "0" * 19 + ".log", "0" * 20 + ".log\n",
                                  "99999999999999999999.log", "\u0660" * 20 + ".snapshot"])
def test_segment_names_are_ascii_digits_within_int64(name):
    """Kafka writes file names with filenamePrefixFromOffset: 20 ASCII digits. A regex's
    ``\\d`` took a fullwidth or Arabic-Indic digit, ``int()`` read it, and the file then
    opened by its offset was another one (FileNotFoundError in describe, KeyError in
    recover); ``$`` matched before a trailing newline; an offset above 2^63 - 1
    (Long.parseLong throws) was taken as a base offset."""
    from kafkalog_cli.errors import NotAKafkaFileError
    from kafkalog_cli.storage.files import (
        is_segment_file_name,
        offset_from_file_name,
        offset_prefix,
    )

    assert not is_segment_file_name(name)
    assert offset_prefix(name, ".log") is None and offset_prefix(name, ".snapshot") is None
    with pytest.raises(NotAKafkaFileError):
        offset_from_file_name(name)


@pytest.mark.parametrize("name, expected", [
    ("t-2147483647", TopicPartition("t", 2147483647)), ("t-2147483648", None),
    ("t-" + "9" * 30, None), ("t-0\n", None), ("t-\u0663", None),
    ("t-0.0123456789abcdef0123456789abcdef-delete", TopicPartition("t", 0)),
])
def test_partition_numbers_are_int32(name, expected):
    """LocalLog.parseTopicPartitionName reads the partition with Integer.parseInt: a
    directory 'corrupt-crc-999...9' (30 digits) was a partition, and export died with
    OverflowError writing it into Arrow's int32 column. ASCII digits only, to the end."""
    from kafkalog_cli.storage.files import is_live_partition_dir_name

    assert parse_partition_dir_name(name) == expected
    assert is_live_partition_dir_name(name) == (expected is not None and "delete" not in name)
