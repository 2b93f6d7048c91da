"""``graph.nodes.reach``: the bounded walk from a node, through pass-through node classes, to the
first node of a wanted class.  Tested against a brute-force enumeration of every path on random
graphs (hypothesis), and on real autograd graphs of attention scores."""

from __future__ import annotations

import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gradarg.trace.graph.nodes import MOVES, reach

_KINDS = ("MmBackward0", "MulBackward0", "ViewBackward0", "AddBackward0")
_CLASSES = {k: type(k, (), {}) for k in _KINDS}
WANTED = {"MmBackward0"}
THROUGH = {"MulBackward0", "ViewBackward0"}


def _graph(kinds: list[int], edges: list[tuple[int, int]]) -> list[object]:
    """Fake autograd nodes: node i is of class ``_KINDS[kinds[i]]``; an edge (i, j), i < j, makes
    j an input of i; a ``None`` input (an input that needs no gradient) follows every node."""
    nodes = [_CLASSES[_KINDS[k]]() for k in kinds]
    inputs: list[list[tuple[object | None, int]]] = [[] for _ in nodes]
    for i, j in edges:
        inputs[i].append((nodes[j], 0))
    for n, ins in zip(nodes, inputs, strict=True):
        n.next_functions = (*ins, (None, 0))  # type: ignore[attr-defined]
    return nodes


def _brute(node: object, depth: int) -> set[int]:
    """Every wanted node reached by a path whose nodes in between are all pass-through, at most
    ``depth`` of them: all paths enumerated."""
    found: set[int] = set()

    def go(n: object, between: int) -> None:
        for c, _ in n.next_functions:  # type: ignore[attr-defined]
            if c is None:
                continue
            name = type(c).__name__
            if name in WANTED:
                found.add(id(c))
            elif name in THROUGH and between < depth:
                go(c, between + 1)

    go(node, 0)
    return found


@st.composite
def graphs(draw):
    n = draw(st.integers(2, 9))
    kinds = draw(st.lists(st.integers(0, len(_KINDS) - 1), min_size=n, max_size=n))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    edges = draw(st.lists(st.sampled_from(pairs), max_size=14, unique=True))
    return kinds, edges, draw(st.integers(0, 4))


@settings(max_examples=400, deadline=None)
@given(graphs())
def test_reach_equals_every_path(case):
    kinds, edges, depth = case
    nodes = _graph(kinds, edges)
    expected = _brute(nodes[0], depth)
    got = reach(nodes[0], WANTED, THROUGH, depth)
    if expected:
        assert got is not None and id(got) in expected
    else:
        assert got is None


def _scores(scale: bool, extra_add: bool) -> torch.Tensor:
    torch.manual_seed(0)
    q = torch.randn(2, 5, 4, requires_grad=True)
    k = torch.randn(2, 5, 4, requires_grad=True)
    s = (q @ k.transpose(-2, -1)).reshape(2, 5, 5)
    if scale:
        s = s / math.sqrt(4.0)
    if extra_add:
        s = s + torch.randn(5, 5, requires_grad=True)
    return torch.softmax(s, dim=-1)


def test_reach_on_attention_scores():
    through = MOVES | {"MulBackward0", "DivBackward0"}
    for scale in (False, True):
        found = reach(_scores(scale, False).grad_fn, {"BmmBackward0"}, through, 6)
        assert found is not None and type(found).__name__ == "BmmBackward0"
        # an addition between the product and the softmax is not a pass-through node
        assert reach(_scores(scale, True).grad_fn, {"BmmBackward0"}, through, 6) is None
    # a depth of 0 admits no node in between: the reshape of the product is one
    assert reach(_scores(False, False).grad_fn, {"BmmBackward0"}, through, 0) is None


def test_reach_revisits_a_node_found_again_nearer():
    """Depth first, a node first met at depth 2 through a long branch is met again at depth 1
    through a short one: what lies below it is within reach only from the nearer visit."""
    kind = {"root": 3, "x": 1, "t1": 1, "t2": 1, "d": 1, "e": 1, "w": 0}
    order = list(kind)
    edges = [("root", "x"), ("root", "t1"), ("t1", "t2"), ("t2", "d"), ("x", "d"),
             ("d", "e"), ("e", "w")]
    nodes = _graph([kind[k] for k in order], [(order.index(a), order.index(b)) for a, b in edges])
    # the walk takes the last input first: root -> t1 -> t2 -> d (depth 2) -> e (3, not expanded)
    assert reach(nodes[0], WANTED, THROUGH, 3) is nodes[order.index("w")]
    assert reach(nodes[0], WANTED, THROUGH, 2) is None
    assert _brute(nodes[0], 3) == {id(nodes[order.index("w")])} and not _brute(nodes[0], 2)
