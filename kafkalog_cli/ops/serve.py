"""``kafkalog serve``: argument checks, then the server in the foreground.

Security is configured with a broker's keys (``--config listeners=...``, TLS, SASL, the
authorizer: docs/serve.md, "Security"). A listener that is neither SSL nor SASL has no
authentication: anyone who can connect can read, write and delete topics, so such a
listener on a non-loopback address needs ``allow_remote``.
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
from ..recovery.prune import prune_if_empty
from ..server import configs as cfgs
from ..server.broker import run
from ..server.kafka_apis import ServerOptions
from ..server.security import config as security_config
from ..server.security.listeners import listeners_of
from ..server.security.scram import parse_add_scram
from ..server.security.server_security import validate_configs
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


def parse_configs(items) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """``--config KEY=VALUE`` items -> (the static broker configs the catalog layers,
    the socket server configs, the security configs). A key is a topic config name (a
    default for every topic), a broker config name (``group.initial.rebalance.delay.ms``,
    ``log.roll.hours``, ``socket.request.max.bytes``, ...), checked as
    :func:`~kafkalog_cli.server.configs.static_broker_configs` checks them, or a security
    key (:mod:`~kafkalog_cli.server.security.config`: ``listeners``, ``ssl.*``, ``sasl.*``,
    ``listener.name.<l>.*``, ``authorizer.class.name``, ``super.users``, ...). The socket
    server's (``socket.request.max.bytes``, ``queued.max.request.bytes``,
    ``connections.max.idle.ms``) are in the first two, the second for the server to obey;
    the unprefixed security keys are in the first and the third (DescribeConfigs reports
    them, secrets with a null value).

    Raises:
        InvalidArgumentError: not KEY=VALUE, an unknown key or a bad value (a secret's
            value is never repeated).
    """
    static: dict[str, str] = {}
    sockets: dict[str, str] = {}
    security: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep:
            shown = item if "=" in item or not security_config.is_sensitive(item.strip()) \
                else "..."
            raise InvalidArgumentError(f"--config must be KEY=VALUE, got {shown!r}")
        key = key.strip()
        if security_config.is_security_config(key):
            security[key] = value
            if key in security_config.SECURITY_CONFIGS:
                static[key] = value
            continue
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
    return static, sockets, security


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
        # a crash leaves every open partition's preallocated index tails: a session of
        # zeros, created files and checkpoint offsets is not kept (docs/recover.md)
        kept = f"quarantine kept in {rep.quarantine}"
        if rep.quarantine is not None and prune_if_empty(rep.quarantine):
            kept = "nothing to keep (zero bytes, created files and checkpoint offsets only)"
            rep.quarantine = None
        log.warning("recovered %s: log end offset %s, %d invalid bytes truncated, %d "
                    "segments removed, %d actions; %s", rep.directory, rep.log_end_offset,
                    cut, removed, len(rep.actions), kept)
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


def serve(log_dir, *, listen: str | None = None, node_id: int | None = None,
          allow_remote: bool = False, advertised_host: str | None = None,
          auto_create_topics: bool = False, num_partitions: int = 1,
          configs=(), metrics: bool = False, metrics_interval: float = 10.0,
          read_only: bool = False, no_recover: bool = False, add_scram=()) -> None:
    """Serve ``log_dir`` until SIGTERM/SIGINT. With ``read_only`` not a byte is written:
    no lock, no checkpoint, no index or snapshot; Produce, CreateTopics and DeleteTopics
    get TOPIC_AUTHORIZATION_FAILED and an idempotent InitProducerId
    CLUSTER_AUTHORIZATION_FAILED (docs/serve.md). Otherwise a directory without the
    clean-shutdown marker is recovered first (:func:`recover_at_startup`; ``no_recover``:
    refused), and a clean stop writes the marker. A ``log_dir`` that does not exist is
    created, as a broker creates its log directories (``LogManager
    .createAndValidateLogDirs``), except with ``read_only``. ``node_id``: None serves as
    the node ``meta.properties`` names (:func:`node_id_of`).

    ``listen`` (``HOST:PORT``, default 127.0.0.1:9092) is a PLAINTEXT listener; the
    ``listeners`` config replaces it. ``add_scram``: ``kafka-storage format --add-scram``
    arguments (``SCRAM-SHA-256=[name=admin,password=...]``), stored in
    ``__cluster_metadata`` before serving.

    Raises:
        InvalidArgumentError: a bad address, a non-loopback PLAINTEXT listener without
            ``allow_remote``, a bad config (SecurityConfigError for a security key), a
            bad ``--add-scram``, ``log_dir`` is not a directory (or is missing with
            ``read_only``), ``node_id`` differs from meta.properties', ``read_only`` with
            ``auto_create_topics`` or ``add_scram``, ``listen`` with ``listeners``.
        LogDirLockedError: a broker or another kafkalog holds the directory.
        UncleanShutdownError: ``no_recover`` on a directory that needs recovery.
    """
    d = require_local(log_dir, "serve")
    if d.exists() or d.is_symlink():
        if not d.is_dir():
            raise InvalidArgumentError(f"{d} is not a directory")
    elif read_only:
        raise InvalidArgumentError(f"{d} does not exist (--read-only creates nothing)")
    server_configs, broker_configs, security = parse_configs(configs)
    if listen is not None and security_config.LISTENERS in security:
        raise InvalidArgumentError("--listen and --config listeners=... exclude each other")
    host, port = parse_listen(listen or "127.0.0.1:9092")
    if num_partitions < 1:
        raise InvalidArgumentError("--num-partitions must be at least 1")
    if read_only and auto_create_topics:
        raise InvalidArgumentError("--read-only and --auto-create-topics exclude each other")
    node_id = node_id_of(d, node_id)
    if read_only and add_scram:
        raise InvalidArgumentError("--read-only and --add-scram exclude each other")
    users = [parse_add_scram(a) for a in add_scram]
    default_listener = f"PLAINTEXT://{'[' + host + ']' if ':' in host else host}:{port}"
    listeners, _ = listeners_of(security, default_listeners=default_listener,
                                advertised_host=advertised_host)
    _check_remote(listeners, allow_remote)
    validate_configs(security, listeners)
    server_configs.setdefault(security_config.LISTENERS,
                              security.get(security_config.LISTENERS, default_listener))
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
        for sec in server.security.listeners:
            print(f"kafkalog serve: listening on {_bound(sec.listener)} "
                  f"({describe_listener(sec)})", file=sys.stderr, flush=True)
        auth = server.security.authorizer
        authz = "no authorizer" if auth is None else (
            f"StandardAuthorizer, {auth.acl_count()} ACLs, super.users "
            f"{','.join(sorted(auth.super_users)) or '-'}, allow.everyone.if.no.acl.found "
            f"{'true' if auth.allow_everyone else 'false'}")
        print(f"kafkalog serve: node {node_id}, {len(server.catalog.topics)} topics, log dir "
              f"{d}{', read-only' if read_only else ''}; {authz}", file=sys.stderr, flush=True)

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
    raise_open_files_limit()
    run(d, options, bind_host=host, server_configs=server_configs,
        broker_configs=broker_configs,
        metrics_interval=metrics_interval if metrics else None, on_ready=ready,
        recovered=recovered, lock=lock, security_configs=security, add_scram=users)


def raise_open_files_limit() -> tuple[int, int]:
    """Raise this process's soft limit on open files (RLIMIT_NOFILE) to its hard limit,
    as the JVM running a broker does at start (HotSpot's ``MaxFDLimit``, on by default):
    serve holds a descriptor per partition's active ``.log`` and, once written, its
    ``.index`` and ``.timeindex``, and one per connection, which a soft limit of 1024
    runs out of at a few hundred partitions. Returns the ``(soft, hard)`` limits after;
    a platform without the call, or a refusal, leaves the limit as it was."""
    try:
        import resource
    except ImportError:  # not a POSIX platform
        return (-1, -1)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        want = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        except (ValueError, OSError):
            pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def _check_remote(listeners, allow_remote: bool) -> None:
    """A listener without authentication (PLAINTEXT) on a non-loopback address (or every
    interface) needs ``--allow-remote``; SSL and SASL listeners do not."""
    if allow_remote:
        return
    for lis in listeners:
        ep = lis.endpoint
        if ep.security_protocol == "PLAINTEXT" and not is_loopback(ep.host or "0.0.0.0"):
            raise InvalidArgumentError(
                f"refusing to listen on {ep.host or 'every interface'} with listener "
                f"{ep.listener} (PLAINTEXT): it has no authentication; pass --allow-remote "
                "to listen beyond loopback, or use an SSL or SASL listener")


def _bound(lis) -> str:
    host = lis.endpoint.host or "0.0.0.0"
    return f"{'[' + host + ']' if ':' in host else host}:{lis.endpoint.port}"


def describe_listener(sec) -> str:
    """One listener for the start-up line: name, protocol, how clients authenticate, what
    it advertises (no secret)."""
    lis = sec.listener
    ep = lis.endpoint
    parts = [ep.listener if ep.listener == ep.security_protocol
             else f"{ep.listener} ({ep.security_protocol})"]
    if sec.uses_sasl:
        parts.append("SASL " + ", ".join(sec.mechanisms))
    if sec.ssl_context is not None:
        auth = (security_config.effective(lis.configs, "ssl.client.auth") or "none").lower()
        parts.append("TLS" + ("" if auth == "none" else f", client certificates {auth}"))
    if ep.security_protocol == "PLAINTEXT":
        parts.append("no authentication")
    advertised = f"{lis.advertised_host}:{lis.advertised_port}"
    if advertised != _bound(lis):
        parts.append(f"advertised as {advertised}")
    return ", ".join(parts)
