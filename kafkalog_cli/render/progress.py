"""Progress on stderr for long runs: rich progress bars with bytes/s and an ETA, shown
only when stderr is a terminal (never in pipes or logs) and gone when the run ends
(``transient``), so nothing of them is left between the command's output lines."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


def _show(stdout_too: bool) -> bool:
    if not sys.stderr.isatty():
        return False
    # a command streaming its data to the same terminal shows that instead
    return not (stdout_too and sys.stdout.isatty())


@contextmanager
def byte_progress(description: str, total_bytes: int | Callable[[], int] | None = None, *,
                  streams_stdout: bool = False
                  ) -> Iterator[Callable[..., None] | None]:
    """A bar counting bytes done of ``total_bytes`` (or of what calling it returns, only
    when a bar is shown) with bytes/s and an ETA; yields the callback
    ``advance(done_bytes, total_bytes=None)`` (running totals; a total given there
    replaces the first), the ``progress`` argument of the library's long operations, or
    None when no bar is shown (stderr not a terminal, or ``streams_stdout`` and stdout is
    the same terminal)."""
    if not _show(streams_stdout):
        yield None
        return
    if callable(total_bytes):
        total_bytes = total_bytes()
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    # stdout is the command's data: never redirected into the bar's console; what goes
    # to stderr meanwhile is printed above the bar
    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                  TransferSpeedColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True, redirect_stdout=False,
                  redirect_stderr=True) as p:
        task = p.add_task(description, total=total_bytes or None)

        def advance(done: int, total: int | None = None) -> None:
            if total is not None:
                p.update(task, total=total or None)
            p.update(task, completed=done)

        yield advance


@contextmanager
def record_counter(description: str) -> Iterator[Callable[[int], None] | None]:
    """A spinner counting records (for input of unknown size, e.g. stdin); yields
    ``update(records_done)`` or None when stderr is not a terminal."""
    if not _show(False):
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn(description + " {task.fields[n]:,} records"),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True,
                  redirect_stdout=False, redirect_stderr=True) as p:
        task = p.add_task(description, n=0)

        def update(n: int) -> None:
            p.update(task, n=n)

        yield update
