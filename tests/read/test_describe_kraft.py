"""describe: KRaft metadata snapshots and quorum-state of __cluster_metadata partitions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kafkalog_read_testkit import CORPUS, write_partition

from kafkalog_cli.format.builder import build_batch
from kafkalog_cli.ops.describe import describe
from kafkalog_cli.ops.dump import DumpOptions, dump
from kafkalog_cli.storage.dir_files import write_meta_properties

WT = Path(__file__).resolve().parents[2]
corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus absent")

QUORUM_V0 = {"clusterId": "", "leaderId": 3, "leaderEpoch": 7, "votedId": -1,
             "appliedOffset": 0, "currentVoters": [{"voterId": 3}], "data_version": 0}


def _kraft_log_dir(tmp_path: Path, quorum: str | None = json.dumps(QUORUM_V0)) -> Path:
    ld = tmp_path / "meta"
    md = write_partition(ld / "__cluster_metadata-0", [
        build_batch([(1_700_000_000_000 + i, None, b"x", [])], base_offset=i,
                    partition_leader_epoch=7) for i in range(12)])
    # snapshots are named <end offset>-<epoch>; the latest is the greatest (offset, epoch)
    for name in ("00000000000000000005-0000000001.checkpoint",
                 "00000000000000000010-0000000002.checkpoint",
                 "00000000000000000010-0000000001.checkpoint",
                 "00000000000000000008-0000000006.checkpoint"):
        (md / name).write_bytes(b"\0" * 10)
    # a snapshot being written and one being deleted are not snapshots
    (md / "00000000000000000011-0000000007.checkpoint.part").write_bytes(b"\0")
    (md / "00000000000000000001-0000000001.checkpoint.deleted").write_bytes(b"\0")
    if quorum is not None:
        (md / "quorum-state").write_text(quorum)
    write_partition(ld / "orders-0", [build_batch([(1, b"k", b"v", [])], base_offset=0)])
    write_meta_properties(ld, cluster_id="c1", node_id=3, directory_id="AAAAAAAAAAAAAAAAAAAAAQ")
    return ld


def test_generated_snapshots_and_quorum_state(tmp_path):
    ld = _kraft_log_dir(tmp_path)
    res = describe([ld])
    assert res.ok
    d = res.to_dict()["logDirs"][0]
    by = {t["topic"]: t["partitions"][0] for t in d["topics"]}
    md = by["__cluster_metadata"]
    assert md["metadataSnapshots"] == {"count": 4, "bytes": 40, "latestEndOffset": 10,
                                       "latestEpoch": 2}
    assert md["quorumState"] == QUORUM_V0
    assert md["logEndOffset"] == 12 and md["records"] == 12
    # other topics carry the keys, null
    assert by["orders"]["metadataSnapshots"] is None and by["orders"]["quorumState"] is None


def test_generated_without_snapshots_or_quorum_state(tmp_path):
    ld = _kraft_log_dir(tmp_path, quorum=None)
    md = ld / "__cluster_metadata-0"
    for f in md.glob("*.checkpoint"):
        f.unlink()
    (p,) = [p for p in describe([md]).partitions]
    assert p.to_dict()["metadataSnapshots"] == {"count": 0, "bytes": 0,
                                                "latestEndOffset": None, "latestEpoch": None}
    assert p.quorum_state is None and not p.errors


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "\xff\xfe"])
def test_broken_quorum_state_is_an_error(tmp_path, text):
    ld = _kraft_log_dir(tmp_path, quorum=None)
    (ld / "__cluster_metadata-0" / "quorum-state").write_bytes(text.encode("latin-1"))
    res = describe([ld])
    md = next(p for p in res.partitions if p.topic == "__cluster_metadata")
    assert md.quorum_state is None and any("quorum-state" in e for e in md.errors)
    assert md.metadata_snapshots.count == 4  # the rest is still described
    assert not res.ok


def test_cli_json_and_text(tmp_path):
    ld = _kraft_log_dir(tmp_path)
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "describe",
                        str(ld / "__cluster_metadata-0"), "-o", "json"],
                       cwd=WT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (p,) = json.loads(r.stdout)["logDirs"][0]["topics"][0]["partitions"]
    assert p["metadataSnapshots"]["latestEndOffset"] == 10
    assert p["quorumState"]["leaderEpoch"] == 7
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "describe", str(ld), "-o",
                        "text"], cwd=WT, capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "250"})
    assert r.returncode == 0, r.stderr
    assert "metadata snapshots 4 (40 B, latest end offset 10 epoch 2)" in r.stdout
    assert "quorum-state {clusterId=\"\", leaderId=3, leaderEpoch=7, votedId=-1" in r.stdout


@corpus
@pytest.mark.corpus
def test_corpus_snapshots_match_the_files_and_dump():
    dirs = sorted(d for d in CORPUS.rglob("__cluster_metadata-0") if d.is_dir())
    assert len(dirs) >= 5
    by = {p.path: p for p in describe(dirs).partitions}
    for d in dirs:
        p = by[str(d)]
        files = sorted(d.glob("*-*.checkpoint"))
        assert p.metadata_snapshots.count == len(files), d
        if files:
            # dump-segment names each snapshot's end offset and epoch the same way
            evs = [next(dump([f], DumpOptions())) for f in files]
            latest = max((e["snapshotEndOffset"], e["snapshotEpoch"]) for e in evs)
            assert (p.metadata_snapshots.latest_end_offset,
                    p.metadata_snapshots.latest_epoch) == latest
        assert p.quorum_state == json.loads((d / "quorum-state").read_text()), d
        assert not p.errors, (d, p.errors)
    itu = by[str(next(CORPUS.glob("ItumelengMogase*/kafka-data/__cluster_metadata-0")))]
    assert itu.metadata_snapshots.to_dict() == {"count": 3, "bytes": 36170,
                                                "latestEndOffset": 60500, "latestEpoch": 25}
    assert itu.quorum_state["leaderEpoch"] == 25 == itu.leader_epochs[-1][0]
    rupia = by[str(next(CORPUS.glob("ronem123*/kafka-logs/__cluster_metadata-0")))]
    assert rupia.metadata_snapshots.count == 125
    assert (rupia.metadata_snapshots.latest_end_offset, rupia.metadata_snapshots.latest_epoch) \
        == (1734780, 1)
    # data_version 1 (KIP-853) drops currentVoters and adds votedDirectoryId
    assert rupia.quorum_state["data_version"] == 1 and "votedDirectoryId" in rupia.quorum_state
