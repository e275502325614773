"""serve's security against the pinned Kafka 4.4.0 (the bench, ``tests/kafka_testkit.py``):

* the same requests to a Kafka broker and to serve configured alike (PLAINTEXT and
  SASL_PLAINTEXT listeners, PLAIN and both SCRAMs, StandardAuthorizer, ``super.users``)
  get the same answers: CreateAcls / DescribeAcls / DeleteAcls, Describe/AlterUserScram
  Credentials, the SASL exchange's states and failures, and what alice may see and do;
* what each writes the other reads: serve replays the ACLs and SCRAM credentials a broker
  (and ``kafka-storage format --add-scram``) left in ``__cluster_metadata``, and Kafka's
  DumpLogSegments decodes the records serve appends there;
* Kafka's Java client produces over each secured listener type of serve (SSL with its
  certificate, which it also consumes over; PLAIN; SCRAM-SHA-512 on SASL_SSL; unsecured
  OAUTHBEARER) and is refused with the broker's message for a wrong SCRAM-SHA-256
  password (the other clients run every combination in test_serve_security_clients.py).

Marked ``kafka``: skipped without the bench, failing under ``CI=true``."""

from __future__ import annotations

import json
import time

import pytest
from kafka_testkit import KafkaBroker, free_port, java_consume, java_produce, kafka_tool
from security_testkit import (
    STANDARD_AUTHORIZER,
    SaslRawClient,
    add_scram_args,
    listener_configs,
    make_certs,
    plain_jaas,
)

from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions
from kafkalog_cli.server.security.scram import parse_add_scram

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

#: the users ``--add-scram`` gives both (the broker's StorageTool, serve's option)
SCRAM = {"alice": "alice-scram", "admin": "admin-scram"}
SECURITY = {
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": plain_jaas(),
    "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config":
        "org.apache.kafka.common.security.scram.ScramLoginModule required;",
    "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config":
        "org.apache.kafka.common.security.scram.ScramLoginModule required;",
    "authorizer.class.name": STANDARD_AUTHORIZER,
    # ANONYMOUS: the broker's own controller and inter-broker connections are PLAINTEXT
    "super.users": "User:admin;User:ANONYMOUS",
    "connection.failed.authentication.delay.ms": "300",
}
NO_ID = "AAAAAAAAAAAAAAAAAAAAAA"


@pytest.fixture(scope="module")
def kafka_secured(tmp_path_factory, kafka_bench):
    """A bench broker with a PLAINTEXT and a SASL_PLAINTEXT listener, the authorizer and
    SCRAM users formatted in by StorageTool; ``.sasl_port``."""
    broker = KafkaBroker(tmp_path_factory.mktemp("kafka-secured"),
                         format_args=[a for u in add_scram_args(SCRAM) for a in ("--add-scram", u)])
    broker.sasl_port = free_port()
    p, c, s = broker.port, broker.controller_port, broker.sasl_port
    broker.configs.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{p},CONTROLLER://127.0.0.1:{c},"
                     f"SASL_PLAINTEXT://127.0.0.1:{s}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{p},SASL_PLAINTEXT://127.0.0.1:{s}",
        "listener.security.protocol.map":
            "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
        **SECURITY})
    broker.start()
    yield broker
    broker.kill()


def _serve_configs() -> dict:
    return {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", **SECURITY}


# -- one scenario, run against both -------------------------------------------------------

def _acl(rt, name, op, perm=3, principal="User:alice", pattern=3, host="*"):
    return {"resourceType": rt, "resourceName": name, "resourcePatternType": pattern,
            "principal": principal, "host": host, "operation": op, "permissionType": perm}


def _filter(**kw):
    f = {"resourceTypeFilter": 1, "resourceNameFilter": None, "patternTypeFilter": 1,
         "principalFilter": None, "hostFilter": None, "operation": 1, "permissionType": 1}
    f.update(kw)
    return f


def _sorted_describe(r):
    """DescribeAcls as a set: the broker's order follows its hash maps."""
    return dict(r, resources=sorted(
        (dict(x, acls=sorted(x["acls"], key=json.dumps)) for x in r["resources"]),
        key=json.dumps))


def _sorted_mechanisms(r):
    """DescribeUserScramCredentials with each user's mechanisms sorted: the broker's
    ScramImage keys them by the ScramMechanism enum in a HashMap, whose order follows the
    enum constants' identity hash codes - it changes from one JVM run to the next."""
    return dict(r, results=[dict(u, credentialInfos=sorted(u["credentialInfos"],
                                                           key=lambda c: c["mechanism"]))
                            for u in r["results"]])


def _upsert(name, mechanism, iterations=4096, size=32):
    return {"name": name, "mechanism": mechanism, "iterations": iterations, "salt": b"salt",
            "saltedPassword": b"p" * size}


def _wait_visible(client, topic, timeout=30.0):
    """Until ``topic`` and alice's ACL on it reached the broker's metadata cache (serve
    has them at once)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = client.request(3, 12, {"topics": [{"topicId": NO_ID, "name": topic}],
                                   "allowAutoTopicCreation": False,
                                   "includeTopicAuthorizedOperations": False})
        if r["topics"][0]["errorCode"] == 0:
            return
        time.sleep(0.1)
    raise AssertionError(f"{topic} is not visible after {timeout} s")


def _scenario(plaintext_port: int, sasl_port: int) -> list[tuple[str, object]]:
    out = []

    def step(name, fn):
        try:
            out.append((name, fn()))
        except AssertionError as e:  # the server closed the connection
            out.append((name, f"closed: {e}"))

    admin = SaslRawClient(sasl_port)
    admin.plain("admin", "admin-secret")
    alice = SaslRawClient(sasl_port)
    alice.plain("alice", "alice-secret")
    # the ACL APIs
    step("create", lambda: admin.request(30, 3, {"creations": [
        _acl(2, "cmp-orders", 3), _acl(2, "cmp-", 4, pattern=4),
        _acl(2, "*", 8, principal="User:*"), _acl(3, "cmp-g", 3, 2, host="10.0.0.0/8"),
        _acl(2, "cmp-orders", 3)]}))
    step("create-invalid", lambda: admin.request(30, 3, {"creations": [
        _acl(4, "not-the-cluster", 7), _acl(2, "", 3), _acl(2, "x", 3, principal="alice"),
        _acl(2, "x", 3, host="10.0.0.0/99"), _acl(2, "x", 3, host=""), _acl(6, "tok", 8),
        _acl(7, "User:bob", 13)]}))
    step("create-match-pattern", lambda: admin.request(30, 3, {"creations": [
        _acl(2, "cmp-orders", 3), _acl(2, "x", 3, pattern=2)]}))
    step("create-any-operation", lambda: admin.request(30, 3, {"creations": [_acl(2, "x", 1)]}))
    for pattern, label in ((2, "match"), (3, "literal")):
        step(f"describe-{label}", lambda pattern=pattern: _sorted_describe(admin.request(
            29, 3, _filter(resourceTypeFilter=2, resourceNameFilter="cmp-orders",
                           patternTypeFilter=pattern))))
    step("describe-all", lambda: _sorted_describe(admin.request(29, 3, _filter())))
    step("describe-denied", lambda: alice.request(29, 3, _filter())["errorCode"])
    step("create-denied", lambda: [r["errorCode"] for r in alice.request(
        30, 3, {"creations": [_acl(2, "t", 3)]})["results"]])
    step("delete-denied", lambda: [r["errorCode"] for r in alice.request(
        31, 3, {"filters": [_filter()]})["filterResults"]])
    step("delete-prefixed", lambda: admin.request(31, 3, {"filters": [
        _filter(resourceTypeFilter=2, resourceNameFilter="cmp-", patternTypeFilter=4),
        _filter(resourceTypeFilter=2, resourceNameFilter="none")]}))
    # the SCRAM credential APIs
    step("scram-describe-all", lambda: _sorted_mechanisms(admin.request(50, 0, {"users": None})))
    step("scram-describe-some", lambda: _sorted_mechanisms(admin.request(50, 0, {"users": [
        {"name": "alice"}, {"name": "admin"}, {"name": "alice"}, {"name": "nobody"}]})))
    step("scram-describe-denied", lambda: alice.request(50, 0, {"users": [{"name": "a"}]}))
    step("scram-alter-invalid", lambda: admin.request(51, 0, {
        "deletions": [{"name": "nobody", "mechanism": 1}, {"name": "x", "mechanism": 7}],
        "upsertions": [_upsert("", 1), _upsert("twice", 1), _upsert("twice", 2, size=64),
                       _upsert("few", 1, 100), _upsert("many", 1, 20000)]}))
    step("scram-alter", lambda: admin.request(51, 0, {"deletions": [], "upsertions": [
        _upsert("carol", 1, 8192), _upsert("dave", 2, size=64)]}))
    # the message quotes the request's toString (the broker's forwarded one, the
    # controller's connection and session): compared from its last ") " on
    step("scram-alter-denied", lambda: [
        (r["user"], r["errorCode"], r["errorMessage"].rsplit(") ", 1)[-1])
        for r in alice.request(51, 0, {"upsertions": [], "deletions": [
            {"name": "b", "mechanism": 1}, {"name": "a", "mechanism": 1}]})["results"]])
    # the SASL exchange
    step("handshake-on-plaintext", lambda: SaslRawClient(plaintext_port).request(
        17, 1, {"mechanism": "PLAIN"}))
    c = SaslRawClient(sasl_port)
    step("handshake", lambda: c.request(17, 1, {"mechanism": "PLAIN"}))
    step("wrong-password", lambda: c.request(36, 2, {"authBytes": b"\0alice\0wrong"}))
    c = SaslRawClient(sasl_port)
    c.request(17, 1, {"mechanism": "SCRAM-SHA-256"})
    step("scram-unknown-user", lambda: c.request(36, 2, {"authBytes": b"n,,n=nobody,r=abc"}))
    step("handshake-unsupported", lambda: SaslRawClient(sasl_port).request(
        17, 1, {"mechanism": "GSSAPI"}))
    c = SaslRawClient(sasl_port)
    c.plain("alice", "alice-secret")
    for api, body, field in (
            (29, _filter(), lambda r: r["errorMessage"]),
            (30, {"creations": [_acl(2, "t", 3)]}, lambda r: r["results"][0]["errorMessage"]),
            (31, {"filters": [_filter()]}, lambda r: r["filterResults"][0]["errorMessage"])):
        # the message ends with the principal's Java toString, which differs
        step(f"denied-message-{api}", lambda api=api, body=body, field=field:
             field(alice.request(api, 3, body)).split(")")[-1])
    bob = SaslRawClient(sasl_port)
    bob.request(17, 1, {"mechanism": "PLAIN"})
    step("authenticated", lambda: bob.request(36, 2, {"authBytes": b"\0bob\0bob-secret"}))
    step("find-coordinator-v4", lambda: bob.request(
        10, 4, {"keyType": 0, "coordinatorKeys": ["g1"]})["coordinators"][0]["errorMessage"])
    step("find-coordinator-v3", lambda: bob.request(
        10, 3, {"keyType": 0, "key": "g1"})["errorMessage"])
    step("authenticate-again", lambda: c.request(36, 2, {"authBytes": b"x"}))
    step("handshake-again", lambda: c.request(17, 1, {"mechanism": "PLAIN"}))
    # what alice may see and do with READ on one topic and DESCRIBE on the cluster
    admin.request(31, 3, {"filters": [_filter()]})
    admin.request(19, 7, {"topics": [{"name": "cmp-t", "numPartitions": 1,
                                      "replicationFactor": 1, "assignments": [],
                                      "configs": []}],
                          "timeoutMs": 5000, "validateOnly": False})
    admin.request(30, 3, {"creations": [_acl(2, "cmp-t", 3), _acl(4, "kafka-cluster", 10)]})
    _wait_visible(alice, "cmp-t")
    _alice_steps(step, alice)
    admin.request(31, 3, {"filters": [_filter()]})
    admin.request(20, 6, {"topics": [{"name": "cmp-t", "topicId": NO_ID}], "timeoutMs": 5000})
    admin.request(51, 0, {"upsertions": [], "deletions": [
        {"name": "carol", "mechanism": 1}, {"name": "dave", "mechanism": 2}]})
    return out


def _alice_steps(step, alice) -> None:
    def metadata():
        r = alice.request(3, 12, {"topics": [{"topicId": NO_ID, "name": "cmp-t"},
                                             {"topicId": NO_ID, "name": "cmp-hidden"}],
                                  "allowAutoTopicCreation": True,
                                  "includeTopicAuthorizedOperations": True})
        return [(t["name"], t["errorCode"], t.get("topicAuthorizedOperations"),
                 t["topicId"] == NO_ID) for t in r["topics"]]

    partition = [{"partitionIndex": 0, "currentLeaderEpoch": -1, "timestamp": -1}]
    step("metadata", metadata)
    step("describe-cluster", lambda: alice.request(60, 1, {
        "includeClusterAuthorizedOperations": True,
        "endpointType": 1})["clusterAuthorizedOperations"])
    step("describe-configs", lambda: [(r["errorCode"], r["errorMessage"]) for r in alice.request(
        32, 4, {"resources": [
            {"resourceType": 2, "resourceName": "cmp-t", "configurationKeys": ["retention.ms"]},
            {"resourceType": 4, "resourceName": "1", "configurationKeys": ["x"]}],
            "includeSynonyms": False, "includeDocumentation": False})["results"]])
    step("create-topics", lambda: [(t["errorCode"], t["errorMessage"]) for t in alice.request(
        19, 7, {"topics": [{"name": "cmp-new", "numPartitions": 1, "replicationFactor": 1,
                            "assignments": [], "configs": []}],
                "timeoutMs": 5000, "validateOnly": False})["topics"]])
    step("delete-topics", lambda: sorted(
        (t["name"], t["errorCode"], t["errorMessage"]) for t in alice.request(20, 6, {
            "topics": [{"name": "cmp-t", "topicId": NO_ID}, {"name": "cmp-nope", "topicId": NO_ID}],
            "timeoutMs": 5000})["responses"]))
    step("init-producer-id", lambda: alice.request(22, 4, {
        "transactionalId": None, "transactionTimeoutMs": 60000, "producerId": -1,
        "producerEpoch": -1})["errorCode"])
    step("init-producer-id-transactional", lambda: alice.request(22, 4, {
        "transactionalId": "tx", "transactionTimeoutMs": 60000, "producerId": -1,
        "producerEpoch": -1}))
    step("find-coordinator-denied-v4", lambda: alice.request(
        10, 4, {"keyType": 0, "coordinatorKeys": ["g1"]}))
    step("find-coordinator-denied-v3", lambda: alice.request(10, 3, {"keyType": 1, "key": "tx"}))
    step("list-offsets", lambda: alice.request(2, 9, {
        "replicaId": -1, "isolationLevel": 0, "timeoutMs": 1000,
        "topics": [{"name": "cmp-hidden", "partitions": partition},
                   {"name": "cmp-t", "partitions": partition}]}))
    step("offset-commit", lambda: alice.request(8, 8, {
        "groupId": "g", "generationIdOrMemberEpoch": -1, "memberId": "", "groupInstanceId": None,
        "topics": [{"name": "cmp-t", "partitions": [{
            "partitionIndex": 0, "committedOffset": 0, "committedLeaderEpoch": -1,
            "committedMetadata": ""}]}]}))
    step("list-groups", lambda: alice.request(16, 5, {"statesFilter": [], "typesFilter": []}))
    step("describe-groups", lambda: alice.request(15, 5, {
        "groups": ["g"], "includeAuthorizedOperations": True}))


def test_security_answers_are_the_brokers(kafka_secured, tmp_path):
    """Every answer, step by step; the only normalisations: DescribeAcls compared as a set,
    DeleteTopics sorted (both follow hash maps), each user's SCRAM mechanisms sorted (the
    broker's order changes between runs), the denied principal's and
    request's Java toString cut."""
    theirs = _scenario(kafka_secured.port, kafka_secured.sasl_port)
    users = [parse_add_scram(a) for a in add_scram_args(SCRAM)]
    with ServerThread(tmp_path, ServerOptions(port=0, node_id=1),
                      security_configs=_serve_configs(), add_scram=users) as s:
        ours = _scenario(s.listener_port("PLAINTEXT"), s.listener_port("SASL_PLAINTEXT"))
    assert [n for n, _ in ours] == [n for n, _ in theirs]
    for (name, expected), (_, got) in zip(theirs, ours, strict=True):
        assert got == expected, name


# -- what one writes, the other reads -------------------------------------------------------

def _scram_login(port: int, mechanism: str, user: str, password: str) -> str | None:
    """None once confluent-kafka authenticated, else its error."""
    from confluent_kafka.admin import AdminClient

    errors = []
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}",
                         "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
                         "sasl.username": user, "sasl.password": password,
                         "error_cb": lambda e: errors.append(str(e))})
    try:
        admin.list_topics(timeout=5)
        return None
    except Exception as e:  # noqa: BLE001 - the client's KafkaException
        admin.poll(1)  # serves error_cb
        return str(errors or e)


def test_serve_and_kafka_read_each_others_metadata_records(kafka_secured):
    """The broker adds an ACL and a SCRAM user; serve on the broker's stopped log dir has
    them (and the --add-scram users of StorageTool's bootstrap snapshot); the ACL serve
    adds then decodes with Kafka's DumpLogSegments, and the broker, started again on the
    directory, enforces it too."""
    admin = SaslRawClient(kafka_secured.sasl_port)
    admin.plain("admin", "admin-secret")
    acl = _acl(2, "interop-", 4, perm=2, pattern=4, principal="User:bob")
    assert admin.request(30, 3, {"creations": [acl]})["results"][0]["errorCode"] == 0
    import hashlib

    salt = b"carol-salt"
    salted = hashlib.pbkdf2_hmac("sha512", b"carol-pw", salt, 4096)
    r = admin.request(51, 0, {"deletions": [], "upsertions": [{
        "name": "carol", "mechanism": 2, "iterations": 4096, "salt": salt,
        "saltedPassword": salted}]})
    assert r["results"][0]["errorCode"] == 0, r
    kafka_secured.stop()

    with ServerThread(kafka_secured.log_dir, ServerOptions(port=0, node_id=1),
                      security_configs=_serve_configs()) as s:
        port = s.listener_port("SASL_PLAINTEXT")
        assert _scram_login(port, "SCRAM-SHA-256", "alice", SCRAM["alice"]) is None
        assert _scram_login(port, "SCRAM-SHA-512", "carol", "carol-pw") is None
        assert "Authentication failed" in _scram_login(port, "SCRAM-SHA-512", "carol", "nope")
        ours = SaslRawClient(port)
        ours.plain("admin", "admin-secret")
        found = ours.request(29, 3, _filter(principalFilter="User:bob"))["resources"]
        assert found == [{"resourceType": 2, "resourceName": "interop-", "patternType": 4,
                          "acls": [{"principal": "User:bob", "host": "*", "operation": 4,
                                    "permissionType": 2}]}]
        r = ours.request(30, 3, {"creations": [_acl(3, "serve-group", 3)]})
        assert r["results"][0]["errorCode"] == 0

    segments = sorted((kafka_secured.log_dir / "__cluster_metadata-0").glob("*.log"))
    dump = kafka_tool("org.apache.kafka.tools.DumpLogSegments", "--cluster-metadata-decoder",
                      "--files", ",".join(map(str, segments)))
    assert dump.exit == 0, dump.stderr
    added = [line for line in dump.stdout.splitlines()
             if '"type":"ACCESS_CONTROL_ENTRY_RECORD"' in line and "serve-group" in line]
    assert len(added) == 1 and '"resourceType":3' in added[0] and \
        '"principal":"User:alice"' in added[0], dump.stdout[-3000:]

    # and the broker, started again on the directory, replays it with its own
    kafka_secured.start()
    theirs = SaslRawClient(kafka_secured.sasl_port)
    theirs.plain("admin", "admin-secret")
    found = _sorted_describe(theirs.request(29, 3, _filter()))["resources"]
    assert [(r["resourceName"], r["acls"][0]["principal"]) for r in found] == \
        [("interop-", "User:bob"), ("serve-group", "User:alice")]


# -- Kafka's Java client over every listener type of serve ---------------------------------

#: (listener, client configs beyond security.protocol); the certificates' paths are
#: filled in by the test
JAVA_CASES = [
    ("SSL", {"ssl.keystore.location": "{alice}"}),
    ("SASL_PLAINTEXT", {"sasl.mechanism": "PLAIN", "sasl.jaas.config":
        'org.apache.kafka.common.security.plain.PlainLoginModule required '
        'username="alice" password="alice-secret";'}),
    ("SASL_SSL", {"sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config":
        'org.apache.kafka.common.security.scram.ScramLoginModule required '
        'username="bob" password="bob-scram";'}),
    ("SASL_PLAINTEXT", {"sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config":
        'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
        'unsecuredLoginStringClaim_sub="alice";'}),
]


@pytest.fixture(scope="module")
def secure_serve(tmp_path_factory):
    d = tmp_path_factory.mktemp("java-secure")
    certs = make_certs(d / "certs")
    # Kafka's PEM keystore: the PKCS#8 key and its certificate in one file
    (d / "certs" / "alice.pem").write_bytes((d / "certs" / "alice.key").read_bytes()
                                            + (d / "certs" / "alice.crt").read_bytes())
    (d / "logs").mkdir()
    users = [parse_add_scram(a) for a in add_scram_args()]
    with ServerThread(d / "logs", ServerOptions(port=0, auto_create_topics=True),
                      server_configs={"group.initial.rebalance.delay.ms": "0"},
                      security_configs=listener_configs(certs), add_scram=users) as s:
        yield s, certs


def _java_conf(server, certs, listener, extra) -> tuple[str, dict]:
    conf = {"security.protocol": listener}
    if "SSL" in listener:
        conf.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": certs.path("ca.pem")})
    for k, v in extra.items():
        conf[k] = v.format(alice=certs.path("alice.pem"))
    if "ssl.keystore.location" in conf:
        conf["ssl.keystore.type"] = "PEM"
    return f"127.0.0.1:{server.listener_port(listener)}", conf


def _java_topic(listener, extra) -> str:
    return f"java-{listener}-{extra.get('sasl.mechanism', 'x')}".lower()


@pytest.fixture(scope="module")
def java_acks(secure_serve) -> list[list[dict]]:
    """Per case of :data:`JAVA_CASES`, the acks of 3 sends by Kafka's Java producer over
    that listener: one producer per case (its own configs and bootstrap.servers, the
    listener's port), all in ONE JVM (``{"runs": [...]}``), one JVM start instead of 4."""
    server, certs = secure_serve
    runs = []
    for listener, extra in JAVA_CASES:
        bootstrap, conf = _java_conf(server, certs, listener, extra)
        runs.append({"producer": {**conf, "acks": "all", "bootstrap.servers": bootstrap},
                     "steps": [{"op": "send", "topic": _java_topic(listener, extra),
                                "partition": 0, "timestamp": 1_700_000_000_000 + i,
                                "key": None, "value": f"v{i}"} for i in range(3)]})
    acks = java_produce(runs[0]["producer"]["bootstrap.servers"], {"runs": runs})
    assert len(acks) == 3 * len(runs), acks
    return [acks[3 * i:3 * i + 3] for i in range(len(runs))]


@pytest.mark.parametrize("listener,extra", JAVA_CASES,
                         ids=[f"{lis}-{e.get('sasl.mechanism', 'cert' if e else 'none')}"
                              for lis, e in JAVA_CASES])
def test_java_client_over_every_listener(secure_serve, java_acks, listener, extra):
    server, certs = secure_serve
    bootstrap, conf = _java_conf(server, certs, listener, extra)
    topic = _java_topic(listener, extra)
    acks = java_acks[JAVA_CASES.index((listener, extra))]
    assert [(a.get("topic"), a.get("offset"), a.get("error")) for a in acks] == \
        [(topic, 0, None), (topic, 1, None), (topic, 2, None)]
    if "ssl.keystore.location" in conf:  # one JVM less for the others
        records = java_consume(bootstrap, topic, configs=conf)
        assert [r["value"] for r in records] == [b"v0", b"v1", b"v2"]


def test_java_client_wrong_password_gets_the_brokers_message(secure_serve):
    server, certs = secure_serve
    bootstrap, conf = _java_conf(server, certs, "SASL_SSL", {
        "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config":
            'org.apache.kafka.common.security.scram.ScramLoginModule required '
            'username="alice" password="wrong";'})
    acks = java_produce(bootstrap, {"producer": {**conf, "max.block.ms": "10000"}, "steps": [
        {"op": "send", "topic": "java-refused", "partition": 0, "value": "v"}]})
    assert acks == [{"error": "SaslAuthenticationException",
                     "message": "Authentication failed during authentication due to invalid "
                                "credentials with SASL mechanism SCRAM-SHA-256"}]
