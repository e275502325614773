"""The fuzz harness's worker: a process that runs kafkalog's library entry points on the
inputs the properties make, under an address-space limit (``RLIMIT_AS``, set by the
parent before it starts), and says how each run ended.

It is started by :class:`fuzz_client.FuzzWorker` and speaks length-prefixed pickles on
two descriptors it is given (stdout and stderr stay free for what kafkalog prints). A
request names *targets* and carries a *case* (a log directory as relative path -> bytes,
or a request frame); the answer gives, per target, the outcome:

* ``ok`` - it returned; ``typed`` - it raised a :class:`~kafkalog_cli.errors.KafkalogError`
  (for serve: the request was answered, or the connection closed as the broker does);
* ``usage`` - an InvalidArgumentError (exit 2, a usage error) for bad input;
* ``bug`` - any other exception; ``memory`` - MemoryError (the address space is capped);
* ``wrote`` - a read-side target changed a byte, a name or a mode of its input;

with the target's seconds and peak resident memory above what it started with (the
kernel's high-water mark, reset before each target through ``/proc/self/clear_refs``).
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import logging
import os
import pickle
import re
import shutil
import stat
import struct
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

_LEN = struct.Struct(">Q")


# -- memory figures ------------------------------------------------------------------------

def _status_kib(name: str) -> int:
    with open("/proc/self/status") as f:
        m = re.search(rf"^{name}:\s+(\d+) kB", f.read(), re.M)
    return int(m.group(1)) if m else 0


def reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


# -- the case on disk ----------------------------------------------------------------------

def write_layout(root: Path, layout: dict) -> Path:
    """A fresh log directory ``root/logs`` holding ``layout`` (relative path -> bytes, or
    a special file as :func:`make_special` takes it)."""
    d = root / "logs"
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    for rel, data in layout.items():
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, tuple):
            make_special(p, data)
        else:
            p.write_bytes(data)
    return d


def make_special(p: Path, spec: tuple) -> None:
    """A file that is not plain bytes (``fuzz_testkit.small_file_variant``):
    ``("sparse", size, prefix)`` - ``prefix`` then zeros up to ``size`` bytes, no block
    written for them; ``("fifo",)``; ``("link", target)`` - a symbolic link (to
    ``/dev/zero``, ``/dev/urandom``); ``("dir",)``; ``("socket",)`` - a bound Unix
    socket's file."""
    kind = spec[0]
    if kind == "sparse":
        with open(p, "wb") as f:
            f.write(spec[2])
            f.truncate(spec[1])
    elif kind == "fifo":
        os.mkfifo(p)
    elif kind == "link":
        os.symlink(spec[1], p)
    elif kind == "dir":
        p.mkdir()
    elif kind == "socket":
        from small_files import bind_socket

        bind_socket(p)
    else:
        raise ValueError(spec)


#: files up to this size are compared by their bytes; larger ones (an inflated file) by
#: size, inode and modification time, which a write changes
_HASHED_BYTES = 4 << 20


def tree_state(d: Path) -> dict:
    """Every entry under ``d``: path -> (mode, size, digest) (links not followed; only
    regular files are read, a piece at a time)."""
    out = {}
    for dirpath, dirs, files in os.walk(d):
        for n in dirs + files:
            p = Path(dirpath) / n
            st = p.lstat()
            digest = None
            if stat.S_ISREG(st.st_mode) and st.st_size <= _HASHED_BYTES:
                digest = hashlib.sha256(p.read_bytes()).hexdigest()
            elif stat.S_ISREG(st.st_mode):
                digest = (st.st_ino, st.st_mtime_ns)
            out[str(p.relative_to(d))] = (st.st_mode, st.st_size, digest)
    return out


def partition_dirs(log_dir: Path) -> list[Path]:
    return sorted(p for p in log_dir.iterdir() if p.is_dir())


# -- targets: read-side library entry points ----------------------------------------------------

class Sink(io.TextIOBase):
    """A text stream that keeps nothing: it counts lines and record lines (the output of
    a bomb is as long as its records; holding it would measure the harness)."""

    def __init__(self):
        self.lines = 0
        self.records = 0

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self.lines += s.count("\n")
        self.records += s.count("| offset: ")
        return len(s)


class BinarySink(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        return len(b)


def _console():
    from rich.console import Console
    return Console(file=Sink(), width=120, force_terminal=False)


def _json(obj) -> None:
    from kafkalog_cli.render.jsonout import dumps
    dumps(obj)


def t_dump(log_dir: Path, params: dict) -> None:
    """dump-segment: each partition deep with --print-data-log (rendered as Kafka's text
    and as JSON), each other file alone, the indexes with --index-sanity-check and
    --verify-index-only, and an offset range through the index."""
    from kafkalog_cli.ops.dump import DumpFindings, DumpOptions, dump
    from kafkalog_cli.render import dump as render

    maxd = params.get("max_decompressed_bytes", 256 << 20)
    records = 0
    for pdir in partition_dirs(log_dir):
        if params.get("deep", True):
            opts = DumpOptions(print_data_log=True, max_decompressed_bytes=maxd)
            # the CLI's path: records in blocks, through the compiled lines when built
            blocks = DumpOptions(print_data_log=True, max_decompressed_bytes=maxd,
                                 record_blocks=True)
            f = DumpFindings()
            events = f.watch(dump([pdir], blocks))
            out = Sink()
            render.write_kafka(events, out=out, err=Sink(), with_data=True)
            records += out.records
            render.write_json(dump([pdir], opts), out=Sink(), err=Sink(), encoding="base64")
            render.write_json(dump([pdir], blocks), out=Sink(), err=Sink(), encoding="utf8",
                              with_data=True)
        else:
            for _ in dump([pdir], DumpOptions(max_decompressed_bytes=maxd)):
                pass
        if params.get("all_files", True):
            for p in sorted(pdir.iterdir()):
                if p.is_file() and not p.name.endswith(".log"):
                    render.write_kafka(dump([p], DumpOptions(max_decompressed_bytes=maxd)),
                                       out=Sink(), err=Sink())
            for p in sorted(pdir.glob("*index")):
                for opt in ("index_sanity_check", "verify_index_only"):
                    for _ in dump([p], DumpOptions(**{opt: True})):
                        pass
            opts = DumpOptions(deep_iteration=True, start_offset=params.get("start", 1),
                               end_offset=params.get("end", 3), max_decompressed_bytes=maxd)
            for _ in dump([pdir], opts):
                pass
    return records


def t_read(log_dir: Path, params: dict) -> None:
    """read: every partition from the beginning in both isolation levels (console and JSON
    output), from an offset and from a timestamp."""
    from kafkalog_cli.ops.read import read
    from kafkalog_cli.render.read import FormatterConfig, write_console, write_json

    cfg = FormatterConfig.from_properties(["print.key=true", "print.headers=true",
                                           "print.timestamp=true", "print.offset=true"])
    maxd = params.get("max_decompressed_bytes", 256 << 20)
    limit = params.get("max_records")
    n = 0
    for pdir in partition_dirs(log_dir):
        for iso in ("read_uncommitted", "read_committed"):
            res = read(pdir, isolation_level=iso, max_decompressed_bytes=maxd,
                       max_records=limit)
            try:
                n += write_json(res.records, out=Sink(), encoding="base64")
                _json(res.to_dict())
            finally:
                res.close()
        if params.get("seek", True):
            for kw in ({"offset": params.get("offset", 1)},
                       {"timestamp": params.get("timestamp", 1_700_000_000_000)},
                       {"offset": "latest"}):
                try:
                    res = read(pdir, max_decompressed_bytes=maxd, max_records=limit or 50,
                               **kw)
                except Exception as e:  # an offset out of range is the answer here
                    from kafkalog_cli.ops.read import OffsetOutOfRangeError
                    if isinstance(e, OffsetOutOfRangeError):
                        continue
                    raise
                try:
                    write_console(res.records, cfg, out=BinarySink(), escape=True)
                finally:
                    res.close()
    return n


def t_describe(log_dir: Path, params: dict) -> None:
    from kafkalog_cli.ops.describe import describe
    from kafkalog_cli.render.describe import render_describe

    r = describe([log_dir])
    _json(r.to_dict())
    render_describe(r, console=_console())
    return sum(len(t.partitions) for ld in r.log_dirs for t in ld.topics)


def t_verify(log_dir: Path, params: dict) -> None:
    from kafkalog_cli.ops.verify import verify_index
    from kafkalog_cli.render.verify import render_verify

    r = verify_index([log_dir])
    _json(r.to_dict())
    render_verify(r, console=_console())
    return sum(s.batches for s in r.segments)


def t_audit(log_dir: Path, params: dict) -> None:
    from kafkalog_cli.ops.audit import audit
    from kafkalog_cli.render.audit import render_audit

    r = audit([log_dir], engine="local",
              max_decompressed_bytes=params.get("max_decompressed_bytes", 256 << 20))
    _json(r.to_dict())
    render_audit(r, console=_console())
    return sum(p.records for p in r.partitions)


def t_recover_plan(log_dir: Path, params: dict) -> None:
    from kafkalog_cli.recovery.runner import recover
    from kafkalog_cli.render.recover import render_recover

    r = recover([log_dir], truncate=False)
    _json(r.to_dict())
    render_recover(r, console=_console())
    return len(r.partitions)


def t_export(log_dir: Path, params: dict) -> None:
    from kafkalog_cli.ops.export import export

    out = Path(params["scratch"]) / "export"
    opts = {"failOnDataLoss": params.get("fail_on_data_loss", "false"),
            "maxDecompressedBytes": str(params.get("max_decompressed_bytes", 256 << 20))}
    r = export([log_dir], out, fmt=params.get("format", "jsonl"), engine="local",
               options=opts, overwrite=True)
    _json(r.to_dict())
    return r.rows


def t_files(log_dir: Path, params: dict) -> None:
    """The readers of each kind of file, alone: offset and time indexes (load, sanity
    check, entries, lookups), producer snapshots, transaction indexes, the partition's
    and the log directory's checkpoints, ``partition.metadata``, ``meta.properties``,
    ``quorum-state``."""
    from kafkalog_cli.errors import KafkalogError
    from kafkalog_cli.storage import checkpoints as cp
    from kafkalog_cli.storage import dir_files as df
    from kafkalog_cli.storage.files import offset_from_file_name
    from kafkalog_cli.storage.leader_epoch import LeaderEpochFileCache
    from kafkalog_cli.storage.offset_index import OffsetIndex
    from kafkalog_cli.storage.producer_state import read_snapshot
    from kafkalog_cli.storage.time_index import TimeIndex
    from kafkalog_cli.storage.txn_index import TransactionIndex

    def each(fn, *a):
        try:
            return fn(*a)
        except KafkalogError:
            return None

    for p in sorted(log_dir.iterdir()):
        if p.name.endswith("checkpoint") and not p.is_dir():
            each(cp.read_offset_checkpoint, p)
    each(lambda: df.read_meta_properties(log_dir, validate=True))
    each(df.read_clean_shutdown, log_dir)
    each(df.log_dir_file_problems, log_dir)
    for pdir in partition_dirs(log_dir):
        each(df.read_partition_metadata, pdir)
        each(df.partition_file_problems, pdir)
        each(cp.read_leader_epoch_checkpoint, pdir / "leader-epoch-checkpoint")
        each(lambda d=pdir: LeaderEpochFileCache.load(d, fsync=False).epochs)
        if (pdir / "quorum-state").exists():
            each(df.read_quorum_state, pdir / "quorum-state")
        for p in sorted(pdir.iterdir()):
            name = p.name
            try:
                base = offset_from_file_name(p)
            except KafkalogError:
                base = None
            if name.endswith(".index") and base is not None:
                idx = each(OffsetIndex.load, p, base)
                if idx is not None:
                    each(idx.sanity_check)
                    for _ in idx.iter_raw_entries(idx.entries - idx.zero_tail):
                        pass
                    for target in (base, base + 1, base + 1000, -1):
                        each(idx.lookup, target)
            elif name.endswith(".timeindex") and base is not None:
                idx = each(TimeIndex.load, p, base)
                if idx is not None:
                    each(idx.sanity_check)
                    for _ in idx.iter_raw_entries(idx.entries - idx.zero_tail):
                        pass
                    for target in (0, 1_700_000_000_000, -1):
                        each(idx.lookup, target)
            elif name.endswith(".snapshot"):
                each(lambda p=p: list(read_snapshot(p)))
            elif name.endswith(".txnindex"):
                t = each(TransactionIndex.load, p, base or 0)
                if t is not None:
                    each(lambda t=t: list(t.iter_entries()))
                    each(t.sanity_check)
                    each(t.collect_aborted, base or 0, (base or 0) + 100)


def t_catalog(log_dir: Path, params: dict) -> None:
    """serve --read-only's start-up over the directory: every partition opened (or
    offline, with the broker's error), then closed."""
    from kafkalog_cli.server.catalog import LogDirCatalog

    c = LogDirCatalog(log_dir, read_only=True).open()
    try:
        n = 0
        for name, topic in sorted(c.topics.items()):
            for p in sorted(topic.partitions):
                c.partition_error(name, p)
                n += 1
    finally:
        c.close(clean=False)
    return n


READ_TARGETS = {
    "dump": t_dump, "read": t_read, "describe": t_describe, "verify": t_verify,
    "audit": t_audit, "recover_plan": t_recover_plan, "export": t_export, "files": t_files,
    "catalog": t_catalog,
}


# -- targets: the write side ----------------------------------------------------------------------

def t_recover_truncate(log_dir: Path, params: dict) -> dict:
    """recover --truncate (``params["all"]``: --all), verify-index over what it left, then
    --undo of every session it made, newest first. Returns what the parent compares: the
    tree before, after recovery (with verify's verdict) and after undo; or, when recover
    refused with a KafkalogError, its message and the tree after (which must be the tree
    before)."""
    from kafkalog_cli.errors import KafkalogError
    from kafkalog_cli.ops.verify import verify_index
    from kafkalog_cli.recovery.restore import undo
    from kafkalog_cli.recovery.runner import recover

    def files(tree):
        return {k: v[1:] for k, v in tree.items()
                if ".kafkalog-quarantine" not in k and k != ".lock" and v[2] is not None}

    before = tree_state(log_dir)
    try:
        r = recover([log_dir], truncate=True, all_segments=params.get("all", False))
    except KafkalogError as e:
        return {"refused": str(e), "before": files(before), "after": files(tree_state(log_dir))}
    _json(r.to_dict())
    v = verify_index([log_dir])
    problems = [f"{p.file}: {p.kind}: {p.message}" for s in v.segments for p in s.problems]
    after = tree_state(log_dir)
    again = recover([log_dir], truncate=False)
    sessions = sorted(log_dir.glob("*/.kafkalog-quarantine/*"))
    undone = [undo(s).to_dict() for s in reversed(sessions)]
    return {"before": files(before), "after": files(after), "verify": problems,
            # a snapshot the first run's new snapshots made stray is removed by the next
            # load, the broker's too (LogLoader.load runs removeStraySnapshots before
            # rebuildProducerState takes them): not work a second run leaves undone
            "again": [a for p in again.to_dict()["partitions"] for a in p["actions"]
                      if not _stray_snapshot(a)] if again.work_needed else [],
            "restored": files(tree_state(log_dir)), "undo": undone, "sessions": len(sessions)}


def _stray_snapshot(action: dict) -> bool:
    return action["action"] == "delete" and action["file"].endswith(".snapshot") and \
        "removeStraySnapshots" in (action["reason"] or "")


WRITE_TARGETS = {"recover_truncate": t_recover_truncate}


# -- targets: pieces that take bytes, not files -------------------------------------------------

def t_decoders(case: dict, params: dict) -> None:
    """The internal-topic decoders on one record (``key``, ``value``): each decoder, its
    JSON and Kafka text forms."""
    from kafkalog_cli.decoders import (
        ClusterMetadataDecoder,
        ConsumerOffsetsDecoder,
        RemoteLogMetadataDecoder,
        ShareGroupStateDecoder,
        TransactionLogDecoder,
        format_text,
    )

    for dec in (ConsumerOffsetsDecoder(), TransactionLogDecoder(), ClusterMetadataDecoder(),
                ShareGroupStateDecoder(), RemoteLogMetadataDecoder()):
        d = dec.decode(case["key"], case["value"])
        _json(d.key_json())
        _json(d.value_json())
        d.kafka_text(case.get("offset", 0))
        if isinstance(dec, TransactionLogDecoder):
            format_text(d)  # the transaction log's own text form


def t_records(case: dict, params: dict) -> None:
    """A buffer of batches through every batch and record reader of format/: FileRecords
    (CRC, records, lazily and as lists), the batch scan, index rebuilding."""
    from kafkalog_cli.errors import KafkalogError
    from kafkalog_cli.format.records import FileRecords, scan_batches
    from kafkalog_cli.storage.recovery_scan import walk_log
    from kafkalog_cli.storage.segment import rebuild_indexes

    view = memoryview(case["data"])
    maxd = params.get("max_decompressed_bytes", 256 << 20)
    fr = FileRecords(view)
    for b in fr.batches():
        _ = b.is_valid
        try:
            for _ in b.iter_records(maxd):
                pass
        except KafkalogError:
            pass
        if params.get("lists", True):
            try:
                b.records(maxd)
            except KafkalogError:
                pass
    scan_batches(view)
    walk_log(view)
    try:
        rebuild_indexes(view, 0)
    except KafkalogError:
        pass


BYTES_TARGETS = {"decoders": t_decoders, "records": t_records}


# -- serve: the request handler ---------------------------------------------------------------------

class Serve:
    """A :class:`~kafkalog_cli.server.kafka_apis.KafkaApis` over a log directory, with its
    own event loop: frames are parsed (``wire.parse_request``) and handled as the server's
    connection loop does, and the reply is encoded (``wire.build_response``)."""

    def __init__(self, log_dir: Path, read_only: bool):
        from kafkalog_cli.server.catalog import LogDirCatalog
        from kafkalog_cli.server.kafka_apis import KafkaApis, ServerOptions

        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        opts = ServerOptions(port=0, auto_create_topics=True, read_only=read_only)
        self.catalog = LogDirCatalog(log_dir, read_only=read_only).open()
        self.apis = self.loop.run_until_complete(self._make(KafkaApis, opts))

    async def _make(self, cls, opts):
        return cls(self.catalog, opts)

    def handle(self, frame: bytes, wait: float) -> str:
        from kafkalog_cli.protocol.wire import InvalidRequest, build_response, parse_request
        from kafkalog_cli.server.kafka_apis import NO_RESPONSE, CloseConnection

        try:
            request = parse_request(frame)
        except InvalidRequest:
            return "closed"

        async def go():
            return await self.apis.handle(request)

        try:
            result = self.loop.run_until_complete(asyncio.wait_for(go(), wait))
        except CloseConnection:
            return "closed"
        except asyncio.TimeoutError:
            return "waiting"  # a delayed fetch or a join waiting for its group: legitimate
        if result is NO_RESPONSE:
            return "no-response"
        build_response(request, result.body, result.version)
        return "answered"

    def close(self) -> None:
        try:
            self.apis.close()
            self.catalog.close(clean=False)
        finally:
            self.loop.close()


# -- the loop ----------------------------------------------------------------------------------------

def _classify(e: BaseException) -> str:
    """How a target's exception counts: ``typed`` for a KafkalogError, but ``usage`` for an
    InvalidArgumentError (the CLI's exit 2, a usage error: the targets are called with
    valid arguments, so it would misname bad input), ``memory``, else ``bug``."""
    from kafkalog_cli.errors import InvalidArgumentError, KafkalogError, RefusedError

    if isinstance(e, MemoryError):
        return "memory"
    if isinstance(e, InvalidArgumentError) and not isinstance(e, RefusedError):
        return "usage"
    if isinstance(e, KafkalogError):
        return "typed"
    return "bug"


class Captured(logging.Handler):
    """Error records logged with a traceback: kafkalog logs an exception it turned into
    an answer (serve's UNKNOWN_SERVER_ERROR for an engine exception); one that is not a
    KafkalogError or an OSError is a bug the caller never sees."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.bugs: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not record.exc_info or record.exc_info[1] is None:
            return
        from kafkalog_cli.errors import KafkalogError

        e = record.exc_info[1]
        if not isinstance(e, (KafkalogError, OSError)):
            self.bugs.append(record.getMessage() + "\n" + "".join(
                traceback.format_exception(e))[-4000:])


CAPTURED = Captured()


def _run_one(fn, *args) -> dict:
    CAPTURED.bugs.clear()
    peak_ok = reset_peak()
    rss0 = _status_kib("VmRSS")
    t = time.perf_counter()
    out = {"outcome": "ok", "value": None}
    try:
        out["value"] = fn(*args)
    except BaseException as e:  # noqa: BLE001 - the point is to say how it ended
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        out.update(outcome=_classify(e), type=f"{type(e).__module__}.{type(e).__qualname__}",
                   message=str(e)[:2000],
                   traceback="".join(traceback.format_exception(e))[-6000:])
    if CAPTURED.bugs and out["outcome"] != "bug":
        out.update(outcome="bug", type="logged", message=CAPTURED.bugs[0][:2000],
                   traceback=CAPTURED.bugs[0])
    out["seconds"] = time.perf_counter() - t
    out["peak_kib"] = (_status_kib("VmHWM") - rss0) if peak_ok else None
    return out


def warm_up() -> None:
    """Import what the targets use, so no target's memory figure counts an import."""
    import importlib

    for m in ("kafkalog_cli.ops.dump", "kafkalog_cli.ops.read", "kafkalog_cli.ops.describe",
              "kafkalog_cli.ops.verify", "kafkalog_cli.ops.audit", "kafkalog_cli.ops.export",
              "kafkalog_cli.recovery.runner", "kafkalog_cli.recovery.quarantine",
              "kafkalog_cli.render.dump", "kafkalog_cli.render.read",
              "kafkalog_cli.render.describe", "kafkalog_cli.render.verify",
              "kafkalog_cli.render.audit", "kafkalog_cli.render.recover",
              "kafkalog_cli.server.catalog", "kafkalog_cli.server.kafka_apis",
              "kafkalog_cli.decoders", "kafkalog_cli.spark.rows", "kafkalog_cli.spark.plan",
              "pyarrow", "pyarrow.parquet", "zstandard", "lz4.frame", "lz4.block", "cramjam",
              "crc32c", "rich.console"):
        importlib.import_module(m)


def main() -> None:
    warm_up()
    rfd, wfd = int(sys.argv[1]), int(sys.argv[2])
    rf = os.fdopen(rfd, "rb", buffering=0)
    wf = os.fdopen(wfd, "wb", buffering=0)
    scratch = Path(tempfile.mkdtemp(prefix="kafkalog-fuzz-"))
    counts: Counter = Counter()
    outcomes: Counter = Counter()
    serve: Serve | None = None
    root = logging.getLogger()
    root.handlers[:] = [CAPTURED]
    root.setLevel(logging.ERROR)

    def read_exact(n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = rf.read(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf

    try:
        while True:
            try:
                (n,) = _LEN.unpack(read_exact(8))
                req = pickle.loads(read_exact(n))
            except EOFError:
                return
            op = req["op"]
            results = {}
            if op == "stats":
                results = {"counts": dict(counts), "outcomes": dict(outcomes),
                           "vm_peak_kib": _status_kib("VmPeak"),
                           "rss_kib": _status_kib("VmRSS")}
            elif op == "dir":
                case_root = scratch / "case"
                log_dir = write_layout(case_root, req["layout"])
                params = dict(req.get("params") or {}, scratch=str(case_root))
                for name in req["targets"]:
                    if name in READ_TARGETS:
                        state = tree_state(log_dir)
                        r = _run_one(READ_TARGETS[name], log_dir, params)
                        if r["outcome"] in ("ok", "typed") and tree_state(log_dir) != state:
                            r["outcome"] = "wrote"
                    else:
                        r = _run_one(WRITE_TARGETS[name], log_dir, params)
                    counts[name] += 1
                    outcomes[(name, r["outcome"])] += 1
                    results[name] = r
            elif op == "bytes":
                for name in req["targets"]:
                    r = _run_one(BYTES_TARGETS[name], req["case"], req.get("params") or {})
                    counts[name] += 1
                    outcomes[(name, r["outcome"])] += 1
                    results[name] = r
            elif op == "serve_open":
                if serve is not None:
                    serve.close()
                    serve = None
                log_dir = write_layout(scratch / "serve", req["layout"])
                r = _run_one(Serve, log_dir, req.get("read_only", False))
                if r["outcome"] == "ok":
                    serve = r.pop("value")
                r["value"] = None
                results["open"] = r
            elif op == "serve":
                r = _run_one(serve.handle, req["frame"], req.get("wait", 2.0))
                counts["serve"] += 1
                outcomes[("serve", r["outcome"] if r["outcome"] != "ok" else r["value"])] += 1
                results["serve"] = r
            for r in results.values():
                if isinstance(r, dict) and "value" in r:
                    try:
                        pickle.dumps(r["value"])
                    except Exception:
                        r["value"] = repr(r["value"])[:1000]
            data = pickle.dumps(results)
            wf.write(_LEN.pack(len(data)) + data)
    finally:
        if serve is not None:
            try:
                serve.close()
            except Exception:
                pass
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
