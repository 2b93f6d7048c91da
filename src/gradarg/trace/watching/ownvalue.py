"""An autoregressive model that reads the value it predicts: a model trained to reproduce one of
its inputs, each output reading only earlier positions of it (an order), while the output at a
position still reads the input at that same position.  A MADE or a PixelCNN masks its weights
with 0/1 masks and one of them lets the position itself through (PixelCNN's mask B where mask A
belongs, MADE's ``>=`` where its output layer needs ``>``: Germain et al. 2015, "MADE: Masked
Autoencoder for Distribution Estimation"); a causal transformer reads its own token (a Decision
Transformer predicting the action ``a_t`` from the output at ``a_t``'s own token instead of the
state token ``s_t``: Chen et al. 2021).  Every gradient is finite and nonzero and nothing
raises; the loss falls by copying each value instead of predicting it, a label leak.

Seen here, at the first outermost ``backward()`` of the watch (by :class:`.tokenshift.TokenShift`,
which holds the model's last call: its tensor arguments by weak references): among the losses'
first nodes, a reconstruction loss (``binary_cross_entropy_with_logits``,
``binary_cross_entropy``, ``mse_loss``) whose saved target equals one of the model's floating
inputs, unchanged since the call.  The first :data:`EXAMPLES` examples of the call's arguments
are then copied.  When the finding is read, the dependence of every output position on every
position of that input comes from the gradients of a copy of the model (``copy.deepcopy``: the
watch's hooks are not copied; in eval mode; torch's random state restored) at those examples, a
position being a last entry of ``(batch, features)``, an entry after the channels of ``(batch,
channels, *spatial)`` or a step of ``(batch, steps, *features)`` (each read in turn).  It is
named only when the dependence between different positions is autoregressive, an order exists
in which each output reads only earlier inputs (the directed graph of "output p reads input q",
p != q, is acyclic: networkx) with at least one such edge per position, and some outputs read
their own position.  A plain autoencoder reads every position from every other (a cycle, found
after two backward passes), and so does one with fixed random 0/1 masks.  A model that does not
copy (one pruned by ``torch.nn.utils.prune`` holds its ``weight`` as a non-leaf tensor, which
``deepcopy`` refuses) is not read.

Imports nothing of the trace room but :mod:`.finding` and ``trace.graph.nodes``.
"""

from __future__ import annotations

import copy
import inspect
import math
import weakref
from typing import TYPE_CHECKING, Any

import torch

from ..graph.nodes import first_nodes, saved_value
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["EXAMPLES", "Call", "OwnValue", "candidate", "own_value"]

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


class Call:
    """A model's call: its arguments, tensors held by weak references with their versions (not
    copied), anything else as given."""

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any]):
        def hold(a: Any) -> Any:
            return (weakref.ref(a), a._version) if isinstance(a, torch.Tensor) else (None, a)

        self._args = [hold(a) for a in args]
        self._kwargs = {k: hold(a) for k, a in kwargs.items()}

    def resolve(self) -> tuple[list[Any], dict[str, Any]] | None:
        """The arguments, or ``None`` when a tensor was freed or edited in place since."""
        def get(held: tuple[Any, Any]) -> Any:
            ref, value = held
            if ref is None:
                return value
            t = ref()
            if t is None or t._version != value:
                raise LookupError
            return t

        try:
            return [get(a) for a in self._args], {k: get(a) for k, a in self._kwargs.items()}
        except LookupError:
            return None


class OwnValue:
    """A reconstruction loss (``loss``, its node's class) whose target is the model's input
    ``key`` (an argument's index or a keyword), in a graph with ``masks`` constant 0/1 masks
    multiplied into parameters (0 or more); ``args`` and ``kwargs``: the call, its tensors' first
    examples copied.  :meth:`read` gives the dependence, once."""

    def __init__(self, loss: str, masks: int, args: list[Any], kwargs: dict[str, Any],
                 key: int | str):
        self.loss, self.masks, self.args, self.kwargs, self.key = loss, masks, args, kwargs, key
        self._read: tuple[int, int, int] | bool | None = False  # False: not read yet

    @property
    def examples(self) -> torch.Tensor:
        """The input the target equals, its first examples."""
        return self.kwargs[self.key] if isinstance(self.key, str) else self.args[self.key]

    def read(self, model: torch.nn.Module) -> tuple[int, int, int] | None:
        """``(positions, reading, edges)``: the positions, how many outputs read their own
        position, and how many (output, other input) pairs are read; ``None`` when the
        dependence is not autoregressive (or could not be read)."""
        if self._read is False:
            self._read = dependence(model, self)
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


def candidate(roots: list[Any], call: Call) -> OwnValue | None:
    """An :class:`OwnValue` when a reconstruction loss among the first nodes from ``roots``
    saved a target equal to a floating input of the model's ``call``."""
    got = call.resolve()
    if got is None:
        return None
    args, kwargs = got
    inputs: list[tuple[int | str, Any]] = [*enumerate(args), *kwargs.items()]
    for n in first_nodes(roots, _FIRST_NODES):
        if type(n).__name__ not in _RECON:
            continue
        t = saved_value(n, "_saved_target", hooked=False)
        if not isinstance(t, torch.Tensor):
            continue
        for key, x in inputs:
            if (isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() >= 2
                    and t.shape == x.shape
                    and bool(torch.equal(t.detach(), x.detach().to(t.dtype)))):
                b = x.shape[0]

                def first(a: Any, b: int = b) -> Any:
                    if not isinstance(a, torch.Tensor):
                        return a
                    a = a.detach()
                    return (a[:EXAMPLES] if a.dim() and a.shape[0] == b else a).clone()

                return OwnValue(type(n).__name__, _masks(roots), [first(a) for a in args],
                                {k: first(a) for k, a in kwargs.items()}, key)
    return None


def _groupings(x: torch.Tensor, out: torch.Tensor) -> list[tuple[Any, int]]:
    """Ways to read positions: a function taking a ``(batch, *shape)`` tensor to ``(batch,
    rest, positions)``, and the number of positions, for each that ``out`` shares with ``x``."""
    if x.dim() == 2:
        return [((lambda g: g.unsqueeze(1)), x.shape[1])] if out.shape == x.shape else []
    ways = []
    if out.dim() == x.dim() and out.shape[2:] == x.shape[2:]:  # (batch, channels, *spatial)
        ways.append(((lambda g: g.flatten(2)), math.prod(x.shape[2:])))
    if out.dim() >= 3 and out.shape[:2] == x.shape[:2]:  # (batch, steps, *features)
        ways.append(((lambda g: g.flatten(2).transpose(1, 2)), x.shape[1]))
    return [(f, n) for f, n in ways if 2 <= n <= MOST_POSITIONS]


def dependence(model: torch.nn.Module, c: OwnValue) -> tuple[int, int, int] | None:
    """From a copy of ``model`` called on ``c``'s examples: ``(positions, reading, edges)`` for
    the first way of reading positions (see :func:`_groupings`) in which output position ``p``
    reads input position ``q`` (a nonzero gradient at any example, over every channel) in an
    autoregressive order; ``None`` when there is none, or the model cannot be copied or
    called."""
    if sum(p.numel() for p in model.parameters()) > MOST_ENTRIES:
        return None
    grad = inspect.unwrap(torch.autograd.grad)  # the watch's own listeners not told
    with torch.random.fork_rng(devices=[]), torch.enable_grad():
        try:
            twin = copy.deepcopy(model).eval()
            xs = c.examples.clone().requires_grad_(True)
            args, kwargs = list(c.args), dict(c.kwargs)
            if isinstance(c.key, str):
                kwargs[c.key] = xs
            else:
                args[c.key] = xs
            out = twin(*args, **kwargs)
        except Exception:  # noqa: BLE001  (a model that does not copy: nothing is said)
            return None
        if (not isinstance(out, torch.Tensor) or not out.requires_grad or out.dim() < 2
                or out.shape[0] != xs.shape[0] or not out.is_floating_point()):
            return None  # a loss, a tuple, a detached or integer output: not read
        for flat, positions in _groupings(xs, out):
            outs = flat(out)
            reads = torch.zeros(positions, positions, dtype=torch.bool)
            for p in range(positions):
                try:
                    (g,) = grad(outs[:, :, p].sum(), xs, retain_graph=True, allow_unused=True)
                except RuntimeError:  # a backward that raises on the copy: nothing is said
                    return None
                if g is not None:
                    reads[p] = flat(g).abs().sum((0, 1)) > 0
                if bool((reads[:p, p] & reads[p, :p]).any()):  # p and q read each other
                    break
            else:
                got = _autoregressive(reads)
                if got is not None:
                    return got
    return None


def _autoregressive(reads: torch.Tensor) -> tuple[int, int, int] | None:
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
    """An autoregressive model whose outputs read the input they reproduce (a problem)."""
    del o
    c: OwnValue | None = w.tokens.own
    if c is None:
        return Finding("own value read", True)
    got = c.read(w.tokens.model)
    if got is None:
        return Finding("own value read", True)
    positions, reading, edges = got
    which = (f"keyword argument {c.key!r}" if isinstance(c.key, str) else
             "input" if len(c.args) + len(c.kwargs) == 1 else
             f"positional argument {c.key} (from 0)")
    masked = (f"; the graph multiplies {c.masks} parameter(s) by a constant 0/1 mask"
              if c.masks else "")
    fix = ("one masked layer must exclude the position itself: PixelCNN's first layer takes "
           "mask A (the kernel's centre 0), the later ones mask B; MADE's output layer connects "
           "output d to hidden unit k only if m(d) > m(k) (strictly), its hidden layers if "
           "m(k) >= m(k')") if c.masks else (
           "the prediction at a position must read only earlier positions of what it predicts: "
           "read it from the output one position before (a Decision Transformer predicts a_t "
           "from the state token s_t, not from a_t's own token), or mask the position itself")
    return Finding("own value read", True, (
        f"the model is trained to reproduce its {which} while its output at a position reads "
        f"the input at that same position, at {reading} of {positions} positions: a label "
        f"leak, it can copy each value instead of predicting it (observed: {c.loss}'s target "
        f"equals the model's {which}{masked}; between different positions the outputs read "
        f"{edges} input positions in an autoregressive order, from the gradients of a copy of "
        f"the model at {len(c.examples)} example(s)); {fix}"))
