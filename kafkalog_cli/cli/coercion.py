"""Option values without pydantic: a start-up cut, the same values and the same errors.

Typer (0.22 and later) converts every option and argument value through a pydantic
``TypeAdapter``. Importing pydantic and generating its schemas costs more CPU than the
rest of a small command (about 0.1 s against ``python -c pass``'s 0.04 s), and kafkalog's
options are plain: ``str``, ``int`` (with a range), ``float``, ``Path``, an ``Enum`` of
choices, a ``list`` of those. :func:`install` gives such parameters a converter that
handles the plain, valid spellings itself (a decimal integer inside the range, a member's
exact value, a non-empty path) and hands everything else to Typer's own converter, so
odd spellings (``1_000``, `` 7``) and every error message stay Typer's. A Typer without
this machinery (older versions convert through click, without pydantic) is left alone.
"""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path
from typing import get_args, get_origin

_INT = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?\Z")

#: a path parameter's defaults: anything else (exists=True, resolve_path, ...) goes to Typer
_PLAIN_PATH = {"exists": False, "file_okay": True, "dir_okay": True, "writable": False,
               "readable": True, "resolve_path": False, "allow_dash": False,
               "path_type": None}

_MISS = object()


def _leaf(annotation, info):
    """A converter for one value of ``annotation`` (returning ``_MISS`` when Typer must
    decide), or None when the annotation is not one of the plain kinds."""
    if info.parser is not None:
        return None
    if annotation is str:
        return lambda v: v if isinstance(v, str) else _MISS
    if annotation is bool:  # flags arrive as bools; other spellings are Typer's
        return lambda v: v if isinstance(v, bool) else _MISS
    if annotation is int or annotation is float:
        pattern = _INT if annotation is int else _FLOAT
        lo, hi = info.min, info.max

        def number(v, cls=annotation):
            if type(v) is cls:
                n = v
            elif isinstance(v, str) and pattern.match(v):
                n = cls(v)
            else:
                return _MISS
            if (lo is not None and n < lo) or (hi is not None and n > hi):
                return _MISS  # Typer's message (or its clamp)
            return n
        return number
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        if not info.case_sensitive:
            return None
        by_value = {str(m.value): m for m in annotation}

        def choice(v):
            if isinstance(v, annotation):
                return v
            return by_value.get(v, _MISS) if isinstance(v, str) else _MISS
        return choice
    if annotation is Path:
        if any(getattr(info, k, d) != d for k, d in _PLAIN_PATH.items()):
            return None
        return lambda v: (v if isinstance(v, Path) else Path(v) if isinstance(v, str) and v
                          else _MISS)
    return None


def _converter(annotation, info):
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        one = _leaf(item, info)
        if one is None:
            return None

        def many(v):
            if not isinstance(v, (list, tuple)):
                v = [v]
            out = [one(x) for x in v]
            return _MISS if any(x is _MISS for x in out) else out
        return many
    if get_origin(annotation) is not None:
        return None
    return _leaf(annotation, info)


def install() -> None:
    """Give Typer's parameters the plain converters above (idempotent)."""
    try:
        from typer import _coercion, core
    except ImportError:
        return
    cls = getattr(core, "_TyperParameter", None)
    base = getattr(_coercion, "RuntimeParam", None)
    build = getattr(_coercion, "build_runtime_param", None)
    original = getattr(cls, "get_runtime_param", None)
    if cls is None or base is None or build is None or original is None \
            or getattr(original, "_kafkalog", False):
        return

    class PlainRuntimeParam(base):
        """Converts plain values itself; Typer's converter (built on first need) takes
        the rest."""

        def __init__(self, descriptor, convert):
            super().__init__(parameter_info=descriptor.parameter_info,
                             annotation=descriptor.annotation)
            object.__setattr__(self, "_convert", convert)
            object.__setattr__(self, "_descriptor", descriptor)
            object.__setattr__(self, "_typer", None)

        def _coerce_value(self, value, param, ctx):
            got = self._convert(value)
            if got is not _MISS:
                return got
            if self._typer is None:
                object.__setattr__(self, "_typer", build(self._descriptor))
            return self._typer._coerce_value(value, param=param, ctx=ctx)

    def get_runtime_param(self):
        if self._runtime_param is None:
            desc = self.type_descriptor
            convert = None if desc.file_annotation is not None else \
                _converter(desc.annotation, desc.parameter_info)
            self._runtime_param = (PlainRuntimeParam(desc, convert) if convert is not None
                                   else build(desc))
        return self._runtime_param

    get_runtime_param._kafkalog = True
    cls.get_runtime_param = get_runtime_param
