"""Where in the user's code something happened: the innermost frame outside torch and this
package, of the current call (:func:`user_site`) or of an exception's traceback
(:func:`where`), as ``file:line``.

Imports nothing from this package.
"""

from __future__ import annotations

import os
import sys
import traceback
from types import FrameType

import torch

__all__ = ["user_site", "users_file", "where"]

_LIBRARIES = (os.path.dirname(torch.__file__),
              os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


def users_file(filename: str) -> bool:
    """Whether ``filename`` (a frame's) is outside torch and this package: the user's code."""
    return not filename.startswith(_LIBRARIES)


def user_site() -> str:
    """``file:line`` of the innermost calling frame outside torch and gradarg (``"line N of
    a cell"`` in a notebook or a string), or ``""``: where the user's code made the call."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if users_file(frame.f_code.co_filename):
            name = frame.f_code.co_filename
            if "ipykernel_" in name or name.startswith("<"):  # a notebook cell, a string
                return f"line {frame.f_lineno} of a cell"
            return f"{os.path.basename(name)}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


def where(error: BaseException) -> str:
    """``file:line in function`` of the innermost frame of ``error``'s traceback outside
    torch and this package (the user's line that raised), or ``""``."""
    frames = traceback.extract_tb(error.__traceback__)
    for f in reversed(frames):
        if users_file(f.filename):
            line = f" ({f.line.strip()})" if f.line else ""
            return f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}{line}"
    return ""
