"""kafkalog_cli.crc: Kafka's Crc32C through the crc32c package's C function, loaded without
the package's import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import crc32c as package

from kafkalog_cli import crc

ROOT = Path(__file__).resolve().parents[2]


def test_check_value_and_running_value():
    # CRC-32C's published check value (RFC 3720 / the Castagnoli catalogue): "123456789"
    assert crc.crc32c(b"123456789") == 0xE3069283
    assert crc.crc32c(b"56789", crc.crc32c(b"1234")) == 0xE3069283
    data = bytes(range(256)) * 40
    assert crc.crc32c(memoryview(data)[7:]) == package.crc32c(data[7:])


def test_loading_skips_the_packages_import():
    code = ("import sys\n"
            "from kafkalog_cli.crc import crc32c, load\n"
            "assert crc32c(b'123456789') == 0xE3069283\n"
            "print(sorted(m for m in ('crc32c', 'importlib.metadata', 'argparse', 'email')"
            " if m in sys.modules))\n"
            "import crc32c\n"
            "print(crc32c.crc32c(b'123456789') == load()(b'123456789'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.split("\n")
    assert out[:2] == ["[]", "True"]


def test_an_imported_package_is_reused(monkeypatch):
    monkeypatch.setattr(crc, "_fn", None)
    monkeypatch.setitem(sys.modules, "crc32c", package)
    assert crc.load() is package.crc32c
