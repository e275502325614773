"""The Produce request and response of a producer's usual shape, without the generic
codec: what ``ProduceRequestData.read`` / ``ProduceResponseData.write`` produce for the
served versions (3-11), with plain ``struct`` steps.

Produce is the one API a client sends at its full data rate; the generic codec
(:mod:`kafkalog_cli.schema.messages`) costs ~85 us a request in Python, a third of serve's
CPU for a 16 KB batch. These fast paths cover the usual shape only and give up (return
None) on anything else, which the generic codec then handles, errors included:

* request: ASCII strings, no tagged field, non-null arrays, topic names not null, at most
  ``max_elements`` array elements; the body as :func:`~.wire.parse_request` returns it
  (``records`` as bytes) and its element count;
* response: partitions with ``index``, ``errorCode``, ``baseOffset``, ``logAppendTimeMs``,
  ``logStartOffset`` (and an empty ``recordErrors`` / null ``errorMessage`` at most), ASCII
  topic names, no tagged field.

Equality with the generic codec is tested field by field (tests/server/test_produce_codec.py).
"""

from __future__ import annotations

import struct

_H = struct.Struct(">h")
_I = struct.Struct(">i")
_HI = struct.Struct(">hi")
_PART_OLD = struct.Struct(">ihqq")       # index, errorCode, baseOffset, logAppendTimeMs
_PART = struct.Struct(">ihqqq")          # ... + logStartOffset (v5+)
#: the keys of a partition response this encoder writes (more: the generic codec)
_PART_KEYS = frozenset({"index", "errorCode", "baseOffset", "logAppendTimeMs",
                        "logStartOffset", "recordErrors", "errorMessage"})
FIRST_VERSION, LAST_VERSION, FIRST_FLEXIBLE = 3, 11, 9


#: raised inside the fast paths when a frame or body is not of the usual shape (the
#: generic codec decides); never escapes this module
_GiveUp = ValueError


def _uvarint(data, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 28:
            raise _GiveUp
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def _ascii(raw) -> str:
    if not raw.isascii():
        raise _GiveUp
    return raw.decode("ascii")


def parse_request(frame, version: int, max_elements: int | None
                  ) -> tuple[int, str, dict, int] | None:
    """A ProduceRequest frame (header and body, no size prefix) at ``version`` (3-11):
    ``(correlation id, client id, body, elements)``, or None when it is not of the usual
    shape (see the module docstring) or holds more than ``max_elements`` elements."""
    try:
        return _parse(frame, version, max_elements)
    except (ValueError, struct.error, IndexError):
        return None


def _length(frame, pos: int, flexible: bool, wide: bool) -> tuple[int, int]:
    """A length prefix: compact (unsigned varint, length + 1) in flexible versions, else
    int32 (``wide``: arrays, bytes) or int16 (strings); -1 for null."""
    if flexible:
        n, pos = _uvarint(frame, pos)
        return n - 1, pos
    if wide:
        return _I.unpack_from(frame, pos)[0], pos + 4
    return _H.unpack_from(frame, pos)[0], pos + 2


def _string(frame, pos: int, flexible: bool) -> tuple[str | None, int]:
    n, pos = _length(frame, pos, flexible, False)
    if n < 0:
        return None, pos
    end = pos + n
    if end > len(frame):
        raise _GiveUp
    return _ascii(frame[pos:end]), end


def _no_tags(frame, pos: int, flexible: bool) -> int:
    """Past an empty tagged-field section (flexible versions); any tag: give up."""
    if not flexible:
        return pos
    if frame[pos] != 0:
        raise _GiveUp
    return pos + 1


def _parse(frame, version: int, max_elements: int | None):
    flexible = version >= FIRST_FLEXIBLE
    correlation_id = _I.unpack_from(frame, 4)[0]
    client_id, pos = _string(frame, 8, False)  # the header's is never compact
    pos = _no_tags(frame, pos, flexible)
    transactional_id, pos = _string(frame, pos, flexible)
    acks, timeout_ms = _HI.unpack_from(frame, pos)
    pos += 6
    bound = max_elements if max_elements is not None else 1 << 62
    count, pos = _length(frame, pos, flexible, True)
    elements = count
    if count < 0 or elements > bound:
        raise _GiveUp
    topics = []
    for _ in range(count):
        name, pos = _string(frame, pos, flexible)
        parts_count, pos = _length(frame, pos, flexible, True)
        elements += parts_count
        if name is None or parts_count < 0 or elements > bound:
            raise _GiveUp
        parts = []
        for _ in range(parts_count):
            index = _I.unpack_from(frame, pos)[0]
            n, pos = _length(frame, pos + 4, flexible, True)
            if n < 0:
                records = None
            else:
                end = pos + n
                if end > len(frame):
                    raise _GiveUp
                records = bytes(frame[pos:end])
                pos = end
            pos = _no_tags(frame, pos, flexible)
            parts.append({"index": index, "records": records})
        pos = _no_tags(frame, pos, flexible)
        topics.append({"name": name, "partitionData": parts})
    pos = _no_tags(frame, pos, flexible)
    if pos != len(frame):
        raise _GiveUp
    body = {"transactionalId": transactional_id, "acks": acks, "timeoutMs": timeout_ms,
            "topicData": topics}
    return correlation_id, client_id or "", body, elements


def build_response(body: dict, version: int) -> bytes | None:
    """A ProduceResponse body at ``version`` (3-11), or None when ``body`` is not of the
    usual shape (see the module docstring)."""
    try:
        return _build(body, version)
    except (ValueError, KeyError, TypeError, AttributeError, struct.error):
        return None


def _build(body: dict, version: int) -> bytes:
    if len(body) != 2 or "responses" not in body or "throttleTimeMs" not in body:
        raise _GiveUp
    flexible = version >= FIRST_FLEXIBLE
    out = []
    responses = body["responses"]
    out.append(bytes((len(responses) + 1,)) if flexible and len(responses) < 127
               else _I.pack(len(responses)) if not flexible else None)
    for topic in responses:
        if len(topic) != 2:
            raise _GiveUp
        name = topic["name"].encode("ascii") if topic["name"].isascii() else None
        parts = topic["partitionResponses"]
        if name is None or len(name) > 126 or len(parts) > 126:
            raise _GiveUp
        if flexible:
            out.append(bytes((len(name) + 1,)) + name + bytes((len(parts) + 1,)))
        else:
            out.append(_H.pack(len(name)) + name + _I.pack(len(parts)))
        for p in parts:
            if not p.keys() <= _PART_KEYS or p.get("recordErrors") or \
                    p.get("errorMessage") is not None:
                raise _GiveUp
            if version >= 5:
                out.append(_PART.pack(p["index"], p["errorCode"], p["baseOffset"],
                                      p["logAppendTimeMs"], p["logStartOffset"]))
            else:
                out.append(_PART_OLD.pack(p["index"], p["errorCode"], p["baseOffset"],
                                          p["logAppendTimeMs"]))
            if flexible:
                out.append(b"\x01\x00\x00")  # recordErrors [], errorMessage null, no tags
            elif version >= 8:
                out.append(b"\x00\x00\x00\x00\xff\xff")
        if flexible:
            out.append(b"\x00")
    if None in out:
        raise _GiveUp
    out.append(_I.pack(body["throttleTimeMs"]))
    if flexible:
        out.append(b"\x00")
    return b"".join(out)
