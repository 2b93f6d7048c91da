"""The one timer the benchmark scripts share: seconds per call, garbage collector paused.

``use_clock("cpu")`` switches every script's measurements to ``time.process_time`` (ignores
time the process spends waiting for a core on a loaded machine); the default is wall time.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

_clock: Callable[[], float] = time.perf_counter


def use_clock(name: str) -> None:
    """``"wall"`` (``time.perf_counter``) or ``"cpu"`` (``time.process_time``)."""
    global _clock
    _clock = {"wall": time.perf_counter, "cpu": time.process_time}[name]


def clock_name() -> str:
    return _clock.__name__


def sample(call: Callable[[], object], number: int) -> float:
    """Seconds per call, averaged over ``number`` back-to-back calls."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = _clock()
        for _ in range(number):
            call()
        return (_clock() - start) / number
    finally:
        if gc_was_enabled:
            gc.enable()
