"""The asyncio server: one node, leader of every partition of one log directory.

Per connection, requests are read, handled and answered one at a time in order (the
broker mutes a channel until its response is sent, so clients see the same ordering).
A frame the broker would reject closes that connection only (see
:mod:`kafkalog_cli.protocol.wire`); each connection error is logged as one line.

Memory, as ``SocketServer`` bounds it (docs/serve.md, "Limits"):

* a frame larger than ``socket.request.max.bytes`` closes its connection; a connection
  reads one request at a time, so this is also the per-connection bound;
* ``queued.max.request.bytes`` bounds the request bytes read and not yet handled, over
  all connections (:class:`RequestMemoryPool`): a frame's size is reserved before its body
  is read; while it does not fit, that connection is not read from (the bytes wait in the
  socket, the client waits), as the broker mutes a channel under memory pressure;
* ``connections.max.idle.ms``: a connection with nothing read or written for that long is
  closed, so a stalled partial frame gives its reservation back.

Produce batches are validated on worker threads (:mod:`.workers`), so one large batch
does not stall the other connections.

:class:`ServerThread` runs the server on its own event-loop thread (tests, benchmarks);
:func:`run` runs it in the foreground until SIGTERM/SIGINT (``kafkalog serve``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading

from ..errors import CloseConnection, IncompleteFrame, InvalidRequest
from ..protocol.wire import build_response, parse_request, read_frame_body, read_frame_size
from . import configs as cfgs
from .catalog import LogDirCatalog
from .kafka_apis import NO_RESPONSE, KafkaApis, ServerOptions
from .metrics import BrokerTopicStats

log = logging.getLogger("kafkalog.serve")

#: replica.high.watermark.checkpoint.interval.ms (5 s); the recovery-point and log-start
#: checkpoints (60 s on a broker) are written with it
CHECKPOINT_INTERVAL_S = 5.0


class RequestMemoryPool:
    """``queued.max.request.bytes`` as SocketServer's ``SimpleMemoryPool``: request bytes
    are reserved before they are read and given back when the request is handled.

    Strict, unlike the broker's pool (which grants a request while any byte is free and
    so may overshoot by one request): a reservation waits until it fits, so the bound
    holds; a waiting large request does not hold back smaller ones that fit. ``size`` <= 0:
    no bound. A reservation never exceeds ``size`` (``socket.request.max.bytes`` <= it).

    Attributes:
        size: the bound (bytes); available: what is free now (bytes).
    """

    def __init__(self, size: int):
        self.size = size
        self.available = size
        self._waiters: list[tuple[int, asyncio.Future]] = []

    def try_acquire(self, n: int) -> bool:
        """Reserve ``n`` bytes if they fit now (no waiting); True when reserved."""
        if self.size <= 0 or n <= 0:
            return True
        if n <= self.available and not self._waiters:
            self.available -= n
            return True
        return False

    async def acquire(self, n: int) -> None:
        """Reserve ``n`` bytes, waiting until they fit."""
        if self.try_acquire(n):
            return
        future = asyncio.get_running_loop().create_future()
        self._waiters.append((n, future))
        self._grant()
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release(n)  # granted as it was cancelled
            else:
                self._waiters.remove((n, future))
            raise

    def release(self, n: int) -> None:
        if self.size <= 0 or n <= 0:
            return
        self.available += n
        self._grant()

    def _grant(self) -> None:
        waiting = []
        for n, future in self._waiters:
            if future.done():
                continue
            if n <= self.available:
                self.available -= n
                future.set_result(None)
            else:
                waiting.append((n, future))
        self._waiters = waiting


class _Connection:
    """What the idle timer needs of a connection: when it last read or wrote, and whether
    a request of it is being handled (then it is not idle)."""

    __slots__ = ("writer", "last_active", "busy")

    def __init__(self, writer: asyncio.StreamWriter, now: float):
        self.writer = writer
        self.last_active = now
        self.busy = False


async def _cancelled(task: asyncio.Task | None) -> None:
    """Cancel one of the node's background tasks (None: not started) and wait until it
    has stopped."""
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class KafkaServer:
    """Serve ``catalog`` on ``options.host:options.port`` (port 0: an ephemeral port).

    ``broker_configs``: :data:`~.configs.SOCKET_CONFIGS` overrides (name -> value):
    ``socket.request.max.bytes``, ``queued.max.request.bytes``,
    ``connections.max.idle.ms`` (DescribeConfigs reports them as static broker configs).

    Raises:
        InvalidConfigError: a broker config out of range.
    """

    def __init__(self, catalog: LogDirCatalog, options: ServerOptions, *,
                 bind_host: str | None = None, metrics_interval: float | None = None,
                 broker_configs: dict | None = None,
                 checkpoint_interval: float = CHECKPOINT_INTERVAL_S):
        self.catalog = catalog
        self.options = options
        self.bind_host = bind_host or options.host
        self.stats = BrokerTopicStats()
        self.apis = KafkaApis(catalog, options, self.stats)
        self.metrics_interval = metrics_interval
        self.configs = cfgs.broker_configs(broker_configs)
        catalog.broker_configs.static.update({k: str(v) for k, v in (broker_configs or {}).items()})
        self.max_request_size = self.configs[cfgs.SOCKET_REQUEST_MAX_BYTES]
        self.memory_pool = RequestMemoryPool(self.configs[cfgs.QUEUED_MAX_REQUEST_BYTES])
        idle_ms = self.configs[cfgs.CONNECTIONS_MAX_IDLE_MS]
        self.max_idle = idle_ms / 1000 if idle_ms >= 0 else None
        self._connections: dict[asyncio.Task, _Connection] = {}
        self._idle_task: asyncio.Task | None = None
        self._server: asyncio.base_events.Server | None = None
        self._clients: set[asyncio.Task] = set()
        self._metrics_task: asyncio.Task | None = None
        self.checkpoint_interval = checkpoint_interval
        self._checkpoint_task: asyncio.Task | None = None
        self._txn_task: asyncio.Task | None = None
        self.connection_errors = 0

    async def start(self) -> int:
        """Load the coordinators' state, then listen; returns the bound port.

        Raises:
            CoordinatorLoadError: ``__consumer_offsets`` does not load (nothing is served).
        """
        self.apis.load()
        self._server = await asyncio.start_server(self._client, self.bind_host,
                                                  self.options.port, reuse_address=True)
        port = self._server.sockets[0].getsockname()[1]
        self.options.port = port
        if self.metrics_interval:
            self._metrics_task = asyncio.create_task(self._report_metrics())
        if self.checkpoint_interval and not self.options.read_only:
            self._checkpoint_task = asyncio.create_task(self._checkpoints())
        if self.max_idle is not None:
            self._idle_task = asyncio.create_task(self._close_idle_connections())
        if not self.options.read_only:
            self._txn_task = asyncio.create_task(self._abort_timed_out_transactions())
        return port

    async def _abort_timed_out_transactions(self) -> None:
        """TransactionCoordinator's scheduled abortTimedOutTransactions, every
        transaction.abort.timed.out.transaction.cleanup.interval.ms."""
        interval = self.catalog.broker_configs.int_value(
            "transaction.abort.timed.out.transaction.cleanup.interval.ms") / 1000
        while True:
            await asyncio.sleep(interval)
            try:
                self.apis.txn.abort_timed_out()
            except Exception as e:  # keep serving; say so
                log.error("aborting timed-out transactions failed: %s", e)

    async def stop(self) -> None:
        """Stop listening, drop the connections, then close the log directory cleanly."""
        if self._server is not None:
            self._server.close()
        for t in list(self._clients):
            t.cancel()
        if self._clients:
            await asyncio.gather(*self._clients, return_exceptions=True)
        self.apis.close()
        await _cancelled(self._idle_task)
        await _cancelled(self._txn_task)
        await _cancelled(self._checkpoint_task)
        if self._metrics_task is not None:
            await _cancelled(self._metrics_task)
            for line in self.stats.report():
                log.info("%s", line)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1)
        self.catalog.close()

    async def _checkpoints(self) -> None:
        """High watermarks, recovery points and log start offsets every
        ``checkpoint_interval`` seconds, and flush.ms (a broker: every 5 s / 60 s)."""
        while True:
            await asyncio.sleep(self.checkpoint_interval)
            try:
                await asyncio.to_thread(self.catalog.prepare_checkpoint())
            except Exception as e:  # a full disk: keep serving, say so
                log.error("checkpoint failed: %s", e)

    async def _report_metrics(self) -> None:
        while True:
            await asyncio.sleep(self.metrics_interval)
            for line in self.stats.report():
                log.info("%s", line)

    async def _close_idle_connections(self) -> None:
        """Selector's idle expiry: close connections idle for connections.max.idle.ms."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(max(self.max_idle / 4, 0.05), 30.0))
            now = loop.time()
            for task, conn in list(self._connections.items()):
                if not conn.busy and now - conn.last_active > self.max_idle:
                    conn.last_active = float("inf")  # once
                    log.info("closing connection %s: idle for more than %d ms",
                             _peer(conn.writer), self.max_idle * 1000)
                    task.cancel()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._clients.add(task)
        loop = asyncio.get_running_loop()
        conn = self._connections[task] = _Connection(writer, loop.time())
        where = _peer(writer)
        peer = writer.get_extra_info("peername")
        client_host = f"/{peer[0]}" if isinstance(peer, tuple) else ""  # clientAddress
        pool = self.memory_pool

        def touch():
            conn.last_active = loop.time()

        try:
            while True:
                size = await read_frame_size(reader, self.max_request_size)
                if size is None:
                    break
                conn.last_active = loop.time()
                if not pool.try_acquire(size):
                    await pool.acquire(size)
                try:
                    frame = await read_frame_body(reader, size, touch)
                    conn.busy = True
                    request = parse_request(frame)
                    request.client_host = client_host
                    del frame
                    result = await self.apis.handle(request)
                    request.body = None  # the records: given back with the bytes
                finally:
                    pool.release(size)
                conn.busy = False
                touch()
                if result is NO_RESPONSE:
                    continue
                writer.write(build_response(request, result.body, result.version))
                del result
                await writer.drain()
                touch()
        except InvalidRequest as e:
            self._connection_error(where, f"invalid request: {e}")
        except CloseConnection as e:
            self._connection_error(where, f"closing connection due to {e}")
        except IncompleteFrame as e:
            self._connection_error(where, str(e))
        except (ConnectionError, OSError) as e:
            self._connection_error(where, f"{type(e).__name__}: {e}")
        except asyncio.CancelledError:
            pass
        except Exception as e:  # a bug: close this connection, keep serving the others
            self._connection_error(where, f"unexpected {type(e).__name__}: {e}")
            log.debug("traceback", exc_info=True)
        finally:
            self._clients.discard(task)
            self._connections.pop(task, None)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _connection_error(self, where: str, message: str) -> None:
        self.connection_errors += 1
        log.warning("connection %s: %s", where, message)


def _peer(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)


def _open(log_dir, options: ServerOptions, server_configs: dict | None,
          recovered: bool = False, lock=None) -> LogDirCatalog:
    """Lock and open the directory (LogManager through the catalog); with
    ``options.read_only`` open it read-only, without the lock. ``recovered``: the log
    recovery ran just before (a clean stop then writes the clean-shutdown marker);
    ``lock``: the directory's lock, held already by the caller."""
    return LogDirCatalog(log_dir, node_id=options.node_id, server_configs=server_configs,
                         read_only=options.read_only, recovered=recovered,
                         lock=lock).open()


def run(log_dir, options: ServerOptions, *, bind_host: str | None = None,
        server_configs: dict | None = None, broker_configs: dict | None = None,
        metrics_interval: float | None = None, on_ready=None, recovered: bool = False,
        lock=None) -> None:
    """Serve in the foreground until SIGTERM or SIGINT, then close cleanly.

    ``server_configs``: topic config defaults; ``broker_configs``: see :class:`KafkaServer`;
    ``recovered``: the caller ran the log recovery on ``log_dir`` just before; ``lock``:
    the directory's :class:`~kafkalog_cli.storage.lock.LogDirLock`, held by the caller
    (released at the end).
    """
    try:
        cfgs.broker_configs(broker_configs)  # refuse bad values before taking the lock
        catalog = _open(log_dir, options, server_configs, recovered, lock)
    except BaseException:
        if lock is not None:
            lock.release()  # a no-op when the LogManager released it already
        raise
    try:
        asyncio.run(_serve_until_signal(catalog, options, bind_host, metrics_interval,
                                        on_ready, broker_configs))
    finally:
        catalog.close(clean=False)  # a no-op after the clean close; else release the lock


async def _serve_until_signal(catalog, options, bind_host, metrics_interval, on_ready,
                              broker_configs):
    try:
        server = KafkaServer(catalog, options, bind_host=bind_host,
                             metrics_interval=metrics_interval, broker_configs=broker_configs)
        await server.start()
    except BaseException:
        catalog.close(clean=False)
        raise
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if on_ready is not None:
        on_ready(server)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await server.stop()


class ServerThread:
    """The server on a background event-loop thread; a context manager.

    ``with ServerThread(log_dir) as s: ... s.port ...`` - the log directory is locked and
    served on 127.0.0.1 (ephemeral port by default) until the block ends.
    """

    def __init__(self, log_dir, options: ServerOptions | None = None, *,
                 server_configs: dict | None = None, broker_configs: dict | None = None,
                 metrics_interval: float | None = None,
                 checkpoint_interval: float = CHECKPOINT_INTERVAL_S):
        self.checkpoint_interval = checkpoint_interval
        self.log_dir = log_dir
        self.options = options or ServerOptions(port=0)
        self.server_configs = server_configs
        self.broker_configs = broker_configs
        self.metrics_interval = metrics_interval
        self.server: KafkaServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def port(self) -> int:
        return self.options.port

    @property
    def bootstrap(self) -> str:
        return f"{self.options.host}:{self.options.port}"

    def start(self) -> ServerThread:
        catalog = _open(self.log_dir, self.options, self.server_configs)
        self._loop = asyncio.new_event_loop()
        try:
            self.server = KafkaServer(catalog, self.options,
                                      metrics_interval=self.metrics_interval,
                                      broker_configs=self.broker_configs,
                                      checkpoint_interval=self.checkpoint_interval)
        except BaseException:
            catalog.close(clean=False)
            self._loop.close()
            raise

        def main():
            asyncio.set_event_loop(self._loop)
            try:
                self._loop.run_until_complete(self.server.start())
            except BaseException as e:
                self._error = e
                catalog.close(clean=False)
                self._ready.set()
                return
            self._ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=main, name="kafkalog-serve", daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error
        return self

    def call(self, fn, *args):
        """Run ``fn(*args)`` on the server's loop thread and return its result."""
        async def go():
            return fn(*args)
        return asyncio.run_coroutine_threadsafe(go(), self._loop).result(30)

    def stop(self) -> None:
        if self._thread is None:
            return
        fut = asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop)
        try:
            fut.result(30)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)
            self._loop.close()
            self._thread = None
            self.server.catalog.close(clean=False)  # no-op unless the clean close failed

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
