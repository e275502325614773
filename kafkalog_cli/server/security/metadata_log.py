"""ACLs and SCRAM credentials kept as a KRaft controller keeps them: records in the
``__cluster_metadata-0`` partition of the log directory, in Kafka's format, so that
``kafkalog dump-segment --cluster-metadata-decoder`` (and Kafka's ``kafka-dump-log.sh``)
decode them and a broker's copy of the directory brings its ACLs and users along:

* ``AccessControlEntryRecord`` (type 18) adds an ACL under a random Uuid,
  ``RemoveAccessControlEntryRecord`` (19) removes one by id (``AclControlManager.replay``);
* ``UserScramCredentialRecord`` (11) sets a user's credential for one mechanism (salt,
  StoredKey, ServerKey, iterations - never the password),
  ``RemoveUserScramCredentialRecord`` (22) removes it (``ScramControlManager.replay``).

Every record value is framed as ``AbstractApiMessageSerde`` frames it (frame version 1,
api key, version, the message); one request's records are one batch (the controller's
atomic write), appended through the append engine with the partition's latest leader
epoch (1 for a new partition) and flushed (fsync) before the request is answered, as a
single-voter quorum commits a record once it is on disk. The partition is created with
``partition.metadata`` naming Kafka's metadata topic id (``AAAAAAAAAAAAAAAAAAAAAQ``).

At start the newest KRaft snapshot (``<end offset>-<epoch>.checkpoint``, whose records
are the whole image at its end offset, as ``kafka-storage format --add-scram`` writes
one) is read, then the log's batches from the snapshot's end offset; records of other
types are skipped. serve writes no snapshot and no ``quorum-state``: it is not a Raft
voter.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from ...decoders import metadata_messages as mm
from ...decoders.cluster_metadata import FRAME_VERSION, read_frame
from ...errors import AppendError, KafkalogError
from ...format.builder import build_batch
from ...format.records import FileRecords
from ...schema.primitives import encode_unsigned_varint
from ...storage.files import is_snapshot_checkpoint_name
from ...storage.log import Log
from ..storage_adapter import append_error
from .acls import (
    AccessControlEntry,
    AclBinding,
    ResourcePattern,
    acl_operation,
    pattern_type,
    permission_type,
    resource_type,
)
from .scram import ScramCredential

log = logging.getLogger("kafkalog.serve")

METADATA_TOPIC = "__cluster_metadata"
#: ``Uuid.METADATA_TOPIC_ID``
METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
_MAX_SNAPSHOT_BYTES = 1 << 30

USER_SCRAM_CREDENTIAL = mm.UserScramCredentialRecord
REMOVE_USER_SCRAM_CREDENTIAL = mm.RemoveUserScramCredentialRecord
ACCESS_CONTROL_ENTRY = mm.AccessControlEntryRecord
REMOVE_ACCESS_CONTROL_ENTRY = mm.RemoveAccessControlEntryRecord
_TYPES = {m.api_key: m for m in (USER_SCRAM_CREDENTIAL, REMOVE_USER_SCRAM_CREDENTIAL,
                                 ACCESS_CONTROL_ENTRY, REMOVE_ACCESS_CONTROL_ENTRY)}


def frame(message, data: dict, version: int = 0) -> bytes:
    """A metadata record value: frame version, api key, version (unsigned varints), then
    the message (``MetadataRecordSerde.write``)."""
    return (encode_unsigned_varint(FRAME_VERSION) + encode_unsigned_varint(message.api_key)
            + encode_unsigned_varint(version) + message.build(data, version))


def binding_of(record: dict) -> AclBinding:
    """``StandardAclWithId.fromRecord``'s binding."""
    return AclBinding(
        ResourcePattern(resource_type(record["resourceType"]), record["resourceName"],
                        pattern_type(record["patternType"])),
        AccessControlEntry(record["principal"], record["host"],
                           acl_operation(record["operation"]),
                           permission_type(record["permissionType"])))


def acl_record(acl_id: str, b: AclBinding) -> dict:
    """``StandardAclWithId.toRecord``."""
    p, e = b.pattern, b.entry
    return {"id": acl_id, "resourceType": int(p.resource_type), "resourceName": p.name,
            "patternType": int(p.pattern_type), "principal": e.principal, "host": e.host,
            "operation": int(e.operation), "permissionType": int(e.permission_type)}


class SecurityImage:
    """What the records build: the ACLs (id -> binding, in the order they were created)
    and the SCRAM credentials ((user, mechanism type) -> credential). ``listeners``
    (callables) hear each replayed change: ``("acl", id, binding or None)`` and
    ``("scram", user, mechanism type, credential or None)``."""

    def __init__(self):
        self.acls: dict[str, AclBinding] = {}
        self.scram: dict[tuple[str, int], ScramCredential] = {}
        self.listeners: list = []

    def replay(self, message, data: dict) -> None:
        """Apply one record (``AclControlManager.replay`` / ``ScramControlManager.replay``;
        a removal of something absent is logged and skipped where the controller would
        throw)."""
        if message is ACCESS_CONTROL_ENTRY:
            b = binding_of(data)
            self.acls[data["id"]] = b
            self._tell("acl", data["id"], b)
        elif message is REMOVE_ACCESS_CONTROL_ENTRY:
            if self.acls.pop(data["id"], None) is None:
                log.warning("%s: RemoveAccessControlEntryRecord for an unknown ACL id %s",
                            METADATA_TOPIC, data["id"])
                return
            self._tell("acl", data["id"], None)
        elif message is USER_SCRAM_CREDENTIAL:
            cred = ScramCredential(bytes(data["salt"]), bytes(data["storedKey"]),
                                   bytes(data["serverKey"]), data["iterations"])
            self.scram[(data["name"], data["mechanism"])] = cred
            self._tell("scram", data["name"], data["mechanism"], cred)
        elif message is REMOVE_USER_SCRAM_CREDENTIAL:
            if self.scram.pop((data["name"], data["mechanism"]), None) is None:
                log.warning("%s: RemoveUserScramCredentialRecord for an unknown credential "
                            "of %s", METADATA_TOPIC, data["name"])
                return
            self._tell("scram", data["name"], data["mechanism"], None)

    def _tell(self, *event) -> None:
        for listener in self.listeners:
            listener(*event)


def replay_metadata_log(directory: Path, types: dict, visit, *, log=None) -> None:
    """Replay a ``__cluster_metadata`` partition directory as a broker's metadata loader
    does: the newest KRaft snapshot (``<end offset>-<epoch>.checkpoint``, the whole image
    at its end offset), then the log's batches from that offset. ``visit(message, data)``
    gets each record whose api key is in ``types`` (``{api key: Message}``), in offset
    order; control batches and other record types are skipped. ``log``: the partition's
    open :class:`~kafkalog_cli.storage.log.Log` (default: opened read-only, closed after).

    Raises:
        KafkalogError: a snapshot or segment that cannot be read, or a record of one of
            ``types`` that does not parse (naming the file and offset).
    """
    start = 0
    snapshot = _latest_snapshot(directory)
    if snapshot is not None:
        start = int(snapshot.name[:20])
        _replay_file(snapshot, types, visit)
    lg = Log.open(directory) if log is None else log
    try:
        for seg, batch in lg.batches_from(max(start, lg.log_start_offset)):
            if batch.is_control or batch.last_offset < start:
                continue
            _replay_batch(batch, seg.log_path, types, visit)
    finally:
        if log is None:
            lg.close()


def _latest_snapshot(directory: Path) -> Path | None:
    best = None
    for p in directory.iterdir():
        if is_snapshot_checkpoint_name(p.name) and p.is_file() and not p.is_symlink():
            key = (int(p.name[:20]), int(p.name[21:31]))
            if best is None or key > best[0]:
                best = (key, p)
    return best[1] if best else None


def _replay_file(path: Path, types: dict, visit) -> None:
    size = path.stat().st_size
    if size > _MAX_SNAPSHOT_BYTES:
        raise KafkalogError(f"snapshot of {size} bytes is larger than kafkalog reads "
                            f"({_MAX_SNAPSHOT_BYTES})", file=path)
    if size == 0:
        return
    import mmap

    # mapped, not read: only the pages of the batches reached are resident (a large
    # snapshot, or one of zeros, costs no heap)
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        fr = FileRecords(mm, file=path)
        for batch in fr.batches():
            if not batch.is_control:
                _replay_batch(batch, path, types, visit)
    finally:
        fr = batch = None
        try:
            mm.close()
        except BufferError:  # a view still held (a record kept by visit): closed by GC
            pass


def _replay_batch(batch, path, types: dict, visit) -> None:
    for rec in batch.records():
        value = rec.value
        if value is None:
            continue
        try:
            _frame, api_key, version, pos = read_frame(value)
        except ValueError:
            continue  # not ours to judge: dump-segment reports it
        message = types.get(api_key)
        if message is None:
            continue
        try:
            data, _end = message.parse(value, version, offset=pos)
        except Exception as e:
            raise KafkalogError(f"{message.name} at offset {rec.offset} does not parse: "
                                f"{e}", file=path) from None
        visit(message, data)


class ClusterMetadataLog:
    """The ``__cluster_metadata-0`` partition of a served log directory: :meth:`load` reads
    the security records into a :class:`SecurityImage`, :meth:`append` writes new ones.
    ``catalog`` is the server's :class:`~kafkalog_cli.server.catalog.LogDirCatalog`."""

    def __init__(self, catalog):
        self.catalog = catalog
        self.directory = Path(catalog.log_dir) / f"{METADATA_TOPIC}-0"
        self.image = SecurityImage()
        self._log = None

    @property
    def read_only(self) -> bool:
        return self.catalog.read_only

    def load(self) -> SecurityImage:
        """Replay the newest snapshot and the log after it (nothing when the partition does
        not exist).

        Raises:
            KafkalogError: a snapshot or segment that cannot be read, or a security record
                that does not parse (naming the file and offset): serve does not guess
                which ACLs or users it held.
        """
        if not self.directory.is_dir():
            return self.image
        replay_metadata_log(self.directory, _TYPES, self.image.replay,
                            log=None if self.read_only else self._open())
        n_acls, n_users = len(self.image.acls), len({u for u, _ in self.image.scram})
        if n_acls or n_users:
            log.info("loaded %d ACLs and the SCRAM credentials of %d users from %s",
                     n_acls, n_users, self.directory.name)
        return self.image

    def _open(self):
        if self._log is None:
            from ..configs import effective, log_config

            # Kafka's defaults: the broker's topic defaults are not the metadata log's
            cfg = log_config(effective({}, {}))
            self._log = self.catalog.manager.get_or_create_log(
                METADATA_TOPIC, 0, cfg, topic_id=METADATA_TOPIC_ID)
        return self._log

    def append(self, records: list[tuple[object, dict]]) -> None:
        """Write ``[(message, data)]`` as one batch, fsync it, then replay it into the
        image.

        Raises:
            AppendError: the directory is served read-only (CLUSTER_AUTHORIZATION_FAILED),
                or the write failed (KAFKA_STORAGE_ERROR ...).
        """
        if not records:
            return
        from ...protocol.errors import Errors

        if self.read_only:
            raise AppendError(Errors.CLUSTER_AUTHORIZATION_FAILED,
                              "kafkalog serve --read-only: this server writes nothing")
        lg = self._open()
        now = int(time.time() * 1000)
        batch = build_batch([(now, None, frame(m, d), ()) for m, d in records])
        epoch = lg.leader_epoch_cache.latest_epoch
        try:
            lg.append_as_leader(batch, leader_epoch=1 if epoch is None else epoch,
                                origin="coordinator")
            lg.flush()
        except Exception as e:
            raise append_error(e) from e
        for m, d in records:
            self.image.replay(m, d)
