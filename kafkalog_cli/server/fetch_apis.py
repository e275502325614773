"""Fetch and ListOffsets, after ``KafkaApis.handleFetchRequest`` /
``handleListOffsetRequest`` and the parts of ``ReplicaManager`` they call
(``fetchMessages``, ``readFromLog``, ``DelayedFetch``, ``fetchOffset``): the reads
themselves are :mod:`.reads`' (over the storage engine's read side).

A fetch's records are ranges of the segment files
(:class:`~kafkalog_cli.storage.segment.FileSlice`), written from the files by the
connection layer; a fetch waiting for ``minBytes`` keeps only positions. Both handlers
touch files for each partition, so they run in time slices
(:class:`~.handlers.TimeSlices`).
"""

from __future__ import annotations

import asyncio
import time

from ..protocol.apis import ApiKeys
from ..protocol.errors import Errors
from ..protocol.wire import Request
from ..schema.flexible import ZERO_UUID
from . import reads
from .handlers import ApiHandlers, TimeSlices, partition_answers
from .metrics import BrokerTopicStats
from .security.acls import AclOperation, ResourceType


class FetchApis(ApiHandlers):
    """The read handlers of one node over ``catalog``. ``appended()``: the event set at
    the next append (a delayed fetch waits on it); ``stats``: the broker's topic
    metrics; ``auth``: the server's :class:`~.security.authorizer.AuthHelper` (None: no
    authorizer)."""

    #: handlers that await (all: each reads in time slices)
    AWAITING = frozenset({ApiKeys.FETCH, ApiKeys.LIST_OFFSETS})

    def __init__(self, catalog, options, stats: BrokerTopicStats, appended, auth=None):
        super().__init__(catalog, options, auth)
        self.stats = stats
        self.appended = appended

    async def handle_fetch(self, req: Request) -> dict:
        """KafkaApis.handleFetchRequest -> ReplicaManager.fetchMessages: the response is
        bounded by ``min(maxBytes, fetch.max.bytes)`` (and ``minBytes`` by that), each
        partition by ``partitionMaxBytes``, except that the first batch of the first
        partition with data is returned whole (KIP-74). When it is not satisfied at once
        (less than ``minBytes`` and ``maxWaitMs`` > 0) the fetch waits as a
        ``DelayedFetch``: it keeps only each partition's fetch position and, on each
        append, counts the bytes available from there without reading; when they reach
        ``minBytes`` (or a partition rolled, vanished, or ``maxWaitMs`` passed) it reads
        again and answers. The records are ranges of the segment files
        (:class:`~kafkalog_cli.storage.segment.FileSlice`), written from the files. The
        topics the principal may not READ answer TOPIC_AUTHORIZATION_FAILED before their
        existence is looked at (so it is not disclosed)."""
        body = req.body
        v = req.api_version
        if body.get("sessionEpoch", -1) > 0:
            # an incremental fetch: this server never creates sessions (sessionId 0)
            return {"throttleTimeMs": 0, "errorCode": int(Errors.FETCH_SESSION_ID_NOT_FOUND),
                    "sessionId": 0, "responses": []}
        max_bytes = min(body.get("maxBytes", 0x7FFFFFFF),
                        self.catalog.broker_configs.int_value("fetch.max.bytes"))
        min_bytes = min(body["minBytes"], max_bytes)
        committed = body.get("isolationLevel", 0) == 1
        max_wait = max(0, body["maxWaitMs"])
        deadline = time.monotonic() + max_wait / 1000
        event = self.appended()
        wanted = _fetch_data(body, v)
        readable = self._readable_topics(req, wanted)
        responses, total, errored, waiting = await self._read_all(wanted, v, max_bytes,
                                                                  committed, readable)
        if not (max_wait == 0 or not waiting or total >= min_bytes or errored):
            del responses  # a DelayedFetch keeps the positions only
            await self._delayed_fetch(waiting, event, min_bytes, deadline, committed)
            responses, total, errored, waiting = await self._read_all(wanted, v, max_bytes,
                                                                      committed, readable)
        for name, parts in responses:
            n = sum(len(p["records"]) for p in parts)
            if n:
                self.stats.mark(name, "BytesOutPerSec", n)
        out = []
        for name, parts in responses:
            t = self.catalog.topics.get(name) if name else None
            entry = {"partitions": parts}
            if v >= 13:
                entry["topicId"] = t.topic_id if t else parts[0].get("_id", ZERO_UUID)
            else:
                entry["topic"] = name
            for p in parts:
                p.pop("_id", None)
            out.append(entry)
        return {"throttleTimeMs": 0, "errorCode": 0, "sessionId": 0, "responses": out}

    async def _delayed_fetch(self, waiting: list, event: asyncio.Event, min_bytes: int,
                             deadline: float, committed: bool) -> None:
        """Wait as DelayedFetch does: until an append makes ``tryComplete`` succeed or the
        deadline (monotonic seconds) passes. ``waiting``: ``(topic, partition, fetch
        offset metadata, partitionMaxBytes)`` per partition read; ``event``: the append
        event current when they were read (an append since then is not missed)."""
        while True:
            if self._fetch_can_complete(waiting, min_bytes, committed):
                return
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:
                await asyncio.wait_for(event.wait(), left)
            except asyncio.TimeoutError:
                return
            event = self.appended()

    def _fetch_can_complete(self, waiting: list, min_bytes: int, committed: bool) -> bool:
        """DelayedFetch.tryComplete: a partition gone or offline (Cases C, D), or whose end
        is on another segment or below the fetch offset (Case F), completes the fetch;
        else the bytes available add up to ``minBytes`` (Case G)."""
        accumulated = 0
        for name, idx, start, partition_max in waiting:
            part = self.catalog.partition(name, idx)
            if part is None:
                return True
            n = reads.available_bytes(part, start, committed, partition_max)
            if n is None:
                return True
            accumulated += n
        return accumulated >= min_bytes

    def _readable_topics(self, req: Request, wanted: list) -> set[str] | None:
        """The topics of a consumer's Fetch it may READ (KafkaApis.handleFetchRequest:
        ``filterByAuthorized`` over its partitions, topic ids resolved first); None: every
        topic (no authorizer)."""
        if not self.auth.enabled:
            return None
        names = []
        for ft, _ in wanted:
            if req.api_version >= 13:
                t = self.catalog.by_id.get(ft["topicId"])
                if t is None:
                    continue
                names.append(t.name)
            else:
                names.append(ft["topic"])
        return self.auth.filter_by_authorized(req, AclOperation.READ, ResourceType.TOPIC, names)

    async def _read_all(self, wanted: list, v: int, max_bytes: int, committed: bool,
                        readable: set[str] | None = None):
        """ReplicaManager.readFromLog: each partition of ``wanted`` (:func:`_fetch_data`)
        in order, ``max_bytes`` the request's bound (``limitBytes``), the first batch read
        whole (``minOneMessage``; hardMaxBytesLimit is for v0-2 only), in time slices.
        Returns ``(responses, record bytes, errored, waiting)``: responses ``[(topic,
        [partition data])]`` (consecutive partitions of a topic together, as
        FetchResponse groups them), waiting ``[(topic, partition, fetch offset metadata,
        partitionMaxBytes)]`` of the partitions read without error (what a DelayedFetch
        keeps). ``readable``: the topics the principal may read (None: all); the others'
        partitions answer TOPIC_AUTHORIZATION_FAILED."""
        limit = max_bytes
        min_one = True
        responses: list = []
        waiting = []
        total = 0
        errored = False
        slices = TimeSlices()
        for ft, fp in wanted:
            if v >= 13:
                t = self.catalog.by_id.get(ft["topicId"])
                name = t.name if t else None
                missing = Errors.UNKNOWN_TOPIC_ID
                key = ft["topicId"]
            else:
                name = ft["topic"]
                t = self.catalog.topics.get(name)
                missing = Errors.UNKNOWN_TOPIC_OR_PARTITION
                key = name
            if not responses or responses[-1][2] != key:
                responses.append((name, [], key))
            parts = responses[-1][1]
            idx = fp["partition"]
            part = t.partitions.get(idx) if t else None
            if readable is not None and name is not None and name not in readable:
                errored = True
                parts.append(_fetch_error(idx, Errors.TOPIC_AUTHORIZATION_FAILED, ft))
                continue
            if name:
                self.stats.mark(name, "TotalFetchRequestsPerSec")
            if part is None:
                errored = True
                parts.append(_fetch_error(idx, missing if t is None else
                                          self.catalog.partition_error(name, idx), ft))
                continue
            epoch_error = _check_epoch(fp.get("currentLeaderEpoch", -1), part.leader_epoch)
            if epoch_error is not None:
                errored = True
                # an error of the read (ReplicaManager.readFromLog): no aborted list
                parts.append({**_fetch_error(idx, epoch_error, ft),
                              "abortedTransactions": None})
                continue
            r = reads.read(part, fp["fetchOffset"], min(fp["partitionMaxBytes"], limit),
                           min_one, committed)
            if r.error is not Errors.NONE:
                errored = True
            else:
                waiting.append((name, idx, r.fetch_offset_metadata, fp["partitionMaxBytes"]))
            n = len(r.records)
            if n:
                min_one = False
            limit = max(0, limit - n)
            total += n
            parts.append({"partitionIndex": idx, "errorCode": int(r.error),
                          "highWatermark": r.high_watermark,
                          "lastStableOffset": r.last_stable_offset,
                          "logStartOffset": r.log_start_offset,
                          "abortedTransactions": r.aborted, "preferredReadReplica": -1,
                          "records": r.records})
            await slices.pause()
        return [(name, parts) for name, parts, _ in responses], total, errored, waiting

    # -- ListOffsets --------------------------------------------------------------------

    async def handle_list_offsets(self, req: Request) -> dict:
        """KafkaApis.handleListOffsetRequest -> ReplicaManager.fetchOffset, per partition;
        a search by timestamp decodes batches, so the partitions are searched in time
        slices (:class:`~.handlers.TimeSlices`). ``handleListOffsetRequestV1AndAbove``:
        the topics the principal may DESCRIBE go through ``fetchOffset``, the others answer
        TOPIC_AUTHORIZATION_FAILED after them."""
        v = req.api_version
        topics = []
        seen = set()
        dups = set()
        slices = TimeSlices()
        for t in req.body["topics"]:
            for p in t["partitions"]:
                key = (t["name"], p["partitionIndex"])
                (dups if key in seen else seen).add(key)
        allowed = self.auth.filter_by_authorized(req, AclOperation.DESCRIBE, ResourceType.TOPIC,
                                                 [t["name"] for t in req.body["topics"]])
        answered = set()
        for name, p, parts in partition_answers(
                [t for t in req.body["topics"] if t["name"] in allowed], topics):
            idx = p["partitionIndex"]
            if (name, idx) in answered:
                continue  # the answers are keyed by topic-partition: a duplicate once
            answered.add((name, idx))
            res = {"partitionIndex": idx, "errorCode": 0, "timestamp": -1, "offset": -1,
                   "leaderEpoch": -1}
            parts.append(res)
            part = self.catalog.partition(name, idx)
            # ReplicaManager.fetchOffset: duplicates (at every version), then the
            # timestamps this version does not know, then the partition itself
            if (name, idx) in dups:
                res["errorCode"] = int(Errors.INVALID_REQUEST)
            elif reads.timestamp_unsupported(p["timestamp"], v):
                res["errorCode"] = int(Errors.UNSUPPORTED_VERSION)
            elif part is None:
                res["errorCode"] = int(self.catalog.partition_error(name, idx))
            elif (e := _check_epoch(p.get("currentLeaderEpoch", -1),
                                    part.leader_epoch)) is not None:
                res["errorCode"] = int(e)
            else:
                found = reads.offset_for_timestamp(
                    part, p["timestamp"], req.body.get("isolationLevel", 0) == 1)
                if found is not None:
                    res["timestamp"], res["offset"], res["leaderEpoch"] = found
            await slices.pause()
        for t in req.body["topics"]:
            if t["name"] not in allowed:
                topics.append({"name": t["name"], "partitions": [
                    {"partitionIndex": p["partitionIndex"], "leaderEpoch": -1,
                     "errorCode": int(Errors.TOPIC_AUTHORIZATION_FAILED), "timestamp": -1,
                     "offset": -1} for p in t["partitions"]]})
        return {"throttleTimeMs": 0, "topics": topics}


def _check_epoch(requested: int, current: int) -> Errors | None:
    """Partition.getLocalLog's leader epoch check (currentLeaderEpoch, when given)."""
    if requested == -1 or requested == current:
        return None
    return Errors.FENCED_LEADER_EPOCH if requested < current else Errors.UNKNOWN_LEADER_EPOCH


def _fetch_data(body: dict, v: int) -> list[tuple[dict, dict]]:
    """FetchRequest.fetchData: the request's partitions keyed by topic (id from v13, name
    before) and partition, in the order each first appears, a partition named again
    taking its last values (a LinkedHashMap); a topic naming no partition adds none.
    Returns ``[(fetch topic, fetch partition)]``."""
    out: dict = {}
    for ft in body["topics"]:
        topic = ft["topicId"] if v >= 13 else ft["topic"]
        for fp in ft["partitions"]:
            out[(topic, fp["partition"])] = (ft, fp)
    return list(out.values())


def _fetch_error(index: int, error: Errors, ft: dict) -> dict:
    """FetchResponse.partitionResponse(partition, error): a partition refused before the
    read (unknown topic, partition or topic id); its abortedTransactions is the message
    class's default, an empty array."""
    return {"partitionIndex": index, "errorCode": int(error), "highWatermark": -1,
            "lastStableOffset": -1, "logStartOffset": -1, "abortedTransactions": [],
            "preferredReadReplica": -1, "records": b"", "_id": ft.get("topicId", ZERO_UUID)}
