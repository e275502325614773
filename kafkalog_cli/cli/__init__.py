"""The command line. :func:`main` is the console script: ``kafkalog --version`` answers
without importing Typer or any command (it is the one call scripts make in a loop), and a
command line naming a command imports that command's module only (its options; the
library it calls is imported when it runs). Anything else (``--help``, no command, an
unknown one, completion) loads every command."""

from __future__ import annotations

import gc
import sys

#: command name -> its module under ``commands/`` (a test keeps this equal to the commands
#: :mod:`.app` registers)
COMMANDS = {
    "audit": "audit",
    "copy": "copy",
    "delete-records": "delete_records",
    "describe": "describe",
    "dump-segment": "dump_segment",
    "export": "export",
    "get-offsets": "get_offsets",
    "groups": "groups",
    "share-groups": "share_groups",
    "produce": "produce",
    "read": "read",
    "recover": "recover",
    "retention": "retention",
    "serve": "serve",
    "verify-index": "verify_index",
}


#: True while :func:`main` runs as this process's entry point (the console script and
#: ``python -m kafkalog_cli`` call it without ``argv``); False when a host calls
#: ``main(argv)`` (tests, embedding). A command changes the process beyond its own work
#: (``export`` keeping numpy out) only in a process of its own.
OWN_PROCESS = False


def _named_command(args: list[str]) -> str | None:
    """The command the arguments name, when it comes first (after ``--debug``)."""
    for a in args:
        if a == "--debug":
            continue
        return COMMANDS.get(a)
    return None


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``kafkalog`` console script and ``python -m kafkalog_cli``
    (``argv``: the arguments after the program name; default ``sys.argv[1:]``, and then
    the process is kafkalog's own, see :data:`OWN_PROCESS`)."""
    global OWN_PROCESS
    OWN_PROCESS = argv is None
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
    # Allocator and BLAS settings, each unless the user set it, before any import of
    # pyarrow or numpy (children, Spark's workers, inherit them):
    # - numpy (imported with pyarrow) starts OpenBLAS with a thread per core that
    #   spin-waits before it sleeps: ~60 ms of CPU a run on a 2-core machine (measured),
    #   for linear algebra kafkalog never does. One thread.
    # - pyarrow's memory pool (mimalloc) commits its 1 GiB arena eagerly as transparent
    #   huge pages, each zeroed whole on first touch: export's tens of MB then cost up to
    #   3x the system time (0.06 -> 0.18-0.22 s on 200,000 records, measured after other
    #   work had churned memory). Committed on demand instead, pages as they are used.
    # - and it keeps the pages of freed blocks for 10 ms before it gives them back:
    #   export frees an Arrow batch (~10 MB) as the next is decoded, so both stayed
    #   resident, and its peak anonymous RSS moved with the machine's load (58-72 MiB on
    #   run_all's 1 GiB segment, 53-72 on its 64 MiB one, over issue 28's 64 MiB). Given
    #   back at once instead: 46-48 MiB on either (CPU within the runs' noise, 0-6%).
    import os

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("MIMALLOC_ARENA_EAGER_COMMIT", "0")
    os.environ.setdefault("MIMALLOC_PURGE_DELAY", "0")
    if OWN_PROCESS:
        # Start-up allocates tens of thousands of objects that live until exit (Typer,
        # the command's options, the library's modules): the cycle collector's passes
        # over them are start-up CPU for nothing (issue 28). Off until Typer has parsed
        # the command line (:func:`parsed`), and what is loaded then frozen; at exit,
        # everything frozen, so the interpreter's final collections skip it.
        gc.disable()
    try:
        module = _named_command(args)
        if module is None:
            from .app import main as app_main
        else:
            from importlib import import_module

            import_module(f".commands.{module}", __name__)
            from .root import main as app_main
        app_main(argv)
    finally:
        if OWN_PROCESS:
            gc.freeze()


def parsed() -> None:
    """Called by the root callback once Typer has parsed the command line, before the
    command runs: in kafkalog's own process, the objects loaded so far move to the
    collector's permanent generation (they live until exit) and the collector, off
    since :func:`main` started, runs again for the command's work."""
    if OWN_PROCESS and not gc.isenabled():
        gc.freeze()
        gc.enable()
