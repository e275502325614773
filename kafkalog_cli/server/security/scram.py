"""SASL/SCRAM (RFC 5802, RFC 7677), after Kafka's ``ScramMechanism``, ``ScramFormatter``,
``ScramMessages``, ``ScramSaslServer`` and the storage tool's ``ScramParser``.

A credential is what KRaft stores in a ``UserScramCredentialRecord``: the salt, the
iteration count, ``StoredKey = H(HMAC(SaltedPassword, "Client Key"))`` and ``ServerKey =
HMAC(SaltedPassword, "Server Key")`` with ``SaltedPassword = Hi(password, salt, i)``
(PBKDF2-HMAC); never the password. The server verifies a client's proof against StoredKey
and proves itself with ServerKey.

Messages are matched with the regular expressions of ``ScramMessages`` (ASCII, ``=2C`` /
``=3D`` escapes in names, base64 proofs). What the client is told on failure follows
``ScramSaslServer``: most failures are :class:`~kafkalog_cli.errors.SaslError` (the client
gets the generic message, so it cannot tell an unknown user from a wrong password);
an authorization id other than the user name is an
:class:`~kafkalog_cli.errors.AuthenticationError` with Kafka's text.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from enum import Enum

from ...errors import AuthenticationError, CloseConnection, InvalidArgumentError, SaslError


class ScramMechanism(Enum):
    """``ScramMechanism``: (type byte as stored and sent, mechanism name, hash)."""

    SCRAM_SHA_256 = (1, "SCRAM-SHA-256", "sha256")
    SCRAM_SHA_512 = (2, "SCRAM-SHA-512", "sha512")

    @property
    def type(self) -> int:
        return self.value[0]

    @property
    def mechanism_name(self) -> str:
        return self.value[1]

    @property
    def hash_name(self) -> str:
        return self.value[2]

    @classmethod
    def for_name(cls, name: str) -> ScramMechanism | None:
        return _BY_NAME.get(name)

    @classmethod
    def for_type(cls, type_code: int) -> ScramMechanism | None:
        return _BY_TYPE.get(type_code)


_BY_NAME = {m.mechanism_name: m for m in ScramMechanism}
_BY_TYPE = {m.type: m for m in ScramMechanism}
MECHANISM_NAMES = tuple(_BY_NAME)
DEFAULT_ITERATIONS = 4096
#: ``ScramMechanism.minIterations()`` / ``maxIterations()`` (both mechanisms)
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384


@dataclass(frozen=True)
class ScramCredential:
    """``ScramCredential`` (salt, stored key, server key: bytes). ``repr`` hides them."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def __repr__(self) -> str:
        return f"ScramCredential(iterations={self.iterations}, [hidden])"


# -- ScramFormatter -------------------------------------------------------------------------

def hmac_of(mechanism: ScramMechanism, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, mechanism.hash_name).digest()


def salted_password(mechanism: ScramMechanism, password: str, salt: bytes,
                    iterations: int) -> bytes:
    """``Hi(Normalize(password), salt, i)``: PBKDF2-HMAC with the mechanism's hash
    (Kafka's ``normalize`` is the UTF-8 bytes, without SASLprep)."""
    return hashlib.pbkdf2_hmac(mechanism.hash_name, password.encode("utf-8"), salt, iterations)


def credential_from_salted(mechanism: ScramMechanism, salt: bytes, salted: bytes,
                           iterations: int) -> ScramCredential:
    """``ScramFormatter.generateCredential(salt, saltedPassword, iterations)``."""
    client_key = hmac_of(mechanism, salted, b"Client Key")
    stored_key = hashlib.new(mechanism.hash_name, client_key).digest()
    server_key = hmac_of(mechanism, salted, b"Server Key")
    return ScramCredential(salt, stored_key, server_key, iterations)


def secure_random_string() -> str:
    """``ScramFormatter.secureRandomString``: a random 130-bit number in base 36."""
    n = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


def generate_credential(mechanism: ScramMechanism, password: str,
                        iterations: int = DEFAULT_ITERATIONS) -> ScramCredential:
    """``ScramFormatter.generateCredential(password, iterations)``: a random salt (the
    UTF-8 bytes of :func:`secure_random_string`, as Kafka makes it)."""
    salt = secure_random_string().encode("ascii")
    return credential_from_salted(mechanism, salt,
                                  salted_password(mechanism, password, salt, iterations),
                                  iterations)


def username_of(sasl_name: str) -> str:
    """``ScramFormatter.username``: ``=2C`` -> ``,``, ``=3D`` -> ``=``; any other ``=``
    is invalid.

    Raises:
        ValueError: ``Invalid username: ...``.
    """
    name = sasl_name.replace("=2C", ",")
    if "=" in name.replace("=3D", ""):
        raise ValueError("Invalid username: " + sasl_name)
    return name.replace("=3D", "=")


# -- ScramMessages ----------------------------------------------------------------------------

_VALUE_SAFE = r"[\x01-\x2b\x2d-\x3c\x3e-\x7f]+"
_VALUE = r"[\x01-\x2b\x2d-\x7f]+"
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_B64 = r"[a-zA-Z0-9/+]"
_BASE64 = rf"(?:{_B64}{{4}})*(?:{_B64}{{3}}=|{_B64}{{2}}==)?"
_RESERVED = rf"(?:m={_VALUE},)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"
_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{_RESERVED}n=(?P<saslname>{_SASLNAME}),"
    rf"r=(?P<nonce>{_PRINTABLE})(?P<extensions>{_EXTENSIONS})")
_CLIENT_FINAL = re.compile(
    rf"c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_BASE64})")


def _text(message: bytes) -> str:
    return message.decode("utf-8", errors="replace")


@dataclass
class ClientFirstMessage:
    """``gs2-header [reserved-mext ","] username "," nonce ["," extensions]``."""

    sasl_name: str
    nonce: str
    authorization_id: str
    extensions: dict[str, str]

    @classmethod
    def parse(cls, message: bytes) -> ClientFirstMessage:
        m = _CLIENT_FIRST.fullmatch(_text(message))
        if m is None:
            raise SaslError("Invalid SCRAM client first message format")
        ext = m.group("extensions")
        extensions = {}
        for item in ext[1:].split(",") if ext else ():
            k, _, v = item.partition("=")
            extensions[k] = v
        return cls(m.group("saslname"), m.group("nonce"), m.group("authzid") or "",
                   extensions)

    def bare(self) -> str:
        """``clientFirstMessageBare`` as Kafka rebuilds it (for the AuthMessage)."""
        ext = ",".join(f"{k}={v}" for k, v in self.extensions.items())
        return f"n={self.sasl_name},r={self.nonce}" + (f",{ext}" if ext else "")


@dataclass
class ClientFinalMessage:
    """``channel-binding "," nonce ["," extensions] "," proof``."""

    channel_binding: bytes
    nonce: str
    proof: bytes

    @classmethod
    def parse(cls, message: bytes) -> ClientFinalMessage:
        m = _CLIENT_FINAL.fullmatch(_text(message))
        if m is None:
            raise SaslError("Invalid SCRAM client final message format")
        try:
            return cls(base64.b64decode(m.group("channel"), validate=True), m.group("nonce"),
                       base64.b64decode(m.group("proof"), validate=True))
        except binascii.Error:
            raise SaslError("Invalid SCRAM client final message format") from None

    def without_proof(self) -> str:
        return f"c={base64.b64encode(self.channel_binding).decode()},r={self.nonce}"


# -- ScramSaslServer --------------------------------------------------------------------------

class ScramSaslServer:
    """One connection's SCRAM exchange (``ScramSaslServer``): :meth:`evaluate` takes the
    client's first message and answers the server-first message, then takes the client's
    final message and answers the server signature.

    ``credentials(username, mechanism) -> ScramCredential | None`` looks a user up.

    Raises (from :meth:`evaluate`):
        SaslError: a malformed message, an unknown user, a wrong proof, a nonce mismatch,
            iterations below the mechanism's minimum (the client gets the generic message).
        AuthenticationError: an authorization id other than the user name (Kafka's text).
        CloseConnection: a proof of the wrong length (Kafka's ``xor`` throws an
            IllegalArgumentException: the connection is closed without an answer).
    """

    def __init__(self, mechanism: ScramMechanism, credentials):
        self.mechanism = mechanism
        self.mechanism_name = mechanism.mechanism_name
        self._credentials = credentials
        self._state = "first"
        self.complete = False
        self.authorization_id: str | None = None
        #: no credential expiry (delegation tokens are not served)
        self.credential_expiration_ms: int | None = None
        self._first: ClientFirstMessage | None = None
        self._server_first = ""
        self._nonce = ""
        self._credential: ScramCredential | None = None

    def evaluate(self, token: bytes) -> bytes:
        try:
            if self._state == "first":
                return self._first_message(token)
            if self._state == "final":
                return self._final_message(token)
            raise AuthenticationError(f"Unexpected challenge in Sasl server state {self._state}")
        except (SaslError, AuthenticationError, CloseConnection):
            self._credential = None
            self._state = "FAILED"
            raise

    def _first_message(self, token: bytes) -> bytes:
        first = self._first = ClientFirstMessage.parse(token)
        server_nonce = secure_random_string()
        if first.extensions.get("tokenauth", "").lower() == "true":
            raise SaslError("Token Authentication failed: delegation tokens are not served")
        try:
            username = username_of(first.sasl_name)
            credential = self._credentials(username, self.mechanism)
        except Exception as e:
            raise SaslError(f"Authentication failed: Credentials could not be obtained ({e})"
                            ) from None
        if credential is None:
            raise SaslError("Authentication failed: Invalid user credentials")
        if first.authorization_id and first.authorization_id != username:
            raise AuthenticationError("Authentication failed: Client requested an "
                                      "authorization id that is different from username")
        if credential.iterations < MIN_ITERATIONS:
            raise SaslError(f"Iterations {credential.iterations} is less than the minimum "
                            f"{MIN_ITERATIONS} for {self.mechanism.name}")
        self._credential = credential
        self.authorization_id = username
        self._nonce = first.nonce + server_nonce
        self._server_first = (f"r={self._nonce},s={base64.b64encode(credential.salt).decode()},"
                              f"i={credential.iterations}")
        self._state = "final"
        return self._server_first.encode("ascii")

    def _final_message(self, token: bytes) -> bytes:
        final = ClientFinalMessage.parse(token)
        if not final.nonce.endswith(self._nonce):
            raise SaslError("Invalid client nonce in the final client message.")
        cred = self._credential
        auth_message = ",".join((self._first.bare(), self._server_first,
                                 final.without_proof())).encode("utf-8")
        signature = hmac_of(self.mechanism, cred.stored_key, auth_message)
        if len(signature) != len(final.proof):
            raise CloseConnection("Argument arrays must be of the same length")
        client_key = bytes(a ^ b for a, b in zip(signature, final.proof, strict=True))
        computed = hashlib.new(self.mechanism.hash_name, client_key).digest()
        if not hmac.compare_digest(computed, cred.stored_key):
            raise SaslError("Invalid client credentials")
        server_signature = hmac_of(self.mechanism, cred.server_key, auth_message)
        self._credential = None
        self._state = "COMPLETE"
        self.complete = True
        return b"v=" + base64.b64encode(server_signature)


# -- ScramParser (kafka-storage format --add-scram) -------------------------------------------

@dataclass
class ScramUser:
    """One ``--add-scram`` argument, parsed: the user, the mechanism and the credential."""

    name: str
    mechanism: ScramMechanism
    credential: ScramCredential


def parse_add_scram(argument: str) -> ScramUser:
    """``ScramParser``: ``SCRAM-SHA-256=[name=alice,password=alice-secret]`` (also
    ``iterations=8192``, ``salt=<base64>``, ``saltedpassword=<base64>`` with ``salt``;
    a value may be double-quoted). Default iterations 4096, a random salt. The messages are
    Kafka's, except that no password or salted password is ever repeated in one.

    Raises:
        InvalidArgumentError: a malformed argument, an unknown mechanism or key, iterations
            outside 4096..16384.
    """
    text = argument.strip()
    mech_name, sep, config = text.partition("=")
    if not sep:
        raise InvalidArgumentError(f"Failed to find equals sign in SCRAM argument "
                                   f"'{mech_name}=...'")
    mechanism = ScramMechanism.for_name(mech_name)
    if mechanism is None:
        raise InvalidArgumentError(f"The add-scram mechanism {mech_name} is not supported.")
    if not config.startswith("["):
        raise InvalidArgumentError("Expected configuration string to start with [")
    if not config.endswith("]"):
        raise InvalidArgumentError("Expected configuration string to end with ]")
    components: dict[str, str] = {}
    for component in config[1:-1].split(","):
        key, sep, value = component.partition("=")
        if not sep:
            raise InvalidArgumentError("No equals sign found in SCRAM component: "
                                       + ("..." if "password" in key.lower() else key))
        if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
            value = value[1:-1]
        components[key] = value
    name = components.pop("name", None)
    if name is None:
        raise InvalidArgumentError("You must supply 'name' to add-scram")
    salt_text = components.pop("salt", None)
    try:
        salt = base64.b64decode(salt_text, validate=True) if salt_text is not None else None
    except binascii.Error:
        raise InvalidArgumentError(f"Failed to decode given salt: {salt_text}") from None
    iterations_text = components.pop("iterations", None)
    try:
        iterations = int(iterations_text) if iterations_text is not None else DEFAULT_ITERATIONS
    except ValueError:
        raise InvalidArgumentError(f"Failed to parse iterations count: {iterations_text}"
                                   ) from None
    password = components.pop("password", None)
    salted_text = components.pop("saltedpassword", None)
    salted = None
    if password is None:
        if salted_text is None:
            raise InvalidArgumentError("You must supply one of 'password' or 'saltedpassword' "
                                       "to add-scram")
        if salt is None:
            raise InvalidArgumentError("You must supply 'salt' with 'saltedpassword' to "
                                       "add-scram")
        try:
            salted = base64.b64decode(salted_text, validate=True)
        except binascii.Error:
            raise InvalidArgumentError("Failed to decode given saltedPassword") from None
    if components:
        raise InvalidArgumentError("Unknown SCRAM configurations: " + ", ".join(sorted(components)))
    if iterations < MIN_ITERATIONS:
        raise InvalidArgumentError(f"The 'iterations' value must be >= "
                                   f"{MIN_ITERATIONS} for add-scram using "
                                   f"{mechanism.name}")
    if iterations > MAX_ITERATIONS:
        raise InvalidArgumentError(f"The 'iterations' value must be <= "
                                   f"{MAX_ITERATIONS} for add-scram using "
                                   f"{mechanism.name}")
    if salt is None:
        salt = secure_random_string().encode("ascii")
    if salted is None:
        salted = salted_password(mechanism, password, salt, iterations)
    return ScramUser(name, mechanism, credential_from_salted(mechanism, salt, salted,
                                                             iterations))
