"""``kafkalog serve --log-dir``: the directory as a broker takes it. A missing one is
created (LogManager.createAndValidateLogDirs), and the node id is the one its
meta.properties stores (MetaPropertiesEnsemble.verify refuses a different one). The
oracle for the node id served is kafka-python's DescribeCluster."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys

from kafkalog_testkit import REPO


def _start(*args: str) -> tuple[subprocess.Popen, int, int]:
    """Start ``kafkalog serve ARGS``; returns the process, its port and the node id it
    says it serves as, once it listens."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.Popen([sys.executable, "-m", "kafkalog_cli", "serve", "--listen",
                          "127.0.0.1:0", *args], stderr=subprocess.PIPE, text=True, env=env)
    port = None
    for line in p.stderr:  # "listening on HOST:PORT (...)" per listener, then "node N, ..."
        m = re.search(r"listening on 127\.0\.0\.1:(\d+) ", line)
        if m and port is None:
            port = int(m.group(1))
        m = re.search(r"kafkalog serve: node (\d+),", line)
        if m and port is not None:
            return p, port, int(m.group(1))
    p.wait(30)
    raise AssertionError(f"serve did not start (exit {p.returncode})")


def _stop(p: subprocess.Popen) -> None:
    p.send_signal(signal.SIGTERM)
    p.stderr.read()
    assert p.wait(60) == 0


def test_a_missing_log_dir_is_created(tmp_path):
    d = tmp_path / "new" / "kafka-logs"
    p, _, node = _start("--log-dir", str(d))
    try:
        assert d.is_dir() and node == 0
    finally:
        _stop(p)
    assert "node.id=0" in (d / "meta.properties").read_text()
    # --read-only creates nothing: refused, one line
    gone = tmp_path / "gone"
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir", str(gone),
                        "--read-only"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=60)
    assert r.returncode == 2 and "does not exist" in r.stderr and not gone.exists()


def test_the_node_id_is_meta_properties(tmp_path, fixtures_root):
    from kafka.admin import KafkaAdminClient

    d = tmp_path / "logs"
    d.mkdir()
    shutil.copy(fixtures_root / "meta.properties", d)  # node.id=1
    shutil.copytree(fixtures_root / "plain-0", d / "plain-0")
    p, port, node = _start("--log-dir", str(d))
    try:
        assert node == 1
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}",
                                 request_timeout_ms=20000)
        try:
            cluster = admin.describe_cluster()
        finally:
            admin.close()
        assert [b["broker_id"] for b in cluster["brokers"]] == [1]
        assert cluster["controller_id"] == 1
    finally:
        _stop(p)
    # a different --node-id is refused with the broker's message
    r = subprocess.run([sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir", str(d),
                        "--node-id", "2"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=60)
    assert r.returncode == 2
    assert f"Stored node id 1 doesn't match previous node id 2 in {d / 'meta.properties'}" \
        in r.stderr
