"""Samples drawn with ``sample()`` from a distribution whose parameters require grad.

``Distribution.sample()`` draws under ``torch.no_grad()``: nothing flows back through the draw
to the distribution's parameters (``loc``, ``scale``, ``probs``...).  A Bayesian layer whose
weights are ``Normal(mu, sigma).sample()``, or a VAE whose code is ``q.sample()``, trains
``mu`` and ``sigma`` only through the other terms of the loss (the KL), never through the data
term; ``rsample()`` draws by the reparameterisation trick and keeps that path
(https://docs.pytorch.org/docs/stable/distributions.html#pathwise-derivative).  A
score-function estimator (REINFORCE) draws with ``sample()`` on purpose and differentiates
``log_prob`` of the draw instead: a distribution whose ``log_prob`` was called is not named.

Seen here: while a watch listens, ``sample`` and ``log_prob`` of every class of
``torch.distributions`` that can draw with ``rsample`` (``has_rsample``) are observed
(:mod:`.patches`); a draw from an instance whose parameters (its ``arg_constraints``) include a
tensor that requires grad is kept, with how many draws and which parameters.

Imports :mod:`.finding` and :mod:`.patches` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from . import patches
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["Draw", "Draws", "sample_cut"]


class Draw(NamedTuple):
    """``times`` draws with ``sample()`` from a ``kind`` whose ``params`` require grad."""

    kind: str
    params: tuple[str, ...]
    times: int


class Draws:
    """The ``sample()`` draws from distributions whose parameters require grad (by ``id`` of
    the distribution), and the distributions whose ``log_prob`` was called."""

    def __init__(self) -> None:
        self.drawn: dict[int, Draw] = {}
        self.scored: set[int] = set()
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = patches.register_distribution_hooks(self._called)

    def detach(self) -> list[Any]:
        handles, self._handles = self._handles, []
        return handles

    def _called(self, method: str, dist: Any) -> None:
        if method == "log_prob":
            self.scored.add(id(dist))
            return
        live = tuple(k for k in getattr(dist, "arg_constraints", {})
                     if isinstance(v := dist.__dict__.get(k), torch.Tensor) and v.requires_grad)
        if live:
            seen = self.drawn.get(id(dist))
            self.drawn[id(dist)] = Draw(type(dist).__name__, live,
                                        1 if seen is None else seen.times + 1)

    def cut(self) -> list[Draw]:
        """The draws of distributions whose ``log_prob`` was never called."""
        return [d for i, d in self.drawn.items() if i not in self.scored]


def sample_cut(w: GradWatch, o: Options) -> Finding:
    """Draws with ``sample()`` that cut the distribution's parameters off the loss."""
    cut = w.draws.cut()
    if not cut:
        return Finding("sampling path", True)
    d = cut[0]
    more = f" (and {len(cut) - 1} more distribution(s))" if len(cut) > 1 else ""
    return Finding("sampling path", True, (
        f"{d.kind}.sample() drew {d.times} time(s) in this block from a distribution whose "
        f"{', '.join(d.params)} require grad{more}, and its log_prob was never called "
        f"(observed): sample() draws under torch.no_grad(), so no gradient reaches "
        f"{', '.join(d.params)} through the draw; use rsample() (the reparameterisation "
        f"trick) to train them through what the sample feeds"))
