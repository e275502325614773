"""A Spark standalone cluster on 127.0.0.1 for tests and benchmarks: one master and N
workers started from pyspark's own ``bin/spark-class``
(``org.apache.spark.deploy.master.Master`` / ``org.apache.spark.deploy.worker.Worker``),
each a JVM of its own with its own work directory, stopped by pid.

    with StandaloneCluster(tmp, workers=2) as c:
        spark = get_session(c.master, conf=c.app_conf())

Small on purpose (the development machine has 2 cores): each worker offers 1 core and
``worker_memory``; :meth:`app_conf` asks for executors that fit (1 core, 512m).
Executors run with the worker's environment: their Python is ``PYSPARK_PYTHON`` of the
driver (this interpreter, unless the caller says otherwise), their current directory the
worker's ``<work dir>/<app id>/<executor id>/``, which is not the driver's.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StandaloneCluster:
    """Master + ``workers`` workers on 127.0.0.1 (see the module docstring).

    Attributes:
        master: ``spark://127.0.0.1:<port>``.
        workers: the worker processes (``subprocess.Popen``), in start order.
        work_dirs: each worker's work directory (executors' current directories are
            inside).
    """

    def __init__(self, root: Path, workers: int = 2, *, worker_memory: str = "1g",
                 worker_env: dict | None = None, timeout: float = 180):
        self.root = Path(root)
        self.n = workers
        self.worker_memory = worker_memory
        self.worker_env = worker_env or {}
        self.timeout = timeout
        self.master = ""
        self.master_proc: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self.work_dirs: list[Path] = []
        self._logs: list = []

    # -- lifecycle -----------------------------------------------------------------------------

    def _env(self, extra: dict | None = None) -> dict:
        env = dict(os.environ)
        env.update({"SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
                    "SPARK_DAEMON_MEMORY": "256m", "SPARK_NO_DAEMONIZE": "1",
                    "PYSPARK_PYTHON": env.get("PYSPARK_PYTHON", sys.executable)})
        env.update(extra or {})
        return env

    def _spawn(self, name: str, args: list[str], env: dict) -> subprocess.Popen:
        log = open(self.root / f"{name}.log", "wb")
        self._logs.append(log)
        return subprocess.Popen([str(SPARK_CLASS), *args], stdout=log, stderr=subprocess.STDOUT,
                                env=env, cwd=self.root, start_new_session=True)

    def start(self) -> StandaloneCluster:
        self.root.mkdir(parents=True, exist_ok=True)
        port = _free_port()
        self.master = f"spark://127.0.0.1:{port}"
        self.master_proc = self._spawn("master", [
            "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
            str(port), "--webui-port", "0"], self._env())
        self._wait_log("master", r"I have been elected leader|Starting Spark master")
        for i in range(self.n):
            self.start_worker(i)
        return self

    def start_worker(self, i: int) -> subprocess.Popen:
        work = self.root / f"worker-{i}"
        work.mkdir(exist_ok=True)
        proc = self._spawn(f"worker-{i}", [
            "org.apache.spark.deploy.worker.Worker", self.master, "--host", "127.0.0.1",
            "--cores", "1", "--memory", self.worker_memory, "--work-dir", str(work),
            "--webui-port", "0"], self._env(self.worker_env))
        if i < len(self.workers):
            self.workers[i] = proc
        else:
            self.workers.append(proc)
            self.work_dirs.append(work)
        self._wait_log(f"worker-{i}", r"Successfully registered with master", proc=proc)
        return proc

    def _wait_log(self, name: str, pattern: str, proc: subprocess.Popen | None = None) -> None:
        path = self.root / f"{name}.log"
        deadline = time.monotonic() + self.timeout
        seen = 0
        while time.monotonic() < deadline:
            text = path.read_text(errors="replace") if path.exists() else ""
            if re.search(pattern, text[seen:] if proc is None else text):
                return
            p = proc or self.master_proc
            if p is not None and p.poll() is not None:
                raise RuntimeError(f"{name} exited ({p.returncode}):\n{text[-3000:]}")
            time.sleep(0.3)
        raise TimeoutError(f"{name} did not start in {self.timeout} s:\n"
                           f"{path.read_text(errors='replace')[-3000:]}")

    def kill_worker(self, i: int) -> None:
        """``kill -9`` worker ``i`` and the executor JVM it launched (its process group)."""
        p = self.workers[i]
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()

    def stop(self) -> None:
        """Stop every JVM this cluster started (workers, their executors, the master)."""
        for p in [*self.workers, self.master_proc]:
            if p is None or p.poll() is not None:
                continue
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for p in [*self.workers, self.master_proc]:
            if p is None:
                continue
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for f in self._logs:
            f.close()

    def __enter__(self) -> StandaloneCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- apps ----------------------------------------------------------------------------------

    def app_conf(self, **extra) -> dict:
        """Spark conf for an application on this cluster: executors of 1 core and 512m (one
        per worker), the driver on 127.0.0.1."""
        conf = {"spark.executor.memory": "512m", "spark.executor.cores": "1",
                "spark.cores.max": str(self.n), "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.sql.shuffle.partitions": str(self.n),
                "spark.default.parallelism": str(self.n)}
        conf.update(extra)
        return conf

    def executor_dirs(self) -> list[Path]:
        """The executors' current directories, ``<work>/<app>/<executor id>/``."""
        return sorted(p for w in self.work_dirs for p in w.glob("app-*/*") if p.is_dir())
