"""``kafkalog groups``: kafka-consumer-groups.sh, answered from the log directories."""

from typing import Annotated

import typer

from ..options import Output, Paths
from ..root import app

_STRATEGY_OPTS = ("to_earliest", "to_latest", "to_offset", "to_datetime", "by_duration",
                  "shift_by", "to_current", "from_file")


@app.command("groups")
def groups(
    paths: Paths,
    list_: Annotated[bool, typer.Option("--list", help="List all consumer groups.")] = False,
    describe: Annotated[bool, typer.Option(
        "--describe", help="Describe consumer groups and their offset lag.")] = False,
    delete: Annotated[bool, typer.Option(
        "--delete", help="Delete Empty consumer groups: append the tombstones the group "
        "coordinator writes (the log directory must not be in use).")] = False,
    reset_offsets: Annotated[bool, typer.Option(
        "--reset-offsets", help="Reset the offsets of inactive consumer groups (a dry run "
        "unless --execute).")] = False,
    delete_offsets: Annotated[bool, typer.Option(
        "--delete-offsets", help="Delete the committed offsets of one group for --topic "
        "TOPIC[:P,P] (repeatable), at once as Kafka's tool does: append the tombstones "
        "the group coordinator writes (the log directory must not be in use).")] = False,
    group: Annotated[list[str] | None, typer.Option(
        "--group", metavar="GROUP", help="The consumer group id (repeatable).")] = None,
    all_groups: Annotated[bool, typer.Option(
        "--all-groups", help="Apply to all consumer groups.")] = False,
    members: Annotated[bool, typer.Option(
        "--members", help="Describe the members of the group.")] = False,
    state: Annotated[str | None, typer.Option(
        "--state", metavar="STATES", help="With --describe: the group's state; with "
        "--list: show the STATE column, and keep the groups in these states "
        "(comma-separated) when given.", show_default=False)] = None,
    offsets: Annotated[bool, typer.Option(
        "--offsets", help="Describe the group's partitions and lag (the default).")] = False,
    verbose: Annotated[bool, typer.Option(
        "--verbose", help="More columns: leader epochs, member epochs, assignments.")] = False,
    type_: Annotated[str | None, typer.Option(
        "--type", metavar="TYPES", help="With --list: show the TYPE column, and keep the "
        "groups of these types (classic, consumer) when given.", show_default=False)] = None,
    topic: Annotated[list[str] | None, typer.Option(
        "--topic", metavar="TOPIC", help="--reset-offsets, --delete-offsets: the topic "
        "(TOPIC or TOPIC:P,P; repeatable); --describe: show only these topics.")] = None,
    all_topics: Annotated[bool, typer.Option(
        "--all-topics", help="--reset-offsets: every partition the group has an offset "
        "for.")] = False,
    to_earliest: Annotated[bool, typer.Option(
        "--to-earliest", help="Reset to the log start offsets.")] = False,
    to_latest: Annotated[bool, typer.Option(
        "--to-latest", help="Reset to the log end offsets.")] = False,
    to_offset: Annotated[int | None, typer.Option(
        "--to-offset", metavar="OFFSET", help="Reset to this offset (within the log).")] = None,
    to_datetime: Annotated[str | None, typer.Option(
        "--to-datetime", metavar="TIME", help="Reset to the first offset at or after this "
        "time (YYYY-MM-DDTHH:mm:SS.sss, UTC without a zone; or epoch ms).")] = None,
    by_duration: Annotated[str | None, typer.Option(
        "--by-duration", metavar="DURATION", help="Reset to the offset of now minus "
        "this ISO-8601 duration (PnDTnHnMnS).")] = None,
    shift_by: Annotated[int | None, typer.Option(
        "--shift-by", metavar="N", help="Shift the committed offsets by N (may be "
        "negative).")] = None,
    to_current: Annotated[bool, typer.Option(
        "--to-current", help="Reset to the committed offsets (the log end offset where "
        "none).")] = False,
    from_file: Annotated[str | None, typer.Option(
        "--from-file", metavar="FILE", help="Reset to the offsets of this CSV (what "
        "--export prints: topic,partition,offset for one group, else "
        "group,topic,partition,offset).")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the plan only (the default).")] = False,
    execute: Annotated[bool, typer.Option(
        "--execute", help="Append the plan to __consumer_offsets as the coordinator "
        "writes OffsetCommit records (the log directory must not be in use).")] = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Reset groups that still have members in the log (kafkalog's "
        "addition: Kafka's tool refuses them).")] = False,
    export: Annotated[bool, typer.Option(
        "--export", help="Print the plan as CSV (topic,partition,offset).")] = False,
    coordinator: Annotated[str | None, typer.Option(
        "--coordinator", metavar="HOST:PORT", help="The broker's advertised listener, for "
        "the COORDINATOR (ID) column of --state (not in the log directory).")] = None,
    at: Annotated[str | None, typer.Option(
        "--at", metavar="TIME", help="The broker's clock: answer as a broker would at TIME "
        "(epoch ms, or YYYY-MM-DDTHH:mm:SS.sss UTC) once its offset expiration pass has "
        "run; default now. Also the 'now' of --by-duration and of --execute's commits.",
        show_default=False)] = None,
    config: Annotated[list[str] | None, typer.Option(
        "--config", metavar="KEY=VALUE", help="A broker config of the expiration pass: "
        "offsets.retention.minutes (default 10080, 7 days).")] = None,
    output: Annotated[Output, typer.Option(
        "--output", "-o", metavar="text|json",
        help="text: kafka-consumer-groups.sh's text; json: one object.")] = Output.text,
) -> None:
    """List and describe consumer groups, their committed offsets and lag, and reset
    their offsets, as kafka-consumer-groups.sh does, from __consumer_offsets and the
    partitions of the log directories, without a broker.

    PATH is a broker's log directory (several for a broker with several log.dirs).
    LOG-END-OFFSET is the partition's log end offset in these directories, or - when it
    is not there. Committed offsets are shown as the group coordinator holds them after
    its expiration pass at --at (default now): offsets older than
    offsets.retention.minutes are gone, and Empty groups without offsets with them.

    --delete writes what the coordinator writes for DeleteGroups (tombstones of the
    group's offsets and records) and refuses a group that is not Empty, with the tool's
    errors.

    --delete-offsets --group G --topic T[:P,P] writes what the coordinator writes for
    OffsetDelete (a tombstone per committed offset of the partitions) at once, as the
    tool does (there is no dry run); partitions of topics a group with members is
    subscribed to are refused with the tool's errors, the others deleted.

    Exit status: 0; 1 when a group named does not exist, a group or partition was refused
    (--reset-offsets, --delete or --delete-offsets of a group with members) or something
    could not be used; 2 for usage errors; 3 for unreadable input.

    \b
    Examples:
      kafkalog groups /var/lib/kafka/data --list
      kafkalog groups /var/lib/kafka/data --describe --all-groups
      kafkalog groups /var/lib/kafka/data --describe --group orders --members --verbose
      kafkalog groups /var/lib/kafka/data --reset-offsets --group orders --topic t \\
          --to-datetime 2024-05-01T00:00:00.000 --execute
      kafkalog groups /var/lib/kafka/data --delete-offsets --group orders --topic t:0,1
    """
    actions = [n for n, on in (("--list", list_), ("--describe", describe),
                               ("--delete", delete), ("--reset-offsets", reset_offsets),
                               ("--delete-offsets", delete_offsets)) if on]
    if len(actions) != 1:
        raise typer.BadParameter("Command must include exactly one action: --list, "
                                 "--describe, --delete, --reset-offsets, --delete-offsets")
    clock = _clock(at, config)
    if delete:
        _delete(paths, group, all_groups, output, clock)
    if delete_offsets:
        _delete_offsets(paths, group, all_groups, topic, dry_run, output, clock)
    if reset_offsets:
        _reset(paths, group, all_groups, topic, all_topics, execute, dry_run, force, export,
               output, clock, to_earliest=to_earliest, to_latest=to_latest, to_offset=to_offset,
               to_datetime=to_datetime, by_duration=by_duration, shift_by=shift_by,
               to_current=to_current, from_file=from_file)
    from ...ops.groups import groups as run
    from ..output import finish

    if list_:
        res = run(paths, describe=False, states=[state] if state else None,
                  types=[type_] if type_ else None, **clock)
    else:
        if bool(group) == all_groups:
            raise typer.BadParameter("give --group G (repeatable) or --all-groups")
        if sum((members, offsets, state is not None)) > 1:
            raise typer.BadParameter("give at most one of --members, --offsets, --state")
        res = run(paths, group_ids=group, all_groups=all_groups, topics=topic, **clock)
    if output is Output.json:
        from ...render.jsonout import write_object

        write_object(res.to_dict())
    else:
        from ...render import groups as render

        if list_:
            render.render_list(res, with_type=type_ is not None, with_state=state is not None)
        else:
            what = "members" if members else "state" if state is not None else "offsets"
            render.render_describe(res, what=what, verbose=verbose, coordinator=coordinator)
    _problems(res.problems)
    finish(res)


def _delete(paths, group, all_groups, output, clock) -> None:
    if bool(group) == all_groups:
        raise typer.BadParameter("give --group G (repeatable) or --all-groups")
    from ...ops.group_delete import delete_groups
    from ..output import finish

    res = delete_groups(paths, group_ids=group, all_groups=all_groups, **clock)
    if output is Output.json:
        from ...render.jsonout import write_object

        write_object(res.to_dict())
    else:
        from ...render import groups as render

        render.render_delete(res)
    finish(res)


def _delete_offsets(paths, group, all_groups, topic, dry_run, output, clock) -> None:
    if not group or not topic:
        raise typer.BadParameter("Option [delete-offsets] takes the following options: "
                                 "[group], [topic]")
    if len(group) > 1 or all_groups:
        raise typer.BadParameter("--delete-offsets takes one --group (Kafka's tool deletes "
                                 "the offsets of one group at a time)")
    if dry_run:
        raise typer.BadParameter("--delete-offsets has no --dry-run: it deletes at once, "
                                 "as Kafka's tool does (--describe shows the offsets)")
    from ...ops.group_delete import delete_offsets
    from ..output import finish

    res = delete_offsets(paths, group_id=group[0], topics=topic, **clock)
    if output is Output.json:
        from ...render.jsonout import write_object

        write_object(res.to_dict())
    else:
        from ...render import groups as render

        render.render_delete_offsets(res)
    finish(res)


def _clock(at: str | None, config: list[str] | None) -> dict:
    """--at and --config as the ops' ``now_ms`` / ``retention_ms``."""
    from ...ops.groups import parse_group_configs
    from ...ops.read import parse_timestamp

    return {"now_ms": None if at is None else parse_timestamp(at),
            "retention_ms": parse_group_configs(config)}


def _reset(paths, group, all_groups, topic, all_topics, execute, dry_run, force, export,
           output, clock, **specs) -> None:
    chosen = [(k, v) for k, v in specs.items() if v not in (None, False)]
    if len(chosen) != 1:
        raise typer.BadParameter("give one reset specification: --to-earliest, "
                                 "--to-latest, --to-offset, --to-datetime, --by-duration, "
                                 "--shift-by, --to-current, --from-file")
    if execute and dry_run:
        raise typer.BadParameter("--execute and --dry-run exclude each other")
    if bool(group) == all_groups:
        raise typer.BadParameter("give --group G (repeatable) or --all-groups")
    from ...ops.groups import reset_offsets as run
    from ..output import finish

    name, value = chosen[0]
    res = run(paths, group_ids=group, all_groups=all_groups, topics=topic,
              all_topics=all_topics, strategy=name.replace("_", "-"),
              value=None if value is True else value, execute=execute, force=force,
              **clock)
    if output is Output.json:
        from ...render.jsonout import write_object

        write_object(res.to_dict())
    else:
        from ...render import groups as render

        render.render_reset(res, export=export, single_group=len(group or []) == 1,
                            warn_dry_run=not execute and not dry_run)
    finish(res)


def _problems(problems) -> None:
    if problems:
        import sys

        from ...render.consoles import error

        sys.stdout.flush()
        for p in problems:
            error(p)
