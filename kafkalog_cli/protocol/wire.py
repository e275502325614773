"""Framing and headers: ``int32 size`` + header + body, both ways.

Requests are parsed as ``RequestHeader.parse`` + ``RequestContext.parseRequest`` do, and a
frame the broker would reject raises :class:`InvalidRequest`; the server closes that
connection, as ``SocketServer`` does for ``InvalidRequestException`` and
``InvalidReceiveException``:

* a size prefix < 0 or > ``socket.request.max.bytes`` (:func:`read_frame_size`);
* a header that does not parse, or an API key the server does not serve
  (``Unknown API key``);
* a served API at a version outside the served range, except ApiVersions, which the broker
  accepts at any version and answers as a v0 request (KIP-511);
* a body too short for its schema at its version.

Bytes left after the body are ignored, as ``RequestContext.parseRequest`` ignores them
(it reads what the schema of that version needs from the buffer and never checks what
remains): librdkafka's all-topics Metadata v12 request ends with three such bytes.
"""

from __future__ import annotations

import asyncio
import io
import mmap
import struct
from dataclasses import dataclass

from ..errors import (
    IncompleteFrame,
    InvalidRequest,
)
from ..schema import flexible as fx
from ..schema.messages import PARSE_ERRORS
from .apis import APIS, Api, ApiKeys
from .schemas import RequestHeader

_SIZE = struct.Struct(">i")
_KEY_VERSION = struct.Struct(">hh")
_CORRELATION = struct.Struct(">i")

#: socket.request.max.bytes default (100 MiB).
DEFAULT_MAX_REQUEST_SIZE = 100 * 1024 * 1024


@dataclass
class Request:
    """A parsed request: header fields, its :class:`Api`, and the body as a dict.

    ``unsupported_version`` is set for an ApiVersions request at a version the server does
    not serve (its body is not parsed: it is answered as v0). ``client_host`` is the
    peer's address as ``RequestContext.clientAddress`` prints it (``/127.0.0.1``), set by
    the server; so is ``session``, the connection's security session (listener,
    principal: ``server.security.authenticator.Session``), None outside a server.
    """

    api: Api
    api_version: int
    correlation_id: int
    client_id: str
    body: dict
    size: int
    unsupported_version: bool = False
    client_host: str = ""
    session: object = None

    @property
    def api_key(self) -> ApiKeys:
        return self.api.key


async def read_frame_size(reader: asyncio.StreamReader,
                          max_size: int = DEFAULT_MAX_REQUEST_SIZE) -> int | None:
    """The next frame's size prefix, or None at a clean end of stream (EOF between frames).

    Raises:
        InvalidRequest: a negative size, or one over ``max_size``
            (``socket.request.max.bytes``), as ``NetworkReceive`` refuses it.
        IncompleteFrame: the stream ended inside the prefix.
    """
    head = await reader.read(4)
    if not head:
        return None
    if len(head) < 4:
        try:
            head += await reader.readexactly(4 - len(head))
        except asyncio.IncompleteReadError as e:
            raise IncompleteFrame(len(head) + len(e.partial), 4) from None
    (size,) = _SIZE.unpack(head)
    if size < 0 or size > max_size:
        raise InvalidRequest(f"Invalid receive (size = {size} larger than {max_size})"
                             if size > 0 else f"Invalid receive (size = {size})")
    return size


#: a frame larger than this that arrives in several chunks is gathered in an anonymous
#: memory map: the pages it holds are the bytes that arrived, and the chunks are freed at
#: once (a list of chunks fragments the heap: its RSS grew half again as much)
_MAPPED_FRAME_MIN = 1 << 20


async def read_frame_body(reader: asyncio.StreamReader, size: int, touch=None) -> bytes:
    """Exactly ``size`` bytes: the frame after its prefix. Read in the reader's own chunks
    (its buffer stays at its limit), so the memory held is what has arrived, not what the
    prefix claims; ``touch()`` is called after each chunk (activity, for an idle timer).

    Raises:
        IncompleteFrame: the stream ended first.
    """
    if size == 0:
        return b""
    first = await reader.read(size)
    if len(first) == size:
        return first
    if not first:
        raise IncompleteFrame(0, size)
    if touch is not None:
        touch()
    if size < _MAPPED_FRAME_MIN:
        chunks = [first]
        got = len(first)
        while got < size:
            chunk = await reader.read(size - got)
            if not chunk:
                raise IncompleteFrame(got, size)
            chunks.append(chunk)
            got += len(chunk)
            if touch is not None:
                touch()
        return b"".join(chunks)
    buf = mmap.mmap(-1, size)
    try:
        buf[:len(first)] = first
        got = len(first)
        del first
        while got < size:
            chunk = await reader.read(size - got)
            if not chunk:
                raise IncompleteFrame(got, size)
            buf[got:got + len(chunk)] = chunk
            got += len(chunk)
            if touch is not None:
                touch()
        return buf[:]
    finally:
        buf.close()


def parse_request(frame: bytes) -> Request:
    """Parse a request frame (without its size prefix).

    Raises:
        InvalidRequest: see the module docstring.
    """
    if len(frame) < 8:
        raise InvalidRequest("Error parsing request header: frame too short")
    key, version = _KEY_VERSION.unpack_from(frame, 0)
    api = APIS.get(key)
    if api is None:
        raise InvalidRequest(f"Unknown API key {key}")
    header_version = api.request_header_version(version)
    try:
        header, pos = RequestHeader.parse(frame, min(header_version, 1))
        if header_version >= 2:
            pos = _skip_tagged_fields(frame, pos)
    except PARSE_ERRORS as e:
        raise InvalidRequest(f"Error parsing request header. Our best guess of the apiKey "
                             f"is: {key}: {e}") from None
    client_id = header.get("clientId") or ""
    correlation_id = header["correlationId"]
    if not api.serves(version):
        if api.key == ApiKeys.API_VERSIONS:
            return Request(api, version, correlation_id, client_id, {}, len(frame),
                           unsupported_version=True)
        raise InvalidRequest(f"Received request api key {api.key.name} with version {version} "
                             "which is not enabled")
    try:
        body, _end = api.request.parse(frame, version, offset=pos)
    except PARSE_ERRORS as e:
        raise InvalidRequest(f"Error getting request for apiKey: {api.key.name}, apiVersion: "
                             f"{version}: {e}") from None
    return Request(api, version, correlation_id, client_id, body, len(frame))


def _skip_tagged_fields(frame: bytes, pos: int) -> int:
    stream = io.BytesIO(frame)
    stream.seek(pos)
    fx.empty_tagged_fields._parse(stream, {}, "(request header)")
    return stream.tell()


def encode_response(correlation_id: int, header_version: int, body: bytes) -> bytes:
    """Size prefix + ResponseHeader (v0: correlation id; v1: + empty tagged fields) + body."""
    header = _CORRELATION.pack(correlation_id) + (b"\x00" if header_version >= 1 else b"")
    return _SIZE.pack(len(header) + len(body)) + header + body


def build_response(request: Request, body: dict, version: int | None = None) -> bytes:
    """Encode ``body`` as the response to ``request`` (at its version unless given)."""
    v = request.api_version if version is None else version
    data = request.api.response.build(body, v)
    return encode_response(request.correlation_id, request.api.response_header_version(v), data)


def encode_request(api_key: int, api_version: int, correlation_id: int, body: dict,
                   client_id: str | None = "kafkalog") -> bytes:
    """Encode a request frame (for tests and tools): size + header + body."""
    api = APIS[api_key]
    hv = api.request_header_version(api_version)
    header = RequestHeader.build({"requestApiKey": api_key, "requestApiVersion": api_version,
                                  "correlationId": correlation_id, "clientId": client_id},
                                 min(hv, 1))
    if hv >= 2:
        header += b"\x00"
    data = header + api.request.build(body, api_version)
    return _SIZE.pack(len(data)) + data
