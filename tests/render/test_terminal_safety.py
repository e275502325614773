"""The rich views never write data bytes raw to a terminal, and their tables never cut a
number, an offset, a partition number or a topic name (rich Console at 80 and 100
columns)."""

from __future__ import annotations

import io
import re
import shutil

import pytest
from rich.console import Console

from kafkalog_cli.format.builder import build_batch

HOSTILE = b"\x1b[2J\x1b]0;PWNED\x07\x00\x9b\xc2\x9b\xe2\x80\xae\xff"
#: anything a terminal acts on: C0 (but newline), DEL, C1, bidi overrides, line separators
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def console(width: int) -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    # no styling: every control character in the output came from the data
    return Console(file=buf, width=width, color_system=None, force_terminal=False,
                   highlight=False), buf


@pytest.fixture
def hostile_partition(tmp_path):
    d = tmp_path / "logs" / "evil-0"
    d.mkdir(parents=True)
    data = build_batch([(1_700_000_000_000, HOSTILE, HOSTILE, [("h\x1b[31m", HOSTILE)]),
                        (1_700_000_000_001, None, b"int32 key \x00\x00\x00\x07", [])])
    (d / f"{0:020d}.log").write_bytes(data)
    return d


def test_rich_dump_escapes_record_bytes(hostile_partition):
    from kafkalog_cli.ops.dump import DumpOptions, dump
    from kafkalog_cli.render.dump import write_rich

    con, buf = console(120)
    err, ebuf = console(120)
    write_rich(dump([hostile_partition], DumpOptions(print_data_log=True)), console=con,
               err_console=err)
    out = buf.getvalue()
    assert not UNSAFE.search(out), repr(out)
    out = out.replace("\n", "")  # lines wrapped at the test console's width
    assert "\\x1b[2J\\x1b]0;PWNED\\x07\\x00" in out  # visible escapes
    assert "\\xff" in out and "\\u202e" in out and "\\x9b" in out
    assert "int32 key \\x00\\x00\\x00\\x07" in out


def test_read_console_escapes_only_on_a_terminal(hostile_partition):
    from kafkalog_cli.ops.read import read
    from kafkalog_cli.render.read import FormatterConfig, write_console

    cfg = FormatterConfig.from_properties(["print.key=true", "print.headers=true"])
    for escape in (True, False):
        res = read(hostile_partition)
        out = io.BytesIO()
        try:
            write_console(res.records, cfg, out, escape=escape)
        finally:
            res.close()
        data = out.getvalue()
        if escape:
            text = data.decode("utf-8")
            assert not UNSAFE.search(text.replace("\t", "")), repr(text)
            assert "\\x1b]0;PWNED\\x07" in text
        else:  # piped: exactly the console consumer's bytes
            assert data.startswith(b"h\x1b[31m:" + HOSTILE + b"\t" + HOSTILE + b"\t" +
                                   HOSTILE + b"\n")


def test_names_read_from_disk_are_escaped(tmp_path, fixtures_root):
    from kafkalog_cli.ops.describe import describe
    from kafkalog_cli.ops.verify import verify_index
    from kafkalog_cli.render.describe import render_describe
    from kafkalog_cli.render.verify import render_verify

    ld = tmp_path / "logs"
    ld.mkdir()
    shutil.copytree(fixtures_root / "plain-0", ld / "ev\x1b]0;x\x07il-0")
    for result, render in ((describe([ld]), render_describe),
                           (verify_index([ld]), render_verify)):
        con, buf = console(100)
        render(result, console=con)
        assert not UNSAFE.search(buf.getvalue()), repr(buf.getvalue())
        assert "ev\\x1b]0;x\\x07il" in buf.getvalue().replace("\n", "")


BIG = [21381402, 3290000000123, 9223372036854775807, 100000000]
TOPICS = ["invoices-eu-central-production", "orders", "a" * 60]


def _audit_result():
    from kafkalog_cli.ops.audit import AuditResult, PartitionAudit

    parts = []
    for i, t in enumerate(TOPICS):
        parts.append(PartitionAudit(
            "/var/lib/kafka/data", t, 2147483647 - i, f"/var/lib/kafka/data/{t}-{i}",
            segments=1234, batches=BIG[0], records=BIG[3], bytes=BIG[1],
            first_offset=BIG[0], last_offset=BIG[2], first_timestamp=1, last_timestamp=2,
            max_timestamp=2, codecs=["gzip", "lz4", "zstd"], corrupt_batches=BIG[0],
            invalid_bytes=BIG[3], transactional_batches=BIG[0], control_batches=7,
            problems=["x"] if i else []))
    return AuditResult(parts)


def _whole(out: str, tokens) -> None:
    assert "\u2026" not in out and "..." not in out.replace("..9", "")  # no ellipsis
    words = set(re.split(r"[\s=|/]+", out))
    for tok in tokens:
        assert str(tok) in words or str(tok) in out.split(), (tok, out)


@pytest.mark.parametrize("width", [80, 100])
def test_audit_never_cuts_numbers_or_names(width):
    from kafkalog_cli.render.audit import render_audit

    con, buf = console(width)
    render_audit(_audit_result(), console=con)
    out = buf.getvalue()
    assert max(len(line) for line in out.splitlines()) <= width
    _whole(out, [f"{t}-{2147483647 - i}" for i, t in enumerate(TOPICS)] + BIG[:2] + BIG[3:])
    assert f"{BIG[0]}..{BIG[2]}" in out.replace("\n", " ")


@pytest.mark.parametrize("width", [80, 100])
def test_verify_and_recover_never_cut_numbers(width, fixtures_root, tmp_path):
    from kafkalog_cli.ops.verify import verify_index
    from kafkalog_cli.recovery import recover
    from kafkalog_cli.render.recover import render_recover
    from kafkalog_cli.render.verify import render_verify

    d = tmp_path / ("x" * 70) / "multi-0"
    shutil.copytree(fixtures_root / "multi-0", d)
    result = verify_index([d])
    con, buf = console(width)
    render_verify(result, console=con)
    out = buf.getvalue()
    _whole(out, [s.batches for s in result.segments] + [s.index_entries for s in result.segments])
    rec = recover([d])
    con, buf = console(width)
    render_recover(rec, console=con)
    out = buf.getvalue()
    segs = rec.partitions[0].segments
    _whole(out, [s.valid_bytes for s in segs] + [s.last_valid_offset for s in segs]
           + [s.base_offset for s in segs])
    assert "not\nscanned" not in out and "scann\n" not in out


def test_escaping_a_large_value_costs_the_escaped_text():
    """Found by the fuzz harness: a 64 MiB value of zero bytes read on a terminal died
    with MemoryError under a 1.5 GiB address space - the escapes were made by ``re.sub``
    with a function, which keeps one string per match (~67 bytes per byte). Now the
    escaped text (4 bytes per zero byte) and little else."""
    import tracemalloc

    from kafkalog_cli.render.text import safe_bytes

    n = 1 << 20
    data = b"\x00\x1b\x9b" * (n // 3)
    tracemalloc.start()
    try:
        text = safe_bytes(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert text == "\\x00\\x1b\\x9b" * (n // 3)
    assert peak < 8 * n, peak


def test_vertical_records_break_between_pairs_only():
    """At 80 columns the audit table is drawn one record per row: each ``name=value``
    pair stays on one line (a codec list or a verdict holding spaces was cut after its
    first word), continuation lines indented."""
    from kafkalog_cli.render.audit import render_audit

    con, buf = console(80)
    render_audit(_audit_result(), console=con)
    lines = buf.getvalue().splitlines()
    assert max(map(len, lines)) <= 80
    assert sum("codecs=gzip, lz4, zstd" in ln for ln in lines) == len(TOPICS)
    assert all(ln.startswith("  ") for ln in lines if ln.lstrip().startswith("codecs="))


def test_rich_dump_fits_80_columns(fixtures_root, tmp_path):
    """The rich dump at 80 columns: no line longer (batch and record lines ran to 131
    characters), breaks between fields only, and a file title too long for a rule is
    printed whole above it (the rule cut its numbers)."""
    from kafkalog_cli.ops.dump import DumpOptions, dump
    from kafkalog_cli.render.dump import write_rich

    d = tmp_path / ("deep" * 12) / "idempotent-0"
    shutil.copytree(fixtures_root / "idempotent-0", d)
    shutil.copytree(fixtures_root / "txn-0", d.parent / "txn-0")
    con, buf = console(80)
    err, _ = console(80)
    write_rich(dump([d, d.parent / "txn-0"], DumpOptions(print_data_log=True)),
               console=con, err_console=err)
    lines = buf.getvalue().splitlines()
    assert max(map(len, lines)) <= 80
    text = buf.getvalue().replace("\n", " ")
    # the title wraps where the temporary path's length puts it (a break at a space
    # drops the space): compared without whitespace, every character is there
    title = f"{d}/00000000000000000000.log  (log starting offset 0)"
    assert "".join(title.split()) in "".join("".join(lines[:3]).split())
    for field in ("pid 4000", "seq 0..2", "leader epoch 7", "CreateTime: 1700000000000",
                  "key: id-0-0", "payload: v0.0", "coordinatorEpoch: 4"):
        assert any(field in ln for ln in lines), field
    assert "offset: 0" in text


def test_describe_offsets_inclusive_and_80_columns(fixtures_root, tmp_path):
    """describe's rich view: a partition's offsets both ends inclusive (plain-0 holds
    offsets 0..7: its log end offset 8 was shown as the end), an empty partition says
    so; at 80 columns no line is longer and no figure is cut between two lines."""
    from kafkalog_cli.ops.describe import describe
    from kafkalog_cli.render.describe import render_describe

    logs = tmp_path / "logs"
    logs.mkdir()
    for p in ("plain-0", "multi-0", "corrupt-truncated-0"):
        shutil.copytree(fixtures_root / p, logs / p)
    (logs / "empty-0").mkdir()
    (logs / "empty-0" / f"{5:020d}.log").write_bytes(b"")
    con, buf = console(80)
    render_describe(describe([logs]), console=con)
    lines = buf.getvalue().splitlines()
    assert max(map(len, lines)) <= 80
    for figure in ("offsets 0..7", "offsets 0..215", "offsets 0..19", "8 records",
                   "no records (log end offset 5)", "901 invalid bytes",
                   "no clean-shutdown marker"):
        assert any(figure in ln for ln in lines), figure
