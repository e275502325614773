"""What an internal topic's partition holds, replayed from its records as the coordinator
that owns it would load them (latest record per key wins; a tombstone removes the key):

* ``__consumer_offsets``: groups by protocol (a group exists while its own metadata
  record, GroupMetadata 2 / ConsumerGroupMetadata 3 / ShareGroupMetadata 11 /
  StreamsGroupMetadata 17, is not a tombstone: GroupMetadataManager.replay) and committed
  offsets (OffsetCommit keys 0 and 1);
* ``__share_group_state``: share-partitions (ShareSnapshot / ShareUpdate keys);
* ``__transaction_state``: transactional ids;
* ``__remote_log_metadata``: remote log segments by RemoteLogSegmentState (a segment is
  live until DELETE_SEGMENT_FINISHED), their bytes, and partitions whose deletion finished
  (RemotePartitionDeleteState DELETE_PARTITION_FINISHED), as
  RemoteLogMetadataCache applies the records.

Only keys are parsed for the coordinator topics (each distinct key once), values for
``__remote_log_metadata``; what does not parse is counted in ``undecodable`` and
otherwise ignored.
"""

from __future__ import annotations

from ..schema.messages import PARSE_ERRORS
from . import group_messages as gm
from . import remote_messages as rmm
from . import share_messages as sm
from . import txn_messages as tm
from .cluster_metadata import read_frame
from .coordinator import int16, key_read_version


class CoordinatorTopicSummary:
    """Replays the keys of a coordinator topic (``add(key, value)`` in offset order).

    Each distinct key is parsed once, when the summary is taken: memory grows with the
    number of distinct keys (what the coordinator itself holds), not with the records.
    """

    def __init__(self, topic: str):
        self.topic = topic
        # key bytes -> not a tombstone, in the order of each key's latest record
        self.latest: dict[bytes, bool] = {}
        self.undecodable = 0

    def add(self, key: bytes | None, value: bytes | None) -> None:
        """Apply one record (``value`` None: a tombstone)."""
        if key is None:
            self.undecodable += 1
            return
        key = bytes(key)
        self.latest.pop(key, None)
        self.latest[key] = value is not None

    def _replay(self) -> tuple[dict[tuple, bool], int]:
        """``{(what the key names, key fields...): live}`` and the undecodable count."""
        live: dict[tuple, bool] = {}
        bad = 0
        for key, alive in self.latest.items():
            if len(key) < 2:
                bad += 1
                continue
            record_type = int16(key)
            types = _RECORD_TYPES[self.topic].get(record_type)
            if types is None:
                bad += 1
                continue
            key_msg = types[0]
            try:
                obj, _ = key_msg.parse(key, key_read_version(key_msg, record_type), offset=2)
            except PARSE_ERRORS:
                bad += 1
                continue
            live[(self._kind(record_type), *obj.values())] = alive
        return live, bad

    def _kind(self, record_type: int):
        """What a key names: OffsetCommit keys of types 0 and 1 the same offset, a
        ShareSnapshot and a ShareUpdate key the same share-partition."""
        if self.topic == "__consumer_offsets":
            return "offset" if record_type in (0, 1) else record_type
        if self.topic == "__share_group_state":
            return "sharePartition"
        return record_type

    def to_dict(self) -> dict:
        """The summary's JSON shape (camelCase keys; ``undecodable`` counts distinct keys
        that do not parse, plus records without a key)."""
        live, bad = self._replay()

        def count(*kinds) -> int:
            return sum(1 for k, alive in live.items() if alive and k[0] in kinds)

        if self.topic == "__consumer_offsets":
            out = {"groups": {name: count(t) for t, name in gm.GROUP_METADATA_TYPES.items()},
                   "committedOffsets": count("offset")}
        elif self.topic == "__share_group_state":
            out = {"sharePartitions": count("sharePartition")}
        else:
            out = {"transactionalIds": count(0)}
        out["undecodable"] = self.undecodable + bad
        return out


_RECORD_TYPES = {
    "__consumer_offsets": {**gm.RECORD_TYPES, **gm.RETIRED_RECORD_TYPES},
    "__share_group_state": sm.RECORD_TYPES,
    "__transaction_state": tm.RECORD_TYPES,
}


class RemoteLogMetadataSummary:
    """Replays ``__remote_log_metadata`` values (``add(key, value)`` in offset order)."""

    topic = "__remote_log_metadata"

    def __init__(self):
        self.segments: dict[str, tuple[int, int]] = {}  # segment id -> (state id, bytes)
        self.partition_states: dict[tuple, int] = {}
        self.undecodable = 0

    def add(self, key: bytes | None, value: bytes | None) -> None:
        if value is None:
            self.undecodable += 1
            return
        try:
            frame, api_key, version, pos = read_frame(value)
            message = rmm.BY_API_KEY[api_key]
            obj, _ = message.parse(value, version, offset=pos)
        except (KeyError, *PARSE_ERRORS):
            self.undecodable += 1
            return
        if api_key in (0, 1):
            seg = obj["remoteLogSegmentId"]["id"]
            size = obj["segmentSizeInBytes"] if api_key == 0 else \
                self.segments.get(seg, (0, 0))[1]
            self.segments[seg] = (obj["remoteLogSegmentState"], size)
        elif api_key == 2:
            tip = obj["topicIdPartition"]
            self.partition_states[(tip["id"], tip["partition"])] = \
                obj["remotePartitionDeleteState"]
        else:  # a snapshot record (written to RLMM snapshot files, not this topic)
            self.segments[obj["segmentId"]] = (obj["remoteLogSegmentState"],
                                               obj["segmentSizeInBytes"])

    def to_dict(self) -> dict:
        by_state: dict[str, int] = {}
        live = live_bytes = 0
        for state, size in self.segments.values():
            name = rmm.SEGMENT_STATES.get(state, f"UNKNOWN({state})")
            by_state[name] = by_state.get(name, 0) + 1
            if state != 3:  # DELETE_SEGMENT_FINISHED
                live += 1
                live_bytes += size
        return {"remoteLogSegments": {
                    "segments": live, "bytes": live_bytes, "byState": by_state,
                    "partitionsDeleted": sum(1 for s in self.partition_states.values()
                                             if s == 2)},
                "undecodable": self.undecodable}


def summary_for_topic(topic: str):
    """A new summary accumulator for an internal topic's partition, or None for topics
    kafkalog does not summarise."""
    if topic in _RECORD_TYPES:
        return CoordinatorTopicSummary(topic)
    if topic == RemoteLogMetadataSummary.topic:
        return RemoteLogMetadataSummary()
    return None
