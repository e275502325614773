"""Shared Typer options and arguments, defined once."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer


def choices(name: str, words: str) -> type[Enum]:
    """The values a choice option takes, as the ``str`` Enum Typer lists and checks: one
    member per word of ``words`` (space-separated), named as its value
    (``choices("Output", "text json").json == "json"``)."""
    return Enum(name, [(w, w) for w in words.split()], type=str, module=__name__)


Output = choices("Output", "text json")
DumpOutput = choices("DumpOutput", "text kafka json")
#: a consumer's isolation.level: read_committed drops aborted transactions' records
IsolationLevel = choices("IsolationLevel", "read_uncommitted read_committed")
DataEncoding = choices("DataEncoding", "utf8 base64 hex")


#: paths stay strings here: a URI (s3://bucket/logs) must not go through pathlib, which
#: would fold its "//"; the library turns each into a Path or a RemotePath
Paths = Annotated[
    list[str],
    typer.Argument(help="Partition directories, log directories, or directories holding "
                        "log directories (searched recursively); local paths or URIs "
                        "(s3://, gs://, abfs://, hdfs://).",
                   metavar="PATH",
                   show_default=False),
]

OutputOpt = Annotated[
    Output | None,
    typer.Option("--output", "-o", metavar="text|json",
                 help="text: rich tables (default on a terminal); json: for scripts "
                      "(default when stdout is not a terminal).",
                 show_default=False),
]


#: 256 MiB, as ``constants.DEFAULT_MAX_DECOMPRESSED_BYTES`` (not imported: the CLI loads
#: only what a command needs; a test keeps the two equal)
MAX_DECOMPRESSED_DEFAULT = 256 * 1024 * 1024

SkipCorruptOpt = Annotated[
    bool,
    typer.Option("--skip-corrupt",
                 help="Read past damage: after a batch that fails (CRC, framing, size), go "
                      "on at the next position where a whole batch with a valid CRC and "
                      "plausible offsets starts; each byte range skipped is reported on "
                      "stderr (and as an invalidBytes object in JSON); exit 1 when "
                      "anything was skipped.")]

MaxDecompressedOpt = Annotated[
    int,
    typer.Option("--max-decompressed-bytes", min=1, metavar="BYTES",
                 help="Bound on one batch's decompressed records (bytes); a batch over it is "
                      "reported as corrupt. Records are streamed, so memory does not grow "
                      "with it: it bounds the work one small batch can cause (a decompression "
                      "bomb). Raise it for larger batches."),
]


def resolve_output(choice: Output | None) -> Output:
    """The explicit choice, else text on a terminal and json when piped."""
    import sys

    if choice is not None:
        return choice
    return Output.text if sys.stdout.isatty() else Output.json


# -- internal-topic decoders: kafka-dump-log.sh's options, shared by dump-segment and read --

OffsetsDecoderOpt = Annotated[bool, typer.Option(
    "--offsets-decoder", help="Decode records as __consumer_offsets data.")]
TransactionLogDecoderOpt = Annotated[bool, typer.Option(
    "--transaction-log-decoder", help="Decode records as __transaction_state data.")]
ClusterMetadataDecoderOpt = Annotated[bool, typer.Option(
    "--cluster-metadata-decoder", help="Decode records as KRaft __cluster_metadata records.")]
RemoteLogMetadataDecoderOpt = Annotated[bool, typer.Option(
    "--remote-log-metadata-decoder",
    help="Decode records as __remote_log_metadata (tiered storage) records.")]
ShareGroupStateDecoderOpt = Annotated[bool, typer.Option(
    "--share-group-state-decoder", help="Decode records as __share_group_state data.")]


def chosen_decoder(offsets: bool, transaction_log: bool, cluster_metadata: bool,
                   remote_log_metadata: bool, share_group_state: bool) -> str | None:
    """The decoder name (``ops`` and ``decoders.DECODER_NAMES`` spelling) the decoder
    options ask for, or None; more than one is a usage error."""
    chosen = [name for name, on in (("offsets", offsets),
                                    ("transaction-log", transaction_log),
                                    ("cluster-metadata", cluster_metadata),
                                    ("remote-log-metadata", remote_log_metadata),
                                    ("share-group-state", share_group_state)) if on]
    if len(chosen) > 1:
        raise typer.BadParameter("give at most one of the decoder options")
    return chosen[0] if chosen else None


# -- Schema Registry (read, dump-segment, export, audit) -------------------------------------

SchemaDecoder = choices("SchemaDecoder", "schema-registry avro protobuf json-schema")
_DECODER_HELP = (
    "through Schema Registry: schema-registry (the schema type comes with the id in the "
    "wire format), or avro, protobuf, json-schema to insist on one; schemas from the log "
    "directory's own _schemas topic (or --schemas, --schema-registry). What does not "
    "decode keeps its bytes, with decodeWarnings.")
KeyDecoderOpt = Annotated[SchemaDecoder | None, typer.Option(
    "--key-decoder", metavar="schema-registry|avro|protobuf|json-schema",
    help="Decode keys " + _DECODER_HELP, show_default=False)]
ValueDecoderOpt = Annotated[SchemaDecoder | None, typer.Option(
    "--value-decoder", metavar="schema-registry|avro|protobuf|json-schema",
    help="Decode values " + _DECODER_HELP, show_default=False)]
SchemasOpt = Annotated[str | None, typer.Option(
    "--schemas", metavar="PATH", help="The _schemas partition directory (or a log "
    "directory holding _schemas-0) to take schemas from (default: the one in the log "
    "directory read).", show_default=False)]
SchemaRegistryOpt = Annotated[str | None, typer.Option(
    "--schema-registry", metavar="URL", help="A live Schema Registry's REST URL, asked "
    "for what the _schemas partition does not hold (or instead of it); user:password@ "
    "in the URL for basic auth.", show_default=False)]
SchemaRegistryPropertyOpt = Annotated[list[str] | None, typer.Option(
    "--schema-registry-property", metavar="NAME=VALUE", help="Registry client setting "
    "(repeatable): basic.auth.credentials.source=URL|USER_INFO, "
    "basic.auth.user.info=user:password.", show_default=False)]


def registry_options(key_decoder, value_decoder, schemas, url, props):
    """The library's SchemaRegistryOptions of the options above (a usage error raised as
    typer.BadParameter); None when none of them is given (Schema Registry's modules are
    then not imported: a command's start-up without them, issue 28)."""
    if not (key_decoder or value_decoder or schemas or url or props):
        return None
    from ..errors import InvalidArgumentError
    from ..registry.decoder import SchemaRegistryOptions

    try:
        return SchemaRegistryOptions.from_properties(
            props or [], key_decoder=key_decoder.value if key_decoder else None,
            value_decoder=value_decoder.value if value_decoder else None,
            schemas=schemas, url=url)
    except InvalidArgumentError as e:
        raise typer.BadParameter(e.message) from None
