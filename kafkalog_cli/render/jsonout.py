"""JSON output: one result object as one line (``-o json``).

Keys follow :doc:`docs/json.md` (Kafka's camelCase names; the JSON Schemas in
``kafkalog_cli/schemas/`` describe every object); non-ASCII text is written as UTF-8."""

from __future__ import annotations

import json
import sys

_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def dumps(obj) -> str:
    """``obj`` as compact JSON text (no newline)."""
    return _ENCODE(obj)


def write_object(obj, out=None) -> None:
    """Write ``obj`` as one JSON line to ``out`` (default: stdout)."""
    (out or sys.stdout).write(_ENCODE(obj) + "\n")
