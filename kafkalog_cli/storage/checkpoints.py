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
from collections.abc import Iterable, Iterator

from ..errors import CorruptCheckpointError
from .fileio import write_atomically
from .files import TopicPartition
from .location import READ_CHUNK, open_regular, opened_size

VERSION = 0
INT32 = (-(1 << 31), (1 << 31) - 1)
INT64 = (-(1 << 63), (1 << 63) - 1)

#: the most bytes kafkalog reads of a checkpoint file (``CheckpointFile``: the offset
#: checkpoints and ``leader-epoch-checkpoint``); a larger file is corrupt. A broker
#: hosting a million partitions of 40-character topic names writes ~60 MB.
MAX_CHECKPOINT_BYTES = 64 << 20
#: the most bytes kafkalog reads of the other small text files (``meta.properties``,
#: ``partition.metadata``, ``quorum-state``, ``.kafka_cleanshutdown``), which the broker
#: writes in under a kilobyte
MAX_SMALL_FILE_BYTES = 1 << 20
#: the longest line kafkalog reads in those files (a checkpoint's lines are at most ~300
#: bytes); a longer one is corrupt, and only :data:`QUOTE_CHARS` of it are ever quoted
MAX_LINE_BYTES = 64 << 10
#: the characters of a malformed line or value an error message quotes
QUOTE_CHARS = 80

_LINE_BREAK = re.compile(rb"[\r\n]")
_JAVA_WHITESPACE = re.compile(r"[ \t\n\x0b\f\r]+")
_JAVA_INT = re.compile(r"[+-]?\d+")


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """``repr(text)``, or, when that is longer than ``limit`` characters, of as much of its
    start as fits in them followed by how long it is: what an error message quotes of a
    malformed line or value (a zero-filled megabyte is not printed)."""
    r = repr(text)
    if len(r) <= limit + 2:
        return r
    body, used = [], 0
    for ch in text[:limit]:
        esc = "\\'" if ch == "'" else repr(ch)[1:-1]
        if used + len(esc) > limit:
            break
        body.append(esc)
        used += len(esc)
    return f"'{''.join(body)}'... ({len(text)} characters)"


def too_large(path, size: int, limit: int, what: str = "checkpoint file"):
    """The error for a small file over its limit (README: Limits on hostile input)."""
    return CorruptCheckpointError(
        f"is {size} bytes, more than the {limit} bytes kafkalog reads of a {what}", file=path)


def read_text_lines(path, *, encoding: str = "utf-8", limit: int = MAX_CHECKPOINT_BYTES,
                    what: str = "checkpoint file") -> Iterator[str] | None:
    """The lines of a small text file as Java's ``BufferedReader.readLine`` returns them
    (``\\n``, ``\\r`` and ``\\r\\n`` end a line; a last line without one counts), decoded
    strictly (``Files.newBufferedReader(path, UTF_8)`` throws ``MalformedInputException``),
    streamed: a piece of :data:`~.location.READ_CHUNK` bytes and one line are held at a
    time, so a caller that stops early reads no further. None when the file does not
    exist. The file is opened at once (a FIFO, a device or a directory is refused here);
    it is closed when the iterator ends or is dropped.

    Raises:
        NotRegularFileError: (at once) it is not a regular file.
        UnreadableError: it cannot be read (permissions, I/O error).
        CorruptCheckpointError: (at once) it is over ``limit`` bytes (``what`` names the
            kind of file in the message); (while iterating) bytes that are not
            ``encoding`` or a line over :data:`MAX_LINE_BYTES`, naming the line.
    """
    try:
        f = open_regular(path)
    except FileNotFoundError:
        return None
    try:
        size = opened_size(f, path)
        if size > limit:
            raise too_large(path, size, limit, what)
    except BaseException:
        f.close()
        raise
    return _lines(f, path, encoding, limit, what)


def _lines(f, path, encoding: str, limit: int, what: str) -> Iterator[str]:
    from .location import read_up_to

    buf = b""
    base = 0        # the file position of buf[0]
    pos = 0         # where the next line starts in buf
    line_no = 1
    total = 0
    eof = False
    try:
        while True:
            m = _LINE_BREAK.search(buf, pos)
            if m is None or (m.end() == len(buf) and buf[m.start()] == 13 and not eof):
                # no whole line (or a \r that a \n may follow): read on
                if eof:
                    if pos < len(buf):
                        yield _decode(buf[pos:], path, encoding, base + pos, line_no)
                    return
                if len(buf) - pos > MAX_LINE_BYTES:
                    raise _too_long(buf[pos:pos + QUOTE_CHARS], path, line_no, encoding)
                chunk = read_up_to(f, READ_CHUNK, path)
                total += len(chunk)
                if total > limit:   # the size stat gave lied (a remote object), or grew
                    raise too_large(path, total, limit, what)
                buf, base, pos = buf[pos:] + chunk, base + pos, 0
                eof = not chunk
                continue
            end = m.start()
            if end - pos > MAX_LINE_BYTES:
                raise _too_long(buf[pos:pos + QUOTE_CHARS], path, line_no, encoding)
            nxt = m.end()
            if buf[end] == 13 and nxt < len(buf) and buf[nxt] == 10:
                nxt += 1
            yield _decode(buf[pos:end], path, encoding, base + pos, line_no)
            pos = nxt
            line_no += 1
    finally:
        f.close()


def _decode(raw: bytes, path, encoding: str, position: int, line_no: int) -> str:
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as e:
        raise CorruptCheckpointError(
            f"not {encoding.upper()} text (byte 0x{raw[e.start]:02x} at byte "
            f"{position + e.start})", file=path, line=line_no,
            position=position + e.start) from None


def _too_long(head: bytes, path, line_no: int, encoding: str) -> CorruptCheckpointError:
    text = head.decode(encoding, "replace")
    return CorruptCheckpointError(
        f"line longer than {MAX_LINE_BYTES} bytes, starting "
        f"{quote(text).rsplit('... (', 1)[0]}...",
        file=path, line=line_no)


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


def _malformed(path, line: str, line_no: int, why: str = "") -> CorruptCheckpointError:
    return CorruptCheckpointError(f"Malformed line in checkpoint file: {quote(line)}{why}",
                                  file=path, line=line_no)


def _parse(path, lines: Iterable[str], width: int) -> Iterator[list[str]]:
    """``CheckpointFile.CheckpointReadBuffer.read``: version line (0), count line, then
    entries of ``width`` whitespace-separated fields, yielded as they are read (the count
    is checked at the end); an empty file, or one that ends after the version line, has
    no entries."""
    it = iter(lines)
    first = next(it, None)
    if first is None:
        return  # CheckpointReadBuffer: no first line -> no entries
    version = java_int(first)
    if version is None:
        raise _malformed(path, first, 1)
    if version != VERSION:
        raise CorruptCheckpointError(
            f"Unrecognised version:{version}, expected version: {VERSION}", file=path, line=1)
    second = next(it, None)
    if second is None:
        return
    count = java_int(second)
    if count is None or count < 0:
        raise _malformed(path, second, 2)
    found = 0
    for i, ln in enumerate(it, start=3):
        parts = java_split(_JAVA_WHITESPACE, ln)
        if len(parts) != width:
            raise _malformed(path, ln, i)
        found += 1
        yield parts
    if found != count:
        raise CorruptCheckpointError(
            f"Expected [{count}] entries in checkpoint file, but found only [{found}]",
            file=path)


def _number(path, parts: list[str], index: int, bounds, line: int) -> int:
    v = java_int(parts[index], bounds)
    if v is None:
        raise _malformed(path, " ".join(parts), line,
                         f" ({quote(parts[index])} is not "
                         f"a{'n int' if bounds is INT32 else ' long'})")
    return v


def read_offset_checkpoint(path) -> dict[TopicPartition, int] | None:
    """Read a log-directory offset checkpoint (``recovery-point-offset-checkpoint``,
    ``log-start-offset-checkpoint``, ``replication-offset-checkpoint``,
    ``cleaner-offset-checkpoint``) as ``OffsetCheckpointFile`` does: ``{TopicPartition:
    offset}``, None when the file does not exist. Read a line at a time, at most
    :data:`MAX_CHECKPOINT_BYTES`.

    Raises:
        CorruptCheckpointError: not UTF-8, or not version/count/``topic partition
            offset`` lines (the partition an int, the offset a long), naming the line
            (quoting at most :data:`QUOTE_CHARS` of it); a file over the limit.
        NotRegularFileError: a FIFO, a device, a socket or a directory.
        UnreadableError: the file cannot be read.
    """
    lines = read_text_lines(path)
    if lines is None:
        return None
    out = {}
    topics: dict[str, str] = {}
    for i, parts in enumerate(_parse(path, lines, 3), start=3):
        partition = _number(path, parts, 1, INT32, i)
        topic = topics.setdefault(parts[0], parts[0])   # one string per topic
        out[TopicPartition(topic, partition)] = _number(path, parts, 2, INT64, i)
    return out


def read_leader_epoch_checkpoint(path) -> list[tuple[int, int]] | None:
    """Read ``leader-epoch-checkpoint`` as ``LeaderEpochCheckpointFile`` does:
    ``[(epoch, start offset)]``, None when the file does not exist. Read a line at a
    time, at most :data:`MAX_CHECKPOINT_BYTES`.

    Raises:
        CorruptCheckpointError: not UTF-8, or not version/count/``epoch startOffset``
            lines (an int and a long), naming the line; a file over the limit.
        NotRegularFileError: a FIFO, a device, a socket or a directory.
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
