"""Text of ``kafkalog groups``: what ``kafka-consumer-groups.sh`` (Kafka 4.4.0's
ConsumerGroupCommand) prints, column for column: ``--list`` (with ``--type`` /
``--state`` the GROUP / TYPE / STATE table), ``--describe`` with ``--offsets`` (the
default), ``--members`` and ``--state``, each with ``--verbose``, and the
``--reset-offsets`` plan (GroupOffsetsResetter.printOffsetsToReset) or its CSV
(``--export``).

Kafka's ``printf`` formats are reproduced exactly: ``%-Ns`` pads on the right to N
characters (never cuts), each block starts with a newline, group notes ("has no active
members", "is rebalancing") go to stderr and errors ("Error: ...") to stdout, as the
tool writes them. On a terminal, characters that would control it are escaped.
"""

from __future__ import annotations

import sys

from ..decoders.group_state import DEAD, EMPTY, STABLE
from ..javaorder import hash_map_order
from .text import safe

MISSING = "-"
_TYPE_NAMES = {"classic": "Classic", "consumer": "Consumer", "share": "Share",
               "streams": "Streams"}


def _s(v) -> str:
    return MISSING if v is None else str(v)


def _fmt(widths, values) -> str:
    """Java's ``%-Ns`` for each width and value, joined by single spaces; a width of 0 is
    a plain ``%s``."""
    out = []
    for w, v in zip(widths, values, strict=True):
        v = str(v)
        out.append(v.ljust(w) if w else v)
    return " ".join(out)


class _Out:
    """stdout and stderr as the tool writes them (escaped on a terminal)."""

    def __init__(self, out=None, err=None):
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.tty = getattr(self.out, "isatty", lambda: False)()

    def write(self, text: str) -> None:
        self.out.write(safe(text) if self.tty else text)

    def note(self, text: str) -> None:
        self.err.write(text)


def _should_print(o: _Out, group: str, state: str, rows: int | None) -> bool:
    """ConsumerGroupService.shouldPrintMemberState."""
    if rows is None:
        o.write(f"\nError: The consumer group '{group}' does not exist.\n")
        return False
    if state == DEAD:
        o.write(f"\nError: Consumer group '{group}' does not exist.\n")
    elif state == EMPTY:
        o.note(f"\nConsumer group '{group}' has no active members.\n")
    elif state != STABLE:
        o.note(f"\nWarning: Consumer group '{group}' is rebalancing.\n")
    return state != DEAD and rows > 0


# -- --list --------------------------------------------------------------------------------

def render_list(result, *, with_type: bool = False, with_state: bool = False,
                out=None) -> None:
    o = _Out(out)
    if not with_type and not with_state:
        for g in result.groups:
            o.write(g.group_id + "\n")
        return
    width = max([15] + [len(g.group_id) for g in result.groups]) + 10
    cols = [("GROUP", lambda g: g.group_id, width)]
    if with_type:
        cols.append(("TYPE", lambda g: _TYPE_NAMES.get(g.type, "Unknown"), 20))
    if with_state:
        cols.append(("STATE", lambda g: g.state, 20))
    widths = [w for _, _, w in cols]
    o.write(_fmt(widths, [h for h, _, _ in cols]) + "\n")
    for g in result.groups:
        o.write(_fmt(widths, [f(g) for _, f, _ in cols]) + "\n")


# -- --describe ----------------------------------------------------------------------------

def render_describe(result, *, what: str = "offsets", verbose: bool = False,
                    coordinator: str | None = None, out=None, err=None) -> None:
    """``what``: offsets, members or state. A group the coordinator does not have fails the
    whole describe, as the tool's describeConsumerGroups does (GroupIdNotFoundException
    for the first such group in the order of its ``HashMap`` of group ids)."""
    o = _Out(out, err)
    missing = {g.group_id: g for g in result.groups if not g.exists}
    if missing:
        first = next(g for g in hash_map_order([g.group_id for g in result.groups])
                     if g in missing)
        why = "not found" if missing[first].type is None else "is not a consumer group"
        o.write("\nError: Executing consumer group command failed due to org.apache.kafka."
                f"common.errors.GroupIdNotFoundException: Group {first} {why}.\n")
        return
    _each(o, result, what, verbose, coordinator, _members, _state, _offsets)


def _each(o: _Out, result, what: str, verbose: bool, coordinator, members, state,
          offsets) -> None:
    """Each group's block of ``what`` (members, state, else offsets)."""
    for g in result.groups:
        if what == "members":
            members(o, g, verbose)
        elif what == "state":
            state(o, g, verbose, coordinator, result.coordinator_id)
        else:
            offsets(o, g, verbose)


def _offsets(o: _Out, g, verbose: bool) -> None:
    rows = g.offsets
    if not _should_print(o, g.group_id, g.state, len(rows) if g.exists else 0):
        return
    wg = max([15] + [len(g.group_id)])
    wt = max([15] + [len(_s(r.topic)) for r in rows])
    wc = max([15] + [len(_s(r.consumer_id)) for r in rows])
    wh = max([15] + [len(_s(r.host)) for r in rows])
    head = ["GROUP", "TOPIC", "PARTITION"] + (["LEADER-EPOCH"] if verbose else []) + [
        "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"]
    widths = [wg, wt, 10] + ([15] if verbose else []) + [15, 15, 15, wc, wh, 0]
    o.write("\n" + _fmt(widths, head))
    for r in rows:
        vals = [r.group, _s(r.topic), _s(r.partition)] + (
            [_s(r.leader_epoch)] if verbose else []) + [
            _s(r.offset), _s(r.log_end_offset), _s(r.lag), _s(r.consumer_id), _s(r.host),
            _s(r.client_id)]
        o.write("\n" + _fmt(widths, vals))
    o.write("\n")


def assignment_string(tps) -> str:
    """ConsumerGroupService.getAssignmentString: ``topic:p,p;topic:p`` (partitions sorted,
    topics sorted by their text)."""
    by_topic: dict[str, list[int]] = {}
    for t, p in tps:
        by_topic.setdefault(t, []).append(p)
    return ";".join(sorted(f"{t}:" + ",".join(str(p) for p in sorted(ps))
                           for t, ps in by_topic.items()))


def _members(o: _Out, g, verbose: bool) -> None:
    members = g.members
    wg, wc, wi, wh, wcl, wca, wta = 15, 15, 17, 15, 15, 20, 20
    with_instance = has_classic = has_consumer = False
    if _should_print(o, g.group_id, g.state, len(members) if g.exists else 0):
        for m in members:
            wg = max(wg, len(m.group))
            wc = max(wc, len(m.consumer_id))
            wi = max(wi, len(m.group_instance_id))
            wh = max(wh, len(m.host))
            wcl = max(wcl, len(m.client_id))
            with_instance = with_instance or bool(m.group_instance_id)
            wca = max(wca, len(assignment_string(m.assignment) or MISSING))
            wta = max(wta, len(assignment_string(m.target_assignment) or MISSING))
            has_classic = has_classic or m.upgraded is False
            has_consumer = has_consumer or m.upgraded is True
    if with_instance:
        widths = [wg, wc, wi, wh, wcl, 15]
        head = ["GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
    else:
        widths = [wg, wc, wh, wcl, 15]
        head = ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
    migration = has_classic and has_consumer
    vwidths = [15, wca, 15, wta] + ([0] if migration else [])
    o.write("\n" + _fmt(widths, head) + " ")
    if verbose:
        vhead = ["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"]
        vhead += ["UPGRADED"] if migration else []
        o.write(_fmt(vwidths, vhead))
    o.write("\n")
    if not g.exists:
        return
    for m in members:
        vals = [m.group, m.consumer_id] + ([m.group_instance_id] if with_instance else []) + [
            m.host, m.client_id, len(m.assignment)]
        o.write(_fmt(widths, vals) + " ")
        if verbose:
            vv = [_s(m.member_epoch), assignment_string(m.assignment) or MISSING,
                  _s(m.target_epoch), assignment_string(m.target_assignment) or MISSING]
            if migration:
                vv.append(_s(None if m.upgraded is None else str(m.upgraded).lower()))
            o.write(_fmt(vwidths, vv))
        o.write("\n")


def _state(o: _Out, g, verbose: bool, coordinator: str | None, node_id: int) -> None:
    if not _should_print(o, g.group_id, g.state, 1):
        return
    coord = f"{coordinator or MISSING}  ({node_id})"
    wco = max(25, len(coord))
    wg = max(15, len(g.group_id))
    strategy = g.assignment_strategy or MISSING
    if verbose:
        widths = [wg, wco, 20, 20, 15, 25, 0]
        head = ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH",
                "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"]
        vals = [g.group_id, coord, strategy, g.state, _s(g.group_epoch),
                _s(g.target_assignment_epoch), len(g.members)]
    else:
        widths = [wg, wco, 20, 20, 0]
        head = ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"]
        vals = [g.group_id, coord, strategy, g.state, len(g.members)]
    o.write("\n" + _fmt(widths, head))
    o.write("\n" + _fmt(widths, vals))
    o.write("\n")


# -- --reset-offsets -----------------------------------------------------------------------

EXECUTE_MISSING = ("WARN: No action will be performed as the --execute option is missing. "
                   "In version 5.0, this command will require either --dry-run or --execute "
                   "to be specified. You should add the --dry-run option explicitly if you are "
                   "scripting this command and want to keep the current default behavior "
                   "without prompting.")


def _csv(v) -> str:
    """Jackson's CSV field: quoted (quotes doubled) when it holds a separator, a quote or
    a line break."""
    s = str(v)
    if any(ch in s for ch in ',"\n\r'):
        return '"' + s.replace('"', '""') + '"'
    return s


def render_reset(result, *, export: bool = False, single_group: bool = True,
                 warn_dry_run: bool = False, out=None, err=None) -> None:
    """The plan as GroupOffsetsResetter.printOffsetsToReset prints it (after the warnings
    and refusals the tool prints while planning), or as ``--export`` CSV
    (``topic,partition,offset``, with the group first when several are named)."""
    o = _Out(out, err)
    if warn_dry_run:
        o.note(EXECUTE_MISSING + "\n")
    for m in result.messages:
        o.write(m + "\n")
    if export:
        lines = []
        for g, rows in result.plan.items():
            for t, p, off in rows:
                fields = ([] if single_group else [g]) + [t, p, off]
                lines.append(",".join(_csv(f) for f in fields) + "\n")
        o.write("".join(lines) + "\n")
        return
    wg = max([15] + [len(g) for g in result.plan])
    wt = max([15] + [len(t) for rows in result.plan.values() for t, _, _ in rows])
    widths = [wg, wt, 10, 0]
    if result.plan:
        o.write("\n" + _fmt(widths, ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]))
    for g, rows in result.plan.items():
        for t, p, off in rows:
            o.write("\n" + _fmt(widths, [g, t, p, off]))
    o.write("\n")


# -- --delete ------------------------------------------------------------------------------

def render_delete(result, out=None) -> None:
    """ConsumerGroupService.deleteGroups' text: the success line, or the failures (each
    with its exception) then the groups deleted."""
    o = _Out(out)
    quoted = ",".join(f"'{g}'" for g in result.deleted)
    if not result.failed:
        o.write(f"Deletion of requested consumer groups ({quoted}) was successful.\n")
        return
    o.write("\nError: Deletion of some consumer groups failed:\n")
    for g, e in result.failed.items():
        o.write(f"* Group '{g}' could not be deleted due to: {e}\n")
    if result.deleted:
        o.write(f"\nThese consumer groups were deleted successfully: {quoted}\n")


def render_delete_offsets(result, out=None) -> None:
    """ConsumerGroupService.deleteOffsets' text (Kafka 4.4): the request's outcome line,
    then the TOPIC / PARTITION / STATUS table (``%n%-Ws %-10s %-15s``, W the longest topic
    name and at least 15), rows sorted by topic and partition as strings concatenated,
    ``-`` for a topic's failed lookup, ``Error: `` and the exception for a failure."""
    from ..ops.group_delete import error_message, error_text

    o = _Out(out)
    error = result.error
    if error is None:
        o.write(f"Request succeeded for deleting offsets from group {result.group_id}.\n")
    elif error in ("INVALID_GROUP_ID", "GROUP_ID_NOT_FOUND", "GROUP_AUTHORIZATION_FAILED",
                   "NON_EMPTY_GROUP"):
        o.write(f"\nError: {error_message(error)}\n")
    elif error in ("GROUP_SUBSCRIBED_TO_TOPIC", "TOPIC_AUTHORIZATION_FAILED",
                   "UNKNOWN_TOPIC_OR_PARTITION"):
        o.write("\nError: Encountered some partition-level error, see the follow-up "
                "details.\n")
    else:
        o.write(f"\nError: Encountered some unknown error: {error}\n")
    width = max([15] + [len(t) for t, _, _ in result.partitions])
    widths = (width, 10, 15)
    o.write("\n" + _fmt(widths, ("TOPIC", "PARTITION", "STATUS")))
    for t, p, e in result.partitions:
        o.write("\n" + _fmt(widths, (t, p if p >= 0 else MISSING,
                                      "Successful" if e is None else f"Error: {error_text(e)}")))
    o.write("\n")


# -- share-groups (kafka-share-groups.sh, ShareGroupCommand) ---------------------------------

def render_share_list(result, out=None) -> None:
    o = _Out(out)
    for g in result.groups:
        o.write(g.group_id + "\n")


def render_share_describe(result, *, what: str = "offsets", verbose: bool = False,
                          coordinator: str | None = None, out=None, err=None) -> None:
    """ShareGroupService.describeGroups: ``what`` offsets (the default), members or state.
    A group that is not there fails the whole describe, as describeShareGroups does."""
    o = _Out(out, err)
    for g in result.groups:
        if not g.exists:
            why = (f"Group {g.group_id} not found" if g.type is None
                   else f"Group {g.group_id} is not a share group")
            o.write("\nError: Executing share group command failed due to org.apache.kafka."
                    f"common.errors.GroupIdNotFoundException: {why}.\n")
            return
    _each(o, result, what, verbose, coordinator, _share_members, _share_state, _share_offsets)


def _share_empty_note(o: _Out, g) -> bool:
    """ShareGroupService.maybePrintEmptyGroupState: the note for an Empty group; whether
    there are members to print."""
    if g.state == EMPTY:
        o.note(f"\nShare group '{g.group_id}' has no active members.\n")
    return g.state != DEAD and len(g.members) > 0


def _share_offsets(o: _Out, g, verbose: bool) -> None:
    rows = g.offsets
    if not rows:
        o.write(f"\nShare group '{g.group_id}' has no offset information.\n")
        return
    wg = max(15, len(g.group_id))
    wt = max([15] + [len(r.topic) for r in rows])
    head = ["GROUP", "TOPIC", "PARTITION"] + (["LEADER-EPOCH"] if verbose else []) + [
        "START-OFFSET", "LAG"]
    widths = [wg, wt, 10] + ([13] if verbose else []) + [13, 0]
    o.write("\n" + _fmt(widths, head))
    for r in rows:
        vals = [g.group_id, r.topic, r.partition] + (
            [_s(r.leader_epoch)] if verbose else []) + [_s(r.start_offset), _s(r.lag)]
        o.write("\n" + _fmt(widths, vals))
    o.write("\n")


def _share_members(o: _Out, g, verbose: bool) -> None:
    if not _share_empty_note(o, g):
        return
    members = sorted(g.members, key=lambda m: m.consumer_id)
    wg = max(15, len(g.group_id))
    wc = max([15] + [len(m.consumer_id) for m in members])
    wh = max([15] + [len(m.host) for m in members])
    wcl = max([15] + [len(m.client_id) for m in members])
    head = ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"] + (
        ["MEMBER-EPOCH"] if verbose else []) + ["ASSIGNMENT"]
    widths = [wg, wc, wh, wcl, 12] + ([13] if verbose else []) + [0]
    o.write("\n" + _fmt(widths, head))
    for m in members:
        vals = [g.group_id, m.consumer_id, m.host, m.client_id, len(m.assignment)] + (
            [m.member_epoch] if verbose else []) + [assignment_string(m.assignment)]
        o.write("\n" + _fmt(widths, vals))
    o.write("\n")


def _share_state(o: _Out, g, verbose: bool, coordinator: str | None, node_id: int) -> None:
    _share_empty_note(o, g)
    coord = f"{coordinator or MISSING}  ({node_id})"
    wg = max(15, len(g.group_id))
    wco = max(25, len(coord))
    if verbose:
        widths = [wg, wco, 15, 12, 17, 0]
        head = ["GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH",
                "#MEMBERS"]
        vals = [g.group_id, coord, g.state, g.group_epoch, g.assignment_epoch,
                len(g.members)]
    else:
        widths = [wg, wco, 15, 0]
        head = ["GROUP", "COORDINATOR (ID)", "STATE", "#MEMBERS"]
        vals = [g.group_id, coord, g.state, len(g.members)]
    o.write("\n" + _fmt(widths, head))
    o.write("\n" + _fmt(widths, vals))
    o.write("\n")
