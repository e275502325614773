"""Decoder of ``__share_group_state`` records, after DumpLogSegments'
ShareGroupStateMessageParser (ShareCoordinatorRecordSerde; record types in
:mod:`.share_messages`). Framing and output shapes are the coordinator's
(:mod:`.coordinator`)."""

from __future__ import annotations

from . import share_messages as sm
from .coordinator import CoordinatorDecoder


class ShareGroupStateDecoder(CoordinatorDecoder):
    """Decodes ``__share_group_state`` keys and values. Never raises: what cannot be
    decoded is returned as ``{"raw": base64}`` with a warning."""

    topic = "__share_group_state"
    record_types = sm.RECORD_TYPES
