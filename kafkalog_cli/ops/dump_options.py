"""``dump-segment``'s options and findings: :class:`DumpOptions` (kafka-dump-log.sh's
flags), :class:`DumpFindings` (what a dump found wrong, for the exit code), and the
decoder names and classes the flags accept."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ..constants import DECODER_NAMES, DEFAULT_MAX_DECOMPRESSED_BYTES, DUMP_MAX_MESSAGE_SIZE
from ..errors import InvalidArgumentError
from .dump_reports import CORRUPT_SNAPSHOT

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
        batch_runs: with ``record_blocks`` and deep iteration, no decoder, no
            ``--start-offset``/``--end-offset`` and no ``--skip-corrupt``, consecutive
            ordinary v2 batches come as ``batches`` events of up to
            :data:`~kafkalog_cli.ops.dump.RUN_BATCHES` batches, each standing for the
            ``batch`` and ``records`` events of its batches (the kafka text and JSON
            renderers' fast path: the batch lines formatted in C too; same output).
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
    batch_runs: bool = False
    registry: object = None

    @property
    def deep(self) -> bool:
        return self.deep_iteration or self.print_data_log


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
            elif t == "batches":
                if ev["invalid"]:
                    self.bad_crc.setdefault(ev["file"], []).extend(ev["invalid"])
            elif t == "invalid_bytes":
                self.invalid.append(ev)
            elif t == "diagnostic":
                if ev.get("error"):
                    self.errors.append(ev)
                elif ev.get("kind") in damage:
                    self.damaged.append(ev)
            yield ev
