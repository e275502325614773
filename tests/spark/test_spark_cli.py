"""The export and audit commands (local engine; no Spark session needed) and the
optional-dependency messages."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from spark_fixtures import REPO

from kafkalog_cli.cli.app import main


def run(argv, capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as ei:
        main(argv)
    out, err = capsys.readouterr()
    return ei.value.code, out, err


def test_export_local_json_summary(log_dir, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    out = tmp_path / "out"
    code, stdout, _ = run(["export", str(log_dir), "--to", str(out), "--engine", "local",
                           "--topic", "orders", "--ending-offsets", '{"orders":{"0":10}}',
                           "-o", "json"], capsys)
    assert code == 0
    d = json.loads(stdout)
    assert d["engine"] == "local" and d["partitions"] == 3 and d["records"] > 10
    code, _, err = run(["export", str(log_dir), "--to", str(out), "--engine", "local"], capsys)
    assert code == 2 and "already exists" in err and "Traceback" not in err


def test_export_skip_corrupt_exits_1(log_dir_copy, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    log = sorted((log_dir_copy / "orders-0").glob("*.log"))[0]
    data = bytearray(log.read_bytes())
    data[200] ^= 0xFF
    log.write_bytes(bytes(data))
    code, _, err = run(["export", str(log_dir_copy), "--to", str(tmp_path / "a"),
                        "--engine", "local"], capsys)
    assert code == 1 and f"{log} at byte " in err and "data loss" in err
    code, stdout, _ = run(["export", str(log_dir_copy), "--to", str(tmp_path / "b"),
                           "--engine", "local", "--skip-corrupt", "-o", "json"], capsys)
    assert code == 1 and json.loads(stdout)["corruptBatches"] == 1


def test_audit_cli_exit_codes_and_report(log_dir, log_dir_copy, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    report = tmp_path / "audit.parquet"
    code, stdout, _ = run(["audit", str(log_dir), "--engine", "local", "--report",
                           str(report), "-o", "json"], capsys)
    assert code == 0 and json.loads(stdout)["ok"]
    t = pq.read_table(report)
    assert t.num_rows == 5 and set(t.column("topic").to_pylist()) == {"orders", "legacy", "txn"}
    assert t.column("controlBatches").to_pylist().count(2) == 1
    (log_dir_copy / "txn-0" / "00000000000000000010.index").write_bytes(b"\x00\x00\x00\x05")
    code, stdout, _ = run(["audit", str(log_dir_copy), "--engine", "local", "-o", "text"],
                          capsys)
    assert code == 1 and "problem" in stdout


def test_missing_pyarrow_is_one_line_exit_2(log_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    code, _, err = run(["export", str(log_dir), "--to", str(tmp_path / "o")], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        "error: pyarrow is not installed; install it with: pip install 'kafkalog[spark]'"]


def test_missing_pyspark_is_one_line_exit_2(log_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)
    code, _, err = run(["audit", str(log_dir), "--engine", "spark"], capsys)
    assert code == 2 and "pip install 'kafkalog[spark]'" in err and len(err.splitlines()) == 1


def test_cli_starts_without_spark_and_arrow():
    code = ("import sys; sys.modules['pyspark'] = None; sys.modules['pyarrow'] = None\n"
            "from kafkalog_cli.cli.app import main\n"
            "main(['audit', '--help'])")
    p = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0 and "--engine" in p.stdout


def test_murmur2_matches_kafka():
    from kafkalog_cli.spark.writer import murmur2

    # Kafka's UtilsTest.testMurmur2
    cases = {b"21": -973932308, b"foobar": -790332482,
             b"a-little-bit-long-string": -985981536,
             b"a-little-bit-longer-string": -1486304829,
             b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
             b"abc": 479470107}
    assert {k: murmur2(k) for k in cases} == cases


def test_option_parsing_errors():
    from kafkalog_cli.errors import InvalidArgumentError
    from kafkalog_cli.spark.plan import parse_options

    o = parse_options({"startingOffsets": '{"t":{"0":5,"1":-2}}', "endingOffsets": "latest",
                       "isolationLevel": "read_committed", "includeHeaders": "TRUE"})
    assert o.starting_offsets == {"t": {0: 5, 1: -2}} and o.read_committed and o.include_headers
    for bad in ({"startingOffsets": "{nope"}, {"isolationLevel": "x"},
                {"includeHeaders": "maybe"}, {"subscribePattern": "("},
                {"startingOffsets": '{"t":{"0":-3}}'}):
        with pytest.raises(InvalidArgumentError):
            parse_options(bad)


def test_corrupt_base_offset_outside_crc_is_data_loss(log_dir_copy, tmp_path, capsys):
    """The base offset is outside the CRC: offsets that do not follow are corruption too."""
    pytest.importorskip("pyarrow")
    from kafkalog_cli.format.records import FileRecords
    from kafkalog_cli.ops.audit import audit

    log = sorted((log_dir_copy / "orders-2").glob("*.log"))[1]
    data = bytearray(log.read_bytes())
    pos = list(FileRecords(bytes(data)).batches())[5].position
    data[pos + 2] ^= 0x40
    log.write_bytes(bytes(data))
    code, _, err = run(["export", str(log_dir_copy / "orders-2"), "--to", str(tmp_path / "a"),
                        "--engine", "local"], capsys)
    assert code == 1 and f"{log} at byte {pos}: batch offsets" in err
    res = audit([str(log_dir_copy / "orders-2")], engine="local")
    assert res.partitions[0].corrupt_batches == 1 and not res.ok


@pytest.mark.parametrize("where", ["same", "ancestor", "descendant", "symlink"])
def test_export_overwrite_refuses_output_overlapping_input(log_dir_copy, tmp_path, capsys,
                                                           where):
    """Spark refuses "Cannot overwrite a path that is also being read from"; export must
    refuse before deleting anything, not rmtree the input."""
    pytest.importorskip("pyarrow")
    part = log_dir_copy / "orders-0"
    before = sorted(p.name for p in part.iterdir())
    to = {"same": part, "ancestor": log_dir_copy, "descendant": part / "out",
          "symlink": tmp_path / "link"}[where]
    if where == "symlink":
        to.symlink_to(log_dir_copy)
    code, _, err = run(["export", str(part), "--to", str(to), "--overwrite",
                        "--engine", "local"], capsys)
    assert code == 2 and "also being read from" in err and len(err.splitlines()) == 1
    assert sorted(p.name for p in part.iterdir()) == before
    assert not (part / "out").exists()


def _undecodable_partitions(root):
    """badgz-0: a gzip batch whose block is garbage; badcount-0: recordsCount 3 over 2
    records; badhdr-0: the same over records with headers (not the group's shape).
    Every CRC is valid; each bad batch sits between two good ones."""
    from spark_fixtures import T0, write_segment

    from kafkalog_cli.format.builder import assemble_batch, build_batch, encode_records

    def good(o):
        return build_batch([(T0, b"k", b"v", ())], base_offset=o)

    def bad(block, attributes, count, delta):
        return assemble_batch(block, base_offset=1, partition_leader_epoch=0,
                              attributes=attributes, last_offset_delta=delta,
                              base_timestamp=T0, max_timestamp=T0 + 1, producer_id=-1,
                              producer_epoch=-1, base_sequence=-1, records_count=count)

    two, _, _, _ = encode_records([(T0, b"a", b"1", ()), (T0 + 1, b"b", b"2", ())], T0)
    hdr, _, _, _ = encode_records([(T0, b"a", b"1", (("h", b"x"),)),
                                   (T0 + 1, b"b", b"2", ())], T0)
    for name, b in (("badgz-0", bad(b"this is not gzip data", 1, 1, 0)),
                    ("badcount-0", bad(two, 0, 3, 2)), ("badhdr-0", bad(hdr, 0, 3, 2))):
        write_segment(root / name, 0, [good(0), b, good(4)])
    return root


def test_audit_finds_batches_that_do_not_decode(tmp_path, capsys):
    """A valid CRC does not make a batch readable: export fails on these, and audit
    must report them (it used to read only recordsCount for v2)."""
    pytest.importorskip("pyarrow")
    from kafkalog_cli.ops.audit import audit

    root = _undecodable_partitions(tmp_path / "logs")
    res = audit([str(root)], engine="local")
    assert {p.topic: p.corrupt_batches for p in res.partitions} == {
        "badgz": 1, "badcount": 1, "badhdr": 1}
    for p in res.partitions:
        assert not p.ok and p.records == 2
        assert any("at byte 70: batch does not decode" in x for x in p.problems), p.problems
    for d in root.iterdir():
        code, _, err = run(["export", str(d), "--to", str(tmp_path / d.name),
                            "--engine", "local"], capsys)
        assert code == 1 and "at byte 70" in err  # damaged data: 1


def test_audit_no_timestamp_is_not_a_time(tmp_path):
    """Magic-0 messages have no timestamp (-1, NO_TIMESTAMP): the audit's first, last and
    max timestamps stay null rather than 1969-12-31 23:59:59.999; magic 1 has real ones."""
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from kafkalog_cli.format.records import FileRecords
    from kafkalog_cli.ops.audit import audit, write_report

    v0 = REPO / "fixtures" / "logs" / "legacy-v0-0"
    (p,) = audit([str(v0)], engine="local").partitions
    assert p.records > 0
    assert (p.first_timestamp, p.last_timestamp, p.max_timestamp) == (None, None, None)
    v1 = REPO / "fixtures" / "logs" / "legacy-v1-0"
    (q,) = audit([str(v1)], engine="local").partitions
    stamps = [b.max_timestamp for log in sorted(v1.glob("*.log"))
              for b in FileRecords(log.read_bytes()).batches()]
    assert q.max_timestamp == max(stamps) and q.last_timestamp == stamps[-1]
    out = tmp_path / "r.parquet"
    write_report(audit([str(v0)], engine="local"), out)
    row = pq.read_table(out).to_pylist()[0]
    assert row["firstTimestamp"] is None and row["maxTimestamp"] is None
