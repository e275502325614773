"""Real clients over every listener type of one server (PLAINTEXT, SSL with and without
a client certificate, SASL_PLAINTEXT and SASL_SSL with PLAIN, SCRAM-SHA-256,
SCRAM-SHA-512 and unsecured OAUTHBEARER): confluent-kafka (librdkafka), kafka-python and
aiokafka each produce to their own topic and read the records back; then each is refused
cleanly with a wrong password, an untrusted certificate and an expired one, and the server
keeps serving. kafkajs runs the same over SASL_SSL / SSL in test_serve_kafkajs.py.
Certificates are made at test time (security_testkit)."""

from __future__ import annotations

import asyncio
import base64
import json
import time
import uuid

import pytest
from security_testkit import (
    PLAIN_USERS,
    SCRAM_USERS,
    SaslRawClient,
    add_scram_args,
    client_ssl_context,
    listener_configs,
    make_certs,
)

from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions
from kafkalog_cli.server.security.scram import parse_add_scram

#: (listener, how the client authenticates) -> the principal the server sees
CASES = [
    ("PLAINTEXT", None), ("SSL", None), ("SSL", "cert:alice"),
    ("SASL_PLAINTEXT", "PLAIN"), ("SASL_PLAINTEXT", "SCRAM-SHA-256"),
    ("SASL_PLAINTEXT", "SCRAM-SHA-512"), ("SASL_PLAINTEXT", "OAUTHBEARER"),
    ("SASL_SSL", "PLAIN"), ("SASL_SSL", "SCRAM-SHA-256"), ("SASL_SSL", "SCRAM-SHA-512"),
    ("SASL_SSL", "OAUTHBEARER"),
]
_IDS = [f"{lis}-{how or 'none'}" for lis, how in CASES]


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    """One server with a listener of each type (no authorizer), SCRAM users stored with
    --add-scram; yields (server, certs)."""
    d = tmp_path_factory.mktemp("secure")
    certs = make_certs(d / "certs")
    (d / "logs").mkdir()
    users = [parse_add_scram(a) for a in add_scram_args()]
    with ServerThread(d / "logs", ServerOptions(port=0, auto_create_topics=True),
                      server_configs={"group.initial.rebalance.delay.ms": "0"},
                      security_configs=listener_configs(certs), add_scram=users) as s:
        yield s, certs


def _unsecured_jws(sub: str) -> str:
    def part(d):
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
    return f"{part({'alg': 'none'})}.{part({'sub': sub, 'exp': int(time.time()) + 600, 'iat': int(time.time())})}."


def _records(topic: str) -> list[bytes]:
    return [f"{topic}-{i}".encode() for i in range(3)]


# -- confluent-kafka (librdkafka) ------------------------------------------------------------

def _ck_conf(server, certs, listener, how, password=None, cert=None):
    conf = {"bootstrap.servers": f"127.0.0.1:{server.listener_port(listener)}",
            "security.protocol": listener}
    if "SSL" in listener:
        conf["ssl.ca.location"] = certs.path("ca.pem")
    if how and how.startswith("cert:") or cert:
        name = cert or how[5:]
        conf.update({"ssl.certificate.location": certs.path(f"{name}.crt"),
                     "ssl.key.location": certs.path(f"{name}.key")})
    elif how == "OAUTHBEARER":
        conf.update({"sasl.mechanism": how, "enable.sasl.oauthbearer.unsecure.jwt": True,
                     "sasl.oauthbearer.config": "principal=alice"})
    elif how:
        users = PLAIN_USERS if how == "PLAIN" else SCRAM_USERS
        conf.update({"sasl.mechanism": how, "sasl.username": "alice",
                     "sasl.password": password or users["alice"]})
    return conf


@pytest.mark.parametrize("listener,how", CASES, ids=_IDS)
def test_confluent_kafka_over_every_listener(secure, listener, how):
    from confluent_kafka import Consumer, Producer, TopicPartition

    server, certs = secure
    topic = f"ck-{listener}-{how or 'none'}".replace(":", "-").lower()
    conf = _ck_conf(server, certs, listener, how)
    p = Producer({**conf, "message.timeout.ms": 10000})
    errors = []
    for v in _records(topic):
        p.produce(topic, v, on_delivery=lambda e, m: errors.append(e))
    assert p.flush(15) == 0
    assert errors == [None] * 3
    c = Consumer({**conf, "group.id": "g-" + topic, "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, 0)])
    got = []
    deadline = time.time() + 15
    while len(got) < 3 and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and m.error() is None:
            got.append(m.value())
    c.close()
    assert got == _records(topic)


def _ck_connect_error(conf) -> list:
    """What librdkafka reports when it cannot get in: error_cb errors within 6 s."""
    from confluent_kafka.admin import AdminClient

    errors = []
    a = AdminClient({**conf, "error_cb": errors.append, "socket.timeout.ms": 3000,
                     "reconnect.backoff.ms": 200})
    deadline = time.time() + 6
    while not errors and time.time() < deadline:
        a.poll(0.2)
    return errors


def test_confluent_kafka_refused_cleanly(secure):
    """A wrong password is refused with the broker's message (SASL_AUTHENTICATION_FAILED
    -> librdkafka's _AUTHENTICATION); an untrusted or expired certificate fails the TLS
    handshake; the server serves the next client."""
    from confluent_kafka import KafkaError

    server, certs = secure
    for listener, mech in (("SASL_SSL", "SCRAM-SHA-512"), ("SASL_PLAINTEXT", "PLAIN"),
                           ("SASL_PLAINTEXT", "SCRAM-SHA-256")):
        errs = _ck_connect_error(_ck_conf(server, certs, listener, mech, password="wrong"))
        assert errs and errs[0].code() == KafkaError._AUTHENTICATION, errs
        assert "invalid credentials" in errs[0].str() or "Invalid username or password" in \
            errs[0].str()
    for bad in ("stranger", "expired"):
        errs = _ck_connect_error(_ck_conf(server, certs, "SSL", None, cert=bad))
        assert errs, bad
    c = SaslRawClient(server.listener_port("SASL_SSL"),
                      ssl_context=client_ssl_context(certs))
    assert c.plain("bob", PLAIN_USERS["bob"])["errorCode"] == 0
    c.close()


# -- kafka-python ----------------------------------------------------------------------------

def _kp_token(sub):
    from kafka.net.sasl.oauth import AbstractTokenProvider

    class Token(AbstractTokenProvider):
        def token(self):
            return _unsecured_jws(sub)

    return Token()


def _kp_conf(server, certs, listener, how, password=None, cert=None):
    conf = {"bootstrap_servers": f"127.0.0.1:{server.listener_port(listener)}",
            "security_protocol": listener, "request_timeout_ms": 10000}
    if "SSL" in listener:
        conf["ssl_cafile"] = certs.path("ca.pem")
    if how and how.startswith("cert:") or cert:
        name = cert or how[5:]
        conf.update({"ssl_certfile": certs.path(f"{name}.crt"),
                     "ssl_keyfile": certs.path(f"{name}.key")})
    elif how == "OAUTHBEARER":
        conf.update({"sasl_mechanism": how, "sasl_oauth_token_provider": _kp_token("alice")})
    elif how:
        users = PLAIN_USERS if how == "PLAIN" else SCRAM_USERS
        conf.update({"sasl_mechanism": how, "sasl_plain_username": "alice",
                     "sasl_plain_password": password or users["alice"]})
    return conf


@pytest.mark.parametrize("listener,how", CASES, ids=_IDS)
def test_kafka_python_over_every_listener(secure, listener, how):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    server, certs = secure
    topic = f"kp-{listener}-{how or 'none'}".replace(":", "-").lower()
    conf = _kp_conf(server, certs, listener, how)
    p = KafkaProducer(**conf)
    for v in _records(topic):
        p.send(topic, v).get(15)
    p.close()
    c = KafkaConsumer(**conf, enable_auto_commit=False)
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    got = []
    deadline = time.time() + 10
    while len(got) < 3 and time.time() < deadline:
        for msgs in c.poll(500).values():
            got += [m.value for m in msgs]
    c.close()
    assert got == _records(topic)


def test_kafka_python_refused_cleanly(secure):
    """kafka-python raises instead of connecting: a wrong SCRAM password, an untrusted
    client certificate."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    server, certs = secure
    for conf in (_kp_conf(server, certs, "SASL_SSL", "SCRAM-SHA-512", password="wrong"),
                 _kp_conf(server, certs, "SSL", None, cert="stranger")):
        t0 = time.time()
        with pytest.raises(KafkaError):
            p = KafkaProducer(**conf, max_block_ms=3000, bootstrap_timeout_ms=3000)
            p.send("t", b"x").get(5)
        # refused, not retried for ever: the bound is the behaviour (max_block_ms 3 s,
        # the send's 5 s), generous because load only lengthens each attempt
        assert time.time() - t0 < 20


# -- aiokafka --------------------------------------------------------------------------------

class _AioToken:
    async def token(self):
        return _unsecured_jws("alice")

    def extensions(self):
        return {}


def _aio_conf(server, certs, listener, how, password=None, cert=None):
    from aiokafka.abc import AbstractTokenProvider
    from aiokafka.helpers import create_ssl_context

    conf = {"bootstrap_servers": f"127.0.0.1:{server.listener_port(listener)}",
            "security_protocol": listener}
    name = cert or (how[5:] if how and how.startswith("cert:") else None)
    if "SSL" in listener:
        conf["ssl_context"] = create_ssl_context(
            cafile=certs.path("ca.pem"), certfile=certs.path(f"{name}.crt") if name else None,
            keyfile=certs.path(f"{name}.key") if name else None)
    if how == "OAUTHBEARER":
        provider = type("P", (_AioToken, AbstractTokenProvider), {})()
        conf.update({"sasl_mechanism": how, "sasl_oauth_token_provider": provider})
    elif how and not name:
        users = PLAIN_USERS if how == "PLAIN" else SCRAM_USERS
        conf.update({"sasl_mechanism": how, "sasl_plain_username": "alice",
                     "sasl_plain_password": password or users["alice"]})
    return conf


@pytest.mark.parametrize("listener,how", CASES, ids=_IDS)
def test_aiokafka_over_every_listener(secure, listener, how):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    server, certs = secure
    topic = f"aio-{listener}-{how or 'none'}".replace(":", "-").lower()

    async def go():
        conf = _aio_conf(server, certs, listener, how)
        p = AIOKafkaProducer(**conf)
        await p.start()
        try:
            for v in _records(topic):
                await p.send_and_wait(topic, v)
        finally:
            await p.stop()
        c = AIOKafkaConsumer(**conf, enable_auto_commit=False, auto_offset_reset="earliest")
        await c.start()
        try:
            c.assign([TopicPartition(topic, 0)])
            got = []
            deadline = time.time() + 10
            while len(got) < 3 and time.time() < deadline:
                batch = await c.getmany(timeout_ms=500)
                for msgs in batch.values():
                    got += [m.value for m in msgs]
            return got
        finally:
            await c.stop()

    assert asyncio.run(go()) == _records(topic)


def test_aiokafka_refused_cleanly(secure):
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import KafkaError

    server, certs = secure

    async def attempt(conf):
        p = AIOKafkaProducer(**conf, request_timeout_ms=3000)
        try:
            await p.start()
        finally:
            await p.stop()

    for conf in (_aio_conf(server, certs, "SASL_PLAINTEXT", "SCRAM-SHA-256", password="no"),
                 _aio_conf(server, certs, "SASL_SSL", "PLAIN", password="no")):
        with pytest.raises(KafkaError):
            asyncio.run(attempt(conf))


def test_metadata_advertises_the_listener_of_the_connection(secure):
    """MetadataResponse.brokers (and FindCoordinator) name the listener the request came
    in on (getAliveBrokerNodes(listenerName)), so a client stays on its listener."""
    from kafkalog_cli.protocol.apis import ApiKeys

    server, certs = secure
    for listener in ("PLAINTEXT", "SASL_PLAINTEXT", "SSL"):
        port = server.listener_port(listener)
        c = SaslRawClient(port, ssl_context=client_ssl_context(certs)
                          if listener == "SSL" else None)
        if listener == "SASL_PLAINTEXT":
            assert c.plain("alice", PLAIN_USERS["alice"])["errorCode"] == 0
        md = c.request(ApiKeys.METADATA, 12, {"topics": [], "allowAutoTopicCreation": False,
                                              "includeTopicAuthorizedOperations": False})
        assert [(b["host"], b["port"]) for b in md["brokers"]] == [("127.0.0.1", port)]
        fc = c.request(ApiKeys.FIND_COORDINATOR, 4, {"keyType": 0,
                                                     "coordinatorKeys": [f"g{uuid.uuid4()}"]})
        assert (fc["coordinators"][0]["host"], fc["coordinators"][0]["port"]) == (
            "127.0.0.1", port)
        c.close()
