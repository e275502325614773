"""Small pieces checked against hand-computed values: Confluent's frame and Protobuf
message indexes (zigzag varints), hostile schemas and references, recursive types."""

from __future__ import annotations

import json

import pytest
from kafkalog_testkit import zigzag as _zigzag  # Avro longs are zigzag varints too
from registry_testkit import need

from kafkalog_cli.errors import SchemaDecodeError
from kafkalog_cli.registry.records import SchemaValue, schema_key_bytes, schema_value_bytes
from kafkalog_cli.registry.store import SchemaStore
from kafkalog_cli.registry.wire import frame, read_message_indexes, split_frame


def test_frame_and_message_indexes():
    # id 258 = 0x00000102; [0] is the single byte 0; [1, 2]: count 2 -> zigzag 4, 1 -> 2, 2 -> 4
    assert frame(258, b"P") == b"\x00\x00\x00\x01\x02P"
    assert frame(7, b"P", [0]) == b"\x00\x00\x00\x00\x07\x00P"
    assert frame(7, b"P", [1, 2]) == b"\x00\x00\x00\x00\x07\x04\x02\x04P"
    assert split_frame(b"\x00\x00\x00\x01\x02P") == (258, 5)
    assert read_message_indexes(b"\x04\x02\x04P", 0) == ([1, 2], 3)
    assert read_message_indexes(b"\x00P", 0) == ([0], 1)
    # 300 -> zigzag 600 = 0xd8 0x04
    assert read_message_indexes(b"\x02\xd8\x04", 0) == ([300], 3)


@pytest.mark.parametrize("data,why", [
    (b"\x00\x00\x00", "shorter than the 5-byte header"),
    (b"\x01\x00\x00\x00\x01", "unknown magic byte 1"),
])
def test_bad_frames(data, why):
    with pytest.raises(SchemaDecodeError, match=why):
        split_frame(data)


@pytest.mark.parametrize("data,why", [
    (b"\x03\x02", "invalid Protobuf message-index count -2"),
    (b"\xff\xff\xff\xff\xff\x01", "overlong varint"),  # a 6th byte (readVarint: 5 at most)
    (b"\x02", "truncated"),
    (b"\xfe\xff\xff\xff\x0f", "invalid Protobuf message-index count"),  # 2**31 - 1
])
def test_bad_message_indexes(data, why):
    with pytest.raises(SchemaDecodeError, match=why):
        read_message_indexes(data, 0)


def _store(*schemas) -> SchemaStore:
    s = SchemaStore(source="test")
    for i, (subject, text, st, refs) in enumerate(schemas, 1):
        s.apply(schema_key_bytes(subject, 1), schema_value_bytes(
            SchemaValue(subject, 1, i, text, st, refs)), i)
    return s


def test_a_reference_name_cannot_leave_protoc_s_directory():
    need("grpc_tools")
    from kafkalog_cli.registry.decoder import RecordDecoder
    from kafkalog_cli.registry.records import SchemaReference

    s = _store(("x.proto", 'syntax = "proto3";\nmessage X {}\n', "PROTOBUF", ()),
               ("t-value", 'syntax = "proto3";\nimport "../x.proto";\nmessage T {}\n',
                "PROTOBUF", (SchemaReference("../x.proto", "x.proto", 1),)))
    d = RecordDecoder(s, "t", value_decoder="schema-registry").decode(
        None, b"\x00\x00\x00\x00\x02\x00")
    assert d.value is None and "is not a relative .proto path" in d.warnings[0]


def test_reference_cycles_are_bounded():
    from kafkalog_cli.registry.decoder import RecordDecoder
    from kafkalog_cli.registry.records import SchemaReference

    s = SchemaStore()
    for v in (1, 2):
        s.apply(schema_key_bytes("a", v), schema_value_bytes(SchemaValue(
            "a", v, v, '"string"', "AVRO", (SchemaReference("n", "a", 3 - v),))), v)
    d = RecordDecoder(s, "t", value_decoder="avro").decode(None, b"\x00\x00\x00\x00\x01\x02x")
    # the cycle a/1 -> a/2 -> a/1 is followed once, not forever
    assert d.value.datum == "x" and not d.warnings


def test_recursive_avro_type_is_json_text_in_exports():
    need("fastavro")
    pa = need("pyarrow")
    from kafkalog_cli.registry.arrow import TypedColumn

    node = {"type": "record", "name": "Node", "fields": [
        {"name": "v", "type": "int"}, {"name": "next", "type": ["null", "Node"]}]}
    s = _store(("t-value", json.dumps(node), "AVRO", ()))
    c = TypedColumn(s, "t", "value", "schema-registry")
    assert c.arrow_type == pa.string() and "recursive type Node" in c.problems[0]
    # v=1, next: branch 1 (Node) v=2, next: branch 0 (null); zigzag ints
    payload = b"\x00\x00\x00\x00\x01" + bytes([2, 2, 4, 0])
    arr, ids, raw, bad = c.column([payload])
    assert json.loads(arr[0].as_py()) == {"v": 1, "next": {"Node": {"v": 2, "next": None}}}
    assert bad == 0 and ids.to_pylist() == [1]


_NULLS = json.dumps({"type": "record", "name": "N", "fields": [
    {"name": "id", "type": "long"},
    {"name": "tags", "type": {"type": "map", "values": "string"}},
    {"name": "gaps", "type": {"type": "array", "items": "null"}},
    {"name": "empty", "type": {"type": "array", "items": {
        "type": "record", "name": "E", "fields": [
            {"name": "z", "type": {"type": "fixed", "name": "Z", "size": 0}}]}}},
]})


def test_an_array_of_zero_byte_items_cannot_claim_billions():
    """A 12-byte payload claiming 2^62 nulls was built by fastavro as a list (memory
    without bound, hours of CPU): it is refused when the count is read. fastavro itself
    writes the well-formed payloads, and reads them back unchanged."""
    need("fastavro")
    import io

    from fastavro import parse_schema, schemaless_writer

    from kafkalog_cli.registry.avro import MAX_ZERO_WIDTH_ITEMS, AvroCodec

    codec = AvroCodec(_NULLS)
    datum = {"id": 7, "tags": {"a": "b"}, "gaps": [None] * 1000, "empty": [{"z": b""}] * 3}
    out = io.BytesIO()
    schemaless_writer(out, parse_schema(json.loads(_NULLS)), datum)
    assert codec.decode(out.getvalue()) == datum
    # id 7, an empty map, then 2^62 nulls in one block
    hostile = _zigzag(7) + _zigzag(0) + _zigzag(2 ** 62) + _zigzag(0) + _zigzag(0)
    with pytest.raises(ValueError, match="zero-byte type"):
        codec.decode(hostile)
    # the limit counts every block of every such array, the record of a fixed(0) too
    many = (_zigzag(7) + _zigzag(0) + _zigzag(MAX_ZERO_WIDTH_ITEMS) + _zigzag(0)
            + _zigzag(1) + _zigzag(0))
    with pytest.raises(ValueError, match="zero-byte type"):
        codec.decode_json_value(many)
    # a negative block count is followed by the block's byte size (Avro's blocking)
    blocked = _zigzag(7) + _zigzag(0) + _zigzag(-3) + _zigzag(0) + _zigzag(0) + _zigzag(0)
    assert codec.decode(blocked)["gaps"] == [None, None, None]


def test_arrays_of_sized_items_need_no_guard():
    need("fastavro")
    from kafkalog_cli.registry.avro import AvroCodec

    codec = AvroCodec(json.dumps({"type": "array", "items": ["null", "long"]}))
    assert codec._guard is None
    assert codec.decode(_zigzag(2) + _zigzag(0) + _zigzag(1) + _zigzag(5) + _zigzag(0)) \
        == [None, 5]


@pytest.mark.parametrize("depth", [600, 200_000], ids=["types", "json"])
def test_an_avro_schema_nested_too_deeply_is_a_schema_error(depth):
    """600 nested unions parse as JSON but exhaust the stack of the walk over the types;
    200,000 ``[`` that of the JSON parser: both are a SchemaDecodeError (a RecursionError
    traceback before)."""
    need("fastavro")
    from kafkalog_cli.registry import avro

    with pytest.raises(SchemaDecodeError, match="nested too deeply"):
        avro.parse("[" * depth + '"int"' + "]" * depth, {})


@pytest.mark.parametrize("text, depth", [
    ('{"items": {"$ref": "#"}}', 900),   # validation recurses a level per level
    ('{"type": "array"}', 200_000),      # the JSON parser does
])
def test_a_json_value_nested_too_deeply_for_a_serializer_is_a_value_error(text, depth):
    """A RecursionError traceback from produce before."""
    need("jsonschema")
    from kafkalog_cli.registry.serialize import make_serializer

    ser = make_serializer(SchemaStore(source="test"), "json-schema", "t-value", text)
    with pytest.raises(ValueError, match="nested too deeply"):
        ser.serialize(("[" * depth + "]" * depth).encode())
    assert ser.serialize(b"[[]]").endswith(b"[[]]")


def test_a_recursive_value_deeper_than_the_bound_does_not_decode():
    """A linked list 100,000 deep (100 KB of union indexes) crashed the process inside
    fastavro's compiled reader (its C stack): it is refused by the walk first; 150 deep
    decodes, as fastavro itself reads it."""
    need("fastavro")
    import io

    from fastavro import parse_schema, schemaless_reader

    from kafkalog_cli.registry.avro import MAX_NESTING, AvroCodec

    text = json.dumps({"type": "record", "name": "L", "fields": [
        {"name": "v", "type": "int"}, {"name": "n", "type": ["null", "L"]}]})
    codec = AvroCodec(text)
    assert codec._guard is not None
    ok = b"\x02\x02" * 150 + b"\x02\x00"  # v=1, then the branch L, 150 times
    assert codec.decode(ok) == schemaless_reader(io.BytesIO(ok), parse_schema(json.loads(text)),
                                                 return_named_type=True)
    with pytest.raises(ValueError, match=f"nested more than {MAX_NESTING}"):
        codec.decode(b"\x02\x02" * 100_000 + b"\x02\x00")
    # a named type used twice is not recursive: no walk
    twice = AvroCodec(json.dumps({"type": "record", "name": "P", "fields": [
        {"name": "a", "type": {"type": "enum", "name": "E", "symbols": ["X", "Y"]}},
        {"name": "b", "type": "E"}]}))
    assert twice._guard is None
