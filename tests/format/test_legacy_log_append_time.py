"""Magic-1 messages with the LogAppendTime timestamp type (attribute bit 3), as a 0.10-2.x
broker wrote them for a topic of ``message.timestamp.type=LogAppendTime``: the bytes are
written here from the documented message format (struct + zlib.crc32), not with
kafkalog's builder. Kafka's reader (AbstractLegacyRecordBatch's DeepRecordsIterator) gives
every inner message of a LogAppendTime wrapper the wrapper's timestamp and type; a
CreateTime wrapper keeps each inner message's own; magic 0 has no timestamp. Checked
against kafka-python's reader of the same bytes and through ``read -o json``."""

from __future__ import annotations

import gzip
import json
import struct
import zlib

import pytest
from kafkalog_testkit import run_cli_inprocess

from kafkalog_cli.format.records import FileRecords

W = 1_600_000_000_999          # the wrapper's timestamp (the leader's clock)
T1, T2 = 1_500_000_000_001, 1_500_000_000_002   # the producer's create times
LOG_APPEND_TIME = 0x08
GZIP = 0x01


def message(offset: int, magic: int, attributes: int, timestamp: int | None,
            key: bytes | None, value: bytes | None) -> bytes:
    """offset int64, size int32, crc uint32 (CRC-32 of magic..end), magic int8,
    attributes int8, [timestamp int64], key and value (int32 length, -1 for null)."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for field in (key, value):
        body += struct.pack(">i", -1) if field is None else struct.pack(">i", len(field)) + field
    crc = zlib.crc32(body)
    return struct.pack(">qiI", offset, len(body) + 4, crc) + body


def wrapper(offset: int, attributes: int, timestamp: int, inner: bytes) -> bytes:
    return message(offset, 1, attributes | GZIP, timestamp, None, gzip.compress(inner))


#: inner messages with relative offsets 0 and 1 and their own create times
INNER = message(0, 1, 0, T1, b"k1", b"v1") + message(1, 1, 0, T2, b"k2", b"v2")
#: case -> (the bytes, the records' (offset, timestamp) pairs, the timestamp type)
CASES = {
    "v1-log-append-time": (message(5, 1, LOG_APPEND_TIME, W, b"k", b"v"),
                           [(5, W)], "LogAppendTime"),
    "v1-gzip-log-append-time": (wrapper(11, LOG_APPEND_TIME, W, INNER),
                                [(10, W), (11, W)], "LogAppendTime"),
    "v1-gzip-create-time": (wrapper(11, 0, W, INNER), [(10, T1), (11, T2)], "CreateTime"),
    "v0": (message(3, 0, 0, None, b"k", b"v"), [(3, -1)], "NoTimestampType"),
}


@pytest.mark.parametrize("case", CASES)
def test_timestamp_type_and_inner_timestamps(case):
    data, expected, ts_type = CASES[case]
    (batch,) = FileRecords(data).batches()
    assert batch.timestamp_type == ts_type
    assert [(r[0], r[1]) for r in batch.records()] == expected


@pytest.mark.parametrize("case", CASES)
def test_kafka_python_reads_the_same(case):
    from kafka.record import MemoryRecords

    data, expected, ts_type = CASES[case]
    got = [(r.offset, r.timestamp, r.timestamp_type) for r in MemoryRecords(data).next_batch()]
    want_type = {"LogAppendTime": 1, "CreateTime": 0, "NoTimestampType": None}[ts_type]
    # kafka-python's v0 timestamp is None where Kafka's is -1 (RecordBatch.NO_TIMESTAMP)
    assert [(o, -1 if ts is None else ts) for o, ts, _ in got] == expected
    if want_type is not None:
        assert {t for _, _, t in got} == {want_type}


def test_read_json_names_log_append_time(tmp_path):
    d = tmp_path / "legacy-0"
    d.mkdir()
    data = CASES["v1-gzip-log-append-time"][0]
    (d / "00000000000000000000.log").write_bytes(data)
    r = run_cli_inprocess("read", str(d), "-o", "json")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(x["offset"], x["timestamp"], x["timestampType"]) for x in rows] == [
        (10, W, "LogAppendTime"), (11, W, "LogAppendTime")]
