"""Golden bytes for Kafka's protocol primitives in schema/flexible.py (hand-computed)."""

from __future__ import annotations

import construct as c
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalog_cli.schema import flexible as fx


@pytest.mark.parametrize(("value", "encoded"), [
    (0, "00"),
    (1, "01"),
    (127, "7f"),
    (128, "8001"),
    (300, "ac02"),
    (16384, "808001"),
    (2**32 - 1, "ffffffff0f"),
])
def test_unsigned_varint_golden(value, encoded):
    assert fx.unsigned_varint.build(value).hex() == encoded
    assert fx.unsigned_varint.parse(bytes.fromhex(encoded)) == value
    assert fx.encode_unsigned_varint(value).hex() == encoded


def test_unsigned_varint_too_long():
    with pytest.raises(c.ValidationError, match="too long"):
        fx.unsigned_varint.parse(bytes.fromhex("ffffffffff01"))


def test_unsigned_varint_out_of_range():
    with pytest.raises(c.IntegerError):
        fx.unsigned_varint.build(2**32)
    with pytest.raises(c.IntegerError):
        fx.unsigned_varint.build(-1)


@pytest.mark.parametrize(("con", "value", "encoded"), [
    (fx.compact_string, "abc", "04616263"),
    (fx.compact_string, "", "01"),
    (fx.compact_nullable_string, None, "00"),
    (fx.compact_nullable_string, "é", "03c3a9"),
    (fx.string, "abc", "0003616263"),
    (fx.nullable_string, None, "ffff"),
    (fx.bytes_, b"\x01\x02", "000000020102"),
    (fx.nullable_bytes, None, "ffffffff"),
    (fx.compact_bytes, b"\x01\x02", "030102"),
    (fx.compact_nullable_bytes, None, "00"),
])
def test_strings_and_bytes_golden(con, value, encoded):
    assert con.build(value).hex() == encoded
    assert con.parse(bytes.fromhex(encoded)) == value


@pytest.mark.parametrize(("con", "encoded"), [
    (fx.compact_string, "00"),
    (fx.string, "ffff"),
    (fx.bytes_, "ffffffff"),
])
def test_null_for_non_nullable_is_refused(con, encoded):
    with pytest.raises(c.ValidationError, match="null"):
        con.parse(bytes.fromhex(encoded))


def test_malformed_utf8_is_replaced_like_java():
    assert fx.compact_string.parse(bytes.fromhex("03ff41")) == "\ufffdA"


def test_truncated_string():
    # ByteBufferAccessor.readArray refuses it before reading
    with pytest.raises(fx.KafkaReadError) as e:
        fx.compact_string.parse(bytes.fromhex("0561"))
    assert fx.java_message(e.value) == "Error reading byte array of 4 byte(s): only 1 byte(s) available"


@pytest.mark.parametrize(("con", "data", "java"), [
    (fx.int32, "0000", "null"),  # BufferUnderflowException: no message
    (fx.unsigned_varint, "8080", "null"),
    (fx.unsigned_varint, "ffffffffff", "Varint is too long, the most significant bit in the "
     "5th byte is set, converted value: ffffffff"),
    (fx.unsigned_varint, "8080808080", "Varint is too long, the most significant bit in the "
     "5th byte is set, converted value: 0"),
    (fx.unsigned_varint, "ffffffff81", "Varint is too long, the most significant bit in the "
     "5th byte is set, converted value: 1fffffff"),  # (byte) 0x81 << 28, as an int
    (fx.nullable_bytes, "0000000a00", "Error reading byte array of 10 byte(s): only 1 byte(s) "
     "available"),
    (fx.array(fx.int32), "0000000500", "Tried to allocate a collection of size 5, but there "
     "are only 1 bytes remaining."),
    (fx.empty_tagged_fields, "010703aa", "Error reading byte array of 3 byte(s): only 1 "
     "byte(s) available"),
])
def test_java_messages_of_read_failures(con, data, java):
    """java_message gives getMessage() of what Kafka's generated reader throws there."""
    with pytest.raises(c.ConstructError) as e:
        con.parse(bytes.fromhex(data))
    assert fx.java_message(e.value) == java


def test_java_message_names_the_field():
    from kafkalog_cli.schema.messages import Field, Message

    m = Message("M", valid="0-1", flexible="1+", fields=[
        Field("a", "int8", "0+"), Field("name", "string", "0+"),
        Field("names", "[]string", "0+")])
    with pytest.raises(c.ConstructError) as e:
        m.parse(bytes.fromhex("01" "ffff"), 0)
    assert fx.java_message(e.value) == "non-nullable field name was serialized as null"
    with pytest.raises(c.ConstructError) as e:
        m.parse(bytes.fromhex("01" "0000" "00000001" "0009"), 0)
    assert fx.java_message(e.value) == ("Error reading byte array of 9 byte(s): only 0 "
                                        "byte(s) available")
    with pytest.raises(c.ConstructError) as e:
        m.parse(bytes.fromhex("01" "0000" "00000001" "ffff"), 0)
    assert fx.java_message(e.value) == "non-nullable field names element was serialized as null"


@pytest.mark.parametrize(("con", "value", "encoded"), [
    (fx.compact_array(fx.int32), [1, 2], "030000000100000002"),
    (fx.compact_array(fx.int32), [], "01"),
    (fx.compact_nullable_array(fx.int32), None, "00"),
    (fx.array(fx.int16), [7], "000000010007"),
    (fx.nullable_array(fx.int16), None, "ffffffff"),
    (fx.compact_array(fx.compact_string), ["a", "bc"], "0302610362 63".replace(" ", "")),
])
def test_arrays_golden(con, value, encoded):
    assert con.build(value).hex() == encoded
    assert con.parse(bytes.fromhex(encoded)) == value


def test_array_count_larger_than_data_is_refused():
    with pytest.raises(c.ValidationError, match="exceeds"):
        fx.array(fx.int32).parse(bytes.fromhex("7fffffff00"))
    with pytest.raises(c.ValidationError, match="non-nullable"):
        fx.compact_array(fx.int32).parse(bytes.fromhex("00"))


def test_uuid_string_form():
    assert fx.uuid.parse(bytes(range(16))) == "AAECAwQFBgcICQoLDA0ODw"
    # Uuid.METADATA_TOPIC_ID and Uuid.ZERO_UUID as Kafka prints them
    assert fx.uuid.parse(bytes(15) + b"\x01") == "AAAAAAAAAAAAAAAAAAAAAQ"
    assert fx.uuid.parse(bytes(16)) == fx.ZERO_UUID
    # base64url alphabet: 0xfb 0xff -> "-" and "_"
    assert fx.uuid.parse(b"\xfb\xff" + bytes(14)) == "-_8AAAAAAAAAAAAAAAAAAA"
    assert fx.uuid.build("-_8AAAAAAAAAAAAAAAAAAA") == b"\xfb\xff" + bytes(14)
    with pytest.raises(ValueError):
        fx.uuid_from_string("AAAA")


def test_tagged_fields_golden_known_and_unknown():
    tags = fx.TaggedFields({0: ("leader", fx.int32), 1: ("name", fx.compact_string)})
    # two tags: 0 (int32 5) and 3 (unknown, 2 raw bytes "hi")
    data = bytes.fromhex("02" "00" "04" "00000005" "03" "02" "6869")
    parsed = tags.parse(data)
    assert parsed == {"leader": 5, fx.UNKNOWN_TAGS: [(3, b"hi")]}
    assert tags.build(parsed) == data
    assert tags.build({"name": "ab", "leader": 5}).hex() == "02" "00" "04" "00000005" "01" "03" "036162"
    assert tags.parse(b"\x00") == {}
    assert fx.empty_tagged_fields.build({}) == b"\x00"


def test_tagged_field_that_does_not_parse():
    tags = fx.TaggedFields({0: ("leader", fx.int32)})
    with pytest.raises(c.ValidationError, match="tagged field 0"):
        tags.parse(bytes.fromhex("01" "00" "02" "0000"))


def test_nullable_struct_marker():
    con = fx.NullableStruct(fx.int32)
    assert con.build(None) == b"\xff"
    assert con.build(9).hex() == "0100000009"
    assert con.parse(b"\xff") is None
    assert con.parse(bytes.fromhex("0100000009")) == 9


@given(st.text(max_size=300))
def test_compact_string_round_trip(text):
    assert fx.compact_string.parse(fx.compact_string.build(text)) == text


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_unsigned_varint_round_trip(value):
    assert fx.unsigned_varint.parse(fx.unsigned_varint.build(value)) == value


@given(st.binary(min_size=16, max_size=16))
def test_uuid_round_trip(raw):
    text = fx.uuid.parse(raw)
    assert len(text) == 22
    assert fx.uuid.build(text) == raw


def test_strings_decode_as_java_strings():
    # Readable.readString: new String(bytes, UTF_8); a surrogate's 3 bytes are one U+FFFD
    assert fx.string.parse(bytes.fromhex("0005" "61eda08062")) == "a\ufffdb"
    assert fx.compact_string.parse(bytes.fromhex("04" "f08080")) == "\ufffd" * 3


def test_tagged_nullable_struct_marker_is_an_unsigned_varint():
    """Kafka's generated code writes a tagged nullable struct after an unsigned varint
    marker and reads ``readUnsignedVarint() <= 0`` as null (MessageDataGenerator), where
    an untagged one has an int8 marker (< 0: null)."""
    from kafkalog_cli.decoders import group_messages as gm

    m = gm.ConsumerGroupMemberMetadataValue
    head = bytes.fromhex("00 00 01 01 01 00 ffffffff 00")  # every regular field empty
    classic = bytes.fromhex("0000afc8 01 00")  # session timeout 45000, no protocols
    present, _ = m.parse(head + bytes.fromhex("01 00") + bytes([len(classic) + 1, 1])
                         + classic, 0)
    assert present["classicMemberMetadata"] == {"sessionTimeoutMs": 45000,
                                                "supportedProtocols": []}
    null, _ = m.parse(head + bytes.fromhex("01 00 01 00"), 0)  # marker 0: null
    assert null["classicMemberMetadata"] is None
    # a two-byte varint marker (128) is present, not the int8 -128
    big, _ = m.parse(head + bytes.fromhex("01 00") + bytes([len(classic) + 2, 0x80, 0x01])
                     + classic, 0)
    assert big["classicMemberMetadata"]["sessionTimeoutMs"] == 45000
