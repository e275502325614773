"""Mutated partitions through every read-side command's library entry point.

A seed partition (a fixture partition or a small partition of the real corpus, with its
log directory's own files) gets byte-level mutations in one of its files - bit flips,
interesting integers, truncations, inserted, deleted and duplicated bytes, a zeroed tail -
or structure-aware ones in a ``.log`` whose CRCs are fixed up, so they reach the record
decoders. Then dump, read, describe, verify-index, audit, recover's dry run, export's
local engine, the file readers and serve's read-only start-up run on it in the fuzz
worker, under an address-space limit.

Each must return or raise a :class:`~kafkalog_cli.errors.KafkalogError`, within
:data:`fuzz_client.SMALL_CASE_PEAK_KIB` of extra resident memory, and - all of them
being read-only - leave every byte, name and mode of the directory as it was.
"""

from __future__ import annotations

import pytest
from fuzz_client import check
from fuzz_testkit import (
    SMALL_FILE_VARIANTS,
    all_seeds,
    corpus_seeds,
    edit_name,
    fixture_seeds,
    fuzz_settings,
    mutate,
    mutate_structured,
    mutate_text,
    mutations,
    name_edits,
    small_file_variant,
    structured,
    text_tokens,
)
from hypothesis import given
from hypothesis import strategies as st

#: every read-side target (fuzz_worker.READ_TARGETS)
READERS = ("dump", "read", "describe", "verify", "audit", "recover_plan", "export", "files",
           "catalog")
#: the cheap ones, for the properties that run many examples
FAST_READERS = ("dump", "read", "describe", "verify", "recover_plan", "files", "catalog")

pytestmark = pytest.mark.fuzz


def _seed_and_file(seeds, suffixes=None):
    seeds = [s for s in seeds if s.file_names(suffixes)]
    return st.sampled_from(seeds).flatmap(
        lambda s: st.tuples(st.just(s), st.sampled_from(s.file_names(suffixes))))


def _case(seed, name, new: bytes) -> dict:
    layout = seed.layout()
    layout[f"{seed.name}/{name}"] = new
    return layout


def _log_dir_case(seed, name, new: bytes) -> dict:
    layout = seed.layout()
    layout[name] = new
    return layout


# -- byte-level mutations of any file of a partition ----------------------------------------

@fuzz_settings(short=25)
@given(_seed_and_file(fixture_seeds()), mutations(), st.sampled_from(READERS))
def test_fixture_files_mutated(fuzz_worker, seed_file, ops, target):
    seed, name = seed_file
    data = dict(seed.files)[name]
    case = _case(seed, name, mutate(data, ops))
    check(fuzz_worker.run_dir(case, [target]), what=f"{seed.origin}/{name} {ops}")


@pytest.mark.corpus
@fuzz_settings(short=25)
@given(_seed_and_file(corpus_seeds() or fixture_seeds()), mutations(),
       st.sampled_from(READERS))
def test_corpus_files_mutated(fuzz_worker, seed_file, ops, target):
    seed, name = seed_file
    data = dict(seed.files)[name]
    case = _case(seed, name, mutate(data, ops))
    check(fuzz_worker.run_dir(case, [target]), what=f"{seed.origin}/{name} {ops}")


@fuzz_settings(short=15)
@given(st.sampled_from([s for s in all_seeds() if s.log_dir_files]), st.data())
def test_log_dir_files_mutated(fuzz_worker, seed, data):
    """``meta.properties`` and the log directory's checkpoints."""
    names = [n for n, _ in seed.log_dir_files]
    name = data.draw(st.sampled_from(names))
    ops = data.draw(mutations())
    case = _log_dir_case(seed, name, mutate(dict(seed.log_dir_files)[name], ops))
    check(fuzz_worker.run_dir(case, FAST_READERS), what=f"{seed.origin}/../{name} {ops}")


# -- structure-aware mutations of a .log: CRCs fixed, the record decoders reached -----------

@fuzz_settings(short=40)
@given(_seed_and_file(all_seeds(), (".log",)), structured(), st.sampled_from(READERS))
def test_log_structure_mutated(fuzz_worker, seed_file, ops, target):
    seed, name = seed_file
    data = dict(seed.files)[name]
    case = _case(seed, name, mutate_structured(data, ops))
    check(fuzz_worker.run_dir(case, [target]), what=f"{seed.origin}/{name} {ops}")


@fuzz_settings(short=10)
@given(_seed_and_file(all_seeds(), (".checkpoint",)), structured())
def test_kraft_snapshot_structure_mutated(fuzz_worker, seed_file, ops):
    """KRaft snapshots (``<offset>-<epoch>.checkpoint``) hold batches too."""
    seed, name = seed_file
    if name.endswith("leader-epoch-checkpoint"):
        return
    data = dict(seed.files)[name]
    case = _case(seed, name, mutate_structured(data, ops))
    check(fuzz_worker.run_dir(case, ("dump", "describe", "files")),
          what=f"{seed.origin}/{name} {ops}")


@pytest.mark.slow
@fuzz_settings(short=30)
@given(_seed_and_file(all_seeds(), (".log",)), structured(), mutations(2))
def test_log_structure_and_bytes_mutated_all_readers(fuzz_worker, seed_file, ops, byte_ops):
    """Both kinds of mutation at once, every reader on each case."""
    seed, name = seed_file
    data = dict(seed.files)[name]
    case = _case(seed, name, mutate(mutate_structured(data, ops), byte_ops))
    check(fuzz_worker.run_dir(case, READERS), what=f"{seed.origin}/{name} {ops} {byte_ops}")


# -- text files: checkpoints, properties, JSON, token by token ------------------------------

TEXT_FILES = ("leader-epoch-checkpoint", "partition.metadata", "quorum-state")


@fuzz_settings(short=20)
@given(st.sampled_from([s for s in all_seeds()
                        if s.log_dir_files or any(n in TEXT_FILES for n, _ in s.files)]),
       st.data())
def test_text_files_token_mutated(fuzz_worker, seed, data):
    """A token of ``meta.properties``, an offset checkpoint, ``.kafka_cleanshutdown``,
    ``leader-epoch-checkpoint``, ``partition.metadata`` or ``quorum-state`` replaced by a
    number Java and Python parse differently, a digit that is not ASCII, an edge of
    int32/int64, a run of 5,000 digits, a control character..."""
    choices = [("", n) for n, _ in seed.log_dir_files] + \
        [(seed.name + "/", n) for n, _ in seed.files if n in TEXT_FILES]
    where, name = data.draw(st.sampled_from(choices))
    ops = data.draw(st.lists(text_tokens(), min_size=1, max_size=3))
    layout = seed.layout()
    new = layout[where + name]
    for op in ops:
        new = mutate_text(new, op)
    layout[where + name] = new
    check(fuzz_worker.run_dir(layout, READERS), what=f"{seed.origin} {where}{name} {ops}")


# -- small files inflated, or not files at all ---------------------------------------------

@fuzz_settings(short=24)
@given(st.sampled_from([s for s in all_seeds() if s.log_dir_files]).flatmap(
    lambda s: st.tuples(st.just(s), st.sampled_from(
        [n for n, _ in s.log_dir_files] + [f"{s.name}/{n}" for n, _ in s.files]))),
       st.sampled_from(SMALL_FILE_VARIANTS))
def test_small_files_inflated_and_special(fuzz_worker, seed_where, variant):
    """A file of the log directory or of the partition (a checkpoint, meta.properties,
    partition.metadata, quorum-state, a producer snapshot, an index, a .txnindex, a KRaft
    snapshot, a segment) inflated to 64 MiB or 1 GiB (sparse: cheap) or replaced by a
    FIFO, a link to /dev/zero or /dev/urandom, a directory or a socket: every reader ends
    (no FIFO waited on) with a result or a typed error, within the small-case memory
    bound (a file is never read whole, a malformed line never quoted whole)."""
    seed, where = seed_where
    layout = seed.layout()
    layout[where] = small_file_variant(layout[where], variant)
    check(fuzz_worker.run_dir(layout, READERS), what=f"{seed.origin} {where} -> {variant}")


# -- names ------------------------------------------------------------------------------------

@fuzz_settings(short=20)
@given(_seed_and_file(all_seeds()), name_edits(), st.booleans())
def test_file_and_directory_names(fuzz_worker, seed_file, op, whole_dir):
    """A file of the partition (or the partition directory itself) renamed to a hostile
    variant: a digit that is not ASCII (Java's Character.digit takes some, Python's int
    others, a regex's \\d more), a suffix of a leftover (.deleted, .swap, .cleaned, .tmp),
    a trailing newline or space, one digit more or less."""
    seed, name = seed_file
    layout = seed.layout()
    if whole_dir:
        new_dir = edit_name(seed.name, op)
        layout = {(new_dir + k[len(seed.name):] if k.startswith(seed.name + "/") else k): v
                  for k, v in layout.items()}
        what = f"{seed.origin} -> {new_dir!r}"
    else:
        new = edit_name(name, op)
        data = layout.pop(f"{seed.name}/{name}")
        layout[f"{seed.name}/{new}"] = data
        what = f"{seed.origin}/{name} -> {new!r}"
    check(fuzz_worker.run_dir(layout, READERS), what=what)
