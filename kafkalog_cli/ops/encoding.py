"""Bytes in JSON: ``--data-encoding utf8|base64|hex``.

A field whose text is not the bytes' UTF-8 says so in a ``...Encoding`` field beside it
(``keyEncoding``, ``valueEncoding``, a header's ``valueEncoding``): always with base64
or hex, and with utf8 (the default) when bytes that are not valid UTF-8 had to fall back
to base64. ``produce --format jsonl`` reads those fields back, so the bytes round-trip
exactly (docs/json.md)."""

from __future__ import annotations

import base64


def encode_bytes(data, encoding: str) -> tuple[str | None, str | None]:
    """Return ``(text, label)``: the encoded text and the ``...Encoding`` value to write
    beside it: None for UTF-8 text, ``"base64"`` / ``"hex"`` otherwise (utf8 falls back
    to base64 for bytes that are not valid UTF-8). ``None`` data gives ``(None, None)``."""
    if data is None:
        return None, None
    if encoding == "utf8":
        try:
            return bytes(data).decode("utf-8"), None
        except UnicodeDecodeError:
            return base64.b64encode(data).decode("ascii"), "base64"
    if encoding == "base64":
        return base64.b64encode(data).decode("ascii"), "base64"
    if encoding == "hex":
        return bytes(data).hex(), "hex"
    raise ValueError(f"unknown data encoding {encoding!r}")
