"""The corruption catalogue: damage applied to copies of a log directory the bench broker
wrote, each case a small named function saying which Kafka code path it exercises.

The source (:func:`write_source`): one Kafka 4.4.0 broker writes the topics below with
small segments (``internal.segment.bytes``, the topic config Kafka's own tests use for
segments below the 1 MiB floor of ``segment.bytes``), then stops cleanly. Its log
directory is the input of every case:

* ``rc-plain`` (48 partitions): codec none, a producer without idempotence (no producer
  ids), 40 batches of 4 records per partition, 3-4 segments;
* ``rc-unread`` (2): as ``rc-plain``, for damage no consumer may read;
* ``rc-gzip``, ``rc-snappy``, ``rc-lz4``, ``rc-zstd`` (2 each): the topic's
  ``compression.type`` (the broker compresses), an idempotent producer;
* ``rc-idem`` (6): an idempotent producer, codec none;
* ``rc-txn`` (6): a transactional producer, committed and aborted transactions (COMMIT and
  ABORT markers, ``.txnindex`` entries), offsets sent to the transaction
  (``__consumer_offsets`` gets transactional offset commits and their markers);
* the internal topics the broker wrote: ``__consumer_offsets``, ``__transaction_state``,
  ``__cluster_metadata``.

A case takes one partition (:class:`Target`) and damages it in place; cases never touch
another case's partition, so many run on one copy of the log directory and one broker
start recovers them all (``tests/recovery/test_recovery_vs_broker.py``). Positions are
found with this module's own header walk (:func:`batches`), independent of kafkalog's.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

# -- the source ---------------------------------------------------------------------------

SEGMENT_BYTES = 6000
#: the records' timestamps: an hour ago (the broker expires producers whose last timestamp
#: is older than producer.id.expiration.ms when it loads their state; kafkalog does not)
BASE_TS = (int(time.time()) - 3600) * 1000
TOPICS = {  # name: (partitions, topic configs)
    "rc-plain": (48, {}),
    "rc-gzip": (2, {"compression.type": "gzip"}),
    "rc-snappy": (2, {"compression.type": "snappy"}),
    "rc-lz4": (2, {"compression.type": "lz4"}),
    "rc-zstd": (2, {"compression.type": "zstd"}),
    "rc-idem": (6, {}),
    "rc-txn": (6, {}),
    "rc-unread": (2, {}),
}
#: topics no consumer reads in the comparison: their cases leave a corrupt batch that
#: neither side recovers (a consumer reaching it fails)
UNREAD = ("rc-unread",)
#: the transactional producer's groups (each lands in one __consumer_offsets partition)
GROUPS = ("rc-group-a", "rc-group-b", "rc-group-c")
#: broker configs of every broker of the comparison (the source and the recovering ones):
#: no retention and no cleaner, so nothing but the
#: log loading changes the files
BROKER_CONFIGS = {"log.retention.ms": "-1", "log.cleaner.enable": "false",
                  "offsets.topic.num.partitions": "8", "transaction.state.log.num.partitions": "2",
                  "transaction.state.log.segment.bytes": "1048576",
                  # segments recovery removes are deleted at once, not a minute later
                  "log.segment.delete.delay.ms": "0",
                  # no retention pass while a broker runs: the first comes
                  # log.initial.task.delay.ms (30 s) after the start, and under load a
                  # broker can still run then; its deleteLogStartOffsetBreachedSegments
                  # deleted the segment below log-start-offset-ahead's checkpoint, which
                  # is LogManager's retention thread's work, not LogLoader's
                  "log.initial.task.delay.ms": "3600000"}


def _value(topic: str, p: int, r: int, j: int) -> str:
    # text that compresses, but not to nothing
    h = hashlib.sha256(f"{topic}/{p}/{r}/{j}".encode()).hexdigest()
    return f"{topic}-{p} round {r} record {j} " + h[:48] + " " + "payload " * 4


def _sends(topics, rounds: int, per: int, r0: int = 0) -> list[dict]:
    steps = []
    for r in range(r0, r0 + rounds):
        for t in topics:
            for p in range(TOPICS[t][0]):
                for j in range(per):
                    steps.append({"op": "send", "topic": t, "partition": p,
                                  "timestamp": BASE_TS + r * 1000 + j, "key": f"k{r}-{j}",
                                  "value": _value(t, p, r, j),
                                  "headers": [["h", f"{r}"]] if j == 0 else []})
        steps.append({"op": "flush"})
    return steps


def write_source(broker, java_produce) -> None:
    """Create the topics on the (started) ``broker``, write them, stop it cleanly."""
    for name, (n, configs) in TOPICS.items():
        broker.create_topic(name, n, {"internal.segment.bytes": SEGMENT_BYTES,
                                      "retention.ms": -1, **configs})
    # a batch per flush: linger.ms holds the records until the flush, and batch.size is
    # far above a round's bytes (4 records of ~150 B). Not larger: the producer takes
    # batch.size from its 32 MiB buffer.memory for each partition's open batch, and
    # rc-plain's 48 + rc-unread's 2 partitions of 1 MB each blocked send() until linger.ms
    # freed them: sends that failed after max.block.ms under load, or a 120 s timeout
    big = {"linger.ms": "60000", "batch.size": "65536"}
    acks = java_produce(broker.bootstrap, {"producer": {**big, "enable.idempotence": "false",
                                                        "acks": "1"},
                                           "steps": _sends(["rc-plain", "rc-unread"], 40, 4)})
    acks += java_produce(broker.bootstrap, {"producer": big, "steps": _sends(
        ["rc-gzip", "rc-snappy", "rc-lz4", "rc-zstd", "rc-idem"], 40, 4)})
    failed = [a for a in acks if "error" in a]
    assert not failed, f"{len(failed)} of {len(acks)} sends failed: {failed[:3]}"
    steps = []
    for r in range(24):
        steps.append({"op": "begin"})
        steps += _sends(["rc-txn"], 1, 3, r0=r)
        if r % 3 == 0:
            steps.append({"op": "sendOffsets", "group": GROUPS[r // 3 % len(GROUPS)],
                          "offsets": [{"topic": "rc-plain", "partition": 0, "offset": r}]})
        steps.append({"op": "abort" if r % 4 == 3 else "commit"})
    java_produce(broker.bootstrap, {"producer": {**big, "transactional.id": "rc-txn-producer",
                                                 "transaction.timeout.ms": "900000"},
                                    "steps": steps})
    broker.stop()


# -- reading and editing the files ----------------------------------------------------------

_HDR = struct.Struct(">qiiBIhiqqqhii")  # the 61-byte v2 header


@dataclass(frozen=True)
class Batch:
    """A v2 batch of a ``.log``: byte ``position`` and ``size`` (header included)."""

    position: int
    size: int
    base_offset: int
    last_offset: int
    attributes: int

    @property
    def control(self) -> bool:
        return bool(self.attributes & 0x20)

    @property
    def end(self) -> int:
        return self.position + self.size


def batches(data: bytes) -> list[Batch]:
    """The whole v2 batches of a broker-written ``.log`` (no CRC check: the source is
    undamaged)."""
    out, pos = [], 0
    while pos + 61 <= len(data):
        (base, length, _, magic, _, attrs, delta, *_rest) = _HDR.unpack_from(data, pos)
        if length < 49 or magic != 2 or pos + 12 + length > len(data):
            break
        out.append(Batch(pos, 12 + length, base, base + delta, attrs))
        pos += 12 + length
    return out


def _prefix(offset: int) -> str:
    return f"{offset:020d}"


@dataclass
class Target:
    """One partition a case damages: ``pdir`` in the log directory ``log_dir``."""

    pdir: Path
    topic: str
    partition: int

    @property
    def log_dir(self) -> Path:
        return self.pdir.parent

    def logs(self) -> list[Path]:
        return sorted(self.pdir.glob("*.log"))

    def log(self, i: int) -> Path:
        return self.logs()[i]

    def base(self, i: int) -> int:
        return int(self.log(i).name[:20])

    def batches(self, i: int) -> list[Batch]:
        return batches(self.log(i).read_bytes())

    def file(self, i: int, suffix: str) -> Path:
        return self.log(i).with_suffix(suffix)

    def flip(self, path: Path, pos: int, mask: int = 0x01) -> None:
        with open(path, "r+b") as f:
            f.seek(pos)
            b = f.read(1)
            f.seek(pos)
            f.write(bytes([b[0] ^ mask]))

    def write_at(self, path: Path, pos: int, data: bytes) -> None:
        with open(path, "r+b") as f:
            f.seek(pos)
            f.write(data)

    def cut(self, path: Path, size: int) -> None:
        os.truncate(path, size)

    def append(self, path: Path, data: bytes) -> None:
        with open(path, "ab") as f:
            f.write(data)

    def set_checkpoint(self, name: str, value: int | None) -> None:
        """Set (None: drop) this partition's entry of the log dir's checkpoint ``name``."""
        path = self.log_dir / name
        lines = path.read_text().splitlines() if path.exists() else ["0", "0"]
        entries = {tuple(x.rsplit(" ", 2)[:2]): x.rsplit(" ", 1)[1] for x in lines[2:]}
        key = (self.topic, str(self.partition))
        if value is None:
            entries.pop(key, None)
        else:
            entries[key] = str(value)
        body = "".join(f"{t} {p} {o}\n" for (t, p), o in entries.items())
        path.write_text(f"0\n{len(entries)}\n{body}")

    def recovery_point_zero(self) -> None:
        """A crash long after the last flush: the recovery point at 0, every segment
        recovered (LogLoader.recoverLog from the segment holding the recovery point)."""
        self.set_checkpoint("recovery-point-offset-checkpoint", 0)

    def log_end_offset(self) -> int:
        last = self.batches(-1)
        return last[-1].last_offset + 1 if last else self.base(-1)

    def snapshots(self) -> list[Path]:
        return sorted(self.pdir.glob("*.snapshot"))


# -- the catalogue ---------------------------------------------------------------------------

@dataclass
class Case:
    """A kind of damage: ``name``, the ``kind`` of partition it needs (a source topic, or
    ``__consumer_offsets`` / ``__cluster_metadata``), the Kafka code path it exercises
    (``kafka``), the damage (``damage(target)``), and ``differs``: what kafkalog's result
    may differ in, each a documented extension of docs/recover.md (aspect -> the
    section's words)."""

    name: str
    kind: str
    kafka: str
    damage: object
    differs: dict = field(default_factory=dict)
    #: the broker takes the log directory offline (it halts): run on a copy of its own
    offline: bool = False


CATALOGUE: list[Case] = []


def case(kind: str, kafka: str, *, differs: dict | None = None, offline: bool = False):
    def register(fn):
        CATALOGUE.append(Case(fn.__name__.replace("_", "-"), kind, kafka, fn,
                              differs or {}, offline))
        return fn
    return register


def _all(why: str) -> dict:
    """``differs`` for a case where kafkalog keeps another log: every aspect follows."""
    return {a: why for a in ("files", "log", "index", "timeindex", "txnindex", "logEndOffset",
                             "logStartOffset", "recoveryPoint", "snapshots", "epochs",
                             "records")}


def _last(t: Target) -> Batch:
    return t.batches(-1)[-1]


def _mid(t: Target, seg: int = -1) -> Batch:
    bs = t.batches(seg)
    return bs[len(bs) // 2]


def _flip_first_record(t: Target, seg: int) -> None:
    """A flipped byte in the first record of segment ``seg``'s middle batch."""
    t.flip(t.log(seg), _mid(t, seg).position + 61 + 5)


# truncations at each structural point of the last batch (a torn write at the crash)

@case("rc-plain", "LogSegment.recover: FileLogInputStream.nextBatch stops at a partial "
      "header (fewer bytes than the 61-byte header); LogLoader.recoverLog truncates")
def truncated_inside_header(t):
    b = _last(t)
    t.cut(t.log(-1), b.position + 30)


@case("rc-plain", "FileLogInputStream.nextBatch: fewer than 17 bytes left (HEADER_SIZE_UP_TO_"
      "MAGIC) ends the iteration; the tail is truncated")
def truncated_in_size_field(t):
    t.cut(t.log(-1), _last(t).position + 10)


@case("rc-plain", "FileLogInputStream.nextBatch: a batch running past the end of the file "
      "(a record cut in half) ends the iteration; truncated")
def truncated_inside_record(t):
    b = _last(t)
    t.cut(t.log(-1), b.position + 61 + (b.size - 61) // 2)


@case("rc-plain", "FileLogInputStream.nextBatch: the last batch one byte short")
def truncated_one_byte_short(t):
    t.cut(t.log(-1), _last(t).end - 1)


@case("rc-plain", "LogLoader: a log cut at a batch boundary; the producer snapshot at the "
      "old log end offset is above it (ProducerStateManager.truncateAndReload removes it)")
def truncated_at_batch_boundary(t):
    bs = t.batches(-1)
    t.cut(t.log(-1), bs[len(bs) // 2].position)


@case("rc-plain", "LogSegment.recover of an empty active segment (the crash before the first "
      "append was flushed)")
def active_segment_emptied(t):
    t.cut(t.log(-1), 0)


# a flipped byte in each field

@case("rc-plain", "DefaultRecordBatch.ensureValid: a flipped CRC byte fails the CRC-32C; "
      "LogSegment.recover truncates at the batch")
def flipped_crc(t):
    t.flip(t.log(-1), _mid(t).position + 17 + 2)


@case("rc-plain", "ensureValid: the attributes are under the CRC")
def flipped_attributes(t):
    t.flip(t.log(-1), _mid(t).position + 21 + 1, 0x02)


@case("rc-plain", "ensureValid: a record byte under the CRC")
def flipped_record_byte(t):
    b = _mid(t)
    t.flip(t.log(-1), b.position + 61 + (b.size - 61) // 2)


@case("rc-plain", "ensureValid: the max timestamp is under the CRC")
def flipped_header_timestamp(t):
    t.flip(t.log(-1), _mid(t).position + 35 + 7)


@case("rc-plain", "FileLogInputStream.nextBatch: a size field below 14 throws "
      "CorruptRecordException; LogSegment.recover truncates")
def size_below_minimum(t):
    t.write_at(t.log(-1), _mid(t).position + 8, struct.pack(">i", 5))


@case("rc-plain", "FileLogInputStream.nextBatch: a size field grown past the end of the file "
      "reads as a partial batch")
def size_past_end(t):
    t.write_at(t.log(-1), _mid(t).position + 8, struct.pack(">i", 1 << 20))


@case("rc-plain", "FileLogInputStream: a magic byte 1 reads the v2 batch with the legacy "
      "layout; its CRC (v1, over magic..end) fails")
def flipped_magic(t):
    t.flip(t.log(-1), _mid(t).position + 16, 0x03)


@case("rc-plain", "LogSegment.recover: the partition leader epoch is outside the CRC; "
      "the cache assigns the bogus epoch (LeaderEpochFileCache.assign)")
def flipped_leader_epoch(t):
    # epoch 1: above the log's 0, below the epoch the recovering broker leads with (2),
    # whose assign at the log end offset would otherwise remove a larger one
    t.write_at(t.log(-1), _mid(t).position + 12, struct.pack(">i", 1))


@case("rc-plain", "LogSegment.recover: the base offset is outside the CRC; a batch starting "
      "below the previous one", differs=_all(
          "kafkalog's stricter checks: a base offset not above the previous batch's last "
          "offset is invalid (the broker does not check it; its consumer skips the "
          "repeated offsets)"))
def base_offset_goes_backwards(t):
    b = _mid(t)
    t.write_at(t.log(-1), b.position, struct.pack(">q", b.base_offset - 3))


# tails a crash leaves

@case("rc-plain", "FileLogInputStream: a zero-filled tail (preallocated file) has size 0 < 14:"
      " CorruptRecordException, truncated")
def zero_filled_tail(t):
    t.append(t.log(-1), bytes(8192))


@case("rc-plain", "the last batch's bytes zeroed (pages never written): size 0, truncated")
def last_batch_zeroed(t):
    b = _last(t)
    t.write_at(t.log(-1), b.position, bytes(b.size))


@case("rc-plain", "garbage after the last batch: a size field that runs past the end")
def garbage_after_last_batch(t):
    t.append(t.log(-1), hashlib.sha512(b"garbage").digest() * 3)


@case("rc-plain", "garbage that parses as a header with a bad CRC: ensureValid fails")
def garbage_batch_after_last(t):
    b = _last(t)
    data = bytearray(t.log(-1).read_bytes()[b.position:b.end])
    data[0:8] = struct.pack(">q", b.last_offset + 1)
    data[-1] ^= 0xFF
    t.append(t.log(-1), bytes(data))


# mid-log damage below the recovery point (a crash with the recovery point behind)

@case("rc-plain", "LogLoader.recoverLog from recovery point 0: a CRC failure in the first "
      "segment truncates it and deletes every later segment")
def flipped_first_segment_rp0(t):
    t.recovery_point_zero()
    _flip_first_record(t, 0)


@case("rc-idem", "recoverLog from 0: truncation in the middle segment; producer state "
      "rebuilt (ProducerStateManager.truncateAndReload, loadProducerState)")
def flipped_middle_segment_rp0_idempotent(t):
    t.recovery_point_zero()
    _flip_first_record(t, 1)


@case("rc-unread", "a CRC failure below the recovery point: LogLoader does not recover that "
      "segment and the damage stays (a broker finds it when a consumer reads it)")
def flipped_below_recovery_point(t):
    _flip_first_record(t, 0)


@case("rc-plain", "recoverLog from 0 with no damage: every segment rescanned, its indexes "
      "rebuilt (LogSegment.recover)")
def recovery_point_zero_no_damage(t):
    t.recovery_point_zero()


@case("rc-plain", "an unclean shutdown and nothing damaged: the active segment recovered")
def unclean_shutdown_no_damage(t):
    pass


# codecs

def _codec_case(kind):
    @case(kind, f"ensureValid of a {kind[3:]} batch: a flipped byte in the compressed "
          "records of the first segment fails the CRC; recoverLog from 0 truncates there "
          "and deletes the later segments")
    def damage(t):
        t.recovery_point_zero()
        b = _mid(t, 0)
        t.flip(t.log(0), b.position + 61 + (b.size - 61) // 2)
    CATALOGUE[-1].name = f"flipped-{kind[3:]}-records"
    return damage


for _kind in ("rc-gzip", "rc-snappy", "rc-lz4", "rc-zstd"):
    _codec_case(_kind)


@case("rc-zstd", "recoverLog from 0 over compressed batches: a torn last batch")
def truncated_zstd_rp0(t):
    t.recovery_point_zero()
    b = _last(t)
    t.cut(t.log(-1), b.position + b.size // 2)


# indexes

@case("rc-plain", "LogLoader.loadSegmentFiles: a segment without its .index "
      "(LogSegment.sanityCheck: NoSuchFileException) is recovered wherever it lies")
def missing_offset_index(t):
    t.file(0, ".index").unlink()


@case("rc-plain", "loadSegmentFiles: a missing .timeindex is created empty "
      "(sanityCheck(timeIndexFileNewlyCreated)), the segment not recovered", differs={
          "timeindex": "a segment whose .timeindex is missing is recovered wherever it is "
                       "(both indexes rebuilt from the log)"})
def missing_time_index(t):
    t.file(0, ".timeindex").unlink()


@case("rc-plain", "below the recovery point the broker no longer checks indexes "
      "(KAFKA-7283): a corrupt .index is kept", differs={
          "index": "segments below the recovery point keep their indexes unless a cheap "
                   "sanity check fails; then the segment is recovered"})
def corrupt_offset_index_below_rp(t):
    p = t.file(0, ".index")
    data = bytearray(p.read_bytes())
    data[4:8] = struct.pack(">i", 1 << 30)  # a position far past the log
    p.write_bytes(bytes(data))


@case("rc-plain", "the active segment's .index with garbage entries: LogSegment.recover "
      "resets and rebuilds it (offsetIndex.reset)")
def corrupt_offset_index_active(t):
    t.append(t.file(-1, ".index"), struct.pack(">ii", 3, 99999) * 4)


@case("rc-plain", "an active .index preallocated and never flushed (10 MiB of zeros): "
      "AbstractIndex resizes, recover rebuilds, close trims")
def preallocated_offset_index(t):
    p = t.file(-1, ".index")
    os.truncate(p, 10 * 1024 * 1024)


@case("rc-plain", "an active .timeindex preallocated and never flushed")
def preallocated_time_index(t):
    os.truncate(t.file(-1, ".timeindex"), 10 * 1024 * 1024 // 12 * 12)


@case("rc-plain", "an offset index entry pointing past the log (active segment): rebuilt "
      "by LogSegment.recover")
def offset_index_past_log(t):
    size = t.log(-1).stat().st_size
    t.append(t.file(-1, ".index"), struct.pack(">ii", 500, size + 4096))


@case("rc-plain", "an index longer than its entries (a length not a multiple of 8) on the "
      "active segment")
def offset_index_odd_length(t):
    t.append(t.file(-1, ".index"), b"\x00\x01\x02")


# leftovers of interrupted broker work

_SWAP_INDEXES = {
    "index": "after completing a swap kafkalog writes the segment's indexes as recovery "
             "rebuilds them; the broker leaves the swapped-in segment's .index "
             "preallocated and empty (10 MiB of zeros)",
    "timeindex": "(as .index: the broker leaves its .timeindex empty, or the replaced "
                 "segment's)"}


@case("rc-plain", "LogLoader.removeTempFilesAndCollectSwapFiles + completeSwapOperations: a "
      ".log.swap (a cleaned copy of the segment) replaces the segment", differs=_SWAP_INDEXES)
def swap_replacing_segment(t):
    src = t.log(1)
    shutil.copyfile(src, src.with_name(src.name + ".swap"))


@case("rc-plain", "completeSwapOperations: an EMPTY stray .log.swap at a segment's base "
      "offset replaces that segment (its records are gone)", differs=_SWAP_INDEXES)
def empty_swap_replacing_segment(t):
    src = t.log(1)
    src.with_name(src.name + ".swap").write_bytes(b"")


@case("rc-plain", "removeTempFilesAndCollectSwapFiles: an .index.swap without its .log.swap "
      "is deleted with the segment's index files, then the segment recovered")
def index_swap_without_log_swap(t):
    src = t.file(1, ".index")
    shutil.copyfile(src, src.with_name(src.name + ".swap"))


@case("rc-plain", "a .log.swap with no segment of its own (offsets past the log end)")
def swap_without_segment(t):
    leo = t.log_end_offset()
    b = _last(t)
    data = bytearray(t.log(-1).read_bytes()[b.position:b.end])
    data[0:8] = struct.pack(">q", leo)
    (t.pdir / (_prefix(leo) + ".log.swap")).write_bytes(bytes(data))


@case("rc-plain", "removeTempFilesAndCollectSwapFiles: .swap files at or above the smallest "
      ".cleaned offset are an unfinished split: deleted with the .cleaned")
def cleaned_and_swap(t):
    src = t.log(1)
    shutil.copyfile(src, src.with_name(src.name + ".cleaned"))
    shutil.copyfile(t.log(2), t.log(2).with_name(t.log(2).name + ".swap"))


@case("rc-plain", "removeTempFilesAndCollectSwapFiles: a stray .cleaned file is deleted")
def cleaned_alone(t):
    src = t.log(1)
    shutil.copyfile(src, src.with_name(src.name + ".cleaned"))


@case("rc-plain", "removeTempFilesAndCollectSwapFiles: a .deleted segment (retention's "
      "asynchronous delete interrupted) is deleted")
def deleted_segment_files(t):
    for suf in (".log", ".index", ".timeindex"):
        p = t.file(0, suf)
        p.rename(p.with_name(p.name + ".deleted"))
    t.set_checkpoint("log-start-offset-checkpoint", t.base(0))


@case("rc-plain", "a stray .deleted copy beside its live segment is deleted")
def deleted_copy_beside_segment(t):
    shutil.copyfile(t.log(0), t.log(0).with_name(t.log(0).name + ".deleted"))


@case("rc-plain", "a leader-epoch-checkpoint.tmp of an interrupted CheckpointFile write: "
      "the broker's next write of the checkpoint (its leader epoch at start-up) replaces "
      "it; kafkalog removes it to the quarantine")
def checkpoint_tmp_file(t):
    (t.pdir / "leader-epoch-checkpoint.tmp").write_text("0\n1\n0 0\n")


# segment file names

@case("rc-plain", "a segment whose base offset is above its first batch's offset: "
      "LogSegment.recover's ensureOffsetInRange fails (LogSegmentOffsetOverflowException) "
      "and the broker splits the segment", differs=_all(
          "kafkalog's stricter checks: a batch whose base offset is below the segment's "
          "base offset is invalid; the log is cut there (the broker splits the segment "
          "and keeps the records)"))
def segment_base_above_first_batch(t):
    t.recovery_point_zero()
    base = t.base(-1)
    for p in sorted(t.pdir.glob(_prefix(base) + ".*")):
        if p.suffix in (".log", ".index", ".timeindex", ".txnindex"):
            p.rename(p.with_name(_prefix(base + 2) + p.suffix))


# checkpoints

@case("rc-plain", "LogLoader: a recovery point above the log end offset (the checkpoint "
      "ahead of the log)")
def recovery_point_ahead(t):
    t.set_checkpoint("recovery-point-offset-checkpoint", t.log_end_offset() + 1000)


@case("rc-plain", "LogManager.loadLogs: a log start offset inside the second segment "
      "(the checkpoint ahead of the first segment): consumers start there")
def log_start_offset_ahead(t):
    t.set_checkpoint("log-start-offset-checkpoint", t.batches(1)[3].base_offset)


@case("rc-plain", "a log start offset above the log end offset: the broker's UnifiedLog "
      "deletes every segment", differs=_all(
          "a log-start-offset-checkpoint entry above the log end offset: kafkalog lowers "
          "the entry to the log end offset instead of deleting every segment"))
def log_start_offset_beyond_end(t):
    t.set_checkpoint("log-start-offset-checkpoint", t.log_end_offset() + 500)


@case("rc-plain", "a log start offset below the first segment (the checkpoint behind)")
def log_start_offset_behind(t):
    t.set_checkpoint("log-start-offset-checkpoint", 0)
    for suf in (".log", ".index", ".timeindex"):
        t.file(0, suf).unlink()


# leader epochs

@case("rc-plain", "LeaderEpochFileCache.truncateFromEnd: epochs starting past the log end "
      "offset are dropped")
def epochs_past_log_end(t):
    p = t.pdir / "leader-epoch-checkpoint"
    lines = p.read_text().splitlines()
    entries = lines[2:] + [f"5 {t.log_end_offset() + 10}", f"6 {t.log_end_offset() + 20}"]
    p.write_text(f"0\n{len(entries)}\n" + "".join(x + "\n" for x in entries))


@case("rc-plain", "truncation below an epoch's start: LogLoader truncates the cache at the "
      "new log end offset (truncateFromEnd)")
def truncation_below_later_epoch(t):
    p = t.pdir / "leader-epoch-checkpoint"
    b = _mid(t)
    lines = p.read_text().splitlines()
    entries = lines[2:] + [f"9 {b.base_offset}"]
    p.write_text(f"0\n{len(entries)}\n" + "".join(x + "\n" for x in entries))
    t.flip(t.log(-1), t.batches(-1)[len(t.batches(-1)) // 2 - 1].position + 61 + 3)


@case("rc-plain", "CheckpointFile.read of a leader-epoch-checkpoint that does not parse: "
      "the broker marks the log directory offline (a single log dir: it halts)",
      offline=True, differs={
          "broker": "kafkalog rebuilds the file from the batches (the broker halts)"})
def corrupt_leader_epoch_checkpoint(t):
    (t.pdir / "leader-epoch-checkpoint").write_text("0\n3\n0 zero\n")


# producer state

@case("rc-idem", "ProducerStateManager.loadFromSnapshot: a snapshot with a bad CRC "
      "(CorruptSnapshotException) is deleted and the state rebuilt from the log")
def corrupt_producer_snapshot(t):
    snap = t.snapshots()[-1]
    t.flip(snap, snap.stat().st_size - 3)


@case("rc-idem", "ProducerStateManager.truncateAndReload: a snapshot above the log end "
      "offset is deleted")
def future_producer_snapshot(t):
    snap = t.snapshots()[-1]
    shutil.copyfile(snap, t.pdir / (_prefix(t.log_end_offset() + 40) + ".snapshot"))


@case("rc-idem", "LogLoader.loadProducerState with no snapshot: replayed from the log")
def missing_producer_snapshots(t):
    for s in t.snapshots():
        s.unlink()


@case("rc-idem", "an idempotent log torn mid-batch: the snapshot at the old log end offset "
      "is dropped, the producer's last sequence is the last whole batch's")
def truncated_idempotent(t):
    b = _last(t)
    t.cut(t.log(-1), b.position + b.size // 2)


# transactions

@case("rc-txn", "a transaction open at the crash (its COMMIT marker never written): the "
      "producer state keeps its first offset (ongoing transaction)")
def transaction_open_at_crash(t):
    bs = t.batches(-1)
    marker = [b for b in bs if b.control][-1]
    t.cut(t.log(-1), marker.position)


@case("rc-txn", "an ABORT marker that fails its CRC: truncated there, its .txnindex entry "
      "and the aborted transaction gone (LogSegment.recover rebuilds the txn index)")
def corrupt_abort_marker(t):
    t.recovery_point_zero()
    for i in range(len(t.logs())):
        aborts = [b for b in t.batches(i) if b.control and
                  t.log(i).read_bytes()[b.position + 61 + 7:b.position + 61 + 9] == b"\x00\x00"]
        if aborts:
            t.flip(t.log(i), aborts[0].end - 1)
            return
    raise AssertionError("no ABORT marker in the partition")


@case("rc-txn", "recoverLog from 0: a flipped record byte in a transaction's data batch "
      "(its COMMIT or ABORT marker follows) truncates there and deletes the later segments")
def flipped_transactional_data_rp0(t):
    t.recovery_point_zero()
    data = [b for b in t.batches(0) if not b.control]
    b = data[len(data) // 2]
    t.flip(t.log(0), b.position + 61 + (b.size - 61) // 2)


@case("rc-txn", "recoverLog from 0 over transactional data: every .txnindex rebuilt "
      "(ProducerStateManager + LogSegment.recover's updateTxnIndex)")
def transactional_recovery_point_zero(t):
    t.recovery_point_zero()


@case("rc-txn", "a .txnindex deleted: the segment recovered from 0 rebuilds it")
def missing_txn_index(t):
    t.recovery_point_zero()
    for p in t.pdir.glob("*.txnindex"):
        p.unlink()


# internal topics

@case("__consumer_offsets", "the group coordinator's partition: a torn last batch, "
      "recovered as any log (the coordinator then loads the survivors)")
def consumer_offsets_torn(t):
    b = _last(t)
    t.cut(t.log(-1), b.position + b.size - 5)


@case("__consumer_offsets", "__consumer_offsets from recovery point 0 with a flipped "
      "record byte in a transactional offset commit (its marker follows)")
def consumer_offsets_flipped_rp0(t):
    t.recovery_point_zero()
    data = [b for b in t.batches(0) if not b.control]
    b = data[len(data) // 2]
    t.flip(t.log(0), b.position + 61 + 2)


@case("__cluster_metadata", "KafkaMetadataLog on UnifiedLog: a torn batch after the last "
      "one of the metadata log is recovered away", differs={
          "metadata": "the broker appends its own records after recovery: compared on "
                      "kafkalog's prefix"})
def cluster_metadata_torn_tail(t):
    b = _last(t)
    data = t.log(-1).read_bytes()[b.position:b.end]
    t.append(t.log(-1), struct.pack(">q", b.last_offset + 1) + data[8:len(data) // 2])
