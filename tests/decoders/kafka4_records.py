"""Kafka 4 internal-topic records built byte by byte from the message definitions
(independently of kafkalog's declarations), for the dump and describe tests."""

from __future__ import annotations

import base64
import struct

from kafkalog_testkit import raw_batch, raw_record

SEG0 = "00000000000000000000"


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def i64(v):
    return struct.pack(">q", v)


def s(text: str) -> bytes:
    """String: int16 length then UTF-8."""
    return i16(len(text.encode())) + text.encode()


def cs(text: str) -> bytes:
    """CompactString: unsigned varint length+1 (all lengths here fit one byte)."""
    return bytes([len(text.encode()) + 1]) + text.encode()


def carr(items: list[bytes]) -> bytes:
    return bytes([len(items) + 1]) + b"".join(items)


UUID = "Uj5wn_FqTXirEASvVZRY1w"
UUID_BYTES = base64.urlsafe_b64decode(UUID + "==")


def write_log(tmp_path, dirname: str, records: list[tuple[bytes | None, bytes | None]]):
    d = tmp_path / dirname
    d.mkdir()
    log = d / f"{SEG0}.log"
    log.write_bytes(raw_batch(0, [raw_record(i, 0, k, v) for i, (k, v) in enumerate(records)]))
    return log


STATE_BATCH = i64(0) + i64(4) + b"\x02" + i16(1) + b"\x00"


def share_key(record_type: int) -> bytes:
    return i16(record_type) + s("gs1") + UUID_BYTES + i32(0)


#: ShareSnapshotValue v0 (Kafka 4): snapshotEpoch 0, stateEpoch 0, leaderEpoch 0,
#: startOffset 0, createTimestamp, writeTimestamp, one state batch, no tags
def share_snapshot_value(ts: int) -> bytes:
    return (i16(0) + i32(0) + i32(0) + i32(0) + i64(0) + i64(ts) + i64(ts)
            + carr([STATE_BATCH]) + b"\x00")


#: ShareUpdateValue v0 (Kafka 4): snapshotEpoch 0, leaderEpoch 0, startOffset 0, batches
SHARE_UPDATE_VALUE = i16(0) + i32(0) + i32(0) + i64(0) + carr([STATE_BATCH]) + b"\x00"

#: ShareSnapshotValue() with every field at its default, at version 0
SHARE_SNAPSHOT_DEFAULT = (i16(0) + i32(0) + i32(0) + i32(0) + i64(0) + i64(0) + i64(0)
                          + carr([]) + b"\x00")


def remote_segment(state: int, start: int = 0, end: int = 99, epochs=((0, 0), (2, 50)),
                   custom: bytes | None = b"abc", txn_index_empty: bool = True) -> bytes:
    """RemoteLogSegmentMetadataRecord v0 framed as AbstractApiMessageSerde writes it."""
    body = (cs("orders") + UUID_BYTES + i32(3) + b"\x00"   # TopicIdPartitionEntry
            + bytes(range(16)) + b"\x00"                   # segment id, RemoteLogSegmentIdEntry
            + i64(start) + i64(end) + i32(1) + i64(1000) + i64(2000)
            + carr([i32(e) + i64(o) + b"\x00" for e, o in epochs])
            + i32(4096)
            + (b"\x00" if custom is None else bytes([len(custom) + 1]) + custom)
            + bytes([state])
            + (b"\x01\x00\x01\x01" if txn_index_empty else b"\x00"))
    return b"\x01\x00\x00" + body
