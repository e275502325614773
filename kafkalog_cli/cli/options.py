"""Shared Typer options and arguments, defined once."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer


class Output(str, Enum):
    text = "text"
    json = "json"


class DumpOutput(str, Enum):
    text = "text"
    kafka = "kafka"
    json = "json"


class IsolationLevel(str, Enum):
    """A consumer's isolation.level: read_committed drops aborted transactions' records."""

    read_uncommitted = "read_uncommitted"
    read_committed = "read_committed"


class DataEncoding(str, Enum):
    utf8 = "utf8"
    base64 = "base64"
    hex = "hex"


Paths = Annotated[
    list[Path],
    typer.Argument(help="Partition directories, log directories, or directories holding "
                        "log directories (searched recursively).",
                   metavar="PATH",
                   show_default=False),
]

OutputOpt = Annotated[
    Output | None,
    typer.Option("--output", "-o", metavar="text|json",
                 help="text: rich tables (default on a terminal); json: for scripts "
                      "(default when stdout is not a terminal).",
                 show_default=False),
]


#: 256 MiB, as ``constants.DEFAULT_MAX_DECOMPRESSED_BYTES`` (not imported: the CLI loads
#: only what a command needs; a test keeps the two equal)
MAX_DECOMPRESSED_DEFAULT = 256 * 1024 * 1024

MaxDecompressedOpt = Annotated[
    int,
    typer.Option("--max-decompressed-bytes", min=1, metavar="BYTES",
                 help="Bound on one batch's decompressed records (bytes); a batch over it is "
                      "reported as corrupt. Records are streamed, so memory does not grow "
                      "with it: it bounds the work one small batch can cause (a decompression "
                      "bomb). Raise it for larger batches."),
]


def resolve_output(choice: Output | None) -> Output:
    """The explicit choice, else text on a terminal and json when piped."""
    import sys

    if choice is not None:
        return choice
    return Output.text if sys.stdout.isatty() else Output.json
