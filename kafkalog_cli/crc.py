"""CRC-32C (Castagnoli), as Kafka's ``org.apache.kafka.common.utils.Crc32C`` computes it:
the checksum of a v2 record batch (attributes to the end) and of a producer-state
snapshot.

The ``crc32c`` package's C function computes it (hardware-based where the CPU has the
instruction). Importing that package costs ~20 ms of CPU, measured: its ``__init__``
imports importlib.metadata (for ``__version__``, which pulls in email and socket) and
argparse (for its command line), more than half of ``python -c pass``. :func:`load` loads
its extension module ``crc32c._crc32c`` alone, the same function, and only on the first
CRC: a command that checks none loads nothing.
"""

from __future__ import annotations

import sys

_fn = None


def _extension():
    """``crc32c._crc32c``, loaded from the installed package's directory without running
    the package's ``__init__``; None when it is not laid out so."""
    from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, FileFinder
    from importlib.util import find_spec, module_from_spec

    try:
        package = find_spec("crc32c")  # finds, does not import
    except (ImportError, ValueError):
        return None
    if package is None or not package.submodule_search_locations:
        return None
    for where in package.submodule_search_locations:
        finder = FileFinder(where, (ExtensionFileLoader, EXTENSION_SUFFIXES))
        spec = finder.find_spec("crc32c._crc32c")
        if spec is not None:
            module = module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    return None


def load():
    """The ``crc32c`` package's ``crc32c(data, value=0) -> int`` (unsigned 32-bit; ``value``
    continues a running CRC), loaded on the first call.

    Raises:
        ImportError: the ``crc32c`` package is not installed (or its extension does not
            load, e.g. ``CRC32C_SW_MODE=none`` on a CPU without the instruction).
    """
    global _fn
    if _fn is None:
        package = sys.modules.get("crc32c")
        module = package if package is not None else _extension()
        if module is None:  # another layout: the package's own import
            import crc32c as module
        _fn = module.crc32c
    return _fn


def crc32c(data, value: int = 0) -> int:
    """CRC-32C of ``data`` (bytes-like), continuing from ``value`` (0 to start): an unsigned
    32-bit int, as ``Crc32C.compute`` (read as unsigned)."""
    return (_fn or load())(data, value)
