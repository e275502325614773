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
    if sys.stderr.isatty():
        from rich.text import Text

        from .text import safe

        line = Text("error:", style="bold red")
        line.append(" " + safe(message))
        stderr_console().print(line, highlight=False)
    else:
        sys.stderr.write(f"error: {message}\n")


def warning(message: str) -> None:
    """One line on stderr, in yellow on a terminal (escaped as :func:`error` does)."""
    if sys.stderr.isatty():
        from rich.text import Text

        from .text import safe

        line = Text("warning:", style="bold yellow")
        line.append(" " + safe(message))
        stderr_console().print(line, highlight=False)
    else:
        sys.stderr.write(f"warning: {message}\n")
