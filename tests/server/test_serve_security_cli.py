"""``kafkalog serve`` configured as a broker is configured, from the command line: every
listener reported at start-up with its bound port; the safe defaults (a PLAINTEXT
listener beyond loopback needs --allow-remote, SASL and SSL listeners do not); one clear
line (exit 2) for what serve cannot run - a JKS keystore, GSSAPI, a wrong key password -
never repeating a secret; secrets absent from the log and from DescribeConfigs;
--add-scram as kafka-storage format spells it."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from security_testkit import KEY_PASSWORD, PLAIN_USERS, SaslRawClient, make_certs, plain_jaas

from kafkalog_cli.protocol.apis import ApiKeys

ROOT = Path(__file__).resolve().parents[2]
SECRET_SCRAM = "scram-Pa55-word"


def _run(log_dir, *args, timeout=60):
    return subprocess.run([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir",
                           str(log_dir), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def _configs(*items: str) -> list[str]:
    return [a for item in items for a in ("--config", item)]


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("certs"))


def test_listeners_reported_secrets_kept_out_of_log_and_describe(tmp_path, certs):
    """A serve with SASL_SSL on every interface (no --allow-remote needed), SASL_PLAINTEXT
    and PLAINTEXT on loopback: one start-up line per listener with its bound port and how
    it authenticates; the passwords (key password, JAAS users, --add-scram) appear neither
    in the log nor in DescribeConfigs (value null, isSensitive); SIGTERM stops it."""
    cfg = _configs(
        "listeners=SASL_SSL://0.0.0.0:0,SASL_PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
        "advertised.listeners=SASL_SSL://localhost:0",
        "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512",
        f"listener.name.sasl_plaintext.plain.sasl.jaas.config={plain_jaas()}",
        f"sasl.jaas.config={plain_jaas()}",
        "ssl.keystore.type=PEM", f"ssl.keystore.location={certs.path('server-encrypted.pem')}",
        f"ssl.key.password={KEY_PASSWORD}", "sasl.mechanism.inter.broker.protocol=PLAIN")
    proc = subprocess.Popen([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir",
                             str(tmp_path), *cfg, "--add-scram",
                             f"SCRAM-SHA-512=[name=carol,password={SECRET_SCRAM}]"],
                            cwd=ROOT, stderr=subprocess.PIPE, text=True)
    log: list[str] = []
    ports = {}
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "authorizer" not in "".join(log[-1:]):
            line = proc.stderr.readline()
            if not line:
                break
            log.append(line)
            m = re.search(r"listening on (\S+):(\d+) \((\w+)", line)
            if m:
                ports[m.group(3)] = (m.group(1), int(m.group(2)), line)
        assert set(ports) == {"SASL_SSL", "SASL_PLAINTEXT", "PLAINTEXT"}, "".join(log)
        assert ports["SASL_SSL"][0] == "0.0.0.0" and ports["SASL_SSL"][1] > 0
        assert "SASL PLAIN, SCRAM-SHA-512, TLS" in ports["SASL_SSL"][2]
        assert f"advertised as localhost:{ports['SASL_SSL'][1]}" in ports["SASL_SSL"][2]
        assert "no authentication" in ports["PLAINTEXT"][2]
        threading.Thread(target=lambda: log.extend(proc.stderr), daemon=True).start()
        c = SaslRawClient(ports["SASL_PLAINTEXT"][1])
        assert c.plain("alice", PLAIN_USERS["alice"])["errorCode"] == 0
        res = c.request(ApiKeys.DESCRIBE_CONFIGS, 4, {"resources": [
            {"resourceType": 4, "resourceName": "0", "configurationKeys": [
                "ssl.key.password", "sasl.jaas.config", "ssl.keystore.location", "listeners",
                "sasl.enabled.mechanisms"]}], "includeSynonyms": True,
            "includeDocumentation": False})
        entries = {e["name"]: e for e in res["results"][0]["configs"]}
        for secret in ("ssl.key.password", "sasl.jaas.config"):
            assert (entries[secret]["value"], entries[secret]["isSensitive"]) == (None, True)
            assert all(s["value"] is None for s in entries[secret]["synonyms"])
        assert entries["sasl.enabled.mechanisms"]["value"] == "PLAIN,SCRAM-SHA-512"
        assert entries["listeners"]["value"].startswith("SASL_SSL://0.0.0.0:0")
        c.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    text = "".join(log)
    for secret in (KEY_PASSWORD, SECRET_SCRAM, *PLAIN_USERS.values()):
        assert secret not in text
    assert "sasl.mechanism.inter.broker.protocol is ignored" in text
    assert "unprefixed sasl.jaas.config" in text
    assert "stored the SCRAM-SHA-512 credential of user carol" in text


def test_plaintext_beyond_loopback_needs_allow_remote(tmp_path):
    r = _run(tmp_path, *_configs("listeners=PLAINTEXT://0.0.0.0:0"))
    assert r.returncode == 2
    assert "refusing to listen on 0.0.0.0 with listener PLAINTEXT" in r.stderr
    assert "--allow-remote" in r.stderr
    r = _run(tmp_path, *_configs("listeners=INSIDE://:0,SASL_SSL://:0",
                                 "listener.security.protocol.map=INSIDE:PLAINTEXT,SASL_SSL:SASL_SSL"))
    assert r.returncode == 2
    assert "refusing to listen on every interface with listener INSIDE" in r.stderr
    r = _run(tmp_path, "--listen", "0.0.0.0:0")
    assert r.returncode == 2 and "--allow-remote" in r.stderr


@pytest.mark.parametrize("configs,words", [
    (["listeners=SSL://127.0.0.1:0", "ssl.keystore.location=/x/server.jks",
      "ssl.keystore.password=Jks-Secret-1"], "ssl.keystore.type JKS is not supported"),
    (["listeners=SASL_PLAINTEXT://127.0.0.1:0"], "Kerberos is not supported"),
    (["listeners=SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms=PLAIN"],
     "PLAIN needs a JAAS config"),
    (["listeners=SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms=PLAIN",
      "plain.sasl.jaas.config=org.Module required user_a=\"Jaas-Secret-1\""],
     "not terminated by semi-colon"),
    (["authorizer.class.name=kafka.security.authorizer.AclAuthorizer"], "ZooKeeper"),
    (["authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
      "super.users=admin"], "principalType:principalName"),
    (["sasl.server.callback.handler.class=com.example.Handler"], "cannot be loaded"),
    (["listeners=SSL://127.0.0.1:0", "ssl.keystore.type=PEM",
      "ssl.keystore.location=KEYSTORE", "ssl.key.password=Wrong-Secret-1"],
     "Private key could not be loaded"),
])
def test_what_serve_cannot_run_is_one_line_without_secrets(tmp_path, certs, configs, words):
    configs = [c.replace("KEYSTORE", certs.path("server-encrypted.pem")) for c in configs]
    r = _run(tmp_path, *_configs(*configs))
    assert r.returncode == 2, r.stderr
    assert words in r.stderr
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not re.search(r"(Jks|Jaas|Wrong)-Secret-1", r.stderr)
    assert not any(tmp_path.iterdir())  # refused before the directory is locked or written


def test_add_scram_options_refused_cleanly(tmp_path):
    r = _run(tmp_path, "--add-scram", "SCRAM-SHA-256=[name=a,password=x,iterations=10]")
    assert r.returncode == 2 and "must be >= 4096" in r.stderr
    r = _run(tmp_path, "--read-only", "--add-scram", "SCRAM-SHA-256=[name=a,password=x]")
    assert r.returncode == 2 and "exclude each other" in r.stderr
    r = _run(tmp_path, "--listen", "127.0.0.1:0", *_configs("listeners=PLAINTEXT://:0"))
    assert r.returncode == 2 and "exclude each other" in r.stderr
