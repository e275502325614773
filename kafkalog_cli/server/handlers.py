"""What the server's groups of request handlers share (produce, admin, group and
transaction APIs): dispatch by API key, as KafkaApis.handle matches
``request.header.apiKey``, the shapes of an answer (:class:`Reply`, :data:`NO_RESPONSE`),
and the walk of a request's topics and partitions into the answer's."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass

from ..protocol.apis import ApiKeys
from .security.authorizer import AuthHelper

#: the longest (seconds) a handler's loop over a request's partitions runs on the event
#: loop before it lets the other connections in (:class:`TimeSlices`)
SLICE_S = 0.01


@dataclass
class Reply:
    """A handler's answer: the response ``body``, written at ``version`` (None: the
    request's version)."""

    body: dict
    version: int | None = None


#: a handler's answer when none is sent (Produce with acks=0)
NO_RESPONSE = object()


class TimeSlices:
    """Cooperative time slices for a handler whose work per partition touches the files
    (a fetch's reads, a timestamp search, creating or deleting partition directories):
    ``await slices.pause()`` between partitions yields to the event loop once
    :data:`SLICE_S` has passed, so a request of many partitions delays the other
    connections by a slice, not by its whole work (the broker runs handlers on
    ``num.io.threads`` threads for the same reason)."""

    __slots__ = ("_since",)

    def __init__(self):
        self._since = time.monotonic()

    async def pause(self) -> None:
        if time.monotonic() - self._since >= SLICE_S:
            await asyncio.sleep(0)
            self._since = time.monotonic()


class ApiHandlers:
    """A group of request handlers of one node: a method ``handle_<api>`` answers the
    API ``ApiKeys.<API>`` (``handle_delete_records``: DELETE_RECORDS). ``options`` is the
    server's ServerOptions; ``auth`` the :class:`~.security.authorizer.AuthHelper` the
    handlers ask (None: no authorizer, everything allowed)."""

    def __init__(self, catalog, options, auth: AuthHelper | None = None):
        self.catalog = catalog
        self.options = options
        self.auth = auth if auth is not None else AuthHelper(None)

    def endpoint(self, req) -> tuple[str, int]:
        """This node's (host, port) as advertised on the listener ``req`` came in on
        (``MetadataCache.getAliveBrokerNode(id, request.context.listenerName)``)."""
        return endpoint_of(req, self.options)

    def handlers(self) -> dict:
        """``{ApiKeys member: bound handler}`` of every ``handle_<api>`` method."""
        found = {}
        for key in ApiKeys:
            handler = getattr(self, "handle_" + key.name.lower(), None)
            if handler is not None:
                found[key] = handler
        return found


def partition_answers(request_topics: list[dict],
                      answer_topics: list[dict]) -> Iterator[tuple[str, dict, list[dict]]]:
    """Each partition of a request's topics (``[{"name", "partitions": [...]}]``), in the
    request's order, with the list its answer goes in: for each request topic an answer
    topic ``{"name", "partitions": []}`` is appended to ``answer_topics``.

    Yields ``(topic name, request partition, answer partitions of that topic)``.
    """
    for t in request_topics:
        name = t["name"]
        parts: list[dict] = []
        answer_topics.append({"name": name, "partitions": parts})
        for p in t["partitions"]:
            yield name, p, parts


def endpoint_of(req, options) -> tuple[str, int]:
    """See :meth:`ApiHandlers.endpoint` (``options``: the server's ServerOptions, the
    fallback outside a server)."""
    session = getattr(req, "session", None)
    if session is not None:
        return session.advertised
    return options.host, options.port
