"""Batches a producer may send that a broker refuses, one per rule of
``UnifiedLog.analyzeAndValidateRecords``, ``LogValidator`` (validateBatch, validateRecord,
validateKey, validateTimestamp, processRecordErrors), ``DefaultRecordBatch``'s record
iterators and ``DefaultRecord.readFrom``, and ``ProduceRequest.validateRecords``, with
what Kafka answers (Kafka 4.0; messages from its sources).

The bytes are written here from Kafka's documented layout (struct + crc32c, zigzag varints;
kafka-python's builders for the legacy formats), not with kafkalog's builder, so a
shared mistake cannot hide. Used through three doors: ``storage.validator.validate``,
the append engine (``UnifiedLog.append_as_leader``) and serve's Produce.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import crc32c
import zstandard

TOPIC = "t"
HOUR = 3_600_000


def zz(n: int) -> bytes:
    """A zigzag varint (ByteUtils.writeVarlong)."""
    v = (n << 1) ^ (n >> 63)
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _field(b: bytes | None) -> bytes:
    return zz(-1) if b is None else zz(len(b)) + b


def record(offset_delta: int, key: bytes | None = b"k", value: bytes | None = b"v", *,
           ts_delta: int = 0, headers=(), header_count: int | None = None,
           length_delta: int = 0) -> bytes:
    """A DefaultRecord: ``headers`` [(key or None, value)]; ``header_count`` and
    ``length_delta`` falsify the header count and the length prefix."""
    body = b"\x00" + zz(ts_delta) + zz(offset_delta) + _field(key) + _field(value)
    body += zz(len(headers) if header_count is None else header_count)
    for hk, hv in headers:
        body += _field(hk) + _field(hv)
    return zz(len(body) + length_delta) + body


def batch(records: list[bytes], base_ts: int, *, count: int | None = None,
          last_delta: int | None = None, base_offset: int = 0, attributes: int = 0,
          max_ts: int | None = None, producer_id: int = -1, producer_epoch: int = -1,
          base_sequence: int = -1, zstd: bool = False) -> bytes:
    """A RecordBatch v2 as a producer sends it (partitionLeaderEpoch -1), CRC-32C over
    attributes..end; ``count``/``last_delta`` default to the records given."""
    n = len(records)
    block = b"".join(records)
    if zstd:
        attributes |= 4
        block = zstandard.ZstdCompressor().compress(block)
    tail = struct.pack(">hiqqqhii", attributes, n - 1 if last_delta is None else last_delta,
                       base_ts, base_ts if max_ts is None else max_ts, producer_id,
                       producer_epoch, base_sequence, n if count is None else count) + block
    return struct.pack(">qiibI", base_offset, len(tail) + 9, -1, 2, crc32c.crc32c(tail)) + tail


def legacy(magic: int, codec: int = 0, n: int = 3, ts: int = 0) -> bytes:
    """A v0/v1 message set from kafka-python's builder (``codec`` 1: a gzip wrapper)."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    b = LegacyRecordBatchBuilder(magic, codec, 1 << 20)
    for i in range(n):
        b.append(i, ts if magic else None, b"k%d" % i, b"v%d" % i)
    return bytes(b.build())


def three(now: int, **kw) -> bytes:
    return batch([record(i) for i in range(3)], now, **kw)


@dataclass(frozen=True)
class Case:
    """One refused batch.

    Attributes:
        id: the test id.
        build: ``now`` (ms) -> the bytes to send.
        configs: the topic's configs.
        error: the ProduceResponse errorCode's name.
        exception: the class ``validate`` / ``append_as_leader`` raise (kafkalog's names
            in ``storage.validator`` / ``errors``).
        message: a regex the exception's message must match (Kafka's exception text
            where kafkalog words it alike; not sent to clients except as below).
        record_errors: ``[(batchIndex, regex)]`` of the response's recordErrors (Kafka
            sends them for RecordValidationException only).
        error_message: regex of the response's errorMessage (None: null; the exact text
            of some is in :data:`EXACT_ERROR_MESSAGE`).
        request_level: refused by ``ProduceRequest.validateRecords`` in KafkaApis, before
            the log (logStartOffset -1 in the response); the engine refuses it too.
        log_start: the response's logStartOffset (0 when ``processFailedRecord`` ran).
        engine_only: a rule of the append (segment.bytes), not of ``validate``.
    """

    id: str
    build: object
    error: str
    exception: str
    message: str
    configs: dict = field(default_factory=dict)
    record_errors: tuple = ()
    error_message: str | None = None
    request_level: bool = False
    engine_only: bool = False

    @property
    def log_start(self) -> int:
        if self.request_level or self.error in ("CORRUPT_MESSAGE", "MESSAGE_TOO_LARGE",
                                                "RECORD_LIST_TOO_LARGE"):
            return -1
        return 0


_RANGE = r"The timestamp should be within \[-?\d+, \d+\]"
_NO_KEY = f"Compacted topic cannot accept message without key in topic partition {TOPIC}-0"


def _no_key_text(n: int) -> str:
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{_NO_KEY}')" for i in range(min(n, 3)))
    return (f"One or more records have been rejected due to {n} record errors in total, and "
            f"only showing the first three errors at most: [{shown}]")


def _corrupt_crc(now: int) -> bytes:
    b = bytearray(three(now))
    b[-1] ^= 0x40
    return bytes(b)


CASES = [
    # ProduceRequest.validateRecords (v3+): exactly one batch of magic 2
    Case("magic-v0", lambda now: legacy(0), "INVALID_RECORD", "InvalidRecordError",
         r"magic 0", request_level=True),
    Case("magic-v1", lambda now: legacy(1, ts=now), "INVALID_RECORD", "InvalidRecordError",
         r"magic 1", request_level=True),
    Case("magic-v1-gzip", lambda now: legacy(1, codec=1, ts=now), "INVALID_RECORD",
         "InvalidRecordError", r"magic 1", request_level=True),
    Case("two-batches", lambda now: three(now) + three(now), "INVALID_RECORD",
         "InvalidRecordError", r"more than one batch", request_level=True),
    # analyzeAndValidateRecords
    Case("base-offset", lambda now: three(now, base_offset=5), "INVALID_RECORD",
         "InvalidRecordError", r"baseOffset of the record batch in the append.* should be 0, "
                               r"but it is 5"),
    Case("bad-crc", _corrupt_crc, "CORRUPT_MESSAGE", "CrcMismatchError",
         r"Record is corrupt \(stored crc = \d+"),
    Case("over-max-message-bytes", lambda now: three(now), "MESSAGE_TOO_LARGE",
         "RecordTooLargeError", r"exceeds the maximum configured value of 80",
         configs={"max.message.bytes": "80"}),
    # UnifiedLog.append: over segment.bytes
    Case("over-segment-bytes", lambda now: three(now), "RECORD_LIST_TOO_LARGE",
         "RecordBatchTooLargeError", r"exceeds the maximum configured segment size of 80",
         configs={"segment.bytes": "80"}, engine_only=True),
    # LogValidator.validateBatch
    Case("offset-range", lambda now: three(now, last_delta=-1), "INVALID_RECORD",
         "InvalidRecordError", r"Batch has an invalid offset range: \[0, -1\]"),
    Case("count-zero", lambda now: three(now, last_delta=0, count=0), "INVALID_RECORD",
         "InvalidRecordError", r"Invalid reported count for record batch: 0"),
    Case("count-vs-offsets", lambda now: three(now, count=5), "INVALID_RECORD",
         "InvalidRecordError", r"Inconsistent batch offset range \[0, 2\] and count of "
                               r"records 5"),
    # the reverse: 3 records, lastOffsetDelta 4 (the bench broker answers INVALID_RECORD
    # alike: tests/wire/test_wire_produce.py's last-delta-mismatch)
    Case("count-below-offsets", lambda now: three(now, last_delta=4), "INVALID_RECORD",
         "InvalidRecordError", r"Inconsistent batch offset range \[0, 4\] and count of "
                               r"records 3"),
    Case("control-batch", lambda now: three(now, attributes=0x20), "INVALID_RECORD",
         "InvalidRecordError", r"Clients are not allowed to write control records"),
    Case("producer-without-sequence",
         lambda now: three(now, producer_id=5, producer_epoch=0, base_sequence=-1),
         "INVALID_RECORD", "InvalidRecordError",
         r"Invalid sequence number -1 in record batch with producerId 5"),
    # DefaultRecordBatch's iterators: recordsCount must match the records held
    Case("count-lies-more", lambda now: three(now, count=5, last_delta=4), "INVALID_RECORD",
         "InvalidRecordError", r"Incorrect declared batch size, premature EOF reached"),
    Case("count-lies-more-zstd", lambda now: three(now, count=5, last_delta=4, zstd=True),
         "INVALID_RECORD", "InvalidRecordError",
         r"Incorrect declared batch size, premature EOF reached"),
    Case("count-lies-fewer", lambda now: three(now, count=2, last_delta=1), "INVALID_RECORD",
         "InvalidRecordError", r"Incorrect declared batch size, records still remaining"),
    # DefaultRecord.readFrom
    Case("header-count-negative",
         lambda now: batch([record(0), record(1, header_count=-1)], now), "INVALID_RECORD",
         "InvalidRecordError", r"Found invalid number of record headers -1"),
    Case("header-key-null",
         lambda now: batch([record(0, headers=[(None, b"x")])], now), "INVALID_RECORD",
         "InvalidRecordError", r"Invalid negative header key size -1"),
    Case("record-size", lambda now: batch([record(0, length_delta=-1), record(1)], now),
         "INVALID_RECORD", "InvalidRecordError", r"Invalid record size"),
    # validateRecord -> validateTimestamp (RecordValidationException: recordErrors)
    Case("timestamp-before-max",
         lambda now: batch([record(0), record(1, ts_delta=-60_000)], now),
         "INVALID_TIMESTAMP", "InvalidTimestampError", r"of message with offset 1 is out of range",
         configs={"message.timestamp.before.max.ms": "1000"},
         record_errors=((1, r"Timestamp \d+ of message with offset 1 is out of range. " + _RANGE),),
         error_message=r"One or more records have been rejected due to invalid timestamp"),
    Case("timestamp-after-max",
         lambda now: batch([record(0, ts_delta=2 * HOUR), record(1)], now),
         "INVALID_TIMESTAMP", "InvalidTimestampError", r"of message with offset 0 is out of range",
         record_errors=((0, r"Timestamp \d+ of message with offset 0 is out of range. " + _RANGE),),
         error_message=r"One or more records have been rejected due to invalid timestamp"),
    Case("timestamp-after-max-configured",
         lambda now: batch([record(0, ts_delta=5_000)], now),
         "INVALID_TIMESTAMP", "InvalidTimestampError", r"is out of range",
         configs={"message.timestamp.after.max.ms": "1000"},
         record_errors=((0, r"Timestamp \d+ of message with offset 0 is out of range. " + _RANGE),),
         error_message=r"One or more records have been rejected due to invalid timestamp"),
    Case("log-append-time-from-client",
         lambda now: three(now, attributes=0x08), "INVALID_TIMESTAMP", "InvalidTimestampError",
         r"Producer should not set timestamp type to LogAppendTime",
         configs={"message.timestamp.type": "LogAppendTime"},
         record_errors=tuple((i, r"Invalid timestamp type in message DefaultRecord\(offset="
                                 rf"{i}, .*\)\. Producer should not set timestamp type to "
                                 r"LogAppendTime\.") for i in range(3)),
         error_message=r"One or more records have been rejected due to invalid timestamp"),
    # validateKey (RecordValidationException: recordErrors, errorMessage)
    Case("keyless-on-compacted",
         lambda now: batch([record(0), record(1, key=None)], now), "INVALID_RECORD",
         "RejectedRecordError", r"Compacted topic cannot accept message without key",
         configs={"cleanup.policy": "compact"},
         record_errors=((1, _NO_KEY),)),
    Case("keyless-on-compacted-four",
         lambda now: batch([record(i, key=None) for i in range(4)], now), "INVALID_RECORD",
         "RejectedRecordError", r"Compacted topic cannot accept message without key",
         configs={"cleanup.policy": "compact,delete"},
         record_errors=tuple((i, _NO_KEY) for i in range(4))),
]

#: the exact errorMessage of the compacted-topic cases (processRecordErrors' wording,
#: RecordError.toString, List.toString of the first three)
EXACT_ERROR_MESSAGE = {
    "keyless-on-compacted": _no_key_text(1).replace("batchIndex=0", "batchIndex=1"),
    "keyless-on-compacted-four": _no_key_text(4),
}
