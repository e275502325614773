"""A remote segment's bytes, read with ranged requests as the reading goes.

:class:`RangedFile` gives the bytes of a :class:`~kafkalog_cli.storage.location.RemotePath`
at their own positions: a temporary file of the remote file's size (sparse, unlinked,
in ``$TMPDIR``) mapped read-only, into which :meth:`RangedFile.ensure` writes the byte
ranges fetched (``pyarrow``'s ``read_at``: one ranged GET per piece of at most
:data:`REQUEST_BYTES`). Batches decoded from it are the format layer's usual tuples over a
``memoryview``, with file positions, so every reader works on it as on a local memory
map. Memory holds no more than one request; the temporary file holds what was read of
the segment (page cache, reclaimable), and goes when the segment is closed.

:class:`RangedRecords` is :class:`~kafkalog_cli.format.records.FileRecords` over such a
file: it fetches a window, iterates the whole batches in it, then the next window from
the first byte not yet consumed, growing the window (from :data:`FIRST_WINDOW` to
:data:`MAX_WINDOW`; from the start for a reader of a whole range, ``whole_range``) while
the reading goes on, and to a batch's size when one batch is larger; from the second window on, the next window is fetched on a thread while the
current one is decoded. A read of three records after an index seek costs one small
request; an export of a 128 MiB slice, 128 MiB in 8 MiB requests. A batch size that
runs past the end is never fetched: it is reported as a partial batch, as
``FileRecords`` reports it.
"""

from __future__ import annotations

import bisect
import mmap
import os
import struct
import tempfile

from ..errors import UnreadableError
from ..format.records import FileRecords
from ..schema.legacy import HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD
from ..schema.legacy import RECORD_OVERHEAD_V0 as LEGACY_RECORD_OVERHEAD_V0
from ..schema.record_batch import LENGTH_OFFSET

#: the largest single ranged request
REQUEST_BYTES = 8 << 20
#: the first window of a sequential read, and the largest it grows to
FIRST_WINDOW = 64 << 10
MAX_WINDOW = 8 << 20
#: the first window of a read of a whole range (its next one fetched on a thread at once)
WHOLE_RANGE_WINDOW = 1 << 20

_SIZE = struct.Struct(">i")


class RangedFile:
    """The bytes of a remote file at their own positions (see the module docstring).

    Attributes:
        path: the :class:`~kafkalog_cli.storage.location.RemotePath`.
        size: the file's size in bytes.
        view: a ``memoryview`` of all ``size`` bytes; only ranges passed to
            :meth:`ensure` hold the file's bytes (the rest reads as zeros).
        requests / fetched: ranged requests made and bytes they returned.

    Raises:
        UnreadableError: the file cannot be opened, or the temporary file created.
    """

    def __init__(self, path):
        self.path = path
        try:
            self._src = path.open()
            self.size = self._src.size()
        except OSError as e:
            raise UnreadableError(e.strerror or str(e), file=str(path)) from None
        self.requests = 0
        self.fetched = 0
        self._have: list[int] = []   # sorted bounds [a0, b0, a1, b1, ...] of held ranges
        self._pool = None            # one thread fetching ahead (prefetch), made on use
        self._pending = None
        self._tmp = tempfile.TemporaryFile(prefix="kafkalog-remote-")
        try:
            os.ftruncate(self._tmp.fileno(), self.size)
            self._mm = (mmap.mmap(self._tmp.fileno(), self.size, access=mmap.ACCESS_READ)
                        if self.size else None)
        except OSError as e:
            self.close()
            raise UnreadableError(f"cannot stage its bytes in a temporary file: "
                                  f"{e.strerror or e}", file=str(path)) from None
        self.view = memoryview(self._mm) if self._mm is not None else memoryview(b"")

    def missing(self, start: int, end: int) -> list[tuple[int, int]]:
        """The sub-ranges of ``[start, end)`` not fetched yet."""
        out = []
        pos = start
        i = bisect.bisect_right(self._have, pos)
        if i % 2 == 1:             # inside a held range
            pos = self._have[i]
            i += 1
        while pos < end:
            nxt = self._have[i] if i < len(self._have) else end
            if nxt > pos:
                out.append((pos, min(nxt, end)))
            if i + 1 >= len(self._have):
                break
            pos = self._have[i + 1]
            i += 2
        return [(a, b) for a, b in out if a < b]

    def _add(self, start: int, end: int) -> None:
        h = self._have
        i = bisect.bisect_left(h, start)
        j = bisect.bisect_right(h, end)
        new = ([] if i % 2 else [start]) + ([] if j % 2 else [end])
        h[i:j] = new

    def ensure(self, start: int, end: int) -> None:
        """Fetch the bytes of ``[start, end)`` (clipped to the file) not fetched yet
        (after the fetch ahead, if one runs: one fetch at a time).

        Raises:
            UnreadableError: a request failed, or the file is shorter than it was.
        """
        self._wait()
        self._fetch(start, end)

    def prefetch(self, start: int, end: int) -> None:
        """Start fetching ``[start, end)`` on a thread while the caller decodes what it
        has (a sequential read's next window); nothing if a fetch ahead already runs.
        Its failure is not raised here: the :meth:`ensure` that needs the bytes fetches
        them again, and raises."""
        if self._pending is not None or not self.missing(max(0, start), min(end, self.size)):
            return
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(1, thread_name_prefix="kafkalog-prefetch")
        self._pending = self._pool.submit(self._fetch, start, end)

    def _wait(self) -> None:
        if self._pending is not None:
            try:
                self._pending.result()
            except Exception:  # noqa: BLE001 - ensure() fetches (and reports) again
                pass
            self._pending = None

    def _fetch(self, start: int, end: int) -> None:
        start, end = max(0, start), min(end, self.size)
        if start >= end:
            return
        fd = self._tmp.fileno()
        for a, b in self.missing(start, end):
            pos = a
            while pos < b:
                n = min(REQUEST_BYTES, b - pos)
                try:
                    data = self._src.read_at(n, pos)
                except OSError as e:
                    raise UnreadableError(" ".join(str(e).split()), file=str(self.path),
                                          position=pos) from None
                self.requests += 1
                if not len(data):
                    raise UnreadableError(f"the file ends before byte {b} (it was "
                                          f"{self.size} bytes)", file=str(self.path),
                                          position=pos)
                os.pwrite(fd, data, pos)
                self.fetched += len(data)
                pos += len(data)
            self._add(a, b)

    def whole(self) -> memoryview:
        """:attr:`view` with every byte fetched (two requests in flight)."""
        for a in range(0, self.size, REQUEST_BYTES):
            self.ensure(a, a + REQUEST_BYTES)
            self.prefetch(a + REQUEST_BYTES, a + 2 * REQUEST_BYTES)
        self._wait()
        return self.view

    def records(self, start: int = 0, end: int | None = None, file=None, *,
                whole_range: bool = False) -> RangedRecords:
        return RangedRecords(self, start, end, file, whole_range=whole_range)

    def close(self) -> None:
        """Release the remote handle and the temporary file (a view still referenced by
        batches stays readable until they are gone: the GC closes the map then)."""
        if getattr(self, "_pool", None) is not None:
            self._wait()
            self._pool.shutdown()
            self._pool = None
        if getattr(self, "_mm", None) is not None:
            self.view.release()
            try:
                self._mm.close()
            except BufferError:
                pass
            self._mm = None
        for f in (getattr(self, "_tmp", None), getattr(self, "_src", None)):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass


class RangedRecords:
    """:class:`~kafkalog_cli.format.records.FileRecords` over a :class:`RangedFile`:
    the same batches (positions in the file), ``valid_end``, ``stop_error`` and
    ``invalid_bytes``, with the bytes fetched window by window (see the module
    docstring)."""

    __slots__ = ("rf", "view", "start", "end", "file", "valid_end", "stop_error", "whole_range")

    def __init__(self, rf: RangedFile, start: int = 0, end: int | None = None, file=None, *,
                 whole_range: bool = False):
        if start < 0:
            FileRecords(b"", start)   # raises as FileRecords does
        self.rf = rf
        self.view = rf.view
        self.start = start
        self.end = rf.size if end is None else min(end, rf.size)
        self.file = file
        self.valid_end = start
        self.stop_error = None
        #: the caller reads the whole range (a Spark slice): larger windows from the
        #: start, the next one fetched while one is decoded
        self.whole_range = whole_range

    @property
    def invalid_bytes(self) -> int:
        return self.end - self.valid_end

    def batches(self):
        rf, view, end = self.rf, self.view, self.end
        pos = self.start
        # a whole range: the next window's fetch overlaps the decoding of this one from
        # the start
        window = WHOLE_RANGE_WINDOW if self.whole_range else FIRST_WINDOW
        fr = None
        sequential = self.whole_range
        try:
            while pos < end:
                wend = min(end, pos + window)
                rf.ensure(pos, wend)
                if sequential:
                    # the read goes on past a window: fetch the next one while this one
                    # is decoded (not after a first window: a seek that stops in it
                    # fetches no more)
                    rf.prefetch(wend, min(end, wend + min(window * 2, MAX_WINDOW)))
                sequential = True
                fr = FileRecords(view, pos, wend, file=self.file)
                yield from fr.batches()
                pos = fr.valid_end
                if fr.stop_error is not None:
                    self.stop_error = fr.stop_error
                    break
                if wend >= end:
                    break                     # the end, or a partial batch at the end
                if wend - pos >= HEADER_SIZE_UP_TO_MAGIC:
                    # a batch that runs past the window: its size is in the window
                    size = _SIZE.unpack_from(view, pos + LENGTH_OFFSET)[0]
                    if size < LEGACY_RECORD_OVERHEAD_V0:
                        # FileRecords names the error, given one byte more than the prefix
                        window = HEADER_SIZE_UP_TO_MAGIC + 1
                        continue
                    if pos + LOG_OVERHEAD + size > end:
                        break                 # runs past the end: never fetched
                    window = max(min(window * 2, MAX_WINDOW), LOG_OVERHEAD + size)
                else:
                    window = max(min(window * 2, MAX_WINDOW), HEADER_SIZE_UP_TO_MAGIC + 1)
        finally:
            # a reader that stopped inside a window: where that window's iteration stood
            self.valid_end = pos if fr is None else max(pos, fr.valid_end)

    def __iter__(self):
        return self.batches()
