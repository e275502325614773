"""Text that is safe on a terminal: what the rich views print of data and of names read
from disk (record keys, values and headers, topic and file names, messages quoting them).

Control characters (C0, DEL, C1: ``ESC [2J`` clears a screen, ``ESC ]0;...BEL`` sets a
window title, U+009B is a one-character CSI on some terminals), line and paragraph
separators and the bidirectional overrides (which reorder what is shown) are written as
visible escapes (``\\x1b``, ``\\x00``, ``\\u202e``); bytes that are not UTF-8 as
``\\xNN``. The kafka and json outputs never go through here: they stay exact (JSON
escapes by itself; the kafka text is what Kafka's tools print)."""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def safe(text: str) -> str:
    """``text`` with every unsafe character as a visible escape (see the module
    docstring); ``text`` itself when it has none."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def safe_bytes(data) -> str:
    """Bytes as safe text: UTF-8, with each byte that is not part of a UTF-8 sequence as
    ``\\xNN`` and unsafe characters escaped."""
    return safe(bytes(data).decode("utf-8", "backslashreplace"))
