"""SASL/OAUTHBEARER (RFC 7628) with unsecured JWS tokens, after Kafka's
``OAuthBearerSaslServer``, ``OAuthBearerClientInitialResponse`` and the broker's default
validator, ``OAuthBearerUnsecuredValidatorCallbackHandler`` (for development and tests:
the token is not signed, ``alg`` must be ``none``; validating signed tokens against a JWKS
endpoint is not supported).

The client sends ``n,[a=authzid],\\x01auth=Bearer <token>\\x01[key=value\\x01...]\\x01``.
The token's claims: the principal (``sub``, or the JAAS option
``unsecuredValidatorPrincipalClaimName``), ``exp`` (seconds; required, not past, with
``unsecuredValidatorAllowableClockSkewMs``), ``iat`` (optional), the scope (``scope`` or
``unsecuredValidatorScopeClaimName``) which must hold every
``unsecuredValidatorRequiredScope`` entry. A token that fails is answered with
``{"status":"invalid_token"}`` (``insufficient_scope`` with the scope) and the client's
``\\x01`` reply fails the authentication with that text. The token's ``exp`` bounds the
session (``sessionLifetimeMs``), as ``SaslServerAuthenticator`` does.
"""

from __future__ import annotations

import base64
import json
import re
import time

from ...errors import AuthenticationError, SaslError
from .jaas import OAUTHBEARER_LOGIN_MODULE, LoginModule, option

_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_KVPAIRS = r"(?:[A-Za-z]+=[\x21-\x7E \t\r\n]+\x01)*"
_INITIAL = re.compile(rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,\x01(?P<kvpairs>{_KVPAIRS})\x01")
_AUTH = re.compile(r"(?P<scheme>\w+)[ ]+(?P<token>[-_~+/.a-zA-Z0-9]+(?:=*))")


def _b64_json(part: str) -> dict:
    try:
        data = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        value = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise ValueError("malformed JSON") from None
    if not isinstance(value, dict):
        raise ValueError("malformed JSON")
    return value


class OAuthBearerSaslServer:
    """One connection's OAUTHBEARER exchange over the listener's JAAS ``entries``.

    Raises (from :meth:`evaluate`):
        SaslError: a malformed initial response (the client gets the generic message).
        AuthenticationError: the client's ``\\x01`` after an error challenge (its JSON as
            the message), or an authorization id other than the token's principal.
    """

    mechanism_name = "OAUTHBEARER"

    def __init__(self, entries: list[LoginModule]):
        self._entries = entries
        self.complete = False
        self.authorization_id: str | None = None
        self.credential_expiration_ms: int | None = None
        self._error: str | None = None

    def _option(self, name: str, default: str | None = None) -> str | None:
        v = option(self._entries, "unsecuredValidator" + name, OAUTHBEARER_LOGIN_MODULE)
        return v if v is not None and v.strip() else default

    def evaluate(self, token: bytes) -> bytes:
        if token == b"\x01" and self._error is not None:
            raise AuthenticationError(self._error)
        self._error = None
        m = _INITIAL.fullmatch(token.decode("utf-8", errors="replace"))
        if m is None:
            raise SaslError("Invalid OAUTHBEARER client first message")
        pairs = {}
        for kv in m.group("kvpairs").split("\x01"):
            if kv:
                k, _, v = kv.partition("=")
                pairs[k] = v
        auth = pairs.get("auth")
        if auth is None:
            raise SaslError("Invalid OAUTHBEARER client first message: 'auth' not specified")
        a = _AUTH.fullmatch(auth)
        if a is None:
            raise SaslError("Invalid OAUTHBEARER client first message: invalid 'auth' format")
        if a.group("scheme").lower() != "bearer":
            raise SaslError("Invalid scheme in OAUTHBEARER client first message")
        try:
            principal, expiry, scope = self._validate(a.group("token"))
        except ValueError:
            principal, scope = None, None
        if principal is None:
            extra = f', "scope":"{scope}"' if scope is not None else ""
            status = "insufficient_scope" if scope is not None else "invalid_token"
            self._error = f'{{"status":"{status}"{extra}}}'
            return self._error.encode("utf-8")
        authzid = m.group("authzid") or ""
        if authzid and authzid != principal:
            raise AuthenticationError(
                f"Authentication failed: Client requested an authorization id ({authzid}) "
                f"that is different from the token's principal name ({principal})")
        self.authorization_id = principal
        self.credential_expiration_ms = expiry
        self.complete = True
        return b""

    def _validate(self, token: str) -> tuple[str | None, int | None, str | None]:
        """``OAuthBearerUnsecuredValidatorCallbackHandler.handleCallback``: (principal,
        expiry in ms, None), or (None, None, the required scope) for a missing scope.

        Raises:
            ValueError: any other reason the token is refused.
        """
        parts = token.split(".")
        if len(parts) != 3 or parts[2]:
            raise ValueError("an unsecured JWS has three parts, the last one empty")
        try:
            header, claims = _b64_json(parts[0]), _b64_json(parts[1])
        except ValueError as e:
            raise ValueError(str(e)) from None
        if header.get("alg") != "none":
            raise ValueError("Unsecured JWS must have 'none' for an algorithm")
        principal_claim = self._option("PrincipalClaimName", "sub")
        principal = claims.get(principal_claim)
        if not isinstance(principal, str) or not principal.strip():
            raise ValueError(f"the {principal_claim} claim is missing or not a string")
        skew = int(self._option("AllowableClockSkewMs", "0") or 0)
        now = int(time.time() * 1000)
        iat = claims.get("iat")
        if iat is not None:
            if not isinstance(iat, int | float):
                raise ValueError("iat is not a number")
            if now + skew < int(iat * 1000):
                raise ValueError("the token was issued in the future")
        exp = claims.get("exp")
        if not isinstance(exp, int | float):
            raise ValueError("exp is missing or not a number")
        exp_ms = int(exp * 1000)
        if now > exp_ms + skew:
            raise ValueError("the token has expired")
        if iat is not None and exp_ms < int(iat * 1000):
            raise ValueError("exp is before iat")
        required = [s.strip() for s in (self._option("RequiredScope", "") or "").split(",")
                    if s.strip()]
        if required:
            scope = claims.get(self._option("ScopeClaimName", "scope"))
            have = set(scope.split() if isinstance(scope, str) else scope or ())
            missing = [s for s in required if s not in have]
            if missing:
                return None, None, " ".join(required)
        return principal, exp_ms, None

