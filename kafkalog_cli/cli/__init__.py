"""The command line. :func:`main` is the console script: ``kafkalog --version`` answers
without importing Typer or any command (it is the one call scripts make in a loop)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``kafkalog`` console script and ``python -m kafkalog_cli``."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from .._version import __version__

        try:
            print(f"kafkalog {__version__}")
            sys.stdout.flush()
        except BrokenPipeError:  # stdout closed early: quiet, exit 0 (see app.main)
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return
    from .app import main as app_main

    app_main(argv)
