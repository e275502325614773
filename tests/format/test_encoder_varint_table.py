"""The pure-Python encoder's precomputed varints of -64..16383 against kafka-python's
``encode_varint`` (an independent implementation of ByteUtils.writeVarint)."""

from kafka.record.util import encode_varint

from kafkalog_cli.format import encoder


def _kafka_python(value: int) -> bytes:
    out = bytearray()
    encode_varint(value, out.append)
    return bytes(out)


def test_small_varints_are_kafka_pythons():
    assert len(encoder._VT) == 64 + 16384
    for i, got in enumerate(encoder._VT):
        assert got == _kafka_python(i + encoder._VT_LO), i


def test_field_sizes_and_zero_prefixed_varints_follow_the_table():
    # a length-prefixed field of n bytes takes varint(n) + n bytes; null (-1) one byte
    assert encoder._VF[-1 - encoder._VT_LO] == 1
    for n in (0, 1, 63, 64, 8191, 8192, 16383):
        assert encoder._VF[n - encoder._VT_LO] == len(_kafka_python(n)) + n
    for i in (0, 1, 63, 64, 8191, 8192, 16383):
        assert encoder._Z_VI[i] == b"\x00" + _kafka_python(i)
