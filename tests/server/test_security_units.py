"""The security pieces of serve one by one, each against an outside oracle: SCRAM against
RFC 7677's test vector; the JAAS parser, the authorizer, the certificate principal and
Java's HashSet order against Kafka 4.4.0's own classes (``tests/server/java``:
JaasConfig, StandardAuthorizer, X500Principal + SslPrincipalMapper, java.util.HashSet),
run once per session; listener parsing, PLAIN and OAUTHBEARER against hand-made cases.

The Java oracle runs on the Kafka bench (``tests/kafka_testkit.py``): those tests are
marked ``kafka``, skip without it and fail under ``CI=true``."""

from __future__ import annotations

import base64
import json
import random
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from security_testkit import make_certs, start_oracle

from kafkalog_cli.errors import (
    AuthenticationError,
    CloseConnection,
    InvalidArgumentError,
    SaslError,
    SecurityConfigError,
)
from kafkalog_cli.server.security import scram
from kafkalog_cli.server.security.acls import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    KafkaPrincipal,
    PatternType,
    ResourcePattern,
    ResourceType,
    java_host_address,
)
from kafkalog_cli.server.security.authorizer import RequestContext, StandardAuthorizer
from kafkalog_cli.server.security.jaas import parse_jaas_config
from kafkalog_cli.server.security.java_order import hash_set_from_collection_capacity, java_order
from kafkalog_cli.server.security.listeners import listeners_of
from kafkalog_cli.server.security.oauthbearer import OAuthBearerSaslServer
from kafkalog_cli.server.security.plain import PlainSaslServer
from kafkalog_cli.server.security.ssl_factory import SslPrincipalMapper, rfc2253_name


@pytest.fixture(scope="session")
def oracle(tmp_path_factory):
    o = start_oracle(tmp_path_factory.mktemp("oracle"))
    yield o
    o.close()


# -- SCRAM (RFC 7677, section 3) ------------------------------------------------------------

def test_scram_sha256_server_follows_rfc7677_test_vector(monkeypatch):
    """user/pencil, salt W22ZaJ0SNY7soEsUEjb6gQ==, 4096 iterations: the server's first
    message, its acceptance of the RFC's client proof and its signature are the RFC's."""
    mech = scram.ScramMechanism.SCRAM_SHA_256
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    cred = scram.credential_from_salted(mech, salt,
                                        scram.salted_password(mech, "pencil", salt, 4096), 4096)
    monkeypatch.setattr(scram, "secure_random_string", lambda: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")
    server = scram.ScramSaslServer(mech, lambda user, m: cred if user == "user" else None)
    first = server.evaluate(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
    assert first == (b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                     b"s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
    final = server.evaluate(b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                            b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
    assert final == b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    assert server.complete and server.authorization_id == "user"


def _rfc_server(monkeypatch, users=("user",)):
    mech = scram.ScramMechanism.SCRAM_SHA_256
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    cred = scram.credential_from_salted(mech, salt,
                                        scram.salted_password(mech, "pencil", salt, 4096), 4096)
    monkeypatch.setattr(scram, "secure_random_string", lambda: "SERVER")
    return scram.ScramSaslServer(mech, lambda user, m: cred if user in users else None)


def test_scram_refusals_say_nothing_of_the_user(monkeypatch):
    """A wrong proof and an unknown user are both SaslError (the client gets the generic
    message); a bad format too; an authorization id that is not the user is Kafka's
    AuthenticationError; a proof of the wrong length closes the connection."""
    s = _rfc_server(monkeypatch)
    s.evaluate(b"n,,n=user,r=abc")
    with pytest.raises(SaslError):
        s.evaluate(b"c=biws,r=abcSERVER,p=" + base64.b64encode(b"\0" * 32))
    with pytest.raises(SaslError):
        _rfc_server(monkeypatch).evaluate(b"n,,n=nobody,r=abc")
    for bad in (b"", b"y,,n=user,r=abc", b"n,,n=us,er,r=abc", b"n,,n=user,r=a,b=\xff",
                b"\xff" * 100):
        with pytest.raises(SaslError):
            _rfc_server(monkeypatch).evaluate(bad)
    with pytest.raises(AuthenticationError, match="authorization id"):
        _rfc_server(monkeypatch).evaluate(b"n,a=other,n=user,r=abc")
    s = _rfc_server(monkeypatch)
    s.evaluate(b"n,,n=user,r=abc")
    with pytest.raises(CloseConnection):
        s.evaluate(b"c=biws,r=abcSERVER,p=" + base64.b64encode(b"\0" * 8))
    s = _rfc_server(monkeypatch)
    s.evaluate(b"n,,n=user,r=abc")
    with pytest.raises(SaslError, match="nonce"):
        s.evaluate(b"c=biws,r=abcOTHER,p=" + base64.b64encode(b"\0" * 32))


def test_scram_names_escape_comma_and_equals(monkeypatch):
    """=2C and =3D in a SCRAM name are ',' and '=' (ScramFormatter.username)."""
    assert scram.username_of("a=2Cb=3Dc") == "a,b=c"
    with pytest.raises(ValueError):
        scram.username_of("a=b")
    s = _rfc_server(monkeypatch, users=("us,er",))
    assert s.evaluate(b"n,,n=us=2Cer,r=abc").startswith(b"r=abcSERVER,")


def test_add_scram_spelled_as_kafka_storage_format():
    """ScramParser: mechanism=[k=v,...]; defaults 4096 iterations and a random salt;
    salt + saltedpassword give exactly the credential of the password; errors say what is
    wrong without repeating a secret."""
    u = scram.parse_add_scram("SCRAM-SHA-512=[name=alice,password=\"s3cret\",iterations=8192]")
    assert (u.name, u.mechanism, u.credential.iterations) == (
        "alice", scram.ScramMechanism.SCRAM_SHA_512, 8192)
    salt = b"fixed-salt"
    salted = scram.salted_password(scram.ScramMechanism.SCRAM_SHA_256, "pw", salt, 4096)
    a = scram.parse_add_scram("SCRAM-SHA-256=[name=bob,password=pw,salt="
                              f"{base64.b64encode(salt).decode()}]")
    b = scram.parse_add_scram("SCRAM-SHA-256=[name=bob,salt=" + base64.b64encode(salt).decode()
                              + ",saltedpassword=" + base64.b64encode(salted).decode() + "]")
    assert a.credential == b.credential
    for bad, words in (("SCRAM-SHA-1=[name=a,password=b]", "not supported"),
                       ("SCRAM-SHA-256=name=a,password=b", "start with ["),
                       ("SCRAM-SHA-256=[password=b]", "'name'"),
                       ("SCRAM-SHA-256=[name=a]", "'password' or 'saltedpassword'"),
                       ("SCRAM-SHA-256=[name=a,saltedpassword=AAAA]", "'salt'"),
                       ("SCRAM-SHA-256=[name=a,password=b,iterations=100]", ">= 4096"),
                       ("SCRAM-SHA-256=[name=a,password=b,iterations=99999]", "<= 16384"),
                       ("SCRAM-SHA-256=[name=a,password=b,colour=red]", "colour"),
                       ("SCRAM-SHA-256=[name=a,passwordsecret]", "No equals sign")):
        with pytest.raises(InvalidArgumentError, match=re.escape(words)) as e:
            scram.parse_add_scram(bad)
        assert "passwordsecret" not in str(e.value)


# -- PLAIN, OAUTHBEARER ----------------------------------------------------------------------

def _plain_server():
    entries = parse_jaas_config('org.apache.kafka.common.security.plain.PlainLoginModule '
                                'required user_alice="alice-pw";')
    return PlainSaslServer(entries)


def test_plain_tokens_and_refusals_as_kafka_words_them():
    s = _plain_server()
    assert s.evaluate(b"\0alice\0alice-pw") == b"" and s.authorization_id == "alice"
    assert _plain_server().evaluate(b"alice\0alice\0alice-pw") == b""
    for token, words in ((b"alice-pw", "expected 3 tokens, got 1"),
                         (b"a\0b\0c\0d\0e", "expected 3 tokens, got 4"),
                         (b"\0\0pw", "username not specified"),
                         (b"\0alice\0", "password not specified"),
                         (b"\0alice\0wrong", "Invalid username or password"),
                         (b"\0nobody\0alice-pw", "Invalid username or password"),
                         (b"bob\0alice\0alice-pw", "authorization id")):
        with pytest.raises(AuthenticationError, match=words):
            _plain_server().evaluate(token)


def _jws(claims: dict, alg: str = "none") -> str:
    def part(d):
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
    return f"{part({'alg': alg})}.{part(claims)}."


def test_oauthbearer_unsecured_tokens():
    """Kafka's unsecured validator: alg none, a sub, an exp in the future; a bad token is
    answered with {"status":"invalid_token"} and the client's \\x01 fails the exchange
    with that text; the token's exp bounds the session."""
    entries = parse_jaas_config("org.apache.kafka.common.security.oauthbearer."
                                "OAuthBearerLoginModule required "
                                'unsecuredValidatorRequiredScope="kafka";')
    exp = int(time.time()) + 60
    s = OAuthBearerSaslServer(entries)
    token = _jws({"sub": "alice", "exp": exp, "scope": "kafka other"})
    assert s.evaluate(f"n,,\x01auth=Bearer {token}\x01\x01".encode()) == b""
    assert s.authorization_id == "alice" and s.credential_expiration_ms == exp * 1000
    for claims, alg, status in (({"sub": "a", "exp": exp - 120, "scope": "kafka"}, "none",
                                 "invalid_token"),
                                ({"sub": "a", "exp": exp, "scope": "kafka"}, "HS256",
                                 "invalid_token"),
                                ({"exp": exp, "scope": "kafka"}, "none", "invalid_token"),
                                ({"sub": "a", "exp": exp, "scope": "x"}, "none",
                                 "insufficient_scope")):
        s = OAuthBearerSaslServer(entries)
        challenge = s.evaluate(f"n,,\x01auth=Bearer {_jws(claims, alg)}\x01\x01".encode())
        assert json.loads(challenge)["status"] == status
        with pytest.raises(AuthenticationError, match=status):
            s.evaluate(b"\x01")
    with pytest.raises(SaslError):
        OAuthBearerSaslServer(entries).evaluate(b"n,,\x01auth=Basic abc\x01\x01")


# -- JAAS: Kafka's JaasConfig ---------------------------------------------------------------

JAAS_CASES = [
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
    'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";',
    "org.apache.kafka.common.security.scram.ScramLoginModule required;",
    "a.B required key=value other='single quoted' $dollar-key_x=\"v\";",
    'm required k="esc\\"aped\\n\\101 tab\\t";  n optional x="1";',
    "// comment\nm /* inline */ SUFFICIENT k=\"v\"; // trailing",
    "m required k=123;",
    "m required k=\"v\"",
    "m required k=;",
    "m unknownflag;",
    "m",
    "",
    "m required k=\"unterminated",
    "m required =\"v\";",
    "m required k=\"é ü\" ключ=\"v\";",
]


def _ours(text: str) -> str:
    try:
        entries = parse_jaas_config(text)
    except SecurityConfigError:
        return "EXC"
    out = ""
    for e in entries:
        opts = ", ".join(f"{k}={v}" for k, v in sorted(e.options.items()))
        out += f"{e.name}|LoginModuleControlFlag: {e.flag.lower()}|{{{opts}}};"
    return "OK " + out


@pytest.mark.kafka
@pytest.mark.parametrize("text", JAAS_CASES)
def test_jaas_config_parses_as_kafkas_jaas_config(oracle, text):
    theirs = oracle.ask("jaas64", base64.b64encode(text.encode()).decode())
    ours = _ours(text)
    if theirs.startswith("EXC"):
        assert ours == "EXC", (text, theirs)
    else:
        assert ours == theirs


# -- the authorizer: Kafka's StandardAuthorizer ---------------------------------------------

_NAMES = ["foo", "foobar", "fo", "bar", "*", "f", "foo-1", "x.y"]
_PRINCIPALS = ["User:alice", "User:bob", "User:*", "Group:eng"]
_HOSTS = ["*", "127.0.0.1", "10.1.2.3", "10.0.0.0/8", "::1", "0:0:0:0:0:0:0:1"]

_acl = st.tuples(st.sampled_from([ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER,
                                  ResourceType.TRANSACTIONAL_ID]),
                 st.sampled_from(_NAMES),
                 st.sampled_from([PatternType.LITERAL, PatternType.PREFIXED]),
                 st.sampled_from(_PRINCIPALS), st.sampled_from(_HOSTS),
                 st.sampled_from(list(AclOperation)[2:]),
                 st.sampled_from([AclPermissionType.ALLOW, AclPermissionType.DENY]))


@pytest.mark.kafka
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(acls=st.lists(_acl, max_size=8), allow_everyone=st.booleans(), seed=st.integers(0, 9))
def test_authorizer_decides_as_standard_authorizer(oracle, acls, allow_everyone, seed):
    """Random ACL sets (LITERAL / PREFIXED / *, DENY and ALLOW, implied operations, CIDR and
    IPv6 hosts, wildcard principals, a super user): every decision and every
    authorizeByResourceType answer is StandardAuthorizer's."""
    acls = list(dict.fromkeys(acls))  # the controller never stores an ACL twice
    ours = StandardAuthorizer({"User:root"}, allow_everyone)
    assert oracle.ask("authorizer", "User:root", str(allow_everyone).lower()) == "OK"
    for i, (rt, name, pt, principal, host, op, perm) in enumerate(acls):
        acl_id = base64.urlsafe_b64encode((i + 2).to_bytes(16, "big")).rstrip(b"=").decode()
        ours.add_acl(acl_id, AclBinding(ResourcePattern(rt, name, pt),
                                        AccessControlEntry(principal, host, op, perm)))
        assert oracle.ask("acl", acl_id, str(int(rt)), name, str(int(pt)), principal, host,
                          str(int(op)), str(int(perm))) == "OK"
    rnd = random.Random(seed)
    for _ in range(12):
        principal = rnd.choice(["User:alice", "User:bob", "User:root", "Group:eng"])
        host = rnd.choice(["127.0.0.1", "10.1.2.3", "192.168.1.1", "::1"])
        op = rnd.choice(list(AclOperation)[3:])
        rt = rnd.choice([ResourceType.TOPIC, ResourceType.GROUP, ResourceType.TRANSACTIONAL_ID])
        name = rnd.choice(["foo", "foobar", "fo", "bar", "food", "zzz", "foo-1"])
        kind, _, pname = principal.partition(":")
        ctx = RequestContext(KafkaPrincipal(kind, pname), java_host_address(host), "Test")
        expected = oracle.ask("authorize", principal, host, str(int(op)), str(int(rt)), name)
        got = ours.authorize(ctx, op, rt, name, log_if_denied=False)
        assert expected == ("OK ALLOWED" if got else "OK DENIED"), (principal, host, op, rt, name)
        if op not in (AclOperation.ALL,):
            expected = oracle.ask("authorize", principal, host, str(int(op)), str(int(rt)))
            got = ours.authorize_by_resource_type(ctx, op, rt)
            assert expected == ("OK ALLOWED" if got else "OK DENIED"), ("by type", principal,
                                                                        host, op, rt)


# -- certificates: X500Principal and SslPrincipalMapper --------------------------------------

@pytest.mark.kafka
def test_certificate_principal_is_x500principal_name_mapped_by_rules(oracle, tmp_path):
    """Each test certificate's subject as Java prints it, and the name the mapping rules
    give (Kafka's SslPrincipalMapper), including names with characters RFC 2253 escapes
    and attributes Java prints as hex."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    certs = make_certs(tmp_path / "certs")
    key = ec.generate_private_key(ec.SECP256R1())
    import datetime
    now = datetime.datetime.now(datetime.timezone.utc)
    a = x509.NameAttribute
    odd = x509.Name([a(NameOID.COUNTRY_NAME, "US"), a(NameOID.ORGANIZATION_NAME, "acme, inc"),
                     a(NameOID.EMAIL_ADDRESS, "a@b.c"), a(NameOID.TITLE, "boss"),
                     a(NameOID.COMMON_NAME, ' a=b#c+d<e>f;g"h\\i ')])
    c = (x509.CertificateBuilder().subject_name(odd).issuer_name(odd)
         .public_key(key.public_key()).serial_number(1).not_valid_before(now)
         .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    (tmp_path / "odd.crt").write_bytes(c.public_bytes(serialization.Encoding.PEM))
    rules = ["DEFAULT", "RULE:^CN=([^,]*),OU=eng,.*$/$1/L,DEFAULT",
             "RULE:^CN=(.*?),OU=(.*?),O=(.*?)$/$1@$3/U", "RULE:^.*,C=(..)$/$1/", ""]
    for path in [certs.path(f"{n}.crt") for n in ("alice", "bob", "expired", "stranger")] + [
            str(tmp_path / "odd.crt")]:
        der = x509.load_pem_x509_certificate(open(path, "rb").read()).public_bytes(
            serialization.Encoding.DER)
        ours_name = rfc2253_name(der)
        for r in rules:
            answer = oracle.ask("dn", path, r)
            java_name, java_mapped = answer[3:].split("\t")
            assert ours_name == java_name
            try:
                mapped = SslPrincipalMapper(r).name(ours_name)
            except ValueError:
                mapped = "EXC NoMatchingRule"
            assert mapped == java_mapped, (r, ours_name)


@pytest.mark.kafka
def test_java_hash_set_order(oracle):
    """The order Java's HashSet iterates strings in (the mechanisms SaslHandshake lists,
    the users of the SCRAM APIs), for sizes across the 16 -> 32 -> 64 resizes."""
    rnd = random.Random(7)
    for n in (1, 3, 4, 11, 12, 13, 20, 40):
        items = [f"u{rnd.randrange(10**6)}-{i}" for i in range(n)]
        theirs = oracle.ask("hashset", *items)[3:].split("\t")
        assert java_order(items, hash_set_from_collection_capacity(len(items))) == theirs
    mechs = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]
    assert java_order(mechs, hash_set_from_collection_capacity(4)) == \
        oracle.ask("hashset", *mechs)[3:].split("\t")


# -- listeners -------------------------------------------------------------------------------

def test_listeners_as_kafka_config_parses_them():
    """Names upper-cased, the default protocol map, a custom one, empty host = every
    interface, IPv6 in brackets, advertised listeners replacing host and port, controller
    listeners left out; Kafka's refusals."""
    lis, skipped = listeners_of({
        "listeners": "plaintext://127.0.0.1:0, internal://[::1]:9095,SSL://:9093,"
                     "CONTROLLER://127.0.0.1:9099",
        "listener.security.protocol.map": "INTERNAL:SASL_PLAINTEXT,PLAINTEXT:PLAINTEXT,"
                                          "SSL:SSL",
        "advertised.listeners": "SSL://kafka.example.com:19093",
        "controller.listener.names": "CONTROLLER"}, default_listeners="PLAINTEXT://x:1")
    assert [(x.name, x.security_protocol, x.endpoint.host, x.endpoint.port,
             x.advertised_port) for x in lis] == [
        ("PLAINTEXT", "PLAINTEXT", "127.0.0.1", 0, 0),
        ("INTERNAL", "SASL_PLAINTEXT", "::1", 9095, 9095),
        ("SSL", "SSL", None, 9093, 19093)]
    assert lis[2].advertised_host == "kafka.example.com" and skipped == ["CONTROLLER"]
    for cfg, words in (({"listeners": "FOO://:1"}, "No security protocol defined for "
                        "listener FOO"),
                       ({"listeners": "PLAINTEXT://:1,PLAINTEXT://:2"}, "different name"),
                       ({"listeners": "PLAINTEXT://127.0.0.1:1,SSL://127.0.0.1:1"},
                        "different port"),
                       ({"listeners": "PLAINTEXT:/:1"}, "Unable to parse"),
                       ({"listeners": "PLAINTEXT://:1", "advertised.listeners": "SSL://h:2"},
                        "subset"),
                       ({"listeners": "PLAINTEXT://:1",
                         "advertised.listeners": "PLAINTEXT://0.0.0.0:1"}, "0.0.0.0"),
                       ({"listener.security.protocol.map": "A:TLS"}, "No enum constant")):
        with pytest.raises(SecurityConfigError, match=words):
            listeners_of(cfg, default_listeners="PLAINTEXT://127.0.0.1:0")
