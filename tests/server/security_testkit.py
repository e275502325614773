"""What the security tests share: certificates made at test time with the ``cryptography``
package (a CA, a server certificate for 127.0.0.1 / localhost, client certificates, an
expired one, one from an untrusted CA; nothing is committed), the broker configs of a
server with every listener type, and a raw SASL client."""

from __future__ import annotations

import datetime
import socket
import ssl
import struct
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from serve_testkit import RawClient, parse_response

from kafkalog_cli.protocol.wire import encode_request

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
PLAIN_USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
#: what --add-scram stores (both mechanisms for each user)
SCRAM_USERS = {"admin": "admin-scram", "alice": "alice-scram", "bob": "bob-scram"}
KEY_PASSWORD = "key-pass-1"


def plain_jaas(users=PLAIN_USERS) -> str:
    opts = " ".join(f'user_{u}="{p}"' for u, p in users.items())
    return ("org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="admin" password="{users["admin"]}" {opts};')


def add_scram_args(users=SCRAM_USERS) -> list[str]:
    return [f"{m}=[name={u},password={p}]" for u, p in users.items()
            for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")]


@dataclass
class Certs:
    """PEM files in ``dir``: ``ca`` (the truststore), ``server`` (PKCS#8 key + chain, the
    keystore), ``server_encrypted`` (the same, key encrypted with :data:`KEY_PASSWORD`),
    client ``<name>.crt`` / ``<name>.key`` for alice, bob, ``expired`` (signed by the CA,
    past its validity) and ``stranger`` (signed by another CA)."""

    dir: Path

    def path(self, name: str) -> str:
        return str(self.dir / name)


def _name(cn: str, ou: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
             x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kafkalog-tests")]
    if ou:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou))
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


def _cert(subject, key, issuer, issuer_key, *, ca=False, server=False, days=(-1, 30)):
    now = datetime.datetime.now(datetime.timezone.utc)
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
         .public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(now + datetime.timedelta(days=days[0]))
         .not_valid_after(now + datetime.timedelta(days=days[1]))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if server:
        import ipaddress

        b = b.add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False).add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    elif not ca:
        b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]),
                            critical=False)
    return b.sign(issuer_key, hashes.SHA256())


def _pem(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key, password: str | None = None) -> bytes:
    enc = (serialization.BestAvailableEncryption(password.encode()) if password
           else serialization.NoEncryption())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             enc)


def make_certs(d: Path) -> Certs:
    """Write every certificate and key of :class:`Certs` into ``d``."""
    d.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("kafkalog test CA")
    ca = _cert(ca_name, ca_key, ca_name, ca_key, ca=True, days=(-1, 60))
    (d / "ca.pem").write_bytes(_pem(ca))
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = _cert(_name("localhost"), server_key, ca_name, ca_key, server=True)
    (d / "server.pem").write_bytes(_key_pem(server_key) + _pem(server) + _pem(ca))
    (d / "server-encrypted.pem").write_bytes(_key_pem(server_key, KEY_PASSWORD) + _pem(server)
                                             + _pem(ca))
    (d / "server.crt").write_bytes(_pem(server) + _pem(ca))
    (d / "server.key").write_bytes(_key_pem(server_key))
    for cn, days in (("alice", (-1, 30)), ("bob", (-1, 30)), ("expired", (-30, -1))):
        k = ec.generate_private_key(ec.SECP256R1())
        c = _cert(_name(cn, "eng"), k, ca_name, ca_key, days=days)
        (d / f"{cn}.crt").write_bytes(_pem(c))
        (d / f"{cn}.key").write_bytes(_key_pem(k))
    other_key = ec.generate_private_key(ec.SECP256R1())
    other_name = _name("another CA")
    (d / "other-ca.pem").write_bytes(_pem(_cert(other_name, other_key, other_name, other_key,
                                                ca=True)))
    k = ec.generate_private_key(ec.SECP256R1())
    c = _cert(_name("stranger", "eng"), k, other_name, other_key)
    (d / "stranger.crt").write_bytes(_pem(c))
    (d / "stranger.key").write_bytes(_key_pem(k))
    return Certs(d)


def listener_configs(certs: Certs, *, client_auth: str = "requested",
                     authorizer: bool = False, reauth_ms: int | None = None,
                     delay_ms: int = 100, extra: dict | None = None) -> dict[str, str]:
    """A server with a listener of each type on 127.0.0.1 (free ports), PLAIN users
    :data:`PLAIN_USERS` on both SASL listeners, SCRAM (both), OAUTHBEARER; the SSL
    listener asks for client certificates (``client_auth``)."""
    cfg = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,"
                     "SASL_SSL://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": plain_jaas(),
        "listener.name.sasl_ssl.plain.sasl.jaas.config": plain_jaas(),
        "oauthbearer.sasl.jaas.config":
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            "unsecuredLoginStringClaim_sub=\"admin\";",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": certs.path("server-encrypted.pem"),
        "ssl.key.password": KEY_PASSWORD,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": certs.path("ca.pem"),
        "listener.name.ssl.ssl.client.auth": client_auth,
        "ssl.principal.mapping.rules": "RULE:^CN=([^,]*),OU=eng,.*$/$1/L,DEFAULT",
        "connection.failed.authentication.delay.ms": str(delay_ms),
    }
    if authorizer:
        cfg.update({"authorizer.class.name": STANDARD_AUTHORIZER, "super.users": "User:admin"})
    if reauth_ms is not None:
        cfg["connections.max.reauth.ms"] = str(reauth_ms)
    cfg.update(extra or {})
    return cfg


def client_ssl_context(certs: Certs, cert: str | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=certs.path("ca.pem"))
    if cert:
        ctx.load_cert_chain(certs.path(f"{cert}.crt"), certs.path(f"{cert}.key"))
    return ctx


class SaslRawClient(RawClient):
    """A raw client that can run the SASL exchange itself (PLAIN) and speak TLS."""

    def __init__(self, port: int, timeout: float = 5.0, ssl_context=None):
        sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        if ssl_context is not None:
            sock = ssl_context.wrap_socket(sock, server_hostname="localhost")
        self.sock = sock
        self.correlation = 0

    def send(self, api_key: int, version: int, body: dict) -> int:
        self.correlation += 1
        self.send_raw(encode_request(api_key, version, self.correlation, body, "raw-sasl"))
        return self.correlation

    def receive(self, api_key: int, version: int, cid: int) -> dict:
        frame = self.recv_frame()
        assert frame is not None, "server closed the connection"
        return parse_response(api_key, version, frame, cid)

    def plain(self, user: str, password: str, *, handshake_version: int = 1,
              auth_version: int = 2) -> dict:
        """SaslHandshake(PLAIN) then one SaslAuthenticate; returns the latter's answer."""
        hs = self.request(17, handshake_version, {"mechanism": "PLAIN"})
        assert hs["errorCode"] == 0, hs
        return self.request(36, auth_version, {"authBytes": f"\0{user}\0{password}".encode()})


def size_prefixed(data: bytes) -> bytes:
    return struct.pack(">i", len(data)) + data


# -- Kafka's own classes as the oracle ----------------------------------------------------

_ORACLE_SOURCE = Path(__file__).parent / "java"


class KafkaOracle:
    """A running ``SecurityOracle`` (tests/server/java): ``ask("jaas", text)`` returns its
    answer line."""

    def __init__(self, proc):
        self.proc = proc

    def ask(self, *fields: str) -> str:
        assert not any("\n" in f or "\t" in f for f in fields)
        self.proc.stdin.write("\t".join(fields) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, "the Java oracle exited"
        # the answer escapes backslashes and newlines
        out, chars = [], iter(line.rstrip("\n"))
        for c in chars:
            if c == "\\":
                c = next(chars, "")
                c = "\n" if c == "n" else c
            out.append(c)
        return "".join(out)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(10)


def start_oracle(build_dir: Path) -> KafkaOracle:
    """Compile the oracle against the bench's jars (the pinned Kafka's kafka-clients,
    kafka-metadata, kafka-server-common and their dependencies) and start it; skip (fail
    under ``CI=true``) when the bench is not available."""
    import shutil
    import subprocess

    from kafka_testkit import require_bench

    bench = require_bench()
    javac = shutil.which("javac") or "javac"
    cp = f"{bench.libs}/*"
    sources = [str(p) for p in _ORACLE_SOURCE.rglob("*.java")]
    r = subprocess.run([javac, "-nowarn", "-cp", cp, "-d", str(build_dir), *sources],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    proc = subprocess.Popen([shutil.which("java") or "java", "-XX:TieredStopAtLevel=1",
                             "-XX:+UseSerialGC", "-cp", f"{build_dir}:{cp}",
                             "org.apache.kafka.common.security.SecurityOracle"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, encoding="utf-8")
    return KafkaOracle(proc)
