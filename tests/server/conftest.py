"""Fixtures of the serve tests, defined in :mod:`serve_testkit`."""

from serve_testkit import *  # noqa: F401,F403
