"""Bytes fields built without a copy: :class:`DeferredBytes` (a value whose bytes the
stream's owner writes, e.g. a range of a segment file sent with ``os.sendfile``) and
:class:`SplicedStream` (the stream that keeps them apart). A module of its own, without
construct, so that the storage layer's readers (``storage.segment.FileSlice``) do not
import the message machinery (:mod:`.flexible` builds with these)."""

from __future__ import annotations


class DeferredBytes:
    """The value of a bytes field that a builder does not copy: the builder writes its
    length prefix and hands the object to the stream (a :class:`SplicedStream` keeps it
    as a part of its own; any other stream gets ``bytes(obj)``). A fetched range of a
    segment file is one (``storage.segment.FileSlice``): the server sends it from the
    file."""

    __slots__ = ()

    def __len__(self) -> int:
        raise NotImplementedError

    def __bytes__(self) -> bytes:
        raise NotImplementedError


class SplicedStream:
    """A write-only stream for building a message whose bytes fields may be
    :class:`DeferredBytes`: :attr:`parts` is the built message as a list of ``bytes``
    and :class:`DeferredBytes`, in order (their lengths add up to the message's)."""

    def __init__(self):
        self._buf = bytearray()
        self._parts: list = []

    def write(self, data) -> int:
        self._buf += data
        return len(data)

    def defer(self, obj: DeferredBytes) -> None:
        if self._buf:
            self._parts.append(bytes(self._buf))
            self._buf = bytearray()
        self._parts.append(obj)

    @property
    def parts(self) -> list:
        return self._parts + [bytes(self._buf)] if self._buf else list(self._parts)
