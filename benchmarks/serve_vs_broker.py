"""``kafkalog serve`` against the Apache Kafka broker on the same machine, same clients.

    python benchmarks/serve_vs_broker.py                 # the small matrix (~6 min)
    python benchmarks/serve_vs_broker.py --full          # issue 28's whole matrix
    python benchmarks/serve_vs_broker.py --rounds 3 --scale 2 --out FILE

Both servers run side by side for the whole run: the bench broker (the pinned Kafka 4.4.0
of ``tests/kafka_testkit.py``, a KRaft single node started as ``kafka-server-start.sh``
starts it: G1, ``-Xmx1g -Xms1g``) and ``python -m kafkalog_cli serve`` of this checkout,
each on a fresh directory with the same topic configs (the defaults of both, topics
created by CreateTopics with the cell's partitions). Every round runs every cell on both,
the broker first in odd rounds and ``serve`` first in even ones, a fresh topic per run;
the best round of each side counts (the machine is shared and noisy).

Clients (the same JVM options as ``kafka-run-class.sh``):

* **produce**: Kafka's ``ProducerPerformance`` (``kafka-producer-perf-test``) at full
  speed (``--throughput -1``), ``--payload-file`` of generated log lines of exactly the
  cell's record size (realistic text, 2,000 distinct lines, picked by the tool's seeded
  random generator so both servers receive the same values), the cell's ``acks`` and
  ``compression.type``, ``enable.idempotence=true`` with ``acks=all`` (the producer
  refuses it with ``acks=1``), defaults otherwise (batch.size 16384, linger.ms 5). Reported: its MB/s and records/s and its latency percentiles (send to
  acknowledgement, p50/p99/p99.9, ms).
* **fetch**: Kafka's ``ConsumerPerformance`` (``kafka-consumer-perf-test``) reading the
  topic of the round's ``acks=1`` cell from the start in a group of its own; its
  ``fetch.MB.sec`` / ``fetch.nMsg.sec`` (the rebalance excluded).
* **rdkafka**: librdkafka's ``rdkafka_performance`` (1 KB records, none and lz4, acks=1,
  its own constant payload), on PATH or compiled from a built librdkafka checkout
  (``--rdkafka-src`` / ``RDKAFKA_SRC``); else the report says why not.

Server side, per run: CPU seconds (utime + stime of the server process from
``/proc/<pid>/stat``: every JVM thread for the broker, every thread for serve) per GB of
record values moved; peak RSS and its anonymous / file-backed parts (``RssAnon``,
``RssFile`` of ``/proc/<pid>/status``, sampled every 50 ms during the run). After the
first round, each produced topic is read back from both log directories (kafkalog's
reader on the files): record count and an order-free digest of the values must be equal.

Ratios are serve / broker: throughput (target >= 1), CPU per GB (target <= 1), p99
produce latency (target <= 1). Writes ``benchmarks/results/serve_vs_broker.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import kafka_testkit as kt  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
CLK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
GB = 1e9
MB = 1e6
#: record values moved per produce cell in the small matrix (bytes; ``--scale`` multiplies)
CELL_BYTES = 32 * 1000 * 1000
#: records a 100 B cell sends (bound by records/s, not bytes)
MIN_RECORDS = 150_000
CODECS = ("none", "lz4", "zstd")
PAYLOAD_LINES = 2000
BROKER_HEAP = "1g"
CLIENT_HEAP = "512m"

WORDS = ("order payment shipped customer account session login checkout cart item refund "
         "invoice warehouse region europe asia america latency request response timeout "
         "retry error warning info debug user admin service gateway billing inventory "
         "search click view purchase device mobile desktop browser android ios linux "
         "status pending complete failed cancelled approved").split()


# -- the data ---------------------------------------------------------------------------

def payload_file(path: Path, size: int, lines: int = PAYLOAD_LINES, seed: int = 28) -> Path:
    """``lines`` distinct JSON-like log events of exactly ``size`` bytes each (UTF-8, no
    newline inside), one a line: words, ids, numbers and timestamps as an application
    logs them (compressible as such text is, not a constant)."""
    rnd = random.Random(seed * 1_000_003 + size)
    out = []
    for i in range(lines):
        parts = [f'{{"ts":"2026-11-28T{rnd.randrange(24):02}:{rnd.randrange(60):02}:'
                 f'{rnd.randrange(60):02}.{rnd.randrange(1000):03}Z","seq":{i},'
                 f'"user":"u{rnd.randrange(10**6):06}","event":"{rnd.choice(WORDS)}"']
        n = len(parts[0])
        k = 0
        while n < size:
            if k % 3 == 0:
                piece = f',"f{k}":{rnd.randrange(10**9)}'
            elif k % 3 == 1:
                piece = f',"id{k}":"{rnd.getrandbits(64):016x}"'
            else:
                piece = f',"m{k}":"' + " ".join(rnd.choice(WORDS)
                                                for _ in range(rnd.randrange(2, 9))) + '"'
            parts.append(piece)
            n += len(piece)
            k += 1
        line = "".join(parts)[:size - 1] + "}"
        out.append(line)
    path.write_text("\n".join(out))
    return path


def log_digest(partition_dirs: list[Path]) -> tuple[int, str]:
    """(records, digest) of the data records in ``partition_dirs``' segments, read with
    kafkalog's reader: the digest is the sum of each value's BLAKE2b-64 (order-free: the
    partitioning of batches may differ between servers), control batches skipped."""
    from kafkalog_cli.format.records import FileRecords
    from kafkalog_cli.storage.segment import open_view, release_view
    count, total = 0, 0
    for d in partition_dirs:
        for seg in sorted(d.glob("*.log")):
            view = open_view(seg)
            try:
                for batch in FileRecords(view).batches():
                    if batch.is_control:
                        continue
                    for r in batch.iter_records():
                        count += 1
                        h = hashlib.blake2b(r.value or b"", digest_size=8).digest()
                        total += int.from_bytes(h, "little")
            finally:
                release_view(view)
    return count, f"{total & (2**64 - 1):016x}"


# -- the servers -------------------------------------------------------------------------

def _proc_stat(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def _proc_memory(pid: int) -> dict:
    status = Path(f"/proc/{pid}/status").read_text()
    kb = dict(re.findall(r"^(VmRSS|VmHWM|RssAnon|RssFile|RssShmem):\s+(\d+)", status, re.M))
    return {k: int(v) * 1024 for k, v in kb.items()}


class Sampler:
    """Peak RSS / RssAnon / RssFile of ``pid`` sampled every 50 ms while active."""

    def __init__(self, pid: int):
        self.pid = pid
        self.peak = {"VmRSS": 0, "RssAnon": 0, "RssFile": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.wait(0.05):
            self._sample()

    def _sample(self):
        try:
            m = _proc_memory(self.pid)
        except OSError:
            return
        for k in self.peak:
            self.peak[k] = max(self.peak[k], m.get(k, 0))

    def __enter__(self):
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()


class Server:
    name = ""
    pid = 0
    bootstrap = ""
    log_dir: Path

    def create_topic(self, topic: str, partitions: int) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        fut = admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=30)
        fut[topic].result(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            t = admin.list_topics(topic, timeout=30).topics.get(topic)
            if t is not None and t.error is None and len(t.partitions) == partitions \
                    and all(p.leader >= 0 for p in t.partitions.values()):
                return
            time.sleep(0.05)
        raise RuntimeError(f"{self.name}: topic {topic} has no leaders")

    def partition_dirs(self, topic: str) -> list[Path]:
        return sorted(self.log_dir.glob(f"{topic}-*"))


class Broker(Server):
    name = "broker"

    def __init__(self, workdir: Path):
        self.kb = kt.KafkaBroker(workdir, heap=BROKER_HEAP,
                                 jvm_opts=kt.KAFKA_JVM_PERFORMANCE_OPTS)
        self.kb.start(timeout=120)
        self.pid = self.kb.process.pid
        self.bootstrap = self.kb.bootstrap
        self.log_dir = self.kb.log_dir

    def stop(self):
        self.kb.stop(timeout=120)


class Serve(Server):
    name = "serve"

    def __init__(self, workdir: Path):
        self.log_dir = workdir / "serve-logs"
        self.log_dir.mkdir(parents=True)
        self.stderr = open(workdir / "serve.log", "w+")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kafkalog_cli", "serve", "--log-dir", str(self.log_dir),
             "--listen", "127.0.0.1:0"], cwd=ROOT, env=env, stderr=self.stderr, text=True)
        self.pid = self.proc.pid
        deadline = time.monotonic() + 60
        port = None
        while time.monotonic() < deadline and port is None:
            if self.proc.poll() is not None:
                break
            self.stderr.seek(0)
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.stderr.read())
            if m:
                port = int(m.group(1))
            else:
                time.sleep(0.05)
        if port is None:
            self.proc.kill()
            self.stderr.seek(0)
            raise RuntimeError("serve did not start: " + self.stderr.read()[-2000:])
        self.bootstrap = f"127.0.0.1:{port}"

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()


# -- the clients ------------------------------------------------------------------------

def _client_cmd(bench, main: str, *args: str) -> list[str]:
    log4j = bench.log4j("tools-log4j2.yaml", kt._TOOLS_LOG4J)
    return kt._java(bench, f"-Xms{CLIENT_HEAP}", f"-Dlog4j2.configurationFile={log4j}", main,
                    *args, heap=CLIENT_HEAP, jvm_opts=kt.KAFKA_JVM_PERFORMANCE_OPTS)


def _run(cmd: list[str], timeout: float) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "LC_ALL": "C.UTF-8"})
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[-12:]} exited {done.returncode}:\n{done.stdout[-1500:]}"
                           f"\n{done.stderr[-1500:]}")
    return done.stdout


PRODUCE_LINE = re.compile(
    r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
    r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th")


@dataclass
class Cell:
    kind: str  # produce | fetch
    size: int
    codec: str
    acks: str = "1"
    producers: int = 1
    partitions: int = 1
    committed: bool = False  # transactional producer, read_committed consumer
    client: str = "java"  # or "rdkafka" (rdkafka_performance)

    def label(self) -> str:
        size = {100: "100 B", 1000: "1 KB", 100_000: "100 KB"}.get(self.size, f"{self.size} B")
        extra = []
        if self.producers > 1:
            extra.append(f"{self.producers} producers")
        if self.partitions > 1:
            extra.append(f"{self.partitions} partitions")
        if self.committed:
            extra.append("transactional" if self.kind == "produce" else "read_committed")
        if self.kind == "produce":
            head = f"produce {size} {self.codec} acks={self.acks}"
        else:
            head = f"fetch {size} {self.codec}"
        if self.client == "rdkafka":
            head = "rdkafka " + head
            extra.append("(its constant payload)")
        return " ".join([head, *extra]).strip()

    def key(self) -> tuple:
        return (self.size, self.codec, self.producers, self.partitions, self.committed,
                self.client)


@dataclass
class Run:
    mb_s: float
    rec_s: float
    records: int
    value_bytes: int
    cpu_s: float
    peak: dict
    lat: tuple | None = None  # p50, p99, p99.9 (ms)

    @property
    def cpu_per_gb(self) -> float:
        return self.cpu_s / (self.value_bytes / GB) if self.value_bytes else float("nan")


@dataclass
class Result:
    cell: Cell
    n: int
    runs: dict = field(default_factory=lambda: {"broker": [], "serve": []})

    def best(self, server: str) -> Run | None:
        runs = self.runs[server]
        return max(runs, key=lambda r: r.mb_s) if runs else None


def produce(bench, server: Server, topic: str, cell: Cell, n: int, payload: Path) -> Run:
    props = [f"bootstrap.servers={server.bootstrap}", f"acks={cell.acks}",
             f"compression.type={cell.codec}",
             # the idempotent producer needs acks=all: acks=1 runs without it
             f"enable.idempotence={'true' if cell.acks == 'all' else 'false'}"]
    per = n // cell.producers
    cmds = []
    for i in range(cell.producers):
        args = ["--topic", topic, "--num-records", str(per), "--throughput", "-1",
                "--payload-file", str(payload), "--reporting-interval", "600000",
                "--random-seed", str(i)]
        if cell.committed:
            args += ["--transactional-id", f"{topic}-{i}", "--transaction-duration-ms", "1000"]
        args += ["--command-property", *props]
        cmds.append(_client_cmd(bench, "org.apache.kafka.tools.ProducerPerformance", *args))
    cpu0 = _proc_stat(server.pid)
    with Sampler(server.pid) as sampler:
        if len(cmds) == 1:
            outs = [_run(cmds[0], 600)]
        else:
            procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True) for c in cmds]
            outs = []
            try:
                for p in procs:
                    out, err = p.communicate(timeout=600)
                    if p.returncode:
                        raise RuntimeError(f"ProducerPerformance exited {p.returncode}: "
                                           f"{err[-1500:]}")
                    outs.append(out)
            finally:  # a failed or stopped run leaves no producer JVM behind
                for p in procs:
                    if p.poll() is None:
                        p.kill()
                        p.wait()
    cpu = _proc_stat(server.pid) - cpu0
    stats = []
    for out in outs:
        m = [PRODUCE_LINE.search(line) for line in out.splitlines()]
        m = [x for x in m if x]
        if not m:
            raise RuntimeError(f"no summary from ProducerPerformance:\n{out[-1500:]}")
        stats.append(m[-1])
    records = sum(int(s.group(1)) for s in stats)
    rec_s = sum(float(s.group(2)) for s in stats)
    mb_s = sum(float(s.group(3)) for s in stats) * (1 << 20) / MB  # the tool's MB is MiB
    lat = tuple(max(float(s.group(i)) for s in stats) for i in (6, 8, 9))
    return Run(mb_s, rec_s, records, records * cell.size, cpu, sampler.peak, lat)


def fetch(bench, server: Server, topic: str, cell: Cell, n: int, tmp: Path) -> Run:
    args = ["--bootstrap-server", server.bootstrap, "--topic", topic, "--num-records", str(n),
            "--timeout", "60000", "--group", f"perf-{topic}-{server.name}", "--hide-header"]
    if cell.committed:
        conf = tmp / "read_committed.properties"
        conf.write_text("isolation.level=read_committed\n")
        args += ["--command-config", str(conf)]
    cmd = _client_cmd(bench, "org.apache.kafka.tools.ConsumerPerformance", *args)
    cpu0 = _proc_stat(server.pid)
    with Sampler(server.pid) as sampler:
        out = _run(cmd, 600)
    cpu = _proc_stat(server.pid) - cpu0
    line = [ln for ln in out.splitlines() if ln.count(",") >= 9][-1]
    cols = [c.strip() for c in line.split(",")]
    records = int(cols[4])
    if records < n:
        raise RuntimeError(f"{server.name}: consumed {records} of {n} records from {topic}")
    mb_s = float(cols[8]) * (1 << 20) / MB
    rec_s = float(cols[9])
    return Run(mb_s, rec_s, records, records * cell.size, cpu, sampler.peak)


# -- rdkafka_performance -----------------------------------------------------------------

def rdkafka_performance(src: Path | None, out: Path) -> tuple[Path | None, str]:
    """librdkafka's rdkafka_performance, or why not: ``rdkafka_performance`` on PATH, else
    ``examples/rdkafka_performance.c`` of a built librdkafka checkout ``src`` (its
    ``src/librdkafka.so``; ``--rdkafka-src`` or ``RDKAFKA_SRC``; the build is in
    ``../shared/research/librdkafka-suite.md``) compiled into ``out``."""
    exe = shutil.which("rdkafka_performance")
    if exe:
        return Path(exe), ""
    if src is None:
        return None, ("no rdkafka_performance on PATH and no built librdkafka checkout "
                      "(--rdkafka-src / RDKAFKA_SRC)")
    lib = src / "src" / "librdkafka.so"
    if not lib.is_file():
        return None, f"{src} holds no built librdkafka ({lib} is missing)"
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None, "no C compiler"
    done = subprocess.run([cc, "-O2", f"-I{src / 'src'}", str(src / "examples" /
                          "rdkafka_performance.c"), f"-L{src / 'src'}", "-lrdkafka", "-lm",
                           "-o", str(out)], capture_output=True, text=True)
    if done.returncode != 0:
        return None, f"rdkafka_performance did not compile: {done.stderr.strip()[-300:]}"
    RDKAFKA_LIB[0] = src / "src"
    return out, ""


#: the directory of the librdkafka.so a compiled rdkafka_performance links
RDKAFKA_LIB: list = [None]
RDK_PRODUCED = re.compile(r"% (\d+) messages produced \((\d+) bytes\), (\d+) delivered .* "
                          r"in (\d+)ms: (\d+) msgs/s and ([\d.]+) MB/s")
RDK_CONSUMED = re.compile(r"% (\d+) messages \((\d+) bytes\) consumed in (\d+)ms: (\d+) "
                          r"msgs/s \(([\d.]+) MB/s\)")


def rdkafka(exe: Path, server: Server, topic: str, cell: Cell, n: int) -> Run:
    """One rdkafka_performance run: produce ``n`` records of the cell's size (its own
    payload: a repeated pattern) to partition 0, or consume them from the beginning."""
    env = dict(os.environ)
    if RDKAFKA_LIB[0] is not None:
        env["LD_LIBRARY_PATH"] = str(RDKAFKA_LIB[0])
    base = [str(exe), "-t", topic, "-b", server.bootstrap, "-p", "0", "-c", str(n)]
    if cell.kind == "produce":
        cmd = base[:1] + ["-P"] + base[1:] + [
            "-s", str(cell.size), "-a", cell.acks, "-z", cell.codec,
            "-X", f"enable.idempotence={'true' if cell.acks == 'all' else 'false'}"]
    else:
        cmd = base[:1] + ["-C"] + base[1:] + ["-o", "beginning", "-e"]
    cpu0 = _proc_stat(server.pid)
    with Sampler(server.pid) as sampler:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    cpu = _proc_stat(server.pid) - cpu0
    text = done.stdout + done.stderr
    m = [x for x in (RDK_PRODUCED if cell.kind == "produce" else RDK_CONSUMED).finditer(text)]
    if done.returncode != 0 or not m:
        raise RuntimeError(f"rdkafka_performance failed ({done.returncode}): {text[-1500:]}")
    g = m[-1].groups()
    if cell.kind == "produce":
        records, rec_s, mb_s = int(g[2]), float(g[4]), float(g[5])
    else:
        records, rec_s, mb_s = int(g[0]), float(g[3]), float(g[4])
    if records < n:
        raise RuntimeError(f"rdkafka_performance moved {records} of {n} records")
    return Run(mb_s, rec_s, records, records * cell.size, cpu, sampler.peak)


# -- the matrix -------------------------------------------------------------------------

def matrix(full: bool, scale: float, rdkafka_cells: bool = False) -> list[tuple[Cell, int]]:
    """The cells and their record counts. Small (the default, for a shared 2-core
    machine): 1 KB records none/lz4/zstd and 100 B none/zstd with acks=1, 1 KB none with
    acks=all (idempotent), a fetch of each acks=1 topic. ``full``: issue 28's matrix,
    100 B / 1 KB / 100 KB x none/lz4/zstd x acks 1/all, plus 4 producers on 12 partitions
    and a transactional producer read with read_committed."""
    sizes = (100, 1000, 100_000) if full else (1000, 100)
    cells: list[tuple[Cell, int]] = []
    shapes = [(1, 1, False)]
    if full:
        shapes += [(4, 12, False), (1, 1, True)]
    for size in sizes:
        n = max(int(CELL_BYTES * scale) // size, 200)
        if size <= 100:
            n = int(MIN_RECORDS * scale)
        codecs = CODECS if full or size >= 1000 else ("none", "zstd")
        for codec in codecs:
            for producers, partitions, committed in shapes:
                n_cell = n - n % producers
                for acks in ("1", "all"):
                    if committed and acks == "1":
                        continue  # a transactional producer needs acks=all
                    if not full and acks == "all" and (codec != "none" or size != 1000):
                        continue
                    cells.append((Cell("produce", size, codec, acks, producers, partitions,
                                       committed), n_cell))
                cells.append((Cell("fetch", size, codec, "1" if not committed else "all",
                                   producers, partitions, committed), n_cell))
    if rdkafka_cells:
        n = max(int(CELL_BYTES * scale) // 1000, 200)
        for codec in ("none", "lz4") if full else ("none",):
            cells.append((Cell("produce", 1000, codec, client="rdkafka"), n))
            cells.append((Cell("fetch", 1000, codec, client="rdkafka"), n))
    return cells


# -- the report -------------------------------------------------------------------------

def _ratio(a, b) -> str:
    return f"{a / b:.2f}x" if a and b else "-"


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.0f}"


def report(results: list[Result], meta: dict) -> str:
    out = ["# `kafkalog serve` against the Kafka broker (same machine, same clients)", "",
           f"Generated by `python benchmarks/serve_vs_broker.py {meta['argv']}` on "
           f"{meta['when']}: {meta['platform']}, {os.cpu_count()} cores, load average "
           f"{meta['load0']} before and {meta['load1']} after; Kafka {meta['kafka']} "
           f"(broker -Xmx{BROKER_HEAP}, G1), `serve` of {meta['rev']} "
           f"({meta['core']}). Best of {meta['rounds']} interleaved rounds per side. "
           f"MB = 10^6 bytes of record values; CPU = the server process's user+system "
           f"seconds per GB moved; latency = ProducerPerformance's send-to-ack percentiles "
           f"(ms); RSS = peak during the run (MiB), anon/file its RssAnon/RssFile peaks.", "",
           "| cell | records | broker MB/s | serve MB/s | ratio | broker rec/s | serve rec/s "
           "| broker CPU s/GB | serve CPU s/GB | ratio | p50/p99/p99.9 broker | "
           "p50/p99/p99.9 serve | p99 ratio | broker RSS (anon/file) | serve RSS (anon/file) |",
           "|" + "---|" * 15]
    for res in results:
        b, s = res.best("broker"), res.best("serve")
        if b is None or s is None:
            out.append(f"| {res.cell.label()} | {res.n} | failed |" + " |" * 12)
            continue
        # CPU per GB: the least of the rounds (the CPU a run needs, not its load)
        bc = min(r.cpu_per_gb for r in res.runs["broker"])
        sc = min(r.cpu_per_gb for r in res.runs["serve"])

        def lat(r: Run):
            return "/".join(f"{x:.0f}" for x in r.lat) if r.lat else "-"

        bp, sp = (min(r.lat[1] for r in res.runs[name]) if b.lat else None
                  for name in ("broker", "serve"))
        p99r = (f"{sp / bp:.2f}x" if bp else ("1.00x" if sp == bp else "inf")) \
            if bp is not None else "-"

        def rss(r: Run):
            return f"{_mib(r.peak['VmRSS'])} ({_mib(r.peak['RssAnon'])}/{_mib(r.peak['RssFile'])})"

        out.append(f"| {res.cell.label()} | {res.n:,} | {b.mb_s:.1f} | {s.mb_s:.1f} | "
                   f"{_ratio(s.mb_s, b.mb_s)} | {b.rec_s:,.0f} | {s.rec_s:,.0f} | {bc:.1f} | "
                   f"{sc:.1f} | {_ratio(sc, bc)} | {lat(b)} | {lat(s)} | {p99r} | "
                   f"{rss(b)} | {rss(s)} |")
    out += ["", "Equality (first round, each topic read back from both log directories with "
            "kafkalog's reader: data records and an order-free digest of the values):", ""]
    out += [f"- {line}" for line in meta["checks"]]
    out += ["", "Server memory over the run (MiB, after each round: VmRSS, RssAnon, RssFile, "
            "VmHWM):", ""]
    out += [f"- {line}" for line in meta["memory"]]
    out += ["", f"rdkafka_performance: {meta['rdkafka']}", ""]
    return "\n".join(out) + "\n"


def _interrupt(signum, frame):
    """SIGTERM unwinds as Ctrl-C does, so the ``finally`` blocks stop the servers and the
    clients (a killed run left a broker, serve and producer JVMs running)."""
    raise KeyboardInterrupt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true",
                    help="issue 28's whole matrix: 100 KB records, 4 producers and 12 "
                         "partitions, transactional / read_committed")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiplies the bytes a cell moves (32 MB; 100 B cells: 150,000 records)")
    ap.add_argument("--only", default="", help="comma-separated substrings of cell labels")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--rdkafka-src", type=Path, default=os.environ.get("RDKAFKA_SRC"),
                    help="a built librdkafka checkout, to compile rdkafka_performance from")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        bench = kt.bench()
    except kt.BenchUnavailable as e:
        print(f"skipped: {e}", file=sys.stderr)
        return 2
    tmp_exe = Path(tempfile.mkdtemp(prefix="rdkafka-perf-"))
    exe, why = rdkafka_performance(args.rdkafka_src, tmp_exe / "rdkafka_performance")
    cells = matrix(args.full, args.scale, rdkafka_cells=exe is not None)
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        cells = [(c, n) for c, n in cells if any(w in c.label() for w in wanted)]
    meta = {"argv": " ".join(sys.argv[1:] if argv is None else argv),
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "platform": platform.platform(terse=True), "kafka": bench.version,
            "load0": f"{os.getloadavg()[0]:.2f}", "rounds": args.rounds,
            "rev": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                  capture_output=True, text=True).stdout.strip(),
            "core": _core(), "checks": [], "memory": [],
            "rdkafka": "not run: " + why if exe is None else str(exe)}
    results = [Result(c, n) for c, n in cells]
    out = args.out or RESULTS / ("serve_vs_broker-full.md" if args.full else
                                 "serve_vs_broker.md")
    with tempfile.TemporaryDirectory(prefix="serve-vs-broker-") as tmp:
        tmp = Path(tmp)
        payloads = {size: payload_file(tmp / f"payload-{size}.txt", size)
                    for size in {c.size for c, _ in cells}}
        broker = serve = None
        try:
            broker = Broker(tmp / "broker")
            serve = Serve(tmp)
            servers = {"broker": broker, "serve": serve}
            _warm_up(bench, servers, payloads, tmp)
            for rnd in range(args.rounds):
                order = ("broker", "serve") if rnd % 2 == 0 else ("serve", "broker")
                topics: dict = {}
                for res in results:
                    c = res.cell
                    for name in order:
                        srv = servers[name]
                        if c.kind == "produce":
                            topic = f"p{rnd}-{results.index(res)}"
                            srv.create_topic(topic, c.partitions)
                            run = (rdkafka(exe, srv, topic, c, res.n) if c.client == "rdkafka"
                                   else produce(bench, srv, topic, c, res.n, payloads[c.size]))
                            if c.acks == "1" or c.committed:
                                topics[(name, c.key())] = topic
                        else:
                            topic = topics[(name, c.key())]
                            run = (rdkafka(exe, srv, topic, c, res.n) if c.client == "rdkafka"
                                   else fetch(bench, srv, topic, c, res.n, tmp))
                        res.runs[name].append(run)
                        print(f"round {rnd + 1} {name:6} {c.label():45} {run.mb_s:8.1f} MB/s "
                              f"{run.cpu_per_gb:6.1f} CPU s/GB lat {run.lat} "
                              f"anon {_mib(run.peak['RssAnon'])} MiB", flush=True)
                    if c.kind == "produce" and rnd == 0 and (c.acks == "1" or c.committed):
                        meta["checks"].append(_check(c, topics, servers))
                    _write(results, meta, out)  # each cell's row (a long run's partial table)
                for name, srv in servers.items():
                    m = _proc_memory(srv.pid)
                    meta["memory"].append(
                        f"round {rnd + 1} {name}: {_mib(m['VmRSS'])}, {_mib(m['RssAnon'])}, "
                        f"{_mib(m['RssFile'])}, {_mib(m['VmHWM'])}")
        finally:
            for srv in (serve, broker):
                if srv is not None:
                    srv.stop()
    shutil.rmtree(tmp_exe, ignore_errors=True)
    print(_write(results, meta, out))
    return 0


def _write(results: list[Result], meta: dict, out: Path) -> str:
    meta["load1"] = f"{os.getloadavg()[0]:.2f}"
    text = report(results, meta)
    out.write_text(text)
    return text


def _core() -> str:
    from kafkalog_cli.format import compiled
    return "C core" if compiled.SPEEDUPS else "pure Python"


def _warm_up(bench, servers: dict, payloads: dict, tmp: Path) -> None:
    """A short produce and fetch on each server first (the JVMs' JIT; serve's imports)."""
    size = min(payloads)
    cell = Cell("produce", size, "lz4", "all")
    for srv in servers.values():
        srv.create_topic("warm-up", 1)
        produce(bench, srv, "warm-up", cell, 20_000, payloads[size])
        fetch(bench, srv, "warm-up", Cell("fetch", size, "lz4"), 20_000, tmp)


def _check(cell: Cell, topics: dict, servers: dict) -> str:
    got = {name: log_digest(srv.partition_dirs(topics[(name, cell.key())]))
           for name, srv in servers.items()}
    same = got["broker"] == got["serve"]
    text = (f"{cell.label()}: broker {got['broker'][0]:,} records {got['broker'][1]}, "
            f"serve {got['serve'][0]:,} records {got['serve'][1]}: "
            f"{'equal' if same else 'DIFFERENT'}")
    if not same:
        print("MISMATCH: " + text, file=sys.stderr)
    return text


if __name__ == "__main__":
    sys.exit(main())
