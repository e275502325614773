"""TLS for SSL and SASL_SSL listeners, after Kafka's ``DefaultSslEngineFactory`` (server
mode) with PEM stores, built on the standard library's :mod:`ssl` (OpenSSL):

* the keystore: ``ssl.keystore.type=PEM`` with ``ssl.keystore.location`` (a file holding a
  PKCS#8 private key and the certificate chain) or ``ssl.keystore.key`` +
  ``ssl.keystore.certificate.chain`` (the PEM text itself); an encrypted key
  (``ENCRYPTED PRIVATE KEY``) is decrypted with ``ssl.key.password``. Kafka's rules apply
  (no ``ssl.keystore.password`` with PEM, not both a location and inline PEM, ...) with its
  messages; a JKS or PKCS12 store is refused with one line pointing to PEM;
* the truststore (for client certificates): ``ssl.truststore.type=PEM`` with
  ``ssl.truststore.location`` or ``ssl.truststore.certificates``;
* ``ssl.client.auth`` ``none`` / ``requested`` / ``required``; ``ssl.enabled.protocols``
  (TLSv1.2 and TLSv1.3 by default; nothing older is offered), ``ssl.protocol``
  (``TLSv1.2`` caps the version), ``ssl.cipher.suites`` (IANA names as Java spells them,
  ``TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256``; OpenSSL configures the TLS 1.3 suites
  separately, so a list naming TLS 1.2 suites only turns TLS 1.3 off, and TLS 1.3 suites in
  it are accepted but not enforced one by one);
* the principal of a client certificate (``DefaultKafkaPrincipalBuilder``): its subject as
  ``X500Principal.getName()`` prints it (RFC 2253, Java's keywords and escapes), mapped by
  ``ssl.principal.mapping.rules`` (``SslPrincipalMapper``: ``DEFAULT`` and
  ``RULE:pattern/replacement/[LU]``); no certificate: ``User:ANONYMOUS``.

No key material is written to disk: the decrypted key reaches OpenSSL through an anonymous
in-memory file (``memfd``), and no message names a password.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import ssl
import tempfile

from ...errors import SecurityConfigError
from .acls import ANONYMOUS, KafkaPrincipal
from .config import effective, parse_list

PEM = "PEM"
_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3,
              "TLSv1.1": ssl.TLSVersion.TLSv1_1, "TLSv1": ssl.TLSVersion.TLSv1}
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL,
                "required": ssl.CERT_REQUIRED}
_TLS13_SUITES = frozenset({"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                           "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_CCM_SHA256",
                           "TLS_AES_128_CCM_8_SHA256"})


def _pem_entries(text: str, label: str) -> list[tuple[str, bytes]]:
    """``PemParser``: every ``-----BEGIN ...<label>...-----`` block (text before and between
    blocks ignored) as (the BEGIN line's label, DER bytes)."""
    name = label.replace(" ", r"\s+")
    pattern = re.compile(rf"-+BEGIN\s*(.*{name})[^-]*-+\s+(?:\s*[^\r\n]*:[^\r\n]*[\r\n]+)*"
                         rf"([a-zA-Z0-9/+=\s]*)-+END\s*.*{name}[^-]*-+\s+")
    out = []
    for m in pattern.finditer(text + "\n"):
        try:
            out.append((m.group(1).strip(), base64.b64decode(re.sub(r"\s", "", m.group(2)))))
        except ValueError:
            continue
    return out


def _read(path: str, key: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(4 << 20)
    except OSError as e:
        raise SecurityConfigError(f"{key}: cannot read {path}: {e.strerror}", key) from None


def _private_key_pem(key_pem: str, password: str | None, where: str) -> bytes:
    """The PKCS#8 key of a PEM text, unencrypted, as PEM (Kafka loads PKCS#8 only:
    ``PRIVATE KEY`` without a key password, ``ENCRYPTED PRIVATE KEY`` with one)."""
    from cryptography.hazmat.primitives import serialization

    keys = _pem_entries(key_pem, "PRIVATE KEY")
    if not keys:
        raise SecurityConfigError(f"Invalid PEM keystore configs ({where}): No matching "
                                  "PRIVATE KEY entries in PEM file", where)
    if len(keys) != 1:
        raise SecurityConfigError(f"Invalid PEM keystore configs ({where}): Expected one "
                                  f"private key, but found {len(keys)}", where)
    label, der = keys[0]
    encrypted = label.upper().startswith("ENCRYPTED")
    if label.upper() not in ("PRIVATE KEY", "ENCRYPTED PRIVATE KEY") or \
            encrypted != (password is not None):
        hint = ("ssl.key.password is needed for an ENCRYPTED PRIVATE KEY" if encrypted else
                "ssl.key.password is set but the key is not encrypted" if password is not None
                else f"a '{label}' block is not PKCS#8: convert it with "
                     "`openssl pkcs8 -topk8 -nocrypt` (or encrypt it, with ssl.key.password)")
        raise SecurityConfigError(f"Invalid PEM keystore configs ({where}): Private key could "
                                  f"not be loaded: {hint}", where)
    try:
        key = serialization.load_der_private_key(
            der, password.encode("utf-8") if password is not None else None)
    except (ValueError, TypeError):
        raise SecurityConfigError(f"Invalid PEM keystore configs ({where}): Private key could "
                                  "not be loaded (a wrong ssl.key.password, or not a key)",
                                  where) from None
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _certificates_pem(text: str, where: str) -> str:
    certs = _pem_entries(text, "CERTIFICATE")
    if not certs:
        raise SecurityConfigError(f"Invalid PEM configs ({where}): At least one certificate "
                                  "expected, but none found", where)
    out = []
    for _, der in certs:
        b64 = base64.encodebytes(der).decode("ascii")
        out.append(f"-----BEGIN CERTIFICATE-----\n{b64}-----END CERTIFICATE-----\n")
    return "".join(out)


@contextlib.contextmanager
def _in_memory_file(data: bytes):
    """A path OpenSSL can read ``data`` from without it reaching a disk: a memfd on Linux,
    else a private temporary file removed at once."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("kafkalog-tls", getattr(os, "MFD_CLOEXEC", 0))
        try:
            os.write(fd, data)
            yield f"/proc/self/fd/{fd}"
        finally:
            os.close(fd)
        return
    with tempfile.TemporaryDirectory() as d:  # pragma: no cover - not Linux
        path = os.path.join(d, "key.pem")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        try:
            yield path
        finally:
            os.unlink(path)


def _keystore(configs: dict[str, str], listener: str) -> tuple[str, bytes]:
    """(certificate chain PEM, unencrypted PKCS#8 key PEM) of the listener's keystore
    (``DefaultSslEngineFactory.createKeystore``'s rules and messages)."""
    kind = (effective(configs, "ssl.keystore.type") or "").upper()
    path = configs.get("ssl.keystore.location")
    password = configs.get("ssl.keystore.password")
    key_password = configs.get("ssl.key.password")
    inline_key = configs.get("ssl.keystore.key")
    chain = configs.get("ssl.keystore.certificate.chain")
    where = f"listener {listener}"

    def refuse(message: str, key: str = "ssl.keystore.type"):
        raise SecurityConfigError(f"{where}: {message}", key)

    if inline_key is not None:
        if kind != PEM:
            refuse("SSL private key can be specified only for PEM, but key store type is "
                   f"{kind}.")
        if chain is None:
            refuse("SSL private key is specified, but certificate chain is not specified.",
                   "ssl.keystore.certificate.chain")
        if path is not None:
            refuse("Both SSL key store location and separate private key are specified.",
                   "ssl.keystore.location")
        if password is not None:
            refuse("SSL key store password cannot be specified with PEM format, only key "
                   "password may be specified.", "ssl.keystore.password")
        return _certificates_pem(chain, "ssl.keystore.certificate.chain"), _private_key_pem(
            inline_key, key_password, "ssl.keystore.key")
    if chain is not None:
        refuse("SSL certificate chain is specified, but private key is not specified",
               "ssl.keystore.key")
    if path is None:
        refuse("an SSL listener needs a keystore: ssl.keystore.type=PEM with "
               "ssl.keystore.location, or ssl.keystore.key and "
               "ssl.keystore.certificate.chain", "ssl.keystore.location")
    if kind != PEM:
        refuse(f"ssl.keystore.type {kind or 'JKS'} is not supported (serve reads PEM stores "
               "only): set ssl.keystore.type=PEM with a PEM file holding the PKCS#8 key and "
               "the certificate chain (`keytool -importkeystore` + `openssl pkcs12 -nodes` "
               "convert a JKS store)")
    if password is not None:
        refuse("SSL key store password cannot be specified with PEM format, only key "
               "password may be specified", "ssl.keystore.password")
    text = _read(path, "ssl.keystore.location")
    return (_certificates_pem(text, "ssl.keystore.location"),
            _private_key_pem(text, key_password, "ssl.keystore.location"))


def _truststore(configs: dict[str, str], listener: str) -> str | None:
    """The trusted certificates as PEM (``createTruststore``), or None (the JDK's default
    trust: no client certificate is trusted here)."""
    kind = (effective(configs, "ssl.truststore.type") or "").upper()
    path = configs.get("ssl.truststore.location")
    password = configs.get("ssl.truststore.password")
    certs = configs.get("ssl.truststore.certificates")
    where = f"listener {listener}"
    if certs is not None:
        if kind != PEM:
            raise SecurityConfigError(f"{where}: SSL trust store certs can be specified only "
                                      f"for PEM, but trust store type is {kind}.",
                                      "ssl.truststore.type")
        if path is not None:
            raise SecurityConfigError(f"{where}: Both SSL trust store location and separate "
                                      "trust certificates are specified.",
                                      "ssl.truststore.location")
        if password is not None:
            raise SecurityConfigError(f"{where}: SSL trust store password cannot be specified "
                                      "for PEM format.", "ssl.truststore.password")
        return _certificates_pem(certs, "ssl.truststore.certificates")
    if path is None:
        if password is not None:
            raise SecurityConfigError(f"{where}: SSL trust store is not specified, but trust "
                                      "store password is specified.", "ssl.truststore.password")
        return None
    if kind != PEM:
        raise SecurityConfigError(f"{where}: ssl.truststore.type {kind or 'JKS'} is not "
                                  "supported (serve reads PEM stores only): set "
                                  "ssl.truststore.type=PEM with a file of PEM certificates",
                                  "ssl.truststore.type")
    if password is not None:
        raise SecurityConfigError(f"{where}: SSL trust store password cannot be specified for "
                                  "PEM format.", "ssl.truststore.password")
    return _certificates_pem(_read(path, "ssl.truststore.location"), "ssl.truststore.location")


def openssl_cipher_name(iana: str) -> str | None:
    """An IANA / JSSE cipher suite name as OpenSSL names it (TLS 1.2 suites), or None."""
    name = iana.strip()
    if name.startswith("SSL_"):
        name = "TLS_" + name[4:]
    m = re.fullmatch(r"TLS_(?:(ECDHE|DHE)_(RSA|ECDSA)|(RSA))_WITH_(.+)", name)
    if m is None:
        return None
    kex = f"{m.group(1)}-{m.group(2)}-" if m.group(1) else ""
    if m.group(1) == "DHE" and m.group(2) == "RSA":
        kex = "DHE-RSA-"
    cipher = m.group(4)
    table = {"AES_128_GCM_SHA256": "AES128-GCM-SHA256", "AES_256_GCM_SHA384": "AES256-GCM-SHA384",
             "CHACHA20_POLY1305_SHA256": "CHACHA20-POLY1305",
             "AES_128_CBC_SHA256": "AES128-SHA256", "AES_256_CBC_SHA384": "AES256-SHA384",
             "AES_128_CBC_SHA": "AES128-SHA", "AES_256_CBC_SHA": "AES256-SHA",
             "AES_256_CBC_SHA256": "AES256-SHA256"}
    suffix = table.get(cipher)
    return None if suffix is None else kex + suffix


def create_server_context(configs: dict[str, str], listener: str) -> ssl.SSLContext:
    """The :class:`ssl.SSLContext` of an SSL / SASL_SSL listener from the configs it sees.

    Raises:
        SecurityConfigError: a missing or unusable keystore or truststore, a JKS store, an
            unknown protocol, cipher suite or ``ssl.client.auth`` value (one line naming the
            key; never a password).
    """
    chain, key = _keystore(configs, listener)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.options |= ssl.OP_NO_COMPRESSION | getattr(ssl, "OP_NO_RENEGOTIATION", 0)
    versions = []
    for p in parse_list(effective(configs, "ssl.enabled.protocols")):
        if p not in _PROTOCOLS:
            raise SecurityConfigError(f"listener {listener}: ssl.enabled.protocols: "
                                      f"Unsupported protocol {p}", "ssl.enabled.protocols")
        versions.append(_PROTOCOLS[p])
    if not versions:
        raise SecurityConfigError(f"listener {listener}: ssl.enabled.protocols is empty",
                                  "ssl.enabled.protocols")
    protocol = effective(configs, "ssl.protocol") or "TLSv1.3"
    ctx.minimum_version = min(versions)
    ctx.maximum_version = max(versions)
    if protocol == "TLSv1.2":
        ctx.maximum_version = min(ctx.maximum_version, ssl.TLSVersion.TLSv1_2)
    elif protocol not in ("TLSv1.3", "TLS"):
        raise SecurityConfigError(f"listener {listener}: ssl.protocol {protocol} is not "
                                  "supported (TLSv1.2, TLSv1.3, TLS)", "ssl.protocol")
    if ctx.minimum_version > ctx.maximum_version:
        raise SecurityConfigError(f"listener {listener}: no TLS version left from "
                                  "ssl.enabled.protocols with ssl.protocol", "ssl.protocol")
    suites = parse_list(effective(configs, "ssl.cipher.suites"))
    if suites:
        names, tls13 = [], False
        for s in suites:
            if s in _TLS13_SUITES:
                tls13 = True
                continue
            n = openssl_cipher_name(s)
            if n is None:
                raise SecurityConfigError(f"listener {listener}: ssl.cipher.suites: unknown "
                                          f"cipher suite {s}", "ssl.cipher.suites")
            names.append(n)
        if names:
            try:
                ctx.set_ciphers(":".join(names))
            except ssl.SSLError:
                raise SecurityConfigError(f"listener {listener}: ssl.cipher.suites: none of "
                                          f"{','.join(suites)} is available",
                                          "ssl.cipher.suites") from None
        elif ctx.minimum_version < ssl.TLSVersion.TLSv1_3:
            ctx.minimum_version = ssl.TLSVersion.TLSv1_3  # TLS 1.3 suites only
        if not tls13:
            ctx.maximum_version = min(ctx.maximum_version, ssl.TLSVersion.TLSv1_2)
    with _in_memory_file(chain.encode("ascii") + key) as path:
        try:
            ctx.load_cert_chain(path)
        except ssl.SSLError as e:
            raise SecurityConfigError(f"listener {listener}: the keystore's key and "
                                      f"certificate do not load ({e.reason})",
                                      "ssl.keystore.location") from None
    auth = (effective(configs, "ssl.client.auth") or "none").strip().lower()
    if auth not in _CLIENT_AUTH:
        raise SecurityConfigError(f"listener {listener}: Invalid value {auth} for "
                                  "configuration ssl.client.auth: String must be one of: "
                                  "required, requested, none", "ssl.client.auth")
    trusted = _truststore(configs, listener)
    ctx.verify_mode = _CLIENT_AUTH[auth]
    if trusted is not None:
        ctx.load_verify_locations(cadata=trusted)
    elif auth != "none":
        raise SecurityConfigError(f"listener {listener}: ssl.client.auth={auth} needs a "
                                  "truststore (ssl.truststore.type=PEM with "
                                  "ssl.truststore.location or ssl.truststore.certificates)",
                                  "ssl.truststore.location")
    return ctx


# -- the principal of a client certificate ---------------------------------------------------

#: X500Principal.getName()'s RFC 2253 keywords (others print as the OID, value in hex)
_KEYWORDS = {"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O",
             "2.5.4.11": "OU", "2.5.4.9": "STREET", "0.9.2342.19200300.100.1.25": "DC",
             "0.9.2342.19200300.100.1.1": "UID"}
_ESCAPED = set(',=+<>#;"\\')


def _escape(value: str) -> str:
    out = []
    for i, c in enumerate(value):
        if c in _ESCAPED or (c == " " and (i == 0 or i == len(value) - 1)):
            out.append("\\")
        out.append(c)
    return "".join(out)


def _der_value(attr) -> bytes:
    """The attribute value's DER (tag, length, bytes) for the ``#hex`` form."""
    tag = int(getattr(attr, "_type", None).value) if getattr(attr, "_type", None) else 12
    v = attr.value
    data = v if isinstance(v, bytes) else (
        v.encode("utf-16-be") if tag == 30 else v.encode("utf-32-be") if tag == 28
        else v.encode("utf-8"))
    n = len(data)
    if n < 0x80:
        length = bytes([n])
    else:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(raw)]) + raw
    return bytes([tag]) + length + data


def rfc2253_name(der_certificate: bytes) -> str:
    """The certificate's subject as ``X500Principal.getName()`` prints it: RDNs last
    first, joined with ``,``; the AVAs of a multi-valued RDN joined with ``+``; Java's
    keywords (CN, C, L, ST, O, OU, STREET, DC, UID), other attributes as ``OID=#<DER in
    hex>``; ``,=+<>#;"\\`` and a leading or trailing space escaped with ``\\``."""
    from cryptography import x509

    cert = x509.load_der_x509_certificate(der_certificate)
    parts = []
    for rdn in reversed(list(cert.subject.rdns)):
        avas = []
        for attr in reversed(list(rdn)):
            oid = attr.oid.dotted_string
            keyword = _KEYWORDS.get(oid)
            if keyword is not None and isinstance(attr.value, str):
                avas.append(f"{keyword}={_escape(attr.value)}")
            else:
                avas.append(f"{oid}=#{_der_value(attr).hex()}")
        parts.append("+".join(avas))
    return ",".join(parts)


class SslPrincipalMapper:
    """``SslPrincipalMapper``: ``ssl.principal.mapping.rules``, a comma-separated list of
    ``DEFAULT`` (the name as is) and ``RULE:pattern/replacement/[LU]`` (when the Java-style
    pattern matches the whole name, replace - ``$1`` back-references - then lower or upper
    case); the first rule that applies gives the name.

    Raises (constructor):
        SecurityConfigError: a rule that does not parse (Kafka's message).
    """

    _RULE = r"(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?).*?|(.*?)"
    _SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*(,\s*|$)")
    _PARSER = re.compile(_RULE)

    def __init__(self, rules: str | None):
        self.rules: list[tuple] = []
        text = (rules if rules is not None else "DEFAULT").strip()
        for m in self._SPLITTER.finditer(text):
            rule = m.group(1)
            if m.start() == len(text) and not rule:
                break
            p = self._PARSER.match(rule)
            if p is None or p.end() != len(rule):
                raise SecurityConfigError(f"ssl.principal.mapping.rules: Invalid rule: {rule}",
                                          "ssl.principal.mapping.rules")
            if p.group(1):
                self.rules.append(("DEFAULT",))
            elif p.group(2) is not None:
                try:
                    pattern = re.compile(p.group(2))
                except re.error as e:
                    raise SecurityConfigError(f"ssl.principal.mapping.rules: Invalid rule: "
                                              f"{rule} ({e})",
                                              "ssl.principal.mapping.rules") from None
                self.rules.append(("RULE", pattern, _java_replacement(p.group(3)),
                                   p.group(4)))

    def name(self, distinguished_name: str) -> str:
        """The mapped name.

        Raises:
            ValueError: no rule applies (Kafka's ``NoMatchingRule``: the TLS handshake fails).
        """
        for rule in self.rules:
            if rule[0] == "DEFAULT":
                return distinguished_name
            _, pattern, replacement, case = rule
            if pattern.fullmatch(distinguished_name):
                result = pattern.sub(replacement, distinguished_name)
                return result.lower() if case == "L" else result.upper() if case == "U" \
                    else result
        raise ValueError(f"No rules apply to {distinguished_name}")


def _java_replacement(replacement: str) -> str:
    r"""A Java ``replaceAll`` replacement (``$1``, ``\$``) as a Python ``re.sub`` one."""
    out = []
    i = 0
    while i < len(replacement):
        c = replacement[i]
        if c == "\\" and i + 1 < len(replacement):
            out.append(replacement[i + 1].replace("\\", "\\\\"))
            i += 2
            continue
        if c == "$":
            j = i + 1
            while j < len(replacement) and replacement[j].isdigit():
                j += 1
            if j > i + 1:
                out.append(f"\\g<{replacement[i + 1:j]}>")
                i = j
                continue
        out.append("\\\\" if c == "\\" else c)
        i += 1
    return "".join(out)


def ssl_principal(ssl_object, mapper: SslPrincipalMapper) -> KafkaPrincipal:
    """``DefaultKafkaPrincipalBuilder`` for an SSL session: the mapped subject of the
    client's certificate, or ``User:ANONYMOUS`` without one.

    Raises:
        ValueError: no mapping rule applies.
    """
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    if not der:
        return ANONYMOUS
    return KafkaPrincipal("User", mapper.name(rfc2253_name(der)))
