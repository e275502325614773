"""Shared fixtures, defined in :mod:`kafkalog_testkit` and, for Apache Kafka's own broker,
tools and Java client, :mod:`kafka_testkit` (tests import helpers from there: ``conftest``
is not a unique module name across the test tree)."""

from kafka_testkit import (  # noqa: F401
    kafka_bench,
    kafka_broker,
    kafka_broker_factory,
    pytest_runtest_makereport,
)
from kafkalog_testkit import *  # noqa: F401,F403
from s3_testkit import s3_server  # noqa: F401
