"""A random sample drawn from parameters that require grad, on the way to the loss:
``torch.normal(mean, std)``, ``torch.bernoulli(p)``, ``torch.poisson(rate)``.  torch records
them (``NormalBackward*``, ``BernoulliBackward*``, ``PoissonBackward0``) with a derivative of
zero with respect to their parameters, so no gradient flows through the sample: a VAE that
samples its latent with ``torch.normal(mu, std)`` trains its encoder on the KL term alone,
every gradient finite and nonzero.  The reparameterisation (``mu + std * torch.randn_like(std)``,
``torch.distributions.Normal(mu, std).rsample()``) keeps the path.

Read at the ``backward()`` call from the losses' graph (at most :data:`MOST_NODES` nodes,
breadth first), with the parameters below each sampling node (the variables of the
``AccumulateGrad`` nodes reached from it), kept by ``id``.

Imports :mod:`.finding` and ``trace.graph.nodes`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ..graph.nodes import first_nodes
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["MOST_NODES", "STARTS", "Sampled", "sampled", "sampling"]

MOST_NODES = 256
"""Nodes of the losses' graph read at a ``backward()`` call."""

_SAMPLING = {"NormalBackward0": "torch.normal", "NormalBackward1": "torch.normal",
             "NormalBackward2": "torch.normal", "NormalBackward3": "torch.normal",
             "BernoulliBackward0": "torch.bernoulli", "BernoulliBackward1": "torch.bernoulli",
             "BernoulliBackward2": "torch.bernoulli", "PoissonBackward0": "torch.poisson"}


class Sampled(NamedTuple):
    """A sampling node (``node``; ``fn``: the torch function) whose inputs carry gradient,
    and the ids of the tensors accumulated below it (``below``)."""

    node: str
    fn: str
    below: frozenset[int]


# the node classes its scan starts from: with none of them in the nodes given, it finds nothing
STARTS = frozenset(_SAMPLING)


def sampled(nodes: list[Any], walked: list[Any] | None = None) -> tuple[Sampled, ...]:
    """The sampling nodes among the first :data:`MOST_NODES` below ``nodes`` (the losses'
    autograd nodes; ``walked``: those nodes, when already read) with an input that carries
    gradient."""
    found = []
    for n in first_nodes(nodes, MOST_NODES) if walked is None else walked:
        name = type(n).__name__
        if name in _SAMPLING and any(c is not None for c, _ in n.next_functions):
            below = frozenset(id(a.variable) for a in first_nodes([n], MOST_NODES)
                              if type(a).__name__ == "AccumulateGrad")
            found.append(Sampled(name, _SAMPLING[name], below))
    return tuple(found)


def sampling(w: GradWatch, o: Options) -> Finding:
    """The first :class:`Sampled` node of the last ``backward()``, in words, with the watched
    parameters below it."""
    found = w.grads.losses.sampled
    if not found:
        return Finding("sampling", True)
    s = found[0]
    names = [n for n, p in w.model.named_parameters() if id(p) in s.below]
    shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    whose = f" ({len(names)} parameter(s) below it: {shown})" if names else ""
    return Finding("sampling", True, (
        f"a random sample is drawn from values that require grad: {s.fn} (observed: {s.node} "
        f"in the last backward's graph{whose}); its derivative with respect to its parameters "
        f"is zero, so no gradient flows through the sample to them, and what they get comes "
        f"from other paths only; {_FIX.get(s.fn, _FIX['torch.normal'])}"))


_FIX = {"torch.normal": "reparameterise: mean + std * torch.randn_like(std), or "
                        "torch.distributions.Normal(mean, std).rsample()",
        "torch.bernoulli": "use a relaxed sample (torch.distributions.RelaxedBernoulli("
                           "temperature, probs=p).rsample()), a straight-through estimator, or "
                           "a score-function loss (log_prob of the sample times the reward)",
        "torch.poisson": "use a score-function loss (log_prob of the sample times the "
                         "reward) or a continuous relaxation"}
