"""The Typer root: ``kafkalog``, its global options, and error handling.

Commands register themselves on :data:`app` when their module (``commands/<name>.py``) is
imported: :mod:`.app` imports them all (``--help``, completion, tests);
:func:`kafkalog_cli.cli.main` imports only the one a command line names, so a command's
start-up pays for no other command's options.

Every library error prints one line naming the file (and byte position) on stderr and
exits with the status :mod:`~kafkalog_cli.cli.exit_codes` gives its class; ``--debug``
shows the traceback instead.
"""

from __future__ import annotations

import sys

import typer

from .._version import __version__
from .coercion import install as _plain_option_values

_plain_option_values()

app = typer.Typer(
    name="kafkalog",
    help="Read, verify, repair and append to Apache Kafka log directories, no broker needed.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


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
    # --debug is read from argv by main(), before Typer parses anything
    from . import parsed

    parsed()


def _one_metavar_style() -> None:
    """Help shows every value as its metavar (``PATH``, ``N``, ``text|json``); Typer
    would also print an argument's Python type beside it (``PATH <list[Path]>``)."""
    from typer.core import TyperArgument

    shown = TyperArgument.display_type_rich

    def display_type_rich(self, ctx):
        return None if self.metavar is not None else shown(self, ctx)

    TyperArgument.display_type_rich = display_type_rich


_one_metavar_style()


def _fd_identity(fd: int) -> tuple[int, int] | None:
    import os

    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _stdout_closed_early(original: tuple[int, int] | None) -> bool:
    """Whether a non-zero exit came from a closed stdout pipe, handled by a library before
    main() saw the BrokenPipeError: click/Typer swap in a PacifyFlushWrapper and exit 1;
    rich (Console.on_broken_pipe) puts /dev/null onto fd 1 and exits 1."""
    import os

    # by name: Typer vendors its own copy of click (typer._click)
    if type(sys.stdout).__name__ == "PacifyFlushWrapper":
        return True
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    null_id = (null.st_dev, null.st_ino)
    return original is not None and original != null_id and _fd_identity(1) == null_id


def _stdout_to_devnull() -> None:
    """Point fd 1 at /dev/null, so the interpreter's final flush of what is still buffered
    for the closed pipe cannot raise again (the pattern of the Python docs' note on
    SIGPIPE)."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        fd = 1
    os.dup2(devnull, fd)


def _flush_stdout() -> bool:
    """Flush stdout; False (and fd 1 on /dev/null) when its reader has gone away."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_to_devnull()
        return False
    return True


#: options whose value is optional, as Kafka's tools (joptsimple ``withOptionalArg``) take
#: them: given alone (last, or before another option) they mean this value
OPTIONAL_VALUES = {"--compression-codec": "gzip", "--state": "", "--type": ""}


def _optional_values(args: list[str]) -> list[str]:
    out = []
    for i, a in enumerate(args):
        out.append(a)
        if a in OPTIONAL_VALUES:
            nxt = args[i + 1] if i + 1 < len(args) else None
            if nxt is None or (nxt.startswith("-") and nxt != "-"):
                out.append(OPTIONAL_VALUES[a])
    return out


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    from ..errors import KafkalogError
    from .exit_codes import INTERRUPTED, OK, UNREADABLE, for_error

    argv = _optional_values(argv if argv is not None else sys.argv[1:])
    debug = "--debug" in argv
    stdout_id = _fd_identity(1)
    try:
        try:
            app(args=argv, prog_name="kafkalog")
        except SystemExit as e:
            if e.code not in (0, None) and _stdout_closed_early(stdout_id):
                raise BrokenPipeError from e
            # flush here, not at interpreter exit; if the reader has gone only now, the
            # command's own exit status (clean, findings, errors) stands
            _flush_stdout()
            raise
        _flush_stdout()
    except KafkalogError as e:
        if debug:
            raise
        from ..render.consoles import error

        _flush_stdout()
        error(str(e))
        sys.exit(for_error(e))
    except BrokenPipeError:
        # stdout closed early (e.g. piped into head): not an error
        _stdout_to_devnull()
        sys.exit(OK)
    except KeyboardInterrupt:
        sys.exit(INTERRUPTED)
    except OSError as e:
        # a file the library opened directly (not through a KafkalogError path): still one
        # line naming the file, exit 3 (unreadable), the traceback only with --debug
        if debug:
            raise
        from ..render.consoles import error

        _flush_stdout()
        where = f"{e.filename}: " if e.filename else ""
        error(f"{where}{e.strerror or e}")
        sys.exit(UNREADABLE)
