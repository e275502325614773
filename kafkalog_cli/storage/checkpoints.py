"""Checkpoint files, after ``CheckpointFile`` / ``OffsetCheckpointFile`` /
``LeaderEpochCheckpointFile``.

    CheckpointFile (text) =>
      Version => line "0"
      Count => line, the number of entries
      Entries => Count lines
        offset checkpoints:  "<topic> <partition> <offset>"
        leader-epoch-checkpoint: "<epoch> <startOffset>"

Read as Kafka reads them (strict UTF-8, Java's line breaks, ``Integer.parseInt`` /
``Long.parseLong``, fields split on whitespace as ``Pattern.split``); anything else is a
:class:`~kafkalog_cli.errors.CorruptCheckpointError` naming the file and line. Written as
``<name>.tmp``, fsynced, then atomically renamed over ``<name>``
(:func:`~.fileio.write_atomically`).
"""

from __future__ import annotations

import re

from ..errors import CorruptCheckpointError
from .fileio import write_atomically
from .files import TopicPartition
from .location import read_bytes_if_exists

VERSION = 0
INT32 = (-(1 << 31), (1 << 31) - 1)
INT64 = (-(1 << 63), (1 << 63) - 1)

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_JAVA_WHITESPACE = re.compile(r"[ \t\n\x0b\f\r]+")
_JAVA_INT = re.compile(r"[+-]?\d+")


def read_text_lines(path, *, encoding: str = "utf-8") -> list[str] | None:
    """The lines of a small text file as Java's ``BufferedReader.readLine`` returns them
    (``\\n``, ``\\r`` and ``\\r\\n`` end a line; a last line without one counts), decoded
    strictly (``Files.newBufferedReader(path, UTF_8)`` throws ``MalformedInputException``).
    None when the file does not exist.

    Raises:
        UnreadableError: it cannot be read (permissions, a directory, I/O error).
        CorruptCheckpointError: bytes that are not ``encoding``, naming the line.
    """
    raw = read_bytes_if_exists(path)
    if raw is None:
        return None
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as e:
        line = len(_LINE_BREAK.findall(raw[:e.start].decode(encoding, "replace"))) + 1
        raise CorruptCheckpointError(
            f"not {encoding.upper()} text (byte 0x{raw[e.start]:02x} at byte {e.start})",
            file=path, line=line, position=e.start) from None
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def java_split(pattern: re.Pattern, line: str) -> list[str]:
    """``Pattern.split(line)`` (limit 0): no match gives ``[line]``; otherwise leading
    empty strings stay and trailing ones are removed."""
    if not pattern.search(line):
        return [line]
    parts = pattern.split(line)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_int(text: str, bounds: tuple[int, int] = INT32) -> int | None:
    """``Integer.parseInt`` / ``Long.parseLong`` (``bounds`` INT64): an optional sign and
    decimal digits, nothing else (no spaces, no ``_``), within range; None otherwise.
    Leading zeros are accepted however many (Python's ``int`` refuses a string of more
    than 4300 digits with ValueError: a number that long is out of range unless it is
    zeros first)."""
    if not _JAVA_INT.fullmatch(text):
        return None
    if len(text) > 24:
        sign = text[0] if text[0] in "+-" else ""
        digits = text[len(sign):].lstrip("0") or "0"
        if len(digits) > 20:
            return None
        text = sign + digits
    v = int(text)
    return v if bounds[0] <= v <= bounds[1] else None


def _parse(path, lines: list[str], width: int) -> list[list[str]]:
    """``CheckpointFile.CheckpointReadBuffer.read``: version line (0), count line, then
    entries of ``width`` whitespace-separated fields; an empty file, or one that ends
    after the version line, has no entries."""
    if not lines:
        return []  # CheckpointReadBuffer: no first line -> no entries
    version = java_int(lines[0])
    if version is None:
        raise CorruptCheckpointError(f"Malformed line in checkpoint file: {lines[0]!r}",
                                     file=path, line=1)
    if version != VERSION:
        raise CorruptCheckpointError(
            f"Unrecognised version:{version}, expected version: {VERSION}", file=path, line=1)
    if len(lines) < 2:
        return []
    count = java_int(lines[1])
    if count is None or count < 0:
        raise CorruptCheckpointError(f"Malformed line in checkpoint file: {lines[1]!r}",
                                     file=path, line=2)
    entries = []
    for i, ln in enumerate(lines[2:], start=3):
        parts = java_split(_JAVA_WHITESPACE, ln)
        if len(parts) != width:
            raise CorruptCheckpointError(f"Malformed line in checkpoint file: {ln!r}",
                                         file=path, line=i)
        entries.append(parts)
    if len(entries) != count:
        raise CorruptCheckpointError(
            f"Expected [{count}] entries in checkpoint file, but found only [{len(entries)}]",
            file=path)
    return entries


def _number(path, parts: list[str], index: int, bounds, line: int) -> int:
    v = java_int(parts[index], bounds)
    if v is None:
        raise CorruptCheckpointError(
            f"Malformed line in checkpoint file: {' '.join(parts)!r} ({parts[index]!r} is not "
            f"a{'n int' if bounds is INT32 else ' long'})", file=path, line=line)
    return v


def read_offset_checkpoint(path) -> dict[TopicPartition, int] | None:
    """Read a log-directory offset checkpoint (``recovery-point-offset-checkpoint``,
    ``log-start-offset-checkpoint``, ``replication-offset-checkpoint``,
    ``cleaner-offset-checkpoint``) as ``OffsetCheckpointFile`` does: ``{TopicPartition:
    offset}``, None when the file does not exist.

    Raises:
        CorruptCheckpointError: not UTF-8, or not version/count/``topic partition
            offset`` lines (the partition an int, the offset a long), naming the line.
        UnreadableError: the file cannot be read.
    """
    lines = read_text_lines(path)
    if lines is None:
        return None
    out = {}
    for i, parts in enumerate(_parse(path, lines, 3), start=3):
        partition = _number(path, parts, 1, INT32, i)
        out[TopicPartition(parts[0], partition)] = _number(path, parts, 2, INT64, i)
    return out


def read_leader_epoch_checkpoint(path) -> list[tuple[int, int]] | None:
    """Read ``leader-epoch-checkpoint`` as ``LeaderEpochCheckpointFile`` does:
    ``[(epoch, start offset)]``, None when the file does not exist.

    Raises:
        CorruptCheckpointError: not UTF-8, or not version/count/``epoch startOffset``
            lines (an int and a long), naming the line.
        UnreadableError: the file cannot be read.
    """
    lines = read_text_lines(path)
    if lines is None:
        return None
    return [(_number(path, parts, 0, INT32, i), _number(path, parts, 1, INT64, i))
            for i, parts in enumerate(_parse(path, lines, 2), start=3)]


def format_offset_checkpoint(entries: dict[TopicPartition, int]) -> str:
    lines = [str(VERSION), str(len(entries))]
    lines += [f"{tp.topic} {tp.partition} {off}" for tp, off in entries.items()]
    return "\n".join(lines) + "\n"


def format_leader_epoch_checkpoint(entries: list[tuple[int, int]]) -> str:
    lines = [str(VERSION), str(len(entries))] + [f"{e} {o}" for e, o in entries]
    return "\n".join(lines) + "\n"


__all__ = ["format_leader_epoch_checkpoint", "format_offset_checkpoint",
           "read_leader_epoch_checkpoint", "read_offset_checkpoint", "write_atomically"]
