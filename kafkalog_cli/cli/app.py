"""The Typer root: ``kafkalog``, its global options, and error handling.

Every library error prints one line naming the file (and byte position) on stderr and
exits non-zero: 2 for usage errors, 3 for unreadable input; ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import sys

import typer

from .._version import __version__

app = typer.Typer(
    name="kafkalog",
    help="Read, verify, repair and append to Apache Kafka log directories, no broker needed.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode=None,
)

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        print(f"kafkalog {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
) -> None:
    """Read, verify, repair and append to Apache Kafka log directories, no broker needed."""
    _state["debug"] = debug


def _register() -> None:
    from .commands import (  # noqa: F401
        audit,
        describe,
        dump_segment,
        export,
        produce,
        read,
        recover,
        serve,
        verify_index,
    )


_register()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    from ..errors import KafkalogError

    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        app(args=argv, prog_name="kafkalog")
    except KafkalogError as e:
        if debug:
            raise
        from ..render.consoles import error

        error(str(e))
        sys.exit(e.exit_code)
    except BrokenPipeError:
        # stdout closed early (e.g. piped into head): not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as e:
        # a file the library opened directly (not through a KafkalogError path): still one
        # line naming the file, exit 3 (unreadable), the traceback only with --debug
        if debug:
            raise
        from ..render.consoles import error

        where = f"{e.filename}: " if e.filename else ""
        error(f"{where}{e.strerror or e}")
        sys.exit(3)
