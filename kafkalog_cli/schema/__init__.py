"""Declarative construct schemas, one module per on-disk structure.

These are the declared source of truth of the format. The hot paths in
:mod:`kafkalog_cli.format` are struct/memoryview twins of them, and tests assert that both
give identical results on every batch of the fixtures and of the real corpus.

A module's constants (offsets, sizes, type ids) and plain functions are defined when it is
imported; its construct declarations are built on first use (:func:`declared_lazily`), as
importing construct costs ~25 ms of CPU, measured (it imports inspect, pdb, pickle and
hashlib): a command reads its batches through the struct twins and never needs them.
"""

from __future__ import annotations

from collections.abc import Callable


def declared_lazily(namespace: dict, names: tuple[str, ...],
                    declare: Callable[[], dict]) -> Callable[[str], object]:
    """A module ``__getattr__`` (PEP 562) for a schema module's construct declarations:
    the first lookup of one of ``names`` calls ``declare()`` (which imports construct and
    returns the declarations by name) and stores them all in ``namespace`` (the module's
    ``globals()``), so later lookups are plain attributes. Any other name raises
    AttributeError without building anything."""
    module = namespace["__name__"]

    def __getattr__(name: str):
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        declared = declare()
        namespace.update({n: declared[n] for n in names})
        return declared[name]

    return __getattr__
