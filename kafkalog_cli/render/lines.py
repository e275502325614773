"""Record lines a block at a time: the optional compiled formatters of ``dump-segment``'s
and ``read``'s record lines (``_speedups.c``), and the writer that puts their UTF-8 bytes
and the renderers' text on one stream.

The compiled lines are in use when the extension was built (``setup.py``, beside the
format's core) and the compiled core is on (:data:`kafkalog_cli.format.records.SPEEDUPS`:
not under ``KAFKALOG_PURE_PYTHON=1``); the Python loops of :mod:`.dump` and :mod:`.read`
are the reference and give the same bytes.
"""

from __future__ import annotations

import codecs
import os

from ..format.compiled import SPEEDUPS

#: ``--data-encoding`` -> the compiled loops' encoding number
C_ENCODINGS = {"utf8": 0, "base64": 1, "hex": 2}


def compiled_lines():
    """The compiled record lines (``kafkalog_cli.render._speedups``), or None: not built,
    or the compiled core is off."""
    if not SPEEDUPS:
        return None
    try:
        from . import _speedups
    except ImportError:
        return None
    return _speedups


#: bytes decoded at a time for a text stream that is not over a UTF-8 buffer
_TEXT_PIECE = 1 << 20


def text_and_bytes_writer(out):
    """``(write, flush)`` for text and UTF-8 bytes on the text stream ``out``: beneath a
    UTF-8 stream, both go to its binary buffer (text encoded as the stream would, with its
    ``errors``; ``out`` flushed first, and after each write when it is line-buffered);
    elsewhere (a StringIO, another encoding) bytes are decoded and written as text."""
    buf = getattr(out, "buffer", None)
    enc = getattr(out, "encoding", None)
    try:  # (where text streams translate newlines, the text stream does it)
        utf8 = (buf is not None and isinstance(enc, str) and os.linesep == "\n"
                and codecs.lookup(enc).name == "utf-8")
    except LookupError:
        utf8 = False
    if not utf8:
        tw = out.write

        def write_text(s) -> None:
            if s.__class__ is not bytes:
                tw(s)
            elif len(s) <= _TEXT_PIECE:
                tw(s.decode())
            else:  # a block of huge records: held once as bytes, decoded a piece at a time
                dec = codecs.getincrementaldecoder("utf-8")()
                view = memoryview(s)
                for i in range(0, len(s), _TEXT_PIECE):
                    tw(dec.decode(view[i:i + _TEXT_PIECE], i + _TEXT_PIECE >= len(s)))
        return write_text, out.flush
    out.flush()
    errors = getattr(out, "errors", None) or "strict"
    bw = buf.write
    if getattr(out, "line_buffering", False):
        def write_line_buffered(s) -> None:
            bw(s if s.__class__ is bytes else s.encode("utf-8", errors))
            buf.flush()
        return write_line_buffered, buf.flush

    def write(s) -> None:
        bw(s if s.__class__ is bytes else s.encode("utf-8", errors))
    return write, buf.flush


