"""Hostile input through the CLI (issue 16): the decompression bomb, offsets past int64,
and verify-index's verdict on bytes that are not batches.

Each command runs in a subprocess whose address space is capped (``RLIMIT_AS``), so a
decoder that grows with its input fails here with MemoryError instead of swapping; the
figures the commands print are checked against what the test built (the bomb's record
count, the edited offsets) or against kafka-python reading the same bytes.
"""

from __future__ import annotations

import json
import re
import resource
import shutil
import struct

import pytest
from kafkalog_testkit import (
    BOMB_RECORDS,
    BOMB_SMALL_RECORDS,
    FIXTURES,
    popen_cli_limited,
    run_cli,
    run_cli_limited,
    write_partition,
    zstd_bomb_batch,
)

from kafkalog_cli.constants import INT64_MAX

SEG0 = "00000000000000000000"
MiB = 1 << 20
#: every number of 19 or more digits above 2^63 - 1 in a text
_BIG = re.compile(r"\d{19,}")


@pytest.fixture(scope="module")
def bombs(tmp_path_factory):
    """``bomb-0``: the issue's 22 KB batch (38 M records, 256 MiB decompressed);
    ``small-0``: its 1.2 KB variant (2 M records)."""
    root = tmp_path_factory.mktemp("bombs")
    big = zstd_bomb_batch()
    small = zstd_bomb_batch(BOMB_SMALL_RECORDS)
    assert 20_000 < len(big) < 24_000 and 1_000 < len(small) < 1_400
    return write_partition(root, "bomb-0", big), write_partition(root, "small-0", small)


# -- case 2: the bomb offline --------------------------------------------------------------

def test_read_two_records_of_the_bomb_is_quick_and_small(bombs):
    """read --max-records 2 decodes a piece of the batch, not its 38 M records (main
    died with MemoryError after ~30 s under a 2 GB limit)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = run_cli_limited("read", str(bombs[0]), "--max-records", "2", "-o", "json",
                        address_space=512 * MiB, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert r.returncode == 0, r.stderr
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(x["offset"], x["key"], x["value"]) for x in recs] == [(0, None, None)] * 2
    # the child's CPU time (load does not stretch it): a piece decoded, not 38 M records
    assert (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime) < 30


def test_dump_of_the_bomb_streams_records_in_bounded_memory(bombs):
    """dump-segment --deep-iteration prints the bomb's records as it decodes them: its
    first thousand lines come within a 512 MiB address space (all 38 M lines would take
    minutes; the memory does not grow with them)."""
    p = popen_cli_limited("dump-segment", "--deep-iteration", "-o", "kafka", str(bombs[0]),
                          address_space=512 * MiB)
    try:
        header = [p.stdout.readline() for _ in range(3)]
        assert header[0].startswith("Dumping ") and f"count: {BOMB_RECORDS}" in header[2]
        lines = [p.stdout.readline() for _ in range(1000)]
        assert all(x.startswith("| offset: 0 CreateTime: 1000 keySize: -1 valueSize: -1")
                   for x in lines), lines[-1]
    finally:
        p.kill()
        p.communicate()


@pytest.mark.slow
def test_dump_of_the_small_bomb_completes_in_bounded_memory(bombs):
    r = run_cli_limited("dump-segment", "--deep-iteration", "-o", "kafka", str(bombs[1]),
                        address_space=256 * MiB, timeout=300)
    assert r.returncode == 0, r.stderr[-500:]
    assert r.stdout.count("\n| offset: ") == BOMB_SMALL_RECORDS


@pytest.mark.parametrize("command", ["describe", "verify-index", "recover"])
def test_header_commands_on_the_bomb(bombs, command):
    """describe, verify-index and recover read batch headers only: the bomb is one
    batch of 38 M records, decoded by none of them."""
    r = run_cli_limited(command, str(bombs[0]), "-o", "json", address_space=256 * MiB,
                        timeout=60)
    assert "Traceback" not in r.stderr and r.returncode in (0, 1), r.stderr
    out = json.loads(r.stdout)
    if command == "describe":
        (part,) = out["logDirs"][0]["topics"][0]["partitions"]
        assert (part["records"], part["logEndOffset"]) == (BOMB_RECORDS, BOMB_RECORDS)
    elif command == "verify-index":
        assert out["ok"] and out["segments"][0]["batches"] == 1


def test_audit_decodes_the_small_bomb_in_bounded_memory(bombs):
    """audit decodes every record (a valid CRC does not make a block decodable); 2 M
    records, in a 512 MiB address space, pyarrow's included (main took 540 MB)."""
    r = run_cli_limited("audit", str(bombs[1]), "-o", "json", address_space=512 * MiB,
                        timeout=120)
    assert r.returncode == 0, r.stderr
    (p,) = json.loads(r.stdout)["partitions"]
    assert (p["records"], p["corruptBatches"], p["ok"]) == (BOMB_SMALL_RECORDS, 0, True)


def test_export_of_the_small_bomb_in_bounded_memory(bombs, tmp_path):
    """export writes the 2 M rows a piece at a time (main took 545 MB, past a 768 MiB
    address space with pyarrow's own)."""
    r = run_cli_limited("export", str(bombs[1]), "--to", str(tmp_path / "out"), "--engine",
                        "local", "-o", "json", address_space=768 * MiB, timeout=120)
    assert r.returncode == 0, r.stderr[-500:]
    assert json.loads(r.stdout)["records"] == BOMB_SMALL_RECORDS
    import pyarrow.parquet as pq
    (f,) = (tmp_path / "out").rglob("*.parquet")
    t = pq.read_table(f, columns=["offset"])
    assert t.num_rows == BOMB_SMALL_RECORDS and set(t.column("offset").to_pylist()) == {0}


@pytest.mark.parametrize("command", [["read", "-o", "json"], ["dump-segment", "--deep-iteration"],
                                     ["audit", "-o", "json"]])
def test_the_bound_on_decompressed_bytes(bombs, command):
    """--max-decompressed-bytes: a batch over it is corrupt, one line naming the file and
    the batch's position."""
    r = run_cli(command[0], str(bombs[1]), *command[1:], "--max-decompressed-bytes", "1000000")
    assert "Traceback" not in r.stderr
    if command[0] == "audit":
        assert r.returncode == 1
        assert "exceeds the bound of 1000000 bytes" in json.loads(r.stdout)["partitions"][0][
            "problems"][0]
        return
    assert r.returncode == 1  # damaged data, whichever command meets it
    assert f"{SEG0}.log at byte 0: decompressed batch exceeds the bound of 1000000 bytes" \
        in r.stderr


# -- case 7: offsets past int64 ------------------------------------------------------------

@pytest.fixture
def overflow(tmp_path):
    """plain-0 with its last batch's base offset edited (8 bytes, outside the CRC) so
    that baseOffset + lastOffsetDelta = 2^63."""
    d = tmp_path / "logs" / "plain-0"
    shutil.copytree(FIXTURES / "plain-0", d)
    log = d / f"{SEG0}.log"
    data = bytearray(log.read_bytes())
    pos, last = 0, None
    while pos + 61 <= len(data):
        last = pos
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
    delta = struct.unpack_from(">i", data, last + 23)[0]
    struct.pack_into(">q", data, last, INT64_MAX + 1 - delta)
    log.write_bytes(bytes(data))
    return d, last


@pytest.mark.parametrize("command", [
    ["verify-index", "-o", "json"], ["audit", "-o", "json"],
    ["dump-segment", "--deep-iteration", "-o", "json"], ["read", "-o", "json"],
    ["describe", "-o", "json"], ["recover", "-o", "json"],
    ["export", "--engine", "local", "--skip-corrupt", "-o", "json"]])
def test_offsets_past_int64_are_a_corrupt_batch(overflow, command, tmp_path):
    """issue 16 case 7: a finding naming the batch's position (exit 1), never an
    OverflowError traceback, never an offset above 2^63 - 1 printed."""
    d, pos = overflow
    extra = ["--to", str(tmp_path / "out")] if command[0] == "export" else []
    r = run_cli(command[0], str(d), *command[1:], *extra)
    assert "Traceback" not in r.stderr
    assert r.returncode == 1, (r.stdout[-300:], r.stderr)
    assert not [n for n in _BIG.findall(r.stdout + r.stderr) if int(n) > INT64_MAX]
    assert f"at byte {pos}" in r.stdout + r.stderr or \
        re.search(rf'"(position|validBytes)": ?{pos}\b', r.stdout)


def test_export_stops_at_offsets_past_int64(overflow, tmp_path):
    """export's rule for any corrupt batch: data loss stops it (exit 1, damaged data)
    unless --skip-corrupt."""
    d, pos = overflow
    r = run_cli("export", str(d), "--to", str(tmp_path / "out"), "--engine", "local")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"at byte {pos}: Record batch is corrupt: its offsets overflow int64" in r.stderr


# -- case 8: verify-index's verdict --------------------------------------------------------

def test_verify_index_on_a_text_file_named_as_a_segment(tmp_path):
    """A file holding no whole batch is not a Kafka log: exit 3, as dump-segment."""
    d = tmp_path / "notes-0"
    d.mkdir()
    (d / f"{SEG0}.log").write_text("these are my notes, not a Kafka log\n" * 20)
    dump = run_cli("dump-segment", str(d / f"{SEG0}.log"))
    r = run_cli("verify-index", str(d), "-o", "json")
    assert dump.returncode == r.returncode == 3
    (p,) = json.loads(r.stdout)["segments"][0]["problems"]
    assert (p["kind"], p["position"], p["bytes"]) == ("no-whole-batch", 0, 720)
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("error: ") and f"{SEG0}.log at byte 0: no whole record batch" in line


def _garbage_after_last_batch(src, dst, n: int = 7131):
    shutil.copytree(src, dst)
    log = sorted(dst.glob("*.log"))[-1]
    size = log.stat().st_size
    with open(log, "ab") as f:
        f.write((b"garbage! " * (n // 9 + 1))[:n])
    return log, size


def test_verify_index_finds_garbage_after_the_last_batch(tmp_path):
    log, size = _garbage_after_last_batch(FIXTURES / "multi-0", tmp_path / "multi-0")
    r = run_cli("verify-index", str(tmp_path / "multi-0"), "-o", "json")
    assert r.returncode == 1, r.stderr
    probs = [p for s in json.loads(r.stdout)["segments"] for p in s["problems"]]
    assert [(p["file"], p["kind"], p["position"], p["bytes"]) for p in probs] == \
        [(str(log), "invalid-bytes", size, 7131)]


@pytest.mark.corpus
def test_verify_index_finds_garbage_after_a_real_segment(corpus_root, tmp_path):
    """The issue's case: a broker-written segment with 7,131 bytes of garbage after its
    last batch (a broker's recovery would truncate them)."""
    src = corpus_root / "dipendrasaini__kafka-learnning-series/tmp/kafka-logs/invoice-0"
    if not src.is_dir():
        pytest.skip("corpus partition absent")
    log, size = _garbage_after_last_batch(src, tmp_path / "invoice-0")
    ok = run_cli("verify-index", str(src), "-o", "json")
    assert ok.returncode == 0, ok.stdout[-500:]
    r = run_cli("verify-index", str(tmp_path / "invoice-0"), "-o", "json")
    assert r.returncode == 1
    probs = [p for s in json.loads(r.stdout)["segments"] for p in s["problems"]]
    assert [(p["kind"], p["position"], p["bytes"]) for p in probs] == \
        [("invalid-bytes", size, 7131)]


def test_read_reports_bytes_it_cannot_read(tmp_path):
    """read delivers every whole batch's records, then names the invalid bytes it
    reached (a consumer never sees them: the broker truncates them) and exits 1."""
    from kafka.record.memory_records import MemoryRecords
    d = tmp_path / "corrupt-truncated-0"
    shutil.copytree(FIXTURES / "corrupt-truncated-0", d)
    data = (d / f"{SEG0}.log").read_bytes()
    mr, want = MemoryRecords(data), []
    while (b := mr.next_batch()) is not None:
        want += [r.offset for r in b]
    r = run_cli("read", str(d), "-o", "json")
    assert r.returncode == 1
    assert [json.loads(x)["offset"] for x in r.stdout.splitlines()] == want
    (line,) = r.stderr.strip().splitlines()
    assert re.fullmatch(rf"error: .*{SEG0}\.log at byte 5005: 901 invalid bytes after the "
                        r"last whole batch", line), line


def test_the_cli_default_is_the_librarys():
    from kafkalog_cli.cli.options import MAX_DECOMPRESSED_DEFAULT
    from kafkalog_cli.constants import DEFAULT_MAX_DECOMPRESSED_BYTES

    assert MAX_DECOMPRESSED_DEFAULT == DEFAULT_MAX_DECOMPRESSED_BYTES == 256 * MiB
