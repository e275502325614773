"""``kafkalog produce``: append records to a partition as a broker's storage layer would."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from ..app import app
from ..options import Output, OutputOpt, resolve_output


class InputFormat(str, Enum):
    lines = "lines"
    jsonl = "jsonl"
    raw = "raw"


class Codec(str, Enum):
    none = "none"
    gzip = "gzip"
    snappy = "snappy"
    lz4 = "lz4"
    zstd = "zstd"


@app.command("produce")
def produce(
    files: Annotated[list[Path] | None, typer.Argument(
        help="Input files ('-' or none: stdin).", show_default=False)] = None,
    log_dir: Annotated[Path, typer.Option("--log-dir", help="The log directory (created "
                                          "with meta.properties when new).")] = ...,
    topic: Annotated[str, typer.Option("--topic", help="Topic name.")] = ...,
    partition: Annotated[int, typer.Option(
        "--partition", min=0, max=2**31 - 1, help="Partition id (a Kafka int32).")] = 0,
    fmt: Annotated[InputFormat | None, typer.Option(
        "--format", help="lines: one value per line; jsonl: JSON objects; raw: a file is a "
        "record. Default: jsonl for *.jsonl/*.ndjson files, else lines.")] = None,
    parse_key: Annotated[bool, typer.Option("--parse-key", help="lines: split key and value "
                                            "at --key-separator.")] = False,
    key_separator: Annotated[str, typer.Option("--key-separator")] = "\t",
    value_encoding: Annotated[str, typer.Option(
        "--value-encoding", help="jsonl: utf8 or base64 strings.")] = "utf8",
    batch_size: Annotated[int | None, typer.Option("--batch-size", min=1,
                                                   help="Records per batch.")] = None,
    batch_bytes: Annotated[int, typer.Option("--batch-bytes", min=1, help="Bytes per batch "
                                             "(the producer's batch.size).")] = 16384,
    compression: Annotated[Codec, typer.Option("--compression")] = Codec.none,
    config: Annotated[list[str] | None, typer.Option(
        "--config", help="Topic config key=value (repeatable), e.g. segment.bytes=1048576; "
        "an unknown key is refused.")
    ] = None,
    config_file: Annotated[Path | None, typer.Option(
        "--config-file", help="A server.properties-style file (log.* and topic keys; other "
        "broker keys are ignored).")] = None,
    timestamp: Annotated[int | None, typer.Option(
        "--timestamp", min=-1, max=2**63 - 1, help="Timestamp (ms, a Kafka int64; -1: none) "
        "of records without one; default: now.")] = None,
    producer_id: Annotated[int | None, typer.Option("--producer-id", min=0,
                                                              max=2**63 - 1)] = None,
    producer_epoch: Annotated[int, typer.Option("--producer-epoch", min=0, max=32767)] = 0,
    transactional: Annotated[bool, typer.Option(
        "--transactional", help="Transactional batches, then a marker (--end-txn).")] = False,
    end_txn: Annotated[str, typer.Option("--end-txn", help="commit, abort or none.")
                       ] = "commit",
    leader_epoch: Annotated[int | None, typer.Option(
        "--leader-epoch", min=0, max=2**31 - 1, help="partitionLeaderEpoch of the batches "
        "(default: the partition's latest epoch in leader-epoch-checkpoint, 0 for a new "
        "partition; a lower one is refused).")] = None,
    topic_id: Annotated[str | None, typer.Option("--topic-id", help="For a new "
                                                 "partition.metadata (default: the id of the "
                                                 "topic's existing partitions, else random; "
                                                 "must match them).")
                        ] = None,
    no_fsync: Annotated[bool, typer.Option("--no-fsync", help="Skip fsync (tests only; a "
                                           "crash may lose data).")] = False,
    output: OutputOpt = None,
) -> None:
    """Append records to <log-dir>/<topic>-<partition> exactly as a broker would.

    \b
    Examples:
      seq 1000 | kafkalog produce --log-dir /tmp/kl --topic t
      kafkalog produce --log-dir /tmp/kl --topic t data.jsonl --compression zstd
      kafkalog produce --log-dir /tmp/kl --topic t --config segment.bytes=65536 --batch-size 10

    \b
    Exit status:
      0  every record was appended
      1  stopped: a batch the broker would refuse (over max.message.bytes or
         segment.bytes, a timestamp outside message.timestamp.*.max.ms, a keyless
         record on a compacted topic, a producer sequence/epoch error), a malformed
         input line, or a locked log directory; the batches before it are written
         and the summary (on stderr) says what
      2  usage error (an option, topic name, --config key or value); nothing written
      3  an input file that cannot be read, or a partition that needs recovery
    """
    from ...ops.produce import ProduceError, ProduceOptions, iter_inputs
    from ...ops.produce import produce as run
    from ...render.produce import render_produce
    from ...storage.config import (
        LogConfig,
        check_topic_config_names,
        parse_config_overrides,
        parse_properties_text,
    )

    props: dict = {}
    if config_file is not None:
        try:
            props.update(parse_properties_text(config_file.read_text(encoding="latin-1"),
                                              file=config_file))
        except OSError as e:
            from ...errors import UnreadableError

            raise UnreadableError(e.strerror or str(e), file=config_file) from e
    overrides = parse_config_overrides(config or [])
    check_topic_config_names(overrides)  # a server.properties may hold any broker key
    props.update(overrides)
    cfg = LogConfig.from_properties(props)
    opts = ProduceOptions(
        topic=topic, partition=partition, input_format=fmt.value if fmt else None, parse_key=parse_key,
        key_separator=key_separator, value_encoding=value_encoding, batch_size=batch_size,
        batch_bytes=batch_bytes, compression=compression.value, config=cfg,
        timestamp=timestamp, producer_id=producer_id, producer_epoch=producer_epoch,
        transactional=transactional, end_txn=end_txn, leader_epoch=leader_epoch,
        topic_id=topic_id)
    paths = [str(f) for f in (files or [])]
    out = resolve_output(output)
    progress = _progress_bar(paths) if sys.stderr.isatty() else None
    try:
        with progress or _Null() as bar:
            result = run(log_dir, opts, iter_inputs(paths, opts),
                         fsync=not no_fsync, progress=bar.update if progress else None)
    except ProduceError as e:
        _emit(e.result, out, render_produce, err=True)
        raise e.cause from None
    except KeyboardInterrupt as e:
        # what was written before Ctrl-C (complete and consistent), then exit 130
        if getattr(e, "result", None) is not None:
            _emit(e.result, out, render_produce, err=True)
        raise
    _emit(result, out, render_produce)


def _emit(result, out, render, err: bool = False) -> None:
    if out is Output.json:
        print(json.dumps(result.to_dict()), file=sys.stderr if err else sys.stdout)
    else:
        render(result, err=err)


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _progress_bar(paths: list[str]):
    """A rich progress bar on stderr counting records (only on a terminal)."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    class _Bar:
        def __init__(self):
            self.p = Progress(SpinnerColumn(), TextColumn("{task.fields[n]:,} records"),
                              TimeElapsedColumn(), console=Console(stderr=True),
                              transient=True)
            self.task = None

        def __enter__(self):
            self.p.__enter__()
            self.task = self.p.add_task("produce", n=0)
            return self

        def __exit__(self, *exc):
            return self.p.__exit__(*exc)

        def update(self, n: int) -> None:
            self.p.update(self.task, n=n)

    return _Bar()
