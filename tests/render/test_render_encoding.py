"""render.encoding: Java's ``new String(bytes, UTF_8)`` for Kafka-mode text, checked against
the JDK itself (tests/render/java/Utf8Decode.java)."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from kafkalog_cli.render.encoding import java_string

R = "\ufffd"

#: well-formed, and every kind of malformed sequence the JDK's decoder distinguishes
CASES = [
    "", "41", "c3a9", "e282ac", "f09f9880", "7f", "c280", "dfbf", "e0a080", "efbfbd",
    "f0908080", "f48fbfbf",
    "eda080", "edbfbf", "eda08041", "f0808080", "c0af", "c1bf", "e080", "e08080",
    "f4908080", "f5808080", "f7bfbfbf", "ff41", "fe", "80", "bf80", "e282", "e2", "f09f98",
    "f09f", "f0", "f888808080", "fc8480808080", "c3", "c341", "e241", "e2824141", "f0414141",
    "f0904141", "f0908041", "f4", "f490", "f48f", "f48fbf", "ed9fbf", "ee8080", "e0a0",
    "e09f80", "ed", "eda0", "f09080", "c3a9e282", "41e2828241",
]


def _java_decode(samples: list[bytes]) -> list[str]:
    java = shutil.which("java")
    if java is None or shutil.which("javac") is None:  # a single-file launch compiles
        pytest.skip("no JDK (java and javac) on PATH")
    src = Path(__file__).parent / "java" / "Utf8Decode.java"
    r = subprocess.run([java, str(src)], input="".join(s.hex() + "\n" for s in samples),
                       capture_output=True, text=True, check=True, timeout=120)
    out = r.stdout.splitlines()
    assert len(out) == len(samples)
    return [bytes.fromhex(h).decode("utf-8") for h in out]


def _fuzz(seed: int, n: int) -> list[bytes]:
    """Byte strings built mostly from UTF-8's building blocks (lead bytes of every length,
    the boundary values, continuation bytes), so malformed sequences of every kind occur."""
    rng = random.Random(seed)
    leads = [0x00, 0x41, 0x7F, 0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED,
             0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF7, 0xF8, 0xFB, 0xFC, 0xFE, 0xFF]
    conts = [0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF]
    out = []
    for _ in range(n):
        b = bytearray()
        for _ in range(rng.randint(0, 10)):
            r = rng.random()
            if r < 0.35:
                b.append(rng.choice(leads))
            elif r < 0.8:
                b.append(rng.choice(conts))
            else:
                b.append(rng.randrange(256))
        out.append(bytes(b))
    return out


def test_known_replacements():
    # one U+FFFD for a surrogate's three bytes (Python's "replace" gives three)
    assert java_string(bytes.fromhex("eda080")) == R
    assert java_string(b"a\xed\xa0\x80b") == f"a{R}b"
    assert java_string(bytes.fromhex("f0808080")) == R * 4
    assert java_string(bytes.fromhex("e282")) == R
    assert java_string("héllo €".encode()) == "héllo €"
    assert java_string(memoryview(b"\xff\x41")) == f"{R}A"


def test_matches_the_jdk():
    samples = [bytes.fromhex(h) for h in CASES] + _fuzz(5, 4000)
    expected = _java_decode(samples)
    got = [java_string(s) for s in samples]
    bad = [(s.hex(), e, g) for s, e, g in zip(samples, expected, got, strict=True) if e != g]
    assert not bad, bad[:10]
