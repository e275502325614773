"""Every rule of ``analyzeAndValidateRecords`` / ``LogValidator`` refuses its batch, through
``storage.validator.validate`` and through the append engine (``UnifiedLog.
append_as_leader``: nothing is written). The cases and what Kafka answers are in
``tests/log_validator_cases.py``; serve's Produce is checked with the same cases in
``tests/server/test_serve_validator_rules.py``."""

from __future__ import annotations

import re

import pytest
from log_validator_cases import CASES, TOPIC

from kafkalog_cli import errors
from kafkalog_cli.storage import validator
from kafkalog_cli.storage.clock import ManualClock
from kafkalog_cli.storage.config import LogConfig
from kafkalog_cli.storage.log_manager import LogManager

NOW = 1_700_000_000_000


def _exception(name: str) -> type:
    return getattr(validator, name, None) or getattr(errors, name)


@pytest.mark.parametrize("case", [c for c in CASES if not c.engine_only], ids=lambda c: c.id)
def test_validate_refuses(case):
    with pytest.raises(_exception(case.exception)) as ei:
        validator.validate(case.build(NOW), offset=0, now=NOW,
                           config=LogConfig.from_properties(case.configs),
                           partition_leader_epoch=0)
    assert type(ei.value) is _exception(case.exception)
    assert re.search(case.message, ei.value.message), ei.value.message


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_append_refuses_and_writes_nothing(tmp_path, case):
    m = LogManager.open(tmp_path / "d", clock=ManualClock(NOW), fsync=False)
    log = m.get_or_create_log(TOPIC, 0, LogConfig.from_properties(case.configs))
    with pytest.raises(_exception(case.exception)) as ei:
        log.append_as_leader(case.build(NOW))
    assert type(ei.value) is _exception(case.exception)
    assert re.search(case.message, ei.value.message), ei.value.message
    got = list(getattr(ei.value, "record_errors", ()))
    assert len(got) == len(case.record_errors), got
    for (i, message), (want_i, pattern) in zip(got, case.record_errors, strict=True):
        assert i == want_i and re.fullmatch(pattern, message), (i, message)
    assert log.log_end_offset == 0 and log.active.size == 0
    m.close()
    assert (tmp_path / "d" / f"{TOPIC}-0" / "00000000000000000000.log").stat().st_size == 0


def test_timestamp_difference_max_ms_is_refused():
    """Removed in Kafka 4.0 (KIP-937): a topic's configs (strict, as produce and serve read
    them) refuse it rather than ignore a bound."""
    with pytest.raises(errors.KafkalogError, match="removed in Kafka 4.0"):
        LogConfig.from_properties({"message.timestamp.difference.max.ms": "1000"},
                                  strict=True)
