"""Planning a read of Kafka log directories: which partitions, which offsets, which bytes.

Shared by the Spark data source (it runs on the driver, in ``partitions()``) and by the
local engine of ``kafkalog export``: both read the same :class:`Slice` s, so both produce
the same rows. Nothing here needs pyspark or pyarrow.

The driver lists directories and file sizes. It opens data only where a choice depends on
it, and each such read is small:

* splitting a segment larger than the split size reads its ``.index`` (8 bytes per entry)
  and checks the one batch at each chosen split point (its size, magic and CRC);
* an explicit starting or ending timestamp is resolved per partition through the time
  index, then the offset index, then a scan of at most one index interval
  (``LogSegment.find_offset_by_timestamp``).

Offsets requested by number are not resolved here: slices carry the bounds and each task
seeks through the offset index itself.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..constants import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    LOG_FILE_SUFFIX,
    MAGIC_V2,
)
from ..errors import (
    DataLossError,
    InvalidArgumentError,
    KafkalogError,
    NotAKafkaFileError,
)
from ..storage import location
from ..storage.fileio import not_regular
from ..storage.files import (
    check_exists,
    find_partition_dirs,
    is_live_partition_dir_name,
    is_segment_file_name,
    parse_partition_dir_name,
    partition_dirs_of,
)
from ..storage.segment import LogSegment


def _warn(msg: str, *args) -> None:
    """A warning on the ``kafkalog.spark`` logger (logging is imported here: ~2 ms of CPU
    that discovering partitions, all ``audit`` and ``export`` ask of this module on a
    small input, does not need)."""
    import logging

    logging.getLogger("kafkalog.spark").warning(msg, *args)


EARLIEST = -2
LATEST = -1

#: Splits are never made smaller than this (a Spark task costs ~25 ms; small data is
#: better read by few tasks).
MIN_SPLIT_BYTES = 4 * 1024 * 1024
#: and never larger than this (spark.sql.files.maxPartitionBytes' default).
MAX_SPLIT_BYTES = 128 * 1024 * 1024


@dataclass(frozen=True)
class PartitionDir:
    """A partition directory to read: its topic and partition, its log directory (the
    parent directory) and its segments' base offsets and ``.log`` sizes; ``special``:
    ``(path, st_mode)`` of each ``.log`` that is not a regular file (a FIFO, a link to a
    device: its size counts 0), which a read refuses (:func:`plan_slices`) and audit
    reports as the partition's problem."""

    topic: str
    partition: int
    directory: str
    log_dir: str
    bases: tuple[int, ...] = ()
    sizes: tuple[int, ...] = ()
    special: tuple[tuple[str, int], ...] = ()

    @property
    def bytes(self) -> int:
        return sum(self.sizes)


@dataclass(frozen=True)
class Slice:
    """Bytes ``[start, end)`` of one segment's ``.log`` and the offsets ``[start_offset,
    end_offset)`` wanted from them (None: unbounded). A task reads every whole batch
    that starts inside the byte range. Small and picklable: Spark ships it to executors."""

    topic: str
    partition: int
    directory: str
    base_offset: int
    start: int
    end: int
    start_offset: int | None = None
    end_offset: int | None = None
    #: the segment is the partition's last (the active one, the only one a broker
    #: appends to, so the only one that can end with a partial batch)
    last_segment: bool = True

    @property
    def log_path(self) -> str:
        return location.join(self.directory, f"{self.base_offset:020d}{LOG_FILE_SUFFIX}")

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass
class ReadOptions:
    """The options of a read, named as Spark's Kafka source names them (see
    :func:`parse_options`)."""

    subscribe: frozenset[str] | None = None
    subscribe_pattern: re.Pattern | None = None
    assign: dict[str, frozenset[int]] | None = None
    starting_offsets: dict | str = "earliest"
    ending_offsets: dict | str = "latest"
    starting_timestamp: int | None = None
    ending_timestamp: int | None = None
    starting_offsets_by_timestamp: dict | None = None
    ending_offsets_by_timestamp: dict | None = None
    include_headers: bool = False
    include_batch_metadata: bool = False
    fail_on_data_loss: bool = True
    read_committed: bool = False
    min_partitions: int | None = None
    max_partition_bytes: int = MAX_SPLIT_BYTES
    #: kafkalog's bound on one batch's decompressed records (``maxDecompressedBytes``)
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
    extra: dict = field(default_factory=dict)
    #: offsets skipped at planning (a starting offset below the log start offset, with
    #: failOnDataLoss false): dicts as :attr:`ReadStats.skipped` plus ``offsets``
    plan_losses: list = field(default_factory=list)

    def wants(self, topic: str, partition: int) -> bool:
        if self.subscribe is not None and topic not in self.subscribe:
            return False
        if self.subscribe_pattern is not None and not self.subscribe_pattern.fullmatch(topic):
            return False
        if self.assign is not None and partition not in self.assign.get(topic, ()):
            return False
        return True


def _bool(key: str, value) -> bool:
    if isinstance(value, bool):
        return value
    v = str(value).strip().lower()
    if v in ("true", "1", "yes"):
        return True
    if v in ("false", "0", "no"):
        return False
    raise InvalidArgumentError(f"option {key}: expected true or false, got {value!r}")


def _int(key: str, value) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise InvalidArgumentError(f"option {key}: expected an integer, got {value!r}") from None


def parse_offsets(key: str, value) -> dict | str:
    """``earliest`` / ``latest`` or Spark's JSON ``{"topic": {"0": 23, "1": -2}}``
    (-2 earliest, -1 latest)."""
    if isinstance(value, dict):
        raw = value
    else:
        v = str(value).strip()
        if v.lower() in ("earliest", "latest"):
            return v.lower()
        try:
            raw = json.loads(v)
        except json.JSONDecodeError as e:
            raise InvalidArgumentError(
                f"option {key}: expected earliest, latest or JSON like "
                f'{{"topic":{{"0":23,"1":-2}}}}, got {value!r} ({e.msg})') from None
    if not isinstance(raw, dict) or not all(isinstance(p, dict) for p in raw.values()):
        raise InvalidArgumentError(
            f'option {key}: expected JSON like {{"topic":{{"0":23,"1":-2}}}}, got {value!r}')
    out: dict[str, dict[int, int]] = {}
    for topic, parts in raw.items():
        out[topic] = {}
        for p, off in parts.items():
            try:
                pi, oi = int(p), int(off)
            except (TypeError, ValueError):
                raise InvalidArgumentError(
                    f"option {key}: partition and offset must be integers "
                    f"({topic!r}: {p!r} -> {off!r})") from None
            if oi < EARLIEST:
                raise InvalidArgumentError(
                    f"option {key}: offset {oi} for {topic}-{pi} is invalid (-2 earliest, "
                    "-1 latest, or >= 0)")
            out[topic][pi] = oi
    return out


def _validate_batch_offsets(starting, ending) -> None:
    """KafkaSourceProvider.validateBatchOptions: a batch query cannot start at latest or
    end at earliest, as a whole or for one partition.

    Raises:
        InvalidArgumentError: with Spark's message.
    """
    # (the bound, the limit it cannot be, its sentinel, how Spark names it: whole, per
    # partition)
    for spec, word, sentinel, whole, per_partition in (
            (starting, "latest", LATEST, "starting offset", "startingOffsets"),
            (ending, "earliest", EARLIEST, "ending offset", "ending offset")):
        if spec == word:
            raise InvalidArgumentError(f"{whole} can't be {word} for batch queries on Kafka")
        if isinstance(spec, dict):
            for t, parts in spec.items():
                for p, off in parts.items():
                    if off == sentinel:
                        raise InvalidArgumentError(
                            f"{per_partition} for {t}-{p} can't be {word} for batch queries "
                            "on Kafka")


def _parse_ts_map(key: str, value) -> dict:
    try:
        raw = json.loads(value) if isinstance(value, str) else value
        return {t: {int(p): int(ts) for p, ts in parts.items()} for t, parts in raw.items()}
    except (ValueError, TypeError, AttributeError):
        raise InvalidArgumentError(
            f'option {key}: expected JSON like {{"topic":{{"0":1700000000000}}}}, '
            f"got {value!r}") from None


def parse_options(options) -> ReadOptions:
    """Options of ``spark.read.format("kafkalog")`` (case-insensitive keys, as Spark
    passes them), also used by ``kafkalog export``.

    Raises:
        InvalidArgumentError: a value does not parse.
    """
    o = {str(k).lower(): v for k, v in dict(options).items()}
    r = ReadOptions()
    if o.get("subscribe"):
        r.subscribe = frozenset(t.strip() for t in str(o["subscribe"]).split(",") if t.strip())
    if o.get("subscribepattern"):
        try:
            r.subscribe_pattern = re.compile(str(o["subscribepattern"]))
        except re.error as e:
            raise InvalidArgumentError(f"option subscribePattern: {e}") from None
    if o.get("assign"):
        try:
            raw = json.loads(o["assign"]) if isinstance(o["assign"], str) else o["assign"]
            r.assign = {t: frozenset(int(p) for p in ps) for t, ps in raw.items()}
        except (ValueError, TypeError, AttributeError):
            raise InvalidArgumentError(
                f'option assign: expected JSON like {{"topic":[0,1]}}, got {o["assign"]!r}'
            ) from None
    if "startingoffsets" in o:
        r.starting_offsets = parse_offsets("startingOffsets", o["startingoffsets"])
    if "endingoffsets" in o:
        r.ending_offsets = parse_offsets("endingOffsets", o["endingoffsets"])
    _validate_batch_offsets(r.starting_offsets, r.ending_offsets)
    if o.get("startingtimestamp") not in (None, ""):
        r.starting_timestamp = _int("startingTimestamp", o["startingtimestamp"])
    if o.get("endingtimestamp") not in (None, ""):
        r.ending_timestamp = _int("endingTimestamp", o["endingtimestamp"])
    if o.get("startingoffsetsbytimestamp"):
        r.starting_offsets_by_timestamp = _parse_ts_map("startingOffsetsByTimestamp",
                                                        o["startingoffsetsbytimestamp"])
    if o.get("endingoffsetsbytimestamp"):
        r.ending_offsets_by_timestamp = _parse_ts_map("endingOffsetsByTimestamp",
                                                      o["endingoffsetsbytimestamp"])
    if "includeheaders" in o:
        r.include_headers = _bool("includeHeaders", o["includeheaders"])
    if "includebatchmetadata" in o:
        r.include_batch_metadata = _bool("includeBatchMetadata", o["includebatchmetadata"])
    if "failondataloss" in o:
        r.fail_on_data_loss = _bool("failOnDataLoss", o["failondataloss"])
    level = o.get("isolationlevel", o.get("kafka.isolation.level"))
    if level is not None:
        lv = str(level).strip().lower()
        if lv not in ("read_committed", "read_uncommitted"):
            raise InvalidArgumentError(
                f"option isolationLevel: expected read_committed or read_uncommitted, "
                f"got {level!r}")
        r.read_committed = lv == "read_committed"
    if o.get("minpartitions") not in (None, ""):
        r.min_partitions = _int("minPartitions", o["minpartitions"])
        if r.min_partitions < 1:
            raise InvalidArgumentError("option minPartitions must be >= 1")
    if o.get("maxpartitionbytes") not in (None, ""):
        r.max_partition_bytes = max(1, _int("maxPartitionBytes", o["maxpartitionbytes"]))
    if o.get("maxdecompressedbytes") not in (None, ""):
        r.max_decompressed_bytes = _int("maxDecompressedBytes", o["maxdecompressedbytes"])
        if r.max_decompressed_bytes < 1:
            raise InvalidArgumentError("option maxDecompressedBytes must be >= 1")
    return r


# -- paths ---------------------------------------------------------------------------------

def split_paths(options) -> list[str]:
    """The paths of a read: ``load(path)`` (comma-separated allowed), ``load([...])``
    (Spark passes them as the JSON list ``paths``) or a list given directly."""
    if isinstance(options, list | tuple):
        raw = [str(p) for p in options]
    else:
        o = {str(k).lower(): v for k, v in dict(options).items()}
        raw = []
        if o.get("paths"):
            try:
                raw.extend(json.loads(o["paths"]))
            except (ValueError, TypeError):
                raw.append(str(o["paths"]))
        if o.get("path"):
            raw.append(str(o["path"]))
    out = []
    for r in raw:
        out.extend(p.strip() for p in str(r).split(",") if p.strip())
    if not out:
        raise InvalidArgumentError("no path given: load() a log directory, a partition "
                                   "directory, several of them or a glob")
    return out


def _expand(path: str) -> list:
    if location.has_magic(path):
        found = location.glob(path)
        if not found:
            raise NotAKafkaFileError("the glob matches nothing", file=path)
        return found
    return [location.as_path(path)]


def _segments_of(directory: Path) -> tuple[tuple[int, ...], tuple[int, ...], tuple]:
    bases, sizes, special = [], [], []
    if isinstance(directory, location.RemotePath):
        entries = sorted((c.name, c) for c in directory.iterdir())
    else:
        with os.scandir(directory) as it:
            entries = sorted((e.name, e) for e in it)
    for name, e in entries:
        if name.endswith(LOG_FILE_SUFFIX) and is_segment_file_name(name):
            st = e.stat()
            if not isinstance(e, location.RemotePath) and not stat.S_ISREG(st.st_mode):
                # a FIFO or a link to /dev/zero is not an empty segment
                special.append((os.path.join(directory, name), st.st_mode))
                st = None
            bases.append(int(name[:20]))
            sizes.append(0 if st is None else st.st_size)
    return tuple(bases), tuple(sizes), tuple(special)


def discover(paths) -> list[PartitionDir]:
    """Partition directories under ``paths`` (log directories, partition directories,
    directories holding log directories, or globs of them; the rule of
    :func:`~kafkalog_cli.storage.files.find_partition_dirs`, live partitions only),
    sorted by topic, partition, then path.

    Raises:
        UnreadableError: a path is missing or unreadable.
        NotAKafkaFileError: a path is neither a partition nor a log directory.
    """
    found: dict[str, PartitionDir] = {}
    for raw in paths:
        # resolved here, once, on the driver: an executor's working directory is not the
        # driver's, so slices carry absolute paths (a relative path means what it means
        # to Spark's file sources: relative to the driver's working directory)
        raw = location.resolve(raw)
        expanded = _expand(raw)
        is_glob = location.has_magic(raw)
        if is_glob:
            # a glob keeps what is Kafka-like among its matches (live partitions only:
            # a -delete/-future/-stray directory is not one a consumer reads)
            expanded = [p for p in expanded if p.is_dir() and (
                is_live_partition_dir_name(p.name) or partition_dirs_of(p, live_only=True))]
            if not expanded:
                raise NotAKafkaFileError("the glob matches no partition or log directory",
                                         file=raw)
        for p in expanded:
            check_exists(p)
            if not p.is_dir():
                raise NotAKafkaFileError("not a directory (give a log directory or a "
                                         "partition directory)", file=p)
            # Kafka's LocalLog names a partition being deleted, a future replica being
            # copied from another log dir, and a stray one <topic>-<n>.<uuid>-delete /
            # -future / -stray; consumers read none of them (the broker serves only the
            # live <topic>-<n>), so a log directory's listing leaves them out. A path
            # naming one explicitly is still read.
            for log_dir, d in find_partition_dirs(p, live_only=True):
                tp = parse_partition_dir_name(d.name)
                if tp is None:
                    raise NotAKafkaFileError("a partition directory's name must be "
                                             "<topic>-<partition>", file=d)
                bases, sizes, special = _segments_of(d)
                found[str(d)] = PartitionDir(tp.topic, tp.partition, str(d), str(log_dir),
                                             bases, sizes, special)
    return sorted(found.values(), key=lambda d: (d.topic, d.partition, d.directory))


# -- offsets -------------------------------------------------------------------------------

def offset_for_timestamp(pd: PartitionDir, timestamp: int) -> int | None:
    """The offset of the first record with timestamp >= ``timestamp`` at or after the log
    start offset (ListOffsets by timestamp: :meth:`Log.fetch_offset_by_timestamp
    <kafkalog_cli.storage.log.Log.fetch_offset_by_timestamp>`), or None when the
    partition has none."""
    from ..storage.log import Log  # here: discovery, all audit needs, opens no Log

    plog = Log.open(pd.directory)
    try:
        found = plog.fetch_offset_by_timestamp(timestamp, log_start_offset(pd))
    finally:
        plog.close()
    return None if found is None else found.offset


def log_start_offset(pd: PartitionDir) -> int:
    """``max(log-start-offset-checkpoint entry, first segment's base offset)``, as the
    broker's LogLoader computes the log start offset (:attr:`Log.log_start_offset
    <kafkalog_cli.storage.log.Log.log_start_offset>`); a checkpoint that does not parse is
    read as empty, with a warning."""
    from ..storage.log import Log  # here: discovery, all audit needs, opens no Log

    plog = Log.open(pd.directory)
    start = plog.log_start_offset
    for problem in plog.problems:
        _warn("kafkalog: %s-%d: %s", pd.topic, pd.partition, problem)
    return start


def _check_log_start(pd: PartitionDir, start: int, opts: ReadOptions) -> int:
    """``start``, or the log start offset when ``start`` is below it. Spark's consumer
    runs with auto.offset.reset=none: fetching an offset below the log start is
    OffsetOutOfRange, which Spark reports as data loss ("Cannot fetch offset N"):
    fails with failOnDataLoss true, else warns and goes on from the earliest offset."""
    first = log_start_offset(pd)
    if start >= first:
        return start
    msg = (f"Cannot fetch offset {start} of {pd.topic}-{pd.partition}: the log starts at "
           f"offset {first}; some data may have been lost because it is not available "
           "any more (aged out by retention, or deleted)")
    if opts.fail_on_data_loss:
        raise DataLossError(msg, file=pd.directory)
    _warn("kafkalog: %s (failOnDataLoss=false: reading from %d)", msg, first)
    opts.plan_losses.append({"partitionDir": pd.directory, "position": None, "bytes": 0,
                             "offsets": first - start, "error": msg})
    return first


def _bound(spec, topic: str, partition: int, default: int) -> int:
    if isinstance(spec, str):
        return EARLIEST if spec == "earliest" else LATEST
    return spec.get(topic, {}).get(partition, default)


def offset_range(pd: PartitionDir, opts: ReadOptions) -> tuple[int | None, int | None] | None:
    """``(start, end)`` offsets wanted from a partition (None: unbounded); None when the
    range is certainly empty."""
    t, p = pd.topic, pd.partition
    start: int | None
    end: int | None
    ts = opts.starting_timestamp
    if ts is None and opts.starting_offsets_by_timestamp is not None:
        ts = opts.starting_offsets_by_timestamp.get(t, {}).get(p)
    if ts is not None:
        start = offset_for_timestamp(pd, ts)
        if start is None:
            return None
    else:
        s = _bound(opts.starting_offsets, t, p, EARLIEST)
        if s == LATEST:
            return None
        # earliest is the log start offset (a consumer's seekToBeginning: ListOffsets
        # EARLIEST_TIMESTAMP answers logStartOffset), not the first segment's base: the
        # records below it were deleted (DeleteRecords, retention) even where their
        # segment is still on disk
        start = log_start_offset(pd) if s == EARLIEST else _check_log_start(pd, s, opts)
    ts = opts.ending_timestamp
    if ts is None and opts.ending_offsets_by_timestamp is not None:
        ts = opts.ending_offsets_by_timestamp.get(t, {}).get(p)
    if ts is not None:
        end = offset_for_timestamp(pd, ts)
    else:
        e = _bound(opts.ending_offsets, t, p, LATEST)
        if e == EARLIEST:
            return None
        end = None if e == LATEST else e
    if opts.read_committed:
        lso = last_stable_offset(pd)
        if lso is not None:
            end = lso if end is None else min(end, lso)
    if start is not None and end is not None:
        if end < start and ts is None:
            # KafkaOffsetReader / the batch's offset ranges: an explicit start after an
            # explicit end is an error, not an empty range
            raise InvalidArgumentError(
                f"Beginning offset {start} is after the ending offset {end} for topic {t} "
                f"partition {p}. You either provided an invalid fromOffset, or the Kafka "
                "topic has been damaged")
        if end <= start:
            return None
    return start, end


def last_stable_offset(pd: PartitionDir) -> int | None:
    """Where a ``read_committed`` consumer stops in this partition: the first offset of
    the earliest transaction still open at the end of the log (ProducerStateManager
    .firstUnstableOffset), or None when no transaction is open: the producer state as the
    broker loads it (:meth:`Log.load_producer_state <kafkalog_cli.storage.log.Log
    .load_producer_state>`: the newest usable ``<offset>.snapshot``, then the batches
    after it). A ``.log`` that cannot be read ends the replay (the read itself reports
    it)."""
    from ..storage.log import Log  # here: discovery, all audit needs, opens no Log

    plog = Log.open(pd.directory)
    try:
        return plog.load_producer_state().first_unstable_offset
    except KafkalogError:
        return None
    finally:
        plog.close()


# -- splits --------------------------------------------------------------------------------

def _split_points(seg_dir: str, base: int, size: int, target: int) -> list[int]:
    """Byte positions, from the offset index, where a segment larger than ``target`` may
    be cut: index positions near multiples of ``target``, each checked to be the start of
    a whole, valid batch (an index that lies is not trusted)."""
    seg = LogSegment(seg_dir, base)
    try:
        idx = seg.offset_index
        if idx is None or not idx.entries:
            return []
        points: list[int] = []
        want = target
        last = 0
        # entry by entry: a list of a big segment's entries grew the driver's (and the
        # local export's) heap with the segment, 18 MB for 1 GiB of 16 KB batches
        for _, pos in idx.iter_raw_entries(idx.entries - idx.zero_tail):
            if pos <= last or pos >= size:
                continue
            if pos >= want and size - pos >= target // 4:
                if _is_batch_start(seg, pos):
                    points.append(pos)
                    last = pos
                    want = pos + target
        return points
    finally:
        seg.close()


def _is_batch_start(seg: LogSegment, pos: int) -> bool:
    try:
        for b in seg.records(pos).batches():   # a remote .log: only this batch is read
            return b.magic <= MAGIC_V2 and b.is_valid
    except Exception:  # noqa: BLE001 - any doubt: do not cut here
        return False
    return False


def plan_slices(parts: list[PartitionDir], opts: ReadOptions,
                parallelism: int | None = None) -> tuple[list[list[Slice]], int]:
    """Slices of every wanted partition, packed into splits balanced by bytes.

    The number of splits aims at ``minPartitions`` (else 3 x ``parallelism``, else 3 x
    the CPUs here), with each split between :data:`MIN_SPLIT_BYTES` and
    ``max_partition_bytes``; segments larger than the split size are cut at offset-index
    positions. Slices keep topic/partition/offset order inside and across splits.

    Returns:
        ``(splits, total bytes)``.

    Raises:
        NotRegularFileError: a wanted partition's ``.log`` is not a regular file.
    """
    chosen = []
    for pd in parts:
        if not opts.wants(pd.topic, pd.partition) or not pd.bases:
            continue
        if pd.special:
            raise not_regular(*pd.special[0])
        rng = offset_range(pd, opts)
        if rng is None:
            continue
        start, end = rng
        segs = []
        n = len(pd.bases)
        for i, (base, size) in enumerate(zip(pd.bases, pd.sizes, strict=True)):
            if size == 0:
                continue
            if end is not None and base >= end:
                break
            if start is not None and i + 1 < n and pd.bases[i + 1] <= start:
                continue
            segs.append((base, size))
        if segs:
            chosen.append((pd, start, end, segs))
    total = sum(size for _, _, _, segs in chosen for _, size in segs)
    if total == 0:
        return [], 0
    want = opts.min_partitions or 3 * (parallelism or os.cpu_count() or 1)
    target = total // want + 1
    target = max(min(target, opts.max_partition_bytes), min(MIN_SPLIT_BYTES,
                                                            opts.max_partition_bytes))
    pieces: list[Slice] = []
    for pd, start, end, segs in chosen:
        for base, size in segs:
            cuts = _split_points(pd.directory, base, size, target) if size > target else []
            bounds = [0, *cuts, size]
            for a, b in zip(bounds, bounds[1:], strict=False):
                pieces.append(Slice(pd.topic, pd.partition, pd.directory, base, a, b,
                                    start, end, base == pd.bases[-1]))
    splits: list[list[Slice]] = []
    cur: list[Slice] = []
    cur_bytes = 0
    for s in pieces:
        if cur and cur_bytes + s.size > target:
            splits.append(cur)
            cur, cur_bytes = [], 0
        cur.append(s)
        cur_bytes += s.size
    if cur:
        splits.append(cur)
    return splits, total
