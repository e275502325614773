"""read: Kafka's internal topics decoded as dump-segment decodes them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kafkalog_read_testkit import CORPUS, write_partition

from kafkalog_cli.errors import InvalidArgumentError
from kafkalog_cli.format.builder import build_batch, build_control_batch
from kafkalog_cli.ops.read import read
from kafkalog_cli.render.read import FormatterConfig, format_record

WT = Path(__file__).resolve().parents[2]
corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus absent")
H = bytes.fromhex

# OffsetCommitKey (type 1): group "g1", topic "t", partition 3
OFFSET_KEY = H("0001" "0002" "6731" "0001" "74" "00000003")
# OffsetCommitValue v3: offset 42, leaderEpoch 5, metadata "m", commit 1000
OFFSET_VALUE = H("0003" "000000000000002a" "00000005" "00016d" "00000000000003e8")
KEY_JSON = '{"type":"1","data":{"group":"g1","topic":"t","partition":3}}'
VALUE_JSON = ('{"version":"3","data":{"offset":42,"leaderEpoch":5,"metadata":"m",'
              '"commitTimestamp":1000}}')


def _offsets_partition(ld: Path, name: str) -> Path:
    return write_partition(ld / name, [
        build_batch([(1000, OFFSET_KEY, OFFSET_VALUE, ())], base_offset=0),
        build_control_batch(1, base_offset=1, timestamp=1001, producer_id=9, producer_epoch=0),
        build_batch([(1002, OFFSET_KEY, None, ())], base_offset=2),  # tombstone
    ])


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "kafkalog_cli", *map(str, args)], cwd=WT,
                          capture_output=True)


def test_internal_topic_decoded_by_name(tmp_path):
    d = _offsets_partition(tmp_path, "__consumer_offsets-0")
    res = read(d)
    recs = list(res.records)
    res.close()
    assert res.decoder == "__consumer_offsets" and res.to_dict()["decoder"] == res.decoder
    assert [r.offset for r in recs] == [0, 2]
    assert recs[0].key == OFFSET_KEY and recs[0].value == OFFSET_VALUE  # raw bytes kept
    assert recs[0].decoded.key_json() == KEY_JSON
    assert recs[0].decoded.value_json() == VALUE_JSON
    assert recs[1].decoded.tombstone
    o = recs[0].to_dict()
    assert o["key"] == json.loads(KEY_JSON) and o["value"] == json.loads(VALUE_JSON)
    assert o["keyType"] == "OffsetCommitKey" and "decodeWarnings" not in o
    assert "keyEncoding" not in o and "valueEncoding" not in o
    assert recs[1].to_dict()["value"] is None
    cfg = FormatterConfig.from_properties(["print.key=true", "print.offset=true"])
    assert b"".join(format_record(r, cfg) for r in recs) == (
        f"Offset:0\t{KEY_JSON}\t{VALUE_JSON}\nOffset:2\t{KEY_JSON}\tnull\n".encode())


def test_other_topics_raw_unless_forced(tmp_path):
    d = _offsets_partition(tmp_path, "copied-0")
    res = read(d)
    (first, _) = list(res.records)
    res.close()
    assert res.decoder is None and first.decoded is None
    assert first.to_dict()["key"] == OFFSET_KEY.decode()  # utf8 bytes, as for any topic
    res = read(d, decode="offsets")
    (first, _) = list(res.records)
    res.close()
    assert res.decoder == "__consumer_offsets" and first.decoded.key_json() == KEY_JSON
    # a forced decoder on data it does not fit: the raw fallback, with warnings
    res = read(d, decode="transaction-log")
    o = next(res.records).to_dict()
    res.close()
    assert "raw" in o["key"] and o["decodeWarnings"]
    with pytest.raises(InvalidArgumentError, match="unknown decoder"):
        read(d, decode="bogus")


def test_no_decode_is_the_raw_read(tmp_path):
    d = _offsets_partition(tmp_path, "__consumer_offsets-0")
    res = read(d, decode="none")
    recs = list(res.records)
    res.close()
    assert res.decoder is None and all(r.decoded is None for r in recs)
    assert [(r.key, r.value) for r in recs] == [(OFFSET_KEY, OFFSET_VALUE), (OFFSET_KEY, None)]


def test_cli(tmp_path):
    d = _offsets_partition(tmp_path, "__consumer_offsets-0")
    r = _cli("read", d, "--property", "print.key=true")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{KEY_JSON}\t{VALUE_JSON}\n{KEY_JSON}\tnull\n".encode()
    r = _cli("read", d, "--no-decode", "--property", "print.key=true")
    assert r.stdout == OFFSET_KEY + b"\t" + OFFSET_VALUE + b"\n" + OFFSET_KEY + b"\tnull\n"
    r = _cli("read", d, "-o", "json")
    lines = [json.loads(x) for x in r.stdout.decode().splitlines()]
    assert lines[0]["value"]["data"]["offset"] == 42 and lines[1]["value"] is None
    c = _offsets_partition(tmp_path, "copied-0")
    r = _cli("read", c, "--offsets-decoder", "--max-records", "1")
    assert r.stdout == f"{VALUE_JSON}\n".encode()
    r = _cli("read", c, "--offsets-decoder", "--no-decode")
    assert r.returncode == 2 and b"at most one" in r.stderr


def _internal_dirs():
    return sorted(d for pat in ("__consumer_offsets-*", "__cluster_metadata-0",
                                "__transaction_state-*")
                  for d in CORPUS.rglob(pat) if d.is_dir())


def _records(d, decode):
    res = read(d, decode=decode)
    try:
        return list(res.records)
    finally:
        res.close()


@corpus
@pytest.mark.corpus
def test_corpus_internal_topics_all_decode():
    dirs = _internal_dirs()
    topics = {d.name.rsplit("-", 1)[0] for d in dirs}
    assert {"__consumer_offsets", "__cluster_metadata"} <= topics
    total = 0
    for d in dirs:
        decoded = _records(d, "auto")
        raw = _records(d, "none")
        assert [(r.offset, r.key, r.value) for r in decoded] == \
            [(r.offset, r.key, r.value) for r in raw], d
        for r in decoded:
            x = r.decoded
            assert x is not None and not x.warnings, (d, r.offset, x.warnings)
            assert x.key_type is not None, (d, r.offset)
            for part in (x.key, x.value):
                assert not (isinstance(part, dict) and "raw" in part), (d, r.offset)
            json.dumps(r.to_dict())
        assert all(r.decoded is None for r in raw)
        total += len(decoded)
    assert total > 10_000


@corpus
@pytest.mark.corpus
def test_corpus_cli_decoded_and_raw():
    md = next(CORPUS.glob("Niloufar1171*/__cluster_metadata-0"))
    r = _cli("read", md, "--max-records", "3", "-o", "json")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.decode().splitlines()]
    assert len(lines) == 3 and all(x["key"] is None and x["value"]["type"] for x in lines)
    r = _cli("read", md, "--max-records", "3", "--no-decode")
    raw = _records(md, "none")[:3]
    assert r.stdout == b"".join(x.value + b"\n" for x in raw)
