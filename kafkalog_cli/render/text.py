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

_UNSAFE_CHARS = [*range(0x00, 0x20), *range(0x7F, 0xA0), 0x2028, 0x2029,
                 *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: each unsafe character -> its escape, for ``str.translate``: it writes the result as it
#: goes (memory: the escaped text), where ``re.sub`` with a function keeps one string
#: object per match until the end (~67 bytes per control byte of a record value)
_ESCAPES = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _UNSAFE_CHARS}


def safe(text: str) -> str:
    """``text`` with every unsafe character as a visible escape (see the module
    docstring); ``text`` itself when it has none. Memory: the escaped text (at most 6
    characters per character of ``text``)."""
    return text.translate(_ESCAPES) if _UNSAFE.search(text) else text


def safe_bytes(data) -> str:
    """Bytes as safe text: UTF-8, with each byte that is not part of a UTF-8 sequence as
    ``\\xNN`` and unsafe characters escaped."""
    return safe(bytes(data).decode("utf-8", "backslashreplace"))
