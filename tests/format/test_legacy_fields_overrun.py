"""A v0/v1 message whose key or value length runs past its end, CRC intact; a v1
message too short for its key and value size fields (14 to 21 bytes after the log
overhead: ensureValid's minimum is the v0 overhead, 14).

Kafka's framing does not look inside a legacy message: FileLogInputStream.nextBatch reads
its offset, size and magic, ``LegacyRecord.ensureValid`` checks only size >= the v0
overhead and the CRC, and LogSegment.recover keeps it. Only reading its key or value fails
(``LegacyRecord.key()``/``value()`` through ``Utils.sizeDelimited``: a limit past the
buffer), and kafka-dump-log.sh with it. kafka-python reads such a message the same way
(its framing yields the message, ``validate_crc`` passes, iterating its records fails),
and is the independent check here. The messages are built with struct and zlib.
"""

from __future__ import annotations

import gzip
import json
import struct
import zlib

import pytest
from kafka.record import MemoryRecords
from kafkalog_testkit import run_cli_inprocess, write_partition

from kafkalog_cli.errors import CorruptRecordError
from kafkalog_cli.format.records import FileRecords, scan_batches


def _message(offset: int, key: bytes | None, value: bytes | None, *, magic: int = 1,
             attributes: int = 0, timestamp: int = 1_479_457_300_602,
             key_size: int | None = None, value_size: int | None = None) -> bytes:
    """A legacy log entry (LegacyRecord.write's layout), ``key_size``/``value_size``
    overriding the length fields, the CRC-32 computed over what is written."""
    body = bytearray((magic, attributes))
    if magic:
        body += struct.pack(">q", timestamp)
    for data, size in ((key, key_size), (value, value_size)):
        n = (-1 if data is None else len(data)) if size is None else size
        body += struct.pack(">i", n) + (data or b"")
    crc = zlib.crc32(bytes(body))
    return struct.pack(">qiI", offset, len(body) + 4, crc) + bytes(body)


def _short_v1(offset: int, tail: bytes) -> bytes:
    """A v1 message holding CRC, magic, attributes, timestamp and ``tail`` only (size 14
    + len(tail)), its CRC-32 computed."""
    body = bytes((1, 0)) + struct.pack(">q", 1_479_457_300_602) + tail
    return struct.pack(">qiI", offset, len(body) + 4, zlib.crc32(body)) + body


def _log(bad: bytes) -> bytes:
    """Message 0, the ``bad`` one at offset 1 (at byte 36, after a 36-byte v1 message), message 2."""
    return _message(0, b"a", b"x") + bad + _message(2, b"c", b"z")


#: case -> (the message at offset 1, whether kafka-python's record iteration fails on it:
#: it reads the value length past a key with struct, which fails, but slices the value,
#: which Python clamps; Java's ``b.limit(size)`` fails on both)
BAD = {
    "v1 key": (_message(1, b"b", b"y", key_size=0x01000001), True),
    "v0 key": (_message(1, b"b", b"y", magic=0, key_size=0x01000001), True),
    "v1 key into value": (_message(1, b"b", b"y", key_size=5), True),
    "v1 value": (_message(1, b"b", b"y", value_size=0x7FFFFFF0), False),
    "v0 key into value": (_message(1, b"b", b"y", magic=0, key_size=2), False),
    "v1 size 14": (_short_v1(1, b""), True),
    "v1 size 18, null key": (_short_v1(1, b"\xff\xff\xff\xff"), True),
    "v1 size 21": (_short_v1(1, b"\x00\x00\x00\x00\x00\x00\x00"), True),
}


def _kafka_python(data: bytes) -> list[tuple[int, bool, object]]:
    """kafka-python's view: per batch, (position, validate_crc, offsets or the error)."""
    mr = MemoryRecords(data)
    out = []
    pos = 0
    while mr.has_next():
        b = mr.next_batch()
        try:
            got = [r.offset for r in b]
        except Exception as e:  # struct.error: kafka-python has no typed error for it
            got = type(e).__name__
        out.append((pos, b.validate_crc(), got))
        pos += b.size_in_bytes
    return out


@pytest.mark.parametrize("case", sorted(BAD))
def test_framing_keeps_the_message_reading_it_fails(case):
    bad_message, peer_fails = BAD[case]
    data = _log(bad_message)
    peer = _kafka_python(data)
    assert [p[1] for p in peer] == [True, True, True]
    assert peer[0][2] == [0] and peer[2][2] == [2]
    assert isinstance(peer[1][2], str) == peer_fails

    fr = FileRecords(data, file="seg.log")
    batches = list(fr.batches())
    assert [(b.position, b.offset, b.is_valid) for b in batches] == \
        [(p[0], i, True) for i, p in enumerate(peer)]
    assert fr.stop_error is None and fr.valid_end == len(data)
    scan = scan_batches(data)
    assert (scan.batches, scan.invalid, scan.valid_end, scan.first_offset,
            scan.last_offset) == (3, [], len(data), 0, 2)

    bad = batches[1]
    assert bad.timestamp == 1_479_457_300_602 or bad.magic == 0
    assert [r.offset for r in batches[0].records()] == [0]
    assert [r.offset for r in batches[2].records()] == [2]
    with pytest.raises(CorruptRecordError) as ei:
        bad.records()
    assert ei.value.position == peer[1][0]
    for field in ("key", "value"):
        with pytest.raises(CorruptRecordError):
            getattr(bad, field)


def test_inner_message_of_a_wrapper_fails_at_the_wrappers_position():
    inner = (_message(0, b"a", b"x") + _message(1, b"b", b"y", key_size=0x01000001))
    wrapper = _message(5, None, gzip.compress(inner), attributes=1)
    data = _message(3, b"k", b"v") + _message(4, b"k", b"v") + wrapper
    fr = FileRecords(data)
    *_, w = fr.batches()
    assert w.is_valid and w.position == 72 and fr.valid_end == len(data)
    assert [e.offset for e in w.iter_inner()] == [4, 5]  # framing of the inner set
    with pytest.raises(CorruptRecordError) as ei:
        w.records()
    assert ei.value.position == 72


def test_wrapper_whose_value_overruns_is_whole_and_does_not_decode():
    comp = gzip.compress(_message(0, b"a", b"x"))
    wrapper = _message(0, None, comp, attributes=1, value_size=len(comp) + 1)
    fr = FileRecords(wrapper)
    (w,) = fr.batches()
    assert w.is_valid and fr.valid_end == len(wrapper)
    with pytest.raises(CorruptRecordError):
        w.records()
    assert w.last_offset == 0  # what LogSegment.recover indexes: the wrapper's offset


@pytest.fixture(params=["v1 key", "v1 size 14"])
def partition(request, tmp_path):
    return write_partition(tmp_path, "foo-0", _log(BAD[request.param][0]))


def test_cli_framing_commands_accept_it(partition):
    """verify-index and recover's dry run see three whole batches and nothing to cut;
    describe counts three records."""
    r = run_cli_inprocess("verify-index", str(partition))
    assert r.returncode == 0, r.stderr
    (seg,) = json.loads(r.stdout)["segments"]
    assert seg["batches"] == 3 and not seg["problems"]
    r = run_cli_inprocess("recover", str(partition), "--all", "-o", "json")
    assert r.returncode == 1, r.stderr  # a dry run with work: the indexes are missing
    out = json.loads(r.stdout)
    (seg,) = out["partitions"][0]["segments"]
    size = (partition / "00000000000000000000.log").stat().st_size
    assert (seg["validBytes"], seg["invalidBytes"], seg["batches"], seg["lastValidOffset"]) \
        == (size, 0, 3, 2)
    assert out["summary"]["segmentsTruncated"] == 0
    r = run_cli_inprocess("describe", str(partition))
    (p,) = json.loads(r.stdout)["logDirs"][0]["topics"][0]["partitions"]
    assert (p["batches"], p["logEndOffset"], p["invalidBytes"]) == (3, 3, 0)


@pytest.mark.parametrize("args, code", [
    (("read", "{p}"), 1),  # damaged data: 1 in every command (cli/exit_codes.py)
    (("dump-segment", "{p}/00000000000000000000.log", "--print-data-log"), 1),
    (("dump-segment", "{p}/00000000000000000000.log", "--deep-iteration"), 1),
])
def test_cli_reading_the_record_fails_naming_file_and_position(partition, args, code):
    log = partition / "00000000000000000000.log"
    r = run_cli_inprocess(*(a.format(p=partition) for a in args))
    assert r.returncode == code, r.stdout + r.stderr
    assert f"{log} at byte 36: " in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_audit_counts_it_as_a_batch_that_does_not_decode(partition):
    """audit decodes records as a consumer does (a Java consumer fails on the key)."""
    log = partition / "00000000000000000000.log"
    r = run_cli_inprocess("audit", str(partition), "-o", "json")
    assert r.returncode == 1, r.stderr
    (p,) = json.loads(r.stdout)["partitions"]
    assert (p["batches"], p["corruptBatches"], p["invalidBytes"]) == (3, 1, 0)
    assert [m.split(": batch does not decode")[0] for m in p["problems"]] == \
        [f"{log} at byte 36"]
