"""Small files of partition and log directories, each in the broker's format.

    partition.metadata (PartitionMetadataFile) =>
      "version: 0\\ntopic_id: <base64url UUID without padding>\\n"
    meta.properties (MetaProperties; java.util.Properties text) =>
      v1 (KRaft): version=1, cluster.id, node.id, directory.id
      v0 (ZooKeeper): version=0, broker.id, cluster.id
    .kafka_cleanshutdown (CleanShutdownFileHandler) =>
      {"version":0,"brokerEpoch":N}
"""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path

from ..constants import (
    CLEAN_SHUTDOWN_FILE_NAME,
    META_PROPERTIES_FILE_NAME,
    PARTITION_METADATA_FILE,
)
from ..errors import InvalidArgumentError, UnreadableError
from .checkpoints import write_atomically


def uuid_to_kafka_string(u: uuid.UUID | bytes) -> str:
    """Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without padding."""
    raw = u.bytes if isinstance(u, uuid.UUID) else bytes(u)
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def kafka_string_to_uuid(s: str) -> uuid.UUID:
    raw = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    if len(raw) != 16:
        raise InvalidArgumentError(f"not a Kafka UUID: {s!r}")
    return uuid.UUID(bytes=raw)


def random_kafka_uuid() -> str:
    """Uuid.randomUuid: a random UUID whose string form does not start with '-' and which
    is not the zero or metadata-topic UUID."""
    while True:
        s = uuid_to_kafka_string(uuid.uuid4())
        if not s.startswith("-"):
            return s


def read_partition_metadata(partition_dir) -> dict | None:
    """``{"version": 0, "topic_id": "..."}`` from partition.metadata, None if absent."""
    p = Path(partition_dir) / PARTITION_METADATA_FILE
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=p) from e
    out = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    if "version" in out:
        out["version"] = int(out["version"])
    return out


def write_partition_metadata(partition_dir, topic_id: str) -> None:
    """Write partition.metadata (version 0). Raises for the zero UUID, as Kafka does."""
    if kafka_string_to_uuid(topic_id).int == 0:
        raise InvalidArgumentError("topic_id of partition.metadata must not be the zero UUID")
    write_atomically(Path(partition_dir) / PARTITION_METADATA_FILE,
                     f"version: 0\ntopic_id: {topic_id}")


def read_properties(path) -> dict[str, str] | None:
    """A java.util.Properties file (the subset Kafka writes), None if absent."""
    try:
        text = Path(path).read_text(encoding="latin-1")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise UnreadableError(e.strerror or str(e), file=path) from e
    out = {}
    for line in text.splitlines():
        s = line.strip()
        if not s or s[0] in "#!":
            continue
        for sep in ("=", ":"):
            if sep in s:
                k, v = s.split(sep, 1)
                out[k.strip()] = v.strip()
                break
    return out


def read_meta_properties(log_dir) -> dict[str, str] | None:
    return read_properties(Path(log_dir) / META_PROPERTIES_FILE_NAME)


def write_meta_properties(log_dir, *, cluster_id: str, node_id: int,
                          directory_id: str | None = None) -> None:
    """Write a v1 meta.properties (KRaft) as the broker does (tmp + atomic rename)."""
    lines = ["#", "#Written by kafkalog", f"cluster.id={cluster_id}",
             f"directory.id={directory_id or random_kafka_uuid()}", f"node.id={node_id}",
             "version=1"]
    write_atomically(Path(log_dir) / META_PROPERTIES_FILE_NAME, "\n".join(lines) + "\n")


def read_clean_shutdown(log_dir) -> dict | None:
    p = Path(log_dir) / CLEAN_SHUTDOWN_FILE_NAME
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return {}


def write_clean_shutdown(log_dir, broker_epoch: int = -1) -> None:
    write_atomically(Path(log_dir) / CLEAN_SHUTDOWN_FILE_NAME,
                     json.dumps({"version": 0, "brokerEpoch": broker_epoch},
                                separators=(",", ":")))
