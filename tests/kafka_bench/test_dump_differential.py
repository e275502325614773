"""Differential suite 1: ``kafkalog dump-segment -o kafka`` against the pinned Kafka's own
DumpLogSegments (``org.apache.kafka.tools.DumpLogSegments`` of kafka-tools 4.4.0).

The files: every file of ``../shared/corpus/real`` the tool reads (``.log``, ``.index``,
``.timeindex``, producer ``.snapshot``, ``.txnindex``, KRaft ``.checkpoint``), the bundled
``fixtures/logs`` (legacy v0/v1 messages, damaged logs and indexes), and files the bench
broker writes for this module (every codec, idempotent and transactional batches with
their markers, ``__consumer_offsets`` of a classic group, a consumer (KIP-848) group and
a transaction's offsets, ``__transaction_state``, ``__cluster_metadata`` with the
``0-0`` snapshot StorageTool formats, a LogAppendTime topic, segments rolled every few
batches and three index intervals), copied out of the running broker so that both tools
read the same bytes.

The flag sets (:data:`FLAG_SETS`): none, ``--deep-iteration``, ``--print-data-log``,
``--skip-record-metadata`` (with and without data), ``--max-bytes``,
``--index-sanity-check``, ``--verify-index-only`` and the five decoders, each on the
files it applies to; one more set checks kafkalog's choice of decoder by the topic name
against the tool given the matching decoder flag. Each file is dumped alone
(``--files F``): the tool's reports after the last file come from HashMaps keyed by
path, in no order a per-file comparison could pin.

Every case runs in ONE JVM (``iter_tools_batch``: each result is compared while the JVM
runs the next) and kafkalog in-process. The comparison (:func:`compare`): stdout byte for
byte, stderr byte for byte, and the exit status - except the differences docs/read.md
lists ("dump-segment and Kafka's DumpLogSegments"), each a rule here:

* the tool throws (``Exception in thread "main" ...``, exit 1, the rest of the run lost):
  kafkalog exits non-zero, its stdout starts with the tool's (which may end in a
  half-printed record line), and its stderr holds the exception's message (the tool's
  ``in file F.`` suffix aside: kafkalog's line names the file first);
* the tool prints damage and exits 0 (``isvalid: false``, ``Found N invalid bytes``):
  kafkalog prints the same, exits 1 and adds one ``error:`` line per damaged file after
  the tool's stderr;
* ``--print-data-log`` on an internal topic: kafkalog decodes by the topic's name where
  the tool prints the bytes, so kafkalog gets ``--no-decode`` in the plain sets and the
  ``decoder-by-topic-name`` set compares its choice with the tool's decoder flag.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from kafka_testkit import iter_tools_batch, java_consume, java_produce
from kafka_testkit import send_step as _record
from kafkalog_testkit import CORPUS, FIXTURES, run_cli_inprocess

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

DUMP_LOG_SEGMENTS = "org.apache.kafka.tools.DumpLogSegments"

LOGS = (".log", ".checkpoint")
INDEXES = (".index", ".timeindex")
OTHERS = (".snapshot", ".txnindex")
READ_SUFFIXES = LOGS + INDEXES + OTHERS

#: internal topic -> the tool's decoder flag for it
DECODER_FLAGS = {
    "__consumer_offsets": "--offsets-decoder",
    "__transaction_state": "--transaction-log-decoder",
    "__cluster_metadata": "--cluster-metadata-decoder",
    "__share_group_state": "--share-group-state-decoder",
    "__remote_log_metadata": "--remote-log-metadata-decoder",
}

#: the files of ../shared/corpus/real the pinned tool cannot read (it throws on them,
#: with no flag): an index whose segment's .log the corpus does not hold (the repository
#: snapshot did not store it; the tool opens the .log first: NoSuchFileException)
CORPUS_UNREADABLE = [
    "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/"
    "__cluster_metadata-0/00000000000000000000.index",
    "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/"
    "__cluster_metadata-0/00000000000000000000.timeindex",
    "ronem123__rupia-transaction-service/kafka-logs/__cluster_metadata-0/"
    "00000000000000839130.index",
    "ronem123__rupia-transaction-service/kafka-logs/__cluster_metadata-0/"
    "00000000000000839130.timeindex",
]
#: ... and of fixtures/logs: a log whose tail is zeros (a size field of 0:
#: FileLogInputStream throws CorruptRecordException), and so its time index (the tool
#: reads the log to its end for each entry), and an offset index entry at which no
#: whole batch starts (NoSuchElementException)
FIXTURES_UNREADABLE = ["corrupt-zero-tail-0/00000000000000000000.log",
                       "corrupt-zero-tail-0/00000000000000000000.timeindex",
                       "corrupt-index-position-0/00000000000000000000.index"]


def topic_of(path: Path) -> str:
    """The topic a file belongs to: its partition directory's name without the
    partition; ``__cluster_metadata`` for the log directory's bootstrap.checkpoint."""
    if path.name == "bootstrap.checkpoint":
        return "__cluster_metadata"
    return path.parent.name.rpartition("-")[0]


@dataclass(frozen=True)
class FlagSet:
    """The tool's arguments (``kafka``) and kafkalog's (``ours``, None: the same) for the
    files of ``suffixes``."""

    kafka: tuple[str, ...]
    suffixes: tuple[str, ...]
    ours: tuple[str, ...] | None = None

    def ours_args(self) -> tuple[str, ...]:
        return self.kafka if self.ours is None else self.ours


FLAG_SETS = {
    "none": FlagSet((), READ_SUFFIXES),
    "deep-iteration": FlagSet(("--deep-iteration",), LOGS),
    "print-data-log": FlagSet(("--print-data-log",), LOGS, ("--print-data-log", "--no-decode")),
    "skip-record-metadata": FlagSet(("--print-data-log", "--skip-record-metadata"), LOGS,
                                    ("--print-data-log", "--skip-record-metadata",
                                     "--no-decode")),
    "skip-record-metadata-no-data": FlagSet(("--deep-iteration", "--skip-record-metadata"),
                                            LOGS),
    "max-bytes": FlagSet(("--max-bytes", "4000"), LOGS),
    "max-bytes-data": FlagSet(("--max-bytes", "1500", "--print-data-log"), LOGS,
                              ("--max-bytes", "1500", "--print-data-log", "--no-decode")),
    "index-sanity-check": FlagSet(("--index-sanity-check",), INDEXES),
    "verify-index-only": FlagSet(("--verify-index-only",), INDEXES),
    **{flag[2:]: FlagSet((flag,), LOGS) for flag in DECODER_FLAGS.values()},
}
#: the decoder kafkalog picks by the topic's name, against the tool given its flag
BY_TOPIC_NAME = "decoder-by-topic-name"


@dataclass
class Case:
    flag_set: str
    file: Path
    kafka: tuple[str, ...]
    ours: tuple[str, ...]


def _unique(paths: list[Path]) -> list[Path]:
    """``paths`` without repeated content: a file whose bytes (and, for an index, its
    .log's size and bytes) another file of the same topic kind already has gives the
    same comparison (the corpus holds copies of one partition)."""
    seen, out = set(), []
    for p in paths:
        h = hashlib.sha256(p.read_bytes())
        if p.suffix in INDEXES:
            log = p.with_suffix(".log")
            h.update(log.read_bytes() if log.is_file() else b"no log")
        topic = topic_of(p)
        key = (h.hexdigest(), p.suffix, topic if topic.startswith("__") else "")
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def readable_files(root: Path) -> list[Path]:
    """Every file under ``root`` with a suffix the tool reads. A ``.timeindex`` whose
    ``.index`` is missing is left out: the tool's OffsetIndex would create the .index
    (AbstractIndex calls createNewFile), a write into the shared corpus."""
    files = []
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.suffix not in READ_SUFFIXES:
            continue
        if p.suffix == ".timeindex" and not p.with_suffix(".index").exists():
            continue
        files.append(p)
    return _unique(files)


def _decoder_files(files: list[Path], flag: str) -> list[Path]:
    """The files a decoder flag is compared on: every log of its own topic, and of the
    others (internal topics and plain ones) the first two per topic kind, to compare
    what the tool prints where the decoder fails."""
    own = [f for f in files if DECODER_FLAGS.get(topic_of(f)) == flag]
    by_kind: dict[str, list[Path]] = {}
    for f in files:
        if f not in own:
            kind = topic_of(f) if topic_of(f).startswith("__") else "plain"
            by_kind.setdefault(kind, []).append(f)
    return own + [f for fs in by_kind.values() for f in fs[:2]]


def cases_for(files: list[Path]) -> list[Case]:
    """The (flag set, file) pairs for ``files``."""
    cases = []
    logs = [f for f in files if f.suffix in LOGS]
    for name, fs in FLAG_SETS.items():
        if name.endswith("-decoder"):
            chosen = _decoder_files(logs, fs.kafka[0])
        else:
            chosen = [f for f in files if f.suffix in fs.suffixes]
        cases += [Case(name, f, fs.kafka, fs.ours_args()) for f in chosen]
    for f in logs:
        flag = DECODER_FLAGS.get(topic_of(f))
        if flag is not None:
            cases.append(Case(BY_TOPIC_NAME, f, (flag,), ("--print-data-log",)))
    return cases


# -- the comparison --------------------------------------------------------------------------

_THROWN = re.compile(r'^Exception in thread "main" ([\w.$]+)(?:: (.*))?$')
#: kafkalog's one line per damaged file (render.dump.report_findings)
_FINDING = re.compile(r"^error: .+ at byte \d+: (record batch fails its CRC check|"
                      r"\d+ invalid bytes at the end of the log|no whole record batch)")


def thrown(stderr: str) -> tuple[str, str] | None:
    """(exception class, message) when the tool died of an exception."""
    m = _THROWN.match(stderr.split("\n", 1)[0])
    return None if m is None else (m.group(1), m.group(2) or "")


def _diff(kafka: str, ours: str, what: str) -> str:
    lines = list(difflib.unified_diff(kafka.split("\n"), ours.split("\n"), "kafka", "kafkalog",
                                      lineterm="", n=1))
    return f"{what} differs:\n" + "\n".join(line[:300] for line in lines[:16])


def compare(kafka, ours) -> str | None:
    """None when kafkalog's run (``ours``: returncode, stdout, stderr) answers the
    tool's (``kafka``: exit, stdout, stderr) as the module docstring's rules say, else
    what differs."""
    threw = thrown(kafka.stderr)
    if threw is not None:
        cls, message = threw
        message = re.sub(r" in file .*\.$", "", message)  # kafkalog's line names the file
        if ours.returncode == 0:
            return f"the tool threw {cls} ({message}); kafkalog exited 0"
        if not ours.stdout.startswith(kafka.stdout):
            return _diff(kafka.stdout, ours.stdout[:len(kafka.stdout) + 200],
                         f"stdout (the tool threw {cls})")
        if message not in ours.stderr:
            return f"the tool threw {cls}: {message!r}; kafkalog's stderr: {ours.stderr[:500]!r}"
        return None
    if kafka.stdout != ours.stdout:
        return _diff(kafka.stdout, ours.stdout, "stdout")
    if (kafka.exit == 0) == (ours.returncode == 0):
        return None if kafka.stderr == ours.stderr else _diff(kafka.stderr, ours.stderr, "stderr")
    if kafka.exit != 0:
        return f"the tool exited {kafka.exit} ({kafka.stderr[:300]!r}); kafkalog exited 0"
    # the tool exits 0 on damage it prints; kafkalog exits 1 and names each damaged file
    extra = ours.stderr[len(kafka.stderr):].split("\n")[:-1]
    if ours.returncode == 1 and ours.stderr.startswith(kafka.stderr) and extra \
            and all(_FINDING.match(line) for line in extra):
        return None
    return (f"the tool exited 0, kafkalog {ours.returncode}: "
            + _diff(kafka.stderr, ours.stderr, "stderr"))


# -- files the bench broker writes -----------------------------------------------------------

def _odd_records(topic: str, partition: int, base: int) -> list[dict]:
    """Records whose fields are the awkward ones: null key, null value, no headers, bytes
    that are not UTF-8 (key, value and a header), text beyond ASCII, an empty value."""
    return [
        _record(topic, partition, base, key=None),
        _record(topic, partition, base + 1, value=None, headers=[]),
        _record(topic, partition, base + 2, key=None, keyBase64="AP/+gA==",
                valueBase64="wygA/w==", headers=[["bin", {"base64": "gIE="}]]),
        _record(topic, partition, base + 3, key="ключ", value="значение \u2028 ☃"),
        _record(topic, partition, base + 4, value=""),
    ]


def _bench_spec() -> dict:
    """The producer runs: one per codec (plain), one idempotent, one transactional (commit,
    abort, commit with a group's offsets), one on the LogAppendTime topic."""
    plain = {"linger.ms": "60000", "batch.size": "1048576", "acks": "all",
             "enable.idempotence": "false"}
    runs = []
    for n, codec in enumerate(("none", "gzip", "snappy", "lz4", "zstd")):
        steps = []
        for b in range(3):
            base = 100 * n + 10 * b
            steps += [_record("dls-codecs", 0, base + i) for i in range(1 + b * 2)]
            steps.append({"op": "flush"})
        steps += _odd_records("dls-codecs", 0, 100 * n + 50) + [{"op": "flush"}]
        runs.append({"producer": {**plain, "compression.type": codec}, "steps": steps})
    idem = []
    for b in range(4):
        idem += [_record("dls-idempotent", 0, 10 * b + i) for i in range(3)] + [{"op": "flush"}]
    runs.append({"producer": {"linger.ms": "60000", "enable.idempotence": "true",
                              "acks": "all", "compression.type": "lz4"}, "steps": idem})
    txn = []
    for t, end in enumerate(("commit", "abort", "commit")):
        txn.append({"op": "begin"})
        for b in range(2):
            txn += [_record("dls-txn", p, 100 * t + 10 * b + p) for p in (0, 1)]
            txn.append({"op": "flush"})
        if t == 2:
            txn.append({"op": "sendOffsets", "group": "dls-txn-group", "offsets": [
                {"topic": "dls-codecs", "partition": 0, "offset": 3}]})
        txn.append({"op": end})
    runs.append({"producer": {"transactional.id": "dls-txn", "linger.ms": "60000",
                              "compression.type": "zstd"}, "steps": txn})
    lat = []
    for b in range(3):
        lat += [_record("dls-log-append-time", 0, 10 * b + i) for i in range(4)]
        lat.append({"op": "flush"})
    runs.append({"producer": {**plain, "compression.type": "gzip"}, "steps": lat})
    return {"runs": runs}


def _copy_partition(src: Path, dst: Path) -> None:
    """The files of a partition directory the tool reads, and its checkpoints."""
    dst.mkdir(parents=True)
    for f in sorted(src.iterdir()):
        if f.is_file():
            shutil.copyfile(f, dst / f.name)


@pytest.fixture(scope="module")
def bench_files(kafka_broker, tmp_path_factory) -> list[Path]:
    """Files the session's bench broker writes, copied out of its log directory once the
    writes are acknowledged (the broker keeps appending to ``__cluster_metadata``: both
    tools read the same copy)."""
    b = kafka_broker
    # segment.index.bytes 64: the time index holds 5 entries, so with an entry per batch
    # (index.interval.bytes 1) a segment rolls every 5 batches, with a producer snapshot
    small = {"segment.index.bytes": 64, "index.interval.bytes": 1}
    b.create_topic("dls-codecs", 1, small)
    b.create_topic("dls-idempotent", 1, {"index.interval.bytes": 200})
    b.create_topic("dls-txn", 2, small)
    b.create_topic("dls-log-append-time", 1, {"message.timestamp.type": "LogAppendTime",
                                              "index.interval.bytes": 100})
    java_produce(b.bootstrap, _bench_spec())
    for protocol in ("classic", "consumer"):
        java_consume(b.bootstrap, "dls-codecs", configs={
            "group.id": f"dls-{protocol}-group", "group.protocol": protocol,
            "kafkalog.subscribe": "true"})
    out = tmp_path_factory.mktemp("dump-differential") / "logs"
    out.mkdir()
    for d in sorted(b.log_dir.iterdir()):
        if not d.is_dir():
            continue
        internal = d.name.startswith("__")
        if not (d.name.startswith("dls-") or internal):
            continue
        if internal and not any(f.suffix == ".log" and f.stat().st_size
                                for f in d.iterdir()):
            continue  # the 50 empty partitions of an internal topic add nothing
        _copy_partition(d, out / d.name)
    if (b.log_dir / "bootstrap.checkpoint").is_file():  # Kafka 4.4 formats a 0-0 snapshot
        shutil.copyfile(b.log_dir / "bootstrap.checkpoint", out / "bootstrap.checkpoint")
    names = {d.name.rpartition("-")[0] for d in out.iterdir() if d.is_dir()}
    assert {"dls-codecs", "dls-txn", "__consumer_offsets", "__transaction_state",
            "__cluster_metadata"} <= names, names
    return readable_files(out)


# -- the run ---------------------------------------------------------------------------------

@dataclass
class Outcome:
    """What the module's run found: per flag set, the cases compared and the differences;
    the files the tool cannot read (it threw) per flag set."""

    cases: dict[str, int] = field(default_factory=dict)
    differences: dict[str, list[str]] = field(default_factory=dict)
    unreadable: dict[str, list[Path]] = field(default_factory=dict)


def _selected_flag_sets(session) -> set[str]:
    """The flag sets of this module's tests the session runs (``-k`` picks some)."""
    return {item.callspec.params["flag_set"] for item in session.items
            if item.module.__name__ == __name__ and hasattr(item, "callspec")
            and "flag_set" in item.callspec.params}


@pytest.fixture(scope="module")
def outcome(request, bench_files) -> Outcome:
    """Every case of the flag sets the session runs (the unreadable-files test needs
    ``none``), in one JVM; kafkalog compares each result while the JVM runs the next."""
    files = []
    if CORPUS.is_dir():
        files += readable_files(CORPUS)
    files += readable_files(FIXTURES) + bench_files
    wanted = _selected_flag_sets(request.session) | {"none"}
    cases = [c for c in cases_for(files) if c.flag_set in wanted]
    result = Outcome()
    calls = [(DUMP_LOG_SEGMENTS, [*c.kafka, "--files", str(c.file)]) for c in cases]
    for case, kafka in zip(cases, iter_tools_batch(calls), strict=True):
        ours = run_cli_inprocess("dump-segment", "-o", "kafka", *case.ours, "--files",
                                 str(case.file))
        result.cases[case.flag_set] = result.cases.get(case.flag_set, 0) + 1
        if thrown(kafka.stderr) is not None:
            result.unreadable.setdefault(case.flag_set, []).append(case.file)
        problem = compare(kafka, ours)
        if problem is not None:
            result.differences.setdefault(case.flag_set, []).append(
                f"{case.file} ({' '.join(case.kafka)}):\n{problem}")
    return result


@pytest.mark.parametrize("flag_set", [*FLAG_SETS, BY_TOPIC_NAME])
def test_dump_segment_prints_what_dump_log_segments_prints(outcome, flag_set):
    assert outcome.cases.get(flag_set, 0) > 0, f"no file for {flag_set}"
    differences = outcome.differences.get(flag_set, [])
    assert not differences, (f"{len(differences)} of {outcome.cases[flag_set]} files differ "
                             f"with {flag_set}:\n\n" + "\n\n".join(differences[:5]))


def test_the_files_the_tool_cannot_read_are_named(outcome, bench_files):
    """With no flag the tool reads every file but those named here (all of the bench's)."""
    unreadable = outcome.unreadable.get("none", [])
    expected = [FIXTURES / f for f in FIXTURES_UNREADABLE]
    if CORPUS.is_dir():
        expected += [CORPUS / f for f in CORPUS_UNREADABLE]
    assert sorted(unreadable) == sorted(expected)
    assert not set(unreadable) & set(bench_files)
