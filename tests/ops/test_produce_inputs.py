"""kafkalog_cli.inputs: JSON Lines input refused line by line with file:line errors."""

import io

import pytest

from kafkalog_cli.cli.app import main
from kafkalog_cli.errors import InputError
from kafkalog_cli.inputs import jsonl_records


def records(text: bytes, **kw) -> list:
    return [r for chunk in jsonl_records(io.BytesIO(text), "f", **kw) for r in chunk]


def error(text: bytes, **kw) -> InputError:
    with pytest.raises(InputError) as e:
        records(text, **kw)
    return e.value


@pytest.mark.parametrize("line", [
    b'{"value": "\\ud800"}',  # the all-values fast path
    b'{"key": "k", "value": "\\udfff"}',  # the columnar path
    b'{"key": "k", "value": {"x": "\\ud800"}}',  # JSON text of a non-string value
    b'{"key": "\\ud800x", "value": "v", "timestamp": 5}',
])
def test_lone_surrogate_names_the_line(line):
    e = error(b'{"value": "a"}\n' + line + b"\n")
    assert e.line == 2
    assert "lone surrogate" in str(e) and str(e).startswith("f:2: ")


def test_lone_surrogate_in_a_header_is_an_encoding_error():
    e = error(b'{"value": "a", "headers": {"h": "\\ud800"}}\n')
    assert e.line == 1 and "header 'h' holds a lone surrogate \\ud800" in str(e)
    e = error(b'{"value": "a", "headers": [["h", "\\ud800"]]}\n')
    assert "lone surrogate" in str(e) and "headers must be" not in str(e)


def test_surrogate_pair_is_one_character():
    (r,) = records(b'{"value": "\\ud83d\\ude00"}\n')  # a ValuesChunk: plain bytes
    assert r == "\U0001F600".encode()


def test_cli_lone_surrogate_no_traceback(tmp_path, capsys):
    data = tmp_path / "in.jsonl"
    data.write_bytes(b'{"value": "a"}\n{"value": "\\ud800"}\n')
    with pytest.raises(SystemExit) as e:
        main(["produce", "--log-dir", str(tmp_path / "l"), "--topic", "t", str(data)])
    assert e.value.code == 1
    err = capsys.readouterr().err
    assert f"{data}:2: value holds a lone surrogate" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("text,line", [
    (b'{"value":"a"},{"value":"b"}\n{"value":[{"x":1}\n{"y":2}]}\n', 1),
    (b'{"value":"a"}\n{"value":[{"x":1}\n{"y":2}]}\n', 2),
    (b'{"value":"a"}\n{"value":"b"},{"value":"c"}\n', 2),
    (b'{"value":"a"}\n{"v":{"x":{}\n{"y":2}}}\n', 2),
    # a line forging the marker put between lines when a chunk is parsed as one array
    (b'{"value":"a"}\n{"v":[{}\n{}]}\n{"a":1},"~",{"b":2}\n', 2),
    (b'{"value":"a"}\n{"v":[{}\n{}]}\n{"a":1},"\\u007e",{"b":2}\n', 2),
    (b'  {"value":"a"}  \n\n{"value":"b"},{"value":"c"}\n', 3),
])
def test_each_object_comes_from_its_own_line(text, line):
    assert error(text).line == line


def _reference(lines: list[bytes]):
    """Each line alone (nothing to glue it to): the number of the first one refused."""
    for n, ln in enumerate(lines, 1):
        try:
            records(ln + b"\n")
        except InputError:
            return n
    return None


def test_glued_lines_fuzz():
    import random

    rng = random.Random(5)
    # whole objects, two objects on a line, an object split over two lines, and noise
    blocks = [[b'{"value":"a"}'], [b'{"key":"k","value":"v"}'], [b'{"value":"a"},{}'],
              [b"{},{},{}"], [b'{"value":[{}', b"{}]}"], [b'{"key":{"x":{}', b'{"y":1}}}'],
              [b'{"value":[{}', b"{},{}", b"{}]}"], [b"{"], [b"}"], [b"{}]"], [b"[{}"],
              [b'{},"~",{}'], [b'{},"\\u007E",{}'], [b'{"value":"~"}'], [b" {} "],
              [b""]]
    for _ in range(3000):
        lines = [ln for _ in range(rng.randrange(1, 5)) for ln in rng.choice(blocks)]
        text = b"\n".join(lines) + b"\n"
        want = _reference(lines)
        try:
            got = records(text)
        except InputError as e:
            assert e.line == want, text
        else:
            assert want is None, text
            assert len(got) == sum(1 for ln in lines if ln.strip()), text


@pytest.mark.parametrize("line,message", [
    (b'{"value": "a", "headers": [[null, "v"]]}', "the key of pair 1 must be a string, got null"),
    (b'{"value": "a", "headers": [["k", "v"], [1, "v"]]}', "the key of pair 2 must be a string"),
    (b'{"value": "a", "headers": ["ab", "cd"]}', 'pair 1 must be a [key, value] array of two '
                                                'elements or a {key, value} object, got "ab"'),
    (b'{"value": "a", "headers": [["k", "v", "w"]]}', "pair 1 must be a [key, value] array"),
    (b'{"value": "a", "headers": [["k"]]}', "pair 1 must be a [key, value] array"),
    (b'{"value": "a", "headers": false}', "headers must be an object, an array of [key, value] "
                                          "pairs or of {key, value} objects, or null, got false"),
    (b'{"value": "a", "headers": 0}', "headers must be an object"),
    (b'{"value": "a", "headers": "h"}', "headers must be an object"),
    (b'{"value": NaN}', "malformed JSON: NaN is not valid JSON"),
    (b'{"value": "a", "key": -Infinity}', "malformed JSON: -Infinity is not valid JSON"),
    (b'{"value": {"x": [Infinity]}}', "malformed JSON: Infinity is not valid JSON"),
    (b'{"value": 1.5e400}', "value holds a number out of the range of a 64-bit float"),
    (b'{"value": "a", "headers": {"h": [-1e999]}}', "header 'h' holds a number out of the range"),
])
def test_invalid_headers_and_numbers_name_the_line(line, message):
    e = error(b'{"value": "ok"}\n' + line + b"\n")
    assert e.line == 2, str(e)
    assert message in str(e), str(e)


def test_valid_headers_forms():
    recs = records(b'{"value": "a", "headers": [["k", "v"], ["k", null], ["n", 1]]}\n'
                   b'{"value": "b", "headers": {"k": "v", "j": {"x": 1.5}}}\n'
                   b'{"value": "c", "headers": null}\n{"value": "d", "headers": []}\n'
                   b'{"value": "e", "headers": {}}\n')
    assert [r.headers for r in recs] == [
        (("k", b"v"), ("k", None), ("n", b"1")), (("k", b"v"), ("j", b'{"x":1.5}')), (), (),
        ()]


def test_read_json_lines_take_the_columnar_path_and_give_the_same_records():
    """read -o json writes "headers": [] for a record without headers; such chunks are
    read column by column, with the same records as line by line."""
    from kafkalog_cli.inputs import _columnar, _record

    objs = [{"topic": "t", "partition": 3, "offset": i, "timestamp": 5 + i,
             "timestampType": "CreateTime", "leaderEpoch": None, "key": f"k{i}",
             "value": "v", "headers": []} for i in range(3)]
    objs[1]["headers"] = {"h": "x"}
    col = _columnar(objs, range(1, 4), False)
    assert col is not None
    assert col == [_record(o, n, "utf8") for n, o in enumerate(objs, 1)]
    objs[2]["headers"] = [{"key": "h", "value": "x"}]
    assert _columnar(objs, range(1, 4), False) is None  # the record path reads those


def test_where_orjson_differs_records_are_the_json_modules():
    """The columnar path parses with orjson, which reads integers beyond 64 bits as floats;
    such a chunk goes record by record through the json module, whose records (exact
    integers as JSON text, the last of duplicate names) are the reference."""
    import json

    lines = [b'{"key": "k", "value": "plain", "headers": {"h": "x"}}',
             b'{"key": "k", "value": 18446744073709551616}',
             b'{"value": "v", "headers": {"h": -123456789012345678901234567890}}',
             b'{"key": "a", "key": "b", "value": "v", "timestamp": 5}',
             b'{"value": [1, 18446744073709551617.5, {"x": 1e308}]}']
    recs = records(b"\n".join(lines) + b"\n")
    want = []
    for n, ln in enumerate(lines, 1):
        o = json.loads(ln)

        def enc(v):
            return None if v is None else (v if isinstance(v, str) else json.dumps(
                v, separators=(",", ":"))).encode()

        want.append((n, o.get("timestamp"), enc(o.get("key")), enc(o.get("value")),
                     tuple((k, enc(v)) for k, v in (o.get("headers") or {}).items()), None))
    assert [tuple(r) for r in recs] == want
    assert recs[1].value == b"18446744073709551616"


def test_columnar_parse_leaves_the_garbage_collector_as_it_was():
    import gc

    text = b'{"key": "k", "value": "v", "headers": {"h": "x"}}\n' * 3
    assert gc.isenabled()
    assert len(records(text)) == 3 and gc.isenabled()
    gc.disable()
    try:
        assert len(records(text)) == 3 and not gc.isenabled()
    finally:
        gc.enable()
