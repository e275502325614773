"""Small files of partition and log directories, each in the broker's format.

    partition.metadata (PartitionMetadataFile) =>
      "version: 0\\ntopic_id: <base64url UUID without padding>\\n"
    meta.properties (MetaProperties; java.util.Properties text) =>
      v1 (KRaft): version=1, cluster.id, node.id, directory.id
      v0 (ZooKeeper): version=0, broker.id, cluster.id
    .kafka_cleanshutdown (CleanShutdownFileHandler) =>
      {"version":0,"brokerEpoch":N}
    quorum-state (FileQuorumStateStore; __cluster_metadata only) =>
      one line of JSON: {"data_version": 0|1, "leaderId", "leaderEpoch", ...}

Each is read as the broker reads it; a file it would refuse raises
:class:`~kafkalog_cli.errors.CorruptCheckpointError` naming the file and line.
:func:`partition_file_problems` / :func:`log_dir_file_problems` check them all (for
``describe`` and ``audit``).
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from pathlib import Path

from ..constants import (
    CLEAN_SHUTDOWN_FILE_NAME,
    CLEANER_OFFSET_CHECKPOINT,
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    META_PROPERTIES_FILE_NAME,
    PARTITION_METADATA_FILE,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
)
from ..errors import CorruptCheckpointError, InvalidArgumentError, KafkalogError, UnreadableError
from .checkpoints import (
    INT32,
    INT64,
    MAX_SMALL_FILE_BYTES,
    java_int,
    java_split,
    quote,
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
    read_text_lines,
    too_large,
)
from .fileio import write_atomically
from .location import as_path, read_bytes_if_exists

QUORUM_STATE_FILE_NAME = "quorum-state"
_COLON_WHITESPACE = re.compile(r":[ \t\n\x0b\f\r]+")
_URL_BASE64 = re.compile(r"[A-Za-z0-9_-]*={0,2}")


def uuid_to_kafka_string(u: uuid.UUID | bytes) -> str:
    """Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without padding."""
    raw = u.bytes if isinstance(u, uuid.UUID) else bytes(u)
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def kafka_string_to_uuid(s: str) -> uuid.UUID:
    """Kafka's ``Uuid.fromString``: at most 24 characters of URL-safe base64 (padding
    optional) decoding to exactly 16 bytes.

    Raises:
        InvalidArgumentError: anything else, with Kafka's message.
    """
    if len(s) > 24:
        raise InvalidArgumentError(
            f"Input string with prefix `{s[:24]}` is too long to be decoded as a base64 UUID")
    if not _URL_BASE64.fullmatch(s) or len(s.rstrip("=")) % 4 == 1:
        raise InvalidArgumentError(f"Input string `{s}` is not URL-safe base64")
    raw = base64.urlsafe_b64decode(s.rstrip("=") + "=" * (-len(s.rstrip("=")) % 4))
    if len(raw) != 16:
        raise InvalidArgumentError(
            f"Input string `{s}` decoded as {len(raw)} bytes, which is not equal to the "
            "expected 16 bytes of a base64-encoded UUID")
    return uuid.UUID(bytes=raw)


def random_kafka_uuid() -> str:
    """Uuid.randomUuid: a random UUID whose string form does not start with '-' and which
    is not the zero or metadata-topic UUID."""
    while True:
        s = uuid_to_kafka_string(uuid.uuid4())
        if not s.startswith("-"):
            return s


def read_partition_metadata(partition_dir) -> dict | None:
    """``{"version": N, "topic_id": "..."}`` from partition.metadata, None if absent, read
    as ``PartitionMetadataReadBuffer`` does: line 1 ``<key>: <version>`` (an int >= 0),
    line 2 ``<key>: <topic id>`` (``Uuid.fromString``, not the zero UUID); each line split
    on ``:`` and whitespace into exactly two fields.

    Raises:
        CorruptCheckpointError: anything else (not UTF-8, a missing line, an empty
            ``version:``, a bad id), naming the line (the broker throws
            ``KafkaStorageException`` and takes the log directory offline); a file over
            :data:`~.checkpoints.MAX_SMALL_FILE_BYTES`.
        NotRegularFileError: a FIFO, a device, a socket or a directory.
        UnreadableError: the file cannot be read.
    """
    p = as_path(partition_dir) / PARTITION_METADATA_FILE
    it = read_text_lines(p, limit=MAX_SMALL_FILE_BYTES, what="partition.metadata file")
    if it is None:
        return None
    # the broker reads two lines (PartitionMetadataReadBuffer): nothing after them
    lines = [ln for _, ln in zip(range(2), it, strict=False)]
    it.close()

    def field(i: int) -> str:
        if len(lines) <= i:
            raise CorruptCheckpointError("Malformed partition metadata file: the file ends "
                                         f"before line {i + 1}", file=p, line=i + 1)
        parts = java_split(_COLON_WHITESPACE, lines[i])
        if len(parts) != 2:
            raise CorruptCheckpointError(
                f"Malformed line in checkpoint file: {quote(lines[i])}", file=p, line=i + 1)
        return parts[1]

    version = java_int(field(0), INT32)
    if version is None:
        raise CorruptCheckpointError(f"Malformed line in checkpoint file: {quote(lines[0])}",
                                     file=p, line=1)
    if version < 0:
        raise CorruptCheckpointError(
            f"Unrecognized version of partition metadata file: {version}", file=p, line=1)
    topic_id = field(1)
    try:
        u = kafka_string_to_uuid(topic_id)
    except InvalidArgumentError as e:
        raise CorruptCheckpointError(e.message, file=p, line=2) from None
    if u.int == 0:
        raise CorruptCheckpointError("Invalid topic ID in partition metadata file", file=p,
                                     line=2)
    return {"version": version, "topic_id": topic_id}


def write_partition_metadata(partition_dir, topic_id: str) -> None:
    """Write partition.metadata (version 0). Raises for the zero UUID, as Kafka does."""
    if kafka_string_to_uuid(topic_id).int == 0:
        raise InvalidArgumentError("topic_id of partition.metadata must not be the zero UUID")
    write_atomically(Path(partition_dir) / PARTITION_METADATA_FILE,
                     format_partition_metadata(topic_id))


def format_partition_metadata(topic_id: str) -> str:
    """``PartitionMetadata.encode``: ``version: 0`` and ``topic_id: <id>``, no final
    line break."""
    return f"version: 0\ntopic_id: {topic_id}"


def _properties(path) -> dict[str, tuple[str, int]] | None:
    """``key -> (value, line)`` of a java.util.Properties file (the subset Kafka writes:
    ``key=value`` / ``key:value`` lines, ``#``/``!`` comments; ISO-8859-1, so any bytes
    read; at most :data:`~.checkpoints.MAX_SMALL_FILE_BYTES`), None if absent."""
    lines = read_text_lines(path, encoding="latin-1", limit=MAX_SMALL_FILE_BYTES,
                            what="properties file")
    if lines is None:
        return None
    out = {}
    for i, line in enumerate(lines, start=1):
        s = line.strip()
        if not s or s[0] in "#!":
            continue
        for sep in ("=", ":"):
            if sep in s:
                k, v = s.split(sep, 1)
                out[k.strip()] = (v.strip(), i)
                break
    return out


def read_meta_properties(log_dir, *, validate: bool = False) -> dict[str, str] | None:
    """``meta.properties`` of a log directory as a dict, None if absent. With
    ``validate``, checked as ``MetaProperties.Builder`` reads it: ``version`` 0 or 1
    (default 0); v1 needs an int ``node.id``; v0 a ``broker.id``, when present, is an
    int; ``directory.id``, when present, is a Kafka UUID.

    Raises:
        CorruptCheckpointError: (with ``validate``) it fails those checks, naming the line;
            a file over :data:`~.checkpoints.MAX_SMALL_FILE_BYTES` (always).
        NotRegularFileError: a FIFO, a device, a socket or a directory.
        UnreadableError: it cannot be read.
    """
    path = as_path(log_dir) / META_PROPERTIES_FILE_NAME
    props = _properties(path)
    if props is None:
        return None
    if validate:
        _validate_meta_properties(path, props)
    return {k: v for k, (v, _) in props.items()}


def _validate_meta_properties(path, props: dict[str, tuple[str, int]]) -> None:
    version_text, line = props.get("version", ("0", None))
    version = java_int(version_text.strip())
    if version is None:
        raise CorruptCheckpointError(
            f"Invalid meta.properties version string {quote(version_text)}", file=path,
            line=line)
    if version not in (0, 1):
        raise CorruptCheckpointError(f"Unknown meta.properties version number {version}",
                                     file=path, line=line)
    id_key = "broker.id" if version == 0 else "node.id"
    if id_key in props:
        value, line = props[id_key]
        if java_int(value) is None:
            raise CorruptCheckpointError(f"Unable to read {id_key} as a base-10 number.",
                                         file=path, line=line)
    elif version == 1:
        raise CorruptCheckpointError("Failed to find node.id", file=path)
    if "directory.id" in props:
        value, line = props["directory.id"]
        try:
            kafka_string_to_uuid(value)
        except InvalidArgumentError as e:
            raise CorruptCheckpointError(f"Unable to read directory.id as a Uuid: {e.message}",
                                         file=path, line=line) from None


def read_quorum_state(path) -> dict:
    """The ``quorum-state`` file KRaft writes, read as ``FileQuorumStateStore
    .readStateFromFile`` does: its first line is one JSON object with a ``data_version``
    of 0 or 1 (0: ``clusterId``, ``leaderId``, ``leaderEpoch``, ``votedId``,
    ``appliedOffset``, ``currentVoters``; 1: ``leaderId``, ``leaderEpoch``, ``votedId``,
    ``votedDirectoryId``), returned as written.

    Raises:
        UnreadableError: the file cannot be read (or is absent).
        CorruptCheckpointError: not UTF-8, empty, not a JSON object (nested too deeply
            included) or no supported ``data_version``, naming the line; a file over
            :data:`~.checkpoints.MAX_SMALL_FILE_BYTES`.
        NotRegularFileError: a FIFO, a device, a socket or a directory.
    """
    p = as_path(path)
    it = read_text_lines(p, limit=MAX_SMALL_FILE_BYTES, what="quorum-state file")
    if it is None:
        raise UnreadableError("No such file or directory", file=p)
    first = next(it, None)   # the broker reads one line
    it.close()
    if first is None:
        raise CorruptCheckpointError("File ended prematurely.", file=p, line=1)
    try:
        obj = json.loads(first)
    except RecursionError:
        raise CorruptCheckpointError("not JSON (arrays or objects nested too deeply)",
                                     file=p, line=1) from None
    except ValueError as e:
        raise CorruptCheckpointError(f"not JSON ({e})", file=p, line=1) from None
    if not isinstance(obj, dict):
        raise CorruptCheckpointError("not a JSON object", file=p, line=1)
    version = obj.get("data_version")
    if not isinstance(version, int) or isinstance(version, bool) or version not in (0, 1):
        raise CorruptCheckpointError(
            f"data_version ({version}) is not within the min (0) and max (1) supported "
            "version", file=p, line=1)
    return obj


def write_meta_properties(log_dir, *, cluster_id: str, node_id: int,
                          directory_id: str | None = None) -> None:
    """Write a v1 meta.properties (KRaft) as the broker does (tmp + atomic rename)."""
    lines = ["#", "#Written by kafkalog", f"cluster.id={cluster_id}",
             f"directory.id={directory_id or random_kafka_uuid()}", f"node.id={node_id}",
             "version=1"]
    write_atomically(Path(log_dir) / META_PROPERTIES_FILE_NAME, "\n".join(lines) + "\n")


def read_clean_shutdown(log_dir) -> dict | None:
    """``.kafka_cleanshutdown`` as ``CleanShutdownFileHandler.read`` reads it: None when
    absent; else ``{"version": int, "brokerEpoch": int}`` (the fields that parse), or
    ``{}`` for content that does not parse (not UTF-8, not JSON, not an object, fields
    that are not an int and a long): the broker then has no broker epoch, and the file's
    presence alone says the shutdown was clean.

    Raises:
        CorruptCheckpointError: it is over :data:`~.checkpoints.MAX_SMALL_FILE_BYTES`.
        NotRegularFileError: a FIFO, a device, a socket or a directory.
        UnreadableError: it exists but cannot be read.
    """
    path = as_path(log_dir) / CLEAN_SHUTDOWN_FILE_NAME
    raw = read_bytes_if_exists(path, limit=MAX_SMALL_FILE_BYTES, too_large=lambda n: too_large(
        path, n, MAX_SMALL_FILE_BYTES, ".kafka_cleanshutdown file"))
    if raw is None:
        return None
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError too
        return {}
    if not isinstance(obj, dict):
        return {}
    out = {}
    for key, bounds in (("version", INT32), ("brokerEpoch", INT64)):
        v = obj.get(key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or not bounds[0] <= v <= bounds[1]:
            return {}  # Jackson cannot bind it: read() returns empty
        out[key] = v
    return out


def write_clean_shutdown(log_dir, broker_epoch: int = -1) -> None:
    write_atomically(Path(log_dir) / CLEAN_SHUTDOWN_FILE_NAME,
                     json.dumps({"version": 0, "brokerEpoch": broker_epoch},
                                separators=(",", ":")))


def _problems(checks) -> list[KafkalogError]:
    """The errors the readers in ``checks`` (callables, each reading one file) raise, in
    order; every reader is run whatever the others raise."""
    out: list[KafkalogError] = []
    for check in checks:
        try:
            check()
        except KafkalogError as e:
            out.append(e)
    return out


def partition_file_problems(partition_dir) -> list[KafkalogError]:
    """Every small file of a partition directory the broker reads when it loads the log,
    parsed as it parses them: ``leader-epoch-checkpoint``, ``partition.metadata`` and,
    in ``__cluster_metadata``, ``quorum-state``. Returns the errors (each naming the file
    and line); absent files are no problem."""
    d = as_path(partition_dir)
    checks = [lambda: read_leader_epoch_checkpoint(d / LEADER_EPOCH_CHECKPOINT),
              lambda: read_partition_metadata(d)]
    if (d / QUORUM_STATE_FILE_NAME).exists():
        checks.append(lambda: read_quorum_state(d / QUORUM_STATE_FILE_NAME))
    return _problems(checks)


def log_dir_file_problems(log_dir) -> list[KafkalogError]:
    """:func:`partition_file_problems` for a log directory's own files:
    ``meta.properties`` (validated) and the four offset checkpoints."""
    d = as_path(log_dir)
    checks = [lambda: read_meta_properties(d, validate=True)]
    for name in (RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT,
                 REPLICATION_OFFSET_CHECKPOINT, CLEANER_OFFSET_CHECKPOINT):
        checks.append(lambda name=name: read_offset_checkpoint(d / name))
    return _problems(checks)
