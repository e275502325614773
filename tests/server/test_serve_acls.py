"""The authorizer of serve (``authorizer.class.name=...StandardAuthorizer``,
``super.users=User:admin``) with real clients and raw requests: the ACL APIs' answers
and refusals, their records in ``__cluster_metadata`` (decoded by dump-segment, reloaded at
start), and ACLs deciding what alice may do - produce, fetch, consumer groups,
transactions, idempotence, admin requests - with DENY over ALLOW, prefixed patterns,
hosts and the principal of a client certificate; the SCRAM credential APIs; and the ACL
APIs of a server without an authorizer (SECURITY_DISABLED)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

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

from kafkalog_cli.protocol.apis import ApiKeys
from kafkalog_cli.protocol.errors import Errors
from kafkalog_cli.server.broker import ServerThread
from kafkalog_cli.server.kafka_apis import ServerOptions
from kafkalog_cli.server.security.scram import parse_add_scram

TOPIC, GROUP, CLUSTER, TXN = 2, 3, 4, 5
LITERAL, PREFIXED, MATCH, ANY_PATTERN = 3, 4, 2, 1
ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 2, 3, 4, 5, 6, 7, 8
DESCRIBE_CONFIGS, IDEMPOTENT_WRITE = 10, 12
DENY, ALLOW = 2, 3


def _serve(d, certs, add_scram=()):
    (d / "logs").mkdir(exist_ok=True)
    return ServerThread(d / "logs", ServerOptions(port=0),
                        server_configs={"group.initial.rebalance.delay.ms": "0"},
                        security_configs=listener_configs(certs, authorizer=True),
                        add_scram=add_scram)


@pytest.fixture(scope="module")
def acl_server(tmp_path_factory):
    d = tmp_path_factory.mktemp("acls")
    certs = make_certs(d / "certs")
    (d / "logs").mkdir()
    users = [parse_add_scram(a) for a in add_scram_args()]
    with ServerThread(d / "logs", ServerOptions(port=0),
                      server_configs={"group.initial.rebalance.delay.ms": "0"},
                      security_configs=listener_configs(certs, authorizer=True),
                      add_scram=users) as s:
        yield s, certs


def raw_as(server, user, listener="SASL_PLAINTEXT", certs=None) -> SaslRawClient:
    c = SaslRawClient(server.listener_port(listener),
                      ssl_context=client_ssl_context(certs) if listener == "SASL_SSL" else None)
    assert c.plain(user, PLAIN_USERS[user])["errorCode"] == 0
    return c


def acl(rtype, name, op, perm=ALLOW, principal="User:alice", pattern=LITERAL, host="*"):
    return {"resourceType": rtype, "resourceName": name, "resourcePatternType": pattern,
            "principal": principal, "host": host, "operation": op, "permissionType": perm}


def create_acls(c, *acls) -> list[tuple[int, str | None]]:
    res = c.request(ApiKeys.CREATE_ACLS, 3, {"creations": list(acls)})
    return [(r["errorCode"], r["errorMessage"]) for r in res["results"]]


def delete_acls(c, **flt) -> dict:
    f = {"resourceTypeFilter": 1, "resourceNameFilter": None, "patternTypeFilter": 1,
         "principalFilter": None, "hostFilter": None, "operation": 1, "permissionType": 1}
    f.update(flt)
    return c.request(ApiKeys.DELETE_ACLS, 3, {"filters": [f]})["filterResults"][0]


def describe_acls(c, **flt) -> dict:
    f = {"resourceTypeFilter": 1, "resourceNameFilter": None, "patternTypeFilter": 1,
         "principalFilter": None, "hostFilter": None, "operation": 1, "permissionType": 1}
    f.update(flt)
    return c.request(ApiKeys.DESCRIBE_ACLS, 3, f)


def _as_set(described: dict) -> set:
    return {(r["resourceType"], r["resourceName"], r["patternType"], a["principal"], a["host"],
             a["operation"], a["permissionType"])
            for r in described["resources"] for a in r["acls"]}


def _ck(server, user, password=None, **extra):
    return {"bootstrap.servers": f"127.0.0.1:{server.listener_port('SASL_PLAINTEXT')}",
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": user, "sasl.password": password or SCRAM_USERS[user], **extra}


# -- the ACL APIs ----------------------------------------------------------------------------

def test_acl_apis_create_describe_delete_as_the_controller_answers(acl_server):
    """CreateAcls validates each binding (AclApis then AclControlManager, Kafka 4.4's
    messages), an equal binding is created once, DescribeAcls filters (MATCH finds the
    literal, wildcard and prefixed ACLs covering a name), DeleteAcls answers what each
    filter removed."""
    server, _ = acl_server
    admin = raw_as(server, "admin")
    good = [acl(TOPIC, "api-orders", READ), acl(TOPIC, "api-", WRITE, pattern=PREFIXED),
            acl(TOPIC, "*", DESCRIBE, principal="User:*"),
            acl(GROUP, "api-g", READ, DENY, host="10.0.0.0/8")]
    assert create_acls(admin, *good, good[0]) == [(0, "")] * 5
    bad = [acl(CLUSTER, "not-the-cluster", ALTER), acl(TOPIC, "", READ),
           acl(TOPIC, "x", READ, principal="alice"), acl(TOPIC, "x", READ, host="10.0.0.0/99"),
           acl(TOPIC, "x", READ, host="")]
    out = create_acls(admin, *bad)
    assert [e for e, _ in out] == [Errors.INVALID_REQUEST] * 5
    assert out[0][1] == "The only valid name for the CLUSTER resource is kafka-cluster"
    assert out[1][1] == "Invalid empty resource name"
    assert out[2][1] == ("Could not parse principal from `alice` (no colon is present "
                         "separating the principal type from the principal name)")
    assert out[3][1] == "Invalid CIDR notation '10.0.0.0/99': Value [99] not in range [0,32]"
    assert out[4][1] == "Host pattern cannot be null or empty"
    # an ANY / MATCH in a creation: CreateAclsRequest.aclBinding throws, the request fails
    assert create_acls(admin, good[0], acl(TOPIC, "x", READ, pattern=MATCH)) == [
        (Errors.UNKNOWN_SERVER_ERROR, None)] * 2
    match = describe_acls(admin, resourceTypeFilter=TOPIC, resourceNameFilter="api-orders",
                          patternTypeFilter=MATCH)
    assert match["errorCode"] == 0
    assert _as_set(match) == {(TOPIC, "api-orders", LITERAL, "User:alice", "*", READ, ALLOW),
                              (TOPIC, "api-", PREFIXED, "User:alice", "*", WRITE, ALLOW),
                              (TOPIC, "*", LITERAL, "User:*", "*", DESCRIBE, ALLOW)}
    literal = describe_acls(admin, resourceTypeFilter=TOPIC, resourceNameFilter="api-orders",
                            patternTypeFilter=LITERAL)
    assert _as_set(literal) == {(TOPIC, "api-orders", LITERAL, "User:alice", "*", READ, ALLOW)}
    removed = delete_acls(admin, resourceTypeFilter=TOPIC, resourceNameFilter="api-",
                          patternTypeFilter=PREFIXED)
    assert removed["errorCode"] == 0
    assert [(m["resourceName"], m["patternType"], m["operation"]) for m in
            removed["matchingAcls"]] == [("api-", PREFIXED, WRITE)]
    assert delete_acls(admin, resourceTypeFilter=TOPIC, resourceNameFilter="nothing")[
        "matchingAcls"] == []
    for g in good[:1] + good[2:]:
        delete_acls(admin, resourceTypeFilter=g["resourceType"],
                    resourceNameFilter=g["resourceName"], patternTypeFilter=LITERAL)
    admin.close()


def test_acl_apis_need_the_cluster_permissions(acl_server):
    """DescribeAcls needs DESCRIBE on the cluster, CreateAcls and DeleteAcls ALTER: alice
    gets CLUSTER_AUTHORIZATION_FAILED for each entry, then (ALTER granted) may create."""
    server, _ = acl_server
    alice = raw_as(server, "alice")
    d = describe_acls(alice)
    assert d["errorCode"] == Errors.CLUSTER_AUTHORIZATION_FAILED and d["resources"] == []
    assert d["errorMessage"].endswith("needs DESCRIBE permission.")
    assert [e for e, _ in create_acls(alice, acl(TOPIC, "t", READ), acl(TOPIC, "u", READ))] \
        == [Errors.CLUSTER_AUTHORIZATION_FAILED] * 2
    assert delete_acls(alice)["errorCode"] == Errors.CLUSTER_AUTHORIZATION_FAILED
    admin = raw_as(server, "admin")
    assert create_acls(admin, acl(CLUSTER, "kafka-cluster", ALTER)) == [(0, "")]
    assert create_acls(alice, acl(TOPIC, "by-alice", READ, principal="User:bob")) == [(0, "")]
    # ALTER implies DESCRIBE (StandardAuthorizer), so alice may describe now
    assert describe_acls(alice, resourceTypeFilter=TOPIC, resourceNameFilter="by-alice",
                         patternTypeFilter=LITERAL)["errorCode"] == 0
    delete_acls(admin, resourceTypeFilter=CLUSTER)
    delete_acls(admin, resourceTypeFilter=TOPIC, resourceNameFilter="by-alice")
    alice.close()
    admin.close()


def test_acls_and_scram_users_live_in_cluster_metadata(tmp_path):
    """The records of CreateAcls, DeleteAcls, AlterUserScramCredentials and --add-scram
    are in __cluster_metadata-0 (dump-segment decodes them; no password anywhere in the
    file), and a restarted server enforces the same ACLs and users."""
    certs = make_certs(tmp_path / "certs")
    users = [parse_add_scram("SCRAM-SHA-512=[name=admin,password=admin-scram]")]
    with _serve(tmp_path, certs, add_scram=users) as s:
        admin = raw_as(s, "admin")
        assert create_acls(admin, acl(TOPIC, "kept", READ), acl(TOPIC, "gone", READ)) == \
            [(0, "")] * 2
        assert len(delete_acls(admin, resourceTypeFilter=TOPIC, resourceNameFilter="gone")[
            "matchingAcls"]) == 1
        admin.close()
    seg = tmp_path / "logs" / "__cluster_metadata-0" / "00000000000000000000.log"
    out = subprocess.run([sys.executable, "-m", "kafkalog_cli", "dump-segment", str(seg),
                          "--cluster-metadata-decoder", "-o", "json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    types = [x["value"]["type"] for x in lines if x["type"] == "record"]
    assert types == ["USER_SCRAM_CREDENTIAL_RECORD", "ACCESS_CONTROL_ENTRY_RECORD",
                     "ACCESS_CONTROL_ENTRY_RECORD", "REMOVE_ACCESS_CONTROL_ENTRY_RECORD"]
    assert b"admin-scram" not in seg.read_bytes()
    assert (tmp_path / "logs" / "__cluster_metadata-0" / "partition.metadata").read_text() == \
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
    with _serve(tmp_path, certs) as s:
        c = SaslRawClient(s.listener_port("SASL_PLAINTEXT"))
        hs = c.request(ApiKeys.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-512"})
        assert hs["errorCode"] == 0
        c.close()
        admin = raw_as(s, "admin")
        assert _as_set(describe_acls(admin)) == {
            (TOPIC, "kept", LITERAL, "User:alice", "*", READ, ALLOW)}
        admin.close()


# -- ACLs deciding what clients may do ------------------------------------------------------

def _create_topic(server, name: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    a = AdminClient(_ck(server, "admin"))
    a.create_topics([NewTopic(name, 1)])[name].result(10)

def _produce(server, user, topic, **extra):
    from confluent_kafka import Producer

    p = Producer({**_ck(server, user), "message.timeout.ms": 5000, **extra})
    errors = []
    p.produce(topic, b"v", on_delivery=lambda e, m: errors.append(e))
    p.flush(8)
    return errors[0] if errors else "no delivery report"


def test_produce_and_fetch_follow_the_acls(acl_server):
    """alice may not write a topic without WRITE (TOPIC_AUTHORIZATION_FAILED), may with a
    prefixed WRITE, not when a DENY names her (DENY over ALLOW); she reads with READ, and a
    READ for another host does not apply."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    server, _ = acl_server
    _create_topic(server, "pf-orders")
    _create_topic(server, "pf-audit")
    admin = raw_as(server, "admin")
    err = _produce(server, "alice", "pf-orders")
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert create_acls(admin, acl(TOPIC, "pf-", WRITE, pattern=PREFIXED)) == [(0, "")]
    assert _produce(server, "alice", "pf-orders") is None
    assert create_acls(admin, acl(TOPIC, "pf-audit", ALL, DENY)) == [(0, "")]
    err = _produce(server, "alice", "pf-audit")
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    def read_one():
        c = Consumer({**_ck(server, "alice"), "group.id": "pf-reader", "enable.auto.commit":
                      False})
        c.assign([TopicPartition("pf-orders", 0, 0)])
        deadline = time.time() + 8
        try:
            while time.time() < deadline:
                m = c.poll(0.5)
                if m is not None:
                    return m.error().code() if m.error() else m.value()
        finally:
            c.close()

    assert create_acls(admin, acl(TOPIC, "pf-orders", READ, host="10.9.9.9"),
                       acl(GROUP, "pf-reader", READ)) == [(0, "")] * 2
    assert read_one() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert create_acls(admin, acl(TOPIC, "pf-orders", READ, host="127.0.0.1")) == [(0, "")]
    assert read_one() == b"v"
    delete_acls(admin, principalFilter="User:alice")
    admin.close()


def test_consumer_groups_need_read_on_the_group(acl_server):
    """A group consumer needs READ on the group (GROUP_AUTHORIZATION_FAILED without it)
    and READ on its topics; OffsetCommit checks the group before the topics."""
    from confluent_kafka import Consumer, KafkaError

    server, _ = acl_server
    _create_topic(server, "grp-t")
    admin = raw_as(server, "admin")
    assert create_acls(admin, acl(TOPIC, "grp-t", READ)) == [(0, "")]

    def consume():
        c = Consumer({**_ck(server, "alice"), "group.id": "grp-app",
                      "auto.offset.reset": "earliest", "session.timeout.ms": 6000})
        c.subscribe(["grp-t"])
        deadline = time.time() + 10
        try:
            while time.time() < deadline:
                m = c.poll(0.5)
                if m is not None and m.error():
                    return m.error().code()
                if c.assignment():
                    return "assigned"
        finally:
            c.close()

    assert consume() == KafkaError.GROUP_AUTHORIZATION_FAILED
    assert create_acls(admin, acl(GROUP, "grp-", READ, pattern=PREFIXED)) == [(0, "")]
    assert consume() == "assigned"
    alice = raw_as(server, "alice")
    res = alice.request(ApiKeys.OFFSET_COMMIT, 8, {
        "groupId": "no-acl-group", "generationIdOrMemberEpoch": -1, "memberId": "",
        "groupInstanceId": None, "topics": [{"name": "grp-t", "partitions": [
            {"partitionIndex": 0, "committedOffset": 0, "committedLeaderEpoch": -1,
             "committedMetadata": ""}]}]})
    assert res["topics"][0]["partitions"][0]["errorCode"] == Errors.GROUP_AUTHORIZATION_FAILED
    res = alice.request(ApiKeys.OFFSET_COMMIT, 8, {
        "groupId": "grp-x", "generationIdOrMemberEpoch": -1, "memberId": "",
        "groupInstanceId": None, "topics": [{"name": "no-such-topic", "partitions": [
            {"partitionIndex": 0, "committedOffset": 0, "committedLeaderEpoch": -1,
             "committedMetadata": ""}]}]})
    assert res["topics"][0]["partitions"][0]["errorCode"] == Errors.TOPIC_AUTHORIZATION_FAILED
    alice.close()
    delete_acls(admin, resourceTypeFilter=GROUP)
    delete_acls(admin, resourceTypeFilter=TOPIC, resourceNameFilter="grp-t")
    admin.close()


def test_transactions_and_idempotence_need_their_acls(acl_server):
    """A transactional producer needs WRITE on its transactional id
    (TRANSACTIONAL_ID_AUTHORIZATION_FAILED without it); an idempotent one IDEMPOTENT_WRITE on
    the cluster or WRITE on some topic (CLUSTER_AUTHORIZATION_FAILED without)."""
    from confluent_kafka import KafkaException, Producer

    server, _ = acl_server
    _create_topic(server, "tx-t")
    admin = raw_as(server, "admin")
    p = Producer({**_ck(server, "alice"), "transactional.id": "tx-alice"})
    with pytest.raises(KafkaException) as e:
        p.init_transactions(10)
    assert "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" in str(e.value) or \
        "Transactional Id authorization failed" in str(e.value)
    assert create_acls(admin, acl(TXN, "tx-alice", WRITE), acl(TOPIC, "tx-t", WRITE)) == [
        (0, "")] * 2
    p = Producer({**_ck(server, "alice"), "transactional.id": "tx-alice"})
    p.init_transactions(10)
    p.begin_transaction()
    p.produce("tx-t", b"in a transaction")
    p.commit_transaction(10)
    alice = raw_as(server, "bob")
    res = alice.request(ApiKeys.INIT_PRODUCER_ID, 4, {
        "transactionalId": None, "transactionTimeoutMs": 60000, "producerId": -1,
        "producerEpoch": -1})
    assert res["errorCode"] == Errors.CLUSTER_AUTHORIZATION_FAILED
    assert create_acls(admin, acl(CLUSTER, "kafka-cluster", IDEMPOTENT_WRITE,
                                  principal="User:bob")) == [(0, "")]
    res = alice.request(ApiKeys.INIT_PRODUCER_ID, 4, {
        "transactionalId": None, "transactionTimeoutMs": 60000, "producerId": -1,
        "producerEpoch": -1})
    assert res["errorCode"] == 0
    alice.close()
    for rt in (TXN, CLUSTER):
        delete_acls(admin, resourceTypeFilter=rt)
    delete_acls(admin, resourceTypeFilter=TOPIC, resourceNameFilter="tx-t")
    admin.close()


def test_admin_requests_and_metadata_follow_the_acls(acl_server):
    """CreateTopics needs CREATE (TOPIC_AUTHORIZATION_FAILED "Authorization failed."
    otherwise), DeleteTopics DELETE; Metadata of all topics leaves out those alice may not
    describe and answers a named one TOPIC_AUTHORIZATION_FAILED without its id;
    DescribeConfigs needs DESCRIBE_CONFIGS; the authorized-operations fields say what she
    may do."""
    server, _ = acl_server
    admin = raw_as(server, "admin")
    alice = raw_as(server, "alice")
    body = {"topics": [{"name": "adm-new", "numPartitions": 1, "replicationFactor": 1,
                        "assignments": [], "configs": []}], "timeoutMs": 5000,
            "validateOnly": False}
    res = alice.request(ApiKeys.CREATE_TOPICS, 7, body)["topics"][0]
    assert (res["errorCode"], res["errorMessage"]) == (Errors.TOPIC_AUTHORIZATION_FAILED,
                                                       "Authorization failed.")
    assert create_acls(admin, acl(TOPIC, "adm-", CREATE, pattern=PREFIXED)) == [(0, "")]
    res = alice.request(ApiKeys.CREATE_TOPICS, 7, body)["topics"][0]
    assert res["errorCode"] == 0
    # created, but without DESCRIBE_CONFIGS the configs are not shown
    assert res["topicConfigErrorCode"] == Errors.TOPIC_AUTHORIZATION_FAILED and \
        res["configs"] == []
    md = alice.request(ApiKeys.METADATA, 12, {"topics": None, "allowAutoTopicCreation": False,
                                              "includeTopicAuthorizedOperations": True})
    assert "adm-new" not in [t["name"] for t in md["topics"]]
    md = alice.request(ApiKeys.METADATA, 12, {
        "topics": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAA", "name": "adm-new"}],
        "allowAutoTopicCreation": False, "includeTopicAuthorizedOperations": True})
    assert (md["topics"][0]["errorCode"], md["topics"][0]["topicId"]) == (
        Errors.TOPIC_AUTHORIZATION_FAILED, "AAAAAAAAAAAAAAAAAAAAAA")
    assert create_acls(admin, acl(TOPIC, "adm-new", READ)) == [(0, "")]
    md = alice.request(ApiKeys.METADATA, 12, {"topics": None, "allowAutoTopicCreation": False,
                                              "includeTopicAuthorizedOperations": True})
    [t] = [t for t in md["topics"] if t["name"] == "adm-new"]
    # CREATE (the prefixed ACL), READ and DESCRIBE (implied by READ)
    assert t["topicAuthorizedOperations"] == (1 << READ) | (1 << CREATE) | (1 << DESCRIBE)
    res = alice.request(ApiKeys.DESCRIBE_CONFIGS, 4, {"resources": [
        {"resourceType": 2, "resourceName": "adm-new", "configurationKeys": None},
        {"resourceType": 4, "resourceName": "0", "configurationKeys": None}],
        "includeSynonyms": False, "includeDocumentation": False})["results"]
    assert [(r["resourceType"], r["errorCode"], r["errorMessage"]) for r in res] == [
        (2, Errors.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."),
        (4, Errors.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")]
    res = alice.request(ApiKeys.DELETE_TOPICS, 6, {"topics": [
        {"name": "adm-new", "topicId": "AAAAAAAAAAAAAAAAAAAAAA"},
        {"name": "adm-missing", "topicId": "AAAAAAAAAAAAAAAAAAAAAA"}], "timeoutMs": 5000})
    # adm-missing: not describable, so TOPIC_AUTHORIZATION_FAILED, not UNKNOWN_TOPIC
    assert [r["errorCode"] for r in res["responses"]] == [
        Errors.TOPIC_AUTHORIZATION_FAILED, Errors.TOPIC_AUTHORIZATION_FAILED]
    dc = alice.request(ApiKeys.DESCRIBE_CLUSTER, 1, {"includeClusterAuthorizedOperations": True,
                                                     "endpointType": 1})
    assert dc["clusterAuthorizedOperations"] == 0
    delete_acls(admin, resourceTypeFilter=TOPIC, resourceNameFilter="adm-",
                patternTypeFilter=MATCH)
    alice.close()
    admin.close()


def test_certificate_principal_takes_the_acls(acl_server):
    """On the SSL listener the principal is the client certificate's subject mapped by
    ssl.principal.mapping.rules (User:alice): her ACLs apply; without a certificate the
    principal is ANONYMOUS."""
    from confluent_kafka import KafkaError, Producer

    server, certs = acl_server
    _create_topic(server, "cert-t")
    admin = raw_as(server, "admin")
    assert create_acls(admin, acl(TOPIC, "cert-t", WRITE)) == [(0, "")]

    def produce(cert):
        conf = {"bootstrap.servers": f"127.0.0.1:{server.listener_port('SSL')}",
                "security.protocol": "SSL", "ssl.ca.location": certs.path("ca.pem"),
                "message.timeout.ms": 5000}
        if cert:
            conf.update({"ssl.certificate.location": certs.path(f"{cert}.crt"),
                         "ssl.key.location": certs.path(f"{cert}.key")})
        p = Producer(conf)
        errors = []
        p.produce("cert-t", b"x", on_delivery=lambda e, m: errors.append(e))
        p.flush(8)
        return errors[0]

    assert produce("alice") is None
    assert produce("bob").code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert produce(None).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    delete_acls(admin, resourceTypeFilter=TOPIC, resourceNameFilter="cert-t")
    admin.close()


# -- SCRAM credentials -----------------------------------------------------------------------

def test_scram_credentials_apis_with_the_admin_client(acl_server):
    """AlterUserScramCredentials (the admin client salts the password) makes a user who
    can log in at once; DescribeUserScramCredentials lists mechanisms and iterations; a
    deleted credential no longer logs in; errors as ScramControlManager words them;
    alice may not (CLUSTER_AUTHORIZATION_FAILED)."""
    from confluent_kafka import KafkaException, Producer
    from confluent_kafka.admin import (
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    server, _ = acl_server
    a = AdminClient(_ck(server, "admin"))
    up = UserScramCredentialUpsertion("carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512,
                                                                   8192), b"carol-pw")
    for f in a.alter_user_scram_credentials([up]).values():
        f.result(10)
    info = a.describe_user_scram_credentials(["carol"])["carol"].result(10).scram_credential_infos
    assert [(i.mechanism, i.iterations) for i in info] == [(ScramMechanism.SCRAM_SHA_512, 8192)]
    p = Producer({**_ck(server, "carol", "carol-pw"), "message.timeout.ms": 3000})
    assert len(p.list_topics(timeout=10).brokers) == 1
    del p
    everyone = a.describe_user_scram_credentials(None).result(10)
    assert {"admin", "alice", "bob", "carol"} <= set(everyone)
    bad = UserScramCredentialUpsertion("dave", ScramCredentialInfo(
        ScramMechanism.SCRAM_SHA_256, 100), b"pw")
    with pytest.raises(KafkaException, match="Too few iterations"):
        a.alter_user_scram_credentials([bad])["dave"].result(10)
    gone = UserScramCredentialDeletion("carol", ScramMechanism.SCRAM_SHA_512)
    a.alter_user_scram_credentials([gone])["carol"].result(10)
    with pytest.raises(KafkaException, match="does not exist"):
        a.describe_user_scram_credentials(["carol"])["carol"].result(10)
    alice = raw_as(server, "alice")
    res = alice.request(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {"users": [{"name": "a"}]})
    assert res["errorCode"] == Errors.CLUSTER_AUTHORIZATION_FAILED
    assert res["results"] == [{"user": "", "errorCode": Errors.CLUSTER_AUTHORIZATION_FAILED,
                               "errorMessage": None, "credentialInfos": []}]
    res = alice.request(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, 0, {"deletions": [
        {"name": "b", "mechanism": 1}, {"name": "a", "mechanism": 1}], "upsertions": []})
    assert [(r["user"], r["errorCode"]) for r in res["results"]] == [
        ("a", Errors.CLUSTER_AUTHORIZATION_FAILED), ("b", Errors.CLUSTER_AUTHORIZATION_FAILED)]
    alice.close()
    admin = raw_as(server, "admin")
    res = admin.request(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, 0, {
        "deletions": [{"name": "nobody", "mechanism": 1}, {"name": "x", "mechanism": 7}],
        "upsertions": [{"name": "", "mechanism": 1, "iterations": 4096, "salt": b"s",
                        "saltedPassword": b"p" * 32},
                       {"name": "twice", "mechanism": 1, "iterations": 4096, "salt": b"s",
                        "saltedPassword": b"p" * 32},
                       {"name": "twice", "mechanism": 2, "iterations": 4096, "salt": b"s",
                        "saltedPassword": b"p" * 64}]})
    assert {r["user"]: (r["errorCode"], r["errorMessage"]) for r in res["results"]} == {
        "nobody": (Errors.RESOURCE_NOT_FOUND,
                   "Attempt to delete a user credential that does not exist"),
        "x": (Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        "": (Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
        "twice": (Errors.DUPLICATE_RESOURCE,
                  "A user credential cannot be altered twice in the same request")}
    res = admin.request(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {
        "users": [{"name": "bob"}, {"name": "bob"}, {"name": "nobody"}]})
    assert {r["user"]: r["errorCode"] for r in res["results"]} == {
        "bob": Errors.DUPLICATE_RESOURCE, "nobody": Errors.RESOURCE_NOT_FOUND}
    admin.close()


def test_acl_apis_without_an_authorizer_answer_security_disabled(tmp_path):
    """A broker without authorizer.class.name answers the ACL APIs SECURITY_DISABLED
    (and the SCRAM APIs work)."""
    (tmp_path / "logs").mkdir()
    with ServerThread(tmp_path / "logs", ServerOptions(port=0)) as s:
        c = SaslRawClient(s.port)
        d = describe_acls(c)
        assert (d["errorCode"], d["errorMessage"]) == (Errors.SECURITY_DISABLED,
                                                       "No Authorizer is configured on the broker")
        assert create_acls(c, acl(TOPIC, "t", READ)) == [
            (Errors.SECURITY_DISABLED, "No Authorizer is configured.")]
        r = delete_acls(c)
        assert (r["errorCode"], r["errorMessage"]) == (Errors.SECURITY_DISABLED,
                                                       "No Authorizer is configured.")
        res = c.request(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {"users": None})
        assert (res["errorCode"], res["results"]) == (0, [])
        c.close()


def test_read_only_server_enforces_a_copied_directorys_acls(tmp_path):
    """serve --read-only over a directory whose __cluster_metadata holds ACLs and users
    enforces them and refuses to change them (CLUSTER_AUTHORIZATION_FAILED), writing
    nothing."""
    certs = make_certs(tmp_path / "certs")
    users = [parse_add_scram(a) for a in add_scram_args()]
    with _serve(tmp_path, certs, add_scram=users) as s:
        admin = raw_as(s, "admin")
        assert create_acls(admin, acl(TOPIC, "ro", READ)) == [(0, "")]
        admin.close()
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "logs").rglob("*")}
    with ServerThread(tmp_path / "logs", ServerOptions(port=0, read_only=True),
                      security_configs=listener_configs(certs, authorizer=True)) as s:
        admin = raw_as(s, "admin")
        assert _as_set(describe_acls(admin)) == {
            (TOPIC, "ro", LITERAL, "User:alice", "*", READ, ALLOW)}
        assert create_acls(admin, acl(TOPIC, "x", READ))[0][0] == \
            Errors.CLUSTER_AUTHORIZATION_FAILED
        admin.close()
        c = SaslRawClient(s.listener_port("SASL_PLAINTEXT"))
        assert c.request(ApiKeys.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"})[
            "errorCode"] == 0
        c.close()
    after = {p: p.stat().st_mtime_ns for p in (tmp_path / "logs").rglob("*")}
    assert after == before


def test_denied_find_coordinator_makes_no_coordinator_topic(tmp_path):
    """KafkaApis.getCoordinator checks DESCRIBE on the group / transactional id before it
    looks the coordinator up, so a denied lookup does not create __consumer_offsets or
    __transaction_state (it did: the topic was made first); an allowed one does."""
    certs = make_certs(tmp_path / "certs")
    with _serve(tmp_path, certs) as s:
        alice, admin = raw_as(s, "alice"), raw_as(s, "admin")
        for key_type, error in ((0, Errors.GROUP_AUTHORIZATION_FAILED),
                                (1, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)):
            r = alice.request(ApiKeys.FIND_COORDINATOR, 4,
                              {"keyType": key_type, "coordinatorKeys": ["k1", "k2"]})
            assert [c["errorCode"] for c in r["coordinators"]] == [error, error]
            r = alice.request(ApiKeys.FIND_COORDINATOR, 3, {"keyType": key_type, "key": "k"})
            assert r["errorCode"] == error

        def internal_topics():
            r = admin.request(ApiKeys.METADATA, 12, {
                "topics": None, "allowAutoTopicCreation": False,
                "includeTopicAuthorizedOperations": False})
            return sorted(t["name"] for t in r["topics"] if t["name"].startswith("__"))

        assert internal_topics() == []
        r = admin.request(ApiKeys.FIND_COORDINATOR, 4, {"keyType": 0, "coordinatorKeys": ["g"]})
        assert r["coordinators"][0]["errorCode"] == 0
        assert internal_topics() == ["__consumer_offsets"]
        alice.close()
        admin.close()
