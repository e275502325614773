"""read: isolation levels, control records and the last stable offset."""

from __future__ import annotations

import pytest
from kafkalog_read_testkit import CORPUS, txn_batches, write_partition

from kafkalog_cli.ops.read import open_partition, read, scan_transactions


@pytest.fixture()
def txn_dir(tmp_path):
    batches, exp = txn_batches()
    d = write_partition(tmp_path / "logs" / "payments-0", batches, segment_bytes=700,
                        index_interval=100)
    return d, exp


def _offsets(d, **kw):
    res = read(d, **kw)
    try:
        return [r.offset for r in res.records]
    finally:
        res.close()


def test_read_uncommitted_shows_aborted_never_control(txn_dir):
    d, exp = txn_dir
    got = _offsets(d)
    everything = sorted(exp["plain"] + exp["committed"] + exp["aborted"] + exp["open"])
    assert got == everything
    assert not set(got) & set(exp["control"])


def test_read_committed_hides_aborted_and_stops_at_lso(txn_dir):
    d, exp = txn_dir
    st = scan_transactions(open_partition(d))
    lso = min(exp["open"])
    assert st.last_stable_offset == lso
    assert st.aborted == {2: [(min(exp["aborted"]), exp["control"][0])]}
    got = _offsets(d, isolation_level="read_committed")
    assert got == sorted(o for o in exp["plain"] + exp["committed"] if o < lso)
    res = read(d, isolation_level="read_committed")
    assert res.last_stable_offset == lso
    res.close()
    # seeking into the middle of the aborted transaction
    mid = exp["aborted"][1]
    assert _offsets(d, offset=mid, isolation_level="read_committed") == [
        o for o in got if o >= mid]
    assert _offsets(d, offset=mid, isolation_level="read_uncommitted")[0] == mid
    # a marker's offset: the next record after it
    assert _offsets(d, offset=exp["control"][0], max_records=1)[0] == exp["control"][1] + 1


def test_max_records_with_read_committed(txn_dir):
    d, exp = txn_dir
    got = _offsets(d, isolation_level="read_committed", max_records=4)
    assert got == sorted(exp["plain"] + exp["committed"])[:4]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus absent")
@pytest.mark.corpus
def test_corpus_ksql_command_topic_commit():
    d = next(CORPUS.glob("ItumelengMogase*/kafka-data/_confluent-ksql-default__command_topic-0"))
    a = _offsets(d, isolation_level="read_uncommitted")
    b = _offsets(d, isolation_level="read_committed")
    assert a == b and a  # the COMMIT marker is hidden, the committed record shown
    st = scan_transactions(open_partition(d))
    assert st.aborted == {} and st.open_transactions == {}
