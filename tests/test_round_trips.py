"""Lossless round trips: ``read -o json`` and ``dump-segment -o json --print-data-log``
piped into ``produce --format jsonl`` write the same keys, values, headers (binary, null,
empty, duplicate) and timestamps. The source batches are built by kafka-python's
builders and the copies are read back with kafka-python's decoder: neither end is
kafkalog's own code."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from kafka.record import MemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafkalog_testkit import REPO
from kafkalog_testkit import run_cli_inprocess as cli

T0 = 1_700_000_000_000
BINARY = bytes(range(256))
RECORDS = [  # (timestamp, key, value, headers)
    (T0, BINARY, b"\x00\xff\xfe not UTF-8 \xc3", [("bin", BINARY), ("null", None)]),
    (T0 + 1, None, b"null key", []),
    (T0 + 2, b"null value", None, [("empty", b"")]),
    (T0 - 5, b"\x1b[2J\x1b]0;PWNED\x07", b"control characters\r\n\t",
     [("dup", b"1"), ("dup", b"2"), ("cl\u00e9", "caf\u00e9".encode())]),
    (0, b"", b"", []),
    (2**63 - 1, b"k", "\U0001F600 \u2028 text".encode(), [("h", b"\x80")]),
]


def _v2_batch(records, base_offset: int, compression: int = 0) -> bytes:
    b = DefaultRecordBatchBuilder(magic=2, compression_type=compression,
                                  is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i, (ts, k, v, hs) in enumerate(records):
        assert b.append(i, timestamp=ts, key=k, value=v, headers=hs) is not None
    data = bytearray(b.build())
    data[0:8] = base_offset.to_bytes(8, "big")  # the broker assigns offsets
    return bytes(data)


def _v0_batch(records) -> bytes:
    b = LegacyRecordBatchBuilder(magic=0, compression_type=0, batch_size=1 << 20)
    for i, (_, k, v, _) in enumerate(records):
        assert b.append(i, timestamp=None, key=k, value=v) is not None
    return bytes(b.build())


def kp_records(part_dir) -> list:
    """(timestamp, key, value, headers) of every record, decoded by kafka-python."""
    out = []
    for log in sorted(part_dir.glob("*.log")):
        mr = MemoryRecords(log.read_bytes())
        while (batch := mr.next_batch()) is not None:
            for r in batch:
                ts = -1 if r.timestamp is None else r.timestamp
                out.append((ts, r.key, r.value, [(k, v) for k, v in r.headers]))
    return out


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    d = tmp_path_factory.mktemp("src")
    p = d / "orders-0"
    p.mkdir()
    data = _v2_batch(RECORDS[:3], 0) + _v2_batch(RECORDS[3:], 3, compression=1)
    (p / f"{0:020d}.log").write_bytes(data)
    legacy = d / "old-0"
    legacy.mkdir()
    (legacy / f"{0:020d}.log").write_bytes(_v0_batch(RECORDS))
    return d


def _produce(log_dir, text: str, *args) -> None:
    from typer.testing import CliRunner

    from kafkalog_cli.cli import main

    with CliRunner().isolation(input=text.encode()) as (out, err, _):
        code = 0
        try:
            main(["produce", "--log-dir", str(log_dir), "--topic", "copy", "--format",
                  "jsonl", "--no-fsync", "-o", "json", *args])
        except SystemExit as e:
            code = e.code
        sys.stderr.flush()
        assert code == 0, err.getvalue()


def _want(records):
    return [(ts, k, v, [(hk, hv) for hk, hv in hs]) for ts, k, v, hs in records]


@pytest.mark.parametrize("encoding", ["utf8", "base64", "hex"])
def test_read_json_into_produce(src, tmp_path, encoding):
    r = cli("read", str(src / "orders-0"), "-o", "json", "--data-encoding", encoding)
    assert r.returncode == 0, r.stderr
    _produce(tmp_path / "dst", r.stdout, "--config", "message.timestamp.after.max.ms="
             f"{2**63 - 1}", "--config", f"message.timestamp.before.max.ms={2**63 - 1}")
    assert kp_records(tmp_path / "dst" / "copy-0") == _want(RECORDS)


@pytest.mark.parametrize("encoding", ["utf8", "hex"])
def test_dump_segment_json_into_produce(src, tmp_path, encoding):
    r = cli("dump-segment", str(src / "orders-0"), "--print-data-log", "-o", "json",
            "--data-encoding", encoding)
    assert r.returncode == 0, r.stderr
    assert '"type":"batch"' in r.stdout  # batch lines are skipped, not refused
    _produce(tmp_path / "dst", r.stdout, "--config", "message.timestamp.after.max.ms="
             f"{2**63 - 1}", "--config", f"message.timestamp.before.max.ms={2**63 - 1}")
    assert kp_records(tmp_path / "dst" / "copy-0") == _want(RECORDS)


def test_no_timestamp_round_trips(src, tmp_path):
    # v0 messages have no timestamp: read prints -1 (NO_TIMESTAMP), produce writes -1
    r = cli("read", str(src / "old-0"), "-o", "json")
    # (split at newlines only: U+2028 in a JSON string is not a line break of JSON Lines)
    assert {json.loads(x)["timestamp"] for x in r.stdout.split("\n") if x} == {-1}
    _produce(tmp_path / "dst", r.stdout)
    assert kp_records(tmp_path / "dst" / "copy-0") == [
        (-1, k, v, []) for _, k, v, _ in RECORDS]


def test_control_records_and_aborted_data_of_a_dump(tmp_path, fixtures_root):
    # txn-0: a committed and an aborted transaction; the dump has their markers (control
    # records, skipped: a consumer never sees them) and every data record
    r = cli("dump-segment", str(fixtures_root / "txn-0"), "--print-data-log", "-o", "json")
    _produce(tmp_path / "dst", r.stdout)
    src = [x for x in kp_records(fixtures_root / "txn-0") if x[1] is not None
           and not x[1].startswith(b"\x00\x00")]  # the markers' keys: version 0, type
    assert kp_records(tmp_path / "dst" / "copy-0") == src and len(src) == 5


def test_the_shell_pipe(src, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    kl = f"{sys.executable} -m kafkalog_cli"
    cmd = (f"{kl} read {src / 'orders-0'} -o json | {kl} produce --log-dir {tmp_path / 'dst'} "
           f"--topic copy --format jsonl --no-fsync --config "
           f"message.timestamp.after.max.ms={2**63 - 1} --config "
           f"message.timestamp.before.max.ms={2**63 - 1}")
    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert kp_records(tmp_path / "dst" / "copy-0") == _want(RECORDS)


def test_decoded_internal_records_refused(tmp_path, fixtures_root):
    line = json.dumps({"topic": "__consumer_offsets", "partition": 0, "offset": 0,
                       "timestamp": T0, "timestampType": "CreateTime", "leaderEpoch": None,
                       "key": {"group": "g"}, "value": None, "keyType": 2, "headers": []})
    from kafkalog_cli.errors import InputError

    with pytest.raises(InputError, match="decoded record .* --no-decode"):
        list(_records(line))
    with pytest.raises(InputError, match="--print-data-log"):
        list(_records(json.dumps({"type": "record", "offset": 0, "timestamp": T0,
                                  "keySize": 1, "valueSize": 1})))
    with pytest.raises(InputError, match="unknown field"):
        list(_records(json.dumps({"vaule": "typo"})))


def _records(text: str):
    import io

    from kafkalog_cli.inputs import jsonl_records

    for chunk in jsonl_records(io.BytesIO(text.encode() + b"\n"), "f"):
        yield from chunk
