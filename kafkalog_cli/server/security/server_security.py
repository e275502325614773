"""The server's security, assembled from its configs: the listeners with their TLS and SASL
set-up, the authorizer (``authorizer.class.name``), the ACLs and SCRAM credentials of
``__cluster_metadata`` and the handlers of the security APIs. One object per server
(:class:`ServerSecurity`); the request handlers ask it through ``auth``
(:class:`~.authorizer.AuthHelper`).
"""

from __future__ import annotations

import logging

from ...errors import SecurityConfigError
from ...protocol.apis import ApiKeys
from ...protocol.errors import Errors
from . import config as sc
from .acl_apis import AclApis
from .authenticator import ListenerSecurity, listener_security
from .authorizer import (
    ALLOW_EVERYONE_CONFIG,
    STANDARD_AUTHORIZER,
    SUPER_USERS_CONFIG,
    AuthHelper,
    StandardAuthorizer,
)
from .listeners import Listener
from .metadata_log import USER_SCRAM_CREDENTIAL, ClusterMetadataLog
from .scram import ScramCredential, ScramMechanism, ScramUser
from .scram_apis import ScramApis

log = logging.getLogger("kafkalog.serve")

AUTHORIZER_CLASS_NAME = "authorizer.class.name"
#: ZooKeeper's authorizer, gone with ZooKeeper in Kafka 4.0
_ZK_AUTHORIZER = "kafka.security.authorizer.AclAuthorizer"


def authorizer_from_configs(configs: dict[str, str]) -> StandardAuthorizer | None:
    """The authorizer ``authorizer.class.name`` names (empty: none).

    Raises:
        SecurityConfigError: another class, or a ``super.users`` entry that is not
            ``type:name``.
    """
    name = (configs.get(AUTHORIZER_CLASS_NAME) or "").strip()
    if not name:
        return None
    if name != STANDARD_AUTHORIZER:
        why = ("it was ZooKeeper's and went with ZooKeeper in Kafka 4.0"
               if name == _ZK_AUTHORIZER else "serve cannot load a Java class")
        raise SecurityConfigError(f"{AUTHORIZER_CLASS_NAME}={name} is not supported ({why}); "
                                  f"serve runs {STANDARD_AUTHORIZER}", AUTHORIZER_CLASS_NAME)
    try:
        return StandardAuthorizer.from_configs({
            SUPER_USERS_CONFIG: configs.get(SUPER_USERS_CONFIG),
            ALLOW_EVERYONE_CONFIG: configs.get(ALLOW_EVERYONE_CONFIG, "false")})
    except ValueError as e:
        raise SecurityConfigError(f"{SUPER_USERS_CONFIG}: {e}", SUPER_USERS_CONFIG) from None


def check_configs(configs: dict[str, str]) -> list[str]:
    """Refuse the keys serve cannot honour (:data:`.config.REFUSED`, a principal builder
    other than Kafka's default, secured OAUTHBEARER) and return the notes for keys that
    change nothing on one node.

    Raises:
        SecurityConfigError: the first refused key.
    """
    notes = []
    for key, value in configs.items():
        base = sc.base_key(key)
        if base in sc.REFUSED and value.strip():
            raise SecurityConfigError(f"{key} is not supported: {sc.REFUSED[base]}", key)
        if base == "principal.builder.class" and value.strip() != sc.SECURITY_CONFIGS[base][0]:
            raise SecurityConfigError(f"{key}={value} is not supported: serve builds principals "
                                      "as DefaultKafkaPrincipalBuilder does", key)
        if base.startswith("sasl.oauthbearer.") and value.strip():
            raise SecurityConfigError(f"{key} is not supported: serve validates unsecured "
                                      "OAUTHBEARER tokens only (no JWKS endpoint)", key)
        if base in sc.IGNORED:
            notes.append(f"{key} is ignored: it does not apply to a single node")
    return notes


def validate_configs(configs: dict[str, str], listeners: list[Listener]) -> None:
    """Everything :class:`ServerSecurity` refuses, checked without a log directory (so
    ``serve`` refuses a bad config before it locks or recovers the directory): the keys,
    the authorizer, each listener's TLS context and SASL set-up.

    Raises:
        SecurityConfigError: the first problem.
    """
    check_configs(configs)
    authorizer_from_configs(configs)
    for lis in listeners:
        listener_security(lis, None)


class ServerSecurity:
    """The security of one server over ``catalog`` (see the module docstring).

    ``configs``: the security keys of ``--config``; ``listeners``: the parsed listeners.

    Raises (constructor):
        SecurityConfigError: see :func:`authorizer_from_configs`, :func:`check_configs` and
            :func:`~.authenticator.listener_security`.
    """

    def __init__(self, catalog, configs: dict[str, str], listeners: list[Listener]):
        self.configs = dict(configs)
        self.notes = check_configs(self.configs)
        self.authorizer = authorizer_from_configs(self.configs)
        self.auth = AuthHelper(self.authorizer)
        self.metadata = ClusterMetadataLog(catalog)
        self.image = self.metadata.image
        self.image.listeners.append(self._on_change)
        self.listeners: list[ListenerSecurity] = [listener_security(lis, self.credential)
                                                  for lis in listeners]
        for sec in self.listeners:
            self.notes += sec.notes
        self.acl_apis = AclApis(self)
        self.scram_apis = ScramApis(self)

    def _on_change(self, kind: str, *event) -> None:
        if kind == "acl" and self.authorizer is not None:
            acl_id, binding = event
            if binding is None:
                self.authorizer.remove_acl(acl_id)
            else:
                self.authorizer.add_acl(acl_id, binding)

    def load(self) -> None:
        """Replay ``__cluster_metadata`` (ACLs into the authorizer, SCRAM credentials).

        Raises:
            KafkalogError: see :meth:`.metadata_log.ClusterMetadataLog.load`.
        """
        self.metadata.load()

    def credential(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        """The stored credential of ``user`` for ``mechanism`` (the SCRAM servers' lookup,
        ``CredentialCache``)."""
        return self.image.scram.get((user, mechanism.type))

    def add_scram_users(self, users: list[ScramUser]) -> None:
        """``--add-scram``: store each user's credential (one batch) before serving.

        Raises:
            AppendError: the directory is read-only or the write failed.
        """
        self.metadata.append([(USER_SCRAM_CREDENTIAL, {
            "name": u.name, "mechanism": u.mechanism.type, "salt": u.credential.salt,
            "storedKey": u.credential.stored_key, "serverKey": u.credential.server_key,
            "iterations": u.credential.iterations}) for u in users])
        for u in users:
            log.info("stored the %s credential of user %s in %s", u.mechanism.mechanism_name,
                     u.name, self.metadata.directory.name)

    def handlers(self) -> dict:
        """The security APIs' handlers (ACLs, SCRAM credentials, and SaslHandshake /
        SaslAuthenticate once a connection is past authentication)."""
        out = {ApiKeys.SASL_HANDSHAKE: handle_sasl_handshake,
               ApiKeys.SASL_AUTHENTICATE: handle_sasl_authenticate}
        out.update(self.acl_apis.handlers())
        out.update(self.scram_apis.handlers())
        return out


def handle_sasl_handshake(req) -> dict:
    """``KafkaApis.handleSaslHandshakeRequest``: a handshake outside the authentication
    phase (a PLAINTEXT or SSL listener, or after authentication without re-authentication)
    -> ILLEGAL_SASL_STATE."""
    return {"errorCode": int(Errors.ILLEGAL_SASL_STATE), "mechanisms": []}


def handle_sasl_authenticate(req) -> dict:
    """``KafkaApis.handleSaslAuthenticateRequest``."""
    return {"errorCode": int(Errors.ILLEGAL_SASL_STATE),
            "errorMessage": "SaslAuthenticate request received after successful authentication",
            "authBytes": b"", "sessionLifetimeMs": 0}
