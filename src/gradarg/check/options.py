"""The options of the checkers, checked before any work: an option that would make a check
vacuous (``probes=0`` compares nothing) or wrong (a negative or NaN tolerance calls every
backward wrong, an infinite one calls every backward right) is refused with a ``ValueError``,
one of the wrong type with a ``TypeError``; each message names the public function, the
argument, what was given and what is expected.  Used by :func:`gradarg.check_backward` and
:func:`gradarg.compare_vjp`.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import torch

from .._validate import check_flag as _check_flag

__all__ = ["check_count", "check_finite_cotangent", "check_flag", "check_seed",
           "check_tolerance"]

_SEED_RANGE = (-(2**63), 2**64 - 1)  # what torch.Generator.manual_seed accepts


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_count(func: str, name: str, value: Any, minimum: int, what: str) -> int:
    """``value`` as an ``int`` of at least ``minimum`` (``what``: what it counts)."""
    if not _is_int(value):
        raise TypeError(f"{func}: {name} must be an integer >= {minimum} ({what}), got "
                        f"{type(value).__name__} {_shown(value)}")
    if value < minimum:
        raise ValueError(f"{func}: {name} must be an integer >= {minimum} ({what}), got "
                         f"{value}")
    return int(value)


def check_tolerance(func: str, name: str, value: Any) -> float | None:
    """``None``, or a finite real number >= 0 as a ``float``."""
    if value is None:
        return None
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{func}: {name} must be a finite number >= 0 or None (the default "
                        f"tolerance), got {type(value).__name__} {_shown(value)}")
    v = float(value)
    if not math.isfinite(v) or v < 0:
        why = ("a NaN tolerance calls every backward wrong" if math.isnan(v) else
               "an infinite tolerance calls every backward right" if math.isinf(v) and v > 0
               else "a negative tolerance calls every backward wrong")
        # the value as given (an int such as -(2**53) - 1 has no exact float) and as a float
        given = repr(v) if isinstance(value, float) else f"{_shown(value)} (= {v!r})"
        raise ValueError(f"{func}: {name} must be a finite number >= 0 or None, got {given} "
                         f"({why})")
    return v


def check_seed(func: str, name: str, value: Any) -> int:
    """An integer torch's generators accept."""
    if not _is_int(value):
        raise TypeError(f"{func}: {name} must be an integer (the seed of the random probes), "
                        f"got {type(value).__name__} {_shown(value)}")
    lo, hi = _SEED_RANGE
    if not lo <= value <= hi:
        raise ValueError(f"{func}: {name} must be an integer from {lo} to {hi} (what "
                         f"torch.Generator.manual_seed accepts), got {value}")
    return int(value)


def check_flag(func: str, name: str, value: Any) -> bool:
    """A ``bool`` or NumPy's bool (not an integer, string or tensor standing for one):
    :func:`gradarg._validate.check_flag`, with the public function's name first."""
    return _check_flag(name, value, func)


def check_finite_cotangent(func: str, name: str, v: Any) -> None:
    """Refuse an upstream gradient with NaN: every entry of ``vᵀJ`` it touches is NaN, in the
    backward and in the reference alike, so nothing could be compared; ``±inf`` too (``inf ·
    0`` is NaN where the Jacobian is zero)."""
    if isinstance(v, numbers.Number) and not isinstance(v, bool):
        bad = not (math.isfinite(v.real) and math.isfinite(v.imag)) if isinstance(
            v, complex) else not math.isfinite(float(v))  # type: ignore[arg-type]
        where = ""
    elif isinstance(v, torch.Tensor) and (v.is_floating_point() or v.is_complex()):
        finite = torch.isfinite(v.detach())
        bad = not bool(finite.all())
        if bad:
            idx = (~finite).nonzero()[:3].tolist()
            where = " at " + ", ".join(str(tuple(i)) if len(i) != 1 else f"[{i[0]}]"
                                       for i in idx)
            n = int((~finite).sum())
            where += f" ({n} of {v.numel()} elements)" if n > 1 else ""
    else:
        return
    if bad:
        raise ValueError(f"{func}: {name} must be finite, got NaN or inf{where}: every entry "
                         f"of vᵀJ it touches would be NaN in the backward and in the reference "
                         f"alike, so nothing could be compared; pass a finite upstream "
                         f"gradient")
