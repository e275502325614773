"""Decoders return raw bytes with a warning on any input; they never raise."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog_cli.decoders import (
    ClusterMetadataDecoder,
    ConsumerOffsetsDecoder,
    RemoteLogMetadataDecoder,
    ShareGroupStateDecoder,
    TransactionLogDecoder,
    control_text,
    decode_control_record,
    format_text,
)

maybe_bytes = st.one_of(st.none(), st.binary(max_size=80))
# keys/values that start like real ones, so the fuzzing reaches the message parsers
prefixed = st.builds(lambda p, b: p + b, st.sampled_from(
    [b"\x00\x00", b"\x00\x01", b"\x00\x02", b"\x00\x03", b"\x00\x04", b"\x01\x02\x00",
     b"\x01\x03\x02", b"\x01\x00\x03", b"\x01\x05\x02"]), st.binary(max_size=80))
inputs = st.one_of(maybe_bytes, prefixed)


@settings(max_examples=150)
@given(inputs, inputs)
def test_consumer_offsets_never_raises(key, value):
    d = ConsumerOffsetsDecoder().decode(key, value)
    assert d.key_json() is not None or key is None
    d.value_json()


@settings(max_examples=150)
@given(inputs, inputs)
def test_transaction_log_never_raises(key, value):
    d = TransactionLogDecoder().decode(key, value)
    format_text(d)
    d.value_json()


@settings(max_examples=150)
@given(inputs, inputs)
def test_cluster_metadata_never_raises(key, value):
    d = ClusterMetadataDecoder().decode(key, value)
    d.value_json()


@settings(max_examples=150)
@given(st.one_of(st.none(), st.integers(-1, 10)), inputs, inputs)
def test_control_records_never_raise(type_id, key, value):
    control_text(decode_control_record(type_id, key, value))


# prefixes reaching the share-group-state, newer consumer-offsets and remote parsers
kafka4_prefixed = st.builds(lambda p, b: p + b, st.sampled_from(
    [b"\x00\x00", b"\x00\x01", b"\x00\x0b", b"\x00\x0f", b"\x00\x11", b"\x00\x17",
     b"\x01\x00\x00", b"\x01\x00\x01", b"\x01\x01\x00", b"\x01\x02\x00", b"\x01\x03\x00"]),
    st.binary(max_size=120))
kafka4_inputs = st.one_of(maybe_bytes, kafka4_prefixed)


@settings(max_examples=200)
@given(kafka4_inputs, kafka4_inputs)
def test_kafka4_decoders_never_raise(key, value):
    for decoder in (ConsumerOffsetsDecoder(), ShareGroupStateDecoder(),
                    RemoteLogMetadataDecoder()):
        d = decoder.decode(key, value)
        d.kafka_text(0)
        assert d.ok or d.warnings
