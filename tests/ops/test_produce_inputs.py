"""kafkalog_cli.inputs: JSON Lines input refused line by line with file:line errors."""

import io

import pytest

from kafkalog_cli.cli.app import main
from kafkalog_cli.inputs import InputError, jsonl_records


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
