"""The whole ``kafkalog`` command line: :data:`app` with every command registered.

:mod:`.root` holds the Typer object, its global options and :func:`main`; importing this
module registers every command on it (``kafkalog --help``, shell completion, the man
pages, tests). The console script imports only the command it runs
(:func:`kafkalog_cli.cli.main`).
"""

from __future__ import annotations

from .root import OPTIONAL_VALUES, app, main  # noqa: F401


def _register() -> None:
    from .commands import (  # noqa: F401
        audit,
        copy,
        delete_records,
        describe,
        dump_segment,
        export,
        get_offsets,
        groups,
        produce,
        read,
        recover,
        retention,
        serve,
        share_groups,
        verify_index,
    )


_register()
