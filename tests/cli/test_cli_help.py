"""Help texts: every option and argument of every command is described, and every value
is shown in one metavar style: an UPPERCASE placeholder (``N``, ``FILE``, ``KEY=VALUE``,
``HOST:PORT``) or the choices ``a|b|c``."""

from __future__ import annotations

import re

import pytest
import typer.main

from kafkalog_cli.cli.app import app

PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*([=:,.\[\]]+[A-Z0-9_.]*)*\]?$")
CHOICES = re.compile(r"^[a-z0-9_-]+(\|[a-z0-9_-]+)+$")
COMMANDS = typer.main.get_command(app).commands


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_parameter_described_in_one_metavar_style(name):
    cmd = COMMANDS[name]
    assert cmd.help and cmd.help.strip()
    for p in cmd.params:
        label = "/".join(p.opts)
        assert p.help and p.help.strip(), f"{name} {label}: no help"
        if getattr(p, "is_flag", False):
            continue
        mv = p.metavar
        assert mv is not None, f"{name} {label}: no metavar"
        assert PLACEHOLDER.match(mv) or CHOICES.match(mv), f"{name} {label}: {mv!r}"


def test_help_shows_no_python_types():
    from kafkalog_testkit import run_cli_inprocess as cli

    for name in COMMANDS:
        out = cli(name, "--help").stdout
        assert not re.search(r"<(str|int|path|list|float|text|integer)", out, re.I), (name, out)
