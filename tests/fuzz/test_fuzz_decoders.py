"""The internal-topic decoders and the record readers of ``format/``, fed bytes directly.

* Decoders: the keys and values of real records of ``__consumer_offsets``,
  ``__transaction_state`` and ``__cluster_metadata`` (corpus and KRaft snapshots), mutated
  byte by byte - versions, lengths, tagged fields, strings - through every decoder, its
  JSON and its Kafka text. A decoder never raises: what does not parse is kept raw with a
  warning, as Kafka's tool prints "Error at offset X, skipping".
* Record readers: a ``.log``'s bytes mutated (byte-level and structure-aware) through
  FileRecords (CRC, lazy and list records), the batch scan, the recovery walk and the
  index rebuild; only typed errors.
"""

from __future__ import annotations

import functools

import pytest
from fuzz_client import check
from fuzz_testkit import (
    all_seeds,
    fuzz_settings,
    mutate,
    mutate_structured,
    mutations,
    structured,
)
from hypothesis import given
from hypothesis import strategies as st

pytestmark = pytest.mark.fuzz

INTERNAL = ("__consumer_offsets", "__transaction_state", "__cluster_metadata")


@functools.cache
def internal_records() -> tuple[tuple[bytes | None, bytes | None], ...]:
    """(key, value) of up to 400 records of each internal topic of the seeds."""
    from kafkalog_cli.errors import KafkalogError
    from kafkalog_cli.format.records import FileRecords

    out: dict[str, list] = {t: [] for t in INTERNAL}
    for seed in all_seeds():
        topic = seed.name.rsplit("-", 1)[0]
        if topic not in out or len(out[topic]) >= 400:
            continue
        for name, data in seed.files:
            if not name.endswith((".log", ".checkpoint")) or "epoch" in name:
                continue
            try:
                for b in FileRecords(memoryview(data)).batches():
                    for r in b.iter_records():
                        out[topic].append((r.key, r.value))
            except KafkalogError:
                continue
    return tuple(kv for recs in out.values() for kv in recs[:400])


def _kv():
    recs = internal_records()
    if not recs:
        return st.tuples(st.binary(max_size=64), st.binary(max_size=64))
    return st.sampled_from(recs)


def _maybe_mutated(b):
    if b is None:
        return st.just(None)
    return st.one_of(st.just(b), mutations(3).map(lambda ops: mutate(b, ops)))


@fuzz_settings(short=150)
@given(_kv().flatmap(lambda kv: st.tuples(_maybe_mutated(kv[0]), _maybe_mutated(kv[1]))))
def test_internal_topic_records_mutated(fuzz_worker, kv):
    key, value = kv
    check(fuzz_worker.run_bytes({"key": key, "value": value, "offset": 7}, ["decoders"]),
          what=f"key={key!r} value={value!r}")


def _log_bytes():
    logs = [d for s in all_seeds() for n, d in s.files if n.endswith(".log") and d]
    return st.sampled_from(logs)


@fuzz_settings(short=60)
@given(_log_bytes(), st.one_of(mutations(), structured().map(lambda s: ("structured", s))))
def test_record_readers_on_mutated_logs(fuzz_worker, data, ops):
    if ops and ops[0] == "structured":
        data = mutate_structured(data, ops[1])
    else:
        data = mutate(data, ops)
    check(fuzz_worker.run_bytes({"data": data}, ["records"]), what=f"{ops}")
