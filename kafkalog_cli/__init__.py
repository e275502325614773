"""kafkalog: read, verify, repair and append to Apache Kafka log directories, no broker.

The library API (the CLI is a thin layer over it)::

    from kafkalog_cli import FileRecords, open_segment, dump, verify_index
"""

from ._version import __version__

__all__ = ["__version__"]
