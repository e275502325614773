"""The dry run says what would be lost: per segment the offsets and bytes recovery drops,
which segments a truncation or a ``.swap`` removes, and the summary counts them all.

Expected values come from how the partition was built (``standard_partition``: segment 0
holds offsets 0-59 in one-record batches, segment 60 offsets 60-149 in three-record
batches, segment 150 offsets 150-175), not from kafkalog's reader.
"""

from __future__ import annotations

import io

from recovery_helpers import make_batches, standard_partition
from rich.console import Console

from kafkalog_cli.recovery import recover
from kafkalog_cli.render.recover import render_recover


def _text(result) -> str:
    buf = io.StringIO()
    render_recover(result, Console(file=buf, width=200, color_system=None))
    return buf.getvalue()


def test_one_flipped_byte_names_every_offset_it_discards(tmp_path):
    pdir = standard_partition(tmp_path)
    logs = sorted(pdir.glob("*.log"))
    sizes = [p.stat().st_size for p in logs]
    # segment 0: 60 one-record batches, as standard_partition builds them; flip a value
    # byte of batch 45 (offset 45)
    lengths = [len(b) for b in make_batches(0, 60, epoch=0, value_size=100)]
    assert sizes[0] == sum(lengths)
    at = sum(lengths[:45])
    data = bytearray(logs[0].read_bytes())
    data[at + lengths[45] - 3] ^= 0x01
    logs[0].write_bytes(bytes(data))

    result = recover([pdir])
    part = result.partitions[0]
    by_base = {s.base_offset: s for s in part.segments}
    assert by_base[0].lost_offsets == (45, 59)
    assert by_base[0].lost_bytes == (at, sizes[0] - at)
    assert by_base[60].removed and by_base[60].lost_offsets == (60, 149)
    assert by_base[60].lost_bytes == (0, sizes[1])
    assert by_base[150].removed and by_base[150].lost_offsets == (150, 175)
    assert part.lost_offset_ranges() == [(45, 175)]
    summary = result.summary()
    assert summary["segmentsRemoved"] == 2
    assert summary["removedBytes"] == sizes[1] + sizes[2]
    assert summary["invalidBytes"] == sizes[0] - at
    assert summary["lostOffsetRanges"] == 1
    d = result.to_dict()["partitions"][0]
    assert d["lostOffsetRanges"] == [{"first": 45, "last": 175}]
    seg0 = next(s for s in d["segments"] if s["baseOffset"] == 0)
    assert seg0["lostOffsets"] == {"first": 45, "last": 59}
    assert seg0["lostBytes"] == {"position": at, "bytes": sizes[0] - at}
    text = _text(result)
    assert "offsets lost: 45-175" in text
    assert f"would drop offsets 45-59, bytes {at}-{sizes[0] - 1}" in text
    assert "would drop offsets 60-149" in text and "would drop offsets 150-175" in text


def test_an_empty_swap_counts_the_segment_it_replaces(tmp_path):
    pdir = standard_partition(tmp_path)
    seg = sorted(pdir.glob("*.log"))[1]            # offsets 60-149: 90 records
    size = seg.stat().st_size
    (pdir / (seg.name + ".swap")).write_bytes(b"")

    result = recover([pdir], all_segments=False)
    summary = result.summary()
    assert summary["segmentsRemoved"] == 1
    assert summary["segmentsReplaced"] == 1
    assert summary["removedBytes"] == size
    replaced = [s for s in result.partitions[0].segments if s.replaced_by]
    assert len(replaced) == 1
    assert replaced[0].lost_offsets == (60, 149)
    assert replaced[0].replaced_by.endswith(seg.name + ".swap")
    assert result.partitions[0].lost_offset_ranges() == [(60, 149)]
    text = _text(result)
    assert f"replaced by {seg.name}.swap" in text
    assert "offsets lost: 60-149" in text
    assert "1 to remove (1 replaced by .swap files" in text


def test_a_swap_with_the_same_offsets_loses_none(tmp_path):
    pdir = standard_partition(tmp_path)
    seg = sorted(pdir.glob("*.log"))[1]
    (pdir / (seg.name + ".swap")).write_bytes(seg.read_bytes())
    result = recover([pdir], all_segments=False)
    assert result.summary()["segmentsReplaced"] == 1
    assert result.partitions[0].lost_offset_ranges() == []


def test_a_size_grown_past_the_end_names_the_batches_after_it(tmp_path):
    """Batch 45's size field set to 1 MiB: the batch runs past the end of the file, the
    broker's iterator stops there and recovery truncates; the 14 whole batches after it
    (offsets 46-59) are lost too and the dry run names them."""
    pdir = standard_partition(tmp_path)
    logs = sorted(pdir.glob("*.log"))
    lengths = [len(b) for b in make_batches(0, 60, epoch=0, value_size=100)]
    at = sum(lengths[:45])
    data = bytearray(logs[0].read_bytes())
    data[at + 8:at + 12] = (1 << 20).to_bytes(4, "big")
    logs[0].write_bytes(bytes(data))
    part = recover([pdir]).partitions[0]
    seg0 = next(s for s in part.segments if s.base_offset == 0)
    assert seg0.lost_offsets == (45, 59)
    assert part.lost_offset_ranges() == [(45, 175)]
