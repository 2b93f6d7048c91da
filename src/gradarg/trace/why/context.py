"""The one context a diagnosis of ``why_no_grad`` reads: each fact computed once, when a rule
first asks for it (the graph, where the tensor is in it, whether ``backward()`` freed it, one
traced pass and the gradient it gives).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, NamedTuple

import torch

from ..graph.nodes import Graph, graph_freed, opaque_nodes
from ..tape.traced import BackwardTrace
from ..tape.tracer import trace_backward
from .gradients import stats
from .rules import Rule

__all__ = ["Answer", "Cause", "Context"]


class Answer(NamedTuple):
    """What a rule says: its case, one sentence, the node concerned, the gradient one pass
    gives (when it could be computed)."""

    case: str
    message: str
    node: str | None = None
    gradient: torch.Tensor | None = None


class Context:
    """What one diagnosis reads about ``tensor`` and ``output``.

    ``xname`` and ``oname`` are the names the messages use; ``random_forward`` says why the
    forward is random when a recomputing function showed it (else ``None``).  Properties run
    the checks they need once: the graph walk, the traced pass (only when a rule asks for it,
    on a graph whose saved tensors are there).
    """

    def __init__(self, output: torch.Tensor, tensor: torch.Tensor, *, gradient: Any,
                 names: dict[str, torch.Tensor], module: torch.nn.Module | None, xname: str,
                 oname: str, random_forward: str | None) -> None:
        self.output, self.tensor, self.gradient = output, tensor, gradient
        self.names, self.module = names, module
        self.xname, self.oname, self.random_forward = xname, oname, random_forward

    # -- the graph ----------------------------------------------------------------------------
    @cached_property
    def graph(self) -> Graph:
        """The nodes of the output's graph (none for an output without ``grad_fn``)."""
        return Graph(self.output.grad_fn)

    @property
    def nodes(self) -> list[Any]:
        return self.graph.nodes

    @cached_property
    def key(self) -> int | None:
        """The tensor's position in the graph, ``None`` if it is not in it."""
        return self.graph.key_of(self.tensor)

    @property
    def position(self) -> int:
        """:attr:`key` of a tensor known to be in the graph (asked by the rules after the
        reachability ones)."""
        assert self.key is not None
        return self.key

    @cached_property
    def opaque(self) -> list[str]:
        """Reentrant-checkpoint nodes of the graph (what runs inside them hooks cannot see)."""
        return opaque_nodes(self.nodes)

    @cached_property
    def path(self) -> set[int]:
        """Nodes on some path from the output's node to the tensor's."""
        return self.graph.on_path(self.position)

    @cached_property
    def saved_freed(self) -> bool:
        """An earlier ``backward()`` freed saved tensors of the graph (read from the nodes)."""
        return graph_freed(self.nodes) is not None

    @property
    def freed(self) -> bool:
        """The saved tensors a backward pass needs are gone: read from the nodes, or (for a
        tensor in the graph) the traced pass found one freed (a custom Function's)."""
        if self.saved_freed:
            return True
        return self.key is not None and self._pass[2]

    # -- one traced pass ----------------------------------------------------------------------
    @cached_property
    def _pass(self) -> tuple[BackwardTrace | None, RuntimeError | None, bool, Exception | None]:
        """``(trace, in-place error, freed, other error)`` of one traced ``torch.autograd.grad``
        pass to the tensor (``retain_graph=True``: nothing accumulated, the graph kept).  The
        other error is what the pass raised for any other reason (a derivative torch does not
        implement, a custom Function's or a hook's backward raising or returning the wrong
        shape): the user's ``backward()`` raises it too."""
        gradient = self.gradient
        if gradient is None:
            gradient = torch.ones_like(self.output)
        try:
            trace = trace_backward(self.output, gradient, inputs=[self.tensor], names=self.names,
                                   use_grad=True, retain_graph=True)
        except RuntimeError as err:
            if "modified by an inplace operation" in str(err):
                return None, err, False, None
            if "freed" in str(err):  # torch's, or a custom Function's saved_tensors
                return None, None, True, None
            if not _from_the_pass(err):
                raise
            return None, None, False, err
        except Exception as err:  # a custom backward or a hook raised it
            if not _from_the_pass(err):
                raise
            return None, None, False, err
        return trace, None, False, None

    @property
    def trace(self) -> BackwardTrace:
        """The traced pass (ask only on a live graph, after the in-place rule)."""
        trace = self._pass[0]
        assert trace is not None
        return trace

    @property
    def failure(self) -> Exception | None:
        """What the pass raised other than an in-place error or freed saved tensors."""
        return self._pass[3]

    @property
    def inplace_error(self) -> RuntimeError | None:
        """The pass's error when a saved tensor was modified in place, else ``None``."""
        return self._pass[1]

    @cached_property
    def pass_grad(self) -> torch.Tensor | None:
        """What the pass gives the tensor: a leaf's gradient, or what reached a non-leaf's node
        (the output itself: the upstream gradient); ``None`` where nothing reached it."""
        trace, key = self.trace, self.position
        if self.tensor.grad_fn is None:
            return trace.nodes[key].grad
        return trace.gradient if key == 0 else trace.incoming(key)

    @cached_property
    def grad(self) -> torch.Tensor:
        """:attr:`pass_grad`, zeros where nothing reached the tensor."""
        g = self.pass_grad
        return torch.zeros_like(self.tensor) if g is None else g

    @cached_property
    def stats(self) -> tuple[int, int, int]:
        """``(entries, non-finite, nonzero)`` of :attr:`grad`."""
        return stats(self.grad)


def _from_the_pass(err: BaseException) -> bool:
    """Whether ``err`` came out of torch's backward engine (a node's backward, a custom
    Function's or a hook raising), not from this package's own code around it."""
    tb = err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "_engine_run_backward":
            return True
        tb = tb.tb_next
    return False


Cause = Rule[Context, Answer]
"""A cause of a missing gradient: a rule over a :class:`Context`, answering an
:class:`Answer`."""
