"""``kafkalog recover --truncate`` against Kafka 4.4.0's own LogLoader, case by case.

One bench broker writes the source topics (``broker_catalogue.write_source``) and stops
cleanly. Then the whole log directory is copied twice, every catalogue case damages its
own partition in both copies, ``.kafka_cleanshutdown`` is removed, and

(a) ONE bench broker starts on the first copy (an unclean start: ``LogLoader`` recovers
    every damaged partition), Kafka's Java consumer reads every case's topics, and the
    broker stops cleanly;
(b) ``kafkalog recover --truncate`` runs once on the second copy (the CLI, one process),
    and ``kafkalog read`` (the library call the command makes) reads every partition.

Per case, the two results are compared aspect by aspect: the files of the partition
directory, the ``.log`` / ``.index`` / ``.timeindex`` / ``.txnindex`` bytes per segment,
the log end offset (the broker's recovery point after its clean stop, kafkalog's report),
the log start offset, the recovery point, the producer snapshots' entries, the leader
epochs and the records a consumer reads. Equal, or a difference the case names as a
documented extension of docs/recover.md.

One normalisation: when the recovering broker becomes the partition's leader again it
assigns its new leader epoch at the log end offset (``Partition.makeLeader`` ->
``maybeAssignEpochStartOffset``); entries starting at or after its log end offset are
not recovery's and are left out of its leader-epoch view.

Cases after which the broker takes the log directory offline (it halts) each get a copy
and a broker start of their own (``Case.offline``).

The dry run's lost offsets are checked against the same run: the report's
``lostOffsetRanges`` hold every source record the broker's recovery dropped that the
damage had left whole, and none it keeps. ``--salvage`` gets one more copy (with
``.kafka_cleanshutdown``: the broker recovers nothing) and one more broker start, whose
``read_committed`` consumer must read exactly what kafkalog kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from broker_catalogue import (
    BROKER_CONFIGS,
    CATALOGUE,
    TOPICS,
    UNREAD,
    Case,
    Target,
    batches,
    write_source,
)
from kafka_testkit import BrokerFailed, KafkaBroker, java_consume, java_produce

from kafkalog_cli.ops.read import READ_COMMITTED, READ_UNCOMMITTED, read
from kafkalog_cli.schema.producer_snapshot import parse_snapshot

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
ASPECTS = ("files", "log", "index", "timeindex", "txnindex", "logEndOffset",
           "logStartOffset", "recoveryPoint", "snapshots", "epochs", "records")


def _assign(log_dir: Path, cases: list[Case]) -> list[tuple[Case, Target]]:
    """Give each case a partition of its kind of its own."""
    free: dict[str, list[int]] = {t: list(range(n)) for t, (n, _) in TOPICS.items()}
    free["__consumer_offsets"] = sorted(
        int(d.name.rsplit("-", 1)[1]) for d in log_dir.glob("__consumer_offsets-*")
        if any(p.stat().st_size for p in d.glob("*.log")))
    free["__cluster_metadata"] = [0]
    out = []
    for c in cases:
        if not free[c.kind]:
            raise AssertionError(f"no partition of {c.kind} left for case {c.name}")
        p = free[c.kind].pop(0)
        out.append((c, Target(log_dir / f"{c.kind}-{p}", c.kind, p)))
    return out


def _copy(source: Path, workdir: Path, cases: list[Case], *,
          clean: bool = False) -> list[tuple[Case, Target]]:
    shutil.copytree(source, workdir / "logs", symlinks=True)
    if not clean:
        (workdir / "logs" / ".kafka_cleanshutdown").unlink()
    assigned = _assign(workdir / "logs", cases)
    for c, t in assigned:
        c.damage(t)
    return assigned


def _ckpt(path: Path) -> dict[tuple[str, int], int]:
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text().splitlines()[2:]:
        topic, part, off = line.rsplit(" ", 2)
        out[(topic, int(part))] = int(off)
    return out


def _fingerprint(data: bytes) -> str:
    return f"{len(data)} bytes sha256 {hashlib.sha256(data).hexdigest()[:12]}"


def _view(t: Target, log_end_offset: int | None, *, broker: bool) -> dict:
    """What the comparison looks at in one recovered partition directory."""
    names = sorted(p.name for p in t.pdir.iterdir() if p.is_file())
    v: dict = {"files": [n for n in names if n != ".lock"]}
    for suf, key in ((".log", "log"), (".index", "index"), (".timeindex", "timeindex"),
                     (".txnindex", "txnindex")):
        v[key] = {n: _fingerprint((t.pdir / n).read_bytes()) for n in names if n.endswith(suf)}
    snaps = {}
    for n in names:
        if n.endswith(".snapshot"):
            try:
                snaps[n] = [dataclasses.astuple(e) if dataclasses.is_dataclass(e) else tuple(e)
                           for e in parse_snapshot((t.pdir / n).read_bytes())]
            except Exception as e:  # noqa: BLE001 - shown in the comparison
                snaps[n] = f"unreadable: {e}"
    v["snapshots"] = snaps
    epochs = []
    ckpt = t.pdir / "leader-epoch-checkpoint"
    if ckpt.exists():
        for line in ckpt.read_text().splitlines()[2:]:
            e, o = map(int, line.split())
            if not (broker and log_end_offset is not None and o >= log_end_offset):
                epochs.append((e, o))
    v["epochs"] = epochs
    tp = (t.topic, t.partition)
    rp = _ckpt(t.log_dir / "recovery-point-offset-checkpoint")
    ls = _ckpt(t.log_dir / "log-start-offset-checkpoint")
    v["recoveryPoint"] = rp.get(tp)
    v["logEndOffset"] = log_end_offset
    bases = sorted(int(n[:20]) for n in names if n.endswith(".log"))
    first = bases[0] if bases else log_end_offset
    v["logStartOffset"] = max(ls.get(tp, first), first) if first is not None else ls.get(tp)
    return v


def _broker_reads(workdir: Path, topics, *, isolation: str = READ_UNCOMMITTED,
                  configs: dict | None = None) -> tuple[KafkaBroker, dict]:
    """A bench broker starts on ``workdir/logs`` (recovering what it recovers), Kafka's
    Java consumer reads every partition of ``topics``, the broker stops cleanly. The
    broker, and the records per (topic, partition): (offset, timestamp, key, value,
    headers)."""
    broker = KafkaBroker.on_log_dir(workdir, BROKER_CONFIGS)
    broker.start(timeout=120)
    try:
        records = java_consume(broker.bootstrap, ",".join(sorted(topics)), isolation,
                               timeout_ms=90_000,
                               configs={"max.partition.fetch.bytes": "10485760", **(configs or {})})
    finally:
        broker.stop()
    by_tp: dict = {}
    for r in records:
        by_tp.setdefault((r["topic"], r["partition"]), []).append(
            (r["offset"], r["timestamp"], r["key"], r["value"], tuple(map(tuple, r["headers"]))))
    return broker, by_tp


def _broker_side(workdir: Path, assigned) -> tuple[dict, dict]:
    """(a): the broker recovers the copy; its views and its consumer's records."""
    topics = {t.topic for c, t in assigned
              if t.topic != "__cluster_metadata" and t.topic not in UNREAD}
    broker, by_tp = _broker_reads(workdir, topics)
    rp = _ckpt(workdir / "logs" / "recovery-point-offset-checkpoint")
    views = {c.name: _view(t, rp.get((t.topic, t.partition)), broker=True)
             for c, t in assigned}
    return views, by_tp


def _kafkalog_side(workdir: Path, assigned, *options: str, isolation: str = READ_UNCOMMITTED,
                   only_cases: bool = False) -> tuple[dict, dict, dict]:
    """(b): ``kafkalog recover --truncate`` on the copy (``only_cases``: on the cases'
    partition directories alone); its views and what ``read`` returns."""
    paths = [str(t.pdir) for _, t in assigned] if only_cases else [str(workdir / "logs")]
    done = subprocess.run([sys.executable, "-m", "kafkalog_cli", "recover",
                           *paths, "--truncate", *options, "-o", "json"],
                          capture_output=True, text=True, cwd=REPO, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    reports = {}
    for line in done.stdout.splitlines():
        obj = json.loads(line)
        for p in obj.get("partitions", []):
            reports[(p["topic"], p["partition"])] = p
    views, records = {}, {}
    for c, t in assigned:
        rep = reports[(t.topic, t.partition)]
        views[c.name] = _view(t, rep["logEndOffset"], broker=False)
        if t.topic != "__cluster_metadata" and t.topic not in UNREAD:
            res = read(t.pdir, decode="none", isolation_level=isolation)
            try:
                records[(t.topic, t.partition)] = [
                    (r.offset, r.timestamp, r.key, r.value, tuple(r.headers))
                    for r in res.records]
            finally:
                res.close()
    return views, records, reports


class Comparison:
    """Both sides' results of every case."""

    def __init__(self):
        self.broker: dict = {}
        self.kafkalog: dict = {}
        self.broker_records: dict = {}
        self.kafkalog_records: dict = {}
        self.targets: dict = {}
        self.broker_targets: dict = {}
        self.offline: dict = {}
        #: kafkalog's report per case, and the record offsets of the undamaged source
        self.reports: dict = {}
        self.source_offsets: dict = {}
        #: per case the offsets of the source's batches the damage left whole
        self.intact: dict = {}
        self.seconds: dict = {}
        #: --salvage: case -> (kafkalog's report, its read, the broker's consumer's read,
        #: the source's records, the .log bytes before and after the broker ran)
        self.salvage: dict = {}


def _intact_offsets(source_pdir: Path, damaged_pdir: Path) -> set[int]:
    """The offsets of the source's batches whose bytes the damage left in place (same
    file, same position; the catalogue's own header walk): what recovery can lose, as
    opposed to what the damage itself removed (a cut, zeroed bytes)."""
    out: set[int] = set()
    for log in source_pdir.glob("*.log"):
        damaged = damaged_pdir / log.name
        if not damaged.exists():
            continue
        src, dmg = log.read_bytes(), damaged.read_bytes()
        for b in batches(src):
            if dmg[b.position:b.end] == src[b.position:b.end]:
                out.update(range(b.base_offset, b.last_offset + 1))
    return out


def _source(tmp_path_factory) -> Path:
    """The source log directory: written by a bench broker, stopped cleanly. (For work on
    the catalogue, ``KAFKALOG_TEST_RECOVER_SOURCE=DIR`` keeps it in DIR and reuses it.)"""
    keep = os.environ.get("KAFKALOG_TEST_RECOVER_SOURCE")
    if keep and (Path(keep) / "logs" / ".kafka_cleanshutdown").exists():
        return Path(keep) / "logs"
    src = KafkaBroker(Path(keep) if keep else tmp_path_factory.mktemp("recover-source"),
                      BROKER_CONFIGS)
    src.start(timeout=120)
    try:
        write_source(src, java_produce)
    finally:
        src.stop()
    return src.log_dir


@pytest.fixture(scope="module")
def comparison(tmp_path_factory, kafka_bench) -> Comparison:
    out = Comparison()
    t0 = time.monotonic()
    source = _source(tmp_path_factory)
    out.seconds["source"] = time.monotonic() - t0
    cases = [c for c in CATALOGUE if not c.offline]
    t1 = time.monotonic()
    a = tmp_path_factory.mktemp("recover-broker")
    assigned_a = _copy(source, a, cases)
    out.broker, out.broker_records = _broker_side(a, assigned_a)
    out.broker_targets = {c.name: t for c, t in assigned_a}
    out.seconds["broker"] = time.monotonic() - t1
    t2 = time.monotonic()
    b = tmp_path_factory.mktemp("recover-kafkalog")
    assigned_b = _copy(source, b, cases)
    out.intact = {c.name: _intact_offsets(source / t.pdir.name, t.pdir) for c, t in assigned_b}
    out.kafkalog, out.kafkalog_records, reports = _kafkalog_side(b, assigned_b)
    for c, t in assigned_b:
        out.reports[c.name] = reports[(t.topic, t.partition)]
        if t.topic not in UNREAD and t.topic != "__cluster_metadata":
            res = read(source / t.pdir.name, decode="none")
            try:
                out.source_offsets[c.name] = [r.offset for r in res.records]
            finally:
                res.close()
    out.targets = {c.name: t for c, t in assigned_b}
    out.seconds["kafkalog"] = time.monotonic() - t2
    t4 = time.monotonic()
    _salvage_stage(out, source, tmp_path_factory)
    out.seconds["salvage"] = time.monotonic() - t4
    for c in CATALOGUE:
        if not c.offline:
            continue
        t3 = time.monotonic()
        w = tmp_path_factory.mktemp("recover-offline")
        assigned = _copy(source, w, [c])
        broker = KafkaBroker.on_log_dir(w, BROKER_CONFIGS)
        try:
            broker.start(timeout=120)
            failed = None
        except BrokerFailed as e:
            failed = str(e)
        finally:
            broker.kill()
        k = tmp_path_factory.mktemp("recover-offline-kafkalog")
        assigned_k = _copy(source, k, [c])
        views, _, reports = _kafkalog_side(k, assigned_k, only_cases=True)
        out.offline[c.name] = (failed, broker.server_log.read_text(errors="replace"),
                               views[c.name], assigned[0][1])
        out.seconds[c.name] = time.monotonic() - t3
    out.seconds["total"] = time.monotonic() - t0
    sys.stderr.write(f"recover vs broker: seconds {out.seconds}\n")
    if os.environ.get("KAFKALOG_RECOVER_TABLE"):
        Path(os.environ["KAFKALOG_RECOVER_TABLE"]).write_text(case_table(out))
    return out


def _summary(view: dict, records: list | None) -> str:
    segs = len(view["log"])
    text = f"LEO {view['logEndOffset']}, LSO {view['logStartOffset']}, {segs} seg"
    return text + ("" if records is None else f", {len(records)} rec")


def case_table(comp: Comparison) -> str:
    """The comparison as a Markdown table (``KAFKALOG_RECOVER_TABLE=FILE`` writes it),
    then the salvage figures."""
    lines = ["| case | Kafka 4.4.0 | kafkalog | equal? |", "|---|---|---|---|"]
    for c in CATALOGUE:
        if c.offline:
            failed = comp.offline[c.name][0]
            lines.append(f"| {c.name} | {'halts: log dir offline' if failed else 'started'} "
                         f"| rebuilt from the batches | documented (broker) |")
            continue
        t = comp.targets[c.name]
        tp = (t.topic, t.partition)
        read_ = t.topic not in UNREAD and t.topic != "__cluster_metadata"
        diff = differences(comp, c)
        verdict = "equal" if not diff else (
            "documented: " + ", ".join(sorted(diff)) if set(diff) <= set(c.differs)
            else "DIFFERS: " + ", ".join(sorted(set(diff) - set(c.differs))))
        lines.append(f"| {c.name} | {_summary(comp.broker[c.name], comp.broker_records.get(tp, []) if read_ else None)} "
                     f"| {_summary(comp.kafkalog[c.name], comp.kafkalog_records.get(tp, []) if read_ else None)} "
                     f"| {verdict} |")
    lines += ["", "| case | records in the source | the broker's recovery keeps "
              "| --salvage keeps |",
              "|---|---|---|---|"]
    for name in SALVAGE_CASES:
        *_, (source_records, kept_records) = comp.salvage[name]
        lines.append(f"| {name} | {source_records} | {comparison_truncated(comp, name)} "
                     f"| {kept_records} |")
    return "\n".join(lines) + "\n"


#: the catalogue's mid-log cases: valid batches follow the damage
SALVAGE_CASES = ("flipped-crc", "flipped-attributes", "flipped-record-byte",
                 "flipped-header-timestamp", "size-below-minimum", "size-past-end",
                 "flipped-magic", "flipped-first-segment-rp0",
                 "flipped-middle-segment-rp0-idempotent", "flipped-gzip-records",
                 "flipped-snappy-records", "flipped-lz4-records", "flipped-zstd-records",
                 "flipped-transactional-data-rp0", "consumer-offsets-flipped-rp0",
                 "corrupt-abort-marker")
#: mid-log cases where a transaction is open at the damage and its producer writes data
#: after it: --salvage stops there (kafkalog_cli/recovery/salvage.py), as the broker
SALVAGE_STOPS = ("corrupt-abort-marker",)


def _logs(pdir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(pdir.iterdir())
            if p.suffix in (".log", ".index", ".timeindex", ".txnindex")}


def _salvage_stage(out: Comparison, source: Path, tmp_path_factory) -> None:
    """(c): the mid-log cases on a copy that keeps ``.kafka_cleanshutdown`` (so the broker
    will not recover anything), ``kafkalog recover --truncate --salvage --all``, then the
    broker starts on the salvaged directory and its consumer reads it."""
    cases = [c for c in CATALOGUE if c.name in SALVAGE_CASES]
    w = tmp_path_factory.mktemp("recover-salvage")
    assigned = _copy(source, w, cases, clean=True)
    _, ours, reports = _kafkalog_side(w, assigned, "--salvage", "--all",
                                      isolation=READ_COMMITTED, only_cases=True)
    before = {c.name: _logs(t.pdir) for c, t in assigned}
    # read_committed: the transactions as the broker's producer state and .txnindex say;
    # no transaction coordinator will end one left open, so no wait for stable offsets
    broker, by_tp = _broker_reads(w, {t.topic for _, t in assigned}, isolation=READ_COMMITTED,
                                  configs={"kafkalog.stable.wait.ms": "0"})
    for c, t in assigned:
        tp = (t.topic, t.partition)
        res = read(source / t.pdir.name, decode="none", isolation_level=READ_COMMITTED)
        try:
            src = [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in res.records]
        finally:
            res.close()
        out.salvage[c.name] = (reports[tp], ours.get(tp, []), by_tp.get(tp, []), src,
                               before[c.name], _logs(t.pdir),
                               broker.server_log.read_text(errors="replace"),
                               (_record_count(source / t.pdir.name), _record_count(t.pdir)))


def _record_count(pdir: Path) -> int:
    """The records of a partition (read_uncommitted: aborted ones too), by ``read``."""
    res = read(pdir, decode="none")
    try:
        return sum(1 for _ in res.records)
    finally:
        res.close()


def differences(comp: Comparison, c: Case) -> dict[str, tuple]:
    """The aspects in which the two results of case ``c`` differ: aspect -> (Kafka's,
    kafkalog's)."""
    kb, kl = comp.broker[c.name], comp.kafkalog[c.name]
    t = comp.targets[c.name]
    out = {}
    if c.kind == "__cluster_metadata":
        # the broker appends its own records after recovery: each of kafkalog's segments
        # must be the start of the broker's segment of that name
        theirs_dir = comp.broker_targets[c.name].pdir
        for name in kl["log"]:
            ours = (t.pdir / name).read_bytes()
            theirs = (theirs_dir / name).read_bytes() if (theirs_dir / name).exists() else b""
            if not theirs.startswith(ours):
                out["log"] = (f"{name}: {_fingerprint(theirs)}", f"{name}: {_fingerprint(ours)}")
        return out
    for aspect in ASPECTS:
        if aspect == "records":
            if t.topic in UNREAD:
                continue
            tp = (t.topic, t.partition)
            theirs, ours = comp.broker_records.get(tp, []), comp.kafkalog_records.get(tp, [])
            if theirs != ours:
                out[aspect] = (_records_summary(theirs), _records_summary(ours))
        elif kb[aspect] != kl[aspect]:
            out[aspect] = _only_differing(kb[aspect], kl[aspect])
    return out


def _only_differing(theirs, ours):
    """The parts of two views of an aspect that differ (whole values when not maps or
    lists)."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        keys = sorted(set(theirs) | set(ours))
        return ({k: theirs.get(k) for k in keys if theirs.get(k) != ours.get(k)},
                {k: ours.get(k) for k in keys if theirs.get(k) != ours.get(k)})
    if isinstance(theirs, list) and isinstance(ours, list) and "files" and \
            all(isinstance(x, str) for x in theirs + ours):
        return ([x for x in theirs if x not in ours], [x for x in ours if x not in theirs])
    return theirs, ours


def _records_summary(records: list) -> str:
    if not records:
        return "no records"
    return (f"{len(records)} records, offsets {records[0][0]}..{records[-1][0]}, "
            f"sha256 {hashlib.sha256(repr(records).encode()).hexdigest()[:12]}")


@pytest.mark.parametrize("case", [c for c in CATALOGUE if not c.offline], ids=lambda c: c.name)
def test_recover_equals_broker(comparison, case):
    """kafkalog's recovery of the case equals the broker's, or differs only where the
    case names a documented extension."""
    diff = differences(comparison, case)
    undocumented = {a: d for a, d in diff.items() if a not in case.differs}
    assert not undocumented, (
        f"{case.name} ({case.kafka}): kafkalog differs from Kafka 4.4.0 in "
        + "; ".join(f"{a}: Kafka {d[0]!r} vs kafkalog {d[1]!r}" for a, d in undocumented.items()))


@pytest.mark.parametrize("case", [c for c in CATALOGUE if not c.offline and "records" not in
                                  c.differs and c.kind != "__cluster_metadata"
                                  and c.kind not in UNREAD], ids=lambda c: c.name)
def test_lost_offsets_are_the_records_the_broker_dropped(comparison, case):
    """The report's ``lostOffsetRanges`` (what the dry run says would be lost) name every
    record the broker's own recovery dropped that the damage had left whole, and no record
    the broker keeps (records above the log start offset, which hides records without
    recovery)."""
    lso = comparison.broker[case.name]["logStartOffset"] or 0
    t = comparison.broker_targets[case.name]
    theirs = {r[0] for r in comparison.broker_records.get((t.topic, t.partition), [])}
    ranges = [(r["first"], r["last"]) for r in comparison.reports[case.name]["lostOffsetRanges"]]
    source = [o for o in comparison.source_offsets[case.name] if o >= lso]
    reported = [o for o in source if any(a <= o <= b for a, b in ranges)]
    dropped = [o for o in source if o not in theirs]
    assert not set(reported) - set(dropped), "reported lost, but the broker keeps them"
    assert [o for o in dropped if o in comparison.intact[case.name]] == \
        [o for o in reported if o in comparison.intact[case.name]]


@pytest.mark.parametrize("case", [c for c in CATALOGUE if c.offline], ids=lambda c: c.name)
def test_broker_halts_where_kafkalog_recovers(comparison, case):
    """The broker takes the log directory offline (and, its only one, halts); kafkalog
    recovers the partition (the documented extension)."""
    failed, log, view, target = comparison.offline[case.name]
    assert failed is not None, "the broker started on the damaged directory"
    assert "offline" in log.lower() or "fail" in log.lower(), log[-3000:]
    assert view["epochs"], "kafkalog rebuilt no leader epochs"


@pytest.mark.parametrize("name", SALVAGE_CASES)
def test_salvage_keeps_every_valid_batch_and_the_broker_accepts_it(comparison, name):
    """``--salvage`` keeps every record outside the dropped regions at its offset; the
    broker opens the salvaged directory without recovering it (its files unchanged) and
    its consumer reads exactly what kafkalog kept."""
    report, ours, theirs, source, before, after, server_log, counts = comparison.salvage[name]
    if name in SALVAGE_STOPS:
        # a transaction open at the damage: no salvage, the broker's truncation there, and
        # no aborted record made visible to read_committed
        assert not any(s["salvage"] for s in report["segments"])
        assert any("transaction is open" in n for s in report["segments"] for n in s["notes"])
        assert theirs == ours
        assert after == before, "the broker changed the files"
        assert ours == [r for r in source if r[0] < report["logEndOffset"]]
        return
    lost = [(d["lostOffsets"]["first"], d["lostOffsets"]["last"])
            for s in report["segments"] if s["salvage"]
            for d in s["salvage"]["dropped"] if d["lostOffsets"]]
    assert any(s["salvage"] for s in report["segments"]), "nothing salvaged"
    kept = [r for r in source if not any(a <= r[0] <= b for a, b in lost)]
    assert ours == kept
    assert theirs == ours
    assert after == before, "the broker changed the salvaged files"
    # batches past the damage kept: more records than the broker's recovery keeps, and
    # (read_uncommitted) every record of the source outside the dropped regions
    assert counts[1] > comparison_truncated(comparison, name)
    assert counts[1] == counts[0] - sum(b - a + 1 for a, b in lost)


def comparison_truncated(comp: Comparison, name: str) -> int:
    """Records the broker's own recovery (comparison (a)) kept for the case."""
    t = comp.broker_targets[name]
    return len(comp.broker_records.get((t.topic, t.partition), []))
