"""``kafkalog describe --log-dirs-json``: what ``kafka-log-dirs.sh --describe`` (Kafka 4.4.0's
LogDirsCommand) prints for the brokers whose log directories these are.

The broker answers DescribeLogDirs from its LogManager (ReplicaManager.describeLogDirs):
per log directory (its path as configured: here as given, made absolute), every partition
it holds (``__cluster_metadata`` is KRaft's own log, not the LogManager's) with its
``size`` (the bytes of its segments' ``.log`` files, UnifiedLog.size), ``offsetLag``
(``max(high watermark - log end offset, 0)``: 0 for a current replica) and ``isFuture``.
The tool prints two lines, then one JSON object built from Java ``HashMap`` s, whose key
and element order kafkalog reproduces (:func:`kafkalog_cli.javaorder.hash_map_order`).
``error`` is null: a directory that could not be read is reported by kafkalog instead.

LogManager.loadLog sorts the partition directories it finds: ``-delete`` ones are queued
for deletion and ``-stray`` ones set aside (neither is in ``allLogs``, so neither is
listed), a ``<topic>-<partition>.<id>-future`` one is the future replica of a move
between log directories (``futureLogs``): listed with ``isFuture: true`` and
``offsetLag`` = the current replica's log end offset minus the future one's
(ReplicaManager.getLogEndOffsetLag), -1 when this broker holds no current replica of the
partition. Where a log directory holds both for one partition (a broker never makes the
future replica in the current one's directory), the current replica is listed: the
tool's map holds one replica per partition and log directory.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from ..javaorder import hash_map_order, topic_partition_hash
from ..storage.files import (
    parse_partition_dir_name,
    partition_dir_kind,
    partition_dirs_of,
    partition_log_bytes,
)
from .logdirs import METADATA_TOPIC, BrokerLogDirs

_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _ordered(d: dict) -> dict:
    """``d`` with its keys in the iteration order of a Java HashMap holding them."""
    return {k: d[k] for k in hash_map_order(list(d))}


@dataclass
class LogDirsResult:
    """Per broker (node id) and log directory: ``[(topic, partition, size, offsetLag,
    isFuture)]``."""

    brokers: dict[int, dict[str, list[tuple[str, int, int, int, bool]]]]
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def broker_ids(self) -> list[int]:
        return hash_map_order(list(self.brokers), lambda n: n)

    def kafka_object(self) -> dict:
        """The object LogDirsCommand.formatAsJson writes, keys in its order."""
        brokers = []
        for b in self.broker_ids():
            dirs = []
            for ld in hash_map_order(list(self.brokers[b])):
                parts = self.brokers[b][ld]
                order = hash_map_order([(t, p) for t, p, *_ in parts],
                                       lambda tp: topic_partition_hash(*tp))
                by_tp = {(t, p): rest for t, p, *rest in parts}
                dirs.append(_ordered({
                    "logDir": ld, "error": None,
                    "partitions": [_ordered({"partition": f"{t}-{p}", "size": by_tp[(t, p)][0],
                                             "offsetLag": by_tp[(t, p)][1],
                                             "isFuture": by_tp[(t, p)][2]})
                                   for t, p in order]}))
            brokers.append(_ordered({"broker": b, "logDirs": dirs}))
        return _ordered({"version": 1, "brokers": brokers})

    def kafka_text(self) -> str:
        """The tool's three lines."""
        ids = ",".join(str(b) for b in self.broker_ids())
        return ("Querying brokers for log directories information\n"
                f"Received log directory information from brokers {ids}\n"
                f"{_ENCODE(self.kafka_object())}\n")

    def to_dict(self) -> dict:
        out = self.kafka_object()
        return {**out, "ok": self.ok, "problems": self.problems}


def describe_log_dirs(paths, *, topics: list[str] | None = None) -> LogDirsResult:
    """DescribeLogDirs for every log directory under ``paths``; ``topics`` keeps those
    topics only (``--topic-list``; empty: all).

    Raises:
        NotAKafkaFileError / UnreadableError: a path holds no log directory.
    """
    wanted = {t for t in (topics or []) if t}
    dirs = BrokerLogDirs.open(paths)
    try:
        out: dict[int, dict[str, list]] = {}
        futures = []   # (node, entries of its log dir, topic, partition, directory)
        current: dict[tuple[int, str, int], object] = {}
        for ld in dirs.log_dirs:
            node = _node_id(ld, dirs.node_id)
            entries = out.setdefault(node, {}).setdefault(os.path.abspath(ld), [])
            for d in partition_dirs_of(ld):
                tp = parse_partition_dir_name(d.name)
                kind = partition_dir_kind(d.name)
                if tp is None or tp.topic == METADATA_TOPIC or kind in ("delete", "stray"):
                    continue
                if kind is None:
                    current.setdefault((node, tp.topic, tp.partition), d)
                if wanted and tp.topic not in wanted:
                    continue
                if kind is None:
                    entries.append((tp.topic, tp.partition, partition_log_bytes(d), 0, False))
                else:
                    futures.append((node, entries, tp.topic, tp.partition, d))
        for node, entries, t, p, d in futures:
            if not any(e[0] == t and e[1] == p for e in entries):
                entries.append((t, p, partition_log_bytes(d),
                                _future_lag(current.get((node, t, p)), d), True))
        return LogDirsResult(out, list(dirs.problems))
    finally:
        dirs.close()


def _future_lag(current_dir, future_dir) -> int:
    """ReplicaManager.getLogEndOffsetLag for a future replica: the current replica's log
    end offset minus the future one's; -1 (INVALID_OFFSET_LAG) without a current one."""
    if current_dir is None:
        return -1
    return _log_end_offset(current_dir) - _log_end_offset(future_dir)


def _log_end_offset(partition_dir) -> int:
    from ..storage.log import Log

    log = Log.open(partition_dir)
    try:
        return log.log_end_offset
    finally:
        log.close()


def _node_id(log_dir, default: int) -> int:
    from ..errors import KafkalogError
    from ..storage.dir_files import read_meta_properties

    try:
        props = read_meta_properties(log_dir) or {}
    except KafkalogError:
        return default
    try:
        return int(props.get("node.id", props.get("broker.id", default)))
    except ValueError:
        return default
