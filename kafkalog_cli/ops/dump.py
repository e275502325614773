"""``dump-segment``: every batch, record and index entry of segment files, after Kafka's
``DumpLogSegments`` tool.

:func:`dump` yields plain events (dicts) in file order; the renderers in
:mod:`kafkalog_cli.render.dump` turn them into the Kafka tool's exact text lines, JSON
Lines, or a rich view. Keys follow the Kafka tool's names; the JSON objects
(:func:`kafkalog_cli.render.dump.json_event`, docs/json.md) spell the types in camelCase
(``invalid_bytes`` -> ``invalidBytes``, ...) and a record's ``payload`` as ``value``, the
vocabulary of every command's JSON. Event types:

* ``file``: ``{"type":"file","file":F,"kind":"log|index|timeindex|snapshot|
  producer_snapshot|txnindex|unknown","startOffset":N}`` (``Dumping F`` / ``Log starting
  offset: N``; ``snapshot`` is a KRaft ``.checkpoint``, ``producer_snapshot`` a
  ``.snapshot``);
* ``batch``: the batch header (``baseOffset``, ``lastOffset``, ``count``, ``magic``, ``crc``,
  ``isValid``, ``size``, ``position``, ``compresscodec``, ``timestampType``,
  ``baseTimestamp``, ``maxTimestamp``, producer fields, ``partitionLeaderEpoch``,
  ``isTransactional``, ``isControl``, ``deleteHorizonMs``);
* ``record`` (deep iteration): ``offset``, ``timestamp``, ``keySize``, ``valueSize``,
  ``sequence``, ``headerKeys``; with data: ``key``, ``payload`` (bytes or None) and
  ``headers``; decoded (an internal topic) ``key``/``payload`` are JSON shapes (a
  tombstone's payload None, where Kafka's tool prints ``<DELETE>``), ``{"raw": base64}``
  when they do not decode, with ``decodeWarnings`` and, where Kafka's parser fails,
  ``decodeFailure`` (what its tool prints: ``Unknown record type N at offset X,
  skipping.``, ``Error at offset X, skipping. <message>``; a coordinator record without
  a key also gets a ``corrupt_record`` diagnostic, as Kafka's tool stops there), and
  ``decoded``, the :class:`~kafkalog_cli.decoders.DecodedRecord` (not written to JSON);
  control records add ``controlType`` and, for markers, ``coordinatorEpoch``; legacy
  records add ``isValid`` and ``crc``;
* ``invalid_bytes``: bytes after the last whole batch (``Found N invalid bytes ...``), with
  the ``reason`` iteration stopped there when it was not a partial batch, and
  ``kafkaException`` (``"CorruptRecordException"``) where Kafka's reader throws instead
  (a size below 14 bytes: its tool prints no ``Found`` line and exits 1);
* ``index_entry`` / ``timeindex_entry``: ``offset``/``position`` and ``timestamp``/``offset``;
* ``index_empty``, ``index_sane``: ``F is empty.`` / ``F passed sanity check.``;
* ``producer_snapshot_entry`` (a ``.snapshot``, as DumpLogSegments.dumpProducerIdSnapshot):
  ``producerId``, ``producerEpoch``, ``coordinatorEpoch``, ``currentTxnFirstOffset`` (None
  when no transaction is open), ``lastTimestamp``, and the last batch's ``firstSequence``,
  ``lastSequence``, ``lastOffset``, ``offsetDelta``, ``timestamp`` (all None when the
  entry holds no batch: a stored lastOffset below 0);
* ``txn_index_entry`` (a ``.txnindex``, as dumpTxnIndex): ``version``, ``producerId``,
  ``firstOffset``, ``lastOffset``, ``lastStableOffset``;
* ``diagnostic``: a mismatch or error message for stderr (``stream: "stderr"``); corrupt
  data where Kafka's tool throws (and exits 1) has ``"error": True`` and a ``kind``
  (``corrupt_record``: records of a batch that do not decode, named by file and byte
  position; ``corrupt_index``: an index failing the sanity check, a ``.txnindex`` entry
  of an unknown version), the dump going on; mismatches do not (Kafka exits 0); a file of
  an unknown kind gets one with ``"kind": "ignored_file"`` (``Ignoring unknown file F``) and
  the dump goes on with the next file; with deep iteration, a ``.log`` whose record
  offsets are not consecutive (from -1: a first offset above 0 counts) gets one with
  ``"kind": "non_consecutive_offsets"`` and ``nonConsecutive``: ``[{"offset": A,
  "nextOffset": B}]`` (``Non-consecutive offsets in F`` / ``  A is followed by B``, after
  the file's dump; with ``start_offset``, the first record dumped is not compared).

The read never writes: files are opened read-only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path

from ..constants import (
    CHECKPOINT_FILE_SUFFIX,
    DECODER_NAMES,
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    DUMP_MAX_MESSAGE_SIZE,
    INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    MAGIC_V2,
    NO_TIMESTAMP,
    PRODUCER_SNAPSHOT_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
    TIMESTAMP_TYPE_MASK,
    TXN_INDEX_FILE_SUFFIX,
)
from ..errors import (
    CorruptIndexError,
    CorruptSnapshotError,
    InvalidArgumentError,
    KafkalogError,
    RecordOverheadError,
    UnreadableError,
)
from ..format import record as _record
from ..format.compiled import _c as _format_c
from ..format.records import FileRecords, LegacyRecordBatch
from ..schema.control import control_type_name
from ..storage.files import SEGMENT_SUFFIXES, check_exists
from ..storage.location import as_path
from ..storage.segment import LogSegment, open_view, resolve_segments

#: Decoder names as the Kafka tool's flags spell them (``--offsets-decoder``: ``offsets``).
DECODERS = tuple(DECODER_NAMES)

#: The ``--key-decoder-class`` / ``--value-decoder-class`` values kafkalog accepts: Kafka's
#: StringDecoder (Kafka 4's ``org.apache.kafka.tools.api.StringDecoder``, and Kafka 3's
#: ``kafka.serializer.StringDecoder``), which prints bytes as Java's UTF-8 string, as
#: kafkalog prints undecoded keys and payloads. Kafka's tool loads any class by its full
#: name (``Utils.newInstance``); kafkalog runs no Java classes.
STRING_DECODER_CLASSES = ("org.apache.kafka.tools.api.StringDecoder",
                          "kafka.serializer.StringDecoder")


def check_decoder_class(name: str) -> None:
    """Accept a ``--key-decoder-class`` / ``--value-decoder-class`` value.

    :raises InvalidArgumentError: not one of :data:`STRING_DECODER_CLASSES`.
    """
    if name not in STRING_DECODER_CLASSES:
        raise InvalidArgumentError(
            f"cannot use decoder class {name!r}: kafkalog runs no Java classes; it decodes "
            f"with Kafka's StringDecoder ({' or '.join(STRING_DECODER_CLASSES)}) or, for "
            "Kafka's internal topics, with the --*-decoder options")


@dataclass
class DumpOptions:
    """Options of ``dump-segment``, named after kafka-dump-log.sh's.

    Attributes:
        deep_iteration: decode every record (implied by ``print_data_log``).
        print_data_log: include keys, payloads and header values.
        max_bytes: read at most this many bytes of each ``.log`` (batches wholly inside).
        max_message_size: bound for the batch read at an index entry (bytes).
        skip_record_metadata: print only key/payload for records.
        index_sanity_check: only run the broker's index sanity check.
        verify_index_only: check index entries against the log without printing them.
        start_offset / end_offset: dump only batches overlapping [start, end] (absolute
            offsets, inclusive); the start is found through the offset index.
        decoder: ``"auto"`` (pick the internal-topic decoder by the partition directory's
            topic name), ``"none"`` (keys and payloads as bytes: Kafka's StringDecoder),
            or one of :data:`DECODERS` (``--offsets-decoder``,
            ``--transaction-log-decoder``, ``--cluster-metadata-decoder``,
            ``--remote-log-metadata-decoder``, ``--share-group-state-decoder``).
        max_decompressed_bytes: bound on one batch's decompressed records (bytes); a
            batch over it is reported as records that do not decode (kafkalog's bound:
            Kafka has none).
        skip_corrupt: read past damage (``--skip-corrupt``): after a batch that fails
            (CRC, framing, size) go on at the next good batch
            (:mod:`kafkalog_cli.format.salvage`); each range skipped is an
            ``invalid_bytes`` event with ``"skipped": True``, in place.
        record_blocks: the records of an ordinary v2 batch (not a control batch, no
            internal-topic decoder) come as ``records`` events of up to
            :data:`RECORD_BLOCK` records each instead of a ``record`` event apiece (the
            renderers' fast path: no dict per record; same output).
        registry: a :class:`~kafkalog_cli.registry.decoder.SchemaRegistryOptions`:
            keys and/or payloads in Schema Registry's wire format decoded (the record's
            ``key`` / ``payload`` the decoded JSON text, with ``keySchemaId``,
            ``keySubject``, ``keyEncoding`` and the ``value...`` ones; what does not
            decode stays bytes with ``decodeWarnings``, and a ``diagnostic`` per schema
            id not found follows the file's dump).
    """

    deep_iteration: bool = False
    print_data_log: bool = False
    max_bytes: int | None = None
    max_message_size: int = DUMP_MAX_MESSAGE_SIZE
    skip_record_metadata: bool = False
    index_sanity_check: bool = False
    verify_index_only: bool = False
    start_offset: int | None = None
    end_offset: int | None = None
    decoder: str = "auto"
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
    skip_corrupt: bool = False
    record_blocks: bool = False
    registry: object = None

    @property
    def deep(self) -> bool:
        return self.deep_iteration or self.print_data_log


def batch_event(batch, file: str) -> dict:
    """The ``batch`` event of one batch (v2 or legacy)."""
    if batch.magic >= MAGIC_V2:
        ts_type = batch.timestamp_type
        return {
            "type": "batch", "file": file, "position": batch.position,
            "baseOffset": batch.base_offset, "lastOffset": batch.last_offset,
            "count": batch.count, "magic": batch.magic, "crc": batch.crc,
            "isValid": batch.is_valid, "size": batch.size,
            "compresscodec": batch.compression_name, "timestampType": ts_type,
            "baseTimestamp": batch.base_timestamp, "maxTimestamp": batch.max_timestamp,
            "producerId": batch.producer_id, "producerEpoch": batch.producer_epoch,
            "baseSequence": batch.base_sequence, "lastSequence": batch.last_sequence,
            "partitionLeaderEpoch": batch.partition_leader_epoch,
            "isTransactional": batch.is_transactional, "isControl": batch.is_control,
            "deleteHorizonMs": batch.delete_horizon_ms,
        }
    try:
        base = batch.base_offset
    except KafkalogError:
        base = batch.last_offset
    return {
        "type": "batch", "file": file, "position": batch.position,
        "baseOffset": base, "lastOffset": batch.last_offset, "count": None,
        "magic": batch.magic, "crc": batch.crc, "isValid": batch.is_valid,
        "size": batch.size, "compresscodec": batch.compression_name,
        "timestampType": batch.timestamp_type, "baseTimestamp": batch.timestamp,
        "maxTimestamp": batch.max_timestamp, "producerId": -1, "producerEpoch": -1,
        "baseSequence": -1, "lastSequence": -1, "partitionLeaderEpoch": -1,
        "isTransactional": False, "isControl": False, "deleteHorizonMs": None,
    }


def _decoder_for(partition_dir_name: str, opts: DumpOptions, directory=None):
    """The internal-topic decoder for a partition directory under ``opts.decoder``, or
    the Schema Registry decoder of ``opts.registry`` (for ``directory``)."""
    if opts.registry and directory is not None:
        from ..storage.files import parse_partition_dir_name

        tp = parse_partition_dir_name(partition_dir_name)
        return opts.registry.decoder(tp.topic if tp else partition_dir_name, directory)
    if opts.decoder == "none":
        return None
    if opts.decoder == "auto" and not partition_dir_name.startswith("__"):
        return None  # not an internal topic: the decoders are not even imported
    from ..decoders import decoder_for_name, decoder_for_topic

    if opts.decoder == "auto":
        return decoder_for_topic(partition_dir_name)
    return decoder_for_name(opts.decoder)


def _record_events(batch, opts: DumpOptions, file: str, decoder) -> Iterator[dict]:
    with_data = opts.print_data_log
    start, end = opts.start_offset, opts.end_offset
    limit = opts.max_decompressed_bytes
    if isinstance(batch, LegacyRecordBatch):
        for e in batch.iter_inner(limit):
            if (start is not None and e.offset < start) or (end is not None and e.offset > end):
                continue
            ev = {"type": "record", "offset": e.offset, "timestamp": e.timestamp,
                  "timestampType": batch.timestamp_type,
                  "keySize": -1 if e.key is None else len(e.key),
                  "valueSize": -1 if e.value is None else len(e.value),
                  "sequence": -1, "headerKeys": [], "magic": e.magic,
                  "isValid": e.is_valid, "crc": e.crc}
            failed = with_data and _add_data(ev, batch, e, e.key, e.value, (), decoder)
            yield ev
            if failed:
                yield data_error_event(file, batch.position, ev["decodeFailure"])
        return
    records = batch.iter_records(limit)  # lazily: a batch of any size, a piece at a time
    is_control = batch.is_control
    ts_type = batch.timestamp_type
    base_seq = batch.base_sequence
    base = batch.base_offset
    for r in records:
        off = r[0]
        if (start is not None and off < start) or (end is not None and off > end):
            continue
        key, value, headers = r[2], r[3], r[4]
        ev = {"type": "record", "offset": off, "timestamp": r[1], "timestampType": ts_type,
              "keySize": -1 if key is None else len(key),
              "valueSize": -1 if value is None else len(value),
              "sequence": -1 if base_seq < 0 else batch.record_sequence(off - base),
              "headerKeys": [h[0] for h in headers], "magic": batch.magic}
        failed = False
        if is_control:
            _add_control(ev, key, value)
        elif with_data:
            failed = _add_data(ev, batch, r, key, value, headers, decoder)
        yield ev
        if failed:
            yield data_error_event(file, batch.position, ev["decodeFailure"])


#: Records per ``records`` event (:attr:`DumpOptions.record_blocks`): memory stays a few
#: thousand records whatever a batch holds.
RECORD_BLOCK = 4096


def _record_blocks(batch, opts: DumpOptions, file: str) -> Iterator[dict]:
    """``records`` events of an ordinary v2 batch: ``{"type": "records", "file", "batch":
    the RecordBatch, "records": [Record, ...] (offsets within --start/--end-offset)}``.
    Records decoded before a corrupt one come first, then the error is raised, as
    :func:`_record_events` yields them."""
    from itertools import islice

    start, end = opts.start_offset, opts.end_offset
    if start is None and end is None and _block_is_dense is not None:
        block = _dense_block(batch, opts.max_decompressed_bytes)
        if block is not None:
            yield {"type": "records", "file": file, "batch": batch, "block": block}
            return
    records = batch.iter_records(opts.max_decompressed_bytes)
    if records.__class__ is list and len(records) <= RECORD_BLOCK:  # decoded at once
        ev = _records_event(batch, file, records, start, end)
        if ev["records"]:
            yield ev
        return
    records = iter(records)
    while True:
        chunk: list = []
        try:
            chunk.extend(islice(records, RECORD_BLOCK))
        except KafkalogError:
            if chunk:
                yield _records_event(batch, file, chunk, start, end)
            raise
        if not chunk:
            return
        ev = _records_event(batch, file, chunk, start, end)
        if ev["records"]:
            yield ev
        if len(chunk) < RECORD_BLOCK:
            return


_INF = float("inf")
_first = itemgetter(0)

#: the compiled core's check of a records block (None: pure Python, no block events)
_block_is_dense = getattr(_format_c, "block_is_dense", None)


def _dense_block(batch, max_bytes: int) -> bytes | None:
    """The decompressed records block of a v2 batch when a ``records`` event may carry it
    whole instead of its Record tuples: it holds at most DECODE_CHUNK_BYTES, decodes
    (record.decode_records takes it) and its offsets are baseOffset + 0..count-1 (so the
    offsets of the event are known without a tuple per record); else None.

    Raises:
        CorruptRecordError: the block does not decompress (as ``iter_records``).
    """
    count = batch.count
    if count <= 0 or batch.base_offset > _record._OFFSETS_UNCHECKED_MAX:
        return None
    block = batch.small_block(max_bytes)
    if block is None or not _block_is_dense(block, count):
        return None
    return block


def event_records(ev: dict) -> list:
    """The Record tuples of a ``records`` event: its ``records``, or those of its
    ``block`` (an event of :func:`_dense_block`'s, decoded here, once)."""
    recs = ev.get("records")
    if recs is None:
        b = ev["batch"]
        recs = ev["records"] = _record.decode_records(
            ev["block"], b.count, b.base_offset, b.base_timestamp,
            b.max_timestamp if b.attributes & TIMESTAMP_TYPE_MASK else None)
    return recs


def _records_event(batch, file: str, chunk: list, start, end) -> dict:
    if start is not None or end is not None:
        lo = -_INF if start is None else start  # hostile offsets may be negative
        hi = _INF if end is None else end
        chunk = [r for r in chunk if lo <= r[0] <= hi]
    return {"type": "records", "file": file, "batch": batch, "records": chunk}


def record_events_of(ev: dict, print_data_log: bool) -> Iterator[dict]:
    """The ``record`` events a ``records`` event stands for (the reference shape)."""
    batch = ev["batch"]
    ts_type = batch.timestamp_type
    base_seq = batch.base_sequence
    base = batch.base_offset
    for off, ts, key, value, headers in event_records(ev):
        rec = {"type": "record", "offset": off, "timestamp": ts, "timestampType": ts_type,
               "keySize": -1 if key is None else len(key),
               "valueSize": -1 if value is None else len(value),
               "sequence": -1 if base_seq < 0 else batch.record_sequence(off - base),
               "headerKeys": [h[0] for h in headers], "magic": batch.magic}
        if print_data_log:
            _add_data(rec, batch, None, key, value, headers, None)
        yield rec


def _add_control(ev: dict, key, value) -> None:
    """Control record fields, as DumpLogSegments.printControlRecord: markers' type and
    coordinator epoch, KRaft control values decoded."""
    from ..decoders import control_text, decode_control_record

    d = decode_control_record(None, key, value)
    type_id = d.key.get("type") if isinstance(d.key, dict) and "type" in d.key else -1
    ev["controlType"] = control_type_name(type_id)
    ev["controlTypeId"] = type_id
    if ev["controlType"] in ("ABORT", "COMMIT"):
        if isinstance(d.value, dict) and "coordinatorEpoch" in d.value:
            ev["coordinatorEpoch"] = d.value["coordinatorEpoch"]
    elif d.key_type is not None and isinstance(d.value, dict) and "raw" not in d.value:
        ev["controlData"] = d.value
        ev["controlValue"] = control_text(d)
    if d.warnings:
        ev["decodeWarnings"] = d.warnings


def _add_data(ev: dict, batch, record, key, value, headers, decoder) -> bool:
    """Add key, payload and headers to ``ev``; with a decoder, the decoded key and payload
    (JSON shapes; a tombstone's payload None), ``decodeWarnings``, ``decodeFailure`` (the
    text Kafka's parser prints instead) when it would fail, and the DecodedRecord (its
    ``kafka_text`` is what Kafka's tool prints). True when Kafka's tool would stop there
    (a coordinator record without a key: its parser throws)."""
    if decoder is not None:
        d = decoder.decode(key, value)
        if hasattr(d, "console"):  # Schema Registry's: decoded JSON text, else bytes
            _add_schema_decoded(ev, d, key, value)
            ev["headers"] = [{"key": k, "value": v} for k, v in headers]
            return False
        ev["key"] = d.key
        ev["payload"] = None if d.tombstone else d.value
        ev["decoded"] = d
        if d.warnings:
            ev["decodeWarnings"] = d.warnings
        if d.failure is not None:
            ev["decodeFailure"] = d.failure.text(ev["offset"])
            ev["headers"] = [{"key": k, "value": v} for k, v in headers]
            return d.failure.kind == "missing_key"
    else:
        ev["key"] = key
        ev["payload"] = value
    ev["headers"] = [{"key": k, "value": v} for k, v in headers]
    return False


def _add_schema_decoded(ev: dict, d, key, value) -> None:
    """``key`` / ``payload`` of a record decoded through Schema Registry: the JSON text
    of a decoded side (and its ``...SchemaId``, ``...Subject``, ``...Encoding``), else
    its bytes; ``schemaDecoded`` (not written to JSON) for the JSON renderer."""
    for name, label, f, data in (("key", "key", d.key, key), ("payload", "value", d.value,
                                                               value)):
        if f is None:
            ev[name] = data
            continue
        ev[name] = f.json
        ev[label + "Encoding"] = f.encoding
        ev[label + "SchemaId"] = f.schema_id
        if f.subject is not None:
            ev[label + "Subject"] = f.subject
    if d.warnings:
        ev["decodeWarnings"] = list(d.warnings)
    ev["schemaDecoded"] = d


def _registry_diagnostics(decoder, file: str) -> Iterator[dict]:
    """After a file's dump: one error diagnostic per schema id not found, one for the
    records that did not decode otherwise."""
    if decoder is None or not hasattr(decoder, "problems"):
        return
    for line in decoder.problems():
        yield {"type": "diagnostic", "stream": "stderr", "kind": "schema_decode",
               "error": True, "file": file, "position": None,
               "message": f"{file}: {line}"}


def dump_log(segment: LogSegment, opts: DumpOptions) -> Iterator[dict]:
    """Events for one ``.log`` file (see the module docstring)."""
    file = str(segment.log_path)
    yield {"type": "file", "file": file, "kind": "log", "startOffset": segment.base_offset}
    size = segment.size
    end = size if opts.max_bytes is None else min(size, opts.max_bytes)
    start_pos = 0
    if opts.start_offset is not None and opts.start_offset > segment.base_offset:
        idx = segment.offset_index
        if idx is not None:
            start_pos = idx.lookup(opts.start_offset).position
            if not 0 <= start_pos <= end:  # a corrupt entry: scan from the start
                start_pos = 0
    decoder = (_decoder_for(segment.directory.name, opts, segment.directory)
               if opts.print_data_log else None)
    # the segment's records from start_pos: a remote .log is fetched by ranges as the
    # dump goes (and no further than --end-offset takes it); read past damage whole
    fr = (segment.salvage_records(start_pos, end) if opts.skip_corrupt
          else segment.records(start_pos, end))
    yield from _batch_events(fr, file, opts, decoder)
    yield from _registry_diagnostics(decoder, file)


def dump_snapshot(path: Path, opts: DumpOptions) -> Iterator[dict]:
    """Events for a KRaft metadata snapshot ``<offset>-<epoch>.checkpoint`` (or the
    ``bootstrap.checkpoint``): the same batch format as a ``.log``."""
    file = str(path)
    ev = {"type": "file", "file": file, "kind": "snapshot"}
    m = re.match(r"^(\d{20})-(\d{10})\.checkpoint$", path.name)
    if m:
        ev["snapshotEndOffset"], ev["snapshotEpoch"] = int(m.group(1)), int(m.group(2))
    yield ev
    view = open_view(path)
    end = len(view) if opts.max_bytes is None else min(len(view), opts.max_bytes)
    topic = path.parent.name if m else "__cluster_metadata"
    decoder = _decoder_for(topic, opts) if opts.print_data_log else None
    if opts.skip_corrupt:
        from ..format.salvage import SalvagedRecords

        fr = SalvagedRecords(view, 0, end, file=file)
    else:
        fr = FileRecords(view, 0, end, file=file)
    yield from _batch_events(fr, file, opts, decoder)


def _batch_events(fr, file: str, opts: DumpOptions, decoder) -> Iterator[dict]:
    """Events of the batches of ``fr`` (a FileRecords, or a segment's ranged records)."""
    end = fr.end
    deep = opts.deep
    gaps = OffsetGaps(-1 if opts.start_offset is None else None)
    skipped = getattr(fr, "skipped", None)  # --skip-corrupt: the ranges passed over
    told = 0
    for batch in fr.batches():
        if skipped is not None and len(skipped) > told:
            yield from map(skipped_event, skipped[told:])
            told = len(skipped)
        if opts.start_offset is not None and batch.last_offset < opts.start_offset:
            continue
        if opts.end_offset is not None:
            try:  # a legacy wrapper's first offset is its first inner message's
                first = batch.base_offset
            except KafkalogError:
                first = batch.last_offset
            if first > opts.end_offset:
                break
        yield batch_event(batch, file)
        if deep and opts.record_blocks and not isinstance(batch, LegacyRecordBatch) \
                and not batch.is_control and (decoder is None or not opts.print_data_log):
            try:
                for ev in _record_blocks(batch, opts, file):
                    if "block" in ev:  # offsets baseOffset..lastOffset, every one
                        gaps.add_range(batch.base_offset, batch.last_offset)
                    else:
                        gaps.add_records(ev["records"])
                    yield ev
            except KafkalogError as e:
                yield data_error_event(file, batch.position, e.message)
        elif deep:
            try:
                for ev in _record_events(batch, opts, file, decoder):
                    if ev["type"] == "record":
                        gaps.add(ev["offset"])
                    yield ev
            except KafkalogError as e:
                yield data_error_event(file, batch.position, e.message)
    if skipped is not None and len(skipped) > told:
        yield from map(skipped_event, skipped[told:])
    stopped_early = opts.end_offset is not None and fr.valid_end < end
    if fr.invalid_bytes and opts.max_bytes is None and not stopped_early:
        ev = {"type": "invalid_bytes", "file": file, "position": fr.valid_end,
              "bytes": fr.invalid_bytes}
        if fr.stop_error is not None:
            ev["reason"] = fr.stop_error.message
            if isinstance(fr.stop_error, RecordOverheadError):
                # Kafka's FileLogInputStream throws here: its tool prints no "Found N
                # invalid bytes" line but dies (exit 1) with the exception
                ev["kafkaException"] = "CorruptRecordException"
        yield ev
    if gaps.gaps:
        yield non_consecutive_event(file, gaps.gaps, gaps.dropped, gaps.found)


def skipped_event(s) -> dict:
    """The ``invalid_bytes`` event of a range a salvage read passed over
    (:class:`~kafkalog_cli.format.salvage.SkippedBytes`): ``"skipped": True``, the
    ``reason`` the failing batch's error."""
    return {"type": "invalid_bytes", "file": s.file, "position": s.position,
            "bytes": s.size, "reason": s.reason, "skipped": True}


def data_error_event(file: str, position: int | None, message: str,
                     kind: str = "corrupt_record") -> dict:
    """A ``diagnostic`` for corrupt data, where Kafka's tool throws (and exits 1): one
    line naming the file and the byte position (``"error": True``)."""
    return {"type": "diagnostic", "stream": "stderr", "kind": kind, "error": True,
            "file": file, "position": position,
            "message": str(KafkalogError(message, file=file, position=position))}


#: Non-consecutive offset pairs kept per file (each costs ~150 bytes until the file's
#: dump ends): a hostile log could otherwise make every record one. Past it, pairs are
#: counted (kafkalog's bound: Kafka's tool keeps them all).
MAX_NON_CONSECUTIVE_PAIRS = 1_000_000


class OffsetGaps:
    """DumpLogSegments' non-consecutive offsets of one ``.log`` (deep iteration): every
    record offset that is not the previous one's + 1. ``last`` starts at -1 (so a first
    offset above 0 counts), or None after a seek (the first record dumped is not
    compared). ``gaps`` maps an offset to the one that follows it, up to
    :data:`MAX_NON_CONSECUTIVE_PAIRS` pairs; ``dropped`` counts the pairs past it."""

    __slots__ = ("gaps", "dropped", "last", "found")

    def __init__(self, last: int | None):
        self.gaps: dict[int, int] = {}
        self.dropped = 0
        self.last = last
        #: every gap seen, kept or not (the tool's map calls, for their order)
        self.found = 0

    def add(self, offset: int) -> None:
        """The next record's (absolute) offset."""
        last = self.last
        if last is not None and offset != last + 1:
            self.found += 1
            if len(self.gaps) < MAX_NON_CONSECUTIVE_PAIRS or last in self.gaps:
                self.gaps[last] = offset
            else:
                self.dropped += 1
        self.last = offset

    def add_range(self, first: int, last: int) -> None:
        """:meth:`add` for every offset of ``first..last`` (inclusive)."""
        self.add(first)
        self.last = last

    def add_records(self, records) -> None:
        """:meth:`add` for the offsets of ``records`` (Record tuples, in order), at C speed
        when they follow the last one and each other (a batch that is not compacted)."""
        if not records:
            return
        offsets = list(map(_first, records))
        first = offsets[0]
        last = self.last
        if last is not None and first == last + 1 and \
                offsets == list(range(first, first + len(offsets))):
            self.last = offsets[-1]
            return
        for off in offsets:
            self.add(off)


def non_consecutive_event(file: str, gaps: dict[int, int], dropped: int = 0,
                          found: int | None = None) -> dict:
    """The ``Non-consecutive offsets in F`` diagnostic of DumpLogSegments for ``gaps``
    (``{offset: the offset that follows it}``): by offset, as its TreeMap prints them;
    ``dropped`` pairs past :data:`MAX_NON_CONSECUTIVE_PAIRS` get one more line (and
    ``nonConsecutiveNotKept``). ``found``: the gaps seen (the tool's map calls; default
    the pairs). :func:`dump` reports it after the last file, as Kafka 4's tool does."""
    pairs = sorted(gaps.items())
    key = str(as_path(file).absolute())
    lines = [f"Non-consecutive offsets in {key}"]
    lines += [f"  {a} is followed by {b}" for a, b in pairs]
    ev = {"type": "diagnostic", "stream": "stderr", "kind": NON_CONSECUTIVE,
          "file": file, "message": "\n".join(lines), "key": key,
          "calls": len(pairs) + dropped if found is None else found,
          "nonConsecutive": [{"offset": a, "nextOffset": b} for a, b in pairs]}
    if dropped:
        ev["message"] += (f"\n  ... and {dropped} more (kafkalog keeps the first "
                          f"{MAX_NON_CONSECUTIVE_PAIRS} pairs of a file)")
        ev["nonConsecutiveNotKept"] = dropped
    return ev


# -- the reports DumpLogSegments prints after the last file ------------------------------------

NON_CONSECUTIVE = "non_consecutive_offsets"
CORRUPT_SNAPSHOT = "corrupt_snapshot"
INDEX_MISMATCH = "index_mismatch"
TIME_INDEX_MISMATCH = "time_index_mismatch"
TIME_INDEX_OUT_OF_ORDER = "time_index_out_of_order"
TIME_INDEX_NOT_FOUND = "time_index_offset_not_found"

#: the diagnostics Kafka 4's tool collects in maps keyed by a file's absolute path and
#: prints after the last file, in this order (``main``: the index mismatches, then
#: ``TimeIndexDumpErrors.printErrors``, then the non-consecutive offsets)
DEFERRED_KINDS = (INDEX_MISMATCH, TIME_INDEX_MISMATCH, TIME_INDEX_OUT_OF_ORDER,
                  TIME_INDEX_NOT_FOUND, NON_CONSECUTIVE)


def _java_string_hash(s: str) -> int:
    """``String.hashCode`` (over UTF-16 code units, int32 arithmetic), unsigned."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def java_hash_map_order(calls: list[tuple[str, int]]) -> list[str]:
    """The iteration order of a ``java.util.HashMap<String, ...>`` filled by
    ``computeIfAbsent``: ``calls`` is ``[(key, number of calls in a row)]`` in call order.
    Buckets in index order; computeIfAbsent puts a new key at the head of its bucket, and
    a resize splits each bucket keeping its order. The table starts at 16 buckets and
    doubles when a call finds more entries than 0.75 of them (before it inserts). Tree
    bins (8 keys in one bucket) are not modelled."""
    cap = 0
    buckets: list[list[str]] = []
    seen: set[str] = set()

    def spread(k: str) -> int:
        h = _java_string_hash(k)
        return h ^ (h >> 16)

    def resize() -> None:
        nonlocal cap, buckets
        new_cap = 16 if cap == 0 else cap * 2
        new: list[list[str]] = [[] for _ in range(new_cap)]
        for bucket in buckets:
            for k in bucket:
                new[spread(k) & (new_cap - 1)].append(k)
        cap, buckets = new_cap, new

    for key, n in calls:
        for i in range(min(n, 2)):  # after one resize a further call cannot resize
            if cap == 0 or len(seen) > cap * 3 // 4:
                resize()
            if i == 0 and key not in seen:
                seen.add(key)
                buckets[spread(key) & (cap - 1)].insert(0, key)
    return [k for bucket in buckets for k in bucket]


def _deferred_reports(events: Iterator[dict]) -> Iterator[dict]:
    """``events`` with the diagnostics of :data:`DEFERRED_KINDS` held back and yielded
    after the last event, kind by kind, each kind's files in the order of Kafka's
    HashMap (:func:`java_hash_map_order`); a file dumped twice gets one report of each
    kind (its entries merged, as the tool's map merges them)."""
    held: dict[str, dict[str, dict]] = {k: {} for k in DEFERRED_KINDS}
    calls: dict[str, list[tuple[str, int]]] = {k: [] for k in DEFERRED_KINDS}
    for ev in events:
        kind = ev.get("kind") if ev["type"] == "diagnostic" else None
        if kind not in held:
            yield ev
            continue
        key = ev["key"]
        calls[kind].append((key, ev["calls"]))
        prev = held[kind].get(key)
        held[kind][key] = ev if prev is None else _merged(prev, ev)
    for kind in DEFERRED_KINDS:
        for key in java_hash_map_order(calls[kind]):
            yield held[kind][key]


def _merged(a: dict, b: dict) -> dict:
    """Two reports of one kind for one file (the file dumped twice), as one."""
    if a["kind"] == NON_CONSECUTIVE:
        gaps = {e["offset"]: e["nextOffset"] for e in a["nonConsecutive"]}
        gaps.update((e["offset"], e["nextOffset"]) for e in b["nonConsecutive"])
        return non_consecutive_event(a["file"], gaps, a.get("nonConsecutiveNotKept", 0)
                                     + b.get("nonConsecutiveNotKept", 0),
                                     a["calls"] + b["calls"])
    if a["kind"] == INDEX_MISMATCH:
        pairs = {m["indexOffset"]: m["logOffset"] for m in a["mismatches"]}
        pairs.update((m["indexOffset"], m["logOffset"]) for m in b["mismatches"])
        return index_mismatch_event(a["file"], list(pairs.items()))
    return time_index_event(a["kind"], a["file"], a["entries"] + b["entries"])


def index_mismatch_event(file: str, mismatches: list[tuple[int, int]]) -> dict:
    """``Mismatches in :F`` / ``  Index offset: A, log offset: B`` of DumpLogSegments
    .dumpIndex: its map is a TreeMap in reverse order, so the lines run by index offset,
    highest first, one per index offset (the last log offset found for it)."""
    key = str(as_path(file).absolute())
    pairs = dict(mismatches)
    lines = [f"Mismatches in :{key}"]
    lines += [f"  Index offset: {a}, log offset: {pairs[a]}"
              for a in sorted(pairs, reverse=True)]
    return {"type": "diagnostic", "stream": "stderr", "kind": INDEX_MISMATCH,
            "file": file, "key": key, "calls": len(mismatches), "message": "\n".join(lines),
            "mismatches": [{"indexOffset": a, "logOffset": b} for a, b in mismatches]}


_TIME_INDEX_TEXT = {
    TIME_INDEX_MISMATCH: ("Found timestamp mismatch in :{}",
                          "  Index timestamp: {}, log timestamp: {}"),
    TIME_INDEX_OUT_OF_ORDER: ("Found out of order timestamp in :{}",
                              "  Index timestamp: {}, Previously indexed timestamp: {}"),
    TIME_INDEX_NOT_FOUND: ("The following indexed offsets are not found in :{}",
                           "Indexed offset: {}, found log offset: {}"),
}


def time_index_event(kind: str, file: str, entries: list[tuple[int, int]]) -> dict:
    """One of ``TimeIndexDumpErrors``' reports for a ``.timeindex`` (Kafka 4.4's text)."""
    key = str(as_path(file).absolute())
    head, line = _TIME_INDEX_TEXT[kind]
    lines = [head.format(key)] + [line.format(a, b) for a, b in entries]
    return {"type": "diagnostic", "stream": "stderr", "kind": kind,
            "file": file, "key": key, "calls": len(entries), "message": "\n".join(lines),
            "entries": [list(e) for e in entries]}


def dump_offset_index(segment: LogSegment, opts: DumpOptions) -> Iterator[dict]:
    """Events for a ``.index`` file, as DumpLogSegments.dumpIndex."""
    path = segment.index_path
    yield {"type": "file", "file": str(path), "kind": "index"}
    if not segment.log_path.exists():
        yield missing_log_event(segment)
        return
    from ..storage.offset_index import OffsetIndex

    idx = OffsetIndex.load(check_exists(path), segment.base_offset)
    if idx.entries == 0:
        yield {"type": "index_empty", "file": str(path)}
        return
    if opts.index_sanity_check:
        try:
            idx.sanity_check()
        except CorruptIndexError as e:  # OffsetIndex.sanityCheck throws: Kafka exits 1
            yield {"type": "diagnostic", "stream": "stderr", "kind": "corrupt_index",
                   "error": True, "file": str(path), "message": e.message}
            return
        yield {"type": "index_sane", "file": str(path)}
        return
    size = segment.size
    mismatches = []
    for i in range(idx.entries):
        e = idx.entry(i)
        if e.offset == segment.base_offset and i > 0:
            break  # a zero-filled preallocated tail
        first = None
        if 0 <= e.position <= size:
            fr = segment.records(e.position, e.position + opts.max_message_size)
            first = next(iter(fr.batches()), None)
        if first is None:  # the tool's slice(...).batches().iterator().next() throws
            yield _index_entry_error(segment, e, fr.stop_error if 0 <= e.position <= size
                                     else None)
            return
        log_offset = first.last_offset
        if log_offset != e.offset:
            mismatches.append((e.offset, log_offset))
        if not opts.verify_index_only:
            yield {"type": "index_entry", "offset": e.offset, "position": e.position}
    if mismatches:
        yield index_mismatch_event(str(path), mismatches)


def _file_records_text(segment: LogSegment) -> str:
    """FileRecords.toString of the .log as DumpLogSegments opens it."""
    return (f"FileRecords(size={segment.size}, file={as_path(segment.log_path).absolute()}, "
            f"start=0, end=2147483647)")


def _index_entry_error(segment: LogSegment, entry, stop_error) -> dict:
    """The error of an offset index entry at which no whole batch starts: DumpLogSegments
    .dumpIndex dies there (exit 1; nothing more of the file, no mismatch report) with
    FileRecords.slice's IllegalArgumentException (a position outside the log), the
    reader's CorruptRecordException (a size below 14 bytes there) or, where the slice
    holds no whole batch, NoSuchElementException. kafkalog says which, as an error
    naming the entry, and goes on with the next file."""
    pos = entry.position
    if pos < 0:
        why = f"Invalid position: {pos} in read from {_file_records_text(segment)}"
    elif pos > segment.size:
        why = f"Slice from position {pos} exceeds end position of {_file_records_text(segment)}"
    elif isinstance(stop_error, RecordOverheadError):
        why = stop_error.message
    else:
        why = "no whole batch starts there (NoSuchElementException)"
    path = segment.index_path
    return {"type": "diagnostic", "stream": "stderr", "kind": "corrupt_index", "error": True,
            "file": str(path), "message": str(CorruptIndexError(
                f"the entry for offset {entry.offset} points at position {pos} of the .log: "
                f"{why}", file=path))}


def missing_log_event(segment: LogSegment) -> dict:
    """The error of an index dumped without its segment's ``.log``: DumpLogSegments
    .dumpIndex / dumpTimeIndex open the ``.log`` first (``FileRecords.open``) and throw
    NoSuchFileException (exit 1) before they read the index; kafkalog says so and goes on
    with the next file."""
    log = segment.log_path
    return {"type": "diagnostic", "stream": "stderr", "kind": "missing_log", "error": True,
            "file": str(log), "message": str(UnreadableError(
                f"the segment's .log is missing (NoSuchFileException: {as_path(log).absolute()}"
                "): its index entries cannot be checked", file=log))}


def dump_time_index(segment: LogSegment, opts: DumpOptions) -> Iterator[dict]:
    """Events for a ``.timeindex`` file, as DumpLogSegments.dumpTimeIndex."""
    path = segment.time_index_path
    yield {"type": "file", "file": str(path), "kind": "timeindex"}
    if not segment.log_path.exists():
        yield missing_log_event(segment)
        return
    from ..storage.time_index import TimeIndex

    tidx = TimeIndex.load(check_exists(path), segment.base_offset)
    if opts.index_sanity_check:
        try:
            tidx.sanity_check()
        except CorruptIndexError as e:  # TimeIndex.sanityCheck throws: Kafka exits 1
            yield {"type": "diagnostic", "stream": "stderr", "kind": "corrupt_index",
                   "error": True, "file": str(path), "message": e.message}
            return
        yield {"type": "index_sane", "file": str(path)}
        return
    if tidx.entries:
        # dumpTimeIndex reads every batch from each entry's offset-index position to the
        # end of the .log: a size below 14 bytes there kills it before the first entry
        fr = segment.records(segment.index_position(tidx.entry(0).offset))
        for _ in fr.batches():
            pass
        if isinstance(fr.stop_error, RecordOverheadError):
            yield data_error_event(str(segment.log_path), fr.stop_error.position,
                                   fr.stop_error.message)
            return
    # DumpLogSegments.dumpTimeIndex's three checks, printed after the entries
    mismatches, out_of_order, not_found = [], [], []
    prev_ts = -1
    for i in range(tidx.entries):
        e = tidx.entry(i)
        if e.offset == segment.base_offset and i > 0:
            break
        batch = segment.translate_offset(e.offset)
        if batch is None:
            not_found.append((e.offset, -1))
        elif batch.last_offset != e.offset:
            not_found.append((e.offset, batch.last_offset))
        else:
            try:
                # dumpTimeIndex: from NO_TIMESTAMP, max(maxTimestamp, record.timestamp)
                log_ts = NO_TIMESTAMP
                for r in batch.iter_records(opts.max_decompressed_bytes):
                    if r[1] > log_ts:
                        log_ts = r[1]
            except KafkalogError as err:  # Kafka's record iterator throws: exit 1
                yield data_error_event(str(segment.log_path), batch.position, err.message)
            else:
                if log_ts != e.timestamp:
                    mismatches.append((e.timestamp, log_ts))
                if prev_ts >= e.timestamp:
                    out_of_order.append((e.timestamp, prev_ts))
        if not opts.verify_index_only:
            yield {"type": "timeindex_entry", "timestamp": e.timestamp, "offset": e.offset}
        prev_ts = e.timestamp
    for kind, entries in ((TIME_INDEX_MISMATCH, mismatches),
                          (TIME_INDEX_OUT_OF_ORDER, out_of_order),
                          (TIME_INDEX_NOT_FOUND, not_found)):
        if entries:
            yield time_index_event(kind, str(path), entries)


def dump_producer_snapshot(path: Path, opts: DumpOptions) -> Iterator[dict]:
    """Events for a producer-state ``.snapshot``, as DumpLogSegments.dumpProducerIdSnapshot:
    one entry per producer, or a diagnostic with the CorruptSnapshotException message
    (the file checked, then read, a piece at a time: :func:`~kafkalog_cli.storage
    .producer_state.read_snapshot`)."""
    file = str(path)
    yield {"type": "file", "file": file, "kind": "producer_snapshot"}
    try:
        from ..storage.producer_state import read_snapshot

        entries = read_snapshot(path)
    except CorruptSnapshotError as e:
        # Kafka's tool prints the exception's message alone; the line names the file
        yield {"type": "diagnostic", "stream": "stderr", "kind": CORRUPT_SNAPSHOT,
               "message": str(e), "file": file}
        return
    for e in entries:
        ev = {"type": "producer_snapshot_entry", "file": file, "producerId": e.producer_id,
              "producerEpoch": e.producer_epoch, "coordinatorEpoch": e.coordinator_epoch,
              "currentTxnFirstOffset": (e.current_txn_first_offset
                                        if e.current_txn_first_offset >= 0 else None),
              "lastTimestamp": e.timestamp}
        if e.last_offset >= 0:  # ProducerStateManager.readSnapshot: a BatchMetadata
            ev.update(firstSequence=_decrement_sequence(e.last_sequence, e.offset_delta),
                      lastSequence=e.last_sequence, lastOffset=e.last_offset,
                      offsetDelta=e.offset_delta, timestamp=e.timestamp)
        else:
            ev.update(firstSequence=None, lastSequence=None, lastOffset=None,
                      offsetDelta=None, timestamp=None)
        yield ev


def _decrement_sequence(sequence: int, decrement: int) -> int:
    """DefaultRecordBatch.decrementSequence: sequences wrap at Integer.MAX_VALUE."""
    if sequence < decrement:
        return 0x7FFFFFFF - (decrement - sequence) + 1
    return sequence - decrement


def dump_txn_index(path: Path, opts: DumpOptions) -> Iterator[dict]:
    """Events for a ``.txnindex``, as DumpLogSegments.dumpTxnIndex (a partial entry at the
    end is ignored; an entry of an unknown version is a diagnostic, as Kafka's
    TransactionIndex refuses it, and then nothing of the file is printed)."""
    file = str(path)
    yield {"type": "file", "file": file, "kind": "txnindex"}
    from ..storage.txn_index import TransactionIndex

    idx = TransactionIndex.load(check_exists(path), 0)
    for t in idx.iter_entries():   # a first walk: nothing is printed of a refused file
        if t.version > 0:  # AbortedTxn.CURRENT_VERSION; TransactionIndex throws
            yield {"type": "diagnostic", "stream": "stderr", "file": file,
                   "kind": "corrupt_index", "error": True, "message":
                   f"Unexpected aborted transaction version {t.version} in transaction "
                   f"index {path.absolute()}, current version is 0"}
            return
    for t in idx.iter_entries():
        yield {"type": "txn_index_entry", "file": file, "version": t.version,
               "producerId": t.producer_id, "firstOffset": t.first_offset,
               "lastOffset": t.last_offset, "lastStableOffset": t.last_stable_offset}


def dump(paths, opts: DumpOptions | None = None) -> Iterator[dict]:
    """Dump every file under ``paths``, in the order given: ``.log``/``.index``/
    ``.timeindex`` files, KRaft ``.checkpoint`` snapshots, producer ``.snapshot`` files and
    ``.txnindex`` files, or the ``.log`` files of partition and log directories, in offset
    order. A file of any other kind is skipped with an ``ignored_file`` diagnostic, as
    Kafka's tool does.

    Raises:
        UnreadableError / NotAKafkaFileError: a path cannot be read, or a directory is not
            Kafka's, or a segment file's name is not a base offset.
    """
    opts = opts or DumpOptions()
    return _deferred_reports(_dump(paths, opts))


def _dump(paths, opts: DumpOptions) -> Iterator[dict]:
    for raw in paths:
        p = as_path(raw)
        if p.name.endswith(CHECKPOINT_FILE_SUFFIX):
            yield from dump_snapshot(check_exists(p), opts)
            continue
        if check_exists(p).is_file():
            suffix = p.suffix
            if suffix == PRODUCER_SNAPSHOT_FILE_SUFFIX:
                yield from dump_producer_snapshot(p, opts)
                continue
            if suffix == TXN_INDEX_FILE_SUFFIX:
                yield from dump_txn_index(p, opts)
                continue
            if suffix not in SEGMENT_SUFFIXES:
                yield {"type": "file", "file": str(p), "kind": "unknown"}
                yield {"type": "diagnostic", "stream": "stderr", "kind": "ignored_file",
                       "file": str(p), "message": f"Ignoring unknown file {p}"}
                continue
        yield from _dump_segments(p, opts)


def _dump_segments(path: Path, opts: DumpOptions) -> Iterator[dict]:
    for seg, only in resolve_segments([path]):
        try:
            if only == INDEX_FILE_SUFFIX:
                yield from dump_offset_index(seg, opts)
            elif only == TIME_INDEX_FILE_SUFFIX:
                yield from dump_time_index(seg, opts)
            elif only in (None, LOG_FILE_SUFFIX):
                if only is None and not seg.log_path.exists():
                    continue
                if opts.end_offset is not None and seg.base_offset > opts.end_offset:
                    continue
                yield from dump_log(seg, opts)
        finally:
            seg.close()



@dataclass
class DumpFindings:
    """What a dump found wrong, collected from its events as they pass
    (:meth:`watch`): ``invalid`` the ``invalid_bytes`` events (bytes after the last
    whole batch), ``bad_crc`` the positions of batches failing their CRC check by file,
    ``errors`` the diagnostics of corrupt data where Kafka's tool throws (``"error":
    True``: records that do not decode, an index failing the sanity check, a
    ``.txnindex`` entry of an unknown version), ``damaged`` the diagnostics of damage
    Kafka's tool prints and goes on (index-vs-log mismatches, time-index errors, a
    producer snapshot that does not parse). Non-consecutive offsets, index-vs-log
    mismatches and time-index reports are not findings (a compacted log has the first,
    indexes older brokers wrote the others: verify-index judges an index).

    ``ok``: nothing found. ``unreadable``: a ``.log`` holds no whole batch from its first
    byte (not a readable Kafka log)."""

    invalid: list = field(default_factory=list)
    bad_crc: dict = field(default_factory=dict)
    errors: list = field(default_factory=list)
    damaged: list = field(default_factory=list)

    #: the diagnostic kinds counted in :attr:`damaged`
    #: (not the index-vs-log and time-index reports: Kafka 4.4.0's tool makes them of
    #: indexes older brokers wrote, whose layouts verify-index accepts - 23 of the
    #: corpus's files on the bench - and exits 0; verify-index judges an index)
    DAMAGE_KINDS = frozenset((CORRUPT_SNAPSHOT,))

    @property
    def ok(self) -> bool:
        return not (self.invalid or self.bad_crc or self.errors or self.damaged)

    @property
    def unreadable(self) -> bool:
        return any(ev["position"] == 0 and not ev.get("skipped") for ev in self.invalid)

    def watch(self, events: Iterator[dict]) -> Iterator[dict]:
        """Pass ``events`` through, collecting the findings."""
        damage = self.DAMAGE_KINDS
        for ev in events:
            t = ev["type"]
            if t == "batch":
                if not ev["isValid"]:
                    self.bad_crc.setdefault(ev["file"], []).append(ev["position"])
            elif t == "invalid_bytes":
                self.invalid.append(ev)
            elif t == "diagnostic":
                if ev.get("error"):
                    self.errors.append(ev)
                elif ev.get("kind") in damage:
                    self.damaged.append(ev)
            yield ev
