"""Golden zigzag varint/varlong encodings (Kafka's ByteUtils), through the construct schema
and the hot-path reader/writer."""

from __future__ import annotations

import construct as c
import pytest

from kafkalog_cli.errors import InvalidRecordError
from kafkalog_cli.format.varint import read_varint, read_varlong, size_of_varint, write_varint
from kafkalog_cli.schema.primitives import NullableInt32Bytes, NullableVarBytes, varint, varlong

# (value, bytes): zigzag maps 0,-1,1,-2,... to 0,1,2,3,...; 7 bits per byte, LSB first
VARINT_GOLDEN = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (-2, "03"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8001"),
    (-65, "8101"),
    (150, "ac02"),
    (300, "d804"),
    (8191, "fe7f"),
    (-8192, "ff7f"),
    (8192, "808001"),
    (2**20 - 1, "feff7f"),
    (2**31 - 1, "feffffff0f"),
    (-(2**31), "ffffffff0f"),
]
VARLONG_GOLDEN = VARINT_GOLDEN + [
    (2**31, "8080808010"),
    (2**35, "808080808002"),  # zigzag 2^36: five empty 7-bit groups, then 0x02
    (2**63 - 1, "feffffffffffffffff01"),
    (-(2**63), "ffffffffffffffffff01"),
]


@pytest.mark.parametrize("value,hexbytes", VARINT_GOLDEN)
def test_varint_golden(value, hexbytes):
    raw = bytes.fromhex(hexbytes)
    assert varint.build(value) == raw
    assert varint.parse(raw) == value
    assert read_varint(raw, 0) == (value, len(raw))
    out = bytearray()
    write_varint(value, out)
    assert bytes(out) == raw
    assert size_of_varint(value) == len(raw)


@pytest.mark.parametrize("value,hexbytes", VARLONG_GOLDEN)
def test_varlong_golden(value, hexbytes):
    raw = bytes.fromhex(hexbytes)
    assert varlong.build(value) == raw
    assert varlong.parse(raw) == value
    assert read_varlong(raw, 0) == (value, len(raw))
    out = bytearray()
    write_varint(value, out, 64)
    assert bytes(out) == raw
    assert size_of_varint(value, 64) == len(raw)


def test_varint_reads_at_offset_and_returns_next_position():
    data = bytes.fromhex("ff" "ac02" "01")
    assert read_varint(data, 1) == (150, 3)
    assert read_varint(data, 3) == (-1, 4)


def test_varint_five_byte_cap():
    too_long = bytes.fromhex("ffffffffff01")  # continuation bit set in the 5th byte
    with pytest.raises(c.ValidationError, match="Varint is too long"):
        varint.parse(too_long)
    with pytest.raises(InvalidRecordError, match="Varint is too long"):
        read_varint(too_long, 0)


def test_varlong_ten_byte_cap():
    too_long = bytes.fromhex("ff" * 10 + "01")
    with pytest.raises(c.ValidationError, match="Varlong is too long"):
        varlong.parse(too_long)
    with pytest.raises(InvalidRecordError, match="Varlong is too long"):
        read_varlong(too_long, 0)
    # ten bytes is still legal for a varlong, but not for a varint
    assert varlong.parse(bytes.fromhex("ffffffffffffffffff01")) == -(2**63)


def test_fifth_byte_high_bits_dropped_as_java_does():
    # ByteUtils.readVarint shifts the 5th byte into an int: bits above 32 are lost, so
    # ff ff ff ff 7f reads as ff ff ff ff 0f (Integer.MIN_VALUE)
    raw = bytes.fromhex("ffffffff7f")
    assert read_varint(raw, 0) == (-(2**31), 5)
    assert varint.parse(raw) == -(2**31)


def test_varint_runs_off_the_data():
    with pytest.raises(InvalidRecordError):
        read_varint(b"\x80\x80", 0)
    with pytest.raises(c.StreamError):
        varint.parse(b"\x80\x80")


def test_varint_build_range():
    with pytest.raises(c.IntegerError):
        varint.build(2**31)
    with pytest.raises(c.IntegerError):
        varlong.build(-(2**63) - 1)


def test_nullable_var_bytes():
    assert NullableVarBytes.parse(b"\x01") is None
    assert NullableVarBytes.parse(b"\x00") == b""
    assert NullableVarBytes.parse(b"\x06abc") == b"abc"
    assert NullableVarBytes.build(None) == b"\x01"
    assert NullableVarBytes.build(b"abc") == b"\x06abc"


def test_nullable_int32_bytes():
    assert NullableInt32Bytes.parse(b"\xff\xff\xff\xff") is None
    assert NullableInt32Bytes.parse(b"\x00\x00\x00\x02hi") == b"hi"
    assert NullableInt32Bytes.build(None) == b"\xff\xff\xff\xff"
    assert NullableInt32Bytes.build(b"hi") == b"\x00\x00\x00\x02hi"
