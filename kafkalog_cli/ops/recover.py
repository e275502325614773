"""``recover``: the operation the CLI calls (the engine is :mod:`kafkalog_cli.recovery`)."""

from __future__ import annotations

from ..recovery import RecoveryResult, UndoResult, recover, undo

__all__ = ["RecoveryResult", "UndoResult", "recover", "undo"]
