"""``kafkalog verify-index``: JSON equals the library result, exit codes 0/1, the table."""

from __future__ import annotations

import json

import pytest
from kafkalog_testkit import INDEX_CORRUPTIONS, SANITY_FAILURES, VERIFIED_PARTITIONS

from kafkalog_cli.ops.verify import verify_index


@pytest.mark.parametrize("name", ["multi-0", "corrupt-index-order-0", "corrupt-truncated-0"])
def test_json_equals_library(cli, fixtures_root, name):
    r = cli("verify-index", f"fixtures/logs/{name}", "--output", "json")
    assert json.loads(r.stdout) == verify_index([f"fixtures/logs/{name}"]).to_dict()
    assert r.stderr == ""


def test_exit_codes(cli):
    for name in VERIFIED_PARTITIONS:
        assert cli("verify-index", f"fixtures/logs/{name}", "-o", "json").returncode == 0
    for name in INDEX_CORRUPTIONS + SANITY_FAILURES:
        r = cli("verify-index", f"fixtures/logs/{name}", "-o", "json")
        assert r.returncode == 1
        assert json.loads(r.stdout)["ok"] is False
    assert cli("verify-index", "fixtures/logs", "-o", "json").returncode == 1


def test_text_table(cli):
    r = cli("verify-index", "fixtures/logs/corrupt-index-position-0", "-o", "text")
    assert r.returncode == 1
    assert "1 problem(s)" in r.stdout
    assert "is not the start of a batch" in r.stdout
    assert "1 segment(s) checked, 1 with problems" in r.stdout
    ok = cli("verify-index", "fixtures/logs/multi-0", "-o", "text")
    assert "3 segment(s) checked, 0 with problems" in ok.stdout


def test_missing_index_warning_not_failure(cli, fixtures_copy):
    (fixtures_copy / "txn-0" / "00000000000000000000.timeindex").unlink()
    r = cli("verify-index", str(fixtures_copy / "txn-0"), "-o", "json")
    assert r.returncode == 0
    (seg,) = json.loads(r.stdout)["segments"]
    assert [w["kind"] for w in seg["warnings"]] == ["missing-index"]
