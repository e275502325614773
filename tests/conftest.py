"""Shared fixtures, defined in :mod:`kafkalog_testkit` (tests import helpers from there:
``conftest`` is not a unique module name across the test tree)."""

from kafkalog_testkit import *  # noqa: F401,F403
from s3_testkit import s3_server  # noqa: F401,E402
