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
* a body too short for its schema at its version;
* a request whose arrays and tagged fields hold more elements than the bound given
  (:class:`~kafkalog_cli.errors.RequestTooManyElements`, kafkalog's: docs/serve.md,
  "Limits"), refused when a count would pass it, before the elements are read.

Bytes left after the body are ignored, as ``RequestContext.parseRequest`` ignores them
(it reads what the schema of that version needs from the buffer and never checks what
remains): librdkafka's all-topics Metadata v12 request ends with three such bytes.
"""

from __future__ import annotations

import asyncio
import io
import mmap
import struct
import sys
from dataclasses import dataclass

from ..errors import (
    IncompleteFrame,
    InvalidRequest,
    RequestTooManyElements,
)
from ..schema import flexible as fx
from ..schema.deferred import SplicedStream
from ..schema.messages import PARSE_ERRORS
from . import produce_codec
from .apis import APIS, Api, ApiKeys
from .messages.connection import RequestHeader

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
    ``elements``: the array elements and tagged fields the header and body hold (what
    :func:`parse_request` counted against its bound).
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
    elements: int = 0

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


def parse_request(frame: bytes, max_elements: int | None = None) -> Request:
    """Parse a request frame (without its size prefix). ``max_elements``: the most array
    elements and tagged fields the header and body may hold together (None: no bound).

    Raises:
        RequestTooManyElements: more elements than ``max_elements`` (an InvalidRequest).
        InvalidRequest: see the module docstring.
    """
    if len(frame) < 8:
        raise InvalidRequest("Error parsing request header: frame too short")
    key, version = _KEY_VERSION.unpack_from(frame, 0)
    api = APIS.get(key)
    if api is None:
        raise InvalidRequest(f"Unknown API key {key}")
    if key == 0 and produce_codec.FIRST_VERSION <= version <= produce_codec.LAST_VERSION \
            and api.serves(version):
        fast = produce_codec.parse_request(frame, version, max_elements)
        if fast is not None:  # the usual shape (else the generic codec decides)
            correlation_id, client_id, body, elements = fast
            return Request(api, version, correlation_id, client_id, body, len(frame),
                           elements=elements)
    header_version = api.request_header_version(version)
    context = fx.element_context(sys.maxsize if max_elements is None else max_elements)
    try:
        header, pos = RequestHeader.parse(frame, min(header_version, 1))
        if header_version >= 2:
            pos = _skip_tagged_fields(frame, pos, context)
    except PARSE_ERRORS as e:
        _too_many(e, max_elements, f"{api.key.name} v{version} (its header)")
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
        body, _end = api.request.parse(frame, version, offset=pos, context=context)
    except PARSE_ERRORS as e:
        _too_many(e, max_elements, f"{api.key.name} v{version}")
        raise InvalidRequest(f"Error getting request for apiKey: {api.key.name}, apiVersion: "
                             f"{version}: {e}") from None
    return Request(api, version, correlation_id, client_id, body, len(frame),
                   elements=fx.elements_used(context))


def _too_many(e: BaseException, bound: int | None, what: str) -> None:
    """Raise RequestTooManyElements when ``e`` is the element bound's refusal."""
    if isinstance(e, fx.KafkaReadError) and str(e).find(fx.TOO_MANY_ELEMENTS) >= 0:
        raise RequestTooManyElements(
            f"{what}: its arrays and tagged fields hold more than {bound} elements "
            "(kafkalog's bound on one request, docs/serve.md 'Limits')", bound) from None


def _skip_tagged_fields(frame: bytes, pos: int, context: dict) -> int:
    stream = io.BytesIO(frame)
    stream.seek(pos)
    fx.empty_tagged_fields._parse(stream, context, "(request header)")
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


def response_parts(request: Request, body: dict, version: int | None = None, *,
                   max_elements: int | None = None) -> list | None:
    """The response frame (size prefix, header, body) as parts to write in order:
    ``bytes``, and :class:`~kafkalog_cli.schema.flexible.DeferredBytes` for the records
    fields holding them (a FileSlice, sent from its segment file), each part's length
    counted in the size prefix. None when the body holds more than ``max_elements``
    array elements (build it again without a bound, off the event loop)."""
    v = request.api_version if version is None else version
    if request.api.key == 0 and produce_codec.FIRST_VERSION <= v <= produce_codec.LAST_VERSION:
        data = produce_codec.build_response(body, v)
        if data is not None:  # the usual shape (else the generic codec)
            return [encode_response(request.correlation_id,
                                    request.api.response_header_version(v), data)]
    stream = SplicedStream()
    try:
        request.api.response.build_into(body, v, stream, fx.element_context(max_elements))
    except fx.KafkaReadError as e:
        if max_elements is not None and str(e).find(fx.TOO_MANY_ELEMENTS) >= 0:
            return None
        raise
    parts = stream.parts
    header = _CORRELATION.pack(request.correlation_id) + (
        b"\x00" if request.api.response_header_version(v) >= 1 else b"")
    size = len(header) + sum(len(p) for p in parts)
    first = _SIZE.pack(size) + header
    if parts and isinstance(parts[0], bytes):
        parts[0] = first + parts[0]
    else:
        parts.insert(0, first)
    return parts


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
