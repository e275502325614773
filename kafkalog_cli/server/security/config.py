"""The security configs serve takes in ``--config``, spelled and defaulted as Kafka 4.4's
``SocketServerConfigs``, ``BrokerSecurityConfigs``, ``SslConfigs``, ``SaslConfigs`` and
``StandardAuthorizer`` define them, and how a listener sees them: a
``listener.name.<listener>.<key>`` value overrides ``<key>`` for that listener
(``AbstractConfig.valuesWithPrefixOverride``), and the JAAS config of a SASL mechanism is
``listener.name.<listener>.<mechanism>.sasl.jaas.config``, else
``<mechanism>.sasl.jaas.config`` (``JaasContext.loadServerContext``).

Keys of type PASSWORD are secrets: :func:`is_sensitive` says which (also under a
listener or mechanism prefix); DescribeConfigs reports them with a null value, and no log
line or error message repeats their value.

Keys whose job serve has no way to do are refused with one line saying so (a Java class
to load, Kerberos); keys that do not apply to one node (inter-broker and controller
settings) are accepted and noted once at start-up.
"""

from __future__ import annotations

import re

# ConfigDef.Type codes (as configs.py's): BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST,
# CLASS, PASSWORD
_BOOLEAN, _STRING, _INT, _LONG, _LIST, _CLASS, _PASSWORD = 1, 2, 3, 5, 7, 8, 9

LISTENERS = "listeners"
ADVERTISED_LISTENERS = "advertised.listeners"
LISTENER_SECURITY_PROTOCOL_MAP = "listener.security.protocol.map"
CONTROLLER_LISTENER_NAMES = "controller.listener.names"

#: name -> (default as Kafka defines it, ConfigDef.Type code). Kafka 4.4.
SECURITY_CONFIGS: dict[str, tuple[str | None, int]] = {
    LISTENERS: ("PLAINTEXT://:9092", _STRING),
    ADVERTISED_LISTENERS: (None, _STRING),
    LISTENER_SECURITY_PROTOCOL_MAP: (
        "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT", _STRING),
    CONTROLLER_LISTENER_NAMES: (None, _STRING),
    "inter.broker.listener.name": (None, _STRING),
    "security.inter.broker.protocol": ("PLAINTEXT", _STRING),
    "early.start.listeners": (None, _STRING),
    "connections.max.reauth.ms": ("0", _LONG),
    "connection.failed.authentication.delay.ms": ("100", _INT),
    "sasl.server.max.receive.size": ("524288", _INT),
    "principal.builder.class":
        ("org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder", _CLASS),
    # TLS (SslConfigs, BrokerSecurityConfigs)
    "ssl.protocol": ("TLSv1.3", _STRING),
    "ssl.enabled.protocols": ("TLSv1.2,TLSv1.3", _LIST),
    "ssl.cipher.suites": ("", _LIST),
    "ssl.keystore.type": ("JKS", _STRING),
    "ssl.keystore.location": (None, _STRING),
    "ssl.keystore.password": (None, _PASSWORD),
    "ssl.key.password": (None, _PASSWORD),
    "ssl.keystore.key": (None, _PASSWORD),
    "ssl.keystore.certificate.chain": (None, _PASSWORD),
    "ssl.truststore.type": ("JKS", _STRING),
    "ssl.truststore.location": (None, _STRING),
    "ssl.truststore.password": (None, _PASSWORD),
    "ssl.truststore.certificates": (None, _PASSWORD),
    "ssl.client.auth": ("none", _STRING),
    "ssl.principal.mapping.rules": ("DEFAULT", _STRING),
    "ssl.endpoint.identification.algorithm": ("https", _STRING),
    "ssl.keymanager.algorithm": ("SunX509", _STRING),
    "ssl.trustmanager.algorithm": ("PKIX", _STRING),
    "ssl.secure.random.implementation": (None, _STRING),
    "ssl.provider": (None, _STRING),
    "ssl.engine.factory.class": (None, _CLASS),
    "ssl.allow.dn.changes": ("false", _BOOLEAN),
    "ssl.allow.san.changes": ("false", _BOOLEAN),
    # SASL (BrokerSecurityConfigs, SaslConfigs)
    "sasl.enabled.mechanisms": ("GSSAPI", _LIST),
    "sasl.mechanism.inter.broker.protocol": ("GSSAPI", _STRING),
    "sasl.mechanism.controller.protocol": ("GSSAPI", _STRING),
    "sasl.jaas.config": (None, _PASSWORD),
    "sasl.server.callback.handler.class": (None, _CLASS),
    "sasl.login.class": (None, _CLASS),
    "sasl.login.callback.handler.class": (None, _CLASS),
    "sasl.kerberos.service.name": (None, _STRING),
    "sasl.kerberos.principal.to.local.rules": ("DEFAULT", _LIST),
    # the authorizer (ServerConfigs, StandardAuthorizer)
    "authorizer.class.name": ("", _STRING),
    "super.users": (None, _STRING),
    "allow.everyone.if.no.acl.found": ("false", _BOOLEAN),
}

#: keys that need something serve cannot run (a Java class of the user's, Kerberos, a
#: JWKS endpoint): refused at start with this reason unless at their default
REFUSED = {
    "ssl.engine.factory.class": "serve builds its TLS context itself (PEM keystores); a "
                                "Java SslEngineFactory cannot be loaded",
    "sasl.server.callback.handler.class": "a Java callback handler cannot be loaded; PLAIN "
                                          "users come from the JAAS config, SCRAM "
                                          "credentials from __cluster_metadata",
    "sasl.login.class": "a Java login class cannot be loaded",
    "sasl.login.callback.handler.class": "a Java callback handler cannot be loaded",
    "ssl.provider": "serve uses OpenSSL through Python's ssl module",
}

#: keys that change nothing on one node: noted once at start-up
IGNORED = ("inter.broker.listener.name", "security.inter.broker.protocol",
           "sasl.mechanism.inter.broker.protocol", "sasl.mechanism.controller.protocol",
           "early.start.listeners", "ssl.endpoint.identification.algorithm",
           "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
           "ssl.secure.random.implementation", "ssl.allow.dn.changes", "ssl.allow.san.changes",
           "sasl.kerberos.service.name", "sasl.kerberos.principal.to.local.rules")

_LISTENER_PREFIX = re.compile(r"^listener\.name\.([^.]+)\.(.+)$")
#: ``<mechanism>.sasl.jaas.config`` / ``.connections.max.reauth.ms`` (a mechanism name in
#: lower case: plain, scram-sha-256, oauthbearer, gssapi)
_MECHANISM_KEY = re.compile(r"^([a-z0-9-]+)\.(sasl\.jaas\.config|connections\.max\.reauth\.ms"
                            r"|sasl\.server\.callback\.handler\.class|sasl\.login\.class"
                            r"|sasl\.login\.callback\.handler\.class)$")


def base_key(name: str) -> str:
    """The key without a ``listener.name.<l>.`` and a ``<mechanism>.`` prefix."""
    m = _LISTENER_PREFIX.match(name)
    if m:
        name = m.group(2)
    m = _MECHANISM_KEY.match(name)
    return m.group(2) if m else name


def is_security_config(name: str) -> bool:
    """A key of :data:`SECURITY_CONFIGS`, or one of them under a listener and / or
    mechanism prefix, or an OAUTHBEARER key."""
    key = base_key(name)
    return key in SECURITY_CONFIGS or key.startswith("sasl.oauthbearer.") or \
        key == "connections.max.reauth.ms"


def is_sensitive(name: str) -> bool:
    """A PASSWORD-type key (under any prefix): its value is never shown."""
    spec = SECURITY_CONFIGS.get(base_key(name))
    return spec is not None and spec[1] == _PASSWORD


def config_type(name: str) -> int:
    spec = SECURITY_CONFIGS.get(base_key(name))
    return spec[1] if spec else _STRING


def listener_prefix(listener: str) -> str:
    """``ListenerName.configPrefix``: ``listener.name.<name in lower case>.``."""
    return f"listener.name.{listener.lower()}."


def listener_configs(configs: dict[str, str], listener: str) -> dict[str, str]:
    """The configs one listener sees: every key, with ``listener.name.<listener>.<key>``
    overriding ``<key>`` (both spellings of mechanism-prefixed keys kept as
    ``<mechanism>.<key>``); other listeners' prefixed keys are left out."""
    prefix = listener_prefix(listener)
    out = {k: v for k, v in configs.items() if not k.startswith("listener.name.")}
    for k, v in configs.items():
        if k.startswith(prefix) and len(k) > len(prefix):
            out[k[len(prefix):]] = v
    return out


def effective(configs: dict[str, str], key: str) -> str | None:
    """A key's value in ``configs`` (a listener's view), else Kafka's default."""
    if key in configs:
        return configs[key]
    spec = SECURITY_CONFIGS.get(key)
    return spec[0] if spec else None


def parse_list(value: str | None) -> list[str]:
    """``ConfigDef.Type.LIST``: comma-separated, trimmed; empty -> []."""
    v = (value or "").strip()
    return [p.strip() for p in v.split(",")] if v else []
