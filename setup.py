"""The optional compiled core: ``kafkalog_cli.format._speedups`` (the C twin of the hot
loops of ``kafkalog_cli/format/records.py``), ``kafkalog_cli.format._encode`` (of the
record encoder of ``kafkalog_cli/format/builder.py``) and ``kafkalog_cli.render._speedups``
(of the record lines of ``kafkalog_cli/render/dump.py`` and ``render/read.py``).

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


flags = ["-Wall", "-Wextra", "-Werror"] if STRICT else []

setup(
    ext_modules=[Extension(f"kafkalog_cli.format.{name}", [f"kafkalog_cli/format/{name}.c"],
                           extra_compile_args=flags, optional=not STRICT,
                           # dlopen/dlsym: the crc32c package's C function (glibc < 2.34)
                           libraries=["dl"] if name == "_speedups" and
                           sys.platform.startswith("linux") else [])
                 for name in ("_speedups", "_encode")] + [
        # the record lines of dump-segment and read (render's Python loops: the reference)
        Extension("kafkalog_cli.render._speedups", ["kafkalog_cli/render/_speedups.c"],
                  extra_compile_args=flags, optional=not STRICT)],
    cmdclass={"build_ext": OptionalBuildExt},
)
