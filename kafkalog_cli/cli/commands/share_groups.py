"""``kafkalog share-groups``: kafka-share-groups.sh, answered from the log directories."""

from typing import Annotated

import typer

from ..options import Output, Paths
from ..root import app


@app.command("share-groups")
def share_groups(
    paths: Paths,
    list_: Annotated[bool, typer.Option("--list", help="List all share groups.")] = False,
    describe: Annotated[bool, typer.Option(
        "--describe", help="Describe share groups: their start offsets and lag (the "
        "default), --members or --state.")] = False,
    group: Annotated[list[str] | None, typer.Option(
        "--group", metavar="GROUP", help="The share group id (repeatable).")] = None,
    all_groups: Annotated[bool, typer.Option(
        "--all-groups", help="Describe all share groups.")] = False,
    members: Annotated[bool, typer.Option(
        "--members", help="Describe the members of the group.")] = False,
    state: Annotated[bool, typer.Option(
        "--state", help="Describe the group's state.")] = False,
    offsets: Annotated[bool, typer.Option(
        "--offsets", help="Describe the group's share-partitions: start offset and lag "
        "(the default).")] = False,
    verbose: Annotated[bool, typer.Option(
        "--verbose", help="More columns: leader epochs, member epochs, group epochs.")
    ] = False,
    coordinator: Annotated[str | None, typer.Option(
        "--coordinator", metavar="HOST:PORT", help="The broker's advertised listener, for "
        "the COORDINATOR (ID) column of --state (not in the log directory).")] = None,
    at: Annotated[str | None, typer.Option(
        "--at", metavar="TIME", help="The broker's clock (epoch ms, or "
        "YYYY-MM-DDTHH:mm:SS.sss UTC), as for kafkalog groups; default now.",
        show_default=False)] = None,
    config: Annotated[list[str] | None, typer.Option(
        "--config", metavar="KEY=VALUE", help="offsets.retention.minutes, as for kafkalog "
        "groups.")] = None,
    output: Annotated[Output, typer.Option(
        "--output", "-o", metavar="text|json",
        help="text: kafka-share-groups.sh's text; json: one object.")] = Output.text,
) -> None:
    """List and describe share groups (KIP-932) as kafka-share-groups.sh does, from
    __consumer_offsets, __share_group_state and the partitions of the log directories,
    without a broker.

    PATH is a broker's log directory (several for a broker with several log.dirs).
    START-OFFSET is the share-partition's start offset in __share_group_state; LAG is the
    partition's log end offset in these directories minus the start offset minus the
    records past it whose delivery is complete, as the group coordinator computes it
    (- when the partition is not here).

    Exit status: 0; 1 when a group named is not a share group here or something could not
    be used; 2 for usage errors; 3 for unreadable input.

    \b
    Examples:
      kafkalog share-groups /var/lib/kafka/data --list
      kafkalog share-groups /var/lib/kafka/data --describe --group orders --verbose
      kafkalog share-groups /var/lib/kafka/data --describe --all-groups --members
    """
    if list_ == describe:
        raise typer.BadParameter("Command must include exactly one action: --list, "
                                 "--describe")
    from ...ops.share_groups import share_groups as run
    from ..output import finish
    from .groups import _clock, _problems

    clock = _clock(at, config)
    if list_:
        res = run(paths, describe=False, **clock)
    else:
        if bool(group) == all_groups:
            raise typer.BadParameter("give --group G (repeatable) or --all-groups")
        if sum((members, offsets, state)) > 1:
            raise typer.BadParameter("give at most one of --members, --offsets, --state")
        res = run(paths, group_ids=group, all_groups=all_groups, **clock)
    if output is Output.json:
        from ...render.jsonout import write_object

        write_object(res.to_dict())
    else:
        from ...render import groups as render

        if list_:
            render.render_share_list(res)
        else:
            what = "members" if members else "state" if state else "offsets"
            render.render_share_describe(res, what=what, verbose=verbose,
                                         coordinator=coordinator)
    _problems(res.problems)
    finish(res)
