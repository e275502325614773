"""render/lines.py's writer: text and the compiled lines' UTF-8 bytes on one stream give
exactly what writing the same text through the stream itself gives (its encoding, its
error handler, its order), whatever the stream."""

from __future__ import annotations

import io

import pytest

from kafkalog_cli.render import lines


def _through_writer(stream, pieces):
    w, flush = lines.text_and_bytes_writer(stream)
    for p in pieces:
        w(p)
    flush()


#: text, and the same text as the C gives it (UTF-8 bytes), in turn
TEXT = ["Dumping f\n", "| key: \u00e9\u20ac\U0001f600 payload: \ufffd\n", "tail\n"]
MIXED = [TEXT[0], TEXT[1].encode(), TEXT[2]]


@pytest.mark.parametrize("encoding,errors", [("utf-8", "strict"), ("UTF8", "strict"),
                                             ("utf-8", "surrogateescape"),
                                             ("latin-1", "replace"), ("ascii", "replace")])
def test_bytes_and_text_as_the_stream_writes_text(encoding, errors):
    ref = io.BytesIO()
    t = io.TextIOWrapper(ref, encoding=encoding, errors=errors)
    t.write("before\n")
    for p in TEXT:
        t.write(p)
    t.flush()
    expected = ref.getvalue() + "after\n".encode(encoding, errors)

    got = io.BytesIO()
    t2 = io.TextIOWrapper(got, encoding=encoding, errors=errors)
    t2.write("before\n")  # pending in the text layer: written first
    _through_writer(t2, MIXED)
    t2.write("after\n")
    t2.flush()
    assert got.getvalue() == expected


def test_surrogate_escaped_text_keeps_the_streams_error_handler():
    """A path with bytes that are not UTF-8 (surrogateescape) is written back as its bytes
    under surrogateescape, and refused under strict, as the stream itself does."""
    name = b"Dumping \xff.log\n".decode("utf-8", "surrogateescape")
    got = io.BytesIO()
    t = io.TextIOWrapper(got, encoding="utf-8", errors="surrogateescape")
    _through_writer(t, [name])
    assert got.getvalue() == b"Dumping \xff.log\n"
    strict = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    with pytest.raises(UnicodeEncodeError):
        _through_writer(strict, [name])


def test_a_huge_block_on_a_text_stream_is_decoded_in_pieces():
    """A block over the piece size, cut inside a multi-byte character, reads whole."""
    text = "x" * (lines._TEXT_PIECE - 1) + "\u20ac" * 5 + "\n"
    out = io.StringIO()
    _through_writer(out, ["a\n", text.encode(), "b\n"])
    assert out.getvalue() == "a\n" + text + "b\n"


def test_line_buffered_stream_gets_each_block_at_once():
    raw = io.BytesIO()
    t = io.TextIOWrapper(raw, encoding="utf-8", line_buffering=True)
    w, _ = lines.text_and_bytes_writer(t)
    w(b"| offset: 0\n")
    assert raw.getvalue() == b"| offset: 0\n"
