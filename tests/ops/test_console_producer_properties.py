"""produce's kafka-console-producer habits: ``--property`` with LineMessageReader's
semantics (the cases of Kafka's tools/src/test/java/.../LineMessageReaderTest.java),
unknown properties refused, ``--compression-codec`` (alone: gzip, as ConsoleProducer)."""

from __future__ import annotations

import io

import pytest
from kafka.record import MemoryRecords

from kafkalog_cli.errors import InputError, InvalidArgumentError
from kafkalog_cli.inputs import LineReaderConfig, console_lines_records

DEFAULT = ["parse.key=true", "parse.headers=true"]  # LineMessageReaderTest.defaultTestProps


def read(props, text: str):
    cfg = LineReaderConfig.from_properties(props)
    out = []
    for chunk in console_lines_records(io.BytesIO(text.encode()), "f", cfg):
        for r in chunk:
            if isinstance(r, bytes):  # a plain value (the fast path of lines)
                out.append((None, r.decode(), []))
                continue
            out.append((None if r.key is None else r.key.decode(),
                        None if r.value is None else r.value.decode(),
                        [(k, None if v is None else v.decode()) for k, v in r.headers]))
    return out


CASES = [  # (name, props, input, records): LineMessageReaderTest's
    ("testLineReader", ["parse.key=true", "parse.headers=false"],
     "key0\tvalue0\nkey1\tvalue1", [("key0", "value0", []), ("key1", "value1", [])]),
    ("testLineReaderHeader", DEFAULT,
     "headerKey0:headerValue0,headerKey1:headerValue1\tkey0\tvalue0\n",
     [("key0", "value0", [("headerKey0", "headerValue0"), ("headerKey1", "headerValue1")])]),
    ("testMinimalValidInputWithHeaderKeyAndValue", DEFAULT, ":\t\t", [("", "", [("", "")])]),
    ("testKeyMissingValue", ["parse.key=true"], "key\t", [("key", "", [])]),
    ("testDemarcationsLongerThanOne",
     DEFAULT + ["key.separator=\t\t", "headers.delimiter=\t\t", "headers.separator=---",
                "headers.key.separator=::::"],
     "headerKey0.0::::headerValue0.0---headerKey1.0::::\t\tkey\t\tvalue",
     [("key", "value", [("headerKey0.0", "headerValue0.0"), ("headerKey1.0", "")])]),
    ("testLineReaderHeaderNoKey", ["parse.headers=true"], "headerKey:headerValue\tvalue\n",
     [(None, "value", [("headerKey", "headerValue")])]),
    ("testLineReaderOnlyValue", [], "value\n", [(None, "value", [])]),
    ("testParseHeaderEnabledWithCustomDelimiterAndVaryingNumberOfKeyValueHeaderPairs",
     DEFAULT + ["key.separator=#", "headers.delimiter=!", "headers.separator=&",
                "headers.key.separator=:"],
     "headerKey0.0:headerValue0.0&headerKey0.1:headerValue0.1!key0#value0\n"
     "headerKey1.0:headerValue1.0!key1#value1",
     [("key0", "value0", [("headerKey0.0", "headerValue0.0"),
                          ("headerKey0.1", "headerValue0.1")]),
      ("key1", "value1", [("headerKey1.0", "headerValue1.0")])]),
    ("testIgnoreErrorInInput", DEFAULT + ["ignore.error=true"],
     "headerKey0.0:headerValue0.0\tkey0\tvalue0\n"
     "headerKey1.0:headerValue1.0,headerKey1.1:headerValue1.1[MISSING-HEADER-DELIMITER]key1"
     "\tvalue1\n"
     "headerKey2.0:headerValue2.0\tkey2[MISSING-KEY-DELIMITER]value2\n"
     "headerKey3.0:headerValue3.0[MISSING-HEADER-DELIMITER]key3[MISSING-KEY-DELIMITER]"
     "value3\n",
     [("key0", "value0", [("headerKey0.0", "headerValue0.0")]),
      (None, "value1", [("headerKey1.0", "headerValue1.0"),
                        ("headerKey1.1", "headerValue1.1[MISSING-HEADER-DELIMITER]key1")]),
      (None, "key2[MISSING-KEY-DELIMITER]value2", [("headerKey2.0", "headerValue2.0")]),
      (None, "headerKey3.0:headerValue3.0[MISSING-HEADER-DELIMITER]key3"
             "[MISSING-KEY-DELIMITER]value3", [])]),
    ("testMalformedHeaderIgnoreError", DEFAULT + ["ignore.error=true"],
     "key-val\tkey0\tvalue0\n", [("key0", "value0", [("key-val", None)])]),
    ("testNullMarker", ["parse.key=true", "null.marker=<NULL>"],
     "key\t\nkey\t<NULL>\nkey\t<NULL>value\n<NULL>\tvalue\n<NULL>\t<NULL>",
     [("key", "", []), ("key", None, []), ("key", "<NULL>value", []), (None, "value", []),
      (None, None, [])]),
    ("testNullMarker (no marker)", ["parse.key=true"],
     "key\t\nkey\t<NULL>\nkey\t<NULL>value\n<NULL>\tvalue\n<NULL>\t<NULL>",
     [("key", "", []), ("key", "<NULL>", []), ("key", "<NULL>value", []),
      ("<NULL>", "value", []), ("<NULL>", "<NULL>", [])]),
    ("testNullMarkerWithHeaders", DEFAULT + ["null.marker=<NULL>"],
     "h0:v0,h1:v1\t<NULL>\tvalue\n<NULL>\tkey\t<NULL>\nh0:,h1:v1\t<NULL>\t<NULL>\n"
     "h0:<NULL>,h1:v1\tkey\t<NULL>\nh0:<NULL>,h1:<NULL>value\tkey\t<NULL>\n",
     [(None, "value", [("h0", "v0"), ("h1", "v1")]), ("key", None, []),
      (None, None, [("h0", ""), ("h1", "v1")]), ("key", None, [("h0", None), ("h1", "v1")]),
      ("key", None, [("h0", None), ("h1", "<NULL>value")])]),
    ("testNullMarkerHeaderKeyThrows (no marker)", DEFAULT, "<NULL>:v0,h1:v1\tkey\tvalue\n",
     [("key", "value", [("<NULL>", "v0"), ("h1", "v1")])]),
    # Pattern.split drops trailing empty strings
    ("trailing headers separator", DEFAULT, "a:1,,\tk\tv\n", [("k", "v", [("a", "1")])]),
]


@pytest.mark.parametrize("name,props,text,want", CASES, ids=[c[0] for c in CASES])
def test_line_message_reader_cases(name, props, text, want):
    assert read(props, text) == want


@pytest.mark.parametrize("props,text,message", [
    (DEFAULT, "headerKey0.0:headerValue0.0,headerKey0.1:headerValue0.1\tkey0\tvalue0\n"
              "headerKey1.0:headerValue1.0\tkey1[MISSING-DELIMITER]value1",
     "No key separator found on line number 2: 'headerKey1.0:headerValue1.0\tkey1"
     "[MISSING-DELIMITER]value1'"),
    (DEFAULT, "key[MISSING-DELIMITER]val\tkey0\tvalue0\n",
     "No header key separator found in pair 'key[MISSING-DELIMITER]val' on line number 1"),
    (DEFAULT + ["null.marker=<NULL>"], "<NULL>:v0,h1:v1\tkey\tvalue\n",
     "Header keys should not be equal to the null marker '<NULL>' as they can't be null"),
])
def test_line_message_reader_errors(props, text, message):
    with pytest.raises(InputError) as e:
        read(props, text)
    assert str(e.value).endswith(message)


@pytest.mark.parametrize("props,message", [
    (["headers.delimiter=\t", "headers.separator=\t", "headers.key.separator=\t"],
     "headers.delimiter and headers.separator may not be equal"),
    (["headers.delimiter=\t", "headers.key.separator=\t"],
     "headers.delimiter and headers.key.separator may not be equal"),
    (["headers.separator=,", "headers.key.separator=,"],
     "headers.separator and headers.key.separator may not be equal"),
    (["headers.delimiter=-", "headers.separator=:", "headers.key.separator=/",
      "null.marker=-"], "null.marker and headers.delimiter may not be equal"),
    (["headers.delimiter=-", "headers.separator=:", "headers.key.separator=/",
      "null.marker=:"], "null.marker and headers.separator may not be equal"),
    (["headers.delimiter=-", "headers.separator=:", "headers.key.separator=/",
      "null.marker=/"], "null.marker and headers.key.separator may not be equal"),
    (["null.marker=\t"], "null.marker and key.separator may not be equal"),
    (["parse.keys=true"], "unknown --property 'parse.keys'"),
    (["print.key=true"], "unknown --property 'print.key'"),
])
def test_configure_refusals(props, message):
    with pytest.raises(InvalidArgumentError, match=message.replace(".", r"\.")):
        LineReaderConfig.from_properties(props)


class _Result:
    def __init__(self, exit_code, output):
        self.exit_code, self.output = exit_code, output


def _cli(tmp_path, args, stdin: bytes):
    """``kafkalog produce`` through the console-script entry point (errors mapped to exit
    statuses), stdin from ``stdin``."""
    import sys

    from typer.testing import CliRunner

    from kafkalog_cli.cli import main

    with CliRunner().isolation(input=stdin) as (out, err, _):
        code = 0
        try:
            main(["produce", "--log-dir", str(tmp_path / "l"), "--topic", "t", "--no-fsync",
                  *args])
        except SystemExit as e:
            code = e.code or 0
        sys.stdout.flush()
        sys.stderr.flush()
        return _Result(code, out.getvalue().decode() + err.getvalue().decode())


def _batches(part_dir):
    out = []
    for log in sorted(part_dir.glob("*.log")):
        mr = MemoryRecords(log.read_bytes())
        while (b := mr.next_batch()) is not None:
            out.append((b.compression_type, [(r.key, r.value, list(r.headers)) for r in b]))
    return out


def test_cli_properties(tmp_path):
    r = _cli(tmp_path, ["--property", "parse.key=true", "--property", "key.separator=:",
                        "--property", "parse.headers=true", "--property",
                        "headers.delimiter=|", "--property", "headers.key.separator==",
                        "--property", "null.marker=NULL"], b"h=1|k1:v1\nNULL|k2:NULL\n")
    assert r.exit_code == 0, r.output
    (( _, recs),) = _batches(tmp_path / "l" / "t-0")
    assert recs == [(b"k1", b"v1", [("h", b"1")]), (b"k2", None, [])]


def test_cli_unknown_property_refused(tmp_path):
    r = _cli(tmp_path, ["--property", "parse.key=true", "--property", "key.seperator=:"],
             b"a:b\n")
    assert r.exit_code == 2
    assert "unknown --property 'key.seperator'" in r.output
    assert not (tmp_path / "l").exists()


@pytest.mark.parametrize("args,codec", [
    (["--compression-codec"], 1), (["--compression-codec", "lz4"], 3),
    (["--compression-codec", "--batch-size", "5"], 1), ([], 0)])
def test_compression_codec(tmp_path, args, codec):
    r = _cli(tmp_path, ["-o", "json", *args], b"a\nb\n")
    assert r.exit_code == 0, r.output
    assert [c for c, _ in _batches(tmp_path / "l" / "t-0")] == [codec]
