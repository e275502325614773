"""The write side: ``recover --truncate`` on a mutated copy of a partition.

After recovery (``--all``: every segment recovered) verify-index must accept the
directory, a second dry run must find nothing to do, and ``--undo`` of the sessions
recovery made must give back every file byte for byte (names and contents; the
quarantine directories stay, as the lock file). A recovery that refuses (a
KafkalogError) must have changed nothing. Without ``--all`` (the broker's choice of
segments, from the recovery point) the undo must still restore everything.
"""

from __future__ import annotations

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

#: files recovery reads, rebuilds or cuts
RECOVERED = (".log", ".index", ".timeindex", ".txnindex", ".snapshot", "leader-epoch-checkpoint")


def _case(data):
    seeds = [s for s in all_seeds() if s.file_names(RECOVERED)]
    seed = data.draw(st.sampled_from(seeds))
    name = data.draw(st.sampled_from(seed.file_names(RECOVERED)))
    old = dict(seed.files)[name]
    if name.endswith(".log") and data.draw(st.booleans()):
        ops = data.draw(structured())
        new = mutate_structured(old, ops)
    else:
        ops = data.draw(mutations())
        new = mutate(old, ops)
    layout = seed.layout()
    layout[f"{seed.name}/{name}"] = new
    return layout, f"{seed.origin}/{name} {ops}"


def _diff(a: dict, b: dict) -> list[str]:
    out = [f"missing {k}" for k in sorted(a.keys() - b.keys())]
    out += [f"extra {k}" for k in sorted(b.keys() - a.keys())]
    out += [f"changed {k}: {a[k][0]} -> {b[k][0]} bytes" for k in sorted(a.keys() & b.keys())
            if a[k] != b[k]]
    return out


def _recover(worker, layout, what, all_segments):
    res = worker.run_dir(layout, ["recover_truncate"], {"all": all_segments})
    check(res, what=what)
    r = res["recover_truncate"]
    if r["outcome"] != "ok":
        return None
    v = r["value"]
    if "refused" in v:
        assert not _diff(v["before"], v["after"]), (what, v["refused"],
                                                     _diff(v["before"], v["after"]))
        return None
    assert not _diff(v["before"], v["restored"]), (
        what, "undo did not restore", _diff(v["before"], v["restored"]), v["undo"])
    return v


@fuzz_settings(short=40)
@given(st.data())
def test_recover_all_then_verify_then_undo(fuzz_worker, data):
    layout, what = _case(data)
    v = _recover(fuzz_worker, layout, what, True)
    if v is not None:
        assert not v["verify"], (what, "verify-index after recover --truncate --all",
                                 v["verify"])
        assert not v["again"], (what, "a second recover would still work", v["again"])


@fuzz_settings(short=20)
@given(st.data())
def test_recover_then_undo(fuzz_worker, data):
    layout, what = _case(data)
    v = _recover(fuzz_worker, layout, what, False)
    if v is not None:
        assert not v["again"], (what, "a second recover would still work", v["again"])
