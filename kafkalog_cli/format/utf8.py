"""UTF-8 as Java decodes it: declared in :mod:`kafkalog_cli.schema.utf8` (the string type
of Kafka's messages), re-exported here for the record-format code that derives from it."""

from __future__ import annotations

from ..schema.utf8 import REPLACEMENT, java_utf8

__all__ = ["REPLACEMENT", "java_utf8"]
