#!/usr/bin/env python3
"""Generate troff man pages from the CLI: ``man/kafkalog.1`` and one page per subcommand
(``man/kafkalog-<command>.1``), walking the Click command tree behind Typer
(``typer.main.get_command``). Every command registered on the app gets a page, so new
commands need nothing here.

Usage::

    python scripts/gen_man.py            # rewrite man/
    python scripts/gen_man.py --out DIR  # write elsewhere (the staleness test does this)

click-man is not used: Typer >= 0.20 builds its commands on a vendored Click, whose
classes click-man does not recognise (it would drop every option). The output carries no
date, so it only changes when the CLI does.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def esc(text: str) -> str:
    """Escape text for troff: backslashes, hyphens, and control characters at line start."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def paragraphs(text: str) -> list[str]:
    """Help text as troff paragraphs; a paragraph marked with Click's ``\\b`` is kept
    verbatim (no filling)."""
    out = []
    for para in inspect.cleandoc(text or "").split("\n\n"):
        if not para.strip():
            continue
        if para.startswith("\b"):
            body = para[1:].lstrip("\n")
            out.append(".PP\n.nf\n" + esc(body) + "\n.fi")
        else:
            out.append(".PP\n" + esc(" ".join(ln.strip() for ln in para.splitlines())))
    return out


def is_argument(param) -> bool:
    return getattr(param, "param_type_name", "") == "argument"


def arg_label(p) -> str:
    return (p.metavar or p.name.upper()) + ("..." if p.nargs == -1 else "")


def synopsis(cmd) -> str:
    """``[OPTIONS]``, the arguments, and ``COMMAND [ARGS]...`` for a group (built from the
    parameters: Typer's own usage line shows arguments as ``{name}``)."""
    pieces = ["[OPTIONS]"]
    for p in cmd.params:
        if is_argument(p):
            pieces.append(arg_label(p) if p.required else f"[{arg_label(p)}]")
    if getattr(cmd, "commands", None):
        pieces.append("COMMAND [ARGS]...")
    return " ".join(pieces)


def page(ctx, name: str, version: str, see_also: list[str]) -> str:
    cmd = ctx.command
    full = ctx.command_path
    short = cmd.get_short_help_str(limit=200) if hasattr(cmd, "get_short_help_str") else ""
    out = [
        f'.TH "{name.upper()}" "1" "" "kafkalog {version}" "kafkalog Manual"',
        ".SH NAME",
        f"{esc(name)} \\- {esc(short)}",
        ".SH SYNOPSIS",
        f".B {esc(full)}",
        esc(synopsis(cmd)),
        ".SH DESCRIPTION",
        *paragraphs(cmd.help or ""),
    ]
    args = [p for p in cmd.params if is_argument(p)]
    if args:
        out.append(".SH ARGUMENTS")
        for p in args:
            out += [".TP", f"\\fI{esc(arg_label(p))}\\fR",
                    esc(getattr(p, "help", None) or "")]
    opts = [p for p in cmd.params if not is_argument(p) and not getattr(p, "hidden", False)]
    records = [r for r in (p.get_help_record(ctx) for p in opts) if r]
    if records:
        out.append(".SH OPTIONS")
        for term, helptext in records:
            out += [".TP", f"\\fB{esc(term)}\\fR", esc(helptext)]
    subs = getattr(cmd, "commands", None)
    if subs:
        out.append(".SH COMMANDS")
        for sub_name in sorted(subs):
            sub = subs[sub_name]
            if getattr(sub, "hidden", False):
                continue
            out += [".TP", f"\\fB{esc(sub_name)}\\fR",
                    esc(sub.get_short_help_str(limit=200)),
                    f"See \\fB{esc(name)}\\-{esc(sub_name)}\\fR(1)."]
    if see_also:
        out += [".SH SEE ALSO", ", ".join(f"\\fB{esc(s)}\\fR(1)" for s in see_also)]
    return "\n".join(out) + "\n"


def generate(out_dir: Path) -> list[Path]:
    """Write every page into ``out_dir``; returns the paths written."""
    import typer.main

    from kafkalog_cli._version import __version__
    from kafkalog_cli.cli.app import app

    root = typer.main.get_command(app)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []

    def walk(cmd, ctx_parent, name_parts):
        ctx = cmd.make_context(name_parts[-1], [], parent=ctx_parent, resilient_parsing=True)
        name = "-".join(name_parts)
        subs = sorted(getattr(cmd, "commands", {}) or {})
        see = [f"{name}-{s}" for s in subs] if subs else ["-".join(name_parts[:-1])]
        p = out_dir / f"{name}.1"
        p.write_text(page(ctx, name, __version__, see))
        written.append(p)
        for s in subs:
            sub = cmd.commands[s]
            if not getattr(sub, "hidden", False):
                walk(sub, ctx, name_parts + [s])

    walk(root, None, ["kafkalog"])
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE.parent / "man")
    args = ap.parse_args(argv)
    for p in generate(args.out):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
