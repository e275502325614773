"""Tests find the real corpus only at ``../shared/corpus/real`` beside the checkout (see
``kafkalog_testkit.CORPUS``) and skip when it is absent: no test falls back to an
absolute, machine-specific path (issue 16, test-suite gaps)."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
_ABSOLUTE_CORPUS = re.compile(r"""["']/[^"'\n]*shared/corpus""")


def test_no_test_names_an_absolute_corpus_path():
    offenders = [f"{p.relative_to(TESTS)}:{n}"
                 for p in sorted(TESTS.rglob("*.py"))
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if _ABSOLUTE_CORPUS.search(line)]
    assert offenders == []
