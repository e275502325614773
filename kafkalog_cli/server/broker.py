"""The asyncio server: one node, leader of every partition of one log directory.

Per connection, requests are read, handled and answered one at a time in order (the
broker mutes a channel until its response is sent, so clients see the same ordering).
A frame the broker would reject closes that connection only (see
:mod:`kafkalog_cli.protocol.wire`); each connection error is logged as one line.

What one connection, or many, can make the server hold or wait for, as the broker's
``SocketServer`` bounds it (docs/serve.md, "Limits"):

* a frame larger than ``socket.request.max.bytes`` closes its connection; a connection
  reads one request at a time, and reads nothing while its response is being written
  (the broker mutes a channel with a pending send), so a client that does not read stops
  being read from;
* a request whose arrays and tagged fields hold more than :data:`MAX_REQUEST_ELEMENTS`
  elements closes its connection, refused when the count is read, before the elements
  are (kafkalog's bound: what one request may cost the event loop and memory);
* ``queued.max.request.bytes`` bounds the memory of requests in flight over all
  connections (:class:`RequestMemoryPool`): a frame's bytes plus
  :data:`ELEMENT_BYTES` per element (its decoded objects and its share of the response)
  are reserved before its body is read, for as many elements as it could hold, trimmed
  to what it holds once parsed; while a reservation does not fit, that connection is not
  read from (the bytes wait in the socket), as the broker mutes a channel under memory
  pressure. The bytes of a response not yet written are counted too (new requests wait
  while they fill the pool);
* a response is written in :data:`WRITE_CHUNK` pieces, the transport's buffer drained
  between them, and the records of a Fetch straight from the segment files
  (``os.sendfile`` on a plain socket, as ``FileRecords.writeTo``; else read and written
  in pieces): a connection holds at most one response and a chunk of it in its buffer;
* ``connections.max.idle.ms``: a connection with nothing read or written for that long
  is aborted (its unsent bytes dropped), so a stalled frame or unread response gives its
  memory back;
* :meth:`KafkaServer.stop` aborts every connection (it does not wait for clients to read)
  and the server closes the log directory at once.

The event loop never runs a step whose cost a client chooses without a bound: a request
is parsed on it only while it holds few elements (:data:`INLINE_PARSE_ELEMENTS`, a few
ms), else on a codec thread (:mod:`.workers`); the same for encoding responses
(:data:`INLINE_BUILD_ELEMENTS`); handlers work in proportion to the elements, so
:data:`MAX_REQUEST_ELEMENTS` bounds them. Produce batches are validated on worker threads
(:mod:`.workers`), so one large batch does not stall the other connections.

Security (:mod:`.security`): the server opens every listener of ``listeners`` (default:
one PLAINTEXT listener on ``options.host:options.port``), TLS on SSL / SASL_SSL ones. Each
connection has a :class:`~.security.authenticator.Session` (its listener and principal,
attached to every request); on a SASL listener the SASL exchange runs before the first
request is dispatched, and a failed authentication is answered and closed after
``connection.failed.authentication.delay.ms``. Before dispatch, a SaslHandshake may start a
re-authentication and an expired session closes the connection.

:class:`ServerThread` runs the server on its own event-loop thread (tests, benchmarks);
:func:`run` runs it in the foreground until SIGTERM/SIGINT (``kafkalog serve``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading

from ..errors import (
    AuthenticationError,
    CloseConnection,
    IncompleteFrame,
    InvalidRequest,
    RequestTooManyElements,
    SecurityConfigError,
    UnreadableError,
)
from ..protocol.apis import ApiKeys
from ..protocol.wire import (
    Request,
    parse_request,
    read_frame_body,
    read_frame_size,
    response_parts,
)
from ..schema.deferred import DeferredBytes
from . import configs as cfgs
from .catalog import LogDirCatalog
from .handlers import NO_RESPONSE
from .kafka_apis import KafkaApis, ServerOptions
from .metrics import BrokerTopicStats
from .offset_expiration import run_offset_expiration
from .retention_task import RetentionTask
from .security.authenticator import ListenerSecurity, SaslAuthenticator, Session, can_reauthenticate
from .security.listeners import listeners_of
from .security.server_security import ServerSecurity
from .workers import WorkerPool

log = logging.getLogger("kafkalog.serve")

#: replica.high.watermark.checkpoint.interval.ms (5 s); the recovery-point and log-start
#: checkpoints (60 s on a broker) are written with it
CHECKPOINT_INTERVAL_S = 5.0

#: the most array elements and tagged fields one request may hold (more: its connection
#: is closed, as for a request that does not parse). Above what a client sends to one
#: node (a consumer fetching 10,000 partitions sends ~10,000), it bounds one request's
#: handling on the event loop to ~0.2 s (at most ~5 us an element) and its memory to
#: 32 MiB (:data:`ELEMENT_BYTES` each)
MAX_REQUEST_ELEMENTS = 32768
#: memory counted per element of a request (bytes): its decoded objects and its entry in
#: the response, built and encoded; measured at 220-790 bytes over the served APIs
#: (benchmarks/serve_abuse_bench.py --elements)
ELEMENT_BYTES = 1024
#: a request of at most this many bytes is parsed on the event loop first, and only while
#: it holds at most :data:`INLINE_PARSE_ELEMENTS` elements (a few ms); any other is parsed
#: on a codec thread
INLINE_PARSE_BYTES = 1 << 20
INLINE_PARSE_ELEMENTS = 2048
#: a response of at most this many elements is encoded on the event loop (a few ms); a
#: larger one on a codec thread
INLINE_BUILD_ELEMENTS = 1024
#: codec threads (parsing and encoding off the event loop, as the broker's network
#: threads parse): the GIL lets one run at a time anyway; two keep one large request from
#: delaying every other
CODEC_THREADS = 2
#: bytes of a response handed to the transport at a time (its buffer drained between)
WRITE_CHUNK = 256 * 1024
#: the transport's write buffer high-water mark (bytes): what a connection that does not
#: read can leave in memory beyond its one response
WRITE_HIGH_WATER = 64 * 1024
#: record bytes sent from a segment file per sendfile call (the idle timer sees progress
#: between calls)
SENDFILE_CHUNK = 1 << 20
#: seconds :meth:`KafkaServer.stop` waits for the aborted connections' tasks to end
STOP_WAIT_S = 2.0


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
            elif (n, future) in self._waiters:
                self._waiters.remove((n, future))
            raise

    def force_acquire(self, n: int) -> None:
        """Count ``n`` bytes that exist already (a response built): ``available`` may go
        below 0; reservations then wait until enough is released."""
        if self.size > 0 and n > 0:
            self.available -= n

    def release(self, n: int) -> None:
        if self.size <= 0 or n <= 0:
            return
        self.available += n
        self._grant()

    def reservation(self, size: int) -> int:
        """What a request frame of ``size`` bytes reserves before its body is read: its
        bytes and :data:`ELEMENT_BYTES` for each element it could hold (one a byte, at
        most :data:`MAX_REQUEST_ELEMENTS`), at most :attr:`size` (so it always fits
        eventually)."""
        want = size + min(size, MAX_REQUEST_ELEMENTS) * ELEMENT_BYTES
        return min(want, self.size) if self.size > 0 else want

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
    """A connection as the idle timer and :meth:`KafkaServer.stop` see it: its writer,
    when it last read or wrote, whether a request of it is being handled (then it is not
    idle), and whether its transport can send files (``os.sendfile``)."""

    __slots__ = ("writer", "last_active", "busy", "sendfile")

    def __init__(self, writer: asyncio.StreamWriter, now: float):
        self.writer = writer
        self.last_active = now
        self.busy = False
        self.sendfile = True

    def abort(self) -> None:
        """Close the socket now, dropping what is unsent (Selector.close)."""
        self.writer.transport.abort()


async def _cancelled(task: asyncio.Task | None) -> None:
    """Cancel one of the node's background tasks (None: not started) and wait until it
    has stopped."""
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class KafkaServer:
    """Serve ``catalog`` on ``options.host:options.port`` (port 0: an ephemeral port), or
    on the ``listeners`` of ``security_configs``.

    ``broker_configs``: :data:`~.configs.SOCKET_CONFIGS` overrides (name -> value):
    ``socket.request.max.bytes``, ``queued.max.request.bytes``,
    ``connections.max.idle.ms`` (DescribeConfigs reports them as static broker configs).
    ``security_configs``: the security keys (:mod:`.security.config`: listeners, TLS, SASL,
    the authorizer); ``add_scram``: :class:`~.security.scram.ScramUser` credentials to store
    before listening (``--add-scram``).

    Raises:
        InvalidConfigError: a broker config out of range.
        SecurityConfigError: a security config serve cannot run with.
    """

    def __init__(self, catalog: LogDirCatalog, options: ServerOptions, *,
                 bind_host: str | None = None, metrics_interval: float | None = None,
                 broker_configs: dict | None = None,
                 checkpoint_interval: float = CHECKPOINT_INTERVAL_S,
                 security_configs: dict | None = None, add_scram=()):
        self.catalog = catalog
        self.options = options
        self.bind_host = bind_host or options.host
        self.stats = BrokerTopicStats()
        listeners, skipped = listeners_of(
            security_configs or {}, default_listeners=_listener_uri(self.bind_host, options.port),
            advertised_host=options.host if options.host != self.bind_host else None)
        self.security = ServerSecurity(catalog, security_configs or {}, listeners)
        for name in skipped:
            self.security.notes.append(f"listener {name} is a controller listener "
                                       "(controller.listener.names): not opened")
        self._add_scram = list(add_scram)
        self.apis = KafkaApis(catalog, options, self.stats, security=self.security)
        self.metrics_interval = metrics_interval
        self.configs = cfgs.broker_configs(broker_configs)
        catalog.broker_configs.static.update({k: str(v) for k, v in (broker_configs or {}).items()})
        self.max_request_size = self.configs[cfgs.SOCKET_REQUEST_MAX_BYTES]
        self.memory_pool = RequestMemoryPool(self.configs[cfgs.QUEUED_MAX_REQUEST_BYTES])
        idle_ms = self.configs[cfgs.CONNECTIONS_MAX_IDLE_MS]
        self.max_idle = idle_ms / 1000 if idle_ms >= 0 else None
        for sec in self.security.listeners:
            if idle_ms >= 0 and sec.failed_auth_delay_ms >= idle_ms:
                raise SecurityConfigError(
                    f"connection.failed.authentication.delay.ms={sec.failed_auth_delay_ms} "
                    f"should always be less than connections.max.idle.ms={idle_ms} to prevent "
                    "failed authentication responses from timing out",
                    "connection.failed.authentication.delay.ms")
        self._connections: dict[asyncio.Task, _Connection] = {}
        self._idle_task: asyncio.Task | None = None
        self._servers: list[asyncio.base_events.Server] = []
        self._clients: set[asyncio.Task] = set()
        self._metrics_task: asyncio.Task | None = None
        self.checkpoint_interval = checkpoint_interval
        self._checkpoint_task: asyncio.Task | None = None
        self._txn_task: asyncio.Task | None = None
        #: the log cleaner (:mod:`.log_cleaner`; None read-only)
        self.log_cleaner = None
        self._offsets_task: asyncio.Task | None = None
        #: LogManager's retention schedule (:mod:`.retention_task`), while serving writable
        self.retention: RetentionTask | None = None
        self.connection_errors = 0
        #: parses and encodes requests too large for the event loop
        self.codec = WorkerPool(CODEC_THREADS, name="kafkalog-codec")

    async def start(self) -> int:
        """Load the coordinators' state and the ACLs and SCRAM credentials, store the
        ``add_scram`` credentials, then open every listener; returns the first listener's
        bound port (each listener's is in its ``endpoint.port``; a port 0 advertised is the
        bound one).

        Raises:
            CoordinatorLoadError: ``__consumer_offsets`` does not load (nothing is served).
            KafkalogError: ``__cluster_metadata`` does not load.
            OSError: a listener's address cannot be bound.
        """
        self.apis.load()
        self.security.load()
        if self._add_scram:
            self.security.add_scram_users(self._add_scram)
        for note in self.security.notes:
            log.info("%s", note)
        try:
            for sec in self.security.listeners:
                await self._listen(sec)
        except BaseException:
            for srv in self._servers:
                srv.close()
            raise
        first = self.security.listeners[0].listener
        port = first.endpoint.port
        self.options.host, self.options.port = first.advertised_host, first.advertised_port
        if self.metrics_interval:
            self._metrics_task = asyncio.create_task(self._report_metrics())
        if self.checkpoint_interval and not self.options.read_only:
            self._checkpoint_task = asyncio.create_task(self._checkpoints())
        if self.max_idle is not None:
            self._idle_task = asyncio.create_task(self._close_idle_connections())
        if not self.options.read_only:
            self._txn_task = asyncio.create_task(self._abort_timed_out_transactions())
            from .log_cleaner import LogCleanerTask

            self.log_cleaner = LogCleanerTask(self.catalog)
            self.log_cleaner.start()
            self._offsets_task = asyncio.create_task(run_offset_expiration(self.apis.groups))
            self.retention = RetentionTask(self.catalog)
            self.retention.start()
        return port

    async def _listen(self, sec: ListenerSecurity) -> None:
        """Bind one listener (TLS when it has a context) and note its bound port."""
        lis = sec.listener
        ep = lis.endpoint

        async def client(reader, writer):
            await self._client(reader, writer, sec)

        server = await asyncio.start_server(
            client, ep.host or None, ep.port, reuse_address=True, ssl=sec.ssl_context,
            ssl_handshake_timeout=self.max_idle or 60.0 if sec.ssl_context else None)
        self._servers.append(server)
        bound = server.sockets[0].getsockname()[1]
        if lis.advertised_port == 0:
            lis.advertised_port = bound
        ep.port = bound

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
        """Stop listening, abort every connection (what is unsent is dropped: a client
        that does not read cannot hold the stop up), then close the log directory cleanly.
        Returns within about :data:`STOP_WAIT_S` plus the directory's close."""
        for srv in self._servers:
            srv.close()
        for task, conn in list(self._connections.items()):
            conn.abort()
            task.cancel()
        for t in list(self._clients):
            t.cancel()
        if self._clients:
            _, pending = await asyncio.wait(list(self._clients), timeout=STOP_WAIT_S)
            if pending:
                log.warning("%d connections did not end within %.0f s of the stop; closing "
                            "the log directory anyway", len(pending), STOP_WAIT_S)
        if self.log_cleaner is not None:
            await self.log_cleaner.stop()
        self.codec.shutdown()
        self.apis.close()
        await _cancelled(self._idle_task)
        await _cancelled(self._txn_task)
        await _cancelled(self._offsets_task)
        await _cancelled(self._checkpoint_task)
        if self.retention is not None:
            await self.retention.stop()
        if self._metrics_task is not None:
            await _cancelled(self._metrics_task)
            for line in self.stats.report():
                log.info("%s", line)
        for srv in self._servers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(srv.wait_closed(), 1)
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
        """Selector's idle expiry: abort connections idle for connections.max.idle.ms
        (nothing read or written; a response the client does not read makes no
        progress)."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(max(self.max_idle / 4, 0.05), 30.0))
            now = loop.time()
            for task, conn in list(self._connections.items()):
                if not conn.busy and now - conn.last_active > self.max_idle:
                    conn.last_active = float("inf")  # once
                    log.info("closing connection %s: idle for more than %d ms",
                             _peer(conn.writer), self.max_idle * 1000)
                    conn.abort()
                    task.cancel()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      sec: ListenerSecurity) -> None:
        task = asyncio.current_task()
        self._clients.add(task)
        loop = asyncio.get_running_loop()
        conn = self._connections[task] = _Connection(writer, loop.time())
        # FileRecords.writeTo over TLS (SslTransportLayer.transferFrom): read, then
        # encrypted and written; os.sendfile only on a plain socket
        conn.sendfile = sec.ssl_context is None
        writer.transport.set_write_buffer_limits(high=WRITE_HIGH_WATER)
        where = _peer(writer)
        peer = writer.get_extra_info("peername")
        client_host = f"/{peer[0]}" if isinstance(peer, tuple) else ""  # clientAddress
        session = Session(sec, peer, writer.get_extra_info("sockname"))

        def touch():
            conn.last_active = loop.time()

        ended = False
        try:
            if not await self._authenticate(session, reader, writer):
                return  # the client left during the SASL exchange (the finally closes)
            touch()
            while True:
                size = await read_frame_size(reader, self.max_request_size)
                if size is None:
                    break
                touch()
                out = await self._handle(conn, session, reader, size, client_host, touch)
                if isinstance(out, Request):  # a SaslHandshake: re-authentication
                    await self._reauthenticate(session, out, reader, writer)
                    touch()
                elif out is not None:
                    await self._write_response(conn, out, touch)
                    del out
                # one request per turn: reading a buffered request and writing into a
                # socket with room do not yield, so a client pipelining thousands of
                # requests would otherwise hold the loop until its socket filled
                await asyncio.sleep(0)
            ended = True
        except AuthenticationError as e:
            # a stop or the idle close cancels the delay: close without the answer
            with contextlib.suppress(asyncio.CancelledError):
                await self._failed_authentication(session, writer, where, e)
                ended = True  # close after the answer is flushed
        except InvalidRequest as e:
            self._connection_error(where, f"invalid request: {e}")
        except CloseConnection as e:
            self._connection_error(where, f"closing connection due to {e}")
        except IncompleteFrame as e:
            self._connection_error(where, str(e))
        except (ConnectionError, OSError, UnreadableError) as e:
            self._connection_error(where, f"{type(e).__name__}: {e}")
        except asyncio.CancelledError:
            pass  # stop() or the idle timer, which aborted the transport (streams' callback
            # would log a cancelled connection task as an error)
        except Exception as e:  # a bug: close this connection, keep serving the others
            self._connection_error(where, f"unexpected {type(e).__name__}: {e}")
            log.debug("traceback", exc_info=True)
        finally:
            # nothing awaited here: a cancelled connection must end at once
            self._clients.discard(task)
            self._connections.pop(task, None)
            transport = writer.transport
            if ended and not transport.get_write_buffer_size():
                transport.close()
            elif ended:  # the client closed its side: flush what is left, within a bound
                transport.close()
                loop.call_later(self.max_idle or STOP_WAIT_S, transport.abort)
            else:
                transport.abort()

    async def _write_response(self, conn: _Connection, parts: list, touch) -> None:
        """Write a response's parts, its bytes counted in the memory pool until written."""
        pool = self.memory_pool
        unsent = sum(len(p) for p in parts if not isinstance(p, DeferredBytes))
        pool.force_acquire(unsent)
        try:
            await self._write(conn, parts, touch)
        finally:
            pool.release(unsent)

    async def _handle(self, conn: _Connection, session: Session,
                      reader: asyncio.StreamReader, size: int, client_host: str,
                      touch) -> list | Request | None:
        """Read the body of a frame of ``size`` bytes, parse it, handle it and encode the
        answer, under the frame's :meth:`RequestMemoryPool.reservation`. Returns the
        response's parts (None: no response), or - a SaslHandshake starting a
        re-authentication (:meth:`_starts_reauthentication`) - the request, whose exchange
        the caller runs outside the reservation (the idle timer watching it).

        Raises:
            CloseConnection: the session expired (``connections.max.reauth.ms``).
        """
        pool = self.memory_pool
        reserved = pool.reservation(size)
        if not pool.try_acquire(reserved):
            await pool.acquire(reserved)
        try:
            frame = await read_frame_body(reader, size, touch)
            conn.busy = True
            request = await self._parse(frame)
            del frame
            held = size + request.elements * ELEMENT_BYTES
            if held > reserved:
                pool.force_acquire(held - reserved)
            else:
                pool.release(reserved - held)
            reserved = held
            request.client_host = client_host
            request.session = session
            if session.expires_at is not None and \
                    self._starts_reauthentication(session, request):
                return request
            result = await self.apis.handle(request)
            request.body = None  # the records: given back with the bytes
            if result is NO_RESPONSE:
                return None
            parts = response_parts(request, result.body, result.version,
                                   max_elements=INLINE_BUILD_ELEMENTS)
            if parts is None:
                parts = await self.codec.run(response_parts, request, result.body,
                                             result.version)
            return parts
        finally:
            pool.release(reserved)
            conn.busy = False
            touch()

    async def _parse(self, frame: bytes):
        """parse_request on the event loop while the frame is small and holds few
        elements, else on a codec thread (bounded by :data:`MAX_REQUEST_ELEMENTS`)."""
        if len(frame) <= INLINE_PARSE_BYTES:
            try:
                return parse_request(frame, INLINE_PARSE_ELEMENTS)
            except RequestTooManyElements as e:
                if e.bound >= MAX_REQUEST_ELEMENTS:
                    raise
        return await self.codec.run(parse_request, frame, MAX_REQUEST_ELEMENTS)

    async def _write(self, conn: _Connection, parts: list, touch) -> None:
        """Write a response's parts: bytes in :data:`WRITE_CHUNK` pieces, waiting for the
        transport's buffer to drain between them; records from their segment file."""
        writer = conn.writer
        for part in parts:
            if isinstance(part, DeferredBytes):
                await self._write_file(conn, part, touch)
                continue
            view = memoryview(part)
            for i in range(0, len(view), WRITE_CHUNK):
                writer.write(view[i:i + WRITE_CHUNK])
                await writer.drain()
                touch()

    async def _write_file(self, conn: _Connection, part, touch) -> None:
        """A FileSlice's bytes: ``loop.sendfile`` without its fallback (``os.sendfile``
        from the file at explicit offsets, shared file objects safe), else - a transport
        that cannot (TLS) - read (``os.pread``) and written in pieces.

        Raises:
            UnreadableError: the file holds fewer bytes than the slice.
        """
        loop = asyncio.get_running_loop()
        writer = conn.writer
        sent, total = 0, len(part)
        while sent < total:
            n = min(SENDFILE_CHUNK, total - sent)
            if writer.transport.is_closing():
                raise ConnectionResetError("the connection was closed")
            if conn.sendfile:
                try:
                    done = await loop.sendfile(writer.transport, part.file,
                                               part.position + sent, n, fallback=False)
                except (RuntimeError, NotImplementedError):  # SendfileNotAvailableError too
                    if writer.transport.is_closing():
                        raise ConnectionResetError("the connection was closed") from None
                    conn.sendfile = False
                    continue
                if done != n:
                    raise UnreadableError(f"the file ends inside a fetched range ({done} of "
                                          f"{n} bytes sent)", file=part.segment.log_path)
            else:  # the bytes read are counted in the pool until written
                self.memory_pool.force_acquire(n)
                try:
                    writer.write(part.read(sent, n))
                    await writer.drain()
                finally:
                    self.memory_pool.release(n)
            sent += n
            touch()

    async def _authenticate(self, session: Session, reader, writer) -> bool:
        """The connection's principal: the client certificate's on SSL, the SASL
        exchange's on SASL listeners (ANONYMOUS otherwise). False: the client closed the
        connection during the SASL exchange.

        Raises:
            AuthenticationError: answer after the failure delay, then close.
            CloseConnection: a certificate no ``ssl.principal.mapping.rules`` rule maps.
        """
        sec = session.security
        if sec.ssl_context is not None and not sec.uses_sasl:
            from .security.ssl_factory import ssl_principal

            try:
                session.principal = ssl_principal(writer.get_extra_info("ssl_object"),
                                                  sec.principal_mapper)
            except ValueError as e:
                raise CloseConnection(f"SSL principal mapping failed: {e}") from None
        if sec.uses_sasl:
            return await SaslAuthenticator(session, self.apis.handle_api_versions).authenticate(
                reader, writer)
        return True

    @staticmethod
    def _starts_reauthentication(session: Session, request: Request) -> bool:
        """Before dispatch, on a session with a lifetime: True for a SaslHandshake that
        starts a re-authentication; any request after the session expired closes the
        connection (``KafkaChannel`` / ``SocketServer.Processor``).

        Raises:
            CloseConnection: the session expired.
        """
        now = asyncio.get_running_loop().time()
        if request.api_key == ApiKeys.SASL_HANDSHAKE and can_reauthenticate(session, now):
            return True
        if session.expired(now):
            raise CloseConnection(f"the session of {session.principal} expired "
                                  "(connections.max.reauth.ms) without re-authentication")
        return False

    async def _reauthenticate(self, session: Session, request: Request, reader,
                              writer) -> None:
        """The re-authentication ``request`` (a SaslHandshake) starts.

        Raises:
            AuthenticationError: answer after the failure delay, then close.
            CloseConnection: the client closed the connection during it.
        """
        if not await SaslAuthenticator(session, self.apis.handle_api_versions,
                                       reauth_of=session.mechanism).authenticate(
                reader, writer, first_request=request):
            raise CloseConnection("the client closed the connection during re-authentication")

    async def _failed_authentication(self, session: Session, writer, where: str,
                                     e: AuthenticationError) -> None:
        """``Selector``'s delayed close: wait ``connection.failed.authentication.delay.ms``,
        send the failure response (if any), close."""
        log.info("connection %s: failed authentication on listener %s: %s", where,
                 session.listener_name, e.message)
        delay = session.security.failed_auth_delay_ms / 1000
        if delay > 0:
            await asyncio.sleep(delay)
        if e.response is not None:
            with contextlib.suppress(ConnectionError, OSError):
                writer.write(e.response)
                await asyncio.wait_for(writer.drain(), 5)

    def _connection_error(self, where: str, message: str) -> None:
        self.connection_errors += 1
        log.warning("connection %s: %s", where, message)


def _listener_uri(host: str, port: int) -> str:
    """``PLAINTEXT://host:port`` (an IPv6 host in brackets): ``--listen`` as a listener."""
    return f"PLAINTEXT://{'[' + host + ']' if ':' in host else host}:{port}"


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
        lock=None, security_configs: dict | None = None, add_scram=()) -> None:
    """Serve in the foreground until SIGTERM or SIGINT, then close cleanly.

    ``server_configs``: topic config defaults; ``broker_configs``, ``security_configs``,
    ``add_scram``: see :class:`KafkaServer`;
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
                                        on_ready, broker_configs, security_configs, add_scram))
    finally:
        catalog.close(clean=False)  # a no-op after the clean close; else release the lock


async def _serve_until_signal(catalog, options, bind_host, metrics_interval, on_ready,
                              broker_configs, security_configs, add_scram):
    try:
        server = KafkaServer(catalog, options, bind_host=bind_host,
                             metrics_interval=metrics_interval, broker_configs=broker_configs,
                             security_configs=security_configs, add_scram=add_scram)
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
                 checkpoint_interval: float = CHECKPOINT_INTERVAL_S,
                 security_configs: dict | None = None, add_scram=()):
        self.checkpoint_interval = checkpoint_interval
        self.security_configs = security_configs
        self.add_scram = add_scram
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

    def listener_port(self, name: str) -> int:
        """The bound port of the listener ``name`` (upper case)."""
        for sec in self.server.security.listeners:
            if sec.listener.name == name:
                return sec.listener.endpoint.port
        raise KeyError(name)

    def start(self) -> ServerThread:
        catalog = _open(self.log_dir, self.options, self.server_configs)
        self._loop = asyncio.new_event_loop()
        try:
            self.server = KafkaServer(catalog, self.options,
                                      metrics_interval=self.metrics_interval,
                                      broker_configs=self.broker_configs,
                                      checkpoint_interval=self.checkpoint_interval,
                                      security_configs=self.security_configs,
                                      add_scram=self.add_scram)
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
