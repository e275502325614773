"""Bytes as Kafka's tools print them: ``java_string``, Java's ``new String(bytes, UTF_8)``.
(The JSON encodings of bytes, ``--data-encoding``, are the result objects':
:mod:`kafkalog_cli.ops.encoding`.)"""

from __future__ import annotations

from ..schema.utf8 import java_utf8


def java_string(data) -> str:
    """What Java's ``new String(bytes, UTF_8)`` prints (Kafka's StringDecoder):
    malformed sequences become U+FFFD, as many as the JDK's decoder gives
    (:func:`kafkalog_cli.schema.utf8.java_utf8`)."""
    return java_utf8(data)
