"""The wheel ships what the package needs at run time: the man pages under
share/man/man1 (so ``man kafkalog-dump-segment`` works after ``pip install``), the JSON
Schemas and the Spark log4j2 settings."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from kafkalog_testkit import REPO


def _sources(tmp_path) -> Path:
    """A copy of what the build reads (building in the checkout would write build/ there),
    without an in-place build of the C core (a build compiles its own)."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(REPO / name, src / name)
    shutil.copytree(REPO / "man", src / "man")
    shutil.copytree(REPO / "kafkalog_cli", src / "kafkalog_cli",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    return src


@pytest.mark.slow
def test_wheel_contains_man_pages_and_schemas(tmp_path):
    src = _sources(tmp_path)
    out = tmp_path / "wheels"
    # pip's own build isolation: the build-system requirements of pyproject.toml
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out),
                        str(src)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    (wheel,) = out.glob("kafkalog-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    pages = sorted(n.rsplit("/", 1)[1] for n in names if "/data/share/man/man1/" in n)
    assert pages == sorted(p.name for p in (REPO / "man").glob("*.1"))
    assert "kafkalog-dump-segment.1" in pages
    assert {f"kafkalog_cli/schemas/{p.name}" for p in
            (REPO / "kafkalog_cli" / "schemas").glob("*.json")} <= set(names)
    assert "kafkalog_cli/spark/log4j2.properties" in names
    # installed into a venv of its own (pip install --prefix would uninstall the
    # kafkalog of this interpreter's environment): <venv>/share/man/man1, where man
    # looks (MANPATH, or the venv's bin/ on PATH)
    import venv

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True, symlinks=True)
    py = env_dir / "bin" / "python"
    # the venv sees only itself: the suite's Spark tests leave PYTHONPATH naming the checkout
    import os

    clean = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    r = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-index",
                        str(wheel)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                       env=clean)
    assert r.returncode == 0, r.stdout + r.stderr
    # where this venv's pip put the page: the installed distribution's RECORD says, and the
    # venv's own sysconfig says where data files belong (<venv>/share on most schemes,
    # <venv>/local/share on Debian's posix_local)
    r = subprocess.run([str(py), "-c",
                        "import importlib.metadata as m, sysconfig\n"
                        "print(sysconfig.get_path('data'))\n"
                        "print(*[f.locate() for f in m.distribution('kafkalog').files"
                        " if f.name == 'kafkalog-dump-segment.1'], sep='\\n')"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env=clean)
    assert r.returncode == 0, r.stderr
    data, *located = r.stdout.split("\n")[:-1]
    assert len(located) == 1, r.stdout
    page = Path(located[0]).resolve()
    assert page == (Path(data) / "share" / "man" / "man1" / page.name).resolve()
    assert page.read_text() == (REPO / "man" / page.name).read_text()
    man = shutil.which("man")
    if man is not None:
        # man alone with MANPATH, from outside the checkout: in the whole suite man found the
        # checkout's man/ page from the inherited environment and working directory
        r = subprocess.run([man, "-w", "kafkalog-dump-segment"], capture_output=True,
                           text=True, cwd=tmp_path,
                           env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                                "MANPATH": str(page.parent.parent)})
        assert Path(r.stdout.strip()).resolve() == page, r.stdout + r.stderr


@pytest.mark.slow
def test_an_editable_install_after_a_regular_one_keeps_the_man_pages(tmp_path):
    """README's two set-up commands in a row: ``pip install .`` then ``pip install -e``.
    setuptools' editable wheels left the data files out (its editable_wheel asks the
    distribution for ``has_data``, not ``has_data_files``), so the second removed the man
    pages the first had installed; setup.py's editable_wheel writes them. A throwaway
    venv over this interpreter's packages (no build isolation, no download; pip does not
    uninstall outside the venv, so the shared environment is untouched)."""
    import os
    import venv

    src = _sources(tmp_path)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False, system_site_packages=True, symlinks=True)
    py = str(env_dir / "bin" / "python")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    # the C core's build is optional: a compiler that fails at once skips it (the pages
    # are what this test is about; the wheel test above builds the core)
    clean.pop("KAFKALOG_BUILD_STRICT", None)
    clean["CC"] = "false"
    pages = sorted(p.name for p in (REPO / "man").glob("*.1"))
    man1 = None
    for extra in ([], ["-e"]):
        r = subprocess.run([py, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                            "--no-index", *extra, str(src)], capture_output=True, text=True,
                           timeout=600, cwd=tmp_path, env=clean)
        assert r.returncode == 0, r.stdout + r.stderr
        r = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_path('data'))"],
                           capture_output=True, text=True, env=clean, cwd=tmp_path)
        man1 = Path(r.stdout.strip()) / "share" / "man" / "man1"
        assert sorted(p.name for p in man1.glob("kafkalog*.1")) == pages, extra
    assert (man1 / "kafkalog-read.1").read_text() == (REPO / "man" / "kafkalog-read.1").read_text()
