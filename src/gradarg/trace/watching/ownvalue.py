"""An autoregressive model that reads the value it predicts: a MADE or a PixelCNN trained to
reproduce its own input, whose weights are multiplied by 0/1 masks so that each output reads
only earlier positions, while the output at a position still reads the input at that same
position (a first layer with PixelCNN's mask B where mask A belongs, or MADE's ``>=`` where its
output layer needs ``>``: Germain et al. 2015, "MADE: Masked Autoencoder for Distribution
Estimation").  Every gradient is finite and nonzero and nothing raises; the
likelihood falls by copying each value instead of predicting it.

Seen here, at each outermost ``backward()`` (by :class:`.tokenshift.TokenShift`, which keeps
the model's floating input): among the losses' first nodes, a reconstruction loss
(``binary_cross_entropy_with_logits``, ``binary_cross_entropy``, ``mse_loss``) whose saved
target equals that input, while the loss's graph multiplies a parameter by a constant tensor of
0s and 1s (a mask).  The first :data:`EXAMPLES` examples are then copied.  When the finding is
read, the dependence of every output position on every input position comes from the gradients
of a copy of the model (``copy.deepcopy``: the watch's hooks are not copied; in eval mode;
torch's random state restored) at those examples.  It is named only when the dependence
between different positions is autoregressive, an order exists in which each output reads
only earlier inputs (the directed graph of "output p reads input q", p != q, is acyclic:
networkx) with at least one such edge per position, and some outputs read their own position.
A plain autoencoder reads every position from every other (a cycle), and so does one with
fixed random 0/1 masks.  A model that does not copy (one pruned by ``torch.nn.utils.prune``
holds its ``weight`` as a non-leaf tensor, which ``deepcopy`` refuses) is not read.

Imports nothing of the trace room but :mod:`.finding` and ``trace.graph.nodes``.
"""

from __future__ import annotations

import copy
import inspect
import math
from typing import TYPE_CHECKING, Any

import torch

from ..graph.nodes import first_nodes, saved_value
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["EXAMPLES", "OwnValue", "candidate", "own_value"]

EXAMPLES = 4
"""Examples of the input copied for the dependence."""

MOST_POSITIONS = 1024
"""Positions (entries per channel of one example) read at most: one backward pass each."""

MOST_ENTRIES = 1 << 24
"""Parameter entries a copy of the model may hold (a larger model is not copied)."""

VISITS = 2048  # graph nodes visited from the loss for a mask
_FIRST_NODES = 12
_RECON = ("BinaryCrossEntropyWithLogitsBackward0", "BinaryCrossEntropyBackward0",
          "MseLossBackward0")


class OwnValue:
    """A reconstruction loss (``loss``, its node's class) whose target is the model's input, in a
    graph with ``masks`` constant 0/1 masks multiplied into parameters; ``examples``: the first
    examples of that input, copied.  :meth:`read` gives the dependence, once."""

    def __init__(self, loss: str, masks: int, examples: torch.Tensor):
        self.loss, self.masks, self.examples = loss, masks, examples
        self._read: tuple[int, int, int] | bool | None = False  # False: not read yet

    def read(self, model: torch.nn.Module) -> tuple[int, int, int] | None:
        """``(positions, reading, edges)``: the positions, how many outputs read their own
        position, and how many (output, other input) pairs are read; ``None`` when the
        dependence is not autoregressive (or could not be read)."""
        if self._read is False:
            self._read = _autoregressive(dependence(model, self.examples))
        return self._read  # type: ignore[return-value]


def _masks(roots: list[Any]) -> int:
    """How many products of a parameter (a leaf reached directly) with a constant tensor of
    0s and 1s, holding both, the graph from ``roots`` makes."""
    count = 0
    for n in first_nodes(roots, VISITS):
        if type(n).__name__ != "MulBackward0":
            continue
        for mine, other in ((0, "_saved_other"), (1, "_saved_self")):
            leaf = n.next_functions[mine][0] if len(n.next_functions) > mine else None
            m = saved_value(n, other, hooked=False)
            if (type(leaf).__name__ == "AccumulateGrad" and isinstance(m, torch.Tensor)
                    and not m.requires_grad and m.dim() >= 2 and m.is_floating_point()):
                zero, one = m == 0, m == 1
                if bool((zero | one).all()) and bool(zero.any()) and bool(one.any()):
                    count += 1
    return count


def candidate(roots: list[Any], x: torch.Tensor) -> OwnValue | None:
    """An :class:`OwnValue` when a reconstruction loss among the first nodes from ``roots``
    saved a target equal to ``x`` (the model's input) and the graph masks a parameter."""
    for n in first_nodes(roots, _FIRST_NODES):
        if type(n).__name__ not in _RECON:
            continue
        t = saved_value(n, "_saved_target", hooked=False)
        if (isinstance(t, torch.Tensor) and t.shape == x.shape and x.dim() >= 2
                and bool(torch.equal(t.detach(), x.detach().to(t.dtype)))):
            masks = _masks(roots)
            if masks:
                return OwnValue(type(n).__name__, masks, x.detach()[:EXAMPLES].clone())
    return None


def dependence(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor | None:
    """``D[p, q]``: whether output position ``p`` reads input position ``q`` (a nonzero
    gradient at any of the examples ``x``, over every channel), from a copy of ``model``.  A
    position is the last dimension of a ``(batch, features)`` input, or the entries after the
    channels of ``(batch, channels, *spatial)``; the output must have the same positions.
    ``None`` when the model cannot be copied or called, or its output has other positions."""
    if (sum(p.numel() for p in model.parameters()) > MOST_ENTRIES
            or math.prod(x.shape[1 if x.dim() == 2 else 2:]) > MOST_POSITIONS):
        return None
    grad = inspect.unwrap(torch.autograd.grad)  # the watch's own listeners not told
    with torch.random.fork_rng(devices=[]), torch.enable_grad():
        try:
            twin = copy.deepcopy(model).eval()
            xs = x.clone().requires_grad_(True)
            out = twin(xs)
        except Exception:  # noqa: BLE001  (a model that does not copy: nothing is said)
            return None
        if not isinstance(out, torch.Tensor) or out.dim() != x.dim() or out.shape[0] != x.shape[0]:
            return None
        if x.dim() == 2:
            if out.shape != x.shape:
                return None
            outs, flat = out.unsqueeze(1), (lambda g: g.unsqueeze(1))
        else:
            if out.shape[2:] != x.shape[2:]:
                return None
            outs, flat = out.flatten(2), (lambda g: g.flatten(2))
        positions = outs.shape[-1]
        reads = torch.zeros(positions, positions, dtype=torch.bool)
        for p in range(positions):
            (g,) = grad(outs[:, :, p].sum(), xs, retain_graph=True, allow_unused=True)
            if g is not None:
                reads[p] = flat(g).abs().sum((0, 1)) > 0
    return reads


def _autoregressive(reads: torch.Tensor | None) -> tuple[int, int, int] | None:
    if reads is None:
        return None
    import networkx as nx  # only here: the dependence of a masked model is rare

    others = reads.clone()
    others.fill_diagonal_(False)
    edges = others.nonzero().tolist()
    positions = reads.shape[0]
    graph = nx.DiGraph()
    graph.add_nodes_from(range(positions))
    graph.add_edges_from(edges)
    reading = int(reads.diagonal().sum())
    if not reading or len(edges) < positions or not nx.is_directed_acyclic_graph(graph):
        return None
    return positions, reading, len(edges)


def own_value(w: GradWatch, o: Options) -> Finding:
    """A masked autoregressive model whose outputs read the input they reproduce (a problem)."""
    del o
    c: OwnValue | None = w.tokens.own
    if c is None:
        return Finding("own value read", True)
    got = c.read(w.tokens.model)
    if got is None:
        return Finding("own value read", True)
    positions, reading, edges = got
    return Finding("own value read", True, (
        f"the model is trained to reproduce its input while its output at a position reads "
        f"the input at that same position, at {reading} of {positions} positions: it can copy "
        f"each value instead of predicting it (observed: {c.loss}'s target equals the model's "
        f"input; the graph multiplies {c.masks} parameter(s) by a constant 0/1 mask; between "
        f"different positions the outputs read {edges} input positions in an autoregressive "
        f"order, from the gradients of a copy of the model at {len(c.examples)} example(s)); "
        f"one masked layer must exclude the position itself: PixelCNN's first layer takes "
        f"mask A (the kernel's centre 0), the later ones mask B; MADE's output layer connects "
        f"output d to hidden unit k only if m(d) > m(k) (strictly), its hidden layers if "
        f"m(k) >= m(k')"))
