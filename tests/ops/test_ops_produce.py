"""ops.produce: inputs -> batches -> the log; round trips through kafka-python's reader,
failure semantics, and the shape of real broker output."""

import io
import json
from pathlib import Path

import pytest

from kafkalog_cli.cli.exit_codes import for_error
from kafkalog_cli.errors import InputError, ProduceError
from kafkalog_cli.format.records import FileRecords
from kafkalog_cli.inputs import jsonl_records, lines_records
from kafkalog_cli.ops.produce import ProduceOptions, iter_inputs, produce
from kafkalog_cli.ops.verify import verify_index
from kafkalog_cli.storage.clock import ManualClock
from kafkalog_cli.storage.config import LogConfig
from kafkalog_cli.storage.segment import open_view, rebuild_indexes

T0 = 1_700_000_000_000
CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "real"


def run(tmp_path, text: bytes, **kw):
    opts = ProduceOptions(topic=kw.pop("topic", "t"), **kw)
    stdin = io.BytesIO(text)
    return produce(tmp_path / "logs", opts, iter_inputs([], opts, stdin=stdin),
                   clock=ManualClock(T0), fsync=False)


def all_records(part_dir):
    out = []
    for p in sorted(part_dir.glob("*.log")):
        for b in FileRecords(p.read_bytes()).batches():
            out.extend(b.records())
    return out


def test_lines_round_trip(tmp_path):
    res = run(tmp_path, b"a\nb\r\n\nlast", batch_size=2)
    assert (res.records, res.first_offset, res.last_offset, res.batches) == (4, 0, 3, 2)
    recs = all_records(tmp_path / "logs/t-0")
    assert [r.value for r in recs] == [b"a", b"b", b"", b"last"]
    assert {r.timestamp for r in recs} == {T0}


def test_parse_key(tmp_path):
    run(tmp_path, b"k1:v1\nk2:v:2\n", parse_key=True, key_separator=":")
    recs = all_records(tmp_path / "logs/t-0")
    assert [(r.key, r.value) for r in recs] == [(b"k1", b"v1"), (b"k2", b"v:2")]
    with pytest.raises(ProduceError, match="No key separator found on line number 2"):
        run(tmp_path, b"k:v\nnokey\n", parse_key=True, key_separator=":")


def test_jsonl_fields(tmp_path):
    lines = [
        {"key": "k", "value": "v", "headers": {"a": "1", "n": None}, "timestamp": T0 - 5},
        {"value": {"nested": [1, 2]}, "headers": [["x", "y"], ["x", "z"]]},
        {"key": None, "value": None},
        {"value": "p1", "partition": 1},
    ]
    text = "\n".join(json.dumps(x) for x in lines).encode() + b"\n\n"
    res = run(tmp_path, text, input_format="jsonl", keep_partition=True)
    assert res.records == 4 and sorted(res.partitions) == [0, 1]
    r0 = all_records(tmp_path / "logs/t-0")
    assert (r0[0].key, r0[0].value, r0[0].timestamp) == (b"k", b"v", T0 - 5)
    assert r0[0].headers == (("a", b"1"), ("n", None))
    assert r0[1].value == b'{"nested":[1,2]}' and r0[1].headers == (("x", b"y"), ("x", b"z"))
    assert (r0[2].key, r0[2].value) == (None, None)
    assert [r.value for r in all_records(tmp_path / "logs/t-1")] == [b"p1"]


def test_jsonl_base64(tmp_path):
    run(tmp_path, b'{"value": "AAEC/w==", "key": "aGk="}\n', input_format="jsonl",
        value_encoding="base64")
    (r,) = all_records(tmp_path / "logs/t-0")
    assert (r.key, r.value) == (b"hi", b"\x00\x01\x02\xff")


def test_malformed_json_names_line_and_writes_the_records_before_it(tmp_path):
    # produce's contract (as kafka-console-producer has sent them by then): every record
    # before the bad line is written, the last batch (record 7) too
    good = b"".join(b'{"value": "v%d"}\n' % i for i in range(7))
    with pytest.raises(ProduceError) as e:
        run(tmp_path, good + b'{"value": oops}\n', input_format="jsonl", batch_size=3)
    assert "<stdin>:8" in str(e.value) and for_error(e.value) == 1
    res = e.value.result
    assert (res.records, res.dropped_records, res.last_offset) == (7, 0, 6)
    d = tmp_path / "logs"
    assert [r.value for r in all_records(d / "t-0")] == [b"v%d" % i for i in range(7)]
    assert (d / ".kafka_cleanshutdown").exists()
    assert verify_index([d]).ok
    # and the next run continues at offset 7
    res = run(tmp_path, b"next\n")
    assert res.first_offset == 7


def test_atomic_writes_nothing_before_a_bad_line(tmp_path):
    good = b"".join(b'{"value": "v%d"}\n' % i for i in range(7))
    with pytest.raises(ProduceError) as e:
        run(tmp_path, good + b'{"value": oops}\n', input_format="jsonl", batch_size=3,
            atomic=True)
    assert "<stdin>:8" in str(e.value) and e.value.result.records == 0
    assert not (tmp_path / "logs").exists()
    res = run(tmp_path, good, input_format="jsonl", batch_size=3, atomic=True)
    assert res.records == 7
    assert [r.value for r in all_records(tmp_path / "logs/t-0")] == [
        b"v%d" % i for i in range(7)]


@pytest.mark.parametrize("text", [b"", b"\n\n", b'{"value": oops}\n'])
def test_nothing_created_before_a_record_was_read(tmp_path, text):
    try:
        res = run(tmp_path, text, input_format="jsonl")
    except ProduceError as e:
        res = e.result
        assert "<stdin>:1" in str(e)
    assert res.records == 0
    assert not (tmp_path / "logs").exists()


def test_transactional_run_aborted_on_failure(tmp_path):
    with pytest.raises(ProduceError):
        run(tmp_path, b'{"value": "a"}\n{bad\n', input_format="jsonl", batch_size=1,
            producer_id=9, transactional=True)
    d = tmp_path / "logs/t-0"
    batches = list(FileRecords((d / "00000000000000000000.log").read_bytes()).batches())
    assert [b.is_control for b in batches] == [False, True]
    assert (d / "00000000000000000000.txnindex").stat().st_size == 34


def test_idempotent_sequences_continue_across_runs(tmp_path):
    run(tmp_path, b"a\nb\nc\n", batch_size=2, producer_id=5, producer_epoch=2)
    run(tmp_path, b"d\n", producer_id=5, producer_epoch=2)
    batches = []
    for p in sorted((tmp_path / "logs/t-0").glob("*.log")):
        batches += list(FileRecords(p.read_bytes()).batches())
    assert [(b.producer_id, b.producer_epoch, b.base_sequence) for b in batches] == [
        (5, 2, 0), (5, 2, 2), (5, 2, 3)]


def _headers(log: Path) -> list[tuple]:
    """(baseOffset, records, baseSequence, transactional, control, marker type) of each
    v2 batch, read with struct from DefaultRecordBatch's layout (not kafkalog's reader)."""
    import struct

    data, pos, out = log.read_bytes(), 0, []
    while pos < len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        attrs, = struct.unpack_from(">h", data, pos + 21)
        seq, count = struct.unpack_from(">ii", data, pos + 53)
        marker = None
        if attrs & 0x20:  # a control record: its key is version int16, type int16
            marker = struct.unpack_from(">h", data, pos + 61 + 1 + 1 + 1 + 1 + 1 + 2)[0]
        out.append((base, count, seq, bool(attrs & 0x10), bool(attrs & 0x20), marker))
        pos += 12 + length
    return out


def test_control_chunks_lay_out_batches_and_transactions(tmp_path):
    """BatchBoundary ends each partition's batch where the caller says (a Java producer's
    flush), EndTransaction writes the marker, and the next records open the next
    transaction with the same producer and the sequences going on (transaction.version
    1), all in one run."""
    from kafkalog_cli.inputs import InputRecord
    from kafkalog_cli.ops.produce import BatchBoundary, EndTransaction

    def recs(*values):
        return [InputRecord(0, 1000, None, v.encode(), (), None) for v in values]

    chunks = [recs("a", "b"), recs("c"), BatchBoundary(), recs("d"), EndTransaction(False),
              recs("e", "f"), BatchBoundary(), BatchBoundary(), recs("g"), EndTransaction()]
    opts = ProduceOptions("t", batch_bytes=2**31 - 1, producer_id=7, producer_epoch=1,
                          transactional=True, config=LogConfig(segment_ms=2**62))
    result = produce(tmp_path / "logs", opts, iter(chunks))
    assert result.markers == 2
    assert _headers(tmp_path / "logs/t-0/00000000000000000000.log") == [
        (0, 3, 0, True, False, None), (3, 1, 3, True, False, None),
        (4, 1, -1, True, True, 0),  # ABORT
        (5, 2, 4, True, False, None), (7, 1, 6, True, False, None),
        (8, 1, -1, True, True, 1),  # COMMIT
    ]


def test_raw_files(tmp_path):
    f1, f2 = tmp_path / "a.bin", tmp_path / "b.bin"
    f1.write_bytes(b"\x00\n\x01")
    f2.write_bytes(b"two")
    opts = ProduceOptions(topic="t", input_format="raw")
    produce(tmp_path / "logs", opts, iter_inputs([f1, f2], opts), fsync=False)
    assert [r.value for r in all_records(tmp_path / "logs/t-0")] == [b"\x00\n\x01", b"two"]


def test_input_readers_directly():
    chunks = list(lines_records(io.BytesIO(b"x\ny"), "s"))
    assert [list(c) for c in chunks] == [[b"x"], [b"y"]]
    with pytest.raises(InputError) as e:
        list(jsonl_records(io.BytesIO(b'{"value": 1}\n[1]\n'), "f"))
    assert e.value.line == 2
    with pytest.raises(InputError, match="unknown field"):
        list(jsonl_records(io.BytesIO(b'{"valeu": 1}\n'), "f"))


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_kafka_python_reads_every_codec(tmp_path, codec):
    from kafka.record import MemoryRecords

    text = b"".join(b'{"key": "k%d", "value": "value %d", "headers": {"h": "x"}}\n' % (i, i)
                    for i in range(500))
    cfg = LogConfig.from_properties({"segment.bytes": "2000", "index.interval.bytes": "300"})
    res = run(tmp_path, text, input_format="jsonl", compression=codec, batch_size=37,
              config=cfg)
    assert res.records == 500 and res.segments_rolled >= 1
    seen = []
    for p in sorted((tmp_path / "logs/t-0").glob("*.log")):
        mr = MemoryRecords(p.read_bytes())
        while True:
            batch = mr.next_batch()
            if batch is None:
                break
            assert batch.validate_crc()
            assert batch.compression_type == ["none", "gzip", "snappy", "lz4", "zstd"].index(
                codec)
            for r in batch:
                seen.append((r.offset, r.key, r.value, r.headers))
        base = int(p.name[:20])
        rb = rebuild_indexes(open_view(p), base, 300)
        assert p.with_suffix(".index").read_bytes() == rb.offset_index_bytes(base)
        assert p.with_suffix(".timeindex").read_bytes() == rb.time_index_bytes(base)
    assert [s[0] for s in seen] == list(range(500))
    assert seen[7][1:] == (b"k7", b"value 7", [("h", b"x")])
    assert verify_index([tmp_path / "logs"]).ok


@pytest.mark.corpus
def test_same_shape_as_real_broker_output(tmp_path):
    real = CORPUS / "dipendrasaini__kafka-learnning-series/tmp/kafka-logs-2/invoice-0"
    if not real.is_dir():
        pytest.skip("corpus absent")
    text = b"".join(b"%0200d\n" % i for i in range(20000))
    cfg = LogConfig.from_properties({"segment.bytes": "1000000"})
    run(tmp_path, text, topic="invoice", batch_size=500, config=cfg)
    mine = tmp_path / "logs/invoice-0"
    names = sorted(p.name for p in mine.iterdir())
    real_names = sorted(p.name for p in real.iterdir())
    # same kinds of files: segments, index pairs, snapshots at roll offsets, metadata
    kinds = {n.split(".", 1)[-1] if n[0].isdigit() else n for n in names}
    real_kinds = {n.split(".", 1)[-1] if n[0].isdigit() else n for n in real_names}
    assert kinds == real_kinds
    assert (mine / "leader-epoch-checkpoint").read_text() == \
        (real / "leader-epoch-checkpoint").read_text()
    assert len((mine / "partition.metadata").read_bytes()) == \
        len((real / "partition.metadata").read_bytes())
    for p in mine.glob("*.index"):
        assert p.stat().st_size % 8 == 0 and p.stat().st_size < 10485760
    for p in mine.glob("*.snapshot"):
        assert p.read_bytes() == (real / "00000000000000030626.snapshot").read_bytes()
    assert (tmp_path / "logs/log-start-offset-checkpoint").read_text() == \
        (real.parent / "log-start-offset-checkpoint").read_text() \
        if (real.parent / "log-start-offset-checkpoint").exists() else True
    assert verify_index([tmp_path / "logs"]).ok
    assert verify_index([real]).ok


@pytest.mark.parametrize("field,value", [
    ("timestamp", 99999999999999999999), ("timestamp", 2**63), ("timestamp", -2),
    ("partition", 99999999999), ("partition", 2**31),
])
def test_jsonl_out_of_range_numbers_name_the_line(tmp_path, field, value):
    good = b'{"value": "a", "%s": 7}\n' % field.encode()
    bad = json.dumps({"value": "b", field: value}).encode() + b"\n"
    with pytest.raises(ProduceError) as e:
        run(tmp_path, good + bad, input_format="jsonl", keep_partition=True)
    assert f"<stdin>:2: {field} {value} is out of range" in str(e.value)
    assert for_error(e.value) == 1
    assert not (tmp_path / f"logs/t-{value}").exists()


def test_jsonl_no_timestamp_is_kept(tmp_path):
    # -1 is Kafka's NO_TIMESTAMP (what read -o json prints for a v0 message); a broker
    # accepts it in a v2 batch (LogValidator skips NO_TIMESTAMP), so it round-trips
    run(tmp_path, b'{"value": "a", "timestamp": -1}\n{"value": "b", "timestamp": -1}\n',
        input_format="jsonl")
    assert [r.timestamp for r in all_records(tmp_path / "logs/t-0")] == [-1, -1]


def test_jsonl_partition_field_ignored_without_keep_partition(tmp_path):
    run(tmp_path, b'{"value": "a", "partition": 3}\n', input_format="jsonl", partition=1)
    assert [r.value for r in all_records(tmp_path / "logs/t-1")] == [b"a"]
    assert not (tmp_path / "logs/t-3").exists()


def test_jsonl_range_maxima_accepted(tmp_path):
    text = json.dumps({"value": "a", "timestamp": 2**63 - 1, "partition": 2**31 - 1})
    cfg = LogConfig.from_properties({"message.timestamp.after.max.ms": str(2**63 - 1)})
    res = run(tmp_path, text.encode() + b"\n", input_format="jsonl", config=cfg,
              keep_partition=True)
    (r,) = all_records(tmp_path / f"logs/t-{2**31 - 1}")
    assert res.records == 1 and r.timestamp == 2**63 - 1


def test_timestamp_delta_overflow_refused(tmp_path):
    text = b'{"value": "a"}\n{"value": "b", "timestamp": 9223372036854775807}\n'
    with pytest.raises(ProduceError, match="64-bit timestamp delta") as e:
        run(tmp_path, text, input_format="jsonl", timestamp=-1)
    assert e.value.result.records == 0


@pytest.mark.parametrize("kw", [{"partition": 2**31}, {"timestamp": 2**63}, {"timestamp": -2},
                                {"producer_id": 2**63}, {"leader_epoch": 2**31}])
def test_options_out_of_range(tmp_path, kw):
    from kafkalog_cli.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError):
        run(tmp_path, b"x\n", **kw)
    assert not (tmp_path / "logs").exists()


def test_failed_run_removes_only_partitions_it_created_empty(tmp_path):
    from kafkalog_cli.ops.verify import verify_index

    run(tmp_path, b'{"value": "a", "partition": 1}\n', input_format="jsonl",
        keep_partition=True)
    text = (b'{"value": "b", "partition": 1}\n{"value": "c", "partition": 2}\n'
            b'{"value": "%s", "partition": 3}\n' % (b"x" * 200))
    cfg = LogConfig.from_properties({"max.message.bytes": "150"})
    with pytest.raises(ProduceError) as e:
        run(tmp_path, text, input_format="jsonl", config=cfg, batch_size=1, partition=5,
            keep_partition=True)
    d = tmp_path / "logs"
    # t-5 (the default partition) and t-3 (refused) were new and got nothing: removed;
    # t-0 and t-1 existed (t-0 empty), t-2 got a record
    assert sorted(p.name for p in d.iterdir() if p.is_dir()) == ["t-0", "t-1", "t-2"]
    assert sorted(e.value.result.partitions) == [1, 2]
    assert [r.value for r in all_records(d / "t-1")] == [b"a", b"b"]
    assert verify_index([d]).ok
    checkpoint = (d / "recovery-point-offset-checkpoint").read_text()
    assert "t 5" not in checkpoint and "t 3" not in checkpoint and "t 2" in checkpoint


def _topic_id_of(part_dir):
    from kafkalog_cli.storage.dir_files import read_partition_metadata

    return read_partition_metadata(part_dir)["topic_id"]


def test_partitions_of_a_topic_share_one_topic_id(tmp_path):
    # a broker refuses a partition whose topic id differs from the topic's
    # (InconsistentTopicIdException)
    run(tmp_path, b'{"value": "a", "partition": 0}\n{"value": "b", "partition": 1}\n'
        b'{"value": "c", "partition": 2}\n', input_format="jsonl", keep_partition=True)
    ids = {_topic_id_of(tmp_path / f"logs/t-{p}") for p in range(3)}
    assert len(ids) == 1
    # a later run reuses it for a new partition; another topic gets its own
    run(tmp_path, b"d\n", partition=5)
    run(tmp_path, b"e\n", topic="u")
    assert _topic_id_of(tmp_path / "logs/t-5") in ids
    assert _topic_id_of(tmp_path / "logs/u-0") not in ids


def test_explicit_topic_id_must_match_existing_partitions(tmp_path):
    from kafkalog_cli.errors import InvalidArgumentError

    run(tmp_path, b"a\n", topic_id="MS6UwIykT-u_EKLh7UTTNw")
    assert _topic_id_of(tmp_path / "logs/t-0") == "MS6UwIykT-u_EKLh7UTTNw"
    run(tmp_path, b"b\n", partition=1, topic_id="MS6UwIykT-u_EKLh7UTTNw")
    before = {p: p.read_bytes() for p in (tmp_path / "logs").rglob("*") if p.is_file()}
    with pytest.raises(InvalidArgumentError, match="differs from the topic id") as e:
        run(tmp_path, b"c\n", partition=2, topic_id="K6p2Rr3PQhWkUrJo8WT_Nw")
    assert for_error(e.value) == 2
    after = {p: p.read_bytes() for p in (tmp_path / "logs").rglob("*") if p.is_file()}
    assert after == before


def test_inconsistent_existing_topic_ids_refused(tmp_path):
    from kafkalog_cli.errors import InvalidArgumentError
    from kafkalog_cli.storage.dir_files import write_partition_metadata

    run(tmp_path, b'{"value": "a", "partition": 0}\n{"value": "b", "partition": 1}\n',
        input_format="jsonl", keep_partition=True)
    write_partition_metadata(tmp_path / "logs/t-1", "K6p2Rr3PQhWkUrJo8WT_Nw")
    with pytest.raises(InvalidArgumentError, match="different topic ids"):
        run(tmp_path, b"c\n", partition=2)
    assert not (tmp_path / "logs/t-2").exists()


def _epochs(part_dir):
    from kafkalog_cli.storage.checkpoints import read_leader_epoch_checkpoint

    return read_leader_epoch_checkpoint(part_dir / "leader-epoch-checkpoint")


def _batch_epochs(part_dir):
    return [b.partition_leader_epoch for p in sorted(part_dir.glob("*.log"))
            for b in FileRecords(p.read_bytes()).batches()]


def test_default_leader_epoch_continues_the_latest(tmp_path):
    # a leader never stamps an epoch below the latest in its LeaderEpochFileCache
    from kafkalog_cli.errors import InvalidArgumentError

    run(tmp_path, b"a\n")
    run(tmp_path, b"b\n", leader_epoch=7)
    run(tmp_path, b"c\n")
    part = tmp_path / "logs/t-0"
    assert _epochs(part) == [(0, 0), (7, 1)]
    assert _batch_epochs(part) == [0, 7, 7]
    before = {p: p.read_bytes() for p in (tmp_path / "logs").rglob("*") if p.is_file()}
    with pytest.raises(InvalidArgumentError, match="below the latest leader epoch 7") as e:
        run(tmp_path, b"d\n", leader_epoch=3)
    assert for_error(e.value) == 2
    assert {p: p.read_bytes() for p in (tmp_path / "logs").rglob("*") if p.is_file()} == before
    run(tmp_path, b"e\n", leader_epoch=9)
    assert _epochs(part) == [(0, 0), (7, 1), (9, 3)]


def test_lower_leader_epoch_for_a_jsonl_partition_stops_the_run(tmp_path):
    run(tmp_path, b'{"value": "a", "partition": 1}\n', input_format="jsonl", leader_epoch=5,
        keep_partition=True)
    with pytest.raises(ProduceError, match="below the latest leader epoch 5") as e:
        run(tmp_path, b'{"value": "b"}\n{"value": "c", "partition": 1}\n',
            input_format="jsonl", leader_epoch=2, batch_size=1, keep_partition=True)
    assert for_error(e.value) == 1
    assert _epochs(tmp_path / "logs/t-1") == [(5, 0)]
    assert _batch_epochs(tmp_path / "logs/t-1") == [5]


@pytest.mark.corpus
def test_appending_to_a_real_partition_keeps_its_epoch_history(tmp_path):
    import shutil

    real = CORPUS / ("ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/"
                     "kafka-data")
    if not real.is_dir():
        pytest.skip("corpus absent")
    shutil.copytree(real, tmp_path / "logs")
    part = tmp_path / "logs/_schemas-0"
    history = _epochs(part)
    assert history[-1][0] == 38
    res = run(tmp_path, b"1\n2\n3\n", topic="_schemas")
    assert res.first_offset == 42
    assert _epochs(part) == history
    assert _batch_epochs(part)[-1] == 38
