"""Bytes in JSON: ``--data-encoding utf8|base64|hex``.

With utf8 (the default), bytes that are not valid UTF-8 come out base64 and the caller
records that in a ``...Encoding`` field."""

from __future__ import annotations

import base64

from ..format.utf8 import java_utf8


def encode_bytes(data, encoding: str) -> tuple[str | None, str | None]:
    """Return ``(text, fallback)``: the encoded text and, when utf8 had to fall back,
    ``"base64"`` (else None). ``None`` data gives ``(None, None)``."""
    if data is None:
        return None, None
    if encoding == "utf8":
        try:
            return bytes(data).decode("utf-8"), None
        except UnicodeDecodeError:
            return base64.b64encode(data).decode("ascii"), "base64"
    if encoding == "base64":
        return base64.b64encode(data).decode("ascii"), None
    if encoding == "hex":
        return bytes(data).hex(), None
    raise ValueError(f"unknown data encoding {encoding!r}")


def java_string(data) -> str:
    """What Java's ``new String(bytes, UTF_8)`` prints (Kafka's StringDecoder):
    malformed sequences become U+FFFD, as many as the JDK's decoder gives
    (:func:`kafkalog_cli.format.utf8.java_utf8`)."""
    return java_utf8(data)
