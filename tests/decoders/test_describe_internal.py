"""describe replays the internal topics as their coordinators load them: the latest
record per key wins, a tombstone removes the key (GroupMetadataManager.replay,
ShareCoordinatorShard.replay, TransactionStateManager, RemoteLogMetadataCache)."""

from __future__ import annotations

from kafka4_records import (
    SHARE_UPDATE_VALUE,
    UUID_BYTES,
    cs,
    i16,
    i32,
    i64,
    remote_segment,
    s,
    share_key,
    share_snapshot_value,
    write_log,
)

from kafkalog_cli.ops.describe import describe


def _partition(log) -> dict:
    (d,) = describe([log.parent]).to_dict()["logDirs"]
    (t,) = d["topics"]
    (p,) = t["partitions"]
    return p


def test_consumer_offsets_groups_by_protocol(tmp_path):
    def group_key(record_type: int, group: str) -> bytes:
        return i16(record_type) + s(group)

    offset_key = i16(1) + s("g") + s("t") + i32(0)
    legacy_key = i16(0) + s("g") + s("t") + i32(0)  # the same offset, record type 0
    records = [
        (group_key(2, "classic-1"), b"x"), (group_key(2, "classic-2"), b"x"),
        (group_key(2, "classic-2"), None),             # deleted
        (group_key(3, "consumer-1"), b"x"),
        (group_key(11, "share-1"), b"x"), (group_key(11, "share-2"), b"x"),
        (group_key(17, "streams-1"), b"x"),
        (group_key(17, "streams-1"), None), (group_key(17, "streams-1"), b"x"),  # back
        (i16(5) + s("consumer-1") + s("member"), b"x"),  # a member: not a group
        (offset_key, b"x"), (legacy_key, b"x"),
        (i16(1) + s("g") + s("t") + i32(1), b"x"), (i16(1) + s("g") + s("t") + i32(1), None),
        (i16(99) + b"??", b"x"),                        # unknown record type
    ]
    p = _partition(write_log(tmp_path, "__consumer_offsets-0", records))
    assert p["internalTopic"] == {
        "groups": {"classic": 1, "consumer": 1, "share": 2, "streams": 1},
        "committedOffsets": 1, "undecodable": 1}


def test_share_group_state_partitions(tmp_path):
    other = i16(0) + s("gs2") + UUID_BYTES + i32(1)
    records = [(share_key(0), share_snapshot_value(1)), (share_key(1), SHARE_UPDATE_VALUE),
               (other, share_snapshot_value(2)), (other, None)]
    p = _partition(write_log(tmp_path, "__share_group_state-0", records))
    assert p["internalTopic"] == {"sharePartitions": 1, "undecodable": 0}


def test_transactional_ids(tmp_path):
    records = [(i16(0) + s("a"), b"x"), (i16(0) + s("b"), b"x"), (i16(0) + s("a"), None)]
    p = _partition(write_log(tmp_path, "__transaction_state-3", records))
    assert p["internalTopic"] == {"transactionalIds": 1, "undecodable": 0}


def test_remote_log_segments(tmp_path):
    def update(seg: bytes, state: int) -> bytes:
        return (b"\x01\x01\x00" + cs("orders") + UUID_BYTES + i32(3) + b"\x00" + seg
                + b"\x00" + i32(1) + i64(3000) + b"\x00" + bytes([state]) + b"\x00")

    def delete(state: int) -> bytes:
        return (b"\x01\x02\x00" + cs("orders") + UUID_BYTES + i32(3) + b"\x00" + i32(1)
                + i64(4000) + bytes([state]) + b"\x00")

    seg = bytes(range(16))  # remote_segment's segment id
    records = [(None, remote_segment(0)), (None, update(seg, 1)),     # copied: 4096 bytes
               (None, delete(0)), (None, delete(2)), (None, None)]
    p = _partition(write_log(tmp_path, "__remote_log_metadata-0", records))
    assert p["internalTopic"] == {
        "remoteLogSegments": {"segments": 1, "bytes": 4096,
                              "byState": {"COPY_SEGMENT_FINISHED": 1},
                              "partitionsDeleted": 1},
        "undecodable": 1}
    records[1] = (None, update(seg, 3))  # deleted
    (tmp_path / "x").mkdir()
    p = _partition(write_log(tmp_path / "x", "__remote_log_metadata-0", records))
    assert p["internalTopic"]["remoteLogSegments"] == {
        "segments": 0, "bytes": 0, "byState": {"DELETE_SEGMENT_FINISHED": 1},
        "partitionsDeleted": 1}


def test_ordinary_topics_have_no_internal_state(tmp_path):
    p = _partition(write_log(tmp_path, "orders-0", [(b"k", b"v")]))
    assert p["internalTopic"] is None


def test_read_decodes_the_new_topics_by_name(cli, tmp_path):
    """read: __share_group_state and __remote_log_metadata are decoded by default, a
    tombstone's value is null."""
    import json

    log = write_log(tmp_path, "__share_group_state-0",
                    [(share_key(1), SHARE_UPDATE_VALUE), (share_key(1), None)])
    r = cli("read", str(log.parent), "-o", "json")
    assert r.returncode == 0, r.stderr
    first, tomb = map(json.loads, r.stdout.splitlines())
    assert first["keyType"] == "ShareUpdateKey"
    assert first["value"]["data"]["stateBatches"][0]["lastOffset"] == 4
    assert tomb["value"] is None and tomb["key"]["type"] == "1"
    log = write_log(tmp_path, "__remote_log_metadata-0", [(None, remote_segment(1))])
    (rec,) = map(json.loads, cli("read", str(log.parent), "-o", "json").stdout.splitlines())
    assert rec["key"] is None and rec["keyType"] == "RemoteLogSegmentMetadataRecord"
    assert rec["value"]["data"]["remoteLogSegmentState"] == 1


def test_read_decoder_options_force_the_new_decoders(cli, tmp_path):
    """read --share-group-state-decoder / --remote-log-metadata-decoder decode a partition
    whatever its topic's name, as dump-segment's options do; --no-decode beside one is a
    usage error."""
    import json

    log = write_log(tmp_path, "renamed-0", [(share_key(1), SHARE_UPDATE_VALUE)])
    raw = json.loads(cli("read", str(log.parent), "-o", "json").stdout)
    assert "keyType" not in raw  # not an internal topic by name: raw bytes
    r = cli("read", str(log.parent), "-o", "json", "--share-group-state-decoder")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["keyType"] == "ShareUpdateKey"
    log = write_log(tmp_path, "copy-0", [(None, remote_segment(1))])
    r = cli("read", str(log.parent), "-o", "json", "--remote-log-metadata-decoder")
    assert json.loads(r.stdout)["keyType"] == "RemoteLogSegmentMetadataRecord"
    r = cli("read", str(log.parent), "--remote-log-metadata-decoder", "--no-decode")
    assert r.returncode == 2
    r = cli("read", str(log.parent), "--offsets-decoder", "--share-group-state-decoder")
    assert r.returncode == 2
