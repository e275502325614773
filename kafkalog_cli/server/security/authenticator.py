"""A connection's authentication, after Kafka's ``SaslServerAuthenticator`` (with the parts
of ``KafkaChannel``, ``Selector`` and ``SocketServer.Processor`` around it) and
``DefaultKafkaPrincipalBuilder``.

Every connection has a :class:`Session`: its listener, its principal and the client's
address. On PLAINTEXT the principal is ``User:ANONYMOUS``; on SSL the client certificate's
mapped subject (or ANONYMOUS); on SASL_PLAINTEXT and SASL_SSL the connection first runs the
SASL exchange (:class:`SaslAuthenticator`), as the broker's state machine does:

* before the handshake only ApiVersions (answered as usual, once) and SaslHandshake
  (v0-1) are taken; anything else fails the authentication;
* SaslHandshake names a mechanism of ``sasl.enabled.mechanisms`` (else
  UNSUPPORTED_SASL_MECHANISM, listing the enabled ones); v1 means the tokens come in
  SaslAuthenticate requests (v0-2), v0 that they come as bare size-prefixed frames;
* the mechanism's server (:mod:`.plain`, :mod:`.scram`, :mod:`.oauthbearer`) evaluates each
  token; SaslAuthenticate answers NONE with the server's bytes and, once complete,
  ``sessionLifetimeMs`` (``connections.max.reauth.ms`` for the mechanism, 0: none), or
  SASL_AUTHENTICATION_FAILED with the mechanism's message (for bad credentials, the
  generic "Authentication failed during authentication due to invalid credentials with
  SASL mechanism ...");
* a failed authentication is answered and the connection closed after
  ``connection.failed.authentication.delay.ms`` (100), so a client cannot try passwords
  quickly; a frame larger than ``sasl.server.max.receive.size`` (512 KiB) fails it too.

Once authenticated with a session lifetime, a SaslHandshake starts a re-authentication
(at most one a second; same mechanism, same principal, else it fails), and any other
request after the session expired closes the connection (``KafkaChannel``'s expired
session). Without a lifetime a later SaslHandshake is an ordinary request: KafkaApis
answers ILLEGAL_SASL_STATE.
"""

from __future__ import annotations

import asyncio
import logging
import struct
import time
from dataclasses import dataclass, field

from ...errors import (
    AuthenticationError,
    CloseConnection,
    InvalidRequest,
    SaslError,
    SecurityConfigError,
)
from ...protocol.apis import ApiKeys
from ...protocol.errors import Errors
from ...protocol.wire import build_response, parse_request, read_frame_body, read_frame_size
from .acls import ANONYMOUS, KafkaPrincipal, java_host_address
from .config import effective, parse_list
from .jaas import LoginModule, parse_jaas_config
from .java_order import hash_set_from_collection_capacity, java_order
from .listeners import Listener
from .plain import PLAIN, PlainSaslServer
from .scram import MECHANISM_NAMES, ScramMechanism, ScramSaslServer

log = logging.getLogger("kafkalog.serve")

OAUTHBEARER = "OAUTHBEARER"
GSSAPI = "GSSAPI"
SUPPORTED_MECHANISMS = (PLAIN, *MECHANISM_NAMES, OAUTHBEARER)
#: KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS
MIN_REAUTH_INTERVAL_S = 1.0
_KEY = struct.Struct(">h")
_SIZE = struct.Struct(">i")
#: the most array elements and tagged fields a request of the SASL exchange (ApiVersions,
#: SaslHandshake, SaslAuthenticate: a few each) may hold; more closes the connection, as
#: after authentication (the server's element bound), parsed on the event loop in ms
MAX_ELEMENTS = 2048
#: the API keys Kafka 4.4 knows (``ApiKeys.forId``); another key is not a Kafka request
_MAX_KAFKA_API_KEY = 92


@dataclass
class ListenerSecurity:
    """What a listener needs to authenticate its connections (built once at start by
    :func:`listener_security`)."""

    listener: Listener
    ssl_context: object | None = None
    principal_mapper: object | None = None
    #: enabled SASL mechanisms, in the order SaslHandshake lists them
    mechanisms: list[str] = field(default_factory=list)
    jaas: dict[str, list[LoginModule]] = field(default_factory=dict, repr=False)
    reauth_ms: dict[str, int] = field(default_factory=dict)
    failed_auth_delay_ms: int = 100
    max_receive_size: int = 524288
    #: ``(user, ScramMechanism) -> ScramCredential | None``
    credentials: object = None
    #: lines for the start-up log (where serve reads a config differently from a broker)
    notes: list[str] = field(default_factory=list)

    @property
    def uses_sasl(self) -> bool:
        return self.listener.endpoint.uses_sasl()

    def sasl_server(self, mechanism: str):
        if mechanism == PLAIN:
            return PlainSaslServer(self.jaas.get(PLAIN, []))
        scram = ScramMechanism.for_name(mechanism)
        if scram is not None:
            return ScramSaslServer(scram, self.credentials)
        if mechanism == OAUTHBEARER:
            from .oauthbearer import OAuthBearerSaslServer

            return OAuthBearerSaslServer(self.jaas.get(OAUTHBEARER, []))
        raise SaslError(f"no SASL server for {mechanism}")


def listener_security(listener: Listener, credentials) -> ListenerSecurity:
    """The authentication set-up of one listener from the configs it sees.

    Raises:
        SecurityConfigError: TLS that does not load (:mod:`.ssl_factory`); a SASL listener
            whose ``sasl.enabled.mechanisms`` is empty, names GSSAPI (Kerberos is not
            supported) or an unknown mechanism; PLAIN without a PlainLoginModule JAAS
            config; a bad JAAS config or ``ssl.principal.mapping.rules``; a bad number.
    """
    from .ssl_factory import SslPrincipalMapper, create_server_context

    cfg = listener.configs
    sec = ListenerSecurity(listener, credentials=credentials)
    sec.principal_mapper = SslPrincipalMapper(effective(cfg, "ssl.principal.mapping.rules"))
    if listener.endpoint.uses_tls():
        sec.ssl_context = create_server_context(cfg, listener.name)
    sec.failed_auth_delay_ms = _int(cfg, "connection.failed.authentication.delay.ms", 0)
    sec.max_receive_size = _int(cfg, "sasl.server.max.receive.size", 1)
    if not sec.uses_sasl:
        return sec
    mechanisms = parse_list(effective(cfg, "sasl.enabled.mechanisms"))
    where = f"listener {listener.name}"
    if not mechanisms:
        raise SecurityConfigError(f"{where}: sasl.enabled.mechanisms is empty: No SASL "
                                  "mechanisms are enabled", "sasl.enabled.mechanisms")
    for m in mechanisms:
        if m == GSSAPI:
            raise SecurityConfigError(
                f"{where}: sasl.enabled.mechanisms names GSSAPI (the broker's default): "
                "Kerberos is not supported by kafkalog serve; set sasl.enabled.mechanisms to "
                "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and/or OAUTHBEARER",
                "sasl.enabled.mechanisms")
        if m not in SUPPORTED_MECHANISMS:
            raise SecurityConfigError(f"{where}: sasl.enabled.mechanisms: unknown SASL "
                                      f"mechanism {m}", "sasl.enabled.mechanisms")
    sec.mechanisms = java_order(mechanisms, hash_set_from_collection_capacity(len(mechanisms)))
    for m in sec.mechanisms:
        key = f"{m.lower()}.sasl.jaas.config"
        text = cfg.get(key)
        if text is None and cfg.get("sasl.jaas.config") is not None:
            # a broker ignores it (with a warning); serve uses it: see docs/serve.md
            key, text = "sasl.jaas.config", cfg["sasl.jaas.config"]
            sec.notes.append(f"{where}: {m} uses the unprefixed sasl.jaas.config (a broker "
                             f"ignores it: it reads {m.lower()}.sasl.jaas.config, "
                             f"listener-prefixed or not)")
        if text is not None:
            sec.jaas[m] = parse_jaas_config(text, f"{where}: {key}")
        elif m in (PLAIN, OAUTHBEARER):
            raise SecurityConfigError(
                f"{where}: {m} needs a JAAS config: listener.name.{listener.name.lower()}."
                f"{m.lower()}.sasl.jaas.config (or {m.lower()}.sasl.jaas.config)", key)
        reauth = cfg.get(f"{m.lower()}.connections.max.reauth.ms",
                         effective(cfg, "connections.max.reauth.ms"))
        try:
            sec.reauth_ms[m] = int(reauth)
        except ValueError:
            raise SecurityConfigError(f"{where}: connections.max.reauth.ms must be a number",
                                      "connections.max.reauth.ms") from None
    return sec


def _int(cfg: dict, key: str, lo: int) -> int:
    try:
        n = int(str(effective(cfg, key)).strip())
    except ValueError:
        raise SecurityConfigError(f"Invalid value for configuration {key}: Not a number of "
                                  "type INT", key) from None
    if n < lo:
        raise SecurityConfigError(f"Invalid value {n} for configuration {key}: Value must be "
                                  f"at least {lo}", key)
    return n


class Session:
    """A connection's security state (the parts of ``KafkaChannel`` and ``Session`` the
    request handlers see): listener, principal, client address (as Java prints it, the
    authorizer's host), SASL mechanism and session expiry (loop time, or None)."""

    __slots__ = ("security", "principal", "client_address", "mechanism", "expires_at",
                 "reauth_started", "connection_id")

    def __init__(self, security: ListenerSecurity, peer, local=None):
        self.security = security
        self.principal: KafkaPrincipal = ANONYMOUS
        host = peer[0] if isinstance(peer, tuple) else ""
        self.client_address = java_host_address(host) if host else ""
        self.mechanism: str | None = None
        self.expires_at: float | None = None
        self.reauth_started = 0.0
        self.connection_id = _connection_id(local, peer)

    @property
    def listener(self) -> Listener:
        return self.security.listener

    @property
    def listener_name(self) -> str:
        return self.security.listener.name

    @property
    def advertised(self) -> tuple[str, int]:
        lis = self.security.listener
        return lis.advertised_host, lis.advertised_port

    def expired(self, now: float) -> bool:
        """``serverAuthenticationSessionExpired``."""
        return self.expires_at is not None and now > self.expires_at

    def describe(self) -> str:
        """``RequestChannel.Request.toString``'s session part, for CLUSTER_AUTHORIZATION
        messages: ``Session(User:alice,/127.0.0.1)``."""
        return f"Session({self.principal},/{self.client_address})"


def _connection_id(local, peer) -> str:
    def hp(a):
        return f"{a[0]}:{a[1]}" if isinstance(a, tuple) else "?"
    return f"{hp(local)}-{hp(peer)}-0"


class SaslAuthenticator:
    """Drives one SASL exchange over a connection (see the module docstring).

    ``api_versions(request) -> response body`` answers an ApiVersions request as the
    server does. :meth:`authenticate` returns when the client is authenticated or gone; it
    raises :class:`~kafkalog_cli.errors.AuthenticationError` (answer ``.response`` after
    the failure delay, then close) or ``InvalidRequest`` / ``IncompleteFrame`` /
    ``CloseConnection`` (close now).
    """

    def __init__(self, session: Session, api_versions, *, reauth_of: str | None = None):
        self.session = session
        self.security = session.security
        self.api_versions = api_versions
        self.state = "REAUTH_PROCESS_HANDSHAKE" if reauth_of else "INITIAL_REQUEST"
        self.previous_mechanism = reauth_of
        self.headers = False
        self.server = None
        self.bad_mechanism: str | None = None
        self.connected_client_supports_reauth = False

    @property
    def _text(self) -> str:
        return "re-authentication" if self.previous_mechanism else "authentication"

    async def _read(self, reader) -> bytes | None:
        try:
            size = await read_frame_size(reader, self.security.max_receive_size)
        except InvalidRequest:
            raise AuthenticationError("Failing SASL authentication due to invalid receive "
                                      "size") from None
        if size is None:
            return None
        return await read_frame_body(reader, size)

    async def authenticate(self, reader, writer, first_request=None) -> bool:
        """Run the exchange until the client is authenticated (True) or closes the
        connection between frames (False). ``first_request``: the parsed SaslHandshake
        that started a re-authentication."""
        if first_request is not None:
            await self._kafka_request(None, writer, first_request)
        while self.state != "COMPLETE":
            frame = await self._read(reader)
            if frame is None:
                return False
            if self.state in ("INITIAL_REQUEST", "HANDSHAKE_OR_VERSIONS_REQUEST",
                              "HANDSHAKE_REQUEST", "REAUTH_PROCESS_HANDSHAKE"):
                await self._kafka_request(frame, writer)
            elif self.state == "REAUTH_BAD_MECHANISM":
                raise AuthenticationError(self.bad_mechanism)
            elif self.state == "AUTHENTICATE":
                await self._sasl_token(frame, writer)
            else:
                raise CloseConnection(f"unexpected SASL state {self.state}")
        return True

    async def _send(self, writer, data: bytes) -> None:
        writer.write(data)
        await writer.drain()

    async def _kafka_request(self, frame: bytes | None, writer, request=None) -> None:
        if request is None:
            key = _KEY.unpack_from(frame, 0)[0] if len(frame) >= 2 else -1
            if not 0 <= key <= _MAX_KAFKA_API_KEY:
                if self.state == "INITIAL_REQUEST":
                    raise AuthenticationError("Exception handling first SASL packet from "
                                              "client, GSSAPI is not supported by server")
                raise InvalidRequest(f"Unknown API key {key}")
            if self.state == "INITIAL_REQUEST":
                self.state = "HANDSHAKE_OR_VERSIONS_REQUEST"
            if key not in (ApiKeys.API_VERSIONS, ApiKeys.SASL_HANDSHAKE):
                raise AuthenticationError(f"Unexpected Kafka request of type "
                                          f"{_api_name(key)} during SASL handshake.",
                                          Errors.ILLEGAL_SASL_STATE)
            request = parse_request(frame, MAX_ELEMENTS)
        if request.api_key == ApiKeys.API_VERSIONS:
            if self.state != "HANDSHAKE_OR_VERSIONS_REQUEST":
                raise CloseConnection("Unexpected ApiVersions request received during SASL "
                                      f"authentication state {self.state}")
            reply = self.api_versions(request)
            await self._send(writer, build_response(request, reply.body, reply.version))
            if reply.body["errorCode"] == 0:
                self.state = "HANDSHAKE_REQUEST"
            return
        mechanism = request.body["mechanism"]
        if request.api_version >= 1:
            self.headers = True
        enabled = self.security.mechanisms
        if mechanism not in enabled:
            e = AuthenticationError(f"Unsupported SASL mechanism {mechanism}",
                                    Errors.UNSUPPORTED_SASL_MECHANISM)
            e.response = build_response(request, {
                "errorCode": int(Errors.UNSUPPORTED_SASL_MECHANISM), "mechanisms": enabled})
            raise e
        await self._send(writer, build_response(request, {"errorCode": 0,
                                                          "mechanisms": enabled}))
        if self.previous_mechanism is not None and mechanism != self.previous_mechanism:
            self.bad_mechanism = (f"SASL mechanism '{mechanism}' requested by client is not "
                                  f"supported for re-authentication of mechanism "
                                  f"'{self.previous_mechanism}'")
            self.state = "REAUTH_BAD_MECHANISM"
            return
        self.server = self.security.sasl_server(mechanism)
        self.session.mechanism = mechanism if self.previous_mechanism is None else \
            self.session.mechanism
        self._mechanism = mechanism
        self.state = "AUTHENTICATE"

    def _generic_failure(self) -> str:
        return (f"Authentication failed during {self._text} due to invalid credentials with "
                f"SASL mechanism {self._mechanism}")

    async def _sasl_token(self, frame: bytes, writer) -> None:
        if not self.headers:
            try:
                response = self.server.evaluate(frame)
            except SaslError as e:
                log.debug("SASL %s failed: %s", self._mechanism, e.message)
                raise CloseConnection(self._generic_failure()) from None
            if self.server.complete:
                self._complete()
            await self._send(writer, _SIZE.pack(len(response)) + response)
            return
        key = _KEY.unpack_from(frame, 0)[0] if len(frame) >= 2 else -1
        request = parse_request(frame, MAX_ELEMENTS)
        if request.api_key != ApiKeys.SASL_AUTHENTICATE:
            e = AuthenticationError(f"Unexpected Kafka request of type {_api_name(key)} "
                                    "during SASL authentication.", Errors.ILLEGAL_SASL_STATE)
            e.response = _illegal_state_response(request)
            raise e
        if request.api_version > 0:
            self.connected_client_supports_reauth = True
        try:
            token = self.server.evaluate(bytes(request.body["authBytes"]))
            lifetime = self._complete() if self.server.complete else 0
        except AuthenticationError as e:
            e.response = build_response(request, _auth_failed(e.message))
            raise
        except SaslError as e:
            log.debug("SASL %s failed: %s", self._mechanism, e.message)
            message = self._generic_failure()
            err = AuthenticationError(message)
            err.response = build_response(request, _auth_failed(message))
            raise err from None
        await self._send(writer, build_response(request, {
            "errorCode": 0, "errorMessage": "", "authBytes": token or b"",
            "sessionLifetimeMs": lifetime}))

    def _complete(self) -> int:
        """The principal, re-authentication checks and the session's lifetime (ms)."""
        principal = KafkaPrincipal("User", self.server.authorization_id)
        session = self.session
        if self.previous_mechanism is not None and principal != session.principal:
            old = session.principal
            raise AuthenticationError(
                f"Cannot change principals during re-authentication from "
                f"{old.principal_type}.{old.name}: {principal.principal_type}.{principal.name}")
        session.principal = principal
        now_ms = int(time.time() * 1000)
        expiry = self.server.credential_expiration_ms
        max_reauth = self.security.reauth_ms.get(self._mechanism, 0)
        lifetime = 0
        if expiry is not None or max_reauth > 0:
            if expiry is None:
                lifetime = max(0, max_reauth)
            elif max_reauth <= 0:
                lifetime = max(0, expiry - now_ms)
            else:
                lifetime = max(0, min(expiry - now_ms, max_reauth))
            session.expires_at = asyncio.get_running_loop().time() + lifetime / 1000
        else:
            session.expires_at = None
        self.state = "COMPLETE"
        return lifetime


def _auth_failed(message: str) -> dict:
    return {"errorCode": int(Errors.SASL_AUTHENTICATION_FAILED), "errorMessage": message,
            "authBytes": b"", "sessionLifetimeMs": 0}


def _illegal_state_response(request) -> bytes | None:
    """``request.getErrorResponse(IllegalSaslStateException)`` for the requests whose error
    response is simple; None (close without an answer) for the others."""
    if request.api_key == ApiKeys.API_VERSIONS:
        body = {"errorCode": int(Errors.ILLEGAL_SASL_STATE), "apiKeys": [], "throttleTimeMs": 0}
    elif request.api_key == ApiKeys.SASL_HANDSHAKE:
        body = {"errorCode": int(Errors.ILLEGAL_SASL_STATE), "mechanisms": []}
    else:
        return None
    return build_response(request, body)


def _api_name(key: int) -> str:
    try:
        return ApiKeys(key).name
    except ValueError:
        return str(key)


def can_reauthenticate(session: Session, now: float) -> bool:
    """``KafkaChannel.maybeBeginServerReauthentication``: a session with a lifetime, and
    no re-authentication started less than a second ago."""
    if session.expires_at is None:
        return False
    if session.reauth_started and now - session.reauth_started < MIN_REAUTH_INTERVAL_S:
        return False
    session.reauth_started = now
    return True
