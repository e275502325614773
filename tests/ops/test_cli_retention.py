"""``kafkalog retention``: the plan of deleteOldSegments for a directory, read-only, its
text and JSON (schema-checked) forms; hand-computed expectations."""

from __future__ import annotations

import json
import random
from importlib import resources

import jsonschema
from kafkalog_testkit import run_cli_inprocess as cli

from kafkalog_cli.format.builder import build_batch
from kafkalog_cli.storage.clock import ManualClock
from kafkalog_cli.storage.config import LogConfig
from kafkalog_cli.storage.log_manager import LogManager

T0 = 1_700_000_000_000
WEEK = 604_800_000  # Kafka's default retention.ms


def _dir(tmp_path):
    """t-0: six one-batch segments (5 records each, bases 0, 5, ..., 25) whose records
    are 120, 100, 80, 60, 40 and 20 s older than T0; t-1 empty."""
    m = LogManager.open(tmp_path / "logs", clock=ManualClock(T0), fsync=False,
                        rng=random.Random(1))
    cfg = LogConfig.from_properties({"segment.bytes": "300"})
    lg = m.get_or_create_log("t", 0, cfg)
    for i in range(6):
        lg.append_as_leader(build_batch([(T0 - 120000 + i * 20000, None, b"v" * 20, ())] * 5))
    m.get_or_create_log("t", 1, cfg)
    m.close()
    return tmp_path / "logs"


def test_retention_plan_json_and_text(tmp_path):
    d = _dir(tmp_path)
    before = sorted(p.name for p in (d / "t-0").iterdir())
    # the default 7 days, a week after T0 - 60 s: 120, 100 and 80 s old are past it,
    # 60 s is exactly at it (kept: strictly greater)
    now = T0 - 60000 + WEEK
    r = cli("retention", str(d), "--now", str(now), "-o", "json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    schema = json.loads(resources.files("kafkalog_cli.schemas").joinpath(
        "retention.json").read_text())
    jsonschema.validate(obj, schema)
    p0, p1 = obj["partitions"]
    assert [(s["baseOffset"], s["reason"]) for s in p0["segments"]] == [
        (0, "retentionMsBreach"), (5, "retentionMsBreach"), (10, "retentionMsBreach")]
    assert (p0["logStartOffset"], p0["newLogStartOffset"], p0["roll"]) == (0, 15, False)
    assert p1["segments"] == [] and p1["newLogStartOffset"] == 0
    assert obj["deletedSegments"] == 3
    assert obj["deletedBytes"] == sum(s["sizeInBytes"] for s in p0["segments"]) > 0
    # piped, without -o: the same object (JSON is the default off a terminal)
    assert json.loads(cli("retention", str(d), "--now", str(now)).stdout) == obj
    # read-only
    assert sorted(p.name for p in (d / "t-0").iterdir()) == before
    # a day later every segment is past it: the active one too, after a roll
    r = cli("retention", str(d), "--now", str(T0 + WEEK), "--topic", "t", "-o", "text")
    assert r.returncode == 0, r.stderr
    assert "t-0\tsegment 25\t" in r.stdout
    assert "t-0\tlog start offset 0 -> 30 (after a roll)" in r.stdout
    assert r.stdout.endswith(f"6 segments, {obj['deletedBytes'] * 2} bytes would be "
                             "deleted\n")
