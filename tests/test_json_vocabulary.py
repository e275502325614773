"""One JSON vocabulary: every command's JSON output validates against its JSON Schema
(kafkalog_cli/schemas/, checked with the jsonschema library), holds no snake_case key,
and the library's result objects serialise to the same objects the CLI prints.

The only keys left as they are: Kafka's own JSON passed through (the quorum-state file's
``data_version``; a decoded internal record's key and value, from Kafka's JSON
converters) and checkpoint file names used as keys (``recovery-point-offset-checkpoint``).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from kafkalog_testkit import run_cli_inprocess as cli

SNAKE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$")
#: keys whose value is Kafka's own JSON, not kafkalog's vocabulary
OPAQUE = {"quorumState", "controlData"}


def schema(name: str) -> dict:
    text = resources.files("kafkalog_cli.schemas").joinpath(f"{name}.json").read_text()
    s = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(s)
    return s


def snake_keys(obj, path="$", decoded=False) -> list[str]:
    """Every snake_case key in ``obj`` (skipping Kafka's own JSON, see the docstring)."""
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if SNAKE.match(k):
                out.append(f"{path}.{k}")
            if k in OPAQUE or k == "checkpointUpdates":
                continue
            if decoded and k in ("key", "value"):
                continue  # a decoded internal record: Kafka's JSON converters' names
            out += snake_keys(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += snake_keys(v, f"{path}[{i}]", decoded)
    return out


def check(name: str, objs: list) -> None:
    v = jsonschema.Draft202012Validator(schema(name))
    assert objs
    for o in objs:
        errors = sorted(v.iter_errors(o), key=lambda e: list(e.path))
        assert not errors, (name, o, [e.message for e in errors[:3]])
        decoded = isinstance(o.get("key"), dict) or isinstance(o.get("value"), dict)
        assert snake_keys(o, decoded=decoded) == [], (name, o)


def lines(text: str) -> list:
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def produce(log_dir: Path, topic: str, text: bytes, *args: str):
    from typer.testing import CliRunner

    from kafkalog_cli.cli import main

    with CliRunner().isolation(input=text) as (out, err, _):
        try:
            main(["produce", "--log-dir", str(log_dir), "--topic", topic, "--no-fsync",
                  "-o", "json", *args])
            code = 0
        except SystemExit as e:
            code = e.code
        sys.stdout.flush()
        sys.stderr.flush()
        return code, out.getvalue().decode(), err.getvalue().decode()


@pytest.fixture(scope="module")
def logs(tmp_path_factory, fixtures_root=None):
    """The fixtures plus a partition with a producer snapshot and a transaction index
    (an idempotent, aborted transactional run) and one with binary data."""
    from kafkalog_testkit import REPO

    d = tmp_path_factory.mktemp("vocab") / "logs"
    shutil.copytree(REPO / "fixtures" / "logs", d)
    code, out, _ = produce(d, "txn", b"a\nb\n", "--producer-id", "7", "--transactional",
                           "--end-txn", "abort")
    assert code == 0, out
    return d


COMMANDS = {
    "describe": lambda d: ["describe", str(d)],
    "verify-index": lambda d: ["verify-index", str(d)],
    "audit": lambda d: ["audit", str(d), "--engine", "local"],
    "recover": lambda d: ["recover", str(d)],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_json_validates(logs, name):
    r = cli(*COMMANDS[name](logs), "-o", "json")
    assert r.returncode in (0, 1), r.stderr
    (obj,) = lines(r.stdout)
    check(name, [obj])


def test_copy_json_validates(logs, tmp_path):
    r = cli("copy", str(logs / "multi-0"), str(logs / "txn-0"), "--to", str(tmp_path / "t"),
            "-o", "json")
    assert r.returncode == 0, r.stderr
    check("copy", lines(r.stdout))
    # a corrupt tail: a problem, and __cluster_metadata left out, both in the JSON
    md = tmp_path / "src" / "__cluster_metadata-0"
    md.mkdir(parents=True)
    (md / f"{0:020d}.log").write_bytes(b"")
    r = cli("copy", str(logs / "corrupt-truncated-0"), str(md), "--to", str(tmp_path / "u"),
            "-o", "json")
    assert r.returncode == 1, r.stderr
    (obj,) = lines(r.stdout)
    assert obj["skipped"] and obj["partitions"][0]["problems"]
    check("copy", [obj])


def test_read_skip_corrupt_json_validates(logs):
    """read -o json --skip-corrupt: records, then invalidBytes objects (dump-event's)."""
    r = cli("read", str(logs / "corrupt-crc-0"), "--skip-corrupt", "-o", "json")
    objs = lines(r.stdout)
    check("consumer-record", [o for o in objs if "offset" in o])
    check("dump-event", [o for o in objs if o.get("type") == "invalidBytes"])


def test_library_results_serialise_as_the_cli_prints(logs):
    from kafkalog_cli.ops.audit import audit
    from kafkalog_cli.ops.describe import describe
    from kafkalog_cli.ops.verify import verify_index
    from kafkalog_cli.recovery import recover

    for args, result in ((COMMANDS["describe"](logs), describe([logs])),
                         (COMMANDS["verify-index"](logs), verify_index([logs])),
                         (COMMANDS["recover"](logs), recover([logs]))):
        (obj,) = lines(cli(*args, "-o", "json").stdout)
        assert obj == result.to_dict()
    got = lines(cli(*COMMANDS["audit"](logs), "-o", "json").stdout)[0]
    assert got == audit([logs], engine="local").to_dict()


@pytest.mark.parametrize("args", [
    ["--print-data-log"], ["--deep-iteration"], [], ["--data-encoding", "hex",
                                                     "--print-data-log"]])
def test_dump_segment_json_validates(logs, args):
    r = cli("dump-segment", str(logs), "-o", "json", *args)
    objs = lines(r.stdout)
    types = {o["type"] for o in objs}
    assert {"file", "batch", "invalidBytes"} <= types
    check("dump-event", objs)


def test_dump_segment_index_snapshot_and_txnindex_json_validates(logs):
    part = logs / "txn-0"
    files = sorted(str(p) for p in part.iterdir() if p.suffix in (
        ".index", ".timeindex", ".snapshot", ".txnindex"))
    files += [str(logs / "multi-0" / f"{88:020d}.index")]
    assert any(f.endswith(".snapshot") for f in files)
    assert any(f.endswith(".txnindex") for f in files)
    objs = lines(cli("dump-segment", *files, "-o", "json").stdout)
    types = {o["type"] for o in objs}
    assert {"indexEntry", "timeIndexEntry", "producerSnapshotEntry", "txnIndexEntry"} <= types
    check("dump-event", objs)
    objs = lines(cli("dump-segment", str(part / f"{0:020d}.index"), "-o", "json",
                     "--index-sanity-check").stdout)
    check("dump-event", objs)


def test_read_json_validates(logs):
    for part in ("headers-0", "nulls-0", "legacy-v0-0", "txn-0"):
        for enc in ("utf8", "base64", "hex"):
            r = cli("read", str(logs / part), "-o", "json", "--data-encoding", enc)
            assert r.returncode == 0, r.stderr
            check("consumer-record", lines(r.stdout))


def test_produce_json_validates_ok_and_stopped(tmp_path):
    code, out, _ = produce(tmp_path / "l", "t", b"a\nb\n")
    assert code == 0
    check("produce", lines(out))
    code, out, err = produce(tmp_path / "l", "t", b'{"value": "a"}\n{bad\n', "--format",
                             "jsonl")
    assert code == 1 and "<stdin>:2" in err
    (summary,) = lines(out)
    check("produce", [summary])
    assert summary["ok"] is False and summary["records"] == 1


def test_recover_truncate_and_undo_json_validate(tmp_path, fixtures_root):
    d = tmp_path / "corrupt-truncated-0"
    shutil.copytree(fixtures_root / "corrupt-truncated-0", d)
    (obj,) = lines(cli("recover", str(d), "--truncate", "-o", "json").stdout)
    check("recover", [obj])
    session = obj["partitions"][0]["quarantine"]
    (undo,) = lines(cli("recover", "--undo", session, "-o", "json").stdout)
    check("recover-undo", [undo])


def test_export_json_validates(logs, tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "out"
    r = cli("export", str(logs / "headers-0"), str(logs / "legacy-v0-0"), "--to", str(out),
            "--format", "jsonl", "--engine", "local", "--batch-metadata", "-o", "json")
    assert r.returncode == 0, r.stderr
    check("export", lines(r.stdout))
    rows = [o for f in sorted(out.rglob("*.jsonl")) for o in lines(f.read_text())]
    check("export-row", rows)
    # NO_TIMESTAMP of the v0 messages: -1 ms, as every kafkalog JSON writes timestamps
    assert -1 in {o["timestamp"] for o in rows}


def test_schema_files_are_package_data():
    from kafkalog_testkit import REPO

    # (setuptools ships them: the wheel test in tests/test_packaging.py builds one)
    assert '"schemas/*.json"' in (REPO / "pyproject.toml").read_text()
    names = {p.name for p in resources.files("kafkalog_cli.schemas").iterdir()
             if p.name.endswith(".json")}
    assert names == {"audit.json", "consumer-record.json", "copy.json",
                     "delete-records.json", "describe.json", "dump-event.json",
                     "export-row.json", "export.json", "get-offsets.json",
                     "groups-delete.json", "groups-delete-offsets.json", "groups-reset.json",
                     "groups.json", "produce.json", "recover-undo.json", "recover.json", "retention.json", "share-groups.json",
                     "verify-index.json"}
    docs = (REPO / "docs" / "json.md").read_text()
    for n in names:
        assert f"`{n}`" in docs


@pytest.mark.corpus
def test_corpus_json_validates(corpus_root):
    """The real broker directories: the whole corpus as one path (a directory of log
    directories, found recursively by every command), and the internal topics decoded."""
    corpus = corpus_root
    for name in ("describe", "verify-index", "audit"):
        r = cli(*COMMANDS[name](corpus), "-o", "json")
        assert r.returncode in (0, 1), r.stderr
        (obj,) = lines(r.stdout)
        check(name, [obj])
    parts = [next(corpus.rglob(pattern)) for pattern in (
        "__consumer_offsets-17", "__cluster_metadata-0", "__transaction_state-*")]
    for part in parts:
        check("dump-event", lines(cli("dump-segment", str(part), "--print-data-log", "-o",
                                      "json").stdout))
        r = cli("read", str(part), "-o", "json")
        assert r.returncode == 0, r.stderr
        objs = lines(r.stdout)
        if objs:
            check("consumer-record", objs)


@pytest.mark.corpus
def test_kafka_tool_commands_json_validates(corpus_root, tmp_path):
    """groups (list, describe, reset), get-offsets and delete-records on a real directory;
    the library's results are what the CLI prints."""
    from kafkalog_cli.ops.get_offsets import get_offsets
    from kafkalog_cli.ops.groups import groups

    src = corpus_root / "anchor123__kafka/tmp/kafka-logs"
    d = tmp_path / "logs"
    shutil.copytree(src, d)
    for args in (["--list"], ["--describe", "--all-groups"]):
        (obj,) = lines(cli("groups", str(d), *args, "-o", "json").stdout)
        check("groups", [obj])
    (obj,) = lines(cli("groups", str(d), "--describe", "--all-groups", "-o", "json").stdout)
    assert obj == groups([d], all_groups=True).to_dict()
    (obj,) = lines(cli("groups", str(d), "--reset-offsets", "--all-groups", "--all-topics",
                       "--to-earliest", "-o", "json").stdout)
    check("groups-reset", [obj])
    (obj,) = lines(cli("get-offsets", str(d), "-o", "json").stdout)
    check("get-offsets", [obj])
    assert obj == get_offsets([d]).to_dict()
    spec = tmp_path / "d.json"
    spec.write_text('{"partitions": [{"topic": "test", "partition": 0, "offset": 3},'
                    '{"topic": "nope", "partition": 0, "offset": 3}]}')
    (obj,) = lines(cli("delete-records", str(d), "--offset-json-file", str(spec),
                       "-o", "json").stdout)
    check("delete-records", [obj])
    assert [p["lowWatermark"] for p in obj["partitions"]] == [None, 3]
