"""Log directories on object storage: every read command gives, for a log directory
uploaded to a local S3 server (moto, reached with pyarrow's real S3 client), exactly what
it gives for the same files on a local disk; export writes to an s3:// --to; writing
commands refuse an s3:// log directory. The fixture variant always runs (without moto it
skips); the corpus variant uploads real broker log directories (skipped without
../shared)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from kafkalog_testkit import CORPUS, FIXTURES, REPO

pytest.importorskip("pyarrow")


def _swap(obj, local: str, uri: str):
    """``obj`` (dicts, lists, values) with every string mentioning the local root renamed
    to the URI, for comparing a local run with a remote one."""
    if isinstance(obj, str):
        return obj.replace(local, uri)
    if isinstance(obj, dict):
        return {k: _swap(v, local, uri) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(_swap(v, local, uri) for v in obj)
    return obj


@pytest.fixture(scope="module")
def remote_fixtures(s3_server) -> str:
    return s3_server.upload(FIXTURES, "fixtures/logs")


# -- the read commands, through the library -------------------------------------------------

def test_verify_index_and_describe_see_the_same(remote_fixtures):
    from kafkalog_cli.ops.describe import describe
    from kafkalog_cli.ops.verify import verify_index

    local, uri = str(FIXTURES), remote_fixtures
    want = _swap(verify_index([local]).to_dict(), local, uri)
    assert verify_index([uri]).to_dict() == want
    got = describe([uri]).to_dict()
    want = _swap(describe([local]).to_dict(), local, uri)
    for d in (got, want):
        for ld in d["logDirs"]:
            ld.pop("locked", None)      # a local .lock probe; none remotely
    assert got == want


@pytest.mark.parametrize("options", [
    {"deep_iteration": True, "print_data_log": True},
    {"start_offset": 100, "end_offset": 103, "deep_iteration": True},   # index seek
    {"verify_index_only": True},
    {"max_bytes": 3000},
])
def test_dump_segment_sees_the_same(remote_fixtures, options):
    from kafkalog_cli.ops.dump import DumpOptions, dump

    local, uri = str(FIXTURES), remote_fixtures
    names = ["multi-0", "txn-0", "legacy-v1-0", "corrupt-truncated-0", "gzip-0",
             "corrupt-index-position-0/00000000000000000000.index"]
    from kafkalog_cli.ops.dump import DEFERRED_KINDS

    def split(events):
        """The events in order, and the reports made after the last file: those come in
        the order of Kafka's HashMap of the paths, which differ (s3://... here)."""
        late = [e for e in events if e.get("kind") in DEFERRED_KINDS]
        return ([e for e in events if e.get("kind") not in DEFERRED_KINDS],
                sorted(late, key=lambda e: (e["kind"], e["key"])))

    for name in names:
        want = _swap(list(dump([f"{local}/{name}"], DumpOptions(**options))), local, uri)
        assert split(list(dump([f"{uri}/{name}"], DumpOptions(**options)))) == \
            split(want), name


@pytest.mark.parametrize("part,how", [
    ("multi-0", {"offset": 100}),                       # an offset-index seek
    ("multi-0", {"timestamp": 1_700_000_150_000}),      # a time-index seek
    ("txn-0", {"offset": "earliest", "isolation_level": "read_committed"}),
])
def test_read_sees_the_same(remote_fixtures, part, how):
    from kafkalog_cli.ops.read import read

    local, uri = str(FIXTURES), remote_fixtures
    want = [r.to_dict() for r in read(f"{local}/{part}", max_records=50, **how).records]
    got = [r.to_dict() for r in read(f"{uri}/{part}", max_records=50, **how).records]
    assert got == want and want


def test_audit_and_export_see_the_same(remote_fixtures, tmp_path):
    import pyarrow.dataset as ds

    from kafkalog_cli.ops.audit import audit
    from kafkalog_cli.ops.export import export

    local, uri = str(FIXTURES), remote_fixtures
    good = ["multi-0", "txn-0", "legacy-v0-0", "lz4-0", "zstd-0", "headers-0"]
    want = _swap(audit([f"{local}/{g}" for g in good]).to_dict(), local, uri)
    assert audit([f"{uri}/{g}" for g in good]).to_dict() == want
    opts = {"isolationLevel": "read_committed"}
    a = export([f"{local}/{g}" for g in good], tmp_path / "a", engine="local", options=opts)
    b = export([f"{uri}/{g}" for g in good], tmp_path / "b", engine="local", options=opts)
    assert (b.rows, b.partitions, b.aborted_records) == (a.rows, a.partitions,
                                                         a.aborted_records)
    for d in ("a", "b"):
        assert (tmp_path / d / "topic=txn" / "partition=0" / "part-00000.parquet").is_file()
    ta = ds.dataset(str(tmp_path / "a"), format="parquet").to_table().sort_by("offset")
    tb = ds.dataset(str(tmp_path / "b"), format="parquet").to_table().sort_by("offset")
    assert ta.equals(tb)


def test_export_writes_to_an_s3_uri(remote_fixtures, s3_server, tmp_path):
    """--to s3://...: the same files, written through pyarrow; an existing output is
    refused without --overwrite, replaced with it; an output inside an input refused."""
    import pyarrow.dataset as ds

    from kafkalog_cli.errors import InvalidArgumentError
    from kafkalog_cli.ops.export import export

    s3_server.filesystem().create_dir("exports")
    src = [f"{remote_fixtures}/multi-0", f"{remote_fixtures}/headers-0"]
    local = export(src, tmp_path / "local", engine="local", fmt="jsonl")
    res = export(src, "s3://exports/run1", engine="local", fmt="jsonl")
    assert (res.rows, res.files, res.partitions) == (local.rows, 2, 2)
    fs = s3_server.filesystem()
    for rel in ("topic=multi/partition=0/part-00000.jsonl",
                "topic=headers/partition=0/part-00000.jsonl"):
        with fs.open_input_stream(f"exports/run1/{rel}") as f:
            assert f.read() == (tmp_path / "local" / rel).read_bytes()
    with pytest.raises(InvalidArgumentError, match="already exists"):
        export(src, "s3://exports/run1", engine="local")
    res = export(src, "s3://exports/run1", engine="local", overwrite=True)
    assert res.rows == local.rows
    got = ds.dataset("exports/run1", format="parquet", filesystem=fs).to_table()
    assert got.num_rows == local.rows
    with pytest.raises(InvalidArgumentError, match="also being read from"):
        export([remote_fixtures], f"{remote_fixtures}/multi-0/out", engine="local")


# -- the CLI -----------------------------------------------------------------------------------

def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-m", "kafkalog_cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_reads_uris_and_refuses_to_write_them(remote_fixtures, tmp_path):
    r = _cli("verify-index", f"{remote_fixtures}/multi-0", "-o", "json", cwd=tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout)["ok"], r.stderr
    r = _cli("read", f"{remote_fixtures}/multi-0", "--offset", "100", "--max-records",
             "2", "-o", "json", cwd=tmp_path)
    assert r.returncode == 0 and [json.loads(x)["offset"] for x in r.stdout.split()] == [
        100, 101], r.stderr
    for args in (["produce", "--log-dir", remote_fixtures, "--topic", "t", "/dev/null"],
                 ["recover", remote_fixtures],
                 ["serve", "--log-dir", remote_fixtures, "--listen", "127.0.0.1:0"]):
        r = _cli(*args, cwd=tmp_path)
        assert r.returncode == 2, (args, r.stderr)
        assert "must be on a local (POSIX) filesystem" in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []        # no local "s3:" directory made


# -- real broker log directories -------------------------------------------------------------

@pytest.mark.corpus
def test_corpus_log_dirs_read_the_same_from_s3(s3_server, tmp_path):
    if not CORPUS.is_dir():
        pytest.skip("real corpus not present at ../shared/corpus/real")
    from kafkalog_cli.ops.audit import audit
    from kafkalog_cli.ops.export import export

    # a log directory with multi-segment partitions (4 segments, trimmed indexes)
    src = CORPUS / "dipendrasaini__kafka-learnning-series" / "tmp" / "kafka-logs"
    local_copy = tmp_path / "kafka-logs"
    shutil.copytree(src, local_copy)
    uri = s3_server.upload(local_copy, "corpus/kafka-logs")
    local, remote = str(local_copy), uri
    want = _swap(audit([local]).to_dict(), local, remote)
    assert audit([remote]).to_dict() == want
    a = export([local], tmp_path / "a", engine="local")
    b = export([remote], tmp_path / "b", engine="local")
    assert a.rows == b.rows > 400_000 and a.partitions == b.partitions
    import pyarrow.dataset as ds

    ta = ds.dataset(str(tmp_path / "a"), format="parquet").to_table()
    tb = ds.dataset(str(tmp_path / "b"), format="parquet").to_table()
    assert ta.sort_by([("offset", "ascending"), ("value", "ascending")]).equals(
        tb.sort_by([("offset", "ascending"), ("value", "ascending")]))
