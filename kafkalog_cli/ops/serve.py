"""``kafkalog serve``: argument checks, then the server in the foreground.

There is no authentication and no TLS: anyone who can connect can read, write and delete
topics. The server listens on loopback unless ``allow_remote`` is given.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import sys
from pathlib import Path

from ..constants import CLEAN_SHUTDOWN_FILE_NAME
from ..errors import InvalidArgumentError, UncleanShutdownError
from ..recovery import RecoveryResult, recover
from ..server import configs as cfgs
from ..server.broker import run
from ..server.kafka_apis import ServerOptions
from ..storage.files import partition_dirs_of
from ..storage.location import require_local
from ..storage.lock import LogDirLock

log = logging.getLogger("kafkalog.serve")


def parse_listen(listen: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port`` too) -> (host, port)."""
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise InvalidArgumentError(f"--listen must be HOST:PORT, got {listen!r}")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_configs(items) -> tuple[dict[str, str], dict[str, str]]:
    """``--config KEY=VALUE`` items -> (the static broker configs the catalog layers,
    the socket server configs). A key is a topic config name (a default for every topic)
    or a broker config name (``group.initial.rebalance.delay.ms``, ``log.roll.hours``,
    ``socket.request.max.bytes``, ...), checked as
    :func:`~kafkalog_cli.server.configs.static_broker_configs` checks them; the socket
    server's (``socket.request.max.bytes``, ``queued.max.request.bytes``,
    ``connections.max.idle.ms``) are in both, the second for the server to obey.

    Raises:
        InvalidArgumentError: not KEY=VALUE, an unknown key or a bad value.
    """
    static: dict[str, str] = {}
    sockets: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep:
            raise InvalidArgumentError(f"--config must be KEY=VALUE, got {item!r}")
        key = key.strip()
        try:
            cfgs.static_broker_configs({key: value})
            if cfgs.is_socket_config(key):
                sockets[key] = str(cfgs.socket_config_value(key, value))
        except InvalidArgumentError as e:
            raise InvalidArgumentError(f"--config {item}: {e.message}") from None
        static[key] = value
    try:
        cfgs.broker_configs(sockets)
    except InvalidArgumentError as e:
        raise InvalidArgumentError(f"--config: {e.message}") from None
    return static, sockets


def recover_at_startup(log_dir, *, no_recover: bool = False,
                       lock: LogDirLock | None = None) -> RecoveryResult | None:
    """What a starting broker does when ``.kafka_cleanshutdown`` is missing
    (``LogManager.loadLogs`` -> ``LogLoader.recoverLog`` for every partition): the same
    recovery as ``kafkalog recover --truncate`` (:func:`kafkalog_cli.recovery.recover`:
    each partition's valid prefix kept, indexes, producer state and checkpoints rebuilt,
    whatever is cut kept in the partition's quarantine session), each partition it
    changed logged as one line naming its quarantine. Returns None when there was nothing
    to recover (the marker is present, or the directory holds no partition yet).

    ``no_recover``: refuse instead (``serve --no-recover``). ``lock``: the directory's
    lock, held by the caller (kept held: the server opens the directory under it).

    Raises:
        UncleanShutdownError: ``no_recover`` and the marker is missing.
        LogDirLockedError: a broker or another kafkalog holds the directory.
        UnsafePathError / UnreadableError / NotAKafkaFileError: as ``recover`` (nothing
            changed).
    """
    d = Path(log_dir)
    if (d / CLEAN_SHUTDOWN_FILE_NAME).exists() or not partition_dirs_of(d):
        return None
    if no_recover:
        raise UncleanShutdownError(d)
    log.info("%s has no %s: running the log recovery (kafkalog recover --truncate)",
             d, CLEAN_SHUTDOWN_FILE_NAME)
    result = recover([d], truncate=True, held=lock)
    for rep in result.partitions:
        if not rep.work_needed:
            continue
        cut = sum(s.invalid_bytes for s in rep.segments if not s.removed)
        removed = sum(1 for s in rep.segments if s.removed)
        log.warning("recovered %s: log end offset %s, %d invalid bytes truncated, %d "
                    "segments removed, %d actions; quarantine kept in %s",
                    rep.directory, rep.log_end_offset, cut, removed, len(rep.actions),
                    rep.quarantine)
    s = result.summary()
    log.info("log recovery done: %d partitions, %d changed", s["partitions"],
             s["partitionsWithWork"])
    return result


def node_id_of(log_dir, node_id: int | None) -> int:
    """The node id to serve ``log_dir`` as: ``node.id`` (``broker.id`` in a v0 file) of
    its ``meta.properties``, checked against ``node_id`` when both are given, as
    ``MetaPropertiesEnsemble.verify`` checks a broker's configured id; ``node_id`` or 0
    when the file is absent or holds none.

    Raises:
        InvalidArgumentError: ``node_id`` differs from the stored one (Kafka's message).
        CorruptCheckpointError: meta.properties does not parse as a broker reads it.
    """
    from ..storage.dir_files import read_meta_properties

    meta = read_meta_properties(log_dir, validate=True) if Path(log_dir).is_dir() else None
    stored = None
    if meta is not None:
        text = meta.get("node.id", meta.get("broker.id"))
        stored = None if text is None else int(text.strip())
    if stored is None:
        return 0 if node_id is None else node_id
    if node_id is not None and node_id != stored:
        path = Path(log_dir) / "meta.properties"
        raise InvalidArgumentError(
            f"Stored node id {stored} doesn't match previous node id {node_id} in {path}. "
            "If you moved your data, make sure your configured node id matches. If you "
            "intend to create a new node, you should remove all data in your data "
            "directories.")
    return stored


def serve(log_dir, *, listen: str = "127.0.0.1:9092", node_id: int | None = None,
          allow_remote: bool = False, advertised_host: str | None = None,
          auto_create_topics: bool = False, num_partitions: int = 1,
          configs=(), metrics: bool = False, metrics_interval: float = 10.0,
          read_only: bool = False, no_recover: bool = False) -> None:
    """Serve ``log_dir`` until SIGTERM/SIGINT. With ``read_only`` not a byte is written:
    no lock, no checkpoint, no index or snapshot; Produce, CreateTopics and DeleteTopics
    get TOPIC_AUTHORIZATION_FAILED and an idempotent InitProducerId
    CLUSTER_AUTHORIZATION_FAILED (docs/serve.md). Otherwise a directory without the
    clean-shutdown marker is recovered first (:func:`recover_at_startup`; ``no_recover``:
    refused), and a clean stop writes the marker. A ``log_dir`` that does not exist is
    created, as a broker creates its log directories (``LogManager
    .createAndValidateLogDirs``), except with ``read_only``. ``node_id``: None serves as
    the node ``meta.properties`` names (:func:`node_id_of`).

    Raises:
        InvalidArgumentError: a bad address, a non-loopback address without
            ``allow_remote``, a bad config, ``log_dir`` is not a directory (or is missing
            with ``read_only``), ``node_id`` differs from meta.properties', or
            ``read_only`` with ``auto_create_topics``.
        LogDirLockedError: a broker or another kafkalog holds the directory.
        UncleanShutdownError: ``no_recover`` on a directory that needs recovery.
    """
    d = require_local(log_dir, "serve")
    if d.exists() or d.is_symlink():
        if not d.is_dir():
            raise InvalidArgumentError(f"{d} is not a directory")
    elif read_only:
        raise InvalidArgumentError(f"{d} does not exist (--read-only creates nothing)")
    host, port = parse_listen(listen)
    if not is_loopback(host) and not allow_remote:
        raise InvalidArgumentError(
            f"refusing to listen on {host}: the server has no authentication; pass "
            "--allow-remote to listen beyond loopback")
    if num_partitions < 1:
        raise InvalidArgumentError("--num-partitions must be at least 1")
    if read_only and auto_create_topics:
        raise InvalidArgumentError("--read-only and --auto-create-topics exclude each other")
    server_configs, broker_configs = parse_configs(configs)
    node_id = node_id_of(d, node_id)
    if not d.exists():
        # LogManager.createAndValidateLogDirs: "Log directory ... not found, creating it."
        logging.getLogger("kafkalog").info("Log directory %s not found, creating it.", d)
        d.mkdir(parents=True)
    if advertised_host is None:
        advertised_host = host if host not in ("0.0.0.0", "::") else socket.getfqdn()
    options = ServerOptions(host=advertised_host, port=port, node_id=node_id,
                            auto_create_topics=auto_create_topics,
                            num_partitions=num_partitions, read_only=read_only)

    def ready(server):
        print(f"kafkalog serve: listening on {host}:{server.options.port} "
              f"(node {node_id}, {len(server.catalog.topics)} topics, log dir {d}"
              f"{', read-only' if read_only else ''}); no authentication", file=sys.stderr,
              flush=True)

    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(message)s")
    recovered, lock = False, None
    if not read_only:
        # one lock from the recovery to the end of serving: nothing can start on the
        # directory in between
        lock = LogDirLock(d).acquire()
        try:
            recovered = recover_at_startup(d, no_recover=no_recover, lock=lock) is not None
        except BaseException:
            lock.release()
            raise
    run(d, options, bind_host=host, server_configs=server_configs,
        broker_configs=broker_configs,
        metrics_interval=metrics_interval if metrics else None, on_ready=ready,
        recovered=recovered, lock=lock)
