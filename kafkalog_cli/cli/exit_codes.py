"""Exit statuses, decided here and nowhere else.

Every command exits with ``0`` clean (nothing found, or the work completed), ``1``
findings (problems found, a dry run that found work, a run refused or stopped part-way),
``2`` usage error, ``3`` unreadable or not-Kafka input; ``130`` after Ctrl-C. The library
never picks a status: it raises typed errors (:mod:`kafkalog_cli.errors`) and returns
results whose ``ok`` says whether they hold findings; :func:`for_error` and
:func:`for_result` turn those into the status.

One status per kind of finding, whichever command meets it:

* damaged Kafka data - a batch failing its CRC check, a size or framing that is not a
  batch, records that do not decode, bytes after a segment's last whole batch, an index
  that fails its sanity check or disagrees with its log (verify-index, audit; dump-segment
  prints Kafka's tool's reports and exits 0 on them, as the tool does), a producer
  snapshot, ``.txnindex``
  or checkpoint that does not parse: **1**, reported (dump-segment, verify-index,
  describe, audit, export with ``--skip-corrupt``, ``--skip-corrupt`` reads) or raised
  where the command stops there (``read`` at a batch failing its CRC, export's
  ``failOnDataLoss``);
* input that is not Kafka's or cannot be read - a missing or unreadable path, a directory
  that is neither a log nor a partition directory, a non-empty ``.log`` holding no whole
  batch from its first byte: **3**;
* offsets that do not follow each other (a compacted log) and files of unknown kinds are
  not findings: 0.
"""

from __future__ import annotations

OK = 0
FINDINGS = 1
USAGE = 2
UNREADABLE = 3
INTERRUPTED = 130


def for_error(error: BaseException) -> int:
    """The exit status of a command that raised ``error``.

    :class:`~kafkalog_cli.errors.RefusedError` and
    :class:`~kafkalog_cli.errors.IllegalStateError` -> 1 (checked first: a malformed input
    line is an ``InvalidArgumentError`` too, but the run had started); damaged Kafka data
    (:class:`~kafkalog_cli.errors.CorruptRecordError` and its kinds, a corrupt index,
    snapshot or checkpoint) -> 1, as every command that reports the same damage exits;
    an ``InvalidArgumentError`` (bad option, config or argument) -> 2; any other
    ``KafkalogError`` or an ``OSError`` (unreadable or not-Kafka input) -> 3; Ctrl-C ->
    130. A produce run that stopped part-way (``ProduceError``) exits as its cause.
    """
    from ..errors import (
        CorruptCheckpointError,
        CorruptIndexError,
        CorruptRecordError,
        CorruptSnapshotError,
        IllegalStateError,
        InvalidArgumentError,
        ProduceError,
        RefusedError,
    )

    if isinstance(error, ProduceError):
        error = error.cause
    if isinstance(error, KeyboardInterrupt):
        return INTERRUPTED
    if isinstance(error, (RefusedError, IllegalStateError)):
        return FINDINGS
    if isinstance(error, (CorruptRecordError, CorruptIndexError, CorruptSnapshotError,
                          CorruptCheckpointError)):
        return FINDINGS
    if isinstance(error, InvalidArgumentError):
        return USAGE
    return UNREADABLE


def for_result(result) -> int:
    """The exit status of a command that returned ``result``: 3 when it says its input
    was unreadable (``result.unreadable``, e.g. a dumped ``.log`` holding no whole batch),
    else 0 when ``result.ok``, 1 otherwise."""
    if getattr(result, "unreadable", False):
        return UNREADABLE
    return OK if result.ok else FINDINGS
