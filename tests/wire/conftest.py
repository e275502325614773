"""The differential wire suite's fixture (``wire_pair``), from :mod:`wire_testkit`."""

from wire_testkit import wire_pair  # noqa: F401
