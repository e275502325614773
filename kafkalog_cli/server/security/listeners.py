"""Listeners as a broker configures them (``SocketServerConfigs.listenerListToEndPoints``,
``KafkaConfig.listeners`` / ``effectiveAdvertisedBrokerListeners`` and their checks)::

    listeners=PLAINTEXT://127.0.0.1:9092,SASL_SSL://0.0.0.0:9094,INTERNAL://[::1]:0
    listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT,...   (added to the defaults)
    advertised.listeners=SASL_SSL://kafka.example.com:9094,...   (default: listeners)

A listener's name is upper-cased (``ListenerName.normalised``); its security protocol comes
from the map (by default each protocol maps its own name); an empty host binds every
interface; port 0 binds a free port, which is also what it advertises unless
``advertised.listeners`` names another. Listeners named in ``controller.listener.names``
are a KRaft controller's: serve does not open them (noted at start-up).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...errors import SecurityConfigError
from . import config as sc

PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL = "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"
SECURITY_PROTOCOLS = (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)

_URI = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")


@dataclass
class EndPoint:
    """``Endpoint``: listener name, security protocol, host (None: every interface), port."""

    listener: str
    security_protocol: str
    host: str | None
    port: int

    def uses_tls(self) -> bool:
        return self.security_protocol in (SSL, SASL_SSL)

    def uses_sasl(self) -> bool:
        return self.security_protocol in (SASL_PLAINTEXT, SASL_SSL)


@dataclass
class Listener:
    """One listener serve opens: where it binds, what it advertises (port 0: the bound
    port) and the configs it sees (:func:`.config.listener_configs`)."""

    endpoint: EndPoint
    advertised_host: str
    advertised_port: int
    configs: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.endpoint.listener

    @property
    def security_protocol(self) -> str:
        return self.endpoint.security_protocol

    def __str__(self) -> str:
        host = self.endpoint.host or ""
        if ":" in host:
            host = f"[{host}]"
        return f"{self.name}://{host}:{self.endpoint.port}"


def _csv(value: str) -> list[str]:
    """``Csv.parseCsvList``: split at commas, trimmed, empty entries dropped."""
    return [p.strip() for p in value.split(",") if p.strip()]


def protocol_map(value: str | None, controller_names=()) -> dict[str, str]:
    """``listener.security.protocol.map`` (``Csv.parseCsvMap``: ``NAME:PROTOCOL``, split at
    the last colon), names upper-cased; controller listener names missing from it map to
    PLAINTEXT (``effectiveListenerSecurityProtocolMap``).

    Raises:
        SecurityConfigError: an entry without a colon or with an unknown protocol.
    """
    out: dict[str, str] = {}
    text = value if value is not None else sc.SECURITY_CONFIGS[sc.LISTENER_SECURITY_PROTOCOL_MAP][0]
    for entry in _csv(text):
        name, sep, proto = entry.rpartition(":")
        if not sep or not name.strip():
            raise SecurityConfigError(f"Error parsing configuration property "
                                      f"'{sc.LISTENER_SECURITY_PROTOCOL_MAP}': Map entry "
                                      f"'{entry}' is improperly formatted",
                                      sc.LISTENER_SECURITY_PROTOCOL_MAP)
        proto = proto.strip().upper()
        if proto not in SECURITY_PROTOCOLS:
            raise SecurityConfigError(f"Invalid value {entry} for configuration "
                                      f"{sc.LISTENER_SECURITY_PROTOCOL_MAP}: No enum constant "
                                      f"org.apache.kafka.common.security.auth.SecurityProtocol."
                                      f"{proto}", sc.LISTENER_SECURITY_PROTOCOL_MAP)
        out[name.strip().upper()] = proto
    for name in controller_names:
        out.setdefault(name.upper(), PLAINTEXT)
    return out


def parse_endpoints(value: str, protocols: dict[str, str], key: str = sc.LISTENERS, *,
                    distinct: bool = True) -> list[EndPoint]:
    """``listenerListToEndPoints`` and ``CoreUtils``' checks (distinct names; distinct
    ports, port 0 excepted, unless one listener is IPv4 and the other IPv6).

    Raises:
        SecurityConfigError: an entry that does not parse, a listener without a protocol,
            a port outside 0..65535, a duplicate name or port (Kafka's messages).
    """
    endpoints = []
    for entry in _csv(value.strip()):
        m = _URI.match(entry)
        if m is None or m.end() != len(entry):
            raise SecurityConfigError(f"Error creating broker listeners from '{value}': Unable "
                                      f"to parse {entry} to a broker endpoint", key)
        name = m.group(1).upper()
        proto = protocols.get(name)
        if proto is None:
            raise SecurityConfigError(f"Error creating broker listeners from '{value}': No "
                                      f"security protocol defined for listener {name}", key)
        port = int(m.group(3))
        if not 0 <= port <= 65535:
            raise SecurityConfigError(f"{key}: port {port} of {name} is out of range", key)
        endpoints.append(EndPoint(name, proto, m.group(2) or None, port))
    if distinct:
        names = [e.listener for e in endpoints]
        if len(set(names)) != len(names):
            raise SecurityConfigError(f"Each listener must have a different name unless you "
                                      f"have exactly one listener on IPv4 and the other IPv6 "
                                      f"on the same port, listeners: {value}", key)
        by_port: dict[int, list[EndPoint]] = {}
        for e in endpoints:
            if e.port:
                by_port.setdefault(e.port, []).append(e)
        for port, same in by_port.items():
            if len(same) > 1 and not (len(same) == 2 and _one_ipv4_one_ipv6(*same)):
                raise SecurityConfigError(f"Each listener must have a different port unless "
                                          f"exactly one listener has an IPv4 address and the "
                                          f"other IPv6 address, listeners: {value}, port: "
                                          f"{port}", key)
    return endpoints


def _one_ipv4_one_ipv6(a: EndPoint, b: EndPoint) -> bool:
    import ipaddress

    try:
        va = ipaddress.ip_address(a.host or "").version
        vb = ipaddress.ip_address(b.host or "").version
    except ValueError:
        return False
    return {va, vb} == {4, 6}


def listeners_of(configs: dict[str, str], *, default_listeners: str,
                 advertised_host: str | None = None) -> tuple[list[Listener], list[str]]:
    """The listeners to open from the security configs (``listeners``: else
    ``default_listeners``, serve's ``--listen`` as ``PLAINTEXT://host:port``), and the
    names of the controller listeners left out.

    Raises:
        SecurityConfigError: see :func:`parse_endpoints`; advertised listener names that
            are not listeners; an advertised 0.0.0.0; no listener left.
    """
    controllers = [n.strip().upper() for n in
                   (configs.get(sc.CONTROLLER_LISTENER_NAMES) or "").split(",") if n.strip()]
    protocols = protocol_map(configs.get(sc.LISTENER_SECURITY_PROTOCOL_MAP), controllers)
    endpoints = parse_endpoints(configs.get(sc.LISTENERS) or default_listeners, protocols)
    advertised_value = configs.get(sc.ADVERTISED_LISTENERS)
    advertised = {e.listener: e for e in (
        parse_endpoints(advertised_value, protocols, sc.ADVERTISED_LISTENERS, distinct=False)
        if advertised_value else ())}
    names = {e.listener for e in endpoints}
    if not set(advertised) <= names:
        raise SecurityConfigError(
            f"{sc.ADVERTISED_LISTENERS} listener names must be equal to or a subset of the "
            f"ones defined in {sc.LISTENERS}. Found {','.join(advertised)}. The valid options "
            f"based on the current configuration are {','.join(sorted(names))}",
            sc.ADVERTISED_LISTENERS)
    if any(e.host == "0.0.0.0" for e in advertised.values()):
        raise SecurityConfigError(f"{sc.ADVERTISED_LISTENERS} cannot use the nonroutable "
                                  "meta-address 0.0.0.0. Use a routable IP address.",
                                  sc.ADVERTISED_LISTENERS)
    out = []
    skipped = []
    for e in endpoints:
        if e.listener in controllers:
            skipped.append(e.listener)
            continue
        adv = advertised.get(e.listener)
        if adv is not None:
            host, port = adv.host, adv.port
        else:
            host, port = e.host, e.port
            if advertised_host is not None:
                host = advertised_host
        if not host or host in ("0.0.0.0", "::"):
            host = _canonical_host()
        out.append(Listener(e, host, port, sc.listener_configs(configs, e.listener)))
    if not out:
        raise SecurityConfigError(f"{sc.LISTENERS}: no listener to serve on (every one is a "
                                  f"controller listener)", sc.LISTENERS)
    return out, skipped


def _canonical_host() -> str:
    """``InetAddress.getLocalHost.getCanonicalHostName``: what a broker advertises for a
    listener bound to every interface."""
    import socket

    return socket.getfqdn()
