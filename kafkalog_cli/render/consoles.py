"""The two streams: data to stdout, diagnostics to stderr (rich Consoles, made lazily so
importing the CLI stays fast)."""

from __future__ import annotations

import sys
from functools import cache


@cache
def stdout_console():
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


@cache
def stderr_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def error(message: str) -> None:
    """One line on stderr, in red on a terminal (where names and data it quotes are
    escaped, :func:`~kafkalog_cli.render.text.safe`)."""
    _line("error:", "bold red", message)


def warning(message: str) -> None:
    """One line on stderr, in yellow on a terminal (escaped as :func:`error` does)."""
    _line("warning:", "bold yellow", message)


def _line(label: str, style: str, message: str) -> None:
    if sys.stderr.isatty():
        from rich.text import Text

        from .text import safe

        line = Text(label, style=style)
        line.append(" " + safe(message))
        stderr_console().print(line, highlight=False)
    else:
        sys.stderr.write(f"{label} {message}\n")
