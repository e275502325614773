"""The optional compiled core: ``kafkalog_cli.format._speedups`` (the C twin of the hot
loops of the read path, ``kafkalog_cli/format/record.py``, ``record_batch.py`` and
``records.py``), ``kafkalog_cli.format._encode`` (of the record encoder of
``kafkalog_cli/format/builder.py``) and ``kafkalog_cli.render._speedups`` (of the record
lines of ``kafkalog_cli/render/dump.py`` and ``render/read.py``).

pyproject.toml is the home of the package's metadata; this file only adds the extensions.
Their build is optional: without a compiler or Python's headers the build warns and goes
on, and kafkalog runs its pure-Python loops (the same values and errors, slower).
``KAFKALOG_BUILD_STRICT=1`` (set by ``.ci/run``) makes a failed build an error and
compiles with ``-Wall -Wextra -Werror``.
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

STRICT = os.environ.get("KAFKALOG_BUILD_STRICT") == "1"


class OptionalBuildExt(build_ext):
    """build_ext that warns and continues when the extension does not build (unless
    KAFKALOG_BUILD_STRICT=1)."""

    def run(self):
        try:
            super().run()
        except Exception as e:  # no compiler, no headers: the pure-Python fallback
            if STRICT:
                raise
            self._warn(e)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as e:
            if STRICT:
                raise
            self._warn(e)

    @staticmethod
    def _warn(e):
        print(f"WARNING: kafkalog's optional C extension was not built ({e}); "
              "kafkalog will use its pure-Python code (same results, slower).",
              file=sys.stderr)


def editable_wheel_with_data():
    """setuptools' ``editable_wheel`` that also writes the data files (the man pages) into
    the editable wheel, as a regular wheel holds them: its ``_run_install("data")`` asks
    the distribution for ``has_data``, a method it does not have (``has_data_files``), so
    ``pip install -e`` installed no man page, and after ``pip install .`` removed them.
    None when this setuptools has no editable wheels."""
    try:
        from setuptools.command.editable_wheel import editable_wheel
    except ImportError:  # pragma: no cover - setuptools < 64
        return None

    class EditableWheelWithData(editable_wheel):
        def _run_install(self, category):
            if category == "data":
                if self.distribution.has_data_files():
                    self.run_command("install_data")
                return
            super()._run_install(category)

    return EditableWheelWithData


flags = ["-Wall", "-Wextra", "-Werror"] if STRICT else []
#: the records-block walk both cores include (a header: listed so sdists carry it and a
#: change rebuilds them)
WALK = "kafkalog_cli/format/_record_walk.h"
cmdclass = {"build_ext": OptionalBuildExt}
if (editable := editable_wheel_with_data()) is not None:
    cmdclass["editable_wheel"] = editable

setup(
    ext_modules=[Extension(f"kafkalog_cli.format.{name}", [f"kafkalog_cli/format/{name}.c"],
                           extra_compile_args=flags, optional=not STRICT, depends=[WALK],
                           # dlopen/dlsym: the crc32c package's C function (glibc < 2.34)
                           libraries=["dl"] if name == "_speedups" and
                           sys.platform.startswith("linux") else [])
                 for name in ("_speedups", "_encode")] + [
        # the record lines of dump-segment and read (render's Python loops: the reference)
        Extension("kafkalog_cli.render._speedups", ["kafkalog_cli/render/_speedups.c"],
                  extra_compile_args=flags, optional=not STRICT, depends=[WALK])],
    cmdclass=cmdclass,
)
