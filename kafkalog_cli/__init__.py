"""kafkalog: read, verify, repair and append to Apache Kafka log directories, no broker.

The library API (the CLI is a thin layer over it)::

    from kafkalog_cli import FileRecords, LogSegment, Log, dump, DumpOptions, verify_index

Names are imported lazily on first use (module ``__getattr__``), so ``import kafkalog_cli``
and ``kafkalog --version`` stay fast.
"""

from __future__ import annotations

import importlib

from ._version import __version__

#: public name -> module (relative to this package) that defines it
_API = {
    # format
    "FileRecords": ".format.records",
    "RecordBatch": ".format.records",
    "LegacyRecordBatch": ".format.records",
    "Record": ".format.records",
    "build_batch": ".format.builder",
    "build_control_batch": ".format.builder",
    "build_legacy_message": ".format.builder",
    "build_legacy_wrapper": ".format.builder",
    # storage
    "LogSegment": ".storage.segment",
    "rebuild_indexes": ".storage.segment",
    "Log": ".storage.log",
    "OffsetIndex": ".storage.offset_index",
    "TimeIndex": ".storage.time_index",
    # operations
    "dump": ".ops.dump",
    "DumpOptions": ".ops.dump",
    "verify_index": ".ops.verify",
    "VerifyResult": ".ops.verify",
    # errors
    "KafkalogError": ".errors",
    "CorruptRecordError": ".errors",
    "CorruptIndexError": ".errors",
}

__all__ = ["__version__", *_API]


def __getattr__(name: str):
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
