"""``dump-segment``'s events of one batch: the ``batch`` event (DumpLogSegments
.printBatchLevel's fields), its ``record`` events (printRecord's, with data and decoded
internal-topic records) or ``records`` events (a block of an ordinary v2 batch's records,
the renderers' fast path), and the diagnostics of corrupt data and skipped ranges.
The walk over a file's batches is :func:`kafkalog_cli.ops.dump._batch_events`."""

from __future__ import annotations

from collections.abc import Iterator

from ..constants import MAGIC_V2, TIMESTAMP_TYPE_MASK
from ..errors import KafkalogError
from ..format import record as _record
from ..format.compiled import _c as _format_c
from ..format.records import LegacyRecordBatch
from .dump_options import DumpOptions


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
    from ..schema.control import control_type_name

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
