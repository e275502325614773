"""The command line. :func:`main` is the console script: ``kafkalog --version`` answers
without importing Typer or any command (it is the one call scripts make in a loop)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``kafkalog`` console script and ``python -m kafkalog_cli``."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from .._version import __version__

        print(f"kafkalog {__version__}")
        return
    from .app import main as app_main

    app_main(argv)
