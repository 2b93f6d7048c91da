"""Checks of the drawing functions' arguments: a trace, text options.  Imports nothing of the
trace room (a trace is recognised by its parts, so that drawing needs no import of the tape)."""

from __future__ import annotations

from typing import Any

__all__ = ["check_text", "check_trace"]


def check_trace(name: str, trace: Any) -> None:
    """``TypeError`` unless ``trace`` is a :class:`gradarg.BackwardTrace` (read by its parts,
    ``nodes`` and ``gradient``: this module does not import the tape that makes them)."""
    if not (hasattr(trace, "nodes") and hasattr(trace, "gradient")):
        raise TypeError(f"{name} must be a gradarg.BackwardTrace (from "
                        f"gradarg.trace_backward(loss)), got {type(trace).__name__}")


def check_text(name: str, value: Any) -> None:
    """``TypeError`` unless ``value`` is a string (or ``None``)."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
