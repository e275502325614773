"""How every command hands back its result: ``-o json`` or the rich view, then the exit
status (one helper instead of a copy per command)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

import typer

from . import exit_codes
from .options import Output, resolve_output


def emit(result, output: Output | None, render: Callable[[object], None]) -> None:
    """With ``-o json`` (the default when stdout is not a terminal), write
    ``result.to_dict()`` as one JSON line to stdout; else call ``render(result)``, the
    rich view."""
    if resolve_output(output) is Output.json:
        from ..render.jsonout import write_object

        write_object(result.to_dict())
    else:
        render(result)


def finish(result) -> NoReturn:
    """Exit with the status :func:`~kafkalog_cli.cli.exit_codes.for_result` gives."""
    raise typer.Exit(exit_codes.for_result(result))


def emit_and_exit(result, output: Output | None, render: Callable[[object], None]
                  ) -> NoReturn:
    """:func:`emit`, then :func:`finish`."""
    emit(result, output, render)
    finish(result)
