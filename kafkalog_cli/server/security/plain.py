"""SASL/PLAIN (RFC 4616), after Kafka's ``PlainSaslServer`` and
``PlainServerCallbackHandler``: the client sends ``[authzid] NUL username NUL password``
once; the password is compared (in constant time) with the ``user_<username>`` option of the
listener's ``PlainLoginModule`` JAAS entry. The messages are Kafka's; none names the
password, and a wrong password and an unknown user read the same."""

from __future__ import annotations

import hmac

from ...errors import AuthenticationError
from .jaas import PLAIN_LOGIN_MODULE, LoginModule, option

PLAIN = "PLAIN"


class PlainSaslServer:
    """One connection's PLAIN exchange over the JAAS ``entries`` of its listener.

    Raises (from :meth:`evaluate`):
        AuthenticationError: not 3 tokens, an empty user name or password, a wrong
            password or unknown user, an authorization id other than the user name.
    """

    mechanism_name = PLAIN

    def __init__(self, entries: list[LoginModule]):
        self._entries = entries
        self.complete = False
        self.authorization_id: str | None = None
        self.credential_expiration_ms: int | None = None

    def evaluate(self, token: bytes) -> bytes:
        text = token.decode("utf-8", errors="replace")
        tokens = text.split("\x00", 3)
        if len(tokens) != 3:
            raise AuthenticationError(
                f"Invalid SASL/PLAIN response: expected 3 tokens, got {min(len(tokens), 4)}")
        authzid, username, password = tokens
        if not username:
            raise AuthenticationError("Authentication failed: username not specified")
        if not password:
            raise AuthenticationError("Authentication failed: password not specified")
        expected = option(self._entries, "user_" + username, PLAIN_LOGIN_MODULE)
        if expected is None or not hmac.compare_digest(password.encode("utf-8"),
                                                       expected.encode("utf-8")):
            raise AuthenticationError("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise AuthenticationError("Authentication failed: Client requested an "
                                      "authorization id that is different from username")
        self.authorization_id = username
        self.complete = True
        return b""
