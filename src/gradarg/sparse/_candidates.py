"""The candidates of a compiled sparse derivative's first call: each one compiled, then timed.

:class:`gradarg.sparse.CompiledSparse` compiles, at its first call, one candidate per Jacobian
mode that needs as many passes and per inductor variant (:mod:`gradarg.sparse._compile_options`),
and keeps the fastest.  :func:`compile_candidate` makes one ``torch.compile``'d function of a
pure pass; :func:`fastest` times them in turn.

May import torch, :mod:`gradarg.sparse._compile_options` and ``gradarg.core.speeds`` (its
timing helper).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from typing import Any

import torch

from ..core.speeds import best_of_3
from ._compile_options import cacheable, variant_options

__all__ = ["compile_candidate", "fastest"]


def compile_candidate(pure: Callable[..., torch.Tensor], name: str, variant: str, tag: str, *,
                      backend: Any, mode: str | None, fullgraph: bool, inductor: bool,
                      ) -> Callable[..., torch.Tensor]:
    """A fresh ``torch.compile`` of mode ``name``'s pure pass with ``variant``'s options, for
    one input shape and dtype (``tag``: 16 characters naming them, such as the memory's key).

    Its own code object (torch.compile keeps graphs per code object, up to 8), named after
    ``tag``, mode and variant, sees one input shape: ``dynamic=None`` compiles it static
    without ``dynamic=False``'s per-call config patch (3-7 µs), and automatic dynamic shapes
    never mix two functions (a captured tensor that changes shape gets a dynamic-shape graph,
    right and slower, rather than a recompile)."""
    own_name = "_".join([pure.__name__, name, variant.replace(" ", "_"), tag[:16]])
    code = pure.__code__.replace(co_name=own_name)  # (co_qualname, Python >= 3.11, unused)
    own = types.FunctionType(code, pure.__globals__, own_name, pure.__defaults__,
                             pure.__closure__)
    options = {**cacheable(), **variant_options(variant)} if inductor else None
    return torch.compile(own, backend=backend, mode=mode, fullgraph=fullgraph,
                         options=options)


def fastest(runs: Mapping[tuple[str, str], Callable[[], Any]]) -> tuple[tuple[str, str], float]:
    """The fastest of ``runs`` (one call of each candidate) and its seconds per call: after
    one warm-up call each (the first calls after a compile run slower), the best of 3 calls in
    each of 3 rounds that take the candidates in turn (one round for a single candidate)."""
    for run in runs.values():
        run()
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(3 if len(runs) > 1 else 1):
        for k, run in runs.items():
            best[k] = min(best[k], best_of_3(run))
    winner = min(best, key=best.__getitem__)
    return winner, best[winner]
